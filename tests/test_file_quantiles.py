"""A Parquet file's quantile cut points (luskin_core.counting.files.windowed_quantiles) equal DuckDB's quantile_cont."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from luskin_core.counting import files
from luskin_core.counting.files import SqlFacts, open_file
from luskin_core.counting.memory import duck_cursor
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


def _few_valued(n: int, seed: int = 8):
    """Columns of few values each (as HMDA's income in thousands is): doubles with real NaN and missing values, and
    whole numbers with one value on half the rows; a group column and an outcome."""
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    tenths = np.round(rng.normal(size=n) * 5)
    tenths[rng.random(n) < 0.04] = np.nan
    tenths[::1000] = -np.nan
    stars = np.where(rng.random(n) < 0.5, 3, rng.integers(1, 800, n))
    g = rng.choice(np.array(["a", "b", "c"], dtype=object), n)
    y = (rng.random(n) < 0.3 + 0.01 * np.nan_to_num(tenths)).astype(np.int64)
    table = pa.table({"tenths": pa.array(tenths, mask=np.arange(n) % 89 == 0, from_pandas=False),
                      "stars": stars, "g": g, "y": y, "income": np.round(rng.lognormal(4.3, 0.6, n), 0)})
    frame = table.to_pandas()
    frame["tenths"] = frame["tenths"].astype(float)   # NaN and missing alike, as the upload reads them
    return frame, table


@pytest.mark.parametrize("column", ["tenths", "stars", "income"])
@pytest.mark.parametrize("population", [(), (Condition("g", "!=", "b"),)])
def test_a_column_of_few_values_has_its_quantiles_from_its_value_counts_exactly(tmp_path, column, population,
                                                                                monkeypatch):
    import pyarrow.parquet as pq

    _, table = _few_valued(300_000)
    path = tmp_path / "few.parquet"
    pq.write_table(table, path, row_group_size=100_000)
    monkeypatch.setattr(files, "windowed_quantiles", lambda *a, **k: pytest.fail("the windows were asked"))
    facts = SqlFacts(open_file(str(path)), population)
    facts.look([column])
    assert facts._few_values(column)
    got = facts.quantiles(column, PROBS)
    assert got == _reference(path, column, "g <> 'b'" if population else "")
    known = facts.values_counted(column)
    assert 0 < known < 2_000


def test_a_stratum_of_few_values_is_cut_after_grouping_and_audits_as_in_memory(tmp_path, monkeypatch):
    """The count groups on the column's values and cuts the groups into ranges (a NaN, a -NaN and a missing value
    all missing): every count and number equals the in-memory audit's, with and without a population."""
    import pyarrow.parquet as pq
    from test_engines import assert_same

    from luskin_core import AuditSpec, audit
    from luskin_core.counting import sql_rules
    from luskin_core.spec.conditions import parse_condition

    frame, table = _few_valued(120_000)
    path = tmp_path / "few.parquet"
    pq.write_table(table, path)
    asked = []
    real = sql_rules.count_sql
    monkeypatch.setattr(files, "count_sql", lambda *a: asked.append(a[-1]) or real(*a))
    specs = [AuditSpec("y", 1, group_by=("g",), strata=("tenths",)),
             AuditSpec("y", 1, group_by=("g", "tenths"), strata=("stars",), population=(parse_condition("stars > 2"),)),
             AuditSpec("y", 1, group_by=("income",), strata=("g",))]
    for spec in specs:
        expected, got = audit(frame, spec), audit(open_file(str(path)), spec)
        assert expected.counts is not None and got.counts is not None
        assert_same(expected.counts.to_frame().to_dict("list"), got.counts.to_frame().to_dict("list"), repr(spec))
        assert_same(expected.to_dict(), got.to_dict(), repr(spec))
    # each cut column grouped on its values first, but stars (about 800 values) beside tenths (about 50): their
    # combinations could pass REGROUP_VALUES, so stars is cut row by row
    assert asked == [["c0"], ["g1"], ["g0"]]


@pytest.mark.parametrize("layout", ["one row group", "row groups", "csv"])
def test_first_rows_of_few_values_that_mislead_still_give_exact_quantiles_and_a_row_by_row_cut(tmp_path, layout):
    """A file sorted so that its first rows hold one value and the rest a hundred thousand. In Parquet row groups the
    statistics show it (a row group outside the first rows' range) and the windows are used; otherwise the value
    counts are still exact, and the column, found to hold more values than a count may group on, is cut row by row.
    Every number equals the in-memory audit's."""
    from test_engines import assert_same

    from luskin_core import AuditSpec, audit

    rng = np.random.default_rng(3)
    n = 200_000
    amount = np.concatenate([np.zeros(60_000), rng.exponential(100.0, n - 60_000)])
    frame = pd.DataFrame({"amount": amount, "g": rng.choice(["a", "b"], n), "y": rng.integers(0, 2, n)})
    path = tmp_path / ("sorted.csv" if layout == "csv" else "sorted.parquet")
    if layout == "csv":
        frame.to_csv(path, index=False)
    else:
        frame.to_parquet(path, row_group_size=n if layout == "one row group" else 20_000)
    facts = SqlFacts(open_file(str(path)))
    facts.look(["amount"])
    assert facts._few_values("amount") == (layout != "row groups")
    got = facts.quantiles("amount", PROBS)
    if layout != "csv":
        assert got == _reference(path, "amount")
    if layout != "row groups":
        assert facts.values_counted("amount") > files.REGROUP_VALUES   # the count found out
    spec = AuditSpec("y", 1, group_by=("g",), strata=("amount",))
    expected = frame if layout != "csv" else pd.read_csv(path)
    assert_same(audit(expected, spec).to_dict(), audit(open_file(str(path)), spec).to_dict())
