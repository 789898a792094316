"""What a slide is made of: the slide itself, its kinds, and a chart made fit for a slide.

The deck (:mod:`luskin_core.present.slides`) and each analysis's slides (adjusted gaps, the series,
proxies) build on these, so none of them imports another.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go

from luskin_core.present.report_figures import safe_figure

QUESTION, DATA, VERDICT, FINDING, CORRECTION, COST, CAVEATS = (
    "question", "data", "verdict", "finding", "correction", "cost", "caveats")
KINDS = (QUESTION, DATA, VERDICT, FINDING, CORRECTION, COST, CAVEATS)
MAX_FINDINGS = 8  # more findings than this are summarised on the last finding slide (the report has them all)
SLIDE_HEIGHT = 420  # px: a chart and two lines of large text nearly fit a 768-px-high projector


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


def _slide_figure(fig: go.Figure, *, keep_title: bool = False) -> go.Figure:
    """A chart for a slide: escaped, its own title dropped (the slide's title says it), a fixed height."""
    fig = safe_figure(fig)
    if not keep_title:
        fig.update_layout(title={"text": "", "subtitle": {"text": ""}}, margin={"t": 40})
    fig.update_layout(height=SLIDE_HEIGHT)
    for trace in fig.data:   # a slide's chart may be short: a bar says its share only (rows in the hover)
        if trace.type == "bar" and trace.text is not None and not isinstance(trace.text, str):
            trace.text = [str(text).split("<br>")[0].split(" · ")[0] for text in trace.text]
    for note in fig.layout.annotations or ():   # a panel's note above the plot keeps clear of a tall bar's label
        if note.yref == "paper" and note.y == 1.0 and note.yanchor == "bottom":
            note.yshift = 8
    return fig
