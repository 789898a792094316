"""The proxy audit where the data lives: DuckDB, PostgreSQL and Spark give the in-memory audit.

Real engines (tests/engine_servers.py): an embedded DuckDB, a throwaway PostgreSQL cluster and Spark in local
mode. The engine joins the rows with the looked-up surnames and places and returns sums; every rate, interval,
bound and verdict must equal the in-memory path's (probabilities from luskin_core.analyses.proxy, audit from pandas).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from engine_servers import load_postgres

from luskin_core.analyses import proxy_audit as pa
from luskin_core.analyses.proxy import add_probabilities
from luskin_core.analyses.proxy_engine import source_proxy_sums
from luskin_core.counting.sources import open_source
from luskin_core.stats.judgement import Judgement

FIELDS = ("n", "positives", "rate", "ci_low", "ci_high", "difference", "difference_ci_low", "difference_ci_high",
          "bound_low", "bound_high", "p_value", "p_adjusted", "impact_ratio", "impact_ratio_ci_low",
          "impact_ratio_ci_high", "ratio_bound_low", "ratio_bound_high")


@pytest.fixture(scope="module")
def loans() -> pd.DataFrame:
    """Names in every form the normalisation meets, places found and not, missing values, two regions."""
    rng = np.random.default_rng(21)
    n = 6000
    surnames = np.array(["Garcia", "SMITH", "Washington", "nguyen", "Jackson-Lee", "O'Brien", "De La Cruz",
                         "Smith Jr.", "Zzqxv", "Kim", "Begay", None], dtype=object)
    zips = np.array(["10001", "60601", "94110", "30303", "601", "00601", "87313", "12345-6789", "99999", None],
                    dtype=object)
    sur = rng.choice(surnames, n)
    approved = np.where(np.isin(sur, ["Washington", "Jackson-Lee"]), rng.random(n) < 0.35, rng.random(n) < 0.6)
    outcome = np.where(approved, "yes", "no").astype(object)
    outcome[rng.random(n) < 0.02] = None
    return pd.DataFrame({"last name": pd.array(sur, dtype="string"), "zip": pd.array(rng.choice(zips, n),
                                                                                       dtype="string"),
                         "approved": pd.array(outcome, dtype="string"),
                         "region": pd.array(rng.choice(["north", "south"], n), dtype="string")})


def in_memory(frame: pd.DataFrame, metric: str) -> tuple[pa.ProxyAudit, dict[str, int]]:
    with_p, result = add_probabilities(frame, surname="last name", geography="zip")
    y = (frame["approved"] == "yes").astype(float).to_numpy().copy()
    y[frame["approved"].isna().to_numpy()] = np.nan
    audit = pa.proxy_audit(with_p, y, decision="approved", cells="region = " + frame["region"].astype(str),
                           judgement=Judgement(metric=metric, min_group_size=10))
    return audit, result.fallback_counts()


def check(source, frame: pd.DataFrame) -> None:
    sums, counts = source_proxy_sums(source, surname="last name", geography="zip", outcome="approved",
                                     positive="yes", cells=["region"])
    for metric in ("difference", "ratio"):
        expected, expected_counts = in_memory(frame, metric)
        assert counts == expected_counts
        got = pa.audit_sums(sums, decision="approved", judgement=Judgement(metric=metric, min_group_size=10))
        assert got.n_audited == expected.n_audited and got.reference == expected.reference
        assert len(got.comparisons) == len(expected.comparisons) == 3 * 6 * 3
        for a, b in zip(got.comparisons, expected.comparisons, strict=True):
            assert (a.method, a.group, a.cell) == (b.method, b.group, b.cell)
            tol = 1e-6 if a.method == "birdie" else 1e-9  # a maximum found by iterations
            for field in FIELDS:
                x, y = getattr(a, field), getattr(b, field)
                assert (x is None and y is None) or x == pytest.approx(y, rel=tol, abs=tol), (field, a.group,
                                                                                                 a.method, a.cell)
            assert a.verdict == b.verdict


def test_duckdb_on_parquet_equals_in_memory(loans, tmp_path):
    path = tmp_path / "loans.parquet"
    loans.to_parquet(path)
    check(open_source(str(path)), loans)


@pytest.fixture(scope="module")
def pg_loans(loans, postgres_url):
    """The PostgreSQL URL with the rows in the table proxy_loans."""
    load_postgres(postgres_url, "proxy_loans", loans)
    return postgres_url


def test_postgresql_equals_in_memory(loans, pg_loans):
    check(open_source(pg_loans, "proxy_loans"), loans)


def test_command_line_audits_a_postgresql_table_as_its_csv(loans, pg_loans, tmp_path, capsys):
    """`luskin audit --data postgresql://... --table T --proxy ... --stratify region` prints the CSV's audit."""
    import json

    from luskin_cli.main import main

    csv = tmp_path / "loans.csv"
    loans.to_csv(csv, index=False)
    args = ["--outcome", "approved", "--positive", "yes", "--proxy", "surname=last name,zcta=zip",
            "--stratify", "region", "--metric", "ratio", "--min-group-size", "10", "--json"]
    assert main(["audit", "--data", str(csv), *args]) == 0
    memory = json.loads(capsys.readouterr().out)
    assert main(["audit", "--data", pg_loans, "--table", "proxy_loans", *args]) == 0
    engine = json.loads(capsys.readouterr().out)
    assert engine["proxy"]["engine"] == "postgres" and engine["metric"] == "ratio"
    assert engine["proxy"]["methods"] == memory["proxy"]["methods"]
    for a, b in zip(memory["comparisons"], engine["comparisons"], strict=True):
        assert (a["method"], a["group"], a["cell"], a["verdict"]) == (b["method"], b["group"], b["cell"], b["verdict"])
        tol = 1e-6 if a["method"] == "birdie" else 1e-9
        for field in FIELDS:
            x, y = a[field], b[field]
            assert (x is None and y is None) or x == pytest.approx(y, rel=tol, abs=tol), field


def test_spark_equals_in_memory(loans, spark_session, tmp_path):
    path = tmp_path / "loans.parquet"
    loans.to_parquet(path)
    spark_session.read.parquet(str(path)).createOrReplaceTempView("proxy_loans")  # type: ignore[attr-defined]
    check(open_source("spark:", "proxy_loans"), loans)
