"""A scan of a Parquet file reads the file's footer once for all its integer columns (issue 49's speed: eight
columns read it eight times), with the same ranges and the same findings as before."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
import pytest

from luskin_core import ScanSpec, scan
from luskin_core.counting.files import FileSource
from luskin_core.counting.sources import open_file

CARDS = (5, 2, 6, 4, 5, 3, 4, 5)   # benchmarks/bench_scan.py's 72,000 cells
COLUMNS = tuple(f"c{j}" for j in range(len(CARDS)))


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> tuple[str, pd.DataFrame]:
    """20,000 rows of the benchmark's shape with a planted slice, in a Parquet file of several row groups."""
    rng = np.random.default_rng(49)
    frame = pd.DataFrame({c: rng.integers(0, k, 20_000) for c, k in zip(COLUMNS, CARDS)})
    p = np.where((frame.c2 == 1) & (frame.c4 == 3), 0.6, 0.3)
    frame["y"] = (rng.random(len(frame)) < p).astype(int)
    path = str(tmp_path_factory.mktemp("footer") / "rows.parquet")
    con = duckdb.connect()
    con.register("frame", frame)
    con.execute(f"COPY frame TO '{path}' (FORMAT PARQUET, ROW_GROUP_SIZE 3000)")
    con.close()
    return path, frame


def test_the_footer_is_read_once_for_every_column(table, monkeypatch):
    path, frame = table
    source = open_file(path)
    assert isinstance(source, FileSource)
    footer_reads = []
    run = FileSource._sql

    def counted(self, sql, *args, **kwargs):
        if "parquet_metadata" in sql:
            footer_reads.append(sql)
        return run(self, sql, *args, **kwargs)

    monkeypatch.setattr(FileSource, "_sql", counted)
    ranges = {c: source.integer_range(c) for c in (*COLUMNS, "y")}
    assert ranges == {c: (int(frame[c].min()), int(frame[c].max())) for c in (*COLUMNS, "y")}
    assert len(footer_reads) <= 2   # main: one query a column (9)


def test_the_scan_of_the_file_finds_what_the_scan_in_memory_finds(table):
    path, frame = table
    spec = ScanSpec("y", 1, COLUMNS, depth=3, replicates=999, seed=3)
    memory, engine = scan(frame, spec).to_dict(), scan(open_file(path), spec).to_dict()
    memory.pop("source")
    engine.pop("source")
    assert engine == memory
    assert [f["conditions"] for f in engine["findings"]] == [{"c2": 1, "c4": 3}]
