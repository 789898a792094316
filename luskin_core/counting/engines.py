"""The engines Luskin counts in, declared once: what their addresses look like, their names, what they can do.

Every place that asks "is this a database address?", "does this engine take a password?", "can it
stop a slow query?" reads an :class:`Engine` from :data:`ENGINES` (the way Ibis' SQL compilers
declare their dialect's features instead of testing a backend's name). An engine's opener is named
as ``"module:function"`` and imported only when a source of that engine is opened, so this module
imports nothing heavy and sits below every source module.

A new engine is one module holding its opener (and, if its SQL differs, its overrides) plus one
entry here: nothing else in the core, the command line or the dashboard tests engine names.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from luskin_core.errors import LuskinError


@dataclass(frozen=True)
class Engine:
    """One engine: its key (``Source.kind``), its name for people, its addresses and its capabilities."""

    key: str
    title: str
    opener: str                      # "module:function(location, table, **settings) -> Source"; "": none
    prefixes: tuple[str, ...] = ()   # address prefixes (lower case): a database or cluster, not a path
    suffixes: tuple[str, ...] = ()   # file name endings (lower case) of a file this engine reads
    embedded: bool = False           # runs in an embedded DuckDB in this process (memtables, joins, temp tables)
    from_disk: bool = False          # a file read from disk (its reader's errors are the file's)
    takes_password: bool = False     # a password may be given (never in the address itself)
    read_only_session: bool = False  # sessions are read-only: a temporary table needs its own transaction
    statement_timeout: bool = True   # a slow query can be stopped after a time the operator sets (deadline.py)
    deadline_by: str = "interrupt"   # how the deadline stops a query: "server" (the server itself, its opener takes
                                     # statement_timeout), "jobs" (its job group cancelled), "interrupt" (DuckDB's)
    exact_quantiles: bool = True     # has an exact (linear-interpolation) quantile
    can_sample: bool = True          # draws the model tools' seeded sample inside the engine
    inlines_subqueries: bool = False  # its SQL merges nested SELECTs and repeats a column's expression wherever
                                      # it is used (a volatile column keeps each SELECT a subquery computed once)
    path_in_address: bool = False    # the rest of its address may be a path on this machine (spark:/data/x.parquet)

    @property
    def is_address(self) -> bool:
        """Whether its locations are addresses (a server, a cluster) rather than paths on this machine."""
        return bool(self.prefixes)

    def open(self, location: str, table: str | None = None, **settings: Any) -> Any:
        """Open ``location`` (and ``table``) as a :class:`~luskin_core.counting.ibis_source.Source`."""
        if not self.opener:
            raise LuskinError(f"A source of the kind '{self.title}' is not opened from an address.")
        from luskin_core.counting.deadline import checked_deadline

        deadline = checked_deadline(settings.pop("statement_timeout", None), "The statement timeout")
        if self.deadline_by == "server":
            settings["statement_timeout"] = deadline   # the server stops its own queries (and its lock waits)
        module, _, function = self.opener.partition(":")
        source = getattr(importlib.import_module(module), function)(location, table, **settings)
        source.statement_timeout = deadline
        return source


_C = "luskin_core.counting."
ENGINES: tuple[Engine, ...] = (
    Engine("postgres", "PostgreSQL", _C + "postgres:open_postgres", prefixes=("postgresql://", "postgres://"),
           takes_password=True, read_only_session=True, deadline_by="server",
           inlines_subqueries=True),
    Engine("spark", "Spark", _C + "spark:open_spark", prefixes=("spark:",), exact_quantiles=False,
           path_in_address=True, deadline_by="jobs"),
    Engine("duckdb", "DuckDB table", _C + "files:open_duckdb", suffixes=(".duckdb", ".db", ".ddb"),
           embedded=True),
    Engine("parquet", "Parquet file", _C + "files:open_path", suffixes=(".parquet", ".pq"), embedded=True,
           from_disk=True),
    Engine("csv", "CSV file", _C + "files:open_path", suffixes=(".csv", ".csv.gz", ".txt", ".tsv", ".data"),
           embedded=True, from_disk=True),
    Engine("frame", "in-memory table", "", embedded=True),   # Source.from_frame(frame)
)
_BY_KEY: Mapping[str, Engine] = {engine.key: engine for engine in ENGINES}
# A file whose name matches no engine's ending is read as a CSV (DuckDB sniffs its layout).
DEFAULT_FILE = "csv"


def engine(key: str) -> Engine:
    """The engine whose key is ``key`` (a source's ``kind``)."""
    try:
        return _BY_KEY[key]
    except KeyError:
        raise ValueError(f"unknown engine {key!r}") from None


def address_engine(location: str) -> Engine | None:
    """The engine whose address prefix ``location`` starts with (a database, a cluster), or None for a path."""
    lowered = str(location).strip().lower()
    return next((e for e in ENGINES if e.prefixes and lowered.startswith(e.prefixes)), None)


def engine_for(location: str) -> Engine:
    """The engine that reads ``location``: by its address prefix, else by the file's name (a folder: Parquet)."""
    found = address_engine(location)
    if found is not None:
        return found
    text = str(location).strip()
    lowered = text.lower()
    for candidate in ENGINES:
        if candidate.suffixes and lowered.endswith(candidate.suffixes):
            return candidate
    if Path(text).expanduser().is_dir():
        return _BY_KEY["parquet"]
    return _BY_KEY[DEFAULT_FILE]


def local_path(location: str) -> str | None:
    """The path on this machine that ``location`` reads, or None when it reads none (a database server's table).

    A file or folder is its own path; an address whose engine reads a path after its prefix (``spark:/data/x``)
    gives that path when it names one.
    """
    text = str(location).strip()
    found = address_engine(text)
    if found is None:
        return text
    if not found.path_in_address:
        return None
    lowered = text.lower()
    prefix = next(p for p in found.prefixes if lowered.startswith(p))
    rest = text[len(prefix):].strip().removeprefix("//")
    return rest if rest and rest != "local" else None


def address_prefixes() -> tuple[str, ...]:
    """Every engine's address prefixes (to find addresses in a message and hide them)."""
    return tuple(p for e in ENGINES for p in e.prefixes)


def open_source(location: str, table: str | None = None, **settings: Any) -> Any:
    """Open a file, folder, database table or query as a :class:`~luskin_core.counting.ibis_source.Source`.

    ``settings``: the engine's own (e.g. ``statement_timeout`` in seconds, for an engine that has one).
    """
    text = str(location).strip()
    if not text:
        raise LuskinError("Say where the data is: a file, a folder of Parquet files or a database address.")
    return engine_for(text).open(text, table, **settings)
