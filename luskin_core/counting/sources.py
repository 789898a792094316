"""Audit data where it lives: the public names of Luskin's sources, gathered from the modules that do each job.

* :mod:`~luskin_core.counting.engines`: the engines, declared once (addresses, names, capabilities), and
  :func:`open_source`, which opens a location with its engine's opener;
* :mod:`~luskin_core.counting.executor`: the one protocol every place an audit is counted in follows
  (``facts(spec)``, ``count(plan)``) and the one walk from a specification to a checked count table;
* :mod:`~luskin_core.counting.ibis_source`: a table behind Ibis (:class:`Source`), its facts
  (:mod:`~luskin_core.counting.ibis_facts`), the rules as Ibis expressions
  (:mod:`~luskin_core.counting.ibis_rules`) and the model tools' sample (:mod:`~luskin_core.counting.sampling`);
* :mod:`~luskin_core.counting.files`: CSV and Parquet files counted by DuckDB's SQL directly
  (:func:`open_file`, :class:`FileSource`) and DuckDB database files;
* :mod:`~luskin_core.counting.postgres` and :mod:`~luskin_core.counting.spark`: the two servers.

Locations understood by :func:`open_source`:

* a CSV file (plain or ``.gz``), a Parquet file or a folder of Parquet files (read by DuckDB);
* a DuckDB database file (``.duckdb``/``.db``) with ``table``;
* ``postgresql://user[:password]@host[:port]/db`` (also ``?host=/socket/dir``) with ``table``, a
  table name or a ``SELECT ...`` query;
* ``spark:`` with ``table``: a table or view registered in the running (or a new local)
  SparkSession; ``spark:/path/to/data.parquet`` reads a Parquet file or folder with Spark.

Column names come from users' files: they are never pasted into SQL text; Ibis quotes them.
"""

from __future__ import annotations

from luskin_core.counting.engines import ENGINES, Engine, engine, engine_for, open_source
from luskin_core.counting.executor import Executor, FrameExecutor, count_plan, counted_table, executor_for
from luskin_core.counting.files import FileSource, SqlFacts, open_file
from luskin_core.counting.ibis_facts import LOOK_ROWS, EngineFacts
from luskin_core.counting.ibis_rules import (
    check_exprs,
    conjunction_expr,
    duckdb_connect,
    engine_message,
    is_numeric,
    load_ibis,
    mask_expr,
    outcome_expr,
    part_expr,
    plain_value,
    table_kind,
    to_ibis,
)
from luskin_core.counting.ibis_source import Source
from luskin_core.counting.sampling import DEFAULT_SAMPLE_CAP, SampleInfo

__all__ = [
    "DEFAULT_SAMPLE_CAP",
    "ENGINES",
    "LOOK_ROWS",
    "Engine",
    "EngineFacts",
    "Executor",
    "FileSource",
    "FrameExecutor",
    "SampleInfo",
    "Source",
    "SqlFacts",
    "check_exprs",
    "conjunction_expr",
    "count_plan",
    "counted_table",
    "duckdb_connect",
    "engine",
    "engine_for",
    "engine_message",
    "executor_for",
    "is_numeric",
    "load_ibis",
    "mask_expr",
    "open_file",
    "open_source",
    "outcome_expr",
    "part_expr",
    "plain_value",
    "table_kind",
    "to_ibis",
]
