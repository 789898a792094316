"""One set of counting rules, whichever executes them (issue 15, section 2).

The rules (luskin_core.counting.rules.count_rules, expression trees) run as DuckDB SQL over an in-memory
frame, as DuckDB SQL over a CSV or Parquet file (sources.open_file, the command line's path), and as
Ibis expressions on the engines: the count tables and audits must be the same. The in-memory counts
are also checked against plain pandas, so the rules are not only compared with themselves.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_engines import _with_nan, assert_same, check_source, generated, specs_for

from luskin_cli.main import main
from luskin_core import AuditSpec, LuskinError, audit
from luskin_core.counting.data import load_csv, load_sample
from luskin_core.counting.memory import count_frame, plan_for_frame, row_group_labels, row_reasons
from luskin_core.counting.sources import FileSource, open_file, open_source
from luskin_core.spec.conditions import parse_condition

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_a_file_counted_by_sql_gives_the_in_memory_and_the_ibis_audit(suffix, tmp_path):
    adult = load_sample("adult")
    path = tmp_path / f"adult{suffix}"
    adult.to_parquet(path) if suffix == ".parquet" else adult.to_csv(path, index=False)
    frame = adult if suffix == ".parquet" else load_csv(path)
    source = open_file(str(path))
    assert isinstance(source, FileSource)
    check_source(source, frame, specs_for("adult"))
    ibis_source = open_source(str(path))
    for spec in specs_for("adult")[:4]:
        assert_same(audit(ibis_source, spec).to_dict(), audit(source, spec).to_dict(), repr(spec))


def test_generated_rows_with_missing_values_predictions_and_scores(tmp_path):
    frame = generated(60_000, seed=11)
    path = tmp_path / "gen.parquet"
    frame.to_parquet(path)
    check_source(open_file(str(path)), frame, specs_for("generated"))


def test_a_floating_nan_in_a_file_is_missing_as_in_memory(tmp_path):
    import pyarrow.parquet as pq

    frame, table = _with_nan()
    pq.write_table(table, tmp_path / "nan.parquet")
    source = open_file(str(tmp_path / "nan.parquet"))
    specs = [AuditSpec("y", 1, group_by=("g",)), AuditSpec("y", 1, group_by=("g",), strata=("age",)),
             AuditSpec("y", 1, protected=parse_condition("g == 1"), filters=(parse_condition("age > 40"),))]
    for spec in specs:
        assert_same(audit(frame, spec).to_dict(), audit(source, spec).to_dict())
    assert audit(source, specs[2]).n_excluded == 90


def _plain_counts(frame: pd.DataFrame, keep: np.ndarray, group: pd.Series, y: np.ndarray) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for label in sorted(set(group[keep])):
        rows = keep & (group == label).to_numpy()
        out[label] = [int(rows.sum()), int(y[rows].sum())]
    return out


def test_in_memory_counts_match_plain_pandas_with_text_booleans_and_spaces():
    """Text with spaces, booleans, numbers in an object column, missing values: counted as pandas reads them."""
    rng = np.random.default_rng(3)
    n = 5000
    frame = pd.DataFrame({
        "team": rng.choice(np.array([" a", "b ", "c", None], dtype=object), n),
        "flag": rng.choice(np.array([True, False]), n),
        "code": rng.choice(np.array([1, "x", 2.5, None], dtype=object), n),
        "hired": rng.choice(np.array(["yes", "no", None], dtype=object), n),
        "decided": pd.array(rng.choice(["Yes ", " no", "TRUE", "false", None], n), dtype="string"),
    })
    spec = AuditSpec("hired", "yes", group_by=("team",), filters=(parse_condition("flag == True"),),
                     population=(parse_condition("code != x"),))
    table, _ = count_frame(frame, spec)
    code = frame["code"].astype("string")
    inside = (code != "x").fillna(False).to_numpy() & code.notna().to_numpy()
    keep = inside & frame["hired"].notna().to_numpy()
    y = (frame["hired"] == "yes").fillna(False).to_numpy()
    for cell, holds in ((True, frame["flag"].to_numpy()), (False, ~frame["flag"].to_numpy())):
        want = _plain_counts(frame, keep & holds, frame["team"].fillna("Unknown"), y)
        ci = table.cell_keys.index(cell)
        got = {g: [int(table.n[i, ci]), int(table.positives[i, ci])] for i, g in enumerate(table.groups)
               if table.n[i, ci]}
        assert got == want
    assert table.n_excluded == int((~keep).sum())
    with_model = spec.with_changes(prediction="decided")
    model, _ = count_frame(frame, with_model)
    decided = frame["decided"].str.strip().str.lower().isin(["yes", "true"]).fillna(False).to_numpy()
    rows = keep & frame["decided"].notna().to_numpy()
    assert int(model.positives.sum()) == int(decided[rows].sum())
    assert int(model.tp.sum()) == int((decided & y)[rows].sum())


def test_the_model_tools_rows_are_the_count_tables_rows():
    """row_reasons and row_group_labels (the model tools' rows) run the same rules as the count table."""
    adult = load_sample("adult")
    spec = AuditSpec("income", ">50K", group_by=("race", "age"), population=(parse_condition("workclass != Private"),))
    plan = plan_for_frame(adult, spec)
    reasons = row_reasons(adult, plan)
    table, _ = count_frame(adult, spec)
    assert int((reasons != 0).sum()) == table.n_excluded
    labels = pd.Series(row_group_labels(adult.loc[reasons == 0], plan)).value_counts()
    assert {g: int(table.n[i].sum()) for i, g in enumerate(table.groups)} == labels.to_dict()


@pytest.mark.parametrize("output", ["--json", "--text"])
def test_the_command_line_counts_a_parquet_file_without_ibis_or_pandas(tmp_path, output):
    """`luskin audit` on a Parquet file runs DuckDB's SQL directly and reads its results as numpy arrays: neither
    Ibis (about a second to import) nor pandas (0.6 s) is loaded, and the numbers are the library's."""
    path = tmp_path / "adult.parquet"
    adult = load_sample("adult")
    adult.loc[:9, "race"] = None   # missing keys too
    adult.to_parquet(path)
    argv = ["audit", "--data", str(path), "--outcome", "income", "--positive", ">50K", "--groups", "race",
            "--stratify", "age", *([output] if output == "--json" else [])]
    code = ("import sys, json, io, contextlib; from luskin_cli.main import main; out = io.StringIO()\n"
            "with contextlib.redirect_stdout(out):\n"
            f"    assert main({argv!r}) == 0\n"
            "print(json.dumps({'ibis': 'ibis' in sys.modules, 'pandas': 'pandas' in sys.modules, "
            "'out': out.getvalue()}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=600,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, check=True)
    said = json.loads(done.stdout.strip().splitlines()[-1])
    assert (said["ibis"], said["pandas"]) == (False, False)
    assert said["out"] == capsys_free_output(argv)   # the same command in this process, where pandas is loaded
    if output == "--json":   # and the in-memory audit of the same rows
        document = json.loads(said["out"])
        assert document["n_rows"] == 48_842
        expected = audit(adult, AuditSpec("income", ">50K", group_by=("race",), strata=("age",))).to_dict()
        assert document["comparisons"] == json.loads(json.dumps(expected["comparisons"]))


def capsys_free_output(argv: list[str]) -> str:
    """What ``luskin`` prints for ``argv`` in this process (pandas loaded: the in-memory reading of results)."""
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0
    return out.getvalue()


@pytest.mark.parametrize(("values", "statistics", "scans"), [
    (range(20), True, False),        # codes 0-19: the footer says at most 20 values, no count of them
    ((0, 7, 100), True, False),      # three values far apart: the footer cannot tell; the first rows do (checked
                                     # by the count itself), so no count of them either
    (range(20), False, False),       # a writer that keeps no statistics: the first rows tell
    (range(60), True, False),        # codes 0-59: at most 100 codes, by the footer: taken value by value
])
def test_a_parquet_files_statistics_spare_the_count_of_a_codes_distinct_values(tmp_path, values, statistics, scans):
    """An integer strata or group column of at most 20 values is taken value by value; a Parquet file's row-group
    statistics (its footer) can show it without a scan of the rows. The audit is the same as in memory either way,
    also with a population that leaves some values out."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(3)
    n = 30_000
    frame = pd.DataFrame({"g": rng.choice(np.array(["a", "b", "c"], dtype=object), n),
                          "code": rng.choice(np.array(list(values)), n),
                          "y": rng.choice(np.array(["yes", "no"], dtype=object), n)})
    frame.loc[:40, "code"] = None
    frame["code"] = frame["code"].astype("Int64")
    path = tmp_path / "codes.parquet"
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path, row_group_size=7_000,
                   write_statistics=statistics)
    source = open_file(str(path))
    seen: list[str] = []
    real = source._sql

    def recorded(sql: str, *args, **kwargs):
        seen.append(sql)
        return real(sql, *args, **kwargs)

    source._sql = recorded   # type: ignore[method-assign]
    for population in ((), (parse_condition("code != 7"),)):
        spec = AuditSpec("y", "yes", group_by=("g",), strata=("code",), population=population)
        expected = audit(frame, spec)
        got = audit(source, spec)
        assert got.counts.to_frame().equals(expected.counts.to_frame())
        assert [c.cell for c in got.comparisons] == [c.cell for c in expected.comparisons]
    assert any("DISTINCT" in sql and "count(" in sql and "parquet_metadata" not in sql for sql in seen) == scans


def test_in_memory_distinct_counts_decide_as_the_exact_count_would():
    """FrameFacts.n_distinct may answer with the range of integer codes: every decision it feeds (more than 20
    values, at most 2) is the exact count's, for codes, offsets, negatives, gaps, IDs and a population."""
    from luskin_core.counting.memory import FrameFacts

    rng = np.random.default_rng(11)
    columns = {
        "codes": rng.integers(0, 20, 5000), "wide": rng.integers(0, 21, 5000), "two": rng.integers(0, 2, 5000),
        "years": rng.integers(1990, 2010, 5000), "negative": rng.integers(-30, -10, 5000),
        "gaps": rng.choice([0, 5, 1000], 5000), "ids": rng.integers(10**9, 10**9 + 10**7, 5000),
        "one": np.full(5000, 7), "small": rng.integers(0, 3, 5000).astype(np.uint8),
    }
    frame = pd.DataFrame(columns)
    for population in ((), (parse_condition("codes < 3"),)):
        facts = FrameFacts(frame, population)
        rows = facts.rows
        for column in columns:
            exact = rows[column].nunique()
            for cap in (3, 21):
                assert (facts.n_distinct(column, cap) > cap - 1) == (exact > cap - 1), (column, cap, population)
                assert facts.n_distinct(column, cap) >= min(exact, cap), (column, cap)


@pytest.mark.parametrize("with_missing", [False, True])
def test_a_files_most_frequent_values_are_read_without_pandas_alike(tmp_path, with_missing):
    """FileSource.value_counts (the values a message lists) from DuckDB's numpy results: most frequent first, then
    by value, missing last; DuckDB gives a plain array where nothing is missing and a masked one otherwise."""
    frame = pd.DataFrame({"race": ["b", "a", "c", "a", "b", "a"] * 50, "n": [3, 1, 2, 1, 3, 1] * 50})
    if with_missing:
        frame.loc[:119, ["race", "n"]] = None
    path = tmp_path / "values.parquet"
    frame.to_parquet(path)
    source = open_file(str(path))
    for column in ("race", "n"):
        got = source.value_counts(column, 10)
        counted = frame[column].value_counts(dropna=False)
        expected = sorted(((None if pd.isna(v) else v, int(c)) for v, c in counted.items()),
                          key=lambda vc: (-vc[1], vc[0] is None, vc[0] if vc[0] is not None else 0))
        assert list(zip(got["value"].tolist(), got["count"].tolist())) == expected, column


def test_a_file_that_is_not_a_table_is_a_plain_sentence(tmp_path, capsys):
    bad = tmp_path / "broken.parquet"
    bad.write_bytes(b"PAR1 this is not parquet")
    with pytest.raises(LuskinError, match="could not be read as a table"):
        open_file(str(bad))
    assert main(["audit", "--data", str(bad), "--outcome", "y", "--positive", "1", "--groups", "g"]) == 2
    err = capsys.readouterr().err
    assert "could not be read as a table" in err and "Traceback" not in err
