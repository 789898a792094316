"""The tables regulators name: NYC Local Law 144 bias audits and the EEOC Uniform Guidelines.

**Local Law 144** (NYC DCWP rules, 6 RCNY §5-300/5-301). Per category: the number of
individuals, the number selected, the selection rate (or, for a score, the *scoring rate*: the
share scoring strictly above the median score of the whole sample) and the impact ratio (the
rate divided by the rate of the most selected category), computed separately for sex, for
race/ethnicity and for the intersectional categories (sex × race/ethnicity). Each table has
its own unknown category (``unknown_count``): the individuals whose characteristic(s) for that
table are missing, in none of its categories. A category under 2% of the data may be left out of the impact ratios
(``exclude_small=True``) with the justification shown; its n and rate are still reported.

**EEOC Uniform Guidelines** (29 CFR 1607.4(D)). Per comparison: the four-fifths rule beside
the two-standard-deviations test (the pooled two-proportion z statistic in standard
deviations) and Fisher's exact test; the *shortfall* (the smallest whole number of additional
selections in the group for its rate to reach four-fifths of the reference's rate, and the
reference's rate, the group's size unchanged; 0 when already there) and the *flip test* (true
when moving one or two people, in the group or in the reference, between selected and not
selected changes the four-fifths verdict).

Everything is computed from counts with whole-number arithmetic where the rules are
thresholds (5 x selected_g x n_ref < 4 x selected_ref x n_g is "below four-fifths"), so the
verdicts do not depend on float rounding.

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
           "eeoc_cells", "eeoc_frame", "eeoc_meaning", "eeoc_part", "eeoc_rows", "format_eeoc", "format_ll144",
           "guess_ll144_columns", "ll144_audit", "ll144_cells", "ll144_from_cells", "ll144_from_count_table",
           "ll144_from_counts", "ll144_from_summary", "ll144_from_tables", "ll144_spec", "ll144_summary_output",
           "ll144_table", "read_summary", "selected_meaning", "sufficiency_text", "unknown_key", "unknown_keys"]
