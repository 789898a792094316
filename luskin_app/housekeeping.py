"""Closed sessions let go of their data: the server drops a session once its browser has been gone for
``server.disconnectedSessionTTL`` seconds, even when no one else comes by.

Streamlit keeps a disconnected session (its state: the uploaded frame, results) for a reconnect,
and drops it only lazily, the next time another session disconnects; on a quiet server a closed
session's upload stayed in memory for good (measured: benchmarks/results/code_timings.md, nothing
given back). One thread per server reaps the expired ones every ``PERIOD`` seconds, and hands the freed
memory back to the system (:func:`give_back_freed_memory`). It reaches
Streamlit's session storage through private attributes (there is no public call); if a version
of Streamlit moves them, it logs once and does nothing, as before.

The same thread deletes kept uploads whose time is up (:func:`luskin_app.keep.sweep`), at start (what
the last process kept, in the same stable folder) and every ``SWEEP_PERIOD`` seconds after, so that
an expired upload does not wait for someone to upload before it goes.
"""

from __future__ import annotations

import gc
import logging
import threading
import time
from typing import Any

import streamlit as st

log = logging.getLogger("luskin.app")

PERIOD = 30.0  # seconds between two reapings
SWEEP_PERIOD = 300.0  # seconds between two sweeps of the kept uploads


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
        return keep.sweep()
    except Exception as err:  # noqa: BLE001 - housekeeping never stops the server
        log.warning("expired uploads could not be deleted: %s", err)
        return 0


def _loop(period: float) -> None:
    reaping = True
    last_sweep = time.monotonic()
    while True:
        time.sleep(period)
        if time.monotonic() - last_sweep >= SWEEP_PERIOD:
            sweep_kept()
            last_sweep = time.monotonic()
        if not reaping:
            continue
        try:
            reap_closed_sessions()
        except Exception as err:  # noqa: BLE001 - housekeeping never stops the server
            log.warning("closed sessions are not reaped on this Streamlit (%s); they go when others disconnect",
                        type(err).__name__)
            reaping = False


@st.cache_resource(show_spinner=False)
def start(period: float = PERIOD) -> threading.Thread:
    """The server's one housekeeping thread (started by the first run of ``app.py``), after a first sweep."""
    sweep_kept()   # what the last process kept and is now out of time
    thread = threading.Thread(target=_loop, args=(period,), name="luskin-housekeeping", daemon=True)
    thread.start()
    return thread
