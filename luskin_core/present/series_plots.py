"""Charts of an audit over time and of small groups' partially pooled shares (plotly, no Streamlit).

* :func:`series_figure`: each group's impact ratio (top) and difference in points (bottom) per
  period against the reference, with 95% intervals (Koopman's for the ratio, Newcombe's for the
  difference), the four-fifths line and zero drawn, and the periods with an alert marked.
* :func:`pooled_figure`: each group's raw share with its Wilson interval beside its partially
  pooled share with its interval (:mod:`luskin_core.stats.shrinkage`), so that a committee sees how far
  a small group's estimate moves toward its parent and how much narrower its interval is.

Every user string is escaped (plotly renders tags in labels); colours follow the audit's groups
(:func:`luskin_core.present.audit_plots.group_colors`).
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from luskin_core.present.audit_plots import FONT_SIZE, TITLE_SIZE, group_colors, text
from luskin_core.present.plots import shorten, title_block


def _err(value: float | None, low: float | None, high: float | None, scale: float = 1.0) -> tuple[float, float]:
    if value is None or low is None or high is None:
        return 0.0, 0.0
    return scale * max(high - value, 0.0), scale * max(value - low, 0.0)


def series_panel_titles(spec: Any) -> tuple[str, str]:
    """The two panels' titles in the outcome's direction: the impact ratio compares the favourable shares
    (for an adverse outcome, the shares without it, as the four-fifths rule does), the difference the
    counted outcome's shares."""
    counted = text(shorten(spec.outcome_text, 40))
    if spec.direction.adverse:
        ratio = f"Impact ratio (share without {counted}: group ÷ reference)"
    else:
        ratio = f"Impact ratio (share where {counted}: group ÷ reference)"
    return ratio, f"Difference in the share where {counted} (points)"


def series_figure(result: Any, cell: str | None = None) -> go.Figure:
    """Impact ratio and difference of every group against the reference, period by period (one cell)."""
    cells = list(dict.fromkeys(c.cell for r in result.results for c in r.judged))
    cell = cell if cell in cells else (cells[0] if cells else None)
    colors = group_colors(result.overall)
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08,
                        subplot_titles=series_panel_titles(result.overall.spec))
    alerted = {(a.group, a.period) for a in result.alerts if a.cell == cell}
    periods = list(result.periods)
    flagged = getattr(result, "is_flagged", lambda period, cell: False)
    for group in dict.fromkeys(c.group for r in result.results for c in r.judged if c.cell == cell):
        xs, ratio, r_up, r_down, diff, d_up, d_down, marks = [], [], [], [], [], [], [], []
        for label, period in zip(result.periods, result.results):
            c = next((c for c in period.judged if c.group == group and c.cell == cell), None)
            if c is None or c.difference is None:
                continue
            xs.append(label)
            ratio.append(c.impact_ratio)
            up, down = _err(c.impact_ratio, c.impact_ratio_ci_low, c.impact_ratio_ci_high)
            r_up.append(up)
            r_down.append(down)
            diff.append(100 * c.difference)
            up, down = _err(c.difference, c.difference_ci_low, c.difference_ci_high, 100.0)
            d_up.append(up)
            d_down.append(down)
            marks.append("diamond-open" if (group, label) in alerted else
                         "circle-open" if flagged(label, cell) else "circle")
        name, color = text(group), colors.get(group, "#000000")
        common = {"x": xs, "mode": "lines+markers", "name": name, "line": {"color": color},
                  "marker": {"symbol": marks, "size": 10}}
        fig.add_trace(go.Scatter(y=ratio, error_y={"type": "data", "array": r_up, "arrayminus": r_down},
                                 legendgroup=name, **common), row=1, col=1)
        fig.add_trace(go.Scatter(y=diff, error_y={"type": "data", "array": d_up, "arrayminus": d_down},
                                 legendgroup=name, showlegend=False, **common), row=2, col=1)
    fig.add_hline(y=0.8, line={"dash": "dot", "color": "#555"}, row=1, col=1,
                  annotation_text="four-fifths", annotation_position="bottom right")
    fig.add_hline(y=0, line={"color": "#555"}, row=2, col=1)
    where = "" if cell is None else f", where {text(cell)}"
    subtitle = (f"Against {text(result.reference)} per {result.every}{where}; bars: 95% intervals; "
                "open diamonds: an alert (the gap changed beyond chance)")
    if any(flagged(p, cell) for p in periods):
        subtitle += ("<br>hollow circles: periods " + ("flagged" if result.kept_flagged else "set aside") +
                     " (every group at 0% or 100%, or few rows)")
    fig.update_layout(title=title_block("How each group's gap moves over time", subtitle, TITLE_SIZE, FONT_SIZE - 4),
                      font={"size": FONT_SIZE - 2, "family": "Arial, Helvetica, sans-serif"},
                      template="plotly_white", height=720,
                      margin={"t": 150 if "<br>" in subtitle else 130, "l": 70, "r": 20, "b": 130},
                      # the legend sits at the figure's foot, below the periods' labels (at y=-0.08 its box
                      # hid the ends of the first rotated labels: "201:" for 2013-01)
                      legend={"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom"})
    fig.update_xaxes(categoryorder="array", categoryarray=periods, type="category")
    return fig


def pooled_figure(result: Any, cell: str | None = None) -> go.Figure:
    """Raw share (Wilson interval) beside the partially pooled share (its interval) of every group in one cell."""
    cells = list(dict.fromkeys(c.cell for c in result.comparisons))
    cell = cell if cell in cells else cells[0]
    rows = [c for c in result.comparisons if c.cell == cell and c.rate is not None]
    labels = [f"{text(c.group)} (n={c.n:,})" for c in rows]
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=[100 * c.rate for c in rows], y=[i - 0.15 for i in range(len(rows))], mode="markers", name="raw share (Wilson 95% interval)",
        marker={"symbol": "circle-open", "size": 11, "color": "#555555"},
        error_x={"type": "data", "array": [_err(c.rate, c.ci_low, c.ci_high, 100)[0] for c in rows],
                 "arrayminus": [_err(c.rate, c.ci_low, c.ci_high, 100)[1] for c in rows]}))
    pooled = [c for c in rows if c.pooled_rate is not None]
    fig.add_trace(go.Scatter(
        x=[100 * c.pooled_rate for c in pooled], y=[rows.index(c) + 0.15 for c in pooled], mode="markers",
        name="partially pooled (95% interval)", marker={"symbol": "diamond", "size": 11, "color": "#0072B2"},
        error_x={"type": "data", "array": [_err(c.pooled_rate, c.pooled_ci_low, c.pooled_ci_high, 100)[0]
                                           for c in pooled],
                 "arrayminus": [_err(c.pooled_rate, c.pooled_ci_low, c.pooled_ci_high, 100)[1] for c in pooled]}))
    where = "all rows" if cell is None else text(cell)
    fig.update_layout(
        title=title_block("Small groups: raw and partially pooled shares",
                          f"{where}; a small group's estimate borrows strength from its parent group",
                          TITLE_SIZE, FONT_SIZE - 4),
        font={"size": FONT_SIZE - 2, "family": "Arial, Helvetica, sans-serif"}, template="plotly_white",
        height=max(320, 150 + 34 * len(rows)), margin={"t": 130, "l": 70, "r": 20, "b": 95},
        legend={"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom"}, xaxis={"title": "share with the outcome (%)", "range": [0, 100]})
    fig.update_yaxes(autorange="reversed", tickvals=list(range(len(rows))), ticktext=labels)
    return fig


__all__ = ["pooled_figure", "series_figure"]
