"""A report section as plain text: what the command line prints for an analysis made from the table.

A result's report section (:class:`~luskin_core.present.report_blocks.Section`) is its one view: the report
renders it to HTML and PDF, the dashboard's page made from the analyses' table to Streamlit
(``luskin_app.section_view``), and this module to the terminal. Charts are given by their caption and their
numbers (the table every chart carries beside it), so nothing is lost on a screen without graphics.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from luskin_core.present.report_blocks import Section, Table


def table_text(table: Table) -> list[str]:
    """A table as aligned text, its caption above and its note below."""
    from luskin_core.formatting import format_table

    lines = [table.caption] if table.caption else []
    if table.rows:
        lines.append(format_table([list(r) for r in table.rows], list(table.header)))
    else:
        lines.append("(no rows)")
    if table.note:
        lines.append(table.note)
    return lines


def _items(title: str, items: Iterable[Any], mark: str = "-") -> list[str]:
    head = [title] if title else []
    return head + [f"{mark} {item}" for item in items]


def block_text(block: dict[str, Any]) -> list[str]:
    """One block of a section as lines of text ('' where a block has nothing to say in words)."""
    kind = block["kind"]
    title = block.get("title", "")
    if kind in ("paragraph", "lead", "missing"):
        return [str(block["text"])]
    if kind == "subheading":
        return ["", str(block["text"])]
    if kind == "settings":
        width = max((len(k) for k, _ in block["items"]), default=0)
        return _items(title, (f"{k.ljust(width)}  {v}" for k, v in block["items"]), " ")
    if kind in ("sentences", "caveats"):
        return _items(title, block["items"])
    if kind == "warnings":
        return _items(title or "Warnings", block["items"], "!")
    if kind in ("table", "details"):
        return ([title] if title and kind == "details" else []) + table_text(block["table"])
    if kind == "chart":
        chart = block["chart"]
        return [f"[chart] {chart.caption}"]
    if kind == "json":
        return []
    return []


def section_text(section: Section) -> str:
    """The whole section as text: its title underlined, then each block with a blank line between."""
    lines = [section.title, "=" * min(len(section.title), 100)]
    for block in section.blocks:
        text = block_text(block)
        if text:
            lines += [*text, ""]
    return "\n".join(lines).rstrip() + "\n"


__all__ = ["block_text", "section_text", "table_text"]
