"""Order statistics of an amount per group and cell, exact on every engine: what medians and their intervals need.

An amount's mean needs sums (the count table has them: ``score_sum``, ``score_sumsq``); its median and the
median's distribution-free interval need *order statistics*: the value at a given rank of each group's sorted
amounts (the middle two, and the two that bound the interval, whose ranks depend on the group's size). The
ranks are decided by the statistics (:func:`luskin_core.stats.amounts.needed_ranks`) from the sizes the count
table gave; this module reads the values at those ranks, over exactly the rows the count table counted (the
same rules: :func:`~luskin_core.counting.rules.count_rules`), in one query:

* DuckDB (a frame in memory, a CSV or Parquet file, a DuckDB table): ``quantile_disc`` with a list of fractions,
  grouped by the keys. DuckDB's discrete quantile at fraction ``q`` of ``n`` values is the value of rank
  ``ceil(q n)``, so rank ``r`` is asked for as ``(r - 1/2) / n`` (never on the edge between two ranks); one list
  serves every group (the fractions of every size present), each group reading its own.
* PostgreSQL and Spark (through Ibis): ``row_number()`` over the group's rows ordered by the amount, the rows of
  the wanted ranks kept (exact: no interpolation, never ``percentile_approx``).

Beside them the same query gives each group's rows, mean, sample variance (``var_samp``: the engines' own stable
algorithm, not the difference of sums), smallest and largest value. The result is labelled as the count table
is (:func:`~luskin_core.counting.count_table.label_keys`), so its groups and cells are the count table's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from luskin_core.counting.count_table import CountTable, RawCounts, label_keys, values_and_missing
from luskin_core.counting.memory import frame_kind, run_frame_query
from luskin_core.counting.plan import KEPT, Plan
from luskin_core.counting.rules import count_rules
from luskin_core.counting.sql_rules import sql_name, to_sql
from luskin_core.errors import LuskinError

STATS = ("n", "mean", "var", "min", "max")
OUTCOME_MISSING = 2   # the count's check "outcome missing" (REASONS[2])


@dataclass(frozen=True)
class OrderRequest:
    """The ranks wanted for each size of group: ``ranks[n]`` are the 1-based ranks read in every group of n rows."""

    ranks: dict[int, tuple[int, ...]]

    @classmethod
    def of(cls, sizes: Sequence[int], wanted: Callable[[int], Sequence[int]]) -> OrderRequest:
        return cls({int(n): tuple(sorted({int(r) for r in wanted(int(n))})) for n in sorted(set(sizes)) if n > 0})

    def fraction(self, n: int, r: int) -> float:
        """DuckDB's fraction for rank ``r`` of ``n`` values: ``(r - 1/2) / n``, except the two middle ranks, asked
        for as 1/2 (rank ``ceil(n/2)``) and just above it (rank ``floor(n/2) + 1``) in every group alike, so the
        medians add two fractions to the query whatever the sizes (each fraction costs DuckDB a selection)."""
        if r == (n + 1) // 2:
            return 0.5
        if r == n // 2 + 1:
            return 0.5 + 0.25 / max(self.ranks)
        return (r - 0.5) / n

    def fractions(self) -> list[float]:
        """Every fraction the query asks for, sorted, without repeats."""
        return sorted({self.fraction(n, r) for n, ranks in self.ranks.items() for r in ranks})


@dataclass(frozen=True, eq=False)
class RawOrder:
    """What an executor returns: the keys of each group and cell (raw, as the count table's), its ``n``, ``mean``,
    ``var``, ``min``, ``max`` and ``order`` (per row, a dict rank -> value)."""

    columns: dict[str, np.ndarray]
    order: list[dict[int, float]]


@dataclass(frozen=True, eq=False)
class AmountTable:
    """The count table of an amount and its order statistics, on the same grid of groups and cells.

    ``mean``, ``var``, ``minimum``, ``maximum`` are arrays group x cell (NaN where a cell is empty); ``order[g][c]``
    maps ranks to values (empty where the cell has no row).
    """

    counts: CountTable
    mean: np.ndarray
    var: np.ndarray
    minimum: np.ndarray
    maximum: np.ndarray
    order: list[list[dict[int, float]]]

    @property
    def groups(self) -> tuple[str, ...]:
        return self.counts.groups

    @property
    def n(self) -> np.ndarray:
        return self.counts.n


def kept_sizes(raw: RawCounts) -> list[int]:
    """The rows of each kept key of a raw count table (the sizes whose ranks are wanted)."""
    kept = raw["reason"] == KEPT
    return [int(n) for n in np.asarray(raw["n"])[kept]]


def label(raw: RawOrder, plan: Plan, counts: CountTable) -> AmountTable:
    """The order statistics on the count table's grid; refused in words where two raw keys share a label (values
    given one name), as their order statistics cannot be joined."""
    shape = counts.n.shape
    kept = RawCounts({**{k: v for k, v in raw.columns.items() if k not in STATS},
                      "reason": np.full(len(raw.order), KEPT, dtype=object)})
    keys = label_keys(kept, plan)
    gi = [counts.groups.index(g) for g in keys.groups]
    ci = [list(counts.cell_keys).index(c) for c in keys.cell_keys]
    mean, var, low, high = (np.full(shape, np.nan) for _ in range(4))
    order: list[list[dict[int, float]]] = [[{} for _ in range(shape[1])] for _ in range(shape[0])]
    seen: set[tuple[int, int]] = set()
    for row, (g, c) in enumerate(zip(keys.rows_g, keys.rows_c)):
        g, c = gi[int(g)], ci[int(c)]
        if (g, c) in seen:
            raise LuskinError(f"Two values of the data are named alike in '{counts.groups[g]}' ({counts.cell_labels[c]}): "
                              "an amount's median needs each group's own values. Give them different names, or none.")
        seen.add((g, c))
        n = int(raw.columns["n"][row])
        if n != int(counts.n[g, c]):
            raise RuntimeError("the order statistics counted other rows than the count table")
        mean[g, c], var[g, c] = raw.columns["mean"][row], raw.columns["var"][row]
        low[g, c], high[g, c] = raw.columns["min"][row], raw.columns["max"][row]
        order[g][c] = raw.order[row]
    return AmountTable(counts, mean, var, low, high, order)


# ------------------------------------------------------------------------------------------
# DuckDB: a frame, a file, a DuckDB table (SQL text)
# ------------------------------------------------------------------------------------------
def order_sql(plan: Plan, kind: Any, relation: str, request: OrderRequest, column: Any = sql_name,
              raw: Any = None) -> str:
    """The order-statistics query of ``plan`` over ``relation`` in DuckDB's SQL (the count's rules, kept rows only).

    ``raw`` (a column's stored value, where ``column`` reads a floating NaN as missing with a test the planner
    cannot push into a Parquet scan): the amount is read stored and its missing values (NULL or NaN) are left out
    by each aggregate's own FILTER, which is never pushed into the scan and costs a third of the row test (issue
    50's benchmark); the other rules are the count's. The rows kept are the count's either way (:func:`label`
    checks every group's size against the count table)."""
    rules = count_rules(plan, kind)
    inner = [f"{to_sql(e, column)} AS {sql_name(k)}" for k, e in rules.keys.items()]
    checks = [(code, e) for code, e in rules.checks if raw is None or code != OUTCOME_MISSING]
    inner += [f"{to_sql(e, column)} AS r{code}" for code, e in checks]
    inner.append(f"{to_sql(('float', ('col', plan.outcome)), raw or column)} AS amount_value")
    kept = " AND ".join(f"NOT r{code}" for code, _ in checks) or "TRUE"
    keys = [sql_name(k) for k in rules.keys]
    fractions = ", ".join(repr(f) for f in request.fractions()) or "0.5"
    present = " FILTER (WHERE amount_value IS NOT NULL AND NOT isnan(amount_value))" if raw is not None else ""
    listed = keys + [f"count(*){present} AS n", f"avg(amount_value){present} AS mean",
                     f"var_samp(amount_value){present} AS var", f"min(amount_value){present} AS min",
                     f"max(amount_value){present} AS max",
                     f"quantile_disc(amount_value, [{fractions}]){present} AS q"]
    grouped = f" GROUP BY {', '.join(keys)}" if keys else ""
    having = f" HAVING count(*){present} > 0" if raw is not None else ""
    return (f"SELECT {', '.join(listed)} FROM (SELECT {', '.join(inner)} FROM {relation}) WHERE {kept}{grouped}"
            f"{having}")


def read_duckdb(result: dict[str, Any], plan: Plan, request: OrderRequest) -> RawOrder:
    """A DuckDB order-statistics result (``fetchnumpy`` or a pandas frame's columns) as a :class:`RawOrder`."""
    rules_keys = [k for k in result if k not in (*STATS, "q")]
    columns: dict[str, np.ndarray] = {}
    for name in rules_keys:
        columns[name] = key_values(result[name])
    columns.update(stat_values(result))
    position = {f: i for i, f in enumerate(request.fractions())}
    lists = result["q"]
    order = []
    for row, n in enumerate(columns["n"].tolist()):
        picked = list(lists[row]) if lists[row] is not None else []
        order.append({r: float(picked[position[request.fraction(int(n), r)]]) for r in request.ranks.get(int(n), ())})
    return RawOrder(columns, order)


def frame_order(frame: Any, plan: Plan, request: OrderRequest) -> RawOrder:
    """The order statistics of an in-memory frame (DuckDB over its columns, as the count)."""
    from luskin_core.counting.rules import rule_columns

    kind = frame_kind(frame)
    rules = count_rules(plan, kind)
    columns = rule_columns(*rules.keys.values(), *(e for _, e in rules.checks), ("col", plan.outcome))
    found = run_frame_query(frame, columns, lambda col, view: order_sql(plan, kind, view, request, col, col))
    return read_duckdb({name: found[name] for name in found.columns}, plan, request)


# ------------------------------------------------------------------------------------------
# Ibis: PostgreSQL, Spark
# ------------------------------------------------------------------------------------------
def _ibis_rows(table: Any, plan: Plan) -> tuple[Any, list[str]]:
    """The kept rows of an Ibis table as (keys..., s): the count's rules, its checks passed."""
    import ibis  # type: ignore[import-untyped]

    from luskin_core.counting.ibis_rules import table_kind, to_ibis

    rules = count_rules(plan, table_kind(table))
    keys = {name: to_ibis(e, table) for name, e in rules.keys.items()}
    kept_flag: Any = ibis.literal(True)
    for _, e in rules.checks:
        kept_flag = kept_flag & ~to_ibis(e, table)
    rows = table.select(**keys, amount_value=to_ibis(("float", ("col", plan.outcome)), table),
                        kept=kept_flag)
    return rows.filter(rows.kept).drop("kept"), list(keys)


def embedded_order(table: Any, plan: Plan, request: OrderRequest, sql: Callable[[str], Any]) -> RawOrder:
    """The order statistics of an Ibis table on DuckDB: its kept rows compiled to DuckDB's SQL by Ibis, then
    ``quantile_disc`` grouped by the keys, as for a file (a window over every row is far slower in DuckDB).
    ``sql(text)`` runs a query on the table's connection and fetches its columns."""
    import ibis  # type: ignore[import-untyped]

    rows, names = _ibis_rows(table, plan)
    relation = f"({ibis.to_sql(rows, dialect='duckdb')})"
    keys = [sql_name(k) for k in names]
    fractions = ", ".join(repr(f) for f in request.fractions()) or "0.5"
    listed = keys + ["count(*) AS n", "avg(amount_value) AS mean", "var_samp(amount_value) AS var",
                     "min(amount_value) AS min", "max(amount_value) AS max",
                     f"quantile_disc(amount_value, [{fractions}]) AS q"]
    grouped = f" GROUP BY {', '.join(keys)}" if keys else ""
    return read_duckdb(sql(f"SELECT {', '.join(listed)} FROM {relation} AS kept_rows{grouped}"), plan, request)


def ibis_order(table: Any, plan: Plan, request: OrderRequest, run: Callable[[Any], Any]) -> RawOrder:
    """The order statistics of an Ibis table: ``row_number()`` over each group's rows by amount, the wanted ranks'
    rows kept; the sizes, means and variances by one aggregate. ``run(expr)`` fetches a pandas frame."""
    import ibis  # type: ignore[import-untyped]

    rows, names = _ibis_rows(table, plan)
    stats = rows.group_by(names).aggregate(n=rows.count(), mean=rows.amount_value.mean(), var=rows.amount_value.var(how="sample"),
                                           min=rows.amount_value.min(), max=rows.amount_value.max()) if names else \
        rows.aggregate(n=rows.count(), mean=rows.amount_value.mean(), var=rows.amount_value.var(how="sample"), min=rows.amount_value.min(),
                       max=rows.amount_value.max())
    found = run(stats)
    ranked = rows.mutate(r=ibis.row_number().over(group_by=names, order_by=rows.amount_value) + 1,
                         m=rows.amount_value.count().over(group_by=names))
    wanted: Any = ibis.literal(False)
    for n, ranks in request.ranks.items():
        wanted = wanted | ((ranked.m == n) & ranked.r.isin(list(ranks)))
    picked = run(ranked.filter(wanted).select(*names, "r", "amount_value"))
    columns: dict[str, np.ndarray] = {}
    for name in names:
        columns[name] = key_values(found[name])
    columns.update(stat_values(found))
    index = {_key(row, names, columns): row for row in range(len(columns["n"]))}
    order: list[dict[int, float]] = [{} for _ in range(len(columns["n"]))]
    picked_keys = {}
    for name in names:
        picked_keys[name] = key_values(picked[name])
    for i, (r, s) in enumerate(zip(picked["r"].tolist(), picked["amount_value"].tolist())):
        order[index[_key(i, names, picked_keys)]][int(r)] = float(s)
    return RawOrder(columns, order)


def key_values(column: Any) -> np.ndarray:
    """A key column of an engine's result as objects, None where missing."""
    values, missing = values_and_missing(column)
    values = values.astype(object)
    values[missing] = None
    return values


def stat_values(result: Any) -> dict[str, np.ndarray]:
    """The groups' sizes (integers) and their mean, variance, min and max (NaN where missing) of an engine's result."""
    out: dict[str, np.ndarray] = {}
    for name in STATS:
        values, missing = values_and_missing(result[name])
        out[name] = np.where(missing, np.nan, values).astype(float) if name != "n" else values.astype(np.int64)
    return out


def _key(row: int, names: Sequence[str], columns: dict[str, np.ndarray]) -> tuple[Any, ...]:
    return tuple(_plain(columns[name][row]) for name in names)


def _plain(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, (float, np.floating)):
        return None if math.isnan(value) else float(value)
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return float(value)
    return value


__all__ = ["AmountTable", "OrderRequest", "RawOrder", "embedded_order", "frame_order", "ibis_order", "kept_sizes",
           "label", "order_sql", "read_duckdb"]
