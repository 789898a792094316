"""The report's building blocks: a section is a heading and its blocks (paragraphs, settings, tables,
charts, warnings), rendered by ``templates/report.html.j2``. The other report modules (adjust, regulator,
series, proxy) build their sections from these. Moved out of :mod:`luskin_core.present.report`, which re-exports them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from luskin_core.present.report_figures import safe_figure_dict


@dataclass(frozen=True)
class Chart:
    """One figure of the report with its caption (``figure``: the dict of :func:`safe_figure_dict`)."""

    caption: str
    figure: Any
    html: str = ""
    src: str = ""
    width_pct: int = 100
    alt: str = ""            # the chart's description (chart_text): the image's alternative text, HTML and PDF
    numbers: Any = None      # its numbers as a Table (chart_text), beside it in both


MAX_CELL_CHARS = 300      # a table's cell in the report: one cell of the data (a 50 MB notes field) is cut here
MAX_TEXT_CHARS = 10_000   # any other text the report renders (a sentence, a setting, the appendix's JSON)


def shorten(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how long it was: one value of the data cannot make the report
    (and its PDF's layout) as large as itself."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… (shortened here: {len(text):,} characters)"


@dataclass(frozen=True)
class Table:
    """A table as text cells (the template escapes them, each at most ``MAX_CELL_CHARS``); ``row_classes`` colour
    rows."""

    caption: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    row_classes: tuple[str, ...] = ()
    note: str = ""
    wide: bool = False
    row_header: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "header", tuple(shorten(str(h), MAX_CELL_CHARS) for h in self.header))
        object.__setattr__(self, "rows", tuple(tuple(shorten(c, MAX_CELL_CHARS) if isinstance(c, str) else c
                                                     for c in row) for row in self.rows))
        missing = len(self.rows) - len(self.row_classes)
        if missing:
            object.__setattr__(self, "row_classes", tuple(self.row_classes) + ("",) * missing)


def make_block(kind: str, **fields: Any) -> dict[str, Any]:
    return {"kind": kind, "title": fields.pop("title", ""), **fields}


def settings_block(items: Sequence[tuple[str, Any]]) -> dict[str, Any]:
    return make_block("settings", items=[(str(k), str(v)) for k, v in items if v not in (None, "")])


@dataclass
class Section:
    """One part of the report: a heading and its blocks, in order."""

    anchor: str
    title: str
    blocks: list[dict[str, Any]] = field(default_factory=list)
    css: str = "page"

    def add(self, kind: str, **fields: Any) -> None:
        self.blocks.append(make_block(kind, **fields))

    def chart(self, figure: Any, caption: str) -> None:
        self.blocks.append(make_block("chart", chart=Chart(caption, safe_figure_dict(figure))))

    def table(self, table: Table) -> None:
        self.blocks.append(make_block("table", table=table))

    def warnings(self, items: Sequence[str], title: str = "Warnings") -> None:
        if items:
            self.blocks.append(make_block("warnings", items=list(items), title=title))
