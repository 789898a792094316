"""The counting rules of :mod:`luskin_core.counting.rules` as Ibis expressions, and what every Ibis source shares.

The rules are written once as expression trees (:func:`~luskin_core.counting.rules.count_rules`);
:func:`to_ibis` renders them for PostgreSQL, Spark and DuckDB tables (the in-memory path and files
render the same trees as DuckDB SQL). Column names come from users' files: they are never pasted
into SQL text; Ibis quotes them. Ibis is imported on first use (:func:`ibis`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from luskin_core.counting.engines import engine
from luskin_core.counting.plan import Plan
from luskin_core.counting.rules import (
    BOOL,
    NUMERIC,
    TEXT,
    Expr,
    check_rules,
    condition_rule,
    conjunction_rule,
    outcome_rule,
    part_rule,
)
from luskin_core.spec.conditions import Condition


def load_ibis() -> Any:
    import ibis  # type: ignore[import-untyped]

    return ibis


def nan_as_missing(table: Any, kind: str) -> Any:
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
    ibis = load_ibis()

    def nan(col: Any) -> Any:
        if engine(kind).embedded:
            # DuckDB hashes every NaN alike; the text check only runs on the rare hash matches,
            # so this costs about 1.5x a bare scan of the column, not the 16x of formatting all.
            return (col.hash() == ibis.literal(math.nan, type=schema[col.get_name()]).hash()) & \
                col.cast("string").isin(["nan", "-nan"])
        return col.isnan()

    return table.mutate(**{name: ibis.ifelse(nan(table[name]).fill_null(False), ibis.null().cast(schema[name]),
                                             table[name]) for name in floats})


def duckdb_connect(*args: Any, **kwargs: Any) -> Any:
    """An embedded DuckDB through Ibis, without its progress bar.

    DuckDB draws a progress bar on stdout for a query longer than 2 s, even when stdout is a file:
    it would land in the middle of ``luskin audit --json``'s output.
    """
    con = load_ibis().duckdb.connect(*args, **kwargs)
    con.con.execute("SET enable_progress_bar = false")
    return con


def is_numeric(dtype: Any) -> bool:
    return bool(dtype.is_numeric() and not dtype.is_boolean())


def plain_value(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


# An integer column whose values seen span at most this many integers is clamped to just outside them.
_RANGE_CHECK = 1024


def clamp_range(col: Any, seen: Sequence[Any]) -> tuple[int, int] | None:
    """For an integer column, the values just outside those seen (its key is clamped to them), or None."""
    if not seen or not col.type().is_integer() or not all(isinstance(v, int) for v in seen):
        return None
    low, high = min(seen) - 1, max(seen) + 1
    if high - low > _RANGE_CHECK or low < -(2**63) or high >= 2**63:
        return None
    return low, high


def assumed_key(col: Any, seen: Sequence[Any]) -> Any:
    """The key of a column assumed to hold only ``seen``, which a value outside them cannot multiply.

    An integer column is clamped to one below and one above the values seen: a value outside
    them becomes one of those two, a value inside them keeps its key; either way the count table
    shows it (and stays small), with no CASE per row. ``+ (x - x)`` keeps a missing value missing
    (GREATEST and LEAST skip NULLs). Other columns get no key outside ``seen`` (counted by
    :func:`_unseen`).
    """
    ibis = load_ibis()
    bounds = clamp_range(col, seen)
    if bounds is not None:
        return ibis.greatest(ibis.least(col, bounds[1]), bounds[0]) + (col - col)
    return ibis.ifelse(unseen_expr(col, seen), ibis.null().cast(col.type()), col)


def unseen_expr(col: Any, seen: Sequence[Any]) -> Any:
    """Where the column holds a value (not missing) that is not one of ``seen``."""
    if not seen:
        return col.notnull()
    return col.notnull() & ~col.isin(list(seen)).fill_null(False)


# ------------------------------------------------------------------------------------------
# The row rules of luskin_core.counting.rules, rendered as Ibis expressions
# ------------------------------------------------------------------------------------------
def table_kind(t: Any) -> Any:
    """``kind(column)`` of an Ibis table's columns (NUMERIC, BOOL or TEXT), as the rules need it."""
    schema = t.schema()

    def kind(column: str) -> str:
        dtype = schema[column]
        if dtype.is_boolean():
            return BOOL
        return NUMERIC if is_numeric(dtype) else TEXT
    return kind


def to_ibis(expr: Expr, t: Any, columns: dict[str, Any] | None = None) -> Any:
    """A rule of :mod:`luskin_core.counting.rules` (an expression tree) as an Ibis expression over ``t``.

    ``columns`` replaces some columns by expressions (a key assumed to hold few values).
    """
    ibis = load_ibis()
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


def mask_expr(t: Any, condition: Condition) -> Any:
    """Where the condition holds (False where the value is missing): :func:`~luskin_core.counting.rules.condition_rule`."""
    return to_ibis(condition_rule(condition, table_kind(t)), t)


def conjunction_expr(t: Any, conditions: Sequence[Condition]) -> Any:
    return to_ibis(conjunction_rule(conditions, table_kind(t)), t)


def check_exprs(t: Any, plan: Plan) -> list[tuple[int, Any]]:
    """Why a row may be left out (:func:`~luskin_core.counting.rules.check_rules`), as Ibis expressions."""
    return [(code, to_ibis(e, t)) for code, e in check_rules(plan, table_kind(t))]


def part_expr(t: Any, part: Any, assumed: dict[str, list[Any]] | None = None) -> Any:
    """A key part (:func:`~luskin_core.counting.rules.part_rule`); a column in ``assumed`` cannot multiply the keys."""
    columns = {part.column: assumed_key(t[part.column], assumed[part.column])} \
        if assumed and part.column in assumed else None
    return to_ibis(part_rule(part), t, columns)


def outcome_expr(t: Any, plan: Plan) -> Any:
    """The outcome as a boolean (:func:`~luskin_core.counting.rules.outcome_rule`); NULL where it is missing."""
    return to_ibis(outcome_rule(plan, table_kind(t)), t)




def engine_message(error: Exception, name: str, kind: str = "", what: str = "the audit's query",
                   *, timeout: float | None = None) -> str:
    """One plain sentence for an engine's failure (never its own text, which may hold an address or a password).

    ``timeout``: the source's statement timeout in seconds, named when the server stopped a query for it.
    """
    from luskin_core.counting.deadline import DEFAULT_DEADLINE, lock_wait, locked, over_deadline

    text = str(error).lower()
    if "lock timeout" in text:
        return locked(name, lock_wait(timeout or DEFAULT_DEADLINE))
    if "statement timeout" in text or "canceling statement" in text or "interrupt" in text:
        return over_deadline(what, name, timeout or DEFAULT_DEADLINE)
    if "column" in text and ("not found" in text or "does not exist" in text or "cannot be resolved" in text):
        return f"A column the audit needs is missing from {name}."
    if "connection" in text or "server closed" in text or "could not connect" in text:
        return f"The connection to {name} was lost."
    if kind and engine(kind).from_disk and ("csv" in text or "sniff" in text or "parquet" in text
                                       or "invalid input" in text or "conversion" in text):
        return f"{name} could not be read as a table (a CSV or Parquet file)."
    if name.endswith("(query)"):   # a query the user wrote: the server's own first line says what is wrong
        return f"The query of {name} failed when {what} ran it: {query_reason(error)}."
    return f"The engine could not run {what} on {name}."



def query_reason(error: Exception) -> str:
    """The first line of PostgreSQL's own message (without the query text), for a query the user wrote."""
    diag = getattr(error, "diag", None)
    primary = getattr(diag, "message_primary", None) if diag is not None else None
    text = str(primary or error).strip().splitlines()
    return f"PostgreSQL says: {text[0]}" if text else "check its table and column names"
