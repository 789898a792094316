"""The tables regulators name: NYC Local Law 144 bias audits and the EEOC Uniform Guidelines.

The code lives in three modules along these seams: :mod:`luskin_core.analyses.regulator_ll144` (Local Law 144),
:mod:`luskin_core.analyses.regulator_eeoc` (the Uniform Guidelines) and
:mod:`luskin_core.analyses.regulator_common` (the input reading and output shape they share). This module
gathers their names, so ``from luskin_core.analyses.regulator import ...`` keeps working.
"""

from __future__ import annotations

from luskin_core.analyses.regulator_common import (
    UNKNOWN_SPELLINGS,
    ShownTable,
    guess_ll144_columns,
    read_summary,
    sufficiency_text,
    unknown_key,
    unknown_keys,
)
from luskin_core.analyses.regulator_eeoc import (
    EEOCOutput,
    EEOCPart,
    EEOCRow,
    build_eeoc,
    eeoc_cells,
    eeoc_frame,
    eeoc_meaning,
    eeoc_output,
    eeoc_part,
    eeoc_rows,
    format_eeoc,
)
from luskin_core.analyses.regulator_ll144 import (
    CROSS,
    EXCLUSION_JUSTIFICATION,
    KIND_TITLES,
    KINDS,
    SMALL_SHARE,
    STATUS_WORDS,
    UNKNOWN_CATEGORY,
    UNKNOWN_WHAT,
    LL144Output,
    LL144Result,
    LL144Row,
    LL144Table,
    bounds_cells,
    build_ll144,
    format_ll144,
    ll144_audit,
    ll144_cells,
    ll144_from_cells,
    ll144_from_count_table,
    ll144_from_counts,
    ll144_from_summary,
    ll144_from_tables,
    ll144_spec,
    ll144_summary_output,
    ll144_table,
    selected_meaning,
)

__all__ = ["CROSS", "EXCLUSION_JUSTIFICATION", "KINDS", "KIND_TITLES", "SMALL_SHARE", "STATUS_WORDS",
           "UNKNOWN_CATEGORY", "UNKNOWN_SPELLINGS", "UNKNOWN_WHAT", "EEOCOutput", "EEOCPart", "EEOCRow", "LL144Output",
           "LL144Result", "LL144Row", "LL144Table", "ShownTable", "bounds_cells", "build_eeoc", "build_ll144",
           "eeoc_cells", "eeoc_frame", "eeoc_meaning", "eeoc_output", "eeoc_part", "eeoc_rows", "format_eeoc",
           "format_ll144",
           "guess_ll144_columns", "ll144_audit", "ll144_cells", "ll144_from_cells", "ll144_from_count_table",
           "ll144_from_counts", "ll144_from_summary", "ll144_from_tables", "ll144_spec", "ll144_summary_output",
           "ll144_table", "read_summary", "selected_meaning", "sufficiency_text", "unknown_key", "unknown_keys"]
