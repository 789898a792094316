"""Audit page (controlled fairness): who is compared, within what, and the verdicts.

Who: one group against the rest (the paper's, chosen on the Data page) or every group formed by
one to three columns against a reference group. Within what: all rows, a filter and its
complement (the paper's), or strata of control columns. More settings (the outcome as a score,
the impact ratio, the correction for many comparisons, the smallest group) wait in an expander.
The paper's setup shows the paper's view; any other shows the general one
(:mod:`luskin_app.audit_view`). When the choices cannot be audited (say a column both forms the
groups and the strata), the page says why, with its way out, and keeps every choice editable.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from luskin_app import audit_view, dataset, keys, ui
from luskin_app import choices as ch_
from luskin_app.auditing import run_audit
from luskin_app.choices import Choices
from luskin_app.help import HELP
from luskin_core.analyses.audit import AuditResult
from luskin_core.analyses.narrative import tolerance_words
from luskin_core.counting.executor import executor_for, group_names
from luskin_core.counting.memory import cut_into_ranges
from luskin_core.errors import LuskinError
from luskin_core.present import plots
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.spec.conditions import OPERATORS, Condition
from luskin_core.spec.guess import score_columns
from luskin_core.stats.verdict import Verdict

TEXT_OPS = ["==", "!=", "in", "not in"]


def _filter_columns() -> list[str]:
    """Columns a filter may use: not the outcome, not a column that forms the groups."""
    frame = dataset.dataset().frame
    ch = ch_.choices()
    banned = {str(ch.get("outcome") or "").lower()} | {c.lower() for c in _group_columns(ch)}
    return [c for c in frame.columns if str(c).lower() not in banned]


def _group_columns(ch: Choices) -> list[str]:
    if ch_.audit_choice(ch, "group_mode") == "columns":
        return [str(c) for c in ch_.audit_choice(ch, "group_by")]
    return [str(ch["protected_column"])] if ch.get("protected_column") else []


def _add_filter() -> None:
    """Button callback: read the three filter widgets and add the condition (or say why not)."""
    st.session_state.pop(keys.FILTER_ERROR, None)
    frame = dataset.dataset().frame
    column, op = st.session_state.get(keys.FILTER_COLUMN), st.session_state.get(keys.FILTER_OP)
    try:
        if column is None or op is None or column not in frame.columns:
            raise LuskinError("Choose a column and a comparison for the condition.")
        if op in ("in", "not in"):
            value: Any = tuple(st.session_state.get(keys.FILTER_VALUE_MULTI) or ())
        elif ch_.is_numeric(frame[column]):
            number = st.session_state.get(keys.FILTER_VALUE_NUMBER)
            value = int(number) if number is not None and float(number).is_integer() else number
        else:
            value = st.session_state.get(keys.FILTER_VALUE_PICK)
        condition = Condition(column, op, value)
        condition.mask(frame.head(5))  # checks the comparison fits the column's type
        filters = list(ch_.choices().get("filters") or [])
        if condition.to_dict() in filters:
            raise LuskinError(f"The condition '{condition}' is already in the filter.")
        ch_.set_filters(filters + [condition.to_dict()])
    except LuskinError as err:
        st.session_state[keys.FILTER_ERROR] = str(err)


def _remove_filter(index: int) -> None:
    filters = list(ch_.choices().get("filters") or [])
    if 0 <= index < len(filters):
        filters.pop(index)
    ch_.set_filters(filters)
    st.session_state.pop(keys.FILTER_ERROR, None)


def _clear_filters() -> None:
    ch_.set_filters([])
    st.session_state.pop(keys.FILTER_ERROR, None)


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


def render_filter_builder() -> None:
    """Column, comparison, value and the Add button; long values are shortened in the dropdowns."""
    frame = dataset.dataset().frame
    columns = _filter_columns()
    if not columns:
        st.caption("There is no other column to filter on.")
        return
    c1, c2, c3, c4 = st.columns([3, 2, 3, 2], vertical_alignment="bottom")
    if st.session_state.get(keys.FILTER_COLUMN) not in columns:
        st.session_state[keys.FILTER_COLUMN] = columns[0]
    column = c1.selectbox("Column", columns, key="filter_column", format_func=ui.option_text)
    numeric = ch_.is_numeric(frame[column])
    ops = list(OPERATORS) if numeric else TEXT_OPS
    if st.session_state.get(keys.FILTER_OP) not in ops:
        st.session_state[keys.FILTER_OP] = ">" if numeric else "=="
    op = c2.selectbox("Comparison", ops, key="filter_op",
                      help="== is, != is not, < below, <= at most, > above, >= at least, "
                           "in: one of several values.")
    if numeric and st.session_state.get(keys.FILTER_COLUMN_SEEN) != column:
        median = frame[column].median()
        st.session_state[keys.FILTER_VALUE_NUMBER] = float(median) if pd.notna(median) else 0.0
    st.session_state[keys.FILTER_COLUMN_SEEN] = column
    options = ch_.value_options(frame[column])
    if op in ("in", "not in"):
        st.session_state[keys.FILTER_VALUE_MULTI] = [v for v in st.session_state.get(keys.FILTER_VALUE_MULTI) or []
                                                  if v in options]
        c3.multiselect("Values", options, key="filter_value_multi", format_func=ui.option_text)
    elif numeric:
        c3.number_input("Value", key="filter_value_number")
    else:
        if st.session_state.get(keys.FILTER_VALUE_PICK) not in options:
            st.session_state[keys.FILTER_VALUE_PICK] = options[0] if options else None
        c3.selectbox("Value", options, key="filter_value_pick", format_func=ui.option_text)
    c4.button("Add condition", key="filter_add", on_click=_add_filter, type="primary")
    hidden = 0 if numeric else ch_.long_values(frame[column])
    if hidden:
        st.caption(f"{hidden:,} value{'s' if hidden > 1 else ''} of this column {'are' if hidden > 1 else 'is'} "
                   f"longer than {ch_.MAX_VALUE_CHARS:,} characters and cannot be chosen.")
    if st.session_state.get(keys.FILTER_ERROR):
        st.error(ui.md(st.session_state[keys.FILTER_ERROR], 2000), icon=ui.ICONS["error"])


def render_filter() -> None:
    """The filter: its conditions (joined by AND) with Remove buttons, then the builder."""
    st.markdown("The filter splits the rows into two cells (where it holds, and where it does not). "
                "The groups are compared inside each cell, e.g. among people with the same education.")
    render_filter_list()
    render_filter_builder()


def render_tolerance() -> None:
    """The tolerance (the paper's '≈') in percentage points."""
    ch = ch_.choices()
    ch_.seed("tolerance_points", min(20, max(0, round(100 * float(ch.get("tolerance", 0.05))))))
    points = st.slider("Tolerance (percentage points)", 0, 20, key="tolerance_points", help=HELP["tolerance"])
    ch["tolerance"] = points / 100


def render_verdict(result: AuditResult) -> None:
    """The headline: the core's one verdict in its own words, with a badge read from the same verdict."""
    computable = [g for g in result.gaps if g.gap is not None]
    if not computable:
        st.warning("No cell can be compared: each cell lacks one of the two groups. Change the filter in the "
                   "settings below.", icon=ui.ICONS["error"])
        return
    # Read from the verdicts (Gap.fair is the cell's verdict): a too-few-rows cell is neither within nor beyond.
    judged = [g for g in computable if g.fair is not None]
    over = [g for g in judged if g.fair is False]
    chance = sum(g.verdict == Verdict.CHANCE for g in over)
    few = len(computable) - len(judged)
    bar = tolerance_words(result.spec)
    few_note = f" ({few} cell{'s have' if few > 1 else ' has'} {Verdict.TOO_FEW.mark})" if few else ""
    if not judged:
        st.header(f":material/help: No cell can be judged: a group or the reference has fewer than "
                     f"{result.spec.min_group_size:,} rows in every cell.", anchor=False)
    elif over:
        maybe = f"; in {chance} it could be chance" if chance else ""
        st.header(f":material/warning: The gap exceeds {bar} in {len(over)} of {len(judged)} "
                     f"cell{'s' if len(judged) > 1 else ''}{maybe}{few_note}.", anchor=False)
    else:
        every = "every cell" if not few else "every cell that can be judged"
        st.header(f":material/check_circle: Within {bar} in {every}{few_note}.", anchor=False)


def render_sentences(result: AuditResult) -> None:
    """One plain sentence per cell (the core's words, escaped), coloured by verdict."""
    for gap in result.gaps:
        if gap.gap is None:
            st.warning(ui.md(gap.sentence) + " The filter leaves this cell without one of the groups: change the "
                       "filter in the settings below.", icon=ui.ICONS["error"])
        elif gap.fair:
            st.success(ui.md(gap.sentence), icon=ui.ICONS["ok"])
        elif gap.fair is None:  # too few rows: neither fair nor beyond, as the sentence says
            st.info(ui.md(gap.sentence), icon=ui.ICONS["info"])
        else:
            st.info(ui.md(gap.sentence), icon=ui.ICONS["beyond"])
    # Overall vs within the cells, and whether the cells may be pooled (the core's words after the cells').
    for sentence in result.sentences()[len(result.gaps):]:
        st.info(ui.md(sentence), icon=ui.ICONS["info"])


def render_table(result: AuditResult) -> None:
    """The same numbers as the chart, as a table that fits 1024 px; every digit in an expander."""
    table = audit_view.paper_table(result)
    ui.grid(table, hide_index=True, key="audit_table",
                 column_config=audit_view.fit_columns(audit_view.PAPER_COLUMNS, table, ("Group", "Filter cell")))
    with st.expander("Every number (interval bounds and p-values unrounded)"):
        ui.grid(result.to_frame(), hide_index=True, key="audit_table_all")
    audit_view.render_excluded(result)


# --------------------------------------------------------------------------------------------
# Who is compared, within what, how a gap is judged
# --------------------------------------------------------------------------------------------
GROUP_MODES = {"condition": "One group against everyone else",
               "columns": "Every group formed by one to three columns (e.g. race × sex)"}
CELL_MODES = {"none": "All rows together", "filter": "A filter and its complement",
              "strata": "Strata: every value of control columns"}
OUTCOME_TYPES = {"label": "The outcome label chosen on the Data page", "score": "A numeric score at or above a cut-off",
                 "amount": "An amount (pay, a price): its means and medians, on the Amounts page"}
AMOUNT_VALUES = 20   # a numeric column is offered as an amount when it holds more values than this (never assumed)
METRICS = {"difference": "Difference of shares (percentage points)", "ratio": "Impact ratio (group ÷ reference)"}
CORRECTIONS = {"holm": "Holm (controls the chance of any false alarm)",
               "bh": "Benjamini-Hochberg (controls the share of false alarms)", "none": "None"}
AUTO = "\u0000auto"   # the reference option meaning "the group with the highest share" (no column value is this)


def _choice_widget(widget: Any, key: str, label: str, options: dict[str, str], choice: str, **kwargs: Any) -> str:
    """A radio or selectbox over fixed options, seeded from and written back to one choice."""
    ch = ch_.choices()
    ch_.seed(key, ch_.audit_choice(ch, choice))
    if st.session_state[key] not in options:
        st.session_state[key] = next(iter(options))
    value = widget(label, list(options), key=key, format_func=options.__getitem__, **kwargs)
    ch_.set_choice(ch, choice, value)
    return str(value)


def _many_values(frame: pd.DataFrame, column: str) -> bool:
    """A numeric column with more than 20 distinct values (100 for whole-number codes) is cut into bins (the
    core's rule)."""
    return cut_into_ranges(frame[column])


def _binning_note(frame: pd.DataFrame, columns: list[str], ch: Choices) -> None:
    binned = [c for c in columns if c in frame.columns and _many_values(frame, c)]
    if binned:
        cuts = ch_.audit_choice(ch, "bins") or {}
        words = [f"{c} ({'at ' + ', '.join(f'{x:g}' for x in cuts[c]) if cuts.get(c) else 'quantile bins'})"
                 for c in binned]
        st.caption("Numbers with more than 20 values (100 for whole-number codes) are cut into bins: "
                   + ui.md("; ".join(words), 500)
                   + ". Change the cuts under More settings.")


def _columns_widget(key: str, label: str, options: list[str], choice: str, default: list[str], **kwargs: Any) -> list[str]:
    ch = ch_.choices()
    ch_.seed(key, [c for c in ch_.audit_choice(ch, choice) if c in options] or [c for c in default if c in options])
    st.session_state[key] = [c for c in st.session_state[key] if c in options]
    value = st.multiselect(label, options, key=key, format_func=ui.option_text, **kwargs)
    ch_.set_choice(ch, choice, list(value))
    return list(value)


UNKNOWN_HELP = ("A data set's own code for unknown, such as U or 9: those groups are shown but never judged, never "
                "the reference, and left out of the multiple-testing family. Missing values and spellings such as "
                "'Unknown' or 'Decline to self-identify' are set apart already.")


def render_unknown(ch: Choices) -> None:
    """The values of the group column(s) that mean "not known" (the specification's unknown_values)."""
    options = ch_.unknown_options(ch, dataset.dataset())
    chosen = ch_.settle_unknown(ch, dataset.dataset())
    lacking = st.session_state.get(keys.AUDIT_UNKNOWN_DROPPED)
    if lacking:   # said once, where the box is: the values went because no group column holds them
        names = ", ".join(f"'{ui.md(v, 40)}'" for v in lacking[:5]) + (f" and {len(lacking) - 5:,} more"
                                                                       if len(lacking) > 5 else "")
        one = len(lacking) == 1
        st.info(f"Not read as meaning 'not known': {names}, named so in the settings, {'is' if one else 'are'} "
                "not a value of any group column of this data.",
                icon=ui.ICONS["info"])
        st.session_state.pop(keys.AUDIT_UNKNOWN_DROPPED, None)
    if not options:
        return
    ch_.seed(keys.AUDIT_UNKNOWN_VALUES, chosen)
    st.session_state[keys.AUDIT_UNKNOWN_VALUES] = [v for v in st.session_state[keys.AUDIT_UNKNOWN_VALUES]
                                                   if v in options]
    values = st.multiselect("Values that mean 'not known'", options, key=keys.AUDIT_UNKNOWN_VALUES,
                            format_func=ui.option_text, help=UNKNOWN_HELP)
    ch_.set_unknown(ch, list(values))


def render_who(frame: pd.DataFrame, ch: Choices) -> Any:
    """One group vs the rest (from the Data page), or every value of one to three columns; returns the
    container that receives the reference group's choice once the groups are known."""
    st.header("Who is compared")
    before = ch_.audit_choice(ch, "group_mode")
    mode = _choice_widget(st.radio, "audit_group_mode", "Groups", GROUP_MODES, "group_mode", horizontal=True,
                          label_visibility="collapsed")
    if mode != before:
        ch["reference"] = None
        st.session_state.pop(keys.AUDIT_REFERENCE, None)
    if mode == "condition":
        try:
            condition = ch_.protected_condition(ch, frame)
            bare = AuditSpec(str(ch.get("outcome") or "outcome"), positive=ch.get("positive") or 1,
                             protected=condition, group_label=ch.get("group_label") or None,
                             other_label=ch.get("other_label") or None, value_names=ch.get("value_names") or {})
            named, _ = ch_.current_spec()   # the names the audit uses (value names, the other value's name);
            # while the settings below are incomplete, the Data page's choices name them: the rest by its value
            # when the column has two ("Male", never "Non-Female")
            names = group_names(executor_for(frame), named if named is not None else bare)
            group, other = names.group, names.other
            st.markdown(f"**{ui.md(group, 120)}** against **{ui.md(other, 120)}**, as chosen on the Data page.")
        except LuskinError:
            st.markdown("The protected group is chosen on the Data page.")
        render_unknown(ch)
        st.page_link(ui.PAGE_FILES["data"], label="Change the group on the Data page", icon=ui.ICONS["data"])
        return None
    outcome = str(ch.get("outcome") or "").lower()
    options = [c for c in frame.columns if str(c).lower() != outcome]
    protected = ch.get("protected_column")
    default = [protected] if protected else []
    columns = _columns_widget("audit_group_by", "Columns whose values form the groups (crossed: A × B)", options,
                              "group_by", default, max_selections=3,
                              help="Each value is a group; with two or three columns, each combination "
                                   "(e.g. Black × Female). Missing values form an 'Unknown' group.")
    _binning_note(frame, columns, ch)
    render_unknown(ch)
    return st.container()


def render_within(frame: pd.DataFrame, ch: Choices) -> None:
    """All rows, the filter and its complement, or strata of control columns."""
    st.header("Within what: compare like with like")
    mode = _choice_widget(st.radio, "audit_cell_mode", "Cells", CELL_MODES, "cell_mode", horizontal=True,
                          label_visibility="collapsed")
    if mode == "filter":
        render_filter()
    elif mode == "strata":
        outcome = str(ch.get("outcome") or "").lower()
        options = [c for c in frame.columns if str(c).lower() != outcome]
        columns = _columns_widget("audit_strata", "Control columns (each value, or each combination, is a stratum)",
                                  options, "strata", [],
                                  help="The groups are compared inside each stratum (e.g. the same department), "
                                       "then the strata are pooled (Cochran-Mantel-Haenszel).")
        _binning_note(frame, columns, ch)
    else:
        st.caption("No cells: the groups are compared over all rows.")


def render_threshold(ch: Choices) -> None:
    """The tolerance (difference, in points) or the impact-ratio threshold, by the metric."""
    if st.session_state.get(keys.AUDIT_METRIC, ch_.audit_choice(ch, "metric")) == "ratio":  # the radio sits below
        ch_.seed("audit_ratio_threshold", float(ch_.audit_choice(ch, "ratio_threshold")))
        ch["ratio_threshold"] = st.slider(
            "Impact-ratio threshold", 0.5, 1.0, step=0.05, key="audit_ratio_threshold",
            help="A group whose share divided by the reference's share is below this fails (0.8: the EEOC "
                 "four-fifths rule); a group doing better is judged by the inverse.")
    else:
        render_tolerance()


def _cut_points(frame: pd.DataFrame, ch: Choices) -> None:
    """Optional cut points for each binned group or strata column ("25, 40, 60")."""
    columns = _group_columns(ch) if ch_.audit_choice(ch, "group_mode") == "columns" else []
    if ch_.audit_choice(ch, "cell_mode") == "strata":
        columns += [str(c) for c in ch_.audit_choice(ch, "strata")]
    binned = [c for c in dict.fromkeys(columns) if c in frame.columns and _many_values(frame, c)]
    if not binned:
        return
    ch_.seed("audit_n_bins", int(ch_.audit_choice(ch, "n_bins")))
    ch["n_bins"] = int(st.number_input("Quantile bins for numbers with many values", 2, 20, step=1,
                                       key="audit_n_bins"))
    bins = dict(ch_.audit_choice(ch, "bins") or {})
    for i, column in enumerate(binned):
        key = f"audit_cuts_{i}_{column}"
        ch_.seed(key, ", ".join(f"{x:g}" for x in bins.get(column) or []))
        text = st.text_input(f"Cut points for {ui.md(column, 60)} (optional, e.g. 25, 40, 60)", key=key)
        try:
            cuts = sorted({float(x) for x in text.replace(";", ",").split(",") if x.strip()})
            if not all(np.isfinite(cuts)):
                raise ValueError
        except ValueError:
            st.error(f"Cut points are numbers separated by commas, e.g. 25, 40, 60. The bins of "
                     f"{ui.md(column, 60)} stay as they were.", icon=ui.ICONS["error"])
            continue
        if cuts:
            bins[column] = cuts
        else:
            bins.pop(column, None)
    ch["bins"] = bins


def render_outcome_choice(frame: pd.DataFrame, ch: Choices) -> None:
    """The label from the Data page, or a numeric score with its cut-off (the median by default)."""
    kind = _choice_widget(st.radio, "audit_outcome_type", "What is audited", OUTCOME_TYPES, "outcome_type",
                          horizontal=True)
    if kind == "amount":
        _amount_choice(frame, ch)
        return
    if kind != "score":
        return
    found = score_columns(frame, protected=_group_columns(ch))
    numeric = [c for c in frame.columns if ch_.is_numeric(frame[c])]
    options = list(found.columns) or numeric
    if not options:
        st.warning("The data has no numeric column to use as a score.", icon=ui.ICONS["error"])
        return
    ch_.seed("audit_score_column", ch_.audit_choice(ch, "score_column") or options[0])
    if st.session_state[keys.AUDIT_SCORE_COLUMN] not in options:
        st.session_state[keys.AUDIT_SCORE_COLUMN] = options[0]
    column = st.selectbox("Score column", options, key="audit_score_column", format_func=ui.option_text,
                          help="A row counts as positive when its score is at or above the cut-off.")
    ch["score_column"] = column
    ch_.seed("audit_cutoff_median", ch_.audit_choice(ch, "score_cutoff") is None)
    median = st.checkbox("Cut at the median (as NYC Local Law 144 does for scores)", key="audit_cutoff_median")
    if median:
        ch["score_cutoff"] = None
        middle = frame[column].median()
        st.caption(f"The median of {ui.md(column, 60)} is {float(middle):g}." if pd.notna(middle) else "")
        st.session_state.pop(keys.AUDIT_CUTOFF, None)
        return
    start = ch_.audit_choice(ch, "score_cutoff")
    ch_.seed("audit_cutoff", float(start if start is not None else frame[column].median()))
    ch["score_cutoff"] = float(st.number_input("Cut-off (at or above counts as positive)", key="audit_cutoff"))


def _amount_choice(frame: pd.DataFrame, ch: Choices) -> None:
    """The amount's column: a numeric column with many values (pay, a price), offered, never assumed."""
    groups = {c.lower() for c in _group_columns(ch)}
    options = [c for c in frame.columns if ch_.is_numeric(frame[c]) and str(c).lower() not in groups
               and frame[c].nunique(dropna=True) > AMOUNT_VALUES]
    if not options:
        st.warning(f"The data has no numeric column with more than {AMOUNT_VALUES} values to audit as an amount.",
                   icon=ui.ICONS["error"])
        return
    ch_.seed("audit_score_column", ch_.audit_choice(ch, "score_column") or options[0])
    if st.session_state[keys.AUDIT_SCORE_COLUMN] not in options:
        st.session_state[keys.AUDIT_SCORE_COLUMN] = options[0]
    ch["score_column"] = st.selectbox("Amount column", options, key="audit_score_column", format_func=ui.option_text,
                                      help="Each group's mean and median of this amount, their gaps as shares of the "
                                           "reference's, and the verdicts: on the Amounts page.")


def render_more(frame: pd.DataFrame, ch: Choices) -> None:
    """More settings, out of a newcomer's way: outcome, metric, chance, small groups, bins."""
    with st.expander("More settings: score or amount outcome, impact ratio, chance, small groups, bins"):
        render_outcome_choice(frame, ch)
        _choice_widget(st.radio, "audit_metric", "How a gap is judged", METRICS, "metric", horizontal=True)
        _choice_widget(st.selectbox, "audit_correction", "Correction for many comparisons", CORRECTIONS,
                       "correction", help="Many groups and cells mean many tests; some will look significant by "
                                          "chance. The correction adjusts the p-values for their number.")
        left, right = st.columns(2)
        ch_.seed("audit_min_size", int(ch_.audit_choice(ch, "min_group_size")))
        ch["min_group_size"] = int(left.number_input(
            "Smallest group (rows)", 1, 1_000_000, step=1, key="audit_min_size",
            help="A group (or the reference) with fewer rows in a cell is shown but not judged."))
        ch_.seed("audit_min_share", round(100 * float(ch_.audit_choice(ch, "min_group_share")), 3))
        ch["min_group_share"] = float(right.number_input(
            "Smallest group share (%)", 0.0, 50.0, step=0.5, key="audit_min_share",
            help="Groups under this share of all rows are shown but not judged (NYC Local Law 144 allows "
                 "setting aside categories under 2%).")) / 100
        _cut_points(frame, ch)


def _probe(ch: Choices) -> AuditResult | None:
    """The audit with the automatic reference: the groups and the group with the highest share."""
    probe: Choices = {**ch, "reference": None}
    try:
        spec = ch_.spec_from_choices(probe, dataset.dataset().frame)
        return run_audit(spec)
    except LuskinError:
        return None


def render_reference(box: Any, ch: Choices) -> None:
    """The reference group: the highest share among big-enough groups (default), or one the user picks."""
    if box is None:
        return
    probe = _probe(ch)
    if probe is None:
        return
    unknown = set(probe.unknown_groups)
    groups = [g for g in probe.groups if g not in unknown]   # a group of unknown category is never the reference
    chosen = ch_.audit_choice(ch, "reference")
    if chosen is not None and chosen not in groups:
        why = "is of unknown category" if chosen in unknown else "is not one of the groups now"
        box.caption(f"The reference group '{ui.md(chosen, 120)}' {why}, so the group with the highest share is "
                    "used.")
        ch["reference"] = chosen = None
        st.session_state.pop(keys.AUDIT_REFERENCE, None)
    options = [AUTO] + groups
    ch_.seed("audit_reference", chosen if chosen is not None else AUTO)
    if st.session_state[keys.AUDIT_REFERENCE] not in options:
        st.session_state[keys.AUDIT_REFERENCE] = AUTO

    def label(value: str) -> str:
        if value == AUTO:
            return ui.option_text(f"The group with the highest share (now {probe.reference})")
        return ui.option_text(value)

    value = box.selectbox("Reference group (every group is compared with it)", options, key="audit_reference",
                          format_func=label, help="By default the group with the highest share among those with "
                                                  "enough rows, as the four-fifths rule does.")
    ch["reference"] = None if value == AUTO else value


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------
def paper_view(spec: AuditSpec) -> bool:
    """The paper's setup (one group vs the rest, a filter or none, the difference, a label) keeps its view."""
    return (spec.group_mode == "condition" and spec.cell_mode != "strata" and spec.metric == "difference"
            and spec.outcome_type == "label")


def render_result(spec: AuditSpec) -> None:
    """The verdict, the chart and table, and the sentences, for the current choices."""
    if spec.outcome_type == "amount":   # its means and medians: the Amounts page (made from the analyses' table)
        st.info(f"{ui.md(spec.outcome, 60)} is audited as an amount: each group's mean and median, their gaps as "
                "shares of the reference's and the verdicts are on the Amounts page (in the menu).",
                icon=ui.ICONS["info"])
        return
    result = ui.guarded(run_audit, spec, where="audit")
    if result is None:
        return
    audit_view.render_sufficiency(result)  # what the data could show, on the first lines
    if not paper_view(spec):
        audit_view.render_general(result)
        return
    audit_view.render_findings(result)
    render_verdict(result)
    chart_tab, table_tab = st.tabs(["Chart", "Table"])
    with chart_tab:
        ui.chart(plots.audit_bars(result), key="audit_chart")
    with table_tab:
        render_table(result)
    st.header("What this means, cell by cell")
    render_sentences(result)
    audit_view.render_paper_extras(result)


st.title("Audit: is the outcome shared fairly between the groups?")
if ch_.needs_confirmation():
    ui.require_spec("audit")      # the guesses for a new file, and the button to confirm them
# The answer first, the settings after it (issue 16): the settings run first, since the result
# depends on them, but they are drawn below the result's box.
result_box_ = st.container(key="audit_result")
frame_ = dataset.dataset().frame
choices_ = ch_.choices()
with st.container(key="audit_settings", border=True):
    st.header("Settings: who is compared, within what, and how", anchor=False)
    reference_box_ = render_who(frame_, choices_)
    render_within(frame_, choices_)
    render_threshold(choices_)
    render_more(frame_, choices_)
    render_reference(reference_box_, choices_)
spec_, problem_ = ch_.current_spec()
with result_box_:
    if spec_ is None:
        ui.show_problem(str(problem_), "audit")
    else:
        render_result(spec_)
