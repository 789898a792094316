"""The report's "Over time" section (:mod:`luskin_core.present.report`) and its small-groups chart.

Kept apart from the report's module so that the audit over time adds one call there.
"""

from __future__ import annotations

from typing import Any

from luskin_core.formatting import format_number, format_p, format_percent, format_points
from luskin_core.present.report_blocks import Section, Table


def series_section(series: Any) -> Section:
    """Headline, chart of each gap over time, trend sentences, alerts and the table per period."""
    from luskin_core.present.series_plots import series_figure

    section = Section("series", f"Over time: per {series.every} of '{series.column}'")
    section.add("lead", text=series.headline())
    section.warnings([a.sentence for a in series.alerts], "Alerts: a gap changed beyond chance")
    for cell in dict.fromkeys(c.cell for r in series.results for c in r.judged):
        section.chart(series_figure(series, cell),
                      f"Impact ratio and difference against {series.reference} per {series.every}; bars: 95% "
                      "intervals; open diamonds: alerts (self-starting CUSUM, k = 0.5, h = 6).")
    section.add("sentences", items=series.sentences()[1:], title="Trend of each gap (weighted least squares)")
    rows = []
    for label, result in zip(series.periods, series.results):
        for c in result.judged:
            rows.append((label, c.cell or "All rows", c.group, f"{c.n:,}", format_percent(c.rate, 1),
                         format_points(c.difference, signed=True),
                         f"{format_number(c.impact_ratio, 2)}", format_p(c.p_adjusted, short=True), c.verdict))
    section.table(Table(f"Every comparison per {series.every} (against {series.reference})",
                        ("Period", "Cell", "Group", "Rows", "Share", "Difference (points)", "Impact ratio",
                         "Adjusted p", "Verdict"), tuple(rows), wide=True))
    return section


def pooled_chart(section: Section, result: Any) -> None:
    """Add the raw vs partially pooled chart to the audit's section when a group has few rows."""
    from luskin_core.present.series_plots import pooled_figure
    from luskin_core.stats.shrinkage import SMALL_GROUP

    if any(0 < c.n < SMALL_GROUP and c.pooled_rate is not None for c in result.comparisons):
        for cell in list(dict.fromkeys(c.cell for c in result.comparisons))[:4]:
            section.chart(pooled_figure(result, cell),
                          f"Raw share (Wilson interval) and partially pooled share (empirical Bayes toward the parent "
                          f"group) of each group; the sentences quote the pooled share for groups under "
                          f"{SMALL_GROUP} rows.")


def series_slide(series: Any) -> Any:
    """One slide for the presentation: each gap over time on one chart, the headline and the first alert or trend."""
    from luskin_core.present.series_plots import series_figure
    from luskin_core.present.slide_blocks import FINDING, Slide, _slide_figure

    said = [a.sentence for a in series.alerts] or [t.sentence for t in series.trends]
    sentences = (series.headline(), *said[:1])
    figure = _slide_figure(series_figure(series)) if any(r.judged for r in series.results) else None
    return Slide(f"Over time: per {series.every}", sentences, figure, FINDING, "finding-series")
