"""The subgroup scan's chart and report section: every group scanned, its size and its gap, against the bar.

One point per group scanned (rows on a log scale, gap in points); the curves are the calibrated bar a gap
must clear at each size (the max-T critical value times the standard error of a gap at that size), the
findings are drawn large and named. A committee sees at once that most groups sit inside the bar, and which
ones do not.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go

from luskin_core.analyses.scan import bar_sentence
from luskin_core.formatting import format_p, format_percent, format_points
from luskin_core.present import palette
from luskin_core.present.report_blocks import Section, Table

FINDING = palette.COLORS["vermillion"]   # the findings
OTHER = palette.GREY                     # every other group
BAR = palette.COLORS["blue"]             # the bar
EXPLAINED = palette.COLORS["orange"]     # beyond the bar, the findings' gaps seen again
APART = palette.COLORS["purple"]         # of unknown category, set apart


def scan_figure(result: Any) -> go.Figure:
    """Every group scanned (size, gap) with the bar a gap must clear; the findings named."""
    fig = go.Figure()
    sizes = np.asarray(result.sizes if result.sizes is not None else [], dtype=float)
    gaps = np.asarray(result.differences if result.differences is not None else [], dtype=float)
    keep = np.isfinite(gaps) & (sizes > 0)
    status = np.asarray(result.status if result.status is not None else np.zeros(len(sizes)), dtype=int)
    within = keep & (status == 0)
    fig.add_trace(go.Scattergl(x=sizes[within], y=100 * gaps[within], mode="markers",
                               name=f"Within the bar ({int(within.sum()):,})",
                               marker={"color": OTHER, "size": 4, "opacity": 0.5}, hoverinfo="skip"))
    explained = keep & (status == 1)
    if explained.any():
        fig.add_trace(go.Scattergl(x=sizes[explained], y=100 * gaps[explained], mode="markers",
                                   name=f"Beyond the bar, not reported ({int(explained.sum()):,}): a finding's gap "
                                        "seen again, or what its parts predict",
                                   marker={"color": EXPLAINED, "size": 5, "symbol": "circle-open"},
                                   hoverinfo="skip"))
    apart = list(result.set_apart)
    if apart:
        fig.add_trace(go.Scatter(x=[f.n for f in apart], y=[100 * f.difference for f in apart], mode="markers",
                                 name=f"Of unknown category, set apart ({len(apart):,})",
                                 marker={"color": APART, "size": 10, "symbol": "square"},
                                 customdata=[[f.name] for f in apart],
                                 hovertemplate="%{customdata[0]}<extra></extra>"))
    if keep.any():
        grid = np.geomspace(max(sizes[keep].min(), 1.0), max(sizes[keep].max(), 2.0), 80)
        big = float(result.n_judged)
        if result.measure == "calibration":
            rate = float(np.clip(result.overall_rate, 1e-9, 1 - 1e-9))
            spread = np.sqrt(rate * (1 - rate) / grid)
        else:
            rate = float(np.clip(result.overall_rate, 1e-9, 1 - 1e-9))
            spread = np.sqrt(rate * (1 - rate) * (1 / grid + 1 / np.maximum(big - grid, 1)))
        bar = 100 * result.critical_value * spread
        for sign, show in ((1, True), (-1, False)):
            fig.add_trace(go.Scatter(x=grid, y=sign * bar, mode="lines", name="The bar a gap must clear",
                                     line={"color": BAR, "dash": "dash"}, showlegend=show, hoverinfo="skip"))
    findings = list(result.findings)
    if findings:
        fig.add_trace(go.Scatter(
            x=[f.n for f in findings], y=[100 * f.difference for f in findings], mode="markers+text",
            name=f"A finding ({len(findings):,})", text=[f"{i + 1}" for i in range(len(findings))], textposition="top center",
            marker={"color": FINDING, "size": 12, "symbol": "diamond"},
            customdata=[[f.name, f"{f.n:,}", format_percent(f.rate), format_percent(f.rest_rate),
                         format_points(f.difference, signed=True), format_p(f.p_adjusted)] for f in findings],
            hovertemplate="%{customdata[0]}<br>%{customdata[1]} rows: %{customdata[2]} against %{customdata[3]}"
                          "<br>gap %{customdata[4]} points, adjusted %{customdata[5]}<extra></extra>"))
    other = "predicted" if result.measure == "calibration" else "everyone else"
    fig.update_layout(
        title={"text": f"Every group scanned: its gap against {other}, by its size<br><sup>{result.groups_scanned:,} "
                       f"groups; {result.significant:,} beyond the dashed lines (chance over the whole scan, "
                       f"{result.control_words}): {result.reported:,} reported"
                       + (f", {len(apart):,} of unknown category" if apart else "")
                       + (f", {result.explained:,} the findings' gaps seen again" if result.explained else "")
                       + "</sup>"},
        xaxis={"title": "Rows in the group (log scale)", "type": "log"},
        yaxis={"title": "Gap (points)", "zeroline": True},
        template="plotly_white", height=480, legend={"orientation": "h", "y": -0.2})
    return fig


def finding_kind(f: Any) -> str:
    """A finding's kind in words: a main effect, an intersection (beyond what its parts predict), inside another."""
    if f.kind == "intersection":
        kind = "Intersection" + (f" (parts predict {format_percent(f.parts_rate)})" if f.parts_rate is not None else "")
    else:
        kind = "Main effect"
    return f"{kind}, inside {f.within}" if f.within else kind


def scan_table(result: Any) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """The findings as a table in words (the page's and the report's); a finding inside another follows it."""
    other = "Predicted" if result.measure == "calibration" else "Everyone else"
    header = ("#", "Group", "Kind", "Rows", "Rate", other, "Gap (points)", "Simultaneous interval (points)",
              "Adjusted p", "Explains")
    rows: list[tuple[str, ...]] = [(str(i + 1), str(f.name), finding_kind(f), f"{f.n:,}", format_percent(f.rate),
             format_percent(f.rest_rate), format_points(f.difference, signed=True),
             f"{format_points(f.ci_low, signed=True)} to {format_points(f.ci_high, signed=True)}",
             format_p(f.p_adjusted, short=True), f"{f.explains:,}") for i, f in enumerate(result.findings)]
    return header, rows


def scan_report_section(result: Any) -> Section:
    """The report's section for a subgroup scan: the headline, the findings in words, the chart and the table."""
    section = Section("scan", "Subgroup scan: where the gaps are")
    section.add("lead", text=result.headline())
    section.add("sentences", items=[bar_sentence(result)], title="What cleared the bar")
    if result.findings:
        section.add("sentences", items=[f.sentence for f in result.findings], title="Findings")
    if result.set_apart:
        section.add("sentences", items=[f.sentence for f in result.set_apart],
                    title="Groups of unknown category (set apart)")
    section.chart(scan_figure(result), f"Every group scanned ({result.groups_scanned:,}); dashed: the bar at each "
                                       "size; diamonds: the findings.")
    if result.findings:
        header, rows = scan_table(result)
        section.table(Table("The findings", header, tuple(rows), wide=True))
    section.add("sentences", items=[f"Controlled: the {result.error_control}."], title="How the scan stays honest")
    return section


def scan_slides(result: Any) -> list[Any]:
    """One slide for the deck: the headline, the first findings in words and the chart of every group scanned."""
    from luskin_core.present.slide_blocks import FINDING, Slide, slide_figure

    words = (result.headline(), *(f.sentence for f in result.findings[:2]))
    return [Slide("Subgroup scan: where the gaps are", words, slide_figure(scan_figure(result)), FINDING,
                  "finding-scan")]


__all__ = ["finding_kind", "scan_figure", "scan_report_section", "scan_slides", "scan_table"]
