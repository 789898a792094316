"""A report section drawn on a page: what the page made from an analysis' line of the table shows.

A result's report section (:class:`~luskin_core.present.report_blocks.Section`) is its one view; the report draws
it to HTML and PDF, the command line to text, and this module with Streamlit: paragraphs and sentences as escaped
text, settings as a two-column table, tables as grids, charts as Plotly charts with their numbers in a table
beside them. Every user-supplied string is escaped (``ui.md``).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from luskin_core.present.report_blocks import Section, Table

from . import ui


def _table_frame(table: Table) -> pd.DataFrame:
    return pd.DataFrame([list(r) for r in table.rows], columns=list(table.header), dtype=object)


def _render_table(table: Table, key: str) -> None:
    if table.caption:
        st.markdown(f"**{ui.md(table.caption)}**")
    st.dataframe(_table_frame(table), hide_index=True, key=key)
    if table.note:
        st.caption(ui.md(table.note))


def _render_chart(chart: Any, key: str) -> None:
    import plotly.graph_objects as go

    figure = go.Figure(chart.figure) if isinstance(chart.figure, dict) else chart.figure
    ui.chart(figure, key=key, fit=False, width="stretch")
    if chart.caption:
        st.caption(ui.md(chart.caption))


def render_section(section: Section, key: str) -> None:
    """Draw every block of ``section``; ``key`` makes the widgets' keys unique on the page."""
    for i, block in enumerate(section.blocks):
        kind, title, where = block["kind"], block.get("title", ""), f"{key}_{i}"
        if kind in ("paragraph", "missing"):
            st.markdown(ui.md(block["text"]))
        elif kind == "lead":
            st.header(ui.md(block["text"]))
        elif kind == "subheading":
            st.markdown(f"### {ui.md(block['text'])}")
        elif kind == "settings":
            st.dataframe(pd.DataFrame(block["items"], columns=["Setting", "Value"], dtype=object), hide_index=True,
                         key=where)
        elif kind in ("sentences", "caveats"):
            if title:
                st.markdown(f"**{ui.md(title)}**")
            st.markdown(ui.bullet_list(block["items"]))
        elif kind == "warnings":
            st.warning(ui.bullet_list(block["items"]), icon=ui.ICONS["beyond"])
        elif kind == "table":
            _render_table(block["table"], where)
        elif kind == "details":
            with st.expander(ui.md(title or "Details")):
                _render_table(block["table"], where)
        elif kind == "chart":
            _render_chart(block["chart"], where)


__all__ = ["render_section"]
