"""Audit data where it lives: files, DuckDB, PostgreSQL and Spark through one expression layer (Ibis).

An audit needs only counts, so a :class:`Source` builds the plan from facts the engine computes
(column types, distinct values, quantiles, the score median) and asks the engine for the raw
count table in one aggregation: the rows never travel. The counting rules are
:mod:`luskin_core.counting.counts`' own (written once as expression trees, rendered here as Ibis
expressions by :func:`to_ibis`; the in-memory path renders the same trees as DuckDB SQL), so
every engine gives the same count table and audit as the in-memory path.

One scan where it can be: whether a numeric group or strata column has at most 20 values (taken
value by value) is first read from the table's first rows (a LIMIT query, which reads a row group
or two); a column showing more is binned (its quantiles take a scan). A column showing at most 20
values is assumed to have no others, and the counting query checks the assumption on every row
of the population (an integer key is clamped to just outside the values seen, so another value
shows in the count table without multiplying it; other columns count the rows holding another
value); if any turns up, the exact distinct counts are asked for and the counts made again. So a
table whose keys are text or codes is read once, and the result is always the exact plan's.

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

import copy
import math
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote, urlsplit

import numpy as np

from luskin_core.counting.counts import (
    BOOL,
    MAX_VALUES,
    NUMERIC,
    TEXT,
    CountTable,
    Expr,
    KeyPart,
    Plan,
    RawCounts,
    build_plan,
    check_rules,
    condition_rule,
    conjunction_rule,
    count_rules,
    count_sql,
    duck_cursor,
    finish_raw,
    metric_rules,
    outcome_rule,
    part_rule,
    sql_literal,
    sql_name,
    to_sql,
)
from luskin_core.errors import LuskinError
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.spec.conditions import Condition

if TYPE_CHECKING:
    import pandas as pd
else:  # imported on first use: a file's audit on the command line never needs it
    from luskin_core._lazy import pandas as pd

DEFAULT_SAMPLE_CAP = 500_000
# Rows read from the top of the table to see the values of numeric group and strata columns.
LOOK_ROWS = 50_000
_ORDER_OPS = ("<", "<=", ">", ">=")


@dataclass(frozen=True)
class SampleInfo:
    """How a sample for the model tools was drawn: its size, the table's size, the seed."""

    n_sample: int
    n_table: int
    seed: int
    sampled: bool

    def to_dict(self) -> dict[str, Any]:
        return {"n_sample": self.n_sample, "n_table": self.n_table, "seed": self.seed, "sampled": self.sampled}

    def sentence(self) -> str:
        if not self.sampled:
            return f"All {self.n_table:,} rows of the source are used (no sample was needed)."
        return (f"A seeded sample of {self.n_sample:,} rows (of {self.n_table:,}), stratified by group and "
                f"outcome, is used (seed {self.seed}).")


def _ibis() -> Any:
    import ibis  # type: ignore[import-untyped]

    return ibis


def _nan_as_missing(table: Any, kind: str) -> Any:
    """The table with a floating NaN read as missing, as pandas reads it.

    Engines keep NaN apart from NULL (DuckDB and PostgreSQL even sort it above every number, so
    ``age > 40`` would hold for it): the in-memory path calls it missing ("Unknown", left out), and
    the engine must give the same counts. Only floating columns are touched. DuckDB 2.0 folds
    ``isnan(x)`` to false from a Parquet file's column statistics (which leave NaN out) inside
    aggregates, so on DuckDB the test is the value's hash and text, which no statistic can decide.
    """
    schema = table.schema()
    floats = [name for name in table.columns if schema[name].is_floating()]
    if not floats:
        return table
    ibis = _ibis()

    def nan(col: Any) -> Any:
        if kind in _DUCKDB_KINDS:
            # DuckDB hashes every NaN alike; the text check only runs on the rare hash matches,
            # so this costs about 1.5x a bare scan of the column, not the 16x of formatting all.
            return (col.hash() == ibis.literal(math.nan, type=schema[col.get_name()]).hash()) & \
                col.cast("string").isin(["nan", "-nan"])
        return col.isnan()

    return table.mutate(**{name: ibis.ifelse(nan(table[name]).fill_null(False), ibis.null().cast(schema[name]),
                                             table[name]) for name in floats})


_DUCKDB_KINDS = frozenset({"csv", "parquet", "duckdb", "frame"})


class Source:
    """A table in a query engine that Luskin can audit without loading its rows."""

    def __init__(self, table: Any, *, name: str, kind: str, backend: Any = None) -> None:
        self._raw = table  # as stored (a table small enough is handed to the model tools whole, as stored)
        self._table = _nan_as_missing(table, kind)
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
        con = _duckdb()
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
        20-values rule) come from one pass over the table. (:meth:`count_table` and
        :meth:`audit` avoid that pass where they can: see the module's docstring.)
        """
        facts = self._facts(spec)
        facts.prefetch(self._numeric_keys(spec), with_total=not facts.population)
        if self.n_rows() == 0:
            raise LuskinError(f"The source {self.name} has no rows.")
        return build_plan(spec, facts)

    def _facts(self, spec: AuditSpec) -> EngineFacts:
        population = tuple(Condition(self._resolve(c.column, "population"), c.op, c.value) for c in spec.population)
        return EngineFacts(self, population)

    def _numeric_keys(self, spec: AuditSpec) -> list[str]:
        """Numeric group and strata columns without the user's cut points (the 20-values rule decides them)."""
        schema = self._table.schema()
        keyed = [self._resolve(name, role) for names, role in ((spec.group_by, "group"), (spec.strata, "strata"))
                 for name in names]
        return [c for c in dict.fromkeys(keyed) if _is_numeric(schema[c]) and spec.cuts_for(c) is None]

    def derive(self, **columns: Any) -> Source:
        """This source with more columns, each computed by the engine (``name=function of the table``)."""
        out = copy.copy(self)
        out._table = self._table.mutate(**{name: make(self._table) for name, make in columns.items()})
        return out

    def counts(self, spec: AuditSpec, *, period: KeyPart | None = None) -> tuple[Plan, RawCounts]:
        """The plan and the raw count table, in one scan of the table where the first rows allow it.

        The first rows (one LIMIT query) say whether the table is empty and which values the
        numeric group and strata columns take; the counting query checks that no row of the
        population holds another (see the module's docstring). Otherwise the exact distinct
        counts are asked for and the counts made again: the plan and the table are always
        :meth:`plan`'s. ``period``: a key counted as well (the raw table's "period" column).
        """
        facts = self._facts(spec)
        if not facts.look(self._numeric_keys(spec)):
            raise LuskinError(f"The source {self.name} has no rows.")

        def make_plan() -> Plan:
            return replace(build_plan(spec, facts), period=period)

        plan = make_plan()
        keyed = {p.column for p in (*plan.group_parts, *plan.cell_parts) if p.kind == "value"}
        unkeyed = [c for c in facts.assumed if c not in keyed]
        if unkeyed:  # an assumption no key of the counting query would check: counted exactly instead
            facts.prefetch(unkeyed, with_total=False)
            plan = make_plan()
        assumed = dict(facts.assumed)
        raw = self.raw_counts(plan, assumed=assumed)
        if not raw.assumptions_hold:
            facts.prefetch(list(assumed), with_total=False)
            plan = make_plan()
            raw = self.raw_counts(plan)
        self._n_rows = int(raw["n"].sum())
        return plan, raw

    def raw_counts(self, plan: Plan, *, assumed: dict[str, list[Any]] | None = None) -> RawCounts:
        """The raw count table (as :func:`~luskin_core.counting.counts.aggregate_frame` makes it), in one aggregation.

        The query is kept plain, for speed: rows are grouped by their own keys and by each check
        that can leave a row out (a boolean each, rather than a CASE naming the first that fails),
        and the sums run over every row. Afterwards, on the small table, the reason is the first
        check that fails, and a row left out keeps only its count (no keys, no positives). Rows
        outside the population get no keys in the query, as their values may be many.

        ``assumed``: numeric columns taken value by value on the belief that the population holds
        no values but these (read from the first rows). Their keys cannot multiply (see
        :func:`_assumed_key`), and a value outside them is found; ``raw.assumptions_hold``
        says whether none was (then the table is exactly the one made without the assumption).
        """
        t = self._table
        ibis = _ibis()
        assumed = assumed or {}
        rules = count_rules(plan, table_kind(t))
        # A key assumed to hold few values cannot multiply the count table (see _assumed_key).
        overrides = {c: _assumed_key(t[c], seen) for c, seen in assumed.items()}
        keyed_assumed = {name for name, part in rules.parts.items() if part is not None and part.column in assumed}
        keys = {name: to_ibis(e, t, overrides if name in keyed_assumed else None) for name, e in rules.keys.items()}
        flags = {f"r{code}": to_ibis(e, t) for code, e in rules.checks}
        values = {name: to_ibis(e, t) for name, e in rules.values.items()}
        # Values outside those assumed: a clamped integer key shows them; other columns are counted here.
        counted = {c: seen for c, seen in assumed.items() if _clamp_range(t[c], seen) is None}
        if counted:
            unseen = ibis.literal(False)
            for column, seen in counted.items():
                unseen = unseen | _unseen(t[column], seen)
            values["u"] = unseen if "r1" not in flags else unseen & ~flags["r1"]
        rows = t.select(**keys, **flags, **values)
        metrics: dict[str, Any] = {}
        for name, (how, what) in metric_rules(plan).items():
            if how == "count":
                metrics[name] = rows.count()
            else:
                x = to_ibis(what, rows)  # type: ignore[arg-type]
                metrics[name] = (x * x).sum() if how == "sumsq" else x.sum()
        if counted:
            metrics["unseen"] = rows.u.cast("int32").sum()  # PostgreSQL casts a boolean to integer, not to bigint
        raw = self._run(rows.group_by([*keys, *flags]).aggregate(**metrics), fetch=True)
        hold = True
        if assumed:
            hold = int(pd.to_numeric(raw.pop("unseen")).fillna(0).sum()) == 0 if counted else True
            population = raw.loc[~raw["r1"].fillna(False).astype(bool)] if "r1" in raw.columns else raw
            for name, part in rules.parts.items():
                if part is not None and part.kind == "value" and part.column in assumed:
                    known = set(assumed[part.column])
                    hold = hold and all(_plain_value(v) in known
                                        for v in pd.to_numeric(population[name]).dropna().unique())
        return replace(finish_raw(raw, plan, rules), assumptions_hold=hold)

    def count_table(self, spec: AuditSpec) -> CountTable:
        """The audit's count table, made inside the engine."""
        plan, raw = self.counts(spec)
        return CountTable.from_raw(raw, plan)

    # -- rows for the model tools --------------------------------------------------------------
    def sample(self, spec: AuditSpec, cap: int = DEFAULT_SAMPLE_CAP, seed: int = 0) -> tuple[pd.DataFrame, SampleInfo]:
        """A seeded sample of ``cap`` rows, stratified by group x outcome, drawn inside the engine.

        The sample is a function of the rows and the seed alone, the same on every engine and every
        run: each row gets the MD5 of the seed and its values (text as is, integers in decimal,
        booleans as T/F, floats floored to millionths; see :func:`_row_hash`) and of its copy number
        among rows identical to it (so duplicated rows are drawn like any others), and each group x
        outcome stratum keeps its rows with the lowest hashes, as many as its proportional share of
        ``cap`` (largest remainders, so the shares add up to ``cap``; a stratum whose share rounds
        to nothing keeps one row, so the sample may pass ``cap`` by the number of such strata).
        Rows missing their group or outcome form strata of their own. A table with at most ``cap``
        rows is returned whole. The rows come ordered by their hash.
        """
        if cap < 1:
            raise LuskinError("The sample size must be at least 1 row.")
        what = "the sample's query"
        total = self.n_rows()
        if total == 0:
            raise LuskinError(f"The source {self.name} has no rows.")
        if total <= cap:
            return self._run(self._raw, fetch=True, what=what), SampleInfo(total, total, seed, False)
        plan = self.plan(spec)
        t = self._table
        keys = _stratum_keys(t, plan)
        sizes = self._run(t.group_by(**keys).aggregate(n=t.count()), fetch=True, what=what)
        labels = ["\x1f".join(_key_text(v) for v in row[:-1]) for row in sizes.itertuples(index=False)]
        quotas = _allocate(sizes["n"].astype(np.int64).to_numpy(), cap, labels)
        ibis = _ibis()
        names = [f"_luskin_k{i}" for i in range(len(keys))]
        # Identical rows get the same hash of their values: the hash that ranks them adds the copy's number
        # among them (which copy is which cannot matter, they are alike), so duplicates spread like other rows.
        floats = [c for c in t.columns if t.schema()[c].is_floating()]
        based = t.mutate(_luskin_b=_row_hash(t, seed))
        copies = based.mutate(_luskin_c=ibis.row_number().over(
            group_by=based._luskin_b, order_by=[based[c] for c in floats] or [based._luskin_b]))
        hashed = copies.mutate(**dict(zip(names, keys.values())),
                               _luskin_h=_md5(copies._luskin_b + ":" + copies._luskin_c.cast("string")))
        matches = []
        for row in sizes.itertuples(index=False):
            same = ibis.literal(True)
            for name, value in zip(names, row[: len(names)]):
                col = hashed[name]
                same = same & (col.isnull() if value is None or pd.isna(value) else col == _plain_value(value))
            matches.append(same)
        n_strata = sizes["n"].astype(np.int64).to_numpy()
        # The hashes are uniform: a stratum's lowest ``quota`` lie, almost surely, below a cut-off a little above
        # quota / size. Rows below it travel; the exact cut is made here (a stratum short of rows asks again).
        share = np.minimum(1.0, quotas / n_strata * 1.1 + 64 / n_strata)
        while True:
            cutoffs = [_hex_cutoff(p) for p in share]
            below = ibis.cases(*zip(matches, cutoffs), else_="") if matches else ibis.literal("")
            rows = self._run(hashed.filter(hashed._luskin_h.substr(0, _CUT_DIGITS) < below), fetch=True, what=what)
            labels_of = ["\x1f".join(_key_text(v) for v in r) for r in rows[names].itertuples(index=False)]
            found = pd.Series(labels_of).value_counts()
            have = np.array([int(found.get(label, 0)) for label in labels])
            short = (have < np.minimum(quotas, n_strata)) & (share < 1.0)
            if not short.any():
                break
            share = np.where(short, np.minimum(1.0, share * 2), share)
        quota_of = dict(zip(labels, quotas))
        rows["_luskin_s"] = labels_of
        rows = rows.sort_values(["_luskin_h", *floats], kind="mergesort", na_position="last")
        rank = rows.groupby("_luskin_s", sort=False).cumcount().to_numpy()
        keep = rank < rows["_luskin_s"].map(quota_of).to_numpy()
        frame = rows.loc[keep].drop(columns=[*names, "_luskin_b", "_luskin_c", "_luskin_h", "_luskin_s"])
        return frame.reset_index(drop=True), SampleInfo(len(frame), total, seed, True)

    # -- helpers -------------------------------------------------------------------------------
    def _resolve(self, name: str, role: str) -> str:
        from luskin_core.spec.validation import check_column

        return check_column(self.columns(), name, role)

    def _run(self, expr: Any, *, fetch: bool = False, what: str = "the audit's query") -> Any:
        try:
            return expr.to_pandas() if fetch else expr.execute()
        except LuskinError:
            raise
        except Exception as error:  # noqa: BLE001 - every engine failure becomes one plain sentence
            raise LuskinError(_engine_message(error, self.name, self.kind, what)) from None


# ------------------------------------------------------------------------------------------
# Facts computed by the engine
# ------------------------------------------------------------------------------------------
class EngineFacts:
    """:class:`~luskin_core.counting.counts.Facts` of a source, over the audited population."""

    def __init__(self, source: Source, population: Sequence[Condition] = ()) -> None:
        self.source = source
        table = source.table
        self.population = tuple(population)
        self.rows = table.filter(_conjunction(table, population)) if population else table
        self.schema = table.schema()
        self._distinct: dict[str, int] = {}
        self._seen: dict[str, list[Any]] = {}
        # Columns whose distinct count was taken from the first rows: their values, to be checked.
        self.assumed: dict[str, list[Any]] = {}

    def look(self, columns: Sequence[str], rows: int | None = None) -> bool:
        """Read the first rows (one LIMIT query): whether the table has any, and the values of ``columns`` there.

        Integer and floating columns only (other numeric types are counted exactly); values of rows
        outside the population are not looked at.
        """
        t = self.source.table
        ibis = _ibis()
        looked = [c for c in columns if self.schema[c].is_integer() or self.schema[c].is_floating()]
        exprs: dict[str, Any] = {f"k{i}": t[c] for i, c in enumerate(looked)}
        exprs["p"] = _conjunction(t, self.population) if self.population else ibis.literal(True)
        frame = self.source._run(t.select(**exprs).limit(int(rows or LOOK_ROWS) if looked else 1), fetch=True)
        if len(frame) == 0:
            return False
        inside = frame.loc[frame["p"].astype(bool)]
        for i, column in enumerate(looked):
            values = [_plain_value(v) for v in pd.unique(inside[f"k{i}"].dropna())]
            # an integer column with missing values arrives as floats
            self._seen[column] = [int(v) for v in values] if self.schema[column].is_integer() else values
        return True

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
            self.assumed.pop(column, None)
        if with_total:
            self.source._n_rows = int(frame["total"].iloc[0])

    def resolve(self, name: str, role: str) -> str:
        return self.source._resolve(name, role)

    def is_numeric(self, column: str) -> bool:
        return _is_numeric(self.schema[column])

    def n_distinct(self, column: str, cap: int) -> int:
        if column not in self._distinct and column in self._seen:
            seen = self._seen[column]
            if len(seen) >= cap:
                return cap  # the first rows already show cap values: the exact count is at least that
            self.assumed[column] = seen  # no more values than seen, if the counting query finds no other
            return len(seen)
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


def _stratum_keys(t: Any, plan: Plan) -> dict[str, Any]:
    """The group keys (as the counting query makes them) and the outcome: the sample's strata."""
    keys: dict[str, Any] = {}
    if plan.protected is not None:
        keys["g0"] = _mask(t, plan.protected)
    else:
        for i, part in enumerate(plan.group_parts):
            keys[f"g{i}"] = _part_expr(t, part)
    keys["y"] = _outcome_expr(t, plan)
    return keys


def _allocate(sizes: np.ndarray, cap: int, names: Sequence[str]) -> np.ndarray:
    """Each stratum's share of ``cap``, proportional to its size (largest remainders; at least one row each).

    Equal remainders go first to the larger stratum, then by the strata's names, so the shares do
    not depend on the order the engine lists the strata in.
    """
    total = int(sizes.sum())
    exact = sizes.astype(np.float64) * cap / total
    base = np.floor(exact).astype(np.int64)
    left = int(cap - base.sum())
    if left > 0:
        order = sorted(range(len(sizes)), key=lambda i: (-(exact[i] - base[i]), -int(sizes[i]), names[i]))
        base[order[:left]] += 1
    return np.maximum(base, np.minimum(sizes, 1))


def _key_text(value: Any) -> str:
    """A stratum key as text that every engine's spelling of it gives (1, 1.0 and True alike)."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return "\x00"
    if isinstance(value, (bool, np.bool_)):
        return str(float(bool(value)))
    if isinstance(value, (int, float, np.integer, np.floating)):
        return repr(float(value))
    return str(value)


# Hex digits of the row hash compared with a stratum's cut-off (8: cut-offs in steps of 2^-32).
_CUT_DIGITS = 8


def _hex_cutoff(share: float) -> str:
    """The text below which a row hash's first hex digits fall with probability ``share`` ('g' passes all)."""
    if share >= 1.0:
        return "g"
    return format(min(16**_CUT_DIGITS - 1, math.ceil(share * 16**_CUT_DIGITS)), f"0{_CUT_DIGITS}x")


def _md5(value: Any) -> Any:
    ibis = _ibis()

    @ibis.udf.scalar.builtin(name="md5")
    def md5(text: str) -> str:  # type: ignore[empty-body]
        """MD5 as a hex string: DuckDB, PostgreSQL and Spark compute it alike (UTF-8 bytes of the text)."""

    return md5(value)


def _row_hash(t: Any, seed: int) -> Any:
    """MD5 of the seed and the row's values, spelled the same way on every engine.

    Text as is, integers in decimal, booleans as T/F, floats floored to millionths (below 1e12;
    to units above): the engines agree on these digits, not on a float's own text. A missing value
    is N, a present one V followed by its text. Columns of other types (dates, decimals) are left
    out. Rows with the same text tie; the sample breaks ties by the float columns themselves.
    """
    ibis = _ibis()
    schema = t.schema()
    text: Any = ibis.literal(f"luskin-sample:{int(seed)}")
    for name in t.columns:
        dtype, col = schema[name], t[name]
        if dtype.is_string():
            part = col
        elif dtype.is_boolean():
            part = ibis.ifelse(col, "T", "F")
        elif dtype.is_integer():
            part = col.cast("int64").cast("string")
        elif dtype.is_floating():
            x = col.cast("float64")
            whole = ibis.ifelse(x.abs() < 1e12, (x * 1e6).floor(), ibis.ifelse(x.abs() < 9e18, x.floor(),
                                                                                   x.sign() * 9e18))
            part = whole.cast("int64").cast("string")
        else:
            continue
        text = text + "|" + ibis.ifelse(col.isnull(), "N", "V" + part.fill_null(""))
    return _md5(text)


def _is_numeric(dtype: Any) -> bool:
    return bool(dtype.is_numeric() and not dtype.is_boolean())


def _plain_value(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


# An integer column whose values seen span at most this many integers is clamped to just outside them.
_RANGE_CHECK = 1024


def _clamp_range(col: Any, seen: Sequence[Any]) -> tuple[int, int] | None:
    """For an integer column, the values just outside those seen (its key is clamped to them), or None."""
    if not seen or not col.type().is_integer() or not all(isinstance(v, int) for v in seen):
        return None
    low, high = min(seen) - 1, max(seen) + 1
    if high - low > _RANGE_CHECK or low < -(2**63) or high >= 2**63:
        return None
    return low, high


def _assumed_key(col: Any, seen: Sequence[Any]) -> Any:
    """The key of a column assumed to hold only ``seen``, which a value outside them cannot multiply.

    An integer column is clamped to one below and one above the values seen: a value outside
    them becomes one of those two, a value inside them keeps its key; either way the count table
    shows it (and stays small), with no CASE per row. ``+ (x - x)`` keeps a missing value missing
    (GREATEST and LEAST skip NULLs). Other columns get no key outside ``seen`` (counted by
    :func:`_unseen`).
    """
    ibis = _ibis()
    bounds = _clamp_range(col, seen)
    if bounds is not None:
        return ibis.greatest(ibis.least(col, bounds[1]), bounds[0]) + (col - col)
    return ibis.ifelse(_unseen(col, seen), ibis.null().cast(col.type()), col)


def _unseen(col: Any, seen: Sequence[Any]) -> Any:
    """Where the column holds a value (not missing) that is not one of ``seen``."""
    if not seen:
        return col.notnull()
    return col.notnull() & ~col.isin(list(seen)).fill_null(False)


# ------------------------------------------------------------------------------------------
# The row rules of luskin_core.counting.counts, rendered as Ibis expressions
# ------------------------------------------------------------------------------------------
def table_kind(t: Any) -> Any:
    """``kind(column)`` of an Ibis table's columns (NUMERIC, BOOL or TEXT), as the rules need it."""
    schema = t.schema()

    def kind(column: str) -> str:
        dtype = schema[column]
        if dtype.is_boolean():
            return BOOL
        return NUMERIC if _is_numeric(dtype) else TEXT
    return kind


def to_ibis(expr: Expr, t: Any, columns: dict[str, Any] | None = None) -> Any:
    """A rule of :mod:`luskin_core.counting.counts` (an expression tree) as an Ibis expression over ``t``.

    ``columns`` replaces some columns by expressions (a key assumed to hold few values).
    """
    ibis = _ibis()
    op = expr[0]
    if op == "col":
        return columns[expr[1]] if columns and expr[1] in columns else t[expr[1]]
    if op == "lit":
        value = expr[1]
        if isinstance(value, (bool, np.bool_)):
            return ibis.literal(bool(value))
        if isinstance(value, (int, np.integer)):
            return ibis.literal(int(value), "int64")
        if isinstance(value, (float, np.floating)):
            return ibis.literal(float(value), "float64")
        return ibis.literal(str(value))
    if op == "cmp":
        a, b = to_ibis(expr[2], t, columns), to_ibis(expr[3], t, columns)
        return {"==": a.__eq__, "!=": a.__ne__, "<": a.__lt__, "<=": a.__le__, ">": a.__gt__,
                ">=": a.__ge__}[expr[1]](b)
    if op == "in":
        return to_ibis(expr[1], t, columns).isin(list(expr[2]))
    if op == "if":
        then, other = expr[2], to_ibis(expr[3], t, columns)
        value = ibis.null().cast(other.type()) if then == ("null",) else to_ibis(then, t, columns)
        return ibis.ifelse(to_ibis(expr[1], t, columns), value, other)
    args = [to_ibis(e, t, columns) for e in expr[1:]]
    if op == "isnull":
        return args[0].isnull()
    if op == "not":
        return ~args[0]
    if op == "and":
        return args[0] & args[1]
    if op == "or":
        return args[0] | args[1]
    if op in _IBIS_CASTS:
        return args[0].cast(_IBIS_CASTS[op])
    if op == "false_if_null":
        return args[0].fill_null(False)
    if op == "add":
        return args[0] + args[1]
    if op == "words":
        return args[0].cast("string").strip().lower()
    raise ValueError(f"unknown rule operator {op!r}")


_IBIS_CASTS = {"float": "float64", "text": "string", "int": "int32", "bool": "boolean"}


def _mask(t: Any, condition: Condition) -> Any:
    """Where the condition holds (False where the value is missing): :func:`~luskin_core.counting.counts.condition_rule`."""
    return to_ibis(condition_rule(condition, table_kind(t)), t)


def _conjunction(t: Any, conditions: Sequence[Condition]) -> Any:
    return to_ibis(conjunction_rule(conditions, table_kind(t)), t)


def _checks(t: Any, plan: Plan) -> list[tuple[int, Any]]:
    """Why a row may be left out (:func:`~luskin_core.counting.counts.check_rules`), as Ibis expressions."""
    return [(code, to_ibis(e, t)) for code, e in check_rules(plan, table_kind(t))]


def _part_expr(t: Any, part: Any, assumed: dict[str, list[Any]] | None = None) -> Any:
    """A key part (:func:`~luskin_core.counting.counts.part_rule`); a column in ``assumed`` cannot multiply the keys."""
    columns = {part.column: _assumed_key(t[part.column], assumed[part.column])} \
        if assumed and part.column in assumed else None
    return to_ibis(part_rule(part), t, columns)


def _outcome_expr(t: Any, plan: Plan) -> Any:
    """The outcome as a boolean (:func:`~luskin_core.counting.counts.outcome_rule`); NULL where it is missing."""
    return to_ibis(outcome_rule(plan, table_kind(t)), t)


# ------------------------------------------------------------------------------------------
# Opening sources
# ------------------------------------------------------------------------------------------
_PARQUET = (".parquet", ".pq")
_CSV = (".csv", ".csv.gz", ".txt", ".tsv", ".data")
_DUCKDB = (".duckdb", ".db", ".ddb")


def _duckdb(*args: Any, **kwargs: Any) -> Any:
    """An embedded DuckDB through Ibis, without its progress bar.

    DuckDB draws a progress bar on stdout for a query longer than 2 s, even when stdout is a file:
    it would land in the middle of ``luskin audit --json``'s output.
    """
    con = _ibis().duckdb.connect(*args, **kwargs)
    con.con.execute("SET enable_progress_bar = false")
    return con


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
    path = Path(text).expanduser()
    shown = path.name or str(path)
    if not path.exists():
        raise LuskinError(f"There is no file or folder '{text}'.")
    con = _duckdb()
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
            con = _duckdb(str(path), read_only=True)
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


# Seconds a PostgreSQL server has to accept a connection and answer its start-up.
CONNECT_TIMEOUT = 10
# Every session Luskin opens on PostgreSQL: backslashes are plain characters in literals (the only
# quoting Ibis' literals are safe under), every transaction read-only unless Luskin opens it read-write.
_PG_SESSION = {"standard_conforming_strings": "on", "default_transaction_read_only": "on"}


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
    is_query = bool(re.match(r"^\s*\(*\s*(select|with|values)\b", table, re.IGNORECASE))
    if is_query:
        _check_one_select(table)
    options = " ".join(f"-c {name}={value}" for name, value in _PG_SESSION.items())
    try:
        con = ibis.postgres.connect(user=user, password=password, host=host, port=port, database=database,
                                    connect_timeout=CONNECT_TIMEOUT, options=options)
    except Exception as error:  # noqa: BLE001
        raise LuskinError(_connect_message(error, shown, user)) from None
    _verify_session(con, shown)
    try:
        if is_query:
            # A temporary view named by us (ibis' own .sql() path breaks on this sqlglot); the query is the user's,
            # checked to be one SELECT. The view is the session's only write (its own transaction; the
            # extended protocol runs one statement only); the query itself runs read-only when counted.
            view = f"luskin_query_{uuid.uuid4().hex}"
            with con.con.transaction(), con.con.cursor() as cursor:
                cursor.execute("SET TRANSACTION READ WRITE", binary=True)
                body = table.strip().rstrip(";").rstrip()
                cursor.execute(f'CREATE TEMPORARY VIEW "{view}" AS {body}\n', binary=True)
            t = con.table(view)
            shown = f"{shown} (query)"
        else:
            t = con.table(table)
            shown = f"{shown}/{table}"
    except Exception as error:  # noqa: BLE001
        if is_query:
            raise LuskinError(f"The query could not be run on {shown}: {_pg_reason(error)}.") from None
        raise LuskinError(f"There is no table '{table}' in {shown}.") from None
    return Source(t, name=shown, kind="postgres", backend=con)


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


def _pg_reason(error: Exception) -> str:
    """The first line of PostgreSQL's own message (without the query text), for a query the user wrote."""
    diag = getattr(error, "diag", None)
    primary = getattr(diag, "message_primary", None) if diag is not None else None
    text = str(primary or error).strip().splitlines()
    return f"PostgreSQL says: {text[0]}" if text else "check its table and column names"


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


def _open_spark(rest: str, table: str | None) -> Source:
    ibis = _ibis()
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


def _engine_message(error: Exception, name: str, kind: str = "", what: str = "the audit's query") -> str:
    text = str(error).lower()
    if "column" in text and ("not found" in text or "does not exist" in text or "cannot be resolved" in text):
        return f"A column the audit needs is missing from {name}."
    if "connection" in text or "server closed" in text or "could not connect" in text:
        return f"The connection to {name} was lost."
    if kind in ("csv", "parquet") and ("csv" in text or "sniff" in text or "parquet" in text
                                       or "invalid input" in text or "conversion" in text):
        return f"{name} could not be read as a table (a CSV or Parquet file)."
    if kind == "postgres" and name.endswith("(query)"):
        return f"The query of {name} failed when {what} ran it: {_pg_reason(error)}."
    return f"The engine could not run {what} on {name}."


# ------------------------------------------------------------------------------------------
# A file counted by DuckDB directly (no Ibis on the way to an audit)
# ------------------------------------------------------------------------------------------
_SQL_INTEGERS = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER",
                 "UBIGINT", "UHUGEINT")
_SQL_NUMERIC = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT", "USMALLINT", "UINTEGER",
                "UBIGINT", "UHUGEINT", "FLOAT", "DOUBLE", "DECIMAL", "REAL")


class FileSource(Source):
    """A CSV or Parquet file (or a folder of Parquet files) that an audit counts with DuckDB's SQL directly.

    The plan's facts and the counting query are SQL text rendered from :mod:`luskin_core.counting.counts`'
    rules (:func:`~luskin_core.counting.counts.to_sql`), run on Luskin's own DuckDB: no Ibis import, no
    look-ahead query. Everything else a :class:`Source` does (the model tools' sample, derived
    columns, the adjusted audit) opens the same file through Ibis the first time it is asked for.
    """

    def __init__(self, location: str, paths: Sequence[str], *, name: str, kind: str) -> None:
        self._location = location
        self.name = name
        self.kind = kind
        self._paths = list(paths)
        reader = "read_parquet" if kind == "parquet" else "read_csv"
        listed = ", ".join(sql_literal(p) for p in self._paths)
        self._relation = f"{reader}([{listed}])"
        self._n_rows = None
        self._opened: Source | None = None
        self._types: dict[str, str] | None = None

    # -- the file through Ibis, for everything but counting ----------------------------------
    def _ibis_source(self) -> Source:
        if self._opened is None:
            self._opened = _open_path(self._location, None)
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
    def _sql(self, sql: str, what: str = "the audit's query", fetch: str = "columns") -> Any:
        """Run ``sql`` on Luskin's DuckDB: its columns as numpy arrays (masked where missing), or with
        ``fetch="one"`` its first row (None for no row). No pandas: see :mod:`luskin_core._lazy`."""
        cursor = duck_cursor()
        try:
            result = cursor.execute(sql)
            return result.fetchone() if fetch == "one" else result.fetchnumpy()
        except LuskinError:
            raise
        except Exception as error:  # noqa: BLE001 - every engine failure becomes one plain sentence
            raise LuskinError(_engine_message(error, self.name, self.kind, what)) from None
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
        """NUMERIC, BOOL or TEXT (:mod:`luskin_core.counting.counts`' kinds)."""
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
        listed = ", ".join(sql_literal(p) for p in self._paths)
        try:
            row = self._sql(
                "SELECT min(TRY_CAST(stats_min_value AS HUGEINT)), max(TRY_CAST(stats_max_value AS HUGEINT)), "
                "bool_and((TRY_CAST(stats_min_value AS HUGEINT) IS NOT NULL AND TRY_CAST(stats_max_value AS HUGEINT) "
                "IS NOT NULL) OR stats_null_count = num_values), count(*), count(DISTINCT (file_name, row_group_id)), "
                f"(SELECT count(DISTINCT (file_name, row_group_id)) FROM parquet_metadata([{listed}])) "
                f"FROM parquet_metadata([{listed}]) WHERE path_in_schema = {sql_literal(column)}", fetch="one")
        except LuskinError:
            return None
        low, high, complete, entries, groups, all_groups = row
        # one entry per row group, each with statistics (or holding only missing values)
        if not complete or entries != groups or groups != all_groups or low is None or high is None:
            return None
        return int(low), int(high)

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
        listed = [None if m else _plain_value(v) for v, m in zip(np.ma.getdata(values).tolist(), missing)]
        return pd.DataFrame({"value": pd.Series(listed, dtype=object), "count": np.ma.getdata(found["count"])})

    def plan(self, spec: AuditSpec) -> Plan:
        population = tuple(Condition(self._resolve(c.column, "population"), c.op, c.value) for c in spec.population)
        facts = SqlFacts(self, population)
        # Whether there is a row at all reads the first rows only (a count would parse a whole CSV once more).
        if self._n_rows == 0 or (self._n_rows is None and self._sql(f"SELECT 1 AS x FROM {self._relation} LIMIT 1", fetch="one") is None):
            raise LuskinError(f"The source {self.name} has no rows.")
        facts.prefetch(self._numeric_keys(spec))
        return build_plan(spec, facts)

    def _numeric_keys(self, spec: AuditSpec) -> list[str]:
        keyed = [self._resolve(name, role) for names, role in ((spec.group_by, "group"), (spec.strata, "strata"))
                 for name in names]
        return [c for c in dict.fromkeys(keyed) if self.kind_of(c) == NUMERIC and spec.cuts_for(c) is None]

    def counts(self, spec: AuditSpec, *, period: KeyPart | None = None) -> tuple[Plan, RawCounts]:
        if period is not None:
            return self._ibis_source().counts(spec, period=period)
        plan = self.plan(spec)
        raw = self.raw_counts(plan)
        self._n_rows = int(raw["n"].sum())
        return plan, raw

    def raw_counts(self, plan: Plan, *, assumed: dict[str, list[Any]] | None = None) -> RawCounts:
        rules = count_rules(plan, self.kind_of)
        return finish_raw(self._sql(count_sql(plan, rules, self._relation, self.column_sql)), plan, rules)


class SqlFacts:
    """:class:`~luskin_core.counting.counts.Facts` of a :class:`FileSource`, over the audited population, in DuckDB SQL."""

    def __init__(self, source: FileSource, population: Sequence[Condition] = ()) -> None:
        self.source = source
        self.population = tuple(population)
        self._distinct: dict[str, int] = {}

    def prefetch(self, columns: Sequence[str]) -> None:
        """The distinct counts of ``columns`` in one query (a scan), but where the Parquet file's own
        statistics settle the plan's question without one (:meth:`FileSource.integer_range`)."""
        s = self.source
        for column in columns:
            if column not in self._distinct:
                bounds = s.integer_range(column)
                if bounds is not None and bounds[1] - bounds[0] + 1 <= MAX_VALUES:
                    # At most this many values, in the file and so in the population: a bound that
                    # decides as the count would (see Facts.n_distinct).
                    self._distinct[column] = bounds[1] - bounds[0] + 1
        wanted = [c for c in columns if c not in self._distinct]
        if not wanted:
            return
        metrics = ", ".join(f"count(DISTINCT {s.column_sql(c)}) AS d{i}" for i, c in enumerate(wanted))
        row = s._sql(f"SELECT {metrics} FROM {s._relation}{s.where(self.population)}", fetch="one")
        for i, column in enumerate(wanted):
            self._distinct[column] = int(row[i])

    def resolve(self, name: str, role: str) -> str:
        return self.source._resolve(name, role)

    def is_numeric(self, column: str) -> bool:
        return self.source.kind_of(column) == NUMERIC

    def n_distinct(self, column: str, cap: int) -> int:
        self.prefetch([column])
        return min(self._distinct[column], cap)

    def quantiles(self, column: str, probs: Sequence[float]) -> list[float]:
        s = self.source
        col = s.column_sql(column)
        where = s.where(self.population)
        where = (where + " AND " if where else " WHERE ") + f"{col} IS NOT NULL"
        listed = ", ".join(f"quantile_cont(CAST({col} AS DOUBLE), {float(p)!r}) AS q{i}" for i, p in enumerate(probs))
        row = s._sql(f"SELECT {listed} FROM {s._relation}{where}", fetch="one")
        return [math.nan if row[i] is None else float(row[i]) for i in range(len(probs))]


def open_file(location: str) -> Source:
    """A CSV or Parquet file (or a folder of Parquet files) for an audit counted by DuckDB's SQL directly.

    Anything else (a database, Spark, a DuckDB file) is opened by :func:`open_source`.
    """
    path = Path(str(location).strip()).expanduser()
    name = path.name.lower()
    if not path.exists() or name.endswith(_DUCKDB) or str(location).lower().startswith(
            ("postgresql://", "postgres://", "spark:")):
        return open_source(location)
    if path.is_dir():
        files = sorted(str(p) for p in path.rglob("*") if p.suffix.lower() in _PARQUET)
        if not files:
            raise LuskinError(f"The folder '{path.name or path}' holds no Parquet files.")
        source = FileSource(str(path), files, name=path.name or str(path), kind="parquet")
    else:
        source = FileSource(str(path), [str(path)], name=path.name or str(path),
                            kind="parquet" if name.endswith(_PARQUET) else "csv")
    try:
        source.types()
    except LuskinError:
        raise LuskinError(f"'{source.name}' could not be read as a table (a CSV, Parquet file or DuckDB "
                          "database).") from None
    return source
