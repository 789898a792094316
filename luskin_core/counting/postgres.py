"""PostgreSQL: a table, a view or one SELECT query on a server, audited through Ibis in a read-only session.

``postgresql://user[:password]@host[:port]/db`` (also ``?host=/socket/dir``) with ``table``: a table
name or a ``SELECT ...`` query (checked to be exactly one SELECT statement).
"""

from __future__ import annotations

import re
import uuid
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from luskin_core.counting.ibis_rules import _ibis, engine_message, query_reason
from luskin_core.counting.ibis_source import Source
from luskin_core.errors import LuskinError

CONNECT_TIMEOUT = 10
# Seconds a query may run before the server stops it (a source setting, ``statement_timeout``, changes it).
STATEMENT_TIMEOUT = 300.0
# Every session Luskin opens on PostgreSQL: backslashes are plain characters in literals (the only
# quoting Ibis' literals are safe under), every transaction read-only unless Luskin opens it read-write.
_PG_SESSION = {"standard_conforming_strings": "on", "default_transaction_read_only": "on"}


def open_postgres(url: str, table: str | None = None, **settings: Any) -> Source:
    """Open a table or a SELECT query on a PostgreSQL server (see the module's docstring)."""
    ibis = _ibis()
    parts = urlsplit(url)
    query = parse_qs(parts.query)
    host = query.get("host", [parts.hostname or "localhost"])[0]
    port = parts.port or int(query.get("port", ["5432"])[0])
    user = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password else None
    database = parts.path.lstrip("/") or None
    shown = f"postgresql://{user + '@' if user else ''}{host}:{port}/{database or ''}"
    if not table:
        raise LuskinError(f"Name the table (or a SELECT query) to audit in {shown} (the source's table; on the command line, the table option).")
    is_query = bool(re.match(r"^\s*\(*\s*(select|with|values)\b", table, re.IGNORECASE))
    if is_query:
        _check_one_select(table)
    timeout = float(settings.get("statement_timeout") or STATEMENT_TIMEOUT)
    if not 0 < timeout <= 86_400:
        raise LuskinError("The statement timeout must be more than 0 and at most 86400 seconds (a day).")
    options = " ".join(f"-c {name}={value}" for name, value in
                       {**_PG_SESSION, "statement_timeout": str(max(1, round(timeout * 1000)))}.items())
    try:
        con = ibis.postgres.connect(user=user, password=password, host=host, port=port, database=database,
                                    connect_timeout=CONNECT_TIMEOUT, options=options)
    except Exception as error:  # noqa: BLE001
        raise LuskinError(_connect_message(error, shown, user)) from None
    _verify_session(con, shown)
    try:
        if is_query:
            # A temporary view named by us (ibis' own .sql() path breaks on this sqlglot); the query is the user's,
            # checked to be one SELECT. The view and an empty temporary table shaped like it are the session's
            # only writes (their own transaction, which plans the query but does not run it; the extended
            # protocol runs one statement only). The query then runs once, read-only (a read-only transaction
            # may fill a temporary table), and every count reads the table: a slow query is not run again
            # for each count.
            view = f"luskin_query_{uuid.uuid4().hex}"
            kept = f"luskin_rows_{uuid.uuid4().hex}"
            with con.con.transaction(), con.con.cursor() as cursor:
                cursor.execute("SET TRANSACTION READ WRITE", binary=True)
                body = table.strip().rstrip(";").rstrip()
                cursor.execute(f'CREATE TEMPORARY VIEW "{view}" AS {body}\n', binary=True)
                cursor.execute(f'CREATE TEMPORARY TABLE "{kept}" AS SELECT * FROM "{view}" WITH NO DATA',
                               binary=True)
            shown = f"{shown} (query)"
            try:
                with con.con.transaction(), con.con.cursor() as cursor:
                    cursor.execute(f'INSERT INTO "{kept}" SELECT * FROM "{view}"', binary=True)
            except Exception as error:  # noqa: BLE001
                if "statement timeout" in str(error).lower():
                    raise LuskinError(engine_message(error, shown, "postgres", "the query", timeout=timeout)) from None
                raise LuskinError(f"The query could not be run on {shown}: {query_reason(error)}.") from None
            t = con.table(kept)
        else:
            t = con.table(table)
            shown = f"{shown}/{table}"
    except LuskinError:
        raise
    except Exception as error:  # noqa: BLE001
        if is_query:
            raise LuskinError(f"The query could not be run on {shown}: {query_reason(error)}.") from None
        raise LuskinError(f"There is no table '{table}' in {shown}.") from None
    source = Source(t, name=shown, kind="postgres", backend=con)
    source.statement_timeout = timeout
    return source


def _check_one_select(text: str) -> None:
    """Refuse anything but exactly one SELECT statement (no second statement, no INSERT/UPDATE/DELETE inside)."""
    import sqlglot
    from sqlglot import expressions as exp

    refused = LuskinError("The query must be exactly one SELECT statement (no ';' and no second statement, "
                          "nothing that writes).")
    try:
        statements = [s for s in sqlglot.parse(text, read="postgres") if s is not None and not isinstance(
            s, exp.Semicolon)]
    except Exception:  # noqa: BLE001 - a query sqlglot cannot read is not run
        raise LuskinError("The query could not be read as one SELECT statement: check its syntax.") from None
    if len(statements) != 1 or not isinstance(statements[0], exp.Query):
        raise refused
    writes = (exp.Insert, exp.Update, exp.Delete, exp.Create, exp.Drop, exp.Alter, exp.Command, exp.Into)
    if any(isinstance(node, writes) for node in statements[0].walk()):
        raise refused


def _verify_session(con: Any, shown: str) -> None:
    """Check that the server kept the session's settings (a server or pooler may ignore start-up options)."""
    try:
        with con.con.cursor() as cursor:
            got = {name: str(cursor.execute(f"SHOW {name}").fetchone()[0]) for name in _PG_SESSION}
    except Exception:  # noqa: BLE001
        got = {}
    if got != _PG_SESSION:
        con.disconnect()
        raise LuskinError(f"The server {shown} did not accept a read-only session with standard-conforming "
                          "strings, so Luskin does not query it (is a connection pooler in between?).")


def _connect_message(error: Exception, shown: str, user: str | None = None) -> str:
    text = str(error).lower()
    if "timeout" in text or "timed out" in text:
        return (f"The database server {shown} did not answer within {CONNECT_TIMEOUT} seconds: check the address, "
                "the port and that it is a PostgreSQL server.")
    if "role" in text and "does not exist" in text:
        return f"The server {shown} has no user named '{user or ''}'."
    if "password" in text or "authentication" in text:
        return f"The server {shown} refused the user name or password."
    if "database" in text and "does not exist" in text:
        return f"The server answered, but the database in {shown} does not exist."
    if "no pg_hba.conf entry" in text or "not permitted" in text:
        return f"The server {shown} does not allow this user to connect from here."
    return f"The database server {shown} does not answer: check the address, the port and that it is running."


_open_postgres = open_postgres   # the name tests and older callers use
