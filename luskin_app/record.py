"""The record of who ran what: one JSON line per audit, correction, report and download.

Each line holds the time (UTC), the user (id, name, e-mail), the page, the data's fingerprint (its name,
its number of rows and a hash), the settings (the audit's specification and the page's options) and
what was produced (a result's kind, a file's name, size and hash). Never a data value: no row, no cell
is written; the settings name columns and the values the user chose as groups or filters.

The file is ``record.jsonl`` in the server's state folder (``LUSKIN_STATE_DIR/record/``, or the file
``LUSKIN_RECORD_FILE`` names), mode 0600; when it passes ``LUSKIN_RECORD_MAX_MB`` (default 10) it is
rotated to ``record.jsonl.1`` … and at most ``LUSKIN_RECORD_FILES`` (default 10) old files are kept.
Administrators read it on the Administration page and download it there. A line is appended under a
lock with one ``write`` of the whole line (``O_APPEND``), so two sessions never interleave.

A session writes the same action on the same data and settings once (a rerun is not a new action); a file made
on the click (the HTML report) is written each time it is made, with its size and hash.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import logging
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger("luskin.app.record")

_LOCK = threading.Lock()
DEFAULT_MAX_MB = 10.0
DEFAULT_FILES = 10


@dataclass(frozen=True)
class Where:
    """The record's file and its rotation."""

    path: Path
    max_bytes: int
    files: int


def where_from(environ: Mapping[str, str] | None = None) -> Where:
    """The record's place as the environment sets it (read, never set)."""
    env = os.environ if environ is None else environ
    named = env.get("LUSKIN_RECORD_FILE", "").strip()
    state = Path(env.get("LUSKIN_STATE_DIR", "").strip() or "~/.local/state/luskin").expanduser()
    path = Path(named).expanduser() if named else state / "record" / "record.jsonl"
    try:
        max_mb = float(env.get("LUSKIN_RECORD_MAX_MB", "") or DEFAULT_MAX_MB)
        files = int(env.get("LUSKIN_RECORD_FILES", "") or DEFAULT_FILES)
    except ValueError:
        log.warning("LUSKIN_RECORD_MAX_MB or LUSKIN_RECORD_FILES is not a number: the defaults are used")
        max_mb, files = DEFAULT_MAX_MB, DEFAULT_FILES
    return Where(path, max(int(max_mb * 1_000_000), 10_000), max(files, 1))


_WHERE: list[Where] = []


def configure(where: Where | None) -> None:
    """Write to ``where`` from now on (tests); None reads the environment again at the next use."""
    with _LOCK:
        _WHERE[:] = [where] if where is not None else []


def where() -> Where:
    with _LOCK:
        if not _WHERE:
            _WHERE.append(where_from())
        return _WHERE[0]


def _rotate(place: Where) -> None:
    path = place.path
    oldest = path.with_name(f"{path.name}.{place.files}")
    oldest.unlink(missing_ok=True)
    for number in range(place.files - 1, 0, -1):
        older = path.with_name(f"{path.name}.{number}")
        if older.exists():
            os.replace(older, path.with_name(f"{path.name}.{number + 1}"))
    os.replace(path, path.with_name(f"{path.name}.1"))


def append(entry: Mapping[str, Any]) -> None:
    """Append one line (the time is added); rotate first when the file is full. Never raises."""
    line = json.dumps({"time": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"), **entry},
                      default=str, ensure_ascii=False) + "\n"
    try:
        place = where()
        with _LOCK:
            place.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            if place.path.exists() and place.path.stat().st_size + len(line) > place.max_bytes:
                _rotate(place)
            fd = os.open(place.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                os.write(fd, line.encode("utf-8"))
            finally:
                os.close(fd)
    except OSError as err:   # the analysis goes on; the operator reads why in the log
        log.error("the record could not be written (%s): %s", place.path if _WHERE else "?", err)


def read(limit: int = 500) -> list[dict[str, Any]]:
    """The newest ``limit`` lines of the current file, newest last (unreadable lines skipped)."""
    path = where().path
    try:
        lines = path.read_text(encoding="utf-8").splitlines()[-limit:]
    except OSError:
        return []
    out = []
    for line in lines:
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def file_bytes() -> bytes:
    """The current file as it is (the Administration page's download)."""
    try:
        return where().path.read_bytes()
    except OSError:
        return b""


def digest(value: bytes | str) -> str:
    """A short hash of what was produced (so a file handed on can be matched to its line)."""
    raw = value.encode("utf-8") if isinstance(value, str) else value
    return hashlib.sha256(raw).hexdigest()[:16]


def measure(value: bytes | str) -> dict[str, Any]:
    """A file's size in bytes (text as its UTF-8 file) and its short hash, as the record names it."""
    raw = value.encode("utf-8") if isinstance(value, str) else value
    return {"bytes": len(raw), "hash": digest(raw)}


__all__ = ["Where", "append", "configure", "digest", "file_bytes", "measure", "read", "where", "where_from"]
