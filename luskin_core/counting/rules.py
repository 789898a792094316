"""The row rules, written once: the expression trees (the rule IR) that key, check and count a row, built from a
:class:`~luskin_core.counting.plan.Plan`. Compiled to DuckDB SQL by :mod:`luskin_core.counting.sql_rules` and to Ibis
by :mod:`luskin_core.counting.ibis_rules`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from luskin_core.counting.plan import BOOLEAN, CUTOFF, TRUE_WORDS, WORDS, ZERO_ONE, KeyPart, Plan
from luskin_core.errors import LuskinError
from luskin_core.spec.conditions import Condition

if TYPE_CHECKING:
    pass
else:  # imported on first use: a file's audit on the command line never needs it
    pass


# ------------------------------------------------------------------------------------------
# The row rules, written once
# ------------------------------------------------------------------------------------------
# Every rule that keys, checks or counts a row (the conditions, why a row is left out, the group
# and cell keys, the outcome and the model's decision) is written here once, as a small expression
# tree over the columns. Two executors read the same trees: :func:`to_sql` renders them as DuckDB
# SQL (the in-memory path: DuckDB runs them over the frame itself, without copying it; also
# CSV and Parquet files), and :func:`luskin_core.counting.sources.to_ibis` as Ibis expressions (PostgreSQL,
# Spark and DuckDB tables). An expression is a tuple ``(operator, *arguments)``:
#
#   ("col", name)            a column (a floating NaN is missing, as pandas reads it)
#   ("lit", value)           a bool, int, float or str
#   ("isnull", e)            never NULL            ("not", e), ("and", a, b), ("or", a, b)
#   ("cmp", op, a, b)        op in == != < <= > >=  ("in", e, (values ...))
#   ("float"|"text"|"int"|"bool", e)   casts       ("false_if_null", e)
#   ("if", c, a, b)          CASE WHEN c THEN a ELSE b END (b's type; a may be ("null",))
#   ("null",)                a missing value of the other branch's type
#   ("add", a, b)            ("words", e): e as text, spaces around removed, lower case
Expr = tuple[Any, ...]
NUMERIC, BOOL, TEXT = "numeric", "boolean", "text"


def _col(name: str) -> Expr:
    return ("col", name)


def lit(value: Any) -> Expr:
    return ("lit", value)


def _all(parts: Sequence[Expr]) -> Expr:
    out: Expr = lit(True)
    for part in parts:
        out = part if out == lit(True) else ("and", out, part)
    return out


def condition_rule(condition: Condition, kind: Any) -> Expr:
    """Where ``condition`` holds, False where its value is missing (as :meth:`Condition.mask`).

    ``kind(column)`` is the column's kind: NUMERIC (numbers, not booleans), BOOL or TEXT.
    """
    column = condition.column
    col = _col(column)
    values = condition.values
    what = kind(column)
    if what == NUMERIC:
        data: Expr = ("float", col)
        literals: tuple[Any, ...] = tuple(condition._as_number(column, v) for v in values)
    elif condition.op in ("<", "<=", ">", ">="):
        raise LuskinError(f"'{column}' holds text, so '{condition.op}' cannot compare it with {condition.value}. "
                          "Use == or != (or 'in') for text columns.")
    else:
        data = ("if", col, lit("True"), lit("False")) if what == BOOL else ("text", col)
        literals = tuple(str(v) for v in values)
    if condition.op == "in":
        compared: Expr = ("in", data, literals)
    elif condition.op == "not in":
        compared = ("not", ("in", data, literals))
    else:
        compared = ("cmp", condition.op, data, lit(literals[0]))
    return ("and", ("false_if_null", compared), ("not", ("isnull", col)))


def conjunction_rule(conditions: Sequence[Condition], kind: Any) -> Expr:
    """Where every condition holds (True for none)."""
    return _all([condition_rule(c, kind) for c in conditions])


def check_rules(plan: Plan, kind: Any) -> list[tuple[int, Expr]]:
    """Why a row may be left out: (index in REASONS, where it holds), in the order the checks are made.

    Each is a boolean that is never missing; a row's reason is the first that holds (0: audited).
    """
    checks: list[tuple[int, Expr]] = []
    if plan.population:
        checks.append((1, ("not", conjunction_rule(plan.population, kind))))
    checks.append((2, ("isnull", _col(plan.outcome))))
    if plan.prediction is not None:
        checks.append((3, ("isnull", _col(plan.prediction))))
    if plan.protected is not None:
        col = _col(plan.protected.column)
        left_out: Expr = ("isnull", col)
        if plan.protected_unknown:   # "Decline to self-identify" (or a numeric code named so): in neither class
            read: Expr = ("text", col)
            codes: tuple[Any, ...] = plan.protected_unknown
            if kind(plan.protected.column) == NUMERIC:
                read, codes = ("float", col), tuple(float(v) for v in codes)
            left_out = ("or", left_out, ("false_if_null", ("in", read, codes)))
        checks.append((4, left_out))
    if plan.filters:
        unknown: Expr = ("isnull", _col(plan.filters[0].column))
        for condition in plan.filters[1:]:
            unknown = ("or", unknown, ("isnull", _col(condition.column)))
        checks.append((5, unknown))
    return checks


def part_rule(part: KeyPart) -> Expr:
    """A group or cell key part: the column's value (numbers as floats), or its bin index (missing stays missing)."""
    col = _col(part.column)
    if part.kind == "bins":
        index: Expr = lit(0)
        for cut in part.cuts:
            index = ("add", index, ("int", ("cmp", ">=", ("float", col), lit(float(cut)))))
        return index
    return ("float", col) if part.numeric else col


def label_rule(column: str, positive: Any, kind: Any, role: str = "outcome") -> Expr:
    """Whether the column holds the positive value, or any of several (an ``in`` rule: every engine counts it as it
    counts a protected ``in`` condition); numbers compared as numbers; missing where it is missing."""
    col = _col(column)
    what = kind(column)
    if isinstance(positive, tuple):
        if what == NUMERIC:
            try:
                targets: tuple[Any, ...] = tuple(float(v) for v in positive)
            except (TypeError, ValueError):
                bad = next(v for v in positive if not _is_number(v))
                raise LuskinError(f"The {role} '{column}' holds numbers, so its positive values must be numbers, "
                                  f"not '{bad}'.") from None
            return ("in", ("float", col), targets)
        if what == BOOL:
            truth = {str(v).strip().lower() in ("true", "1", "yes", "y") for v in positive}
            return ("cmp", "==", col, lit(truth.pop())) if len(truth) == 1 else ("not", ("isnull", col))
        return ("in", ("text", col), tuple(str(v) for v in positive))
    if what == NUMERIC:
        try:
            target = float(positive)
        except (TypeError, ValueError):
            raise LuskinError(f"The {role} '{column}' holds numbers, so its positive value must be a number, "
                              f"not '{positive}'.") from None
        return ("cmp", "==", ("float", col), lit(target))
    if what == BOOL:
        return ("cmp", "==", col, lit(str(positive).strip().lower() in ("true", "1", "yes", "y")))
    return ("cmp", "==", ("text", col), lit(str(positive)))


def _is_number(value: Any) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True


def outcome_rule(plan: Plan, kind: Any) -> Expr:
    """The outcome as a boolean (label == positive; a score above its median, or at or above its cut-off; an amount
    above 0); missing where it is missing."""
    if plan.amount:
        return ("cmp", ">", ("float", _col(plan.outcome)), lit(0.0))
    if plan.score:
        op = ">" if plan.score_above_median else ">="
        return ("cmp", op, ("float", _col(plan.outcome)), lit(float(plan.score_cutoff)))  # type: ignore[arg-type]
    return label_rule(plan.outcome, plan.spec.positive, kind)


def decision_rule(plan: Plan, kind: Any) -> Expr:
    """The model's decision as a boolean, read as the plan decided (see ``_prediction_kind``); missing where missing."""
    assert plan.prediction is not None
    col = _col(plan.prediction)
    how = plan.prediction_kind
    if how == ZERO_ONE:
        return ("cmp", "==", ("float", col), lit(1.0))
    if how == CUTOFF:
        return ("cmp", ">=", ("float", col), lit(float(plan.spec.prediction_cutoff)))  # type: ignore[arg-type]
    if how == BOOLEAN or kind(plan.prediction) == BOOL:
        return ("bool", col)
    if how == WORDS:
        return ("in", ("words", col), TRUE_WORDS)
    return label_rule(plan.prediction, plan.spec.positive, kind, role="prediction column")


@dataclass(frozen=True)
class CountRules:
    """The counting query of a plan, as rules: group by ``keys`` and ``checks``, sum ``values``.

    ``keys``: g0.., c0.., period (missing for rows outside the population: their values may be
    many); ``checks``: (reason code, expression); ``values``: y (the outcome), d (the decision),
    s (the score); ``parts``: the key part behind each key column (None for a condition's key).
    """

    keys: dict[str, Expr]
    checks: list[tuple[int, Expr]]
    values: dict[str, Expr]
    parts: dict[str, KeyPart | None]


def count_rules(plan: Plan, kind: Any) -> CountRules:
    """The counting query's rules for ``plan`` (one for every executor)."""
    checks = check_rules(plan, kind)
    outside = dict(checks).get(1)

    def keyed(expr: Expr) -> Expr:
        return expr if outside is None else ("if", outside, ("null",), expr)

    keys: dict[str, Expr] = {}
    parts: dict[str, KeyPart | None] = {}
    if plan.protected is not None:
        keys["g0"], parts["g0"] = keyed(condition_rule(plan.protected, kind)), None
    else:
        for i, part in enumerate(plan.group_parts):
            keys[f"g{i}"], parts[f"g{i}"] = keyed(part_rule(part)), part
    if plan.cell_parts:
        for i, part in enumerate(plan.cell_parts):
            keys[f"c{i}"], parts[f"c{i}"] = keyed(part_rule(part)), part
    elif plan.filters:
        keys["c0"], parts["c0"] = keyed(conjunction_rule(plan.filters, kind)), None
    if plan.period is not None:
        keys["period"], parts["period"] = keyed(part_rule(plan.period)), plan.period
    values: dict[str, Expr] = {"y": outcome_rule(plan, kind)}
    if plan.prediction is not None:
        values["d"] = decision_rule(plan, kind)
    if plan.score or plan.amount:
        values["s"] = ("float", _col(plan.outcome))
    return CountRules(keys, checks, values, parts)


def metric_rules(plan: Plan) -> dict[str, tuple[str, Expr]]:
    """The sums of the counting query over the rows' values: name -> ("count"|"sum"|"sumsq", what). A count's
    ``what`` is the literal 1 (each row counts once); the executors count its rows without reading it."""
    y, d = ("col", "y"), ("col", "d")
    metrics: dict[str, tuple[str, Expr]] = {"n": ("count", lit(1))}
    if plan.prediction is not None:
        metrics["positives"] = ("sum", ("int", d))
        metrics["tp"] = ("sum", ("int", ("and", d, y)))
        metrics["fp"] = ("sum", ("int", ("and", d, ("not", y))))
        metrics["fn"] = ("sum", ("int", ("and", ("not", d), y)))
    else:
        metrics["positives"] = ("sum", ("int", y))
    if plan.score or plan.amount:
        metrics["score_sum"] = ("sum", ("col", "s"))
        metrics["score_sumsq"] = ("sumsq", ("col", "s"))
    return metrics


def rule_columns(*exprs: Expr) -> list[str]:
    """The columns the expressions read, in order of first use."""
    out: dict[str, None] = {}

    def walk(expr: Any) -> None:
        if isinstance(expr, tuple) and expr:
            if expr[0] == "col":
                out[expr[1]] = None
                return
            for item in expr[1:]:
                walk(item)

    for expr in exprs:
        walk(expr)
    return list(out)
