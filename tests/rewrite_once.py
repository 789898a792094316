"""The test files' rewritten asserts, written once for every worker of a parallel run.

pytest rewrites the asserts of each test file and keeps the result beside it (``__pycache__/*-pytest-*.pyc``), but
not when bytecode may not be written (``PYTHONDONTWRITEBYTECODE``, which some CI shells and this machine set) and not
before a first run: then each of the run's workers rewrites every test file again, over a third of what it spends
collecting (the figures: benchmarks/results/test_speed_issue26.md, twelfth session). The controller of a parallel run
writes them here, in a thread, while its workers start; a worker that imports a file before its turn rewrites that one
itself, as before.

This uses pytest's own rewriting (``_pytest.assertion.rewrite``, private, pytest pinned in requirements-dev.txt):
the files are the ones pytest would write, checked by the source's hash when read. If those names change, nothing is
written and the run is as before (:func:`write_rewritten` says why in its return value).
"""

from __future__ import annotations

import fnmatch
import threading
from collections.abc import Iterable
from pathlib import Path

import pytest


def rewritten_files(folder: Path, patterns: Iterable[str]) -> list[Path]:
    """The files under ``folder`` whose asserts pytest rewrites: test modules (``patterns``, pytest's
    ``python_files``) and conftest files."""
    patterns = tuple(patterns)
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts
                  and (p.name == "conftest.py" or any(fnmatch.fnmatch(p.name, pattern) for pattern in patterns)))


def write_rewritten(config: pytest.Config, files: Iterable[Path]) -> str:
    """Write each file's rewritten code where pytest reads it, unless a current copy is there; what was done."""
    try:
        from _pytest.assertion.rewrite import (
            PYC_TAIL,
            _read_pyc,
            _rewrite_test,
            _write_pyc,
            assertstate_key,
            get_cache_dir,
            try_makedirs,
        )
    except ImportError as error:   # another pytest: each worker rewrites, as without this module
        return f"not written: {error}"
    state = config.stash.get(assertstate_key, None)
    if state is None:   # --assert=plain: nothing is rewritten
        return "not written: asserts are not rewritten in this run"
    written = 0
    for path in files:
        folder = get_cache_dir(path)
        pyc = folder / (path.name[:-3] + PYC_TAIL)
        if not try_makedirs(folder) or _read_pyc(path, pyc) is not None:
            continue
        try:
            source_hash, code = _rewrite_test(path, config)
        except (OSError, SyntaxError, ValueError):   # the worker that imports it says what is wrong, in its report
            continue
        written += bool(_write_pyc(state, code, source_hash, pyc))
    return f"{written} written"


def start_in_background(config: pytest.Config, folder: Path) -> threading.Thread:
    """:func:`write_rewritten` for the files under ``folder``, in a daemon thread (the workers do not wait for it)."""
    files = rewritten_files(folder, config.getini("python_files"))
    thread = threading.Thread(target=write_rewritten, args=(config, files),
                              name="luskin-rewrite-tests", daemon=True)
    thread.start()
    return thread
