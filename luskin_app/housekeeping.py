"""Closed sessions let go of their data: the server drops a session once its browser has been gone for
``server.disconnectedSessionTTL`` seconds, even when no one else comes by.

Streamlit keeps a disconnected session (its state: the uploaded frame, results) for a reconnect,
and drops it only lazily, the next time another session disconnects; on a quiet server a closed
session's upload stayed in memory for good (measured: benchmarks/results/code_timings.md, nothing
given back). One thread per server reaps the expired ones every ``PERIOD`` seconds, and hands the freed
memory back to the system (:func:`give_back_freed_memory`). It reaches
Streamlit's session storage through private attributes (there is no public call); if a version
of Streamlit moves them, it logs once and does nothing, as before.

The same thread deletes kept uploads whose time is up (:func:`luskin_app.keep.sweep`): at the server's start
(``serve.py`` starts the thread before the first visitor; what the last process kept, in the same stable
folder), then at each upload's expiry (it wakes for the next one) and at least every ``PERIOD`` seconds.
"""

from __future__ import annotations

import gc
import logging
import threading
import time
from typing import Any

log = logging.getLogger("luskin.app")

PERIOD = 30.0  # seconds between two reapings


def _storage_cache() -> Any:
    from streamlit.runtime import Runtime

    manager: Any = Runtime.instance()._session_mgr  # a WebsocketSessionManager (typed as its protocol)
    return manager._session_storage._cache


def reap_closed_sessions() -> int:
    """Drop the sessions whose browser left more than the TTL ago; the number of sessions still kept."""
    cache = _storage_cache()
    before = len(cache._data)
    cache.expire()
    kept = len(cache._data)
    if kept < before:
        gc.collect()  # their frames and results sit in reference cycles (session state, page globals)
        give_back_freed_memory()
        log.info("dropped %d closed session(s); %d kept for a reconnect", before - kept, kept)
    return kept


def give_back_freed_memory() -> bool:
    """Return the C heap's free pages to the system (glibc's ``malloc_trim``); whether it could.

    Freeing a session's frame frees its memory inside the process, but glibc keeps the freed pages of
    its heaps for the next allocation, so the server's resident memory did not fall (measured in one
    process: three 1M-row uploads audited and deleted, 270 MB resident; after the trim, 190 MB). Nothing
    is allocated or changed; the pages come back on the next allocation. Elsewhere than glibc: a no-op.
    """
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.malloc_trim(0))
    except (OSError, AttributeError):
        return False


def sweep_kept() -> int:
    """Delete the kept uploads whose time is up; never raises (a broken folder is logged)."""
    from . import keep

    try:
        deleted = keep.sweep()
    except Exception as err:  # noqa: BLE001 - housekeeping never stops the server
        log.warning("expired uploads could not be deleted: %s", err)
        return 0
    if deleted:
        from . import record

        try:
            record.append({"action": "uploads expired", "user": {"id": "", "name": "", "email": ""}, "page": "",
                           "settings": {"hours": keep.keep_hours()}, "produced": {"uploads": deleted}})
        except Exception as err:  # noqa: BLE001 - housekeeping never stops the server; the operator reads why
            log.error("the record could not be written for expired uploads: %s", err)
    return deleted


def end_expired_sign_ins() -> int:
    """End the sign-ins past the operator's maximum age, each a line of the record; never raises."""
    from . import record, signins

    try:
        ended = signins.end_expired()
        for signin in ended:
            record.append({"action": "sign-in expired", "user": signins.who(signin.claims), "page": "",
                           "settings": {"hours": round(signins.limits().max_age / 3600, 2)}})
        return len(ended)
    except Exception as err:  # noqa: BLE001 - housekeeping never stops the server
        log.error("expired sign-ins could not be ended or recorded: %s", err)
        return 0


def _next_wait(period: float) -> float:
    """Seconds until the next look: the reaping period, or sooner when a kept upload's time is up before it."""
    from . import keep

    try:
        due = keep.next_expiry()
    except Exception:  # noqa: BLE001 - a broken folder: the sweep logs it; look again after the period
        due = None
    if due is None:
        return period
    return max(0.5, min(period, due - time.time() + 0.05))


def _loop(period: float) -> None:
    reaping = True
    while True:
        time.sleep(_next_wait(period))
        sweep_kept()   # cheap (the records of the kept uploads): an expired upload goes within seconds of its time
        end_expired_sign_ins()
        if not reaping:
            continue
        try:
            reap_closed_sessions()
        except Exception as err:  # noqa: BLE001 - housekeeping never stops the server
            log.warning("closed sessions are not reaped on this Streamlit (%s); they go when others disconnect",
                        type(err).__name__)
            reaping = False


_STARTED: list[threading.Thread] = []
_START_LOCK = threading.Lock()


def start_thread(period: float = PERIOD) -> threading.Thread:
    """The process's one housekeeping thread, after a first sweep (what the last process kept and is now out of
    time). ``serve.py`` starts it with the server, before any visitor; a bare ``streamlit run app.py`` at its
    first run (:func:`start`)."""
    with _START_LOCK:
        if _STARTED and _STARTED[0].is_alive():
            return _STARTED[0]
        sweep_kept()
        thread = threading.Thread(target=_loop, args=(period,), name="luskin-housekeeping", daemon=True)
        thread.start()
        _STARTED[:] = [thread]
        return thread


def start(period: float = PERIOD) -> threading.Thread:
    """The server's one housekeeping thread (``app.py`` asks on every run; started once)."""
    return start_thread(period)
