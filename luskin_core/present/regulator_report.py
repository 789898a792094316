"""The report's regulator sections: a Local Law 144 summary of results and the EEOC table.

Laid out like the summaries of results employers publish under Local Law 144: the data and
the number of individuals assessed, the unknown category, then one table each for sex,
race/ethnicity and the intersectional categories (number of applicants, number selected or
scoring above the median, rate, impact ratio), and the 2% exclusion's justification when used.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from luskin_core.analyses.regulator import KIND_TITLES, EEOCRow, LL144Result, eeoc_cells
from luskin_core.formatting import format_number, format_percent


def ll144_section(result: LL144Result, data_label: str = "") -> Any:
    """The 'Local Law 144 bias audit' section of the report."""
    from luskin_core.present.report_blocks import Section, Table, _settings

    section = Section("ll144", "NYC Local Law 144 bias audit: summary of results")
    items: list[tuple[str, Any]] = []
    if data_label:
        items.append(("Data", data_label))
    items += [("Individuals assessed", f"{result.total + result.unknown_count:,}"),
              ("Unknown category (not included in the tables)", f"{result.unknown_count:,}"),
              ("Rate", result.rate_name + (f": the share scoring strictly above the median score ({result.median:g})"
                                           if result.scoring and result.median is not None else "")),
              ("Impact ratio", "the category's rate divided by the rate of the most selected category"),
              ("Sex column", result.sex_column), ("Race/ethnicity column", result.race_column)]
    section.blocks.append(_settings(items))
    selected = "Scored above median" if result.scoring else "# Selected"
    for t in result.tables:
        rows = tuple((r.category, f"{r.n:,}", f"{r.selected:,}", format_percent(r.rate),
                      "excluded (under 2%)" if r.excluded else format_number(r.impact_ratio, 2)) for r in t.rows)
        classes = tuple("beyond" if (r.impact_ratio is not None and r.impact_ratio < 0.8) else "" for r in t.rows)
        section.table(Table(KIND_TITLES[t.kind] + " categories",
                            ("Category", "# of applicants", selected, result.rate_name.capitalize(), "Impact ratio"),
                            rows, classes, row_header=True))
    if result.justification:
        section.add("paragraph", text="Note: " + result.justification)
    section.add("sentences", items=result.sentences(), title="In words")
    return section


def eeoc_section(rows: Sequence[EEOCRow]) -> Any:
    """The 'EEOC Uniform Guidelines' section: four-fifths beside significance, shortfall and flip."""
    from luskin_core.present.report_blocks import Section, Table

    section = Section("eeoc", "EEOC Uniform Guidelines: four-fifths beside significance")
    table_rows = tuple((r.group if r.cell is None else f"{r.group} ({r.cell})", f"{r.n:,}", format_percent(r.rate),
                        *eeoc_cells(r)) for r in rows)
    classes = tuple("beyond" if r.below_four_fifths else "" for r in rows)
    section.table(Table(f"Against {rows[0].reference}" if rows else "No comparison",
                        ("Group", "Rows", "Rate", "Impact ratio", "Four-fifths", "z (SD)", "Fisher p",
                         "Shortfall to 4/5", "Shortfall to parity", "Flip", "Detectable gap"),
                        table_rows, classes, wide=True, row_header=True,
                        note="Shortfall: additional selections the group needs (its size unchanged). Flip: moving one "
                             "or two people changes the four-fifths verdict. Detectable gap: the smallest drop below "
                             "the reference's rate seen with 80% power at the 5% level."))
    section.add("sentences", items=[r.sentence for r in rows], title="Where the tests agree and disagree")
    return section


__all__ = ["eeoc_section", "ll144_section"]
