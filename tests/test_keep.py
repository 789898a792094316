"""Uploads kept by the server (issue 16): an unguessable key, a private folder, a time limit, forgotten on demand."""

from __future__ import annotations

import os
import stat
import time

from luskin_app import keep


def test_an_upload_comes_back_by_its_key_until_forgotten():
    key = keep.store("berkeley.csv", b"a,b\n1,2\n")
    assert len(key) >= 40 and keep.KEY_PATTERN.match(key)
    assert keep.load(key) == ("berkeley.csv", b"a,b\n1,2\n", None)
    keep.save_settings(key, '{"spec": {}}')
    assert keep.load(key)[2] == '{"spec": {}}'
    folder = keep._folder()
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700   # this server's user only
    keep.forget(key)
    assert keep.load(key) is None and not list(folder.glob(f"{key}*"))


def test_keys_are_unguessable_and_malformed_ones_find_nothing():
    keys = {keep.store("f.csv", b"x") for _ in range(50)}
    assert len(keys) == 50
    for bad in ("", "../etc/passwd", "a" * 10, "x" * 43, None, "../" + next(iter(keys))):
        assert keep.load(bad) is None   # type: ignore[arg-type]
    for key in keys:
        keep.forget(key)


def test_an_upload_older_than_the_limit_is_gone():
    key = keep.store("old.csv", b"x")
    keep.sweep(now=time.time() + keep.KEEP_HOURS * 3600 + 5)
    assert keep.load(key) is None
