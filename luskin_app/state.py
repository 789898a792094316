"""Session state and caching shared by every page of the dashboard.

The pages stay thin: they gather choices with widgets and draw what the core returns. This
module owns what lives between reruns and pages:

* the *dataset* (the last one that loaded without error: a bad upload never replaces it),
* the *choices* (a plain dict: outcome, positive value, protected group, filters, tolerance,
  and each page's options) from which the AuditSpec is built; widgets are seeded from it when
  a page is (re)opened, because Streamlit forgets a widget's value when its page is left,
* cached computations keyed on the data's fingerprint and the specification's JSON, so that
  revisiting a page or moving back to an earlier choice is instant.
"""

from __future__ import annotations

import copy
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd
import streamlit as st

from luskin_core import __version__
from luskin_core.audit import AuditResult, audit
from luskin_core.conditions import Condition
from luskin_core.data import PRESETS, frame_fingerprint, load_csv, load_sample, sqf_shared_path
from luskin_core.errors import LuskinError
from luskin_core.spec import AuditSpec, resolve_column

DEFAULT_SAMPLE = "adult"
SAMPLE_TITLES = {"adult": "Adult (census income)", "compas": "COMPAS (re-offending)",
                 "sqf": "NYPD stop-and-frisk 2014"}
MAX_CHOICES = 300  # most frequent values offered in a value dropdown

# Help texts for jargon, shared by every page so the words mean the same everywhere.
HELP = {
    "tolerance": ("How large a gap between the two groups' shares you accept as fair, in percentage "
                  "points. The paper's '≈'. 5 points is a common choice."),
    "p_value": ("The chance of seeing a gap at least this large if the two groups were in fact treated "
                "alike. Below 0.05 the gap is called 'not due to chance'."),
    "ci": "95% confidence interval: the range that contains the true share with 95% confidence.",
    "auc": ("AUC (area under the ROC curve): how well the model ranks positive above negative cases; "
            "1 is perfect, 0.5 is a coin toss. Measured against the original labels."),
    "tpr": "TPR (true positive rate): of the people whose outcome is positive, the share the model flags.",
    "fpr": "FPR (false positive rate): of the people whose outcome is negative, the share the model flags anyway.",
    "lambda": ("lambda: how much fairness weighs against accuracy. 0 = accuracy only; larger values push "
               "the groups' TPR and FPR together at some cost in accuracy."),
    "alpha": ("alpha: the weight on accuracy in the training objective (1 = accuracy only). Smaller "
              "alpha puts more weight on making the groups' score distributions alike."),
    "seed": "A number that fixes the random split and training, so the same choices give the same result.",
}


# --------------------------------------------------------------------------------------------
# Dataset
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Dataset:
    """The data the session works on: where it came from, the frame, and its fingerprint."""

    source: str          # "sample:adult" or "upload:<file name>"
    title: str
    frame: pd.DataFrame
    fingerprint: str

    @property
    def sample(self) -> str | None:
        """The sample's name when the data is a bundled sample, else None."""
        return self.source.split(":", 1)[1] if self.source.startswith("sample:") else None


@st.cache_resource(show_spinner="Loading the sample data…", max_entries=4)
def _sample_dataset(name: str) -> Dataset:
    """A bundled sample, loaded once per server (shared; never mutated)."""
    frame = load_sample(name)
    return Dataset(f"sample:{name}", PRESETS[name].title, frame, frame_fingerprint(frame))


def available_samples() -> list[str]:
    """Samples a user can pick: Adult and COMPAS always, SQF when its file is present."""
    return [name for name in SAMPLE_TITLES if name != "sqf" or sqf_shared_path() is not None]


def dataset() -> Dataset:
    """The current dataset; on the first visit the Adult sample with the paper's settings."""
    if "dataset" not in st.session_state:
        use_sample(DEFAULT_SAMPLE)
    return st.session_state["dataset"]


def use_sample(name: str) -> None:
    """Switch to a bundled sample and apply its paper preset."""
    data = _sample_dataset(name)
    _set_dataset(data, choices_from_spec(PRESETS[name].spec, data.frame, features=PRESETS[name].features))


def use_upload(name: str, raw: bytes) -> None:
    """Read an uploaded CSV; on success it becomes the dataset, on failure the old one stays.

    Raises LuskinError with a plain message (empty file, not a CSV, a single column, ...).
    """
    frame = load_csv(raw)
    data = Dataset(f"upload:{name}", name, frame, frame_fingerprint(frame))
    _set_dataset(data, guess_choices(frame))


def _set_dataset(data: Dataset, choices: dict[str, Any]) -> None:
    st.session_state["dataset"] = data
    st.session_state["choices"] = choices
    forget_widgets()


# Widget keys whose values are seeded from the choices; cleared when the dataset changes.
WIDGET_KEYS = ("outcome", "positive", "protected_column", "protected_values", "protected_op",
               "protected_number", "group_label", "other_label", "tolerance_points",
               "filter_column", "filter_op", "filter_value_pick", "filter_value_multi",
               "filter_value_number", "filter_column_seen", "retrain_algorithm", "retrain_pair", "retrain_direction",
               "retrain_seed", "retrain_all_cells", "thr_source", "thr_split", "thr_model", "thr_score_column", "thr_solver",
               "thr_lambda", "thr_seed", "thr_tuning", "eq_alpha", "eq_alphas", "eq_seed", "model_features")


def forget_widgets() -> None:
    """Drop widget values so that the pages re-seed them from the (new) choices."""
    for key in WIDGET_KEYS:
        st.session_state.pop(key, None)


def is_new_upload(upload: Any, token_key: str) -> bool:
    """True once per uploaded file: Streamlit hands the same file to every rerun of the page."""
    token = f"{upload.file_id}:{upload.name}:{upload.size}"
    if st.session_state.get(token_key) == token:
        return False
    st.session_state[token_key] = token
    return True


def seed(key: str, value: Any) -> None:
    """Give a widget its remembered value when the page is opened (Streamlit forgot it)."""
    if key not in st.session_state:
        st.session_state[key] = value


# --------------------------------------------------------------------------------------------
# Choices <-> AuditSpec
# --------------------------------------------------------------------------------------------
DEFAULT_OPTIONS: dict[str, dict[str, Any]] = {
    "retrain": {"algorithm": 1, "first": "LR", "second": "MLP", "direction": "down", "all_cells": False,
                "seed": 0},
    "thresholds": {"source": "model", "model": "LR", "score_column": None, "solver": "exact",
                   "lam": 1.0, "seed": 0, "split": "tune", "tuning": "validation"},
    "equalize": {"alpha": None, "alphas": [0.0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.7, 0.9, 1.0],
                 "seed": 0},
}


def _plain(value: Any) -> Any:
    """numpy scalars to Python ones (JSON and widget friendly)."""
    return value.item() if isinstance(value, np.generic) else value


def is_numeric(series: pd.Series) -> bool:
    return bool(pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series))


def choices_from_spec(spec: AuditSpec, frame: pd.DataFrame, features: Sequence[str] | None = None,
                      options: dict[str, Any] | None = None) -> dict[str, Any]:
    """The widget-level choices that reproduce ``spec`` on ``frame``."""
    p = spec.protected
    try:
        column = resolve_column(frame, p.column, "protected")
    except LuskinError:
        column = p.column
    numeric = column in frame.columns and is_numeric(frame[column])
    values = list(p.value) if isinstance(p.value, tuple) else [p.value]
    choices = {
        "outcome": spec.outcome,
        "positive": _plain(spec.positive),
        "protected_column": column,
        "protected_values": [] if numeric or p.op not in ("==", "in") else [_plain(v) for v in values],
        "protected_op": p.op if numeric and p.op not in ("in", "not in") else ">=",
        "protected_number": float(p.value) if numeric and p.op not in ("in", "not in") else 0.0,
        "protected_condition": p.to_dict(),
        "group_label": spec.group_label or "",
        "other_label": spec.other_label or "",
        "filters": [c.to_dict() for c in spec.filters],
        "filter_label": spec.filter_label,
        "not_filter_label": spec.not_filter_label,
        "population": [c.to_dict() for c in spec.population],
        "tolerance": spec.tolerance,
        "features": list(features) if features else None,
    }
    merged = copy.deepcopy(DEFAULT_OPTIONS)
    for page, values_ in (options or {}).items():
        merged.setdefault(page, {}).update(values_)
    choices.update(merged)
    return choices


def guess_choices(frame: pd.DataFrame) -> dict[str, Any]:
    """Reasonable first choices for an uploaded file: the user changes them with dropdowns."""
    columns = list(frame.columns)
    usable = [c for c in columns if frame[c].nunique(dropna=True) >= 2]
    binary = [c for c in usable if frame[c].nunique(dropna=True) == 2]
    outcome = (binary or usable or columns)[-1]
    counts = frame[outcome].value_counts(dropna=True)
    positive = _plain(counts.index[-1]) if len(counts) else ""
    words = ("race", "ethnic", "sex", "gender")
    named = [c for c in usable if c != outcome and any(w in str(c).lower() for w in words)]
    text = [c for c in usable if c != outcome and not is_numeric(frame[c])]
    others = [c for c in columns if c != outcome]
    protected = (named or text or others or columns)[0]
    series = frame[protected]
    choices = {
        "outcome": outcome, "positive": positive, "protected_column": protected,
        "protected_values": [], "protected_op": ">=", "protected_number": 0.0,
        "protected_condition": None, "group_label": "", "other_label": "",
        "filters": [], "filter_label": None, "not_filter_label": None, "population": [],
        "tolerance": 0.05, "features": None,
    }
    if is_numeric(series):
        median = series.median()
        choices["protected_number"] = float(median) if pd.notna(median) else 0.0
    else:
        top = series.value_counts(dropna=True)
        choices["protected_values"] = [_plain(top.index[0])] if len(top) else []
    choices.update(copy.deepcopy(DEFAULT_OPTIONS))
    return choices


def choices() -> dict[str, Any]:
    """The session's current choices (the dataset is loaded first if needed)."""
    dataset()
    return st.session_state["choices"]


def protected_condition(ch: dict[str, Any], frame: pd.DataFrame) -> Condition:
    """The protected condition the choices describe (values for text, a comparison for numbers)."""
    column = ch["protected_column"]
    if column not in frame.columns:
        raise LuskinError(f"There is no column named '{column}' in the data.")
    if is_numeric(frame[column]):
        number = ch.get("protected_number")
        number = int(number) if number is not None and float(number).is_integer() else number
        return Condition(column, ch.get("protected_op") or ">=", number)
    values = list(ch.get("protected_values") or [])
    if not values:
        raise LuskinError(f"Choose which values of '{column}' form the protected group.")
    return Condition(column, "==", values[0]) if len(values) == 1 else Condition(column, "in", tuple(values))


def spec_from_choices(ch: dict[str, Any], frame: pd.DataFrame) -> AuditSpec:
    """Build and check the AuditSpec; raise LuskinError with a plain message when it cannot work."""
    outcome = ch.get("outcome")
    if outcome not in frame.columns:
        raise LuskinError("Choose the outcome column (the decision or label to audit).")
    series = frame[outcome]
    if series.notna().sum() == 0:
        raise LuskinError(f"The outcome column '{outcome}' has no values at all (every row is missing). "
                          "Choose another outcome column.")
    if series.nunique(dropna=True) < 2:
        raise LuskinError(f"The outcome column '{outcome}' has a single value "
                          f"('{series.dropna().iloc[0]}'), so there is nothing to compare.")
    positive = ch.get("positive")
    present = series.dropna().astype(str).unique() if not is_numeric(series) else series.dropna().unique()
    if is_numeric(series):
        try:
            found = float(positive) in {float(v) for v in present}
        except (TypeError, ValueError):
            found = False
    else:
        found = str(positive) in set(present)
    if not found:
        shown = ", ".join(str(v) for v in list(present)[:10])
        raise LuskinError(f"The value '{positive}' never occurs in the outcome column '{outcome}'. "
                          f"Its values are: {shown}.")
    column = ch.get("protected_column")
    if column not in frame.columns:
        raise LuskinError("Choose the protected column (e.g. race or sex).")
    if column == outcome:
        raise LuskinError("The protected column and the outcome column must be different columns.")
    values = frame[column].dropna().unique()
    if len(values) < 2:
        only = f" ('{values[0]}')" if len(values) else ""
        raise LuskinError(f"The protected column '{column}' has only one value{only}, so there are no two "
                          "groups to compare. Choose another protected column.")
    condition = protected_condition(ch, frame)
    held = condition.mask(frame)
    known = condition.known(frame)
    if not held.any():
        raise LuskinError(f"No row has {condition.describe()}: the protected group is empty. Choose other values.")
    if held[known].all():
        raise LuskinError(f"Every row has {condition.describe()}: there is no other class to compare with. "
                          "Choose fewer values for the group.")
    return AuditSpec(
        outcome=outcome, positive=positive, protected=condition,
        filters=tuple(Condition.from_dict(c) for c in ch.get("filters") or ()),
        population=tuple(Condition.from_dict(c) for c in ch.get("population") or ()),
        tolerance=float(ch.get("tolerance", 0.05)),
        group_label=ch.get("group_label") or None, other_label=ch.get("other_label") or None,
        filter_label=ch.get("filter_label") or None, not_filter_label=ch.get("not_filter_label") or None,
    )


def current_spec() -> tuple[AuditSpec | None, str | None]:
    """The AuditSpec of the current choices, or None and the plain reason it cannot be built."""
    data = dataset()
    try:
        return spec_from_choices(choices(), data.frame), None
    except LuskinError as err:
        return None, str(err)


def require_spec() -> AuditSpec:
    """The spec, or an error box pointing to the Data page and a stop of this page's run."""
    spec, problem = current_spec()
    if spec is None:
        st.error(f"{problem}\n\nFix the choices on the **Data** page first.", icon="⚠️")
        st.page_link(PAGE_FILES["data"], label="Go to the Data page", icon="📄")
        st.stop()
    return spec


PAGE_FILES = {"data": "app_pages/data.py", "audit": "app_pages/audit.py", "retrain": "app_pages/retrain.py",
              "thresholds": "app_pages/thresholds.py", "equalized": "app_pages/equalized.py",
              "report": "app_pages/report.py"}


def set_filters(filters: list[dict[str, Any]]) -> None:
    """Replace the filter; the preset's cell names no longer apply to a different filter."""
    ch = choices()
    if filters != ch.get("filters"):
        ch["filters"] = filters
        ch["filter_label"] = None
        ch["not_filter_label"] = None


def value_options(series: pd.Series) -> list[Any]:
    """A column's values, most frequent first (at most MAX_CHOICES), as plain Python values."""
    counts = series.value_counts(dropna=True).head(MAX_CHOICES)
    return [_plain(v) for v in counts.index]


# --------------------------------------------------------------------------------------------
# Cached computations
# --------------------------------------------------------------------------------------------
@st.cache_resource(show_spinner=False, max_entries=256)
def _audit_cached(fingerprint: str, spec_json: str, _frame: pd.DataFrame) -> AuditResult:
    return audit(_frame, AuditSpec.from_json(spec_json))


def run_audit(spec: AuditSpec) -> AuditResult:
    """The audit of the current dataset under ``spec`` (cached on fingerprint + spec JSON)."""
    data = dataset()
    return _audit_cached(data.fingerprint, spec.to_json(), data.frame)


@st.cache_resource(show_spinner=False)
def _result_store() -> tuple["OrderedDict[str, Any]", threading.Lock]:
    """Results of long computations, shared by all sessions of this server (most recent last)."""
    return OrderedDict(), threading.Lock()


def cached_run(kind: str, key: str, compute: Callable[[], Any], limit: int = 16) -> Any:
    """``compute()`` once per key, remembered across reruns, pages and sessions.

    Unlike st.cache_resource this lets ``compute`` drive a progress bar created on the page
    (Streamlit cannot replay elements drawn inside a cached function into another layout).
    A failure (e.g. a LuskinError) is not remembered.
    """
    store, lock = _result_store()
    full = f"{kind}|{key}"
    with lock:
        if full in store:
            store.move_to_end(full)
            return store[full]
    value = compute()
    with lock:
        store[full] = value
        while len(store) > limit:
            store.popitem(last=False)
    return value


def is_cached(kind: str, key: str) -> bool:
    """Whether ``cached_run`` already holds this result (then the page shows it without a click)."""
    store, lock = _result_store()
    with lock:
        return f"{kind}|{key}" in store


def options_key(options: dict[str, Any]) -> str:
    """A stable cache key for a page's options."""
    return json.dumps(options, sort_keys=True, default=str)


# --------------------------------------------------------------------------------------------
# Results of the other pages, for the report
# --------------------------------------------------------------------------------------------
def remember(kind: str, spec: AuditSpec, result: Any) -> None:
    """Keep a page's latest result (retrain, thresholds, equalized) for the report."""
    st.session_state.setdefault("results", {})[kind] = (dataset().fingerprint, spec.to_json(), result)


def recall(kind: str, spec: AuditSpec) -> Any:
    """A page's latest result if it was made from the current data and specification, else None."""
    saved = st.session_state.get("results", {}).get(kind)
    if saved and saved[0] == dataset().fingerprint and saved[1] == spec.to_json():
        return saved[2]
    return None


# --------------------------------------------------------------------------------------------
# Configuration file (save / load the whole view), in the report module's format
# --------------------------------------------------------------------------------------------
def dataset_ref() -> "Any":
    """The report module's reference to the current data (sample name or file name + fingerprint)."""
    from luskin_core.report import DatasetRef

    data = dataset()
    kind = "sample" if data.sample else "upload"
    name = data.sample or data.source.split(":", 1)[1]
    return DatasetRef(kind, name, data.fingerprint, int(data.frame.shape[0]), int(data.frame.shape[1]))


def page_options() -> dict[str, Any]:
    """Everything beyond the AuditSpec: the model columns and each page's options."""
    ch = choices()
    return {"features": ch.get("features"),
            "options": {page: dict(ch.get(page) or {}) for page in DEFAULT_OPTIONS}}


def configuration_json() -> str:
    """The whole view as the report module's configuration JSON (raises LuskinError without a spec)."""
    from luskin_core.report import config_to_json

    spec, problem = current_spec()
    if spec is None:
        raise LuskinError(f"The configuration cannot be saved yet: {problem}")
    return config_to_json(dataset_ref(), spec, page_options())


def apply_configuration(text: str | bytes) -> str:
    """Load a saved configuration: switch to its sample if needed and restore every choice.

    Returns a note for the user. Raises LuskinError (plain words) when the file cannot be used;
    then nothing changes.
    """
    from luskin_core.report import config_from_json

    config = config_from_json(text)
    ref = config.dataset
    note = ""
    if ref.kind == "sample":
        if ref.name not in SAMPLE_TITLES:
            raise LuskinError(f"The configuration names a sample '{ref.name}' that this version does not have.")
        frame = _sample_dataset(ref.name).frame
    else:
        frame = dataset().frame
        if ref.fingerprint and ref.fingerprint != dataset().fingerprint:
            note = (f"The configuration was saved with the file '{ref.name}', which differs from the data "
                    "loaded now: upload that file on the Data page first to get the same numbers.")
    extra = dict(config.extra or {})
    saved = extra.get("options") if isinstance(extra.get("options"), dict) else extra
    options = {k: v for k, v in saved.items() if k in DEFAULT_OPTIONS and isinstance(v, dict)}
    new = choices_from_spec(config.spec, frame, features=extra.get("features"), options=options)
    spec_from_choices(new, frame)  # fail now, in plain words, before anything changes
    if ref.kind == "sample" and dataset().source != f"sample:{ref.name}":
        st.session_state["dataset"] = _sample_dataset(ref.name)
    st.session_state["choices"] = new
    forget_widgets()
    return note


# --------------------------------------------------------------------------------------------
# Page furniture
# --------------------------------------------------------------------------------------------
def show_error(err: Exception) -> None:
    """A user's mistake as a plain message (never a traceback)."""
    st.error(str(err), icon="⚠️")


def guarded(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call a core function; show a LuskinError plainly and return None."""
    try:
        return func(*args, **kwargs)
    except LuskinError as err:
        show_error(err)
        return None


def sidebar_summary(where: Any = None) -> None:
    """What is loaded and audited, on every page, so a presenter never loses the thread."""
    data = dataset()
    spec, _ = current_spec()
    with where if where is not None else st.sidebar:
        st.markdown(f"**Data:** {data.title}  \n{len(data.frame):,} rows × {data.frame.shape[1]} columns")
        if spec is not None:
            lines = [f"**Outcome:** {spec.outcome} = {spec.positive}",
                     f"**Groups:** {spec.group_name} vs {spec.other_name}"]
            if spec.filters:
                lines.append(f"**Filter:** {spec.filter_text}")
            st.markdown("  \n".join(lines))
        else:
            st.markdown("**Choices incomplete:** see the Data page.")
        st.caption(f"Luskin {__version__}")
