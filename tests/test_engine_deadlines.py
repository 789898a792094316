"""Slow and locked sources answer within the operator's deadline, in plain words (issue 47's hangs).

Real components: the suite's PostgreSQL server (tests/engine_servers.py), a view whose every evaluation writes
one line to the server's own log (``RAISE LOG``: counted exactly, whatever the statistics collector's delays),
a second session holding an ACCESS EXCLUSIVE lock, DuckDB files and the local Spark session.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pandas as pd
import pytest
from cli_inproc import run_in_process
from engine_servers import load_postgres

from luskin_core import AuditSpec, LuskinError, audit
from luskin_core.counting.sources import open_source

SPEC = AuditSpec("y", "yes", group_by=("group",))


def _frame() -> pd.DataFrame:
    return pd.DataFrame({"group": pd.array(["A", "B", "C", "A"] * 50, dtype="string"),
                         "y": pd.array(["yes", "no", "no", "yes", "no"] * 40, dtype="string"),
                         "age": [20 + i % 40 for i in range(200)]})


def _psycopg(url: str):  # type: ignore[no-untyped-def]
    import psycopg

    parts = urlsplit(url)
    return psycopg.connect(user=parts.username, password=parts.password, host=parse_qs(parts.query)["host"][0],
                           dbname=parts.path.lstrip("/"), autocommit=True)


def _server_log(url: str) -> Path:
    """The server's log file (engine_servers starts it with ``pg_ctl -l BASE/log``, its socket in BASE/sock)."""
    return Path(parse_qs(urlsplit(url).query)["host"][0]).parent / "log"


@pytest.fixture(scope="module")
def slow_view(postgres_url: str) -> tuple[str, str, str]:
    """A table, and a view over it that logs a line with its own tag each time it is evaluated (and may sleep)."""
    table = f"deadline_people_{uuid.uuid4().hex[:8]}"
    load_postgres(postgres_url, table, _frame())
    tag = uuid.uuid4().hex
    view = f"slow_view_{tag[:8]}"
    with _psycopg(postgres_url) as con:
        con.execute(f"""CREATE FUNCTION {view}_evaluated() RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
                        BEGIN RAISE LOG 'luskin-view-evaluated {tag}'; RETURN true; END $$""")
        con.execute(f"CREATE VIEW {view} AS SELECT * FROM {table} WHERE (SELECT {view}_evaluated())")
        con.execute(f"CREATE VIEW {view}_sleeping AS SELECT * FROM {table} WHERE (SELECT pg_sleep(30) IS NOT NULL)")
    return table, view, tag


def _evaluations(url: str, tag: str) -> int:
    return _server_log(url).read_text(errors="replace").count(f"luskin-view-evaluated {tag}")


def test_a_view_is_evaluated_once_for_all_the_counts(postgres_url, slow_view):
    """A slow view is run once per opening, not again for each count query (a 20 s view took 104 s), and the
    audit is the one counted in memory."""
    _, view, tag = slow_view
    before = _evaluations(postgres_url, tag)
    source = open_source(postgres_url, view)
    got = audit(source, SPEC).to_dict()
    audit(source, AuditSpec("y", "yes", group_by=("group",), strata=("age",)))
    source.sample(SPEC, cap=50)
    assert _evaluations(postgres_url, tag) - before == 1
    assert got == audit(_frame(), SPEC).to_dict()
    # the command line too: one evaluation for the whole command
    before = _evaluations(postgres_url, tag)
    status, _, err = run_in_process(["audit", "--data", postgres_url, "--table", view, "--outcome", "y",
                                       "--positive", "yes", "--groups", "group", "--json"])
    assert status == 0, err
    assert _evaluations(postgres_url, tag) - before == 1


def test_the_deadline_is_the_operators_and_said_in_plain_words(postgres_url, slow_view):
    """--query-timeout sets the per-query deadline (300 s before, fixed on the command line); a query past it is
    stopped and the answer names the deadline and how to raise it."""
    _, view, _ = slow_view
    start = time.monotonic()
    status, _, err = run_in_process(["audit", "--data", postgres_url, "--table", f"{view}_sleeping",
                                       "--outcome", "y", "--positive", "yes", "--groups", "group",
                                       "--query-timeout", "2"])
    took = time.monotonic() - start
    assert status != 0 and took < 25, (status, took)   # the view sleeps 30 s
    assert "2-second" in err and "--query-timeout" in err, err
    assert "Traceback" not in err and "pg_sleep" not in err and "canceling" not in err
    status, _, err = run_in_process(["audit", "--data", postgres_url, "--table", view, "--outcome", "y",
                                     "--positive", "yes", "--groups", "group", "--query-timeout", "0"])
    assert status != 0 and "--query-timeout" in err and "Traceback" not in err


def test_a_locked_table_answers_within_a_minute(postgres_url, slow_view):
    """Another session holding an ACCESS EXCLUSIVE lock (an ALTER TABLE, a VACUUM FULL): the audit answers in
    plain words within the deadline's lock wait (at most 20 s), not after the 300-second deadline."""
    table, _, _ = slow_view
    holder = _psycopg(postgres_url)
    try:
        holder.execute("BEGIN")
        holder.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
        start = time.monotonic()
        status, _, err = run_in_process(["audit", "--data", postgres_url, "--table", table, "--outcome", "y",
                                           "--positive", "yes", "--groups", "group"])
        took = time.monotonic() - start
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert status != 0 and took < 60, (status, took)
    assert "locked" in err and "another session" in err, err
    assert "Traceback" not in err and "canceling" not in err
    # once the lock is gone, the same command counts
    status, _, err = run_in_process(["audit", "--data", postgres_url, "--table", table, "--outcome", "y",
                                       "--positive", "yes", "--groups", "group", "--json"])
    assert status == 0, err


def test_a_locked_table_with_a_short_deadline_answers_at_the_deadline(postgres_url, slow_view):
    table, _, _ = slow_view
    holder = _psycopg(postgres_url)
    try:
        holder.execute("BEGIN")
        holder.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
        start = time.monotonic()
        with pytest.raises(LuskinError) as error:
            audit(open_source(postgres_url, table, statement_timeout=2), SPEC)
        took = time.monotonic() - start
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert took < 15, took
    assert "locked" in str(error.value) and "1.8 seconds" in str(error.value)


def test_duckdb_is_interrupted_at_the_deadline(tmp_path):
    """A DuckDB table whose count runs for minutes (a view over 10^11 rows) is interrupted at --query-timeout."""
    import duckdb

    path = tmp_path / "slow.duckdb"
    con = duckdb.connect(str(path))
    con.execute("CREATE VIEW slow AS SELECT CASE WHEN i % 3 = 0 THEN 'A' ELSE 'B' END AS \"group\", "
                "CASE WHEN i % 2 = 0 THEN 'yes' ELSE 'no' END AS y FROM range(100000000000) AS r(i)")
    con.close()
    start = time.monotonic()
    status, _, err = run_in_process(["audit", "--data", str(path), "--table", "slow", "--outcome", "y",
                                       "--positive", "yes", "--groups", "group", "--query-timeout", "1"])
    took = time.monotonic() - start
    assert status != 0 and took < 30, (status, took)
    assert "1-second deadline" in err and "--query-timeout" in err, err
    assert "Traceback" not in err and "Interrupt" not in err


def test_spark_jobs_are_cancelled_at_the_deadline(spark_session):
    """A Spark view whose count runs for minutes is cancelled at the deadline (its job group), said in words."""
    spark_session.range(10**12).selectExpr(  # type: ignore[attr-defined]
        "CASE WHEN id % 3 = 0 THEN 'A' ELSE 'B' END AS `group`",
        "CASE WHEN id % 2 = 0 THEN 'yes' ELSE 'no' END AS y").createOrReplaceTempView("slow_deadline")
    source = open_source("spark:", "slow_deadline", statement_timeout=3)
    start = time.monotonic()
    with pytest.raises(LuskinError) as error:
        audit(source, SPEC)
    took = time.monotonic() - start
    assert took < 60, took
    assert "3-second deadline" in str(error.value)
    # the session still works afterwards (only this query's job group was cancelled)
    assert spark_session.range(10).count() == 10  # type: ignore[attr-defined]
