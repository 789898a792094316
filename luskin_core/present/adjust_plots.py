"""Charts of the adjusted gaps: raw vs adjusted per group (dot and whisker from zero), explained vs unexplained.

A result in, a plotly figure out (no Streamlit), so the page, the report and the slides draw the
same pictures. Group names are escaped before they reach plotly (which renders tags in labels).
Gaps of a yes/no outcome are drawn in percentage points, from zero, with the tolerance band.
"""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from luskin_core import formatting
from luskin_core.analyses.adjust import AdjustResult
from luskin_core.present import palette
from luskin_core.present.audit_plots import PALETTE, text
from luskin_core.present.plots import title_block

FONT_SIZE = 18
TITLE_SIZE = 22
RAW_COLOR = palette.GREY
ADJUSTED_COLOR = PALETTE[0]
EXPLAINED_COLOR = PALETTE[2]
UNEXPLAINED_COLOR = PALETTE[3]
BAND_COLOR = "rgba(0, 158, 115, 0.12)"


def _kind(result: AdjustResult) -> tuple[formatting.CellKind, str]:
    """How a gap is charted and written: an amount's in its units, a yes/no outcome's in points."""
    return (formatting.AMOUNT_GAP, "difference") if result.model == "linear" else (formatting.GAP, "points")


def _layout(fig: go.Figure, title: str, subtitle: str, n: int) -> go.Figure:
    fig.update_layout(title=title_block(title, subtitle, TITLE_SIZE, FONT_SIZE - 4),
                      font={"size": FONT_SIZE - 2, "family": "Arial, Helvetica, sans-serif"},
                      template="plotly_white", height=260 + 60 * n, margin={"t": 130, "l": 20, "r": 20, "b": 95},
                      legend={"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom", "x": 0.5,
                              "xanchor": "center"})
    fig.update_yaxes(autorange="reversed", automargin=True)
    return fig


def adjusted_gaps_chart(result: AdjustResult) -> go.Figure:
    """Each group's raw gap (grey) and adjusted gap with its 95% interval, against the reference, from zero."""
    kind, unit = _kind(result)
    scale, x = kind.scale, kind.hover("x") + (" points" if kind is formatting.GAP else "")
    groups = [text(g.group) for g in result.gaps]
    fig = go.Figure()
    if result.model == "logistic":
        band = kind.scale * result.tolerance
        fig.add_vrect(x0=-band, x1=band, fillcolor=BAND_COLOR, line_width=0,
                      layer="below")
    fig.add_vline(x=0, line_color="#333333", line_width=1)
    fig.add_trace(go.Scatter(
        x=[scale * g.raw_difference for g in result.gaps], y=groups, mode="markers", name="raw gap",
        marker={"symbol": "circle-open", "size": 14, "color": RAW_COLOR, "line": {"width": 3}},
        hovertemplate=f"%{{y}}: raw gap {x}<extra></extra>"))
    fig.add_trace(go.Scatter(
        x=[scale * g.adjusted_difference for g in result.gaps], y=groups, mode="markers",
        name="adjusted gap (95% interval)",
        marker={"symbol": "circle", "size": 14, "color": ADJUSTED_COLOR},
        error_x={"type": "data", "symmetric": False, "thickness": 3, "width": 8, "color": ADJUSTED_COLOR,
                 "array": [scale * (g.adjusted_ci_high - g.adjusted_difference) for g in result.gaps],
                 "arrayminus": [scale * (g.adjusted_difference - g.adjusted_ci_low) for g in result.gaps]},
        customdata=[[g.verdict] for g in result.gaps],
        hovertemplate=f"%{{y}}: adjusted {x} (%{{customdata[0]}})<extra></extra>"))
    fig.update_xaxes(title_text=f"gap to {text(result.reference)}, in {unit}", zeroline=False)
    held = ", ".join(text(c) for c in result.controls)
    subtitle = (f"Hollow: the raw gap. Filled: the gap once {held} are held equal, with its 95% interval"
                + ("; shaded: the tolerance." if result.model == "logistic" else "."))
    return _layout(fig, f"Gap to {text(result.reference)}, before and after holding the controls equal", subtitle,
                   len(groups))


def explained_chart(result: AdjustResult) -> go.Figure:
    """Each group's raw gap split into the part the controls explain and the part they do not."""
    kind, unit = _kind(result)
    scale, x = kind.scale, kind.hover("x") + (" points" if kind is formatting.GAP else "")
    groups = [text(g.group) for g in result.gaps]
    fig = go.Figure()
    fig.add_trace(go.Bar(x=[scale * g.explained for g in result.gaps], y=groups, orientation="h",
                         name="explained by the controls", marker_color=EXPLAINED_COLOR,
                         hovertemplate=f"%{{y}}: explained {x}<extra></extra>"))
    fig.add_trace(go.Bar(x=[scale * g.unexplained for g in result.gaps], y=groups, orientation="h",
                         name="unexplained", marker_color=UNEXPLAINED_COLOR,
                         hovertemplate=f"%{{y}}: unexplained {x}<extra></extra>"))
    fig.add_trace(go.Scatter(x=[scale * g.raw_difference for g in result.gaps], y=groups, mode="markers",
                             name="raw gap", marker={"symbol": "line-ns", "size": 26, "color": "#000000",
                                                     "line": {"width": 3, "color": "#000000"}},
                             hovertemplate=f"%{{y}}: raw gap {x}<extra></extra>"))
    fig.add_vline(x=0, line_color="#333333", line_width=1)
    fig.update_layout(barmode="relative")
    fig.update_xaxes(title_text=f"{unit}")
    return _layout(fig, "How much of each raw gap the controls explain",
                   "The two bars add up to the raw gap (black mark): explained by the groups' different controls, "
                   "and what remains.", len(groups))


def figures(result: AdjustResult) -> dict[str, Any]:
    """Both charts by name (the page, the report and the slides draw them)."""
    return {"gaps": adjusted_gaps_chart(result), "explained": explained_chart(result)}
