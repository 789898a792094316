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
        assert not re.search(r"^\s*(import|from)\s+streamlit", path.read_text(), re.M), path.name
    done = subprocess.run([sys.executable, "-c", "import sys, luskin_core, luskin_core.cli, luskin_core.plots, "
                           "luskin_core.report; print('streamlit' in sys.modules)"],
                          capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "False", done.stderr


def test_public_names_exist():
    for name in luskin_core.__all__:
        assert hasattr(luskin_core, name), name


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "luskin"
    done = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == f"luskin {luskin_core.__version__}"
    helped = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=60)
    for command in ("audit", "retrain", "thresholds", "equalize"):
        assert command in helped.stdout
