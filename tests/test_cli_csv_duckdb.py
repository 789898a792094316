"""``luskin audit`` counts a CSV file in DuckDB (files.open_csv_audited) and prints, word for word, what the
in-memory route (the upload reader, then check_spec on its frame) prints: on every file of the bad-file corpus,
on Adult and COMPAS written as CSV, and on files made to trip DuckDB's reading (codes with leading zeros,
"1" beside "1.0", true/false, dates, blanks or Latin-1 past the first 64 KB, a value DuckDB casts otherwise).

Each command runs twice in this process: with ``luskin_cli.engine.DUCKDB_CSV_BYTES`` at 0 (every CSV under
200 MB through DuckDB; as shipped, from 16 MB up), and with ``engine.is_checked_csv`` answering no (the route
every CSV under 200 MB took before). A record of open_csv_audited's answers shows the DuckDB route was taken
where it should be.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_inproc import run_in_process
from corpus_files import DATA_KINDS

from luskin_cli import engine
from luskin_core.counting import files
from luskin_core.counting.data import load_sample

_run = run_in_process   # luskin in this process: status, stdout, stderr


@pytest.fixture
def routes(monkeypatch: pytest.MonkeyPatch):
    """compare(argv): both routes' (status, stdout, stderr) for --json and for the text; returns how many
    times DuckDB counted the file (open_csv_audited gave a source)."""
    taken: list[bool] = []
    audited = files.open_csv_audited

    def recorded(*args, **kwargs):
        found = audited(*args, **kwargs)
        taken.append(found is not None)
        return found

    monkeypatch.setattr(files, "open_csv_audited", recorded)
    monkeypatch.setattr(engine, "DUCKDB_CSV_BYTES", 0)
    shipped = engine.is_checked_csv

    def compare(argv: list[str]) -> bool:
        before = len(taken)
        for extra in (["--json"], []):
            monkeypatch.setattr(engine, "is_checked_csv", shipped)
            duck = _run([*argv, *extra])
            monkeypatch.setattr(engine, "is_checked_csv", lambda *_: False)
            memory = _run([*argv, *extra])
            assert duck == memory, f"{argv + extra}: the DuckDB route printed otherwise"
            assert "Traceback" not in duck[2]
        return any(taken[before:])

    return compare


def test_every_corpus_csv_prints_the_same_through_duckdb(tmp_path, routes):
    counted = []
    for kind in DATA_KINDS:
        if kind.path is not None or "audit" not in kind.commands or kind.name == "field_50mb":
            continue   # field_50mb: a 50 MB value the upload reader reads and DuckDB's line limit refuses (in memory)
        path = tmp_path / f"{kind.name}{kind.suffix}"
        path.write_bytes(kind.build())
        if routes(["audit", "--data", str(path), *kind.args]):
            counted.append(kind.name)
        if kind.name == "plain":
            for args in (["--groups", "race", "--stratify", "edu"], ["--groups", "race", "--groups", "sex"],
                         ["--protected", "race == A", "--filter", "edu >= 10", "--population", "sex == M"],
                         ["--groups", "job", "--stratify", "x", "--metric", "ratio"],
                         ["--groups", "race", "--stratify", "x", "--bins", "x=-0.5,0,0.5", "--adverse"],
                         ["--groups", "edu", "--reference", "12", "--min-group-size", "5"],
                         ["--groups", "race", "--features", "edu,x"]):
                assert routes(["audit", "--data", str(path), "--outcome", "y", "--positive", "yes", *args])
            for args in (["--groups", "race", "--reference", "Z"], ["--groups", "race", "--min-group-share", "0.4"],
                         ["--groups", "race", "--name", "race:A=Alpha", "--correction", "bh"],
                         ["--groups", "race", "--predictions", "job"], ["--groups", "race", "--score"],
                         ["--protected", "race in [A, B]", "--filter", "job == nobody"]):
                routes(["audit", "--data", str(path), "--outcome", "y", "--positive", "yes", *args])
            # --exclude is checked on the loaded frame (an unknown column, nothing left): in memory
            for args in (["--groups", "race", "--exclude", "nothing"], ["--groups", "race", "--exclude", "edu,x,job,sex"]):
                assert not routes(["audit", "--data", str(path), "--outcome", "y", "--positive", "yes", *args])
    # UTF-16/32, Latin-1, blanks, repeated or blank names, old Mac line ends, a quote after a blank stay in memory,
    # and every file the upload refuses; the rest is counted by DuckDB.
    assert {"plain", "utf8_bom", "crlf", "tabs", "gzip", "quoted_newlines", "mixed_types", "nan_inf_strings",
            "beyond_float64", "huge_integers", "missing_markers", "many_outcome_values"} <= set(counted)
    assert not {"latin1_semicolons", "blanks_around_values", "leading_blank_lines", "header_only",
                "names_differ_in_case", "positive_value_absent", "protected_one_value"} & set(counted)


@pytest.mark.parametrize(("name", "args"), [
    ("adult", ["--preset", "adult"]),
    ("adult", ["--outcome", "income", "--positive", ">50K", "--groups", "race", "--stratify", "age"]),
    ("adult", ["--outcome", "income", "--positive", ">50K", "--groups", "sex", "--stratify", "education-num",
               "--population", "hours-per-week >= 20"]),
    ("compas", ["--preset", "compas"]),
    ("compas", ["--outcome", "two_year_recid", "--positive", "1", "--groups", "race", "--predictions",
                "is_recid", "--criterion", "odds"]),
    ("compas", ["--outcome", "decile_score", "--score", "--groups", "sex", "--stratify", "age_cat"]),
])
def test_the_samples_written_as_csv_print_the_same_through_duckdb(tmp_path, routes, name, args):
    path = tmp_path / f"{name}.csv"
    load_sample(name).to_csv(path, index=False)
    assert routes(["audit", "--data", str(path), *args])


def _write(path: Path, frame: pd.DataFrame, tail: str = "", encoding: str = "utf-8") -> str:
    with open(path, "w", encoding=encoding, newline="") as handle:
        frame.to_csv(handle, index=False)
        handle.write(tail)
    return str(path)


def _codes(n: int = 3000) -> pd.DataFrame:
    rng = np.random.default_rng(26)
    return pd.DataFrame({
        "code": rng.choice(np.array(["01", "007", "7", "1", "12"], dtype=object), n),
        "half": rng.choice(np.array(["1", "1.0", "2.5"], dtype=object), n),
        "flag": rng.choice(np.array(["true", "false"], dtype=object), n),
        "day": rng.choice(np.array(["2020-01-01", "2021-06-30", "NA"], dtype=object), n),
        "mixed": rng.choice(np.array(["1", "a", "2"], dtype=object), n),
        "y": rng.choice(np.array(["1", "0"], dtype=object), n),
        "pay": rng.normal(size=n).round(4).astype(str),
    })


@pytest.mark.parametrize(("args", "counted"), [
    (["--groups", "code"], True), (["--groups", "half"], True), (["--groups", "flag"], True),
    (["--groups", "day"], True), (["--groups", "mixed"], True), (["--groups", "flag", "--stratify", "code"], True),
    (["--groups", "mixed", "--stratify", "pay"], True), (["--protected", "code == 7", "--filter", "half > 1"], True),
    (["--protected", "flag == true"], True),
    (["--protected", "code == 99"], False),          # refused: the values listed in the upload's order
    (["--groups", "code", "--filter", "day < 3"], False),   # refused: an order comparison on text
])
def test_types_duckdb_would_guess_otherwise_print_the_same(tmp_path, routes, args, counted):
    path = _write(tmp_path / "codes.csv", _codes())
    assert routes(["audit", "--data", path, "--outcome", "y", "--positive", "1", *args]) is counted


@pytest.mark.parametrize(("tail", "encoding"), [
    ("07, 1.5,x,2020-01-01,1,1,0.5\n", "utf-8"),        # blanks around a value past the first 64 KB
    ("07,1.5,caf\xe9,2020-01-01,1,1,0.5\n", "latin-1"),  # a Latin-1 byte past the first 64 KB
    ("07,inf,a,2020-01-01,1,1,0.5\n", "utf-8"),         # 'inf': missing to the upload reader, a number to DuckDB
    ("1e2,1.5,a,2020-01-01,1,1,0.5\n", "utf-8"),        # 1e2 makes the codes numbers with a point
])
def test_a_late_row_duckdb_reads_otherwise_keeps_the_file_in_memory_or_reads_it_alike(tmp_path, routes, tail,
                                                                                      encoding):
    frame = _codes(6000)
    path = _write(tmp_path / "late.csv", frame, tail, encoding)
    assert Path(path).stat().st_size > 1 << 16
    for args in (["--groups", "code", "--stratify", "half"], ["--groups", "mixed", "--stratify", "code"]):
        routes(["audit", "--data", path, "--outcome", "y", "--positive", "1", *args])


@pytest.mark.parametrize("cap", [0, 20_000])
def test_the_rows_counted_from_the_file_or_from_their_combinations_print_the_same(tmp_path, routes, monkeypatch, cap):
    """Past _ROWS_AS_COUNTS combinations of the named columns, the count reads the file again (cap 0: always)."""
    monkeypatch.setattr(files, "_ROWS_AS_COUNTS", cap)
    path = _write(tmp_path / "codes.csv", _codes())
    for args in (["--groups", "code", "--stratify", "pay"], ["--protected", "flag == true", "--stratify", "half"],
                 ["--groups", "mixed", "--population", "code >= 7", "--filter", "half > 1"]):
        assert routes(["audit", "--data", path, "--outcome", "y", "--positive", "1", *args])
    adult = tmp_path / "adult.csv"
    load_sample("adult").to_csv(adult, index=False)
    assert routes(["audit", "--data", str(adult), "--preset", "adult"])


def test_only_a_csv_from_the_size_threshold_up_is_counted_in_duckdb(tmp_path, monkeypatch):
    path = _write(tmp_path / "codes.csv", _codes())
    size = Path(path).stat().st_size
    argv = ["audit", "--data", path, "--outcome", "y", "--positive", "1", "--groups", "code", "--json"]
    for threshold, counted in ((size + 1, False), (size, True)):
        taken: list[bool] = []
        audited = files.open_csv_audited
        monkeypatch.setattr(files, "open_csv_audited", lambda *a, _f=audited, _t=taken, **k: _t.append(True) or _f(*a, **k))
        monkeypatch.setattr(engine, "DUCKDB_CSV_BYTES", threshold)
        status, _, err = _run(argv)
        monkeypatch.setattr(files, "open_csv_audited", audited)
        assert status == 0, err
        assert bool(taken) is counted
