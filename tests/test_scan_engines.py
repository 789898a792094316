"""The scan counts through the audits' counting plan on every engine: the same findings for the same seed in
memory, in DuckDB (a Parquet and a CSV file), in PostgreSQL and in Spark (real servers: tests/engine_servers.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from engine_servers import load_postgres

from luskin_core import ScanSpec, scan
from luskin_core.counting.sources import open_file, open_source
from luskin_core.errors import LuskinError

SPEC = ScanSpec("outcome", "yes", ("sex", "region", "age", "band"), depth=3, replicates=199, seed=5,
                min_size=20)


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(21)
    n = 6_000
    data = pd.DataFrame({
        "sex": rng.choice(["Female", "Male"], n),
        "region": rng.choice(["North", "South", "East", "O'Hare"], n),   # a quote in a value
        "age": rng.integers(18, 90, n).astype(float),                   # binned: many values
        "band": rng.integers(1, 4, n),                                   # integer codes
    })
    data.loc[rng.random(n) < 0.03, "region"] = None                     # Unknown
    p = np.where((data.sex == "Female") & (data.region == "South"), 0.55, 0.3)
    data["outcome"] = np.where(rng.random(n) < p, "yes", "no")
    return data


def _summary(result) -> dict:
    document = result.to_dict()
    for key in ("source",):
        document.pop(key)
    return document


def test_files_in_duckdb_give_the_findings_of_memory(frame, tmp_path):
    memory = scan(frame, SPEC)
    assert [f.conditions for f in memory.findings] == [{"sex": "Female", "region": "South"}]
    parquet, csv = tmp_path / "d.parquet", tmp_path / "d.csv"
    frame.to_parquet(parquet)
    frame.to_csv(csv, index=False)
    for path in (parquet, csv):
        engine = scan(open_file(str(path)), SPEC)
        assert _summary(engine) == _summary(memory), path


def test_postgres_gives_the_findings_of_memory(frame, postgres_url):
    load_postgres(postgres_url, "scan_rows", frame)
    engine = scan(open_source(postgres_url, "scan_rows"), SPEC)
    assert _summary(engine) == _summary(scan(frame, SPEC))


def test_spark_gives_the_findings_of_memory(frame, spark_session, tmp_path):
    path = tmp_path / "rows.parquet"
    frame.to_parquet(path)
    spark_session.read.parquet(str(path)).createOrReplaceTempView("scan_rows")  # type: ignore[attr-defined]
    engine = scan(open_source("spark:", "scan_rows"), SPEC)
    assert _summary(engine) == _summary(scan(frame, SPEC))


def test_files_count_their_groups_with_grouping_sets_as_memory_does(tmp_path):
    """A scan over its memory limit for the full count table counts its groups with GROUPING SETS in DuckDB:
    a Parquet and a CSV file (binned ages, a quote in a value, Unknown) give the JSON of the frame's scan."""
    from luskin_core.analyses import scan as scan_module
    from luskin_core.stats import subgroups as sg

    rng = np.random.default_rng(8)
    n = 30_000
    data = pd.DataFrame({"sex": rng.choice(["Female", "Male"], n),
                         "region": rng.choice(["North", "South", "East", "O'Hare"], n).astype(object),
                         "age": rng.integers(18, 90, n).astype(float), "band": rng.integers(1, 4, n),
                         "job": rng.choice(list("abcde"), n), "shift": rng.integers(0, 6, n)})
    data.loc[rng.random(n) < 0.03, "region"] = None
    p = np.where((data.sex == "Female") & (data.region == "O'Hare") & (data.band == 2), 0.6, 0.3)
    data["outcome"] = np.where(rng.random(n) < p, "yes", "no")
    spec = ScanSpec("outcome", "yes", ("sex", "region", "age", "band", "job", "shift"), replicates=199, seed=5)
    plan, raw = scan_module._count(data, spec.audit_spec())
    table = scan_module._cells(plan, raw, "rate")
    full_need = sg.memory_estimate(len(table.cells.n), table.cells.cards, 3)
    alone = scan_module.grouping_sets_memory(table.cells.cards, 3)
    assert alone < full_need
    limit = (alone + full_need) // 2
    memory = scan(data, spec, memory=limit)
    assert memory.method == sg.UNION
    assert [f.conditions for f in memory.findings] == [{"sex": "Female", "region": "O'Hare", "band": 2}]
    assert [f.conditions for f in scan(data, spec).findings] == [f.conditions for f in memory.findings]
    parquet, csv = tmp_path / "d.parquet", tmp_path / "d.csv"
    data.to_parquet(parquet)
    data.to_csv(csv, index=False)
    for path in (parquet, csv):
        engine = scan(open_file(str(path)), spec, memory=limit)
        assert _summary(engine) == _summary(memory), path



def test_fifty_values_and_some_missing_are_scanned_in_memory_and_in_duckdb(frame, tmp_path):
    """At most 50 present values are scanned, the missing apart (they are the Unknown group), in memory and on an
    engine alike."""
    spec = ScanSpec("outcome", "yes", ("sex", "region"), depth=1, replicates=99, seed=5, min_size=20)
    data = frame.assign(region=[None if i % 10 == 0 else f"r{i % 50}" for i in range(len(frame))])
    path = tmp_path / "d.parquet"
    data.to_parquet(path)
    assert _summary(scan(open_file(str(path)), spec)) == _summary(scan(data, spec))


@pytest.mark.parametrize(("change", "message"), [
    (lambda f: f.assign(region=[f"r{i % 60}" for i in range(len(f))]),
     "The column 'region' has more than 50 distinct values, too many to scan"),
    (lambda f: f.assign(outcome="no"), "The value 'yes' never occurs in the outcome column 'outcome'. Its values are: no."),
])
def test_a_refusal_reads_the_same_in_memory_and_in_duckdb(frame, tmp_path, change, message):
    """A frame and an engine refuse in the same words."""
    data = change(frame)
    path = tmp_path / "d.parquet"
    data.to_parquet(path)
    for name, where in (("memory", data), ("duckdb", open_file(str(path)))):
        with pytest.raises(LuskinError) as refused:
            scan(where, SPEC)
        assert str(refused.value).startswith(message), name


def test_no_row_is_refused_alike_in_memory_and_in_duckdb(frame, tmp_path):
    empty = frame.iloc[:0]
    path = tmp_path / "empty.parquet"
    empty.to_parquet(path)
    for where in (empty, open_file(str(path))):
        with pytest.raises(LuskinError, match="has no rows"):
            scan(where, SPEC)
