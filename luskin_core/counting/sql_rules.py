"""The rule IR compiled to DuckDB SQL (the in-memory path over a frame, CSV and Parquet files), beside
:mod:`luskin_core.counting.ibis_rules` (PostgreSQL, Spark, DuckDB tables)."""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

import numpy as np

from luskin_core.counting.plan import Plan
from luskin_core.counting.rules import CountRules, Expr, metric_rules, part_rule
from luskin_core.errors import LuskinError

if TYPE_CHECKING:
    pass
else:  # imported on first use: a file's audit on the command line never needs it
    pass


# -- the DuckDB executor (SQL text) ------------------------------------------------------------
_SQL_OPS = {"==": "=", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_SQL_CASTS = {"float": "DOUBLE", "text": "VARCHAR", "int": "INTEGER", "bool": "BOOLEAN"}
_SPACES = "' ' || chr(9) || chr(10) || chr(11) || chr(12) || chr(13)"


def sql_literal(value: Any) -> str:
    """A literal in DuckDB's SQL: text quoted (a quote doubled; DuckDB reads a backslash as itself)."""
    if isinstance(value, (bool, np.bool_)):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, np.integer)):
        return f"CAST({int(value)} AS BIGINT)"
    if isinstance(value, (float, np.floating)):
        return f"CAST('{float(value)!r}' AS DOUBLE)"
    text = str(value)
    if "\x00" in text:
        raise LuskinError("A value to compare with holds a NUL character, which cannot be compared.")
    return "'" + text.replace("'", "''") + "'"


def sql_name(name: str) -> str:
    """A quoted identifier (a double quote doubled)."""
    return '"' + str(name).replace('"', '""') + '"'


def to_sql(expr: Expr, column: Any = sql_name) -> str:
    """The expression as DuckDB SQL; ``column(name)`` spells a column reference."""
    op = expr[0]
    if op == "col":
        return column(expr[1])
    if op == "lit":
        return sql_literal(expr[1])
    if op == "null":
        return "NULL"
    if op == "cmp":
        return f"({to_sql(expr[2], column)} {_SQL_OPS[expr[1]]} {to_sql(expr[3], column)})"
    if op == "in":
        return f"({to_sql(expr[1], column)} IN ({', '.join(sql_literal(v) for v in expr[2])}))"
    args = [to_sql(e, column) for e in expr[1:]]
    if op == "isnull":
        return f"({args[0]} IS NULL)"
    if op == "not":
        return f"(NOT {args[0]})"
    if op in ("and", "or"):
        return f"({args[0]} {op.upper()} {args[1]})"
    if op in _SQL_CASTS:
        return f"CAST({args[0]} AS {_SQL_CASTS[op]})"
    if op == "false_if_null":
        return f"COALESCE({args[0]}, FALSE)"
    if op == "if":
        return f"(CASE WHEN {args[0]} THEN {args[1]} ELSE {args[2]} END)"
    if op == "add":
        return f"({args[0]} + {args[1]})"
    if op == "words":
        return f"lower(trim(CAST({args[0]} AS VARCHAR), {_SPACES}))"
    raise ValueError(f"unknown rule operator {op!r}")


def count_sql(plan: Plan, rules: CountRules, relation: str, column: Any = sql_name,
              regroup: Collection[str] = ()) -> str:
    """The counting query of ``rules`` over ``relation`` (a table name or a table function), in DuckDB SQL.

    ``regroup``: keys cut into ranges whose column is known to hold few values in the population
    (:attr:`KeyPart.n_values`, from a file's value counts): the rows are grouped on the column's
    own value, and the few groups cut into ranges and added up after (23.3M rows, income by race: 0.70 s ->
    0.48 s, DuckDB comparing every row with each cut point)."""
    # A number's value key is grouped on the column itself and made a double after: the same groups
    # (a cast joins no two values a double tells apart; the count table adds up any it joins), and
    # DuckDB hashes an integer faster than a double (1M rows, 6 groups x 20 strata: about a third).
    raw = {k: e[1] for k, e in rules.keys.items() if e[0] == "float" and e[1][0] == "col"}
    cut = {k: part for k in regroup if (part := rules.parts.get(k)) is not None and part.kind == "bins"}

    def raw_key(k: str, e: Expr) -> str:
        if k in cut:   # the column as stored (a NaN is a value of its own here, made missing below)
            inside = sql_name(cut[k].column)
            return inside if e[0] != "if" else f"(CASE WHEN {to_sql(e[1], column)} THEN NULL ELSE {inside} END)"
        return to_sql(raw.get(k, e), column)

    inner = [f"{raw_key(k, e)} AS {sql_name(k + '_raw' if k in raw or k in cut else k)}"
             for k, e in rules.keys.items()]
    inner += [f"{to_sql(e, column)} AS r{code}" for code, e in rules.checks]
    inner += [f"{to_sql(e, column)} AS {sql_name(k)}" for k, e in rules.values.items()]
    outer = [f"CAST({sql_name(k + '_raw')} AS DOUBLE) AS {sql_name(k)}" if k in raw
             else sql_name(k + "_raw") if k in cut else sql_name(k)
             for k in rules.keys] + [f"r{code}" for code, _ in rules.checks]
    sums = []
    for name, (how, what) in metric_rules(plan).items():
        if how == "count":
            outer.append(f"count(*) AS {name}")
        elif name == "score_sum":
            outer.append(f"sum({to_sql(what)}) AS {name}")
        elif how == "sum":
            outer.append(f"CAST(sum({to_sql(what)}) AS BIGINT) AS {name}")
        else:
            outer.append(f"sum({to_sql(what)} * {to_sql(what)}) AS {name}")
        sums.append(f"sum({name}) AS {name}" if name.startswith("score") else f"CAST(sum({name}) AS BIGINT) AS {name}")
    groups = ", ".join([sql_name(k + "_raw" if k in raw or k in cut else k) for k in rules.keys]
                       + [f"r{code}" for code, _ in rules.checks])
    counted = f"SELECT {', '.join(outer)} FROM (SELECT {', '.join(inner)} FROM {relation}) GROUP BY {groups}"
    if not cut:
        return counted

    def missing_nan(k: str) -> Any:   # the stored value, a NaN missing (as pandas reads it)
        value = sql_name(k + "_raw")
        return lambda _: f"(CASE WHEN isnan(CAST({value} AS DOUBLE)) THEN NULL ELSE {value} END)"

    keys = [f"{to_sql(part_rule(cut[k]), missing_nan(k))} AS {sql_name(k)}" if k in cut else sql_name(k)
            for k in rules.keys]
    flags = [f"r{code}" for code, _ in rules.checks]
    regrouped = ", ".join([sql_name(k) for k in rules.keys] + flags)
    return f"SELECT {', '.join(keys + flags + sums)} FROM ({counted}) GROUP BY {regrouped}"
