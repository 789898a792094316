"""The one count table every audit is computed from, and the single aggregation that makes it.

An audit only needs counts: for each group and each cell, how many rows (``n``), how many with
the audited decision positive (``positives``), and for a model audited against the truth the
four confusion counts; for a score outcome also the sum and sum of squares of the score. Every
statistic (rates, intervals, tests, impact ratios, pooled odds ratios) is computed from this
table in :mod:`luskin_core.stats.comparisons`, so the rows never need to travel: a query engine can
make the table where the data lives (:mod:`luskin_core.counting.sources` does it for DuckDB, PostgreSQL and
Spark) and produce exactly the same numbers as the in-memory path here.

Three steps, each with one job:

1. :func:`build_plan` reads the specification and a few facts about the columns (numeric or
   text, how many distinct values, quantiles) and decides how each row is keyed: the group key
   (a protected condition, or the values of one to three columns, numeric ones with many values
   cut into bins), the cell key (all rows, filter holds / does not, or strata), the outcome
   indicator, and why a row is left out.
2. One aggregation groups the rows by (raw group parts, raw cell parts, reason) and returns a
   small *raw* table. Its rules are written once (:func:`count_rules`: expression trees for the
   keys, the checks that leave a row out, the outcome and the decision) and every executor reads
   the same trees: :func:`aggregate_frame` runs them as one DuckDB query over a pandas frame
   (no copy of the rows), :class:`luskin_core.counting.sources.FileSource` as DuckDB SQL over a CSV or
   Parquet file, and :mod:`luskin_core.counting.sources` as Ibis expressions on PostgreSQL, Spark and
   DuckDB tables; :func:`finish_raw` shapes every result alike. The model tools' rows
   (:func:`row_reasons`, :func:`row_group_labels`) come from the same rules. Raw keys are the
   column values themselves (or a bin index, or a boolean).
3. :meth:`CountTable.from_raw` turns raw keys into labels ("White", "White × Female",
   "age < 28", "Unknown") and a complete group x cell grid.

Conventions (shared by every engine):

* Missing values of a group or strata column form the group "Unknown" (counted and shown).
  In the paper's condition mode a row whose protected value is missing is left out and counted,
  as are rows missing the outcome, the prediction or a filter value.
* A numeric group or strata column with at most ``MAX_VALUES`` (20) distinct values is taken
  value by value (codes such as EDUCATION 1-6), and so is a column of whole numbers with at most
  ``MAX_CODES`` (100) whose name does not say it measures an amount (codes such as 51 state codes:
  a committee means the states, not four ranges of their codes; ``age`` is still cut); one with more is cut at the user's cut points, or at quantiles (linear
  interpolation, rounded to 4 significant digits, duplicates and cuts at the minimum dropped), and
  the result says so (:func:`binned_parts`). Bin i holds ``cut[i-1] <= x < cut[i]``.
* A score outcome's default cut-off is the median of the audited rows' scores.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from luskin_core._lazy import is_missing, loaded
from luskin_core.counting.arrays import SMALL_ROWS, Unsupported, count_rows
from luskin_core.errors import LuskinError
from luskin_core.spec.audit_spec import AuditSpec, resolve_column
from luskin_core.spec.conditions import Condition, conjunction_mask
from luskin_core.spec.names import GroupNames
from luskin_core.spec.unknown import UNKNOWN, is_unknown_value, unknown_spellings

if TYPE_CHECKING:
    import pandas as pd
else:  # imported on first use: a file's audit on the command line never needs it
    from luskin_core._lazy import pandas as pd

MAX_VALUES = 20
# Whole numbers with at most this many distinct values are codes (states, counties of a state, branches):
# taken value by value like text, never cut into ranges.
MAX_CODES = 100
ALL_ROWS = "All rows"
CROSS = " × "


def is_unknown_group(label: str, named: Collection[str] = ()) -> bool:
    """Whether a group's label ("White × Unknown") has a part of unknown category ("Unknown", "Decline to
    self-identify": :func:`~luskin_core.spec.unknown.is_unknown_value`) that is not one of ``named`` (the values a
    protected condition asks about)."""
    return any(is_unknown_value(part) and part not in named for part in label.split(CROSS))

# Why a row is not audited, in the order the checks are made (the first failing one counts).
KEPT = "kept"
OUTSIDE = "outside the population"
REASONS = (KEPT, OUTSIDE, "outcome missing", "prediction missing", "protected value missing or unknown",
           "filter value missing")
# How many distinct values of a text protected column are read for spellings of "unknown" (most frequent first).
UNKNOWN_SCAN = 1_000
COUNT_COLUMNS = ("n", "positives", "tp", "fp", "fn", "tn", "score_sum", "score_sumsq")

# How a prediction column is read (Plan.prediction_kind): numbers 0/1; a boolean column; text
# spelling yes/no (TRUE_WORDS / FALSE_WORDS, any case, spaces around ignored); a score at or
# above the prediction cut-off; or the outcome's own values (positive where it holds the
# outcome's positive value). Anything else is refused: a silent "nobody predicted positive"
# is a false all-clear.
ZERO_ONE, BOOLEAN, WORDS, CUTOFF, LABEL = "zero_one", "boolean", "words", "cutoff", "label"
TRUE_WORDS = ("1", "1.0", "true", "t", "yes", "y")
FALSE_WORDS = ("0", "0.0", "false", "f", "no", "n")


# ------------------------------------------------------------------------------------------
# The plan
# ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class KeyPart:
    """One column's part of a group or cell key.

    ``kind`` is "value" (the column's own values) or "bins" (the index of the bin between
    ``cuts``; None where the value is missing).
    """

    column: str
    kind: str
    numeric: bool = False
    cuts: tuple[float, ...] = ()
    names: tuple[tuple[str, str], ...] = ()   # the user's names for values (AuditSpec.value_names)
    quantiles: bool = False   # bins cut at the column's quantiles (more than MAX_VALUES values, not codes)
    # How many values the column holds in the population, where the facts counted them (a file's value counts):
    # an executor may group on them before cutting them into ranges. Not part of what the key means.
    n_values: int | None = field(default=None, compare=False)

    def label(self, raw: Any, *, with_column: bool = False) -> str:
        """The words for one raw key value (a value, or a bin index)."""
        if is_missing(raw):
            text = UNKNOWN
            return f"{self.column} = {text}" if with_column else text
        if self.kind == "bins":
            i = int(raw)
            if i == 0:
                return f"{self.column} < {plain_number(self.cuts[0])}"
            if i == len(self.cuts):
                return f"{self.column} ≥ {plain_number(self.cuts[-1])}"
            return f"{plain_number(self.cuts[i - 1])} ≤ {self.column} < {plain_number(self.cuts[i])}"
        text = plain_number(raw) if self.numeric else str(raw)
        text = dict(self.names).get(text, text)
        return f"{self.column} = {text}" if with_column else text

    def sort_key(self, raw: Any) -> tuple[int, Any]:
        """Order of the raw values: numbers numerically, text alphabetically, Unknown last."""
        if is_missing(raw):
            return (2, 0)
        if self.kind == "bins" or self.numeric:
            return (0, float(raw))
        return (1, str(raw))


def plain_number(value: Any) -> str:
    """A value as written in a label: 3 not 3.0, 0.25 not 0.25000000001 (formatting.format_number pads decimals)."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isfinite(x) and x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.10g}"


@dataclass(frozen=True)
class Plan:
    """How each row is keyed and counted: the spec resolved against one data source."""

    spec: AuditSpec
    outcome: str
    outcome_numeric: bool
    prediction: str | None
    prediction_kind: str | None
    group_parts: tuple[KeyPart, ...]
    protected: Condition | None
    cell_parts: tuple[KeyPart, ...]
    filters: tuple[Condition, ...]
    population: tuple[Condition, ...]
    score_cutoff: float | None
    # A period key counted beside the group and cell keys (an audit over time: luskin_core.analyses.series).
    period: KeyPart | None = None
    # The two classes' names resolved from the data (the rest named by the column's other value);
    # None: the spec's own names. The spec itself is never rewritten.
    names: GroupNames | None = None
    # The protected column's values that spell "unknown" ("Decline to self-identify"): such rows are left out with
    # the missing ones, in neither class (luskin_core.spec.unknown).
    protected_unknown: tuple[str, ...] = ()

    @property
    def class_names(self) -> GroupNames:
        """The names of the protected class and the rest, as this data names them."""
        return self.names or GroupNames.of(self.spec)

    @property
    def prediction_binary(self) -> bool:
        """Whether the prediction column holds the numbers 0 and 1."""
        return self.prediction_kind == ZERO_ONE

    @property
    def n_group_keys(self) -> int:
        return len(self.group_parts) if self.group_parts else 1

    @property
    def n_cell_keys(self) -> int:
        return len(self.cell_parts) if self.cell_parts else (1 if self.filters else 0)

    @property
    def confusion(self) -> bool:
        return self.prediction is not None

    @property
    def score(self) -> bool:
        return self.spec.outcome_type == "score"


class Facts(Protocol):
    """What :func:`build_plan` needs to know about a source's columns (any engine)."""

    def resolve(self, name: str, role: str) -> str:
        """The source's spelling of a column (case-insensitive), or a LuskinError."""

    def is_numeric(self, column: str) -> bool:
        """Whether the column holds numbers (not booleans)."""

    def n_distinct(self, column: str, cap: int) -> int:
        """Distinct non-missing values in the audited population, up to ``cap``.

        An upper bound below ``cap`` may stand in for the count (integers spanning at most ``cap - 1``
        values): every caller asks only whether there are more than ``cap - 1``, and the bound answers it.
        """

    def quantiles(self, column: str, probs: Sequence[float]) -> list[float]:
        """Linear-interpolation quantiles of the non-missing values in the audited population."""

    # Optional: ``distinct_values(column, cap)``, up to ``cap`` distinct non-missing values (see
    # :func:`distinct_values`); ``is_integer(column)``, whether its type holds whole numbers only (codes
    # with at most MAX_CODES values are then taken value by value); ``values_counted(column)``, how many
    # values the column holds, where its quantiles were read from its value counts (else None);
    # ``present_values(column, cap)``, up to ``cap`` distinct present values over the whole source, most frequent
    # first (else :func:`distinct_values`).


def distinct_values(facts: Any, column: str, cap: int) -> list[Any]:
    """Up to ``cap`` distinct non-missing values of a column (to decide how a prediction column is read).

    From the facts' own ``distinct_values`` where they have one (in memory: over the audited
    population), else from the source's most frequent values over the whole table (engines).
    """
    own = getattr(facts, "distinct_values", None)
    if own is not None:
        return list(own(column, cap))
    source = getattr(facts, "source", None)
    if source is None:
        return []
    return [v for v in source.value_counts(column, cap)["value"].tolist() if v is not None and not pd.isna(v)]


def _key_part(facts: Facts, name: str, role: str, spec: AuditSpec) -> KeyPart:
    column = facts.resolve(name, role)
    numeric = facts.is_numeric(column)
    user_cuts = spec.cuts_for(column)
    if user_cuts is not None:
        if not numeric:
            raise LuskinError(f"'{column}' holds text, so it cannot be cut at numbers; its values are used as "
                              "they are.")
        return KeyPart(column, "bins", True, user_cuts)
    if numeric and facts.n_distinct(column, MAX_VALUES + 1) > MAX_VALUES and not (
            _whole(facts, column) and facts.n_distinct(column, MAX_CODES + 1) <= MAX_CODES):
        probs = [i / spec.n_bins for i in range(1, spec.n_bins)]
        low, *quantiles = facts.quantiles(column, [0.0, *probs])  # one query: each quantile is computed alone
        cuts = sorted({round_significant(q) for q in quantiles})
        cuts = [c for c in cuts if c > low]
        if cuts:
            counted = getattr(facts, "values_counted", None)
            return KeyPart(column, "bins", True, tuple(cuts), quantiles=True,
                           n_values=None if counted is None else counted(column))
    names = next((pairs for name, pairs in spec.value_names if name.lower() == column.lower()), ())
    return KeyPart(column, "value", numeric, (), names)


# Words of a column's name that say it measures an amount rather than naming a category: such a column of
# whole numbers (age 17-90, hours 1-99) is cut into ranges as before, however few its values.
_QUANTITY = re.compile(r"^(age|ages|years?|yrs|months?|days?|weeks?|hours?|hrs|minutes?|income|salary|wages?|pay|"
                       r"amount|amt|price|cost|value|balance|loan|limit|debt|score|points?|count|number|num|size|"
                       r"length|height|weight|duration|tenure|experience|rate|pct|percent|ratio|total|sum|"
                       r"quantity|qty|capital|gain|loss|bill|payment|credit)$")


def _whole(facts: Facts, column: str) -> bool:
    """Whether the column holds codes: whole numbers only (facts without ``is_integer`` say no), under a name
    that does not say it measures an amount (``age``, ``hours-per-week``: see :data:`_QUANTITY`)."""
    own = getattr(facts, "is_integer", None)
    return own is not None and bool(own(column)) and not _measures(column)


def _measures(column: str) -> bool:
    """Whether a word of the column's name says it measures an amount (``hours-per-week``, ``LoanAmount``)."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", str(column))
    return any(_QUANTITY.match(word) for word in re.split(r"[^a-z0-9]+", spaced.lower()) if word)


def cut_into_ranges(series: pd.Series) -> bool:
    """Whether a column of a frame, as a group or strata column without cut points, is cut into ranges."""
    if not _numeric(series):
        return False
    n = int(series.nunique(dropna=True))
    codes = pd.api.types.is_integer_dtype(series) and not _measures(str(series.name)) and n <= MAX_CODES
    return n > MAX_VALUES and not codes


def binned_parts(plan: Plan) -> tuple[KeyPart, ...]:
    """The group and strata columns cut into ranges at their quantiles (not at the user's cut points)."""
    return tuple(p for p in (*plan.group_parts, *plan.cell_parts) if p.kind == "bins" and p.quantiles)


def round_significant(x: float, digits: int = 4) -> float:
    """Round to a few significant digits so cut points read well (and agree across engines)."""
    if x == 0 or not math.isfinite(x):
        return float(x)
    return float(round(x, digits - 1 - math.floor(math.log10(abs(x)))))


def build_plan(spec: AuditSpec, facts: Facts) -> Plan:
    """Resolve the specification against a source's columns (names, types, bins, cut-off)."""
    outcome = facts.resolve(spec.outcome, "outcome")
    outcome_numeric = facts.is_numeric(outcome)
    prediction = facts.resolve(spec.prediction, "prediction") if spec.prediction else None
    prediction_kind = None if prediction is None else _prediction_kind(facts, prediction, spec, outcome)
    group_parts = tuple(_key_part(facts, name, "group", spec) for name in spec.group_by)
    protected = None
    protected_unknown: tuple[str, ...] = ()
    if spec.protected is not None:
        protected = Condition(facts.resolve(spec.protected.column, ""), spec.protected.op,
                              spec.protected.value)
        if not facts.is_numeric(protected.column):
            own = getattr(facts, "present_values", None)
            values = own(protected.column, UNKNOWN_SCAN) if own else distinct_values(facts, protected.column,
                                                                                     UNKNOWN_SCAN)
            protected_unknown = unknown_spellings(values, protected.values)
    cell_parts = tuple(_key_part(facts, name, "strata", spec) for name in spec.strata)
    filters = tuple(Condition(facts.resolve(c.column, ""), c.op, c.value) for c in spec.filters)
    population = tuple(Condition(facts.resolve(c.column, "population"), c.op, c.value) for c in spec.population)
    cutoff = None
    if spec.outcome_type == "score":
        if not outcome_numeric:
            raise LuskinError(f"The outcome '{outcome}' holds text, so it cannot be a score: choose a numeric "
                              "column, or say which value counts as positive.")
        cutoff = spec.score_cutoff
        if cutoff is None:
            with np.errstate(over="ignore", invalid="ignore"):  # numbers near 1e308: said below, not warned
                median = facts.quantiles(outcome, [0.5])
            if not median or math.isnan(median[0]):
                raise LuskinError(f"The score '{outcome}' has no values to take a median of.")
            if not math.isfinite(median[0]):
                raise LuskinError(f"The score '{outcome}' holds numbers too large to take a median of (near the "
                                  "largest a computer can store): rescale it (divide it by a power of ten), or give "
                                  "a cut-off.")
            cutoff = float(median[0])
    return Plan(spec, outcome, outcome_numeric, prediction, prediction_kind, group_parts, protected,
                cell_parts, filters, population, cutoff, protected_unknown=protected_unknown)


def _prediction_kind(facts: Facts, column: str, spec: AuditSpec, plan_outcome: str) -> str:
    """How the prediction column says "positive" (see ZERO_ONE ... LABEL), or a plain refusal."""
    from luskin_core.spec.validation import shown

    name = shown(column)
    if spec.prediction_cutoff is not None:
        if not facts.is_numeric(column):
            raise LuskinError(f"The prediction column '{name}' holds text, so it cannot be cut at "
                              f"{spec.prediction_cutoff:g}: a cut-off is for a column of scores.")
        return CUTOFF
    if facts.is_numeric(column):
        low, high = facts.quantiles(column, [0.0, 1.0])
        if facts.n_distinct(column, 3) <= 2 and low in (0.0, 1.0) and high in (0.0, 1.0):
            return ZERO_ONE
        shown_values = ", ".join(plain_number(v) for v in distinct_values(facts, column, 4)[:4])
        raise LuskinError(f"The prediction column '{name}' holds numbers other than 0 and 1 (e.g. {shown_values}): "
                          "if it is a score, give the cut-off at or above which it predicts positive (the "
                          "prediction cut-off, e.g. 0.5); otherwise give 0/1 decisions.")
    values = distinct_values(facts, column, 20)
    if not values:
        return WORDS  # no value at all: every row is left out as missing
    if all(isinstance(v, (bool, np.bool_)) for v in values):
        return BOOLEAN
    words = {str(v).strip().lower() for v in values}
    if words <= set(TRUE_WORDS) | set(FALSE_WORDS):
        return WORDS
    if spec.outcome_type == "label":
        texts = {str(v) for v in values}
        if str(spec.positive) in texts or texts <= {str(v) for v in distinct_values(facts, plan_outcome, 50)}:
            return LABEL
    listed = ", ".join(shown(str(v)) for v in values[:5]) + (" ..." if len(values) > 5 else "")
    positive = "" if spec.outcome_type != "label" else f", or the outcome's own values with '{shown(spec.positive)}'"
    raise LuskinError(f"The prediction column '{name}' holds {listed}: a prediction must be 0/1, true/false or "
                      f"yes/no{positive} for positive; for a column of scores, give a prediction cut-off.")


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


def _lit(value: Any) -> Expr:
    return ("lit", value)


def _all(parts: Sequence[Expr]) -> Expr:
    out: Expr = _lit(True)
    for part in parts:
        out = part if out == _lit(True) else ("and", out, part)
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
        data = ("if", col, _lit("True"), _lit("False")) if what == BOOL else ("text", col)
        literals = tuple(str(v) for v in values)
    if condition.op == "in":
        compared: Expr = ("in", data, literals)
    elif condition.op == "not in":
        compared = ("not", ("in", data, literals))
    else:
        compared = ("cmp", condition.op, data, _lit(literals[0]))
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
        if plan.protected_unknown:   # "Decline to self-identify": in neither class
            left_out = ("or", left_out, ("false_if_null", ("in", ("text", col), plan.protected_unknown)))
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
        index: Expr = _lit(0)
        for cut in part.cuts:
            index = ("add", index, ("int", ("cmp", ">=", ("float", col), _lit(float(cut)))))
        return index
    return ("float", col) if part.numeric else col


def label_rule(column: str, positive: Any, kind: Any, role: str = "outcome") -> Expr:
    """Whether the column holds the positive value (numbers compared as numbers); missing where it is missing."""
    col = _col(column)
    what = kind(column)
    if what == NUMERIC:
        try:
            target = float(positive)
        except (TypeError, ValueError):
            raise LuskinError(f"The {role} '{column}' holds numbers, so its positive value must be a number, "
                              f"not '{positive}'.") from None
        return ("cmp", "==", ("float", col), _lit(target))
    if what == BOOL:
        return ("cmp", "==", col, _lit(str(positive).strip().lower() in ("true", "1", "yes", "y")))
    return ("cmp", "==", ("text", col), _lit(str(positive)))


def outcome_rule(plan: Plan, kind: Any) -> Expr:
    """The outcome as a boolean (label == positive, or score >= cut-off); missing where it is missing."""
    if plan.score:
        return ("cmp", ">=", ("float", _col(plan.outcome)), _lit(float(plan.score_cutoff)))  # type: ignore[arg-type]
    return label_rule(plan.outcome, plan.spec.positive, kind)


def decision_rule(plan: Plan, kind: Any) -> Expr:
    """The model's decision as a boolean, read as the plan decided (see ``_prediction_kind``); missing where missing."""
    assert plan.prediction is not None
    col = _col(plan.prediction)
    how = plan.prediction_kind
    if how == ZERO_ONE:
        return ("cmp", "==", ("float", col), _lit(1.0))
    if how == CUTOFF:
        return ("cmp", ">=", ("float", col), _lit(float(plan.spec.prediction_cutoff)))  # type: ignore[arg-type]
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
    if plan.score:
        values["s"] = ("float", _col(plan.outcome))
    return CountRules(keys, checks, values, parts)


def metric_rules(plan: Plan) -> dict[str, tuple[str, Expr | None]]:
    """The sums of the counting query over the rows' values: name -> ("count"|"sum"|"sumsq", what)."""
    y, d = ("col", "y"), ("col", "d")
    metrics: dict[str, tuple[str, Expr | None]] = {"n": ("count", None)}
    if plan.prediction is not None:
        metrics["positives"] = ("sum", ("int", d))
        metrics["tp"] = ("sum", ("int", ("and", d, y)))
        metrics["fp"] = ("sum", ("int", ("and", d, ("not", y))))
        metrics["fn"] = ("sum", ("int", ("and", ("not", d), y)))
    else:
        metrics["positives"] = ("sum", ("int", y))
    if plan.score:
        metrics["score_sum"] = ("sum", ("col", "s"))
        metrics["score_sumsq"] = ("sumsq", ("col", "s"))
    return metrics


def _values_and_missing(column: Any) -> tuple[np.ndarray, np.ndarray]:
    """A column of an executor's result as (values, missing): a pandas Series, a numpy array, or a numpy
    masked array (DuckDB's ``fetchnumpy``, the file path that never imports pandas)."""
    if isinstance(column, np.ma.MaskedArray):
        values = np.asarray(column.data)
        missing = np.ma.getmaskarray(column).copy()
    else:
        dtype = getattr(column, "dtype", None)
        if hasattr(column, "to_numpy") and not (isinstance(dtype, np.dtype) and dtype.kind not in "mM"):
            values = column.to_numpy(dtype=object)   # pandas' own types (Int64, string, dates) as its objects
        else:
            values = np.asarray(column)
        missing = np.zeros(len(values), dtype=bool)
    if values.dtype.kind == "f":
        missing |= np.isnan(values)
    elif values.dtype.kind == "O":
        pandas = loaded("pandas")   # a value can be pandas' NA (or NaT) only if pandas is loaded
        missing |= (pandas.isna(values) if pandas is not None
                    else np.fromiter((is_missing(v) for v in values), dtype=bool, count=len(values)))
    return values, missing


def _count_values(column: Any, kind: type) -> np.ndarray:
    """A count or sum column as a numpy array (engines return integers, floats, decimals or None)."""
    values, missing = _values_and_missing(column)
    if values.dtype == kind and kind is np.int64 and not missing.any():
        return values
    values = np.where(missing, 0, values).astype(float)
    return values.astype(kind) if kind is np.int64 else values


@dataclass(frozen=True, eq=False)
class RawCounts:
    """The raw count table every executor returns, before labels: one row per combination of keys kept,
    and one per reason rows were left out (those carry no keys).

    Columns: the keys ``g0..`` (group parts), ``c0..`` (cell parts) and ``period`` (raw values: column
    values, bin indices or booleans, as Python objects; None for missing), ``reason`` (a name from
    REASONS) and the counts of COUNT_COLUMNS present. numpy arrays rather than a pandas frame, so a
    file's audit from the command line never imports pandas; :meth:`to_frame` gives the frame.
    ``assumptions_hold`` is False when an engine's count found a key value its plan assumed absent
    (:meth:`luskin_core.counting.sources.Source.raw_counts`).
    """

    columns: dict[str, np.ndarray]
    assumptions_hold: bool = True

    def __len__(self) -> int:
        return len(self.columns["reason"])

    def __getitem__(self, name: str) -> np.ndarray:
        return self.columns[name]

    def __contains__(self, name: object) -> bool:
        return name in self.columns

    def take(self, rows: np.ndarray) -> RawCounts:
        """The rows selected by a boolean mask or indices."""
        return RawCounts({name: values[rows] for name, values in self.columns.items()}, self.assumptions_hold)

    def without(self, name: str) -> RawCounts:
        """The table without one column (the period key, to count every period together)."""
        return RawCounts({k: v for k, v in self.columns.items() if k != name}, self.assumptions_hold)

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, assumptions_hold: bool = True) -> RawCounts:
        """A table reshaped with pandas, back: keys as objects (None where missing), counts as numbers."""
        columns: dict[str, np.ndarray] = {}
        for name in frame.columns:
            if name in COUNT_COLUMNS:
                columns[name] = frame[name].to_numpy()
                continue
            values, missing = _values_and_missing(frame[name])
            values = values.astype(object)
            values[missing] = None
            columns[name] = values
        return cls(columns, assumptions_hold)

    def to_frame(self) -> pd.DataFrame:
        """The table as a pandas frame: keys as objects, the reason as text, counts as numbers."""
        return pd.DataFrame({name: values if name in COUNT_COLUMNS
                             else pd.Series(values.tolist()) if name == "reason"   # text, as pandas infers it
                             else pd.Series(values, dtype=object)
                             for name, values in self.columns.items()})


def finish_raw(raw: Any, plan: Plan, rules: CountRules) -> RawCounts:
    """The raw count table (as every executor returns it) from the counting query's grouped rows.

    ``raw`` (a pandas frame, or a mapping of names to numpy arrays) holds the keys, one boolean
    column ``r{code}`` per check and the metrics. The reason of a row is the first check that
    fails; a row left out keeps its count only, under its reason (one row per reason). Built with
    numpy (a few rows, many columns: pandas' per-call cost was most of a small audit's time).
    """
    names = list(raw)
    n_rows = len(raw[names[0]]) if names else 0
    reasons = np.zeros(n_rows, dtype=np.int64)
    for code, _ in reversed(rules.checks):  # the first check that fails names the reason
        flag, missing = _values_and_missing(raw[f"r{code}"])
        flag = np.where(missing, False, flag).astype(bool)
        reasons[flag] = code
    kept = reasons == 0
    left = np.unique(reasons[~kept])   # the reasons a row was left out for, in REASONS order
    flags = {f"r{code}" for code, _ in rules.checks}
    columns: dict[str, np.ndarray] = {}
    for name in names:
        if name in flags:
            continue
        if name in ("n", "positives", "tp", "fp", "fn", "score_sum", "score_sumsq"):
            values = _count_values(raw[name], float if name.startswith("score") else np.int64)
            totals = ([values[reasons == code].sum() for code in left] if name == "n"
                      else [values.dtype.type(0)] * len(left))
            columns[name] = np.concatenate([values[kept], np.asarray(totals, dtype=values.dtype)])
            continue
        part = rules.parts.get(name)
        values, missing = _values_and_missing(raw[name])
        if part is not None and part.kind == "value" and part.numeric:
            values = np.where(missing, np.nan, values).astype(float)
        values = values.astype(object)[kept]
        values[missing[kept]] = None
        columns[name] = np.concatenate([values, np.full(len(left), None, dtype=object)])
    columns["reason"] = np.array([REASONS[0]] * int(kept.sum()) + [REASONS[int(r)] for r in left], dtype=object)
    if plan.prediction is not None:
        columns["tn"] = columns["n"] - columns["tp"] - columns["fp"] - columns["fn"]
    order = [c for c in columns if c not in COUNT_COLUMNS] + [c for c in COUNT_COLUMNS if c in columns]
    return RawCounts({c: columns[c] for c in order})


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
            outer.append(f"sum({to_sql(what)}) AS {name}")  # type: ignore[arg-type]
        elif how == "sum":
            outer.append(f"CAST(sum({to_sql(what)}) AS BIGINT) AS {name}")  # type: ignore[arg-type]
        else:
            outer.append(f"sum({to_sql(what)} * {to_sql(what)}) AS {name}")  # type: ignore[arg-type]
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


def frame_kind(frame: pd.DataFrame) -> Any:
    """``kind(column)`` of a pandas frame's columns (NUMERIC, BOOL or TEXT)."""
    def kind(column: str) -> str:
        series = frame[column]
        if pd.api.types.is_bool_dtype(series):
            return BOOL
        return NUMERIC if _numeric(series) else TEXT
    return kind


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
def _numeric(series: pd.Series) -> bool:
    return bool(pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series))


class FrameFacts:
    """:class:`Facts` of a pandas frame, over the rows in the audited population."""

    def __init__(self, frame: pd.DataFrame, population: Sequence[Condition] = (),
                 distinct: Callable[[str], pd.Series] | None = None) -> None:
        self.frame = frame
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
        return _numeric(self.frame[column])

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
        return [_plain(v) for v in values[:cap]]

    def present_values(self, column: str, cap: int) -> list[Any]:
        """Up to ``cap`` distinct present values of the whole frame, most frequent first."""
        if self._distinct is not None:
            values = self._distinct(column)
        else:
            from luskin_core.spec.validation import distinct_values as every_value

            values = every_value(self.frame[column])
        return [_plain(v) for v in values.iloc[:cap]]

    def quantiles(self, column: str, probs: Sequence[float]) -> list[float]:
        values = self.rows[column].to_numpy(dtype=float, na_value=np.nan)
        values = values[~np.isnan(values)]
        if values.size == 0:
            return [math.nan for _ in probs]
        return [float(q) for q in np.quantile(values, list(probs))]


def plan_for_frame(frame: pd.DataFrame, spec: AuditSpec) -> Plan:
    """The plan of ``spec`` on an in-memory frame."""
    if frame is None or len(frame) == 0:
        raise LuskinError("The data has no rows.")
    population = tuple(Condition(resolve_column(frame, c.column, "population"), c.op, c.value)
                       for c in spec.population)
    return build_plan(spec, FrameFacts(frame, population))


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def row_values(frame: pd.DataFrame, plan: Plan, *, groups: bool = False) -> pd.DataFrame:
    """Per row, by the counting rules (one DuckDB query, rows in the frame's order): ``reason`` (index in
    REASONS, 0: audited), ``y`` (the 0/1 outcome, 0 where missing) and with ``groups`` the raw group keys
    ``g0..`` (for tools that need rows: the model tools' preparation, the adjusted audit).
    """
    kind = frame_kind(frame)
    checks = check_rules(plan, kind)
    reason: Expr = _lit(0)
    for code, expr in reversed(checks):  # the first check that fails names the reason
        reason = ("if", expr, _lit(code), reason)
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
        labels = np.array([part.label(_plain(v)) for v in uniques] + [part.label(None)], dtype=object)
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


# ------------------------------------------------------------------------------------------
# The count table
# ------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class CountTable:
    """Counts per group (rows of the arrays) and cell (columns), with the rows left out.

    ``cell_keys`` are None (one cell: all rows), True/False (the filter holds / does not, the
    paper's cells) or the stratum's label. ``tp``/``fp``/``fn``/``tn`` are present when a
    model's decisions are audited against the outcome, ``score_sum``/``score_sumsq`` for a
    score outcome.
    """

    groups: tuple[str, ...]
    cell_keys: tuple[Any, ...]
    cell_labels: tuple[str, ...]
    n: np.ndarray
    positives: np.ndarray
    excluded: dict[str, int]
    n_excluded: int
    tp: np.ndarray | None = None
    fp: np.ndarray | None = None
    fn: np.ndarray | None = None
    tn: np.ndarray | None = None
    score_sum: np.ndarray | None = None
    score_sumsq: np.ndarray | None = None
    score_cutoff: float | None = None
    group_in_protected: tuple[bool, ...] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    # Columns cut into ranges at their quantiles (column, cut points): a result says so (binned_parts).
    binned: tuple[tuple[str, tuple[float, ...]], ...] = ()

    @property
    def n_rows(self) -> int:
        return int(self.n.sum())

    def group_index(self, label: str) -> int:
        return self.groups.index(label)

    def to_frame(self) -> pd.DataFrame:
        """Long form: one row per group and cell with every count (what the engines must agree on)."""
        rows = []
        for gi, group in enumerate(self.groups):
            for ci, (key, label) in enumerate(zip(self.cell_keys, self.cell_labels)):
                row: dict[str, Any] = {"group": group, "cell": label, "n": int(self.n[gi, ci]),
                                       "positives": int(self.positives[gi, ci])}
                for name in ("tp", "fp", "fn", "tn"):
                    array = getattr(self, name)
                    if array is not None:
                        row[name] = int(array[gi, ci])
                for name in ("score_sum", "score_sumsq"):
                    array = getattr(self, name)
                    if array is not None:
                        row[name] = float(array[gi, ci])
                rows.append(row)
        return pd.DataFrame(rows)

    @classmethod
    def from_raw(cls, raw: RawCounts, plan: Plan) -> CountTable:
        """Labels and a complete group x cell grid from an aggregation's raw table."""
        spec = plan.spec
        reasons = raw["reason"]
        kept_rows = reasons == KEPT
        excluded_all: dict[str, int] = {}
        for reason, count in zip(reasons[~kept_rows].tolist(), raw["n"][~kept_rows].tolist()):
            excluded_all[reason] = excluded_all.get(reason, 0) + int(count)
        excluded = {str(r): v for r, v in excluded_all.items() if r != OUTSIDE and v > 0}
        ordered = {r: excluded[r] for r in REASONS if r in excluded}
        n_excluded = sum(excluded_all.values())
        kept = raw.take(kept_rows)
        n_group = plan.n_group_keys
        group_cols = [f"g{i}" for i in range(n_group)]
        cell_cols = [f"c{i}" for i in range(plan.n_cell_keys)]
        # Group labels and order
        if plan.protected is not None:
            names = plan.class_names
            groups_by_raw = {True: names.group, False: names.other}
            group_labels = [groups_by_raw[bool(v)] for v in kept["g0"]]
            groups = [names.group, names.other]
            in_protected: tuple[bool, ...] | None = (True, False)
            if names.group == names.other:
                raise LuskinError("The protected group and the other class have the same name: give them "
                                  "different names.")
        else:
            in_protected = None
            raw_keys = [tuple(_nan_to_none(v) for v in row) for row in zip(*(kept[c].tolist() for c in group_cols))]
            group_labels = [CROSS.join(p.label(v) for p, v in zip(plan.group_parts, key)) for key in raw_keys]
            order = sorted(set(zip(raw_keys, group_labels)),
                           key=lambda kl: tuple(p.sort_key(v) for p, v in zip(plan.group_parts, kl[0])))
            groups = list(dict.fromkeys(label for _, label in order))
        # Cell keys, labels and order
        if plan.cell_parts:
            raw_cells = [tuple(_nan_to_none(v) for v in row) for row in zip(*(kept[c].tolist() for c in cell_cols))]
            with_column = True
            cell_label_list = [CROSS.join(p.label(v, with_column=with_column) for p, v in zip(plan.cell_parts, key))
                               for key in raw_cells]
            order_c = sorted(set(zip(raw_cells, cell_label_list)),
                             key=lambda kl: tuple(p.sort_key(v) for p, v in zip(plan.cell_parts, kl[0])))
            cell_labels = list(dict.fromkeys(label for _, label in order_c))
            cell_keys: list[Any] = list(cell_labels)
            row_cells: list[Any] = cell_label_list
        elif plan.filters:
            cell_keys = [True, False]
            cell_labels = [spec.cell_name(True), spec.cell_name(False)]
            row_cells = [bool(v) for v in kept["c0"]]
        else:
            cell_keys, cell_labels = [None], [ALL_ROWS]
            row_cells = [None] * len(kept)
        if not groups:
            raise LuskinError("Every row was left out, so nothing can be audited "
                              + (f"({', '.join(f'{k}: {v:,}' for k, v in ordered.items())})." if ordered else "."))
        gi = {g: i for i, g in enumerate(groups)}
        ci = {k: i for i, k in enumerate(cell_keys)}
        shape = (len(groups), len(cell_keys))
        present = [name for name in COUNT_COLUMNS if name in kept]
        arrays = {name: np.zeros(shape, dtype=float) for name in present}
        rows_g = np.array([gi[g] for g in group_labels], dtype=np.int64)
        rows_c = np.array([ci[c] for c in row_cells], dtype=np.int64)
        for name in present:
            np.add.at(arrays[name], (rows_g, rows_c), kept[name].astype(float))
        ints = {name: np.rint(arrays[name]).astype(np.int64) for name in present
                if name not in ("score_sum", "score_sumsq")}
        return cls(
            groups=tuple(groups), cell_keys=tuple(cell_keys), cell_labels=tuple(cell_labels),
            n=ints["n"], positives=ints["positives"], excluded=ordered, n_excluded=n_excluded,
            tp=ints.get("tp"), fp=ints.get("fp"), fn=ints.get("fn"), tn=ints.get("tn"),
            score_sum=arrays.get("score_sum"), score_sumsq=arrays.get("score_sumsq"),
            score_cutoff=plan.score_cutoff, group_in_protected=in_protected,
            binned=tuple((p.column, p.cuts) for p in binned_parts(plan)),
        )


def _nan_to_none(value: Any) -> Any:
    if value is None:   # finish_raw made every other missing value None, but a float NaN
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    return _plain(value)


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
