"""The adjusted gaps in the report (a section) and in presentation mode (a slide).

Built from one :class:`luskin_core.analyses.adjust.AdjustResult`, with the report's own blocks (settings,
sentences, charts, a table, warnings), so the template needs nothing new. Words come from the
result's sentences; numbers from the shared formatters.
"""

from __future__ import annotations

from typing import Any

from luskin_core.analyses.adjust import AdjustResult
from luskin_core.formatting import RATIO, format_p, format_points
from luskin_core.present.adjust_plots import adjusted_gaps_chart, explained_chart


def _num(result: AdjustResult, x: float | None) -> str:
    if x is None:
        return "n/a"
    return f"{x:+,.3f}" if result.model == "linear" else format_points(x, signed=True)


def adjusted_section(result: AdjustResult) -> Any:
    """The report's section: settings, findings, both charts, the table per group, the warnings."""
    from luskin_core.present.report_blocks import Section, Table, settings_block

    section = Section("adjusted", "Gaps adjusted for the controls (regression)")
    section.blocks.append(settings_block([
        ("Model", f"{result.model} ({result.outcome_text}), the group as a factor"),
        ("Outcome modelled", result.outcome_note.removeprefix("The outcome modelled is ") or None),
        ("Reference group", result.reference),
        ("Controls held equal", ", ".join(result.controls)),
        ("How the controls were read", result.reading),
        ("Standard errors", f"clustered by {result.cluster}" if result.cluster else "delta method, model-based"),
        ("Rows", f"{result.n_rows:,} ({result.n_cells:,} distinct combinations, {result.n_parameters:,} coefficients)"),
        ("Decomposition", result.decomposition),
    ]))
    section.add("sentences", items=[g.sentence for g in result.gaps], title="Findings")
    section.chart(adjusted_gaps_chart(result), "Raw and adjusted gap per group; whiskers: 95% intervals.")
    section.chart(explained_chart(result), "The raw gap split into the part the controls explain and the rest.")
    unit = "" if result.model == "linear" else " (points)"
    rows = []
    for g in result.gaps:
        odds = RATIO.text(g.odds_ratio)
        rows.append((g.group, _num(result, g.raw_difference), _num(result, g.adjusted_difference),
                     f"{_num(result, g.adjusted_ci_low)} to {_num(result, g.adjusted_ci_high)}",
                     format_p(g.adjusted_p_corrected, short=True), odds, _num(result, g.explained),
                     _num(result, g.unexplained), g.verdict + (" (flagged)" if g.flagged else "")))
    section.table(Table(f"Each group against {result.reference}", (
        "Group", "Raw gap" + unit, "Adjusted gap", "95% interval", "Adjusted p", "Odds ratio", "Explained",
        "Unexplained", "Verdict"), tuple(rows), note="Flagged: an adjusted gap of at least the tolerance and an "
                                                     "adjusted p-value under 0.05."))
    notes = ([result.rows_note] if result.rows_note else []) + list(result.diagnostics)
    section.warnings(notes, "About the model")
    return section


def adjusted_slide(result: AdjustResult) -> Any:
    """One slide: the raw and adjusted gaps on one chart, and the first group's sentence."""
    from luskin_core.present.slide_blocks import FINDING, Slide, slide_figure

    flagged = result.flagged
    if flagged:
        lead = (f"With {', '.join(result.controls)} held equal, {len(flagged):,} "
                f"{'group still differs' if len(flagged) == 1 else 'groups still differ'} beyond the tolerance, "
                "not by chance (flagged).")
    else:
        lead = f"With {', '.join(result.controls)} held equal, no group's gap is flagged."
    first = result.gaps[0].sentence if result.gaps else ""
    return Slide("Once the controls are held equal", (lead, first), slide_figure(adjusted_gaps_chart(result)),
                 FINDING, "finding-adjusted")
