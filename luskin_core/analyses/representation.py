"""Representation: each group's share of the rows, or of the rows with the outcome, against its share of a
population the analyst names: its result of numbers.

The question a committee asks of a record before any rate ("Black residents are 24% of the city: what share of
the stops, of the frisks, are theirs?"), and the availability comparison of an affirmative-action plan (a group's
share of those hired against its share of the qualified labour market). Each group's share is compared with its
benchmark by the exact binomial test (the one-sample test of a share: scipy's ``binomtest``), with its Wilson
interval, the ratio of the two shares and the standard deviations between the count and the count the benchmark
expects (``(x - N p) / sqrt(N p (1 - p))``: the measure of *Castaneda v. Partida* and *Hazelwood*, where two or
three standard deviations were taken as more than chance).

Counted only through the engine path (:func:`luskin_core.counting.executor.counted_table`, every row together:
the filter's cells and the strata are not used), so a file, DuckDB, PostgreSQL and Spark give the numbers of a
frame in memory.

Every decision is the one :class:`~luskin_core.stats.judgement.Judgement`'s: the groups of unknown category (shown
with their rows, left out of the shares, which are of the rows of known category, and said as the range the shares
could take whatever those rows are), too few rows (fewer than the smallest group size counted in all), the bar
(the tolerance on the share minus its benchmark, or with the ratio metric the ratio of the shares both ways),
``p < alpha`` on the p-values adjusted by the audit's correction over every judged group, and the verdict. Which
way a gap harms is the outcome's direction: fewer of a favourable outcome than the benchmark expects, or more of an
adverse one; a comparison of every row (``among="all"``) says which way only.

Numbers only: the words are :mod:`luskin_core.present.representation_report`'s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from luskin_core.counting.executor import counted_table
from luskin_core.errors import LuskinError
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.stats.inference import adjust_p, wilson_interval
from luskin_core.stats.judgement import Judgement
from luskin_core.stats.verdict import Verdict

DIFFERENCE = "share minus benchmark"   # what the tolerance is read on (the judgement's rule says so)


def benchmark_shares(text: Any) -> tuple[tuple[str, float], ...]:
    """The benchmark as written, ``GROUP=SHARE`` separated by commas or semicolons (a share as 0.24 or 24%), in
    the order given; a plain refusal for anything else (no share, a share outside 0 to 1, a group twice, shares
    adding to more than 1)."""
    items = [part.strip() for part in str(text or "").replace(";", ",").replace("\n", ",").split(",")]
    items = [item for item in items if item]
    if not items:
        raise LuskinError("Name each group's share of the population its rows are compared with, e.g. "
                          "'Black=24%, White=32%' (a group's label as the data writes it, its share as 0.24 or 24%).")
    shares: dict[str, float] = {}
    for item in items:
        group, sign, written = item.rpartition("=")
        group = group.strip()
        if not sign or not group:
            raise LuskinError(f"'{item}' is not GROUP=SHARE: write each group's label, '=', then its share "
                              "(0.24 or 24%).")
        share = _share(written.strip(), group)
        if group in shares:
            raise LuskinError(f"'{group}' is given two shares ({shares[group]:g} and {share:g}): give it one.")
        shares[group] = share
    total = math.fsum(shares.values())
    if total > 1 + 1e-9:
        raise LuskinError(f"The shares add to {total:.4g}, more than the whole population (1, or 100%): check them.")
    return tuple(shares.items())


def _share(written: str, group: str) -> float:
    percent = written.endswith("%")
    try:
        value = float(written[:-1] if percent else written)
    except ValueError:
        value = math.nan
    value = value / 100 if percent else value
    if not math.isfinite(value) or not 0 < value < 1:
        raise LuskinError(f"The share of '{group}' must be above 0 and below 1 (or above 0% and below 100%), "
                          f"not '{written}'.")
    return value


@dataclass(frozen=True)
class RepresentationRow:
    """One group: its rows, its share against its benchmark, the test and the judgement's verdict (None: no
    benchmark was given for it, or it is of unknown category)."""

    group: str
    count: int                       # its rows among those compared (with the outcome, or every row)
    rows: int                        # all its rows
    share: float | None              # count / the compared rows of known category
    interval: tuple[float, float] | None
    pool_share: float | None         # rows / every row of known category (the pool the outcome is drawn from)
    benchmark: float | None
    expected: float | None           # the compared rows times the benchmark
    deviations: float | None         # (count - expected) / sqrt(N p (1 - p))
    p: float | None
    p_adjusted: float | None
    bounds: tuple[float, float] | None   # the share whatever the rows of unknown category are (none or all its)
    verdict: Verdict | None
    rule: str
    unknown: bool = False
    harmful: bool | None = None      # the gap points the way that harms (None: every row compared, or no gap)

    @property
    def difference(self) -> float | None:
        """The share minus its benchmark."""
        return None if self.share is None or self.benchmark is None else self.share - self.benchmark

    @property
    def ratio(self) -> float | None:
        """The share over its benchmark (1: represented as the benchmark expects)."""
        return None if self.share is None or self.benchmark is None else self.share / self.benchmark

    def to_dict(self) -> dict[str, Any]:
        return {"group": self.group, "count": self.count, "rows": self.rows, "share": self.share,
                "interval": list(self.interval) if self.interval else None, "pool_share": self.pool_share,
                "benchmark": self.benchmark, "expected": self.expected, "difference": self.difference,
                "ratio": self.ratio, "deviations": self.deviations, "p": self.p, "p_adjusted": self.p_adjusted,
                "bounds_with_unknown": list(self.bounds) if self.bounds else None,
                "verdict": self.verdict.value if self.verdict else None, "rule": self.rule,
                "unknown_category": self.unknown, "harmful": self.harmful}


@dataclass(frozen=True)
class RepresentationResult:
    """Every group's share against its benchmark, with the judgement that decided each verdict."""

    spec: AuditSpec
    judgement: Judgement
    among: str
    compared: int                    # the compared rows of known category (the shares' denominator)
    unknown_count: int               # the compared rows of unknown category
    total_rows: int                  # every row counted
    rows: tuple[RepresentationRow, ...]
    not_in_data: tuple[str, ...]     # benchmark groups no row holds (absent, or a label spelled otherwise)
    benchmark_total: float
    excluded: dict[str, int]

    @property
    def outcome(self) -> str:
        return self.spec.outcome

    @property
    def adverse(self) -> bool:
        return self.judgement.adverse

    @property
    def judged(self) -> tuple[RepresentationRow, ...]:
        """The rows that were judged (a benchmark, a known category, enough rows)."""
        return tuple(r for r in self.rows if r.verdict is not None and r.verdict is not Verdict.TOO_FEW)

    @property
    def beyond(self) -> tuple[RepresentationRow, ...]:
        return tuple(r for r in self.rows if r.verdict is Verdict.BEYOND)

    def headline(self) -> str:
        """The count of verdicts, for a progress line (the committee's words are the report section's)."""
        return f"{len(self.beyond)} of {len(self.judged)} judged groups beyond the bar and not chance"

    def to_dict(self) -> dict[str, Any]:
        return {"analysis": "representation", "spec": self.spec.to_dict(), "judgement": self.judgement.to_dict(),
                "among": self.among, "compared_rows": self.compared, "unknown_category_rows": self.unknown_count,
                "rows_counted": self.total_rows, "benchmark_total": self.benchmark_total,
                "benchmark_groups_not_in_data": list(self.not_in_data), "excluded": dict(self.excluded),
                "groups": [r.to_dict() for r in self.rows]}


def _binomial_p(count: int, n: int, share: float) -> float:
    from scipy.stats import binomtest

    return float(binomtest(count, n, share).pvalue)


@dataclass(frozen=True)
class _Counted:
    """What every group's row is made from: the counts, the benchmark and the judgement's answers."""

    judgement: Judgement
    among: str
    counts: dict[str, int]
    rows_of: dict[str, int]
    benchmark: dict[str, float]
    unknown: dict[str, bool]
    compared: int
    pool: int
    apart: int
    too_few: bool


def _count(data: Any, spec: AuditSpec, shares: tuple[tuple[str, float], ...], among: str
           ) -> tuple[_Counted, Any, tuple[str, ...]]:
    """The groups' rows and outcomes (one count through the engine path), with the benchmark's groups no row holds."""
    table, _ = counted_table(data, spec)
    judgement = Judgement.of(spec).resolved(table)
    rows_of = dict(zip(table.groups, (int(v) for v in table.n.sum(axis=1))))
    counts = dict(zip(table.groups, (int(v) for v in table.positives.sum(axis=1)))) if among == "outcome" else rows_of
    benchmark = dict(shares)
    not_in_data = tuple(g for g in benchmark if g not in counts)
    groups = [*table.groups, *not_in_data]
    unknown = {g: judgement.is_unknown(g) for g in groups}
    compared = sum(counts.get(g, 0) for g in groups if not unknown[g])
    if compared == 0:
        raise LuskinError("No row of known category " + ("has the outcome's positive value" if among == "outcome"
                                                         else "was counted") + ", so no share can be compared.")
    counted = _Counted(judgement, among, counts, rows_of, benchmark, unknown, compared,
                       sum(rows_of.get(g, 0) for g in groups if not unknown[g]),
                       sum(counts.get(g, 0) for g in groups if unknown[g]), compared < judgement.min_group_size)
    return counted, table, not_in_data


def _row(c: _Counted, group: str, p: float | None, p_adjusted: float | None) -> RepresentationRow:
    """One group's row: its share, interval, benchmark, test, the range with the unknown rows and its verdict."""
    count, b, unknown = c.counts.get(group, 0), c.benchmark.get(group), c.unknown[group]
    share = None if unknown else count / c.compared
    low, high = wilson_interval(count, c.compared)
    expected = None if b is None or unknown else c.compared * b
    deviations = None if expected is None or b is None else (count - expected) / math.sqrt(c.compared * b * (1 - b))
    verdict, rule = _verdict(c.judgement, share, b, p_adjusted, unknown, c.too_few)
    gap = None if share is None or b is None or share == b else share - b
    harmful = None if c.among == "all" or gap is None else (gap > 0) == c.judgement.adverse
    bounds = (None if unknown or not c.apart
              else (count / (c.compared + c.apart), (count + c.apart) / (c.compared + c.apart)))
    return RepresentationRow(group, count, c.rows_of.get(group, 0), share,
                             None if unknown else (float(low), float(high)),
                             None if unknown or c.pool == 0 else c.rows_of.get(group, 0) / c.pool, b, expected,
                             deviations, p, p_adjusted, bounds, verdict, rule, unknown, harmful)


def run(data: Any, spec: AuditSpec, options: Any = None) -> RepresentationResult:
    """Each group's share of ``data`` (a frame or an engine's source) against ``options.benchmark``: of the rows
    with the outcome's positive value (``options.among="outcome"``) or of every row ("all")."""
    shares = benchmark_shares(getattr(options, "benchmark", None))
    among = str(getattr(options, "among", "outcome"))
    if among == "outcome" and spec.outcome_type == "amount":
        raise LuskinError(f"'{spec.outcome}' is an amount: no row has it or not. Compare every row's group "
                          "(among every row), or read the amount with the Amounts page.")
    pooled = spec.with_changes(filters=(), strata=()) if (spec.filters or spec.strata) else spec
    c, table, not_in_data = _count(data, pooled, shares, among)
    groups = [*table.groups, *not_in_data]
    judged = [g for g in groups if not c.unknown[g] and g in c.benchmark and not c.too_few]
    p = {g: _binomial_p(c.counts.get(g, 0), c.compared, c.benchmark[g]) for g in judged}
    adjusted = dict(zip(judged, adjust_p([p[g] for g in judged], c.judgement.correction))) if judged else {}
    rows = tuple(_row(c, g, p.get(g), adjusted.get(g)) for g in groups)
    return RepresentationResult(pooled, c.judgement, among, c.compared, c.apart, table.n_rows, rows, not_in_data,
                                math.fsum(c.benchmark.values()), dict(table.excluded))


def _verdict(judgement: Judgement, share: float | None, benchmark: float | None, p_adjusted: float | None,
             unknown: bool, too_few: bool) -> tuple[Verdict | None, str]:
    """One group's verdict and the rule that decided it (the judgement's, on the share against its benchmark)."""
    if unknown:
        return None, "set apart: unknown category"
    if benchmark is None or share is None:
        return None, "not judged: no benchmark share was given for this group"
    if too_few:
        return Verdict.TOO_FEW, (f"too few rows: fewer than {judgement.min_group_size:,} rows compared in all")
    within = judgement.within_estimate(share - benchmark, share, benchmark)
    verdict = judgement.verdict(within, p_adjusted)
    return verdict, judgement.rule(verdict, DIFFERENCE)


__all__ = ["RepresentationResult", "RepresentationRow", "benchmark_shares", "run"]
