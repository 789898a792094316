"""NYC Local Law 144 tables, EEOC shortfall/flip/two-SD, and the minimum detectable difference.

Independent references: the DCWP final rule's worked example (published numbers), brute force
over people (shortfall, flip), statsmodels (z test, NormalIndPower) and numpy (the median).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from luskin_core import load_sample
from luskin_core.audit import audit
from luskin_core.power import (
    detectable_h,
    drop_to_h,
    minimum_detectable_difference,
    power_h,
    rows_needed,
    sufficiency,
    sufficiency_lines,
)
from luskin_core.regulator import (
    eeoc_rows,
    flip,
    ll144_audit,
    ll144_from_counts,
    ll144_table,
    shortfall,
    two_sd_z,
)
from luskin_core.spec import AuditSpec

# DCWP, Notice of Adoption of Final Rule (6 RCNY §5-301(b), example), race/ethnicity table, page 6:
# category, # of applicants, # selected, selection rate (as printed), impact ratio (as printed).
# These are the rows of the published table retrieved for this test (White is the table's most
# selected category, so the impact ratios of these rows do not depend on the rows not listed).
DCWP_RACE_ROWS = [
    ("Hispanic or Latino", 408, 204, "50%", "0.97"),
    ("White (Not Hispanic or Latino)", 797, 412, "52%", "1.00"),
    ("Black or African American (Not Hispanic or Latino)", 390, 170, "44%", "0.84"),
]


def _published(rows):
    return {name: (n, s) for name, n, s, _, _ in rows}


def test_dcwp_worked_example_selection_rates_and_impact_ratios():
    table = ll144_table("race_ethnicity", _published(DCWP_RACE_ROWS))
    for (name, n, s, rate, ratio), row in zip(DCWP_RACE_ROWS, table.rows):
        assert (row.category, row.n, row.selected) == (name, n, s)
        assert f"{round(100 * row.rate)}%" == rate
        assert f"{row.impact_ratio:.2f}" == ratio
        assert not row.excluded
    assert table.most_selected == "White (Not Hispanic or Latino)"


def test_dcwp_example_from_rows_of_data_with_unknowns():
    """The same published numbers from individual rows, with a sex column and an unknown category."""
    rows = []
    for i, (name, n, s, _, _) in enumerate(DCWP_RACE_ROWS):
        for j in range(n):
            rows.append({"race": name, "sex": "Male" if j % 2 else "Female", "hired": "yes" if j < s else "no"})
    rows += [{"race": None, "sex": "Female", "hired": "yes"}] * 7 + [{"race": "Hispanic or Latino", "sex": None,
                                                                       "hired": "no"}] * 5
    frame = pd.DataFrame(rows)
    spec = AuditSpec.from_dict({"outcome": "hired", "positive": "yes", "group_by": ["race"]})
    result = ll144_audit(frame, spec, "sex", "race")
    assert result.unknown_count == 12
    race = {r.category: r for r in result.table("race_ethnicity").rows}
    assert len(race) == 3
    for name, n, s, rate, ratio in DCWP_RACE_ROWS:
        row = race[name]
        assert (row.n, row.selected) == (n, s)
        assert f"{round(100 * row.rate)}%" == rate and f"{row.impact_ratio:.2f}" == ratio
    # Sex is the margin of the intersections; every table counts each known person once.
    totals = {t.kind: sum(r.n for r in t.rows) for t in result.tables}
    assert totals == {"sex": 1595, "race_ethnicity": 1595, "intersectional": 1595}
    inter = {r.category for r in result.table("intersectional").rows}
    assert "Female × Hispanic or Latino" in inter and len(inter) == 6
    document = result.to_dict()
    assert document["unknown_count"] == 12
    assert [t["kind"] for t in document["tables"]] == ["sex", "race_ethnicity", "intersectional"]
    assert set(document["tables"][0]["rows"][0]) == {"category", "n", "selected", "rate", "impact_ratio", "excluded"}
    csv = result.to_csv().splitlines()
    assert csv[0] == "table,category,n,selected,selection_rate,impact_ratio,excluded" and len(csv) == 1 + 2 + 3 + 6


def test_small_category_excluded_from_impact_ratios_but_reported():
    counts = {("F", "A"): (500, 200), ("M", "A"): (480, 150), ("F", "B"): (10, 9), ("M", "B"): (5, 1)}
    plain = ll144_from_counts(counts)
    race = {r.category: r for r in plain.table("race_ethnicity").rows}
    assert race["B"].impact_ratio == pytest.approx(1.0)  # 10/15 beats A's 350/980 without the rule
    kept = ll144_from_counts(counts, exclude_small=True)
    race = {r.category: r for r in kept.table("race_ethnicity").rows}
    assert race["B"].excluded and race["B"].impact_ratio is None
    assert (race["B"].n, race["B"].selected, race["B"].rate) == (15, 10, pytest.approx(10 / 15))
    assert race["A"].impact_ratio == pytest.approx(1.0)
    inter = {r.category: r for r in kept.table("intersectional").rows}
    assert inter["F × B"].excluded and inter["M × B"].excluded  # 10/995 and 5/995 are under 2%
    assert inter["M × A"].impact_ratio == pytest.approx((150 / 480) / (200 / 500))
    assert kept.justification and "2%" in kept.justification
    assert plain.justification is None


def test_scoring_rate_is_strictly_above_the_median_of_the_whole_sample():
    """With ties at the median, 'strictly above' and 'at or above' differ; the rule's is the first."""
    rng = np.random.default_rng(7)
    n = 3000
    frame = pd.DataFrame({"score": rng.integers(0, 10, n).astype(float),
                          "sex": rng.choice(["F", "M"], n),
                          "race": rng.choice(["A", "B", "C", None], n, p=[0.5, 0.3, 0.15, 0.05])})
    spec = AuditSpec.from_dict({"outcome": "score", "outcome_type": "score", "group_by": ["sex"]})
    result = ll144_audit(frame, spec, "sex", "race")
    median = float(np.median(frame["score"]))  # the whole sample, unknown race included
    assert result.scoring and result.median == median
    known = frame.dropna(subset=["race"])
    for row in result.table("intersectional").rows:
        sex, race = row.category.split(" × ")
        part = known[(known.sex == sex) & (known.race == race)]["score"]
        assert (row.n, row.selected) == (len(part), int((part > median).sum()))
        assert row.selected < int((part >= median).sum())  # ties at the median are not counted
    assert result.unknown_count == int(frame["race"].isna().sum())
    assert result.to_frame().columns[3] == "scored_above_median"


def test_ll144_on_compas_matches_pandas_crosstab():
    df = load_sample("compas")
    spec = AuditSpec.from_dict({"outcome": "two_year_recid", "positive": 0, "group_by": ["race"]})
    result = ll144_audit(df, spec, "sex", "race")
    expected = df.assign(ok=df["two_year_recid"] == 0).groupby("race")["ok"].agg(["size", "sum", "mean"])
    best = expected["mean"].max()
    for row in result.table("race_ethnicity").rows:
        assert row.n == expected.loc[row.category, "size"] and row.selected == expected.loc[row.category, "sum"]
        assert row.impact_ratio == pytest.approx(expected.loc[row.category, "mean"] / best)


# ------------------------------------------------------------------------------------------
# EEOC: shortfall and flip against brute force
# ------------------------------------------------------------------------------------------
def _below(k, n, rk, rn):
    if n == 0 or rn == 0 or rk == 0:
        return None
    return Fraction(k, n) / Fraction(rk, rn) < Fraction(4, 5)


def _brute_shortfall(k, n, rk, rn, target):
    s = 0
    while Fraction(k + s, n) < target * Fraction(rk, rn):
        s += 1
    return s


def _brute_flip(k, n, rk, rn):
    """Toggle every set of one or two individual people and see whether the verdict changes."""
    people = [("g", i < k) for i in range(n)] + [("r", i < rk) for i in range(rn)]
    now = _below(k, n, rk, rn)
    for size in (1, 2):
        for chosen in itertools.combinations(range(len(people)), size):
            gk, rkk = k, rk
            for i in chosen:
                side, selected = people[i]
                delta = -1 if selected else 1
                if side == "g":
                    gk += delta
                else:
                    rkk += delta
            after = _below(gk, n, rkk, rn)
            if after is not None and after != now:
                return True
    return False


@pytest.mark.parametrize("n,rn", [(3, 5), (8, 8), (10, 4), (12, 9)])
def test_shortfall_and_flip_against_brute_force(n, rn):
    for k in range(n + 1):
        for rk in range(rn + 1):
            if rk > 0:
                assert shortfall(k, n, rk, rn) == _brute_shortfall(k, n, rk, rn, Fraction(4, 5))
                assert shortfall(k, n, rk, rn, (1, 1)) == _brute_shortfall(k, n, rk, rn, Fraction(1))
            else:
                assert shortfall(k, n, rk, rn) == 0
            expected = None if _below(k, n, rk, rn) is None else _brute_flip(k, n, rk, rn)
            assert flip(k, n, rk, rn) == expected, (k, n, rk, rn)


def test_shortfall_on_large_counts_matches_brute_force():
    rng = np.random.default_rng(3)
    for _ in range(200):
        n, rn = int(rng.integers(1, 3000)), int(rng.integers(1, 3000))
        k, rk = int(rng.integers(0, n + 1)), int(rng.integers(1, rn + 1))
        assert shortfall(k, n, rk, rn) == _brute_shortfall(k, n, rk, rn, Fraction(4, 5))
        assert shortfall(k, n, rk, rn, (1, 1)) == _brute_shortfall(k, n, rk, rn, Fraction(1))


def test_two_standard_deviations_is_statsmodels_pooled_z():
    from statsmodels.stats.proportion import proportions_ztest

    for k, n, rk, rn in [(30, 100, 50, 100), (5, 40, 300, 1000), (120, 400, 90, 250)]:
        z, _ = proportions_ztest([k, rk], [n, rn])
        assert two_sd_z(k, n, rk, rn) == pytest.approx(z, rel=1e-12)


def test_comparisons_carry_the_new_fields_and_eeoc_words():
    df = load_sample("adult")
    spec = AuditSpec.from_dict({"outcome": "income", "positive": ">50K", "group_by": ["race"]})
    result = audit(df, spec)
    for c, d in zip(result.comparisons, result.to_dict()["comparisons"]):
        for key in ("shortfall_four_fifths", "shortfall_parity", "flip", "minimum_detectable_difference"):
            assert key in d
        if not c.is_reference:
            assert d["shortfall_four_fifths"] == _brute_shortfall(c.positives, c.n, c.reference_positives,
                                                                  c.reference_n, Fraction(4, 5))
    rows = eeoc_rows(result.comparisons)
    assert len(rows) == len(result.judged)
    for r in rows:
        if r.below_four_fifths and not r.significant:
            assert "disagree" in r.sentence and "could be chance" in r.sentence
        if r.below_four_fifths is False and r.significant:
            assert "disagree" in r.sentence
        if r.below_four_fifths and r.significant:
            assert "adverse impact" in r.sentence


def test_disagreement_words_for_small_and_large_samples():
    small = AuditSpec.from_dict({"outcome": "y", "positive": 1, "group_by": ["g"], "min_group_size": 1})
    frame = pd.DataFrame({"g": ["a"] * 10 + ["b"] * 10, "y": [1] * 6 + [0] * 4 + [1] * 4 + [0] * 6})
    row = eeoc_rows(audit(frame, small).comparisons)[0]
    assert row.below_four_fifths and not row.significant and "could be chance" in row.sentence
    big = pd.DataFrame({"g": ["a"] * 20000 + ["b"] * 20000,
                        "y": [1] * 10000 + [0] * 10000 + [1] * 9000 + [0] * 11000})
    row = eeoc_rows(audit(big, small).comparisons)[0]
    assert row.below_four_fifths is False and row.significant and "can be real" in row.sentence


# ------------------------------------------------------------------------------------------
# Power
# ------------------------------------------------------------------------------------------
def test_minimum_detectable_difference_matches_statsmodels_on_adult():
    from statsmodels.stats.power import NormalIndPower

    df = load_sample("adult")
    spec = AuditSpec.from_dict({"outcome": "income", "positive": ">50K", "group_by": ["race", "sex"]})
    result = audit(df, spec)
    checked = 0
    for c, d in zip(result.comparisons, result.to_dict()["comparisons"]):
        if c.is_reference:
            continue
        h = NormalIndPower().solve_power(effect_size=None, nobs1=c.n, ratio=c.reference_n / c.n, alpha=0.05,
                                         power=0.8, alternative="two-sided")
        p = c.reference_rate
        lower = math.sin(math.asin(math.sqrt(p)) - h / 2) ** 2 if math.asin(math.sqrt(p)) >= h / 2 else None
        expected = None if lower is None else p - lower
        if expected is None:
            assert d["minimum_detectable_difference"] is None
        else:
            assert d["minimum_detectable_difference"] == pytest.approx(expected, abs=5e-4)
            assert round(d["minimum_detectable_difference"], 3) == round(expected, 3)
            # statsmodels' power at the detectable difference is 80%
            h2 = float(drop_to_h(d["minimum_detectable_difference"], p))
            assert NormalIndPower().power(h2, nobs1=c.n, ratio=c.reference_n / c.n, alpha=0.05) == \
                pytest.approx(0.8, abs=1e-6)
            checked += 1
    assert checked >= 5


def test_rows_needed_is_the_smallest_with_80_percent_power():
    from statsmodels.stats.power import NormalIndPower

    for drop, ref_n, p in [(0.05, 5000, 0.5), (0.1, 800, 0.3), (0.03, 40000, 0.12)]:
        n = rows_needed(drop, ref_n, p)
        h = float(drop_to_h(drop, p))
        assert NormalIndPower().power(h, nobs1=n, ratio=ref_n / n, alpha=0.05) >= 0.8
        assert NormalIndPower().power(h, nobs1=n - 1, ratio=ref_n / (n - 1), alpha=0.05) < 0.8
    assert rows_needed(0.05, 500, 0.5) is None  # 500 reference rows cannot see 5 points however big the group
    assert float(power_h(detectable_h(42, 500), 42, 500)) == pytest.approx(0.8, abs=1e-9)


def test_absence_of_evidence_sentence_and_sufficiency_summary():
    frame = pd.DataFrame({"g": ["a"] * 42 + ["b"] * 2000,
                          "y": [1] * 20 + [0] * 22 + [1] * 1000 + [0] * 1000})
    spec = AuditSpec.from_dict({"outcome": "y", "positive": 1, "group_by": ["g"], "tolerance": 0.05,
                                "min_group_size": 30})
    result = audit(frame, spec)
    c = result.comparison("a")
    assert c.verdict == "within tolerance"
    mdd = float(minimum_detectable_difference(42, 2000, 0.5))
    sentence = c.to_dict()["power_sentence"]
    assert f"gaps under {round(100 * mdd)} points could not be detected" in sentence
    assert "absence of evidence, not evidence of fairness" in sentence
    items = sufficiency(result.comparisons, spec)
    assert len(items) == 1 and not items[0].sufficient
    assert items[0].rows_needed == rows_needed(0.05, 2000, 0.5)
    lines = sufficiency_lines(items)
    assert lines[0].startswith("Data sufficiency: 1 of 1") and f"{items[0].rows_needed:,}" in lines[1]


def test_report_has_the_ll144_summary_the_eeoc_table_and_sufficiency():
    from luskin_core.report import build_html_report

    frame = pd.DataFrame({"sex": ["F", "M"] * 300, "race": ["<b>A</b>"] * 400 + ["B"] * 200,
                          "y": [1, 0, 1, 1] * 150})
    spec = AuditSpec.from_dict({"outcome": "y", "positive": 1, "group_by": ["sex"]})
    ll144 = ll144_audit(frame, spec, "sex", "race")
    result = audit(frame, spec)
    html = build_html_report(result, ll144=ll144, eeoc=True, dataset="sample:test")
    assert "NYC Local Law 144 bias audit: summary of results" in html
    assert "Intersectional (sex × race/ethnicity) categories" in html and "# of applicants" in html
    assert "EEOC Uniform Guidelines" in html and "Shortfall to 4/5" in html
    assert "What the data could show" in html
    assert "<b>A</b>" not in html and "&lt;b&gt;A&lt;/b&gt;" in html
    plain = build_html_report(result)
    assert "Local Law 144" not in plain
    small = audit(pd.DataFrame({"g": ["a"] * 42 + ["b"] * 2000, "y": [1] * 20 + [0] * 22 + [1] * 1000 + [0] * 1000}),
                  AuditSpec.from_dict({"outcome": "y", "positive": 1, "group_by": ["g"]}))
    assert "absence of evidence, not evidence of fairness" in build_html_report(small)
