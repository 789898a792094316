"""What a slide is made of: the slide itself, its kinds, and a chart made fit for a slide.

The deck (:mod:`luskin_core.present.slides`) and each analysis's slides (adjusted gaps, the series,
proxies) build on these, so none of them imports another.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import plotly.graph_objects as go

from luskin_core.present.report_figures import safe_figure

QUESTION, DATA, VERDICT, FINDING, CORRECTION, COST, CAVEATS = (
    "question", "data", "verdict", "finding", "correction", "cost", "caveats")
KINDS = (QUESTION, DATA, VERDICT, FINDING, CORRECTION, COST, CAVEATS)
MAX_FINDINGS = 8  # more findings than this are summarised on the last finding slide (the report has them all)
SLIDE_HEIGHT = 420  # px: a chart and two lines of large text nearly fit a 768-px-high projector
# A slide's text and its chart share a 1024x768 window with the app's menus and sidebar open: about
# 65 characters a line, and a chart stays legible under at most this many lines (measured in Chromium,
# tests/browser/test_present_fit.py); more text and the chart gets a slide of its own.
NARROW_CHARS_PER_LINE = 65
NARROW_TITLE_CHARS = 40   # a title's characters on one line there (32-px bold type)
MAX_LINES_WITH_CHART = 9   # in lines of text: more leaves the chart under 200 px in a 1024x768 window
MAX_TEXT_LINES = 15         # a slide without a chart
# A chart of more horizontal bars than MAX_BAR_TEXTS (a bar per group) needs the slide's height: under more than a
# short caption's lines its group names pile up in a 1024x768 window (12 groups under 7.5 lines did).
MAX_LINES_WITH_TALL_CHART = 3
MAX_AXIS_TITLE_CHARS = 24  # a y-axis title a 250-px-high plot holds
MAX_BAR_TEXTS = 8         # more bars than this on a slide: no text on them (too narrow at 1024 px)
MAX_CAPTION_CHARS = 200   # the sentence repeated over a chart moved to its own slide, when this short


@dataclass(frozen=True)
class Slide:
    """One slide: a title, one to a few plain sentences, an optional chart.

    ``kind`` is one of :data:`KINDS`; ``key`` is stable for the same analysis (e.g.
    ``finding-2``, ``correction-thresholds-1``), so that a slide hidden by the presenter stays
    hidden while the numbers change. ``sentences`` are plain text, not Markdown.
    """

    title: str
    sentences: tuple[str, ...]
    figure: Any
    kind: str
    key: str

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown slide kind {self.kind!r}")

    def to_dict(self) -> dict[str, Any]:
        return {"title": self.title, "sentences": list(self.sentences), "kind": self.kind, "key": self.key,
                "has_figure": self.figure is not None}


def slide_figure(fig: go.Figure, *, keep_title: bool = False) -> go.Figure:
    """A chart for a slide: escaped, its own title dropped (the slide's title says it), a fixed height.

    What a 1024x768 projector cannot hold goes (the table, the hover and the report keep it): a
    bar's rows, and past MAX_BAR_TEXTS bars its share too; ticks that all repeat one "column = "
    say the value only, with the column as the axis title; a panel's note gets room above the plot.
    """
    fig = safe_figure(fig)
    if not keep_title:
        fig.update_layout(title={"text": "", "subtitle": {"text": ""}}, margin={"t": 40})
    fig.update_layout(height=SLIDE_HEIGHT)
    bars = [trace for trace in fig.data if trace.type == "bar"]
    many = sum(len(trace.x) if trace.x is not None else 0 for trace in bars) > MAX_BAR_TEXTS
    for trace in bars:   # a slide's chart may be short: a bar says its share only
        if many:
            trace.text = None
        elif trace.text is not None and not isinstance(trace.text, str):
            trace.text = [str(text).split("<br>")[0].split(" · ")[0] for text in trace.text]
    _value_ticks(fig, bars)
    for axis in ("yaxis", "yaxis2"):   # a rotated axis title longer than a short chart is high
        layout_axis: Any = getattr(fig.layout, axis, None)
        text = layout_axis.title.text if layout_axis is not None and layout_axis.title is not None else None
        if text and len(text) > MAX_AXIS_TITLE_CHARS:
            layout_axis.title.text = axis_title_lines(text)
    legend = fig.layout.legend
    if legend is not None and legend.orientation == "h" and legend.y is not None and legend.y < 0:
        # a legend under the plot, placed in px from the figure's foot (a fraction of the plot's height
        # landed on the axis title when a slide's chart is short)
        titled = bool(fig.layout.xaxis.title.text) if fig.layout.xaxis.title is not None else False
        fig.update_layout(legend={"yref": "container", "y": 0.0, "yanchor": "bottom"},
                          margin={"b": 112 if titled else 84})
    lines = 0
    for note in fig.layout.annotations or ():   # a panel's note above the plot keeps clear of a tall bar's label
        if note.yref == "paper" and note.y == 1.0 and note.yanchor == "bottom":
            note.yshift = 8
            lines = max(lines, str(note.text or "").count("<br>") + 1)
    if lines and not keep_title:
        fig.update_layout(margin={"t": 24 + 22 * lines})
    return fig


def axis_title_lines(text: str, limit: int = MAX_AXIS_TITLE_CHARS) -> str:
    """A long rotated axis title in two whole-word lines of at most ``limit`` characters, never cut mid-word.

    A cut in the middle ("share with de…= Admitted") reads as a mistake; when two lines cannot hold
    it, the title keeps its first line, or none (the slide's title and sentences say what it counts).
    """
    words = str(text).split()
    lines: list[str] = []
    for word in words:
        if lines and len(lines[-1]) + 1 + len(word) <= limit:
            lines[-1] += " " + word
        else:
            lines.append(word)
    if len(lines) <= 2 and all(len(line) <= limit for line in lines):
        return "<br>".join(lines)
    return lines[0] if len(lines[0]) <= limit else ""


def _value_ticks(fig: go.Figure, bars: Sequence[Any]) -> None:
    """Category ticks that all read "column = value" show the value only, the column as the axis title."""
    categories = list(dict.fromkeys(str(x) for trace in bars if trace.x is not None for x in trace.x))
    if len(categories) < 2 or any(" = " not in c for c in categories):
        return
    prefix = categories[0].split(" = ")[0] + " = "
    if not all(c.startswith(prefix) for c in categories):
        return
    fig.update_xaxes(tickmode="array", tickvals=categories, ticktext=[c[len(prefix):] for c in categories],
                     title_text=prefix[:-3])


def text_lines(slide: Slide, chars_per_line: int = NARROW_CHARS_PER_LINE) -> float:
    """The height of the slide's words in a narrow window, in lines of slide text.

    Each sentence is a paragraph (half a line of space after it); a title's second and later lines
    are one and a half lines each (larger type).
    """
    lines = sum(-(-max(len(s), 1) // chars_per_line) + 0.5 for s in slide.sentences)
    title = -(-max(len(slide.title), 1) // NARROW_TITLE_CHARS)
    return lines + 1.5 * (title - 1)


def bar_rows(figure: Any) -> int:
    """The most horizontal bars one trace of the chart draws, one above the other (0 for none)."""
    if figure is None:
        return 0
    return max((len(trace.y) for trace in figure.data
                if trace.type == "bar" and trace.orientation == "h" and trace.y is not None), default=0)


def fit_for_projector(slides: Sequence[Slide]) -> list[Slide]:
    """The deck with every long-text slide's chart on a slide of its own, right after it.

    Three findings and a chart do not fit a 1024x768 window with the menus shown, nor a chart of many groups
    under more than a caption: the chart is squeezed until its labels pile up. Nothing is dropped: the text
    stays whole on its slide, and the chart follows under the same title, with the first sentence when it is
    short.
    """
    out: list[Slide] = []
    for slide in slides:
        room = MAX_LINES_WITH_CHART if bar_rows(slide.figure) <= MAX_BAR_TEXTS else MAX_LINES_WITH_TALL_CHART
        if slide.figure is None or text_lines(slide) <= room:
            out.append(slide)
            continue
        first = slide.sentences[0] if slide.sentences and len(slide.sentences[0]) <= MAX_CAPTION_CHARS else None
        out.append(replace(slide, figure=None))
        out.append(replace(slide, title=f"{slide.title}, in a chart", sentences=(first,) if first else (),
                           key=f"{slide.key}-chart"))
    return out
