"""Served to an agency (issue 30): sign-in through a real OpenID Connect provider, uploads that open for their
owner only, roles from the provider's groups claim, and the record of who ran what.

A real provider (npm oidc-provider 9, tests/oidc_server.py) and a real app (``streamlit run app.py
--secrets.files FILE``) on 127.0.0.1, driven in Chromium: Alice (administrator) uploads a file; Bob (analyst),
given Alice's address, gets "not found" and nothing of hers; a signed-out visitor sees only the sign-in page;
Carol, whose sign-in carries no groups claim, is told so in plain words; the kept file is not readable as CSV;
the record holds one line per action and no data value.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from conftest import CHROMIUM, ROOT, UI, _healthy
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

sys.path.insert(0, str(ROOT / "tests"))
import oidc_server

pytestmark = pytest.mark.browser

USERS = {"alice": {"email": "alice@agency.gov", "email_verified": True, "name": "Alice Admin",
                   "groups": ["luskin-admins"]},
         "bob": {"email": "bob@agency.gov", "email_verified": True, "name": "Bob Analyst",
                 "groups": ["luskin-analysts"]},
         "carol": {"email": "carol@agency.gov", "email_verified": True, "name": "Carol Nogroups"}}
SOURCES = """
[[source]]
name = "Open to analysts"
location = "{folder}/open.csv"

[[source]]
name = "Administrators only"
location = "{folder}/closed.csv"
groups = ["luskin-admins"]
"""


class Served:
    """The provider, the app, and the app's state folder."""

    def __init__(self, url: str, state: Path, log: Path) -> None:
        self.url, self.state, self.log = url, state, log

    def record(self) -> list[dict[str, Any]]:
        path = self.state / "record" / "record.jsonl"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    if not CHROMIUM.exists():
        pytest.skip(f"Chromium not found at {CHROMIUM}")
    folder = tmp_path_factory.mktemp("served")
    port = oidc_server.free_port()
    url = f"http://127.0.0.1:{port}"
    frame = pd.DataFrame({"group": ["a", "b"] * 20, "hired": ["yes", "no", "no", "yes"] * 10})
    frame.to_csv(folder / "open.csv", index=False)
    frame.to_csv(folder / "closed.csv", index=False)
    (folder / "sources.toml").write_text(SOURCES.format(folder=folder))
    with oidc_server.provider(USERS, f"{url}/oauth2callback", folder / "provider.log") as issuer:
        secrets = folder / "secrets.toml"
        secrets.write_text(oidc_server.secrets_toml(url, issuer))
        state = folder / "state"
        log_path = folder / "app.log"
        log = log_path.open("w")
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "LUSKIN_STATE_DIR": str(state),
               "LUSKIN_SOURCES": str(folder / "sources.toml")}
        command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                   "--server.port", str(port), "--server.address", "127.0.0.1", "--server.fileWatcherType", "none",
                   "--browser.gatherUsageStats", "false", "--secrets.files", str(secrets)]
        process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)
        try:
            deadline = time.monotonic() + 90
            while not _healthy(url):
                if process.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    pytest.fail(f"the app did not start:\n{log_path.read_text()[-3000:]}")
                time.sleep(0.25)
            yield Served(url, state, log_path)
        finally:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
            log.close()


def _main(ui: UI) -> str:
    return str(ui.page.get_by_test_id("stApp").inner_text())


def sign_in(ui: UI, who: str) -> None:
    ui.open()
    ui.page.get_by_role("button", name="Sign in").click()
    ui.page.locator('input[name="login"]').fill(who)
    ui.page.locator('input[name="password"]').fill("any")
    ui.page.locator('button[type="submit"]').click()
    ui.page.wait_for_url(re.compile(r"^http://127\.0\.0\.1:\d+/(\?.*)?$"), timeout=60_000)
    ui.page.locator('section[data-testid="stSidebar"]').get_by_text("Signed in:").first.wait_for(timeout=120_000)
    ui.idle(60_000)


def upload(ui: UI, csv: Path) -> str:
    ui.page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(csv))
    ui.wait_text("Luskin's first guesses for this file", timeout=60_000)
    ui.page.get_by_role("button", name="Use these choices").first.click()
    ui.wait_text("Ready: comparing", timeout=60_000)
    ui.idle()
    found = re.search(r"[?&]data=([A-Za-z0-9_-]+)", ui.page.url)
    assert found, ui.page.url
    return found.group(1)


@pytest.fixture
def applicants(berkeley_csv: Path, tmp_path: Path) -> Path:
    """Berkeley 1973 with an applicant id per row: values that must never reach the record."""
    frame = pd.read_csv(berkeley_csv)
    frame.insert(0, "applicant", [f"APPLICANT-{i:05d}-ZQX" for i in range(len(frame))])
    path = tmp_path / "applicants_1973.csv"
    frame.to_csv(path, index=False)
    return path


def test_a_signed_out_visitor_sees_only_the_sign_in_page(served: Served, page: Any) -> None:
    ui = UI(page, served.url)
    for path in ("", "audit", "?data=" + "k" * 43, "present?slide=2&data=" + "k" * 43):
        ui.open(path)
        ui.page.get_by_role("button", name="Sign in").wait_for(timeout=60_000)
        ui.idle()
        text = _main(ui)
        assert "Sign in with your organisation's account" in text
        for leaked in ("rows ×", "Adult", "48,842", "Upload", "Audit"):
            assert leaked not in text, (path, leaked)
        assert not ui.page.get_by_test_id("stSidebarNav").count()


def test_uploads_open_for_their_owner_only_and_roles_decide_what_is_shown(
        served: Served, browser: Any, applicants: Path) -> None:
    alice = UI(browser.new_page(viewport={"width": 1280, "height": 1000}), served.url)
    sign_in(alice, "alice")
    assert "Alice Admin" in alice.page.locator('section[data-testid="stSidebar"]').first.inner_text()
    key = upload(alice, applicants)
    # The kept file on disk is neither the CSV nor anything a spreadsheet could read.
    files = [p for p in (served.state / "uploads").iterdir() if p.suffix == ".data"]
    assert len(files) == 1
    raw = files[0].read_bytes()
    assert b"APPLICANT-" not in raw and b"department" not in raw
    try:
        columns = list(pd.read_csv(io.BytesIO(raw)).columns)
    except (ValueError, UnicodeDecodeError):
        columns = []
    assert "department" not in columns and "applicant" not in columns
    # The administrator sees the Administration page and both sources.
    more = alice.page.get_by_test_id("stSidebarNav").get_by_text(re.compile(r"^View \d+ more$"))
    if more.count():   # a long list of pages is folded: unfold it, as a user does
        more.first.click()
    nav = alice.page.get_by_test_id("stSidebarNav").inner_text()
    assert "Administration" in nav
    alice.goto_page("Administration")
    alice.wait_text("Record of who ran what")
    alice.idle()
    admin_text = _main(alice)
    assert "Open to analysts" in admin_text and "Administrators only" in admin_text
    assert "closed.csv" not in admin_text   # no location reaches the browser

    bob = UI(browser.new_page(viewport={"width": 1280, "height": 1000}), served.url)
    sign_in(bob, "bob")
    bob.open(f"?data={key}")
    bob.wait_text(re.compile("was not found on the server"), timeout=60_000)
    bob.idle()
    text = _main(bob)
    assert "applicants_1973" not in text and "APPLICANT-" not in text and "4,526" not in text
    more = bob.page.get_by_test_id("stSidebarNav").get_by_text(re.compile(r"^View \d+ more$"))
    if more.count():
        more.first.click()
    assert "Administration" not in bob.page.get_by_test_id("stSidebarNav").inner_text()
    # Bob's sources: the one open to analysts, not the administrators' (and no settings or locations at all).
    bob.goto_page("Data")
    bob.wait_text("Sources set up by your administrator")
    bob.idle()
    text = _main(bob)
    assert "Administrators only" not in text and "closed.csv" not in text and "sources.toml" not in text
    box = bob.page.get_by_role("combobox", name="Source").locator("visible=true").first
    for _ in range(4):  # a rerun landing as the list opens closes it again (as UI.select): open it once more
        box.scroll_into_view_if_needed()
        box.click()
        try:
            bob.page.get_by_role("option").first.wait_for(timeout=20_000)
            break
        except PlaywrightTimeoutError:
            bob.idle()
    options = bob.page.get_by_role("option").all_inner_texts()
    assert options == ["Open to analysts"], options
    bob.page.keyboard.press("Escape")
    bob.open("admin")
    bob.idle()
    assert "Record of who ran what" not in _main(bob)
    # A download is an action too: one line, with the file's name, size and hash (not its content).
    alice.goto_page("Report")
    alice.wait_text("Save the configuration (JSON)")
    alice.idle()
    with alice.page.expect_download(timeout=60_000):
        alice.page.get_by_role("button", name=re.compile("Save the configuration")).click()
    alice.idle()
    # The record: who ran what, one line per action, never a data value.
    deadline = time.monotonic() + 30
    while not any(e["action"] == "download" for e in served.record()) and time.monotonic() < deadline:
        time.sleep(0.5)
    lines = served.record()
    downloads = [e for e in lines if e["action"] == "download"]
    assert len(downloads) == 1 and downloads[0]["produced"]["file"] == "luskin-configuration.json", downloads
    assert downloads[0]["page"] == "Report" and downloads[0]["produced"]["bytes"] > 0
    audits = [e for e in lines if e["action"] == "audit" and e["user"]["email"] == "alice@agency.gov"
              and e["data"]["rows"] == 4526]
    assert len(audits) == 1, [(e["action"], e["user"]["email"], e["data"]) for e in lines]
    assert audits[0]["data"]["name"] == "applicants_1973.csv" and len(audits[0]["data"]["hash"]) == 16
    assert audits[0]["settings"]["outcome"] and audits[0]["page"]
    assert "APPLICANT-" not in json.dumps(lines) and "Zebediah" not in json.dumps(lines)
    # Alice's own address still opens her file for her (Bob's attempt changed nothing).
    alice.open(f"?data={key}")
    alice.wait_text("Ready: comparing", timeout=60_000)
    alice.idle()
    assert "4,526" in alice.page.locator('section[data-testid="stSidebar"]').first.inner_text()

    alice.page.close()
    bob.page.close()


def test_a_sign_in_without_the_groups_claim_is_told_plainly(served: Served, page: Any) -> None:
    ui = UI(page, served.url)
    ui.open()
    ui.page.get_by_role("button", name="Sign in").click()
    ui.page.locator('input[name="login"]').fill("carol")
    ui.page.locator('input[name="password"]').fill("any")
    ui.page.locator('button[type="submit"]').click()
    ui.wait_text(re.compile("did not say which groups you belong to"), timeout=120_000)
    ui.idle()
    text = _main(ui)
    assert "'groups' claim" in text and "Traceback" not in text and "rows ×" not in text
    assert "no 'groups' claim" in served.log.read_text()
