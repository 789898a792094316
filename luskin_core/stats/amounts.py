"""Statistics of an outcome that is an amount (pay, a bonus, a price, a sentence's length), from a few numbers per group.

An amount audit needs, for each group in each cell, what the engines count (:mod:`luskin_core.counting.order`):
the rows ``n``, the mean and the sample variance, the smallest and largest value, and a handful of *order
statistics* (the values at given ranks of the sorted amounts): the two middle ones, whose average is the
median, and the two that bound the median's interval. Everything here is computed from those numbers, so an
amount audit of a table in PostgreSQL or Spark gives the in-memory numbers without moving its rows.

The methods, each the field's standard:

* **The mean** with Student's t interval (``scipy.stats.t.interval``).
* **The median** with the distribution-free order-statistic interval ``[x_(l), x_(n-l+1)]``, ``l`` the largest
  rank with ``P(Binomial(n, 1/2) <= l - 1) <= alpha / 2`` (its coverage is at least ``1 - alpha`` for any
  distribution, ties included, since ``P(x_(l) > m) = P(#{x <= m} < l) <= P(Binomial(n, 1/2) < l)`` for any median
  ``m``; ``scipy.stats.quantile_test(...).confidence_interval()`` gives the same ranks). Fewer than 6 rows cannot
  reach 95%: no interval.
* **The gap of means**: the difference with Welch's t-test and interval (unequal variances,
  Welch-Satterthwaite degrees of freedom; ``scipy.stats.ttest_ind(equal_var=False)``), and the gap as a share of
  the reference's mean with Fieller's interval for the ratio of two independent means.
* **The gap of medians**: the difference with the Price-Bonett interval and test (Bonett and Price 2002,
  *Psychological Methods* 7(3)): each median's standard error is read from its order-statistic interval,
  ``(x_(u) - x_(l)) / (2 z0)`` with ``z0`` the normal quantile of that interval's exact binomial coverage, so it
  needs no density estimate and holds under skew (it is built from the same order statistics as the median's
  interval; statpsych's ``ci.median2`` takes ``l = round(n/2 - sqrt(n))``, the same rank for every size its
  examples use). The share of the reference's median has the Price-Bonett interval of the ratio of medians (the
  same on the log scale), for positive amounts. Where the middle of both groups sits on tied values (both
  intervals of a single value) the standard error is 0: the medians are then known as well as the data can say,
  and a gap between them is reported as certain (p = 0; p = 1 for no gap). ``benchmarks/bench_amounts.py sim``
  measures the coverage and size of every interval and test on skewed, tied and small groups.
* **The pay gap** of the EU Pay Transparency Directive (2023/970, Article 3: "the difference of average pay
  levels ... expressed as a percentage of the average pay level of male workers"): ``(reference - group) /
  reference``, positive when the group is paid less; for an adverse amount (a sentence, a price charged) the sign
  turns, so a positive gap always means the group fares worse.
* **Across strata** (the Directive's categories of workers): the gap the group has against the reference *in
  the same strata*: what the group is paid, against what it would be paid at the reference's mean in each of its
  strata (direct standardisation on the group's own rows), as a share, with a delta-method interval and a z test;
  the rest of the overall gap is the strata the group is in (:class:`WithinStrata`).

Numbers only: the words are the analysis's (:mod:`luskin_core.analyses.amounts`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from luskin_core.stats.inference import adjust_p, critical_value, two_sided_p
from luskin_core.stats.verdict import ALPHA  # the one significance level (the judgement's)


# ------------------------------------------------------------------------------------------
# One group in one cell
# ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AmountSummary:
    """What the counting gives for one group in one cell.

    ``order`` maps 1-based ranks to the values of the sorted amounts at them (the middle two, the median
    interval's two); ``receiving`` counts the rows with an amount above 0 (those receiving a bonus).
    """

    n: int
    mean: float
    variance: float          # the sample variance (n - 1 in the denominator); NaN for fewer than 2 rows
    minimum: float
    maximum: float
    order: dict[int, float]
    receiving: int = 0

    @property
    def median(self) -> float:
        """The sample median: the middle value, or the mean of the middle two (as numpy and pandas)."""
        low, high = median_ranks(self.n)
        return _middle(self.order[low], self.order[high])

    @property
    def sd(self) -> float:
        return math.sqrt(self.variance) if self.variance >= 0 else math.nan

    def median_interval(self, alpha: float = ALPHA) -> tuple[float, float] | None:
        """The distribution-free interval of the median, or None below 6 rows (no interval reaches 95%)."""
        ranks = interval_ranks(self.n, alpha)
        if ranks is None:
            return None
        return self.order[ranks[0]], self.order[ranks[1]]

    def mean_interval(self, alpha: float = ALPHA) -> tuple[float, float] | None:
        """Student's t interval of the mean (None below 2 rows)."""
        if self.n < 2 or not math.isfinite(self.variance):
            return None
        half = critical_value(self.n - 1, 1 - alpha) * math.sqrt(self.variance / self.n)
        return self.mean - half, self.mean + half

    def median_se(self, alpha: float = ALPHA) -> float | None:
        """The median's standard error from its order-statistic interval (Price and Bonett); None below 6 rows."""
        ranks = interval_ranks(self.n, alpha)
        if ranks is None:
            return None
        z0 = coverage_z(self.n, ranks[0])
        return (self.order[ranks[1]] - self.order[ranks[0]]) / (2.0 * z0)

    def log_median_se(self, alpha: float = ALPHA) -> float | None:
        """The standard error of the median's logarithm (the same, on the log scale); None for amounts <= 0."""
        ranks = interval_ranks(self.n, alpha)
        if ranks is None or self.order[ranks[0]] <= 0:
            return None
        z0 = coverage_z(self.n, ranks[0])
        return (math.log(self.order[ranks[1]]) - math.log(self.order[ranks[0]])) / (2.0 * z0)


def _middle(low: float, high: float) -> float:
    return low if low == high else (low + high) / 2.0


def median_ranks(n: int) -> tuple[int, int]:
    """The 1-based ranks of the two middle values: (k, k) for odd n, (n/2, n/2 + 1) for even n."""
    if n < 1:
        raise ValueError("no rows, no median")
    return (n + 1) // 2, n // 2 + 1


@lru_cache(maxsize=4096)
def interval_ranks(n: int, alpha: float = ALPHA) -> tuple[int, int] | None:
    """The ranks (l, n - l + 1) of the median's distribution-free interval at level ``1 - alpha``, or None when
    even the widest, ``[min, max]``, falls short of it (fewer than 6 rows at 95%)."""
    from scipy.special import bdtr

    if n < 1:
        return None
    # the largest l with P(Binomial(n, 1/2) <= l - 1) <= alpha / 2: start from the normal guess, then step
    l = max(math.floor(n / 2 - critical_value(None, 1 - alpha) * math.sqrt(n) / 2), 1)
    while l > 1 and bdtr(l - 1, n, 0.5) > alpha / 2:
        l -= 1
    while l + 1 <= (n + 1) // 2 and bdtr(l, n, 0.5) <= alpha / 2:
        l += 1
    if bdtr(l - 1, n, 0.5) > alpha / 2:
        return None
    return l, n - l + 1


def interval_coverage(n: int, l: int) -> float:
    """The exact coverage of ``[x_(l), x_(n-l+1)]`` for a continuous amount (at least that with ties)."""
    from scipy.special import bdtr

    return 1.0 - 2.0 * float(bdtr(l - 1, n, 0.5))


def coverage_z(n: int, l: int) -> float:
    """The normal quantile of the interval's one-sided tail: ``Phi^-1(1 - P(Binomial(n, 1/2) <= l - 1))``."""
    from scipy.special import bdtr, ndtri

    return float(ndtri(1.0 - float(bdtr(l - 1, n, 0.5))))


def needed_ranks(n: int, alpha: float = ALPHA) -> tuple[int, ...]:
    """Every rank an :class:`AmountSummary` of ``n`` rows reads (the middle two and the interval's two)."""
    if n < 1:
        return ()
    ranks = set(median_ranks(n))
    interval = interval_ranks(n, alpha)
    if interval is not None:
        ranks.update(interval)
    return tuple(sorted(ranks))


def summary_of(values: Sequence[float] | Any, alpha: float = ALPHA) -> AmountSummary:
    """The summary of amounts held in memory (the in-memory path, and the tests' reference)."""
    import numpy as np

    x = np.sort(np.asarray(values, dtype=float))
    n = int(x.size)
    if n == 0:
        raise ValueError("no amounts")
    order = {r: float(x[r - 1]) for r in needed_ranks(n, alpha)}
    variance = float(np.var(x, ddof=1)) if n > 1 else math.nan
    return AmountSummary(n, float(np.mean(x)), variance, float(x[0]), float(x[-1]), order, int((x > 0).sum()))


# ------------------------------------------------------------------------------------------
# A group against the reference
# ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Test:
    """A gap with its interval and its test (None where it cannot be computed)."""

    estimate: float | None
    low: float | None
    high: float | None
    p_value: float | None
    statistic: float | None = None
    df: float | None = None


_NONE = Test(None, None, None, None)


def welch(group: AmountSummary, reference: AmountSummary, alpha: float = ALPHA) -> Test:
    """Welch's t-test and interval of ``mean(group) - mean(reference)``.

    Equal to ``scipy.stats.ttest_ind(group, reference, equal_var=False)`` and its ``confidence_interval()``.
    Where neither group varies, the difference is exact (p = 0 for a difference, 1 for none)."""
    if group.n < 2 or reference.n < 2:
        return Test(group.mean - reference.mean if group.n and reference.n else None, None, None, None)
    d = group.mean - reference.mean
    vg, vr = group.variance / group.n, reference.variance / reference.n
    se2 = vg + vr
    if se2 <= 0:
        return Test(d, d, d, 0.0 if d != 0 else 1.0, None, None)
    df = se2 ** 2 / (vg ** 2 / (group.n - 1) + vr ** 2 / (reference.n - 1))
    se = math.sqrt(se2)
    t = d / se
    half = critical_value(df, 1 - alpha) * se
    return Test(d, d - half, d + half, float(two_sided_p(t, df)), t, df)


def fieller_ratio(group: AmountSummary, reference: AmountSummary, alpha: float = ALPHA) -> tuple[float, float] | None:
    """Fieller's interval for ``mean(group) / mean(reference)`` (independent means, a normal critical value with
    Welch's degrees of freedom). None when the reference's mean is not clearly away from 0 (the interval is then
    unbounded) or either has fewer than 2 rows."""
    if group.n < 2 or reference.n < 2:
        return None
    vg, vr = group.variance / group.n, reference.variance / reference.n
    df_den = (vg ** 2 / (group.n - 1) + vr ** 2 / (reference.n - 1))
    df = (vg + vr) ** 2 / df_den if df_den > 0 else None
    t = critical_value(df, 1 - alpha)
    mg, mr = group.mean, reference.mean
    a = mr * mr - t * t * vr
    if a <= 0:
        return None
    b = mg * mr
    c = mg * mg - t * t * vg
    disc = b * b - a * c
    if disc < 0:
        return None
    root = math.sqrt(disc)
    return (b - root) / a, (b + root) / a


def price_bonett(group: AmountSummary, reference: AmountSummary, alpha: float = ALPHA) -> Test:
    """The Price-Bonett interval and z test of ``median(group) - median(reference)`` (None below 6 rows)."""
    sg, sr = group.median_se(alpha), reference.median_se(alpha)
    d = group.median - reference.median
    if sg is None or sr is None:
        return Test(d, None, None, None)
    se = math.sqrt(sg * sg + sr * sr)
    if se == 0:
        return Test(d, d, d, 0.0 if d != 0 else 1.0)
    z = d / se
    half = critical_value(None, 1 - alpha) * se
    return Test(d, d - half, d + half, float(two_sided_p(z)), z)


def price_bonett_ratio(group: AmountSummary, reference: AmountSummary, alpha: float = ALPHA
                       ) -> tuple[float, float] | None:
    """The Price-Bonett interval of ``median(group) / median(reference)`` on the log scale (positive amounts)."""
    sg, sr = group.log_median_se(alpha), reference.log_median_se(alpha)
    mg, mr = group.median, reference.median
    if sg is None or sr is None or mg <= 0 or mr <= 0:
        return None
    half = critical_value(None, 1 - alpha) * math.sqrt(sg * sg + sr * sr)
    log_ratio = math.log(mg) - math.log(mr)
    return math.exp(log_ratio - half), math.exp(log_ratio + half)


def gap_share(value: float, reference: float, adverse: bool = False) -> float | None:
    """The gap as a share of the reference: ``(reference - value) / reference`` (the Directive's pay gap, positive
    when the group is paid less), the sign turned for an adverse amount; None when the reference is 0 or below
    (a share of it means nothing)."""
    if not (reference > 0) or not math.isfinite(value):
        return None
    share = (reference - value) / reference
    return -share if adverse else share


def share_interval(ratio: tuple[float, float] | None, adverse: bool = False) -> tuple[float, float] | None:
    """The gap share's interval from the ratio's (group over reference): ``1 - ratio``, reversed, signed as the gap."""
    if ratio is None:
        return None
    low, high = 1.0 - ratio[1], 1.0 - ratio[0]
    return (-high, -low) if adverse else (low, high)


@dataclass(frozen=True)
class AmountComparison:
    """One group against the reference in one cell: both means, both medians, the gaps and their tests.

    ``mean_gap``/``median_gap`` are ``group - reference`` (in the amount's units) with their intervals and
    tests; ``mean_gap_share``/``median_gap_share`` are the Directive's shares of the reference (positive: the
    group fares worse). ``mean_p_adjusted``/``median_p_adjusted`` are set by :func:`adjust_family`.
    """

    group: str
    cell: Any
    cell_label: str
    summary: AmountSummary
    reference: AmountSummary
    mean_gap: Test
    median_gap: Test
    mean_gap_share: float | None
    mean_share_interval: tuple[float, float] | None
    median_gap_share: float | None
    median_share_interval: tuple[float, float] | None
    is_reference: bool = False
    mean_p_adjusted: float | None = None
    median_p_adjusted: float | None = None

    @property
    def mean(self) -> float:
        return self.summary.mean

    @property
    def median(self) -> float:
        return self.summary.median

    @property
    def reference_mean(self) -> float:
        return self.reference.mean

    @property
    def reference_median(self) -> float:
        return self.reference.median


def compare(group: str, cell: Any, cell_label: str, summary: AmountSummary, reference: AmountSummary, *,
            adverse: bool = False, alpha: float = ALPHA, is_reference: bool = False) -> AmountComparison:
    """Every number of one comparison (see the module's docstring for the methods)."""
    if is_reference:
        return AmountComparison(group, cell, cell_label, summary, reference, _NONE, _NONE, None, None, None, None,
                                is_reference=True)
    mean_gap = welch(summary, reference, alpha)
    median_gap = price_bonett(summary, reference, alpha)
    return AmountComparison(
        group, cell, cell_label, summary, reference, mean_gap, median_gap,
        gap_share(summary.mean, reference.mean, adverse),
        share_interval(fieller_ratio(summary, reference, alpha), adverse) if reference.mean > 0 else None,
        gap_share(summary.median, reference.median, adverse),
        share_interval(price_bonett_ratio(summary, reference, alpha), adverse),
    )


def adjust_family(comparisons: Sequence[AmountComparison], judged: Sequence[bool],
                  method: str = "holm") -> list[AmountComparison]:
    """The comparisons with their p-values adjusted for the family: every mean and median test of the judged
    comparisons together (two tests a comparison), by ``method`` ("holm", "bh" or "none"). The others keep their
    raw p-values and get no adjusted one."""
    from dataclasses import replace

    raw: list[float] = []
    for comparison, use in zip(comparisons, judged):
        for test in (comparison.mean_gap, comparison.median_gap):
            raw.append(test.p_value if use and test.p_value is not None else math.nan)
    adjusted = adjust_p(raw, method)
    out = []
    for i, comparison in enumerate(comparisons):
        mean_p, median_p = adjusted[2 * i], adjusted[2 * i + 1]
        out.append(replace(comparison, mean_p_adjusted=None if math.isnan(mean_p) else float(mean_p),
                           median_p_adjusted=None if math.isnan(median_p) else float(median_p)))
    return out


# ------------------------------------------------------------------------------------------
# Across strata
# ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class WithinStrata:
    """The gap a group has against the reference inside the same strata, beside its overall gap.

    ``standard`` is what the group would be paid at the reference's mean in each stratum it is in (its own rows
    counted): ``sum(n_g,c * mean_r,c)``; ``actual`` what it is paid, ``sum(n_g,c * mean_g,c)``. The within gap is
    ``standard - actual`` (per row of the group: ``per_row``) and its share ``1 - actual / standard``, with a
    delta-method interval and a z test (the two sums are independent: different rows). ``strata_used``: strata with
    both the group and the reference (at least 2 rows each); ``rows_left_out``: the group's rows in the others.
    """

    share: float | None
    low: float | None
    high: float | None
    p_value: float | None
    per_row: float | None
    strata_used: int
    rows_left_out: int


def within_strata(pairs: Sequence[tuple[AmountSummary, AmountSummary]], *, adverse: bool = False,
                  alpha: float = ALPHA) -> WithinStrata:
    """The within-strata gap of one group from its (group, reference) summaries in each stratum."""
    actual = standard = var_actual = var_standard = 0.0
    rows = used = left = 0
    for group, reference in pairs:
        if group.n < 2 or reference.n < 2:
            left += group.n
            continue
        used += 1
        rows += group.n
        actual += group.n * group.mean
        standard += group.n * reference.mean
        var_actual += group.n * group.variance                       # Var(sum of the group's amounts)
        var_standard += group.n ** 2 * reference.variance / reference.n   # Var(n_g * mean of the reference)
    if used == 0 or standard <= 0:
        return WithinStrata(None, None, None, None, None, used, left)
    ratio = actual / standard
    share = 1.0 - ratio
    se_log = math.sqrt(var_actual / actual ** 2 + var_standard / standard ** 2) if actual > 0 else math.nan
    gap_se = math.sqrt(var_actual + var_standard)
    p = float(two_sided_p((standard - actual) / gap_se)) if gap_se > 0 else (0.0 if actual != standard else 1.0)
    low = high = None
    if math.isfinite(se_log):
        z = critical_value(None, 1 - alpha)
        low, high = 1.0 - ratio * math.exp(z * se_log), 1.0 - ratio * math.exp(-z * se_log)
    if adverse:
        share = -share
        low, high = (None, None) if low is None or high is None else (-high, -low)
    return WithinStrata(share, low, high, p, (standard - actual) / rows * (-1 if adverse else 1), used, left)


__all__ = ["ALPHA", "AmountComparison", "AmountSummary", "Test", "WithinStrata", "adjust_family", "compare",
           "coverage_z", "fieller_ratio", "gap_share", "interval_coverage", "interval_ranks", "median_ranks",
           "needed_ranks", "price_bonett", "price_bonett_ratio", "share_interval", "summary_of", "welch",
           "within_strata"]
