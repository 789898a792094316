"""Files on this machine: CSV and Parquet files (and folders of Parquet files) counted by DuckDB's SQL directly,
and DuckDB database files.

A :class:`FileSource` renders the plan's facts and the counting query as SQL text from
:mod:`luskin_core.counting.rules`' rules (:func:`~luskin_core.counting.sql_rules.to_sql`) and runs them on
Luskin's own DuckDB: no Ibis import, no look-ahead query, and a Parquet file's integer codes read
from its row-group statistics rather than counted in a scan. Everything else a source does (the
model tools' sample, derived columns, the adjusted audit) opens the same file through Ibis
(:func:`open_path`) the first time it is asked for.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from luskin_core.counting.count_table import RawCounts, finish_raw
from luskin_core.counting.deadline import Timer, interrupt_after, over_deadline
from luskin_core.counting.engines import engine, engine_for, open_source
from luskin_core.counting.executor import listed_values
from luskin_core.counting.ibis_facts import LOOK_ROWS
from luskin_core.counting.ibis_rules import duckdb_connect, engine_message, plain_value
from luskin_core.counting.ibis_source import Source
from luskin_core.counting.memory import duck_cursor
from luskin_core.counting.plan import MAX_CODES, FactsBase, Plan
from luskin_core.counting.rules import BOOL, NUMERIC, TEXT, conjunction_rule, count_rules
from luskin_core.counting.sql_rules import count_sql, sql_literal, sql_name, to_sql
from luskin_core.errors import LuskinError
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.spec.conditions import Condition

if TYPE_CHECKING:
    import pandas as pd

    from luskin_core.counting.order import OrderRequest, RawOrder
else:  # imported on first use: a file's audit on the command line never needs it
    from luskin_core._lazy import pandas as pd

_PARQUET = engine("parquet").suffixes


def _file_name(text: str) -> tuple[Path, str]:
    path = Path(text).expanduser()
    if not path.exists():
        raise LuskinError(f"There is no file or folder '{text}'.")
    return path, path.name or str(path)


def open_path(text: str, table: str | None = None, **settings: Any) -> Source:
    """A CSV or Parquet file, or a folder of Parquet files, through Ibis on an embedded DuckDB."""
    path, shown = _file_name(text)
    con = duckdb_connect()
    try:
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.suffix.lower() in _PARQUET)
            if not files:
                raise LuskinError(f"The folder '{shown}' holds no Parquet files.")
            t = con.read_parquet([str(p) for p in files])
            kind = "parquet"
        elif engine_for(str(path)).key == "parquet":
            t = con.read_parquet(str(path))
            kind = "parquet"
        else:
            t = con.read_csv(str(path))
            kind = "csv"
        if not t.columns:
            raise LuskinError(f"'{shown}' has no columns.")
    except LuskinError:
        raise
    except Exception:  # noqa: BLE001 - a file the engine cannot read is one plain sentence
        raise LuskinError(f"'{shown}' could not be read as a table (a CSV, Parquet file or DuckDB database).") from None
    return Source(t, name=shown, kind=kind, backend=con)


def open_duckdb(text: str, table: str | None = None, **settings: Any) -> Source:
    """A table of a DuckDB database file, opened read-only."""
    path, shown = _file_name(text)
    if not table:
        raise LuskinError(f"'{shown}' is a DuckDB database: name the table to audit (the source's table; on the command line, the table option).")
    try:
        con = duckdb_connect(str(path), read_only=True)
        names = [str(r[0]) for r in con.con.execute("SELECT table_name FROM information_schema.tables").fetchall()]
    except Exception:  # noqa: BLE001 - a file the engine cannot read is one plain sentence
        raise LuskinError(f"'{shown}' could not be read as a table (a CSV, Parquet file or DuckDB database).") from None
    if table not in names:
        raise LuskinError(f"The DuckDB database '{shown}' has no table '{table}'. Its tables are: "
                          f"{', '.join(names) or 'none'}.")
    t = con.table(table)
    return Source(t, name=f"{shown}:{table}", kind="duckdb", backend=con)


# ------------------------------------------------------------------------------------------
# A file counted by DuckDB directly (no Ibis on the way to an audit)
# ------------------------------------------------------------------------------------------
_SQL_INTEGERS = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER",
                 "UBIGINT", "UHUGEINT")
_SQL_NUMERIC = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER",
                "UBIGINT", "UHUGEINT", "FLOAT", "DOUBLE", "DECIMAL", "REAL")


class FileSource(Source):
    """A CSV or Parquet file (or a folder of Parquet files) that an audit counts with DuckDB's SQL directly.

    The plan's facts and the counting query are SQL text rendered from :mod:`luskin_core.counting.rules`'
    rules (:func:`~luskin_core.counting.sql_rules.to_sql`), run on Luskin's own DuckDB: no Ibis import, no
    look-ahead query. Everything else a :class:`Source` does (the model tools' sample, derived
    columns, the adjusted audit) opens the same file through Ibis the first time it is asked for.
    """

    def __init__(self, location: str, paths: Sequence[str], *, name: str, kind: str,
                 delimiter: str | None = None, names: Sequence[str] | None = None) -> None:
        self._location = location
        self.name = name
        self.kind = kind
        self._paths = list(paths)
        self._delimiter = delimiter
        self._names = None if names is None else list(names)   # a checked CSV's header (its columns' names)
        self._forced: dict[str, str] = {}   # column -> the DuckDB type it is read as (read_as)
        self._counted: str | None = None     # the rows as combinations and counts (rows_as_counts)
        self._params: dict[str, list[Any]] = {}
        self.as_uploaded = False   # read as the upload reader reads it, the specification checked (open_csv_audited)
        self._relation = self._reader()
        self._resniffed = False
        self._n_rows = None
        self._opened: Source | None = None
        self._types: dict[str, str] | None = None
        self._footer: tuple[tuple[str, ...], tuple[dict[str, tuple[Any, ...]], int] | None] | None = None
        self._footer_rows: int | None = None   # the rows a Parquet file's footer counts (_footer_ranges)

    # -- the file through Ibis, for everything but counting ----------------------------------
    def _ibis_source(self) -> Source:
        if self._opened is None:
            self._opened = open_path(self._location)
        return self._opened

    @property  # type: ignore[override]
    def _table(self) -> Any:
        return self._ibis_source()._table

    @_table.setter
    def _table(self, value: Any) -> None:
        self._ibis_source()._table = value

    @property
    def _raw(self) -> Any:
        return self._ibis_source()._raw

    @property
    def _backend(self) -> Any:
        return self._ibis_source()._backend

    def derive(self, **columns: Any) -> Source:
        return self._ibis_source().derive(**columns)

    # -- SQL ---------------------------------------------------------------------------------
    def _reader(self, *, whole: bool = False, latin: bool = False, text: bool = False) -> str:
        """The table function reading the file. A CSV's missing markers are the upload reader's (``?``, ``NA``,
        an empty field...); ``whole``: the column types decided from every row, not the first 20,480; ``text``:
        every column as the text in the file. A CSV checked by :func:`open_csv_checked` is read with the upload
        reader's layout (its delimiter, the header row's names, quotes doubled inside quotes, no comment or skipped
        lines), nothing guessed (DuckDB's sniffing cost a fifth of a second a query on 35 MB), each column as the
        type :meth:`read_as` sets, the text otherwise."""
        listed = ", ".join(sql_literal(p) for p in self._paths)
        if self.kind == "parquet":
            return f"read_parquet([{listed}])"
        from luskin_core.counting.csvread import MISSING_MARKERS  # a CSV's only: a Parquet file's audit never loads it

        options = [f"nullstr=[{', '.join(sql_literal(m) for m in MISSING_MARKERS)}]"]
        if self._delimiter is not None:
            options += [f"delim={sql_literal(self._delimiter)}", "header=true", "quote='\"'", "escape='\"'",
                        "comment=''", "skip=0"]
        if self._names is not None:
            typed = ", ".join(f"{sql_literal(c)}: {sql_literal('VARCHAR' if text else self._forced.get(c, 'VARCHAR'))}"
                              for c in self._names)
            options += [f"columns={{{typed}}}", "auto_detect=false"]
        elif text:
            options.append("all_varchar=true")
        if whole:
            options.append("sample_size=-1")
        if latin:
            options.append("encoding='latin-1'")
        return f"read_csv([{listed}], {', '.join(options)})"

    def read_as(self, types: dict[str, str]) -> None:
        """Read these columns as these DuckDB types (a CSV's: the upload reader's kinds, :func:`open_csv_audited`);
        from the rows :meth:`rows_as_counts` gave, when it did."""
        self._forced = dict(types)
        self._relation = self._counted or self._reader()
        self._types = None

    def rows_as_counts(self, relation: str, params: dict[str, list[Any]]) -> None:
        """Count from ``relation`` (the named columns' rows, made from their combinations and counts by the check's
        scan, :func:`open_csv_audited`; ``params``: the lists it names as ``$luskin_...``, passed with each query)
        rather than reading the file again, once :meth:`read_as` is called."""
        self._counted, self._params = relation, params

    def _sql(self, sql: str, what: str = "the audit's query", fetch: str = "columns") -> Any:
        """Run ``sql`` on Luskin's DuckDB: its columns as numpy arrays (masked where missing), or with
        ``fetch="one"`` its first row (None for no row). No pandas: see :mod:`luskin_core._lazy`.

        A CSV whose types were guessed from its first rows and that holds, further on, a value of
        another type (or bytes that are not UTF-8) is read again once with the types taken from every
        row, as the upload reader takes them (a slower read, for such files only)."""
        cursor = duck_cursor()
        timer = Timer()
        try:
            with interrupt_after(self.statement_timeout, cursor.interrupt) as timer:
                result = cursor.execute(sql, self._params) if self._params and "$luskin_" in sql else cursor.execute(sql)
                return result.fetchone() if fetch == "one" else result.fetchnumpy()
        except LuskinError:
            raise
        except Exception as error:  # noqa: BLE001 - every engine failure becomes one plain sentence
            if timer.fired:
                raise LuskinError(over_deadline(what, self.name, self.statement_timeout or 0)) from None
            text = str(error).lower()
            if self.kind == "csv" and not self._resniffed and any(
                    word in text for word in ("convert", "conversion", "unicode", "sniff", "type")):
                self._resniffed = True
                old, self._relation = self._relation, self._reader(whole=True, latin="unicode" in text)
                self._types = None
                return self._sql(sql.replace(old, self._relation), what, fetch)
            raise LuskinError(engine_message(error, self.name, self.kind, what)) from None
        finally:
            cursor.close()

    def _batches(self, sql: str, rows: int = 1 << 20) -> Any:
        """The first column of ``sql``'s result as numpy arrays of ``rows`` rows each (Arrow batches: the result is
        never held whole). An engine failure reads as in :meth:`_sql`."""
        cursor = duck_cursor()
        timer = Timer()
        try:
            with interrupt_after(self.statement_timeout, cursor.interrupt) as timer:   # the whole streamed pass
                reader = cursor.sql(sql).to_arrow_reader(rows)
                for batch in reader:
                    column = batch.column(0)
                    if column.null_count == 0 and str(column.type) == "double":   # read in place: Arrow's to_numpy
                        yield np.frombuffer(column.buffers()[1], dtype=np.float64, count=len(column),   # imports pandas
                                            offset=column.offset * 8)
                    else:
                        yield column.to_numpy(zero_copy_only=False)
        except LuskinError:
            raise
        except Exception as error:  # noqa: BLE001 - every engine failure becomes one plain sentence
            if timer.fired:
                raise LuskinError(over_deadline("the column's quantiles", self.name,
                                                self.statement_timeout or 0)) from None
            raise LuskinError(engine_message(error, self.name, self.kind, "the column's quantiles")) from None
        finally:
            cursor.close()

    def types(self) -> dict[str, str]:
        """Column name -> DuckDB type, as the file's reader sees them."""
        if self._types is None:
            described = self._sql(f"DESCRIBE SELECT * FROM {self._relation}")
            self._types = {str(name): str(dtype) for name, dtype in
                           zip(described["column_name"].tolist(), described["column_type"].tolist())}
            if not self._types:
                raise LuskinError(f"'{self.name}' has no columns.")
        return self._types

    def columns(self) -> list[str]:
        return list(self.types())

    def kind_of(self, column: str) -> str:
        """NUMERIC, BOOL or TEXT (:mod:`luskin_core.counting.rules`' kinds)."""
        dtype = self.types()[column].upper()
        if dtype == "BOOLEAN":
            return BOOL
        return NUMERIC if dtype.startswith(_SQL_NUMERIC) else TEXT

    def column_sql(self, column: str) -> str:
        """A column reference; a floating NaN reads as missing, as pandas reads it (see :func:`_nan_as_missing`)."""
        name = sql_name(column)
        if self.types()[column].upper() in ("DOUBLE", "FLOAT", "REAL"):
            return (f"(CASE WHEN hash({name}) = hash(CAST('nan' AS DOUBLE)) AND CAST({name} AS VARCHAR) "
                    f"IN ('nan', '-nan') THEN NULL ELSE {name} END)")
        return name

    def integer_range(self, column: str) -> tuple[int, int] | None:
        """The smallest and largest value of an integer column of a Parquet file, from the statistics
        its writer keeps for each row group (the file's footer: milliseconds, where counting the
        distinct values of 50,000,000 rows takes a scan); None for a CSV, another type, or a row
        group without statistics."""
        if self.kind != "parquet" or self.types()[column].upper() not in _SQL_INTEGERS:
            return None
        footer = self._footer_ranges()
        if footer is None:
            return None
        ranges, all_groups = footer
        low, high, complete, entries, groups = ranges.get(column, (None, None, None, 0, 0))
        # one entry per row group, each with statistics (or holding only missing values)
        if not complete or entries != groups or groups != all_groups or low is None or high is None:
            return None
        return int(low), int(high)

    def _footer_ranges(self) -> tuple[dict[str, tuple[Any, ...]], int] | None:
        """Every column's footer statistics in one query (read once per file set, not once per column: a scan of
        eight columns read the footer eight times): path -> (min, max, all row groups with statistics, entries,
        row groups), and the file set's number of row groups; None where the footer cannot be read."""
        key = tuple(self._paths)
        if self._footer is not None and self._footer[0] == key:
            return self._footer[1]
        listed = ", ".join(sql_literal(p) for p in self._paths)
        try:   # one query: each column's row (path_in_schema) and the file set's row (grouping flag 1)
            found = self._sql(
                "SELECT path_in_schema, grouping(path_in_schema) AS whole, "
                "min(TRY_CAST(stats_min_value AS HUGEINT)) AS low, "
                "max(TRY_CAST(stats_max_value AS HUGEINT)) AS high, "
                "bool_and((TRY_CAST(stats_min_value AS HUGEINT) IS NOT NULL AND TRY_CAST(stats_max_value AS HUGEINT) "
                "IS NOT NULL) OR stats_null_count = num_values) AS complete, count(*) AS entries, "
                "count(DISTINCT (file_name, row_group_id)) AS groups, sum(row_group_num_rows) AS n_rows "
                f"FROM parquet_metadata([{listed}]) GROUP BY GROUPING SETS ((path_in_schema), ())")
        except LuskinError:
            return None

        def plain(values: Any, i: int) -> Any:
            return None if np.ma.getmaskarray(values)[i] else np.ma.getdata(values)[i].item()

        whole = [bool(plain(found["whole"], i)) for i in range(len(found["whole"]))]
        all_groups = next((plain(found["groups"], i) for i, w in enumerate(whole) if w), 0)
        ranges = {str(found["path_in_schema"][i]): tuple(plain(found[name], i) for name in
                                                         ("low", "high", "complete", "entries", "groups"))
                  for i, w in enumerate(whole) if not w}
        # The rows, from a column with one entry in every row group (each row group's row count, once each).
        rows = [plain(found["n_rows"], i) for i, w in enumerate(whole)
                if not w and plain(found["entries"], i) == all_groups == plain(found["groups"], i)]
        self._footer_rows = int(rows[0]) if rows and rows[0] is not None else None
        result = (ranges, int(all_groups))
        self._footer = (key, result)
        return result

    def value_ranges(self, column: str) -> list[tuple[float, float]] | None:
        """The smallest and largest value of a numeric column in each row group of a Parquet file holding any (its
        footer's statistics, as :meth:`integer_range`); None for a CSV or a row group without statistics."""
        if self.kind != "parquet":
            return None
        listed = ", ".join(sql_literal(p) for p in self._paths)
        try:
            found = self._sql("SELECT TRY_CAST(stats_min_value AS DOUBLE) AS lo, TRY_CAST(stats_max_value AS DOUBLE) AS hi, "
                              "coalesce(stats_null_count = num_values, FALSE) AS empty "
                              f"FROM parquet_metadata([{listed}]) WHERE path_in_schema = {sql_literal(column)}")
        except LuskinError:
            return None
        ranges = []
        for lo, hi, empty in zip(*(np.ma.filled(found[k].astype(object), None) for k in ("lo", "hi", "empty"))):
            if empty:
                continue
            if lo is None or hi is None:
                return None
            ranges.append((float(lo), float(hi)))
        return ranges or None

    def where(self, conditions: Sequence[Condition]) -> str:
        """A WHERE clause for the population (empty for none)."""
        if not conditions:
            return ""
        return " WHERE " + to_sql(conjunction_rule(conditions, self.kind_of), self.column_sql)

    # -- facts and counts --------------------------------------------------------------------
    def n_rows(self) -> int:
        if self._n_rows is None:
            self._n_rows = int(self._sql(f"SELECT count(*) AS n FROM {self._relation}", fetch="one")[0])
        return self._n_rows

    def value_counts(self, column: str, limit: int = 100) -> pd.DataFrame:
        name = self._resolve(column, "")
        col = self.column_sql(name)
        found = self._sql(f"SELECT {col} AS value, count(*) AS count FROM {self._relation} GROUP BY 1 "
                          f"ORDER BY count DESC, value ASC NULLS LAST LIMIT {int(limit)}")
        values = found["value"]   # a masked array where some are missing, else a plain one
        missing = np.ma.getmaskarray(values)
        listed = [None if m else plain_value(v) for v, m in zip(np.ma.getdata(values).tolist(), missing)]
        return pd.DataFrame({"value": pd.Series(listed, dtype=object), "count": np.ma.getdata(found["count"])})

    def distinct(self, column: str, cap: int | None = None) -> pd.Series:
        """The column's distinct present values, most frequent first (:func:`~luskin_core.counting.executor.listed_values`)."""
        return listed_values(self, column, cap)

    def facts(self, spec: AuditSpec) -> SqlFacts:
        population = tuple(Condition(self._resolve(c.column, "population"), c.op, c.value) for c in spec.population)
        facts = SqlFacts(self, population)
        # Whether there is a row at all reads the first rows only (a count would parse a whole CSV once more); a
        # Parquet file's footer, read anyway for an integer key's range (integer_range), says it without a query.
        if self._n_rows is None and self.kind == "parquet" and self._integer_keys(spec):
            self._footer_ranges()
        if self._n_rows == 0 or (self._n_rows is None and not self._footer_rows and
                                 self._sql(f"SELECT 1 AS x FROM {self._relation} LIMIT 1", fetch="one") is None):
            raise LuskinError(f"The source {self.name} has no rows.")
        facts.look(self._numeric_keys(spec))
        return facts

    def _integer_keys(self, spec: AuditSpec) -> bool:
        """Whether a key column names an integer column of the file (the facts then read the footer); False where a
        name is not the file's (the refusal is said after the row check, as before)."""
        try:
            keys = self._numeric_keys(spec)
        except LuskinError:
            return False
        return any(self.types()[c].upper() in _SQL_INTEGERS for c in keys)

    def _numeric_keys(self, spec: AuditSpec) -> list[str]:
        keyed = [self._resolve(name, role) for names, role in ((spec.group_by, "group"), (spec.strata, "strata"))
                 for name in names]
        return [c for c in dict.fromkeys(keyed) if self.kind_of(c) == NUMERIC and spec.cuts_for(c) is None]

    def count(self, plan: Plan, *, assumed: dict[str, list[Any]] | None = None) -> RawCounts:
        """The raw count table of ``plan``: one query of DuckDB's SQL over the file.

        ``assumed``: numeric columns taken value by value because the first rows showed few values
        (:meth:`SqlFacts.look`); their keys are the values themselves, so the count shows any other
        value of the population, and ``assumptions_hold`` says whether there was none. A plan counted per period
        (:mod:`luskin_core.analyses.series`: the key may be derived from a date) is counted by Ibis."""
        if plan.period is not None:
            return self._ibis_source().count(plan, assumed=assumed)
        rules = count_rules(plan, self.kind_of)
        regroup, product = [], 1
        for name, part in rules.parts.items():   # columns of few values (KeyPart.n_values) grouped on, then cut
            if part is not None and part.kind == "bins" and part.n_values is not None and \
                    product * max(part.n_values, 1) <= REGROUP_VALUES:
                regroup.append(name)
                product *= max(part.n_values, 1)
        raw = self._sql(count_sql(plan, rules, self._relation, self.column_sql, regroup))
        hold = True
        if assumed:
            outside = raw.get("r1")
            inside = ~(np.ma.getdata(outside).astype(bool) & ~np.ma.getmaskarray(outside)) if outside is not None \
                else np.ones(len(raw["n"]), dtype=bool)
            for name, part in rules.parts.items():
                if part is not None and part.kind == "value" and part.column in assumed:
                    keys = raw[name]
                    present = np.ma.getdata(keys)[inside & ~np.ma.getmaskarray(keys)]
                    known = {float(v) for v in assumed[part.column]}
                    hold = hold and all(float(v) in known for v in np.unique(present))
        counts = replace(finish_raw(raw, plan, rules), assumptions_hold=hold)
        self._n_rows = int(counts["n"].sum())   # every row is in the count table (those left out by reason)
        return counts

    def order_statistics(self, plan: Plan, request: OrderRequest) -> RawOrder:
        """An amount's order statistics: one query of DuckDB's SQL over the file (``quantile_disc``)."""
        from luskin_core.counting.order import order_sql, read_duckdb

        found = self._sql(order_sql(plan, self.kind_of, self._relation, request, self.column_sql, sql_name),
                          "the amounts' medians")
        return read_duckdb(found, plan, request)


class SqlFacts(FactsBase):
    """:class:`~luskin_core.counting.plan.Facts` of a :class:`FileSource`, over the audited population, in DuckDB SQL.

    How many values a numeric key column holds is read without a scan where it can be: from a
    Parquet file's row-group statistics (a bound, :meth:`FileSource.integer_range`), else from the
    first rows (:meth:`look`): a column showing few values there is assumed to hold no others
    (``assumed``), and the count itself checks it (:meth:`FileSource.count`); a count that finds
    another value is made again from the exact distinct count (:meth:`settle`).
    """

    def __init__(self, source: FileSource, population: Sequence[Condition] = ()) -> None:
        self.source = source
        self.population = tuple(population)
        self._distinct: dict[str, int] = {}
        self._seen: dict[str, list[Any]] = {}
        self.assumed: dict[str, list[Any]] = {}
        self._counted: dict[str, int] = {}   # values_counted

    def _bounded(self, column: str) -> bool:
        """Whether the Parquet file's statistics bound the column's values (then recorded as its count)."""
        if column in self._distinct:
            return True
        bounds = self.source.integer_range(column)
        if bounds is not None and bounds[1] - bounds[0] + 1 <= MAX_CODES:
            # At most this many values, in the file and so in the population: a bound that
            # decides as the count would (see Facts.n_distinct).
            self._distinct[column] = bounds[1] - bounds[0] + 1
            return True
        return False

    def look(self, columns: Sequence[str]) -> None:
        """The values ``columns`` take in the first rows of the population (one LIMIT query, no scan)."""
        s = self.source
        wanted = [c for c in columns if not self._bounded(c) and c not in self._seen]
        if not wanted:
            return
        listed = ", ".join(f"{s.column_sql(c)} AS k{i}" for i, c in enumerate(wanted))
        found = s._sql(f"SELECT {listed} FROM (SELECT * FROM {s._relation} LIMIT {LOOK_ROWS}) AS head"
                       f"{s.where(self.population)}")
        for i, column in enumerate(wanted):
            values = found[f"k{i}"]
            present = np.ma.getdata(values)[~np.ma.getmaskarray(values)]
            self._seen[column] = [plain_value(v) for v in np.unique(present)]

    def prefetch(self, columns: Sequence[str]) -> None:
        """The distinct counts of ``columns`` in one query (a scan), but where the Parquet file's own
        statistics settle the plan's question without one (:meth:`FileSource.integer_range`)."""
        s = self.source
        wanted = [c for c in columns if not self._bounded(c)]
        if not wanted:
            return
        metrics = ", ".join(f"count(DISTINCT {s.column_sql(c)}) AS d{i}" for i, c in enumerate(wanted))
        row = s._sql(f"SELECT {metrics} FROM {s._relation}{s.where(self.population)}", fetch="one")
        for i, column in enumerate(wanted):
            self._distinct[column] = int(row[i])

    def settle(self, columns: Sequence[str]) -> None:
        """Count the distinct values of ``columns`` exactly (their first rows' values are no longer assumed)."""
        for column in columns:
            self._seen.pop(column, None)
            self.assumed.pop(column, None)
        self.prefetch(columns)

    def resolve(self, name: str, role: str) -> str:
        return self.source._resolve(name, role)

    def is_numeric(self, column: str) -> bool:
        return self.source.kind_of(column) == NUMERIC

    def is_integer(self, column: str) -> bool:
        return self.source.types()[column].upper() in _SQL_INTEGERS

    def n_distinct(self, column: str, cap: int) -> int:
        if column not in self._distinct and column in self._seen:
            seen = self._seen[column]
            if len(seen) >= cap:
                return cap  # the first rows already show cap values: the exact count is at least that
            self.assumed[column] = seen  # no more values than seen, if the count finds no other
            return len(seen)
        self.prefetch([column])
        return min(self._distinct[column], cap)

    def values_counted(self, column: str) -> int | None:
        """How many values the column holds in the population, where :meth:`quantiles` read its value counts."""
        return self._counted.get(column)

    def _few_values(self, column: str) -> bool:
        """Whether the column is known to hold few values (its value counts are then cheap to hold): at most
        MAX_CODES by the Parquet file's statistics or an exact count, or at most :data:`FEW_IN_FIRST_ROWS` in
        the first rows (one value on 25 rows or more), whose values are then assumed to repeat further on."""
        if column in self._distinct:
            return self._distinct[column] <= MAX_CODES
        seen = self._seen.get(column)
        if not seen or len(seen) > FEW_IN_FIRST_ROWS:
            return False
        # A file ordered by the column (its first rows all zeros, say) shows few values there and may hold millions:
        # a Parquet file's statistics then show a row group outside the first rows' range, and the windows are used.
        low, high = min(float(v) for v in seen), max(float(v) for v in seen)
        ranges = self.source.value_ranges(column)
        return ranges is None or all(lo <= high and hi >= low for lo, hi in ranges)

    def quantiles(self, column: str, probs: Sequence[float]) -> list[float]:
        """DuckDB's ``quantile_cont`` of the column over the population, exactly, for each probability.

        A column the first rows show holding few values (:meth:`_few_values`: HMDA's income in thousands,
        ages, scores on a scale) has its quantiles read from its value counts: one GROUP BY (23.3M rows: 0.11 s,
        where the windows below take 0.57 s), exact, and the count of its values in the population
        kept (:meth:`values_counted`, then the plan's ``KeyPart.n_values``), so that :meth:`FileSource.count` cuts it
        into ranges after grouping on it.

        Ordering every value (``quantile_cont`` itself) holds the column in memory (measured in
        benchmarks/results/stratified_files_issue26.md). Instead (:func:`windowed_quantiles`), two scans that keep little: a uniform sample's quantiles
        place a narrow window of values around each wanted one, then the rows below each window are counted
        and the values inside it tallied, which gives the exact order statistics whenever they fall inside
        (checked from the counts); when one does not (odds of about one in ten million), or for a small
        population, ``quantile_cont`` is asked."""
        s = self.source
        population = s.where(self.population)
        where = (population + " AND " if population else " WHERE ")
        # The windows read the column as it is and drop a NaN themselves: DuckDB's filter on isnan() is pushed into
        # the Parquet reader, whose statistics leave NaN out (every row passes); column_sql's test costs a second.
        plain = (f"(SELECT CAST({sql_name(column)} AS DOUBLE) AS x FROM {s._relation}{where}"
                 f"{sql_name(column)} IS NOT NULL) AS kept")
        if self._few_values(column):
            counted = s._sql(f"SELECT CAST(v AS DOUBLE) AS v, n FROM (SELECT {sql_name(column)} AS v, count(*) AS n "
                             f"FROM {s._relation}{where}{sql_name(column)} IS NOT NULL GROUP BY 1)")
            held, counts = np.asarray(counted["v"], dtype=float), np.asarray(counted["n"], dtype=np.int64)
            present = ~np.isnan(held)   # a NaN is missing, as pandas reads it
            self._counted[column] = int(present.sum())
            return counted_quantiles(held[present], counts[present], probs)
        where += f"{s.column_sql(column)} IS NOT NULL"
        # A CSV read twice costs more than its quantiles; a smaller file's sample would be too small (and the windows
        # import pyarrow and pandas, which a Parquet file's audit does not need otherwise).
        found = (windowed_quantiles(s._batches, plain, [float(p) for p in probs])
                 if s.kind == "parquet" and s.n_rows() >= _WINDOWS[-1][0] * 100 / _SAMPLE_PERCENT else None)
        if found is not None:
            return found
        rows = f"(SELECT CAST({s.column_sql(column)} AS DOUBLE) AS x FROM {s._relation}{where}) AS kept"
        # One aggregate for every probability: DuckDB orders the values once (one per probability ordered them
        # once each: 23M rows, 4 probabilities, 4.5 s and 1.1 GB).
        listed = ", ".join(repr(float(p)) for p in probs)
        row = s._sql(f"SELECT quantile_cont(x, [{listed}]) AS q FROM {rows}", fetch="one")
        values = row[0] if row is not None and row[0] is not None else [None] * len(probs)
        return [math.nan if v is None else float(v) for v in values]


# windowed_quantiles: a random sample of this share of the rows (seeded: the same windows each time), and the
# windows' half-widths in probability by the sample's size: 5.5 times the largest standard deviation of a sample
# quantile's rank (0.5 / sqrt(size)), so that a window misses its quantile about once in 10^7 (then quantile_cont
# is asked). Below the smallest size, quantile_cont itself is cheap.
_SAMPLE_PERCENT = 1.0
_WINDOWS = ((210_000, 0.006), (34_000, 0.015), (8_500, 0.03))


# SqlFacts._few_values: a column showing at most this many values in the first LOOK_ROWS rows of the population
# (a value on 25 rows or more, on average) has its quantiles read from its value counts. The count of the
# values is then known, and a count cuts such a column into ranges after grouping on its values, where it holds
# at most REGROUP_VALUES values (all such columns of a count together: the product of their counts).
FEW_IN_FIRST_ROWS = 2_000
REGROUP_VALUES = 20_000


def counted_quantiles(values: np.ndarray, counts: np.ndarray, probs: Sequence[float]) -> list[float]:
    """``quantile_cont(x, probs)`` of a column given as its distinct values (no NaN) and how many rows hold each:
    the same order statistics and interpolation (:func:`_between`); NaN for every probability when empty."""
    order = np.argsort(values, kind="stable")
    values, ends = values[order], np.cumsum(counts[order])
    n = int(ends[-1]) if len(ends) else 0
    if n == 0:
        return [math.nan] * len(probs)

    def value_at(rank: int) -> float:   # the value of the row of this rank (from 0, ascending)
        return float(values[int(np.searchsorted(ends, rank, side="right"))])

    out = []
    for p in probs:
        h = (n - 1) * min(max(float(p), 0.0), 1.0)
        floor = math.floor(h)
        out.append(_between(value_at(floor), value_at(math.ceil(h)), h - floor))
    return out


def _between(lo: float, hi: float, d: float) -> float:
    """DuckDB's interpolation of doubles, lo * (1 - d) + hi * d, as its build computes it (one rounding of the first
    product and the sum: a fused multiply-add; checked against quantile_cont in the tests)."""
    return lo if d == 0 else float(Fraction(lo) * Fraction(1.0 - d) + Fraction(hi * d))


def windowed_quantiles(batches: Any, rows: str, probs: Sequence[float]) -> list[float] | None:
    """``quantile_cont(x, probs)`` over the relation ``rows`` (one column ``x``, no NULL; NaN left out) exactly, from
    a sample's windows and two streaming scans; None when the population is small or a wanted order statistic
    falls outside its window (the caller asks ``quantile_cont``). ``batches(sql)``: the query's only column, as
    numpy arrays of a part of the rows each.

    quantile_cont's definition: at h = (n - 1) p, the value of rank floor(h) plus (h - floor(h)) times the
    step to the value of rank ceil(h) (ranks from 0 in ascending order)."""
    sample = _streamed_sample(batches, rows)
    width = next((w for least, w in _WINDOWS if len(sample) >= least), None)
    if width is None:
        return None
    windows = _quantile_windows(sample, [p for p in probs if 0.0 < p < 1.0], width)
    if windows is None:
        return None
    n, low, high, pieces = _window_pieces(batches, rows, windows)
    out: list[float] = []
    for p in probs:
        if p <= 0.0 or p >= 1.0:
            out.append(float(low if p <= 0.0 else high))
            continue
        h = (n - 1) * p
        floor = math.floor(h)
        lo_value, hi_value = _value_at(pieces, floor), _value_at(pieces, math.ceil(h))
        if lo_value is None or hi_value is None:
            return None
        out.append(_between(lo_value, hi_value, h - floor))
    return out


def _streamed_sample(batches: Any, rows: str) -> np.ndarray:
    """A seeded draw from each part of the column as it streams past, sorted, NaN left out (DuckDB's own Bernoulli
    sample took 0.38 s of 23.3M rows, the stream 0.08 s; a WHERE on isnan() would be pushed into the Parquet
    reader, which lets NaN through)."""
    random = np.random.default_rng(26)
    parts = []
    for x in batches(f"SELECT x FROM {rows}"):
        drawn = int(random.binomial(len(x), _SAMPLE_PERCENT / 100))
        if drawn:
            parts.append(x[random.integers(0, len(x), drawn)])
    sample = np.sort(np.concatenate(parts)) if parts else np.zeros(0)
    return sample[~np.isnan(sample)]


def _quantile_windows(sample: np.ndarray, inner: Sequence[float], width: float) -> list[list[float]] | None:
    """The sample's values ``width`` either side of each wanted share, overlapping windows merged; None when an
    edge is not finite."""
    def at(q: float) -> float:   # the sample's value of rank q (a value of the column)
        return float(sample[min(max(round(q * (len(sample) - 1)), 0), len(sample) - 1)])

    windows: list[list[float]] = []
    for lo, hi in sorted((at(min(max(p - width, 0.0), 1.0)), at(min(max(p + width, 0.0), 1.0))) for p in inner):
        if not (math.isfinite(lo) and math.isfinite(hi)):
            return None
        if windows and lo <= windows[-1][1]:
            windows[-1][1] = max(windows[-1][1], hi)
        else:
            windows.append([lo, hi])
    return windows


def _window_pieces(batches: Any, rows: str, windows: list[list[float]]) -> tuple[int, float, float, list[Any]]:
    """The rows (NaN left out), the least and greatest value, and per window: the rank of its first row, its low edge
    and rows there, the values strictly inside (sorted), its high edge and rows there.

    Those below each window and those at either edge counted, the values strictly inside kept (about 1% of the rows:
    a value on many rows sits at an edge, the sample's quantiles being values of the column), a million rows at a
    time in numpy (DuckDB's filtered aggregates were slower than its sort)."""
    tally = np.zeros((len(windows), 3), dtype=np.int64)
    middles: list[list[np.ndarray]] = [[] for _ in windows]
    n, low, high = 0, math.inf, -math.inf
    for x in batches(f"SELECT x FROM {rows}"):
        if not len(x):
            continue
        least, most = float(x.min()), float(x.max())   # NaN when the part holds one (then read without them)
        if math.isnan(least) or math.isnan(most):
            x = x[~np.isnan(x)]   # a NaN is missing, as pandas reads it
            if not len(x):
                continue
            least, most = float(x.min()), float(x.max())
        n += len(x)
        low, high = min(low, least), max(high, most)
        for j, (lo, hi) in enumerate(windows):
            tally[j] += (np.count_nonzero(x < lo), np.count_nonzero(x == lo), np.count_nonzero(x == hi) if hi > lo else 0)
            middles[j].append(x[(x > lo) & (x < hi)])
    pieces = []
    for j, (lo, hi) in enumerate(windows):
        values = np.sort(np.concatenate(middles[j])) if middles[j] else np.zeros(0)
        pieces.append((int(tally[j, 0]), float(lo), int(tally[j, 1]), values, float(hi), int(tally[j, 2])))
    return n, low, high, pieces


def _value_at(pieces: list[Any], rank: int) -> float | None:
    """The value of rank ``rank`` (from 0, ascending), when a window holds it."""
    for below, lo, at_lo, values, hi, at_hi in pieces:
        r = rank - below
        if 0 <= r < at_lo:
            return lo
        if at_lo <= r < at_lo + len(values):
            return float(values[r - at_lo])
        if at_lo + len(values) <= r < at_lo + len(values) + at_hi:
            return hi
    return None


def open_file(location: str) -> Source:
    """A CSV or Parquet file (or a folder of Parquet files) for an audit counted by DuckDB's SQL directly.

    Anything else (a database, Spark, a DuckDB file) is opened by :func:`open_source`.
    """
    path = Path(str(location).strip()).expanduser()
    found = engine_for(str(location))
    if not path.exists() or not found.from_disk:
        return open_source(location)
    if path.is_dir():
        files = sorted(str(p) for p in path.rglob("*") if p.suffix.lower() in _PARQUET)
        if not files:
            raise LuskinError(f"The folder '{path.name or path}' holds no Parquet files.")
        source = FileSource(str(path), files, name=path.name or str(path), kind="parquet")
    else:
        if found.key == "csv":   # the upload's size limit (1 GB, plain or gzip), in its plain words
            from luskin_core.counting.csvread import MAX_BYTES, CsvBytes

            CsvBytes(path, MAX_BYTES)
        source = FileSource(str(path), [str(path)], name=path.name or str(path),
                            kind=found.key)
    try:
        source.types()
    except LuskinError:
        raise LuskinError(f"'{source.name}' could not be read as a table (a CSV, Parquet file or DuckDB "
                          "database).") from None
    return source


# NYPD Stop-Question-Frisk files: load_data makes their flags and codes readable (read in memory).
_SQF_COLUMNS = {"frisked", "detailcm", "crimsusp"}


def open_csv_checked(location: str) -> FileSource | None:
    """A CSV file for an audit counted by DuckDB, after the upload reader's own checks, or None when only
    the upload reader reads it as the dashboard would.

    Refused in the upload's plain words (:mod:`luskin_core.counting.csvread`): a file past the size
    limit (1 GB, plain or gzip), empty, not text, another format (a spreadsheet, JSON, HTML, an
    archive), a single column, too many columns. None (read in memory instead) for a file whose
    first rows show what DuckDB would read otherwise than the upload reader: an encoding other than
    UTF-8, blanks around values or names, repeated or blank names, a quote after a blank, an NYPD file.
    """
    import csv
    import io

    from luskin_core.counting.csvread import (
        MAX_BYTES,
        ONE_COLUMN,
        CsvBytes,
        check_width,
        clean_names,
        decode_head,
        read_layout,
    )

    path = Path(str(location).strip()).expanduser()
    source = CsvBytes(path, MAX_BYTES)
    layout = read_layout(source)
    if layout.names is not None:
        check_width(len(layout.names))
        if len(layout.names) < 2:
            raise LuskinError(ONE_COLUMN)
    names = layout.names
    if (names is None or layout.encoding != "utf-8" or layout.quote_after_space or list(names) != clean_names(names)
            or _SQF_COLUMNS <= {n.lower() for n in names}):
        return None
    head, at_end = source.head(1 << 16)
    text = decode_head(head, layout.encoding, at_end)
    try:
        rows = [row for row in csv.reader(io.StringIO(text if at_end else text[: text.rfind("\n") + 1]),
                                          delimiter=layout.delimiter) if row]
    except csv.Error:
        return None
    if any(field != field.strip() for row in rows for field in row):
        return None   # the upload reader strips blanks around values; DuckDB would keep them
    many = max(20, _HEAD_CELLS // len(names))   # a wide file: fewer rows
    first = rows[1:many + 1] if at_end else rows[1:min(many + 1, len(rows) - 1)]
    found = FileSource(str(path), [str(path)], name=path.name or str(path), kind="csv", delimiter=layout.delimiter,
                       names=names)
    try:
        if found.columns() != list(names):   # DuckDB took another row for the header, or named a column otherwise
            return None
        # The first rows as DuckDB reads them (the text in the file) are the rows the csv module reads: the same
        # header, no row skipped or added (a blank line before the header), quotes read alike.
        read = found._sql(f"SELECT * FROM {found._reader(text=True)} LIMIT {len(first)}", "the file's first rows")
    except LuskinError:
        return None
    if len(read) and len(next(iter(read.values()))) != len(first):
        return None
    from luskin_core.counting.csvread import MISSING_MARKERS

    for i, column in enumerate(names):
        values, missing = np.ma.getdata(read[column]), np.ma.getmaskarray(read[column])
        theirs = [None if missing[j] else str(values[j]) for j in range(len(first))]
        ours = [None if len(row) <= i or row[i] in MISSING_MARKERS else row[i] for row in first]
        if theirs != ours:
            return None
    return found


_HEAD_CELLS = 100_000   # cells of a CSV's first rows compared between DuckDB's reading and the csv module's (open_csv_checked)


# The DuckDB type a column of a CSV counted by DuckDB is read as, by the kind the upload reader gives it (text otherwise).
_UPLOAD_TYPES = {"Int64": "BIGINT", "Float64": "DOUBLE"}


def open_csv_audited(location: str, spec: AuditSpec, *, one_value_groups: bool = False) -> tuple[FileSource, AuditSpec] | None:
    """A CSV file for ``luskin audit`` counted by DuckDB, read as the upload reader reads it, and the specification
    checked as on the upload reader's frame (:func:`~luskin_core.spec.validation.check_spec`, the same function), or
    None when the file is for the upload reader (read in memory) instead.

    The checks that need the rows look only at the header and at each named column's distinct present values and
    type. So one scan reads every column the specification names as the text in the file, and gives its distinct
    values; the upload reader's own conversion (:func:`~luskin_core.counting.csvread.load_csv`'s: numbers when every
    value is one, blanks and missing markers) makes them the values and type the upload's frame would hold, and a
    small frame of them (every column of the file; each named column its distinct values, repeated to one length)
    is checked. DuckDB then reads each named column as that type (``BIGINT``, ``DOUBLE`` or the text), after a check
    that DuckDB's reading of every distinct text gives the upload's value. None (the file is read in memory, and its
    words and numbers are the upload's) for a file :func:`open_csv_checked` leaves to the upload reader, one DuckDB
    reads otherwise (a value it converts differently, blanks, a later row that is not UTF-8 or breaks the layout),
    and a specification the check refuses: the upload's frame then says why, listing the values in its order.
    """
    from luskin_core.spec.columns import check_column_names
    from luskin_core.spec.validation import check_spec

    try:
        source = open_csv_checked(location)
        if source is None:
            return None
        read = _upload_values(source, spec)
        if read is None:
            return None
        frame, types = read
        check_column_names(frame)
        checked = check_spec(spec, frame, one_value_groups=one_value_groups)
    except LuskinError:
        return None
    source.read_as(types)
    source.as_uploaded = True
    return source, checked


def _named_columns(spec: AuditSpec, columns: Sequence[str]) -> list[str]:
    """The file's columns the specification names (matched regardless of case and surrounding blanks)."""
    wanted = [spec.outcome, spec.outcome_spec.prediction, *spec.group_spec.group_by, *spec.cell_spec.strata]
    if spec.group_spec.protected is not None:
        wanted.append(spec.group_spec.protected.column)
    wanted += [c.column for c in (*spec.cell_spec.filters, *spec.cell_spec.population)]
    keys = {str(w).strip().lower() for w in wanted if w is not None}
    return [c for c in columns if c.strip().lower() in keys]


def _upload_values(source: FileSource, spec: AuditSpec) -> tuple[pd.DataFrame, dict[str, str]] | None:
    """The small frame the specification is checked on (see :func:`open_csv_audited`) and the DuckDB type of each
    named column; None when DuckDB's reading of a value differs from the upload reader's."""
    import pyarrow as pa

    from luskin_core.counting.csvread import text_column

    columns = source.columns()
    named = _named_columns(spec, columns)
    text = source._reader(text=True)
    if named:
        picked = ", ".join(sql_name(c) for c in named)
        flags = ", ".join(f"grouping({sql_name(c)}) AS g{i}" for i, c in enumerate(named))
        sets = list(dict.fromkeys([f"({sql_name(c)})" for c in named] + [f"({picked})"]))
        casts = ", ".join(f"TRY_CAST({sql_name(c)} AS BIGINT) AS i{i}, TRY_CAST({sql_name(c)} AS DOUBLE) AS d{i}"
                          for i, c in enumerate(named))
        # One scan: each named column's distinct texts, and the rows' distinct combinations of them with their counts.
        found = source._sql(f"SELECT *, {casts} FROM (SELECT {picked}, {flags}, count(*) AS n FROM {text} "
                            f"GROUP BY GROUPING SETS ({', '.join(sets)})) AS distinct_texts",
                            "the check of the specification")
    else:
        found = {}
    if source._resniffed:   # a later row DuckDB reads otherwise (not UTF-8, another layout): the upload reader's
        return None
    arrays: dict[str, Any] = {}
    types: dict[str, str] = {}
    flagged = [np.ma.getdata(found[f"g{i}"]).astype(bool) for i in range(len(named))]
    combined = ~np.logical_or.reduce(flagged) if named else np.zeros(0, dtype=bool)   # the combinations' rows
    for i, column in enumerate(named):
        alone = ~flagged[i] & np.logical_and.reduce([f for j, f in enumerate(flagged) if j != i] or [combined])
        keep = alone & ~np.ma.getmaskarray(found[column])
        raw = [str(v) for v in np.ma.getdata(found[column])[keep]]
        upload = text_column(pa.chunked_array([pa.array(raw, pa.large_string())]), clean=True)
        kind = _UPLOAD_TYPES.get(str(upload.dtype), "VARCHAR")
        read = {"BIGINT": found[f"i{i}"], "DOUBLE": found[f"d{i}"]}.get(kind)
        if not _reads_alike(raw, upload, None if read is None else read[keep], kind):
            return None
        arrays[column], types[column] = upload, kind
    if named and np.count_nonzero(combined) <= _ROWS_AS_COUNTS:
        source.rows_as_counts(*_counted_rows(found, named, combined, types))
    length = max([len(a) for a in arrays.values()] + [1])
    frame = {}
    for column in columns:
        array = arrays.get(column)
        if array is None:
            array = text_column(pa.chunked_array([pa.array([], pa.large_string())]), clean=True)
        # each named column's distinct values repeated to one length (the same distinct values); none: all missing
        at = np.arange(length) % len(array) if len(array) else np.full(length, -1)
        frame[column] = array.take(at, allow_fill=not len(array))
    return pd.DataFrame(frame, copy=False), types


# A file whose named columns take at most this many combinations is counted from them (FileSource.rows_as_counts);
# each query binds them as lists (about 0.15 s a query for 20,000 on the 2-core machine; as VALUES rows, 5 s).
_ROWS_AS_COUNTS = 10_000


def _counted_rows(found: dict[str, Any], named: list[str], combined: np.ndarray,
                  types: dict[str, str]) -> tuple[str, dict[str, list[Any]]]:
    """The rows of the named columns, as a relation made from their combinations and counts (no further scan), and
    the lists it binds."""
    params: dict[str, list[Any]] = {}
    for i, column in enumerate(named):
        values, missing = np.ma.getdata(found[column])[combined], np.ma.getmaskarray(found[column])[combined]
        params[f"luskin_v{i}"] = [None if m else str(v) for v, m in zip(values.tolist(), missing.tolist())]
    params["luskin_n"] = [int(n) for n in np.ma.getdata(found["n"])[combined].tolist()]
    lists = ", ".join([f"unnest($luskin_v{i}::VARCHAR[]) AS v{i}" for i in range(len(named))]
                      + ["unnest($luskin_n::BIGINT[]) AS n"])
    typed = ", ".join(f"CAST(v{i} AS {types[c]}) AS {sql_name(c)}" for i, c in enumerate(named))
    # Each combination n times: unnest of an n-long list streams (a lateral range(n) join held every row at once).
    relation = (f"(SELECT {typed} FROM (SELECT *, unnest(list_resize([]::BOOLEAN[], n)) AS copy "
                f"FROM (SELECT {lists}) AS combination) AS copies)")
    return relation, params


def _reads_alike(raw: list[str], upload: Any, read: Any, kind: str) -> bool:
    """Whether DuckDB reading each text of ``raw`` as ``kind`` (``read``: its TRY_CAST, for a number) gives the
    upload reader's value of it (``upload``)."""
    if any(value != value.strip() for value in raw):
        return False   # blanks around a value: the upload reader strips them
    if bool(np.asarray(pd.isna(upload), dtype=bool).any()):
        return False   # a text the upload reader reads as missing ('inf', a number past float64's range): DuckDB would not
    if kind == "VARCHAR":
        return [str(v) for v in upload] == raw
    if np.ma.getmaskarray(read).any():
        return False
    ours = np.asarray(upload, dtype=np.int64 if kind == "BIGINT" else np.float64)
    return bool(np.array_equal(np.ma.getdata(read).astype(ours.dtype), ours))
