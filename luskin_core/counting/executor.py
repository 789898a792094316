"""One protocol for every place an audit is counted, and the one walk from a specification to a checked count table.

An executor (an in-memory frame, a file counted by DuckDB's SQL, a table behind Ibis) answers two
questions: its :class:`~luskin_core.counting.plan.Facts` about the columns (``facts(spec)``), from
which :func:`~luskin_core.counting.plan.build_plan` makes the plan, and the raw count table of a
plan (``count(plan)``). :func:`count_plan` walks every executor through the same steps (including
the engines' one-scan shortcut: facts read from the first rows, checked by the count itself), and
:func:`counted_table` makes the labelled count table and checks it once, in one wording, whatever
counted it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from luskin_core.counting.count_table import CountTable, RawCounts
from luskin_core.counting.memory import FrameFacts, aggregate_frame
from luskin_core.counting.order import AmountTable, OrderRequest, RawOrder, label
from luskin_core.counting.plan import Facts, KeyPart, Plan, build_plan
from luskin_core.errors import LuskinError
from luskin_core.spec.audit_spec import AuditSpec, resolve_column
from luskin_core.spec.conditions import Condition
from luskin_core.spec.names import MAX_VALUES, GroupNames, needs_values, other_group_name

if TYPE_CHECKING:
    import pandas as pd
else:  # imported on first use: a file's audit on the command line never needs it
    from luskin_core._lazy import pandas as pd

# Distinct values listed in a message about a column (and searched for the positive value on an engine).
LISTED_VALUES = 1000


@runtime_checkable
class Executor(Protocol):
    """Something an audit is counted in: facts about its columns, and the raw count table of a plan."""

    name: str
    kind: str   # the engine's key (luskin_core.counting.engines)

    def facts(self, spec: AuditSpec) -> Facts:
        """The facts :func:`~luskin_core.counting.plan.build_plan` reads (a LuskinError when there is no row).

        Their ``assumed`` columns (values read from the first rows only) are checked by the count, and
        ``settle(columns)`` counts them exactly (:func:`count_plan`).
        """

    def count(self, plan: Plan, *, assumed: dict[str, list[Any]] | None = None) -> RawCounts:
        """The raw count table of ``plan``, in one aggregation (``assumed``: see :meth:`facts`)."""

    def value_counts(self, column: str, limit: int = 100) -> pd.DataFrame:
        """Distinct values of a column with their counts, most frequent first (missing included)."""

    def distinct(self, column: str, cap: int | None = None) -> pd.Series:
        """A column's distinct present values, most frequent first, named as the column: up to ``cap`` (None: every
        one in memory, :data:`LISTED_VALUES` on an engine). Sources list them with :func:`listed_values`."""

    def order_statistics(self, plan: Plan, request: OrderRequest) -> RawOrder:
        """An amount's order statistics at the requested ranks per group and cell, over the rows ``count`` counts
        (:mod:`luskin_core.counting.order`)."""


class FrameExecutor:
    """An in-memory pandas frame as an executor (DuckDB over the frame's own columns, numpy for small ones)."""

    kind = "frame"

    def __init__(self, frame: pd.DataFrame, name: str = "the data") -> None:
        self.frame = frame
        self.name = name
        self._distinct: dict[str, pd.Series] = {}

    def facts(self, spec: AuditSpec) -> FrameFacts:
        if self.frame is None or len(self.frame) == 0:
            raise LuskinError("The data has no rows.")
        population = tuple(Condition(resolve_column(self.frame, c.column, "population"), c.op, c.value)
                           for c in spec.population)
        return FrameFacts(self.frame, population, self.distinct)

    def count(self, plan: Plan, *, assumed: dict[str, list[Any]] | None = None) -> RawCounts:
        return aggregate_frame(self.frame, plan)

    def order_statistics(self, plan: Plan, request: OrderRequest) -> RawOrder:
        from luskin_core.counting.order import frame_order

        return frame_order(self.frame, plan, request)

    def value_counts(self, column: str, limit: int = 100) -> pd.DataFrame:
        counts = self.frame[resolve_column(self.frame, column, "")].value_counts(dropna=False, sort=True)
        counts = counts[counts > 0].iloc[: int(limit)]   # a categorical column lists its unused categories too
        values = [None if pd.isna(v) else (v.item() if hasattr(v, "item") else v) for v in counts.index]
        return pd.DataFrame({"value": pd.Series(values, dtype=object), "count": counts.to_numpy()})

    def distinct(self, column: str, cap: int | None = None) -> pd.Series:
        """Every distinct present value, most frequent first (the in-memory checks' own list), listed once."""
        from luskin_core.spec.validation import distinct_values

        column = resolve_column(self.frame, column, "")
        if column not in self._distinct:
            self._distinct[column] = distinct_values(self.frame[column])
        values = self._distinct[column]
        return values if cap is None else values.iloc[:cap]


def listed_values(source: Any, column: str, cap: int | None = None) -> pd.Series:
    """An engine's distinct present values of a column, most frequent first, from its ``value_counts`` (up to
    ``cap``, else :data:`LISTED_VALUES`): numbers compared as numbers."""
    listed = source.value_counts(column, LISTED_VALUES if cap is None else cap)["value"].tolist()
    values = [v for v in listed if v is not None and not pd.isna(v)]
    return pd.Series(values, name=column, dtype=object).infer_objects()


def executor_for(data: Any, name: str = "the data") -> Executor:
    """The executor that counts ``data``: an executor itself (a source), or a pandas frame in memory."""
    if isinstance(data, Executor):
        return data
    return FrameExecutor(data, name)


def count_plan(executor: Executor, spec: AuditSpec, *, period: KeyPart | None = None) -> tuple[Plan, RawCounts]:
    """The plan and the raw count table, in one scan where the executor's facts allow it.

    Facts an engine read from the first rows only (``facts.assumed``: a numeric key showing at most
    20 values there) are checked by the count itself; a column no key of the count would check is
    counted exactly first, and a count that finds another value is made again from exact facts, so
    the result is always the exact plan's. ``period``: a key counted as well (the "period" column).
    """
    facts = executor.facts(spec)

    def make_plan() -> Plan:
        plan = build_plan(spec, facts)
        return plan if period is None else replace(plan, period=period)

    plan = make_plan()
    assumed: dict[str, list[Any]] = dict(facts.assumed)
    if assumed:
        keyed = {p.column for p in (*plan.group_parts, *plan.cell_parts) if p.kind == "value"}
        unkeyed = [c for c in assumed if c not in keyed]
        if unkeyed:  # an assumption no key of the counting query would check: counted exactly instead
            facts.settle(unkeyed)
            plan = make_plan()
            assumed = dict(facts.assumed)
    raw = executor.count(plan, assumed=assumed or None)
    if not raw.assumptions_hold:
        facts.settle(list(assumed))
        plan = make_plan()
        raw = executor.count(plan)
    return plan, raw


def exact_plan(executor: Executor, spec: AuditSpec) -> Plan:
    """The plan of ``spec`` from exact facts, for a tool that plans without counting (the adjusted gaps' cells, the
    model tools' sample): a column whose values were read from the first rows is counted exactly instead."""
    facts = executor.facts(spec)
    plan = build_plan(spec, facts)
    if facts.assumed:
        facts.settle(list(facts.assumed))
        plan = build_plan(spec, facts)
    return plan


def distinct_present(executor: Executor, column: str) -> pd.Series:
    """A column's distinct present values, most frequent first, named as the column (for messages)."""
    return executor.distinct(column)


def group_names(executor: Executor, spec: AuditSpec, column: str | None = None) -> GroupNames:
    """The two classes' names for ``spec`` on this data: the rest named from the protected column's values.

    The values are listed by the executor (every distinct present value, up to
    :data:`~luskin_core.spec.names.MAX_VALUES`); the spec layer names the rest from them. ``column``: the
    data's own spelling of the protected column when already resolved (the plan's). Refusals about the
    column are the audit's to say, so a column the data lacks keeps the spec's names.
    """
    if not needs_values(spec):
        return GroupNames.of(spec)
    assert spec.protected is not None   # needs_values says so
    if column is None:
        try:
            column = executor.facts(spec).resolve(spec.protected.column, "")
        except LuskinError:
            return GroupNames.of(spec)
    values, complete = present_values(executor, column, MAX_VALUES)
    return GroupNames.of(spec, other_group_name(spec, values, complete=complete))


def present_values(executor: Executor, column: str, cap: int) -> tuple[pd.Series, bool]:
    """Up to ``cap`` distinct present values of a column (most frequent first), and whether that is all of them."""
    values = executor.distinct(column, cap + 1)
    return values.iloc[:cap], len(values) <= cap


def counted_table(data: Any, spec: AuditSpec) -> tuple[CountTable, Plan]:
    """The audit's labelled count table of ``data`` (a frame or a source), checked once, in one wording.

    Refused, in plain words: no row to audit (naming the columns that lack values), a positive
    value the outcome never holds (a typo, most often), and a protected condition that holds for
    no row or for every row.
    """
    from luskin_core.counting.prepared import nothing_to_audit
    from luskin_core.spec.validation import never_occurs, no_two_classes, outcome_mask, positive_values

    executor = executor_for(data)
    plan, raw = count_plan(executor, spec)
    if plan.protected is not None:   # "Male", not "Non-Female", when the column has two values
        plan = replace(plan, names=group_names(executor, spec, plan.protected.column))
    table = CountTable.from_raw(raw, plan)
    if table.n_rows == 0:
        raise nothing_to_audit(plan, table.excluded)
    several = isinstance(spec.positive, tuple)   # each of several values must occur: one never seen is a typo
    if spec.outcome_type == "label" and spec.prediction is None and (several or int(table.positives.sum()) == 0):
        present = distinct_present(executor, plan.outcome)
        for value in positive_values(spec.positive):
            if not bool(outcome_mask(present, value).any()):
                raise never_occurs(value, plan.outcome, present)
    if plan.protected is not None:
        sizes = table.n.sum(axis=1)
        if sizes[0] == 0 or sizes[1] == 0:
            raise no_two_classes(plan.protected, distinct_present(executor, plan.protected.column),
                                 empty=bool(sizes[0] == 0))
    return table, plan


def counted_amounts(data: Any, spec: Any, wanted: Callable[[int], Sequence[int]]) -> AmountTable:
    """The amount's count table and its order statistics (``wanted(n)``: the ranks read in a group of n rows), of a
    frame or a source alike: the count table through :func:`~luskin_core.counting.executor.counted_table` (its
    checks, its words), then one order-statistics query through the executor."""
    if spec.outcome_type != "amount":
        raise LuskinError("The outcome is not an amount: an amount's medians are counted for an amount outcome "
                          "(outcome_type 'amount').")
    executor = executor_for(data)
    counts, plan = counted_table(executor, spec)
    return _with_order(executor, plan, counts, wanted)


def _with_order(executor: Executor, plan: Plan, counts: CountTable, wanted: Callable[[int], Sequence[int]]
                ) -> AmountTable:
    sizes = [int(n) for n in counts.n.ravel() if n > 0]
    request = OrderRequest.of(sizes, wanted)
    return label(executor.order_statistics(plan, request), plan, counts)


def counted_amounts_with_pooled(data: Any, spec: AuditSpec, wanted: Callable[[int], Sequence[int]]
                                ) -> tuple[AmountTable, AmountTable]:
    """The amount table of ``spec``'s cells and the one of every cell together (its groups over the same rows).

    The cells are counted as :func:`counted_amounts` counts them; where no row was left out for its cell (a
    filter's value missing: the only cell reason), the rows of every cell together are the same rows, so their
    count table is the cells' summed over the cells (one scan fewer: issue 50's benchmark), and only their order
    statistics are read, by the cells' plan without its cells. Otherwise every cell together is counted anew."""
    if spec.outcome_type != "amount":
        raise LuskinError("The outcome is not an amount: an amount's medians are counted for an amount outcome "
                          "(outcome_type 'amount').")
    executor = executor_for(data)
    counts, plan = counted_table(executor, spec)
    cells = _with_order(executor, plan, counts, wanted)
    pooled_spec = spec.with_changes(filters=(), strata=())
    if counts.excluded.get("filter value missing", 0) or plan.period is not None:
        return cells, counted_amounts(executor, pooled_spec, wanted)

    def whole(values: Any) -> Any:
        return None if values is None else values.sum(axis=1, keepdims=True)

    pooled_counts = replace(counts, cell_keys=(None,), cell_labels=("All rows",), n=whole(counts.n),
                            positives=whole(counts.positives), tp=whole(counts.tp), fp=whole(counts.fp),
                            fn=whole(counts.fn), tn=whole(counts.tn), score_sum=whole(counts.score_sum),
                            score_sumsq=whole(counts.score_sumsq), binned=tuple(
                                b for b in counts.binned if b[0] not in {p.column for p in plan.cell_parts}))
    pooled_plan = replace(plan, spec=pooled_spec, cell_parts=(), filters=())
    return cells, _with_order(executor, pooled_plan, pooled_counts, wanted)
