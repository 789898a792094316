"""The report's regulator sections: a Local Law 144 summary of results and the EEOC table.

Laid out like the summaries of results employers publish under Local Law 144: the data and
the number of individuals assessed, each table's unknown category, then one table each for sex,
race/ethnicity and the intersectional categories (number of applicants, number selected or
scoring above the median, rate, impact ratio, and where a table has unknowns the range of the
impact ratio over them), and the 2% exclusion's justification when used.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from luskin_core.analyses.regulator import (
    KIND_TITLES,
    UNKNOWN_WHAT,
    EEOCRow,
    LL144Result,
    bounds_cells,
    eeoc_cells,
    eeoc_meaning,
    ll144_cells,
)
from luskin_core.formatting import format_percent


def ll144_section(result: LL144Result, data_label: str = "") -> Any:
    """The 'Local Law 144 bias audit' section of the report."""
    from luskin_core.present.report_blocks import Section, Table, _settings

    section = Section("ll144", "NYC Local Law 144 bias audit: summary of results")
    items: list[tuple[str, Any]] = []
    if data_label:
        items.append(("Data", data_label))
    items += [("Individuals assessed", f"{result.assessed:,}"),
              ("Unknown sex or race/ethnicity (not in the intersectional table)", f"{result.unknown_count:,}")]
    if result.no_outcome_count:
        items.append(("Rows with no outcome (not assessed)", f"{result.no_outcome_count:,}"))
    items += [("Rate", result.rate_name + (f": the share scoring strictly above the median score ({result.median:g})"
                                           if result.scoring and result.median is not None else "")),
              ("Impact ratio", "the category's rate divided by the rate of the most selected category")]
    if result.selected_means:
        items.append(("Selected", result.selected_means))
    if result.source == "rows":
        items += [("Sex column", result.sex_column), ("Race/ethnicity column", result.race_column)]
    section.blocks.append(_settings(items))
    selected = "Scored above median" if result.scoring else "# Selected"
    for t in result.tables:
        unknowns = bool(t.unknown_count)
        rows = tuple((r.category, *ll144_cells(result, r), *(bounds_cells(r) if unknowns else ())) for r in t.rows)
        classes = tuple("beyond" if r.below_four_fifths else "" for r in t.rows)
        head: tuple[str, ...] = ("Category", "# of applicants", selected, result.rate_name.capitalize(),
                                 "Impact ratio")
        if unknowns:
            head += ("Range over the unknowns", "Status")
        note = f"Unknown {UNKNOWN_WHAT[t.kind]}: {t.unknown_count:,} (not in this table)."
        if t.reason:
            note += f" No impact ratios: {t.reason}"
        section.table(Table(KIND_TITLES[t.kind] + " categories", head, rows, classes, row_header=True, note=note))
    if result.justification:
        section.add("paragraph", text="Note: " + result.justification)
    section.add("sentences", items=result.sentences(), title="In words")
    return section


def eeoc_section(rows: Sequence[EEOCRow], spec: Any = None) -> Any:
    """The 'EEOC Uniform Guidelines' section: four-fifths beside significance, shortfall and flip."""
    from luskin_core.present.report_blocks import Section, Table

    section = Section("eeoc", "EEOC Uniform Guidelines: four-fifths beside significance")
    table_rows = tuple((r.group if r.cell is None else f"{r.group} ({r.cell})", f"{r.n:,}", format_percent(r.rate),
                        *eeoc_cells(r)) for r in rows)
    classes = tuple("beyond" if r.below_four_fifths else "" for r in rows)
    meaning = eeoc_meaning(spec)
    section.table(Table(f"Against {rows[0].reference}" if rows else "No comparison",
                        ("Group", "Rows", "Rate", "Impact ratio", "Four-fifths", "z (SD)", "Fisher p",
                         "Shortfall to 4/5", "Shortfall to parity", "Flip", "Detectable gap"),
                        table_rows, classes, wide=True, row_header=True,
                        note=(meaning + " " if meaning else "") +
                             "Shortfall: additional selections the group needs (its size unchanged). Flip: moving one "
                             "or two people changes the four-fifths verdict. Detectable gap: the smallest drop below "
                             "the reference's rate seen with 80% power at the 5% level."))
    section.add("sentences", items=[r.sentence for r in rows], title="Where the tests agree and disagree")
    return section


__all__ = ["eeoc_section", "ll144_section"]
