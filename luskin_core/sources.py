"""Audit data where it lives: files, DuckDB, PostgreSQL and Spark through one expression layer (Ibis).

An audit needs only counts, so a :class:`Source` builds the plan from facts the engine computes
(column types, distinct values, quantiles, the score median) and asks the engine for the raw
count table in one aggregation: the rows never travel. The expressions mirror
:func:`luskin_core.counts.aggregate_frame` rule by rule, so every engine gives the same count
table and audit as the in-memory path.

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

import math
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import numpy as np
import pandas as pd

from .conditions import Condition
from .counts import COUNT_COLUMNS, REASONS, CountTable, Plan, build_plan
from .errors import LuskinError
from .spec import AuditSpec

DEFAULT_SAMPLE_CAP = 500_000
_ORDER_OPS = ("<", "<=", ">", ">=")


@dataclass(frozen=True)
class SampleInfo:
    """How a sample for the model tools was drawn: its size, the table's size, the seed."""

    n_sample: int
    n_table: int
    seed: int
    sampled: bool

    def sentence(self) -> str:
        if not self.sampled:
            return f"All {self.n_table:,} rows of the source are used (no sample was needed)."
        return (f"A seeded sample of {self.n_sample:,} rows (of {self.n_table:,}), stratified by group and "
                f"outcome, is used (seed {self.seed}).")


def _ibis() -> Any:
    import ibis  # type: ignore[import-untyped]

    return ibis


class Source:
    """A table in a query engine that Luskin can audit without loading its rows."""

    def __init__(self, table: Any, *, name: str, kind: str, backend: Any = None) -> None:
        self._table = table
        self.name = name
        self.kind = kind
        self._backend = backend
        self._n_rows: int | None = None

    def __repr__(self) -> str:
        return f"Source({self.kind}: {self.name})"

    # -- construction ------------------------------------------------------------------------
    @classmethod
    def from_frame(cls, frame: pd.DataFrame, name: str = "in-memory data") -> Source:
        """An in-memory frame served by an embedded DuckDB (the engine's view of uploaded data)."""
        ibis = _ibis()
        con = ibis.duckdb.connect()
        table = con.create_table("luskin_frame", ibis.memtable(frame))
        return cls(table, name=name, kind="frame", backend=con)

    # -- facts ---------------------------------------------------------------------------------
    @property
    def table(self) -> Any:
        return self._table

    def columns(self) -> list[str]:
        """Column names, as the source spells them."""
        return list(self._table.columns)

    def n_rows(self) -> int:
        """Rows in the table (counted by the engine once)."""
        if self._n_rows is None:
            self._n_rows = int(self._run(self._table.count()))
        return self._n_rows

    def value_counts(self, column: str, limit: int = 100) -> pd.DataFrame:
        """Distinct values of a column with their counts, most frequent first (missing included)."""
        name = self._resolve(column, "")
        col = self._table[name]
        expr = (self._table.group_by(value=col).aggregate(count=col.isnull().count())
                .order_by([_ibis().desc("count"), "value"]).limit(int(limit)))
        frame = self._run(expr, fetch=True).reset_index(drop=True)
        frame["value"] = frame["value"].astype(object).where(frame["value"].notna(), None)
        return frame

    # -- counting ------------------------------------------------------------------------------
    def plan(self, spec: AuditSpec) -> Plan:
        """The plan of ``spec`` on this source, from facts the engine computes.

        The row count and the distinct counts of the numeric group and strata columns (the
        20-values rule) come from one pass over the table; a CSV is scanned once here and once
        for the counts.
        """
        population = tuple(Condition(self._resolve(c.column, "population"), c.op, c.value) for c in spec.population)
        facts = EngineFacts(self, population)
        schema = self._table.schema()
        keyed = [self._resolve(name, role) for names, role in ((spec.group_by, "group"), (spec.strata, "strata"))
                 for name in names]
        facts.prefetch([c for c in dict.fromkeys(keyed) if _is_numeric(schema[c])], with_total=not population)
        if self.n_rows() == 0:
            raise LuskinError(f"The source {self.name} has no rows.")
        return build_plan(spec, facts)

    def raw_counts(self, plan: Plan) -> pd.DataFrame:
        """The raw count table (as :func:`~luskin_core.counts.aggregate_frame` makes it), in one aggregation."""
        t = self._table
        ibis = _ibis()
        reason = _reason_expr(t, plan)
        kept = reason == 0
        keys: dict[str, Any] = {}
        if plan.protected is not None:
            keys["g0"] = ibis.ifelse(kept, _mask(t, plan.protected), ibis.null().cast("boolean"))
        else:
            for i, part in enumerate(plan.group_parts):
                keys[f"g{i}"] = _when_kept(kept, _part_expr(t, part))
        n_group = plan.n_group_keys
        if plan.cell_parts:
            for i, part in enumerate(plan.cell_parts):
                keys[f"c{i}"] = _when_kept(kept, _part_expr(t, part))
        elif plan.filters:
            keys["c0"] = ibis.ifelse(kept, _conjunction(t, plan.filters), ibis.null().cast("boolean"))
        y = _outcome_expr(t, plan)
        y_int = ibis.ifelse(kept & y, 1, 0)
        values: dict[str, Any] = {"reason": reason, "y": y_int}
        if plan.prediction is not None:
            d = _decision_expr(t, plan).fill_null(False)
            values["d"] = ibis.ifelse(kept & d, 1, 0)
        if plan.score:
            s = t[plan.outcome].cast("float64")
            values["s"] = ibis.ifelse(kept, s, 0.0)
        rows = t.select(**keys, **values)
        metrics: dict[str, Any] = {"n": rows.reason.count()}
        if plan.prediction is not None:
            metrics["positives"] = rows.d.sum()
            metrics["tp"] = (rows.d * rows.y).sum()
            metrics["fp"] = (rows.d * (1 - rows.y)).sum()
            metrics["fn"] = ((1 - rows.d) * rows.y).sum()
        else:
            metrics["positives"] = rows.y.sum()
        if plan.score:
            metrics["score_sum"] = rows.s.sum()
            metrics["score_sumsq"] = (rows.s * rows.s).sum()
        raw = self._run(rows.group_by([*keys, "reason"]).aggregate(**metrics), fetch=True)
        raw["reason"] = [REASONS[int(r)] for r in raw["reason"]]
        for name in ("n", "positives", "tp", "fp", "fn"):
            if name in raw.columns:
                raw[name] = pd.to_numeric(raw[name]).fillna(0).astype(np.int64)
        if plan.prediction is not None:
            raw["tn"] = raw["n"] - raw["tp"] - raw["fp"] - raw["fn"]
        for name in ("score_sum", "score_sumsq"):
            if name in raw.columns:
                raw[name] = pd.to_numeric(raw[name]).astype(float).fillna(0.0)
        for i in range(n_group + plan.n_cell_keys):
            col = f"g{i}" if i < n_group else f"c{i - n_group}"
            raw[col] = raw[col].astype(object).where(raw[col].notna(), None)
        order = [c for c in raw.columns if c not in COUNT_COLUMNS] + [c for c in COUNT_COLUMNS if c in raw.columns]
        return raw[order]

    def count_table(self, spec: AuditSpec) -> CountTable:
        """The audit's count table, made inside the engine."""
        plan = self.plan(spec)
        return CountTable.from_raw(self.raw_counts(plan), plan)

    def audit(self, spec: AuditSpec, *, source: str | None = None) -> Any:
        """The full audit (every statistic) from the engine's count table."""
        from .audit import result_from_counts

        plan = self.plan(spec)
        table = CountTable.from_raw(self.raw_counts(plan), plan)
        if table.n_rows == 0:
            raise LuskinError(f"Every row of {self.name} lacks a value the audit needs, so nothing can be audited.")
        if spec.outcome_type == "label" and spec.prediction is None and int(table.positives.sum()) == 0:
            values = ", ".join(str(v) for v in self.value_counts(plan.outcome, 10)["value"].dropna())
            raise LuskinError(f"The value '{spec.positive}' never occurs in the outcome column '{plan.outcome}'. "
                              f"Its values are: {values}.")
        if spec.group_mode == "condition":
            sizes = table.n.sum(axis=1)
            if sizes[0] == 0 or sizes[1] == 0:
                assert plan.protected is not None
                values = ", ".join(str(v) for v in self.value_counts(plan.protected.column, 10)["value"].dropna())
                what = ("so the protected group is empty" if sizes[0] == 0
                        else "so there is no other class to compare with")
                raise LuskinError(f"{'No' if sizes[0] == 0 else 'Every'} row has {spec.protected}, {what}. "
                                  f"Values of '{plan.protected.column}' include: {values}.")
        default = "recorded outcome" if spec.prediction is None else f"decisions in '{spec.prediction}'"
        return result_from_counts(table, spec, source=source or default)

    # -- rows for the model tools --------------------------------------------------------------
    def sample(self, spec: AuditSpec, cap: int = DEFAULT_SAMPLE_CAP, seed: int = 0) -> tuple[pd.DataFrame, SampleInfo]:
        """A seeded sample of at most ``cap`` rows, stratified by group x outcome, drawn through the engine.

        The engine draws a seeded Bernoulli sample a little larger than needed; each group x
        outcome stratum is then cut to its proportional share of ``cap`` (at least one row per
        stratum present). A table with at most ``cap`` rows is returned whole.
        """
        if cap < 1:
            raise LuskinError("The sample size must be at least 1 row.")
        total = self.n_rows()
        if total == 0:
            raise LuskinError(f"The source {self.name} has no rows.")
        if total <= cap:
            return self._run(self._table, fetch=True), SampleInfo(total, total, seed, False)
        fraction = min(1.0, 1.15 * cap / total + 1e-6)
        drawn = self._run(self._table.sample(fraction, seed=seed), fetch=True)
        plan = self.plan(spec)
        from .counts import outcome_values, row_group_labels

        labels = pd.Series(row_group_labels(drawn, plan)).astype(str).to_numpy()
        y, _ = outcome_values(drawn, plan)
        strata = pd.Series(labels + "\x00" + y.astype(str))
        rng = np.random.default_rng(seed)
        order = rng.permutation(len(drawn))
        shuffled = strata.iloc[order].reset_index(drop=True)
        sizes = shuffled.value_counts()
        quota = (sizes * (cap / max(len(drawn), 1))).apply(math.floor).clip(lower=1).astype(int)
        rank = shuffled.groupby(shuffled).cumcount()
        keep = rank.to_numpy() < shuffled.map(quota.to_dict()).to_numpy()
        chosen = np.sort(order[keep])  # at most cap rows, plus one per stratum too small for its share
        sample = drawn.iloc[chosen].reset_index(drop=True)
        return sample, SampleInfo(len(sample), total, seed, True)

    # -- helpers -------------------------------------------------------------------------------
    def _resolve(self, name: str, role: str) -> str:
        from .validation import check_column

        return check_column(pd.DataFrame(columns=self.columns()), name, role)

    def _run(self, expr: Any, *, fetch: bool = False) -> Any:
        try:
            return expr.to_pandas() if fetch else expr.execute()
        except LuskinError:
            raise
        except Exception as error:  # noqa: BLE001 - every engine failure becomes one plain sentence
            raise LuskinError(_engine_message(error, self.name)) from None


# ------------------------------------------------------------------------------------------
# Facts computed by the engine
# ------------------------------------------------------------------------------------------
class EngineFacts:
    """:class:`~luskin_core.counts.Facts` of a source, over the audited population."""

    def __init__(self, source: Source, population: Sequence[Condition] = ()) -> None:
        self.source = source
        table = source.table
        self.rows = table.filter(_conjunction(table, population)) if population else table
        self.schema = table.schema()
        self._distinct: dict[str, int] = {}

    def prefetch(self, columns: Sequence[str], *, with_total: bool) -> None:
        """Distinct counts of ``columns`` (and the table's row count) in one aggregation."""
        if not columns and (not with_total or self.source._n_rows is not None):
            return
        metrics = {f"d{i}": self.rows[c].nunique() for i, c in enumerate(columns)}
        if with_total:
            metrics["total"] = self.rows.count()
        frame = self.source._run(self.rows.aggregate(**metrics), fetch=True)
        for i, column in enumerate(columns):
            self._distinct[column] = int(frame[f"d{i}"].iloc[0])
        if with_total:
            self.source._n_rows = int(frame["total"].iloc[0])

    def resolve(self, name: str, role: str) -> str:
        return self.source._resolve(name, role)

    def is_numeric(self, column: str) -> bool:
        return _is_numeric(self.schema[column])

    def n_distinct(self, column: str, cap: int) -> int:
        if column not in self._distinct:
            self._distinct[column] = int(self.source._run(self.rows[column].nunique()))
        return min(self._distinct[column], cap)

    def quantiles(self, column: str, probs: Sequence[float]) -> list[float]:
        present = self.rows.filter(self.rows[column].notnull())
        exprs = {f"q{i}": present[column].cast("float64").quantile(float(p)) for i, p in enumerate(probs)}
        if self.source.kind == "spark":
            return self._exact_quantiles(column, probs)
        frame = self.source._run(present.aggregate(**exprs), fetch=True)
        out = []
        for i in range(len(probs)):
            value = frame[f"q{i}"].iloc[0] if len(frame) else None
            out.append(math.nan if value is None or pd.isna(value) else float(value))
        return out

    def _exact_quantiles(self, column: str, probs: Sequence[float]) -> list[float]:
        """Linear-interpolation quantiles from the order statistics (engines without an exact quantile)."""
        present = self.rows.filter(self.rows[column].notnull()).select(v=self.rows[column].cast("float64"))
        n = int(self.source._run(present.count()))
        if n == 0:
            return [math.nan for _ in probs]
        positions = sorted({i for p in probs for i in (math.floor((n - 1) * float(p)), math.ceil((n - 1) * float(p)))})
        ranked = present.mutate(rn=_ibis().row_number().over(order_by="v"))
        picked = self.source._run(ranked.filter(ranked.rn.isin(positions)).select("rn", "v"), fetch=True)
        at = dict(zip(picked["rn"].astype(int), picked["v"].astype(float)))
        out = []
        for p in probs:
            h = (n - 1) * float(p)
            lo, hi = math.floor(h), math.ceil(h)
            a, b = at[lo], at[hi]
            t = h - lo  # numpy's interpolation, bit for bit (it works from the upper end past the middle)
            out.append(a if hi == lo else (b - (b - a) * (1 - t) if t >= 0.5 else a + (b - a) * t))
        return out


def _is_numeric(dtype: Any) -> bool:
    return bool(dtype.is_numeric() and not dtype.is_boolean())


# ------------------------------------------------------------------------------------------
# The row rules of counts.aggregate_frame as Ibis expressions
# ------------------------------------------------------------------------------------------
def _mask(t: Any, condition: Condition) -> Any:
    """Where the condition holds (False where the value is missing), as Condition.mask."""
    column = condition.column
    col = t[column]
    dtype = t.schema()[column]
    values = condition.value if isinstance(condition.value, tuple) else (condition.value,)
    if _is_numeric(dtype):
        numbers = tuple(condition._as_number(column, v) for v in values)
        data = col.cast("float64")
        compared = _compare(data, condition.op, numbers)
    elif condition.op in _ORDER_OPS:
        raise LuskinError(f"'{column}' holds text, so '{condition.op}' cannot compare it with {condition.value}. "
                          "Use == or != (or 'in') for text columns.")
    elif dtype.is_boolean():
        texts = tuple(str(v) for v in values)
        data = _ibis().ifelse(col, "True", "False")
        compared = _compare(data, condition.op, texts)
    else:
        compared = _compare(col.cast("string"), condition.op, tuple(str(v) for v in values))
    return compared.fill_null(False) & col.notnull()


def _compare(data: Any, op: str, values: tuple[Any, ...]) -> Any:
    if op == "==":
        return data == values[0]
    if op == "!=":
        return data != values[0]
    if op == "<":
        return data < values[0]
    if op == "<=":
        return data <= values[0]
    if op == ">":
        return data > values[0]
    if op == ">=":
        return data >= values[0]
    if op == "in":
        return data.isin(list(values))
    return ~data.isin(list(values))


def _conjunction(t: Any, conditions: Sequence[Condition]) -> Any:
    out = _ibis().literal(True)
    for condition in conditions:
        out = out & _mask(t, condition)
    return out


def _reason_expr(t: Any, plan: Plan) -> Any:
    """Index in REASONS of why a row is left out (0: audited), the first failing check first."""
    ibis = _ibis()
    checks = []
    if plan.population:
        checks.append((~_conjunction(t, plan.population), 1))
    checks.append((t[plan.outcome].isnull(), 2))
    if plan.prediction is not None:
        checks.append((t[plan.prediction].isnull(), 3))
    if plan.protected is not None:
        checks.append((t[plan.protected.column].isnull(), 4))
    if plan.filters:
        unknown = ibis.literal(False)
        for condition in plan.filters:
            unknown = unknown | t[condition.column].isnull()
        checks.append((unknown, 5))
    return ibis.cases(*checks, else_=0).cast("int64")


def _when_kept(kept: Any, value: Any) -> Any:
    return _ibis().ifelse(kept, value, _ibis().null().cast(value.type()))


def _part_expr(t: Any, part: Any) -> Any:
    col = t[part.column]
    if part.kind == "bins":
        x = col.cast("float64")
        index = _ibis().literal(0, "int64")
        for cut in part.cuts:
            index = index + _ibis().ifelse(x >= float(cut), 1, 0)
        return _ibis().ifelse(x.isnull(), _ibis().null().cast("int64"), index)
    if part.numeric:
        return col.cast("float64")
    return col


def _outcome_expr(t: Any, plan: Plan) -> Any:
    """The 0/1 outcome (label == positive, or score >= cut-off), False where missing."""
    col = t[plan.outcome]
    if plan.score:
        return (col.cast("float64") >= float(plan.score_cutoff)).fill_null(False)  # type: ignore[arg-type]
    return _label_expr(t, plan.outcome, plan.spec.positive)


def _label_expr(t: Any, column: str, positive: Any) -> Any:
    col = t[column]
    dtype = t.schema()[column]
    if _is_numeric(dtype):
        try:
            target = float(positive)
        except (TypeError, ValueError):
            raise LuskinError(f"The outcome '{column}' holds numbers, so its positive value must be a number, "
                              f"not '{positive}'.") from None
        return (col.cast("float64") == target).fill_null(False)
    if dtype.is_boolean():
        text = str(positive).strip().lower()
        return col.fill_null(False) == (text in ("true", "1", "yes", "y"))
    return col.cast("string").fill_null("") == str(positive)


def _decision_expr(t: Any, plan: Plan) -> Any:
    assert plan.prediction is not None
    col = t[plan.prediction]
    if plan.prediction_binary:
        return col.cast("float64") == 1.0
    if t.schema()[plan.prediction].is_boolean():
        return col.fill_null(False)
    return _label_expr(t, plan.prediction, plan.spec.positive)


# ------------------------------------------------------------------------------------------
# Opening sources
# ------------------------------------------------------------------------------------------
_PARQUET = (".parquet", ".pq")
_CSV = (".csv", ".csv.gz", ".txt", ".tsv", ".data")
_DUCKDB = (".duckdb", ".db", ".ddb")


def open_source(location: str, table: str | None = None) -> Source:
    """Open a file, folder, database table or query as a :class:`Source` (see the module docstring)."""
    text = str(location).strip()
    if not text:
        raise LuskinError("Say where the data is: a file, a folder of Parquet files or a database address.")
    lowered = text.lower()
    if lowered.startswith(("postgresql://", "postgres://")):
        return _open_postgres(text, table)
    if lowered.startswith("spark:"):
        return _open_spark(text[len("spark:"):], table)
    return _open_path(text, table)


def _open_path(text: str, table: str | None) -> Source:
    ibis = _ibis()
    path = Path(text).expanduser()
    shown = path.name or str(path)
    if not path.exists():
        raise LuskinError(f"There is no file or folder '{text}'.")
    con = ibis.duckdb.connect()
    name = path.name.lower()
    try:
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.suffix.lower() in _PARQUET)
            if not files:
                raise LuskinError(f"The folder '{shown}' holds no Parquet files.")
            t = con.read_parquet([str(p) for p in files])
            kind = "parquet"
        elif name.endswith(_DUCKDB):
            if not table:
                raise LuskinError(f"'{shown}' is a DuckDB database: name the table to audit (--table NAME).")
            con = ibis.duckdb.connect(str(path), read_only=True)
            names = [str(r[0]) for r in con.con.execute("SELECT table_name FROM information_schema.tables").fetchall()]
            if table not in names:
                raise LuskinError(f"The DuckDB database '{shown}' has no table '{table}'. Its tables are: "
                                  f"{', '.join(names) or 'none'}.")
            t = con.table(table)
            kind = "duckdb"
            shown = f"{shown}:{table}"
        elif name.endswith(_PARQUET):
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


def _open_postgres(url: str, table: str | None) -> Source:
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
        raise LuskinError(f"Name the table (or a SELECT query) to audit in {shown} (--table NAME).")
    try:
        con = ibis.postgres.connect(user=user, password=password, host=host, port=port, database=database)
    except Exception as error:  # noqa: BLE001
        raise LuskinError(_connect_message(error, shown)) from None
    try:
        if re.match(r"^\s*(select|with)\s", table, re.IGNORECASE):
            # A temporary view named by us (ibis' own .sql() path breaks on this sqlglot); the query is the user's.
            view = f"luskin_query_{uuid.uuid4().hex}"
            with con.con.cursor() as cursor:
                cursor.execute(f'CREATE TEMPORARY VIEW "{view}" AS {table}')
            con.con.commit()
            t = con.table(view)
            shown = f"{shown} (query)"
        else:
            t = con.table(table)
            shown = f"{shown}/{table}"
    except Exception:  # noqa: BLE001
        if re.match(r"^\s*(select|with)\s", table, re.IGNORECASE):
            raise LuskinError(f"The query could not be run on {shown}: check its table and column names.") from None
        raise LuskinError(f"There is no table '{table}' in {shown}.") from None
    return Source(t, name=shown, kind="postgres", backend=con)


def _connect_message(error: Exception, shown: str) -> str:
    text = str(error).lower()
    if "password" in text or "authentication" in text:
        return f"The server {shown} refused the user name or password."
    if "database" in text and "does not exist" in text:
        return f"The server answered, but the database in {shown} does not exist."
    return f"The database server {shown} does not answer: check the address, the port and that it is running."


def _open_spark(rest: str, table: str | None) -> Source:
    ibis = _ibis()
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise LuskinError("Spark sources need pyspark: pip install 'luskin[spark]'.") from None
    session = SparkSession.getActiveSession()
    if session is None:
        session = (SparkSession.builder.master("local[*]").appName("luskin")
                   .config("spark.ui.enabled", "false").getOrCreate())
    con = ibis.pyspark.connect(session)
    path = rest.strip().removeprefix("//")
    try:
        if path and path not in ("local", ""):
            t = con.read_parquet(path)
            shown = f"spark:{Path(path).name}"
        else:
            if not table:
                raise LuskinError("Name the Spark table to audit (--table NAME).")
            if table not in con.list_tables():
                raise LuskinError(f"Spark has no table or view named '{table}'.")
            t = con.table(table)
            shown = f"spark:{table}"
    except LuskinError:
        raise
    except Exception:  # noqa: BLE001
        raise LuskinError(f"Spark could not read '{path or table}' as a table.") from None
    return Source(t, name=shown, kind="spark", backend=con)


def _engine_message(error: Exception, name: str) -> str:
    text = str(error).lower()
    if "column" in text and ("not found" in text or "does not exist" in text or "cannot be resolved" in text):
        return f"A column the audit needs is missing from {name}."
    if "connection" in text or "server closed" in text or "could not connect" in text:
        return f"The connection to {name} was lost."
    if "csv" in text or "sniff" in text or "parquet" in text or "invalid input" in text:
        return f"{name} could not be read as a table (a CSV or Parquet file)."
    return f"The engine could not run the audit's query on {name}."
