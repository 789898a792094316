"""Adjusted gaps page: each group's gap once many controls are held equal, and how much they explain.

Thin: the controls are picked from dropdowns, the analyses' table's entry (``run(data, spec, options)``) fits
(cached on the data, the specification and the options), and the core's charts and sentences are drawn. The
groups, the reference and the tolerance are the audit's (chosen on the Data and Audit pages).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from luskin_app import choices as ch_
from luskin_app import dataset, ui
from luskin_app.analysis_page import run_entry
from luskin_app.cache import options_key, remember, shared
from luskin_core.analyses.adjust import AdjustResult
from luskin_core.analyses.adjust_reading import code_controls
from luskin_core.present.adjust_plots import adjusted_gaps_chart, explained_chart
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.spec.options import AdjustOptions

NO_CLUSTER = "(no clustering)"


@shared(show_spinner=False, max_entries=32)
def _adjust_cached(fingerprint: str, spec_json: str, options_json: str, _data: Any,
                   _options: AdjustOptions) -> AdjustResult:
    """The adjusted gaps (the analyses' table's entry, on the rows or inside a configured source's engine); cached
    on the data, the specification and the options."""
    result: AdjustResult = run_entry("adjusted", _data, AuditSpec.from_json(spec_json), _options)
    return result


@shared(show_spinner=False, max_entries=32)
def _codes_cached(fingerprint: str, spec_json: str, columns: tuple[str, ...], _frame: pd.DataFrame) -> tuple[str, ...]:
    """The numeric columns the one rule reads as categories (as the Audit and the Scan read them)."""
    return code_controls(_frame, AuditSpec.from_json(spec_json), columns)


def _candidates(spec: AuditSpec, frame: pd.DataFrame) -> list[str]:
    """Columns that may be held equal: not the outcome, not the columns that form the groups."""
    banned = {spec.outcome.lower()} | {c.lower() for c in spec.group_by}
    if spec.protected is not None:
        banned.add(spec.protected.column.lower())
    return [str(c) for c in frame.columns if str(c).lower() not in banned]


def render_options(spec: AuditSpec, frame: pd.DataFrame) -> dict[str, Any]:
    columns = _candidates(spec, frame)
    left, right = st.columns([2, 1])
    with left:
        controls = st.multiselect("Controls held equal", columns, key="adj_controls", format_func=ui.option_text,
                                  help="Legitimate factors to hold equal (e.g. debt-to-income, grade, tenure). Text "
                                       "columns and number codes with few values (an education code 0-5) enter as "
                                       "categories, as the Audit and the Scan read them; numbers with many values "
                                       "as straight lines.")
        numeric = [c for c in controls if ch_.is_numeric(frame[c])]
        codes = (ui.guarded(_codes_cached, dataset.dataset().fingerprint, spec.to_json(), tuple(numeric), frame,
                            where="adjusted") or ()) if numeric else ()
        as_numbers = st.multiselect("Number codes to fit as straight lines", [c for c in numeric if c in codes],
                                    key="adj_as_numbers", format_func=ui.option_text,
                                    help="Read as categories by default (each value its own effect); chosen here, "
                                         "one straight line through the codes instead.")
        categorical = st.multiselect("Numeric columns to treat as categories",
                                     [c for c in numeric if c not in codes], key="adj_categorical",
                                     format_func=ui.option_text,
                                     help="e.g. a branch number with many values: each value gets its own effect.")
        binned = st.multiselect("Numeric controls to cut into bins", [c for c in numeric if c not in categorical],
                                key="adj_binned", format_func=ui.option_text,
                                help="Instead of a straight line, each bin of equal shares of rows gets its own "
                                     "effect (for a control whose effect bends, such as age).")
        # seeded, not given a value: a kept setting (luskin_app/keys.py PAGE_SETTINGS) is in the session state
        # already, and a widget given both warns in the server's log
        ch_.seed("adj_n_bins", 5)
        n_bins = st.number_input("Bins per control", min_value=2, max_value=50, step=1, key="adj_n_bins",
                                 disabled=not binned)
        curved = st.multiselect("Numeric controls to fit as curves",
                                [c for c in numeric if c not in categorical and c not in binned], key="adj_curved",
                                format_func=ui.option_text,
                                help="A smooth curve instead of a straight line (a restricted cubic spline, straight "
                                     "beyond its outer knots): for a control whose effect bends, without the steps "
                                     "of bins.")
        ch_.seed("adj_n_knots", 4)
        n_knots = st.number_input("Knots per curve", min_value=3, max_value=7, step=1, key="adj_n_knots",
                                  disabled=not curved,
                                  help="More knots bend more freely; 4 suits most controls, 5 large data.")
    with right:
        cluster = st.selectbox("Cluster the standard errors by", [NO_CLUSTER, *columns], key="adj_cluster",
                               format_func=ui.option_text,
                               help="Rows of one branch, precinct or office may share unmeasured causes: clustering "
                                    "widens the intervals accordingly.")
    return {"controls": [c for c in controls if c not in categorical and c not in binned and c not in curved],
            "categorical": list(categorical), "as_numbers": [c for c in as_numbers if c in controls],
            "bins": {c: int(n_bins) for c in binned},
            "splines": {c: int(n_knots) for c in curved},
            "cluster": None if cluster == NO_CLUSTER else cluster}


def render_result(result: AdjustResult) -> None:
    flagged = result.flagged
    if flagged:
        st.warning(ui.md(f"{len(flagged)} of {len(result.gaps)} groups still differ from {result.reference} by at "
                         "least the tolerance once the controls are held equal, and not by chance (flagged)."),
                   icon=ui.ICONS["beyond"])
    else:
        st.success(ui.md(f"No group's adjusted gap to {result.reference} is both at least the tolerance and "
                         "beyond chance."), icon=ui.ICONS["ok"])
    st.markdown(ui.bullet_list(g.sentence for g in result.gaps))
    ui.chart(adjusted_gaps_chart(result), key="adj_gaps_chart")
    ui.chart(explained_chart(result), key="adj_explained_chart")
    # in words (points, p-values, no column names), in two tables that each fit 1024 px: the gaps and verdicts,
    # then the rest of the numbers
    table = result.table()
    main, more = list(table.columns[:4]) + ["Verdict"], [table.columns[0], *table.columns[4:8]]
    widths = dict(zip(main, (110, 110, 130, 120, 230))) | dict(zip(more[1:], (170, 80, 120, 130)))
    ui.grid(table[main], hide_index=True, key="adj_table",
            column_config={c: st.column_config.TextColumn(width=w) for c, w in widths.items() if c in main})
    with st.expander("More numbers: p-value, odds ratio, the explained and unexplained parts"):
        ui.grid(table[more], hide_index=True, key="adj_table_more",
                column_config={c: st.column_config.TextColumn(width=w) for c, w in widths.items() if c in more})
    for sentence in result.diagnostics:
        st.info(ui.md(sentence), icon=ui.ICONS["info"])   # a caveat on the fit: a note, not an alarm
    change = []
    if any(c in result.codes for c in result.categorical):
        change.append("'Number codes to fit as straight lines' fits a code as a line")
    if result.numbers:
        change.append("'Numeric columns to treat as categories' reads a number as categories")
    if result.outcome_note:   # a score: the rule that made the outcome, the share its gaps are points of
        st.caption(ui.md(f"{result.outcome_note} The Amounts page compares the score's means instead."))
    st.caption(ui.md(result.reading + (f" To change it: {'; '.join(change)} (above)." if change else "")))
    st.caption(ui.md(f"{result.rows_note} Decomposition: {result.decomposition}"))


st.title("Adjusted gaps: what remains once the controls are held equal")
st.markdown("A regression holds many legitimate factors equal at once (a logistic model for a yes/no outcome), and "
            "reads each group's remaining gap to the reference in points, with its interval, and how much of the raw "
            "gap the factors explain.")
spec_ = ui.require_spec("adjusted")
frame_ = dataset.dataset().frame
options_ = render_options(spec_, frame_)
if not any(options_[key] for key in ("controls", "categorical", "as_numbers", "bins", "splines")):
    st.info("Choose the controls to hold equal above.", icon=ui.ICONS["info"])
else:
    data_ = dataset.dataset()
    with st.spinner("Fitting the model…"):
        made_ = ui.guarded(AdjustOptions, **options_, where="adjusted")
        result_ = None if made_ is None else ui.guarded(_adjust_cached, data_.fingerprint, spec_.to_json(),
                                                        options_key(options_), data_, made_, where="adjusted")
    if result_ is not None:
        remember("adjusted", spec_, result_)
        render_result(result_)
