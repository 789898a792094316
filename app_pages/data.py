"""Data page (entry): load data, preview it, choose the outcome and the protected group."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from luskin_app import state
from luskin_core.data import PRESETS, column_summary
from luskin_core.errors import LuskinError
from luskin_core.models import choose_features

NUMBER_OPS = ["==", "!=", "<", "<=", ">", ">="]


def render_loader() -> None:
    """One-click samples and a drag-and-drop CSV upload; a bad file never replaces good data."""
    st.subheader("1. Choose the data")
    samples = state.available_samples()
    row = st.container(horizontal=True)
    for name in samples:
        if row.button(f"Use sample: {state.SAMPLE_TITLES[name]}", key=f"sample_{name}",
                         help=PRESETS[name].title + ". " + PRESETS[name].note):
            state.use_sample(name)
            st.session_state.pop("upload_error", None)
    upload = st.file_uploader(
        "Upload a CSV file (drag and drop it here)", key="upload_csv",
        help="A table saved as CSV with a header row: comma, semicolon or tab separated; UTF-8 or Latin-1.",
    )
    if upload is None:
        st.session_state.pop("upload_error", None)
    else:
        if state.is_new_upload(upload, "upload_token"):
            st.session_state.pop("upload_error", None)
            try:
                with st.spinner("Reading the file…"):
                    state.use_upload(upload.name, upload.getvalue())
            except LuskinError as err:
                st.session_state["upload_error"] = f"'{upload.name}' could not be used: {err}"
    if st.session_state.get("upload_error"):
        st.error(st.session_state["upload_error"] + " The data loaded before is still in use.", icon="⚠️")


@st.cache_data(show_spinner=False, max_entries=8)
def _summary(fingerprint: str, _frame: pd.DataFrame) -> pd.DataFrame:
    return column_summary(_frame)


def render_preview() -> None:
    """Row and column counts, missing values, the first rows and a per-column summary."""
    data = state.dataset()
    frame = data.frame
    st.subheader("2. Look at the data")
    st.markdown(f"**{data.title}**")
    missing = int(frame.isna().sum().sum())
    a, b, c = st.columns(3)
    a.metric("Rows", f"{len(frame):,}")
    b.metric("Columns", f"{frame.shape[1]:,}")
    c.metric("Missing values", f"{missing:,}",
             help="Empty cells (blank, '?', NA ...). Rows missing the outcome or the protected value are "
                  "left out of the audit, and the pages say how many.")
    st.dataframe(frame.head(50), key="data_preview", height=260)
    with st.expander("Columns: type, missing values, distinct values"):
        st.dataframe(_summary(data.fingerprint, frame), hide_index=True, key="data_columns")


def _sanitize(key: str, options: list[Any], fallback: Any) -> None:
    """Keep a widget's remembered value only when it is still one of the options."""
    if st.session_state.get(key) not in options:
        st.session_state[key] = fallback


def render_outcome(frame: pd.DataFrame, ch: dict[str, Any]) -> None:
    """Outcome column and the value that counts as positive."""
    columns = list(frame.columns)
    state.seed("outcome", ch["outcome"])
    _sanitize("outcome", columns, columns[-1])
    outcome = st.selectbox("Outcome column (the decision or label to audit)", columns, key="outcome",
                           help="For example income, frisked or two_year_recid.")
    options = state.value_options(frame[outcome])
    state.seed("positive", ch["positive"])
    if not options:
        st.error(f"The column '{outcome}' has no values at all (every row is missing). "
                 "Choose another outcome column.", icon="⚠️")
        ch.update(outcome=outcome, positive=None)
        return
    if outcome != ch["outcome"]:
        st.session_state["positive"] = options[-1]
    _sanitize("positive", options, options[-1])
    positive = st.selectbox("Positive value (what counts as a 'yes')", options, key="positive",
                            help="The outcome value whose share is compared, e.g. >50K, Y or 1.")
    distinct = frame[outcome].nunique(dropna=True)
    if distinct > 10:
        st.warning(f"'{outcome}' has {distinct:,} different values. The audit compares the share of rows whose "
                   f"value is exactly '{positive}'; an outcome is usually a yes/no decision.", icon="ℹ️")
    ch.update(outcome=outcome, positive=positive)


def render_protected(frame: pd.DataFrame, ch: dict[str, Any]) -> None:
    """Protected column and group: values for text, a comparison for numbers."""
    columns = [c for c in frame.columns if c != ch["outcome"]]
    state.seed("protected_column", ch["protected_column"])
    _sanitize("protected_column", columns, columns[0])
    column = st.selectbox("Protected column (e.g. race or sex)", columns, key="protected_column",
                          help="The attribute the decision must not depend on.")
    changed = column != ch["protected_column"]
    series = frame[column]
    if state.is_numeric(series):
        if changed:
            median = series.median()
            st.session_state["protected_op"] = ">="
            st.session_state["protected_number"] = float(median) if pd.notna(median) else 0.0
        state.seed("protected_op", ch["protected_op"] if ch["protected_op"] in NUMBER_OPS else ">=")
        state.seed("protected_number", float(ch["protected_number"] or 0.0))
        left, right = st.columns([1, 2])
        op = left.selectbox("Comparison", NUMBER_OPS, key="protected_op",
                            help="The protected group is the rows where the column compares true.")
        number = right.number_input(f"Value of {column}", key="protected_number")
        ch.update(protected_column=column, protected_op=op, protected_number=number)
    else:
        options = state.value_options(series)
        if changed:
            st.session_state["protected_values"] = options[:1]
        state.seed("protected_values", [v for v in ch["protected_values"] if v in options] or options[:1])
        st.session_state["protected_values"] = [v for v in st.session_state["protected_values"] if v in options]
        values = st.multiselect("Protected group: the value(s) that form it", options, key="protected_values",
                                help="Rows with any of these values form the group; all other rows the other class.")
        ch.update(protected_column=column, protected_values=list(values))
    try:
        condition = state.protected_condition(ch, frame).to_dict()
    except LuskinError:
        condition = None
    if condition != ch.get("protected_condition"):
        ch["protected_condition"] = condition
        st.session_state["group_label"] = ""
        st.session_state["other_label"] = ""


def render_names(ch: dict[str, Any]) -> None:
    """Optional names shown on charts for the two classes (e.g. White / Non-White)."""
    with st.expander("Names shown on charts (optional)"):
        state.seed("group_label", ch.get("group_label") or "")
        state.seed("other_label", ch.get("other_label") or "")
        left, right = st.columns(2)
        group = left.text_input("Name of the protected group", key="group_label",
                                placeholder="automatic (from the values)")
        other = right.text_input("Name of the other class", key="other_label",
                                 placeholder="automatic (Non-…)")
        ch.update(group_label=group.strip(), other_label=other.strip())


def render_features(frame: pd.DataFrame, ch: dict[str, Any]) -> None:
    """The columns the models may use (Retrain, Thresholds, Equalized distribution).

    Every column but the outcome is the default; an analyst must be able to take out columns
    that record the outcome again or a score made from it (COMPAS's decile_score), which would
    make any model look perfectly accurate and hide the bias being audited.
    """
    outcome = ch.get("outcome")
    if outcome not in frame.columns:
        return
    with st.expander("Columns the models may use (Retrain, Thresholds, Equalized distribution)"):
        try:
            auto = choose_features(frame, outcome)
        except LuskinError as err:
            st.info(str(err))
            return
        options = [c for c in frame.columns if c != outcome]
        chosen_before = [c for c in (ch.get("features") or auto.columns) if c in options]
        state.seed("model_features", chosen_before)
        st.session_state["model_features"] = [c for c in st.session_state["model_features"] if c in options]
        chosen = st.multiselect(
            "Model input columns", options, key="model_features",
            help="Take out any column that records the outcome again, or comes after the decision "
                 "(e.g. a re-arrest date, or a risk score built from the outcome): a model that sees it "
                 "looks perfect and hides the bias. The protected column may stay: the paper's models use it.")
        if auto.dropped:
            st.caption("Left out by default: " + "; ".join(f"{c} ({why})" for c, why in auto.dropped.items()) + ".")
        if not chosen:
            st.warning("No column is chosen, so the models will use every column but the outcome.", icon="⚠️")
        ch["features"] = list(chosen) if chosen and list(chosen) != list(auto.columns) else None


def render_status() -> None:
    """Whether the choices make an audit possible, in plain words, with the way forward."""
    spec, problem = state.current_spec()
    if spec is None:
        st.error(problem, icon="⚠️")
        return
    st.success(f"Ready: comparing **{spec.group_name}** with **{spec.other_name}** on the share with "
               f"**{spec.outcome} = {spec.positive}**.", icon="✅")
    if spec.population:
        st.caption("Rows restricted to: " + " and ".join(c.describe() for c in spec.population) + ".")
    result = state.guarded(state.run_audit, spec)
    if result is not None:
        st.markdown("**At a glance:**\n" + "\n".join(f"- {sentence}" for sentence in result.sentences()))
    st.page_link(state.PAGE_FILES["audit"], label="See the audit: chart, table and filter", icon="📊")


st.title("Luskin: is the decision fair between groups?")
st.markdown("Load a table of decisions (or a sample), then say which column is the decision and which "
            "group to compare. Every other page uses these choices.")
render_loader()
render_preview()
st.subheader("3. Choose the outcome and the protected group")
frame_ = state.dataset().frame
choices_ = state.choices()
left_, right_ = st.columns(2)
with left_:
    render_outcome(frame_, choices_)
with right_:
    render_protected(frame_, choices_)
render_names(choices_)
render_features(frame_, choices_)
render_status()
