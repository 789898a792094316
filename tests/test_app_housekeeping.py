"""Closed sessions let go of their data on a quiet server (issue 15 §3): the housekeeping thread drops the
sessions whose browser left more than ``server.disconnectedSessionTTL`` ago, which Streamlit itself only does
when another session disconnects. Memory is measured by benchmarks/bench_session_memory.py."""

from __future__ import annotations

import inspect

import pytest

from luskin_app import housekeeping


class _Session:
    def __init__(self, sid: str) -> None:
        self.id = sid


class _Info:
    def __init__(self, sid: str) -> None:
        self.session = _Session(sid)


def test_expired_sessions_are_dropped_and_fresh_ones_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    """On Streamlit's own session storage: an entry past its TTL goes, a fresh one stays."""
    from streamlit.runtime.memory_session_storage import MemorySessionStorage

    clock = [1000.0]
    storage = MemorySessionStorage(maxsize=8, ttl_seconds=20)
    cache = storage._cache
    monkeypatch.setattr(cache, "_timer", lambda: clock[0])
    storage.save(_Info("closed"))  # type: ignore[arg-type]
    clock[0] += 15
    storage.save(_Info("fresh"))  # type: ignore[arg-type]
    clock[0] += 10  # "closed" is past its 20 s, and no other session disconnects
    monkeypatch.setattr(housekeeping, "_storage_cache", lambda: cache)
    assert len(cache._data) == 2  # Streamlit has not dropped the expired one by itself
    assert housekeeping.reap_closed_sessions() == 1
    assert storage.get("fresh") is not None and "closed" not in cache._data


def test_the_streamlit_installed_keeps_sessions_where_housekeeping_looks() -> None:
    """The private path the thread takes exists in this Streamlit (else it would log and stop)."""
    from streamlit.runtime import Runtime
    from streamlit.runtime.memory_session_storage import MemorySessionStorage
    from streamlit.runtime.websocket_session_manager import WebsocketSessionManager

    assert "_session_mgr" in inspect.getsource(Runtime.__init__)
    assert "self._session_storage" in inspect.getsource(WebsocketSessionManager.__init__)
    cache = MemorySessionStorage()._cache
    assert hasattr(cache, "_data") and callable(cache.expire)


_FREED = """
import gc
from pathlib import Path

import numpy as np

from luskin_app import housekeeping


def resident_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


arrays = [np.ones(8_000) for _ in range(3_000)]  # 64 kB each, below glibc's mmap threshold: the heap
keep = arrays[::20]  # a few stay alive between the freed ones, so the heap cannot simply shrink from its top
del arrays
gc.collect()
before = resident_mb()
trimmed = housekeeping.give_back_freed_memory()
print(before, resident_mb(), trimmed, sum(a[0] for a in keep) == len(keep))
"""


def test_freed_memory_goes_back_to_the_system() -> None:
    """After a session's arrays are freed, glibc keeps their pages until trimmed: the trim gives them back.

    Measured in a fresh interpreter: in a test worker that has run hundreds of tests, glibc's heap and its
    dynamic thresholds depend on everything before (one whole run saw 1 MB come back instead of about 190)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _FREED], capture_output=True, text=True, timeout=120, check=True)
    before, after, trimmed, kept = done.stdout.split()
    assert trimmed == "True" and kept == "True"
    assert float(after) < float(before) - 50, f"the freed pages were not given back ({before} MB -> {after} MB)"
