"""The user's choices and the typed AuditSpec parsed from them.

The choices are the widgets' memory (outcome, positive value, protected group, filters, tolerance,
the model columns and each page's options), kept in the session: widgets are seeded from them when
a page is (re)opened, because Streamlit forgets a widget's value when its page is left. The
specification is parsed from them by one thin parser (:func:`spec_from_choices`: the choices into
the specification's typed parts, then :func:`luskin_core.spec.validation.check_spec`) and kept, typed,
in the session (:class:`SpecState`); every page reads that one. The rules are the core's, so a
mistake reads the same here, in the command line and in the library. Every problem comes with its
way out (:func:`fixes`).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypedDict, cast

import numpy as np
import pandas as pd
import streamlit as st

from luskin_core.counting.executor import executor_for, group_names
from luskin_core.counting.memory import cut_into_ranges
from luskin_core.counting.plan import is_unknown_group
from luskin_core.errors import LuskinError
from luskin_core.spec.audit_spec import (
    DEFAULT_BINS,
    DEFAULT_MIN_GROUP_SIZE,
    DEFAULT_RATIO_THRESHOLD,
    DEFAULT_TOLERANCE,
    AuditSpec,
    CellSpec,
    GroupSpec,
    Judgement,
    OutcomeSpec,
)
from luskin_core.spec.conditions import Condition
from luskin_core.spec.guess import FirstChoices, first_choices
from luskin_core.spec.names import GroupNames
from luskin_core.spec.options import OPTIONS, option_default
from luskin_core.spec.unknown import is_unknown_value, unknown_key
from luskin_core.spec.validation import (
    check_amount_column,
    check_column,
    check_finite,
    check_outcome,
    check_score_column,
    check_spec,
    infinite_counts,
    value_key,
)

from . import dataset as _dataset
from . import keys

MAX_CHOICES = 300        # most frequent values offered in a value dropdown
MAX_VALUE_CHARS = 1_000  # longer values are not offered in dropdowns (the page says how many)

# Widget keys whose values are seeded from the choices; cleared when the dataset changes.
WIDGET_KEYS = ("outcome", "positive", "outcome_score_rule", "outcome_cutoff", "outcome_is", "outcome_is_seen", "outcome_is_answers", "protected_column", "protected_values", "protected_op",
               "protected_number", "group_label", "other_label", "tolerance_points",
               "filter_column", "filter_op", "filter_value_pick", "filter_value_multi",
               "filter_value_number", "filter_column_seen", "retrain_algorithm", "retrain_pair",
               "retrain_direction", "retrain_seed", "retrain_all_cells", "thr_source", "thr_split", "thr_model",
               "thr_score_column", "thr_solver", "thr_lambda", "thr_seed", "thr_tuning", "eq_alpha", "eq_alphas",
               "eq_seed", "model_features", "audit_group_mode", "audit_group_by", "audit_reference",
               "audit_cell_mode", "audit_strata", "audit_cuts", "audit_n_bins", "audit_min_size", "audit_min_share",
               "audit_outcome_type", "audit_score_column", "audit_cutoff_median", "audit_cutoff", "audit_metric",
               "audit_ratio_threshold", "audit_correction", "audit_unknown_values")

# The model pages' first choices: the defaults of the options each page offers (their declarations in
# luskin_core.spec.options, which the command line reads too: a new declared option is saved here without an
# edit), plus what only a page has (where the scores come from, the rows a chart shows, the alpha shown).
def _page_defaults(tool: str) -> dict[str, Any]:
    values = {option.name: option_default(tool, option.name) for option in OPTIONS[tool] if option.on_page}
    return {name: list(value) if isinstance(value, tuple) else value for name, value in values.items()}


_PAGE_ONLY_DEFAULTS: dict[str, dict[str, Any]] = {
    "retrain": {}, "thresholds": {"source": "model", "score_column": None, "split": "tune"}, "equalize": {"alpha": None}}
DEFAULT_OPTIONS: dict[str, dict[str, Any]] = {
    tool: {**_PAGE_ONLY_DEFAULTS[tool], **_page_defaults(tool)} for tool in ("retrain", "thresholds", "equalize")}
# The Audit page's choices beyond the paper's (who is compared, within what, the outcome, the judgement);
# their defaults give the paper's view, so presets and older configurations keep their numbers.
AUDIT_DEFAULTS: dict[str, Any] = {
    "group_mode": "condition", "group_by": [], "reference": None, "min_group_size": DEFAULT_MIN_GROUP_SIZE,
    "min_group_share": 0.0, "cell_mode": "filter", "strata": [], "bins": {}, "n_bins": DEFAULT_BINS,
    "outcome_type": "label", "score_column": None, "score_cutoff": None, "metric": "difference",
    "ratio_threshold": DEFAULT_RATIO_THRESHOLD, "correction": "holm", "unknown_values": [],
}
# The choices an AuditSpec is built from (the cache key of the spec).
SPEC_KEYS = ("outcome", "positive", "protected_column", "protected_values", "protected_op", "protected_number",
             "group_label", "other_label", "filters", "filter_label", "not_filter_label", "population",
             "tolerance", "outcome_is", "value_names") + tuple(AUDIT_DEFAULTS)


class Choices(TypedDict, total=False):
    """The session's choices, key by key (plain JSON values: they are saved in configurations and kept
    with an upload). Not every key is present in choices saved by an older version, hence ``total=False``;
    :func:`audit_choice` gives the Audit page's defaults for the missing ones."""

    outcome: str | None
    positive: Any
    outcome_is: str
    protected_column: str | None
    protected_values: list[Any]
    protected_op: str
    protected_number: float
    protected_condition: dict[str, Any] | None
    group_label: str
    other_label: str
    filters: list[dict[str, Any]]
    filter_label: str | None
    not_filter_label: str | None
    population: list[dict[str, Any]]
    tolerance: float
    value_names: dict[str, dict[str, str]]
    features: list[str] | None
    # the Audit page's (AUDIT_DEFAULTS)
    group_mode: str
    group_by: list[str]
    reference: str | None
    min_group_size: int
    min_group_share: float
    cell_mode: str
    strata: list[str]
    bins: dict[str, list[float]]
    n_bins: int
    outcome_type: str
    score_column: str | None
    score_cutoff: float | None
    metric: str
    ratio_threshold: float
    correction: str
    unknown_values: list[str]
    unknown_columns: list[str]   # the group columns the values named 'not known' were named for (not in the spec)
    # each model page's options (DEFAULT_OPTIONS)
    retrain: dict[str, Any]
    thresholds: dict[str, Any]
    equalize: dict[str, Any]


def plain(value: Any) -> Any:
    """numpy scalars to Python ones (JSON and widget friendly)."""
    return value.item() if isinstance(value, np.generic) else value


def is_numeric(series: pd.Series) -> bool:
    return bool(pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series))


# --------------------------------------------------------------------------------------------
# The session's choices
# --------------------------------------------------------------------------------------------
def choices() -> Choices:
    """The session's current choices (set with its dataset when the visit starts: luskin_app.session)."""
    return cast(Choices, st.session_state[keys.CHOICES])


def set_choices(new: Choices, *, confirmed: bool, guesses: FirstChoices | None = None) -> None:
    """Replace every choice (a new dataset, a preset or a loaded configuration); widgets re-seed."""
    st.session_state[keys.CHOICES] = new
    st.session_state[keys.CONFIRMED] = confirmed
    st.session_state[keys.GUESSES] = guesses
    st.session_state.pop(keys.SPEC_MEMO, None)
    forget_widgets()


def needs_confirmation() -> bool:
    """True while the choices for an uploaded file are Luskin's guesses, not yet confirmed."""
    return not st.session_state.get(keys.CONFIRMED, True)


def guesses() -> FirstChoices | None:
    """The first guesses for the uploaded file (None for samples and loaded configurations)."""
    return st.session_state.get(keys.GUESSES)


def confirm() -> None:
    """Button callback: the user has checked the guessed choices; verdicts may be drawn."""
    st.session_state[keys.CONFIRMED] = True


def forget_widgets() -> None:
    """Drop widget values so that the pages re-seed them from the (new) choices."""
    for key in WIDGET_KEYS:
        st.session_state.pop(key, None)


def seed(key: str, value: Any) -> None:
    """Give a widget its remembered value when the page is opened (Streamlit forgot it)."""
    if key not in st.session_state:
        st.session_state[key] = value


# --------------------------------------------------------------------------------------------
# Choices <-> AuditSpec
# --------------------------------------------------------------------------------------------
def _merged_options(options: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    merged = copy.deepcopy(DEFAULT_OPTIONS)
    for page, values in (options or {}).items():
        merged.setdefault(page, {}).update(values)
    return merged


def _audit_choices(spec: AuditSpec) -> Choices:
    """The Audit page's choices (groups by columns, strata, score, metric ...) that reproduce ``spec``."""
    return {
        "group_mode": spec.group_mode, "group_by": list(spec.group_by), "reference": spec.reference,
        "min_group_size": spec.min_group_size, "min_group_share": spec.min_group_share,
        "cell_mode": "strata" if spec.strata else "filter", "strata": list(spec.strata),
        "bins": {name: list(cuts) for name, cuts in spec.bins}, "n_bins": spec.n_bins,
        "outcome_type": spec.outcome_type,
        "score_column": spec.outcome if spec.outcome_type in ("score", "amount") else None,
        "score_cutoff": spec.score_cutoff, "metric": spec.metric, "ratio_threshold": spec.ratio_threshold,
        "correction": spec.correction, "unknown_values": list(spec.unknown_values),
    }


def choices_from_spec(spec: AuditSpec, frame: pd.DataFrame, features: Sequence[str] | None = None,
                      options: dict[str, Any] | None = None) -> Choices:
    """The widget-level choices that reproduce ``spec`` on ``frame``.

    A specification grouping by columns keeps the Data page's protected group on the first of
    them (the page needs one; the audit ignores it until "one group vs the rest" is chosen).
    """
    p = spec.protected
    name = spec.group_by[0] if p is None else p.column
    try:
        column = check_column(frame, name, "protected")
    except LuskinError:
        column = name
    numeric = column in frame.columns and is_numeric(frame[column])
    values = [] if p is None else list(p.value) if isinstance(p.value, tuple) else [p.value]
    numeric_value = p is not None and numeric and p.op not in ("in", "not in")
    try:
        number = float(p.value) if p is not None and numeric_value else 0.0
    except (TypeError, ValueError):
        raise LuskinError(f"The protected condition '{p}' compares the numbers of '{column}' with a value "
                          "that is not a number.") from None
    choices: Choices = {
        "outcome": spec.outcome,
        "positive": [plain(v) for v in spec.positive] if isinstance(spec.positive, tuple) else plain(spec.positive),
        "protected_column": column,
        "protected_values": [] if p is None or numeric or p.op not in ("==", "in") else [plain(v) for v in values],
        "protected_op": p.op if p is not None and numeric_value else ">=",
        "protected_number": number,
        "protected_condition": None if p is None else p.to_dict(),
        "group_label": spec.group_label or "",
        "other_label": spec.other_label or "",
        "filters": [c.to_dict() for c in spec.filters],
        "filter_label": spec.filter_label,
        "not_filter_label": spec.not_filter_label,
        "population": [c.to_dict() for c in spec.population],
        "tolerance": spec.tolerance,
        "outcome_is": spec.outcome_is,
        "value_names": {name: dict(pairs) for name, pairs in spec.value_names},
        "features": list(features) if features else None,
    }
    choices.update(_audit_choices(spec))
    choices.update(cast(Choices, _merged_options(options)))
    choices["unknown_columns"] = _group_columns(choices)
    return choices


def guess_choices(frame: pd.DataFrame) -> tuple[Choices, FirstChoices]:
    """First choices for an uploaded file, from the core's guesses, and the guesses themselves."""
    guess = first_choices(frame)
    group: Condition | None = guess.group.value
    numeric = is_numeric(frame[guess.protected.value])
    choices: Choices = {
        "outcome": guess.outcome.value, "positive": plain(guess.positive.value),
        "protected_column": guess.protected.value,
        "protected_values": [plain(group.value)] if group is not None and not numeric else [],
        "protected_op": group.op if group is not None and numeric else ">=",
        "protected_number": float(group.value) if group is not None and numeric else 0.0,
        "protected_condition": None if group is None else group.to_dict(), "group_label": "", "other_label": "",
        "filters": [], "filter_label": None, "not_filter_label": None, "population": [],
        "tolerance": 0.05, "features": None, "outcome_is": guess.outcome_is.value, "value_names": {},
    }
    choices.update(cast(Choices, copy.deepcopy(AUDIT_DEFAULTS)))
    choices.update(cast(Choices, _merged_options(None)))
    return choices, guess


def protected_condition(ch: Choices, frame: pd.DataFrame) -> Condition:
    """The protected condition the choices describe (values for text, a comparison for numbers)."""
    column = check_column(frame, ch.get("protected_column"), "protected")
    if is_numeric(frame[column]):
        number = ch.get("protected_number")
        if number is None or not np.isfinite(float(number)):
            raise LuskinError(f"Give the number that '{column}' is compared with to form the protected group.")
        number = int(number) if float(number).is_integer() else number
        return Condition(column, ch.get("protected_op") or ">=", number)
    values = list(ch.get("protected_values") or [])
    if not values:
        raise LuskinError(f"Choose which values of '{column}' form the protected group.")
    return Condition(column, "==", values[0]) if len(values) == 1 else Condition(column, "in", tuple(values))


def audit_choice(ch: Choices, key: str) -> Any:
    """One of the Audit page's choices, or its default (choices made before these existed lack them)."""
    value = cast(dict[str, Any], ch).get(key, AUDIT_DEFAULTS[key])
    return copy.deepcopy(AUDIT_DEFAULTS[key]) if value is None and AUDIT_DEFAULTS[key] is not None else value


def set_choice(ch: Choices, key: str, value: Any) -> None:
    """Set one of the choices a widget names by its key (a key the page holds in a variable)."""
    cast(dict[str, Any], ch)[key] = value


def _direction(ch: Choices) -> str:
    """The outcome's direction as chosen; refused in words while the page is still asking (the names did not say).

    Choices saved before the direction existed lack the key and keep the favourable reading they were made with.
    """
    if "outcome_is" not in ch:
        return "favourable"
    meaning = ch.get("outcome_is")
    if not meaning:
        outcome = (audit_choice(ch, "score_column") if audit_choice(ch, "outcome_type") in ("score", "amount")
                   else ch.get("outcome"))
        raise LuskinError(f"Say whether the outcome counted ('{outcome}') is good or bad for the person, on the Data "
                          "page: Luskin could not tell from the names, and no verdict is drawn until you do.")
    return str(meaning)


def spec_from_choices(ch: Choices, frame: pd.DataFrame) -> AuditSpec:
    """The page's thin parser: the choices into the specification's typed parts, then the one validator.

    Each part checks itself when built and :func:`luskin_core.spec.validation.check_spec` adds the rules
    that need the rows, so a mistake reads here as in the command line and the library. Only what
    is about the page's own widgets is said here (strata chosen as the way to form cells, but no
    column yet; a score outcome without its column).
    """
    outcome = _outcome_part(ch, frame)
    groups = _groups_part(ch, frame)
    cells = _cells_part(ch, groups)
    judgement = Judgement(
        metric=audit_choice(ch, "metric"), tolerance=ch.get("tolerance", DEFAULT_TOLERANCE),
        ratio_threshold=audit_choice(ch, "ratio_threshold"), correction=audit_choice(ch, "correction"),
        min_group_size=audit_choice(ch, "min_group_size"), min_group_share=audit_choice(ch, "min_group_share"))
    return check_spec(AuditSpec.from_parts(outcome, groups, cells, judgement), frame)


def _outcome_part(ch: Choices, frame: pd.DataFrame) -> OutcomeSpec:
    """The outcome: a label with its positive value, or a score column with its cut-off (checked on the rows)."""
    kind = audit_choice(ch, "outcome_type")
    score = kind in ("score", "amount")
    if score and audit_choice(ch, "score_column") is None:
        raise LuskinError(("Choose the amount to audit (a numeric column: pay, a price)" if kind == "amount" else
                           "Choose the numeric score column to audit (e.g. a risk score)")
                          + ", or audit the outcome label instead.")
    # The chosen column's own problem first (an empty column offers no positive value to choose).
    if kind == "amount":   # chosen, never assumed: its mean and median (the Amounts page)
        column = check_amount_column(frame, audit_choice(ch, "score_column"))
        return OutcomeSpec(outcome=column, positive=None, outcome_type="amount", outcome_is=_direction(ch))
    if score:
        check_score_column(frame, audit_choice(ch, "score_column"))
        return OutcomeSpec(outcome=audit_choice(ch, "score_column"), positive=None, outcome_type="score",
                           score_cutoff=audit_choice(ch, "score_cutoff"),
                           outcome_is=_direction(ch))
    check_outcome(frame, ch.get("outcome"), ch.get("positive"))
    return OutcomeSpec(outcome=str(ch.get("outcome")), positive=ch.get("positive"), outcome_type="label",
                       score_cutoff=None, outcome_is=_direction(ch))


def _groups_part(ch: Choices, frame: pd.DataFrame) -> GroupSpec:
    """Who is compared: the values of columns, or a protected condition's two classes."""
    names: Any = ch.get("value_names") or {}  # GroupSpec checks and freezes them
    unknown = tuple(audit_choice(ch, "unknown_values") or ())
    if audit_choice(ch, "group_mode") == "columns":
        return GroupSpec(group_by=tuple(audit_choice(ch, "group_by") or ()), reference=audit_choice(ch, "reference"),
                         value_names=names, unknown_values=unknown)
    groups = GroupSpec(protected=protected_condition(ch, frame), group_label=ch.get("group_label") or None,
                       other_label=ch.get("other_label") or None, value_names=names, unknown_values=unknown)
    reference = audit_choice(ch, "reference")
    if reference in (groups.group_name, groups.other_name):   # a reference left from another way of grouping
        groups = replace(groups, reference=reference)
    return groups


def _cells_part(ch: Choices, groups: GroupSpec) -> CellSpec:
    """Within what: a filter's two sides, the strata (and the ranges of the compared columns), the population."""
    cell_mode = audit_choice(ch, "cell_mode")
    strata = tuple(audit_choice(ch, "strata") or ()) if cell_mode == "strata" else ()
    if cell_mode == "strata" and not strata:
        raise LuskinError("Choose at least one column to compare like with like (e.g. education), or choose "
                          "'All rows together'.")
    filters = tuple(Condition.from_dict(c) for c in ch.get("filters") or ()) if cell_mode == "filter" else ()
    used = {c.lower() for c in (groups.group_by + strata)}
    return CellSpec(
        filters=filters, filter_label=ch.get("filter_label") or None if filters else None,
        not_filter_label=ch.get("not_filter_label") or None if filters else None, strata=strata,
        bins=cast(Any, {str(name): cuts for name, cuts in (audit_choice(ch, "bins") or {}).items()
                        if cuts and str(name).lower() in used}),  # CellSpec checks and freezes them
        n_bins=audit_choice(ch, "n_bins"),
        population=tuple(Condition.from_dict(c) for c in ch.get("population") or ()))




@dataclass(frozen=True)
class SpecState:
    """The session's typed specification, or the plain reason the choices make none.

    Kept in the session under :data:`luskin_app.keys.SPEC_MEMO`; ``made_from`` (the data's fingerprint and the
    choices' JSON) says which choices it was parsed from, so it is parsed again only when they change.
    """

    made_from: tuple[str, str]
    spec: AuditSpec | None
    problem: str | None = None


def current_spec() -> tuple[AuditSpec | None, str | None]:
    """The session's typed AuditSpec, or None and the plain reason the choices make none.

    Every page and the sidebar read it from the session on each run; the choices are parsed
    (:func:`spec_from_choices`) only when they or the data have changed.
    """
    data = _dataset.dataset()
    ch = choices()
    settle_unknown(ch, data)
    made_from = (str(data.fingerprint), json.dumps({k: ch.get(k) for k in SPEC_KEYS}, sort_keys=True, default=str))
    state = st.session_state.get(keys.SPEC_MEMO)
    if not isinstance(state, SpecState) or state.made_from != made_from:
        try:
            state = SpecState(made_from, spec_from_choices(ch, data.frame))
        except LuskinError as err:
            state = SpecState(made_from, None, str(err))
        st.session_state[keys.SPEC_MEMO] = state
    return state.spec, state.problem


def class_names(spec: AuditSpec) -> GroupNames:
    """The two classes' names as the audit resolves them from the data ("Male", never "Non-Female" for a
    two-valued column); every page and the sidebar say them so. A configured source's frame holds its distinct
    values, so every value is seen."""
    return group_names(executor_for(_dataset.dataset().frame), spec)


# --------------------------------------------------------------------------------------------
# Values that mean "not known" (a data set's own code, such as U or 9)
# --------------------------------------------------------------------------------------------
def unknown_options(ch: Choices, data: _dataset.Dataset) -> list[str]:
    """The values the Audit page offers to read as "not known": each group column's values as text (the core's
    form, 9.0 as "9"), most frequent first, without those the core reads so already (missing, "Unknown",
    "Decline to self-identify"). None for a column cut into ranges (its groups are ranges, not values) or, for a
    protected condition, a numeric column (a comparison of numbers leaves no value out) nor the values that form
    the protected group (a condition that names a value asks about its rows)."""
    by_columns = audit_choice(ch, "group_mode") == "columns"
    present = {str(c).lower(): c for c in data.frame.columns}
    out: list[str] = [] if by_columns else [value_key(v) for v in ch.get("protected_values") or []]
    taken = len(out)
    for name in _group_columns(ch):
        column = present.get(name.lower())
        if column is not None:
            out += [t for t in _unknown_texts(str(data.fingerprint), str(column), by_columns, data.frame[column])
                    if t not in out]
    return out[taken:]


@st.cache_data(show_spinner=False, max_entries=64)
def _unknown_texts(fingerprint: str, column: str, by_columns: bool, _series: pd.Series) -> list[str]:
    """One column's values that may be named "not known", once per dataset and column: the check of the named
    values runs on every run of every page (:func:`current_spec`), and a column of millions took 60 ms a look."""
    if (by_columns and cut_into_ranges(_series)) or (not by_columns and is_numeric(_series)):
        return []
    out: list[str] = []
    for value in value_options(_series):
        text = value_key(value)
        if text and text not in out and not is_unknown_value(text):
            out.append(text)
    return out


def settle_unknown(ch: Choices, data: _dataset.Dataset) -> list[str]:
    """The values named "not known", kept only for the group columns they were named for and only while those
    columns hold them: other data, another protected column or other group columns clear them (and the Audit
    page's box), so that they never name a value the columns do not have."""
    columns = _group_columns(ch)
    named = [str(v) for v in audit_choice(ch, "unknown_values") or []]
    if not columns:   # no group column yet (just switched to groups by columns): nothing to check them against
        return named
    if named and ch.get("unknown_columns") not in (None, columns):
        named = []
        st.session_state.pop(keys.AUDIT_UNKNOWN_VALUES, None)
    elif named:   # compared as the core compares them ("u" names "U"), kept as the column spells them
        offered = {unknown_key(v): v for v in unknown_options(ch, data)}
        lacking = [v for v in named if unknown_key(v) not in offered and not is_unknown_value(v)]
        if lacking:   # a loaded configuration (or other data) named values these columns lack: said on the page
            st.session_state[keys.AUDIT_UNKNOWN_DROPPED] = lacking
        named = list(dict.fromkeys(offered[unknown_key(v)] for v in named if unknown_key(v) in offered))
    if named != audit_choice(ch, "unknown_values"):
        ch["unknown_values"] = named
    if ch.get("unknown_columns") != columns:
        ch["unknown_columns"] = columns
    return named


def set_unknown(ch: Choices, values: Sequence[str]) -> None:
    """Name the values that mean "not known" (the Audit page's box); a reference group they now name goes back
    to the automatic one, since a group of unknown category is never the reference."""
    values = [str(v) for v in values]
    if values == audit_choice(ch, "unknown_values"):
        return
    ch["unknown_values"] = values
    ch["unknown_columns"] = _group_columns(ch)
    reference = audit_choice(ch, "reference")
    if reference is not None and is_unknown_group(str(reference), extra=values):
        ch["reference"] = None
        st.session_state.pop(keys.AUDIT_REFERENCE, None)


def set_filters(filters: list[dict[str, Any]]) -> None:
    """Replace the filter; the preset's cell names no longer apply to a different filter."""
    ch = choices()
    if filters != ch.get("filters"):
        ch["filters"] = filters
        ch["filter_label"] = None
        ch["not_filter_label"] = None


# --------------------------------------------------------------------------------------------
# The way out of a problem
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Fix:
    """A one-click way out of a problem: a button label (plain text) and what it does."""

    label: str
    key: str
    apply: Callable[[], None]


def _drop_filters_on(column: str) -> Callable[[], None]:
    def apply() -> None:
        set_filters([c for c in choices().get("filters") or [] if str(c.get("column", "")).lower() != column.lower()])
        st.session_state.pop(keys.FILTER_ERROR, None)
    return apply


def _drop_population() -> None:
    choices()["population"] = []


def _drop_from(key: str, column: str) -> Callable[[], None]:
    def apply() -> None:
        ch = choices()
        set_choice(ch, key, [c for c in audit_choice(ch, key) if str(c).lower() != column.lower()])
        st.session_state.pop(keys.audit_widget(key), None)
    return apply


def _use_condition() -> None:
    ch = choices()
    ch["group_mode"] = "condition"
    ch["reference"] = None
    for key in ("audit_group_mode", "audit_reference"):
        st.session_state.pop(key, None)


def _use_label() -> None:
    choices()["outcome_type"] = "label"
    st.session_state.pop(keys.AUDIT_OUTCOME_TYPE, None)


def _group_columns(ch: Choices) -> list[str]:
    if audit_choice(ch, "group_mode") == "columns":
        return [str(c) for c in audit_choice(ch, "group_by")]
    return [str(ch["protected_column"])] if ch.get("protected_column") else []


def _audit_fixes(ch: Choices, frame: pd.DataFrame) -> list[Fix]:
    """Ways out of the Audit page's own choices: a column in two roles, a one-valued group column ..."""
    out: list[Fix] = []
    groups = {c.lower() for c in _group_columns(ch)}
    outcome = str(audit_choice(ch, "score_column") if audit_choice(ch, "outcome_type") in ("score", "amount")
                  else ch.get("outcome") or "").lower()
    present = {str(c).lower(): c for c in frame.columns}
    by_columns = audit_choice(ch, "group_mode") == "columns"
    if audit_choice(ch, "cell_mode") == "strata":
        for i, name in enumerate(audit_choice(ch, "strata")):
            if str(name).lower() in groups | {outcome} or str(name).lower() not in present:
                out.append(Fix(f"Remove {name} from the strata", f"fix_strata_{i}", _drop_from("strata", str(name))))
    if by_columns:
        for i, name in enumerate(audit_choice(ch, "group_by")):
            column = present.get(str(name).lower())
            if column is None or str(name).lower() == outcome or frame[column].nunique(dropna=True) < 2:
                out.append(Fix(f"Remove {name} from the groups", f"fix_group_{i}", _drop_from("group_by", str(name))))
        out.append(Fix("Compare one group with the rest instead", "fix_condition", _use_condition))
    if audit_choice(ch, "outcome_type") in ("score", "amount"):
        what = "an amount" if audit_choice(ch, "outcome_type") == "amount" else "a score"
        out.append(Fix(f"Audit the outcome label instead of {what}", "fix_label", _use_label))
    return out


def fixes(ch: Choices, frame: pd.DataFrame) -> list[Fix]:
    """The ways out of the choices' problems that a page can offer as buttons.

    A filter on the outcome or a group column (say the user made ``age`` protected while a
    filter on ``age`` was set, on another page), or on a column the data does not have; a
    population restriction on a missing column; and the Audit page's own choices (a column
    both grouping and stratifying, a group column with one value, a reference that is not a
    group, a score that is not numeric).
    """
    roles = {str(ch.get("outcome")).lower()} if ch.get("outcome") else set()
    roles |= {c.lower() for c in _group_columns(ch)}
    present = {str(c).lower() for c in frame.columns}
    out: list[Fix] = []
    seen: set[str] = set()
    if audit_choice(ch, "cell_mode") == "filter":
        for i, condition in enumerate(ch.get("filters") or []):
            column = str(condition.get("column", ""))
            if column.lower() in seen or (column.lower() not in roles and column.lower() in present):
                continue
            seen.add(column.lower())
            out.append(Fix(f"Remove the filter on {column}", f"fix_filter_{i}", _drop_filters_on(column)))
    if any(str(c.get("column", "")).lower() not in present for c in ch.get("population") or []):
        out.append(Fix("Audit all rows (drop the saved restriction)", "fix_population", _drop_population))
    return out + _audit_fixes(ch, frame)


def model_columns(ch: Choices, frame: pd.DataFrame, outcome: str,
                  leave_out: Sequence[str] = ()) -> list[str]:
    """The columns the models will use: the chosen ones, or the core's default (all but the outcome)."""
    from luskin_core.corrections.models import choose_features

    banned = {str(c).lower() for c in (outcome, *leave_out)}
    chosen = ch.get("features") or list(choose_features(frame, outcome).columns)
    return [c for c in chosen if str(c).lower() not in banned and c in frame.columns]


def check_model_inputs(ch: Choices, frame: pd.DataFrame, outcome: str, leave_out: Sequence[str] = ()) -> None:
    """The model columns hold finite numbers (LuskinError otherwise; :func:`model_fixes` offers the way out)."""
    check_finite(frame, model_columns(ch, frame, outcome, leave_out))


def _drop_feature(ch: Choices, column: str, columns: list[str]) -> Callable[[], None]:
    def apply() -> None:
        ch["features"] = [c for c in columns if c != column]
        st.session_state.pop(keys.MODEL_FEATURES, None)
    return apply


def model_fixes(ch: Choices, frame: pd.DataFrame, outcome: str, leave_out: Sequence[str] = ()) -> list[Fix]:
    """One button per model column holding infinite numbers: leave it out of the model inputs."""
    try:
        columns = model_columns(ch, frame, outcome)
    except LuskinError:
        return []
    leave = {str(c).lower() for c in leave_out}
    bad = infinite_counts(frame, [c for c in columns if c.lower() not in leave])
    return [Fix(f"Leave {column} out of the model inputs", f"fix_inf_{i}", _drop_feature(ch, column, columns))
            for i, column in enumerate(bad)]


# --------------------------------------------------------------------------------------------
# Values offered in dropdowns
# --------------------------------------------------------------------------------------------
def value_options(series: pd.Series) -> list[Any]:
    """A column's values, most frequent first (at most MAX_CHOICES), as plain Python values.

    Values longer than MAX_VALUE_CHARS are left out (:func:`long_values` counts them): Streamlit
    keeps and sends a widget's state, and one 50 MB cell would exceed its limit.
    """
    counts = series.value_counts(dropna=True)
    if counts.empty:
        return []
    index = counts.index
    if not is_numeric(series):
        index = index[[len(str(v)) <= MAX_VALUE_CHARS for v in index]]
    return [plain(v) for v in index[:MAX_CHOICES]]


def long_values(series: pd.Series) -> int:
    """How many distinct values are too long to offer in a dropdown."""
    if is_numeric(series):
        return 0
    return int(sum(len(str(v)) > MAX_VALUE_CHARS for v in series.dropna().unique()))
