"""What each correction costs, drawn: accuracy against the remaining gap, one point per correction.

The points come from :mod:`luskin_core.corrections.cost`; this module only draws them.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go

from luskin_core import formatting
from luskin_core.corrections.cost import CONTROLLED, FAMILY_TITLES, PARITY, CostPoint
from luskin_core.formatting import format_percent, format_points
from luskin_core.present import palette
from luskin_core.present.plots import title_block

# one colour per correction on the chart
SERIES_COLORS = tuple(palette.COLORS[c] for c in ("blue", "vermillion", "green", "purple", "orange", "sky", "black"))


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
    return formatting.AUC.text(p.score) if p.score_name == "AUC" else format_percent(p.score)


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
        n_series = _draw_panel(fig, [p for p in drawn if p.family == family], col, n_series)
    _add_key(fig)
    _lay_out(fig, n_series, height)
    return fig


def _draw_panel(fig: go.Figure, mine: Sequence[CostPoint], col: int, n_series: int) -> int:
    """One kind of fairness: each correction's points (and arrows), the axes from 0; the series drawn so far."""
    auc = mine[0].family == CONTROLLED
    value_format = formatting.AUC.d3 if auc else ".1%"
    axis = "" if col == 1 else str(col)
    for series in dict.fromkeys(p.series for p in mine):
        group = [p for p in mine if p.series == series]
        color = SERIES_COLORS[n_series % len(SERIES_COLORS)]
        n_series += 1
        fig.add_trace(_series_trace(group, color, value_format), row=1, col=col)
        if group[0].tool != "equalized":
            _add_arrows(fig, group, color, axis)
    widest = [100 * p.gap_high for p in mine if p.gap_high is not None] + [100 * p.gap for p in mine if p.gap]
    fig.update_xaxes(range=[0, max(widest + [5.0]) * 1.15], title_text="remaining gap (percentage points)",
                     row=1, col=col)
    fig.update_yaxes(range=[0, 1.02], tickformat=".1f" if auc else ".0%",
                     title_text=("AUC" if auc else "accuracy") + " (axis from 0)", row=1, col=col)
    return n_series


def _marker_symbol(point: CostPoint) -> str:
    if point.default:
        return "star"
    return "circle-open" if point.stage == "before" else "circle"


def _hover_data(point: CostPoint) -> list[Any]:
    return [_text(point.correction), _text(point.label), _text(point.detail), point.score_name,
            point.score_low if point.score_low is not None else point.score,
            point.score_high if point.score_high is not None else point.score]


def _series_trace(group: Sequence[CostPoint], color: str, value_format: str) -> go.Scatter:
    """One correction's points; the equalized sweep as a line from alpha = 1 (uncorrected) to the smallest alpha."""
    sweep = group[0].tool == "equalized"
    ordered = sorted(group, key=lambda p: -(p.setting or 0.0)) if sweep else list(group)
    labels = [f"α {p.setting:g}" if p.setting is not None else "" for p in ordered] if sweep else None
    return go.Scatter(
        x=[100 * p.gap for p in ordered if p.gap is not None], y=[p.score for p in ordered],
        mode="lines+markers+text" if sweep else "markers",
        name=_text(_series_name(group)), legendgroup=group[0].series,
        marker={"size": [18 if p.default else 12 for p in ordered], "color": color,
                "symbol": [_marker_symbol(p) for p in ordered],
                "line": {"width": 2, "color": color}},
        line={"color": color, "width": 1.5, "dash": "dot"},
        text=labels,
        textposition="bottom right", textfont={"size": 11, "color": color},
        error_x=_errors(ordered, "gap", "gap_low", "gap_high", 100.0) | {"color": color},
        error_y=_errors(ordered, "score", "score_low", "score_high", 1.0) | {"color": color},
        customdata=[_hover_data(p) for p in ordered],
        hovertemplate=(f"%{{customdata[0]}}<br>%{{customdata[1]}}<br>%{{customdata[3]}} %{{y:{value_format}}} "
                       f"(95% CI %{{customdata[4]:{value_format}}} to %{{customdata[5]:{value_format}}})"
                       f"<br>remaining gap {formatting.GAP_SIZE.hover('x')} points (%{{customdata[2]}})<extra></extra>"),
    )


def _add_arrows(fig: go.Figure, group: Sequence[CostPoint], color: str, axis: str) -> None:
    """An arrow from the model before the correction to each model after it."""
    before = [p for p in group if p.stage == "before"]
    start_gap = before[0].gap if before else None
    if start_gap is None:
        return
    for after in group:
        if after.stage != "after" or after.gap is None:
            continue
        fig.add_annotation(
            x=100 * after.gap, y=after.score, ax=100 * start_gap, ay=before[0].score,
            xref=f"x{axis}", yref=f"y{axis}", axref=f"x{axis}", ayref=f"y{axis}",
            showarrow=True, arrowhead=3, arrowsize=1.3, arrowwidth=1.5, arrowcolor=color,
            text="", standoff=10, startstandoff=10,
        )


def _add_key(fig: go.Figure) -> None:
    """The legend's key to the markers (before/after, the paper's default)."""
    for name, symbol in (("open circle: before the correction; filled: after", "circle-open"),
                         ("star: the paper's default choice (C2 = MLP; lambda 1; alpha 0.1 to 0.2)", "star")):
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name=name, showlegend=True, hoverinfo="skip",
                                 marker={"symbol": symbol, "size": 13, "color": "#555555", "line": {"width": 2}}))


def _lay_out(fig: go.Figure, n_series: int, height: int | None) -> None:
    """Titles, fonts, and a height that leaves room for a legend row per series."""
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


def chart_points(fig: go.Figure) -> list[tuple[float, float]]:
    """The (gap in points, score) pairs drawn on a cost chart (for tests and checks)."""
    out = []
    for trace in fig.data:
        if trace.x is None:
            continue
        out += [(float(x), float(y)) for x, y in zip(trace.x, trace.y) if x is not None and y is not None]
    return out


__all__ = ["chart_points", "cost_chart"]
