"""The record an auditor relies on: every event, one numbered JSON line each, chained with a keyed hash.

What is written (:mod:`luskin_app.trail` for the pages; the guard, the sign-in and the housekeeping for the rest):
each audit, analysis and download; each sign-in, sign-out, expiry and change of roles; each refused access (a
sign-in the server did not make or that has ended, an upload or a download that is not the user's, a page or a
source the user may not open); each upload kept, deleted or expired; each source added or removed. A line holds
the time (UTC), the user (provider and subject, name, e-mail: who acted is the point of the record), the page,
the data by its fingerprint and the settings, and never a value of the data: group values, filter values, labels
typed and an upload's file name are written as keyed hashes (:func:`hashed`), so the record itself is not personal
data, while the operator, who holds the key, can still tell whether a line names a given value. An event may
carry more fields: ``evidence``, a list of ``{"name": ..., "sha256": ...}``, points at each evidence file an
analysis produced, by its hash (:func:`append` takes any JSON field).

Each line has a number ``n`` (one more than the line before, across rotated files) and ``mac``, an HMAC-SHA256
under the record's key of the previous line's ``mac`` and the line's canonical JSON (sorted keys, no spaces,
without ``mac``). The key is a file outside the state folder (``LUSKIN_RECORD_KEY_FILE``, default
``~/.config/luskin/record.key``, made once, mode 0600; one inside the state folder is refused): a copy of the
state folder can be read, not rewritten unseen. :func:`verify` (``python -m luskin_app.record verify``, and the
Administration page) reads every file in order and names the first line edited, removed, added or reordered; the
server also keeps the newest number and ``mac`` in ``record.head``, so lines cut off the end are found too.
Someone holding both the key and the disk can rewrite everything: send the lines elsewhere as they are written
with ``LUSKIN_RECORD_SYSLOG`` (``/dev/log``, ``udp:HOST:PORT`` or ``tcp:HOST:PORT``).

The file is ``record.jsonl`` in the server's state folder (``LUSKIN_STATE_DIR/record/``, or the file
``LUSKIN_RECORD_FILE`` names), mode 0600; past ``LUSKIN_RECORD_MAX_MB`` (default 10) it is rotated to
``record.jsonl.<number of its first line>``. Rotated files are all kept unless ``LUSKIN_RECORD_FILES`` sets how
many: then the oldest go, and a line of the record says which lines went and the ``mac`` the chain continues from,
so nothing leaves the record silently. A line is appended under a lock with one ``write`` of the whole line
(``O_APPEND``) and flushed to disk. A line that cannot be written raises :class:`RecordError`: the caller stops
the analysis (a result that is not recorded is not shown).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import hmac
import json
import logging
import os
import secrets
import stat
import sys
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from luskin_core.errors import LuskinError

log = logging.getLogger("luskin.app.record")

_LOCK = threading.RLock()
DEFAULT_MAX_MB = 10.0
DEFAULT_FILES = 0          # every rotated file is kept
DEFAULT_KEY_FILE = "~/.config/luskin/record.key"


class RecordError(LuskinError):
    """The record could not be written: what was asked is not done (the message is for the user)."""


@dataclass(frozen=True)
class Where:
    """The record's file, its rotation, its key file and where its lines are also sent."""

    path: Path
    max_bytes: int
    files: int = DEFAULT_FILES
    key_file: Path | None = None     # None: the default place
    syslog: str = ""
    state: Path | None = None        # the server's state folder (the key may not be inside it)


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
    key = env.get("LUSKIN_RECORD_KEY_FILE", "").strip()
    return Where(path, max(int(max_mb * 1_000_000), 10_000), max(files, 0),
                 Path(key).expanduser() if key else None, env.get("LUSKIN_RECORD_SYSLOG", "").strip(), state)


_WHERE: list[Where] = []
_HEAD: dict[Path, tuple[int, str]] = {}       # record file -> (last n, last mac), once read
_KEYS: dict[Path, bytes] = {}
_SYSLOG: dict[str, logging.Logger] = {}


def configure(where: Where | None) -> None:
    """Write to ``where`` from now on (tests); None reads the environment again at the next use."""
    with _LOCK:
        _WHERE[:] = [where] if where is not None else []
        _HEAD.clear()
        _KEYS.clear()


def where() -> Where:
    with _LOCK:
        if not _WHERE:
            _WHERE.append(where_from())
        return _WHERE[0]


# --------------------------------------------------------------------------------------------
# The key
# --------------------------------------------------------------------------------------------
def key_path(place: Where) -> Path:
    return place.key_file if place.key_file is not None else Path(DEFAULT_KEY_FILE).expanduser()


def _key(place: Where) -> bytes:
    """The record's key (made once, mode 0600, when the default place has none); RecordError in plain words."""
    path = key_path(place)
    with _LOCK:
        if path in _KEYS:
            return _KEYS[path]
    state = (place.state or place.path.parent).resolve()
    real = path.resolve()
    if real == state or state in real.parents:
        raise RecordError("The record's key file lies inside the server's state folder, where a copy of the folder "
                          "would carry it: put it elsewhere (LUSKIN_RECORD_KEY_FILE).")
    if not path.exists():
        if place.key_file is not None:
            raise RecordError(f"The record's key file LUSKIN_RECORD_KEY_FILE names ({path}) does not exist: create "
                              "it with 32 random bytes (head -c 32 /dev/urandom > FILE; chmod 600 FILE).")
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        except OSError as err:
            raise RecordError(f"The record's key could not be made ({type(err).__name__}).") from None
        else:
            with os.fdopen(fd, "wb") as handle:
                handle.write(secrets.token_bytes(32))
                handle.flush()
                os.fsync(handle.fileno())
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise RecordError(f"The record's key file cannot be read ({type(err).__name__}).") from None
    if len(raw) < 32:
        raise RecordError(f"The record's key file holds {len(raw)} bytes; it needs at least 32 random bytes.")
    if hasattr(os, "getuid") and stat.S_IMODE(path.stat().st_mode) & 0o077:
        log.warning("the record's key file %s can be read by other users: chmod 600 it", path)
    key = hashlib.sha256(b"luskin-record-key\x00" + raw).digest()
    with _LOCK:
        _KEYS[path] = key
    return key


def hashed(value: Any) -> str:
    """A value as the record names it: a keyed hash (the same value gives the same hash; the key is needed to
    test a guess). ``None`` stays None."""
    if value is None:
        return "null"
    text = canonical(value)
    return "h:" + hmac.new(_key(where()), f"value\x00{text}".encode(), hashlib.sha256).hexdigest()[:24]


# --------------------------------------------------------------------------------------------
# Lines and their chain
# --------------------------------------------------------------------------------------------
def canonical(value: Any) -> str:
    """JSON with sorted keys and no spaces: the bytes a line's ``mac`` is computed over."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def mac_of(key: bytes, previous: str, entry: Mapping[str, Any]) -> str:
    """The keyed hash that chains ``entry`` (without its own ``mac``) to the line before it."""
    body = {k: v for k, v in entry.items() if k != "mac"}
    return hmac.new(key, f"{previous}\n{canonical(body)}".encode(), hashlib.sha256).hexdigest()


def _files(path: Path) -> list[Path]:
    """The record's files, oldest first: the rotated ones by their first line's number, then the current one."""
    rotated = sorted((p for p in path.parent.glob(f"{path.name}.*") if p.suffix.lstrip(".").isdigit()),
                     key=lambda p: int(p.suffix.lstrip(".")))
    return [*rotated, path] if path.exists() else rotated


def _last_line(path: Path) -> dict[str, Any] | None:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - 65_536))
            tail = handle.read().splitlines()
    except OSError:
        return None
    for raw in reversed(tail):
        try:
            value = json.loads(raw)
        except ValueError:
            continue
        if isinstance(value, dict) and "mac" in value:
            return value
    return None


def _head(place: Where) -> tuple[int, str]:
    """The last line's number and mac (read from the files once, then kept)."""
    if place.path in _HEAD:
        return _HEAD[place.path]
    head = (0, "")
    for path in reversed(_files(place.path)):
        last = _last_line(path)
        if last is not None:
            head = (int(last.get("n", 0)), str(last.get("mac", "")))
            break
    _HEAD[place.path] = head
    return head


def _head_file(place: Where) -> Path:
    return place.path.with_name(place.path.name + ".head")


def _write_head(place: Where, key: bytes, head: tuple[int, str]) -> None:
    """The newest line's number and mac, sealed, replaced whole (a temporary file, then a rename; the line itself
    was flushed to disk before, so a crash leaves at worst a head one line behind, which the verifier names)."""
    body = {"n": head[0], "mac": head[1]}
    target = _head_file(place)
    temp = target.with_name(f".tmp-{secrets.token_hex(6)}-{target.name}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, canonical({**body, "seal": mac_of(key, "head", body)}).encode())
    finally:
        os.close(fd)
    os.replace(temp, target)


def _rotate(place: Where, key: bytes) -> list[dict[str, Any]]:
    """Move the full file aside (named by its first line's number); with a limit on the files kept, remove the
    oldest and return the line that says so (written next, in the new file)."""
    path = place.path
    first = None
    try:
        with open(path, encoding="utf-8") as handle:
            first = json.loads(handle.readline()).get("n")
    except (OSError, ValueError, AttributeError):
        first = None
    os.replace(path, path.with_name(f"{path.name}.{int(first or _head(place)[0]):09d}"))
    said: list[dict[str, Any]] = []
    if place.files:
        rotated = _files(path)
        while len(rotated) > place.files:
            oldest = rotated.pop(0)
            last = _last_line(oldest) or {}
            first_line = oldest.suffix.lstrip(".")
            oldest.unlink()
            said.append({"action": "record files removed", "user": {"id": "", "name": "", "email": ""}, "page": "",
                         "settings": {"lines": [int(first_line), int(last.get("n", 0))], "limit": place.files},
                         "produced": {"continues_from": str(last.get("mac", ""))}})
    return said


def _syslog(target: str) -> logging.Logger | None:
    if not target:
        return None
    if target in _SYSLOG:
        return _SYSLOG[target]
    import logging.handlers
    import socket

    if target.startswith(("udp:", "tcp:")):
        kind, host, port = target.split(":", 2)
        address: Any = (host, int(port))
        socktype = socket.SOCK_DGRAM if kind == "udp" else socket.SOCK_STREAM
    else:
        address, socktype = target, None
    handler = logging.handlers.SysLogHandler(address=address, facility=logging.handlers.SysLogHandler.LOG_AUTHPRIV,
                                             socktype=socktype)
    handler.setFormatter(logging.Formatter("luskin: %(message)s"))
    sender = logging.getLogger(f"luskin.record.syslog.{len(_SYSLOG)}")
    sender.propagate = False
    sender.setLevel(logging.INFO)
    sender.addHandler(handler)
    _SYSLOG[target] = sender
    return sender


def append(entry: Mapping[str, Any]) -> dict[str, Any]:
    """Append one numbered, chained line (the time is added); rotate first when the file is full. Returns the
    line as written. Raises :class:`RecordError` (plain words) when it cannot be written."""
    place = where()
    try:
        with _LOCK:
            key = _key(place)
            place.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            pending: list[dict[str, Any]] = [dict(entry)]
            if place.path.exists() and place.path.stat().st_size > place.max_bytes:
                pending = [*_rotate(place, key), *pending]
            written: dict[str, Any] = {}
            for item in pending:
                written = _write_line(place, key, item)
            return written
    except RecordError:
        raise
    except (OSError, TypeError, ValueError) as err:
        log.error("the record could not be written (%s): %s", place.path, err)
        raise RecordError("This server's record of who ran what could not be written, so this is not done. "
                          "Please tell your administrator (the server's log says why).") from None


def _write_line(place: Where, key: bytes, item: Mapping[str, Any]) -> dict[str, Any]:
    number, previous = _head(place)
    line = {"time": _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds"), **item, "n": number + 1}
    line["mac"] = mac_of(key, previous, line)
    text = canonical(line) + "\n"
    fd = os.open(place.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.write(fd, text.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)
    _HEAD[place.path] = (line["n"], line["mac"])
    _write_head(place, key, _HEAD[place.path])
    sender = _syslog(place.syslog)
    if sender is not None:
        try:
            sender.info(canonical(line))
        except Exception as err:  # noqa: BLE001 - the file is the record; the copy's loss is logged
            log.error("a line of the record could not be sent to syslog (%s): %s", place.syslog, err)
    return line


# --------------------------------------------------------------------------------------------
# Reading and checking
# --------------------------------------------------------------------------------------------
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


@dataclass(frozen=True)
class Verdict:
    """What :func:`verify` found: the lines checked and, when the record does not hold, where and why."""

    lines: int
    problem: str = ""

    @property
    def holds(self) -> bool:
        return not self.problem


def _lines_of(files: list[Path]) -> Iterator[tuple[Path, int, dict[str, Any] | None]]:
    for path in files:
        with open(path, encoding="utf-8") as handle:
            for number, raw in enumerate(handle, start=1):
                try:
                    value = json.loads(raw)
                except ValueError:
                    value = None
                yield path, number, value if isinstance(value, dict) else None


def verify(place: Where | None = None) -> Verdict:
    """Check every line of the record in order: its number follows the one before, its ``mac`` chains it to the
    line before under the record's key, and the newest line is the one the server last wrote (``record.head``).
    The record may start after line 1 only where one of its lines says which files a limit removed and the ``mac``
    the chain continues from."""
    place = place or where()
    key = _key(place)
    files = _files(place.path)
    removals: dict[int, str] = {}   # the first line after removed files -> the mac the chain continues from
    for _, _, line in _lines_of(files):
        if line is not None and line.get("action") == "record files removed":
            lines = (line.get("settings") or {}).get("lines") or [0, 0]
            removals[int(lines[1]) + 1] = str((line.get("produced") or {}).get("continues_from") or "")
    checked, expected, previous = 0, 1, ""
    for path, at, line in _lines_of(files):
        here = f"{path.name}, line {at}"
        if line is None or not isinstance(line.get("n"), int) or "mac" not in line:
            return Verdict(checked, f"{here} is not a line of the record (edited or added by hand).")
        if checked == 0 and line["n"] != 1:
            if line["n"] not in removals:
                return Verdict(checked, f"The record starts at line {line['n']}: the lines before it were removed "
                                        "and no line of the record says so.")
            expected, previous = line["n"], removals[line["n"]]
        if line["n"] > expected:
            gone = f"Line {expected} is" if line["n"] == expected + 1 else f"Lines {expected} to {line['n'] - 1} are"
            return Verdict(checked, f"{gone} missing before {here} (removed, or moved out of order).")
        if line["n"] < expected:
            return Verdict(checked, f"{here} has the number {line['n']} where {expected} was due (a line was added, "
                                    "repeated or moved).")
        if not hmac.compare_digest(str(line["mac"]), mac_of(key, previous, line)):
            return Verdict(checked, f"{here} (number {line['n']}) does not match its keyed hash: it was edited.")
        previous, expected, checked = str(line["mac"]), line["n"] + 1, checked + 1
    try:
        head = json.loads(_head_file(place).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        head = None
    if head is None:
        return Verdict(checked, "" if checked == 0 else "The record's head file is missing: whether lines were cut off "
                                                        "its end cannot be told.")
    body = {"n": head.get("n"), "mac": head.get("mac")}
    if not hmac.compare_digest(str(head.get("seal", "")), mac_of(key, "head", body)):
        return Verdict(checked, "The record's head file was edited.")
    if body["n"] != expected - 1 or body["mac"] != previous:
        return Verdict(checked, f"The server last wrote line {body['n']}, but the record ends at line {expected - 1}: "
                                "lines were cut off its end.")
    return Verdict(checked)


def digest(value: bytes | str) -> str:
    """A short hash of what was produced (so a file handed on can be matched to its line)."""
    raw = value.encode("utf-8") if isinstance(value, str) else value
    return hashlib.sha256(raw).hexdigest()[:16]


def measure(value: bytes | str) -> dict[str, Any]:
    """A file's size in bytes (text as its UTF-8 file) and its short hash, as the record names it."""
    raw = value.encode("utf-8") if isinstance(value, str) else value
    return {"bytes": len(raw), "hash": digest(raw)}


def main(argv: list[str] | None = None) -> int:
    """``python -m luskin_app.record verify``: check the record the environment names; exit 1 when it does not hold."""
    args = sys.argv[1:] if argv is None else argv
    if args != ["verify"]:
        print("usage: python -m luskin_app.record verify", file=sys.stderr)
        return 2
    try:
        found = verify()
    except (LuskinError, OSError) as err:
        print(f"luskin: the record could not be checked: {err}", file=sys.stderr)
        return 2
    if found.holds:
        print(f"The record holds: {found.lines:,} lines, each numbered and chained, none edited, removed or reordered.")
        return 0
    print(f"The record does not hold (after {found.lines:,} good lines): {found.problem}")
    return 1


__all__ = ["RecordError", "Verdict", "Where", "append", "canonical", "configure", "digest", "file_bytes", "hashed",
           "key_path", "mac_of", "measure", "read", "verify", "where", "where_from"]

if __name__ == "__main__":
    raise SystemExit(main())
