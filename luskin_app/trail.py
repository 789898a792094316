"""What the dashboard writes to the record (:mod:`luskin_app.record`): who, on which page, on which data,
with which settings, produced what. Called from the few central places every analysis passes through:
the audit (:func:`luskin_app.auditing.run_audit`), a page's kept result (:func:`luskin_app.cache.remember`:
corrections, series, adjusted gaps), the pages whose results are not kept for the report (the regulator
tables, the proxy audit, the scan: each calls :func:`note` once it has its result), every download
(:func:`luskin_app.ui.download_button`; no page calls ``st.download_button`` itself), and the session's own
events (an upload kept or deleted, an address or page refused: :mod:`luskin_app.session`).

The data is described by its fingerprint only (its kind, rows and a hash of its content; an upload's file name as
a keyed hash). Settings keep their shape, the column names and the options' words and numbers; every value of the
data in them (a group's values, a filter's value, the value counted as positive, a reference, a label typed, the
names given to codes) is a keyed hash (:func:`redact`). A line that cannot be written stops the run with a plain
message (:func:`note`): a result that is not recorded is not shown.
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

# Settings kept in clear: column names, the options' words and numbers. Anything else is written as a keyed hash.
CLEAR_KEYS = frozenset({
    "outcome", "column", "columns", "group_by", "strata", "features", "controls", "categorical", "as_numbers", "binned", "curved",
    "op", "metric", "correction", "outcome_type", "criterion", "outcome_is", "tolerance", "n_bins", "min_group_size",
    "min_group_share", "ratio_threshold", "score_cutoff", "prediction", "prediction_cutoff", "bins", "table",
    "published", "exclude_small", "sex", "race", "kind", "name", "groups", "surname", "first_name", "place", "level",
    "threshold", "model", "algorithm", "first", "second", "direction", "seed", "all_cells", "lam", "lambda",
    "solver", "alphas", "alpha", "score_column", "default_threshold", "cluster", "n_knots", "every", "format",
    "date_column", "depth", "replicates", "fdr", "level_q", "calibration", "what", "why",
    "source", "hours", "before", "after", "provider", "how", "uploads", "n_rows", "cap", "sample_cap",
})
VALUE_KEYS = frozenset({"value_names"})   # {column: {code: name}}: the column kept, codes and names hashed
WHOLE_KEYS = frozenset({"bins"})          # {column: [cut points]}: column names and the numbers the user chose


def redact(value: Any, key: str | None = None) -> Any:
    """Settings as the record keeps them: shape, column names and option words in clear, data values hashed."""
    if isinstance(value, dict):
        if key in VALUE_KEYS:
            return {str(column): {record.hashed(code): record.hashed(name) for code, name in names.items()}
                    if isinstance(names, dict) else record.hashed(names) for column, names in value.items()}
        if key in WHOLE_KEYS:
            return value
        return {k: redact(v, str(k)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(v, key) for v in value]
    if value is None or isinstance(value, bool):
        return value
    if key is not None and key in CLEAR_KEYS:
        return value
    return record.hashed(value)


def set_page(title: str) -> None:
    """The page this run draws (app.py, before the page), for the record's lines."""
    st.session_state[keys.CURRENT_PAGE] = title


def fingerprint() -> dict[str, Any]:
    """The data as the record names it: its kind, its name (an upload's as a keyed hash), rows and a content hash."""
    data = _dataset.dataset()
    kind = data.ref.kind
    name = data.title if kind in ("sample", "source") else record.hashed(data.file_name)
    return {"kind": kind, "name": name, "rows": int(data.n_rows), "hash": str(data.fingerprint)[:16]}


def user_line() -> dict[str, str]:
    """Who acts in this run, as the record names a user."""
    user = auth.current()
    return {"id": user.id or "local", "name": user.shown, "email": user.email}


def _session_data() -> dict[str, Any] | None:
    """The session's data as the record names it, or None before there is any (a page run on its own)."""
    try:
        return fingerprint()
    except RuntimeError:
        return None


def _entry(action: str, settings: Any, produced: dict[str, Any] | None,
           data: dict[str, Any] | None) -> dict[str, Any]:
    """One line of the record, read from the session that runs now (who, which page, which data)."""
    named = data if data is not None else _session_data()
    if data is not None and data.get("name"):   # a file the page read on its own (a published table): by hash
        named = {**data, "name": record.hashed(data["name"])}
    return {"user": user_line(), "page": st.session_state.get(keys.CURRENT_PAGE, ""), "action": action,
            "data": named, "settings": redact(settings), "produced": produced or {}}


def stop_unrecorded(err: Exception) -> None:
    """The plain message when the record could not be written, and the end of this run (nothing is shown)."""
    st.error(f"{err}", icon=":material/error:")
    st.stop()


def note(action: str, *, settings: Any = None, produced: dict[str, Any] | None = None,
         data: dict[str, Any] | None = None) -> bool:
    """Write one line for ``action`` unless this session wrote the same one already; whether it wrote.

    ``data`` names the data when it is not the session's dataset (a published table read on its own page).
    A line that cannot be written stops the run here with a plain message: the result is not shown.
    """
    entry = _entry(action, settings, produced, data)
    same = json.dumps([action, entry["data"], entry["settings"], produced], sort_keys=True, default=str)
    signature = hashlib.sha256(same.encode("utf-8")).hexdigest()[:24]
    seen: dict[str, None] = st.session_state.setdefault(keys.RECORDED, {})
    if signature in seen:
        return False
    try:
        record.append(entry)
    except record.RecordError as err:
        stop_unrecorded(err)
    seen[signature] = None
    while len(seen) > MAX_SEEN:
        seen.pop(next(iter(seen)))
    return True


def event(action: str, *, settings: Any = None, produced: dict[str, Any] | None = None, data: Any = "") -> None:
    """One line for an event of this session that is not an analysis (an upload kept or deleted, a refusal): always
    written (no deduplication); the data is the session's unless ``data`` is given (None: no data)."""
    named = _session_data() if data == "" else data
    line = {"user": user_line(), "page": st.session_state.get(keys.CURRENT_PAGE, ""), "action": action,
            "data": named, "settings": redact(settings), "produced": produced or {}}
    try:
        record.append(line)
    except record.RecordError as err:
        stop_unrecorded(err)


def later(action: str, *, produced: dict[str, Any] | None = None) -> Callable[..., None]:
    """The line for an action that happens outside any run of the page (a file made on the click).

    Who, which page and which data are read now, in the session's run; the returned writer adds what the
    action produced and writes the line when it is called, from any thread (it never reads the session), and
    raises :class:`~luskin_app.record.RecordError` when it cannot: the file is then not handed out.
    """
    entry = _entry(action, None, produced, None)

    def write(more: dict[str, Any], fields: dict[str, Any] | None = None) -> None:
        """``more``: what was produced (its size and hash); ``fields``: the line's other fields (``evidence``)."""
        record.append({**entry, **(fields or {}), "produced": {**entry["produced"], **more}})

    return write


def spec_settings(spec: Any) -> Any:
    """An AuditSpec (or anything with to_json) as plain JSON for the record (redacted when written)."""
    try:
        return json.loads(spec.to_json())
    except (AttributeError, TypeError, ValueError):
        return str(spec)


def result_text(result: Any) -> dict[str, Any]:
    """What was produced, in the record's words: the result's kind (no number or word of it: a headline
    names groups, and a group can be a value of the data)."""
    return {"result": type(result).__name__}
