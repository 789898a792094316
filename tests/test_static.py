"""Static checks are part of the suite: ruff (its default rules, pyproject's line length) on the whole
repository, and mypy on the library, the command line and the dashboard (pyproject's settings), with no errors.
mypy keeps its incremental cache in ``~/.cache/luskin-tests/mypy`` (``LUSKIN_MYPY_CACHE`` overrides)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *argv], cwd=ROOT, capture_output=True, text=True, timeout=600,
                          check=False)


def test_ruff_finds_nothing() -> None:
    done = _run("ruff", "check", "--no-cache", ".")
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]


# mypy's own incremental cache, kept beside the sign-in tests' provider rather than in the checkout: the third-party
# packages (numpy, pandas, Streamlit, Ibis) are most of a first run's 24 CPU-seconds and do not change from one run to
# the next; mypy checks every cached module against its file (size, then hash) and checks again what changed and
# what depends on it, so a fresh clone elsewhere on the machine reads the same cache (0.7 s).
MYPY_CACHE = Path(os.environ.get("LUSKIN_MYPY_CACHE", "~/.cache/luskin-tests/mypy")).expanduser()


def test_mypy_finds_nothing_in_the_core_the_command_line_or_the_dashboard() -> None:
    done = _run("mypy", "--cache-dir", str(MYPY_CACHE))   # the files: pyproject's [tool.mypy] files
    if done.returncode not in (0, 1):   # mypy crashed (1 is "errors found"): a cache it cannot read, then without one
        done = _run("mypy", "--no-incremental", "--cache-dir", os.devnull)
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
