"""The Audit page's results for any group mode: headline, verdict counts, tables, charts, sentences.

Tables are built by pure functions (:func:`comparison_table`, :func:`pooled_table`) so that their
numbers can be checked against the core's result; they are sized to fit a 1024-px projector
without horizontal scrolling: short column labels, percentages and points with their intervals
in one column, and the technical columns (raw p-value, counts, interval bounds) in an expander.
Every user string reaches the screen through :func:`luskin_app.ui.md` (Markdown) or as a
dataframe cell (plain text).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from luskin_core import formatting as cells
from luskin_core.analyses.audit import AuditResult
from luskin_core.analyses.findings import findings
from luskin_core.present.audit_plots import audit_figures, comparison_bars
from luskin_core.stats import shown as shown_statistics
from luskin_core.stats.verdict import JUDGED_ORDER, SET_APART_SHORT, Verdict

from . import ui
from .help import HELP

GAP_CI = shown_statistics.GAP.header(ci=True)   # "Gap (points) [CI]": the unit from the one declaration
GAP_ONLY = shown_statistics.GAP.header()         # "Gap (points)"
# Short verdict words for the table (the full words are in the legend and the sentences).
SHORT_VERDICTS = {v: v.short for v in Verdict}
VERDICT_LEGEND = (f"Verdict: **{Verdict.BEYOND.short}** the tolerance and not chance; **{Verdict.CHANCE.short}** "
                  f"{Verdict.CHANCE.heading.lower()} (adjusted p ≥ 0.05); **{Verdict.WITHIN.short}** the tolerance; "
                  f"**{Verdict.TOO_FEW.short}** rows to judge (shown, not judged). 4/5: the impact ratio is below 0.8 "
                  "(the four-fifths rule).")


# The page's columns are narrow: interval bounds in whole units (0.3 stays 0.3: never 0 or 100 unless exact).
SHARE_CI = cells.SHARE.heading("Share", ci="CI")        # "Share (%) [CI]"
RATIO_HEAD = "Impact ratio"                               # never "Ratio": the share is a ratio too
OVERALL_GAP = cells.GAP.heading("Overall gap", ci="CI")  # "Overall gap (points) [CI]"
WITHIN_GAP = cells.GAP.heading("Within gap")              # "Within gap (points)"


TABLE_BUDGET = 700  # px: a 1024-px screen leaves about 750 beside the 220-px sidebar; the grid adds about 40


def _text_px(text: str) -> float:
    """About how wide ``text`` is in the data grid's 14-px font (capitals and m/w are wider)."""
    return sum(8.6 if ch.isupper() or ch in "mwMW" else 6.4 for ch in text)


def fit_columns(config: dict[str, Any], table: pd.DataFrame, labels: tuple[str, ...]) -> dict[str, Any]:
    """The column settings of ``table`` with the label columns (group, cell) as wide as their longest text.

    The other columns keep their set widths; the label columns share what is left of the budget, the
    first one first, so a group name is cut only when it cannot fit beside the numbers at 1024 px.
    """
    shown = {k: dict(v) for k, v in config.items() if k in table.columns}
    fixed = sum(int(v["width"]) for k, v in shown.items() if k not in labels)
    left = TABLE_BUDGET - fixed
    present = [k for k in labels if k in shown]
    for i, key in enumerate(present):
        need = round(max(_text_px(str(v)) for v in [key, *table[key].tolist()])) + 26  # and the cell's padding
        rest_min = 80 * (len(present) - i - 1)
        shown[key]["width"] = max(80, min(need, left - rest_min))
        left -= shown[key]["width"]
    return shown


def comparison_table(result: AuditResult) -> pd.DataFrame:
    """One row per group per cell, as shown: group, cell, n, share [CI] in %, difference [CI] in
    points, impact ratio, adjusted p, short verdict and the four-fifths flag (a score's mean and
    standardised difference are among every number, :func:`all_numbers`)."""
    rows = []
    several = len(result.cell_names) > 1
    for c in result.comparisons:
        row: dict[str, Any] = {"Group": c.group}  # the Verdict column says "ref." (a suffix cut long names)
        if several:
            row["Cell"] = c.cell if c.cell is not None else "All rows"
        row.update({
            "n": c.n,
            SHARE_CI: cells.SHARE.ci(c.rate, c.ci_low, c.ci_high, whole=True),
            GAP_CI: "" if c.is_reference else cells.GAP.ci(c.difference, c.difference_ci_low, c.difference_ci_high,
                                                           whole=True),
            RATIO_HEAD: "" if c.is_reference else cells.RATIO.text(c.impact_ratio),
            "p adj.": "" if c.is_reference else cells.P_VALUE.text(c.p_adjusted),
            "Verdict": SET_APART_SHORT if result.set_apart(c) else Verdict.of(c.verdict).short,
            **{s.short: s.text(c) for s in shown_statistics.SHOWN},   # every statistic every table shows (stats/shown.py)
        })
        rows.append(row)
    return pd.DataFrame(rows)


COMPARISON_COLUMNS = {
    "Group": st.column_config.TextColumn("Group", width=140),
    "Cell": st.column_config.TextColumn("Cell", width=110),
    "n": st.column_config.NumberColumn("n", width=50, format="localized", help="Rows of the group in the cell."),
    SHARE_CI: st.column_config.TextColumn(SHARE_CI, width=95, help=HELP["ci"]),
    GAP_CI: st.column_config.TextColumn(
        GAP_CI, width=125, help=shown_statistics.GAP.meaning.rstrip(".") + ", with its 95% interval (Newcombe)."),
    RATIO_HEAD: st.column_config.TextColumn(
        RATIO_HEAD, width=80, help="Impact ratio: the group's share divided by the reference group's share."),
    "p adj.": st.column_config.TextColumn("p adj.", width=55, help=HELP["p_value"] + " Adjusted for the number "
                                                                   "of comparisons on the page."),
    "Verdict": st.column_config.TextColumn("Verdict", width=60),
    **{s.short: st.column_config.TextColumn(s.short, width=45, help=s.meaning) for s in shown_statistics.SHOWN},
}
# Widths above add up to about 720 px (the grid adds about 40): a 1024-px screen leaves about 750 px beside the
# 220-px sidebar. Interval bounds are whole numbers here; every digit is under "Every number".


def paper_table(result: AuditResult) -> pd.DataFrame:
    """The paper's view (one group vs the rest, in the filter's cells) as shown: one row per class per
    cell, rows, share [CI] in %, the cell's gap in points, its p-value and verdict (the positives and
    every digit are under "Every number")."""
    raw = result.to_frame()
    return pd.DataFrame({
        "Filter cell": raw["Filter cell"],
        "Group": raw["Group"],
        "Rows": raw["Rows"],
        SHARE_CI: [cells.SHARE.ci(r, lo, hi, whole=True)   # the frame's "Ratio" is the share
                   for r, lo, hi in zip(raw["Ratio"], raw["95% CI low"], raw["95% CI high"])],
        GAP_ONLY: [cells.GAP.text(g) for g in raw["Gap (group - reference)"]],
        "p-value": [cells.P_VALUE.text(p) for p in raw["p-value"]],
        # The comparison's verdict itself (too few rows is not "beyond"; chance is not "beyond" either).
        "Verdict": [SHORT_VERDICTS.get(v, v) if v else "n/a" for v in raw["Verdict"]],
    })


PAPER_COLUMNS = {
    "Filter cell": st.column_config.TextColumn("Filter cell", width=120),
    "Group": st.column_config.TextColumn("Group", width=140),
    "Rows": st.column_config.NumberColumn("Rows", width=60, format="localized"),
    SHARE_CI: st.column_config.TextColumn(SHARE_CI, width=100, help=HELP["ci"]),
    GAP_ONLY: st.column_config.TextColumn(
        GAP_ONLY, width=95, help="The other group's share minus the reference group's share in the cell, in "
                                  "percentage points (the same direction as every other table)."),
    "p-value": st.column_config.TextColumn("p-value", width=65, help=HELP["p_value"]),
    "Verdict": st.column_config.TextColumn("Verdict", width=60, help=VERDICT_LEGEND.replace("**", "")),
}
# The label columns take what the numbers leave of TABLE_BUDGET (fit_columns).


def pooled_table(result: AuditResult) -> pd.DataFrame:
    """One row per non-reference group: the overall gap beside the gap within the cells and the pooled tests."""
    rows = []
    for p in result.pooled:
        rows.append({
            "Group": p.group,
            OVERALL_GAP: cells.GAP.ci(p.marginal_difference, p.marginal_difference_ci_low,
                                      p.marginal_difference_ci_high, whole=True),
            WITHIN_GAP: cells.GAP.text(p.weighted_difference),
            "MH odds ratio [CI]": cells.RATIO.ci(p.mh_odds_ratio, p.mh_ci_low, p.mh_ci_high),
            "CMH p": cells.P_VALUE.text(p.cmh_p_value),
            "Breslow-Day-Tarone p": cells.P_VALUE.text(p.breslow_day_p_value),
            "Simpson": result.simpson_words(p, no=""),
        })
    return pd.DataFrame(rows)


POOLED_COLUMNS = {
    "Group": st.column_config.TextColumn("Group", width=150),
    OVERALL_GAP: st.column_config.TextColumn(
        OVERALL_GAP, width=115, help="The gap to the reference over all rows, ignoring the cells."),
    WITHIN_GAP: st.column_config.TextColumn(
        WITHIN_GAP, width=75, help="The gaps inside the cells, averaged by the cells' sizes."),
    "MH odds ratio [CI]": st.column_config.TextColumn(
        "MH odds ratio [CI]", width=125, help="Mantel-Haenszel odds ratio: the gap inside the cells, pooled "
                                              "(1 = no gap)."),
    "CMH p": st.column_config.TextColumn("CMH p", width=60, help="Cochran-Mantel-Haenszel test of the pooled gap."),
    "Breslow-Day-Tarone p": st.column_config.TextColumn(
        "Breslow-Day-Tarone p", width=100, help="Whether the gap differs from cell to cell; below 0.05 the pooled odds "
                                        "ratio hides differences: read the cells one by one."),
    "Simpson": st.column_config.TextColumn(
        "Simpson", width=65, help="YES: the overall gap and the gap within the cells disagree (Simpson's paradox)."),
}


def all_numbers(result: AuditResult) -> pd.DataFrame:
    """Every number of every comparison, unrounded (for analysts; scrolls sideways)."""
    return result.comparisons_frame()


def render_findings(result: AuditResult) -> None:
    """What was found, most important first (:mod:`luskin_core.analyses.findings`): the overall answer as the heading."""
    found = findings(result)
    st.header(ui.md(found.headline), anchor=False)  # no anchor link: its address would carry user text
    rest = found.sentences()[1:]
    if rest:
        st.markdown(ui.bullet_list(rest))   # a list under the heading (numbered from "2." it read as a fragment)
    adjusted = adjusted_for()
    if adjusted is not None:   # the Adjusted gaps page ran for these choices: its answer belongs with the findings
        st.markdown("**Once the controls are held equal (regression):**\n" + ui.bullet_list(adjusted.summary()))


def adjusted_for() -> Any:
    """The Adjusted gaps page's result for the current data and choices, when it was run (else None)."""
    from .cache import recall
    from .choices import current_spec

    spec, _ = current_spec()
    return recall("adjusted", spec) if spec is not None else None


def render_headline(result: AuditResult) -> None:
    """The findings in words, then how many comparisons got each verdict."""
    render_findings(result)
    st.caption(ui.md(result.headline()))
    counts = result.verdict_counts()
    cols = st.columns(4)
    for col, verdict in zip(cols, JUDGED_ORDER):
        help_text = verdict.meaning
        if verdict == Verdict.TOO_FEW:
            help_text = (f"The group or the reference has fewer than {result.spec.min_group_size:,} rows in the cell: "
                         "shown, not judged.")
        col.metric(verdict.heading, f"{counts[verdict]:,}", help=help_text)


def render_sufficiency(result: AuditResult) -> None:
    """What the data could show: the sufficiency summary first, the details and power sentences folded."""
    lines = result.sufficiency_lines()
    if not lines:
        return
    st.caption(ui.md(lines[0]))
    details = [line.strip(" -") for line in lines[1:]]
    details += result.power_sentences()
    if details:
        with st.expander("Which groups are too small, and what the data could have seen"):
            st.markdown(ui.bullet_list(details))


def render_simpson(result: AuditResult) -> None:
    """The Simpson's-paradox callout: the overall gap misleads, in words."""
    for p in result.simpson:
        st.warning("**Simpson's paradox: the overall gap misleads.** " + ui.md(result.pooled_sentence(p)), icon=ui.ICONS["error"])


def render_tables(result: AuditResult) -> None:
    """The comparisons table (fits 1024 px), its legend, and every number in an expander."""
    table = comparison_table(result)
    ui.grid(table, hide_index=True, key="audit_comparisons",
                 column_config=fit_columns(COMPARISON_COLUMNS, table, ("Group", "Cell")))
    st.caption(VERDICT_LEGEND.replace("**", "") + f" Reference group: {ui.md(result.reference, 200)}.")
    too_few = sum(1 for c in result.judged if c.verdict == Verdict.TOO_FEW)
    if too_few:
        st.caption(f"{too_few:,} comparison{'s' if too_few > 1 else ''} marked '{Verdict.TOO_FEW.short}' "
                   f"{'have' if too_few > 1 else 'has'} fewer than {result.spec.min_group_size:,} rows in the group "
                   "or the reference: shown, kept out of the verdict.")
    with st.expander("Every number (counts, raw p-values, interval bounds)"):
        ui.grid(all_numbers(result), hide_index=True, key="audit_all_numbers")


def render_pooled(result: AuditResult) -> None:
    """Overall vs within the cells, per group: the controlled view."""
    if len(result.cell_names) < 2:
        return
    if not result.pooled:
        st.caption("There is no pooled view: only the reference group has rows.")
        return
    pooled = pooled_table(result)
    ui.grid(pooled, hide_index=True, key="audit_pooled", column_config=fit_columns(POOLED_COLUMNS, pooled,
                                                                                           ("Group",)))
    st.caption("Overall: all rows together, ignoring the cells. Within: the cells' gaps averaged by size. MH odds "
               "ratio and CMH p: the gap inside the cells, pooled. Breslow-Day-Tarone p below 0.05: the gap differs from "
               "cell to cell. Simpson YES: the overall gap and the gap within the cells disagree.")


def figures(result: AuditResult) -> list[tuple[str, Any]]:
    """The core's charts (:func:`luskin_core.present.audit_plots.audit_figures`), with the small multiples in one
    column: two panels side by side overlap their long group names at projector width."""
    out = audit_figures(result)
    if out and any(trace.type == "bar" for trace in out[0][1].data):   # the bars, not the heat map
        out[0] = (out[0][0], comparison_bars(result, columns=1))
    return out


def render_charts(result: AuditResult) -> None:
    for i, (caption, figure) in enumerate(figures(result)):
        ui.chart(figure, key=f"audit_fig_{i}")
        st.caption(caption)
    from luskin_core.present.series_plots import pooled_figure
    from luskin_core.stats.shrinkage import SMALL_GROUP

    if any(0 < c.n < SMALL_GROUP and c.pooled_rate is not None for c in result.comparisons):
        cell = None if len(result.cell_names) == 1 else result.cell_names[0]
        ui.chart(pooled_figure(result, cell), key="audit_pooled")
        st.caption(f"Groups under {SMALL_GROUP} rows: the raw share swings; the partially pooled share borrows "
                   "strength from the group's parent (empirical Bayes) and the sentences quote it.")


def render_sentences(result: AuditResult) -> None:
    st.markdown(ui.bullet_list(result.sentences()))


def render_excluded(result: AuditResult) -> None:
    if result.n_excluded:
        reasons = ", ".join(f"{k}: {v:,}" for k, v in result.excluded_reasons.items())
        st.caption(f"{result.n_excluded:,} rows were left out ({ui.md(reasons or 'outside the population', 500)}).")


def render_general(result: AuditResult) -> None:
    """Any audit: headline, counts, Simpson callout, chart / table / pooled tabs, and the sentences."""
    render_headline(result)
    render_simpson(result)
    names = ["Chart", "Table"] + (["Overall vs within"] if len(result.cell_names) > 1 else [])
    tabs = st.tabs(names)
    with tabs[0]:
        render_charts(result)
    with tabs[1]:
        render_tables(result)
    if len(tabs) > 2:
        with tabs[2]:
            render_pooled(result)
    st.header("What this means")
    render_sentences(result)
    render_excluded(result)


def render_paper_extras(result: AuditResult) -> None:
    """Beside the paper's view: every comparison and, with two cells, overall vs within (in expanders)."""
    with st.expander("Every comparison: impact ratio, adjusted p-value, four-fifths rule"):
        render_tables(result)
    if len(result.cell_names) > 1 and result.pooled:
        with st.expander("Overall vs within the cells (pooled odds ratio, CMH and Breslow-Day-Tarone tests)"):
            render_simpson(result)
            render_pooled(result)
