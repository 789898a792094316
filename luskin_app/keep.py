"""Uploads kept by the server for a stated time, so that a refresh, a bookmark or a second tab finds them.

An uploaded file is written to a private folder (created by :func:`tempfile.mkdtemp`, readable by
this server's user only) under an unguessable key (:func:`secrets.token_urlsafe`, 32 bytes); the
key goes in the page's address (``?data=KEY``), together with the slide. With the file, the
page's settings are kept (the same JSON as a saved configuration), so that the address brings
back the same data, settings and slide. After :data:`KEEP_HOURS` the file is deleted; a button
on the Data page forgets it at once. The key is never logged; a key that is malformed, unknown
or expired finds nothing (the page then says so and offers to upload again).
"""

from __future__ import annotations

import json
import re
import secrets
import tempfile
import threading
import time
from pathlib import Path

KEEP_HOURS = 24
KEY_PATTERN = re.compile(r"^[A-Za-z0-9_-]{40,64}$")
_LOCK = threading.Lock()
_FOLDER: list[Path] = []   # the server's private folder, made on first use


def _folder() -> Path:
    with _LOCK:
        if not _FOLDER or not _FOLDER[0].is_dir():
            _FOLDER[:] = [Path(tempfile.mkdtemp(prefix="luskin-uploads-"))]   # mode 0o700
        return _FOLDER[0]


def _paths(key: str) -> tuple[Path, Path] | None:
    if not isinstance(key, str) or not KEY_PATTERN.match(key):
        return None
    folder = _folder()
    return folder / f"{key}.data", folder / f"{key}.json"


def sweep(now: float | None = None) -> None:
    """Delete every kept upload older than :data:`KEEP_HOURS`."""
    limit = (now if now is not None else time.time()) - KEEP_HOURS * 3600
    for meta in _folder().glob("*.json"):
        try:
            saved = float(json.loads(meta.read_text(encoding="utf-8")).get("saved", 0))
        except (OSError, ValueError, TypeError):
            saved = 0.0
        if saved < limit:
            forget(meta.stem)


def store(name: str, raw: bytes) -> str:
    """Keep an uploaded file; returns its key (for the address)."""
    sweep()
    key = secrets.token_urlsafe(32)
    paths = _paths(key)
    assert paths is not None
    data, meta = paths
    data.write_bytes(raw)
    meta.write_text(json.dumps({"name": name, "saved": time.time(), "settings": None}), encoding="utf-8")
    return key


def save_settings(key: str, settings: str) -> None:
    """Keep the page's settings (a configuration's JSON) with the upload, if it is still kept."""
    paths = _paths(key)
    if paths is None or not paths[1].exists():
        return
    try:
        meta = json.loads(paths[1].read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if meta.get("settings") != settings:
        meta["settings"] = settings
        paths[1].write_text(json.dumps(meta), encoding="utf-8")


def load(key: str) -> tuple[str, bytes, str | None] | None:
    """The kept file's name, bytes and settings; None when the key is malformed, unknown or expired."""
    paths = _paths(key)
    if paths is None:
        return None
    data, meta_path = paths
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if float(meta.get("saved", 0)) < time.time() - KEEP_HOURS * 3600:
            forget(key)
            return None
        return str(meta["name"]), data.read_bytes(), meta.get("settings")
    except (OSError, ValueError, KeyError, TypeError):
        return None


def forget(key: str) -> None:
    """Delete a kept upload now (the button on the Data page, or its time is up)."""
    paths = _paths(key)
    if paths is None:
        return
    for path in paths:
        path.unlink(missing_ok=True)


__all__ = ["KEEP_HOURS", "forget", "load", "save_settings", "store", "sweep"]
