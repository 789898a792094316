"""Shared fixtures and the run's plumbing.

* The bundled samples (loaded once per test process) and the SQF copy beside the project.
* The real engines (``engine_servers``): one PostgreSQL cluster and one Spark session per test
  process, whichever files use them (imported here once, not into each file: a fixture imported
  into several files is a separate fixture in each, and so a separate server).
* Parallel runs (pytest-xdist; ``scripts/test.sh`` passes ``-n <cores + 2> --dist loadfile``): units of work
  (:func:`work_unit`: a file, so its module fixtures are built once; a test of a few long files; every
  test named for Spark, and every one named for PostgreSQL, whatever its file) go out longest first,
  as measured in ``benchmarks/results/test_durations.md``, browser tests to at most two workers at a time
  (``run_schedule.py``). Each worker is a test process: it starts its own PostgreSQL cluster (a temp folder and
  socket of its own) and Spark session the first time one of its tests needs them; with the engines' tests
  together, one worker starts Spark.
  (``--dist loadgroup`` cannot group: pytest-xdist 3.8 renames ``item._nodeid``, which pytest 9 no
  longer reads.)
* Streamlit's AppTest compiles every page again on each run and scans every installed package for
  components on each new AppTest (a fifth of the app tests' CPU): here each file is compiled once and
  the packages scanned once per test process (:func:`_share_app_test_work`).
* Durations: with ``LUSKIN_DURATIONS_FILE`` set (``scripts/test.sh`` sets it), the 30 slowest tests
  and the time of each file are merged into that file at the end of the run (the committed copy is
  ``benchmarks/results/test_durations.md``).
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from engine_servers import postgres_url, spark_session  # noqa: F401 - fixtures, one of each per test process
from rewrite_once import start_in_background
from run_schedule import browser_unit, next_unit, unmeasured_seconds

from luskin_core.counting.data import load_sample, sqf_shared_path

ROOT = Path(__file__).resolve().parent.parent
os.chdir(ROOT)


def _share_app_test_work() -> None:
    """One compiled copy of each app file and one scan of the installed packages per test process (AppTest makes a
    new ``ScriptCache`` on every run and scans every package's metadata on every new AppTest; the files do not
    change during a run and the scan's result is only read)."""
    import functools

    from streamlit.components.v2 import manifest_scanner
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache
    from streamlit.testing.v1 import app_test

    shared = ScriptCache()
    app_test.ScriptCache = lambda: shared   # type: ignore[assignment,misc]
    manifest_scanner.scan_component_manifests = functools.cache(manifest_scanner.scan_component_manifests)  # type: ignore[assignment]


_share_app_test_work()
DURATIONS = ROOT / "benchmarks" / "results" / "test_durations.md"   # the committed copy; also the schedule's source
SLOWEST = 30
# The server's state (kept uploads, their key, the record) goes to a folder of this test run, never to the
# developer's ~/.local/state/luskin; the apps the tests serve inherit it (luskin_app/keep.py).
if not os.environ.get("LUSKIN_STATE_DIR"):
    os.environ["LUSKIN_STATE_DIR"] = tempfile.mkdtemp(prefix="luskin-test-state-")
# The record's key lives outside the state folder (luskin_app/record.py): one of this test run too, never the
# developer's ~/.config/luskin/record.key.
if not os.environ.get("LUSKIN_RECORD_KEY_FILE"):
    _key = Path(tempfile.mkdtemp(prefix="luskin-test-record-key-")) / "record.key"
    _key.write_bytes(os.urandom(32))
    _key.chmod(0o600)
    os.environ["LUSKIN_RECORD_KEY_FILE"] = str(_key)


@pytest.fixture(scope="session")
def adult():
    return load_sample("adult")


@pytest.fixture(scope="session")
def compas():
    return load_sample("compas")


@pytest.fixture(scope="session")
def sqf():
    if sqf_shared_path() is None:
        pytest.skip("the NYPD SQF 2014 file is not beside the project (../shared/data/sqf_2014.csv.gz)")
    return load_sample("sqf")


_REWRITING: list[threading.Thread] = []   # the controller's rewrite of the test files (:mod:`rewrite_once`)


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    """The controller of a parallel run writes the test files' rewritten asserts while its workers start, so that
    they read them rather than each rewriting every file (:mod:`rewrite_once`)."""
    if config.getoption("numprocesses", None) and not hasattr(config, "workerinput"):
        _REWRITING.append(start_in_background(config, ROOT / "tests"))


def pytest_unconfigure(config: pytest.Config) -> None:
    """A short run ends after the rewrite has ended (a file half written would stay behind as a temporary file)."""
    for thread in _REWRITING:
        thread.join(timeout=60)


# -- parallel runs: files, longest first --------------------------------------------------------------------------


def _file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def read_file_seconds(path: Path = DURATIONS) -> dict[str, float]:
    """Seconds per test file from a durations file (its 'time by file' table); empty when absent."""
    return {name: float(cells[1]) for name, cells in _rows(path, "## Time by file").items() if len(cells) >= 2}


# Files whose tests are independent of each other (they share session fixtures only: a served app, a browser):
# each test goes out on its own, so the longest files no longer make the run's longest chain.
SPLIT_BY_TEST = frozenset({
    "tests/browser/test_layout.py", "tests/browser/test_present_fit.py", "tests/browser/test_newer_pages_walk.py",
    "tests/browser/test_browser.py", "tests/browser/test_accessibility.py",
})
# Files that run the dashboard's pages in Streamlit's AppTest or draw PDFs go out together, as one unit: each test
# process pays once for what they all warm up (the pages compiled, the samples' audits and trained models in the
# app's caches, the PDFs' Chromium). Spread over three processes, three of these files took 148 CPU-s against
# 103 in one (benchmarks/results/test_speed_issue26.md).
APP_FILES = frozenset(f"tests/{name}.py" for name in (
    "test_app", "test_app_adjusted", "test_app_audit", "test_app_cache", "test_app_hardening", "test_app_pages_table",
    "test_app_proxy", "test_app_regulator", "test_app_series", "test_app_sources", "test_app_value_names",
    "test_app_words", "test_admin_sources", "test_record_pages", "test_scan_page", "test_committee_pages",
    "test_report", "test_report_parts", "test_handout",
))
# Tests named for a server engine go out together, whatever their file: one worker starts Spark's JVM (20-30 s of
# CPU) or fills the PostgreSQL cluster's tables, not both workers.
SERVER_ENGINES = ("spark", "postgres")


def work_unit(nodeid: str) -> str:
    """The unit of work a parallel run hands out for a test: its file, a test of a file split above, or every test
    named for a server engine."""
    file, _, rest = nodeid.partition("::")
    name = rest.split("[", 1)[0].lower()
    engine = next((e for e in SERVER_ENGINES if e in name), None)
    if engine is not None:
        return f"engine: {engine}"
    if file in SPLIT_BY_TEST:
        return nodeid
    if file in APP_FILES:
        return "app pages and PDFs"
    return file


def read_test_seconds(path: Path = DURATIONS) -> dict[str, float]:
    """Seconds of each test in a durations file's table of the slowest tests; empty when absent."""
    return {name: float(cells[0]) for name, cells in _rows(path, "## The slowest tests").items() if cells}


def unit_seconds(nodeids: list[str], path: Path = DURATIONS) -> dict[str, float]:
    """Each unit's expected seconds: its tests' own where measured among the slowest, else a share of the file's;
    a file not measured yet, its guess (:func:`unmeasured_seconds`)."""
    files, tests = read_file_seconds(path), read_test_seconds(path)
    for file in {_file_of(i) for i in nodeids} - set(files):
        files[file] = unmeasured_seconds(file, sum(_file_of(i) == file for i in nodeids))
    in_file: dict[str, list[str]] = defaultdict(list)
    for nodeid in nodeids:
        in_file[_file_of(nodeid)].append(nodeid)
    out: dict[str, float] = defaultdict(float)
    for file, ids in in_file.items():
        rest = [i for i in ids if i not in tests]
        left = max(files.get(file, 0.0) - sum(tests[i] for i in ids if i in tests), 0.0)
        for nodeid in ids:
            out[work_unit(nodeid)] += tests[nodeid] if nodeid in tests else left / len(rest)
    return out


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In a pytest-xdist worker: the units of work longest first (every worker sorts alike, as xdist requires).

    With ``--no-loadscope-reorder`` xdist hands the units out in this order, so the longest do not start last.
    """
    if not hasattr(config, "workerinput"):
        return
    known = unit_seconds([i.nodeid for i in items])
    items.sort(key=lambda i: -known.get(work_unit(i.nodeid), 0.0))   # stable: a unit's tests keep their order


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile`` hands out :func:`work_unit`\\ s: files, some files in parts, the server engines' tests;
    browser tests to at most ``MAX_BROWSER_WORKERS`` workers at a time (:func:`next_unit`)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class UnitScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

        def _assign_work_unit(self, node: Any) -> None:
            def in_browser(work: dict[str, dict[str, bool]]) -> bool:
                return any(browser_unit(unit) and not all(done.values()) for unit, done in work.items())

            elsewhere = sum(in_browser(work) for other, work in self.assigned_work.items() if other is not node)
            chosen = next_unit(list(self.workqueue), elsewhere, in_browser(self.assigned_work.get(node, {})))
            self.workqueue.move_to_end(chosen, last=False)   # the parent takes the first unit of the queue
            super()._assign_work_unit(node)

    return UnitScheduling(config, log)


# -- durations ---------------------------------------------------------------------------------------------------

_STARTED = time.perf_counter()
_LOAD_AT_START = os.getloadavg()
_TEST_SECONDS: dict[str, float] = defaultdict(float)
_OUTCOMES: dict[str, str] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Setup, call and teardown of each test, summed (under xdist the controller gets every worker's reports)."""
    _TEST_SECONDS[report.nodeid] += report.duration
    if report.when == "call" or report.outcome != "passed":
        _OUTCOMES[report.nodeid] = report.outcome


def _rows(path: Path, header: str) -> dict[str, list[str]]:
    """The rows of the table under ``header`` in an existing durations file, by their first cell."""
    rows: dict[str, list[str]] = {}
    if not path.exists():
        return rows
    inside = False
    for line in path.read_text().splitlines():
        if line.startswith("## "):
            inside = line.startswith(header)
        elif inside and line.startswith("| `"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            rows[cells[0].strip("`")] = cells[1:]
    return rows


def write_durations(path: Path, config: pytest.Config) -> None:
    """Merge this run's durations into ``path``: tests and files measured now replace their rows."""
    now = f"{_dt.datetime.now().astimezone():%Y-%m-%d %H:%M}"
    tests = {k: [v[0], v[1]] for k, v in _rows(path, "## The slowest tests").items() if len(v) >= 2}
    files = {k: [v[0], v[1], v[2]] for k, v in _rows(path, "## Time by file").items() if len(v) >= 3}
    per_file: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    for nodeid, seconds in _TEST_SECONDS.items():
        tests[nodeid] = [f"{seconds:.1f}", now]
        entry = per_file[_file_of(nodeid)]
        entry[0] += 1
        entry[1] += seconds
    for name, (count, seconds) in per_file.items():
        files[name] = [str(int(count)), f"{seconds:.1f}", now]
    slowest = sorted(tests.items(), key=lambda kv: -float(kv[1][0]))[:SLOWEST]
    workers = config.getoption("numprocesses", None) if config.pluginmanager.hasplugin("xdist") else None
    wall = time.perf_counter() - _STARTED
    load_end = os.getloadavg()
    failed = sum(1 for o in _OUTCOMES.values() if o == "failed")
    lines = [
        "# Test durations (pytest)",
        "",
        ("Written by tests/conftest.py when `LUSKIN_DURATIONS_FILE` names this file, e.g. "
         "`LUSKIN_DURATIONS_FILE=benchmarks/results/test_durations.md bash scripts/test.sh -q -p no:cacheprovider`. "
         "Seconds are setup + call + teardown of one test, wall clock, so a test that first builds a shared "
         "fixture (a served app, a Spark session, a trained model) carries that cost. The machines are shared: "
         "compare rows of one run rather than runs."),
        "",
        (f"Last run: {now} on {platform.node() or 'this machine'} ({os.cpu_count()} cores, Python "
         f"{platform.python_version()}), {len(_TEST_SECONDS)} tests ({failed} failed), "
         f"{'xdist workers: ' + str(workers) if workers else 'one process'}, wall {wall:.0f} s, "
         f"load average {_LOAD_AT_START[0]:.1f} at the start and {load_end[0]:.1f} at the end "
         f"(1-minute; {load_end[2]:.1f} over 15 minutes)."),
        "",
        f"## The slowest tests ({SLOWEST})",
        "",
        "| test | seconds | measured |",
        "| --- | ---: | --- |",
        *[f"| `{name}` | {sec} | {when} |" for name, (sec, when) in slowest],
        "",
        "## Time by file",
        "",
        "Summed over the file's tests; a parallel run (`scripts/test.sh`) hands out the longest first.",
        "",
        "| file | tests | seconds | measured |",
        "| --- | ---: | ---: | --- |",
        *[f"| `{name}` | {n} | {sec} | {when} |"
          for name, (n, sec, when) in sorted(files.items(), key=lambda kv: -float(kv[1][1]))],
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text("\n".join(lines) + "\n")
    tmp.replace(path)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The controller (or a run without workers) writes the durations file, when one is named."""
    target = os.environ.get("LUSKIN_DURATIONS_FILE")
    if not target or hasattr(session.config, "workerinput") or not _TEST_SECONDS:
        return
    path = Path(target)
    write_durations(path if path.is_absolute() else ROOT / path, session.config)
