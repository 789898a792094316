"""Spark: a table or view registered in the running (or a new local) SparkSession, or a Parquet path read by Spark.

``spark:`` with ``table``; ``spark:/path/to/data.parquet`` reads a Parquet file or folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from luskin_core.counting.ibis_rules import load_ibis
from luskin_core.counting.ibis_source import Source
from luskin_core.errors import LuskinError


def open_spark(location: str, table: str | None = None, **settings: Any) -> Source:
    """Open a Spark table or Parquet path (see the module's docstring)."""
    rest = location.strip()[len("spark:"):]
    ibis = load_ibis()
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise LuskinError("Spark sources need pyspark: pip install 'luskin[spark]'.") from None
    session = SparkSession.getActiveSession()
    if session is None:
        # Luskin's own session: local only (nothing listens beyond 127.0.0.1), no web UI, no progress bar
        # on the terminal, errors only in the log
        # (a session the caller already had keeps its settings).
        try:
            session = (SparkSession.builder.master("local[*]").appName("luskin")
                       .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
                       .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
                       .getOrCreate())
            session.sparkContext.setLogLevel("ERROR")
        except Exception:  # noqa: BLE001 - most often no Java: one sentence, not a Java gateway traceback
            raise LuskinError("Spark could not start. It needs Java 17 or later: install it and set JAVA_HOME "
                              "(or put 'java' on the PATH).") from None
    # Ibis writes a text value as a literal with backslash escapes, which Spark reads as such unless the
    # session reads literals raw: then a value could end its literal, so such a session is not queried.
    if str(session.conf.get("spark.sql.parser.escapedStringLiterals", "false")).lower() != "false":
        raise LuskinError("The Spark session reads string literals raw (spark.sql.parser.escapedStringLiterals "
                          "is true), so values could not be passed to it safely: set it to false.")
    con = ibis.pyspark.connect(session)
    path = rest.strip().removeprefix("//")
    try:
        if path and path not in ("local", ""):
            t = con.read_parquet(path)
            shown = f"spark:{Path(path).name}"
        else:
            if not table:
                raise LuskinError("Name the Spark table to audit (the source's table; on the command line, the table option).")
            if table not in con.list_tables():
                raise LuskinError(f"Spark has no table or view named '{table}'.")
            t = con.table(table)
            shown = f"spark:{table}"
    except LuskinError:
        raise
    except Exception:  # noqa: BLE001
        raise LuskinError(f"Spark could not read '{path or table}' as a table.") from None
    return Source(t, name=shown, kind="spark", backend=con)
