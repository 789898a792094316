"""The words of the representation (:mod:`luskin_core.analyses.representation`): its report section (the one view
the command line prints as text and the page draws) and its slide.

Every number is written by :mod:`luskin_core.formatting`; every verdict is the result's, decided by its
:class:`~luskin_core.stats.judgement.Judgement`. No user-supplied text is rendered as Markdown or HTML here: the
report's template escapes every cell and sentence, the page draws a section through its escaping view.
"""

from __future__ import annotations

from typing import Any

from luskin_core.formatting import (
    COUNT,
    GAP,
    P_VALUE,
    RATIO,
    SHARE,
    count_of,
    format_p,
    format_percent,
    format_points,
    points,
)
from luskin_core.present import palette
from luskin_core.present.report_blocks import Section, Table
from luskin_core.present.slide_blocks import FINDING, Slide, slide_figure
from luskin_core.stats.verdict import Verdict


def compared_words(result: Any) -> str:
    """What the shares are of: 'the rows where frisked is Y' or 'every row'."""
    return f"the rows where {result.spec.outcome_text}" if result.among == "outcome" else "every row"


def bar_words(result: Any) -> str:
    """The bar in a phrase."""
    j = result.judgement
    if j.metric == "ratio":
        return f"the ratio threshold of {j.ratio_threshold:g} (the share over its benchmark, both ways)"
    return f"the tolerance of {points(j.tolerance)} (the share at most that far from its benchmark)"


def way_words(result: Any, row: Any) -> str:
    """How far the share is from its benchmark, which way, and whether that is the way that harms (no bracket: it
    stands inside other words' brackets)."""
    difference = row.difference
    if difference is None or difference == 0:
        return "as the benchmark expects"
    said = f"{format_points(abs(difference))} points {'above' if difference > 0 else 'below'} it"
    if row.harmful is None:
        return said
    if row.harmful:
        return said + f", the way that harms as the outcome is {'adverse' if result.adverse else 'favourable'}"
    return said + ", the way that does not harm"


def verdict_words(result: Any, row: Any) -> str:
    """What one group's verdict says, with the adjusted p-value it read."""
    verdict = row.verdict
    if row.unknown:
        return "set apart: a group of unknown category (its rows are left out of the shares)"
    if verdict is None:
        return "not judged: no benchmark was given for it"
    if verdict is Verdict.TOO_FEW:
        return f"not judged: fewer than {result.judgement.min_group_size:,} rows compared in all"
    if verdict is Verdict.WITHIN:
        return f"within {bar_words(result)}"
    p = f"adjusted {format_p(row.p_adjusted)}"
    if verdict is Verdict.BEYOND:
        return f"beyond {bar_words(result)}, not chance ({p})"
    return f"beyond {bar_words(result)}, but it could be chance ({p})"


def group_sentence(result: Any, row: Any) -> str:
    """One group against its benchmark, in a sentence."""
    if row.unknown:
        return (f"{row.group}: {count_of(row.count, 'row')} of unknown category, left out of the shares; "
                f"{verdict_words(result, row)}.")
    text = f"{row.group}: {format_percent(row.share)} of {compared_words(result)} ({row.count:,} of {result.compared:,})"
    if row.benchmark is None:
        return text + "; " + verdict_words(result, row) + "."
    deviations = "" if row.deviations is None else f" and {abs(row.deviations):.1f} standard deviations"
    return (f"{text} against a benchmark of {format_percent(row.benchmark)}: a ratio of {RATIO.text(row.ratio)}"
            f"{deviations}, {way_words(result, row)}; {verdict_words(result, row)}.")


def headline(result: Any) -> str:
    """The first sentence a committee reads."""
    judged = result.judged
    if not judged:
        if any(r.verdict is Verdict.TOO_FEW for r in result.rows):
            return (f"No share could be judged: {count_of(result.compared, 'row')} compared, fewer than "
                    f"{result.judgement.min_group_size:,}.")
        return "No share could be judged: no group of known category has a benchmark share."
    harm = [r for r in result.beyond if r.harmful is not False]
    if not result.beyond:
        chance = [r for r in judged if r.verdict is Verdict.CHANCE]
        tail = (f"; {count_of(len(chance), 'gap')} beyond it could be chance" if chance else "")
        return (f"Every judged group's share of {compared_words(result)} is within {bar_words(result)} of its "
                f"benchmark ({count_of(len(judged), 'group')}){tail}.")
    first = max(harm or result.beyond, key=lambda r: abs(r.difference or 0.0))
    lead = f"{count_of(len(result.beyond), 'group')} of {len(judged)} judged"
    return (f"{lead} differ from their benchmark beyond {bar_words(result)} and not by chance; the largest: "
            f"{first.group}, {format_percent(first.share)} of {compared_words(result)} against "
            f"{format_percent(first.benchmark)}, {way_words(result, first)}.")


def notes(result: Any) -> list[str]:
    """What the data and the benchmark do to the numbers, in plain words."""
    out = []
    if result.unknown_count:
        ranged = [r for r in result.rows if r.bounds is not None and r.benchmark is not None]
        spans = "; ".join(f"{r.group} {format_percent(r.bounds[0])} to {format_percent(r.bounds[1])}" for r in ranged)
        out.append(f"{count_of(result.unknown_count, 'row')} of {compared_words(result)} "
                   f"{'is' if result.unknown_count == 1 else 'are'} of unknown category and left out of the shares. "
                   f"Whatever they are, the shares could lie between" + (f": {spans}." if spans else " the shares "
                                                                             "shown and those with them all one group's."))
    for group in result.not_in_data:
        out.append(f"No row is labelled '{group}': its share is 0%. If the data spells it otherwise, give the "
                   "benchmark with the data's label.")
    if result.benchmark_total < 1 - 1e-9:
        out.append(f"The benchmark's shares add to {format_percent(result.benchmark_total)}: the rest of the population "
                   "is in groups without a benchmark, which are shown and not judged.")
    if result.spec.filters or result.spec.strata:
        out.append("Every row together: the filter's cells and the strata are not used here.")
    return out


def method_sentences(result: Any) -> list[str]:
    j = result.judgement
    tests = sum(1 for r in result.rows if r.p_adjusted is not None)
    correction = {"holm": "Holm", "bh": "Benjamini-Hochberg", "none": "no correction"}[j.correction]
    return [
        ("A group's share of the compared rows of known category, with its Wilson 95% interval, against the share "
         "the benchmark gives it: the exact binomial test (two-sided), the ratio of the shares, and the standard "
         "deviations between its count and the count the benchmark expects ((count - expected) / sqrt(N p (1 - p)), "
         "the measure courts have read since Castaneda v. Partida, where two or three were taken as beyond chance)."),
        (f"{count_of(tests, 'test')} adjusted together by {correction}; a verdict reads {bar_words(result)} and an "
         f"adjusted p-value below {j.alpha:g}."),
        ("The benchmark is the analyst's: a census table, the labour market's availability, an applicant pool. The "
         "comparison is only as good as its fit to who could have been in these rows."),
    ]


HEADER = ("Group", COUNT.heading("Rows compared"), SHARE.heading("Share"), SHARE.heading("Share 95% interval"),
          SHARE.heading("Benchmark"), GAP.heading("Share minus benchmark"), RATIO.heading("Ratio to benchmark"),
          "Standard deviations", P_VALUE.heading("Adjusted p"), SHARE.heading("Share of every row"), "Verdict")


def _row_cells(result: Any, row: Any) -> tuple[str, ...]:
    interval = ("n/a" if row.interval is None
                else f"{SHARE.text(row.interval[0])} to {SHARE.text(row.interval[1])}")
    return (str(row.group), COUNT.text(row.count), SHARE.text(row.share), interval, SHARE.text(row.benchmark),
            GAP.text(row.difference), RATIO.text(row.ratio),
            "n/a" if row.deviations is None else f"{row.deviations:+.1f}", P_VALUE.text(row.p_adjusted),
            SHARE.text(row.pool_share), _verdict_cell(row))


def _verdict_cell(row: Any) -> str:
    if row.unknown:
        return "set apart: unknown category"
    return "no benchmark" if row.verdict is None else str(row.verdict.words)


def share_chart(result: Any) -> Any:
    """Each group's share (with its 95% interval) beside its benchmark, a dot and a diamond per group, in percent."""
    import plotly.graph_objects as go

    from luskin_core.present.audit_plots import text
    from luskin_core.present.plots import title_block

    shown = [r for r in result.rows if not r.unknown and r.share is not None]
    groups = [text(r.group) for r in shown]
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=[SHARE.chart(r.share) for r in shown], y=groups, mode="markers", orientation="h", name="share (95% interval)",
        marker={"symbol": "circle", "size": 14, "color": palette.COLORS["blue"]},
        error_x={"type": "data", "visible": True, "symmetric": False, "thickness": 3, "width": 8,
                 "color": palette.COLORS["blue"],
                 "array": [SHARE.chart(r.interval[1] - r.share) if r.interval else 0 for r in shown],
                 "arrayminus": [SHARE.chart(r.share - r.interval[0]) if r.interval else 0 for r in shown]},
        hovertemplate="%{y}: " + SHARE.hover("x") + "%<extra></extra>"))
    marked = [r for r in shown if r.benchmark is not None]
    fig.add_trace(go.Scatter(
        x=[SHARE.chart(r.benchmark) for r in marked], y=[text(r.group) for r in marked], mode="markers",
        orientation="h", name="benchmark", marker={"symbol": "diamond-open", "size": 16, "color": palette.COLORS["vermillion"],
                                  "line": {"width": 3}},
        hovertemplate="%{y}: benchmark " + SHARE.hover("x") + "%<extra></extra>"))
    fig.update_xaxes(title_text=f"share of {compared_words(result)}, in %", rangemode="tozero")
    fig.update_yaxes(autorange="reversed", automargin=True)
    fig.update_layout(title=title_block("Each group's share against its benchmark",
                                        "Dot: the share, with its 95% interval. Diamond: the benchmark.", 22, 14),
                      font={"size": 16, "family": "Arial, Helvetica, sans-serif"}, template="plotly_white",
                      height=260 + 60 * len(groups), margin={"t": 130, "l": 20, "r": 20, "b": 95},
                      legend={"orientation": "h", "yref": "container", "y": 0, "yanchor": "bottom", "x": 0.5,
                              "xanchor": "center"})
    return fig


def section(result: Any, context: Any = None) -> Section:
    """The representation's report section (the command line's text and the page's view too)."""
    out = Section("representation", f"Representation: each group's share of {compared_words(result)}")
    out.add("lead", text=headline(result))
    out.add("settings", items=[
        ("Compared", f"{compared_words(result)[:1].upper()}{compared_words(result)[1:]}: "
                     + f"{result.compared:,} of known category"),
        ("Direction", "adverse (bad for the person)" if result.adverse else "favourable (good for the person)"),
        ("Bar", bar_words(result)), ("Rows counted", f"{result.total_rows:,}"),
        ("Left out", ", ".join(f"{reason}: {n:,}" for reason, n in result.excluded.items() if n) or "none")])
    out.add("sentences", items=[group_sentence(result, r) for r in result.rows],
            title="Each group against its benchmark")
    out.chart(share_chart(result), "Each group's share with its 95% interval (dot) and its benchmark (diamond).")
    out.table(Table(f"Each group's share of {compared_words(result)} against its benchmark", HEADER,
                    tuple(_row_cells(result, r) for r in result.rows), wide=True))
    out.warnings(notes(result), "The data and the benchmark")
    out.add("caveats", items=method_sentences(result), title="How the numbers are made")
    return out


def slides(result: Any, context: Any = None) -> list[Slide]:
    """One slide: the headline and the largest gaps from the benchmark, in words."""
    rows = sorted((r for r in result.rows if r.verdict is not None and not r.unknown),
                  key=lambda r: -abs(r.difference or 0.0))
    said = (headline(result), *(group_sentence(result, r) for r in rows[:2]))
    return [Slide("Representation against the benchmark", tuple(said), slide_figure(share_chart(result)), FINDING,
                  "representation")]


__all__ = ["headline", "section", "share_chart", "slides"]
