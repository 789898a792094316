"""Plot builders: traces, colours per group, titles, and numbers equal to the core's results."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from luskin_core.analyses.audit import audit
from luskin_core.corrections.equalize import equalize_frame
from luskin_core.corrections.thresholds import tune_thresholds
from luskin_core.counting.data import PRESETS
from luskin_core.present import plots
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.stats.verdict import Verdict


def small_frame(n: int = 600, seed: int = 0) -> pd.DataFrame:
    """A small synthetic table with a gap between groups A and B (fast to train on)."""
    rng = np.random.default_rng(seed)
    race = rng.choice(["A", "B"], n, p=[0.6, 0.4])
    edu = rng.integers(5, 16, n)
    x = rng.normal(size=n)
    p = 1 / (1 + np.exp(-(0.3 * (edu - 10) + x + (race == "A") * 0.7 - 1)))
    return pd.DataFrame({"race": race, "edu": edu, "x": x, "job": rng.choice(["p", "q", "r"], n),
                         "y": np.where(rng.random(n) < p, "yes", "no")})


SMALL_SPEC = AuditSpec("y", "yes", "race == A", filters=("edu > 10",))


@pytest.fixture(scope="module")
def adult_result(adult):
    return audit(adult, PRESETS["adult"].spec)


def test_audit_bars_traces_colours_and_values(adult_result):
    fig = plots.audit_bars(adult_result)
    assert [t.name for t in fig.data] == ["White", "Non-White"]
    assert fig.data[0].marker.color == plots.GROUP_COLOR
    assert fig.data[1].marker.color == plots.OTHER_COLOR
    for trace, member in zip(fig.data, (True, False)):
        cells = [c for c in adult_result.cells if c.in_group == member]
        assert list(trace.x) == [c.cell for c in cells]
        assert np.allclose(trace.y, [c.ratio for c in cells])
        # the whiskers are exactly the audit's Wilson intervals
        assert np.allclose(np.asarray(trace.y) + np.asarray(trace.error_y.array), [c.ci_high for c in cells])
        assert np.allclose(np.asarray(trace.y) - np.asarray(trace.error_y.arrayminus), [c.ci_low for c in cells])
        assert all(f"n = {c.n:,}" in text for c, text in zip(cells, trace.text))
    # a short bar's label is one line, so it stays below its whisker (Non-White, 10 years or fewer: 9%)
    top = fig.layout.yaxis.range[1]
    for trace in fig.data:
        for y, low, text in zip(trace.y, np.asarray(trace.y) - np.asarray(trace.error_y.arrayminus), trace.text):
            assert ("<br>" not in text) == (low < 0.25 * top), (y, text)
    assert "9% · n = 5,135" in fig.data[1].text
    assert "income is >50K" in fig.layout.title.text   # the condition in words, not as code ("income = >50K")
    assert "5 points" in fig.layout.title.subtitle.text and "95% confidence" in fig.layout.title.subtitle.text
    assert fig.layout.font.size >= 16
    notes = [a.text for a in fig.layout.annotations]
    # the chart's note says the gap and the audit's own verdict (beyond tolerance, not due to chance)
    assert any(f"gap 12 points ({Verdict.BEYOND.mark})" in n for n in notes)


def test_audit_bars_with_an_empty_cell_does_not_fail(adult):
    spec = PRESETS["adult"].spec.with_changes(filters=("education-num > 100",), filter_label=None,
                                              not_filter_label=None)
    result = audit(adult, spec)
    fig = plots.audit_bars(result)
    assert len(fig.data) == 2
    assert any("not computable" in a.text for a in fig.layout.annotations)


def test_gap_comparison_one_trace_per_stage(adult_result, adult):
    other = audit(adult, adult_result.spec.with_changes(tolerance=0.1))
    fig = plots.gap_comparison({"Original labels": adult_result, "Other": other})
    assert [t.name for t in fig.data] == ["Original labels", "Other"]
    assert np.allclose(fig.data[0].y, [100 * g.gap for g in adult_result.gaps])
    assert fig.data[0].marker.color != fig.data[1].marker.color
    assert "before and after" in fig.layout.title.text
    band = [s for s in fig.layout.shapes if s.type == "rect"]
    assert band and band[0].y0 == pytest.approx(-5) and band[0].y1 == pytest.approx(5)


def test_retrain_gaps_from_a_retrain_result():
    from luskin_core.corrections.retrain import RetrainOptions, retrain

    result = retrain(small_frame(), SMALL_SPEC, RetrainOptions(algorithm=2, first="LR", second="LR"))
    fig = plots.retrain_gaps(result)
    assert len(fig.data) == 3
    assert np.allclose(fig.data[2].y, [100 * result.second.gap(g.filter_holds).gap for g in result.original.gaps])


def test_threshold_roc_points_and_colours(compas):
    spec = PRESETS["compas"].spec
    report = tune_thresholds(compas, spec, model="LR", features=PRESETS["compas"].features)
    fig = plots.threshold_roc(report, spec)
    curves = [t for t in fig.data if t.mode == "lines" and t.name != "chance"]
    assert {t.name for t in curves} == {"African-American: ROC curve", "Caucasian: ROC curve"}
    colour = {t.name.split(":")[0]: t.line.color for t in curves}
    assert colour == {"African-American": plots.GROUP_COLOR, "Caucasian": plots.OTHER_COLOR}
    before = [t for t in fig.data if t.mode == "markers" and t.marker.symbol == "x"]
    after = [t for t in fig.data if t.mode == "markers" and t.marker.symbol == "circle"]
    assert len(before) == 2 and len(after) == 2
    # Rates run from 0 to 100%: the square plot must not widen the FPR axis beyond them.
    assert tuple(fig.layout.xaxis.range) == (-0.01, 1.01) and fig.layout.xaxis.constrain == "domain"
    for trace in after:
        group = trace.name.split(":")[0]
        rates = report.after_tune.groups[group]
        assert trace.x[0] == pytest.approx(rates.fpr) and trace.y[0] == pytest.approx(rates.tpr)
        assert trace.marker.color == colour[group]
    test_fig = plots.threshold_roc(report, spec, split="test")
    point = next(t for t in test_fig.data if t.mode == "markers" and t.marker.symbol == "circle")
    assert point.x[0] == pytest.approx(report.after.groups[point.name.split(":")[0]].fpr)
    assert "before and after" in fig.layout.title.text


@pytest.fixture(scope="module")
def sweep():
    return equalize_frame(small_frame(), SMALL_SPEC, alphas=(0.0, 0.5, 1.0))


def test_sweep_histograms_shares_and_colours(sweep):
    # race has two values: the rest is named by its value ('B', never 'Non-A'), in the sweep and on the chart
    assert sweep.group_labels == ("A", "B") and sweep.classes == ("A", "B")
    assert "Non-A" not in json.dumps(sweep.to_dict())
    fig = plots.sweep_histograms(sweep, 0.5)
    assert len(fig.data) == 4
    names = [(t.name, t.marker.color) for t in fig.data]
    assert names == [("A", plots.GROUP_COLOR), ("B", plots.OTHER_COLOR)] * 2
    assert "A and B" in fig.layout.title.text
    for trace in fig.data:
        assert sum(trace.y) == pytest.approx(1.0)
    assert "alpha = 0.5" in fig.layout.title.text
    # the bars are the sweep's own counts, scaled
    counts = np.asarray(sweep.point(0.5).histograms["A"]["positive"], float)
    assert np.allclose(fig.data[0].y, counts / counts.sum())


def test_alpha_curves_mark_the_current_alpha(sweep):
    alphas = list(sweep.alphas)
    acc = plots.alpha_accuracy(alphas, [p.accuracy for p in sweep.points], 0.5)
    assert list(acc.data[0].x) == alphas
    assert [s.x0 for s in acc.layout.shapes] == [0.5]
    gaps = plots.alpha_gaps(alphas, [p.tpr_gap for p in sweep.points], [p.fpr_gap for p in sweep.points], 0.0)
    assert [t.name for t in gaps.data] == ["TPR gap", "FPR gap"]
    assert np.allclose(gaps.data[1].y, [100 * p.fpr_gap for p in sweep.points])  # points, as the pages say
    assert gaps.layout.yaxis.range[0] == 0 and "percentage points" in gaps.layout.yaxis.title.text
    assert list(acc.layout.yaxis.range) == [0, 1] and "from 0%" in acc.layout.yaxis.title.text
    other = plots.alpha_gaps(alphas, [p.tpr_gap for p in sweep.points], [p.fpr_gap for p in sweep.points], 1.0)
    assert other.layout.yaxis.range == gaps.layout.yaxis.range  # the marked alpha never moves the axis
    assert [s.x0 for s in gaps.layout.shapes] == [0.0]
    assert "Accuracy" in acc.layout.title.text and "gaps" in gaps.layout.title.text


def test_palette_is_okabe_ito():
    assert plots.GROUP_COLOR == "#0072B2" and plots.OTHER_COLOR == "#B86E00"   # Okabe-Ito, orange darkened
    assert plots.class_colors("W", "NW") == {"W": "#0072B2", "NW": "#B86E00"}


def test_every_chart_colour_is_3_to_1_on_white():
    """WCAG 2.1 1.4.11: every graphical object 3:1 against its background (the charts' white); the palette is
    measured against white as WCAG defines it (the orange #E69F00 it replaced: 2.25)."""
    from wcag import contrast

    from luskin_core.present import palette

    assert round(contrast("#E69F00"), 2) == 2.25 and contrast("#000000") == 21.0
    for color in (*palette.COLORS.values(), palette.GREY):
        assert contrast(color, palette.BACKGROUND) >= 3.0, color
