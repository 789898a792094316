"""What each kind of evidence holds and how its numbers are made again: from the counts, or from the data.

Every number of an audit follows from its count table and the specification, so each kind is three functions:
``build`` (the specification's part and the counts' part to the analysis's result object), ``document`` (that
object to the plain results written in ``results.json``) and ``recount`` (data on any engine to the counts' part,
as the audit counted it). The kinds:

* ``audit``: ``luskin audit`` (every group against the reference in every cell), from
  :func:`~luskin_core.analyses.audit.result_from_counts`.
* ``ll144``: the Local Law 144 tables of person rows (and the sex × race/ethnicity audit beside them), from
  :func:`~luskin_core.analyses.regulator_ll144.ll144_output`.
* ``ll144_published``: the Local Law 144 tables of a published summary (``--counts``): the published table *is*
  the count table, kept as the CSV text read.

:func:`resolved_judgement` is the one place the judgement written into the evidence comes from.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from luskin_core.errors import LuskinError
from luskin_core.evidence.canonical import count_table_dict, count_table_from_dict, plain


def resolved_judgement(spec: Any, result: Any = None) -> dict[str, Any]:
    """The judgement the results were made by (:class:`luskin_core.stats.judgement.Judgement`, issue 45), as the
    evidence's ``judgement.json`` holds it: the audit's, resolved on its count table (its reference, its groups of
    unknown category); for Local Law 144, that of the sex × race/ethnicity audit beside the tables; else the one
    the specification asks for (a published table has none: the default, favourable, with its rules)."""
    from luskin_core.stats.judgement import Judgement

    audited = result if hasattr(result, "judgement") else getattr(result, "audit", None)
    if audited is not None and getattr(audited, "judgement", None) is not None:
        return dict(audited.judgement.to_dict())
    return dict((Judgement.of(spec) if spec is not None else Judgement()).to_dict())


@dataclass(frozen=True)
class EvidenceKind:
    """One kind of evidence: its name in the manifest, its title for people, and its three functions."""

    name: str
    title: str
    build: Callable[[Mapping[str, Any], Mapping[str, Any]], Any]
    document: Callable[[Any], dict[str, Any]]
    recount: Callable[[Any, Mapping[str, Any]], dict[str, Any]]
    spec: Callable[[Mapping[str, Any]], Any]


def _spec(specification: Mapping[str, Any]) -> Any:
    from luskin_core.spec.audit_spec import AuditSpec

    try:
        return AuditSpec.from_dict(dict(specification["spec"]))
    except (KeyError, TypeError) as err:
        raise LuskinError(f"The specification cannot be read: {err}.") from None


def _choices(specification: Mapping[str, Any]) -> Any:
    from luskin_core.analyses.regulator_tables import RegulatorChoices

    given = dict(specification.get("choices") or {})
    try:
        return RegulatorChoices(sex=given.get("sex"), race=given.get("race"),
                                exclude_small=bool(given.get("exclude_small", False)),
                                unknown=tuple(str(v) for v in given.get("unknown", ())))
    except TypeError as err:
        raise LuskinError(f"The analysis's choices cannot be read: {err}.") from None


# ---- audit -------------------------------------------------------------------------------------
def _audit_build(specification: Mapping[str, Any], counts: Mapping[str, Any]) -> Any:
    from luskin_core.analyses.audit import result_from_counts

    table = count_table_from_dict(counts.get("audit"), "The audit's count table")
    return result_from_counts(table, _spec(specification), source=str(specification.get("source", "recorded outcome")))


def _audit_document(result: Any) -> dict[str, Any]:
    from luskin_core.analyses.findings import findings

    return plain({"audit": result.to_dict(), "findings": findings(result).to_dict()})


def _audit_recount(data: Any, specification: Mapping[str, Any]) -> dict[str, Any]:
    from luskin_core.counting.executor import counted_table

    return {"audit": count_table_dict(counted_table(data, _spec(specification))[0])}


# ---- Local Law 144 from rows ------------------------------------------------------------------------
def _ll144_build(specification: Mapping[str, Any], counts: Mapping[str, Any]) -> Any:
    from luskin_core.analyses.regulator_ll144 import LL144Counts, ll144_output

    crossed = counts.get("sufficiency")
    median = counts.get("median")
    held = LL144Counts(count_table_from_dict(counts.get("ll144"), "The Local Law 144 count table"),
                       None if median is None else float(median),
                       None if crossed is None else count_table_from_dict(crossed, "The sufficiency count table"),
                       str(counts.get("problem", "")))
    return ll144_output(held, _spec(specification), _choices(specification))


def _output_document(output: Any) -> dict[str, Any]:
    return plain(output.document())


def ll144_counts_part(counted: Any) -> dict[str, Any]:
    """The counts' part of an LL144 audit of rows (:class:`~luskin_core.analyses.regulator_ll144.LL144Counts`)."""
    return {"ll144": count_table_dict(counted.table), "median": counted.median,
            "sufficiency": None if counted.crossed is None else count_table_dict(counted.crossed),
            "problem": counted.problem}


def _ll144_recount(data: Any, specification: Mapping[str, Any]) -> dict[str, Any]:
    from luskin_core.analyses.regulator_ll144 import ll144_counted

    return ll144_counts_part(ll144_counted(data, _spec(specification), _choices(specification)))


# ---- Local Law 144 from a published summary -------------------------------------------------------
def _published_build(specification: Mapping[str, Any], counts: Mapping[str, Any]) -> Any:
    from luskin_core.analyses.regulator_ll144 import LL144Output, ll144_from_summary, read_summary

    text = counts.get("published_csv")
    if not isinstance(text, str):
        raise LuskinError("The published table is missing from the counts.")
    choices = _choices(specification)
    frame = read_summary(io.BytesIO(text.encode("utf-8")))
    return LL144Output(ll144_from_summary(frame, exclude_small=choices.exclude_small, unknown=choices.unknown))


def published_counts_part(raw: bytes) -> dict[str, Any]:
    """The counts' part of a published summary: its text as read (UTF-8, a byte-order mark dropped)."""
    try:
        return {"published_csv": raw.decode("utf-8-sig")}
    except UnicodeDecodeError:
        raise LuskinError("The published table is not UTF-8 text: save it as CSV (UTF-8) and try again.") from None


def _published_recount(data: Any, specification: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(data, (bytes, bytearray)):
        raise LuskinError("This evidence is of a published table: give that table's file as the data.")
    return published_counts_part(bytes(data))


KINDS: dict[str, EvidenceKind] = {
    "audit": EvidenceKind("audit", "audit", _audit_build, _audit_document, _audit_recount, _spec),
    "ll144": EvidenceKind("ll144", "NYC Local Law 144 bias audit", _ll144_build, _output_document, _ll144_recount,
                          _spec),
    "ll144_published": EvidenceKind("ll144_published", "NYC Local Law 144 bias audit of a published summary",
                                    _published_build, _output_document, _published_recount, lambda s: None),
}


def kind(name: str) -> EvidenceKind:
    try:
        return KINDS[name]
    except KeyError:
        raise LuskinError(f"The evidence is of a kind this Luskin does not know ('{name}'): a later version of Luskin "
                          "may read it.") from None


__all__ = ["KINDS", "EvidenceKind", "kind", "ll144_counts_part", "published_counts_part", "resolved_judgement"]
