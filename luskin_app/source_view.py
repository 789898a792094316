"""The Data page's "Sources set up by your administrator", and the dataset such a source becomes.

A configured source is opened through its engine and never loaded: the session's
:class:`~luskin_app.dataset.Dataset` for it holds the opened source (``engine``), its row count
from the engine, and as ``frame`` a small stand-in with one row per distinct value of each
column (most frequent first, at most ``MAX_CHOICES``; numbers also with their least and greatest
value), padded with missing values. The dropdowns and the choices' checks (a value occurs, a
column has two values, a group is neither empty nor everything) read that frame, so they see
the engine's values; nothing is counted on it. The audit runs inside the engine
(``audit(source, spec)``), and the model pages get a seeded stratified sample (``Source.sample``),
said on the page with its size.

One opened source serves every session of the server; its engine calls are serialised by a
lock (a DuckDB or PostgreSQL connection is not for two threads at once).
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import pandas as pd
import streamlit as st

from luskin_core.analyses.audit import AuditResult, audit
from luskin_core.counting.sources import SampleInfo, Source
from luskin_core.errors import LuskinError
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.spec.dataref import DataRef

from . import auth, keys, ui
from . import dataset as _dataset
from .cache import shared
from .sources import Settings, SourceSetting, load_settings, open_setting

log = logging.getLogger("luskin.app.sources")

T = TypeVar("T")


@dataclass(frozen=True)
class Opened:
    """An opened source shared by the server's sessions, with the lock its engine calls take."""

    setting: SourceSetting
    source: Source
    lock: threading.RLock

    def run(self, func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        with self.lock:
            return func(*args, **kwargs)


# --------------------------------------------------------------------------------------------
# Opening (cached per server) and the engine's answers (cached per source and question)
# --------------------------------------------------------------------------------------------
def secrets_files() -> tuple[str, ...]:
    """The secrets files Streamlit reads (``secrets.files``): no source added on the page may read them."""
    from streamlit import config

    try:
        named = config.get_option("secrets.files") or []
    except Exception:  # noqa: BLE001 - an unknown option on another Streamlit: the default places still count
        named = []
    return tuple(str(p) for p in named)


@st.cache_resource(show_spinner=False, max_entries=16, ttl=3600)
def _opened(key: str, _setting: SourceSetting) -> Opened:
    """The source opened once per server and settings entry (a failure is not remembered)."""
    return Opened(_setting, open_setting(_setting, secrets_files=secrets_files()), threading.RLock())


def settings() -> Settings:
    """The operator's settings, read afresh (they may be edited while the server runs)."""
    return load_settings()


def open_configured(name: str) -> Opened:
    """The configured source called ``name``, opened; LuskinError in plain words."""
    setting = settings().get(name)
    if not auth.may_use_source(setting):   # the same words as an unknown name: nothing is told of it
        from . import trail

        trail.event("refused", settings={"what": "source", "why": "not among this user's sources"},
                    produced={"source": name}, data=None)
        raise LuskinError(f"No source named '{name}' is set up on this server: ask the administrator.")
    return _opened(setting.key, setting)


@st.cache_data(show_spinner=False, max_entries=1024, ttl=3600)
def _value_counts(key: str, column: str, limit: int, _opened: Opened) -> pd.DataFrame:
    return _opened.run(_opened.source.value_counts, column, limit)


def value_counts(opened: Opened, column: str, limit: int | None = None) -> pd.DataFrame:
    """A column's distinct values and their counts from the engine, most frequent first (cached)."""
    from .choices import MAX_CHOICES

    return _value_counts(opened.setting.key, column, int(limit or MAX_CHOICES), opened)


@st.cache_data(show_spinner=False, max_entries=64, ttl=3600)
def _extremes(key: str, columns: tuple[str, ...], _opened: Opened) -> pd.DataFrame:
    table = _opened.source.table
    metrics: dict[str, Any] = {}
    for i, column in enumerate(columns):
        metrics[f"lo{i}"] = table[column].min()
        metrics[f"hi{i}"] = table[column].max()
    try:
        frame: pd.DataFrame = _opened.run(table.aggregate(**metrics).to_pandas)
    except Exception:  # noqa: BLE001 - an engine failure is one plain sentence
        raise LuskinError(f"The engine could not read the least and greatest values of '{_opened.setting.name}'.") \
            from None
    return frame


def _typed(values: list[Any], dtype: Any) -> pd.Series:
    if dtype.is_integer():
        return pd.Series(pd.array(values, dtype="Int64"))
    if dtype.is_floating() or dtype.is_decimal():
        return pd.Series(values, dtype="float64")
    if dtype.is_boolean():
        return pd.Series(pd.array(values, dtype="boolean"))
    if dtype.is_string():
        return pd.Series(values, dtype="string")
    return pd.Series(values, dtype=object)


def values_frame(opened: Opened) -> pd.DataFrame:
    """The stand-in frame: each column's distinct values from the engine, most frequent first."""
    source = opened.source
    schema = source.table.schema()
    columns = source.columns()
    numeric = tuple(c for c in columns if schema[c].is_numeric() and not schema[c].is_boolean())
    extremes = _extremes(opened.setting.key, numeric, opened) if numeric else None
    parts = {}
    for column in columns:
        values = [v for v in value_counts(opened, column)["value"] if v is not None and not pd.isna(v)]
        if extremes is not None and column in numeric:
            i = numeric.index(column)
            for end in (extremes[f"lo{i}"].iloc[0], extremes[f"hi{i}"].iloc[0]):
                if end is not None and not pd.isna(end) and end not in values:
                    values.append(end)
        parts[column] = _typed(values, schema[column])
    frame = pd.concat(parts, axis=1) if parts else pd.DataFrame()
    return frame.reset_index(drop=True)


@st.cache_resource(show_spinner=False, max_entries=16, ttl=3600)
def _source_dataset(key: str, _opened: Opened) -> _dataset.Dataset:
    source = _opened.source
    rows = _opened.run(source.n_rows)
    frame = values_frame(_opened)
    digest = hashlib.sha256(f"{key}\x1f{rows}\x1f{source.columns()}".encode()).hexdigest()[:16]
    return _dataset.Dataset(str(DataRef.source(_opened.setting.name)), _opened.setting.name, frame, f"source-{digest}",
                            engine=_opened, table_rows=rows)


def source_dataset(name: str) -> _dataset.Dataset:
    """The dataset of the configured source ``name``: opened, counted, its values read; no rows loaded."""
    opened = open_configured(name)
    if len(opened.source.columns()) < 2:
        raise LuskinError(f"The source '{name}' has a single column: an audit needs at least two (the outcome and "
                          "a protected column). Ask the administrator.")
    return _dataset.private_dataset(_source_dataset(opened.setting.key, opened))


# --------------------------------------------------------------------------------------------
# The audit and the model tools' rows
# --------------------------------------------------------------------------------------------
@shared(show_spinner=False, max_entries=256)
def _audit_cached(fingerprint: str, spec_json: str, _opened: Opened) -> AuditResult:
    result: AuditResult = _opened.run(audit, _opened.source, AuditSpec.from_json(spec_json))
    return result


def run_audit(data: _dataset.Dataset, spec: AuditSpec) -> AuditResult:
    """The audit of a configured source, made inside its engine (cached on the source and spec)."""
    return _audit_cached(data.fingerprint, spec.to_json(), data.engine)


@shared(show_spinner=False, max_entries=8)
def _sample_cached(fingerprint: str, spec_json: str, cap: int, seed: int,
                   _opened: Opened) -> tuple[pd.DataFrame, SampleInfo]:
    return _opened.run(_opened.source.sample, AuditSpec.from_json(spec_json), cap=cap, seed=seed)


def sample(data: _dataset.Dataset, spec: AuditSpec, seed: int = 0) -> tuple[pd.DataFrame, SampleInfo]:
    """The model tools' rows of a configured source: seeded, stratified by group and outcome, capped."""
    opened: Opened = data.engine
    return _sample_cached(data.fingerprint, spec.to_json(), opened.setting.sample_cap, int(seed), opened)


def sample_sentence(info: SampleInfo, name: str) -> str:
    """What the model tools were given, in one sentence (the page and the report say it)."""
    if not info.sampled:
        return f"The models use all {info.n_table:,} rows of the source '{name}'."
    return (f"The models use a stratified sample of {info.n_sample:,} of {info.n_table:,} rows of the source "
            f"'{name}' (drawn by its engine, stratified by group and outcome, seed {info.seed}).")


def model_rows(spec: AuditSpec) -> pd.DataFrame:
    """The rows the model pages train on: the data in memory, or a configured source's sample (said on the page).

    Every model page draws the same sample (seed 0) so that their results describe the same rows.
    An engine failure stops the page with one plain sentence.
    """
    data = _dataset.dataset()
    if data.engine is None:
        return data.frame
    try:
        with st.spinner(f"Drawing the rows for the models from '{data.title}'…"):
            frame, info = sample(data, spec)
    except LuskinError as err:
        st.error(ui.md(err, 800) + " The audit still works; try again later.", icon=ui.ICONS["error"])
        st.stop()
    sentence = sample_sentence(info, data.title)
    st.session_state[keys.SOURCE_SAMPLE] = (data.fingerprint, spec.to_json(), sentence)  # for the report
    st.info(ui.md(sentence), icon=ui.ICONS["info"])
    return frame


def report_sample_note(spec: AuditSpec) -> str | None:
    """The sentence for the report when the model tools ran on a configured source (None otherwise)."""
    from .cache import recall

    data = _dataset.dataset()
    drawn = st.session_state.get(keys.SOURCE_SAMPLE)
    if data.engine is None or not drawn or drawn[:2] != (data.fingerprint, spec.to_json()):
        return None
    if all(recall(kind, spec) is None for kind in ("retrain", "thresholds", "equalized")):
        return None
    return str(drawn[2])


def report_frame() -> pd.DataFrame | None:
    """The table for the report's data summary: None for a configured source (its rows are not loaded)."""
    data = _dataset.dataset()
    return None if data.engine is not None else data.frame


# --------------------------------------------------------------------------------------------
# The Data page (the picker that opens a source is in luskin_app.session)
# --------------------------------------------------------------------------------------------
def render_source_preview(data: _dataset.Dataset) -> bool:
    """For a configured source: its name, kind, row count and columns (no rows shown). False for other data."""
    if data.engine is None:
        return False
    source: Source = data.engine.source
    st.header("2. Look at the data")
    st.markdown(f"**{ui.md(data.title, 200)}**")   # the name only: never the engine's user, host, port or path
    a, b, c = st.columns(3)
    a.metric("Rows", f"{data.n_rows:,}")
    b.metric("Columns", f"{len(source.columns()):,}")
    c.metric("Kind", source.engine.title)
    st.caption("The rows stay in the source: the audit is counted by its engine, and the value lists below come "
               "from it. The model pages draw a seeded sample.")
    schema = source.table.schema()
    distinct = {c: int(data.frame[c].notna().sum()) for c in data.frame.columns}
    from .choices import MAX_CHOICES

    table = pd.DataFrame({
        "Column": [str(c) for c in source.columns()],
        "Type": [str(schema[c]) for c in source.columns()],
        "Values offered": [f"{distinct.get(c, 0):,}" + ("+" if distinct.get(c, 0) >= MAX_CHOICES else "")
                           for c in source.columns()],
    })
    with st.expander("Columns: type and values"):
        ui.grid(table, hide_index=True, key="source_columns")
    return True
