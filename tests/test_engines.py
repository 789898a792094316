"""Every engine (DuckDB, PostgreSQL, Spark) gives the in-memory path's count table and audit, exactly.

Real components: DuckDB embedded, a throwaway PostgreSQL cluster and Spark in local mode
(tests/engine_servers.py). Counts must be equal; float sums agree to 1e-12 (relative).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest
from engine_servers import load_postgres

from luskin_core import AuditSpec, LuskinError, audit
from luskin_core.counting.count_table import CountTable
from luskin_core.counting.data import load_sample
from luskin_core.counting.executor import count_plan
from luskin_core.counting.memory import count_frame
from luskin_core.counting.sources import Source, open_file, open_source
from luskin_core.spec.conditions import parse_condition


def engine_table(source: Any, spec: AuditSpec) -> CountTable:
    """The count table of ``spec`` counted by ``source``, through the one path every executor takes."""
    plan, raw = count_plan(source, spec)
    return CountTable.from_raw(raw, plan)

N_BIG = 1_000_000


def generated(n: int, seed: int = 7) -> pd.DataFrame:
    """6 groups (with missing values) x 20 strata, a sex column with an unknown spelling, a numeric column with many values, a model's decisions."""
    rng = np.random.default_rng(seed)
    group = rng.choice(np.array(["A", "B", "C", "D", "E", "F"], dtype=object), n, p=[.3, .25, .2, .15, .07, .03])
    group[rng.random(n) < 0.01] = None
    stratum = rng.integers(0, 20, n)
    rate = 0.2 + 0.03 * (np.searchsorted(["A", "B", "C", "D", "E", "F"], np.where(group == None, "A", group))
                         ) + 0.01 * stratum
    outcome = np.where(rng.random(n) < rate, "yes", "no").astype(object)
    outcome[rng.random(n) < 0.005] = None
    score = np.round(rng.normal(50 + 10 * rate, 15, n), 3)
    return pd.DataFrame({
        "group-name": pd.array(group, dtype="string"),
        # "Not disclosed": in neither class of a protected condition (tests/test_unknown_values.py)
        "sex": pd.array(rng.choice(["F", "M", "Not disclosed"], n, p=[.49, .49, .02]), dtype="string"),
        "stratum code": stratum,
        "income level": np.round(rng.lognormal(10, 0.6, n), 2),
        "outcome": pd.array(outcome, dtype="string"),
        "pred": (rng.random(n) < rate).astype(np.int64),
        "score": score,
    })


def specs_for(name: str) -> list[AuditSpec]:
    c = parse_condition
    if name == "adult":
        return [
            AuditSpec("income", ">50K", protected=c("race == White"), filters=(c("education-num > 10"),)),
            AuditSpec("income", ">50K", protected=c("race == White")),
            AuditSpec("income", ">50K", group_by=("race",)),
            AuditSpec("income", ">50K", group_by=("race", "sex"), strata=("education-num",)),
            AuditSpec("income", ">50K", group_by=("sex",), strata=("age",), population=(c("workclass != Private"),)),
            AuditSpec("income", ">50K", group_by=("age", "native-country"), strata=("relationship", "sex")),
            AuditSpec("hours-per-week", outcome_type="score", group_by=("race",), strata=("sex",)),
            # three columns crossed, the user's cut points on a group and a stratum, a named reference
            AuditSpec("income", ">50K", group_by=("race", "sex", "age"), strata=("hours-per-week",),
                      bins={"age": (30, 50), "hours-per-week": (40.5,)}, reference="White × Male × 30 ≤ age < 50"),
            # several positive values, counted together (issue 46): text, and numbers compared as numbers
            AuditSpec("marital-status", ("Divorced", "Separated", "Widowed"), group_by=("race",), strata=("sex",),
                      outcome_is="adverse"),
            AuditSpec("education-num", (13, 14.0, 16), protected=c("sex == Female"), filters=(c("age >= 40"),)),
        ]
    if name == "compas":
        return [
            AuditSpec("two_year_recid", 1, protected=c("race == African-American"),
                      filters=(c("priors_count > 3"),)),
            AuditSpec("two_year_recid", 1, group_by=("race", "sex"), strata=("age_cat",)),
            # a score read as decisions at a cut-off, judged on both error rates (equalized odds)
            AuditSpec("two_year_recid", 1, group_by=("race",), strata=("priors_count",), prediction="decile_score",
                      prediction_cutoff=5, criterion="odds"),
            AuditSpec("two_year_recid", 1, group_by=("sex",), prediction="high", criterion="opportunity"),
            AuditSpec("two_year_recid", 1, group_by=("race",), strata=("sex",), prediction="flagged",
                      criterion="precision"),
            AuditSpec("decile_score", outcome_type="score", group_by=("race",), strata=("c_charge_degree",)),
            AuditSpec("decile_score", (8, 9, 10), group_by=("race",), strata=("sex",), outcome_is="adverse"),
        ]
    return [
        AuditSpec("outcome", "yes", protected=c("group-name == A"), filters=(c("stratum code < 10"),)),
        AuditSpec("outcome", "yes", group_by=("group-name",)),
        # "Unkown" (a typo) is no value of sex: said (unknown_values_not_found) on every engine alike
        AuditSpec("outcome", "yes", protected=c("sex == F"), unknown_values=("Unkown",)),
        AuditSpec("outcome", "yes", group_by=("group-name", "sex"), strata=("stratum code",), prediction="pred"),
        AuditSpec("outcome", "yes", group_by=("group-name",), strata=("income level",)),
        AuditSpec("score", outcome_type="score", group_by=("group-name",), strata=("stratum code",)),
        AuditSpec("outcome", "yes", group_by=("group-name", "sex", "income level"), bins={"income level": (15000,)},
                  strata=("stratum code",), n_bins=3),
        AuditSpec("sex", ("F", "Not disclosed"), group_by=("group-name",), strata=("stratum code",)),
        AuditSpec("stratum code", (1, 3, 5), protected=c("group-name == A")),
        # a numeric code named "not known" (issue 45: race 9, age 999): its rows in neither class, on every engine
        # (77 is no code of the column: said as not found, as a word would be)
        AuditSpec("outcome", "yes", protected=c("stratum code <= 4"), unknown_values=("19", "7.0", "77")),
    ]


def amount_specs(name: str) -> list[AuditSpec]:
    """Amount audits (means, medians and their intervals per group and cell) on each data set."""
    c = parse_condition
    if name == "adult":
        return [AuditSpec("hours-per-week", outcome_type="amount", group_by=("race",), strata=("sex",)),
                AuditSpec("capital-gain", outcome_type="amount", protected=c("sex == Female"),
                          filters=(c("education-num > 10"),))]
    if name == "compas":
        return [AuditSpec("priors_count", outcome_type="amount", group_by=("race", "sex"), strata=("age_cat",))]
    return [AuditSpec("income level", outcome_type="amount", group_by=("group-name",), strata=("stratum code",)),
            AuditSpec("score", outcome_type="amount", protected=c("sex == F"), population=(c("stratum code < 15"),))]


def check_amounts(source: Source, frame: pd.DataFrame, specs: list[AuditSpec]) -> None:
    """The engine's amount table equals the in-memory one: sizes and rows receiving an amount exactly, means and
    variances to 1e-12, smallest, largest and every order statistic (the medians, the intervals) exactly."""
    from luskin_core.counting.executor import counted_amounts
    from luskin_core.stats.amounts import needed_ranks

    for spec in specs:
        want, have = counted_amounts(frame, spec, needed_ranks), counted_amounts(source, spec, needed_ranks)
        assert want.groups == have.groups and want.counts.cell_labels == have.counts.cell_labels, repr(spec)
        assert (want.n == have.n).all() and (want.counts.positives == have.counts.positives).all(), repr(spec)
        assert_same(want.mean.tolist(), have.mean.tolist(), repr(spec))
        assert_same(want.var.tolist(), have.var.tolist(), repr(spec))
        for name in ("minimum", "maximum"):   # exact values (NaN where a cell is empty)
            w, h = getattr(want, name), getattr(have, name)
            assert ((w == h) | (np.isnan(w) & np.isnan(h))).all(), (name, repr(spec))
        assert want.order == have.order, repr(spec)


def _compas() -> pd.DataFrame:
    frame = load_sample("compas")
    keep = [c for c in ("race", "sex", "age_cat", "priors_count", "two_year_recid", "score_text", "decile_score",
                        "c_charge_degree") if c in frame.columns]
    frame = frame[keep].copy()
    # a model's decisions as booleans and as yes/no words in mixed spelling (read alike on every engine)
    frame["high"] = frame["decile_score"] >= 5
    frame["flagged"] = pd.array(np.where(frame["decile_score"] >= 5, " Yes", "no"), dtype="string")
    return frame


@pytest.fixture(scope="module")
def datasets() -> dict[str, pd.DataFrame]:
    return {"adult": load_sample("adult"), "compas": _compas(), "generated": generated(N_BIG)}


def assert_same(a: Any, b: Any, path: str = "") -> None:
    """Equal, with floats to 1e-12 (relative) and NaN equal to NaN."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and set(a) == set(b), path
        for key in a:
            assert_same(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and not isinstance(a, bool):
        assert isinstance(b, (int, float)), path
        if math.isnan(a):
            assert math.isnan(b), path
        else:
            assert b == pytest.approx(a, rel=1e-12, abs=1e-12), path
    else:
        assert a == b, path


def check_source(source: Source, frame: pd.DataFrame, specs: list[AuditSpec]) -> None:
    """The engine's audit equals the in-memory one: its count table (labelled, with the rows left out) and every
    number of the result. The audit counts once; the source's own ``count_table`` is asked for the first spec
    only (it is the audit's count without the group names; asking it for every spec counted everything twice)."""
    for i, spec in enumerate(specs):
        expected = audit(frame, spec)
        got = audit(source, spec)
        assert expected.counts is not None and got.counts is not None
        want, have = expected.counts.to_frame(), got.counts.to_frame()
        assert list(want.columns) == list(have.columns)
        assert_same(want.to_dict("list"), have.to_dict("list"), repr(spec))
        assert got.counts.excluded == expected.counts.excluded and got.counts.n_excluded == expected.counts.n_excluded
        assert_same(expected.to_dict(), got.to_dict(), repr(spec))
        if i == 0:
            direct, _ = count_frame(frame, spec)
            assert_same(direct.to_frame().to_dict("list"), engine_table(source, spec).to_frame().to_dict("list"))


# ------------------------------------------------------------------------------------------
# DuckDB: in memory, Parquet, CSV (gzip), a database file
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["adult", "compas", "generated"])
def test_duckdb_parquet_matches_in_memory(name, datasets, tmp_path):
    frame = datasets[name]
    path = tmp_path / f"{name}.parquet"
    frame.to_parquet(path)
    check_source(open_source(str(path)), frame, specs_for(name))
    # several positive values on DuckDB's SQL over the file too (the command line's path)
    check_source(open_file(str(path)), frame, [s for s in specs_for(name) if isinstance(s.positive, tuple)])
    check_amounts(open_source(str(path)), frame, amount_specs(name))   # through Ibis
    check_amounts(open_file(str(path)), frame, amount_specs(name))     # DuckDB's SQL on the file (the command line's)


def test_duckdb_in_memory_and_folder_and_database(datasets, tmp_path):
    import duckdb

    frame = datasets["adult"]
    check_source(Source.from_frame(frame), frame, specs_for("adult")[:3])
    check_amounts(Source.from_frame(frame), frame, amount_specs("adult"))
    folder = tmp_path / "parts"
    folder.mkdir()
    frame.iloc[:10000].to_parquet(folder / "a.parquet")
    frame.iloc[10000:].to_parquet(folder / "b.parquet")
    check_source(open_source(str(folder)), frame, specs_for("adult")[:4])
    db = tmp_path / "adult.duckdb"
    with duckdb.connect(str(db)) as con:
        con.register("frame", frame)
        con.execute("CREATE TABLE people AS SELECT * FROM frame")
    source = open_source(str(db), "people")
    assert source.n_rows() == len(frame) and "education-num" in source.columns()
    check_source(source, frame, specs_for("adult")[3:5])
    check_amounts(source, frame, amount_specs("adult")[:1])


@pytest.mark.parametrize("suffix", [".csv", ".csv.gz"])
def test_csv_matches_the_uploaded_file(tmp_path, suffix):
    """The engine reading a CSV (plain or gzip) counts what the in-memory path counts after loading the same file."""
    from luskin_core.counting.data import load_csv

    frame = generated(50_000, seed=3)
    path = tmp_path / f"gen{suffix}"
    frame.to_csv(path, index=False)
    check_source(open_source(str(path)), load_csv(path), specs_for("gen"))
    check_amounts(open_file(str(path)), load_csv(path), amount_specs("gen"))


def test_value_counts_and_sample(datasets, tmp_path):
    frame = datasets["generated"]
    path = tmp_path / "gen.parquet"
    frame.to_parquet(path)
    source = open_source(str(path))
    counts = source.value_counts("group-name", 10)
    want = frame["group-name"].value_counts(dropna=False)
    assert dict(zip(counts["value"], counts["count"])) == {
        (None if pd.isna(k) else k): v for k, v in want.items()}
    spec = specs_for("gen")[1]
    sample, info = source.sample(spec, cap=20_000, seed=1)
    assert info.sampled and info.n_table == N_BIG and info.n_sample == len(sample)
    assert 19_000 <= len(sample) <= 20_100
    again, _ = source.sample(spec, cap=20_000, seed=1)
    pd.testing.assert_frame_equal(sample, again)
    share = sample["group-name"].value_counts(normalize=True, dropna=False)
    full = frame["group-name"].value_counts(normalize=True, dropna=False)
    assert np.allclose(share.sort_index().to_numpy(), full.sort_index().to_numpy(), atol=0.01)
    whole, info = open_source(str(path)).sample(spec, cap=2 * N_BIG)
    assert not info.sampled and len(whole) == N_BIG


def test_bad_files_are_plain_sentences(tmp_path):
    with pytest.raises(LuskinError, match="no file or folder"):
        open_source(str(tmp_path / "nope.parquet"))
    junk = tmp_path / "junk.parquet"
    junk.write_bytes(b"\x00\x01 not parquet" * 100)
    with pytest.raises(LuskinError, match="could not be read as a table"):
        open_source(str(junk))
    empty = tmp_path / "empty.parquet"
    generated(10).iloc[:0].to_parquet(empty)
    with pytest.raises(LuskinError, match="has no rows"):
        audit(open_source(str(empty)), specs_for("gen")[1])
    small = tmp_path / "small.parquet"
    generated(100).to_parquet(small)
    source = open_source(str(small))
    with pytest.raises(LuskinError, match="no outcome column named 'outcom'"):
        engine_table(source, AuditSpec("outcom", "yes", group_by=("sex",)))
    binary = tmp_path / "image.csv"
    binary.write_bytes(bytes(range(256)) * 50)
    with pytest.raises(LuskinError, match="could not be read as a table"):
        audit(open_source(str(binary)), specs_for("gen")[1])
    (tmp_path / "emptydir").mkdir()
    with pytest.raises(LuskinError, match="holds no Parquet files"):
        open_source(str(tmp_path / "emptydir"))


def test_duckdb_draws_no_progress_bar_on_stdout(tmp_path):
    """DuckDB draws a progress bar on stdout for a query over 2 s: it would land in `luskin audit --json`.

    Checked in a fresh Python writing to a file, as the command line does (under pytest's capture
    DuckDB leaves the bar off by itself).
    """
    import subprocess
    import sys

    import duckdb

    frame = generated(2_000)
    frame.to_parquet(tmp_path / "gen.parquet")
    frame.to_csv(tmp_path / "gen.csv", index=False)
    with duckdb.connect(str(tmp_path / "gen.duckdb")) as con:
        con.register("frame", frame)
        con.execute("CREATE TABLE gen AS SELECT * FROM frame")
    code = f"""
import duckdb, pandas as pd
from luskin_core.counting.sources import Source, open_file, open_source
setting = "SELECT current_setting('enable_progress_bar')"
print("plain DuckDB", duckdb.connect().execute(setting).fetchall()[0][0])
for location, table in (("gen.parquet", None), ("gen.csv", None), ("gen.duckdb", "gen")):
    source = open_source({str(tmp_path)!r} + "/" + location, table)
    print(location, source.backend.con.execute(setting).fetchall()[0][0])
print("frame", Source.from_frame(pd.DataFrame({{"a": [1]}})).backend.con.execute(setting).fetchall()[0][0])
"""
    out = tmp_path / "out.txt"
    with out.open("w") as stdout:
        subprocess.run([sys.executable, "-c", code], stdout=stdout, check=True)
    lines = out.read_text().splitlines()
    assert lines == ["plain DuckDB True", "gen.parquet False", "gen.csv False", "gen.duckdb False", "frame False"]


# ------------------------------------------------------------------------------------------
# One scan: the 20-values rule read from the first rows, checked by the counting query
# ------------------------------------------------------------------------------------------
def _top_heavy(n: int = 6000, head: int = 5000, seed: int = 5) -> pd.DataFrame:
    """The first ``head`` rows show few values of the numeric columns; the rows after them show others."""
    rng = np.random.default_rng(seed)
    tail = n - head
    frame = pd.DataFrame({
        "group": rng.choice(["A", "B", "C"], n),
        "wide": np.r_[rng.choice([0, 5], head), rng.integers(0, 31, tail)],  # 31 values: binned
        "narrow": np.r_[rng.choice([0, 5], head), rng.integers(0, 6, tail)],  # 1..4 inside the range seen
        "far": np.r_[rng.choice([1, 2], head), rng.choice([1, 2, 900], tail)],  # 900 outside the range seen
        "half": np.r_[rng.choice([1.5, 2.5], head), rng.choice([1.5, 2.5, 3.5], tail)],  # floats
        "hidden": np.r_[rng.choice([1, 2], head), rng.integers(100, 130, tail)],  # others only where y is missing
        "region": np.r_[["north"] * head, rng.choice(["north", "south"], tail)],
        "y": rng.choice(["yes", "no"], n).astype(object),
    })
    tail_rows = np.arange(head, n)
    frame.loc[tail_rows, "y"] = None  # every later row lacks the outcome: left out, but in the population
    frame.loc[tail_rows[: tail // 2], "y"] = rng.choice(["yes", "no"], tail // 2)
    frame.loc[(frame.index >= head) & frame["y"].notna(), "hidden"] = 1
    frame["y"] = frame["y"].astype("string")
    return frame


def _queries(source: Source, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every query the source sends from now on, as SQL-ish text."""
    sent: list[str] = []
    run = source._run

    def counted(expr: Any, *, fetch: bool = False) -> Any:
        sent.append(repr(expr))
        return run(expr, fetch=fetch)

    monkeypatch.setattr(source, "_run", counted)
    return sent


def test_one_scan_when_the_first_rows_show_every_value(datasets, tmp_path, monkeypatch):
    frame = datasets["generated"]
    path = tmp_path / "gen.parquet"
    frame.to_parquet(path)
    source = open_source(str(path))
    sent = _queries(source, monkeypatch)
    spec = AuditSpec("outcome", "yes", group_by=("group-name",), strata=("stratum code",))
    table = engine_table(source, spec)
    assert len(sent) == 2  # the first rows (LIMIT), then the counts: the table is read once
    expected, _ = count_frame(frame, spec)
    assert_same(expected.to_frame().to_dict("list"), table.to_frame().to_dict("list"))
    assert source.n_rows() == len(frame) and len(sent) == 2  # the row count came with the counts


@pytest.mark.parametrize("column", ["wide", "narrow", "far", "half", "hidden"])
def test_first_rows_that_mislead_still_give_the_exact_plan(column, tmp_path, monkeypatch):
    from luskin_core.counting import ibis_facts

    monkeypatch.setattr(ibis_facts, "LOOK_ROWS", 100)
    frame = _top_heavy()
    path = tmp_path / "top.parquet"
    frame.to_parquet(path)
    source = open_source(str(path))
    sent = _queries(source, monkeypatch)
    for spec in (AuditSpec("y", "yes", group_by=("group",), strata=(column,)),
                 AuditSpec("y", "yes", group_by=(column,)),
                 AuditSpec("y", "yes", group_by=("group",), strata=(column,), population=(parse_condition(
                     "region == north"),))):
        expected, _ = count_frame(frame, spec)
        before = len(sent)
        got = engine_table(source, spec)
        assert len(sent) - before >= 3, spec  # the counts found values the first rows did not show: counted again
        assert_same(expected.to_frame().to_dict("list"), got.to_frame().to_dict("list"), f"{column} {spec!r}")
        assert got.excluded == expected.excluded and got.n_excluded == expected.n_excluded
        assert_same(audit(frame, spec).to_dict(), audit(source, spec).to_dict(), repr(spec))


def test_values_the_first_rows_did_not_show_cannot_multiply_the_table(tmp_path, monkeypatch):
    from luskin_core.counting import ibis_facts
    from luskin_core.counting.plan import build_plan

    monkeypatch.setattr(ibis_facts, "LOOK_ROWS", 100)
    frame = _top_heavy()
    tail = frame.index >= 5000
    frame.loc[tail, "far"] = np.arange(10_000, 10_000 + int(tail.sum()))  # a thousand values never seen
    frame.loc[tail, "half"] = np.arange(int(tail.sum())) + 0.25
    path = tmp_path / "top.parquet"
    frame.to_parquet(path)
    source = open_source(str(path))
    for column in ("far", "half"):
        spec = AuditSpec("y", "yes", group_by=("group",), strata=(column,))
        facts = source._facts(spec)
        assert facts.look(source._numeric_keys(spec))
        plan = build_plan(spec, facts)
        assert set(facts.assumed) == {column}
        raw = source.count(plan, assumed=dict(facts.assumed))
        assert not raw.assumptions_hold and len(raw) <= 3 * 3 + 1, column  # groups x (2 seen + 1) + left out
        expected, _ = count_frame(frame, spec)
        assert_same(expected.to_frame().to_dict("list"), engine_table(source, spec).to_frame().to_dict("list"))


def test_values_outside_the_population_do_not_cost_a_second_scan(tmp_path, monkeypatch):
    from luskin_core.counting import ibis_facts

    monkeypatch.setattr(ibis_facts, "LOOK_ROWS", 100)
    frame = _top_heavy()
    south = frame["region"] == "south"
    frame.loc[~south, "narrow"] = frame.loc[~south, "narrow"].where(frame["narrow"].isin([0, 5]), 0)
    frame.loc[~south, "far"] = frame.loc[~south, "far"].where(frame["far"].isin([1, 2]), 1)
    frame.loc[south, "narrow"] = 3  # values the first rows never show, only outside the population
    frame.loc[south, "far"] = 77
    path = tmp_path / "top.parquet"
    frame.to_parquet(path)
    source = open_source(str(path))
    sent = _queries(source, monkeypatch)
    north = (parse_condition("region == north"),)
    for column in ("narrow", "far"):
        frame_north = frame[frame["region"] == "north"]
        assert frame_north[column].nunique() == 2 and frame[column].nunique() > 2
        spec = AuditSpec("y", "yes", group_by=("group",), strata=(column,), population=north)
        expected, _ = count_frame(frame, spec)
        got = engine_table(source, spec)
        assert_same(expected.to_frame().to_dict("list"), got.to_frame().to_dict("list"), column)
        assert got.excluded == expected.excluded and got.n_excluded == expected.n_excluded
    assert len(sent) == 4


# ------------------------------------------------------------------------------------------
# PostgreSQL
# ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def postgres_tables(postgres_url, datasets):
    for name, frame in datasets.items():
        load_postgres(postgres_url, name, frame)
    return postgres_url


@pytest.mark.parametrize("name", ["adult", "compas", "generated"])
def test_postgres_matches_in_memory(name, postgres_tables, datasets):
    check_source(open_source(postgres_tables, name), datasets[name], specs_for(name if name != "generated" else "gen"))
    check_amounts(open_source(postgres_tables, name), datasets[name], amount_specs(name))


def test_postgres_query_and_bad_sources(postgres_tables, datasets):
    from urllib.parse import urlsplit

    url = postgres_tables
    adult = datasets["adult"]
    query = open_source(url, 'SELECT * FROM adult WHERE "sex" = \'Female\'')
    spec = AuditSpec("income", ">50K", group_by=("race",))
    assert_same(audit(adult[adult["sex"] == "Female"].reset_index(drop=True), spec).to_dict(),
                audit(query, spec).to_dict())
    with pytest.raises(LuskinError, match="no table 'missing'"):
        open_source(url, "missing")
    lacking = open_source(url, "SELECT race, sex FROM adult")
    with pytest.raises(LuskinError, match="no outcome column named 'income'"):
        audit(lacking, spec)
    with pytest.raises(LuskinError, match="could not be run"):
        open_source(url, "SELECT nothing FROM adult")
    secret = "s3cret-pw"
    with pytest.raises(LuskinError) as error:
        open_source(f"postgresql://luskin:{secret}@127.0.0.1:1/postgres", "adult")
    assert "does not answer" in str(error.value) and secret not in str(error.value)
    with pytest.raises(LuskinError) as error:
        open_source(url.replace(f":{urlsplit(url).password}@", f":{secret}@"), "adult")
    assert "refused the user name or password" in str(error.value) and secret not in str(error.value)
    source = open_source(url, "adult")
    assert urlsplit(url).password not in source.name and urlsplit(url).password not in repr(source)


# ------------------------------------------------------------------------------------------
# Spark (local mode)
# ------------------------------------------------------------------------------------------
N_SPARK = N_BIG  # 1M rows: about 40 s in Spark local[1] on 2 shared cores (200k took 13 s)


@pytest.mark.parametrize("name", ["adult", "compas", "generated"])
def test_spark_matches_in_memory(name, spark_session, datasets, tmp_path):
    frame = datasets[name] if name != "generated" else datasets[name].iloc[:N_SPARK].reset_index(drop=True)
    path = tmp_path / f"{name}.parquet"
    frame.to_parquet(path)
    spark_session.read.parquet(str(path)).createOrReplaceTempView(f"t_{name}")  # type: ignore[attr-defined]
    check_source(open_source("spark:", f"t_{name}"), frame, specs_for(name if name != "generated" else "gen"))
    if name == "generated":   # Spark sorts each group's rows for the medians: 200,000 rows keep the test short
        frame = frame.iloc[:200_000].reset_index(drop=True)
        frame.to_parquet(tmp_path / "amounts.parquet")
        spark_session.read.parquet(str(tmp_path / "amounts.parquet")).createOrReplaceTempView("t_amounts")  # type: ignore[attr-defined]
        check_amounts(open_source("spark:", "t_amounts"), frame, amount_specs(name))
    else:
        check_amounts(open_source("spark:", f"t_{name}"), frame, amount_specs(name))


def test_spark_parquet_path_and_missing_table(spark_session, datasets, tmp_path):
    frame = datasets["adult"]
    path = tmp_path / "adult.parquet"
    frame.to_parquet(path)
    source = open_source(f"spark:{path}")
    assert source.n_rows() == len(frame)
    check_source(source, frame, specs_for("adult")[3:4])
    with pytest.raises(LuskinError, match="no table or view named 'nope'"):
        open_source("spark:", "nope")



# ------------------------------------------------------------------------------------------
# The command line
# ------------------------------------------------------------------------------------------
def test_cli_audits_parquet_in_the_engine_and_samples_for_models(datasets, tmp_path, capsys):
    import json

    from luskin_cli.main import main

    path = tmp_path / "adult.parquet"
    datasets["adult"].to_parquet(path)
    args = ["--outcome", "income", "--positive", ">50K", "--groups", "race", "--stratify", "education-num", "--json"]
    assert main(["audit", "--data", str(path), *args]) == 0
    engine = json.loads(capsys.readouterr().out)
    spec = AuditSpec("income", ">50K", group_by=("race",), strata=("education-num",))
    assert_same(json.loads(json.dumps(audit(datasets["adult"], spec).to_dict(), default=str))["comparisons"],
                engine["comparisons"])
    assert main(["thresholds", "--data", str(path), "--outcome", "income", "--positive", ">50K",
                 "--protected", "race == White", "--sample-cap", "5000"]) == 0
    captured = capsys.readouterr()
    assert "Sample: 5,000 of 48,842 rows" in captured.err  # exactly the cap: every stratum has its share
    assert main(["thresholds", "--data", str(path), "--outcome", "income", "--positive", ">50K",
                 "--protected", "race == White", "--sample-cap", "5000", "--seed", "3", "--json"]) == 0
    said = json.loads(capsys.readouterr().out)["sample"]
    assert said == {"n_sample": 5000, "n_table": 48842, "seed": 3, "sampled": True}
    assert main(["audit", "--data", str(tmp_path / "missing.duckdb"), "--table", "t", *args]) != 0
    assert "no file or folder" in capsys.readouterr().err


def test_postgres_value_counts_and_sample(postgres_tables, datasets):
    frame = datasets["generated"]
    source = open_source(postgres_tables, "generated")
    counts = source.value_counts("group-name", 10)
    want = frame["group-name"].value_counts(dropna=False)
    assert dict(zip(counts["value"], counts["count"])) == {(None if pd.isna(k) else k): v for k, v in want.items()}
    spec = specs_for("gen")[1]
    sample, info = source.sample(spec, cap=20_000, seed=3)
    assert info.sampled and info.n_table == N_BIG and 19_000 <= len(sample) <= 20_100
    again, _ = source.sample(spec, cap=20_000, seed=3)
    pd.testing.assert_frame_equal(sample, again)


# ------------------------------------------------------------------------------------------
# NaN stored as a value (not NULL) in floating columns: missing, as pandas reads it
# ------------------------------------------------------------------------------------------
def _with_nan(n: int = 4000, seed: int = 0) -> tuple[pd.DataFrame, Any]:
    """A frame and the same rows as an Arrow table whose floating columns hold real NaN values (pandas
    turns NaN into NULL when it writes Parquet; Spark, PostgreSQL and other writers keep it)."""
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    g = rng.integers(0, 3, n).astype(float)
    g[:50] = np.nan
    g[40:50] = -np.nan  # a NaN with its sign bit set prints as '-nan'
    age = rng.normal(40, 10, n)
    age[50:90] = np.nan
    y = (rng.random(n) < 0.3 + 0.1 * np.nan_to_num(g)).astype(np.int64)
    table = pa.table({"g": pa.array(g, from_pandas=False), "age": pa.array(age, from_pandas=False), "y": y})
    assert table.column("g").null_count == 0
    return pd.DataFrame({"g": g, "age": age, "y": y}), table


NAN_SPECS = [
    AuditSpec("y", 1, group_by=("g",)),
    AuditSpec("y", 1, group_by=("g",), strata=("age",)),                       # a binned float column
    AuditSpec("y", 1, protected=parse_condition("g == 1"), filters=(parse_condition("age > 40"),)),
]


def test_nan_values_are_missing_in_duckdb_as_in_memory(tmp_path):
    import pyarrow.parquet as pq

    frame, table = _with_nan()
    pq.write_table(table, tmp_path / "nan.parquet")
    source = open_source(str(tmp_path / "nan.parquet"))
    for spec in NAN_SPECS:
        assert_same(audit(frame, spec).to_dict(), audit(source, spec).to_dict())
    assert audit(source, NAN_SPECS[2]).n_excluded == 90   # NaN in the group or the filter column: left out


def test_nan_values_are_missing_in_postgres_as_in_memory(postgres_url):
    from urllib.parse import parse_qs, urlsplit

    import ibis  # type: ignore[import-untyped]

    frame, table = _with_nan()
    host = parse_qs(urlsplit(postgres_url).query)["host"][0]
    con = ibis.postgres.connect(user="luskin", password=urlsplit(postgres_url).password, host=host,
                                database="postgres")
    stored = con.create_table("with_nan", ibis.memtable(table))
    assert int(stored["g"].isnan().sum().execute()) == 50  # stored as NaN, not as NULL
    con.disconnect()
    source = open_source(postgres_url, "with_nan")
    for spec in NAN_SPECS:
        assert_same(audit(frame, spec).to_dict(), audit(source, spec).to_dict())


def test_nan_values_are_missing_in_spark_as_in_memory(spark_session, tmp_path):
    import pyarrow.parquet as pq

    frame, table = _with_nan()
    pq.write_table(table, tmp_path / "nan.parquet")
    spark_session.read.parquet(str(tmp_path / "nan.parquet")).createOrReplaceTempView("with_nan")  # type: ignore[attr-defined]
    source = open_source("spark:", "with_nan")
    for spec in NAN_SPECS:
        assert_same(audit(frame, spec).to_dict(), audit(source, spec).to_dict())
