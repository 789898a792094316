"""The report's regulator sections, one shape for every regulator table (Local Law 144, EEOC, the next).

Each regulator output (:mod:`luskin_core.analyses.regulator_tables`) gives its settings, notes, tables as
text and sentences; this lays them out: the Local Law 144 summary like the summaries of results employers
publish (the data, individuals assessed, each table's unknown category, one table each for sex,
race/ethnicity and the intersectional categories, and where a table has unknowns the range of the impact
ratio over them), the EEOC table with four-fifths beside significance, shortfall and flip.
"""

from __future__ import annotations

from typing import Any

from luskin_core.analyses.regulator import LL144Output, LL144Result


def regulator_section(output: Any, data_label: str = "") -> Any:
    """The report section of any regulator output."""
    from luskin_core.present.report_blocks import Section, Table, settings_block

    section = Section(output.anchor, output.section_title)
    settings = output.settings(data_label)
    if settings:
        section.blocks.append(settings_block(settings))
    for note in output.notes():
        section.add("paragraph", text=note)
    if output.intro():
        section.add("sentences", items=output.intro(), title="What the data could show")
    for t in output.tables():
        if t.intro:
            section.add("sentences", items=list(t.intro), title=f"{t.title}: what the data could show")
        note = t.note + (f" No impact ratios: {t.reason}" if t.reason else "")
        if t.rows:
            section.table(Table(t.title, t.header, t.rows, tuple("beyond" if f else "" for f in t.flagged),
                                note=note, wide=t.wide, row_header=True))
        else:
            section.add("paragraph", text=f"{t.title}: {note}")
    section.add("sentences", items=output.sentences(), title=output.sentences_title)
    return section


def ll144_section(result: LL144Result, data_label: str = "") -> Any:
    """The 'Local Law 144 bias audit' section of the report (the tables alone, no audit beside them)."""
    return regulator_section(LL144Output(result), data_label)


__all__ = ["ll144_section", "regulator_section"]
