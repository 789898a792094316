"""Where Luskin's own files are: in a source checkout, or inside the installed package.

A checkout is recognised by its ``pyproject.toml`` (naming the project ``luskin``) in the folder
that holds ``luskin_core/``. There the package reads the checkout's own ``sample_data/``, so the
top-level folder stays the one source of truth; an installed wheel carries a copy made at build time
(``setup.py``): ``luskin_core/sample_data/``. Nothing is ever looked for relative to an installed
file's grandparents. Where the dashboard lives is the frontends' business (``luskin_cli.app``), not
the core's. Standard library only: the command line imports this before any heavy module.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
PROJECT_NAME = "luskin"


@cache
def checkout_root() -> Path | None:
    """The checkout this package runs from, or None when it is installed (e.g. from a wheel)."""
    root = PACKAGE_DIR.parent
    try:
        text = (root / "pyproject.toml").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    import tomllib

    try:
        project = tomllib.loads(text).get("project", {})
    except tomllib.TOMLDecodeError:
        return None
    return root if isinstance(project, dict) and project.get("name") == PROJECT_NAME else None


def sample_dir() -> Traversable:
    """The bundled samples: the checkout's ``sample_data/``, else the installed package's copy."""
    root = checkout_root()
    if root is not None:
        return root / "sample_data"
    return resources.files(__package__ or "luskin_core") / "sample_data"


def shared_data_dir() -> Path | None:
    """The project's shared data folder beside a checkout (``../shared/data``); None when installed."""
    root = checkout_root()
    return None if root is None else root.parent / "shared" / "data"

