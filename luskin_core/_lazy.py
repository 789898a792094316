"""pandas, imported on first use.

Importing pandas (with pyarrow) costs a fresh process more than DuckDB needs to count 10,000,000
Parquet rows (benchmarks/results/code_timings.md), and a file's audit on the command line never touches it: the count table
comes from DuckDB as numpy arrays. Modules on that path name pandas through :data:`pandas`, which
imports it the first time an attribute is read (``pd.DataFrame``), through the ordinary import
machinery, so ``sys.modules`` holds the real module and nothing else changes. A type checker sees
the real module (each module imports it under ``TYPE_CHECKING``).
"""

from __future__ import annotations

import importlib
import math
import sys
from types import ModuleType
from typing import Any


class LazyModule:
    """A module that is imported when one of its attributes is first read."""

    __slots__ = ("_module", "_name")

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_module", None)

    def _load(self) -> ModuleType:
        module = object.__getattribute__(self, "_module")
        if module is None:
            module = importlib.import_module(object.__getattribute__(self, "_name"))
            object.__setattr__(self, "_module", module)
        return module

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self._load(), attribute)

    def __repr__(self) -> str:
        return f"<lazy module {object.__getattribute__(self, '_name')!r}>"


pandas: Any = LazyModule("pandas")


def loaded(name: str) -> ModuleType | None:
    """The module if some code already imported it (a value can hold pandas' NA only then)."""
    return sys.modules.get(name)


def is_missing(value: Any) -> bool:
    """None, a float NaN, or pandas' NA or NaT (without importing pandas to ask)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return True
    module = loaded("pandas")
    return module is not None and (value is module.NA or value is module.NaT)


__all__ = ["LazyModule", "is_missing", "loaded", "pandas"]
