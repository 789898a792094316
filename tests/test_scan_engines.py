"""The scan counts through the audits' counting plan on every engine: the same findings for the same seed in
memory, in DuckDB (a Parquet and a CSV file), in PostgreSQL and in Spark (real servers: tests/engine_servers.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from luskin_core import ScanSpec, scan
from luskin_core.counting.sources import open_file, open_source

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
    from urllib.parse import parse_qs, urlsplit

    import ibis  # type: ignore[import-untyped]

    host = parse_qs(urlsplit(postgres_url).query)["host"][0]
    con = ibis.postgres.connect(user="luskin", password=urlsplit(postgres_url).password, host=host,
                                database="postgres")
    con.create_table("scan_rows", ibis.memtable(frame))
    con.disconnect()
    engine = scan(open_source(postgres_url, "scan_rows"), SPEC)
    assert _summary(engine) == _summary(scan(frame, SPEC))


def test_spark_gives_the_findings_of_memory(frame, spark_session, tmp_path):
    path = tmp_path / "rows.parquet"
    frame.to_parquet(path)
    spark_session.read.parquet(str(path)).createOrReplaceTempView("scan_rows")  # type: ignore[attr-defined]
    engine = scan(open_source("spark:", "scan_rows"), SPEC)
    assert _summary(engine) == _summary(scan(frame, SPEC))
