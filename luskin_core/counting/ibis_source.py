"""A table behind Ibis (DuckDB, PostgreSQL, Spark, an in-memory frame) that Luskin audits without loading its rows.

An audit needs only counts, so a :class:`Source` gives the plan's facts from its engine
(:class:`~luskin_core.counting.ibis_facts.EngineFacts`) and the raw count table in one aggregation:
the rows never travel. The counting rules are :mod:`luskin_core.counting.counts`' own, rendered
as Ibis expressions (:mod:`luskin_core.counting.ibis_rules`), so every engine gives the same count
table and audit as the in-memory path. What differs between engines is declared in
:mod:`luskin_core.counting.engines` (``source.engine``), never tested by name.
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from luskin_core.counting.counts import (
    CountTable,
    Facts,
    KeyPart,
    Plan,
    RawCounts,
    build_plan,
    count_rules,
    finish_raw,
    metric_rules,
)
from luskin_core.counting.engines import Engine, engine
from luskin_core.counting.executor import count_plan
from luskin_core.counting.ibis_facts import EngineFacts
from luskin_core.counting.ibis_rules import (
    _assumed_key,
    _clamp_range,
    _ibis,
    _is_numeric,
    _plain_value,
    _unseen,
    duckdb_connect,
    engine_message,
    nan_as_missing,
    table_kind,
    to_ibis,
)
from luskin_core.counting.sampling import DEFAULT_SAMPLE_CAP, SampleInfo, draw_sample
from luskin_core.errors import LuskinError
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.spec.conditions import Condition

if TYPE_CHECKING:
    import pandas as pd
else:  # imported on first use: a file's audit on the command line never needs it
    from luskin_core._lazy import pandas as pd


class Source:
    """A table in a query engine that Luskin can audit without loading its rows."""

    statement_timeout: float | None = None   # seconds after which the engine stops a query (where it can)

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
        ibis = _ibis()
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

    def facts(self, spec: AuditSpec) -> Facts:
        """Facts for ``spec``'s plan: the first rows (one LIMIT query) say whether the table is empty and which
        values the numeric group and strata columns take there (``facts.assumed``, checked by the count)."""
        facts = self._facts(spec)
        if not facts.look(self._numeric_keys(spec)):
            raise LuskinError(f"The source {self.name} has no rows.")
        return facts

    def count(self, plan: Plan, *, assumed: dict[str, list[Any]] | None = None) -> RawCounts:
        """The raw count table of ``plan`` (:meth:`raw_counts`)."""
        return self.raw_counts(plan, assumed=assumed)

    def counts(self, spec: AuditSpec, *, period: KeyPart | None = None) -> tuple[Plan, RawCounts]:
        """The plan and the raw count table, in one scan of the table where the first rows allow it
        (:func:`~luskin_core.counting.executor.count_plan`). ``period``: a key counted as well."""
        plan, raw = count_plan(self, spec, period=period)
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
        """A seeded sample of ``cap`` rows, stratified by group x outcome, drawn inside the engine
        (:func:`~luskin_core.counting.sampling.draw_sample`)."""
        return draw_sample(self, spec, cap, seed)

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
            raise LuskinError(engine_message(error, self.name, self.kind, what,
                                             timeout=self.statement_timeout)) from None
