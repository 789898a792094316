"""The server's warm-up (luskin_app/warmup.py, issue 46: "the very first visit at 1024x768 showed a blank main area
at 5 s"): after it, the first page (app.py and the Data page) imports no library of its own, so the first visitor
waits for no import before the page's heading."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _imports(path: Path) -> list[str]:
    """The modules a script names in its import statements (the page itself is not run)."""
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module != "__future__":
            names.append(node.module)
            names += [f"{node.module}.{alias.name}" for alias in node.names]
    return names


def test_after_the_warm_up_the_first_page_imports_no_library() -> None:
    first_page = _imports(ROOT / "app.py") + _imports(ROOT / "app_pages" / "data.py")
    script = f"""
import importlib, json, logging, sys
logging.disable(logging.WARNING)
from luskin_app import warmup
warmup.warm_up()
before = set(sys.modules)
for name in {first_page!r}:
    try:
        importlib.import_module(name)
    except ImportError:
        pass   # a name imported from a module (a function, a class), not a module
print(json.dumps(sorted(set(sys.modules) - before)))
"""
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          check=True)
    new = json.loads(done.stdout.strip().splitlines()[-1])
    libraries = sorted({name.split(".")[0] for name in new} - {"luskin_app", "luskin_core"} - sys.stdlib_module_names)
    assert not libraries, f"the first visitor's page imports these libraries the warm-up did not: {libraries} ({new})"
