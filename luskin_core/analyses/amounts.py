"""The audit of an outcome that is an amount (pay, a bonus, a price, a sentence's length): its result of numbers.

Each group against the reference, overall and in every cell (the filter's two cells, or the strata: the EU Pay
Transparency Directive's categories of workers doing the same work or work of equal value): the rows, the mean
and the median with their intervals, the gap as a difference and as a share of the reference's mean and of its
median (the Directive's pay gap, positive when the group is paid less, or for an adverse amount charged more),
Welch's test of the means and the Price-Bonett test of the medians (both hold with ties and skew:
:mod:`luskin_core.stats.amounts`), one family of every mean and median test adjusted by the audit's correction,
and across strata the gap inside the same strata (direct standardisation) beside the overall one.

Counted only through the engine path (:func:`luskin_core.counting.executor.counted_amounts`, that is
``count_plan`` and ``counted_table``, then one order-statistics query), so a file, DuckDB, PostgreSQL and Spark
give the numbers of a frame in memory. Overall numbers (every cell together) are counted by the same path with the
cells removed: a median of the whole is not a mix of the cells' medians.

Every decision is the one :class:`~luskin_core.stats.judgement.Judgement`'s: the reference (the one named; the
rest for a protected condition; else the most favoured group, here the highest mean, the lowest for an adverse
amount, among groups large enough and of known category: the judgement's own rule read on the amount's sums), the
groups of unknown category (shown, set apart from the headline), too few rows, the tolerance (read as a share of
the reference: 0.05 is the Directive's 5%; with the ratio metric, the ratio of means and of medians), ``p <
alpha`` on the adjusted p-values, and the verdict (the first rule that applies). Both the mean and the median
gap are judged; a gap that cannot be a share (the reference's median 0 or below) is judged on the other.

Numbers only: the words are :mod:`luskin_core.present.amounts_report`'s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from luskin_core.counting.executor import counted_amounts, counted_amounts_with_pooled
from luskin_core.counting.order import AmountTable
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.stats.amounts import (
    AmountComparison,
    AmountSummary,
    WithinStrata,
    adjust_family,
    compare,
    needed_ranks,
    within_strata,
)
from luskin_core.stats.inference import adjust_p
from luskin_core.stats.judgement import Judgement
from luskin_core.stats.verdict import Verdict

# A few values this many times the median (or more) pull a mean: said in words with what they do to it.
HUGE = 20.0
# Fewer rows than this: with skewed amounts the mean's t interval and Welch's test cover less than their level
# (benchmarks/results/bench_amounts.md: 87% at 10 rows, 92% at 30 of lognormal pay); the median's hold.
SMALL = 30
GAP_SHARE = "gap share"   # what the tolerance is read on (the judgement's rule says so)


@dataclass(frozen=True)
class AmountRow:
    """One group against the reference in one cell ("" overall): the numbers and the judgement's verdict."""

    comparison: AmountComparison
    verdict: Verdict
    rule: str
    unknown: bool = False
    measures: tuple[Verdict | None, Verdict | None] = (None, None)   # the mean's and the median's on their own

    def measure_verdict(self, what: str) -> Verdict | None:
        """The verdict of the mean's or the median's gap alone (None: that gap is no share), for a table that gives
        each its own line; the row's ``verdict`` reads both."""
        return self.measures[("mean", "median").index(what)]

    @property
    def group(self) -> str:
        return self.comparison.group

    @property
    def cell(self) -> str:
        return self.comparison.cell_label

    @property
    def n(self) -> int:
        return self.comparison.summary.n

    def to_dict(self) -> dict[str, Any]:
        """The comparison as the JSON carries it (``mean``, ``median``, ``reference_mean``, ...)."""
        c = self.comparison
        s = c.summary
        return {
            "group": c.group, "cell": c.cell_label or None, "reference": c.is_reference, "unknown_category": self.unknown,
            "n": s.n, "receiving": s.receiving, "mean": _num(s.mean), "mean_ci": _pair(s.mean_interval()),
            "median": _num(s.median), "median_ci": _pair(s.median_interval()), "sd": _num(s.sd),
            "min": _num(s.minimum), "max": _num(s.maximum),
            "reference_n": c.reference.n, "reference_mean": _num(c.reference_mean),
            "reference_median": _num(c.reference_median),
            "mean_gap": _num(c.mean_gap.estimate), "mean_gap_ci": _pair((c.mean_gap.low, c.mean_gap.high)),
            "mean_p": _num(c.mean_gap.p_value), "mean_p_adjusted": _num(c.mean_p_adjusted),
            "median_gap": _num(c.median_gap.estimate), "median_gap_ci": _pair((c.median_gap.low, c.median_gap.high)),
            "median_p": _num(c.median_gap.p_value), "median_p_adjusted": _num(c.median_p_adjusted),
            "mean_gap_share": _num(c.mean_gap_share), "mean_gap_share_ci": _pair(c.mean_share_interval),
            "median_gap_share": _num(c.median_gap_share), "median_gap_share_ci": _pair(c.median_share_interval),
            "verdict": self.verdict.words, "rule": self.rule,
        }


@dataclass(frozen=True)
class StrataSummary:
    """One group's gap across the strata: inside the same strata, beside its overall gap, with its verdict."""

    group: str
    within: WithinStrata
    overall_share: float | None
    p_adjusted: float | None
    verdict: Verdict
    rule: str
    beyond_cells: tuple[str, ...]     # the strata whose mean or median gap is beyond the tolerance, significant
    at_tolerance: tuple[str, ...]     # the strata where the mean or median gap share is the tolerance or more, either way
    judged_cells: int

    def to_dict(self) -> dict[str, Any]:
        w = self.within
        return {"group": self.group, "within_strata_gap_share": _num(w.share), "within_strata_ci": _pair((w.low, w.high)),
                "within_strata_p": _num(w.p_value), "within_strata_p_adjusted": _num(self.p_adjusted),
                "within_strata_gap_per_row": _num(w.per_row), "overall_mean_gap_share": _num(self.overall_share),
                "strata_used": w.strata_used, "rows_left_out": w.rows_left_out, "verdict": self.verdict.words,
                "rule": self.rule, "strata_beyond": list(self.beyond_cells),
                "strata_at_or_above_tolerance": list(self.at_tolerance), "strata_judged": self.judged_cells}


@dataclass(frozen=True)
class Awkward:
    """Something about the amounts a reader must be told (said in words by the report): ``kind`` one of
    "negative", "not_above_zero", "huge", "all_equal", "one_row", "few_for_median", "small"; ``group``/``cell``
    where it is; ``value`` and ``count`` its numbers; ``mean_without`` the mean without the huge values."""

    kind: str
    group: str
    cell: str
    count: int = 0
    value: float | None = None
    mean: float | None = None
    mean_without: float | None = None
    median: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "group": self.group, "cell": self.cell or None, "count": self.count,
                "value": _num(self.value), "mean": _num(self.mean), "mean_without": _num(self.mean_without),
                "median": _num(self.median)}


@dataclass(frozen=True)
class AmountAudit:
    """The amount audit's result: every group against the reference, overall and per cell, with the verdicts.

    ``overall`` compares the groups over every cell together; ``by_cell`` in each cell (empty with one cell);
    ``strata`` each group's gap inside the same cells (empty with one cell).
    """

    spec: AuditSpec
    judgement: Judgement
    groups: tuple[str, ...]
    cells: tuple[str, ...]
    overall: tuple[AmountRow, ...]
    by_cell: tuple[AmountRow, ...]
    strata: tuple[StrataSummary, ...]
    n_rows: int
    excluded: dict[str, int]
    awkward: tuple[Awkward, ...] = ()

    @property
    def outcome(self) -> str:
        return self.spec.outcome

    @property
    def reference(self) -> str:
        return str(self.judgement.reference)

    @property
    def adverse(self) -> bool:
        return self.judgement.adverse

    @property
    def rows(self) -> tuple[AmountRow, ...]:
        """Every comparison, overall first."""
        return self.overall + self.by_cell

    @property
    def counted(self) -> tuple[AmountRow, ...]:
        """The judged comparisons of groups of known category (the headline's)."""
        return tuple(r for r in self.rows if r.verdict.judged and not r.unknown)

    @property
    def fair(self) -> bool | None:
        """True when every judged comparison of a known group is within the tolerance; None when none is judged."""
        judged = self.counted
        if not judged:
            return None
        return all(r.verdict is Verdict.WITHIN for r in judged)

    def to_dict(self) -> dict[str, Any]:
        return {
            "analysis": "amounts", "outcome": self.outcome, "outcome_is": self.judgement.direction.value,
            "reference": self.reference, "tolerance_share": self.judgement.tolerance, "metric": self.judgement.metric,
            "alpha": self.judgement.alpha, "correction": self.judgement.correction,
            "tests": {"mean": "Welch's t-test (unequal variances)",
                      "median": "Price-Bonett (order-statistic standard errors; holds with ties and skew)",
                      "mean_gap_share_ci": "Fieller", "median_gap_share_ci": "Price-Bonett ratio of medians",
                      "within_strata": "direct standardisation on the group's rows, delta-method interval"},
            "rows": self.n_rows, "excluded": dict(self.excluded), "fair": self.fair,
            "judgement": self.judgement.to_dict(), "groups": list(self.groups), "cells": list(self.cells),
            "comparisons": [r.to_dict() for r in self.overall],
            "cell_comparisons": [r.to_dict() for r in self.by_cell],
            "strata": [s.to_dict() for s in self.strata],
            "awkward": [a.to_dict() for a in self.awkward],
        }


def _num(x: Any) -> float | None:
    if x is None:
        return None
    value = float(x)
    return value if math.isfinite(value) else None


def _pair(pair: Any) -> list[float | None] | None:
    if pair is None or pair[0] is None or pair[1] is None:
        return None
    return [_num(pair[0]), _num(pair[1])]


def as_amount(spec: AuditSpec) -> AuditSpec:
    """The specification with its outcome read as an amount (refused in words by the specification's own checks
    when the column is not numeric)."""
    if spec.outcome_type == "amount":
        return spec
    return spec.with_changes(outcome_type="amount", positive=None, score_cutoff=None, prediction=None)


def _summaries(table: AmountTable) -> list[list[AmountSummary | None]]:
    out: list[list[AmountSummary | None]] = []
    sums = table.counts.positives
    for g in range(len(table.groups)):
        row: list[AmountSummary | None] = []
        for c in range(table.n.shape[1]):
            n = int(table.n[g, c])
            row.append(None if n == 0 else AmountSummary(
                n, float(table.mean[g, c]), float(table.var[g, c]) if n > 1 else math.nan,
                float(table.minimum[g, c]), float(table.maximum[g, c]), dict(table.order[g][c]), int(sums[g, c])))
        out.append(row)
    return out


def _judge(judgement: Judgement, c: AmountComparison, unknown: bool,
           total: int) -> tuple[Verdict, str, tuple[Verdict | None, Verdict | None]]:
    """The verdict of one comparison, by the judgement's rules (its bar on the shares, its tests, its order), and
    the verdicts of its mean's and its median's gap each alone (None where that gap is no share)."""
    if c.is_reference:
        verdict = judgement.verdict(None, reference=True)
        return verdict, judgement.rule(verdict, GAP_SHARE), (verdict, verdict)
    too_few = judgement.too_few(c.summary.n, c.reference.n, c.summary.n / max(total, 1))
    judged: list[tuple[bool | None, float | None]] = []
    alone: list[Verdict | None] = []
    for share, value, ref, p in ((c.mean_gap_share, c.mean, c.reference_mean, c.mean_p_adjusted),
                                 (c.median_gap_share, c.median, c.reference_median, c.median_p_adjusted)):
        if share is None:
            alone.append(None)
            continue
        favourable = None if judgement.adverse else value
        within = judgement.within_estimate(share, favourable, None if judgement.adverse else ref)
        judged.append((within, p))
        alone.append(judgement.verdict([within], [p], too_few=too_few))
    verdict = judgement.verdict([w for w, _ in judged], [p for _, p in judged], too_few=too_few)
    return verdict, judgement.rule(verdict, GAP_SHARE), (alone[0], alone[1])


def _compare_all(table: AmountTable, judgement: Judgement, overall: bool) -> list[AmountComparison]:
    summaries = _summaries(table)
    ref = table.groups.index(str(judgement.reference))
    out = []
    for c, label in enumerate(table.counts.cell_labels):
        reference = summaries[ref][c]
        for g, group in enumerate(table.groups):
            summary = summaries[g][c]
            if summary is None or reference is None:
                continue
            out.append(compare(group, table.counts.cell_keys[c], "" if overall else str(label), summary, reference,
                               adverse=judgement.adverse, alpha=judgement.alpha, is_reference=g == ref))
    return out


def _awkward(table: AmountTable, overall: bool) -> list[Awkward]:
    """What the reader must be told about the amounts of each group (overall: every cell together)."""
    out: list[Awkward] = []
    for g, group in enumerate(table.groups):
        for c, label in enumerate(table.counts.cell_labels):
            n = int(table.n[g, c])
            if n == 0:
                continue
            cell = "" if overall else str(label)
            low, high = float(table.minimum[g, c]), float(table.maximum[g, c])
            if n == 1:
                out.append(Awkward("one_row", group, cell, 1, low))
                continue
            if low == high:
                out.append(Awkward("all_equal", group, cell, n, low))
            elif n < 6:
                out.append(Awkward("few_for_median", group, cell, n))
            if low != high and n < SMALL:
                out.append(Awkward("small", group, cell, n))
    return out


def _value_notes(data: Any, spec: AuditSpec, table: AmountTable) -> list[Awkward]:
    """Amounts below 0 or at 0 and a few huge ones, per group over every cell: the smallest value, the rows not above
    0, and the rows at ``HUGE`` times the group's median or more (counted through the same path)."""
    out: list[Awkward] = []
    summaries = _summaries(table)
    for g, group in enumerate(table.groups):
        summary = summaries[g][0]
        if summary is None:
            continue
        if summary.minimum < 0:
            out.append(Awkward("negative", group, "", value=summary.minimum))
        if summary.receiving < summary.n:
            out.append(Awkward("not_above_zero", group, "", summary.n - summary.receiving))
        median = summary.median
        if median > 0 and summary.maximum >= HUGE * median:
            out.append(_huge(data, spec, group, summary, HUGE * median))
    return out


def _huge(data: Any, spec: AuditSpec, group: str, summary: AmountSummary, bar: float) -> Awkward:
    """The huge values of one group: how many, and its mean without them (the rows at or above ``bar`` counted
    apart through the same path, the population narrowed to them)."""
    from luskin_core.errors import LuskinError
    from luskin_core.spec.conditions import Condition

    narrowed = spec.with_changes(population=(*spec.population, Condition(spec.outcome, ">=", bar)))
    try:
        big = counted_amounts(data, narrowed, lambda n: ())
    except LuskinError:
        big = None
    if big is None or group not in big.groups or big.counts.score_sum is None:
        return Awkward("huge", group, "", 0, summary.maximum, summary.mean, None, summary.median)
    i = big.groups.index(group)
    k = int(big.n[i].sum())
    rest = summary.mean * summary.n - float(big.counts.score_sum[i].sum())
    without = rest / (summary.n - k) if summary.n > k else None
    return Awkward("huge", group, "", k, summary.maximum, summary.mean, without, summary.median)


def run(data: Any, spec: AuditSpec, options: Any = None) -> AmountAudit:
    """The amount audit of ``data`` (a frame or an engine's source) for ``spec`` (its outcome read as an amount)."""
    spec = as_amount(spec)
    cells = bool(spec.filters or spec.strata)
    pooled_spec = spec.with_changes(filters=(), strata=()) if cells else spec
    by_cell: AmountTable | None = None
    if cells:   # one count of the cells; every cell together from its sums where the rows are the same
        by_cell, pooled = counted_amounts_with_pooled(data, spec, needed_ranks)
    else:
        pooled = counted_amounts(data, spec, needed_ranks)
    # the judgement's most favoured rule read on the amount: the mean per group (its sums in place of the counts)
    basis = (by_cell or pooled).counts
    assert basis.score_sum is not None   # an amount's count table carries its sums
    judgement = Judgement.of(spec).resolved(replace(basis, positives=basis.score_sum))
    total = pooled.counts.n_rows
    groups_overall = _compare_all(pooled, judgement, overall=True)
    groups_cells = _compare_all(by_cell, judgement, overall=False) if by_cell is not None else []
    everything = groups_overall + groups_cells
    unknown = [judgement.is_unknown(c.group) for c in everything]
    family = [not c.is_reference and not u and not judgement.too_few(c.summary.n, c.reference.n, c.summary.n / total)
              for c, u in zip(everything, unknown)]
    everything = adjust_family(everything, family, judgement.correction)
    rows = []
    for c, u in zip(everything, unknown):
        verdict, rule, measures = _judge(judgement, c, u, total)
        rows.append(AmountRow(c, verdict, rule, u, measures))
    overall_rows, cell_rows = tuple(rows[:len(groups_overall)]), tuple(rows[len(groups_overall):])
    strata = _strata(by_cell, judgement, overall_rows, cell_rows) if by_cell is not None else ()
    awkward = _value_notes(data, pooled_spec, pooled) + _awkward(pooled, True)
    if by_cell is not None:
        awkward += [a for a in _awkward(by_cell, False) if a.kind in ("one_row", "all_equal")]
    return AmountAudit(spec, judgement, pooled.groups, tuple(str(c) for c in by_cell.counts.cell_labels)
                       if by_cell is not None else (), overall_rows, cell_rows, tuple(strata), total,
                       dict(pooled.counts.excluded), tuple(awkward))


def _strata(table: AmountTable, judgement: Judgement, overall: tuple[AmountRow, ...],
            cells: tuple[AmountRow, ...]) -> list[StrataSummary]:
    """Each group's gap inside the same strata, its verdict (its own family, one test a group, the audit's
    correction), and the strata beyond the tolerance and at it or more."""
    summaries = _summaries(table)
    ref = table.groups.index(str(judgement.reference))
    found: list[tuple[str, WithinStrata, float | None]] = []
    for g, group in enumerate(table.groups):
        if g == ref or judgement.is_unknown(group):
            continue
        pairs = [(summaries[g][c], summaries[ref][c]) for c in range(table.n.shape[1])
                 if summaries[g][c] is not None and summaries[ref][c] is not None]
        if not pairs:
            continue
        share = next((r.comparison.mean_gap_share for r in overall if r.group == group), None)
        found.append((group, within_strata(pairs, adverse=judgement.adverse, alpha=judgement.alpha), share))  # type: ignore[arg-type]
    adjusted = adjust_p([w.p_value if w.p_value is not None else math.nan for _, w, _ in found], judgement.correction)
    out = []
    for (group, within, share), p in zip(found, adjusted):
        p_adj = None if math.isnan(p) else float(p)
        mine = [r for r in cells if r.group == group]
        rows = sum(r.n for r in mine)
        too_few = within.share is None or rows < judgement.min_group_size
        verdict = judgement.verdict(judgement.within_estimate(within.share), p_adj, too_few=too_few)
        beyond = tuple(r.cell for r in mine if r.verdict is Verdict.BEYOND)
        at = tuple(r.cell for r in mine if r.verdict.judged and any(
            s is not None and abs(s) >= judgement.tolerance for s in (r.comparison.mean_gap_share,
                                                                  r.comparison.median_gap_share)))
        out.append(StrataSummary(group, within, share, p_adj, verdict, judgement.rule(verdict, GAP_SHARE), beyond,
                                 at, sum(1 for r in mine if r.verdict.judged)))
    return out


__all__ = ["AmountAudit", "AmountRow", "Awkward", "StrataSummary", "as_amount", "run"]
