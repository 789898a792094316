"""Saving and loading the whole view as a configuration file (the report module's JSON format).

A configuration names its data: a bundled sample (loading it switches to that sample), or an
uploaded file by name, size and fingerprint. A configuration of an uploaded file loaded while
other data is on screen waits for its file: the page says which file to upload (name, rows,
columns) and applies it when that file arrives, or applies it to the data on screen when the
user asks and its columns fit. Every entry is checked before use; a bad file changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

import pandas as pd
import streamlit as st

from luskin_core.corrections.equalize import DEFAULT_ALPHAS
from luskin_core.errors import LuskinError
from luskin_core.present.report import DatasetRef, LuskinConfig, config_from_json, config_to_json
from luskin_core.spec.options import MODEL, OPTION_CONSTRAINTS, Constraint
from luskin_core.spec.validation import check_features, shown

from . import choices as _choices
from . import dataset as _dataset
from . import keys, source_view

MAX_CONFIG_BYTES = 1_000_000  # a saved configuration is a few kilobytes
PAGE_NAMES = {"retrain": "Retrain", "thresholds": "Thresholds", "equalize": "Equalized distribution"}


# --------------------------------------------------------------------------------------------
# Saving
# --------------------------------------------------------------------------------------------
def dataset_ref() -> DatasetRef:
    """The report module's reference to the current data (sample name or file name + fingerprint)."""
    data = _dataset.dataset()
    return DatasetRef(data.ref.kind, data.file_name, data.fingerprint, data.n_rows, int(data.frame.shape[1]))


def page_options() -> dict[str, Any]:
    """Everything beyond the AuditSpec: the model columns and each page's options."""
    ch = _choices.choices()
    return {"features": ch.get("features"),
            "options": {page: dict(cast(dict[str, Any], ch).get(page) or {}) for page in _choices.DEFAULT_OPTIONS}}


def configuration_json() -> str:
    """The whole view as the report module's configuration JSON (raises LuskinError without a spec)."""
    spec, problem = _choices.current_spec()
    if spec is None:
        raise LuskinError(f"The configuration cannot be saved yet: {problem}")
    return config_to_json(dataset_ref(), spec, page_options())


# --------------------------------------------------------------------------------------------
# Checking a loaded file's entries
# --------------------------------------------------------------------------------------------
def _one_of(*allowed: Any) -> Callable[[str, Any], Any]:
    def check(what: str, value: Any) -> Any:
        if isinstance(value, bool) or value not in allowed:
            raise LuskinError(f"{what} must be one of {', '.join(map(str, allowed))}, not '{shown(value)}'.")
        return value
    return check


def _column_or_none(what: str, value: Any) -> Any:
    if value is not None and not isinstance(value, str):
        raise LuskinError(f"{what} must be a column name, not '{shown(value)}'.")
    return value


def _alpha_or_none(what: str, value: Any) -> Any:
    return None if value is None else _one_of(*DEFAULT_ALPHAS)(what, value)


def _alphas(what: str, value: Any) -> Any:
    if not isinstance(value, list):
        raise LuskinError(f"{what} must be a list of numbers among {', '.join(map(str, DEFAULT_ALPHAS))}.")
    return sorted({float(_one_of(*DEFAULT_ALPHAS)(what, v)) for v in value})


def _constrained(constraint: Constraint) -> Callable[[str, Any], Any]:
    """The check of an option's one declared constraint (luskin_core/spec/options.py), worded for a saved file."""
    def check(what: str, value: Any) -> Any:
        return constraint.check(value, label=what)
    return check


# The settings only a page has (which rows a chart shows, the alphas its widgets offer); every option of a
# tool is checked by its one constraint in OPTION_CONSTRAINTS, as the command line and the estimators check it.
_PAGE_ONLY: dict[str, dict[str, Callable[[str, Any], Any]]] = {
    "retrain": {},
    "thresholds": {"source": _one_of("model", "column"), "score_column": _column_or_none, "split": _one_of("tune", "test"),
                   "model": _constrained(MODEL)},  # the page names a model always (a score column is its 'source')
    "equalize": {"alpha": _alpha_or_none, "alphas": _alphas},
}
OPTION_CHECKS: dict[str, dict[str, Callable[[str, Any], Any]]] = {
    page: {key: _PAGE_ONLY[page][key] if key in _PAGE_ONLY[page] else _constrained(OPTION_CONSTRAINTS[page][key])
           for key in saved}
    for page, saved in _choices.DEFAULT_OPTIONS.items()
}


def check_extra(extra: Mapping[str, Any], frame: pd.DataFrame, outcome: str) -> tuple[Any, dict[str, Any]]:
    """The model columns and each page's options of a saved file, checked (LuskinError otherwise).

    The ranges are the widgets' own, so that a loaded value can always be shown.
    """
    features = check_features(frame, extra.get("features"), outcome)
    saved = extra.get("options", {k: v for k, v in extra.items() if k in OPTION_CHECKS})
    if not isinstance(saved, dict):
        raise LuskinError("The configuration's 'options' entry must hold each page's settings.")
    options: dict[str, Any] = {}
    for page, values in saved.items():
        if page not in OPTION_CHECKS:
            raise LuskinError(f"The configuration holds options for a page this version does not have: "
                              f"'{shown(page)}'.")
        if not isinstance(values, dict):
            raise LuskinError(f"The saved options of the {PAGE_NAMES[page]} page must be a set of named settings.")
        unknown = [str(k) for k in values if k not in OPTION_CHECKS[page]]
        if unknown:
            raise LuskinError(f"The saved options of the {PAGE_NAMES[page]} page hold settings this version does "
                              f"not know: {', '.join(shown(k) for k in unknown)}.")
        options[page] = {key: OPTION_CHECKS[page][key](f"The {PAGE_NAMES[page]} page's setting '{key}'", value)
                         for key, value in values.items()}
    return (list(features) if features else None), options


def read_configuration(raw: bytes | str) -> LuskinConfig:
    """Parse a configuration file; anything malformed is a plain LuskinError."""
    size = len(raw)
    if size > MAX_CONFIG_BYTES:
        raise LuskinError(f"This file is {size / 1e6:,.1f} MB; a Luskin configuration is a few kilobytes. "
                          "Choose the .json file saved from the Report page.")
    try:
        return config_from_json(raw)
    except LuskinError:
        raise
    except RecursionError:
        raise LuskinError("The file's JSON is nested too deeply to be a Luskin configuration. Choose the .json "
                          "file saved from the Report page.") from None
    except (TypeError, ValueError, AttributeError, KeyError) as err:
        raise LuskinError(f"The configuration file is malformed ({type(err).__name__}). Choose the .json file "
                          "saved from the Report page, unchanged.") from None


def build_choices(config: LuskinConfig, frame: pd.DataFrame) -> _choices.Choices:
    """The choices a configuration makes on ``frame``, checked in full before anything changes."""
    features, options = check_extra(config.extra or {}, frame, config.spec.outcome)
    new = _choices.choices_from_spec(config.spec, frame, features=features, options=options)
    _choices.spec_from_choices(new, frame)
    for condition in config.spec.filters + config.spec.population:
        condition.mask(frame.head(1))   # a condition that no longer fits the data says so now
    return new


# --------------------------------------------------------------------------------------------
# Loading, now or when its file arrives
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Pending:
    """A configuration of an uploaded file, waiting for that file."""

    config: LuskinConfig
    name: str   # the configuration file's name

    @property
    def wanted(self) -> str:
        """The file to upload, as the user knows it: name, rows and columns."""
        ref = self.config.dataset
        size = ""
        if ref.rows is not None and ref.columns is not None:
            size = f" ({ref.rows:,} rows, {ref.columns:,} columns)"
        return f"'{ref.name}'{size}"


def pending() -> Pending | None:
    return st.session_state.get(keys.PENDING_CONFIG)


def _matches(ref: DatasetRef, data: _dataset.Dataset) -> bool:
    if ref.fingerprint:
        return ref.fingerprint == data.fingerprint
    return ref.name == data.file_name and ref.rows in (None, len(data.frame)) \
        and ref.columns in (None, data.frame.shape[1])


def _apply(config: LuskinConfig, data: _dataset.Dataset) -> None:
    new = build_choices(config, data.frame)
    st.session_state[keys.DATASET] = data
    _choices.set_choices(new, confirmed=True)
    st.session_state.pop(keys.PENDING_CONFIG, None)


def apply_configuration(raw: bytes | str, name: str = "the configuration") -> tuple[bool, str]:
    """Load a saved configuration. Returns (applied, message for the user).

    A sample's configuration switches to that sample. An uploaded file's configuration applies
    at once to the same file; with other data on screen it waits for its file (applied is
    False and the message says which file to upload). Raises LuskinError (plain words) when the
    file cannot be used; then nothing changes.
    """
    config = read_configuration(raw)
    ref = config.dataset
    if ref.kind == "sample":
        if ref.name not in _dataset.SAMPLE_TITLES:
            raise LuskinError(f"The configuration names a sample '{shown(ref.name)}' that this version does not have.")
        if ref.name not in _dataset.available_samples():
            raise LuskinError(f"The configuration uses the '{shown(ref.name)}' sample, whose file is not on this "
                              "server.")
        _apply(config, _dataset.sample_dataset(ref.name))
        return True, f"Loaded '{name}': every page now shows the saved view."
    if ref.kind == "source":  # a source the administrator set up, by its name (never its address or password)
        _apply(config, source_view.source_dataset(ref.name))
        return True, f"Loaded '{name}': every page now shows the saved view of the source '{ref.name}'."
    current = _dataset.dataset()
    if _matches(ref, current):
        _apply(config, current)
        return True, f"Loaded '{name}': every page now shows the saved view."
    st.session_state[keys.PENDING_CONFIG] = Pending(config, name)
    return False, (f"'{name}' was saved with the file {Pending(config, name).wanted}, which is not the data loaded "
                   "now. Upload that file on the Data page: the configuration is applied as soon as it arrives.")


def fits_current() -> str | None:
    """None when the waiting configuration can be applied to the data on screen, else why not."""
    waiting = pending()
    if waiting is None:
        return "No configuration is waiting."
    try:
        build_choices(waiting.config, _dataset.dataset().frame)
    except LuskinError as err:
        return str(err)
    return None


def apply_pending_here() -> None:
    """Button callback: apply the waiting configuration to the data on screen (its columns fit)."""
    waiting = pending()
    if waiting is None:
        return
    try:
        _apply(waiting.config, _dataset.dataset())
        st.session_state[keys.CONFIG_MESSAGE] = f"Applied '{waiting.name}' to the data loaded now."
    except LuskinError as err:
        st.session_state[keys.CONFIG_ERROR] = f"'{waiting.name}' could not be applied: {err}"


def discard_pending() -> None:
    """Button callback: forget the waiting configuration."""
    st.session_state.pop(keys.PENDING_CONFIG, None)


def apply_pending_to(data: _dataset.Dataset) -> str | None:
    """When an upload is the file a waiting configuration names, apply it; return a note (else None)."""
    waiting = pending()
    if waiting is None or not _matches(waiting.config.dataset, data):
        return None
    try:
        _apply(waiting.config, data)
    except LuskinError as err:
        st.session_state[keys.CONFIG_ERROR] = f"'{waiting.name}' could not be applied to this file: {err}"
        return None
    return f"The saved configuration '{waiting.name}' was applied to it."
