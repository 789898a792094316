"""A stratified, crossed audit of a Parquet file (HMDA's shape: race x sex by 51 state codes) gives the JSON the
in-memory audit of the same rows gives (issue 45: the file audit's speed-ups must change no result).

Counts, verdicts and words equal; floats within 1e-9 (the pooled shares' Newton steps may take another path).
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pandas as pd
import pytest

from luskin_cli.main import main
from luskin_core.analyses.audit import audit
from luskin_core.counting.sources import open_file
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.stats import shrinkage

ROWS = 200_000
SPEC = AuditSpec("action", "approved", group_by=("race", "sex"), strata=("state",))
FLAGS = ["--outcome", "action", "--positive", "approved", "--groups", "race", "--groups", "sex", "--stratify", "state"]


def _hmda_like(n: int, seed: int = 1) -> pd.DataFrame:
    """benchmarks/bench_cli_files.hmda_of's shape: race groups, sex, 51 state codes (1-56 with gaps)."""
    rng = np.random.default_rng(seed)
    states = np.array([s for s in range(1, 57) if s not in (3, 7, 14, 43, 52)], dtype=np.int64)
    race = rng.choice(np.array(["White", "Black", "Asian", "Native", "Pacific", "Two or more", "Unknown"],
                               dtype=object), n, p=[.6, .12, .08, .02, .01, .04, .13])
    return pd.DataFrame({"race": race, "sex": rng.choice(np.array(["F", "M"], dtype=object), n),
                         "state": rng.choice(states, n),
                         "action": np.where(rng.random(n) < 0.7, "approved", "denied")})


@pytest.fixture(scope="module")
def rows(tmp_path_factory) -> tuple[pd.DataFrame, Any]:
    frame = _hmda_like(ROWS)
    path = tmp_path_factory.mktemp("hmda") / "h200k.parquet"
    frame.to_parquet(path, row_group_size=50_000)
    return frame, path


def _differences(a: Any, b: Any, where: str = "") -> list[str]:
    """Where two JSON documents differ: any key, text, count or verdict, or a float by more than 1e-9."""
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return [f"{where}: keys {sorted(a.keys() ^ b.keys())}"]
        return [d for key in a for d in _differences(a[key], b[key], f"{where}.{key}")]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{where}: {len(a)} against {len(b)} items"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _differences(x, y, f"{where}[{i}]")]
    if isinstance(a, float) and isinstance(b, float) and not (isinstance(a, bool) or isinstance(b, bool)):
        return [] if (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-9 else [f"{where}: {a!r} != {b!r}"]
    return [] if a == b and type(a) is type(b) else [f"{where}: {a!r} != {b!r}"]


def test_the_file_audit_gives_the_in_memory_audits_json(rows):
    frame, path = rows
    on_file, in_memory = audit(open_file(str(path)), SPEC).to_dict(), audit(frame, SPEC).to_dict()
    assert len(on_file["comparisons"]) == 14 * 51   # every group in every state
    assert any(c["pooled_rate"] is not None for c in on_file["comparisons"])
    on_file.pop("source"), in_memory.pop("source")
    assert _differences(on_file, in_memory) == []


def test_the_commands_json_on_the_file_is_the_in_memory_audits(rows, capsys):
    frame, path = rows
    assert main(["audit", "--json", "--data", str(path), *FLAGS]) == 0
    printed = json.loads(capsys.readouterr().out)
    in_memory = json.loads(json.dumps(audit(frame, SPEC).to_dict()))
    for key in ("comparisons", "pooled", "cells", "gaps", "verdict_counts", "headline", "sentences", "n_rows"):
        assert _differences(printed[key], in_memory[key], key) == [], key


def test_the_comparison_can_tell_a_changed_pooled_share(rows, monkeypatch):
    """The check is not blind: pooled quantiles left to the expansion (no exact redo) differ by more than 1e-9."""
    frame, path = rows
    exact = audit(frame, SPEC).to_dict()
    monkeypatch.setattr(shrinkage, "LARGE_BETA", 100.0)
    monkeypatch.setattr(shrinkage, "EDGE_TOLERANCE", np.inf)
    loose = audit(open_file(str(path)), SPEC).to_dict()
    assert any("pooled" in d for d in _differences(loose["comparisons"], exact["comparisons"]))
