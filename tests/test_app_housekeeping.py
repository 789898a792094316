"""Closed sessions let go of their data on a quiet server (issue 15 §3): the housekeeping thread drops the
sessions whose browser left more than ``server.disconnectedSessionTTL`` ago, which Streamlit itself only does
when another session disconnects. Memory is measured by benchmarks/bench_session_memory.py."""

from __future__ import annotations

import inspect
from collections.abc import Callable

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


def test_a_served_app_deletes_expired_uploads_on_time_with_no_visitor(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """``streamlit run serve.py`` with nobody visiting: what the last process kept and is out of time goes at the
    start (not at the first visitor), and an upload whose time comes while the server runs goes within seconds
    of it (not up to 5 minutes late). Real server, real files."""
    import json
    import os
    import socket
    import subprocess
    import sys
    import time
    import urllib.request
    from pathlib import Path

    from luskin_app import keep

    env = {"LUSKIN_STATE_DIR": str(tmp_path / "state"), "LUSKIN_KEEP_KEY_FILE": str(tmp_path / "keep.key"),
           "LUSKIN_KEEP_HOURS": str(25 / 3600), "LUSKIN_RECORD_KEY_FILE": str(tmp_path / "record.key")}
    for key_file in ("record.key", "keep.key"):
        (tmp_path / key_file).write_bytes(os.urandom(32))
        (tmp_path / key_file).chmod(0o600)
    keep.configure(keep.place_from(env))
    try:
        old = keep.store("old.csv", b"a,b\n1,2\n", owner="alice")
        names = keep._names(old)
        assert names is not None
        record = json.loads(names[1].read_text())
        record["saved"] -= 3600   # kept by the last process, an hour past its time
        names[1].write_text(json.dumps(record))
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        fresh = keep.store("fresh.csv", b"a,b\n3,4\n", owner="alice")   # due 25 s from now
        due = json.loads(keep._names(fresh)[1].read_text())["saved"] + 25   # type: ignore[index]
        files = {key: keep._names(key) for key in (old, fresh)}
    finally:
        keep.configure(None)   # the next use reads this process's own environment again
    root = Path(__file__).resolve().parents[1]
    log = (tmp_path / "app.log").open("w")
    app = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "serve.py", "--server.headless", "true",
                            "--server.port", str(port), "--server.address", "127.0.0.1",
                            "--server.fileWatcherType", "none", "--browser.gatherUsageStats", "false"],
                           cwd=root, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **env})

    def gone(key: str) -> bool:
        paths = files[key]
        assert paths is not None
        return not any(p.exists() for p in paths)

    def wait(what: Callable[[], bool], limit: float) -> float:
        end = time.monotonic() + limit
        while not what():
            assert app.poll() is None, (tmp_path / "app.log").read_text()[-3000:]
            assert time.monotonic() < end, (tmp_path / "app.log").read_text()[-3000:]
            time.sleep(0.2)
        return time.time()

    try:
        def healthy() -> bool:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as answer:
                    return bool(answer.read().strip() == b"ok")
            except OSError:
                return False

        wait(healthy, 90)   # the health check is no visitor: no page, no session
        wait(lambda: gone(old), 10)
        assert not gone(fresh)   # the live one stays until its time
        when = wait(lambda: gone(fresh), max(5.0, due - time.time() + 10))
        assert due - 1 <= when <= due + 5, (when - due)
    finally:
        app.terminate()
        app.wait(timeout=30)
        log.close()
