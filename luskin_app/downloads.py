"""Who each download was made for, so that a download's address opens for that signed-in user only.

Streamlit serves a download button's file at ``/media/<id>`` to whoever asks while the page that drew it is open:
the address is a bearer link (handed on by a copied link, a proxy's log, a shared screen). Every download of the
dashboard goes through :func:`luskin_app.ui.download_button`, which makes the file on the click and notes here
that these bytes were made for this user (:func:`made_for`, a hash of the content and the user's id). The guard in
front of the app (:mod:`luskin_app.guard`) asks :func:`may_take` before it lets ``/media/<id>`` answer: a file made
for someone else, or asked without a sign-in, is "not found".

Kept in memory (hashes only, never the content), each for ``KEEP_SECONDS``; Streamlit-free.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict

KEEP_SECONDS = 12 * 3600.0
MAX_KEPT = 50_000

_LOCK = threading.Lock()
_MADE: OrderedDict[str, float] = OrderedDict()   # hash of (content, owner) -> when it was made
_CONTENT: dict[str, int] = {}                     # hash of the content -> how many (content, owner) pairs know it
_PAIRS: dict[str, str] = {}                       # (content, owner) pair -> its content's hash (forgotten together)


def content_hash(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def _pair(digest: str, owner: str) -> str:
    return hashlib.sha256(f"{digest}\x00{owner}".encode()).hexdigest()


def made_for(content: bytes, owner: str, now: float | None = None) -> None:
    """Note that ``content`` was made for the user ``owner`` (their id; "" for the local user)."""
    now = time.time() if now is None else now
    digest = content_hash(content)
    pair = _pair(digest, owner)
    with _LOCK:
        if pair not in _MADE:
            _CONTENT[digest] = _CONTENT.get(digest, 0) + 1
        _MADE[pair] = now
        _MADE.move_to_end(pair)
        _PAIRS[pair] = digest
        _forget_old(now)


def _forget_old(now: float) -> None:
    while _MADE:
        pair, when = next(iter(_MADE.items()))
        if now - when < KEEP_SECONDS and len(_MADE) <= MAX_KEPT:
            break
        del _MADE[pair]
        digest = _PAIRS.pop(pair, "")
        left = _CONTENT.get(digest, 0) - 1
        if left > 0:
            _CONTENT[digest] = left
        else:
            _CONTENT.pop(digest, None)


def is_download(content: bytes) -> bool:
    """Whether the dashboard made ``content`` as a download for anyone (else it is another kind of media)."""
    with _LOCK:
        return content_hash(content) in _CONTENT


def may_take(content: bytes, owner: str) -> bool:
    """Whether the download ``content`` was made for ``owner``."""
    with _LOCK:
        return _pair(content_hash(content), owner) in _MADE


def clear() -> None:
    """Forget every download (tests)."""
    with _LOCK:
        _MADE.clear()
        _CONTENT.clear()
        _PAIRS.clear()


__all__ = ["KEEP_SECONDS", "clear", "content_hash", "is_download", "made_for", "may_take"]
