"""The report's "Over time" section (:mod:`luskin_core.present.report`) and its small-groups chart.

Kept apart from the report's module so that the audit over time adds one call there.
"""

from __future__ import annotations

from typing import Any

from luskin_core.formatting import COUNT, GAP, P_VALUE, RATIO, SHARE
from luskin_core.present.report_blocks import Section, Table


def series_section(series: Any) -> Section:
    """Headline, chart of each gap over time, trend sentences, alerts and the table per period."""
    from luskin_core.present.series_plots import series_figure

    section = Section("series", f"Over time: per {series.every} of '{series.column}'")
    section.add("lead", text=series.headline())
    if series.flagged:
        section.warnings(series.flag_sentences(), "Periods flagged: artefacts of the data, not evidence of a change")
    section.warnings([a.sentence for a in series.alerts], "Alerts: a gap changed beyond chance")
    for cell in dict.fromkeys(c.cell for r in series.results for c in r.judged):
        section.chart(series_figure(series, cell),
                      f"Impact ratio and difference against {series.reference} per {series.every}; bars: 95% "
                      "intervals; open diamonds: alerts (self-starting CUSUM, k = 0.5, h = 6).")
    flags = series.flag_sentences()
    section.add("sentences", items=[s for s in series.sentences()[1:] if s not in flags], title="Trend of each gap (weighted least squares)")
    header, rows = series_table(series)
    if not series.flagged:  # no period flagged: no empty "Note" column
        header, rows = header[:-1], [row[:-1] for row in rows]
    section.table(Table(f"Every comparison per {series.every} (against {series.reference})", header, tuple(rows),
                        wide=True))
    return section


def series_table(series: Any) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """Every comparison per period as a table in words (the report's, the page's and the command line's).

    Rows with thousands separators, shares in percent, differences and intervals in points, and a note on
    the periods set aside (:attr:`~luskin_core.analyses.series.SeriesResult.flagged`).
    """
    header = ("Period", "Cell", "Group", "Rows", SHARE.heading("Share"), GAP.heading("Difference"),
              GAP.heading("95% interval"), "Impact ratio", "Adjusted p", "Verdict", "Note")
    said = {"few_rows": "few rows", "all_positive": "every group at 100%", "all_negative": "every group at 0%"}
    lead = "flagged, kept" if series.kept_flagged else "set aside"
    rows: list[tuple[str, ...]] = []
    for label, result in zip(series.periods, series.results):
        for c in result.judged:
            why = [said[f.reason] for f in series.flagged
                   if f.period == label and (f.reason == "few_rows" or f.cell == c.cell)]
            rows.append((str(label), str(c.cell or "All rows"), str(c.group), COUNT.text(c.n), SHARE.text(c.rate),
                         GAP.text(c.difference), f"{GAP.text(c.difference_ci_low)} to {GAP.text(c.difference_ci_high)}",
                         RATIO.text(c.impact_ratio), P_VALUE.text(c.p_adjusted), str(c.verdict),
                         f"{lead}: {', '.join(why)}" if why else ""))
    return header, rows


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
    from luskin_core.present.slide_blocks import FINDING, Slide, slide_figure

    said = [a.sentence for a in series.alerts] or [t.sentence for t in series.trends] or series.flag_sentences()
    sentences = (series.headline(), *said[:1])
    figure = slide_figure(series_figure(series)) if any(r.judged for r in series.results) else None
    return Slide(f"Over time: per {series.every}", sentences, figure, FINDING, "finding-series")
