"""Real engines for the tests: a throwaway PostgreSQL cluster on a Unix socket and a local Spark session.

When an engine is missing the tests skip, or fail when LUSKIN_REQUIRE_ENGINES=1 (CI and scripts/test.sh).
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

PASSWORD = "engine-test-pw"
REQUIRE = os.environ.get("LUSKIN_REQUIRE_ENGINES", "") == "1"


def missing(what: str) -> None:
    """Fail (engines required) or skip (a developer's machine without the engine)."""
    if REQUIRE:
        pytest.fail(f"{what} (LUSKIN_REQUIRE_ENGINES=1)")
    pytest.skip(what)


def _pg_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _as_user(user: str | None, args: list[str]) -> list[str]:
    return ["runuser", "-u", user, "--", *args] if user else args


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A PostgreSQL cluster in a temp folder, listening only on a Unix socket there; its URL (with the password)."""
    bindir = _pg_bin()
    if bindir is None:
        missing("PostgreSQL (initdb) is not installed")
    assert bindir is not None
    user: str | None = None
    if os.geteuid() == 0:  # postgres refuses to run as root
        import pwd

        for name in ("postgres", "nobody"):
            try:
                pwd.getpwnam(name)
                user = name
                break
            except KeyError:
                continue
    base = Path(tempfile.mkdtemp(prefix="luskin-pg-"))
    data, sock = base / "data", base / "sock"
    sock.mkdir()
    if user:
        shutil.chown(base, user)
        shutil.chown(sock, user)
        os.chmod(base, 0o700)
    pwfile = base / "pw"
    pwfile.write_text(PASSWORD + "\n")
    if user:
        shutil.chown(pwfile, user)
    try:
        # Password authentication (scram) even on the socket, so a wrong password is refused for real.
        subprocess.run(_as_user(user, [str(bindir / "initdb"), "-D", str(data), "-U", "luskin", "-A", "scram-sha-256",
                                       f"--pwfile={pwfile}", "--no-sync", "-E", "UTF8"]), check=True, capture_output=True)
        options = f"-c listen_addresses='' -k {sock} -c fsync=off -c shared_buffers=32MB"
        subprocess.run(_as_user(user, [str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-w", "-l",
                                       str(base / "log"), "start"]), check=True, capture_output=True)
    except (subprocess.CalledProcessError, FileNotFoundError) as error:
        shutil.rmtree(base, ignore_errors=True)
        missing(f"PostgreSQL could not start: {error}")
    try:
        yield f"postgresql://luskin:{PASSWORD}@localhost/postgres?host={sock}"
    finally:
        subprocess.run(_as_user(user, [str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"]),
                       check=False, capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def spark_session() -> Iterator[object]:
    """A local Spark session (one core, small memory, quiet logs, a light JIT), stopped at the end."""
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        missing("Java is not installed, so Spark cannot run")
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        missing("pyspark is not installed")
    session = (SparkSession.builder.master("local[1]").appName("luskin-tests")
               .config("spark.driver.memory", "1g").config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2").config("spark.sql.session.timeZone", "UTC")
               # The JIT's first tier only and one GC thread: the tests' short queries spent about a third of Spark's CPU
               # compiling and collecting on other cores (measured: 116 -> 83 CPU-seconds for four Spark tests).
               .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    try:
        yield session
    finally:
        session.stop()


def load_postgres(url: str, name: str, frame: Any, *, user: str = "luskin", password: str | None = None,
                  database: str = "postgres") -> None:
    """Store ``frame`` as the table ``name`` on the test server of ``url``: the columns typed as Ibis types a
    memtable (what a user's Ibis code would make), the rows sent by COPY (Ibis inserts row by row: a million rows
    took 20 s of a test's setup). Missing values are NULL."""
    from urllib.parse import parse_qs, urlsplit

    import ibis  # type: ignore[import-untyped]
    from psycopg import sql

    host = parse_qs(urlsplit(url).query)["host"][0]
    con = ibis.postgres.connect(user=user, password=password if password is not None else urlsplit(url).password,
                                host=host, database=database)
    try:
        con.create_table(name, schema=ibis.memtable(frame).schema())
        columns = [frame[c].to_numpy(dtype=object, na_value=None).tolist() for c in frame.columns]
        copying = sql.SQL("COPY {} FROM STDIN").format(sql.Identifier(name))
        with con.con.cursor() as cursor, cursor.copy(copying) as copy:
            for row in zip(*columns):
                copy.write_row(row)
        con.con.commit()
    finally:
        con.disconnect()
