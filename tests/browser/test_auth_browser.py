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
from conftest import CHROMIUM, ROOT, UI, _healthy, read_record
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

sys.path.insert(0, str(ROOT / "tests"))
import oidc_server

from luskin_app.pages import PAGES

pytestmark = pytest.mark.browser

USERS = {"alice": {"email": "alice@agency.gov", "email_verified": True, "name": "Alice Admin",
                   "groups": ["luskin-admins"]},
         "frank": {"email": "frank@agency.gov", "email_verified": True, "name": "Frank Admin",
                   "groups": ["luskin-admins"]},
         "bob": {"email": "bob@agency.gov", "email_verified": True, "name": "Bob Analyst",
                 "groups": ["luskin-analysts"]},
         "carol": {"email": "carol@agency.gov", "email_verified": True, "name": "Carol Nogroups"},
         "dave": {"email": "dave@agency.gov", "email_verified": True, "name": "Dave Analyst",
                  "groups": ["luskin-analysts"]},
         "erin": {"email": "erin@agency.gov", "email_verified": True, "name": "Erin Analyst",
                  "groups": ["luskin-analysts"]}}
SOURCES = """
[[source]]
name = "Open to analysts"
location = "{folder}/open.csv"

[[source]]
name = "Administrators only"
location = "{folder}/closed.csv"
groups = ["luskin-admins"]
"""


SCRIPT = "serve.py"   # the dashboard behind Luskin's guard, as deploy/start.sh and `luskin app` serve it
ROLES_MINUTES = "0.1"   # the served app asks the provider for a sign-in's roles again after 6 seconds


class App:
    """One ``streamlit run serve.py`` with its own secrets file and state folder, on 127.0.0.1."""

    def __init__(self, folder: Path, port: int, secrets: str, env: dict[str, str] | None = None) -> None:
        self.url, self.state, self.log = f"http://127.0.0.1:{port}", folder / "state", folder / "app.log"
        (folder / "secrets.toml").write_text(secrets)
        self.key = folder / "record.key"   # outside the state folder, as the record asks
        self.key.write_bytes(os.urandom(32))
        self._out = self.log.open("w")
        command = [sys.executable, "-m", "streamlit", "run", SCRIPT, "--server.headless", "true",
                   "--server.port", str(port), "--server.address", "127.0.0.1", "--server.fileWatcherType", "none",
                   "--browser.gatherUsageStats", "false", "--secrets.files", str(folder / "secrets.toml")]
        self._process = subprocess.Popen(command, cwd=ROOT, stdout=self._out, stderr=subprocess.STDOUT,
                                         env={**os.environ, "PYTHONUNBUFFERED": "1",
                                              "LUSKIN_STATE_DIR": str(self.state),
                                              "LUSKIN_RECORD_KEY_FILE": str(self.key), **(env or {})})

    def wait(self) -> None:
        deadline = time.monotonic() + 90
        while not _healthy(self.url):
            if self._process.poll() is not None or time.monotonic() > deadline:
                self._out.flush()
                pytest.fail(f"the app did not start:\n{self.log.read_text()[-3000:]}")
            time.sleep(0.25)

    def stop(self) -> None:
        self._process.terminate()   # harmless when already asked (the misconfigured fixture asks both first)
        try:
            self._process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self._process.kill()
        self._out.close()


class Served:
    """The provider, the app, and the app's state folder (and a port kept for the app with a wrong secret)."""

    def __init__(self, app: App, issuer: str, spare_ports: tuple[int, int], provider_log: Path) -> None:
        self.url, self.state, self.log = app.url, app.state, app.log
        self.issuer, self.provider_log = issuer, provider_log
        self.spare_port, self.short_port = spare_ports   # the provider knows both: an app with a wrong secret, a short one
        self.secrets = app.state.parent / "secrets.toml"

    def record(self) -> list[dict[str, Any]]:
        return read_record(self.state)

    def kept(self) -> set[str]:
        """The kept uploads on disk (their encrypted files' names)."""
        folder = self.state / "uploads"
        return {p.name for p in folder.iterdir() if p.suffix == ".data"} if folder.exists() else set()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    if not CHROMIUM.exists():
        pytest.skip(f"Chromium not found at {CHROMIUM}")
    folder = tmp_path_factory.mktemp("served")
    port, spare, short = oidc_server.free_port(), oidc_server.free_port(), oidc_server.free_port()
    url = f"http://127.0.0.1:{port}"
    frame = pd.DataFrame({"group": ["a", "b"] * 20, "hired": ["yes", "no", "no", "yes"] * 10})
    frame.to_csv(folder / "open.csv", index=False)
    frame.to_csv(folder / "closed.csv", index=False)
    (folder / "sources.toml").write_text(SOURCES.format(folder=folder))
    redirects = [f"{url}/oauth2callback", f"http://127.0.0.1:{spare}/oauth2callback",
                 f"http://127.0.0.1:{short}/oauth2callback"]
    with oidc_server.provider(USERS, redirects, folder / "provider.log") as issuer:
        app = App(folder, port, oidc_server.secrets_toml(url, issuer), {"LUSKIN_SOURCES": str(folder / "sources.toml"),
                                                                         "LUSKIN_SOURCE_FOLDERS": str(folder),
                                                                         "LUSKIN_ROLES_MINUTES": ROLES_MINUTES})
        try:
            app.wait()
            yield Served(app, issuer, (spare, short), folder / "provider.log")
        finally:
            app.stop()


@pytest.fixture(scope="module")
def misconfigured(served: Served, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[App, App]]:
    """Two apps an operator set up wrongly, started together: one with a wrong client secret (the provider is
    the real one), one whose provider does not answer (nothing listens at its address)."""
    wrong_url = f"http://127.0.0.1:{served.spare_port}"
    wrong = App(tmp_path_factory.mktemp("wrong_secret"), served.spare_port,
                oidc_server.secrets_toml(wrong_url, served.issuer, secret="not-the-client-secret"))
    port, closed = oidc_server.free_port(), oidc_server.free_port()
    away = App(tmp_path_factory.mktemp("unreachable"), port,
               oidc_server.secrets_toml(f"http://127.0.0.1:{port}", f"http://127.0.0.1:{closed}"))
    try:
        wrong.wait()
        away.wait()
        yield wrong, away
    finally:
        for app in (wrong, away):   # both asked to stop first, then awaited: their shutdowns overlap
            app._process.terminate()
        wrong.stop()
        away.stop()


def _visitor(tab: Any) -> Any:
    """The test process's tab (``tab``: no cookie, nothing stored) at the window size of the other visitors here. A
    second visitor at the same time needs a browser context of their own (``browser.new_page``): a context is one
    browser, with one sign-in."""
    tab.set_viewport_size({"width": 1280, "height": 1000})
    return tab


def _main(ui: UI) -> str:
    return str(ui.page.get_by_test_id("stApp").inner_text())


def submit_sign_in(ui: UI, who: str) -> None:
    """Open the app and send the provider's sign-in form as ``who`` (whatever comes back)."""
    ui.open()
    ui.page.get_by_role("button", name="Sign in").click()
    ui.page.locator('input[name="login"]').fill(who)
    ui.page.locator('input[name="password"]').fill("any")
    ui.page.locator('button[type="submit"]').click()


def sign_in(ui: UI, who: str) -> None:
    submit_sign_in(ui, who)
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


def test_a_signed_out_visitor_sees_only_the_sign_in_page(served: Served, tab: Any) -> None:
    ui = UI(tab, served.url)
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
        served: Served, tab: Any, browser: Any, applicants: Path) -> None:
    alice = UI(_visitor(tab), served.url)
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
    # All 13 pages (Scan and Administration too) are in the sidebar without a click: none behind "View 3 more".
    assert not alice.page.get_by_test_id("stSidebarNav").get_by_text(re.compile(r"^View \d+ more$")).count()
    nav = alice.page.get_by_test_id("stSidebarNav")
    hidden = [p.title for p in PAGES if not nav.get_by_role("link", name=p.title, exact=True).is_visible()]
    assert not hidden and nav.get_by_role("link").count() == len(PAGES), hidden
    alice.goto_page("Administration")
    alice.wait_text("Record of who ran what")
    alice.idle()
    admin_text = _main(alice)
    assert "Open to analysts" in admin_text and "Administrators only" in admin_text
    assert "closed.csv" not in admin_text   # no location reaches the browser
    # Issue 47: the administrator cannot make the server's secrets file a source (it would list cookie_secret and
    # client_secret on the Data page), although it lies in the folder the operator allows.
    alice.page.locator('input[aria-label="Name"]').fill("Secrets")
    alice.page.locator('input[aria-label="Location"]').fill(str(served.state.parent / "secrets.toml"))
    alice.page.get_by_role("button", name="Add the source").click()
    alice.wait_text(re.compile("holds the server.s own files"))
    alice.idle()
    assert "cookie-secret-for-tests-only" not in alice.page.content() and "Secrets (a file" not in _main(alice)
    # The administrator adds a source for analysts on the page (kept by the server); its location is not drawn back.
    alice.page.locator('input[aria-label="Name"]').fill("Added for analysts")
    alice.page.locator('input[aria-label="Location"]').fill(str(served.state.parent / "open.csv"))
    alice.page.locator('input[aria-label^="Who may use it"]').fill("luskin-analysts")
    alice.page.get_by_role("button", name="Add the source").click()
    alice.wait_text("Added the source 'Added for analysts'")
    alice.idle()
    assert "open.csv" not in alice.page.content()
    assert "Added for analysts (a file; used by luskin-analysts; added here)" in _main(alice)

    bob = UI(browser.new_page(viewport={"width": 1280, "height": 1000}), served.url)
    sign_in(bob, "bob")
    bob.open(f"?data={key}")
    bob.wait_text(re.compile("was not found on the server"), timeout=60_000)
    bob.idle()
    text = _main(bob)
    assert "applicants_1973" not in text and "APPLICANT-" not in text and "4,526" not in text
    assert not bob.page.get_by_test_id("stSidebarNav").get_by_text(re.compile(r"^View \d+ more$")).count()
    assert "Administration" not in bob.page.get_by_test_id("stSidebarNav").inner_text()
    # Bob's sources: the one open to analysts, not the administrators' (and no settings or locations at all).
    bob.goto_page("Data")
    bob.wait_text("Sources set up by your administrator")
    bob.idle()
    text = _main(bob)
    assert "Administrators only" not in text and "closed.csv" not in text and "sources.toml" not in text
    box = bob.page.get_by_role("combobox", name="Source").locator("visible=true").first
    bob.idle()   # the list opened on an idle page: nothing redraws it under the click
    box.scroll_into_view_if_needed()
    box.click()
    bob.page.get_by_role("option").first.wait_for(timeout=60_000)
    options = bob.page.get_by_role("option").all_inner_texts()
    assert options == ["Open to analysts", "Added for analysts"], options
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
    _wait_until(lambda: any(e["action"] == "download" for e in served.record()),
                "the record has no download line 30 s after the download")
    lines = served.record()
    downloads = [e for e in lines if e["action"] == "download"]
    assert len(downloads) == 1 and downloads[0]["produced"]["file"] == "luskin-configuration.json", downloads
    assert downloads[0]["page"] == "Report" and downloads[0]["produced"]["bytes"] > 0
    audits = [e for e in lines if e["action"] == "audit" and e["user"]["email"] == "alice@agency.gov"
              and (e["data"] or {}).get("rows") == 4526]
    assert len(audits) == 1, [(e["action"], e["user"]["email"], e["data"]) for e in lines]
    # the file's name by its keyed hash only (issue 47: names of uploads can be personal data)
    assert audits[0]["data"]["name"].startswith("h:") and len(audits[0]["data"]["hash"]) == 16
    assert "applicants_1973" not in json.dumps(lines)
    assert any(e["action"] == "refused" and e["user"]["email"] == "bob@agency.gov" and e["settings"]["what"] == "upload"
               for e in lines)   # bob's try at alice's address is a line of its own
    assert audits[0]["settings"]["outcome"] and audits[0]["page"]
    assert "APPLICANT-" not in json.dumps(lines) and "Zebediah" not in json.dumps(lines)
    # Alice's own address still opens her file for her (Bob's attempt changed nothing).
    alice.open(f"?data={key}")
    alice.wait_text("Ready: comparing", timeout=60_000)
    alice.idle()
    assert "4,526" in alice.page.locator('section[data-testid="stSidebar"]').first.inner_text()

    bob.page.close()


def test_a_sign_in_without_the_groups_claim_is_told_plainly(served: Served, tab: Any) -> None:
    ui = UI(tab, served.url)
    submit_sign_in(ui, "carol")
    ui.wait_text(re.compile("did not say which groups you belong to"), timeout=120_000)
    ui.idle()
    text = _main(ui)
    assert "'groups' claim" in text and "Traceback" not in text and "rows ×" not in text
    assert "no 'groups' claim" in served.log.read_text()


def _sidebar(ui: UI) -> Any:
    return ui.page.locator('section[data-testid="stSidebar"]').first


def _wait_until(condition: Any, what: str, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.25)


def _finish_sign_out(ui: UI) -> None:
    """After "Sign out": the provider may ask whether to end its session too (oidc-provider's own page); say yes,
    then wait for the app's sign-in page."""
    ask = ui.page.get_by_role("button", name=re.compile("Yes, sign me out", re.IGNORECASE))
    back = ui.page.get_by_role("button", name="Sign in", exact=True)
    ask.or_(back).first.wait_for(timeout=60_000)
    if ask.count():
        ask.first.click()
    back.wait_for(timeout=60_000)
    ui.idle()


def test_signing_out_with_delete_my_uploads_deletes_them(served: Served, tab: Any, applicants: Path) -> None:
    ui = UI(_visitor(tab), served.url)
    sign_in(ui, "dave")
    before = served.kept()
    key = upload(ui, applicants)
    mine = served.kept() - before
    assert len(mine) == 1
    _sidebar(ui).get_by_text("Delete my uploads when I sign out").click()
    ui.idle()
    _sidebar(ui).get_by_role("button", name="Sign out").click()
    _wait_until(lambda: not mine & served.kept(), "the kept file is still on disk after the sign-out")
    _finish_sign_out(ui)
    assert "Sign in with your organisation's account" in _main(ui)
    # Signed in again, the address that held the file opens nothing.
    sign_in(ui, "dave")
    ui.open(f"?data={key}")
    ui.wait_text(re.compile("was not found on the server"), timeout=60_000)
    ui.idle()
    assert "applicants_1973" not in _main(ui) and "4,526" not in _sidebar(ui).inner_text()


def test_forget_everything_of_mine_deletes_every_upload_of_that_user_only(
        served: Served, tab: Any, browser: Any, applicants: Path) -> None:
    erin = UI(_visitor(tab), served.url)
    sign_in(erin, "erin")
    before = served.kept()
    erin_key = upload(erin, applicants)
    hers = served.kept() - before
    # Dave keeps two uploads (two tabs of one browser, one sign-in), each with its settings.
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    dave = UI(context.new_page(), served.url)
    sign_in(dave, "dave")
    before = served.kept()
    upload(dave, applicants)
    tab = UI(context.new_page(), served.url)
    tab.open()
    _sidebar(tab).get_by_text("Signed in:").first.wait_for(timeout=60_000)
    tab.idle()
    second_key = upload(tab, applicants)
    his = served.kept() - before
    assert len(hers) == 1 and len(his) == 2 and not hers & his
    metas = {p.name for p in (served.state / "uploads").glob("*.meta")}
    assert {Path(n).with_suffix(".meta").name for n in his} <= metas   # the settings kept with each
    _sidebar(dave).get_by_role("button", name="Forget everything of mine").click()
    dave.wait_text("Deleted 2 uploads of yours from the server.", timeout=60_000)
    assert not his & served.kept() and hers <= served.kept()
    metas = {p.name for p in (served.state / "uploads").glob("*.meta")}
    assert not {Path(n).with_suffix(".meta").name for n in his} & metas
    # Dave's addresses open nothing; Erin's still opens her file for her.
    tab.open(f"?data={second_key}")
    tab.wait_text(re.compile("was not found on the server"), timeout=60_000)
    erin.open(f"?data={erin_key}")
    erin.wait_text("Ready: comparing", timeout=60_000)
    erin.idle()
    assert "4,526" in _sidebar(erin).inner_text()
    context.close()


def test_a_wrong_client_secret_is_told_to_the_operator_and_to_that_browser_only(
        misconfigured: tuple[App, App], tab: Any, browser: Any) -> None:
    wrong, _ = misconfigured
    ui = UI(_visitor(tab), wrong.url)
    submit_sign_in(ui, "bob")
    ui.wait_text(re.compile("A sign-in did not complete a moment ago"), timeout=120_000)
    ui.idle()
    text = _main(ui)
    assert "Traceback" not in text and "invalid_client" not in text and "Bob Analyst" not in text
    assert ui.page.get_by_role("button", name="Sign in").count()   # they may try again
    _wait_until(lambda: "check client_id and client_secret" in wrong.log.read_text(), "no plain line in the log")
    # the operator's log holds the plain line, not Streamlit's warning and its traceback (issue 47's edge)
    logged = wrong.log.read_text()
    assert "Traceback" not in logged and "token exchange failed" not in logged, logged[-3000:]
    # Another visitor (another browser) is not told of someone else's failed sign-in.
    other = UI(browser.new_page(viewport={"width": 1280, "height": 1000}), wrong.url)
    other.open()
    other.page.get_by_role("button", name="Sign in").wait_for(timeout=60_000)
    other.idle()
    assert "did not complete" not in _main(other)
    other.page.close()


def test_an_unreachable_provider_is_told_plainly(misconfigured: tuple[App, App], tab: Any) -> None:
    _, away = misconfigured
    ui = UI(tab, away.url)
    ui.open("?data=" + "k" * 43)
    ui.wait_text(re.compile("Sign-in is not available right now"), timeout=60_000)
    ui.idle()
    text = _main(ui)
    assert "tell your administrator" in text and "Traceback" not in text and "127.0.0.1" not in text
    assert not ui.page.get_by_role("button", name="Sign in").count()
    assert "does not answer (server_metadata_url)" in away.log.read_text()


def test_a_provider_gone_down_after_a_good_check_gives_a_plain_page(tab: Any, tmp_path: Path) -> None:
    """The provider answered when the sign-in page checked it, then stopped: pressing Sign in within the minute the
    check is trusted answered Streamlit's bare "Authentication error" (400); now a plain page says what happened,
    what to do and leads back, and the next sign-in page checks the provider again."""
    port = oidc_server.free_port()
    url = f"http://127.0.0.1:{port}"
    with oidc_server.provider(USERS, f"{url}/oauth2callback", tmp_path / "provider.log") as issuer:
        app = App(tmp_path, port, oidc_server.secrets_toml(url, issuer))
        try:
            app.wait()
            ui = UI(_visitor(tab), url)
            ui.open()
            button = ui.page.get_by_role("button", name="Sign in")
            button.wait_for(timeout=60_000)   # the check found the provider answering
            ui.idle()
        except BaseException:
            app.stop()
            raise
    try:   # the provider has stopped
        button.click()
        ui.page.get_by_text("Sign-in is not available just now").wait_for(timeout=60_000)
        text = ui.page.locator("body").inner_text()
        assert "Authentication error" not in text and "Traceback" not in text and issuer not in text
        assert "try again in a few minutes" in text and "administrator" in text
        ui.page.get_by_role("link", name="Back to the dashboard").click()
        ui.wait_text(re.compile("Sign-in is not available right now"), timeout=60_000)   # checked again
        logged = app.log.read_text()
        assert "could not reach the sign-in provider" in logged and "Traceback" not in logged, logged[-3000:]
    finally:
        app.stop()


def _forged_cookie(served: Served, claims: dict[str, Any]) -> dict[str, Any]:
    """Streamlit's sign-in cookie as anyone holding the server's cookie_secret can sign it (itsdangerous, the cookie's
    name as salt): a user the provider never saw."""
    import tomllib

    from itsdangerous import URLSafeTimedSerializer

    secret = tomllib.loads(served.secrets.read_text())["auth"]["cookie_secret"]
    value = {**claims, "origin": served.url, "is_logged_in": True, "provider": "default"}
    signed = URLSafeTimedSerializer(secret, salt="_streamlit_user").dumps(json.dumps(value))
    return {"name": "_streamlit_user", "value": signed, "url": served.url, "httpOnly": True}


def test_only_a_sign_in_the_server_made_and_still_holds_counts(served: Served, browser: Any) -> None:
    """Issue 47: the session was Streamlit's signed cookie alone (30 days): a cookie signed with cookie_secret signed
    in a user the provider never saw, as administrator; a copy taken before sign-out still signed in afterwards; an
    administrator demoted at the provider kept the role. Now the server keeps its own record of the sign-ins it
    made: ended at sign-out, its roles asked again after LUSKIN_ROLES_MINUTES, its cookies no longer 30 days."""
    # A forged cookie: the sign-in page, nothing of Luskin, and a refused line in the record.
    forged = browser.new_context(viewport={"width": 1280, "height": 1000})
    forged.add_cookies([_forged_cookie(served, {"iss": served.issuer, "sub": "mallory", "name": "Mallory",
                                                "email": "mallory@agency.gov", "groups": ["luskin-admins"]})])
    mallory = UI(forged.new_page(), served.url)
    mallory.open("admin")
    mallory.page.get_by_role("button", name="Sign in").wait_for(timeout=60_000)
    mallory.idle()
    assert "Mallory" not in _main(mallory) and "Record of who ran what" not in _main(mallory)
    _wait_until(lambda: any(e["action"] == "refused" and e["user"]["email"] == "mallory@agency.gov"
                            for e in served.record()), "the forged sign-in is not in the record")
    forged.close()
    # Frank, an administrator, signs in; a copy of his cookies is taken (another browser).
    own = browser.new_context(viewport={"width": 1280, "height": 1000})
    frank = UI(own.new_page(), served.url)
    sign_in(frank, "frank")
    cookies = own.cookies()
    ours = [c for c in cookies if c["name"] == "luskin_signin"]
    assert ours and ours[0]["httpOnly"] and ours[0]["sameSite"] == "Lax"
    # Streamlit's own cookies last the server's maximum age (8 hours, and an hour to say why it ended), not 30 days.
    assert all(c["expires"] - time.time() < 9 * 3600 + 60 for c in cookies if c["name"].startswith("_streamlit_user"))
    _wait_until(lambda: any(e["action"] == "sign-in" and e["user"]["email"] == "frank@agency.gov"
                            for e in served.record()), "frank's sign-in is not in the record")
    copied = browser.new_context(viewport={"width": 1280, "height": 1000})
    copied.add_cookies(cookies)
    thief = UI(copied.new_page(), served.url)
    thief.open()
    _sidebar(thief).get_by_text("Signed in:").first.wait_for(timeout=60_000)   # before sign-out the copy works
    thief.idle()
    # Demoted at the provider: within the interval his role goes, without signing in again.
    assert "Administration" in frank.page.get_by_test_id("stSidebarNav").inner_text()
    oidc_server.change_users(served.provider_log, {**USERS, "frank": {**USERS["frank"], "groups": ["luskin-analysts"]}})
    deadline = time.monotonic() + 60
    while "Administration" in frank.page.get_by_test_id("stSidebarNav").inner_text():
        assert time.monotonic() < deadline, "the demoted administrator still has the Administration page"
        frank.page.wait_for_timeout(2_000)
        frank.open()
        _sidebar(frank).get_by_text("Signed in:").first.wait_for(timeout=60_000)
        frank.idle()
    assert "(analyst)" in _sidebar(frank).inner_text()
    assert any(e["action"] == "roles changed" and e["user"]["email"] == "frank@agency.gov" and
               e["settings"] == {"before": "administrator", "after": "analyst"} for e in served.record())
    # Frank signs out: the copy taken before opens nothing now.
    _sidebar(frank).get_by_role("button", name="Sign out").click()
    _finish_sign_out(frank)
    thief.open()
    thief.wait_text("You signed out", timeout=60_000)
    thief.idle()
    assert "Signed in:" not in _main(thief) and "Frank" not in _main(thief)
    assert [e["action"] for e in served.record() if e["user"]["email"] == "frank@agency.gov"].count("sign-out") == 1
    oidc_server.change_users(served.provider_log, USERS)
    for context in (own, copied):
        context.close()


SHORT_HOURS = 0.006   # 21.6 seconds: a sign-in older than this has ended


@pytest.fixture(scope="module")
def short_lived(served: Served, tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    """An app whose operator keeps a sign-in for 21.6 seconds (LUSKIN_SIGNIN_HOURS), against the same provider."""
    url = f"http://127.0.0.1:{served.short_port}"
    app = App(tmp_path_factory.mktemp("short"), served.short_port, oidc_server.secrets_toml(url, served.issuer),
              {"LUSKIN_SIGNIN_HOURS": str(SHORT_HOURS), "LUSKIN_ROLES_MINUTES": "0.3"})
    try:
        app.wait()
        yield app
    finally:
        app.stop()


def test_a_sign_in_ends_after_the_operators_maximum_age(short_lived: App, tab: Any) -> None:
    ui = UI(_visitor(tab), short_lived.url)
    signed = time.monotonic()   # before the provider's callback: the sign-in is made after this
    sign_in(ui, "erin")
    cookies = {c["name"]: c for c in tab.context.cookies()}
    assert cookies["luskin_signin"]["expires"] - time.time() < SHORT_HOURS * 3600 + 3600 + 5
    while "Signed in:" in _main(ui):   # each reload is a new run: the sign-in holds until its age is up
        assert time.monotonic() - signed < 120, "the sign-in outlived the operator's maximum age"
        ui.page.wait_for_timeout(2_000)
        ui.open()
        try:
            ui.page.get_by_role("button", name="Sign in").or_(_sidebar(ui).get_by_text("Signed in:")).first.wait_for(
                timeout=60_000)
        except PlaywrightTimeoutError:   # neither page: say which one the reload brought
            raise AssertionError(f"after a reload at {time.monotonic() - signed:.0f} s, {ui.page.url} shows neither "
                                 f"the sign-in button nor 'Signed in:': {_main(ui)[:600]!r}") from None
        ui.idle()
    assert time.monotonic() - signed >= SHORT_HOURS * 3600   # it did not end before its time
    assert "Your sign-in has ended: this server keeps a sign-in for 22 seconds at most" in _main(ui)
    assert "Erin" not in _main(ui)
    lines = read_record(short_lived.state)
    hers = [e for e in lines if e["user"]["email"] == "erin@agency.gov"]
    assert [e["action"] for e in hers].count("sign-in expired") == 1
    later = hers[[e["action"] for e in hers].index("sign-in expired") + 1:]
    assert all(e["action"] == "refused" and e["settings"]["why"] == "a sign-in that has ended (expired)"
               for e in later), later   # coming back with it afterwards is a refusal, said so


def test_a_result_is_not_shown_to_another_analyst_with_the_same_bytes(served: Served, browser: Any,
                                                                     berkeley_csv: Path) -> None:
    """Issue 47: bob, uploading the bytes alice had and keeping her choices, was shown her retraining without
    pressing Retrain (and the record said bob ran it). Results are shared within an owner only; alice's go with
    "Forget everything of mine"."""
    contexts = [browser.new_context(viewport={"width": 1280, "height": 1000}) for _ in range(2)]
    alice, bob = (UI(c.new_page(), served.url) for c in contexts)
    sign_in(alice, "alice")
    upload(alice, berkeley_csv)
    alice.goto_page("Retrain")
    alice.page.get_by_role("button", name="Retrain", exact=True).click()
    alice.wait_text("The paper's table", timeout=180_000)
    alice.idle()
    sign_in(bob, "bob")
    upload(bob, berkeley_csv)
    bob.goto_page("Retrain")
    bob.wait_text(re.compile("to run the experiment"), timeout=60_000)
    bob.idle()
    assert "The paper's table" not in _main(bob) and bob.page.get_by_role("button", name="Retrain", exact=True).count()
    assert not [e for e in served.record() if e["action"] == "retrain" and e["user"]["email"] == "bob@agency.gov"]
    # Alice forgets everything of hers: her retraining is computed again only if she asks.
    _sidebar(alice).get_by_role("button", name="Forget everything of mine").click()
    alice.wait_text(re.compile(r"Deleted \d+ uploads? of yours"), timeout=60_000)
    alice.goto_page("Data")
    alice.idle()
    alice.goto_page("Retrain")
    alice.wait_text(re.compile("to run the experiment"), timeout=60_000)
    alice.idle()
    assert "The paper's table" not in _main(alice)
    for context in contexts:
        context.close()


def test_a_download_opens_only_for_the_signed_in_user_who_made_it(served: Served, browser: Any) -> None:
    """Issue 47: every download (a CSV, the HTML report, the record) was a Streamlit media address that answered
    anyone who had it while its page was open. Now it answers only the signed-in user it was made for: another
    analyst, or a visitor with no sign-in, is told "not found" (and the record says so)."""
    import urllib.error
    import urllib.request

    contexts = [browser.new_context(viewport={"width": 1280, "height": 1000}) for _ in range(2)]
    alice, bob = (UI(c.new_page(), served.url) for c in contexts)
    sign_in(bob, "bob")
    sign_in(alice, "alice")
    alice.goto_page("Report")
    alice.wait_text("Save the configuration (JSON)")
    alice.idle()
    with alice.page.expect_download(timeout=60_000) as taken:
        alice.page.get_by_role("button", name=re.compile("Save the configuration")).click()
    url = taken.value.url
    assert "/media/" in url
    # No script run happens in between (one would let go of the file): the address is tried three ways at once.
    by_bob = contexts[1].request.get(url)
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            anonymous = answer.status
    except urllib.error.HTTPError as err:
        anonymous = err.code
    by_alice = contexts[0].request.get(url)
    assert (by_bob.status, anonymous, by_alice.status) == (404, 404, 200)
    assert b'"outcome"' in by_alice.body() and b"outcome" not in by_bob.body()
    def refused() -> list[dict[str, Any]]:
        return [e for e in served.record() if e["action"] == "refused" and e["settings"]["what"] == "download"]

    _wait_until(lambda: {e["settings"]["why"] for e in refused()} >= {"made for another user", "no sign-in"},
                "the refused downloads are not in the record")
    assert any(e["user"]["email"] == "bob@agency.gov" for e in refused())
    for context in contexts:
        context.close()
