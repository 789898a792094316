"""The cost of a correction: points equal the results' numbers, intervals match statsmodels, the chart draws them."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from luskin_core import PRESETS
from luskin_core.corrections.cost import (
    CONTROLLED,
    PARITY,
    CostPoint,
    absolute_gap_interval,
    accuracy_interval,
    auc_interval,
    cost_frame,
    cost_points,
)
from luskin_core.present.cost_plots import chart_points, cost_chart


@pytest.fixture(scope="module")
def results(compas):
    from luskin_core.corrections.equalize import equalize_frame
    from luskin_core.corrections.retrain import RetrainOptions, retrain
    from luskin_core.corrections.thresholds import tune_thresholds

    preset = PRESETS["compas"]
    spec = preset.spec
    retrains = [retrain(compas, spec, RetrainOptions(algorithm=2, first="LR", second="MLP", features=preset.features)),
                retrain(compas, spec, RetrainOptions(algorithm=1, first="LR", second="LR", features=preset.features))]
    thresholds = [tune_thresholds(compas, spec, model="LR", features=preset.features, lam=lam) for lam in (1.0, 2.0)]
    sweep = equalize_frame(compas, spec, alphas=(0.0, 0.1, 0.2, 0.5, 1.0), features=preset.features)
    return retrains, thresholds, sweep


@pytest.fixture(scope="module")
def points(results):
    retrains, thresholds, sweep = results
    return cost_points(retrains, thresholds, sweep)


def test_points_equal_the_results_numbers(results, points) -> None:
    retrains, thresholds, sweep = results
    assert len(points) == 2 * 2 + 2 * 2 + len(sweep.points)
    for i, result in enumerate(retrains, 1):
        before, after = [p for p in points if p.series == f"retrain-{i}"]
        assert (before.stage, after.stage) == ("before", "after")
        assert before.score == result.auc_first and after.score == result.auc_second
        assert before.score_name == after.score_name == "AUC" and before.family == CONTROLLED
        for point, audit in ((before, result.first), (after, result.second)):
            assert point.gap == pytest.approx(max(abs(g.gap) for g in audit.gaps if g.gap is not None), abs=1e-12)
            assert point.n_test == result.sizes["D4"]
    for i, report in enumerate(thresholds, 1):
        before, after = [p for p in points if p.series == f"thresholds-{i}"]
        assert before.score == report.before.accuracy and after.score == report.after.accuracy
        assert before.gap == pytest.approx(max(report.before.tpr_gap, report.before.fpr_gap), abs=1e-12)
        assert after.gap == pytest.approx(max(report.after.tpr_gap, report.after.fpr_gap), abs=1e-12)
        assert after.family == PARITY and after.setting == report.lam and after.n_test == report.n_test
    swept = [p for p in points if p.tool == "equalized"]
    for point, result in zip(swept, sweep.points):
        assert point.setting == result.alpha and point.score == result.accuracy
        assert point.gap == pytest.approx(max(result.tpr_gap, result.fpr_gap), abs=1e-12)
        assert point.stage == ("before" if result.alpha == 1.0 else "after")


def test_the_papers_default_choices_are_marked(points) -> None:
    marked = {(p.tool, p.label) for p in points if p.default}
    assert marked == {("retrain", "C2 (MLP), Algorithm 2"), ("thresholds", "own thresholds, λ = 1"),
                      ("equalized", "α = 0.1"), ("equalized", "α = 0.2")}


def test_the_chart_draws_every_point_with_words_on_its_axes(points) -> None:
    figure = cost_chart(points)
    drawn = sorted(chart_points(figure))
    expected = sorted((100 * p.gap, p.score) for p in points if p.gap is not None)
    assert len(drawn) == len(expected)
    for (x, y), (ex, ey) in zip(drawn, expected):
        assert x == pytest.approx(ex) and y == pytest.approx(ey)
    layout = figure.layout
    for axis in (layout.xaxis, layout.xaxis2):
        assert axis.title.text == "remaining gap (percentage points)" and axis.range[0] == 0
    assert layout.yaxis.title.text == "AUC (axis from 0)" and layout.yaxis.range[0] == 0
    assert layout.yaxis2.title.text == "accuracy (axis from 0)" and layout.yaxis2.range[0] == 0
    names = [t.name for t in figure.data]
    assert any(n.startswith("Per-group thresholds, lambda 1 (model LR): accuracy") for n in names)
    assert any(n.startswith("Equalized distribution, alpha 1 → 0.1: accuracy") for n in names)
    # an arrow from before to after for each retraining and threshold correction (not for the sweep)
    assert sum(1 for a in layout.annotations if a.showarrow) == 4
    # whiskers: every drawn point carries its interval on both axes
    for trace in figure.data:
        if trace.x and trace.x[0] is not None:
            assert trace.error_y.array is not None and all(v is not None for v in trace.error_y.array)


def test_intervals_match_statsmodels() -> None:
    low, high = accuracy_interval(0.641, 1230)
    assert (low, high) == pytest.approx(proportion_confint(round(0.641 * 1230), 1230, method="wilson"))
    for k1, n1, k2, n2 in ((40, 120, 20, 110), (5, 30, 30, 31), (500, 1000, 480, 1000)):
        ref_low, ref_high = confint_proportions_2indep(k1, n1, k2, n2, method="newcomb", compare="diff")
        low, high = absolute_gap_interval(k1, n1, k2, n2)
        if ref_low <= 0 <= ref_high:
            assert low == 0 and high == pytest.approx(max(-ref_low, ref_high))
        else:
            assert (low, high) == pytest.approx(sorted((abs(ref_low), abs(ref_high))))
    assert accuracy_interval(0.5, 0) == (None, None) and auc_interval(0.7, 0, 10) == (None, None)


def test_auc_interval_is_close_to_a_bootstrap_on_real_scores(compas) -> None:
    """Hanley and McNeil's interval against 400 bootstrap resamples of a real model's held-out scores."""
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import train_test_split

    from luskin_core.corrections.models import make_model
    from luskin_core.counting.prepared import prepare

    preset = PRESETS["compas"]
    prepared = prepare(compas, preset.spec)
    X, y = prepared.frame[list(preset.features)], prepared.y
    train, test = train_test_split(np.arange(len(y)), test_size=600, random_state=0, stratify=y)
    model = make_model("LR", X.iloc[train], list(preset.features), random_state=0).fit(X.iloc[train], y[train])
    scores = model.predict_proba(X.iloc[test])[:, 1]
    truth = y[test]
    auc = roc_auc_score(truth, scores)
    low, high = auc_interval(auc, int(truth.sum()), int(len(truth) - truth.sum()))
    rng = np.random.default_rng(0)
    boot = []
    for _ in range(400):
        pick = rng.integers(0, len(truth), len(truth))
        boot.append(roc_auc_score(truth[pick], scores[pick]))
    half = (high - low) / 2
    assert 0.8 < half / (1.96 * np.std(boot)) < 1.25
    assert low < auc < high


def test_a_point_without_a_gap_is_listed_not_drawn() -> None:
    common = {"tool": "thresholds", "family": PARITY, "series": "thresholds-1", "correction": "Per-group thresholds",
                  "score_name": "accuracy", "score_low": 0.7, "score_high": 0.8, "gap_low": None, "gap_high": None, "n_test": 100}
    drawn = CostPoint(label="one threshold", stage="before", score=0.75, gap=0.1, detail="x", default=False, **common)
    missing = CostPoint(label="own thresholds", stage="after", score=0.74, gap=None,
                        detail="the error rates could not be measured", default=True, **common)
    figure = cost_chart([drawn, missing])
    assert chart_points(figure) == [(pytest.approx(10.0), 0.75)]
    frame = cost_frame([drawn, missing])
    assert len(frame) == 2 and pd.isna(frame.loc[1, "Remaining gap"]) and frame.loc[0, "Remaining gap"] == 0.1
    with pytest.raises(ValueError, match="at least one point"):
        cost_chart([missing])


def test_user_text_in_the_chart_is_escaped() -> None:
    evil = '<a href="https://attacker.example/">x</a><img src=y>'
    point = CostPoint(tool="retrain", family=CONTROLLED, series="retrain-1", correction=evil, label=evil,
                      stage="after", score_name="AUC", score=0.8, score_low=0.7, score_high=0.9, gap=0.05,
                      gap_low=0.01, gap_high=0.09, detail=f"{evil} vs {evil}", n_test=50, default=False)
    figure = cost_chart([point])
    text = json.dumps(figure.to_plotly_json(), default=str)
    assert "<a href" not in text and "<img" not in text
    assert "&lt;a href" in text


def test_small_test_splits_carry_wide_intervals(compas) -> None:
    from luskin_core.corrections.retrain import RetrainOptions, retrain

    preset = PRESETS["compas"]
    small = compas.sample(400, random_state=1).reset_index(drop=True)
    result = retrain(small, preset.spec, RetrainOptions(first="LR", second="LR", features=preset.features))
    for point in cost_points(retrain=result):
        assert point.n_test == result.sizes["D4"] < 100
        assert point.score_low is not None and point.score_high is not None
        assert point.score_low < point.score < point.score_high
        assert point.score_high - point.score_low > 0.1  # under 100 rows: an AUC is known to within about +-0.1
