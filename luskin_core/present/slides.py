"""Presentation mode: the current analysis as a sequence of slides for a committee.

:func:`build_slides` turns the results already computed (the audit, and whichever corrections
were run) into :class:`Slide` objects: the question; the data and who is compared; the verdict
and then one finding per slide (a chart and its plain sentence); what each correction did and
what it cost, then the cost of every correction on one chart (:mod:`luskin_core.corrections.cost`); the
caveats (small groups, chance, many comparisons, Simpson's paradox) and the corrections'
warnings. The words come from the same functions as the report (:mod:`luskin_core.present.report`), so
the deck and the document never disagree.

Slide text is plain text (the dashboard escapes it before showing it); every figure is built by
Luskin's chart builders, which escape user strings, and passed through the report's second line
of defence (:func:`luskin_core.present.report.safe_figure`). No Streamlit here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import plotly.graph_objects as go

from luskin_core.analyses.audit import AuditResult
from luskin_core.analyses.narrative import group_words
from luskin_core.corrections.cost import CostPoint, cost_points
from luskin_core.formatting import format_percent
from luskin_core.present.cost_plots import cost_chart
from luskin_core.present.report import (
    DatasetRef,
    caveat_sentences,
    correction_warnings,
    cost_sentences,
    question_items,
    sort_results,
    spec_in_words,
)
from luskin_core.present.report_parts import PartContext, part_slides
from luskin_core.present.slide_blocks import (
    CAVEATS,
    CORRECTION,
    COST,
    DATA,
    FINDING,
    KINDS,
    MAX_FINDINGS,
    MAX_TEXT_LINES,
    QUESTION,
    SLIDE_HEIGHT,
    VERDICT,
    Slide,
    fit_for_projector,
    slide_figure,
    text_lines,
)

MAX_LISTED_GROUPS = 6   # more groups than this: the data slide gives the smallest and the largest
SLIDE_NAME_CHARS = 48   # a longer group or stratum name is shortened in a slide's words


def _label(value: Any) -> str:
    """A user string made safe for plotly labels (the same rule as :func:`luskin_core.present.plots.label`)."""
    from luskin_core.present.plots import label

    return label(value)


def _shares_chart(bars: Sequence[tuple[str, str, float | None, float | None, float | None, int]],
                  colors: Mapping[str, str], outcome: str) -> go.Figure:
    """Grouped bars: the share with the positive outcome per group (and cell), 95% whiskers, from zero.

    ``bars`` holds (cell, group, share, ci_low, ci_high, rows); names are user text and are escaped.
    """
    from luskin_core.present.plots import FONT_SIZE, short_label

    fig = go.Figure()
    for group in dict.fromkeys(b[1] for b in bars):   # names shortened on the chart, whole in the hover
        mine = [b for b in bars if b[1] == group]
        shares = [b[2] if b[2] is not None else 0.0 for b in mine]
        fig.add_trace(go.Bar(
            name=short_label(group), x=[short_label(b[0], 40) for b in mine], y=shares,
            marker_color=colors.get(group, "#555555"), hoverinfo="text",
            hovertext=[f"{_label(group)}<br>{_label(b[0])}: {_label(outcome)} for {format_percent(b[2], 0)} "
                       f"of {b[5]:,} rows" for b in mine],
            error_y={"type": "data", "visible": True, "color": "#333333", "thickness": 2, "width": 8,
                     "array": [(b[4] - b[2]) if b[2] is not None and b[4] is not None else 0.0 for b in mine],
                     "arrayminus": [(b[2] - b[3]) if b[2] is not None and b[3] is not None else 0.0 for b in mine]},
            text=[f"{format_percent(b[2], 0)}<br>n = {b[5]:,}" for b in mine], textposition="inside",
            insidetextanchor="start", textfont={"size": FONT_SIZE},
        ))
    top = max([b[4] for b in bars if b[4] is not None] or [1.0])
    fig.update_layout(barmode="group", bargap=0.25, template="plotly_white", height=SLIDE_HEIGHT,
                      font={"size": FONT_SIZE + 2, "family": "Arial, Helvetica, sans-serif"},
                      margin={"t": 20, "l": 80, "r": 20, "b": 60},
                      legend={"orientation": "h", "y": 1.02, "yanchor": "bottom", "x": 0})
    # no axis title: the slide's sentence says what is counted, and a text-heavy slide leaves the chart
    # too short for one (it ran past the chart's edge); the hover says it too
    fig.update_yaxes(tickformat=".0%", range=[0, min(1.0, top * 1.15) if top > 0 else 1.0])
    return fig


# -- the slides ----------------------------------------------------------------------------
def _question_slides(result: AuditResult, dataset: DatasetRef | None) -> list[Slide]:
    spec = result.spec
    asked = dict(question_items(result, dataset))
    settings = dict(spec_in_words(spec, result.reference, result.class_names))
    who = (f"each {' × '.join(spec.group_by)} group and {result.reference}" if spec.group_mode == "columns"
           else f"{result.class_names.group} and {result.class_names.other}")
    if spec.prediction is None:
        question = f"Is the share of rows where {spec.outcome_text} the same for {who}, {asked['Where']}?"
    else:
        question = (f"Do the decisions in '{spec.prediction}' treat {who} alike (checked against "
                    f"{spec.outcome_text}), {asked['Where']}?")
    out = [Slide("The question", (question, spec.meaning_text, f"Fair means: {settings['Tolerance']}."), None,
                 QUESTION, "question")]
    rows = f"{result.n_rows:,} rows audited"
    if result.n_excluded:
        why = "; ".join(f"{reason}: {count:,}" for reason, count in result.excluded_reasons.items())
        rows += f", {result.n_excluded:,} left out" + (f" ({why})" if why else "")
    data = [f"Data: {dataset.label if dataset is not None else result.source}, {rows}."]
    if spec.group_mode == "columns":
        data.append(f"Groups: {settings['Groups']}; reference: {result.reference}.")
    else:
        data.append(f"{settings['Protected group']}; compared with {settings['Compared with']}.")
    cells = settings.get("Filter (like compared with like)") or settings.get("Strata (like compared with like)")
    if cells and spec.cell_mode != "none":
        data.append(f"Like is compared with like: {cells}.")
    if result.cells:
        sizes = [(name, sum(c.n for c in result.cells if c.label == name))
                 for name in dict.fromkeys(c.label for c in result.cells)]
    else:
        sizes = [(g, sum(c.n for c in result.comparisons if c.group == g)) for g in result.groups]
    if len(sizes) > MAX_LISTED_GROUPS:   # a committee hears the range; the report lists them all
        (small, fewest), (large, most) = min(sizes, key=lambda s: s[1]), max(sizes, key=lambda s: s[1])
        data.append(f"Rows per group: {len(sizes)} groups, from {fewest:,} ({small}) to {most:,} ({large}); "
                    "the report lists every group.")
    elif sizes:
        data.append("Rows per group: " + ", ".join(f"{g} {n:,}" for g, n in sizes) + ".")
    out.append(Slide("The data and who is compared", tuple(data), None, DATA, "data"))
    return out


def _cut_words(text: str, limit: int) -> str:
    """The text's start, cut at a word's end and marked with an ellipsis, when longer than ``limit``."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return text
    head = flat[:limit - 1]
    if " " in head and not flat[limit - 1].isspace():
        head = head[:head.rindex(" ")]
    return head.rstrip(" ,;:(") + "…"


def _short_names(result: AuditResult) -> dict[str, str]:
    """Group and stratum names too long for a slide's sentence, each with its shortened form.

    A crossed name is shortened part by part, each to its first words (where people tell names
    apart: "Black or African…", "Midwest census…"); names that would read alike keep more words.
    """
    names = sorted({*result.groups, result.reference or "", *(c.label for c in result.cells),
                    *(str(c.cell) for c in result.comparisons)} - {""})
    long = [n for n in names if len(n) > SLIDE_NAME_CHARS]
    for limit in (SLIDE_NAME_CHARS, 2 * SLIDE_NAME_CHARS, 4 * SLIDE_NAME_CHARS):
        out = {}
        for name in long:
            parts = name.split(" × ")
            out[name] = " × ".join(_cut_words(part, max(limit // len(parts), 12)) for part in parts)
        if len(set(out.values()) | (set(names) - set(long))) == len(names):   # still told apart
            return out
    return {}


def with_short_names(slides: Sequence[Slide], names: Mapping[str, str]) -> list[Slide]:
    """The slides with every long name in their titles and sentences replaced by its short form.

    The deck says so on its data slide; the report, the tables and the charts' hover keep the names
    whole. Longest names first, so that a name inside a longer one is not cut twice.
    """
    if not names:
        return list(slides)
    order = sorted(names, key=len, reverse=True)

    def cut(text: str) -> str:
        for name in order:
            text = text.replace(name, names[name])
        return text

    out = []
    for slide in slides:
        sentences = tuple(cut(s) for s in slide.sentences)
        if slide.kind == DATA:
            sentences += ("Long names are shortened on the slides (… marks the cut); the report has them whole.",)
        out.append(replace(slide, title=cut(slide.title), sentences=sentences))
    return out


def _fitting(sentences: Sequence[str]) -> tuple[str, ...]:
    """The first sentences, as many as a slide holds in a narrow window (always the first)."""
    kept: list[str] = []
    for sentence in sentences:
        lines = text_lines(Slide("What we found", (*kept, sentence), None, VERDICT, "fit"))
        if kept and lines > MAX_TEXT_LINES:
            break
        kept.append(sentence)
    return tuple(kept)


def _overall_chart(result: AuditResult) -> go.Figure:
    from luskin_core.present import plots
    from luskin_core.present.audit_plots import audit_figures

    if result.cells:
        return plots.audit_bars(result)
    return audit_figures(result)[0][1]


def _finding_slides(result: AuditResult) -> list[Slide]:
    from luskin_core.present.audit_plots import group_colors, overall_vs_within
    from luskin_core.present.plots import class_colors

    spec = result.spec
    from luskin_core.analyses.findings import UNKNOWN_GROUPS
    from luskin_core.analyses.findings import findings as ranked

    found = ranked(result)
    # the groups of unknown category are said last on the slide, where it has room, and get no slide of their own
    said = [f.sentence for f in found if f.kind != UNKNOWN_GROUPS]
    apart = [f.sentence for f in found if f.kind == UNKNOWN_GROUPS]
    known = result.of_known_groups()
    out = [Slide("What we found", _fitting([*said[:3 - len(apart)], *apart]) or (result.headline(),),
                 slide_figure(_overall_chart(known)), VERDICT, "verdict")]
    findings: list[tuple[str, str, go.Figure | None]] = []
    if result.gaps:
        colors = class_colors(result.class_names.group, result.class_names.other)
        for gap in result.gaps:
            cells = [c for c in result.cells if c.filter_holds == gap.filter_holds]
            bars = [(c.cell, c.label, c.ratio, c.ci_low, c.ci_high, c.n) for c in cells]
            title = "All rows" if gap.filter_holds is None else f"Where {gap.cell}"
            findings.append((title, gap.sentence, _shares_chart(bars, colors, spec.outcome_text) if bars else None))
    else:
        colors = group_colors(result)
        several = len(result.cell_names) > 1
        for p in known.pooled:
            mine = [c for c in result.comparisons if c.group in (p.group, result.reference)]
            bars = [(c.cell or "All rows", c.group, c.rate, c.ci_low, c.ci_high, c.n) for c in mine]
            sentence = result.pooled_sentence(p) if several else result.sentence(result.comparison(p.group))
            findings.append((f"{group_words(p.group, spec)} against {group_words(result.reference, spec)}", sentence,
                             _shares_chart(bars, colors, spec.outcome_text)))
    shown = findings[:MAX_FINDINGS]
    for number, (title, sentence, figure) in enumerate(shown, 1):
        extra: tuple[str, ...] = ()
        if number == len(shown) and len(findings) > len(shown):
            extra = (f"... and {len(findings) - len(shown)} more findings in the report.",)
        out.append(Slide(title, (sentence, *extra), figure, FINDING, f"finding-{number}"))
    if len(result.cell_names) > 1 and known.pooled:
        words = tuple(dict.fromkeys([result.pooled_sentence(p) for p in known.pooled[:3]]
                                    + [n for p in known.pooled for n in result.notes(p)]))
        title = "Simpson's paradox: overall and within the strata disagree" if result.simpson else \
            "Overall and within the strata"
        out.append(Slide(title, words[:4], slide_figure(overall_vs_within(result)), FINDING, "overall-vs-within"))
    return out


def _series_sentences(points: Sequence[CostPoint], series: str) -> tuple[str, ...]:
    mine = [p for p in points if p.series == series]
    return tuple(cost_sentences(mine)) if mine else ()


def _warning_sentences(result: Any) -> tuple[str, ...]:
    """A correction's warnings (from the result's ``.correction``, the shape every correction shares)."""
    return tuple(f"Warning: {w}" for w in correction_warnings(result.correction))


def _correction_slides(spec: Any, retrains: Sequence[Any], reports: Sequence[Any], sweeps: Sequence[Any],
                       points: Sequence[CostPoint]) -> list[Slide]:
    from luskin_core.present import plots
    from luskin_core.spec.options import ALGORITHM_NAMES

    out = []
    for i, result in enumerate(retrains, 1):
        o = result.options
        figure = slide_figure(plots.retrain_gaps(result)) if result.original.gaps else None
        words = _series_sentences(points, f"retrain-{i}") + _warning_sentences(result)
        out.append(Slide(f"Correction: relabel and retrain ({o.first} then {o.second})",
                         words or (f"{ALGORITHM_NAMES[o.algorithm]}.",), figure, CORRECTION, f"correction-retrain-{i}"))
    for i, report in enumerate(reports, 1):
        words = _series_sentences(points, f"thresholds-{i}") + _warning_sentences(report)
        out.append(Slide(f"Correction: one threshold per group (lambda {report.lam:g})",
                         words or ("Each group gets its own threshold.",),
                         slide_figure(plots.threshold_roc(report, spec, "test")), CORRECTION,
                         f"correction-thresholds-{i}"))
    for i, sweep in enumerate(sweeps, 1):
        sweep_points = list(sweep.points)
        alphas = [p.alpha for p in sweep_points]
        alpha = getattr(sweep, "shown_alpha", None)   # a sweep kept before it had one: none marked
        chosen = sweep.point(alpha).alpha if alpha is not None else None
        figure = plots.alpha_gaps(alphas, [p.tpr_gap for p in sweep_points], [p.fpr_gap for p in sweep_points], chosen)
        words = _series_sentences(points, f"equalized-{i}") + _warning_sentences(sweep)
        out.append(Slide("Correction: equalized score distributions", words or ("The sweep has no point.",),
                         slide_figure(figure), CORRECTION, f"correction-equalized-{i}"))
    if points:
        figure = slide_figure(cost_chart(points)) if any(p.gap is not None for p in points) else None
        out.append(Slide("What each correction costs", tuple(cost_sentences(points)) or
                         ("No correction could be measured before and after.",), figure, COST, "cost"))
    return out


def _caveat_slide(result: AuditResult, retrains: Sequence[Any], reports: Sequence[Any],
                  sweeps: Sequence[Any]) -> Slide:
    caveats = list(caveat_sentences(result))
    if result.spec.cell_mode == "none":
        caveats.append("Nothing is held equal between the groups: other differences between them may explain part "
                       "of the gap (a filter compares like with like).")
    for obj in (*retrains, *reports, *sweeps):
        caveats += [w for w in _warning_sentences(obj) if w not in caveats]
    return Slide("Read with care", tuple(caveats), None, CAVEATS, "caveats")


def build_slides(results: Sequence[Any], *,
                 dataset: DatasetRef | Mapping[str, Any] | str | None = None) -> list[Slide]:
    """The deck for ``results``, in the order a committee hears it.

    ``results`` holds the audit result and any other results in one list, as
    :func:`luskin_core.present.report.report_content` takes them: the corrections (a sweep's chart marks its
    ``shown_alpha``, the alpha on screen) and every result registered in :mod:`luskin_core.present.report_parts`,
    each bringing the slides its line there names (placed after the findings by the same rank as its report
    section; a result shown in the report only adds none). ``dataset`` names the data.
    """
    result, retrains, reports, sweeps, parts = sort_results(
        results, missing="There is nothing to present yet: run the audit first.")
    ref = DatasetRef.coerce(dataset) if dataset is not None else None
    points = cost_points(retrains, reports, sweeps)
    slides = _question_slides(result, ref)
    slides += _finding_slides(result)
    slides += part_slides(parts, PartContext(result, ref.label if ref else ""))
    slides += _correction_slides(result.spec, retrains, reports, sweeps, points)
    slides.append(_caveat_slide(result, retrains, reports, sweeps))
    return fit_for_projector(with_short_names(slides, _short_names(result)))


def visible(slides: Sequence[Slide], hidden: Sequence[str] | set[str] | frozenset[str]) -> list[Slide]:
    """The slides that are shown: every slide whose key the presenter has not hidden."""
    gone = set(hidden)
    return [s for s in slides if s.key not in gone]


__all__ = ["KINDS", "MAX_FINDINGS", "Slide", "build_slides", "visible"]
