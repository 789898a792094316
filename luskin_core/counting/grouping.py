"""Counts of many groupings in one pass: GROUPING SETS over a counting plan's keys, and row memberships.

A subgroup scan whose full cross of columns is too large to hold needs only the groups it scans (every set
of 1..depth columns): :func:`grouping_set_counts` counts them all in one query with ``GROUP BY GROUPING
SETS``, from the same counting rules every audit runs (:func:`~luskin_core.counting.rules.count_rules`:
the same keys, bins and rows left out). :func:`membership_counts` then counts, for a few groups, the rows by
which of them they belong to (what is needed to tell which of overlapping groups carries a gap).

Where: an in-memory frame and a file counted by DuckDB's SQL
(:class:`~luskin_core.counting.files.FileSource`); other engines are not offered this path yet.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from luskin_core.counting.memory import frame_kind, run_frame_query
from luskin_core.counting.plan import Plan
from luskin_core.counting.rules import count_rules, metric_rules, rule_columns
from luskin_core.counting.sql_rules import sql_literal, sql_name, to_sql
from luskin_core.errors import LuskinError

if TYPE_CHECKING:
    import pandas as pd
else:  # imported on first use: a file's scan in DuckDB never needs it
    from luskin_core._lazy import pandas as pd

# Conditions packed per BIGINT word of a membership (bit 63 left alone: the sign).
_BITS = 62


def supports(data: Any) -> bool:
    """Whether ``data`` can be counted here: a pandas frame, or a file counted by DuckDB's SQL (a table behind
    Ibis is not: its engines' GROUPING SETS are not written here)."""
    from luskin_core.counting.files import FileSource

    if isinstance(data, FileSource):   # before pandas is named: a file's count never imports it
        return True
    return isinstance(data, pd.DataFrame)


def _rows_sql(plan: Plan, rules: Any, relation: str, column: Any) -> tuple[str, list[str]]:
    """The rows kept by the plan (no check fails), with their keys and the metrics' inputs."""
    inner = [f"{to_sql(e, column)} AS {sql_name(k)}" for k, e in rules.keys.items()]
    inner += [f"{to_sql(e, column)} AS {sql_name(k)}" for k, e in rules.values.items()]
    kept = " AND ".join(f"NOT COALESCE({to_sql(e, column)}, FALSE)" for _, e in rules.checks) or "TRUE"
    metrics = []
    for name, (how, what) in metric_rules(plan).items():
        if how == "count":
            metrics.append(f"count(*) AS {name}")
        elif how == "sum" and not name.startswith("score"):
            metrics.append(f"CAST(sum({to_sql(what)}) AS BIGINT) AS {name}")
    return f"(SELECT {', '.join(inner)} FROM {relation} WHERE {kept}) AS kept_rows", metrics


def grouping_sets_sql(plan: Plan, rules: Any, relation: str, column: Any, sets: Sequence[Sequence[str]]) -> str:
    """One query counting every grouping of ``sets`` (key names such as g0, c1) and the grand total."""
    rows, metrics = _rows_sql(plan, rules, relation, column)
    keys = list(rules.keys)
    flags = [f"GROUPING({sql_name(k)}) AS {sql_name('q_' + k)}" for k in keys]
    listed = ", ".join("(" + ", ".join(sql_name(k) for k in s) + ")" for s in (*sets, ()))
    return (f"SELECT {', '.join([*map(sql_name, keys), *flags, *metrics])} FROM {rows} "
            f"GROUP BY GROUPING SETS ({listed})")


def _run(data: Any, plan: Plan, make_sql: Any) -> dict[str, np.ndarray]:
    """Run ``make_sql(rules, column, relation)`` where the data lives; columns as numpy arrays (None: missing)."""
    from luskin_core.counting.files import FileSource

    if isinstance(data, FileSource):
        rules = count_rules(plan, data.kind_of)
        found = data._sql(make_sql(rules, data.column_sql, data._relation), what="the scan's grouping sets")
        out = {}
        for name, values in found.items():
            missing = np.ma.getmaskarray(values)
            plain = np.ma.getdata(values).astype(object)
            plain[missing] = None
            out[name] = plain
        return out
    if not supports(data):
        raise LuskinError("Counting the groups one by one (GROUPING SETS) is done for files and loaded data only.")
    rules = count_rules(plan, frame_kind(data))
    columns = rule_columns(*rules.keys.values(), *(e for _, e in rules.checks), *rules.values.values())
    frame = run_frame_query(data, columns, lambda column, view: make_sql(rules, column, view))
    return {name: frame[name].astype(object).where(frame[name].notna(), None).to_numpy() for name in frame.columns}


def grouping_set_counts(data: Any, plan: Plan, sets: Sequence[Sequence[str]]) -> dict[str, np.ndarray]:
    """Per grouping of ``sets`` (and the grand total, every ``q_`` flag 1): the keys' values (None where the
    key is not grouped, or missing), ``q_<key>`` (1: not grouped) and the plan's counts of the kept rows."""
    return _run(data, plan, lambda rules, column, relation: grouping_sets_sql(plan, rules, relation, column, sets))


def _condition(key: str, value: Any) -> str:
    name = sql_name(key)
    if value is None:
        return f"({name} IS NULL)"
    if isinstance(value, (bool, np.bool_)):
        return f"({name} = {'TRUE' if value else 'FALSE'})"
    if isinstance(value, (int, float, np.integer, np.floating)):
        number = float(value)
        literal = repr(number) if math.isfinite(number) else f"CAST('{number}' AS DOUBLE)"   # inf, -inf
        return f"({name} = {literal})"
    return f"({name} = {sql_literal(str(value))})"


def membership_sql(plan: Plan, rules: Any, relation: str, column: Any,
                   groups: Sequence[dict[str, Any]]) -> str:
    """The kept rows inside any of ``groups`` (each key name -> raw key value), counted by which they belong to:
    word ``w<j>`` has bit ``i`` set for group ``62 j + i``."""
    rows, metrics = _rows_sql(plan, rules, relation, column)
    tests = [" AND ".join(_condition(k, v) for k, v in g.items()) or "TRUE" for g in groups]
    words = []
    for j in range(0, len(tests), _BITS):
        bits = " + ".join(f"(CASE WHEN {t} THEN {1 << i} ELSE 0 END)" for i, t in enumerate(tests[j:j + _BITS]))
        words.append(f"CAST({bits} AS BIGINT) AS w{j // _BITS}")
    anyone = " OR ".join(f"({t})" for t in tests)
    names = [f"w{j}" for j in range(len(words))]
    return (f"SELECT {', '.join([*names, *metrics])} FROM (SELECT *, {', '.join(words)} FROM {rows} "
            f"WHERE {anyone}) AS members GROUP BY {', '.join(names)}")


def membership_counts(data: Any, plan: Plan, groups: Sequence[dict[str, Any]]) -> tuple[np.ndarray,
                                                                                         dict[str, np.ndarray]]:
    """Kept rows inside any of ``groups``, counted per pattern of membership: (patterns x groups booleans,
    the plan's counts per pattern)."""
    if not groups:
        return np.zeros((0, 0), dtype=bool), {}
    found = _run(data, plan, lambda rules, column, relation: membership_sql(plan, rules, relation, column, groups))
    words = [np.asarray(found.pop(f"w{j}"), dtype=np.int64) for j in range((len(groups) + _BITS - 1) // _BITS)]
    member = np.zeros((len(words[0]) if words else 0, len(groups)), dtype=bool)
    for i in range(len(groups)):
        member[:, i] = (words[i // _BITS] >> (i % _BITS)) & 1 == 1
    return member, {k: np.asarray(v, dtype=np.float64) for k, v in found.items()}


__all__ = ["grouping_set_counts", "grouping_sets_sql", "membership_counts", "membership_sql", "supports"]
