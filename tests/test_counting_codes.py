"""Whole-number codes stay categories (issue 27): 51 state codes given as strata are 51 strata, on every executor.

A column of whole numbers with at most 100 distinct values is taken value by value, as text is; a
column with more (or a column of fractions with more than 20) is cut into ranges at its quantiles,
and the result says so (CountTable.binned, a line of ``luskin audit``). The counts are compared with
plain pandas, so the rule is not only compared with itself.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from luskin_cli.main import main
from luskin_core import AuditSpec, audit
from luskin_core.counting.memory import cut_into_ranges
from luskin_core.counting.sources import open_file, open_source

STATES = np.array([1, 2, 4, 5, 6, 8, 9, 10, 11, 12, 13, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29,
                   30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 44, 45, 46, 47, 48, 49, 50, 51, 53, 54, 55,
                   56])   # the 51 FIPS codes of the states and DC: 1..56 with gaps


def _frame(n: int = 20_000, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "race": rng.choice(np.array(["White", "Black", "Asian"], dtype=object), n),
        "state": rng.choice(STATES, n),
        "county": rng.integers(1, 400, n),           # whole numbers, but too many to be strata one by one
        "approved": np.where(rng.random(n) < 0.6, "yes", "no"),
    })


def _expected(frame: pd.DataFrame) -> pd.DataFrame:
    """Plain pandas: rows and approvals per race and state."""
    got = frame.assign(k=frame["approved"].eq("yes")).groupby(["race", "state"])["k"].agg(["size", "sum"])
    return got.rename(columns={"size": "n", "sum": "positives"}).reset_index()


def _counted(result) -> pd.DataFrame:
    table = result.counts.to_frame()
    table = table.loc[table["n"] > 0].copy()
    table["state"] = table["cell"].str.removeprefix("state = ").astype(int)
    return table.rename(columns={"group": "race"})[["race", "state", "n", "positives"]]


def _same(result, frame: pd.DataFrame) -> None:
    got = _counted(result).sort_values(["race", "state"]).reset_index(drop=True)
    want = _expected(frame).sort_values(["race", "state"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(got, want, check_dtype=False)


def test_state_codes_as_strata_are_51_strata_in_memory_and_in_files(tmp_path):
    frame = _frame()
    spec = AuditSpec("approved", "yes", group_by=("race",), strata=("state",))
    frame.to_parquet(tmp_path / "f.parquet")
    frame.to_csv(tmp_path / "f.csv", index=False)
    results = {"memory": audit(frame, spec), "parquet": audit(open_file(str(tmp_path / "f.parquet")), spec),
               "csv": audit(open_file(str(tmp_path / "f.csv")), spec),
               "ibis": audit(open_source(str(tmp_path / "f.parquet")), spec)}
    for name, result in results.items():
        assert len(result.counts.cell_keys) == 51, name
        assert result.counts.binned == (), name
        _same(result, frame)
    assert not cut_into_ranges(frame["state"])


def test_a_column_with_too_many_codes_is_cut_and_the_result_says_so(tmp_path, capsys):
    frame = _frame()
    assert cut_into_ranges(frame["county"])
    spec = AuditSpec("approved", "yes", group_by=("race",), strata=("county",))
    frame.to_parquet(tmp_path / "f.parquet")
    memory, parquet = audit(frame, spec), audit(open_file(str(tmp_path / "f.parquet")), spec)
    for result in (memory, parquet):
        assert len(result.counts.cell_keys) == 4
        assert [c for c, _ in result.counts.binned] == ["county"]
    assert memory.counts.binned == parquet.counts.binned
    cuts = memory.counts.binned[0][1]
    assert np.allclose(cuts, np.quantile(frame["county"], [0.25, 0.5, 0.75]), rtol=1e-3)
    assert main(["audit", "--data", str(tmp_path / "f.parquet"), "--outcome", "approved", "--positive", "yes",
                 "--groups", "race", "--stratify", "county"]) == 0
    out = capsys.readouterr().out
    assert "'county' has too many values to compare one by one" in out
    assert "--bins county=" in out


@pytest.mark.parametrize(("name", "values"), [("x", np.arange(30) * 1.5), ("x", np.arange(150)),
                                             ("age", np.arange(17, 91)), ("hours-per-week", np.arange(1, 99))])
def test_fractions_past_20_values_codes_past_100_and_amounts_are_ranges(name, values, tmp_path):
    """Amounts (a name such as age or hours) are cut whatever their number of values: a committee reads ranges."""
    series = pd.Series(np.resize(values, 1000), name=name)
    assert cut_into_ranges(series)
    frame = pd.DataFrame({name: series, "y": np.resize([0, 1], 1000), "g": np.resize(["a", "b", "c"], 1000)})
    spec = AuditSpec("y", 1, group_by=("g",), strata=(name,))
    frame.to_parquet(tmp_path / "f.parquet")
    for result in (audit(frame, spec), audit(open_file(str(tmp_path / "f.parquet")), spec)):
        assert [c for c, _ in result.counts.binned] == [name]


def test_a_file_whose_first_rows_show_few_codes_is_counted_exactly(tmp_path):
    """A file's numeric keys are read from its first rows (no scan of their distinct values); a count that finds
    other values further on is made again from the exact count: the audit is the in-memory one."""
    rng = np.random.default_rng(5)
    n = 120_000
    code = np.where(np.arange(n) < 60_000, rng.integers(0, 3, n), rng.integers(0, 150, n))
    frame = pd.DataFrame({"g": rng.choice(np.array(["a", "b"], dtype=object), n), "code": code,
                          "few": np.where(np.arange(n) < 60_000, 1, rng.integers(1, 30, n)),
                          "y": rng.choice(np.array(["yes", "no"], dtype=object), n)})
    frame.to_csv(tmp_path / "f.csv", index=False)
    for strata in (("code",), ("few",)):
        spec = AuditSpec("y", "yes", group_by=("g",), strata=strata)
        expected, got = audit(frame, spec), audit(open_file(str(tmp_path / "f.csv")), spec)
        assert got.counts.to_frame().equals(expected.counts.to_frame()), strata
        assert got.counts.binned == expected.counts.binned
    assert len(audit(frame, AuditSpec("y", "yes", group_by=("g",), strata=("few",))).counts.cell_keys) == 29


def test_a_parquet_files_footer_is_read_once_and_says_it_has_rows(tmp_path, monkeypatch):
    """An integer stratum's range and whether there is a row come from one footer query (no row-check query);
    an empty file is still refused in the same words."""
    from luskin_core.counting import files

    path = tmp_path / "codes.parquet"
    pd.DataFrame({"y": ["yes", "no"] * 50, "g": ["A", "B"] * 50, "state": np.arange(100) % 7}).to_parquet(path)
    sent: list[str] = []
    real = files.FileSource._sql

    def spy(self, sql, *args, **kwargs):
        sent.append(sql)
        return real(self, sql, *args, **kwargs)

    monkeypatch.setattr(files.FileSource, "_sql", spy)
    spec = AuditSpec("y", "yes", group_by=("g",), strata=("state",))
    result = audit(open_file(str(path)), spec)
    assert len(result.cell_names) == 7
    assert sum("parquet_metadata" in s for s in sent) == 1
    assert not any("LIMIT 1" in s for s in sent)
    empty = tmp_path / "empty.parquet"
    pd.DataFrame({"y": pd.Series([], dtype=str), "g": pd.Series([], dtype=str),
                  "state": pd.Series([], dtype="int64")}).to_parquet(empty)
    with pytest.raises(Exception, match="has no rows"):
        audit(open_file(str(empty)), spec)
