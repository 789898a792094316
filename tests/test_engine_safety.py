"""Engine sources are safe and plain under hostile input and hostile servers.

Real components: a throwaway PostgreSQL cluster (tests/engine_servers.py) with a database and a
role whose ``standard_conforming_strings`` is off; a local socket that accepts and never answers;
a Python started without Java for Spark.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pandas as pd
import pytest
from engine_servers import load_postgres

from luskin_core import AuditSpec, LuskinError, audit
from luskin_core.counting.sources import open_source
from luskin_core.spec.conditions import Condition

HOSTILE = [
    "x\\'); CREATE TABLE pwned (i int); --",
    "x\\' OR TRUE OR 'a' = 'a",
    "O\\'Brien",
    "back\\slash\\",
    "it's",
]


def _people() -> pd.DataFrame:
    names = [*HOSTILE, "plain", "x", "O'Brien", "back\\\\slash"] * 30
    return pd.DataFrame({
        "name": pd.array(names, dtype="string"),
        "group": pd.array(["A", "B", "C"] * (len(names) // 3), dtype="string"),
        "y": pd.array(["yes", "no", "no", "yes", "no"] * (len(names) // 5), dtype="string"),
    })


def _psycopg(url: str, **kwargs):  # type: ignore[no-untyped-def]
    import psycopg

    parts = urlsplit(url)
    host = parse_qs(parts.query)["host"][0]
    args = {"user": parts.username, "password": parts.password, "host": host, "dbname": parts.path.lstrip("/"),
            "autocommit": True, **kwargs}
    return psycopg.connect(**args)


def _seq_scans(url: str, table: str = "people") -> int:
    """The sequential scans of ``table`` the server has counted so far (each backend's counts arrive when it flushes
    them: at the latest as it exits)."""
    with _psycopg(url) as con:
        con.execute("SELECT pg_stat_clear_snapshot()")
        row = con.execute("SELECT coalesce(sum(seq_scan), 0) FROM pg_stat_user_tables WHERE relname = %s", (table,))
        return int(row.fetchone()[0])


@pytest.fixture(scope="module")
def lax_url(postgres_url: str) -> str:
    """A database and a role both set to standard_conforming_strings = off, with a table of hostile names."""
    with _psycopg(postgres_url) as con:
        con.execute("DROP DATABASE IF EXISTS lax")
        con.execute("DROP ROLE IF EXISTS lax")
        con.execute("CREATE ROLE lax LOGIN PASSWORD 'lax-pw'")
        con.execute("CREATE DATABASE lax OWNER lax")
        con.execute("ALTER ROLE lax SET standard_conforming_strings = off")
        con.execute("ALTER DATABASE lax SET standard_conforming_strings = off")
    host = parse_qs(urlsplit(postgres_url).query)["host"][0]
    url = f"postgresql://lax:lax-pw@localhost/lax?host={host}"
    with _psycopg(url) as con:
        assert con.execute("SHOW standard_conforming_strings").fetchone()[0] == "off"
    load_postgres(url, "people", _people(), user="lax", password="lax-pw", database="lax")
    return url


def _tables(url: str) -> set[str]:
    with _psycopg(url) as con:
        return {r[0] for r in con.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_values_are_literals_when_the_server_escapes_backslashes(lax_url, value):
    """A value with a backslash and a quote is compared as itself (standard_conforming_strings off)."""
    frame = _people()
    source = open_source(lax_url, "people")
    for spec in (AuditSpec("y", "yes", protected=Condition("name", "==", value)),
                 AuditSpec("y", "yes", group_by=("group",), filters=(Condition("name", "!=", value),)),
                 AuditSpec("y", "yes", group_by=("group",), population=(Condition("name", "in", (value, "x")),))):
        assert audit(source, spec).to_dict() == audit(frame, spec).to_dict()
    assert _tables(lax_url) == {"people"}


def test_a_query_source_runs_one_select_read_only(lax_url):
    with pytest.raises(LuskinError, match="exactly one SELECT"):
        open_source(lax_url, "SELECT * FROM people; CREATE TABLE pwned AS SELECT 1 AS i; --")
    with pytest.raises(LuskinError, match="exactly one SELECT"):
        open_source(lax_url, "WITH gone AS (DELETE FROM people RETURNING *) SELECT * FROM gone")
    with pytest.raises(LuskinError, match="exactly one SELECT"):
        open_source(lax_url, "SELECT * INTO pwned FROM people")
    assert _tables(lax_url) == {"people"}
    # A function that writes, called by a single SELECT, is refused by the read-only session.
    with _psycopg(lax_url) as con:
        con.execute("CREATE TABLE IF NOT EXISTS journal (i int)")
        con.execute("CREATE OR REPLACE FUNCTION scribble(g text) RETURNS text LANGUAGE sql AS "
                    "$$ INSERT INTO journal VALUES (1); SELECT g $$")
    try:
        with pytest.raises(LuskinError, match="read-only transaction"):   # the query runs once, when opened
            audit(open_source(lax_url, 'SELECT scribble("group") AS "group", y FROM people;'),
                  AuditSpec("y", "yes", group_by=("group",)))
        with _psycopg(lax_url) as con:
            assert con.execute("SELECT count(*) FROM journal").fetchone()[0] == 0
        assert open_source(lax_url, 'SELECT * FROM people WHERE "group" = \'A\';').n_rows() == 90
    finally:
        with _psycopg(lax_url) as con:
            con.execute("DROP FUNCTION scribble(text) CASCADE")
            con.execute("DROP TABLE journal")


def test_a_failing_query_says_why(lax_url):
    with pytest.raises(LuskinError) as error:
        audit(open_source(lax_url, 'SELECT CAST("name" AS integer) AS "group", y FROM people'),
              AuditSpec("y", "yes", group_by=("group",)))
    message = str(error.value)
    assert "invalid input syntax for type integer" in message and "CSV" not in message


def test_a_source_that_cannot_be_opened_keeps_no_connection_to_the_server(lax_url):
    """A missing table, a query that fails and a refused statement: each said in words, and the connection opened to
    find out is closed at once, not when the garbage collector gets to it (an app whose analysts mistype a table kept
    one server connection per try, 16 'deleted while still open' warnings in the engine tests)."""
    import gc
    import warnings

    def held() -> int:
        with _psycopg(lax_url) as con:
            return int(con.execute("SELECT count(*) FROM pg_stat_activity WHERE usename = 'lax' AND pid <> "
                                   "pg_backend_pid()").fetchone()[0])

    before = held()
    gc.disable()   # the connection must be closed by the refusal itself
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            for table in ("no_such_table", "SELECT no_such_column FROM people", "SELECT 1; DROP TABLE people"):
                with pytest.raises(LuskinError):
                    open_source(lax_url, table)
            deadline = time.monotonic() + 10
            while held() > before and time.monotonic() < deadline:   # the server ends a closed backend shortly
                time.sleep(0.05)
            assert held() == before, f"{held() - before} connections left open by refused sources"
    finally:
        gc.enable()
    gc.collect()
    assert not [w for w in seen if "deleted while still open" in str(w.message)]


def test_an_unknown_user_is_named_as_such(postgres_url):
    host = parse_qs(urlsplit(postgres_url).query)["host"][0]
    with pytest.raises(LuskinError) as error:
        open_source(f"postgresql://nobody_here:pw@localhost/postgres?host={host}", "people")
    assert "does not answer" not in str(error.value)
    assert "refused the user name or password" in str(error.value) or "no user named" in str(error.value)


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A TCP port on 127.0.0.1 that accepts connections and never says a word."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                held.append(conn)
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        server.close()


def test_a_silent_server_times_out_plainly(silent_server, monkeypatch):
    from luskin_core.counting import postgres

    monkeypatch.setattr(postgres, "CONNECT_TIMEOUT", 2)
    start = time.monotonic()
    with pytest.raises(LuskinError, match="did not answer within 2 seconds"):
        open_source(f"postgresql://luskin:pw@127.0.0.1:{silent_server}/postgres", "people")
    assert time.monotonic() - start < 60   # gave up (2 s asked), did not hang; generous for a loaded machine


def test_spark_without_java_is_one_sentence(tmp_path):
    """The command line on a spark: source with no Java anywhere: exit 2 and a sentence, no traceback."""
    root = Path(__file__).resolve().parents[1]
    env = {"PATH": str(tmp_path / "nowhere"), "JAVA_HOME": str(tmp_path / "nojava"), "PYTHONPATH": str(root),
           "HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "luskin_cli", "audit", "--data", "spark:", "--table", "t",
                           "--outcome", "y", "--positive", "yes", "--groups", "g"],
                          check=False, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "Java" in done.stderr


def test_hostile_values_are_literals_in_duckdb_and_spark(spark_session, tmp_path):
    frame = _people()
    path = tmp_path / "people.parquet"
    frame.to_parquet(path)
    spark_session.read.parquet(str(path)).createOrReplaceTempView("people")  # type: ignore[attr-defined]
    for source in (open_source(str(path)), open_source("spark:", "people")):
        for value in HOSTILE:
            spec = AuditSpec("y", "yes", group_by=("group",), filters=(Condition("name", "==", value),))
            assert audit(source, spec).to_dict() == audit(frame, spec).to_dict(), (source, value)
    spark_session.conf.set("spark.sql.parser.escapedStringLiterals", "true")  # type: ignore[attr-defined]
    try:
        with pytest.raises(LuskinError, match="escapedStringLiterals"):
            open_source("spark:", "people")
    finally:
        spark_session.conf.set("spark.sql.parser.escapedStringLiterals", "false")  # type: ignore[attr-defined]


def test_a_query_source_runs_its_query_once_and_a_slow_one_is_stopped_plainly(lax_url):
    """The SELECT runs once per opening (into a temporary table), not once per count; a query past the
    statement timeout is stopped by the server and said in plain words, with the setting to change."""
    spec = AuditSpec("y", "yes", group_by=("group",))
    with _psycopg(lax_url) as con:   # a table only this source reads: no other backend's scans to tell apart
        con.execute("DROP TABLE IF EXISTS people_once")
        con.execute("CREATE TABLE people_once AS SELECT * FROM people")
    source = open_source(lax_url, 'SELECT "group", y FROM people_once')
    first = audit(source, spec).to_dict()
    audit(source, AuditSpec("y", "yes", protected=Condition("group", "==", "A")))
    source.sample(spec, cap=10)
    # The source's session ends; a backend flushes its statistics as it exits, before it leaves pg_stat_activity:
    # once it has left, every scan it made is counted (statistics otherwise arrive up to seconds late).
    session = source.backend   # the source's own connection (Source keeps it; nothing public closes it)
    pid = session.con.info.backend_pid
    session.disconnect()
    deadline = time.monotonic() + 60
    with _psycopg(lax_url) as con:
        while con.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone()[0]:
            assert time.monotonic() < deadline, "the source's session did not end"
            time.sleep(0.05)
    assert _seq_scans(lax_url, "people_once") == 1
    assert first == audit(_people(), spec).to_dict()
    start = time.monotonic()
    with pytest.raises(LuskinError) as error:
        open_source(lax_url, "SELECT 'yes' AS y, 'A' AS g FROM (SELECT pg_sleep(120)) AS slow", statement_timeout=1)
    assert time.monotonic() - start < 110   # the timeout stopped it: the query sleeps 120 s
    message = str(error.value)
    assert "1-second deadline" in message and "statement_timeout" in message
    assert "Traceback" not in message and "pg_sleep" not in message
