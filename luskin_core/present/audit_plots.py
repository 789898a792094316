"""Charts of the audit with many groups and cells: small multiples, a heat map, overall vs within.

Results in, plotly figures out (no Streamlit), so the dashboard and the report draw the same
pictures. Every user string (group and cell labels, column names, values) is escaped before it
reaches plotly, which would otherwise render tags such as ``<a href>`` in labels as live markup.
Colours: the Okabe-Ito palette, each group keeping its colour on every chart (by its position in
the audit's group order; the paper's protected group blue and the other class orange); the
reference group is drawn with a heavy outline and named "(reference)". Shares are drawn on a
0-100% axis so that small differences are not exaggerated.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from luskin_core import formatting
from luskin_core.analyses.audit import AuditResult
from luskin_core.formatting import format_percent
from luskin_core.present import palette
from luskin_core.present.plots import category_ticks, shorten, title_block
from luskin_core.stats.comparisons import Comparison
from luskin_core.stats.verdict import Verdict

PALETTE = tuple(palette.COLORS[c] for c in ("blue", "orange", "green", "vermillion", "sky", "purple", "olive", "black"))
UNKNOWN_COLOR = palette.GREY
FONT_SIZE = 18
TITLE_SIZE = 22


def text(value: Any) -> str:
    """A user string made safe for plotly (which renders a subset of HTML in labels)."""
    return html.escape(str(value), quote=False)


def short(value: Any) -> str:
    """A user string for a tick, a panel title or a title: shortened with an ellipsis (plots.shorten), escaped."""
    return text(shorten(value))


def group_colors(result: AuditResult) -> dict[str, str]:
    """One colour per group, the same on every chart of this audit."""
    colors = {}
    for i, group in enumerate(result.groups):
        colors[group] = UNKNOWN_COLOR if group.split(" × ")[-1] == "Unknown" else PALETTE[i % len(PALETTE)]
    return colors


def _layout(fig: go.Figure, title: str, subtitle: str, height: int, top: int = 130) -> go.Figure:
    fig.update_layout(
        title=title_block(title, subtitle, TITLE_SIZE, FONT_SIZE - 4),
        font={"size": FONT_SIZE - 2, "family": "Arial, Helvetica, sans-serif"},
        template="plotly_white", height=height, margin={"t": top, "l": 70, "r": 20, "b": 60},
        showlegend=False,
    )
    return fig


def _cells(result: AuditResult) -> list[str | None]:
    return list(result.cell_names)


def _draw_cell_bars(fig: go.Figure, items: list[Comparison], colors: dict[str, str], row: int, col: int) -> None:
    """One cell's panel: a bar per group with its 95% interval, its share and n beside it."""
    marks = [" (reference)" if c.is_reference else "" for c in items]
    y = [text(c.group) + mark for c, mark in zip(items, marks, strict=True)]
    rates = [c.rate if c.rate is not None else 0.0 for c in items]
    plus = [(c.ci_high - c.rate) if c.rate is not None and c.ci_high is not None else 0.0 for c in items]
    minus = [(c.rate - c.ci_low) if c.rate is not None and c.ci_low is not None else 0.0 for c in items]
    fig.add_trace(go.Bar(
        x=rates, y=y, orientation="h", marker={
            "color": [colors[c.group] for c in items],
            "line": {"color": "#000000", "width": [4 if c.is_reference else 0 for c in items]},
            "pattern": {"shape": ["/" if c.verdict == Verdict.TOO_FEW else "" for c in items],
                        "fillmode": "overlay", "fgcolor": "#ffffff"},
        },
        error_x={"type": "data", "array": plus, "arrayminus": minus, "visible": True, "color": "#333333",
                 "thickness": 2, "width": 5},
        customdata=[[c.n, c.positives, format_percent(c.ci_low), format_percent(c.ci_high),
                     Verdict.of(c.verdict).mark, format_percent(c.rate)] for c in items],
        hovertemplate=("%{y}<br>share %{customdata[5]} (95% CI %{customdata[2]} to %{customdata[3]})<br>"
                       "%{customdata[1]:,} of %{customdata[0]:,} rows<br>%{customdata[4]}<extra></extra>"),
    ), row=row, col=col)
    fig.add_trace(go.Scatter(
        x=[(c.ci_high if c.ci_high is not None else 0.0) + 0.02 for c in items], y=y, mode="text",
        text=[f"{format_percent(c.rate, 0)}, n = {c.n:,}" for c in items], textposition="middle right",
        textfont={"size": FONT_SIZE - 5}, hoverinfo="skip",
    ), row=row, col=col)
    fig.update_yaxes(**category_ticks([c.group for c in items], text, marks), row=row, col=col)


def comparison_bars(result: AuditResult, *, max_cells: int = 12, columns: int = 2) -> go.Figure:
    """Small multiples: one panel per cell, a horizontal bar per group with its 95% interval and n.

    Horizontal bars keep long group names readable. The reference group has a heavy outline;
    groups too small to judge are hatched. With more cells than ``max_cells`` the first
    ``max_cells`` are drawn (the heat map shows them all).
    """
    from plotly.subplots import make_subplots

    spec = result.spec
    cells = _cells(result)[:max_cells]
    n_cols = min(columns, len(cells))
    n_rows = math.ceil(len(cells) / n_cols)
    titles = [short(c) if c is not None else "All rows" for c in cells]
    per_panel = len(result.groups)
    panel_height = 46 * per_panel + 70
    fig = make_subplots(rows=n_rows, cols=n_cols, subplot_titles=titles, shared_xaxes=True,
                        horizontal_spacing=0.22 if n_cols > 1 else 0.0,
                        vertical_spacing=min(0.3, 90 / (panel_height * n_rows + 1)))
    colors = group_colors(result)
    for index, cell in enumerate(cells):
        _draw_cell_bars(fig, [c for c in result.comparisons if c.cell == cell], colors,
                        index // n_cols + 1, index % n_cols + 1)
    fig.update_xaxes(range=[0, 1.3], tickformat=".0%", tickvals=[0, 0.25, 0.5, 0.75, 1.0])
    fig.update_yaxes(autorange="reversed", automargin=True)
    for annotation in fig.layout.annotations:
        annotation.font.size = FONT_SIZE - 2
    more = f" (first {max_cells} of {len(result.cell_names)} strata)" if len(result.cell_names) > max_cells else ""
    bad = " (adverse: a lower share is better)" if spec.adverse else ""
    title = f"Share with {text(spec.decision_text)}{bad}, by group{more}"
    subtitle = ("Bar: share; whisker: 95% confidence interval; n: rows.<br>Heavy outline: the reference group; "
                f"hatched: fewer than {spec.min_group_size:,} rows, not judged.")
    return _layout(fig, title, subtitle, height=panel_height * n_rows + 170, top=150)


def _log_ratio(c: Comparison) -> float | None:
    if c.impact_ratio is None or c.impact_ratio <= 0:
        return None if c.impact_ratio is None else -1.0
    return float(np.clip(math.log2(c.impact_ratio), -1.0, 1.0))


def impact_heatmap(result: AuditResult) -> go.Figure:
    """Impact ratio of every group (rows) in every cell (columns) against the reference.

    Colour on a log scale: vermillion below 1 (the group fares worse than the reference), blue
    above; white at 1. The text gives the ratio and the verdict: * beyond the tolerance,
    ? could be chance, "n<30" too few rows to judge.
    """
    spec = result.spec
    groups = [g for g in result.groups if g != result.reference]
    cells = _cells(result)
    z, labels, hover, empty = [], [], [], []
    for group in groups:
        row_z, row_t, row_h, row_e = [], [], [], []
        for cell in cells:
            c = next(x for x in result.comparisons if x.group == group and x.cell == cell)
            too_few = c.verdict == Verdict.TOO_FEW
            row_z.append(None if too_few else _log_ratio(c))
            ratio = formatting.RATIO.text(c.impact_ratio)
            symbol = Verdict.of(c.verdict).symbol
            row_t.append("" if too_few else ratio + (f" {symbol}" if symbol else ""))
            row_e.append(Verdict.TOO_FEW.short if too_few else "")   # said in the grey cell, not by grey
            row_h.append(f"{text(group)} in {text(cell or 'all rows')}: {format_percent(c.rate, 0)} vs "
                         f"{format_percent(c.reference_rate, 0)} "
                         f"for {text(result.reference)}; impact ratio {ratio}; {Verdict.of(c.verdict).mark}")
        z.append(row_z)
        labels.append(row_t)
        hover.append(row_h)
        empty.append(row_e)
    scale = [list(stop) for stop in palette.HEAT_SCALE]   # every fill takes black text at 4.5:1 or more (palette.py)
    font = FONT_SIZE - (4 if len(cells) <= 8 else 7)
    x_labels = [text(c) if c is not None else "All rows" for c in cells]
    fig = go.Figure(go.Heatmap(  # grey underneath: cells too small to judge show through
        z=[[0] * len(cells) for _ in groups], x=x_labels, y=[text(g) for g in groups], showscale=False,
        colorscale=[[0, palette.HEAT_EMPTY], [1, palette.HEAT_EMPTY]], hoverinfo="skip", xgap=2, ygap=2,
        text=empty, texttemplate="%{text}", textfont={"size": font, "color": palette.HEAT_TEXT}))
    fig.add_trace(go.Heatmap(
        z=z, x=x_labels, y=[text(g) for g in groups],
        text=labels, texttemplate="%{text}", textfont={"size": font, "color": palette.HEAT_TEXT},
        customdata=hover,
        hovertemplate="%{customdata}<extra></extra>", colorscale=scale, zmin=-1, zmax=1, xgap=2, ygap=2,
        colorbar={"title": {"text": "impact ratio"}, "tickvals": [-1, math.log2(0.8), 0, 1],
                  "ticktext": ["0.5 or less", "0.8", "1", "2 or more"]},
    ))
    height = max(360, 60 * len(groups) + 220)
    _layout(fig, f"Impact ratio against {short(result.reference)}, every group in every cell",
            ("Share of the group divided by the reference's share in the same cell. Below 0.8 fails the "
             f"four-fifths rule.<br>{Verdict.BEYOND.symbol} {Verdict.BEYOND.mark} and not chance; "
             f"{Verdict.CHANCE.symbol} {Verdict.CHANCE.heading.lower()}; "
             f"fewer than {spec.min_group_size:,} rows: {Verdict.TOO_FEW.mark} (grey)."), height=height, top=150)
    fig.update_xaxes(side="bottom", tickangle=-30 if len(cells) > 6 else 0, automargin=True,
                     **category_ticks([c if c is not None else "All rows" for c in cells], text))
    fig.update_yaxes(autorange="reversed", automargin=True, **category_ticks(groups, text))
    return fig


def within_words(result: AuditResult) -> str:
    """'within each department' rather than 'within the cells': the columns the rows were split by."""
    strata = result.spec.strata
    if strata:
        return "within each " + " × ".join(short(c) for c in strata)
    return "within the filter and outside it"


def overall_vs_within(result: AuditResult) -> go.Figure:
    """Each group's gap to the reference overall and within the cells, side by side, in points.

    Circle: the overall (marginal) difference with its 95% interval; diamond: the size-weighted
    average of the within-cell differences. When they disagree, the overall gap comes from
    which cells each group falls in (Simpson's paradox), and the label says so.
    """
    pooled = list(result.pooled)
    flags = [" (Simpson's paradox)" if p.simpson else "" for p in pooled]
    names = [text(p.group) + flag for p, flag in zip(pooled, flags, strict=True)]
    gap = formatting.GAP   # charted in points, written as every table writes a gap
    overall = [gap.chart(p.marginal_difference) for p in pooled]
    low = [gap.chart(p.marginal_difference_ci_low) for p in pooled]
    high = [gap.chart(p.marginal_difference_ci_high) for p in pooled]
    within = [gap.chart(p.weighted_difference) for p in pooled]
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=overall, y=names, mode="markers", name="overall",
        marker={"symbol": "circle", "size": 16, "color": "#0072B2"},
        error_x={"type": "data", "symmetric": False,
                 "array": [None if h is None or o is None else h - o for h, o in zip(high, overall)],
                 "arrayminus": [None if lo is None or o is None else o - lo for lo, o in zip(low, overall)],
                 "color": "#0072B2", "thickness": 2},
        hovertemplate=f"%{{y}}<br>overall gap {gap.hover('x')} points<extra></extra>",
    ))
    fig.add_trace(go.Scatter(
        x=within, y=names, mode="markers", name=f"{within_words(result)} (size-weighted)",
        marker={"symbol": "diamond", "size": 16, "color": "#D55E00"},
        hovertemplate="%{y}<br>" + html.escape(within_words(result)) + f": gap {gap.hover('x')} points<extra></extra>",
    ))
    tol = gap.scale * result.spec.tolerance
    fig.add_vrect(x0=-tol, x1=tol, fillcolor="rgba(0, 158, 115, 0.15)", line_width=0, layer="below")
    fig.add_vline(x=0, line_color="#555555", line_width=1)
    values = [abs(v) for v in overall + within + low + high if v is not None] + [tol]
    span = max(values) * 1.15
    _layout(fig, f"Gap to {short(result.reference)}: overall and {within_words(result)}",
            ("Points: group's share minus the reference's. Circle: overall, with its 95% interval; diamond: "
             f"the average gap {within_words(result)}.<br>The green band is the tolerance."),
            height=max(320, 70 * len(pooled) + 260), top=150)
    # The legend sits at the chart's foot in pixels (not in plot fractions, which put it on the axis
    # title when the chart is short), under a bottom margin that holds the axis and it.
    fig.update_layout(showlegend=True, legend={"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom",
                                               "x": 0}, margin_b=95)
    fig.update_xaxes(title_text="gap (percentage points)", range=[-span, span], zeroline=False)
    fig.update_yaxes(autorange="reversed", automargin=True, **category_ticks([p.group for p in pooled], text, flags))
    return fig


def audit_figures(result: AuditResult, *, heatmap_from: int = 13) -> list[tuple[str, go.Figure]]:
    """The audit's charts with a caption each: bars (or the heat map for many panels), and overall vs within."""
    out: list[tuple[str, go.Figure]] = []
    many = len(result.cell_names) * len(result.groups) >= heatmap_from * 3 or len(result.cell_names) > 12
    if many:
        out.append(("Impact ratio of every group in every cell.", impact_heatmap(result)))
    else:
        out.append(("Share per group in each cell, with 95% intervals and n.", comparison_bars(result)))
    if len(result.cell_names) > 1 and result.pooled:
        out.append((f"Each group's gap to the reference, overall and {within_words(result)}.", overall_vs_within(result)))
    return out


__all__: Sequence[str] = ("audit_figures", "comparison_bars", "group_colors", "impact_heatmap", "overall_vs_within",
                          "short", "text")
