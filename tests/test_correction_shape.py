"""Retrain, thresholds and equalize give one shape (correction.CorrectionResult), and the cost points
computed from it equal the figures each tool's own result gives, on Adult."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from sklearn.metrics import confusion_matrix

from luskin_core.corrections.correction import (
    DECISIONS,
    ERROR_RATES,
    CorrectionResult,
    CorrectionStage,
    GroupCounts,
    confusion_counts,
)
from luskin_core.corrections.cost import CONTROLLED, PARITY, accuracy_interval, auc_interval, cost_points
from luskin_core.counting.data import PRESETS, load_sample
from luskin_core.spec.options import EqualizeOptions, RetrainOptions, ThresholdOptions


@pytest.fixture(scope="module")
def adult_results():
    from luskin_core.corrections.equalize import equalize_frame
    from luskin_core.corrections.retrain import retrain
    from luskin_core.corrections.thresholds import tune_thresholds

    frame, preset = load_sample("adult"), PRESETS["adult"]
    retrained = retrain(frame, preset.spec, RetrainOptions(algorithm=2, first="LR", second="LR",
                                                           features=preset.features))
    tuned = tune_thresholds(frame, preset.spec, model="LR", features=preset.features)
    sweep = equalize_frame(frame, preset.spec, alphas=(0.1, 1.0), features=preset.features, seed=3)
    return retrained, tuned, sweep


def test_the_three_tools_give_the_same_shape(adult_results) -> None:
    retrained, tuned, sweep = adult_results
    corrections = [r.correction for r in adult_results]
    assert [type(c) for c in corrections] == [CorrectionResult] * 3
    assert [c.tool for c in corrections] == ["retrain", "thresholds", "equalized"]
    assert [type(c.options) for c in corrections] == [RetrainOptions, ThresholdOptions, EqualizeOptions]
    assert corrections[0].options == retrained.options
    assert corrections[1].options.lam == tuned.lam == ThresholdOptions.lam and corrections[1].options.model == "LR"
    assert corrections[2].options.alphas == (0.1, 1.0) and corrections[2].options.seed == 3
    assert [c.gap_measure for c in corrections] == [DECISIONS, ERROR_RATES, ERROR_RATES]
    frames = [c.to_frame() for c in corrections]
    assert all(list(f.columns) == list(frames[0].columns) for f in frames)
    assert all(set(c.to_dict()) == set(corrections[0].to_dict()) for c in corrections)
    for correction, n_test in zip(corrections, (retrained.sizes["D4"], tuned.n_test, sweep.n_test)):
        assert correction.n_test == n_test
        assert [s.stage for s in correction.before] == ["before"] and correction.after
        for stage in correction.stages:
            assert isinstance(stage, CorrectionStage) and all(isinstance(c, GroupCounts) for c in stage.counts)
            assert stage.n == n_test  # every held-out row counted once, in one group and one cell
        json.dumps(correction.to_dict(), allow_nan=False)
    for result, correction in zip(adult_results, corrections):  # the JSON of each result carries the shape
        assert json.loads(json.dumps(result.to_dict(), allow_nan=False))["correction"] == \
            json.loads(json.dumps(correction.to_dict()))
        assert correction.sentences() and all(isinstance(s, str) for s in correction.sentences())
    assert corrections[1].warnings == tuned.warnings and corrections[2].warnings == sweep.warnings


def test_the_counts_are_the_results_own_numbers(adult_results) -> None:
    retrained, tuned, sweep = adult_results
    retrain_c = retrained.correction
    for stage, audit in zip(retrain_c.stages, (retrained.first, retrained.second)):
        # decisions per class and cell equal the audit of the model's decisions on D4
        for cell in audit.cells:
            counts = next(c for c in stage.counts if c.cell_key == cell.filter_holds and c.group == cell.label)
            assert (counts.n, counts.decided_positive) == (cell.n, cell.positives)
        # recorded outcomes per class and cell equal the audit of the recorded labels
        for cell in retrained.original.cells:
            counts = next(c for c in stage.counts if c.cell_key == cell.filter_holds and c.group == cell.label)
            assert counts.positives == cell.positives
    for split, stage in zip((tuned.before, tuned.after), tuned.correction.stages):
        assert stage.accuracy == pytest.approx(split.accuracy, abs=1e-15)
        for group, rates in split.groups.items():
            counts = stage.by_group()[group]
            assert (counts.tpr, counts.fpr, counts.n) == (pytest.approx(rates.tpr, abs=1e-15),
                                                          pytest.approx(rates.fpr, abs=1e-15), rates.n)
    for point, stage in zip(sweep.points, sweep.correction.stages):
        assert stage.setting == point.alpha and stage.accuracy == pytest.approx(point.accuracy, abs=1e-15)
        assert stage.tpr_gap == pytest.approx(point.tpr_gap, abs=1e-15)
        assert stage.fpr_gap == pytest.approx(point.fpr_gap, abs=1e-15)


def test_cost_points_from_the_shape_equal_the_tools_figures_on_adult(adult_results) -> None:
    retrained, tuned, sweep = adult_results
    points = cost_points(retrained, tuned, sweep)
    # the same points whether given the results or their corrections
    assert points == cost_points(retrained.correction, tuned.correction, sweep.correction)
    assert len(points) == 2 + 2 + len(sweep.points)
    original = retrained.original
    positives = sum(c.positives for c in original.comparisons)
    for point, audit, auc in zip(points[:2], (retrained.first, retrained.second),
                                 (retrained.auc_first, retrained.auc_second)):
        assert point.family == CONTROLLED and point.score == auc
        assert (point.score_low, point.score_high) == auc_interval(auc, positives, original.n_rows - positives)
        assert point.gap == pytest.approx(max(abs(g.gap) for g in audit.gaps if g.gap is not None), abs=1e-15)
        assert point.n_test == retrained.sizes["D4"]
    assert points[1].warnings == retrained.warnings
    for point, split in zip(points[2:4], (tuned.before, tuned.after)):
        assert point.family == PARITY and point.score == split.accuracy and point.setting == tuned.lam
        assert (point.score_low, point.score_high) == accuracy_interval(split.accuracy, tuned.n_test)
        assert point.gap == pytest.approx(max(split.tpr_gap, split.fpr_gap), abs=1e-15)
    for point, result in zip(points[4:], sweep.points):
        assert point.score == result.accuracy and point.setting == result.alpha
        assert point.gap == pytest.approx(max(result.tpr_gap, result.fpr_gap), abs=1e-15)
        assert point.stage == ("before" if result.alpha == 1.0 else "after")
    assert [p.default for p in points] == [False, False, False, True, True, False]


def test_confusion_counts_agree_with_scikit_learn() -> None:
    rng = np.random.default_rng(5)
    y, d = rng.integers(0, 2, 500), rng.integers(0, 2, 500)
    groups, cells = rng.choice(["a", "b", "c"], 500), rng.integers(0, 2, 500).astype(bool)
    counts = confusion_counts(y, d, groups, cells, cell_order=(True, False))
    assert [(c.group, c.cell_key) for c in counts] == [(g, k) for g in "abc" for k in (True, False)]
    for c in counts:
        m = (groups == c.group) & (cells == c.cell_key)
        tn, fp, fn, tp = confusion_matrix(y[m], d[m], labels=[0, 1]).ravel()
        assert (c.tp, c.fp, c.fn, c.tn) == (tp, fp, fn, tn)


def test_a_stage_without_a_spec_cannot_be_judged_by_decisions(adult_results) -> None:
    tuned = adult_results[1].correction
    with pytest.raises(ValueError):
        tuned.audit(tuned.stages[0])
    retrain_c = dataclasses.replace(adult_results[0].correction, spec=None)
    with pytest.raises(ValueError):
        retrain_c.audit(retrain_c.stages[0])
