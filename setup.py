"""Build step only: pyproject.toml holds the metadata; this copies shared files into the wheel.

The top-level ``sample_data/`` and the dashboard (``app.py``, ``serve.py``, ``app_pages/``,
``.streamlit/config.toml``) stay the one source of truth in the repository. A checkout reads them
in place; a wheel carries copies made here, at build time, inside its packages:
``luskin_core/sample_data/`` (read by ``luskin_core._locations``) and ``luskin_app/dashboard/`` (read by
``luskin_cli.app``).
tests/test_wheel.py checks the copies are byte-identical to the originals.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent

# (folder in the repository, glob, folder inside the built packages)
SHARED_FOLDERS = (
    ("sample_data", "*", "luskin_core/sample_data"),
    ("app_pages", "*.py", "luskin_app/dashboard/app_pages"),
)
# (file in the repository, its place inside the built packages)
SHARED_FILES = (
    ("app.py", "luskin_app/dashboard/app.py"),
    ("serve.py", "luskin_app/dashboard/serve.py"),
    (".streamlit/config.toml", "luskin_app/dashboard/.streamlit/config.toml"),
)


class BuildWithSharedFiles(build_py):
    """build_py that also copies the samples and the dashboard into the build."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:  # an editable install runs from the checkout, which has the originals
            return
        build = Path(self.build_lib)
        for folder, pattern, target in SHARED_FOLDERS:
            files = sorted(p for p in (HERE / folder).glob(pattern) if p.is_file())
            if not files:
                raise SystemExit(f"Cannot build Luskin: {folder}/ holds no {pattern} files.")
            shutil.rmtree(build / target, ignore_errors=True)  # no stale copy from an earlier build
            (build / target).mkdir(parents=True)
            for path in files:
                self.copy_file(str(path), str(build / target / path.name))
        for source, target in SHARED_FILES:
            if not (HERE / source).is_file():
                raise SystemExit(f"Cannot build Luskin: {source} is missing.")
            (build / target).parent.mkdir(parents=True, exist_ok=True)
            self.copy_file(str(HERE / source), str(build / target))


setup(cmdclass={"build_py": BuildWithSharedFiles})
