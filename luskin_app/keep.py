"""Uploads kept by the server for a stated time, so that a refresh, a bookmark or a second tab finds them.

An uploaded file is written to the server's private folder (:func:`folder`, readable by this server's
user only) under an unguessable key (:func:`secrets.token_urlsafe`, 32 bytes); the key goes in the
page's address (``?data=KEY``), together with the slide. With the file, the page's settings are kept
(the same JSON as a saved configuration), so that the address brings back the same data, settings and
slide. The key is never logged; a key that is malformed, unknown, expired or someone else's finds
nothing (the page then says so and offers to upload again).

At rest, nothing in the folder can be read without the server's key *and* the address's key: every
file is encrypted with AES-256-GCM under a key derived from both (HMAC-SHA256 of the address's key
under the server's key), and named by a hash of the address's key, so a copy of the folder (a backup,
a stolen disk) leaks neither data, file names, settings nor who uploaded what. The server's key is a
file the operator names (``LUSKIN_KEEP_KEY_FILE``) or one created on first use, mode 0600, in the
server's state folder beside (not inside) the uploads folder.

Each upload belongs to whoever uploaded it (the signed-in user's id, kept as a keyed hash); it opens
only for that owner, whatever the address. Writes are atomic (a temporary file, then
:func:`os.replace`), so the clean-up never reads a half-written file, and it deletes only what is
expired by its own clock (or a temporary file abandoned by a failed write). The folder is stable
across restarts (``LUSKIN_STATE_DIR``, default ``~/.local/state/luskin``), so a new process finds and
cleans what the last one kept. ``LUSKIN_KEEP_HOURS`` sets the retention (default 24 hours).

The settings are read from the environment only (never set); tests point the module elsewhere with
:func:`configure`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import re
import secrets
import stat
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from luskin_core.errors import LuskinError

log = logging.getLogger("luskin.app.keep")

DEFAULT_KEEP_HOURS = 24.0
KEY_PATTERN = re.compile(r"^[A-Za-z0-9_-]{40,64}$")
TEMP_GRACE = 3600.0   # seconds after which an abandoned temporary file (a failed write) is removed
_NONCE = 12
_MAGIC = b"LUSK1"
_LOCK = threading.RLock()


@dataclass(frozen=True)
class Place:
    """Where the server keeps its state: the uploads folder, the key file and the retention."""

    state: Path
    uploads: Path
    key_file: Path
    hours: float
    key_given: bool   # the operator named the key file (then it must exist)


_PLACE: list[Place] = []       # the configured place (first use, or configure())
_SERVER_KEY: dict[Path, bytes] = {}


def place_from(environ: Mapping[str, str] | None = None) -> Place:
    """The place the environment names (``LUSKIN_STATE_DIR``, ``LUSKIN_KEEP_KEY_FILE``, ``LUSKIN_KEEP_HOURS``)."""
    env = os.environ if environ is None else environ
    state = Path(env.get("LUSKIN_STATE_DIR", "").strip() or "~/.local/state/luskin").expanduser()
    key_named = env.get("LUSKIN_KEEP_KEY_FILE", "").strip()
    raw_hours = env.get("LUSKIN_KEEP_HOURS", "").strip()
    try:
        hours = float(raw_hours) if raw_hours else DEFAULT_KEEP_HOURS
    except ValueError:
        raise LuskinError(f"LUSKIN_KEEP_HOURS must be a number of hours, not '{raw_hours[:40]}'.") from None
    if not 0 < hours <= 24 * 365:
        raise LuskinError("LUSKIN_KEEP_HOURS must be more than 0 and at most a year (8760 hours).")
    key_file = Path(key_named).expanduser() if key_named else state / "keep.key"
    return Place(state, state / "uploads", key_file, hours, bool(key_named))


def configure(place: Place | None) -> None:
    """Use ``place`` from now on (tests); None reads the environment again at the next use."""
    with _LOCK:
        _PLACE[:] = [place] if place is not None else []
        _SERVER_KEY.clear()


def _place() -> Place:
    with _LOCK:
        if not _PLACE:
            _PLACE.append(place_from())
        return _PLACE[0]


def keep_hours() -> float:
    """How long an upload is kept (hours), as the operator set it."""
    return _place().hours


def hours_text() -> str:
    """The retention in words, for the pages ("24 hours", "30 minutes")."""
    hours = keep_hours()
    if hours < 1:
        return f"{round(hours * 60):,} minutes"
    return f"{hours:,.0f} hours" if float(hours).is_integer() else f"{hours:,.1f} hours"


def _private_dir(path: Path) -> Path:
    """Make ``path`` (and its parents) a folder only this user can open; refuse one that others own."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = path.stat()
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise LuskinError(f"The folder {path} belongs to another user: Luskin keeps uploads only in a folder "
                          "of its own (set LUSKIN_STATE_DIR).")
    if stat.S_IMODE(info.st_mode) & 0o077:
        os.chmod(path, 0o700)
    return path


def folder() -> Path:
    """The uploads folder (made on first use, mode 0700)."""
    place = _place()
    _private_dir(place.state)
    return _private_dir(place.uploads)


def _server_key() -> bytes:
    """The server's 32-byte key: read from its file, or made once (mode 0600) when the operator named none."""
    place = _place()
    with _LOCK:
        if place.key_file in _SERVER_KEY:
            return _SERVER_KEY[place.key_file]
    path = place.key_file
    if not path.exists():
        if place.key_given:
            raise LuskinError(f"The key file LUSKIN_KEEP_KEY_FILE names ({path}) does not exist: create it with "
                              "32 random bytes (head -c 32 /dev/urandom > FILE; chmod 600 FILE).")
        _private_dir(path.parent)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass   # another process made it first: read theirs
        else:
            with os.fdopen(fd, "wb") as handle:
                handle.write(secrets.token_bytes(32))
                handle.flush()
                os.fsync(handle.fileno())
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise LuskinError(f"The server's key file {path} cannot be read ({type(err).__name__}).") from None
    if len(raw) < 32:
        raise LuskinError(f"The server's key file {path} holds {len(raw)} bytes; it needs at least 32 random bytes.")
    if hasattr(os, "getuid") and stat.S_IMODE(path.stat().st_mode) & 0o077:
        log.warning("the key file %s can be read by other users: chmod 600 it", path)
    key = hashlib.sha256(b"luskin-keep-server-key\x00" + raw).digest()
    with _LOCK:
        _SERVER_KEY[place.key_file] = key
    return key


def _derive(purpose: str, text: str) -> bytes:
    return hmac.new(_server_key(), f"{purpose}\x00{text}".encode(), hashlib.sha256).digest()


def seal_text(purpose: str, text: str) -> str:
    """``text`` encrypted with AES-256-GCM under a key derived from the server's key and ``purpose``, as hex: how
    the server keeps a secret an administrator typed (a source's password), readable with the server's key only."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    nonce = secrets.token_bytes(_NONCE)
    return (_MAGIC + nonce + AESGCM(_derive("secret", purpose)).encrypt(nonce, text.encode("utf-8"), _MAGIC)).hex()


def open_text(purpose: str, sealed: str) -> str:
    """What :func:`seal_text` sealed; ValueError when it does not open with this server's key."""
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    raw = bytes.fromhex(sealed)
    if not raw.startswith(_MAGIC):
        raise ValueError("not a sealed text")
    nonce = raw[len(_MAGIC):len(_MAGIC) + _NONCE]
    try:
        return AESGCM(_derive("secret", purpose)).decrypt(nonce, raw[len(_MAGIC) + _NONCE:], _MAGIC).decode("utf-8")
    except InvalidTag:
        raise ValueError("the text does not open with this server's key") from None


def owner_id(user: str) -> str:
    """What the folder records of an owner: a keyed hash of the signed-in user's id ("" for no sign-in)."""
    return _derive("owner", user).hex()[:32]


def _names(key: str) -> tuple[Path, Path] | None:
    if not isinstance(key, str) or not KEY_PATTERN.match(key):
        return None
    stem = _derive("name", key).hex()[:40]
    where = folder()
    return where / f"{stem}.data", where / f"{stem}.meta"


def _seal(key: str, plain: bytes) -> bytes:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    nonce = secrets.token_bytes(_NONCE)
    return _MAGIC + nonce + AESGCM(_derive("file", key)).encrypt(nonce, plain, _MAGIC)


def _open(key: str, sealed: bytes) -> bytes:
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    if not sealed.startswith(_MAGIC):
        raise ValueError("not a kept file")
    nonce = sealed[len(_MAGIC):len(_MAGIC) + _NONCE]
    try:
        return AESGCM(_derive("file", key)).decrypt(nonce, sealed[len(_MAGIC) + _NONCE:], _MAGIC)
    except InvalidTag:
        raise ValueError("the file does not open with this server's key") from None


def write_atomic(path: Path, content: bytes) -> None:
    """Write ``content`` whole or not at all: a temporary file in the same folder, then os.replace."""
    temp = path.with_name(f".tmp-{secrets.token_hex(8)}-{path.name}")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def _read_meta(path: Path) -> dict[str, Any] | None:
    """The plain part of an upload's record (time saved, owner hash); None when it cannot be read."""
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return meta if isinstance(meta, dict) else None


def _expired(meta: Mapping[str, Any], now: float) -> bool:
    try:
        saved = float(meta.get("saved", 0))
    except (TypeError, ValueError):
        return True
    return saved < now - keep_hours() * 3600


def sweep(now: float | None = None) -> int:
    """Delete every kept upload older than the retention, and abandoned temporary files; the number deleted.

    Only files whose record says they are expired are deleted (an unreadable record counts by the file's
    own age), so a live upload is never touched, whatever another session is writing at the time.
    """
    now = now if now is not None else time.time()
    limit = keep_hours() * 3600
    deleted = 0
    where = folder()
    for path in where.iterdir():
        try:
            age = now - path.stat().st_mtime
        except OSError:
            continue
        if path.name.startswith(".tmp-"):
            if age > TEMP_GRACE:
                path.unlink(missing_ok=True)
                deleted += 1
            continue
        if path.suffix == ".meta":
            meta = _read_meta(path)
            if (meta is None and age > limit) or (meta is not None and _expired(meta, now)):
                path.with_suffix(".data").unlink(missing_ok=True)
                path.unlink(missing_ok=True)
                deleted += 1
        elif path.suffix == ".data" and not path.with_suffix(".meta").exists() and age > TEMP_GRACE:
            path.unlink(missing_ok=True)   # its record is gone (a crash between two deletes)
    if deleted:
        log.info("deleted %d expired kept upload(s) or abandoned file(s)", deleted)
    return deleted


def next_expiry() -> float | None:
    """When the next kept upload's time is up (seconds since the epoch), or None when nothing is kept."""
    limit = keep_hours() * 3600
    soonest: float | None = None
    for meta_path in folder().glob("*.meta"):
        meta = _read_meta(meta_path)
        try:
            due = float(meta.get("saved", 0)) + limit if meta is not None else None
        except (TypeError, ValueError):
            due = None
        if due is not None and (soonest is None or due < soonest):
            soonest = due
    return soonest


def store(name: str, raw: bytes, owner: str = "") -> str:
    """Keep an uploaded file for ``owner`` (the signed-in user's id, "" without sign-in); returns its key."""
    key = secrets.token_urlsafe(32)
    paths = _names(key)
    assert paths is not None
    data, meta = paths
    write_atomic(data, _seal(key, raw))
    write_atomic(meta, _meta_bytes(key, time.time(), owner_id(owner), {"name": name, "settings": None}))
    return key


def _meta_bytes(key: str, saved: float, owner: str, private: Mapping[str, Any]) -> bytes:
    sealed = _seal(key, json.dumps(dict(private)).encode("utf-8")).hex()
    return json.dumps({"v": 1, "saved": saved, "owner": owner, "sealed": sealed}).encode("utf-8")


def _private(key: str, meta: Mapping[str, Any]) -> dict[str, Any]:
    value = json.loads(_open(key, bytes.fromhex(str(meta["sealed"]))))
    if not isinstance(value, dict):
        raise TypeError("malformed record")
    return value


def _own(key: str, owner: str) -> tuple[Path, Path, dict[str, Any]] | None:
    """The paths and record of ``key`` when it is kept, not expired and ``owner``'s; else None."""
    paths = _names(key)
    if paths is None:
        return None
    meta = _read_meta(paths[1])
    if meta is None or _expired(meta, time.time()):
        return None
    if not hmac.compare_digest(str(meta.get("owner", "")), owner_id(owner)):
        return None
    return paths[0], paths[1], meta


def save_settings(key: str, settings: str, owner: str = "", page: Mapping[str, Any] | None = None) -> None:
    """Keep the page's settings (a configuration's JSON, and the pages' own widgets) with the upload."""
    with _LOCK:   # two tabs of one session saving at once: one write after the other
        found = _own(key, owner)
        if found is None:
            return
        _, meta_path, meta = found
        try:
            private = _private(key, meta)
        except (ValueError, KeyError, TypeError):
            return
        new = {**private, "settings": settings, "page": dict(page or {})}
        if new != private:
            write_atomic(meta_path, _meta_bytes(key, float(meta["saved"]), str(meta["owner"]), new))


@dataclass(frozen=True)
class Kept:
    """A kept upload: its file name and bytes, the configuration's JSON and the pages' widget values."""

    name: str
    raw: bytes
    settings: str | None
    page: dict[str, Any]
    saved: float


def load(key: str, owner: str = "") -> Kept | None:
    """The kept upload; None when the key is malformed, unknown, expired or not ``owner``'s."""
    found = _own(key, owner)
    if found is None:
        return None
    data, _, meta = found
    try:
        private = _private(key, meta)
        raw = _open(key, data.read_bytes())
        page = private.get("page") or {}
        return Kept(str(private["name"]), raw, private.get("settings"), page if isinstance(page, dict) else {},
                    float(meta["saved"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def forget(key: str, owner: str = "") -> bool:
    """Delete a kept upload now, if it is ``owner``'s ("Forget this file", a sign-out); whether it was."""
    paths = _names(key)
    if paths is None:
        return False
    meta = _read_meta(paths[1])
    if meta is None or not hmac.compare_digest(str(meta.get("owner", "")), owner_id(owner)):
        return False
    for path in paths:
        path.unlink(missing_ok=True)
    return True


def forget_all(owner: str) -> int:
    """Delete every upload (and the settings kept with it) of ``owner``; the number deleted."""
    mine = owner_id(owner)
    deleted = 0
    for meta_path in folder().glob("*.meta"):
        meta = _read_meta(meta_path)
        if meta is not None and hmac.compare_digest(str(meta.get("owner", "")), mine):
            meta_path.with_suffix(".data").unlink(missing_ok=True)
            meta_path.unlink(missing_ok=True)
            deleted += 1
    return deleted


__all__ = ["DEFAULT_KEEP_HOURS", "Kept", "Place", "configure", "folder", "forget", "forget_all", "hours_text",
           "keep_hours", "load", "open_text", "place_from", "save_settings", "seal_text", "store", "sweep"]
