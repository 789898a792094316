"""What the dashboard writes to the record (:mod:`luskin_app.record`): who, on which page, on which data,
with which settings, produced what. Called from the few central places every analysis passes through:
the audit (:func:`luskin_app.auditing.run_audit`), a page's kept result (:func:`luskin_app.cache.remember`:
corrections, series, adjusted gaps), the pages whose results are not kept for the report (the regulator
tables, the proxy audit, the scan: each calls :func:`note` once it has its result) and every download
(:func:`luskin_app.ui.download_button`; no page calls ``st.download_button`` itself).

The data is described by its fingerprint only (name, rows, a hash): never a row or a cell.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from typing import Any

import streamlit as st

from . import auth, keys, record
from . import dataset as _dataset

log = logging.getLogger("luskin.app.record")

MAX_SEEN = 2_000   # the actions a session remembers having written (reruns are not new actions)


def set_page(title: str) -> None:
    """The page this run draws (app.py, before the page), for the record's lines."""
    st.session_state[keys.CURRENT_PAGE] = title


def fingerprint() -> dict[str, Any]:
    """The data as the record names it: its name, its number of rows and a hash of its content."""
    data = _dataset.dataset()
    return {"name": data.title, "rows": int(data.n_rows), "hash": str(data.fingerprint)[:16]}


def _entry(action: str, settings: Any, produced: dict[str, Any] | None,
           data: dict[str, Any] | None) -> dict[str, Any]:
    """One line of the record, read from the session that runs now (who, which page, which data)."""
    user = auth.current()
    return {"user": {"id": user.id or "local", "name": user.shown, "email": user.email},
            "page": st.session_state.get(keys.CURRENT_PAGE, ""), "action": action,
            "data": data if data is not None else fingerprint(), "settings": settings, "produced": produced or {}}


def note(action: str, *, settings: Any = None, produced: dict[str, Any] | None = None,
         data: dict[str, Any] | None = None) -> bool:
    """Write one line for ``action`` unless this session wrote the same one already; whether it wrote.

    ``data`` names the data when it is not the session's dataset (a published table read on its own page).
    Never raises: a record that cannot be written is the operator's to fix (logged), not the analyst's.
    """
    try:
        entry = _entry(action, settings, produced, data)
        same = json.dumps([action, entry["data"], settings, produced], sort_keys=True, default=str)
        signature = hashlib.sha256(same.encode("utf-8")).hexdigest()[:24]
        seen: dict[str, None] = st.session_state.setdefault(keys.RECORDED, {})
        if signature in seen:
            return False
        seen[signature] = None
        while len(seen) > MAX_SEEN:
            seen.pop(next(iter(seen)))
        record.append(entry)
        return True
    except Exception as err:  # noqa: BLE001 - the record never breaks an analysis
        log.error("the record could not be written: %s", err)
        return False


def later(action: str, *, produced: dict[str, Any] | None = None) -> Callable[[dict[str, Any]], None]:
    """The line for an action that happens outside any run of the page (a file made on the click), or a
    writer that does nothing when the session cannot be read.

    Who, which page and which data are read now, in the session's run; the returned writer adds what the
    action produced and writes the line when it is called, from any thread (it never reads the session).
    Each call writes a line: it runs once per action, never on a rerun.
    """
    try:
        entry = _entry(action, None, produced, None)
    except Exception as err:  # noqa: BLE001 - the record never breaks an analysis
        log.error("the record could not be written: %s", err)
        return lambda _more: None

    def write(more: dict[str, Any]) -> None:
        record.append({**entry, "produced": {**entry["produced"], **more}})

    return write


def spec_settings(spec: Any) -> Any:
    """An AuditSpec (or anything with to_json) as plain JSON for the record."""
    try:
        return json.loads(spec.to_json())
    except (AttributeError, TypeError, ValueError):
        return str(spec)


def result_text(result: Any) -> dict[str, Any]:
    """What was produced, in the record's words: the result's kind (no number or word of it: a headline
    names groups, and a group can be a value of the data)."""
    return {"result": type(result).__name__}
