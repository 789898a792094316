"""Writing the evidence of an analysis: every part made from the counts, then the file (signed when a key is given).

The results written are those the kind's own functions compute from the counts' part (the same functions
``luskin verify`` runs), so a file is consistent when written; the report (HTML and, unless left out, PDF) is made
from the same result objects. The data's fingerprint holds the hash of the bytes read where Luskin read bytes
(:mod:`luskin_core.evidence.fingerprint`), the number of rows, and the hash of the counts' canonical JSON.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from luskin_core.evidence import bundle
from luskin_core.evidence.canonical import canonical, sha256
from luskin_core.evidence.kinds import kind as kind_of
from luskin_core.evidence.kinds import resolved_judgement


@dataclass(frozen=True)
class DataFacts:
    """What is known of the data an analysis read: its name for people (never an address's password), the engine
    that counted it, and where its bytes are on this machine (None: a server's table) or their hash already made
    (an upload held in memory)."""

    label: str
    engine: str
    location: str | None = None
    data_bytes: Mapping[str, Any] | None = field(default=None)

    def fingerprint(self) -> Mapping[str, Any] | None:
        if self.data_bytes is not None:
            return self.data_bytes
        from luskin_core.evidence.fingerprint import data_bytes

        return data_bytes(self.location)


@dataclass(frozen=True)
class Made:
    """An evidence file written: its bytes, their SHA-256, the result object and the key id (None: unsigned)."""

    data: bytes
    sha256: str
    result: Any
    key_id: str | None


def rows_counted(kind: str, counts: Mapping[str, Any]) -> int | None:
    """How many rows the counts hold (those audited and those left out)."""
    table = counts.get("audit") if kind == "audit" else counts.get("ll144") if kind == "ll144" else None
    if not isinstance(table, Mapping):
        return None
    return int(sum(sum(row) for row in table["n"])) + int(table.get("n_excluded", 0))


def make_evidence(kind: str, specification: Mapping[str, Any], counts: Mapping[str, Any], *, data: DataFacts,
                  about: Mapping[str, Any] | None = None, by: str | None = None, made_with: str = "luskin",
                  signing_key: Any = None, pdf: bool = True, browser_path: str | None = None,
                  made_at: _dt.datetime | None = None) -> Made:
    """The evidence file of an analysis of kind ``kind`` from its specification's and counts' parts."""
    from luskin_core.present.report import software_versions

    entry = kind_of(kind)
    result = entry.build(specification, counts)
    results = entry.document(result)
    when = (made_at or _dt.datetime.now(_dt.UTC)).astimezone(_dt.UTC).replace(microsecond=0)
    about = {k: v for k, v in dict(about or {}).items() if v not in (None, "")}
    about.setdefault("data_source", data.label)
    made = {"at": when.isoformat().replace("+00:00", "Z"), "by": by, "with": made_with}
    html, pdf_bytes = _report(kind, result, data.label, when, about, made, pdf, browser_path)
    fingerprint = {"data": data.label, "engine": data.engine, "bytes": data.fingerprint(),
                   "rows": rows_counted(kind, counts), "counts_sha256": sha256(canonical(counts))}
    parts = {"specification.json": canonical(specification), "judgement.json":
             canonical(resolved_judgement(entry.spec(specification), result)), "counts.json": canonical(counts),
             "results.json": canonical(results), "fingerprint.json": canonical(fingerprint),
             "versions.json": canonical(software_versions()), "made.json": canonical(made),
             "about.json": canonical(about), "report.html": html.encode("utf-8")}
    if pdf_bytes is not None:
        parts["report.pdf"] = pdf_bytes
    signer = None
    key_id = None
    if signing_key is not None:
        from luskin_core.evidence import signing

        key_id = signing.key_id(signing.public_pem(signing_key))

        def signer(manifest: bytes) -> dict[str, str]:
            return signing.sign(signing_key, manifest)

    written = bundle.write(kind, parts, signer)
    return Made(written, sha256(written), result, key_id)


def _report(kind: str, result: Any, label: str, when: _dt.datetime, about: Mapping[str, Any], made: Mapping[str, Any],
            pdf: bool, browser_path: str | None) -> tuple[str, bytes | None]:
    """The report's HTML and PDF: the full report of an audit (with the LL144 section when there is one), else
    the LL144 public summary page (a published table has no rows to report on)."""
    audited = result if kind == "audit" else getattr(result, "audit", None)
    if audited is not None:
        from luskin_core.present.report import close_chart_renderer, report_content

        content = report_content([audited, None if kind == "audit" else result], dataset=label, generated_at=when)
        html = content.html()
        if not pdf:
            return html, None
        try:
            return html, content.pdf(browser_path=browser_path)
        finally:
            close_chart_renderer()
    from luskin_core.evidence.ll144_public import summary_html, summary_pdf

    page = summary_html(result.result, about=about, made=made)
    return page, summary_pdf(page) if pdf else None   # tagged (PDF/UA-1), as the report's PDF


__all__ = ["DataFacts", "Made", "make_evidence", "rows_counted"]
