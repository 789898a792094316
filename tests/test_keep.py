"""Uploads kept by the server (issues 16 and 30): an unguessable key, a private stable folder, encrypted at
rest, owned by their uploader, atomic writes, a clean-up that never deletes a live upload, a time limit."""

from __future__ import annotations

import io
import json
import os
import stat
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from luskin_app import keep
from luskin_core.errors import LuskinError

CSV = b"name,ssn,decision\nAda Lovelace,123-45-6789,approved\nAlan Turing,987-65-4321,denied\n"


@pytest.fixture(autouse=True)
def place(tmp_path: Path):
    """A fresh state folder per test (what LUSKIN_STATE_DIR names on a server)."""
    found = keep.place_from({"LUSKIN_STATE_DIR": str(tmp_path / "state")})
    keep.configure(found)
    yield found
    keep.configure(None)


def test_an_upload_comes_back_by_its_key_until_forgotten(place: keep.Place) -> None:
    key = keep.store("berkeley.csv", b"a,b\n1,2\n")
    assert len(key) >= 40 and keep.KEY_PATTERN.match(key)
    kept = keep.load(key)
    assert kept is not None and (kept.name, kept.raw, kept.settings) == ("berkeley.csv", b"a,b\n1,2\n", None)
    keep.save_settings(key, '{"spec": {}}', page={"series_every": "quarter"})
    kept = keep.load(key)
    assert kept is not None and kept.settings == '{"spec": {}}' and kept.page == {"series_every": "quarter"}
    assert stat.S_IMODE(os.stat(keep.folder()).st_mode) == 0o700   # this server's user only
    assert stat.S_IMODE(os.stat(place.key_file).st_mode) == 0o600
    assert place.key_file.parent != keep.folder()                  # the key is not in the folder it protects
    assert keep.forget(key)
    assert keep.load(key) is None and not list(keep.folder().iterdir())


def test_keys_are_unguessable_and_malformed_ones_find_nothing() -> None:
    keys = {keep.store("f.csv", b"x") for _ in range(30)}
    assert len(keys) == 30
    for bad in ("", "../etc/passwd", "a" * 10, "x" * 43, None, "../" + next(iter(keys))):
        assert keep.load(bad) is None   # type: ignore[arg-type]


def test_a_copy_of_the_folder_leaks_nothing() -> None:
    """No file name, byte or record in the folder shows the data, its file name, the settings or the key."""
    key = keep.store("applicants_2026.csv", CSV, owner="https://idp|alice")
    keep.save_settings(key, '{"spec": {"protected": "race == White"}}', owner="https://idp|alice")
    blob = b"".join(p.name.encode() + p.read_bytes() for p in keep.folder().iterdir())
    for secret in (b"Ada", b"123-45-6789", b"applicants_2026", b"race", b"alice", key.encode()):
        assert secret not in blob
    data_file = next(p for p in keep.folder().iterdir() if p.suffix == ".data")
    with pytest.raises(Exception):   # noqa: B017 - whatever pandas says, it is not this CSV
        frame = pd.read_csv(io.BytesIO(data_file.read_bytes()))
        assert "ssn" in frame.columns


def test_a_copy_opens_neither_without_the_servers_key_nor_without_the_address(tmp_path: Path) -> None:
    key = keep.store("f.csv", CSV)
    other = keep.place_from({"LUSKIN_STATE_DIR": str(tmp_path / "state"),
                             "LUSKIN_KEEP_KEY_FILE": str(tmp_path / "other.key")})
    (tmp_path / "other.key").write_bytes(os.urandom(32))
    keep.configure(other)   # the same folder, another server's key: the file does not open
    assert keep.load(key) is None


def test_an_upload_opens_only_for_its_owner() -> None:
    key = keep.store("f.csv", CSV, owner="idp|alice")
    assert keep.load(key, "idp|bob") is None
    assert keep.load(key, "") is None
    assert not keep.forget(key, "idp|bob")              # nor can anyone else delete it
    keep.save_settings(key, '{"x": 1}', owner="idp|bob")  # nor change its settings
    kept = keep.load(key, "idp|alice")
    assert kept is not None and kept.raw == CSV and kept.settings is None


def test_forget_everything_of_mine_leaves_the_others() -> None:
    mine = [keep.store(f"{i}.csv", CSV, owner="idp|alice") for i in range(3)]
    theirs = keep.store("b.csv", CSV, owner="idp|bob")
    assert keep.forget_all("idp|alice") == 3
    assert all(keep.load(k, "idp|alice") is None for k in mine)
    assert keep.load(theirs, "idp|bob") is not None


def test_an_upload_older_than_the_limit_is_gone_and_a_fresh_one_stays() -> None:
    old = keep.store("old.csv", b"x")
    assert keep.sweep(now=time.time() + keep.keep_hours() * 3600 + 5) == 1
    assert keep.load(old) is None
    fresh = keep.store("new.csv", b"y")
    assert keep.sweep() == 0 and keep.load(fresh) is not None


def test_the_retention_is_the_operators(tmp_path: Path) -> None:
    keep.configure(keep.place_from({"LUSKIN_STATE_DIR": str(tmp_path / "s"), "LUSKIN_KEEP_HOURS": "0.5"}))
    assert keep.keep_hours() == 0.5 and keep.hours_text() == "30 minutes"
    key = keep.store("f.csv", b"x")
    keep.sweep(now=time.time() + 31 * 60)
    assert keep.load(key) is None
    for bad in ("soon", "0", "-1", "100000"):
        with pytest.raises(LuskinError, match="LUSKIN_KEEP_HOURS"):
            keep.place_from({"LUSKIN_KEEP_HOURS": bad})


def test_a_restart_finds_and_cleans_what_the_last_process_kept(place: keep.Place) -> None:
    """The folder is stable: a new process (a fresh configure) opens what is live and deletes what expired."""
    live = keep.store("live.csv", b"live")
    expired = keep.store("expired.csv", b"old")
    names = keep._names(expired)
    assert names is not None
    meta = names[1]
    record = json.loads(meta.read_text())
    record["saved"] -= keep.keep_hours() * 3600 + 60
    meta.write_text(json.dumps(record))
    partial = keep.folder() / ".tmp-deadbeef-half.data"
    partial.write_bytes(b"half a file")
    os.utime(partial, (time.time() - 2 * keep.TEMP_GRACE,) * 2)
    keep.configure(keep.place_from({"LUSKIN_STATE_DIR": str(place.state)}))   # "the next process"
    assert keep.sweep() == 2
    assert keep.load(live) is not None and keep.load(expired) is None and not partial.exists()


def test_settings_written_while_the_clean_up_runs_never_lose_a_live_upload() -> None:
    """The defect of issue 30: save_settings rewrote the record in place while another upload's clean-up
    read it half-written, took it for expired and deleted a live upload. Writes are atomic now."""
    keys = [keep.store(f"{i}.csv", CSV) for i in range(4)]
    stop = threading.Event()
    errors: list[BaseException] = []

    def write(key: str) -> None:
        n = 0
        while not stop.is_set():
            n += 1
            try:
                keep.save_settings(key, json.dumps({"n": n, "pad": "x" * 5000}))
            except BaseException as err:  # noqa: BLE001 - reported below
                errors.append(err)

    threads = [threading.Thread(target=write, args=(k,)) for k in keys]
    for thread in threads:
        thread.start()
    try:
        for _ in range(100):
            keep.sweep()
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert not errors
    assert all(keep.load(k) is not None for k in keys)


def test_a_failed_write_leaves_no_partial_file(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", broken)
    with pytest.raises(OSError):
        keep.store("f.csv", CSV)
    assert not list(keep.folder().iterdir())


def test_a_missing_key_file_named_by_the_operator_is_said_plainly(tmp_path: Path) -> None:
    keep.configure(keep.place_from({"LUSKIN_STATE_DIR": str(tmp_path / "s"),
                                    "LUSKIN_KEEP_KEY_FILE": str(tmp_path / "nowhere.key")}))
    with pytest.raises(LuskinError, match="does not exist"):
        keep.store("f.csv", b"x")
