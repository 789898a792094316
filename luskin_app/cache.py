"""Cached computations and the results kept for the report.

Computations are keyed on the data's fingerprint and the specification's JSON (and a page's
options), so that revisiting a page or going back to an earlier choice is instant. The caches
are shared by every session of the server, and hold only what is derived from those keys: two
sessions on different data never see each other's results.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

from luskin_core.audit import AuditResult, audit
from luskin_core.spec import AuditSpec

from . import dataset as _dataset


@st.cache_resource(show_spinner=False, max_entries=256)
def _audit_cached(fingerprint: str, spec_json: str, _frame: pd.DataFrame) -> AuditResult:
    return audit(_frame, AuditSpec.from_json(spec_json))


def run_audit(spec: AuditSpec) -> AuditResult:
    """The audit of the current dataset under ``spec`` (cached on fingerprint + spec JSON)."""
    data = _dataset.dataset()
    if data.engine is not None:  # a configured source: counted inside its engine
        from .source_view import run_audit as run_source_audit

        return run_source_audit(data, spec)
    return _audit_cached(data.fingerprint, spec.to_json(), data.frame)


@st.cache_resource(show_spinner=False)
def _result_store() -> tuple[OrderedDict[str, Any], threading.Lock]:
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


def remember(kind: str, spec: AuditSpec, result: Any) -> None:
    """Keep a page's latest result (retrain, thresholds, equalized) for the report."""
    st.session_state.setdefault("results", {})[kind] = (_dataset.dataset().fingerprint, spec.to_json(), result)


def recall(kind: str, spec: AuditSpec) -> Any:
    """A page's latest result if it was made from the current data and specification, else None."""
    saved = st.session_state.get("results", {}).get(kind)
    if saved and saved[0] == _dataset.dataset().fingerprint and saved[1] == spec.to_json():
        return saved[2]
    return None
