"""Static checks are part of the suite: ruff (its default rules, pyproject's line length) on the whole
repository, and mypy on the library, the command line and the dashboard (pyproject's settings), with no errors."""

from __future__ import annotations

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


def test_mypy_finds_nothing_in_the_core_the_command_line_or_the_dashboard() -> None:
    done = _run("mypy", "--no-incremental", "--cache-dir", "/dev/null", "luskin_core", "luskin_cli", "luskin_app",
                "app_pages", "app.py")
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
