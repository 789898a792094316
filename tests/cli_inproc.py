"""Run the ``luskin`` command line in this process and read what it printed (tests of its output)."""

from __future__ import annotations

import contextlib
import io

from luskin_cli.main import main


def run_in_process(argv: list[str]) -> tuple[int, str, str]:
    """``luskin argv`` here: its exit status (argparse's refusals included) and its stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = main(argv)
        except SystemExit as stop:
            status = int(stop.code or 0)
    return status, out.getvalue(), err.getvalue()
