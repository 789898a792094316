"""The package's promises: a core without Streamlit, a public API that exists, a console script."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import luskin_core

CORE = Path(luskin_core.__file__).parent


def test_core_never_imports_streamlit():
    for path in CORE.glob("*.py"):
        assert not re.search(r"^\s*(import|from)\s+streamlit", path.read_text(), re.MULTILINE), path.name
    done = subprocess.run([sys.executable, "-c", ("import sys, luskin_core, luskin_cli.main, luskin_core.present.plots, "
                           "luskin_core.present.report; print('streamlit' in sys.modules)")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.stdout.strip() == "False", done.stderr


def test_public_names_exist():
    for name in luskin_core.__all__:
        assert hasattr(luskin_core, name), name


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "luskin"
    done = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and done.stdout.strip() == f"luskin {luskin_core.__version__}"
    helped = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=60, check=False)
    for command in ("audit", "retrain", "thresholds", "equalize"):
        assert command in helped.stdout


def test_the_command_line_starts_without_the_heavy_libraries():
    """`luskin --help` and `luskin audit --help` import no pandas, numpy, scipy or scikit-learn (issue 9)."""
    code = ("import sys, contextlib, io\nfrom luskin_cli.main import main\n"
            "for argv in (['--help'], ['audit', '--help'], ['retrain', '--help'], ['report', '--help']):\n"
            "    with contextlib.redirect_stdout(io.StringIO()):\n"
            "        try:\n            main(argv)\n        except SystemExit:\n            pass\n"
            "print(sorted(m for m in ('pandas', 'numpy', 'scipy', 'sklearn', 'statsmodels', 'plotly') "
            "if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_command_lines_preset_names_and_tolerance_match_the_library():
    from luskin_cli import common as cli
    from luskin_core.counting.data import PRESETS
    from luskin_core.spec.audit_spec import DEFAULT_TOLERANCE

    assert set(cli.PRESET_NAMES) == set(PRESETS)
    assert cli.DEFAULT_TOLERANCE == DEFAULT_TOLERANCE


def test_no_help_text_prints_a_doubled_percent_sign(capsys):
    """argparse formats `help=` with %, not `description=`: "95%%" must never reach the screen."""
    from luskin_cli.main import build_parser, main

    commands = [name for action in build_parser()._subparsers._group_actions for name in action.choices]
    assert {"audit", "retrain", "thresholds", "equalize", "report", "app"} <= set(commands)
    for argv in [["--help"]] + [[c, "--help"] for c in commands]:
        try:
            main(argv)
        except SystemExit:
            pass
        out = capsys.readouterr().out
        assert "usage:" in out and "%%" not in out, argv


def test_luskin_app_serves_the_checkouts_own_dashboard():
    """In a checkout ``luskin app`` runs the top-level app.py behind Luskin's guard (serve.py; an installed wheel's
    copy: tests/test_wheel.py)."""

    from luskin_cli.app import command, dashboard_script
    from luskin_cli.options import CommandOptions

    root = Path(__file__).resolve().parents[1]
    assert dashboard_script() == root / "app.py"
    argv = command(CommandOptions(port=8599, address="127.0.0.1", headless=True))
    assert argv[1:5] == ["-m", "streamlit", "run", str(root / "serve.py")] and "--server.port=8599" in argv
    # the checkout's files are not watched unless a developer asks (the watch made the server's work many times larger)
    assert "--server.fileWatcherType=none" in argv
    watching = command(CommandOptions(port=8599, address="127.0.0.1", headless=True, watch_files=True))
    assert not any(flag.startswith("--server.fileWatcherType") for flag in watching)
