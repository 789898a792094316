"""Audit page (controlled fairness): filter cells, the share per group with CIs, one sentence per cell.

When the choices cannot be audited (say the protected column is also filtered on), the page
says why and keeps the filter's conditions editable here, beside the error.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from luskin_app import choices as ch_
from luskin_app import dataset, ui
from luskin_app.cache import run_audit
from luskin_app.help import HELP
from luskin_core import plots
from luskin_core.audit import AuditResult
from luskin_core.conditions import OPERATORS, Condition
from luskin_core.errors import LuskinError
from luskin_core.spec import AuditSpec

TEXT_OPS = ["==", "!=", "in", "not in"]


def _filter_columns(spec: AuditSpec) -> list[str]:
    frame = dataset.dataset().frame
    banned = {spec.outcome.lower(), spec.protected.column.lower()} if spec.protected else {spec.outcome.lower()}
    return [c for c in frame.columns if str(c).lower() not in banned]


def _add_filter() -> None:
    """Button callback: read the three filter widgets and add the condition (or say why not)."""
    ss = st.session_state
    ss.pop("filter_error", None)
    frame = dataset.dataset().frame
    column, op = ss.get("filter_column"), ss.get("filter_op")
    try:
        if column is None or op is None or column not in frame.columns:
            raise LuskinError("Choose a column and a comparison for the condition.")
        if op in ("in", "not in"):
            value: Any = tuple(ss.get("filter_value_multi") or ())
        elif ch_.is_numeric(frame[column]):
            number = ss.get("filter_value_number")
            value = int(number) if number is not None and float(number).is_integer() else number
        else:
            value = ss.get("filter_value_pick")
        condition = Condition(column, op, value)
        condition.mask(frame.head(5))  # checks the comparison fits the column's type
        filters = list(ch_.choices().get("filters") or [])
        if condition.to_dict() in filters:
            raise LuskinError(f"The condition '{condition}' is already in the filter.")
        ch_.set_filters(filters + [condition.to_dict()])
    except LuskinError as err:
        ss["filter_error"] = str(err)


def _remove_filter(index: int) -> None:
    filters = list(ch_.choices().get("filters") or [])
    if 0 <= index < len(filters):
        filters.pop(index)
    ch_.set_filters(filters)
    st.session_state.pop("filter_error", None)


def _clear_filters() -> None:
    ch_.set_filters([])
    st.session_state.pop("filter_error", None)


def render_filter_list() -> None:
    """The filter's conditions, each with a Remove button (also shown when the choices have a problem)."""
    filters = []
    for raw in ch_.choices().get("filters") or []:
        try:
            filters.append(Condition.from_dict(raw).describe())
        except LuskinError:
            filters.append(str(raw))
    if not filters:
        st.caption("No filter: all rows form one cell.")
        return
    for i, text in enumerate(filters):
        left, right = st.columns([5, 1], vertical_alignment="center")
        left.markdown(f"{'AND ' if i else ''}**{ui.md(text, 300)}**")
        right.button("Remove", key=f"filter_remove_{i}", on_click=_remove_filter, args=(i,))
    st.button("Remove all conditions", key="filter_clear", on_click=_clear_filters)


def render_filter_builder(spec: AuditSpec) -> None:
    """Column, comparison, value and the Add button; long values are shortened in the dropdowns."""
    frame = dataset.dataset().frame
    columns = _filter_columns(spec)
    if not columns:
        st.caption("There is no other column to filter on.")
        return
    c1, c2, c3, c4 = st.columns([3, 2, 3, 2], vertical_alignment="bottom")
    if st.session_state.get("filter_column") not in columns:
        st.session_state["filter_column"] = columns[0]
    column = c1.selectbox("Column", columns, key="filter_column", format_func=ui.option_text)
    numeric = ch_.is_numeric(frame[column])
    ops = list(OPERATORS) if numeric else TEXT_OPS
    if st.session_state.get("filter_op") not in ops:
        st.session_state["filter_op"] = ">" if numeric else "=="
    op = c2.selectbox("Comparison", ops, key="filter_op",
                      help="== is, != is not, < below, <= at most, > above, >= at least, "
                           "in: one of several values.")
    if numeric and st.session_state.get("filter_column_seen") != column:
        median = frame[column].median()
        st.session_state["filter_value_number"] = float(median) if pd.notna(median) else 0.0
    st.session_state["filter_column_seen"] = column
    options = ch_.value_options(frame[column])
    if op in ("in", "not in"):
        st.session_state["filter_value_multi"] = [v for v in st.session_state.get("filter_value_multi") or []
                                                  if v in options]
        c3.multiselect("Values", options, key="filter_value_multi", format_func=ui.option_text)
    elif numeric:
        c3.number_input("Value", key="filter_value_number")
    else:
        if st.session_state.get("filter_value_pick") not in options:
            st.session_state["filter_value_pick"] = options[0] if options else None
        c3.selectbox("Value", options, key="filter_value_pick", format_func=ui.option_text)
    c4.button("Add condition", key="filter_add", on_click=_add_filter, type="primary")
    hidden = 0 if numeric else ch_.long_values(frame[column])
    if hidden:
        st.caption(f"{hidden:,} value{'s' if hidden > 1 else ''} of this column {'are' if hidden > 1 else 'is'} "
                   f"longer than {ch_.MAX_VALUE_CHARS:,} characters and cannot be chosen.")
    if st.session_state.get("filter_error"):
        st.error(ui.md(st.session_state["filter_error"], 2000), icon="⚠️")


def render_filter(spec: AuditSpec | None) -> None:
    """The filter: its conditions (joined by AND) with Remove buttons, then the builder."""
    st.subheader("Compare like with like: the filter")
    st.markdown("The filter splits the rows into two cells (where it holds, and where it does not). "
                "The groups are compared inside each cell, e.g. among people with the same education.")
    render_filter_list()
    if spec is not None:
        render_filter_builder(spec)


def render_tolerance() -> None:
    """The tolerance (the paper's '≈') in percentage points."""
    ch = ch_.choices()
    ch_.seed("tolerance_points", min(20, max(0, round(100 * float(ch.get("tolerance", 0.05))))))
    points = st.slider("Tolerance (percentage points)", 0, 20, key="tolerance_points", help=HELP["tolerance"])
    ch["tolerance"] = points / 100


def render_verdict(result: AuditResult) -> None:
    """The headline: fair in every cell, or how many cells exceed the tolerance."""
    computable = [g for g in result.gaps if g.gap is not None]
    over = [g for g in computable if not g.fair]
    if not computable:
        st.warning("No cell can be compared: each cell lacks one of the two groups. Change the filter above.",
                   icon="⚠️")
    elif over:
        st.markdown(f"### ⚠️ The gap exceeds the {100 * result.spec.tolerance:g}-point tolerance in "
                    f"{len(over)} of {len(computable)} cell{'s' if len(computable) > 1 else ''}.")
    else:
        st.markdown(f"### ✅ Within the {100 * result.spec.tolerance:g}-point tolerance in every cell.")


def render_sentences(result: AuditResult) -> None:
    """One plain sentence per cell (the core's words, escaped), coloured by verdict."""
    for gap in result.gaps:
        if gap.gap is None:
            st.warning(ui.md(gap.sentence) + " The filter leaves this cell without one of the groups: change the "
                       "filter above.", icon="⚠️")
        elif gap.fair:
            st.success(ui.md(gap.sentence), icon="✅")
        else:
            st.info(ui.md(gap.sentence), icon="❗")


def render_table(result: AuditResult) -> None:
    """The same numbers as the chart, as a table."""
    table = result.to_frame()
    for column in ("Ratio", "95% CI low", "95% CI high", "Gap (group - other)"):
        table[column] = table[column].astype(float) * 100
    st.dataframe(
        table, hide_index=True, key="audit_table",
        column_config={
            "Ratio": st.column_config.NumberColumn("Share (%)", format="%.1f"),
            "95% CI low": st.column_config.NumberColumn("95% CI low (%)", format="%.1f", help=HELP["ci"]),
            "95% CI high": st.column_config.NumberColumn("95% CI high (%)", format="%.1f", help=HELP["ci"]),
            "Gap (group - other)": st.column_config.NumberColumn("Gap (points)", format="%+.1f"),
            "p-value": st.column_config.NumberColumn("p-value", format="%.4f", help=HELP["p_value"]),
        },
    )
    if result.n_excluded:
        reasons = ", ".join(f"{k}: {v:,}" for k, v in result.excluded_reasons.items())
        st.caption(f"{result.n_excluded:,} rows were left out ({ui.md(reasons or 'outside the population', 500)}).")


def render_result(spec: AuditSpec) -> None:
    """The verdict, the chart and table, and the sentences, for the current choices."""
    result = ui.guarded(run_audit, spec, where="audit")
    if result is None:
        return
    render_verdict(result)
    chart_tab, table_tab = st.tabs(["Chart", "Table"])
    with chart_tab:
        st.plotly_chart(ui.fit_chart(plots.audit_bars(result)), key="audit_chart", theme=None)
    with table_tab:
        render_table(result)
    st.subheader("What this means, cell by cell")
    render_sentences(result)


st.title("Audit: is the outcome shared fairly between the groups?")
spec_, problem_ = ch_.current_spec()
if spec_ is None:
    ui.show_problem(str(problem_), "audit")
    render_filter(None)
    st.stop()
spec_ = ui.require_spec("audit")
render_filter(spec_)
render_tolerance()
render_result(ui.require_spec("audit"))
