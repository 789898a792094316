"""The proxy audit as an entry of the analyses' table: ``run(data, spec, options) -> ProxyAudit``.

Why: its groups are estimated, not read from a column, so the specification declares them
(``AuditSpec(..., estimated=ESTIMATED_RACE)``: race estimated from surname and place) and says everything else an
audit says: the outcome and its positive values, whether it is adverse, the tolerance or the impact-ratio threshold,
the correction, the smallest group, the reference, the strata. The one
:class:`~luskin_core.stats.judgement.Judgement` made from it decides every verdict (its alpha too); the
:class:`~luskin_core.spec.options.ProxyOptions` say how race is estimated (the surname and place columns, the
census tables, a first-name column for BIFSG), the threshold method's probability, the outcome-aware model, and a
column of race recorded for some rows to check the estimate against.

``data`` is a frame (estimated in memory), an engine's :class:`~luskin_core.counting.ibis_source.Source` (DuckDB,
PostgreSQL, Spark: only sums come back), or the path of a Parquet file (streamed with Arrow; with strata it is
opened with DuckDB).
"""

from __future__ import annotations

import os
from typing import Any

from luskin_core.analyses.proxy_audit import ProxyAudit, audit_sums, proxy_audit
from luskin_core.errors import LuskinError
from luskin_core.spec.audit_spec import ESTIMATED_RACE, AuditSpec
from luskin_core.spec.options import ProxyOptions
from luskin_core.stats.judgement import Judgement


def proxy_spec(outcome: str, positive: Any, **settings: Any) -> AuditSpec:
    """The specification of a proxy audit: ``outcome`` is ``positive`` across race estimated from surname and
    place, with the other settings of any audit (``outcome_is``, ``tolerance``, ``metric``, ``reference``,
    ``strata``...)."""
    return AuditSpec(outcome, positive, estimated=ESTIMATED_RACE, **settings)


def decision_text(spec: AuditSpec) -> str:
    """What the audited share counts, in the proxy audit's words: "approved is yes" (several values: "yes or
    maybe")."""
    positive = spec.positive
    shown = " or ".join(str(v) for v in positive) if isinstance(positive, tuple) else str(positive)
    return f"{spec.outcome} is {shown}"


def _checked(spec: AuditSpec, options: ProxyOptions | None) -> ProxyOptions:
    """The specification a proxy audit can honour, and its options; anything it would ignore is refused."""
    if not isinstance(spec, AuditSpec) or spec.group_spec.estimated != ESTIMATED_RACE:
        raise LuskinError(f"The proxy audit compares groups of {ESTIMATED_RACE}: its specification declares them "
                          "(estimated groups), with no protected condition or group columns.")
    if spec.outcome_type != "label" or spec.prediction is not None:
        raise LuskinError("The proxy audit audits an outcome with a positive value (not a score, an amount or a "
                          "model's predictions).")
    unused = [words for given, words in ((spec.filters, "a filter"), (spec.population, "a population"),
                                         (spec.bins, "cut points"), (spec.min_group_share, "a smallest group share"))
              if given]
    if unused:
        raise LuskinError(f"The proxy audit does not take {unused[0]}: leave it out (strata compare like with like).")
    if options is None or options.surname is None or options.place is None:
        raise LuskinError("The proxy audit needs the surname column and the place column (a ZIP code or a census "
                          "tract) to estimate race and ethnicity.")
    return options


def run(data: Any, spec: AuditSpec, options: ProxyOptions | None = None) -> ProxyAudit:
    """The proxy audit of ``data`` as ``spec`` says (its estimated groups: race from surname and place) with the
    estimation ``options`` (see the module's docstring)."""
    options = _checked(spec, options)
    judgement = Judgement.of(spec)
    if isinstance(data, (str, os.PathLike)):
        if spec.strata:
            from luskin_core.counting.files import open_file

            data = open_file(str(data))
        else:
            return _streamed(str(data), spec, options, judgement)
    import pandas as pd

    if isinstance(data, pd.DataFrame):
        return _in_memory(data, spec, options, judgement)
    if options.first_name is not None:
        raise LuskinError("First names (BIFSG) are estimated in memory: audit the rows themselves, or leave out the "
                          "first-name column to audit with BISG where the data lives.")
    if options.recorded is not None:
        raise LuskinError("The check against recorded race is made in memory: audit the rows themselves, or leave "
                          "out the recorded race column.")
    from luskin_core.analyses.proxy_engine import source_proxy_sums

    sums, counts = source_proxy_sums(data, surname=str(options.surname), geography=str(options.place),
                                     outcome=spec.outcome, positive=spec.positive, level=options.level,
                                     cells=list(spec.strata), threshold=options.threshold)
    return _from_sums(sums, counts, data.kind, spec, options, judgement)


def _from_sums(sums: Any, counts: dict[str, int], engine: str, spec: AuditSpec, options: ProxyOptions,
               judgement: Judgement) -> ProxyAudit:
    """The audit from an engine's sums (the rows' estimation said by its counts per fallback)."""
    total = sum(counts.values())
    proxy = {"n_rows": total, "geography": options.level, "first_names": False, "methods": counts, "engine": engine}
    return audit_sums(sums, decision=decision_text(spec), judgement=judgement, options=options, n_rows=total,
                      proxy=proxy)


def _streamed(path: str, spec: AuditSpec, options: ProxyOptions, judgement: Judgement) -> ProxyAudit:
    """A Parquet file without strata, streamed with Arrow (names looked up by dictionary index)."""
    import pyarrow.parquet as pq

    from luskin_core.analyses.proxy_engine import parquet_proxy_sums

    if options.first_name is not None:
        raise LuskinError("First names (BIFSG) are estimated in memory: audit the rows themselves, or leave out the "
                          "first-name column to audit with BISG where the data lives.")
    try:
        names = pq.ParquetFile(path).schema_arrow.names
    except (OSError, ValueError) as err:
        raise LuskinError(f"The Parquet file '{path}' could not be read ({err}).") from None
    for column in (options.surname, options.place, spec.outcome):
        if column not in names:
            raise LuskinError(f"There is no column '{column}' in the data.")
    sums, counts = parquet_proxy_sums(path, surname=str(options.surname), geography=str(options.place),
                                      outcome=spec.outcome, positive=spec.positive, level=options.level,
                                      threshold=options.threshold)
    return _from_sums(sums, counts, "arrow", spec, options, judgement)


def _in_memory(frame: Any, spec: AuditSpec, options: ProxyOptions, judgement: Judgement) -> ProxyAudit:
    """Rows in memory: their probabilities (BISG, or BIFSG with first names), the check against recorded race,
    and the audit."""
    import numpy as np

    from luskin_core.analyses.proxy import add_probabilities
    from luskin_core.spec.validation import outcome_mask

    if spec.outcome not in frame.columns:
        raise LuskinError(f"There is no outcome column '{spec.outcome}' in the data.")
    with_p, result = add_probabilities(frame, surname=str(options.surname), geography=str(options.place),
                                       level=options.level, first_name=options.first_name)
    cells = None
    if spec.strata:
        strata = list(spec.strata)
        missing = [c for c in strata if c not in frame.columns]
        if missing:
            raise LuskinError(f"There is no column '{missing[0]}' to stratify by.")
        cells = (", ".join(strata) + " = ") + frame[strata].astype("string").fillna("(missing)").agg(", ".join, axis=1)
    y = np.asarray(outcome_mask(frame[spec.outcome], spec.positive), dtype=float).copy()
    y[frame[spec.outcome].isna().to_numpy()] = float("nan")  # a missing outcome is left out, as the engines do
    proxy = result.to_dict()
    if options.recorded is not None:
        if options.recorded not in frame.columns:
            raise LuskinError(f"There is no column '{options.recorded}' with recorded race to check against.")
        proxy["recorded_race_check"] = recorded_check(with_p, y, frame[options.recorded])
    return proxy_audit(with_p, y, judgement=judgement, options=options, decision=decision_text(spec), cells=cells,
                       places=frame[options.place], proxy=proxy)


def recorded_check(with_p: Any, y: Any, recorded: Any) -> list[str]:
    """Sentences: the outcome-aware estimate against the recorded race on the rows that have one."""
    from luskin_core.analyses.birdie import check_against_recorded
    from luskin_core.analyses.proxy import PROB_COLUMNS, RACE_LABELS, RACES

    names = {r: i for i, r in enumerate(RACES)} | {label.lower(): i for i, label in
                                                   enumerate(RACE_LABELS[r] for r in RACES)}
    codes = recorded.astype("string").str.strip().str.lower().map(names).fillna(-1).astype(int).to_numpy()
    checks = check_against_recorded(with_p[list(PROB_COLUMNS)].to_numpy(float), y, codes,
                                    tuple(RACE_LABELS[r] for r in RACES))
    if not checks:
        return ["Too few rows have a recorded race (at least 30 in a group) to check the outcome-aware estimate."]
    return [c.sentence() for c in checks]


__all__ = ["decision_text", "proxy_spec", "recorded_check", "run"]
