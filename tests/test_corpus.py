"""Bad input, measured: a corpus of bad, hostile and awkward files through the CLI and the dashboard.

The files are built at test time (``tests/corpus_files.py``; nothing large is committed). Each
goes through the command line in a process of its own, with a timeout (forked from a server that has
imported what the command imports, ``tests/cli_fork.py``, so that ~200 runs do not each pay Python's
start-up; the plain file's runs and the good configuration go through the real ``luskin``): a file Luskin must read
exits 0 (and, when it holds the base rows, audits exactly as the plain file does); any other
exits 2 with one line on stderr, in plain words, naming no Python exception. Each goes through
the dashboard's upload (AppTest): no exception box, a plain error, and the data loaded before
still in place; or the data loads. Saved configurations go through ``--config`` and the Report
page's configuration upload. Every test prints a count line; nothing is allowed to fail.

Run with ``-s`` to see the count lines, e.g.
``corpus: 49 files, 49 CLI runs: 0 tracebacks, 0 wrong exit codes, 0 wrong messages``.
The model tools (retrain, thresholds, equalize on the files that reach them) are marked slow.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import pytest
from cli_fork import ForkedCli
from corpus_files import (
    CONFIG_KINDS,
    DATA_KINDS,
    MODEL_COMMANDS,
    OK,
    ROWS,
    Kind,
    base_bytes,
    base_frame,
)
from test_app import goto, messages, metric, open_app

from luskin_app.choices import DEFAULT_OPTIONS
from luskin_core.present.report import DatasetRef, config_to_json
from luskin_core.spec.audit_spec import AuditSpec

LUSKIN = [str(Path(sys.executable).with_name("luskin"))] if Path(sys.executable).with_name("luskin").exists() \
    else [sys.executable, "-m", "luskin_cli"]
TIMEOUT = 120          # seconds for one CLI run on a loaded 2-core machine (a model tool on 200 rows takes ~3 s)
DEVICE_TIMEOUT = 15    # /dev/zero and other paths must be refused at once
MODEL_OPTIONS = {"retrain": ("--first", "LR", "--second", "LR"), "thresholds": ("--model", "LR"),
                 "equalize": ("--alpha", "1")}
# Signs that a message is a programmer's, not a user's.
LEAKS_CASED = re.compile(r"Traceback|Error tokenizing|\b[A-Z][A-Za-z]*(?:Error|Exception|Warning|Invalid)\b|"
                         r"\bpyarrow\b|\bnumpy\b|\bsklearn\b|codec can't|\berrno\b|File \"")
MAX_MESSAGE = 700      # characters: a 50 MB value or a 20,000-column list must not fill the screen


# ------------------------------------------------------------------------------------------
# Building the files once
# ------------------------------------------------------------------------------------------
@cache
def content(kind: Kind) -> bytes:
    return kind.build()


@pytest.fixture(scope="module")
def corpus_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("corpus")
    (folder / "a folder").mkdir()
    (folder / "a folder" / "notes.txt").write_text("not data\n")
    for kind in DATA_KINDS:
        if kind.path is None:
            (folder / f"{kind.name}{kind.suffix}").write_bytes(content(kind))
    return folder


def data_path(kind: Kind, folder: Path) -> str:
    if kind.path is None:
        return str(folder / f"{kind.name}{kind.suffix}")
    return kind.path.replace("{folder}", str(folder / "a folder"))


# ------------------------------------------------------------------------------------------
# The command line
# ------------------------------------------------------------------------------------------
@dataclass
class Run:
    label: str
    expect_ok: bool
    words: str
    argv: list[str]
    timeout: float
    real: bool = False      # through the real executable (Python's start-up included), not a forked child
    status: int | None = None
    out: str = ""
    err: str = ""
    problems: list[str] = field(default_factory=list)


def plain_problems(message: str, words: str) -> list[str]:
    """What is wrong with a message a user reads (empty: it is one plain line with those words)."""
    found = []
    text = message.strip()
    if not text:
        found.append("no message")
    if "\n" in text:
        found.append(f"{len(text.splitlines())} lines")
    if LEAKS_CASED.search(text):
        found.append(f"names internals ({LEAKS_CASED.search(text).group(0)!r})")
    if len(text) > MAX_MESSAGE:
        found.append(f"{len(text):,} characters long")
    if words and words.lower() not in text.lower():
        found.append(f"lacks {words!r}")
    return found


LINES: list[str] = []
ALL_RUNS: list[Run] = []
ALL_APP: list[AppTally] = []


def say(line: str, counted: list[Run] | AppTally) -> None:
    """Print a test's count line now (seen with -s) and keep it for the module's summary."""
    print("\n" + line)
    LINES.append(line)
    if isinstance(counted, AppTally):
        ALL_APP.append(counted)
    else:
        ALL_RUNS.extend(counted)


@pytest.fixture(scope="module", autouse=True)
def summary(pytestconfig: pytest.Config):
    """The count lines and their total, written to the terminal after the module's tests (also without -s)."""
    yield
    reporter = pytestconfig.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or not LINES:
        return
    total = tally(ALL_RUNS, f"corpus: {len(DATA_KINDS)} files and {len(CONFIG_KINDS)} configurations")
    if ALL_APP:
        total += (f"; app: {sum(t.uploads for t in ALL_APP)} uploads, {sum(t.exceptions for t in ALL_APP)} "
                  f"exception boxes, previous data kept in {sum(t.kept for t in ALL_APP)} of "
                  f"{sum(t.refused for t in ALL_APP)} refused")
    with pytestconfig.pluginmanager.get_plugin("capturemanager").global_and_fixture_disabled():
        reporter.write_line("")
        for line in [*LINES, total]:
            reporter.write_line(line)


@pytest.fixture(scope="module")
def cli(corpus_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterable[ForkedCli]:
    """The forking server, warmed by the plain file through every command (so it imports what they import)."""
    base = tmp_path_factory.mktemp("warm") / "base.csv"
    base.write_bytes(base_bytes())
    plain = next(k for k in DATA_KINDS if k.name == "plain")
    warm = [[command, "--data", str(base), *plain.args, *(("--json",) if command == "audit" else MODEL_OPTIONS[command])]
            for command in ("audit", *MODEL_COMMANDS)]
    forked = ForkedCli(LUSKIN, warm, Path(__file__).resolve().parents[1])
    yield forked
    forked.close()


def said_beyond_direction(err: str) -> str:
    """stderr without the line saying which way the outcome was counted (issue 46: said when the names do not tell)."""
    return "\n".join(line for line in err.strip().splitlines() if not line.startswith("Counted '")).strip()


def execute(run: Run, cli: ForkedCli) -> Run:
    try:
        if run.real:
            done = subprocess.run(run.argv, capture_output=True, text=True, timeout=run.timeout, check=False,
                                  errors="replace")
        else:
            done = cli.run(run.argv[len(LUSKIN):], run.timeout)
        run.status, run.out, run.err = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired:
        run.problems.append(f"no answer within {run.timeout:g} s")
        return run
    if "Traceback" in run.err or "Traceback" in run.out:
        run.problems.append("traceback")
    if run.expect_ok:
        if run.status != 0:
            run.problems.append(f"exit {run.status}, expected 0: {run.err.strip()[-300:]}")
        elif said_beyond_direction(run.err):
            run.problems.append(f"stderr not empty: {said_beyond_direction(run.err)[:200]}")
    else:
        if run.status != 2:
            run.problems.append(f"exit {run.status}, expected 2")
        message = run.err.strip()
        if not message.startswith("luskin: "):
            run.problems.append("stderr does not start with 'luskin: '")
        run.problems += plain_problems(message.removeprefix("luskin: "), run.words)
    return run


def execute_all(runs: list[Run], cli: ForkedCli) -> list[Run]:
    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(lambda run: execute(run, cli), runs))


def tally(runs: list[Run], what: str) -> str:
    tracebacks = sum("traceback" in r.problems for r in runs)
    wrong_exit = sum(any(p.startswith(("exit", "no answer")) for p in r.problems) for r in runs)
    wrong_words = sum(any(not p.startswith(("exit", "no answer", "traceback")) for p in r.problems) for r in runs)
    return (f"{what}, {len(runs)} CLI runs: {tracebacks} tracebacks, {wrong_exit} wrong exit codes, "
            f"{wrong_words} wrong messages")


def report(runs: Iterable[Run]) -> str:
    return "\n".join(f"{r.label}: {'; '.join(r.problems)}" for r in runs if r.problems)


def cli_runs(kinds: Iterable[Kind], commands: Iterable[str], folder: Path) -> list[Run]:
    runs = []
    for kind in kinds:
        for command in commands:
            if command not in kind.commands:
                continue
            extra = ("--json",) if command == "audit" else MODEL_OPTIONS[command]
            runs.append(Run(f"{kind.name} / {command}", kind.expect == OK, kind.words,
                            [*LUSKIN, command, "--data", data_path(kind, folder), *kind.args, *extra],
                            DEVICE_TIMEOUT if kind.path else TIMEOUT, real=kind.name == "plain"))
    return runs


def test_every_file_through_the_audit_command(corpus_dir: Path, cli: ForkedCli) -> None:
    runs = execute_all(cli_runs(DATA_KINDS, ["audit"], corpus_dir), cli)
    base = next(r for r in runs if r.label == "plain / audit")
    assert base.status == 0, base.err
    cells = json.loads(base.out)["cells"]
    assert json.loads(base.out)["n_rows"] == ROWS
    for kind, run in zip([k for k in DATA_KINDS if "audit" in k.commands], runs):
        if kind.same_as_base and run.status == 0 and json.loads(run.out)["cells"] != cells:
            run.problems.append("audited differently from the plain file")
    line = tally(runs, f"corpus: {len(DATA_KINDS)} files")
    say(line, runs)
    assert not report(runs), report(runs) + "\n" + line


@pytest.mark.slow
def test_model_tools_on_the_files_that_reach_them(corpus_dir: Path, cli: ForkedCli) -> None:
    runs = execute_all(cli_runs(DATA_KINDS, MODEL_COMMANDS, corpus_dir), cli)
    line = tally(runs, f"corpus: {sum(any(c in k.commands for c in MODEL_COMMANDS) for k in DATA_KINDS)} files "
                       "through retrain, thresholds and equalize")
    say(line, runs)
    assert not report(runs), report(runs) + "\n" + line


def cli_good_configuration() -> dict:
    spec = AuditSpec(outcome="y", positive="yes", protected="race == A")
    return json.loads(config_to_json(DatasetRef("upload", "base.csv", None, ROWS, 6), spec,
                                     {"features": None, "options": DEFAULT_OPTIONS}))


def test_every_saved_configuration_through_config(tmp_path: Path, cli: ForkedCli) -> None:
    data = tmp_path / "base.csv"
    data.write_bytes(base_bytes())
    good = cli_good_configuration()
    runs = []
    for kind in ({"name": "good", "build": lambda g: json.dumps(g).encode()}, *CONFIG_KINDS):
        name = kind["name"] if isinstance(kind, dict) else kind.name
        build = kind["build"] if isinstance(kind, dict) else kind.build
        path = tmp_path / f"{name}.json"
        path.write_bytes(build(good))
        runs.append(Run(f"{name} / audit --config", name == "good", "" if name == "good" else kind.words,
                        [*LUSKIN, "audit", "--data", str(data), "--config", str(path)], TIMEOUT, real=name == "good"))
    runs = execute_all(runs, cli)
    line = tally(runs, f"configurations: {len(CONFIG_KINDS)} bad files and a good one")
    say(line, runs)
    assert not report(runs), report(runs) + "\n" + line


# ------------------------------------------------------------------------------------------
# The dashboard
# ------------------------------------------------------------------------------------------
@dataclass
class AppTally:
    uploads: int = 0
    exceptions: int = 0
    kept: int = 0
    refused: int = 0
    loaded: int = 0
    problems: list[str] = field(default_factory=list)

    def line(self, what: str) -> str:
        return (f"app: {self.uploads} {what}, {self.exceptions} exception boxes, {self.refused} refused in a plain "
                f"message with the previous data kept in {self.kept}, {self.loaded} loaded")


def _current(at) -> tuple[str, int]:
    data = at.session_state["dataset"]
    return data.source, len(data.frame)


def _exception(at) -> str:
    return "; ".join(str(e.value)[:200] for e in at.exception)


def _app_error(at, words: str, tally_: AppTally, label: str, *, marker: str) -> None:
    errors = [e for e in messages(at, "error") if marker in e]
    if not errors:
        tally_.problems.append(f"{label}: no error box ({messages(at, 'error')})")
        return
    # The page wraps the reader's sentence: "'f.csv' could not be used: <sentence> The data loaded before is still
    # in use ...", "'c.json' could not be loaded: <sentence> Nothing was changed."
    problems = plain_problems(errors[0].split(marker)[0], words)
    if problems:
        tally_.problems.append(f"{label}: {'; '.join(problems)}: {errors[0][:300]}")


def _upload(at, kind: Kind) -> None:
    at.file_uploader(key="upload_csv").set_value((f"{kind.name}{kind.suffix}", content(kind), "text/csv")).run()


def _check_refused(at, kind: Kind, before: tuple[str, int], tally_: AppTally) -> None:
    tally_.uploads += 1
    _upload(at, kind)
    if at.exception:
        tally_.exceptions += 1
        tally_.problems.append(f"{kind.name}: exception box: {_exception(at)}")
        return
    _app_error(at, kind.app_words or kind.words, tally_, kind.name, marker="still in use")
    if _current(at) == before and metric(at, "Rows") == f"{before[1]:,}":
        tally_.kept += 1
    else:
        tally_.problems.append(f"{kind.name}: the data changed from {before} to {_current(at)}")
    tally_.refused += 1


def _check_loaded(at, kind: Kind, tally_: AppTally) -> None:
    tally_.uploads += 1
    _upload(at, kind)
    if at.exception:
        tally_.exceptions += 1
        tally_.problems.append(f"{kind.name}: exception box: {_exception(at)}")
        return
    source, rows = _current(at)
    refused = [e for e in messages(at, "error") if "could not be used" in e]
    if refused or source != f"upload:{kind.name}{kind.suffix}":
        tally_.problems.append(f"{kind.name}: not loaded: {refused[:1]}")
        return
    frame = at.session_state["dataset"].frame
    if kind.same_as_base:
        base = base_frame()
        if rows != ROWS or list(frame["race"]) != list(base["race"]) or list(frame["y"]) != list(base["y"]):
            tally_.problems.append(f"{kind.name}: read differently from the plain file ({rows} rows)")
    if kind.app == "choice":
        if [b for b in at.button if b.key == "data_confirm"]:
            at.button(key="data_confirm").click().run()
        at.selectbox(key="outcome").set_value("y").run()
        if [r for r in at.radio if r.key == "outcome_is"] and at.radio(key="outcome_is").value is None:
            at.radio(key="outcome_is").set_value("favourable").run()   # the page asks which way 'y is yes' goes
        if "race" in at.selectbox(key="protected_column").options:
            at.selectbox(key="protected_column").set_value("race").run()
        if at.exception:
            tally_.exceptions += 1
            tally_.problems.append(f"{kind.name}: exception box after choosing y and race: {_exception(at)}")
            return
        errors = messages(at, "error")
        words = (kind.app_words or kind.words).lower()
        if not any(words in e.lower() and not LEAKS_CASED.search(e) for e in errors):
            tally_.problems.append(f"{kind.name}: no plain error with {words!r} after choosing y and race: {errors}")
    tally_.loaded += 1


def _add_condition_on_the_long_value(at, tally_: AppTally) -> None:
    """The 50 MB field: the Audit page offers the short values only, and "Add condition" works."""
    if [r for r in at.radio if r.key == "outcome_is"] and at.radio(key="outcome_is").value is None:
        at.radio(key="outcome_is").set_value("favourable").run()   # 'y is yes': the page asks which way is good
    if [b for b in at.button if b.key == "data_confirm"]:
        at.button(key="data_confirm").click().run()
    goto(at, "audit")
    at.selectbox(key="filter_column").set_value("note").run()
    options = at.selectbox(key="filter_value_pick").options
    if any(len(str(o)) > 1_000 for o in options):
        tally_.problems.append("field_50mb: the 50 MB value is offered in the Audit page's dropdown")
    at.button(key="filter_add").click().run()
    if at.exception:
        tally_.exceptions += 1
        tally_.problems.append(f"field_50mb: exception box after Add condition: {_exception(at)}")
    elif not any("note ==" in s for s in messages(at, "info") + messages(at, "success") + messages(at, "warning")):
        tally_.problems.append("field_50mb: Add condition did not add the condition")
    goto(at, "data")


def test_every_file_through_the_upload() -> None:
    at = open_app()
    tally_ = AppTally()
    uploaded = [k for k in DATA_KINDS if k.app]
    refused = [k for k in uploaded if k.expect != OK and k.app == "upload"]
    loaded = [k for k in uploaded if k not in refused]
    for kind in refused:                                   # on the Adult sample
        _check_refused(at, kind, _current(at), tally_)
    assert _current(at) == ("sample:adult", 48_842)
    for kind in loaded:
        _check_loaded(at, kind, tally_)
        if kind.name == "field_50mb" and not at.exception:
            _add_condition_on_the_long_value(at, tally_)
            for bad in [k for k in refused if k.name in ("binary", "damaged_gzip")]:   # the upload is kept
                _check_refused(at, bad, _current(at), tally_)
    line = tally_.line(f"uploads of {len(uploaded)} files")
    say(line, tally_)
    assert not tally_.problems, "\n".join(tally_.problems) + "\n" + line


def test_every_saved_configuration_through_the_report_page() -> None:
    at = goto(open_app(), "report")
    good = json.loads(at.code[0].value)
    tally_ = AppTally()
    before = (_current(at), at.session_state["choices"]["outcome"], at.session_state["choices"]["positive"])
    for kind in CONFIG_KINDS:
        tally_.uploads += 1
        at.file_uploader(key="config_upload").set_value((f"{kind.name}.json", kind.build(good),
                                                         "application/json")).run()
        if at.exception:
            tally_.exceptions += 1
            tally_.problems.append(f"{kind.name}: exception box: {_exception(at)}")
            at = goto(open_app(), "report")
            continue
        _app_error(at, kind.words, tally_, kind.name, marker="Nothing was changed")
        tally_.refused += 1
        now = (_current(at), at.session_state["choices"]["outcome"], at.session_state["choices"]["positive"])
        if now == before and at.session_state.get("pending_config") is None:
            tally_.kept += 1
        else:
            tally_.problems.append(f"{kind.name}: the view changed: {now}")
    line = tally_.line(f"configuration uploads of {len(CONFIG_KINDS)} files")
    say(line, tally_)
    assert not tally_.problems, "\n".join(tally_.problems) + "\n" + line


def test_the_corpus_is_big_enough() -> None:
    assert len(DATA_KINDS) >= 30 and len({k.name for k in DATA_KINDS}) == len(DATA_KINDS)
    assert len({k.name for k in CONFIG_KINDS}) == len(CONFIG_KINDS)
