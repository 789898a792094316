"""Real-browser test harness: serve the app with Streamlit, drive Debian's Chromium with Playwright.

* ``app_url`` (session): starts ``python -m streamlit run app.py`` on a free local port from
  the repository root, waits until ``/_stcore/health`` answers ``ok`` (60 s at most) and stops
  the server at the end: one server for all the browser tests of a run, whichever pytest-xdist worker
  runs them (each test opens its own Streamlit session). The app's caches (samples, audits, trained
  models) are filled once, not once per worker. Its output goes to ``test-results/streamlit-server.log``.
* ``browser_type_launch_args`` (pytest-playwright's fixture, overridden): launch
  ``/usr/bin/chromium`` (``LUSKIN_CHROMIUM`` overrides the path); ``playwright install``
  cannot download browsers here. Without that binary every browser test is skipped, saying why.
* ``ui``: a page wrapper with the waits Streamlit needs (new content first, then the script
  state ``notRunning``), a check that no Streamlit exception box is on screen, timings and
  screenshots. Its page is the test process's one browser tab, emptied for each test (see ``tab``):
  a new tab in a new browser context costs Chromium about 5 CPU-s more to load the app and draw its
  first charts, some 25 times over a run. ``fresh_ui`` is a tab of its own, for a first visit.
* In that tab CSS transitions are off: they only animate from one state the tests check to the next,
  and the sidebar's 0.3 s width transition after a resize has plotly redraw every chart on each frame
  (test_layout's walk: Chromium 43 -> 35 CPU-s).

Timings are printed (see them with ``pytest -s``) and merged into
``benchmarks/results/browser_timings.md`` at the end of the session; screenshots go to
``docs/screenshots/``. ``LUSKIN_TIMINGS_FILE`` / ``LUSKIN_SCREENSHOT_DIR`` redirect them (e.g. in CI,
so that a test run does not rewrite the committed copies).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import json
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from run_frames import starts_a_run

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path(os.environ.get("LUSKIN_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1300, "height": 1700}
# Where screenshots and timings go (the committed copies by default; CI may point them elsewhere).
SCREENSHOTS = Path(os.environ.get("LUSKIN_SCREENSHOT_DIR", ROOT / "docs" / "screenshots"))
TIMINGS_FILE = Path(os.environ.get("LUSKIN_TIMINGS_FILE", ROOT / "benchmarks" / "results" / "browser_timings.md"))
TEST_TIMEOUT = 600  # seconds per test (pytest-timeout), so that a stuck page never hangs CI (a loaded machine is slow)
WAIT = 120_000  # ms: how long a wait for a condition may take before it fails (waits end as soon as it holds)
SERVER_LOG = ROOT / "test-results" / "streamlit-server.log"
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
EXCEPTION = '[data-testid="stException"]'
# True once the page's geometry (charts, grids, their labels, the scroll size) reads the same twice in a row.
LAYOUT_STILL = """() => {
  const parts = [document.documentElement.scrollWidth, document.documentElement.scrollHeight];
  for (const el of document.querySelectorAll('.main-svg, .main-svg text, [data-testid="stDataFrame"], '
                                             + '[data-testid="stSidebar"], [data-testid="stMain"]')) {
    const r = el.getBoundingClientRect();
    parts.push(Math.round(r.x), Math.round(r.y), Math.round(r.width), Math.round(r.height));
  }
  const now = parts.join(",");
  const still = window.__luskinLayout === now;
  window.__luskinLayout = now;
  return still;
}"""
HEALTH_TIMEOUT = 60.0
# Counts the script runs a page starts (the app's script state turning to "running"), from its load on: added to every
# page a UI drives, so that a step waits for the run its action started (UI.rerun_by), not for an idle state that
# may be read before that run began. Once per document, however many times the script was added.
RUN_COUNTER = """(() => {
  if (window.__luskinRuns !== undefined) return;
  window.__luskinRuns = 0;
  const running = (node) => node.nodeType === 1 && (node.getAttribute("data-test-script-state") === "running"
    || !!node.querySelector('[data-test-script-state="running"]'));
  new MutationObserver((records) => {
    for (const record of records) {
      if (record.type === "attributes") {
        if (record.oldValue !== "running" && record.target.getAttribute("data-test-script-state") === "running") {
          window.__luskinRuns += 1;
        }
      } else if ([...record.addedNodes].some(running)) {   // the app drawn anew, already running
        window.__luskinRuns += 1;
      }
    }
  }).observe(document, {subtree: true, childList: true, attributes: true, attributeOldValue: true,
                        attributeFilter: ["data-test-script-state"]});
})();"""

_TIMINGS: list[tuple[str, float, str]] = []


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test in this folder is a browser test; skip them all when Chromium is absent."""
    here = Path(__file__).parent
    if os.environ.get("LUSKIN_REQUIRE_BROWSER") and not CHROMIUM.exists():
        # scripts/test.sh (and so CI) installs Chromium: a missing one there is a failure, not a skip.
        raise pytest.UsageError(f"LUSKIN_REQUIRE_BROWSER is set but Chromium is not at {CHROMIUM}.")
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.browser)
            item.add_marker(pytest.mark.timeout(TEST_TIMEOUT))
            if not CHROMIUM.exists():
                item.add_marker(pytest.mark.skip(
                    reason=f"Chromium not found at {CHROMIUM}: install it (apt-get install -y chromium) "
                           "or set LUSKIN_CHROMIUM to its path"))


def record_timing(name: str, seconds: float, note: str = "") -> None:
    """Keep a measured duration for the timings file and print it for ``pytest -s``."""
    load = os.getloadavg()[0]
    note = f"{note}; " if note else ""
    note += f"load {load:.1f} on {os.cpu_count()} cores"
    _TIMINGS.append((name, seconds, note))
    print(f"[timing] {name}: {seconds:.2f} s {note}".rstrip(), flush=True)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Merge this run's timings into benchmarks/results/browser_timings.md (one row per step).

    Steps measured now replace their old rows; steps not run this time keep their last value
    and the time it was measured, so a partial run (``-k``) does not erase the others.
    """
    if not _TIMINGS:
        return
    TIMINGS_FILE.parent.mkdir(parents=True, exist_ok=True)
    SERVER_LOG.parent.mkdir(parents=True, exist_ok=True)
    # Parallel workers each merge their own steps: one at a time, or one would drop the other's rows.
    with open(SERVER_LOG.parent / "browser_timings.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _merge_timings()


def _merge_timings() -> None:
    now = f"{_dt.datetime.now().astimezone():%Y-%m-%d %H:%M}"
    rows: dict[str, tuple[str, str, str]] = {}
    if TIMINGS_FILE.exists():
        for line in TIMINGS_FILE.read_text().splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) == 4 and cells[1].replace(".", "", 1).isdigit():
                rows[cells[0]] = (cells[1], cells[2], cells[3])
    for name, seconds, note in _TIMINGS:
        rows[name] = (f"{seconds:.2f}", note, now)
    lines = [
        "# Browser timings (Playwright + Debian Chromium against `streamlit run app.py`)",
        "",
        (f"Written by tests/browser (`pytest -s tests/browser` prints the same lines) on "
         f"{platform.node() or 'this machine'} ({os.cpu_count()} cores, Python {platform.python_version()}). "
         "Times are wall-clock from the user's action until the new content is on screen and "
         "Streamlit's script run has finished, browser rendering included. The machines are shared, "
         "so expect some spread between runs."),
        "",
        "| step | seconds | note | measured |",
        "| --- | ---: | --- | --- |",
    ]
    lines += [f"| {name} | {sec} | {note} | {when} |" for name, (sec, note, when) in rows.items()]
    TIMINGS_FILE.write_text("\n".join(lines) + "\n")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return response.read().strip() == b"ok"
    except OSError:
        return False


_STARTED: dict[int, subprocess.Popen[bytes]] = {}   # the servers this test process started, by process id
_SERVED: dict[str, str] = {}   # the served app this test process uses: its state folder


def _start_server() -> tuple[str, int, str]:
    """Start ``streamlit run app.py`` on a free port; its address, process id and state folder (uploads, the
    record) once it answers."""
    port = _free_port()
    state_dir = tempfile.mkdtemp(prefix="luskin-served-app-")
    url = f"http://127.0.0.1:{port}"
    SERVER_LOG.parent.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
               "--server.port", str(port), "--server.address", "127.0.0.1",
               "--server.fileWatcherType", "none", "--browser.gatherUsageStats", "false",
               "--client.showErrorDetails", "full"]
    key_dir = tempfile.mkdtemp(prefix="luskin-record-key-")   # the record's key lives outside the state folder
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "LUSKIN_STATE_DIR": state_dir,
           "LUSKIN_RECORD_KEY_FILE": str(Path(key_dir) / "record.key")}
    (Path(key_dir) / "record.key").write_bytes(os.urandom(32))
    env.pop("LUSKIN_RECORD_FILE", None)
    started = time.perf_counter()
    with SERVER_LOG.open("w") as log:
        process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)
    deadline = started + HEALTH_TIMEOUT
    while not _healthy(url):
        if process.poll() is not None:
            pytest.fail(f"streamlit exited with status {process.returncode}:\n{SERVER_LOG.read_text()[-3000:]}")
        if time.perf_counter() > deadline:
            process.kill()
            pytest.fail(f"streamlit did not answer {url}/_stcore/health within {HEALTH_TIMEOUT:.0f} s:\n"
                        f"{SERVER_LOG.read_text()[-3000:]}")
        time.sleep(0.25)
    record_timing("server start -> /_stcore/health ok", time.perf_counter() - started)
    _STARTED[process.pid] = process
    return url, process.pid, state_dir


def _alive(pid: int) -> bool:
    """Whether the process runs (a zombie, ended but not yet reaped by the worker that started it, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _stop_server(pid: int) -> None:
    """Stop the served app, whichever test process started it (the one that did reaps it)."""
    process = _STARTED.pop(pid, None)
    if process is not None:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.perf_counter() + 15
    while _alive(pid) and time.perf_counter() < deadline:
        time.sleep(0.1)
    if _alive(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@contextlib.contextmanager
def _shared_app(run: str) -> Iterator[dict[str, Any]]:
    """The served app's record for this run (address, process, the test processes using it), under a lock."""
    SERVER_LOG.parent.mkdir(parents=True, exist_ok=True)
    path = SERVER_LOG.parent / f"served-app-{run}.json"
    with open(SERVER_LOG.parent / "served-app.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        state: dict[str, Any] = json.loads(path.read_text()) if path.exists() else {}
        yield state
        if state:
            path.write_text(json.dumps(state))
        else:
            path.unlink(missing_ok=True)


@pytest.fixture(scope="session")
def app_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """app.py served for the whole run: one server for the browser tests of every test process of this run
    (pytest-xdist's workers share it, as analysts share a deployment; each test opens its own Streamlit session).
    The first process to need it starts it; the last one done with it stops it."""
    if not CHROMIUM.exists():
        pytest.skip(f"Chromium not found at {CHROMIUM}")
    workerinput = getattr(request.config, "workerinput", {})
    run = str(workerinput.get("testrunuid") or f"solo-{os.getpid()}")
    me = str(workerinput.get("workerid") or os.getpid())
    with _shared_app(run) as state:
        if not state or not _alive(state["pid"]):
            url, pid, state_dir = _start_server()
            state.update(url=url, pid=pid, state_dir=state_dir)
        state.setdefault("users", []).append(me)
        url = state["url"]
        _SERVED["state_dir"] = state["state_dir"]
    try:
        yield url
    finally:
        with _shared_app(run) as state:
            if me in state.get("users", []):
                state["users"].remove(me)
                if not state["users"]:
                    _stop_server(state["pid"])
                    shutil.rmtree(state["state_dir"], ignore_errors=True)
                    state.clear()


def read_record(state_dir: Path) -> list[dict[str, Any]]:
    """The record (who ran what) of a served app whose state folder is ``state_dir``: one dict per line, none
    before its first line. The file is where the app puts it (``luskin_app.record.where_from``)."""
    from luskin_app import record

    path = record.where_from({"LUSKIN_STATE_DIR": str(state_dir)}).path
    try:
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    except FileNotFoundError:
        return []


@pytest.fixture()
def app_record(app_url: str) -> Callable[[], list[dict[str, Any]]]:
    """The served app's record, read as it is now (:func:`read_record`)."""
    state_dir = Path(_SERVED["state_dir"])
    return lambda: read_record(state_dir)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    """Launch Debian's Chromium (Playwright's own download is unavailable here)."""
    return {**browser_type_launch_args, "executable_path": str(CHROMIUM), "args": CHROMIUM_ARGS}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args: dict[str, Any]) -> dict[str, Any]:
    """A tall viewport (Streamlit's inner container does not scroll into full-page shots)."""
    return {**browser_context_args, "viewport": VIEWPORT, "accept_downloads": True}


class UI:
    """A Streamlit page as a user sees it, with the right waits and the exception check."""

    def __init__(self, page: Any, base_url: str) -> None:
        self.page = page
        self.base_url = base_url
        self.page.set_default_timeout(WAIT)
        page.add_init_script(RUN_COUNTER)   # every page this tab loads from now on counts its script runs
        self.started = 0   # the runs the server said it started for this tab (NEW_SESSION_FIELD), from now on
        page.on("websocket", self._listen)

    def _listen(self, socket: Any) -> None:
        def heard(payload: str | bytes) -> None:
            if isinstance(payload, bytes) and starts_a_run(payload):
                self.started += 1
        socket.on("framereceived", heard)

    # waiting ------------------------------------------------------------------------------
    def idle(self, timeout: float = WAIT) -> None:
        """Wait until Streamlit's script run has finished, then check for exception boxes."""
        self.page.wait_for_selector(IDLE, timeout=timeout)
        self.assert_no_exception()

    def runs(self) -> int:
        """The script runs this page has started since it was loaded (:data:`RUN_COUNTER`)."""
        return int(self.page.evaluate("() => window.__luskinRuns ?? -1"))

    def rerun_by(self, action: Callable[[], Any], timeout: float = WAIT, *, finished: bool = True,
                 changed: str | None = None) -> None:
        """Do ``action``, which must rerun the script (a click, a key, a choice), and wait until a run started after
        it has finished (``finished``; else until it has started). The page is idle first: an action taken while a
        run redraws the page can land on an element the run is replacing; and the next step waits for this action's
        own run, not a state read before it began. An action that starts no run fails here, saying so, rather than
        being taken again.

        ``changed``: a JavaScript expression true once the page shows what the action changes. A run that starts and
        ends between two of the browser's renders (a cached result under load) never shows the page as running, and
        the page's counter misses it; the server's own message that it started a run (:func:`starts_a_run`) is
        heard all the same, and the change itself is a sign too."""
        self.idle(timeout)
        before, told = self.runs(), self.started
        assert before >= 0, "this page does not count its runs: it was loaded before its UI was made"
        action()
        done = f"() => window.__luskinRuns > {before}" + (f" || ({changed})" if changed else "")
        deadline = time.monotonic() + timeout / 1000
        # Playwright hands over the websocket's frames while it waits, so the wait is in short steps
        while self.started == told and not self.page.evaluate(done):
            if time.monotonic() > deadline:
                seen = self.page.evaluate("() => [location.href, window.__luskinRuns, (document.querySelector('h1') "
                                          "|| {}).textContent || '', document.querySelector("
                                          "'[data-test-script-state]')?.getAttribute('data-test-script-state')]")
                raise AssertionError(f"the action started no script run in {timeout / 1000:.0f} s (runs {before} "
                                     f"before, server-started {told}; now at {seen[0]}, runs {seen[1]}, server-started "
                                     f"{self.started}, heading {seen[2]!r}, script {seen[3]})")
            self.page.wait_for_timeout(100)
        if finished:
            self.idle(timeout)

    def assert_no_exception(self) -> None:
        boxes = self.page.locator(EXCEPTION)
        if boxes.count():
            text = boxes.first.inner_text()[:2000]
            raise AssertionError(f"Streamlit shows an exception box:\n{text}")

    def wait_text(self, text: str | re.Pattern[str], timeout: float = WAIT) -> Any:
        """The first visible element with this text (stale and new elements coexist in a rerun)."""
        locator = self.page.get_by_text(text).locator("visible=true").first   # a hidden copy (the sidebar's list) is skipped
        locator.wait_for(state="visible", timeout=timeout)
        return locator

    def timed(self, name: str, action: Callable[[], Any], done: Callable[[], Any], note: str = "",
              timeout: float = WAIT) -> float:
        """Run ``action``, wait for ``done`` (new content) then for the idle state; record the time."""
        start = time.perf_counter()
        action()
        done()
        self.idle(timeout)
        seconds = time.perf_counter() - start
        record_timing(name, seconds, note)
        return seconds

    def settle(self, at_least_ms: int = 300) -> None:
        """Wait until plotly and the data grid have laid themselves out after a script run.

        A fixed pause is too short on a loaded machine: this waits ``at_least_ms``, then until the page's
        geometry reads the same twice, 250 ms apart.
        """
        self.page.wait_for_timeout(at_least_ms)
        self.page.evaluate("() => { window.__luskinLayout = null; }")
        self.page.wait_for_function(LAYOUT_STILL, polling=250, timeout=WAIT)

    def charts_drawn(self, timeout: float = WAIT) -> None:
        """Wait until every chart on the page has drawn its text (plotly draws after the script run has finished,
        later still on a loaded machine: reading the page at idle can miss a chart's words).

        Every chart is counted by the container ``luskin_app.ui.chart`` puts it in (``st-key-chart_<key>``), not by
        plotly's own element: that element is loaded lazily and mounts after the words the run wrote under it, so
        at idle a page can hold no plotly element yet, and a wait over plotly's elements alone held at once (the
        credit walk's Over time read without its chart's axis titles in CI)."""
        self.page.wait_for_function(
            "() => [...document.querySelectorAll('[class*=\"st-key-chart_\"]')]"
            ".every((c) => c.querySelector('[data-testid=\"stPlotlyChart\"] .main-svg text'))"
            " && [...document.querySelectorAll('[data-testid=\"stPlotlyChart\"]')]"
            ".every((c) => c.querySelector('.main-svg text'))", polling=250, timeout=timeout)

    def each_size(self, sizes: dict[str, dict[str, int]]) -> Iterator[tuple[str, bool]]:
        """The window set to each of ``sizes`` in turn, its own size first, yielding the size's name and whether the
        window was resized to it: a screen drawn at one size is checked there, then resized to the next (one resize
        fewer per screen; over a walk each size is seen both drawn and resized to)."""
        for name, viewport in sorted(sizes.items(), key=lambda item: item[1] != self.page.viewport_size):
            resized = self.page.viewport_size != viewport
            if resized:
                self.page.set_viewport_size(viewport)
            yield name, resized

    # navigation ---------------------------------------------------------------------------
    def open(self, path: str = "") -> None:
        self.page.goto(f"{self.base_url}/{path.lstrip('/')}")
        self.page.wait_for_selector('[data-testid="stApp"]')

    def goto_page(self, title: str) -> None:
        """Click a page in the sidebar navigation, as a user does (the session is kept); "View N more" first when the
        sidebar has folded the page away."""
        nav = self.page.get_by_test_id("stSidebarNav")
        link = nav.get_by_role("link", name=title, exact=True)
        more = nav.get_by_text(re.compile(r"^View \d+ more$"))
        if not link.is_visible() and more.count() and more.first.is_visible():
            more.first.click()
        link.click()

    # widgets ------------------------------------------------------------------------------
    def charts(self) -> Any:
        return self.page.locator('[data-testid="stPlotlyChart"] .main-svg')

    def select(self, label: str, option: str) -> None:
        """Choose ``option`` in the selectbox labelled ``label``: the list opened on an idle page, the option clicked,
        its run waited for (:meth:`rerun_by`), the choice checked as drawn."""
        box = self.page.get_by_role("combobox", name=label, exact=True).locator("visible=true").first
        choice = self.page.get_by_role("option", name=option, exact=True).locator("visible=true").first

        def choose() -> None:
            self.open_list(box)
            # the list is open (its options are the visible ones: the page may hold hidden options elsewhere)
            self.page.get_by_role("option").locator("visible=true").first.wait_for()
            if not choice.count():
                # A long list draws only the options in its view (a short window shows fewer): type the option's
                # name, as a user does, so the list shows it, rather than wait for it in vain.
                self.page.keyboard.type(option)
            choice.click()

        self.idle()
        if option in self.shown(label):
            return   # chosen already: a click on it would start no run
        self.rerun_by(choose)
        shown = self.shown(label)
        assert option in shown, f"{label}: chose {option!r}, the page shows {shown!r}"

    def open_list(self, box: Any) -> None:
        """Click a select box, scrolled into view first as a user scrolls to it: the list closes when its page
        scrolls (react-aria), and the scroll event of a scroll made with the click comes one frame after it, so a
        box clicked out of view opened its list and closed it at once (the Audit page's filter column, 3,000 px
        down)."""
        box.scroll_into_view_if_needed()
        self.page.evaluate("() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
        box.click()

    def shown(self, label: str) -> list[str]:
        """The selectbox labelled ``label`` as drawn: the lines of its text (its label, its value)."""
        box = self.page.get_by_role("combobox", name=label, exact=True).locator("visible=true").first
        text = str(box.evaluate("e => { const w = e.closest('[data-testid=\"stSelectbox\"]');"
                                " return (w ? w.innerText : '') + '\\n' + (e.value || ''); }"))
        return [line.strip() for line in text.splitlines() if line.strip()]

    def chosen(self, label: str) -> list[str]:
        """The values shown as chosen in the multiselect labelled ``label`` (its tags, as drawn)."""
        box = self.page.get_by_role("combobox", name=label, exact=True).first
        return list(box.evaluate(
            "e => { const w = e.closest('[data-testid=\"stMultiSelect\"]');"
            " return w ? Array.from(w.querySelectorAll('[data-tag]')).map(t => t.getAttribute('aria-label') || t.innerText.trim()) : []; }"))

    def choose(self, label: str, *options: str) -> None:
        """Have every one of ``options`` chosen in the multiselect labelled ``label`` (those not chosen yet, each
        clicked once on an idle page and its run waited for), then check the tags drawn."""
        box = self.page.get_by_role("combobox", name=label, exact=True).locator("visible=true").first
        for option in [o for o in options if o not in self.chosen(label)]:
            choice = self.page.get_by_role("option", name=option, exact=True).locator("visible=true").first

            def pick(choice: Any = choice, option: str = option) -> None:
                self.open_list(box)
                self.page.get_by_role("option").locator("visible=true").first.wait_for()   # the list is open
                # The option's name typed first, as a user does in a long list: the list then shows the options
                # that hold it, from its top. An option clicked at the list's edge was scrolled into view by the
                # click, and react-aria cancels a press when its list scrolls during it: the option was highlighted
                # and not chosen, and no run started (Adult's control columns at 1024x768, under load: 'sex' at
                # the bottom of a list scrolled to 'fnlwgt'; reproduced with three busy cores).
                self.page.keyboard.type(option)
                choice.click()

            try:
                self.rerun_by(pick)
            except AssertionError as err:   # what the box showed, so that a failure under load says where it stuck
                listed = self.page.get_by_role("option").locator("visible=true").all_inner_texts()
                self.screenshot(f"failed-choice-{re.sub(r'[^a-z0-9]+', '-', label.lower())[:40]}")
                raise AssertionError(f"{err}; choosing {option!r} in {label!r}: tags {self.chosen(label)}, "
                                     f"options listed {listed[:12]}") from None
            self.page.keyboard.press("Escape")   # a multiselect stays open after a choice
        shown = self.chosen(label)
        assert all(o in shown for o in options), f"{label}: chose {options}, the page shows {shown}"

    def screenshot(self, name: str) -> Path:
        """A PNG of the visible page into docs/screenshots (README shows them)."""
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        self.page.mouse.move(0, 0)  # no hover tooltips in the picture
        self.settle()  # let plotly finish its transitions
        self.page.screenshot(path=str(path))
        return path


@pytest.fixture(name="record_timing")
def record_timing_fixture() -> Callable[[str, float, str], None]:
    """The timing recorder, for steps that ``UI.timed`` does not fit."""
    return record_timing


# The tab's own style: no CSS transitions (the states between which they animate are unchanged).
NO_TRANSITIONS = """document.addEventListener("DOMContentLoaded", () => {
  const style = document.createElement("style");
  style.textContent = "*, *::before, *::after { transition: none !important; }";
  document.head.appendChild(style);
});"""


@pytest.fixture(scope="session")
def _tab_context(browser: Any, browser_context_args: dict[str, Any]) -> Iterator[Any]:
    context = browser.new_context(**browser_context_args)
    context.add_init_script(NO_TRANSITIONS)
    yield context
    context.close()


@pytest.fixture()
def tab(_tab_context: Any) -> Iterator[Any]:
    """The test process's one browser tab, as a new visitor finds it: no page open, no cookie, no stored data,
    the default window size, no other tab. Its renderer, with the app's scripts compiled, is kept.

    At the end its page is left (``about:blank``), which ends the test's Streamlit session, as closing a tab does.
    """
    pages = [p for p in _tab_context.pages if not p.is_closed()]
    page = pages[0] if pages else _tab_context.new_page()
    for other in pages[1:]:   # a tab a failed test opened and did not close
        other.close()
    _tab_context.clear_cookies()
    page.set_viewport_size(VIEWPORT)
    yield page
    if page.is_closed():
        return
    try:
        if page.url.startswith("http"):
            page.evaluate("() => { localStorage.clear(); sessionStorage.clear(); }")
        page.goto("about:blank")
    except Exception:  # noqa: BLE001 - a crashed renderer: the next test gets a new tab
        page.close()


@pytest.fixture()
def ui(tab: Any, app_url: str) -> Iterator[UI]:
    """A new Streamlit session on the served app, in the shared tab; no exception at the end."""
    wrapper = UI(tab, app_url)
    yield wrapper
    wrapper.assert_no_exception()


@pytest.fixture()
def fresh_ui(page: Any, app_url: str) -> Iterator[UI]:
    """A tab in a browser context of its own (nothing compiled yet), for a first visit's timings."""
    page.add_init_script(NO_TRANSITIONS)
    wrapper = UI(page, app_url)
    yield wrapper
    wrapper.assert_no_exception()


BERKELEY = ROOT / "tests" / "fixtures" / "ucb_admissions.csv"


@pytest.fixture
def berkeley_csv(tmp_path: Path) -> Path:
    """Berkeley 1973 graduate admissions, one row per applicant (the textbook Simpson's paradox)."""
    import pandas as pd

    counts = pd.read_csv(BERKELEY)
    rows = []
    for r in counts.itertuples():
        rows += [(r.department, r.sex, "admitted")] * r.admitted + [(r.department, r.sex, "rejected")] * r.rejected
    path = tmp_path / "berkeley_1973.csv"
    pd.DataFrame(rows, columns=["department", "sex", "decision"]).to_csv(path, index=False)
    return path
