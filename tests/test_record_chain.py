"""The record an auditor relies on (issue 47): numbered lines chained with a keyed hash whose key is outside the
state folder, a verifier that finds a line edited, removed, reordered or cut off the end, rotation that never
drops a line silently, a failed write that stops the analysis with a plain message, values only by hash, every
event (uploads, deletions, refused addresses, expiry), and a copy to syslog. Sign-in, sign-out and refused
sign-ins and downloads against the real provider: tests/browser/test_auth_browser.py."""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from luskin_app import keep, record
from luskin_app.ui import unescape

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")


@pytest.fixture
def where(tmp_path: Path) -> Iterator[record.Where]:
    key = tmp_path / "secrets" / "record.key"
    key.parent.mkdir()
    key.write_bytes(os.urandom(32))
    key.chmod(0o600)
    place = record.Where(tmp_path / "state" / "record" / "record.jsonl", max_bytes=4_000, key_file=key,
                         state=tmp_path / "state")
    record.configure(place)
    keep.configure(keep.place_from({"LUSKIN_STATE_DIR": str(tmp_path / "state")}))
    yield place
    record.configure(None)
    keep.configure(None)


def _all_lines(place: record.Where) -> list[dict]:
    files = sorted(place.path.parent.glob(place.path.name + ".*[0-9]")) + [place.path]
    return [json.loads(line) for path in files if path.exists() for line in path.read_text().splitlines()]


def _write(place: record.Where, count: int) -> None:
    for number in range(count):
        record.append({"action": "audit", "user": {"id": f"u{number % 3}", "name": "U", "email": ""},
                       "settings": {"k": number}})


def test_rotation_keeps_every_line_numbered_and_chained(where: record.Where) -> None:
    """On main rotation kept 10 files and dropped the rest silently (150 of 400 lines kept in the issue)."""
    _write(where, 400)
    lines = _all_lines(where)
    assert [e["n"] for e in lines] == list(range(1, 401))
    assert len(list(where.path.parent.glob("record.jsonl.*[0-9]"))) > 10
    verdict = record.verify()
    assert verdict.holds and verdict.lines == 400, verdict


def test_a_limit_on_the_files_kept_is_said_in_the_record(where: record.Where) -> None:
    place = record.Where(where.path, max_bytes=where.max_bytes, files=2, key_file=where.key_file, state=where.state)
    record.configure(place)
    _write(place, 200)
    lines = _all_lines(place)
    removed = [e for e in lines if e["action"] == "record files removed"]
    assert removed and removed[-1]["settings"]["lines"][1] + 1 == lines[0]["n"] > 1   # the first line kept, said
    assert removed[-1]["produced"]["continues_from"]
    assert record.verify().holds
    # Without the line that says so, the missing start is found.
    files = sorted(place.path.parent.glob("record.jsonl.*[0-9]")) + [place.path]
    for path in files:
        kept = [line for line in path.read_text().splitlines() if '"record files removed"' not in line]
        path.write_text("".join(line + "\n" for line in kept))
    assert "were removed and no line of the record says so" in record.verify().problem


@pytest.mark.parametrize(("tamper", "said"), [
    ("edit", "does not match its keyed hash"),
    ("remove", "missing before"),
    ("reorder", "Line 6 is missing before record.jsonl, line 6 (removed, or moved out of order)"),
    ("renumber", "does not match its keyed hash"),
    ("cut the end", "cut off its end"),
    ("add", "not a line of the record"),
])
def test_the_verifier_finds_a_line_edited_removed_or_reordered(where: record.Where, tamper: str, said: str) -> None:
    _write(where, 12)
    assert record.verify().holds
    lines = where.path.read_text().splitlines()
    if tamper == "edit":
        lines[5] = lines[5].replace('"name":"U"', '"name":"Someone else"')
    elif tamper == "remove":
        del lines[5]
    elif tamper == "reorder":
        lines[5], lines[6] = lines[6], lines[5]
    elif tamper == "renumber":   # a line removed and the ones after renumbered to hide the gap
        kept = [json.loads(line) for line in lines]
        del kept[5]
        for number, line in enumerate(kept, start=kept[0]["n"]):
            line["n"] = number
        lines = [record.canonical(line) for line in kept]
    elif tamper == "cut the end":
        lines = lines[:-2]
    else:
        lines.insert(3, '{"action": "audit", "user": {"id": "forged"}}')
    where.path.write_text("".join(line + "\n" for line in lines))
    verdict = record.verify()
    assert not verdict.holds and said in verdict.problem, verdict


def test_the_key_may_not_live_in_the_state_folder(tmp_path: Path) -> None:
    inside = tmp_path / "state" / "record.key"
    inside.parent.mkdir()
    inside.write_bytes(os.urandom(32))
    record.configure(record.Where(tmp_path / "state" / "record" / "record.jsonl", max_bytes=10_000, key_file=inside,
                                  state=tmp_path / "state"))
    try:
        with pytest.raises(record.RecordError, match="inside the server's state folder"):
            record.append({"action": "audit"})
    finally:
        record.configure(None)


def test_lines_are_sent_to_syslog_as_they_are_written(where: record.Where, tmp_path: Path) -> None:
    address = str(tmp_path / "log.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    server.bind(address)
    server.settimeout(10)
    try:
        record.configure(record.Where(where.path, where.max_bytes, key_file=where.key_file, state=where.state,
                                      syslog=address))
        written = record.append({"action": "sign-in", "user": {"id": "https://idp|ann", "name": "Ann"}})
        received = server.recv(65_536).decode()
        assert received.startswith("<") and "luskin: " in received      # <priority>luskin: {...}
        assert json.loads(received.split("luskin: ", 1)[1].rstrip("\x00")) == written
    finally:
        server.close()


def _app(environ: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> AppTest:
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    return AppTest.from_file(APP, default_timeout=300)


def test_a_record_that_cannot_be_written_stops_the_analysis_in_words(tmp_path: Path, where: record.Where) -> None:
    """On main the analysis was shown and the failure only logged."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the record's folder should be")
    record.configure(record.Where(blocker / "record.jsonl", 10_000, key_file=where.key_file, state=where.state))
    at = AppTest.from_file(APP, default_timeout=300).run()
    assert not at.exception, at.exception
    said = [unescape(e.value) for e in at.error]
    assert any("record of who ran what could not be written, so this is not done" in e for e in said), said
    assert not any("At a glance" in m.value for m in at.markdown)   # the verdict is not drawn


def test_uploads_deletions_refused_addresses_and_expiry_are_lines_with_values_by_hash(where: record.Where) -> None:
    from luskin_app import housekeeping

    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params["data"] = "k" * 43   # someone else's address, or one that is gone
    at.run()
    at.file_uploader(key="upload_csv").set_value(("patients_smith.csv", ("race,hired\n" + "White,yes\nBlack,no\n" * 50)
                                                  .encode(), "text/csv")).run()
    at.button(key="data_confirm").click().run() if any(b.key == "data_confirm" for b in at.button) else None
    at.button(key="kept_forget").click().run()
    assert not at.exception, at.exception
    lines = _all_lines(where)
    actions = [e["action"] for e in lines]
    assert "refused" in actions and "upload" in actions and "upload deleted" in actions, actions
    refused = lines[actions.index("refused")]
    assert refused["settings"]["what"] == "upload" and refused["produced"]["address"].startswith("h:")
    upload = lines[actions.index("upload")]
    assert upload["data"]["kind"] == "upload" and upload["data"]["name"] == record.hashed("patients_smith.csv")
    text = where.path.read_text()
    assert "patients_smith" not in text and "k" * 43 not in text
    audits = [e for e in lines if e["action"] == "audit" and e["data"]["kind"] == "upload"]
    for line in audits:   # the group's values and labels by hash, the columns in clear
        assert line["settings"]["protected"]["column"] == "race"
        assert str(line["settings"]["protected"]["value"]).startswith("h:")
    assert '"White"' not in text and '"Black"' not in text
    # An upload whose time is up is deleted by the housekeeping, and that is a line too.
    key = keep.store("old.csv", b"a,b\n1,2\n", "")
    meta = next(keep.folder().glob("*.meta"))
    saved = json.loads(meta.read_text())
    saved["saved"] = time.time() - keep.keep_hours() * 3600 - 5
    meta.write_text(json.dumps(saved))
    assert housekeeping.sweep_kept() >= 1 and keep.load(key) is None
    assert _all_lines(where)[-1]["action"] == "uploads expired"
    assert record.verify().holds


def test_the_administration_page_checks_the_record(where: record.Where) -> None:
    _write(where, 5)
    page = AppTest.from_file(str(ROOT / "app_pages" / "admin.py"), default_timeout=300).run()
    page.button(key="admin_record_check").click().run()
    assert not page.exception, page.exception
    assert any("The record holds: 5 lines" in s.value for s in page.success)
    lines = where.path.read_text().splitlines()
    where.path.write_text("".join(line + "\n" for line in lines[:2] + lines[3:]))
    page.button(key="admin_record_check").click().run()
    assert any("Line 3 is missing" in unescape(e.value) for e in page.error)
