"""A table behind Ibis (DuckDB, PostgreSQL, Spark, an in-memory frame) that Luskin audits without loading its rows.

An audit needs only counts, so a :class:`Source` gives the plan's facts from its engine
(:class:`~luskin_core.counting.ibis_facts.EngineFacts`) and the raw count table in one aggregation:
the rows never travel. The counting rules are :mod:`luskin_core.counting.rules`' own, rendered
as Ibis expressions (:mod:`luskin_core.counting.ibis_rules`), so every engine gives the same count
table and audit as the in-memory path. What differs between engines is declared in
:mod:`luskin_core.counting.engines` (``source.engine``), never tested by name.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from luskin_core.counting.count_table import RawCounts, finish_raw
from luskin_core.counting.deadline import DEFAULT_DEADLINE, Timer, interrupt_after, over_deadline, spark_deadline
from luskin_core.counting.engines import Engine, engine
from luskin_core.counting.executor import listed_values
from luskin_core.counting.ibis_facts import EngineFacts
from luskin_core.counting.ibis_rules import (
    assumed_key,
    clamp_range,
    duckdb_connect,
    engine_message,
    is_numeric,
    load_ibis,
    nan_as_missing,
    plain_value,
    table_kind,
    to_ibis,
    unseen_expr,
)
from luskin_core.counting.plan import Facts, Plan
from luskin_core.counting.rules import count_rules, metric_rules
from luskin_core.counting.sampling import DEFAULT_SAMPLE_CAP, SampleInfo, draw_sample
from luskin_core.errors import LuskinError
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.spec.conditions import Condition

if TYPE_CHECKING:
    import pandas as pd

    from luskin_core.counting.order import OrderRequest, RawOrder
else:  # imported on first use: a file's audit on the command line never needs it
    from luskin_core._lazy import pandas as pd


class Source:
    """A table in a query engine that Luskin can audit without loading its rows."""

    statement_timeout: float | None = DEFAULT_DEADLINE   # seconds any one query may run (counting/deadline.py)

    def __init__(self, table: Any, *, name: str, kind: str, backend: Any = None) -> None:
        self._raw = table  # as stored (a table small enough is handed to the model tools whole, as stored)
        self._table = nan_as_missing(table, kind)
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
        ibis = load_ibis()
        con = duckdb_connect()
        table = con.create_table("luskin_frame", ibis.memtable(frame))
        return cls(table, name=name, kind="frame", backend=con)

    @property
    def engine(self) -> Engine:
        """What this source's engine is and can do (:mod:`luskin_core.counting.engines`)."""
        return engine(self.kind)

    # -- facts ---------------------------------------------------------------------------------
    @property
    def table(self) -> Any:
        return self._table

    @property
    def backend(self) -> Any:
        """The Ibis backend the table lives on (None when it came without one), for work beside the counting
        protocol: a temporary table of the adjusted audit's rows, the proxy's lookup table on PostgreSQL."""
        return self._backend

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
                .order_by([load_ibis().desc("count"), "value"]).limit(int(limit)))
        frame = self._run(expr, fetch=True).reset_index(drop=True)
        frame["value"] = frame["value"].astype(object).where(frame["value"].notna(), None)
        return frame

    def distinct(self, column: str, cap: int | None = None) -> pd.Series:
        """The column's distinct present values, most frequent first (:func:`~luskin_core.counting.executor.listed_values`)."""
        return listed_values(self, column, cap)

    # -- counting ------------------------------------------------------------------------------
    def _facts(self, spec: AuditSpec) -> EngineFacts:
        population = tuple(Condition(self._resolve(c.column, "population"), c.op, c.value) for c in spec.population)
        return EngineFacts(self, population)

    def _numeric_keys(self, spec: AuditSpec) -> list[str]:
        """Numeric group and strata columns without the user's cut points (the 20-values rule decides them)."""
        schema = self._table.schema()
        keyed = [self._resolve(name, role) for names, role in ((spec.group_by, "group"), (spec.strata, "strata"))
                 for name in names]
        return [c for c in dict.fromkeys(keyed) if is_numeric(schema[c]) and spec.cuts_for(c) is None]

    def derive(self, **columns: Any) -> Source:
        """This source with more columns, each computed by the engine (``name=function of the table``)."""
        out = copy.copy(self)
        out._table = self._table.mutate(**{name: make(self._table) for name, make in columns.items()})
        return out

    def facts(self, spec: AuditSpec) -> Facts:
        """Facts for ``spec``'s plan: the first rows (one LIMIT query) say whether the table is empty and which
        values the numeric group and strata columns take there (``facts.assumed``, checked by the count)."""
        facts = self._facts(spec)
        if not facts.look(self._numeric_keys(spec)):
            raise LuskinError(f"The source {self.name} has no rows.")
        return facts

    def count(self, plan: Plan, *, assumed: dict[str, list[Any]] | None = None) -> RawCounts:
        """The raw count table (as :func:`~luskin_core.counting.memory.aggregate_frame` makes it), in one aggregation.
        Counted through :func:`~luskin_core.counting.executor.count_plan` (which checks ``assumed``) and
        :func:`~luskin_core.counting.executor.counted_table`, as every executor is.

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
        ibis = load_ibis()
        assumed = assumed or {}
        rules = count_rules(plan, table_kind(t))
        # A key assumed to hold few values cannot multiply the count table (see _assumed_key).
        overrides = {c: assumed_key(t[c], seen) for c, seen in assumed.items()}
        keyed_assumed = {name for name, part in rules.parts.items() if part is not None and part.column in assumed}
        keys = {name: to_ibis(e, t, overrides if name in keyed_assumed else None) for name, e in rules.keys.items()}
        flags = {f"r{code}": to_ibis(e, t) for code, e in rules.checks}
        values = {name: to_ibis(e, t) for name, e in rules.values.items()}
        # Values outside those assumed: a clamped integer key shows them; other columns are counted here.
        counted = {c: seen for c, seen in assumed.items() if clamp_range(t[c], seen) is None}
        if counted:
            unseen = ibis.literal(False)
            for column, seen in counted.items():
                unseen = unseen | unseen_expr(t[column], seen)
            values["u"] = unseen if "r1" not in flags else unseen & ~flags["r1"]
        rows = t.select(**keys, **flags, **values)
        metrics: dict[str, Any] = {}
        for name, (how, what) in metric_rules(plan).items():
            if how == "count":
                metrics[name] = rows.count()
            else:
                x = to_ibis(what, rows)
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
                    hold = hold and all(plain_value(v) in known
                                        for v in pd.to_numeric(population[name]).dropna().unique())
        counts = replace(finish_raw(raw, plan, rules), assumptions_hold=hold)
        self._n_rows = int(counts["n"].sum())   # every row is in the count table (those left out by reason)
        return counts

    def order_statistics(self, plan: Plan, request: OrderRequest) -> RawOrder:
        """An amount's order statistics in the engine: DuckDB's ``quantile_disc``, else row numbers over each group's
        rows by amount (PostgreSQL, Spark)."""
        from luskin_core.counting.order import embedded_order, ibis_order

        if self.engine.embedded and self._backend is not None:
            def sql(text: str) -> Any:
                timer = Timer()
                try:
                    with self.deadline() as timer:
                        return self._backend.con.execute(text).fetchnumpy()
                except Exception as error:  # noqa: BLE001 - every engine failure becomes one plain sentence
                    if timer.fired:
                        raise LuskinError(over_deadline("the amounts' medians", self.name,
                                                        self.statement_timeout or 0)) from None
                    raise LuskinError(engine_message(error, self.name, self.kind, "the amounts' medians")) from None

            return embedded_order(self._table, plan, request, sql)
        return ibis_order(self._table, plan, request,
                          lambda expr: self._run(expr, fetch=True, what="the amounts' medians").reset_index(drop=True))

    # -- rows for the model tools --------------------------------------------------------------
    def sample(self, spec: AuditSpec, cap: int = DEFAULT_SAMPLE_CAP, seed: int = 0) -> tuple[pd.DataFrame, SampleInfo]:
        """A seeded sample of ``cap`` rows, stratified by group x outcome, drawn inside the engine
        (:func:`~luskin_core.counting.sampling.draw_sample`)."""
        return draw_sample(self, spec, cap, seed)

    # -- helpers -------------------------------------------------------------------------------
    def _resolve(self, name: str, role: str) -> str:
        from luskin_core.spec.validation import check_column

        return check_column(self.columns(), name, role)

    def deadline(self) -> Any:
        """A context holding the block's queries to the deadline (:mod:`luskin_core.counting.deadline`): DuckDB is
        interrupted, Spark's job group cancelled; PostgreSQL stops a query itself (its session's statement_timeout)."""
        seconds = self.statement_timeout
        backend = self._backend
        how = self.engine.deadline_by
        if how == "jobs" and backend is not None and getattr(backend, "_session", None) is not None:
            return spark_deadline(backend._session, seconds)
        if how == "interrupt" and backend is not None and hasattr(getattr(backend, "con", None), "interrupt"):
            return interrupt_after(seconds, backend.con.interrupt)
        return interrupt_after(None, lambda: None)

    def _run(self, expr: Any, *, fetch: bool = False, what: str = "the audit's query") -> Any:
        timer = Timer()
        try:
            with self.deadline() as timer:
                result = expr.to_pandas() if fetch else expr.execute()
        except LuskinError:
            raise
        except Exception as error:  # noqa: BLE001 - every engine failure becomes one plain sentence
            if timer.fired:
                raise LuskinError(over_deadline(what, self.name, self.statement_timeout or 0)) from None
            raise LuskinError(engine_message(error, self.name, self.kind, what,
                                             timeout=self.statement_timeout)) from None
        if timer.fired:   # an engine that could not be stopped in time (Spark still planning): said all the same
            raise LuskinError(over_deadline(what, self.name, self.statement_timeout or 0))
        return result
