"""The in-memory executor: the plan's facts read from a pandas frame, its rules run as one DuckDB query over the frame
(no copy of the rows), and the model tools' rows (:func:`row_reasons`, :func:`row_group_labels`)."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from luskin_core.counting.arrays import SMALL_ROWS, Unsupported, count_rows
from luskin_core.counting.count_table import CountTable, RawCounts, finish_raw
from luskin_core.counting.plan import (
    CROSS,
    FactsBase,
    Plan,
    build_plan,
    is_numeric_series,
    plain_value,
    read_as_categories,
)
from luskin_core.counting.rules import (
    BOOL,
    NUMERIC,
    TEXT,
    Expr,
    check_rules,
    condition_rule,
    count_rules,
    lit,
    metric_rules,
    outcome_rule,
    part_rule,
    rule_columns,
)
from luskin_core.counting.sql_rules import count_sql, sql_name, to_sql
from luskin_core.errors import LuskinError
from luskin_core.spec.audit_spec import AuditSpec, resolve_column
from luskin_core.spec.conditions import Condition, conjunction_mask
from luskin_core.spec.names import GroupNames

if TYPE_CHECKING:
    import pandas as pd
else:  # imported on first use: a file's audit on the command line never needs it
    from luskin_core._lazy import pandas as pd


def frame_kind(frame: pd.DataFrame) -> Any:
    """``kind(column)`` of a pandas frame's columns (NUMERIC, BOOL or TEXT)."""
    def kind(column: str) -> str:
        series = frame[column]
        if pd.api.types.is_bool_dtype(series):
            return BOOL
        return NUMERIC if is_numeric_series(series) else TEXT
    return kind


_DUCK: list[Any] = []
_DUCK_LOCK = threading.Lock()


def duck_cursor() -> Any:
    """A cursor on Luskin's own in-memory DuckDB (one database per process, a cursor per query: thread-safe).

    DuckDB draws a progress bar on stdout for a query longer than 2 s: it is switched off.
    """
    import duckdb

    with _DUCK_LOCK:
        if not _DUCK:
            _DUCK.append(duckdb.connect(":memory:"))
    cursor = _DUCK[0].cursor()
    cursor.execute("SET enable_progress_bar = false")
    return cursor


def _light_frame(frame: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """The columns a query reads, named ``_0``, ``_1``... (no user text in the SQL), text as pandas strings.

    Object and category columns become pandas strings, so DuckDB reads their values as pandas
    does (a Python bool as "True", a number in an object column as its text).
    """
    out = {}
    for i, name in enumerate(columns):
        series = frame[name]
        if series.dtype == object or isinstance(series.dtype, pd.CategoricalDtype):
            series = series.astype("string")
        out[f"_{i}"] = series.reset_index(drop=True) if not isinstance(series.index, pd.RangeIndex) else series
    return pd.DataFrame(out, copy=False)


def run_frame_query(frame: pd.DataFrame, columns: Sequence[str], make_sql: Any) -> pd.DataFrame:
    """Run ``make_sql(column_name, relation)`` over the frame's ``columns`` with DuckDB (no copy of the rows)."""
    names = {name: sql_name(f"_{i}") for i, name in enumerate(columns)}
    light = _light_frame(frame, columns)
    cursor = duck_cursor()
    view = "luskin_rows"
    try:
        cursor.register(view, light)
        return cursor.execute(make_sql(names.__getitem__, view)).df()
    except LuskinError:
        raise
    except Exception as error:  # noqa: BLE001 - a value DuckDB cannot hold (rare): one plain sentence
        raise LuskinError(f"The data could not be counted: {str(error).splitlines()[0]}") from None
    finally:
        cursor.close()


# ------------------------------------------------------------------------------------------
# In-memory facts and aggregation (pandas / numpy)
# ------------------------------------------------------------------------------------------

class FrameFacts(FactsBase):
    """:class:`Facts` of a pandas frame, over the rows in the audited population."""

    def __init__(self, frame: pd.DataFrame, population: Sequence[Condition] = (),
                 distinct: Callable[[str], pd.Series] | None = None) -> None:
        self.frame = frame
        self.assumed = {}   # every value is at hand: nothing is assumed
        self._population = tuple(population)
        self._rows: pd.DataFrame | None = None
        self._distinct = distinct   # the executor's list of a column's values, kept for naming the classes

    @property
    def rows(self) -> pd.DataFrame:
        if self._rows is None:
            if self._population:
                keep = conjunction_mask(self._population, self.frame)
                self._rows = self.frame.loc[keep]
            else:
                self._rows = self.frame
        return self._rows

    def resolve(self, name: str, role: str) -> str:
        return resolve_column(self.frame, name, role)

    def is_numeric(self, column: str) -> bool:
        return is_numeric_series(self.frame[column])

    def n_distinct(self, column: str, cap: int) -> int:
        series = self.rows[column]
        if isinstance(series.dtype, np.dtype) and series.dtype.kind in "iu" and len(series):
            values = series.to_numpy()
            low, high = int(values.min()), int(values.max())
            if high - low + 1 < cap:   # codes 0-19: their range bounds the count (see Facts.n_distinct)
                return high - low + 1
            if high - low < max(4 * len(values), 1 << 16):  # a count per value beats hashing every row
                return min(int(np.count_nonzero(np.bincount(values - low if low else values))), cap)
        head = series.iloc[:65_536]
        if len(series) > len(head) and head.nunique(dropna=True) >= cap:
            return cap  # the first rows already hold cap values: the exact count is at least that
        return min(int(series.nunique(dropna=True)), cap)

    def is_integer(self, column: str) -> bool:
        return bool(pd.api.types.is_integer_dtype(self.frame[column]))

    def distinct_values(self, column: str, cap: int) -> list[Any]:
        values = pd.unique(self.rows[column].dropna())
        return [plain_value(v) for v in values[:cap]]

    def present_values(self, column: str, cap: int) -> list[Any]:
        """Up to ``cap`` distinct present values of the whole frame, most frequent first."""
        if self._distinct is not None:
            values = self._distinct(column)
        else:
            from luskin_core.spec.validation import distinct_values as every_value

            values = every_value(self.frame[column])
        return [plain_value(v) for v in values.iloc[:cap]]

    def quantiles(self, column: str, probs: Sequence[float]) -> list[float]:
        values = self.rows[column].to_numpy(dtype=float, na_value=np.nan)
        values = values[~np.isnan(values)]
        if values.size == 0:
            return [math.nan for _ in probs]
        return [float(q) for q in np.quantile(values, list(probs))]


def cut_into_ranges(series: pd.Series) -> bool:
    """Whether a column of a frame, as a group or strata column without cut points, is cut into ranges."""
    if not is_numeric_series(series):
        return False
    name = str(series.name)
    return not read_as_categories(FrameFacts(series.to_frame(name)), name)


def plan_for_frame(frame: pd.DataFrame, spec: AuditSpec) -> Plan:
    """The plan of ``spec`` on an in-memory frame."""
    if frame is None or len(frame) == 0:
        raise LuskinError("The data has no rows.")
    population = tuple(Condition(resolve_column(frame, c.column, "population"), c.op, c.value)
                       for c in spec.population)
    return build_plan(spec, FrameFacts(frame, population))


def row_values(frame: pd.DataFrame, plan: Plan, *, groups: bool = False) -> pd.DataFrame:
    """Per row, by the counting rules (one DuckDB query, rows in the frame's order): ``reason`` (index in
    REASONS, 0: audited), ``y`` (the 0/1 outcome, 0 where missing) and with ``groups`` the raw group keys
    ``g0..`` (for tools that need rows: the model tools' preparation, the adjusted audit).
    """
    kind = frame_kind(frame)
    checks = check_rules(plan, kind)
    reason: Expr = lit(0)
    for code, expr in reversed(checks):  # the first check that fails names the reason
        reason = ("if", expr, lit(code), reason)
    exprs: dict[str, Expr] = {"reason": reason, "y": ("int", ("false_if_null", outcome_rule(plan, kind)))}
    if groups:
        if plan.protected is not None:
            exprs["g0"] = condition_rule(plan.protected, kind)
        else:
            exprs.update({f"g{i}": part_rule(part) for i, part in enumerate(plan.group_parts)})
    columns = rule_columns(*exprs.values())

    def sql(column: Any, view: str) -> str:
        listed = ", ".join(f"{to_sql(e, column)} AS {sql_name(name)}" for name, e in exprs.items())
        return f"SELECT {listed} FROM {view}"

    out = run_frame_query(frame, columns, sql)
    if len(out) != len(frame):  # DuckDB keeps the rows' order and number for a plain projection
        raise RuntimeError("the row rules lost rows")
    return out


def row_group_labels(frame: pd.DataFrame, plan: Plan) -> np.ndarray:
    """Each row's group label, exactly as the count table names it (for tools that need rows)."""
    keys = row_values(frame, plan, groups=True)
    if plan.protected is not None:
        inside = keys["g0"].fillna(False).to_numpy(dtype=bool)
        names = plan.class_names
        return np.where(inside, names.group, names.other).astype(object)
    pieces = []
    for i, part in enumerate(plan.group_parts):
        codes, uniques = pd.factorize(keys[f"g{i}"], use_na_sentinel=True)
        labels = np.array([part.label(plain_value(v)) for v in uniques] + [part.label(None)], dtype=object)
        pieces.append(labels[np.where(codes < 0, len(uniques), codes)])
    out = pieces[0]
    for piece in pieces[1:]:
        out = out + CROSS + piece
    return np.asarray(out, dtype=object)


def row_reasons(frame: pd.DataFrame, plan: Plan) -> np.ndarray:
    """For every row, the index in REASONS of why it is left out (0: it is audited), by the counting rules."""
    return row_values(frame, plan)["reason"].to_numpy(dtype=np.int64)


def outcome_values(frame: pd.DataFrame, plan: Plan) -> tuple[np.ndarray, np.ndarray | None]:
    """The 0/1 outcome per row (label == positive, or score >= cut-off; 0 where missing) and the score itself."""
    y = row_values(frame, plan)["y"].to_numpy(dtype=np.int64)
    if plan.score:
        return y, frame[plan.outcome].to_numpy(dtype=float, na_value=np.nan)
    return y, None


def aggregate_frame(frame: pd.DataFrame, plan: Plan) -> RawCounts:
    """The raw count table of an in-memory frame: one row per (group parts, cell parts, reason).

    The counting rules (:func:`count_rules`) run as one DuckDB query over the frame's columns,
    the same rules every engine runs; a frame of at most ``SMALL_ROWS`` rows is counted by numpy
    (:mod:`luskin_core.counting.arrays`) from the same rules, where it reads them as DuckDB does. Columns ``g0..``, ``c0..`` (raw key values: column values,
    bin indices or booleans; None for missing), ``reason`` (a name from REASONS) and the counts
    in COUNT_COLUMNS. Rows left out carry no keys (one row per reason).
    """
    rules = count_rules(plan, frame_kind(frame))
    if len(frame) <= SMALL_ROWS:  # numpy reads the same rules without a query's fixed cost
        try:
            return finish_raw(count_rows(frame, rules.keys, rules.checks, rules.values, metric_rules(plan)), plan,
                              rules)
        except Unsupported:
            pass
    columns = rule_columns(*rules.keys.values(), *(e for _, e in rules.checks), *rules.values.values())
    raw = run_frame_query(frame, columns, lambda column, view: count_sql(plan, rules, view, column))
    return finish_raw(raw, plan, rules)


def count_frame(frame: pd.DataFrame, spec: AuditSpec) -> tuple[CountTable, Plan]:
    """The count table of an in-memory frame (plan, one aggregation, labels)."""
    plan = plan_for_frame(frame, spec)
    return CountTable.from_raw(aggregate_frame(frame, plan), plan), plan


def count_arrays(
    y: np.ndarray, in_group: np.ndarray, filter_holds: np.ndarray | None, spec: AuditSpec,
    *, n_excluded: int = 0, excluded: dict[str, int] | None = None, names: GroupNames | None = None,
) -> CountTable:
    """The count table of aligned 0/1 decisions, protected-class membership and filter membership.

    The model tools' path (their decisions are arrays, already restricted to the audited rows).
    ``names``: the classes' names as the data names them (default: the spec's).
    """
    names = names or GroupNames.of(spec)
    y = np.asarray(y, dtype=np.int64)
    g = np.asarray(in_group, dtype=bool)
    f = np.ones_like(g) if filter_holds is None else np.asarray(filter_holds, dtype=bool)
    cell_keys: tuple[Any, ...] = (None,) if filter_holds is None else (True, False)
    # rows: group (True first), columns: cells in cell_keys order
    code = (1 - g.astype(np.int64)) * 2 + (1 - f.astype(np.int64))
    n = np.bincount(code, minlength=4).reshape(2, 2)
    k = np.rint(np.bincount(code, weights=y, minlength=4)).astype(np.int64).reshape(2, 2)
    if filter_holds is None:
        n, k = n[:, :1], k[:, :1]
    labels = tuple(spec.cell_name(key) for key in cell_keys)
    return CountTable(groups=(names.group, names.other), cell_keys=cell_keys, cell_labels=labels,
                      n=n.astype(np.int64), positives=k, excluded=dict(excluded or {}), n_excluded=n_excluded,
                      group_in_protected=(True, False))
