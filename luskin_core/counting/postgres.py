"""PostgreSQL: a table, a view or one SELECT query on a server, audited through Ibis in a read-only session.

``postgresql://user[:password]@host[:port]/db`` (also ``?host=/socket/dir``) with ``table``: a table
name or a ``SELECT ...`` query (checked to be exactly one SELECT statement).
"""

from __future__ import annotations

import contextlib
import re
import uuid
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from luskin_core.counting.deadline import DEFAULT_DEADLINE, checked_deadline, lock_wait
from luskin_core.counting.ibis_rules import engine_message, load_ibis, query_reason
from luskin_core.counting.ibis_source import Source
from luskin_core.errors import LuskinError

CONNECT_TIMEOUT = 10
STATEMENT_TIMEOUT = DEFAULT_DEADLINE   # the per-query deadline's default (a source's statement_timeout changes it)
# Every session Luskin opens on PostgreSQL: backslashes are plain characters in literals (the only
# quoting Ibis' literals are safe under), every transaction read-only unless Luskin opens it read-write.
_PG_SESSION = {"standard_conforming_strings": "on", "default_transaction_read_only": "on"}
# Relations that are computed each time they are read (a view; a foreign table, read from another server): their
# rows are kept once per opening in a temporary table that every count reads.
_COMPUTED = ("v", "f")


def open_postgres(url: str, table: str | None = None, **settings: Any) -> Source:
    """Open a table or a SELECT query on a PostgreSQL server (see the module's docstring)."""
    ibis = load_ibis()
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
    timeout = checked_deadline(settings.get("statement_timeout") or STATEMENT_TIMEOUT, "The statement timeout")
    # The deadline bounds every statement, a wait for a lock included; a table another session holds locked is
    # waited for at most LOCK_WAIT seconds (within the deadline), then said in words.
    session = {**_PG_SESSION, "statement_timeout": str(max(1, round(timeout * 1000))),
               "lock_timeout": str(max(1, round(lock_wait(timeout) * 1000)))}
    options = " ".join(f"-c {name}={value}" for name, value in session.items())
    try:
        con = ibis.postgres.connect(user=user, password=password, host=host, port=port, database=database,
                                    connect_timeout=CONNECT_TIMEOUT, options=options)
    except Exception as error:  # noqa: BLE001
        raise LuskinError(_connect_message(error, shown, user)) from None
    try:
        _verify_session(con, shown)
        if is_query:
            # A temporary view named by us (ibis' own .sql() path breaks on this sqlglot); the query is the user's,
            # checked to be one SELECT. The query then runs once into a temporary table every count reads.
            view = f"luskin_query_{uuid.uuid4().hex}"
            with con.con.transaction(), con.con.cursor() as cursor:
                cursor.execute("SET TRANSACTION READ WRITE", binary=True)
                body = table.strip().rstrip(";").rstrip()
                cursor.execute(f'CREATE TEMPORARY VIEW "{view}" AS {body}\n', binary=True)
            shown = f"{shown} (query)"
            t = _kept_once(con, f'"{view}"', shown, "the query", timeout)
        elif _relation_kind(con, table) in _COMPUTED:
            # A view is computed again by every query that reads it (a 20-second view made an audit of 104 s):
            # it is computed once, here, and the counts read the rows kept.
            shown = f"{shown}/{table}"
            t = _kept_once(con, _quoted(table), shown, "the view", timeout)
        else:
            t = con.table(table)
            shown = f"{shown}/{table}"
    except BaseException as error:
        _close(con)   # a source that could not be opened keeps no connection to the server (it waited for the GC)
        if isinstance(error, LuskinError) or not isinstance(error, Exception):
            raise
        if is_query:
            raise LuskinError(f"The query could not be run on {shown}: {query_reason(error)}.") from None
        raise LuskinError(f"There is no table '{table}' in {shown}.") from None
    source = Source(t, name=shown, kind="postgres", backend=con)
    source.statement_timeout = timeout
    return source


def _close(con: Any) -> None:
    """The server connection closed; a connection already broken is closed as far as it can be."""
    with contextlib.suppress(Exception):   # closing what failed: its own error says nothing more
        con.disconnect()


def _quoted(table: str) -> str:
    """The table's name as an SQL identifier (as Ibis' ``con.table(name)`` names it: one name, quoted)."""
    return '"' + table.replace('"', '""') + '"'


def _relation_kind(con: Any, table: str) -> str | None:
    """pg_class.relkind of the relation ``table`` names (r table, v view, m materialized view, f foreign...), or
    None when there is none (reading the catalogue takes no lock on the table)."""
    with con.con.cursor() as cursor:
        row = cursor.execute("SELECT c.relkind FROM pg_catalog.pg_class c WHERE c.oid = to_regclass(%s)",
                             (_quoted(table),)).fetchone()
    con.con.rollback()
    return None if row is None else str(row[0])


def _kept_once(con: Any, relation: str, shown: str, what: str, timeout: float) -> Any:
    """``relation``'s rows computed once into a temporary table of this session, as an Ibis table.

    The empty table shaped like it is made in a transaction of its own (read-write: it plans the relation but does
    not run it); the rows are then inserted read-only (a read-only transaction may fill a temporary table)."""
    kept = f"luskin_rows_{uuid.uuid4().hex}"
    try:
        with con.con.transaction(), con.con.cursor() as cursor:
            cursor.execute("SET TRANSACTION READ WRITE", binary=True)
            cursor.execute(f'CREATE TEMPORARY TABLE "{kept}" AS SELECT * FROM {relation} WITH NO DATA', binary=True)
        with con.con.transaction(), con.con.cursor() as cursor:
            cursor.execute(f'INSERT INTO "{kept}" SELECT * FROM {relation}', binary=True)
    except Exception as error:  # noqa: BLE001
        text = str(error).lower()
        if "statement timeout" in text or "lock timeout" in text:
            raise LuskinError(engine_message(error, shown, "postgres", what, timeout=timeout)) from None
        if what == "the query":
            raise LuskinError(f"The query could not be run on {shown}: {query_reason(error)}.") from None
        raise LuskinError(engine_message(error, shown, "postgres", what, timeout=timeout)) from None
    return con.table(kept)


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
