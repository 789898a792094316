"""A Parquet file's quantile cut points (luskin_core.counting.files.windowed_quantiles) equal DuckDB's quantile_cont."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from luskin_core.counting import files
from luskin_core.counting.counts import duck_cursor
from luskin_core.counting.files import SqlFacts, open_file
from luskin_core.spec.conditions import Condition

PROBS = [0.0, 0.2, 0.25, 1 / 3, 0.5, 0.75, 0.9, 1.0]


def _columns(n: int, seed: int = 5) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    spiky = np.where(rng.random(n) < 0.45, 0.0, np.round(rng.exponential(30_000, n), 2))
    holes = rng.normal(size=n)
    holes[rng.random(n) < 0.05] = np.nan
    return {"income": np.round(rng.lognormal(4.3, 0.6, n), 0), "score": rng.normal(size=n) * 1e-3,
            "rising": np.sort(rng.exponential(size=n)), "falling": -np.sort(rng.normal(size=n)),
            "spiky": spiky, "holes": holes, "count": rng.integers(0, 10**6, n), "g": rng.choice(["a", "b"], n)}


@pytest.fixture(scope="module")
def parquet(tmp_path_factory):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path_factory.mktemp("q") / "rows.parquet"
    columns = _columns(1_200_000)
    nan = columns["holes"].copy()   # real NaN values (pandas would write them as missing), and some missing ones
    table = pa.Table.from_pandas(pd.DataFrame(columns), preserve_index=False)
    table = table.append_column("nan", pa.array(nan, mask=np.arange(len(nan)) % 97 == 0, from_pandas=False))
    assert np.isnan(table.column("nan").to_numpy(zero_copy_only=False)).sum() > 20_000   # NaN and missing
    pq.write_table(table, path, row_group_size=250_000)
    return path


def _reference(path, column: str, where: str = "") -> list[float]:
    cursor = duck_cursor()
    try:
        listed = ", ".join(repr(p) for p in PROBS)
        # (isnan() in a WHERE on a Parquet file lets NaN through: it is tested on the text)
        kept = f"{column} IS NOT NULL AND CAST({column} AS VARCHAR) NOT IN ('nan', '-nan')" + (
            f" AND {where}" if where else "")
        return cursor.execute(f"SELECT quantile_cont(CAST({column} AS DOUBLE), [{listed}]) FROM "
                              f"read_parquet('{path}') WHERE {kept}").fetchall()[0][0]
    finally:
        cursor.close()


@pytest.mark.parametrize("column", ["income", "score", "rising", "falling", "spiky", "holes", "nan", "count"])
def test_the_windowed_quantiles_are_duckdbs_quantile_cont_exactly(parquet, column, monkeypatch):
    used = []
    real = files.windowed_quantiles

    def spy(*args, **kwargs):
        used.append(real(*args, **kwargs))
        return used[-1]

    monkeypatch.setattr(files, "windowed_quantiles", spy)
    got = SqlFacts(open_file(str(parquet))).quantiles(column, PROBS)
    assert used and used[0] is not None   # settled by the windows, not quantile_cont
    assert got == _reference(parquet, column)


def test_a_population_restricts_the_windowed_quantiles(parquet):
    facts = SqlFacts(open_file(str(parquet)), (Condition("g", "==", "a"),))
    assert facts.quantiles("income", PROBS) == _reference(parquet, "income", "g = 'a'")


def test_a_window_that_misses_falls_back_to_quantile_cont(parquet, monkeypatch):
    monkeypatch.setattr(files, "_WINDOWS", ((8_500, 1e-12),))   # windows far too narrow to hold the quantiles
    _windows_miss_and_quantile_cont_answers(parquet)


def test_a_small_file_is_left_to_quantile_cont(tmp_path):
    path = tmp_path / "small.parquet"
    pd.DataFrame(_columns(5_000)).to_parquet(path)
    _windows_miss_and_quantile_cont_answers(path)


def _windows_miss_and_quantile_cont_answers(path) -> None:
    """The windows give no answer for the file's score, and the audit's quantiles are still quantile_cont's."""
    facts = SqlFacts(open_file(str(path)))
    assert files.windowed_quantiles(facts.source._batches,
                                    f"(SELECT CAST(score AS DOUBLE) AS x FROM read_parquet('{path}')) AS kept",
                                    PROBS) is None
    assert facts.quantiles("score", PROBS) == _reference(path, "score")


def test_the_windows_load_no_pandas(parquet):
    """The command line's Parquet audit leaves pandas out (2 s to import on a busy machine): so do the windows."""
    import subprocess
    import sys
    from pathlib import Path

    code = ("import sys; from luskin_core.counting.files import SqlFacts, open_file, windowed_quantiles\n"
            f"facts = SqlFacts(open_file({str(parquet)!r}))\n"
            f"assert windowed_quantiles(facts.source._batches, \"(SELECT CAST(score AS DOUBLE) AS x FROM "
            f"read_parquet('{parquet}')) AS kept\", [0.25, 0.5]) is not None\n"
            "print('pandas' in sys.modules)")
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, timeout=300,
                          env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"}, check=True)
    assert done.stdout.strip().splitlines()[-1] == "False"
