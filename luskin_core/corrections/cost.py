"""The cost of a correction: how much accuracy (or AUC) each correction gives up for how much fairness.

Results in, points and a figure out (no Streamlit), so the report and the dashboard draw the same
chart. Every correction that was computed becomes points on one chart:

* retraining (paper section 3): the first model A1 (trained on the recorded labels) and the
  retrained C2, per pair of models and algorithm. Their fairness is the controlled-fairness gap,
  the largest difference in the share with a positive decision between a group and its
  comparison group inside any cell (the cell the correction did not target included, so a
  correction that moves the gap elsewhere shows it); their quality is the AUC against the
  recorded labels on the held-out rows D4, as the paper reports it.
* per-group thresholds (paper section 4.2): one shared threshold before, each group's own
  threshold after, per lambda;
* the equalized distribution (paper section 4.3): every alpha of the sweep (alpha = 1 is plain
  logistic regression, the uncorrected model).

Every point is computed from the correction's one shape (:class:`luskin_core.corrections.correction.CorrectionResult`,
each tool's ``result.correction``): its confusion counts per group and cell on the held-out rows.
For the last two, fairness is the error-rate gap: the larger of the gap in true positive rates
and the gap in false positive rates between the groups (Fairlearn's equalized-odds difference),
and quality is the accuracy on the held-out test rows.

Intervals (95%): Wilson for an accuracy; Hanley and McNeil (1982) for an AUC, from the numbers of
positive and negative rows; Newcombe's score interval for a gap (folded onto its absolute
value). The paper's default choices are marked: C2 a neural network (MLP) with Algorithm 1 or 2,
lambda = 1, alpha between 0.1 and 0.2.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from luskin_core.corrections.correction import DECISIONS, CorrectionResult, CorrectionStage
from luskin_core.formatting import format_percent, format_points
from luskin_core.present.plots import title_block
from luskin_core.stats.comparisons import TOO_FEW
from luskin_core.stats.inference import Z95, newcombe_interval, wilson_interval

CONTROLLED = "controlled"
PARITY = "parity"
FAMILY_TITLES = {
    CONTROLLED: "Retraining: AUC and the gap in decisions",
    PARITY: "Thresholds, equalized: accuracy and error-rate gap",
}
GAP_NAMES = {
    CONTROLLED: "largest gap in the share with a positive decision, in any cell",
    PARITY: "larger of the true-positive-rate and false-positive-rate gaps",
}
# Okabe-Ito, one colour per correction on the chart
SERIES_COLORS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
DEFAULT_ALPHAS = (0.1, 0.2)
DEFAULT_LAMBDA = 1.0


@dataclass(frozen=True)
class CostPoint:
    """One model (before or after a correction) on the cost chart.

    ``score`` is the AUC or the accuracy (``score_name``) with its 95% interval; ``gap`` the
    remaining gap as a share (0.05 = 5 points), with its interval; ``detail`` says which groups
    and cell the gap is between. ``series`` groups the points of one correction: arrows go from
    its "before" point to its "after" points. ``default`` marks the paper's default choice.
    """

    tool: str
    family: str
    series: str
    correction: str
    label: str
    stage: str
    score_name: str
    score: float
    score_low: float | None
    score_high: float | None
    gap: float | None
    gap_low: float | None
    gap_high: float | None
    detail: str
    n_test: int
    default: bool
    setting: float | None = None
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["warnings"] = list(self.warnings)
        return out


def _num(x: Any) -> float | None:
    if x is None:
        return None
    value = float(x)
    return value if math.isfinite(value) else None


# ------------------------------------------------------------------------------------------
# Intervals
# ------------------------------------------------------------------------------------------
def accuracy_interval(accuracy: float, n: int) -> tuple[float | None, float | None]:
    """Wilson 95% interval for an accuracy measured on ``n`` rows."""
    if n <= 0:
        return None, None
    low, high = wilson_interval(round(accuracy * n), n)
    return _num(low), _num(high)


def auc_interval(auc: float, positives: int, negatives: int) -> tuple[float | None, float | None]:
    """Hanley and McNeil's (1982) 95% interval for an AUC from the numbers of positive and negative rows."""
    if positives <= 0 or negatives <= 0:
        return None, None
    q1 = auc / (2 - auc)
    q2 = 2 * auc * auc / (1 + auc)
    variance = (auc * (1 - auc) + (positives - 1) * (q1 - auc * auc) + (negatives - 1) * (q2 - auc * auc)) \
        / (positives * negatives)
    half = Z95 * math.sqrt(max(variance, 0.0))
    return max(0.0, auc - half), min(1.0, auc + half)


def absolute_gap_interval(k1: int, n1: int, k2: int, n2: int) -> tuple[float | None, float | None]:
    """Newcombe's 95% interval for p1 - p2, folded onto |p1 - p2| (0 when it spans zero)."""
    low, high = (_num(v) for v in newcombe_interval(k1, n1, k2, n2))
    if low is None or high is None:
        return None, None
    if low <= 0 <= high:
        return 0.0, max(-low, high)
    return min(abs(low), abs(high)), max(abs(low), abs(high))


# ------------------------------------------------------------------------------------------
# Points from a correction (``correction.CorrectionResult``, the shape every tool's result exposes)
# ------------------------------------------------------------------------------------------
def _largest_gap(audit: Any) -> tuple[float | None, float | None, float | None, str]:
    """The largest judged |difference| between a group and its reference in any cell, with its interval."""
    judged = [c for c in audit.comparisons if not c.is_reference and c.difference is not None]
    usable = [c for c in judged if c.verdict != TOO_FEW]
    if not usable:
        return None, None, None, "no cell holds enough rows of both groups to measure the gap"
    worst = max(usable, key=lambda c: abs(c.difference))
    low, high = absolute_gap_interval(worst.positives, worst.n, worst.reference_positives, worst.reference_n)
    where = "all rows" if worst.cell is None else worst.cell
    return abs(worst.difference), low, high, f"{worst.group} vs {worst.reference}, {where}"


def _error_gap(counts: dict[str, tuple[int, int, int, int]]) -> tuple[float, float | None, float | None, str]:
    """Larger of the TPR and FPR gaps from per-group (tp, positives, fp, negatives), with its interval."""
    best: tuple[float, float | None, float | None, str] | None = None
    for name, hit, total in (("true positive rate", 0, 1), ("false positive rate", 2, 3)):
        rates = {g: c[hit] / c[total] for g, c in counts.items() if c[total] > 0}
        if len(rates) < 2:
            continue
        high_g = max(rates, key=lambda g: rates[g])
        low_g = min(rates, key=lambda g: rates[g])
        gap = rates[high_g] - rates[low_g]
        lo, hi = absolute_gap_interval(counts[high_g][hit], counts[high_g][total], counts[low_g][hit],
                                       counts[low_g][total])
        detail = f"{name}: {high_g} {format_percent(rates[high_g])} vs {low_g} {format_percent(rates[low_g])}"
        if best is None or gap > best[0]:
            best = (gap, lo, hi, detail)
    if best is None:
        return math.nan, None, None, "the error rates could not be measured"
    return best


def _is_default(correction: CorrectionResult, stage: CorrectionStage) -> bool:
    """The paper's default choice: C2 an MLP; lambda 1; alpha 0.1 to 0.2."""
    if stage.stage != "after":
        return False
    if correction.tool == "retrain":
        return getattr(correction.options, "second", None) == "MLP"
    if stage.setting is None:
        return False
    if correction.tool == "thresholds":
        return abs(stage.setting - DEFAULT_LAMBDA) < 1e-12
    return DEFAULT_ALPHAS[0] - 1e-12 <= stage.setting <= DEFAULT_ALPHAS[1] + 1e-12


def correction_points(correction: CorrectionResult, index: int = 1) -> list[CostPoint]:
    """Every model of one correction as a point: its AUC or accuracy and the gap it leaves, from its counts.

    Retraining's gap (``DECISIONS``) is the largest judged gap in the share with a positive decision
    in any cell, judged by the audit's specification; the others' (``ERROR_RATES``) the larger of
    the TPR and FPR gaps between the groups.
    """
    family = CONTROLLED if correction.gap_measure == DECISIONS else PARITY
    series = f"{correction.tool}-{index}"
    points = []
    for stage in correction.stages:
        if family == CONTROLLED:
            gap, low, high, detail = _largest_gap(correction.audit(stage))
        else:
            gap, low, high, detail = _error_gap({g: (c.tp, c.positives, c.fp, c.negatives)
                                                 for g, c in stage.by_group().items()})
        if stage.score_name == "AUC":
            positives = stage.positives
            score_low, score_high = auc_interval(float(stage.score), positives, stage.n - positives)
        else:
            score_low, score_high = accuracy_interval(float(stage.score), int(correction.n_test))
        points.append(CostPoint(
            tool=correction.tool, family=family, series=series, correction=correction.name, label=stage.label,
            stage=stage.stage, score_name=stage.score_name, score=float(stage.score), score_low=score_low,
            score_high=score_high, gap=_num(gap), gap_low=low, gap_high=high, detail=detail,
            n_test=int(correction.n_test), default=_is_default(correction, stage), setting=stage.setting,
            warnings=correction.stage_warnings(stage),
        ))
    return points


def retrain_points(result: Any, index: int = 1) -> list[CostPoint]:
    """A1 (before) and C2 (after) of one retraining result (``retrain.RetrainResult``)."""
    return correction_points(result.correction, index)


def threshold_points(report: Any, index: int = 1) -> list[CostPoint]:
    """One shared threshold (before, when there is one) and each group's own (after) of a ``ThresholdReport``."""
    return correction_points(report.correction, index)


def equalized_points(sweep: Any, index: int = 1) -> list[CostPoint]:
    """Every alpha of an equalized-distribution sweep (``equalize.AlphaSweep``); alpha = 1 is the uncorrected model."""
    return correction_points(sweep.correction, index)


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def corrections_of(value: Any) -> list[CorrectionResult]:
    """The corrections of one result, a sequence of them, or None (each result exposes ``.correction``)."""
    return [item if isinstance(item, CorrectionResult) else item.correction for item in _as_list(value)]


def cost_points(retrain: Any = None, thresholds: Any = None, equalized: Any = None) -> tuple[CostPoint, ...]:
    """Every computed correction's points: each argument is one result (or its ``.correction``), a sequence, or None."""
    points: list[CostPoint] = []
    for value in (retrain, thresholds, equalized):
        for i, correction in enumerate(corrections_of(value), 1):
            points += correction_points(correction, i)
    return tuple(points)


def cost_frame(points: Iterable[CostPoint]) -> pd.DataFrame:
    """One row per point: the correction, the model, its AUC or accuracy and the remaining gap, with intervals."""
    return pd.DataFrame([{
        "Correction": p.correction, "Model": p.label, "Stage": p.stage, "Measure": p.score_name,
        "Value": p.score, "Value CI low": p.score_low, "Value CI high": p.score_high,
        "Gap measured": GAP_NAMES[p.family], "Remaining gap": p.gap, "Gap CI low": p.gap_low,
        "Gap CI high": p.gap_high, "Between": p.detail, "Test rows": p.n_test, "Paper's default": p.default,
        "Warnings": " ".join(p.warnings),
    } for p in points])


# ------------------------------------------------------------------------------------------
# The chart
# ------------------------------------------------------------------------------------------
def _text(value: Any) -> str:
    return html.escape(str(value), quote=False)


def _errors(points: Sequence[CostPoint], value: str, low: str, high: str, scale: float) -> dict[str, Any]:
    plus = [None if getattr(p, high) is None or getattr(p, value) is None
            else scale * (getattr(p, high) - getattr(p, value)) for p in points]
    minus = [None if getattr(p, low) is None or getattr(p, value) is None
             else scale * (getattr(p, value) - getattr(p, low)) for p in points]
    return {"type": "data", "symmetric": False, "array": plus, "arrayminus": minus, "visible": True,
            "thickness": 1.5, "width": 4}


def _value(p: CostPoint) -> str:
    return f"{p.score:.3f}" if p.score_name == "AUC" else format_percent(p.score)


def _series_name(group: Sequence[CostPoint]) -> str:
    """The legend entry of one correction: what it is and what it did, in numbers."""
    first = group[0]
    before = [p for p in group if p.stage == "before"]
    after = [p for p in group if p.stage == "after" and p.gap is not None]
    gap = "gap" if first.family == CONTROLLED else "error-rate gap"
    if first.tool == "equalized":
        defaults = [p for p in after if p.default]
        end = min(defaults or after, key=lambda p: p.setting or 0.0) if after else None
        head = "Equalized distribution" + ("" if end is None else f", alpha 1 → {end.setting:g}")
    else:
        head = first.correction
        end = after[0] if len(after) == 1 else None
    if before and end is not None and before[0].gap is not None and end.gap is not None:
        return (f"{head}: {first.score_name} {_value(before[0])} → {_value(end)}, {gap} "
                f"{format_points(before[0].gap)} → {format_points(end.gap)} points")
    return head


def cost_chart(points: Sequence[CostPoint], *, height: int | None = None) -> go.Figure:
    """Accuracy (or AUC) against the remaining gap for every correction, one panel per kind of fairness.

    Up and to the left is better (accurate and fair). Each correction has its colour and a legend
    entry with its numbers; an arrow leads from the model before it (open circle) to the model
    after it (filled); the equalized sweep is a line through its alphas from alpha = 1; stars mark
    the paper's default choices; whiskers are 95% intervals. The vertical axes run from 0 so that
    small differences are not exaggerated; gaps are in percentage points from 0. Points whose
    gap could not be measured are not drawn (:func:`cost_frame` lists them).
    """
    from plotly.subplots import make_subplots

    drawn = [p for p in points if p.gap is not None]
    families = [f for f in (CONTROLLED, PARITY) if any(p.family == f for p in drawn)]
    if not families:
        raise ValueError("cost_chart needs at least one point with a measured gap")
    fig = make_subplots(rows=1, cols=len(families), horizontal_spacing=0.12,
                        subplot_titles=[FAMILY_TITLES[f] for f in families])
    n_series = 0
    for col, family in enumerate(families, 1):
        mine = [p for p in drawn if p.family == family]
        auc = family == CONTROLLED
        value_format = ".3f" if auc else ".1%"
        axis = "" if col == 1 else str(col)
        for series in dict.fromkeys(p.series for p in mine):
            group = [p for p in mine if p.series == series]
            color = SERIES_COLORS[n_series % len(SERIES_COLORS)]
            n_series += 1
            sweep = group[0].tool == "equalized"
            # the sweep as a line from alpha = 1 (uncorrected) to the smallest alpha
            ordered = sorted(group, key=lambda p: -(p.setting or 0.0)) if sweep else group
            fig.add_trace(go.Scatter(
                x=[100 * p.gap for p in ordered if p.gap is not None], y=[p.score for p in ordered],
                mode="lines+markers+text" if sweep else "markers",
                name=_text(_series_name(group)), legendgroup=series,
                marker={"size": [18 if p.default else 12 for p in ordered], "color": color,
                        "symbol": ["star" if p.default else ("circle-open" if p.stage == "before" else "circle")
                                   for p in ordered],
                        "line": {"width": 2, "color": color}},
                line={"color": color, "width": 1.5, "dash": "dot"},
                text=[f"α {p.setting:g}" if p.setting is not None else "" for p in ordered] if sweep else None,
                textposition="bottom right", textfont={"size": 11, "color": color},
                error_x=_errors(ordered, "gap", "gap_low", "gap_high", 100.0) | {"color": color},
                error_y=_errors(ordered, "score", "score_low", "score_high", 1.0) | {"color": color},
                customdata=[[_text(p.correction), _text(p.label), _text(p.detail), p.score_name,
                             p.score_low if p.score_low is not None else p.score,
                             p.score_high if p.score_high is not None else p.score] for p in ordered],
                hovertemplate=(f"%{{customdata[0]}}<br>%{{customdata[1]}}<br>%{{customdata[3]}} %{{y:{value_format}}} "
                               f"(95% CI %{{customdata[4]:{value_format}}} to %{{customdata[5]:{value_format}}})"
                               "<br>remaining gap %{x:.1f} points (%{customdata[2]})<extra></extra>"),
            ), row=1, col=col)
            before = [p for p in group if p.stage == "before"]
            start_gap = before[0].gap if before else None
            if sweep or start_gap is None:
                continue
            for after in group:
                if after.stage != "after" or after.gap is None:
                    continue
                fig.add_annotation(
                    x=100 * after.gap, y=after.score, ax=100 * start_gap, ay=before[0].score,
                    xref=f"x{axis}", yref=f"y{axis}", axref=f"x{axis}", ayref=f"y{axis}",
                    showarrow=True, arrowhead=3, arrowsize=1.3, arrowwidth=1.5, arrowcolor=color,
                    text="", standoff=10, startstandoff=10,
                )
        widest = [100 * p.gap_high for p in mine if p.gap_high is not None] + [100 * p.gap for p in mine if p.gap]
        fig.update_xaxes(range=[0, max(widest + [5.0]) * 1.15], title_text="remaining gap (percentage points)",
                         row=1, col=col)
        fig.update_yaxes(range=[0, 1.02], tickformat=".1f" if auc else ".0%",
                         title_text=("AUC" if auc else "accuracy") + " (axis from 0)", row=1, col=col)
    for name, symbol in (("open circle: before the correction; filled: after", "circle-open"),
                         ("star: the paper's default choice (C2 = MLP; lambda 1; alpha 0.1 to 0.2)", "star")):
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=name, showlegend=True, hoverinfo="skip",
                                 marker={"symbol": symbol, "size": 13, "color": "#555555", "line": {"width": 2}}))
    for annotation in fig.layout.annotations:
        if annotation.text:
            annotation.font.size = 15
    legend_rows = n_series + 2
    plot_height = 380
    fig.update_layout(
        title=title_block("What each correction costs", "Up and to the left is better: accurate and fair. "
                         "Arrows: before → after the correction; whiskers: 95% intervals.", 22, 13),
        font={"size": 14, "family": "Arial, Helvetica, sans-serif"}, template="plotly_white",
        height=height or (plot_height + 130 + 90 + 22 * legend_rows),
        margin={"t": 130, "l": 80, "r": 30, "b": 90 + 22 * legend_rows},
        legend={"orientation": "v", "yanchor": "top", "y": -90 / plot_height, "x": 0, "font": {"size": 13}},
    )
    return fig


def chart_points(fig: go.Figure) -> list[tuple[float, float]]:
    """The (gap in points, score) pairs drawn on a cost chart (for tests and checks)."""
    out = []
    for trace in fig.data:
        if trace.x is None:
            continue
        out += [(float(x), float(y)) for x, y in zip(trace.x, trace.y) if x is not None and y is not None]
    return out


__all__ = ["CONTROLLED", "PARITY", "CostPoint", "absolute_gap_interval", "accuracy_interval", "auc_interval",
           "chart_points", "correction_points", "corrections_of", "cost_chart", "cost_frame", "cost_points",
           "equalized_points", "retrain_points", "threshold_points"]
