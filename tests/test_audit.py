"""The controlled-fairness audit against plain pandas on the real samples, and its edge cases."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from luskin_core import AuditSpec, LuskinError, audit, audit_arrays
from luskin_core.counting.data import PRESETS


def _plain_counts(frame, outcome, positive, group_mask, filter_mask):
    """The same counts written the obvious way with pandas."""
    out = {}
    for fh in (True, False):
        for g in (True, False):
            rows = frame[(filter_mask == fh) & (group_mask == g)]
            out[(fh, g)] = (len(rows), int((rows[outcome] == positive).sum()))
    return out


def test_adult_counts_match_pandas(adult):
    result = audit(adult, PRESETS["adult"].spec)
    plain = _plain_counts(adult, "income", ">50K", adult["race"] == "White", adult["education-num"] > 10)
    for c in result.cells:
        assert (c.n, c.positives) == plain[(c.filter_holds, c.in_group)]
    # The data README's verified figures for the paper's filter.
    e_white, e_other = result.cell(True, True), result.cell(True, False)
    assert (e_white.n, e_white.positives, e_other.n, e_other.positives) == (13827, 6132, 1945, 623)
    assert result.n_rows == 48842 and result.n_excluded == 0
    assert result.fair is False


def test_compas_population_and_counts(compas):
    result = audit(compas, PRESETS["compas"].spec)
    aa, cau = result.cell(None, True), result.cell(None, False)
    assert (aa.n, aa.positives, cau.n, cau.positives) == (3696, 1901, 2454, 966)
    assert [g.filter_holds for g in result.gaps] == [None]


def test_sqf_counts_match_data_readme(sqf):
    result = audit(sqf, PRESETS["sqf"].spec)
    got = {(c.filter_holds, c.in_group): (c.n, round(c.ratio, 3)) for c in result.cells}
    assert got == {(False, True): (5286, 0.562), (True, True): (181, 0.508),
                   (False, False): (38280, 0.681), (True, False): (2040, 0.597)}


def test_wilson_interval_matches_scipy(adult):
    result = audit(adult, PRESETS["adult"].spec)
    for c in result.cells:
        ci = stats.binomtest(c.positives, c.n).proportion_ci(method="wilson")
        assert c.ci_low == pytest.approx(ci.low, abs=1e-9)
        assert c.ci_high == pytest.approx(ci.high, abs=1e-9)
        assert c.ci_low <= c.ratio <= c.ci_high


def test_gap_p_value_matches_chi_square(adult):
    result = audit(adult, PRESETS["adult"].spec)
    for g in result.gaps:
        a, b = result.cell(g.filter_holds, True), result.cell(g.filter_holds, False)
        table = [[a.positives, a.n - a.positives], [b.positives, b.n - b.positives]]
        expected = stats.chi2_contingency(table, correction=False)[1]
        assert g.test == "two-proportion z-test"
        assert g.p_value == pytest.approx(expected, rel=1e-6)
        # group minus reference, as in every other table: the protected class (White) against the rest (issue 45)
        assert (g.group, g.reference) == ("White", "Non-White")
        assert g.gap == pytest.approx(a.ratio - b.ratio)
        assert g.gap == result.comparison("White", g.cell).difference


def test_small_counts_use_fisher_exact():
    y = np.array([1, 1, 1, 0, 0, 1, 0, 0, 0, 0])
    g = np.array([1, 1, 1, 1, 1, 0, 0, 0, 0, 0], dtype=bool)
    spec = AuditSpec(outcome="y", positive=1, protected="g == 1")
    gap = audit_arrays(y, g, None, spec).gaps[0]
    assert gap.test == "Fisher's exact test"
    assert gap.p_value == pytest.approx(stats.fisher_exact([[3, 2], [1, 4]])[1])
    assert gap.significant is False and "could be due to chance" in gap.sentence


def test_empty_cell_is_not_computable_not_a_crash(adult):
    spec = PRESETS["adult"].spec.with_changes(filters=("education-num > 100",))
    result = audit(adult, spec)
    holds = result.gap(True)
    assert holds.gap is None and holds.fair is None and holds.p_value is None
    assert "not computable" in holds.sentence
    assert result.cell(True, True).ratio is None
    assert result.gap(False).gap is not None


def test_tolerance_decides_the_verdict(adult):
    spec = PRESETS["adult"].spec
    gap = audit(adult, spec).gap(True).gap
    assert audit(adult, spec.with_changes(tolerance=abs(gap) + 0.001)).gap(True).fair is True
    assert audit(adult, spec.with_changes(tolerance=abs(gap) - 0.001)).gap(True).fair is False


def test_audit_of_predictions(adult):
    spec = PRESETS["adult"].spec
    everyone = np.ones(len(adult), dtype=int)
    result = audit(adult, spec, everyone)
    assert all(c.ratio == 1.0 for c in result.cells)
    assert all(g.gap == 0 and g.fair for g in result.gaps)
    with pytest.raises(LuskinError, match="0 or 1"):
        audit(adult, spec, np.full(len(adult), 0.7))
    with pytest.raises(LuskinError, match="one prediction per row"):
        audit(adult, spec, everyone[:10])


def test_missing_values_are_left_out_and_counted(adult):
    frame = adult.copy()
    frame.loc[:9, "race"] = pd.NA
    frame.loc[10:14, "income"] = pd.NA
    result = audit(frame, PRESETS["adult"].spec)
    assert result.n_rows == len(frame) - 15
    assert result.excluded_reasons == {"outcome missing": 5, "protected value missing or unknown": 10}


@pytest.mark.parametrize("change, words", [
    ({"positive": "lots"}, "never occurs"),
    ({"outcome": "salary"}, "no outcome column"),
    ({"protected": "colour == White"}, "no column named 'colour'"),
])
def test_user_mistakes_are_plain(adult, change, words):
    with pytest.raises(LuskinError, match=words):
        audit(adult, PRESETS["adult"].spec.with_changes(**change))


def test_all_missing_outcome(adult):
    frame = adult.assign(income=pd.NA)
    with pytest.raises(LuskinError, match="no values at all"):
        audit(frame, PRESETS["adult"].spec)


@pytest.mark.parametrize("fields, words", [
    ({"tolerance": 2}, "between 0 and 1"),
    ({"tolerance": "wide"}, "must be a number"),
    ({"filters": ("race == Black",)}, "protected column"),
    ({"positive": ""}, "positive"),
])
def test_spec_validation(fields, words):
    base = {"outcome": "income", "positive": ">50K", "protected": "race == White"}
    with pytest.raises(LuskinError, match=words):
        AuditSpec(**{**base, **fields})


def test_spec_round_trips_through_json():
    for preset in PRESETS.values():
        spec = preset.spec
        again = AuditSpec.from_json(spec.to_json())
        assert again == spec
        assert json.loads(again.to_json()) == json.loads(spec.to_json())
    with pytest.raises(LuskinError, match="not valid JSON"):
        AuditSpec.from_json("{not json")
    with pytest.raises(LuskinError, match="lacks its 'outcome'"):
        AuditSpec.from_json('{"positive": 1, "protected": "a == 1"}')


def test_result_views(adult):
    result = audit(adult, PRESETS["adult"].spec)
    frame = result.to_frame()
    assert len(frame) == 4 and {"Ratio", "95% CI low", "p-value"} <= set(frame.columns)
    doc = json.loads(json.dumps(result.to_dict()))
    assert {"filter_holds", "in_group", "n", "positives", "ratio", "ci_low", "ci_high"} <= set(doc["cells"][0])
    assert {"filter_holds", "gap", "p_value", "fair"} <= set(doc["gaps"][0])
    first = result.sentences()[0]
    assert "44% of White" in first and "32% of Non-White" in first and "12 points" in first
    assert "larger than the 5-point tolerance" in first and "p < 0.001" in first


@pytest.mark.parametrize("protected, words", [
    ("race == Martian", "No row has race == Martian"),
    ("age >= 0", "Every row has age >= 0"),
])
def test_a_protected_class_without_rows_is_a_plain_error(adult, protected, words):
    with pytest.raises(LuskinError, match=words):
        audit(adult, PRESETS["adult"].spec.with_changes(protected=protected))


@pytest.mark.parametrize("spec", [
    AuditSpec("two_year_recid", 1, group_by=("race",), strata=("priors_count",), prediction="decile_score",
              prediction_cutoff=5, criterion="odds"),
    AuditSpec("decile_score", outcome_type="score", group_by=("race",), strata=("c_charge_degree",)),
    AuditSpec("two_year_recid", 1, group_by=("race", "sex"), strata=("age_cat",), outcome_is="adverse"),
], ids=["error rates", "score", "crossed adverse"])
def test_a_comparisons_dict_is_what_dataclasses_asdict_gives(compas, spec):
    """``Comparison.to_dict`` converts without asdict's deep copies (for speed); its JSON must stay asdict's."""
    import dataclasses

    def by_asdict(c):
        out = dataclasses.asdict(c)
        out["fair"] = None if c.is_reference else c.fair
        for key in ("cell_key", "pooled_parent", "four_fifths_lower"):   # the JSON's four_fifths says the group's
            out.pop(key)
        out.update(out.pop("uniform") or {})
        return {k: v for k, v in out.items() if not (k in ("score", "error_rates") and v is None)}

    result = audit(compas, spec)
    assert any(c.judged_rates for c in result.comparisons)
    assert any(c.score or c.error_rates or c.uniform for c in result.comparisons)
    for c in result.comparisons:
        assert json.dumps(c.to_dict(), default=str, sort_keys=True) == json.dumps(by_asdict(c), default=str,
                                                                                  sort_keys=True)
    assert [json.dumps(dataclasses.asdict(cell), default=str) for cell in result.cells] == [
        json.dumps(d, default=str) for d in result.to_dict()["cells"]]
