"""The command line's side of engine sources: which ``--data`` values an engine reads, and loading them.

``luskin audit`` counts inside the engine (the rows never leave it); the model tools (retrain,
thresholds, equalize, report) need rows, so a large source gives them a seeded sample stratified by
group x outcome, and one line on stderr says its size and the table's.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from luskin_cli.options import CommandOptions
from luskin_core.spec.dataref import DataRef

if TYPE_CHECKING:  # the CLI's --help must not import pandas
    from luskin_core.spec.audit_spec import AuditSpec

# A CSV this large is read by the engine rather than into pandas (the library's in-memory limit is 1 GB).
BIG_CSV_BYTES = 200 * 1024 * 1024
# From this size up, ``luskin audit`` counts a CSV in DuckDB after the upload reader's checks (files.open_csv_audited):
# on smaller files the upload reader was as fast and lighter (benchmarks/results/csv_audit_issue26.md: 5 MB, +0.1 to
# +0.7 s and +50 MB through DuckDB; 35 MB, -0.12 s and -24 MB; 139 MB, -0.7 s and -170 MB).
DUCKDB_CSV_BYTES = 16 * 1024 * 1024


def _file_size(location: str) -> int | None:
    """The size of the plain file (a CSV, for the default reader) ``--data`` names on this machine, else None."""
    from luskin_core.counting.engines import DEFAULT_FILE, engine_for

    text = location.strip()
    if DataRef.parse(text).is_sample or engine_for(text).key != DEFAULT_FILE:
        return None
    path = Path(text).expanduser()
    try:
        return path.stat().st_size if path.is_file() else None
    except OSError:
        return None


def is_engine_location(location: str, table: str | None) -> bool:
    """Whether ``--data`` names something an engine reads: a database, Spark, Parquet, or a big CSV."""
    from luskin_core.counting.engines import DEFAULT_FILE, engine_for

    if table:
        return True
    text = location.strip()
    if DataRef.parse(text).is_sample:
        return False
    if engine_for(text).key != DEFAULT_FILE:   # a database, Spark, Parquet, a DuckDB file or a folder
        return True
    size = _file_size(text)
    return size is not None and size > BIG_CSV_BYTES


def is_checked_csv(location: str, table: str | None) -> bool:
    """Whether ``--data`` names a CSV file on this machine that ``luskin audit`` counts in DuckDB after the upload
    reader's checks: from DUCKDB_CSV_BYTES up to BIG_CSV_BYTES (past it, DuckDB reads it unchecked)."""
    size = None if table else _file_size(location)
    return size is not None and DUCKDB_CSV_BYTES <= size <= BIG_CSV_BYTES


def add_engine_options(parser: argparse.ArgumentParser) -> None:
    """--table and --sample-cap (beside --data)."""
    group = parser.add_argument_group("large sources")
    group.add_argument("--table", default=None, metavar="NAME",
                       help="the table (or a SELECT query, for PostgreSQL) when --data is a database: "
                            "postgresql://user@host:5432/db, a DuckDB file, or spark:")
    group.add_argument("--query-timeout", default=None, metavar="SECONDS",
                       help="seconds any one query may run before it is stopped (default 300; a locked table is "
                            "waited for at most 20 of them)")
    group.add_argument("--sample-cap", type=int, default=None, metavar="N",
                       help="largest sample the model tools draw from a large source (default 500000)")


def open_for_args(args: CommandOptions, location: str) -> Any:
    """The :class:`~luskin_core.counting.sources.Source` that ``--data``/``--table`` name.

    A CSV or Parquet file (or a folder of Parquet files) is counted by DuckDB's SQL directly
    (:func:`~luskin_core.counting.sources.open_file`: no Ibis import, no look-ahead query); a database,
    Spark or a DuckDB file goes through Ibis.
    """
    from luskin_core.counting.deadline import checked_deadline
    from luskin_core.counting.sources import open_file, open_source

    table = args.table
    deadline = checked_deadline(args.query_timeout, "--query-timeout")
    source = open_source(location, table, statement_timeout=deadline) if table else open_file(location)
    source.statement_timeout = deadline
    return source


def sample_for_args(args: CommandOptions, location: str, spec: AuditSpec) -> Any:
    """Rows for the model tools: the whole source when small, else a stratified seeded sample (said on stderr)."""
    from luskin_core.counting.sources import DEFAULT_SAMPLE_CAP

    source = open_for_args(args, location)
    cap = args.sample_cap or DEFAULT_SAMPLE_CAP
    frame, info = source.sample(spec, cap=int(cap), seed=int(args.seed or 0))
    args.sample_info = info  # the report says which rows the models used
    if info.sampled:
        print(f"Sample: {info.n_sample:,} of {info.n_table:,} rows of {source.name}, stratified by group and "
              f"outcome (seed {info.seed}); --sample-cap changes its size.", file=sys.stderr)
    return frame


def sample_json(args: CommandOptions, frame: Any) -> dict[str, Any]:
    """``{"sample": {n_sample, n_table, seed, sampled}}`` for a model tool's ``--json``: which rows the models used.

    From a large source, the sample drawn (:func:`sample_for_args`); otherwise every row that was loaded.
    """
    info = args.sample_info
    if info is not None:
        return {"sample": info.to_dict()}
    n = len(frame)
    return {"sample": {"n_sample": n, "n_table": n, "seed": int(args.seed or 0), "sampled": False}}
