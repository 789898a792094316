"""The engines are declared once (luskin_core.counting.engines, issue 26): addresses, names and capabilities.

Nothing outside the registry and the engines' own modules tests an engine's name or an address's
prefix: a scan of the code finds none (and is shown to catch one), so a new engine is its module plus
one entry in the registry.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from luskin_core import AuditSpec, LuskinError
from luskin_core.counting import engines
from luskin_core.counting.engines import ENGINES, address_engine, engine, engine_for
from luskin_core.counting.sources import open_source

ROOT = Path(__file__).resolve().parent.parent
# The engines' own modules (and the registry) may name them.
OWN = {"luskin_core/counting/engines.py", "luskin_core/counting/postgres.py", "luskin_core/counting/spark.py",
       "luskin_core/counting/files.py"}
NAME_TEST = re.compile(r"""(startswith\(\(?["'](postgres|spark)|\.kind\s*(==|!=|in|not in)\s*\(?["'](postgres|spark|csv|"""
                       r"""parquet|duckdb|frame)["'])""")


def _name_tests(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if NAME_TEST.search(line)]


def test_locations_find_their_engine(tmp_path):
    assert engine_for("postgresql://u@h/db").key == engine_for("POSTGRES://u@h/db").key == "postgres"
    assert engine_for("spark:").key == engine_for("spark:/data/x.parquet").key == "spark"
    assert engine_for("x.parquet").key == engine_for(str(tmp_path)).key == "parquet"
    assert engine_for("x.duckdb").key == "duckdb" and engine_for("x.csv.gz").key == engine_for("x.data").key == "csv"
    assert address_engine("/data/x.parquet") is None and address_engine("spark:").title == "Spark"
    for item in ENGINES:
        assert engine(item.key) is item
        if item.opener:
            module, _, function = item.opener.partition(":")
            assert callable(getattr(importlib.import_module(module), function))


def test_no_module_tests_an_engine_by_name():
    found = {}
    for folder in ("luskin_core", "luskin_cli", "luskin_app", "app_pages"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            name = str(path.relative_to(ROOT))
            if name not in OWN and (lines := _name_tests(path.read_text(encoding="utf-8"))):
                found[name] = lines
    assert not found, found
    assert _name_tests('    if source.kind == "postgres":') and _name_tests('x.lower().startswith(("postgresql://",')


def test_a_capability_the_engine_lacks_is_refused_plainly(tmp_path, monkeypatch):
    frame = pd.DataFrame({"g": ["a", "b"] * 50, "y": ["yes", "no", "no", "yes"] * 25})
    frame.to_parquet(tmp_path / "f.parquet")
    source = open_source(str(tmp_path / "f.parquet"))
    monkeypatch.setitem(engines._BY_KEY, "parquet", replace(engine("parquet"), can_sample=False))   # type: ignore[attr-defined]
    with pytest.raises(LuskinError, match="cannot draw the model tools' seeded sample"):
        source.sample(AuditSpec("y", "yes", group_by=("g",)), cap=10)
