"""The paper's relabel-and-retrain experiment: split, seeding, the report, export, errors."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from luskin_core.corrections.relabel import ADJUSTED, NOT_SELECTED
from luskin_core.corrections.retrain import (
    SYNTHETIC_COLUMNS,
    RetrainOptions,
    load_model,
    model_bytes,
    paper_table,
    retrain,
    save_model,
    split_rows,
)
from luskin_core.counting.data import PRESETS
from luskin_core.errors import LuskinError
from luskin_core.spec.audit_spec import AuditSpec

ADULT = PRESETS["adult"]
# Tolerance 0: on a small sample the recorded gap may be within 0.05 by chance, and a cell within
# tolerance is (rightly) left alone; these tests want the relabelling to happen.
SPEC = ADULT.spec.with_changes(tolerance=0.0)
FAST = {"first": "LR", "second": "LR", "features": ADULT.features}


@pytest.fixture(scope="module")
def small(adult):
    """3,000 Adult rows: enough for every stratum, quick to fit with LR."""
    return adult.sample(3000, random_state=1).reset_index(drop=True)


@pytest.fixture(scope="module")
def fast_result(small):
    return retrain(small, SPEC, RetrainOptions(algorithm=2, seed=3, **FAST))


def _no_times(report: dict) -> dict:
    return {k: v for k, v in report.items() if k != "timings"}


# -------------------------------------------------------------------------------------
# The split
# -------------------------------------------------------------------------------------
def test_split_is_40_40_20_disjoint_and_complete():
    codes = np.arange(1000) % 4
    d1, d2, d4, name = split_rows(1000, [("four strata", codes), ("none", None)], seed=0)
    assert (len(d1), len(d2), len(d4)) == (400, 400, 200)
    assert name == "four strata"
    together = np.concatenate([d1, d2, d4])
    assert len(np.unique(together)) == 1000
    # Stratified: each stratum is split 40/40/20 as well.
    for part, share in ((d1, 0.4), (d2, 0.4), (d4, 0.2)):
        assert np.bincount(codes[part], minlength=4).tolist() == [int(250 * share)] * 4


def test_split_falls_back_to_coarser_strata_when_a_stratum_is_tiny():
    fine = np.r_[np.zeros(97), np.ones(3)].astype(int)  # a stratum of 3 rows cannot reach all splits
    *_, name = split_rows(100, [("fine", fine), ("none", None)], seed=0)
    assert name == "none"


def test_retrain_split_sizes(fast_result, small):
    sizes = fast_result.sizes
    assert sum(sizes.values()) == len(small)
    assert sizes["D4"] == pytest.approx(0.2 * len(small), abs=1)
    assert sizes["D1"] == pytest.approx(0.4 * len(small), abs=1)
    assert sizes["D2"] == pytest.approx(0.4 * len(small), abs=1)
    assert fast_result.original.n_rows == sizes["D4"]
    assert len(fast_result.synthetic) == sizes["D2"]
    assert fast_result.stratified_by == "outcome x protected class x filter cell"


def test_same_seed_same_result_different_seed_different_split(small, fast_result):
    again = retrain(small, SPEC, RetrainOptions(algorithm=2, seed=3, **FAST))
    assert _no_times(again.to_dict()) == _no_times(fast_result.to_dict())
    pd.testing.assert_frame_equal(again.synthetic, fast_result.synthetic)
    other = retrain(small, SPEC, RetrainOptions(algorithm=2, seed=4, **FAST))
    assert not other.synthetic.index.equals(fast_result.synthetic.index)
    # Stratified split: D4's counts per outcome x class x cell are the same for every seed,
    # but the rows differ, so the first model (trained on other rows) scores differently.
    assert other.auc_first != fast_result.auc_first
    assert other.to_dict()["first"]["cells"] != fast_result.to_dict()["first"]["cells"]


def test_d4_original_labels_match_a_plain_pandas_count(small, fast_result):
    # D4 is the rows of the sample in neither D2 (the synthetic set) nor D1; check the audit's
    # totals against the sample's overall counts minus nothing: stratification keeps shares close.
    overall = (small["income"] == ">50K").mean()
    d4 = fast_result.original
    d4_share = sum(c.positives for c in d4.cells) / d4.n_rows
    assert d4_share == pytest.approx(overall, abs=0.01)


# -------------------------------------------------------------------------------------
# What the experiment builds and reports
# -------------------------------------------------------------------------------------
def test_synthetic_columns_and_labels(fast_result, small, tmp_path):
    syn = fast_result.synthetic
    assert list(syn.columns) == list(small.columns) + list(SYNTHETIC_COLUMNS)
    for col in ("luskin_label_before", "luskin_label_after"):
        assert set(syn[col].unique()) <= {0, 1}
    # Algorithm 2 keeps the recorded labels as the 'before' labels ...
    assert (syn["luskin_label_before"] == (syn["income"] == ">50K").astype(int)).all()
    # ... and changes only rows where the filter holds, of the adjusted class, 1 -> 0.
    changed = syn["luskin_label_before"] != syn["luskin_label_after"]
    assert changed.any()
    assert (syn.loc[changed, "education-num"] > 10).all()
    assert (syn.loc[changed, "luskin_label_before"] == 1).all()
    record = fast_result.relabelling.cell(True)
    assert record.status == ADJUSTED and record.changed == int(changed.sum())
    assert fast_result.relabelling.cell(False).status == NOT_SELECTED
    # The synthetic labels close the filter cell's gap on D2 (to within one row's share).
    after = fast_result.d2_after.gap(True)
    n_adjusted = record.n_group if record.adjusted_in_group else record.n_other
    assert abs(after.gap) <= 1 / n_adjusted
    # Written CSV holds the same columns and labels.
    path = fast_result.write_synthetic(tmp_path / "d3.csv")
    back = pd.read_csv(path)
    assert list(back.columns) == list(syn.columns)
    assert back["luskin_label_after"].tolist() == syn["luskin_label_after"].tolist()
    assert back["luskin_risk"].between(0, 1).all()


def test_algorithm1_labels_before_are_the_first_models_decisions(small):
    result = retrain(small, SPEC, RetrainOptions(algorithm=1, seed=0, threshold=0.4, **FAST))
    syn = result.synthetic
    assert (syn["luskin_label_before"] == (syn["luskin_risk"] >= 0.4).astype(int)).all()
    outside = syn["education-num"] <= 10
    assert (syn.loc[outside, "luskin_label_before"] == syn.loc[outside, "luskin_label_after"]).all()
    assert result.d2_before.source.startswith("first model")


def test_direction_up_and_all_cells(small):
    result = retrain(small, SPEC, RetrainOptions(algorithm=2, direction="up", all_cells=True, seed=0, **FAST))
    syn = result.synthetic
    changed = syn["luskin_label_before"] != syn["luskin_label_after"]
    # Up: only 0 -> 1 flips, and both filter cells may be relabelled.
    assert (syn.loc[changed, "luskin_label_after"] == 1).all()
    assert {c.status for c in result.relabelling.cells} == {ADJUSTED}
    # In each cell the lower class rose to the higher class's ratio, which stayed put.
    for record in result.relabelling.cells:
        lower = record.adjusted_in_group
        before, after = result.d2_before.cell(record.filter_holds, lower), result.d2_after.cell(record.filter_holds, lower)
        higher = result.d2_after.cell(record.filter_holds, not lower)
        assert after.positives >= before.positives
        assert higher.positives == result.d2_before.cell(record.filter_holds, not lower).positives
        assert after.ratio == pytest.approx(higher.ratio, abs=1 / after.n)


def test_cell_within_tolerance_is_left_alone(small):
    result = retrain(small, ADULT.spec.with_changes(tolerance=0.9), RetrainOptions(seed=0, **FAST))
    assert result.relabelling.cell(True).status == "within tolerance"
    assert result.relabelling.n_changed == 0
    assert (result.synthetic["luskin_label_before"] == result.synthetic["luskin_label_after"]).all()


def test_report_shape_and_auc(fast_result):
    report = fast_result.to_dict()
    for key in ("original", "first", "second"):
        assert len(report[key]["cells"]) == 4 and len(report[key]["gaps"]) == 2
    assert 0.5 < report["auc"]["first"] <= 1 and 0.5 < report["auc"]["second"] <= 1
    assert set(report["timings"]) >= {"first", "relabel", "second", "total"}
    table = fast_result.paper_table()
    assert list(table.index) == ["AUC", "White", "Non-White"]
    assert table.columns.get_level_values(0).unique().tolist() == ["Original", "A1 (LR)", "C2 (LR)"]
    # The paper's order: the not-filter cell (UE) before the filter cell (E).
    assert table.columns[0][1] == ADULT.spec.not_filter_name and table.columns[1][1] == ADULT.spec.filter_name
    assert table.loc["White", ("Original", ADULT.spec.filter_name)] == pytest.approx(
        fast_result.original.cell(True, True).ratio)
    assert table.loc["AUC", ("C2 (LR)", ADULT.spec.filter_name)] == pytest.approx(fast_result.auc_second)


def test_json_round_trip(fast_result):
    text = fast_result.to_json()
    loaded = json.loads(text)
    assert loaded == fast_result.to_dict()
    pd.testing.assert_frame_equal(paper_table(loaded), fast_result.paper_table())
    pd.testing.assert_frame_equal(paper_table(loaded, ci=True, gap=True), fast_result.paper_table(ci=True, gap=True))
    options = RetrainOptions.from_json(fast_result.options.to_json())
    assert options == fast_result.options
    assert AuditSpec.from_dict(loaded["spec"]) == fast_result.spec


def test_progress_is_reported_from_0_to_1(small):
    seen: list[tuple[float, str]] = []
    retrain(small, SPEC, RetrainOptions(seed=0, **FAST), progress=lambda f, m: seen.append((f, m)))
    fractions = [f for f, _ in seen]
    assert fractions[0] == 0.0 and fractions[-1] == 1.0
    assert fractions == sorted(fractions) and all(m for _, m in seen)


def test_second_model_saves_and_loads(fast_result, tmp_path, small):
    path = save_model(fast_result.second_model, tmp_path / "c2.skops")
    model = load_model(path)
    X = small[list(fast_result.features)].head(50)
    np.testing.assert_allclose(model.predict_proba(X), fast_result.second_model.predict_proba(X))
    assert load_model(model_bytes(fast_result.second_model)) is not None
    with pytest.raises(LuskinError, match="not a model"):
        load_model(b"not a model at all")


@pytest.mark.slow
def test_adult_algorithm2_mlp_narrows_the_e_cell_gap(adult):
    """The paper's main claim on full Adult: C2 = MLP trained on D3 has a smaller E-cell gap than A1.

    Robust by construction: it compares the two models on the same D4 rows and requires the
    narrowing to exceed twice the standard error of the difference of the two gaps' sizes
    (treated as independent, which overstates the error since the rows are shared).
    """
    result = retrain(adult, ADULT.spec, RetrainOptions(algorithm=2, first="LR", second="MLP", seed=0,
                                                       features=ADULT.features))
    a1, c2 = result.first, result.second

    def se(audit):
        g, o = audit.cell(True, True), audit.cell(True, False)
        return np.sqrt(g.ratio * (1 - g.ratio) / g.n + o.ratio * (1 - o.ratio) / o.n)

    narrowing = abs(a1.gap(True).gap) - abs(c2.gap(True).gap)
    assert narrowing > 2 * np.hypot(se(a1), se(c2))
    assert result.auc_second > 0.8


# -------------------------------------------------------------------------------------
# Mistakes a user can make
# -------------------------------------------------------------------------------------
def test_too_few_rows(small):
    with pytest.raises(LuskinError, match="at least 50 rows"):
        retrain(small.head(30), ADULT.spec, RetrainOptions(**FAST))


def test_one_class_outcome(small):
    frame = small.assign(income="<=50K").copy()
    frame.loc[0, "income"] = ">50K"
    only = frame[frame["income"] == "<=50K"]
    spec = AuditSpec(outcome="income", positive="<=50K", protected="race == White", filters=("education-num > 10",))
    with pytest.raises(LuskinError, match="nothing to learn"):
        retrain(only, spec, RetrainOptions(**FAST))


def test_protected_class_absent(small):
    with pytest.raises(LuskinError, match="no other class to compare with"):
        retrain(small[small["race"] == "White"], ADULT.spec, RetrainOptions(**FAST))


def test_class_absent_from_a_split(small):
    # One Non-White row only: it lands in one split, so another split has no Non-White rows.
    frame = pd.concat([small[small["race"] == "White"].head(200), small[small["race"] != "White"].head(1)])
    with pytest.raises(LuskinError, match="part of the split .* has no Non-White rows"):
        retrain(frame, ADULT.spec, RetrainOptions(**FAST))


def test_outcome_absent_from_a_split(small):
    # Two positives in 200 rows: at least one of D1, D2, D4 has none.
    neg = small[small["income"] == "<=50K"].head(198)
    pos = small[small["income"] == ">50K"].head(2)
    with pytest.raises(LuskinError, match="every row's outcome is not positive"):
        retrain(pd.concat([neg, pos]), ADULT.spec, RetrainOptions(**FAST))


@pytest.mark.parametrize("changes, words", [
    ({"algorithm": 3}, "algorithm must be 1"),
    ({"first": "SVM"}, "first model must be LR"),
    ({"second": "tree"}, "second model must be LR"),
    ({"direction": "left"}, "direction"),
    ({"threshold": 1.5}, "threshold must be between 0 and 1"),
    ({"seed": -1}, "seed"),
])
def test_bad_options(changes, words):
    with pytest.raises(LuskinError, match=words):
        RetrainOptions(**changes)


def test_bad_saved_options():
    with pytest.raises(LuskinError, match="Unknown retraining option"):
        RetrainOptions.from_dict({"algorithm": 1, "colour": "red"})
    with pytest.raises(LuskinError, match="not valid JSON"):
        RetrainOptions.from_json("{nope")


def test_the_rest_of_a_two_valued_column_is_named_by_its_value(small):
    """'Female' against 'Male', as the Audit page says, never 'Non-Female' (issue 27's word list)."""
    spec = AuditSpec(outcome="income", positive=">50K", protected="sex == Female")
    result = retrain(small, spec, RetrainOptions(**FAST))
    assert list(paper_table(result.to_dict()).index) == ["AUC", "Female", "Male"]
    assert "Non-Female" not in result.to_json()
