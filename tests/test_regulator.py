"""NYC Local Law 144 tables, EEOC shortfall/flip/two-SD, and the minimum detectable difference.

Independent references: the DCWP final rule's two worked examples (every published table), brute force
over people (shortfall, flip), statsmodels (z test, NormalIndPower) and numpy (the median).
"""

from __future__ import annotations

import itertools
import math
from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from luskin_core import load_sample
from luskin_core.analyses.audit import audit
from luskin_core.analyses.regulator import (
    CROSS,
    eeoc_output,
    eeoc_rows,
    format_ll144,
    ll144_audit,
    ll144_from_counts,
    ll144_table,
)
from luskin_core.analyses.regulator_eeoc import eeoc_part
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.stats.power import (
    detectable_h,
    drop_to_h,
    minimum_detectable_difference,
    power_h,
    rows_needed,
    sufficiency,
    sufficiency_lines,
)
from luskin_core.stats.uniform import flip, shortfall, two_sd_z

# ------------------------------------------------------------------------------------------
# The DCWP worked examples, as published
# ------------------------------------------------------------------------------------------
# NYC Department of Consumer and Worker Protection, Notice of Adoption of Final Rule on automated
# employment decision tools, 6 RCNY §5-301 (adopted April 2023, in force 5 July 2023): the example
# after §5-301(b) (an AEDT that selects: resume screening) and the example after §5-301(d) (an AEDT
# that scores: "culture fit"). Official text: https://codelibrary.amlegal.com/codes/newyorkcity/latest/
# NYCrules/0-0-0-138530 ; the tables below are copied from the full transcription of the rule in
# github.com/DenzilGreenwood/CIAF_Model_Creation, Docs/Regulatory_Bodies/US_State/New_York/
# NYC_Local_Law_144_Final_Rule.md (commit 2306714d), whose scoring race/ethnicity rows also agree with
# the rule text quoted in huggingface.co/datasets/rk68/LL144-giskard-239. Every printed rate and ratio
# follows from the printed counts, which is the check that the copy is faithful.
# Rows: category, # of applicants, # selected, selection rate and impact ratio as printed.
DCWP_SELECTION_SEX = [
    ("Male", 1390, 667, "48%", "1.00"),
    ("Female", 1181, 555, "47%", "0.979"),
]
DCWP_SELECTION_RACE = [
    ("Hispanic or Latino", 408, 204, "50%", "0.97"),
    ("White (Not Hispanic or Latino)", 797, 412, "52%", "1.00"),
    ("Black or African American (Not Hispanic or Latino)", 390, 170, "44%", "0.84"),
    ("Native Hawaiian or Pacific Islander (Not Hispanic or Latino)", 119, 52, "44%", "0.85"),
    ("Asian (Not Hispanic or Latino)", 616, 302, "49%", "0.95"),
    ("Native American or Alaska Native (Not Hispanic or Latino)", 41, 18, "44%", "0.85"),
    ("Two or More Races (Not Hispanic or Latino)", 213, 96, "45%", "0.87"),
]
# Intersectional rows: (ethnicity/race, sex), # of applicants, # selected, rate, ratio as printed.
DCWP_SELECTION_INTERSECTIONAL = [
    (("Hispanic or Latino", "Male"), 205, 90, "43.9%", "0.841"),
    (("Hispanic or Latino", "Female"), 190, 82, "43.2%", "0.827"),
    (("White", "Male"), 412, 215, "52.2%", "1.000"),
    (("Black or African American", "Male"), 226, 95, "42.0%", "0.806"),
    (("Native Hawaiian or Pacific Islander", "Male"), 87, 37, "42.5%", "0.815"),
    (("Asian", "Male"), 321, 167, "52.0%", "0.997"),
    (("Native American or Alaska Native", "Male"), 24, 11, "45.8%", "0.878"),
    (("Two or More Races", "Male"), 115, 52, "45.2%", "0.866"),
    (("White", "Female"), 385, 197, "51.2%", "0.981"),
    (("Black or African American", "Female"), 164, 75, "45.7%", "0.876"),
    (("Native Hawaiian or Pacific Islander", "Female"), 32, 15, "46.9%", "0.898"),
    (("Asian", "Female"), 295, 135, "45.8%", "0.877"),
    (("Native American or Alaska Native", "Female"), 17, 7, "41.2%", "0.789"),
    (("Two or More Races", "Female"), 98, 44, "44.9%", "0.860"),
]
DCWP_SELECTION_UNKNOWN = 250  # "The AEDT was also used to assess 250 individuals with an unknown sex or race/ethnicity"

# The scoring example prints # of applicants, scoring rate and impact ratio (not the number above the median).
DCWP_SCORING_SEX = [("Male", 92, "54.3%", "1.00"), ("Female", 76, "44.7%", "0.82")]
DCWP_SCORING_RACE = [
    ("Hispanic or Latino", 28, "64.2%", "1.00"),
    ("White (Not Hispanic or Latino)", 40, "37.5%", "0.58"),
    ("Black or African American (Not Hispanic or Latino)", 32, "50.0%", "0.78"),
    ("Native Hawaiian or Pacific Islander (Not Hispanic or Latino)", 8, "62.5%", "0.97"),
    ("Asian (Not Hispanic or Latino)", 24, "41.7%", "0.65"),
    ("Native American or Alaska Native (Not Hispanic or Latino)", 16, "62.5%", "0.97"),
    ("Two or More Races (Not Hispanic or Latino)", 20, "50.0%", "0.78"),
]
DCWP_SCORING_INTERSECTIONAL = [
    (("Hispanic or Latino", "Male"), 16, "75%", "1.00"),
    (("Hispanic or Latino", "Female"), 12, "50%", "0.67"),
    (("White", "Male"), 20, "35%", "0.47"),
    (("Black or African American", "Male"), 20, "50%", "0.67"),
    (("Native Hawaiian or Pacific Islander", "Male"), 4, "75%", "1.00"),
    (("Asian", "Male"), 12, "58.3%", "0.78"),
    (("Native American or Alaska Native", "Male"), 8, "62.5%", "0.83"),
    (("Two or More Races", "Male"), 12, "50%", "0.67"),
    (("White", "Female"), 20, "40%", "0.53"),
    (("Black or African American", "Female"), 12, "50%", "0.67"),
    (("Native Hawaiian or Pacific Islander", "Female"), 4, "50%", "0.67"),
    (("Asian", "Female"), 12, "25%", "0.33"),
    (("Native American or Alaska Native", "Female"), 8, "62.5%", "0.83"),
    (("Two or More Races", "Female"), 8, "50%", "0.67"),
]
DCWP_SCORING_UNKNOWN = 15  # "The AEDT was used to assess 15 individuals with an unknown sex or race/ethnicity"
# The one printed figure that is truncated rather than rounded: 18/28 = 64.29% is printed "64.2%".
DCWP_TRUNCATED = {("race_ethnicity", "Hispanic or Latino")}


def _race_name(race: str) -> str:
    """The race/ethnicity table's name for an intersectional row's race (the rule adds '(Not Hispanic or Latino)')."""
    return race if race == "Hispanic or Latino" else f"{race} (Not Hispanic or Latino)"


def _printed(value: float, like: str, *, truncate: bool = False) -> str:
    """``value`` written the way the rule prints a figure like ``like``: a percent or a ratio, same decimals."""
    percent = like.endswith("%")
    digits = like.rstrip("%")
    places = len(digits.split(".")[1]) if "." in digits else 0
    number = Decimal(repr(value * 100 if percent else value))
    text = str(number.quantize(Decimal(1).scaleb(-places), rounding=ROUND_DOWN if truncate else ROUND_HALF_UP))
    return text + ("%" if percent else "")


def _check_printed(kind: str, row, n: int, selected: int, rate: str, ratio: str) -> None:
    assert (row.n, row.selected, row.excluded) == (n, selected, False), (kind, row.category)
    assert row.rate == pytest.approx(selected / n)
    assert _printed(row.rate, rate, truncate=(kind, row.category) in DCWP_TRUNCATED) == rate, (kind, row.category)
    assert _printed(row.impact_ratio, ratio) == ratio, (kind, row.category)


def _scored(n: int, printed_rate: str, truncated: bool = False) -> int:
    """The one whole number of n whose share prints as ``printed_rate`` (the rule prints rates, not counts)."""
    found = [k for k in range(n + 1) if _printed(k / n, printed_rate, truncate=truncated) == printed_rate]
    assert len(found) == 1, (n, printed_rate, found)
    return found[0]


def test_dcwp_selection_example_every_table_as_published():
    """6 RCNY §5-301(b) example: each of the three published tables from its own printed counts."""
    sex = ll144_table("sex", {c: (n, s) for c, n, s, _, _ in DCWP_SELECTION_SEX})
    race = ll144_table("race_ethnicity", {c: (n, s) for c, n, s, _, _ in DCWP_SELECTION_RACE})
    inter = ll144_table("intersectional", {f"{sx}{CROSS}{_race_name(r)}": (n, s)
                                           for (r, sx), n, s, _, _ in DCWP_SELECTION_INTERSECTIONAL})
    for kind, table, published in (("sex", sex, DCWP_SELECTION_SEX), ("race_ethnicity", race, DCWP_SELECTION_RACE)):
        assert len(table.rows) == len(published)
        for (name, n, s, rate, ratio), row in zip(published, table.rows):
            assert row.category == name
            _check_printed(kind, row, n, s, rate, ratio)
    for ((r, sx), n, s, rate, ratio), row in zip(DCWP_SELECTION_INTERSECTIONAL, inter.rows):
        assert row.category == f"{sx}{CROSS}{_race_name(r)}"
        _check_printed("intersectional", row, n, s, rate, ratio)
    assert (sex.leaders[0], race.leaders[0]) == ("Male", "White (Not Hispanic or Latino)")
    assert inter.leaders[0] == f"Male{CROSS}White (Not Hispanic or Latino)"


def _selection_rows() -> pd.DataFrame:
    rows = []
    for (race, sex), n, s, _, _ in DCWP_SELECTION_INTERSECTIONAL:
        rows += [{"sex": sex, "race": _race_name(race), "screened": "interview" if i < s else "no"} for i in range(n)]
    # The 250 individuals of the unknown category: neither characteristic known (someone who gave one belongs to
    # that characteristic's table, as published audits count them), spelled missing or as people answer.
    spellings = [None, "Decline to self-identify", "prefer not to say", "Unknown", "I don't wish to answer"]
    for i in range(DCWP_SELECTION_UNKNOWN):
        rows.append({"sex": spellings[i % 5], "race": spellings[(i // 5) % 5],
                     "screened": "interview" if i % 2 else "no"})
    return pd.DataFrame(rows).sample(frac=1.0, random_state=4).reset_index(drop=True)


def test_dcwp_selection_example_from_individuals():
    """The same example from one row per applicant (the intersections' counts and 250 unknowns).

    The sex and intersectional tables come out exactly as printed, and so does every race/ethnicity
    row but one: the published Hispanic or Latino row (408 applicants, 204 selected) is not the sum of
    the published Hispanic or Latino intersections (205 + 190 = 395 applicants, 90 + 82 = 172 selected),
    while every other race row is. No set of individuals gives all three printed tables, so the
    Hispanic race row is checked from its own counts in the test above.
    """
    spec = AuditSpec.from_dict({"outcome": "screened", "positive": "interview", "group_by": ["race"]})
    result = ll144_audit(_selection_rows(), spec, "sex", "race")
    assert result.unknown_count == DCWP_SELECTION_UNKNOWN
    sex = {r.category: r for r in result.table("sex").rows}
    for name, n, s, rate, ratio in DCWP_SELECTION_SEX:
        _check_printed("sex", sex[name], n, s, rate, ratio)
    inter = {r.category: r for r in result.table("intersectional").rows}
    assert len(inter) == len(DCWP_SELECTION_INTERSECTIONAL)
    for (race, sx), n, s, rate, ratio in DCWP_SELECTION_INTERSECTIONAL:
        _check_printed("intersectional", inter[f"{sx}{CROSS}{_race_name(race)}"], n, s, rate, ratio)
    races = {r.category: r for r in result.table("race_ethnicity").rows}
    for name, n, s, rate, ratio in DCWP_SELECTION_RACE:
        if name == "Hispanic or Latino":
            margin = [(n2, s2) for (r, _), n2, s2, _, _ in DCWP_SELECTION_INTERSECTIONAL if r == name]
            assert (sum(m[0] for m in margin), sum(m[1] for m in margin)) == (395, 172) != (n, s)
            assert (races[name].n, races[name].selected) == (395, 172)
            continue
        _check_printed("race_ethnicity", races[name], n, s, rate, ratio)
    document = result.to_dict()
    assert document["unknown_count"] == 250 and document["n_assessed"] == 2571 + 250
    assert [t["unknown_count"] for t in document["tables"]] == [250, 250, 250]
    assert {v["value"] for v in document["unknown_values"]} == {"Unknown", "Decline to self-identify",
                                                              "prefer not to say", "I don't wish to answer"}
    text = format_ll144(result)
    assert ("unknown category (missing sex or race/ethnicity, not included in the intersectional table): 250"
            in text)


def _scoring_rows() -> pd.DataFrame:
    """One row per applicant with a culture-fit score: those the rule counts as above the median score
    clearly above it, the rest tied at the median itself (so 'at or above' would count everyone)."""
    rng = np.random.default_rng(11)
    rows = []
    for (race, sex), n, rate, _ in DCWP_SCORING_INTERSECTIONAL:
        k = _scored(n, rate)
        rows += [{"sex": sex, "race": _race_name(race), "culture_fit": float(rng.integers(51, 100)) if i < k else 50.0}
                 for i in range(n)]
    above = sum(_scored(n, rate) for _, n, rate, _ in DCWP_SCORING_INTERSECTIONAL)
    assert (above, len(rows)) == (84, 168)
    # The 15 unknowns: 7 above, 8 at the median, so the median of all 183 scores is the tied 50.
    for i in range(DCWP_SCORING_UNKNOWN):
        rows.append({"sex": None if i % 2 else "Not disclosed", "race": None,
                     "culture_fit": float(rng.integers(51, 100)) if i < 7 else 50.0})
    return pd.DataFrame(rows).sample(frac=1.0, random_state=5).reset_index(drop=True)


def test_dcwp_scoring_example_from_individuals():
    """6 RCNY §5-301(d) example ("culture fit" scores): all three published tables, from one row per applicant.

    The rule prints rates, not counts; each count is the only whole number that prints as the rate.
    """
    frame = _scoring_rows()
    spec = AuditSpec.from_dict({"outcome": "culture_fit", "outcome_type": "score", "group_by": ["sex"]})
    result = ll144_audit(frame, spec, "sex", "race")
    assert result.scoring and result.median == 50.0 == float(np.median(frame["culture_fit"]))
    assert result.unknown_count == DCWP_SCORING_UNKNOWN
    tables = {t.kind: {r.category: r for r in t.rows} for t in result.tables}
    published = {
        "sex": [(name, n, rate, ratio) for name, n, rate, ratio in DCWP_SCORING_SEX],
        "race_ethnicity": [(name, n, rate, ratio) for name, n, rate, ratio in DCWP_SCORING_RACE],
        "intersectional": [(f"{sx}{CROSS}{_race_name(r)}", n, rate, ratio)
                           for (r, sx), n, rate, ratio in DCWP_SCORING_INTERSECTIONAL],
    }
    for kind, rows in published.items():
        assert len(tables[kind]) == len(rows)
        for name, n, rate, ratio in rows:
            k = _scored(n, rate, truncated=(kind, name) in DCWP_TRUNCATED)
            _check_printed(kind, tables[kind][name], n, k, rate, ratio)
    # The scoring rate is not "at or above the median": with the ties, that would be 100% everywhere.
    known = frame.dropna(subset=["sex", "race"])["culture_fit"]
    assert (int((known >= result.median).sum()), sum(r.selected for r in tables["sex"].values())) == (168, 84)
    assert result.to_frame().columns[3] == "scored_above_median"


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
    rows = eeoc_rows(result.counts, result.judgement)
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
    row = eeoc_part(audit(frame, small)).rows[0]
    assert row.below_four_fifths and not row.significant and "could be chance" in row.sentence
    big = pd.DataFrame({"g": ["a"] * 20000 + ["b"] * 20000,
                        "y": [1] * 10000 + [0] * 10000 + [1] * 9000 + [0] * 11000})
    row = eeoc_part(audit(big, small)).rows[0]
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
    sentence = next(d for d in result.to_dict()["comparisons"] if d["group"] == "a")["power_sentence"]
    assert f"gaps under {round(100 * mdd)} points could not be detected" in sentence
    assert "absence of evidence, not evidence of fairness" in sentence
    items = sufficiency(result.comparisons, result.judgement)
    assert len(items) == 1 and not items[0].sufficient
    assert items[0].rows_needed == rows_needed(0.05, 2000, 0.5)
    lines = sufficiency_lines(items)
    assert lines[0].startswith("Data sufficiency: 1 of 1") and f"{items[0].rows_needed:,}" in lines[1]


def test_report_has_the_ll144_summary_the_eeoc_table_and_sufficiency():
    from luskin_core.present.report import build_html_report

    frame = pd.DataFrame({"sex": ["F", "M"] * 300, "race": ["<b>A</b>"] * 400 + ["B"] * 200,
                          "y": [1, 0, 1, 1] * 150})
    spec = AuditSpec.from_dict({"outcome": "y", "positive": 1, "group_by": ["sex"]})
    ll144 = ll144_audit(frame, spec, "sex", "race")
    result = audit(frame, spec)
    html = build_html_report([result, ll144, eeoc_output(result)], dataset="sample:test")
    assert "NYC Local Law 144 bias audit: summary of results" in html
    assert "Intersectional (sex × race/ethnicity) categories" in html and "# of applicants" in html
    assert "EEOC Uniform Guidelines" in html and "Shortfall to 4/5" in html
    assert "What the data could show" in html
    assert "<b>A</b>" not in html and "&lt;b&gt;A&lt;/b&gt;" in html
    plain = build_html_report([result])
    assert "Local Law 144" not in plain
    small = audit(pd.DataFrame({"g": ["a"] * 42 + ["b"] * 2000, "y": [1] * 20 + [0] * 22 + [1] * 1000 + [0] * 1000}),
                  AuditSpec.from_dict({"outcome": "y", "positive": 1, "group_by": ["g"]}))
    assert "absence of evidence, not evidence of fairness" in build_html_report([small])


# ------------------------------------------------------------------------------------------
# Local Law 144 from person rows as published: each table from the rows that know it
# ------------------------------------------------------------------------------------------
def _people() -> pd.DataFrame:
    """Rows whose sex or race/ethnicity is unknown in the ways people answer, and rows with no outcome."""
    rng = np.random.default_rng(28)
    n = 900
    sex = rng.choice(["Female", "Male", "Prefer not to say", None], n, p=[0.45, 0.45, 0.06, 0.04])
    race = rng.choice(["White", "Black", "Asian", "Decline to Self-Identify", "I don’t wish to answer", "Elf"], n,
                      p=[0.4, 0.3, 0.2, 0.04, 0.03, 0.03])
    hired = rng.choice(["yes", "no", None], n, p=[0.4, 0.55, 0.05])
    return pd.DataFrame({"sex": sex, "race": race, "hired": hired})


def test_each_table_is_built_from_the_rows_that_know_its_characteristic():
    frame = _people()
    spec = AuditSpec.from_dict({"outcome": "hired", "positive": "yes", "group_by": ["race"]})
    result = ll144_audit(frame, spec, "sex", "race", unknown=("elf",))
    assessed = frame[frame["hired"].notna()]
    unknown_sex = assessed["sex"].isna() | (assessed["sex"] == "Prefer not to say")
    unknown_race = assessed["race"].isin(["Decline to Self-Identify", "I don’t wish to answer", "Elf"])
    assert result.no_outcome_count == int(frame["hired"].isna().sum()) > 0
    assert result.assessed == len(assessed)
    for kind, unknown, column in (("sex", unknown_sex, "sex"), ("race_ethnicity", unknown_race, "race")):
        table = result.table(kind)
        assert table.unknown_count == int(unknown.sum())
        assert table.unknown_selected == int((assessed.loc[unknown, "hired"] == "yes").sum())
        expected = assessed[~unknown].groupby(column)["hired"].agg(n="size", s=lambda v: int((v == "yes").sum()))
        assert {r.category: (r.n, r.selected) for r in table.rows} == \
            {k: (int(v.n), int(v.s)) for k, v in expected.iterrows()}
    inter = result.table("intersectional")
    assert inter.unknown_count == int((unknown_sex | unknown_race).sum()) == result.unknown_count
    assert sum(r.n for r in inter.rows) == int((~(unknown_sex | unknown_race)).sum())
    words = " ".join(result.sentences())
    assert "'Prefer not to say'" in words and "'Elf'" in words and "with no outcome" in words
    assert "Elf" not in {r.category for r in result.table("race_ethnicity").rows}


def test_unknown_spellings_never_become_the_reference():
    """'Decline to self-identify' selected at 90% would be the most selected category if audited as one."""
    counts = {("F", "A"): (100, 40), ("M", "A"): (100, 42), ("F", "Decline to self-identify"): (10, 9),
              ("M", "B"): (100, 41)}
    from luskin_core.analyses.regulator import ll144_from_cells

    result = ll144_from_cells(counts)
    race = result.table("race_ethnicity")
    assert [r.category for r in race.rows] == ["A", "B"] and race.unknown_count == 10
    assert race.leaders[0] == "A" and race.rows[1].impact_ratio == pytest.approx(0.41 / 0.41)


def test_ties_all_named_nobody_selected_and_all_under_two_percent():
    tied = ll144_table("sex", {"F": (10, 5), "M": (20, 10), "X": (10, 2)})
    assert tied.leaders == ("F", "M")
    from luskin_core.analyses.regulator_ll144 import _table_sentence

    assert "2 categories are tied for the highest selection rate: F and M" in _table_sentence(tied, "selection rate")
    nobody = ll144_table("sex", {"F": (10, 0), "M": (20, 0)})
    text = _table_sentence(nobody, "selection rate")
    assert "nobody was selected, so no impact ratio can be computed" in text and "at least 0.80" not in text
    assert all(r.impact_ratio is None for r in nobody.rows)
    small = ll144_table("race_ethnicity", {f"c{i}": (1, 1) for i in range(60)}, exclude_small=True)
    assert all(r.excluded for r in small.rows)
    assert "every category is under 2% of the table's 60 known individuals, so no impact ratio was computed" in \
        _table_sentence(small, "selection rate")
    from luskin_core.analyses.regulator import EXCLUSION_JUSTIFICATION

    assert "known individuals" in EXCLUSION_JUSTIFICATION


def test_single_sex_pool_still_gets_its_race_table_and_everybody_unknown_is_said():
    frame = pd.DataFrame({"sex": ["Female"] * 8, "race": ["A", "A", "B", "B", "B", "A", None, "A"],
                          "y": [1, 1, 0, 1, 0, 1, 1, 0]})
    spec = AuditSpec.from_dict({"outcome": "y", "positive": 1, "group_by": ["race"]})
    result = ll144_audit(frame, spec, "sex", "race")
    race = result.table("race_ethnicity")
    assert race.reason is None and {r.category: r.selected for r in race.rows} == {"A": 3, "B": 1}
    assert "every individual with a known sex is Female" in result.table("sex").reason
    assert result.table("intersectional").reason and not result.table("intersectional").rows
    unknown = frame.assign(sex="Prefer not to say", race=None)
    from luskin_core.errors import LuskinError

    with pytest.raises(LuskinError, match="Every one of the 8 individuals has an unknown sex and race/ethnicity"):
        ll144_audit(unknown, spec, "sex", "race")


@pytest.mark.parametrize("counts,unknown,words", [
    ({"F": (10, 11), "M": (10, 2)}, 0, "more selected than assessed"),
    ({"F": (-1, 0), "M": (10, 2)}, 0, "cannot be negative"),
    ({"F": (10, 2.5), "M": (10, 2)}, 0, "whole numbers"),
    ({"F": (10, 2), "M": (10, 2)}, -3, "cannot be negative"),
])
def test_count_api_refuses_impossible_counts(counts, unknown, words):
    from luskin_core.errors import LuskinError

    with pytest.raises(LuskinError, match=words):
        ll144_table("sex", counts, unknown_count=unknown)
    with pytest.raises(LuskinError, match=words):
        ll144_from_counts({(k, "A"): v for k, v in counts.items()}, unknown)


def test_adverse_outcome_counts_the_favourable_decision_in_both_tables():
    """A loan default: the groups that default least are the most selected, and EEOC's four-fifths agrees."""
    frame = pd.DataFrame({"sex": ["F"] * 100 + ["M"] * 100, "race": (["A"] * 50 + ["B"] * 50) * 2,
                          "default": [1] * 10 + [0] * 90 + [1] * 40 + [0] * 60})
    spec = AuditSpec.from_dict({"outcome": "default", "positive": 1, "group_by": ["sex"], "outcome_is": "adverse"})
    result = ll144_audit(frame, spec, "sex", "race")
    sex = {r.category: r for r in result.table("sex").rows}
    assert (sex["F"].selected, sex["M"].selected) == (90, 60)  # not defaulted
    assert result.table("sex").leaders[0] == "F" and sex["M"].impact_ratio == pytest.approx(60 / 90)
    assert "favourable" in result.selected_means and result.to_dict()["outcome_is"] == "adverse"
    rows = eeoc_part(audit(frame, spec)).rows
    (m,) = rows
    assert (m.group, m.reference, m.selected, m.reference_selected) == ("M", "F", 60, 90)
    assert m.below_four_fifths is True and "below four-fifths" in m.sentence
    assert m.shortfall_four_fifths == _brute_shortfall(60, 100, 90, 100, Fraction(4, 5)) == 12
    assert "favourable decisions would reach four-fifths" in m.sentence
    # the favourable reading equals auditing "no default" as a favourable outcome
    flipped = AuditSpec.from_dict({"outcome": "default", "positive": 0, "group_by": ["sex"]})
    plain = eeoc_part(audit(frame, flipped)).rows
    assert [(r.selected, r.below_four_fifths, r.shortfall_four_fifths, r.z) for r in plain] == \
        [(r.selected, r.below_four_fifths, r.shortfall_four_fifths, r.z) for r in rows]
    same = ll144_audit(frame, flipped, "sex", "race")
    assert [t.to_dict()["rows"] for t in same.tables] == [t.to_dict()["rows"] for t in result.tables]


def test_columns_are_guessed_only_from_what_the_data_support():
    from luskin_core.analyses.regulator import guess_ll144_columns

    credit = pd.DataFrame({"LIMIT_BAL": [20000, 50000, 90000] * 10, "SEX": [1, 2, 2] * 10,
                           "EDUCATION": [1, 2, 3] * 10, "default": [0, 1, 0] * 10})
    assert guess_ll144_columns(credit, skip=("default",)) == ("SEX", None)
    coded = pd.DataFrame({"who": ["Female", "Male", "female"] * 5, "grp": ["White", "Black or African American",
                                                                            "Asian"] * 5, "amount": range(15)})
    assert guess_ll144_columns(coded) == ("who", "grp")
    spec = AuditSpec.from_dict({"outcome": "default", "positive": 1, "group_by": ["SEX"]})
    result = ll144_audit(credit, spec, "SEX", None)
    assert result.table("race_ethnicity").reason.startswith("the data has no race/ethnicity column")
    assert len(result.table("sex").rows) == 2 and result.table("sex").reason is None


def test_ll144_csv_neutralises_formula_cells():
    frame = pd.DataFrame({"sex": ["=HYPERLINK(\"http://x\")", "M"] * 20, "race": ["+A", "@B", "-C", "D"] * 10,
                          "y": [1, 0, 0, 1, 1] * 8})
    spec = AuditSpec.from_dict({"outcome": "y", "positive": 1, "group_by": ["race"]})
    text = ll144_audit(frame, spec, "sex", "race").to_csv()
    written = pd.read_csv(__import__("io").StringIO(text))
    assert not written["category"].astype(str).str.match(r"^[=+\-@]").any()
    assert "'=HYPERLINK(\"http://x\")" in set(written["category"])


def test_a_user_named_unknown_code_is_counted_with_the_missing_values_beside_the_tables():
    """A code the user named 'Prefer not to say' (value_names) is unknown in the tables and, through its name, in the
    sufficiency comparisons beside them."""
    from luskin_core.analyses.regulator_ll144 import build_ll144
    from luskin_core.analyses.regulator_tables import RegulatorChoices

    frame = pd.DataFrame({"sex": [1, 2, 9, 1, 2, 9, 1, 2] * 10, "race": ["A", "B"] * 40, "y": [1, 0, 1, 1, 0] * 16})
    spec = AuditSpec.from_dict({"outcome": "y", "positive": 1, "group_by": ["sex"],
                                "value_names": {"sex": {"1": "Female", "2": "Male", "9": "Prefer not to say"}}})
    output = build_ll144(frame, spec, RegulatorChoices(sex="sex", race="race"))
    assert output.result.table("sex").unknown_count == int((frame["sex"] == 9).sum())
    groups = {c.group: c.n for c in output.audit.comparisons}
    assert not any("Prefer" in g for g in groups)
    assert groups["Unknown × A"] + groups.get("Unknown × B", 0) == int((frame["sex"] == 9).sum())
    assert groups["Female × A"] == int(((frame["sex"] == 1) & (frame["race"] == "A")).sum())


def test_the_heading_names_the_size_rule_when_a_smaller_group_has_a_higher_rate():
    """SQF 2014 in Brooklyn: 23 American Indian people spared a frisk at 56.5%, the White reference (1,274 rows) at
    43.4%. The reference is the highest rate among groups large enough to judge; a heading calling it "the highest
    rate" beside a higher one would contradict its own table, in the text, the report and the CSV."""
    def rows(counts: dict[str, tuple[int, int]], stratum: str) -> pd.DataFrame:
        return pd.DataFrame([(g, stratum, int(i < k)) for g, (n, k) in counts.items() for i in range(n)],
                            columns=["race", "city", "spared"])

    frame = pd.concat([rows({"I": (23, 13), "W": (1274, 553), "B": (400, 115)}, "Brooklyn"),
                       rows({"I": (40, 10), "W": (300, 150), "B": (300, 100)}, "Queens")], ignore_index=True)
    spec = AuditSpec("spared", 1, group_by=("race",), strata=("city",))
    output = eeoc_output(audit(frame, spec))
    (part,) = output.parts
    small = next(r for r in part.rows if r.group == "I" and r.cell == "city = Brooklyn")
    assert small.reference == "W" and small.rate > small.reference_rate       # compared with, not the reference
    heading = output.tables()[0].title
    assert "among groups of at least 30 rows" in heading and "among groups of at least 30 rows" in output.text()
    # where the reference is the highest rate of every stratum, the heading says just that
    plain = eeoc_output(audit(frame[frame["race"] != "I"], spec))
    assert "highest rate of its own stratum" in plain.tables()[0].title and "among" not in plain.tables()[0].title
