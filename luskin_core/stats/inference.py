"""Intervals and tests for proportions, vectorised so an audit of a million rows is instant.

Where a method has a standard implementation in the field's libraries we use it or test against
it: Wilson intervals match ``scipy.stats.binomtest(...).proportion_ci("wilson")``; Newcombe's
interval for a difference matches ``statsmodels.stats.proportion.confint_proportions_2indep(
method="newcomb")``; the impact ratio's interval is the score interval with the
Miettinen-Nurminen correction, the inversion of statsmodels' ``score_test_proportions_2indep(
compare="ratio")`` (which stays finite when a group has no positives, and unlike statsmodels'
closed form ``confint_proportions_2indep(method="score", compare="ratio")`` is right when a
group has every outcome favourable);
Holm and Benjamini-Hochberg give ``statsmodels.stats.multitest.multipletests``' numbers; the
Mantel-Haenszel odds ratio, the Cochran-Mantel-Haenszel test and the Breslow-Day (Tarone) test
give ``statsmodels.stats.contingency_tables.StratifiedTable``'s numbers.

The StratifiedTable statistics are statsmodels' own formulas, written
out here operation for operation (the same floating-point results: equal bit for bit on 23,000
random tables when written; tests/test_audit_groups.py checks them against statsmodels), with
scipy.special's ``ndtri`` and ``chdtr`` where statsmodels goes through ``scipy.stats.norm`` and
``scipy.stats.chi2``: importing statsmodels and scipy.stats costs most of an audit of a large
Parquet table end to end (benchmarks/results/code_timings.md). scipy.special (far less) and scipy.stats (only for
Fisher's exact test, when a cell is small) are imported where they are used: ``luskin --help``
must not pay for them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

Z95 = 1.959963984540054  # scipy.stats.norm.ppf(0.975)
# Below this expected count in any cell of the 2x2 table the normal approximation is poor,
# so the gap is tested with Fisher's exact test instead (the usual rule of thumb).
SMALL_EXPECTED = 5.0
CORRECTIONS = ("holm", "bh", "none")
Z_TEST = "two-proportion z-test"
FISHER = "Fisher's exact test"


def _normal_sf(z: np.ndarray | float) -> np.ndarray:
    """Upper tail of the standard normal (scipy.special.ndtr is light to import)."""
    from scipy.special import ndtr

    return np.asarray(ndtr(-np.asarray(z, dtype=float)))


def critical_value(df: float | None = None, level: float = 0.95) -> float:
    """The two-sided critical value: Student's t with ``df`` degrees of freedom, or the normal's without.

    ``scipy.stats.t.ppf((1 + level) / 2, df)`` and ``norm.ppf``, through scipy.special (light to import).
    """
    from scipy.special import ndtri, stdtrit

    upper = (1.0 + level) / 2.0
    return float(stdtrit(df, upper)) if df is not None else float(ndtri(upper))


def two_sided_p(z: Any, df: float | None = None) -> np.ndarray:
    """Two-sided p-values of ``z``: ``2 * scipy.stats.t.sf(|z|, df)``, or the normal's without ``df``."""
    from scipy.special import stdtr

    tail = stdtr(df, -np.abs(np.asarray(z, dtype=float))) if df is not None else _normal_sf(np.abs(z))
    return 2.0 * np.asarray(tail, dtype=float)


def wilson_interval(positives: np.ndarray | int, n: np.ndarray | int, z: float = Z95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval for a proportion; NaN where n == 0 (nothing to estimate)."""
    k = np.asarray(positives, dtype=float)
    m = np.asarray(n, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = k / m
        denom = 1 + z * z / m
        centre = (p + z * z / (2 * m)) / denom
        half = z * np.sqrt(p * (1 - p) / m + z * z / (4 * m * m)) / denom
    # Clipped to the estimate: exactly 0 at a rate of 0 and exactly 1 at a rate of 1 (the formula
    # leaves a hair such as 5.6e-17 or 0.9999999999999999 there).
    low = np.where(m > 0, np.clip(np.minimum(centre - half, p), 0, 1), np.nan)
    high = np.where(m > 0, np.clip(np.maximum(centre + half, p), 0, 1), np.nan)
    low = np.where(k == 0, np.where(m > 0, 0.0, np.nan), low)
    high = np.where((k == m) & (m > 0), 1.0, high)
    return low, high


def newcombe_interval(k1: Any, n1: Any, k2: Any, n2: Any, z: float = Z95) -> tuple[np.ndarray, np.ndarray]:
    """Newcombe's hybrid score interval for p1 - p2 (his method 10), from the two Wilson intervals.

    NaN where a group has no rows.
    """
    k1, n1, k2, n2 = (np.asarray(a, dtype=float) for a in (k1, n1, k2, n2))
    l1, u1 = wilson_interval(k1, n1, z)
    l2, u2 = wilson_interval(k2, n2, z)
    with np.errstate(divide="ignore", invalid="ignore"):
        p1, p2 = k1 / n1, k2 / n2
        diff = p1 - p2
        low = diff - np.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
        high = diff + np.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return low, high


def ratio_interval(k1: Any, n1: Any, k2: Any, n2: Any, alpha: float = 0.05) -> tuple[Any, Any]:
    """95% interval of p1 / p2: the score interval with the Miettinen-Nurminen variance correction.

    The set of ratios R that the score test of p1 = R p2 (Miettinen and Nurminen 1985: the
    variance at the constrained maximum-likelihood estimates, times N / (N - 1)) does not reject,
    that is statsmodels' ``score_test_proportions_2indep(..., compare="ratio")`` inverted. It
    stays finite when a group has no positives (the lower limit is then exactly 0) and is right
    when a group has every outcome favourable (k = n), where the closed-form cubic of Nam (1995)
    that statsmodels' ``confint_proportions_2indep(method="score")`` solves takes the wrong root.
    Vectorised; NaN when a group has no rows or the reference (group 2) has no positives.
    """
    k1, n1, k2, n2 = (np.asarray(a, dtype=float) for a in (k1, n1, k2, n2))
    shape = np.broadcast(k1, n1, k2, n2).shape
    k1, n1, k2, n2 = (np.broadcast_to(a, shape).ravel() for a in (k1, n1, k2, n2))
    ok = (n1 > 0) & (n2 > 0) & (k2 > 0)
    low = np.full(k1.shape, np.nan)
    high = np.full(k1.shape, np.nan)
    if ok.any():
        a, m, b, q = k1[ok], n1[ok], k2[ok], n2[ok]
        crit = float(_z_upper(alpha))
        with np.errstate(divide="ignore", invalid="ignore"):
            estimate = (a / m) / (b / q)
            # z(R) decreases in R: the lower limit solves z = +crit below the estimate, the upper z = -crit above.
            centre = np.log(np.where(a > 0, estimate, 1.0))
            span = 12 * math.log(10)
            # A narrow bracket from the log (Katz) interval, twice as wide, where it brackets the root;
            # else 10^12 either side of the estimate.
            half = 2 * crit * np.sqrt(1 / (a + 0.5) - 1 / (m + 0.5) + 1 / (b + 0.5) - 1 / (q + 0.5)) + 0.1
            near_lo, near_hi = centre - half, centre + half
            low_start = np.where(_ratio_score_z(a, m, b, q, np.exp(near_lo)) > crit, near_lo, centre - span)
            high_end = np.where((a > 0) & (_ratio_score_z(a, m, b, q, np.exp(near_hi)) < -crit), near_hi,
                                centre + span)
            lo_edge = np.where(a > 0, _bisect_ratio(a, m, b, q, crit, low_start, centre), -np.inf)
            hi_edge = _bisect_ratio(a, m, b, q, -crit, np.where(a > 0, centre, -span), high_end)
        low[ok] = np.exp(lo_edge)
        high[ok] = np.exp(hi_edge)
    return low.reshape(shape), high.reshape(shape)


def _ratio_score_z(a: np.ndarray, m: np.ndarray, b: np.ndarray, q: np.ndarray, ratio: np.ndarray) -> np.ndarray:
    """The Miettinen-Nurminen score statistic of p1 = R p2 (positive when p1 / p2 is above R)."""
    total = m + q
    qa = total * ratio
    qb = -(ratio * (m + b) + a + q)
    qc = a + b
    disc = np.sqrt(np.maximum(qb * qb - 4 * qa * qc, 0.0))
    p2 = np.minimum((-qb - disc) / (2 * qa), 1.0)  # the constrained MLE of p2 (the root in [0, 1])
    p1 = np.minimum(ratio * p2, 1.0)
    var = (p1 * (1 - p1) / m + ratio * ratio * p2 * (1 - p2) / q) * total / (total - 1)
    diff = a / m - ratio * b / q
    return np.where(var > 0, diff / np.sqrt(var), np.sign(diff) * np.inf)


def _bisect_ratio(a: np.ndarray, m: np.ndarray, b: np.ndarray, q: np.ndarray, target: float,
                  lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """log R in [lo, hi] where the (decreasing) score statistic crosses ``target``.

    Regula falsi with the Illinois step (bracketing, so it cannot leave the interval; superlinear,
    so about ten evaluations reach a float's resolution), vectorised over every comparison.
    """
    def f(x: np.ndarray) -> np.ndarray:
        return np.clip(_ratio_score_z(a, m, b, q, np.exp(x)), -1e3, 1e3) - target

    lo, hi = np.array(lo, dtype=float), np.array(hi, dtype=float)
    f_lo, f_hi = f(lo), f(hi)
    side = np.zeros(lo.shape)
    root = np.full(lo.shape, np.nan)
    for _ in range(200):
        done = np.isfinite(root) | (np.abs(hi - lo) <= 1e-15 * np.maximum(1.0, np.abs(lo)))
        if done.all():
            break
        with np.errstate(divide="ignore", invalid="ignore"):
            x = hi - f_hi * (hi - lo) / (f_hi - f_lo)
        bad = ~np.isfinite(x) | (x <= np.minimum(lo, hi)) | (x >= np.maximum(lo, hi))
        x = np.where(bad, (lo + hi) / 2, x)
        fx = f(x)
        root = np.where(~done & (np.abs(fx) <= 1e-13), x, root)
        # f(lo) > 0 > f(hi): the root stays between them; Illinois halves the stale end's value
        to_hi = (fx < 0) & ~done
        to_lo = (fx >= 0) & ~done
        f_lo = np.where(to_hi & (side == -1), f_lo / 2, f_lo)
        f_hi = np.where(to_lo & (side == 1), f_hi / 2, f_hi)
        hi, f_hi = np.where(to_hi, x, hi), np.where(to_hi, fx, f_hi)
        lo, f_lo = np.where(to_lo, x, lo), np.where(to_lo, fx, f_lo)
        side = np.where(to_hi, -1, np.where(to_lo, 1, side))
    return np.where(np.isfinite(root), root, (lo + hi) / 2)


def _z_upper(alpha: float = 0.05) -> Any:
    """scipy.stats.norm.isf(alpha / 2) (= -norm.ppf(alpha / 2))."""
    from scipy.special import ndtri

    return -ndtri(alpha / 2)


def two_proportion_tests(k1: Any, n1: Any, k2: Any, n2: Any) -> tuple[np.ndarray, list[str]]:
    """Two-sided p-values that two proportions differ, vectorised, and the test used for each.

    Pooled two-proportion z-test (equal to the chi-square test without continuity correction);
    Fisher's exact test where an expected count is below 5. NaN (test "not computable") where a
    group has no rows.
    """
    k1, n1, k2, n2 = (np.atleast_1d(np.asarray(a, dtype=float)) for a in (k1, n1, k2, n2))
    p = np.full(k1.shape, np.nan)
    tests = ["not computable (a group has no rows)"] * len(k1)
    ok = (n1 > 0) & (n2 > 0)
    total = n1 + n2
    pos = k1 + k2
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = np.minimum.reduce([n1 * pos / total, n1 * (total - pos) / total,
                                      n2 * pos / total, n2 * (total - pos) / total])
        pooled = pos / total
        se = np.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
        z = (k1 / n1 - k2 / n2) / se
    small = ok & (expected < SMALL_EXPECTED)
    normal = ok & ~small
    p[normal] = np.where(se[normal] > 0, 2 * _normal_sf(np.abs(z[normal])), 1.0)
    for i in np.flatnonzero(normal):
        tests[i] = Z_TEST
    if small.any():
        from scipy.stats import fisher_exact

        for i in np.flatnonzero(small):
            table = [[int(k1[i]), int(n1[i] - k1[i])], [int(k2[i]), int(n2[i] - k2[i])]]
            p[i] = float(fisher_exact(table, alternative="two-sided")[1])
            tests[i] = FISHER
    return p, tests


def adjust_p(p_values: Sequence[float] | np.ndarray, method: str = "holm") -> np.ndarray:
    """p-values adjusted for the number of comparisons (Holm, Benjamini-Hochberg, or none).

    NaN entries (comparisons not tested) stay NaN and do not count in the family. The same
    numbers as ``statsmodels.stats.multitest.multipletests(method="holm" | "fdr_bh")`` (tested),
    computed here because statsmodels' Holm branch runs a full ``gc.collect()`` (80 ms in a
    busy server process, and a pause for every other analyst's session).
    """
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    tested = np.isfinite(p)
    values = p[tested]
    m = values.size
    if method == "none" or m == 0:
        out[tested] = values
        return out
    if method not in ("holm", "bh"):
        raise ValueError(f"unknown correction {method!r}")
    order = np.argsort(values, kind="mergesort")
    ranked = values[order]
    if method == "holm":
        adjusted = np.maximum.accumulate(ranked * np.arange(m, 0, -1))
    else:
        adjusted = np.minimum.accumulate((ranked * m / np.arange(1, m + 1))[::-1])[::-1]
    result = np.empty(m)
    result[order] = np.minimum(adjusted, 1.0)
    out[tested] = result
    return out


@dataclass(frozen=True)
class Pooled:
    """The Mantel-Haenszel view of one group against the reference across strata.

    ``strata_used`` counts the strata that carry information (both groups present and both
    outcomes present in the stratum); the others cannot change a pooled odds ratio.
    """

    odds_ratio: float | None
    ci_low: float | None
    ci_high: float | None
    cmh_p_value: float | None
    breslow_day_p_value: float | None
    strata_used: int


def _finite(x: Any) -> float | None:
    try:
        value = float(x)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def mantel_haenszel(k1: Any, n1: Any, k2: Any, n2: Any) -> Pooled:
    """Common odds ratio (group 1 vs group 2) over strata, its 95% interval, CMH and Breslow-Day.

    Each stratum is the 2x2 table [[k1, n1 - k1], [k2, n2 - k2]]. The CMH test is without
    continuity correction (statsmodels' default); Breslow-Day uses Tarone's adjustment. Needs at
    least one informative stratum; Breslow-Day needs two.
    """
    k1, n1, k2, n2 = (np.atleast_1d(np.asarray(a, dtype=float)) for a in (k1, n1, k2, n2))
    pos, total = k1 + k2, n1 + n2
    informative = (n1 > 0) & (n2 > 0) & (pos > 0) & (pos < total)
    used = int(informative.sum())
    if used == 0:
        return Pooled(None, None, None, None, None, 0)
    a, b = k1[informative], (n1 - k1)[informative]
    c, d = k2[informative], (n2 - k2)[informative]
    tables = np.array([[a, b], [c, d]])  # shape (2, 2, strata)
    with np.errstate(all="ignore"):
        table = _Stratified(tables)
        odds = _finite(table.oddsratio_pooled)
        try:
            low, high = table.oddsratio_pooled_confint()
        except (ValueError, ZeroDivisionError):
            low, high = math.nan, math.nan
        cmh = _finite(table.test_null_odds_pvalue())
        bd = _finite(table.test_equal_odds_pvalue()) if used >= 2 else None
    return Pooled(odds, _finite(low), _finite(high), cmh, bd, used)


def _chi2_cdf_complement(statistic: Any, df: int) -> Any:
    """``1 - scipy.stats.chi2.cdf(statistic, df)``, as statsmodels writes its p-values.

    scipy's cdf is 0 at or below 0, 1 at infinity, NaN for NaN, else ``scipy.special.chdtr``.
    """
    from scipy.special import chdtr

    x = np.asarray(statistic, dtype=np.promote_types(np.asarray(statistic).dtype, np.float64))
    cdf: Any
    if np.isnan(x):
        cdf = np.float64(np.nan)
    elif x >= np.inf:
        cdf = np.float64(1.0)
    elif x > 0:
        cdf = np.asarray(chdtr(np.asarray(df), x))[()]
    else:
        cdf = np.float64(0.0)
    return 1 - cdf


class _Stratified:
    """statsmodels' ``StratifiedTable`` (2 x 2 x strata), the parts the audit uses, operation for operation."""

    def __init__(self, tables: np.ndarray) -> None:
        table = tables * 1.0
        self.table = table
        self._apb = table[0, 0, :] + table[0, 1, :]
        self._apc = table[0, 0, :] + table[1, 0, :]
        self._bpd = table[0, 1, :] + table[1, 1, :]
        self._cpd = table[1, 0, :] + table[1, 1, :]
        self._ad = table[0, 0, :] * table[1, 1, :]
        self._bc = table[0, 1, :] * table[1, 0, :]
        self._apd = table[0, 0, :] + table[1, 1, :]
        self._dma = table[1, 1, :] - table[0, 0, :]
        self._n = table.sum(0).sum(0)
        self.oddsratio_pooled = np.sum(self._ad / self._n) / np.sum(self._bc / self._n)

    def test_null_odds_pvalue(self) -> Any:
        """Cochran-Mantel-Haenszel without continuity correction (``test_null_odds(correction=False)``)."""
        statistic = np.sum(self.table[0, 0, :] - self._apb * self._apc / self._n)
        statistic = np.abs(statistic)
        statistic = statistic**2
        denom: Any = self._apb * self._apc * self._bpd * self._cpd
        denom /= self._n**2 * (self._n - 1)
        denom = np.sum(denom)
        statistic /= denom
        return _chi2_cdf_complement(statistic, 1)

    def logodds_pooled_se(self) -> Any:
        """Robins-Breslow-Greenland standard error of the pooled log odds ratio."""
        adns = np.sum(self._ad / self._n)
        bcns = np.sum(self._bc / self._n)
        lor_va = np.sum(self._apd * self._ad / self._n**2) / adns**2
        mid = self._apd * self._bc / self._n**2
        mid += (1 - self._apd / self._n) * self._ad / self._n
        mid = np.sum(mid)
        mid /= adns * bcns
        lor_va += mid
        lor_va += np.sum((1 - self._apd / self._n) * self._bc / self._n) / bcns**2
        lor_va /= 2
        return np.sqrt(lor_va)

    def oddsratio_pooled_confint(self, alpha: float = 0.05) -> tuple[Any, Any]:
        from scipy.special import ndtri

        lor = np.log(self.oddsratio_pooled)
        lor_se = self.logodds_pooled_se()
        f = -ndtri(alpha / 2)  # -scipy.stats.norm.ppf(alpha / 2)
        lcb = lor - f * lor_se
        ucb = lor + f * lor_se
        return np.exp(lcb), np.exp(ucb)

    def test_equal_odds_pvalue(self) -> Any:
        """Breslow-Day with Tarone's adjustment (``test_equal_odds(adjust=True)``)."""
        table = self.table
        r = self.oddsratio_pooled
        a = 1 - r
        b = r * (self._apb + self._apc) + self._dma
        c = -r * self._apb * self._apc
        dr = np.sqrt(b**2 - 4 * a * c)
        e11 = (-b + dr) / (2 * a)
        v11 = 1 / e11 + 1 / (self._apc - e11) + 1 / (self._apb - e11) + 1 / (self._dma + e11)
        v11 = 1 / v11
        statistic = np.sum((table[0, 0, :] - e11) ** 2 / v11)
        adj = table[0, 0, :].sum() - e11.sum()
        adj = adj**2
        adj /= np.sum(v11)
        statistic -= adj
        return _chi2_cdf_complement(statistic, table.shape[2] - 1)


def mean_interval(total: Any, total_sq: Any, n: Any, z: float | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Mean, standard deviation and the t-based 95% interval of the mean from sums; NaN where n < 2."""
    from scipy.special import stdtrit

    s, ss, m = (np.asarray(a, dtype=float) for a in (total, total_sq, n))
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = s / m
        var = np.clip((ss - s * s / m) / (m - 1), 0, None)
        sd = np.sqrt(var)
        t = stdtrit(np.maximum(m - 1, 1), 0.975) if z is None else z
        half = t * sd / np.sqrt(m)
    sd = np.where(m >= 2, sd, np.nan)
    low = np.where(m >= 2, mean - half, np.nan)
    high = np.where(m >= 2, mean + half, np.nan)
    return mean, sd, low, high


def standardized_mean_difference(mean1: Any, sd1: Any, n1: Any, mean2: Any, sd2: Any, n2: Any
                                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cohen's d (pooled SD) of group 1 vs group 2 with the usual large-sample 95% interval.

    SE(d) = sqrt((n1 + n2) / (n1 n2) + d^2 / (2 (n1 + n2))) (Hedges and Olkin).
    """
    m1, s1, a, m2, s2, b = (np.asarray(x, dtype=float) for x in (mean1, sd1, n1, mean2, sd2, n2))
    with np.errstate(divide="ignore", invalid="ignore"):
        pooled = np.sqrt(((a - 1) * s1 ** 2 + (b - 1) * s2 ** 2) / (a + b - 2))
        d = (m1 - m2) / pooled
        se = np.sqrt((a + b) / (a * b) + d ** 2 / (2 * (a + b)))
    d = np.where(pooled > 0, d, np.nan)
    return d, d - Z95 * se, d + Z95 * se
