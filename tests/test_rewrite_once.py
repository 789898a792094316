"""The controller's rewrite of the test files (tests/rewrite_once.py): what the workers read is pytest's own rewrite."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from _pytest.assertion.rewrite import PYC_TAIL, _read_pyc, get_cache_dir
from rewrite_once import rewritten_files, write_rewritten

SOURCE = "def test_it():\n    left, right = 1, {right}\n    assert left == right\n"


def _pyc(path: Path) -> Path:
    return get_cache_dir(path) / (path.name[:-3] + PYC_TAIL)


def _failure(code: object) -> str:
    namespace: dict[str, object] = {}
    exec(code, namespace)  # noqa: S102 - the test file written just above
    with pytest.raises(AssertionError) as error:
        namespace["test_it"]()  # type: ignore[operator]
    return str(error.value)


def test_the_files_pytest_rewrites_are_written_once_and_again_when_changed(pytestconfig: pytest.Config,
                                                                          tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "pycache_prefix", None)
    (tmp_path / "sub").mkdir()
    test = tmp_path / "sub" / "test_example.py"
    test.write_text(SOURCE.format(right=2))
    (tmp_path / "conftest.py").write_text("")
    (tmp_path / "helper.py").write_text("")
    assert rewritten_files(tmp_path, pytestconfig.getini("python_files")) == [tmp_path / "conftest.py", test]

    assert write_rewritten(pytestconfig, [test]) == "1 written"
    code = _read_pyc(test, _pyc(test))
    assert code is not None
    assert "assert 1 == 2" in _failure(code)   # the rewritten assert explains itself; a plain one says nothing
    assert write_rewritten(pytestconfig, [test]) == "0 written"   # a current copy is kept

    test.write_text(SOURCE.format(right=3))
    assert _read_pyc(test, _pyc(test)) is None   # pytest would not read the old copy for the new source
    assert write_rewritten(pytestconfig, [test]) == "1 written"
    assert "assert 1 == 3" in _failure(_read_pyc(test, _pyc(test)))

    broken = tmp_path / "test_broken.py"
    broken.write_text("def test_it(:\n")
    assert write_rewritten(pytestconfig, [broken, test]) == "0 written"   # left to the worker, which reports it
    assert not _pyc(broken).exists()
