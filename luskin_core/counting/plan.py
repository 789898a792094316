"""The count plan: how each row of an audit is keyed, checked and counted, decided from the specification and a few
facts about the columns (:func:`build_plan`). Step 1 of :mod:`luskin_core.counting`."""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from luskin_core._lazy import is_missing
from luskin_core.errors import LuskinError
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.spec.conditions import Condition
from luskin_core.spec.names import GroupNames
from luskin_core.spec.unknown import (
    UNKNOWN,
    finite_number,
    is_unknown_value,
    numeric_unknown,
    unknown_key,
    unknown_spellings,
)
from luskin_core.spec.validation import positive_values, positive_words

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


def is_unknown_group(label: str, named: Collection[str] = (), extra: Collection[str] = ()) -> bool:
    """Whether a group's label ("White × Unknown") has a part of unknown category ("Unknown", "Decline to
    self-identify", or one of ``extra``, the values the user named so: :func:`~luskin_core.spec.unknown.
    is_unknown_value`) that is not one of ``named`` (the values a protected condition asks about)."""
    return any(is_unknown_value(part, extra) and part not in named for part in label.split(CROSS))

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
    # The values the user named "not known" that the protected column does not hold (read where its values were all
    # seen): said, since they set nothing apart (groups by columns find theirs in the group labels).
    unknown_not_found: tuple[str, ...] = ()
    # The score's cut-off is the median: a row counts when its score is strictly above it (else at or above it).
    score_above_median: bool = False

    @property
    def class_names(self) -> GroupNames:
        """The names of the protected class and the rest, as this data names them."""
        return self.names or GroupNames.of(self.spec)

    @property
    def n_group_keys(self) -> int:
        return len(self.group_parts) if self.group_parts else 1

    @property
    def n_cell_keys(self) -> int:
        return len(self.cell_parts) if self.cell_parts else (1 if self.filters else 0)

    @property
    def score(self) -> bool:
        return self.spec.outcome_type == "score"

    @property
    def amount(self) -> bool:
        """An amount outcome: counted as its sums (``score_sum``, ``score_sumsq``) and the rows above 0 (``positives``:
        those receiving it, a bonus); its medians are order statistics (:mod:`luskin_core.counting.order`)."""
        return self.spec.outcome_type == "amount"


class Facts(Protocol):
    """What :func:`build_plan` needs to know about a source's columns (any engine).

    Every method is declared here and answered by every facts class (:class:`FactsBase` gives the answers of a
    source that knows no more), so nothing asks whether a facts object has one.
    """

    assumed: dict[str, list[Any]]
    """Columns whose values were read from the first rows only: the count checks them (see :meth:`settle`)."""

    def resolve(self, name: str, role: str) -> str:
        """The source's spelling of a column (case-insensitive), or a LuskinError."""

    def is_numeric(self, column: str) -> bool:
        """Whether the column holds numbers (not booleans)."""

    def is_integer(self, column: str) -> bool:
        """Whether its type holds whole numbers only (codes with at most MAX_CODES values are then taken value by
        value)."""

    def n_distinct(self, column: str, cap: int) -> int:
        """Distinct non-missing values in the audited population, up to ``cap``.

        An upper bound below ``cap`` may stand in for the count (integers spanning at most ``cap - 1``
        values): every caller asks only whether there are more than ``cap - 1``, and the bound answers it.
        """

    def quantiles(self, column: str, probs: Sequence[float]) -> list[float]:
        """Linear-interpolation quantiles of the non-missing values in the audited population."""

    def values_counted(self, column: str) -> int | None:
        """How many values the column holds, where its quantiles were read from its value counts (else None)."""

    def distinct_values(self, column: str, cap: int) -> list[Any]:
        """Up to ``cap`` distinct non-missing values (to decide how a prediction column is read, and for messages)."""

    def present_values(self, column: str, cap: int) -> list[Any]:
        """Up to ``cap`` distinct present values over the whole source, most frequent first."""

    def settle(self, columns: Sequence[str]) -> None:
        """Count ``columns`` exactly: their first rows' values are no longer :attr:`assumed`."""


class FactsBase:
    """The answers of a source that knows no more than :class:`Facts` requires: no column is known to hold whole
    numbers, no quantile was read from value counts, nothing is assumed; values are listed by the source's own
    ``value_counts`` (most frequent first, over the whole table) where it has a ``source``."""

    assumed: dict[str, list[Any]]
    source: Any = None

    def is_integer(self, column: str) -> bool:
        return False

    def values_counted(self, column: str) -> int | None:
        return None

    def distinct_values(self, column: str, cap: int) -> list[Any]:
        if self.source is None:
            return []
        return [v for v in self.source.value_counts(column, cap)["value"].tolist() if v is not None and not pd.isna(v)]

    def present_values(self, column: str, cap: int) -> list[Any]:
        return self.distinct_values(column, cap)

    def settle(self, columns: Sequence[str]) -> None:
        for column in columns:
            self.assumed.pop(column, None)


def _key_part(facts: Facts, name: str, role: str, spec: AuditSpec) -> KeyPart:
    column = facts.resolve(name, role)
    numeric = facts.is_numeric(column)
    user_cuts = spec.cuts_for(column)
    if user_cuts is not None:
        if not numeric:
            raise LuskinError(f"'{column}' holds text, so it cannot be cut at numbers; its values are used as "
                              "they are.")
        return KeyPart(column, "bins", True, user_cuts)
    if numeric and not read_as_categories(facts, column):
        probs = [i / spec.n_bins for i in range(1, spec.n_bins)]
        low, *quantiles = facts.quantiles(column, [0.0, *probs])  # one query: each quantile is computed alone
        cuts = sorted({round_significant(q) for q in quantiles})
        cuts = [c for c in cuts if c > low]
        if cuts:
            return KeyPart(column, "bins", True, tuple(cuts), quantiles=True, n_values=facts.values_counted(column))
    names = next((pairs for name, pairs in spec.value_names if name.lower() == column.lower()), ())
    return KeyPart(column, "value", numeric, (), names)


# Words of a column's name that say it measures an amount rather than naming a category: such a column of
# whole numbers (age 17-90, hours 1-99) is cut into ranges as before, however few its values.
_QUANTITY = re.compile(r"^(age|ages|years?|yrs|months?|days?|weeks?|hours?|hrs|minutes?|income|salary|wages?|pay|"
                       r"amount|amt|price|cost|value|balance|loan|limit|debt|score|points?|count|number|num|size|exper|"
                       r"length|height|weight|duration|tenure|experience|rate|pct|percent|ratio|total|sum|"
                       r"quantity|qty|capital|gain|loss|bill|payment|credit)$")


def read_as_categories(facts: Facts, column: str) -> bool:
    """Whether a numeric column is read value by value, as categories, rather than as a number: at most
    :data:`MAX_VALUES` distinct values in the audited population, or whole-number codes (at most
    :data:`MAX_CODES` values under a name that does not say it measures an amount).

    The one rule of every analysis: the audit's and the scan's group and strata columns are taken value by value
    (else cut into ranges), and the adjusted gaps' controls enter as categories (else as straight lines)."""
    return facts.n_distinct(column, MAX_VALUES + 1) <= MAX_VALUES or (
        _whole(facts, column) and facts.n_distinct(column, MAX_CODES + 1) <= MAX_CODES)


def _whole(facts: Facts, column: str) -> bool:
    """Whether the column holds codes: whole numbers only, under a name that does not say it measures an amount
    (``age``, ``hours-per-week``: see :data:`_QUANTITY`)."""
    return bool(facts.is_integer(column)) and not _measures(column)


def _measures(column: str) -> bool:
    """Whether a word of the column's name says it measures an amount (``hours-per-week``, ``LoanAmount``)."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", str(column))
    return any(_QUANTITY.match(word) for word in re.split(r"[^a-z0-9]+", spaced.lower()) if word)


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
    not_found: tuple[str, ...] = ()
    if spec.protected is not None:
        protected = Condition(facts.resolve(spec.protected.column, ""), spec.protected.op,
                              spec.protected.value)
        protected_unknown, not_found = _protected_unknown(facts, protected, spec.unknown_values)
    cell_parts = tuple(_key_part(facts, name, "strata", spec) for name in spec.strata)
    filters = tuple(Condition(facts.resolve(c.column, ""), c.op, c.value) for c in spec.filters)
    population = tuple(Condition(facts.resolve(c.column, "population"), c.op, c.value) for c in spec.population)
    cutoff = None
    if spec.outcome_type == "amount" and not outcome_numeric:
        from luskin_core.spec.validation import not_an_amount

        raise LuskinError(not_an_amount(outcome, [str(v) for v in facts.distinct_values(outcome, 50)]))
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
                cell_parts, filters, population, cutoff, protected_unknown=protected_unknown,
                unknown_not_found=not_found,
                score_above_median=spec.outcome_type == "score" and spec.score_cutoff is None)


def _protected_unknown(facts: Facts, protected: Condition, named: tuple[str, ...]
                       ) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The protected column's values read as "not known" (in neither class), and the values the user named so that
    the column does not hold. A text column's values are read (most frequent first); a numeric column's only when
    the user named a number, so a code such as 9 is told apart from a typo. Not found is said only where every value
    of the column was seen (a rarer one could be the named one)."""
    asked = {unknown_key(v) for v in protected.values}
    wanted = [v for v in named if unknown_key(v) not in asked]
    if not facts.is_numeric(protected.column):
        values = facts.present_values(protected.column, UNKNOWN_SCAN)
        found = unknown_spellings(values, protected.values, named)
        held = {unknown_key(v) for v in values}
        missing = tuple(v for v in wanted if unknown_key(v) not in held) if len(values) < UNKNOWN_SCAN else ()
        return found, missing
    codes = numeric_unknown(named, protected.values)   # a numeric code named unknown (race 9, age 999)
    texts = tuple(v for v in wanted if finite_number(v) is None)   # a word is never a value of a column of numbers
    if not codes:
        return codes, texts
    values = facts.present_values(protected.column, UNKNOWN_SCAN)
    if len(values) >= UNKNOWN_SCAN:
        return codes, texts
    numbers = {finite_number(v) for v in values}
    return codes, texts + tuple(c for c in codes if finite_number(c) not in numbers)


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
        shown_values = ", ".join(plain_number(v) for v in facts.distinct_values(column, 4)[:4])
        raise LuskinError(f"The prediction column '{name}' holds numbers other than 0 and 1 (e.g. {shown_values}): "
                          "if it is a score, give the cut-off at or above which it predicts positive (the "
                          "prediction cut-off, e.g. 0.5); otherwise give 0/1 decisions.")
    values = facts.distinct_values(column, 20)
    if not values:
        return WORDS  # no value at all: every row is left out as missing
    if all(isinstance(v, (bool, np.bool_)) for v in values):
        return BOOLEAN
    words = {str(v).strip().lower() for v in values}
    if words <= set(TRUE_WORDS) | set(FALSE_WORDS):
        return WORDS
    if spec.outcome_type == "label":
        texts = {str(v) for v in values}
        if {str(v) for v in positive_values(spec.positive)} & texts or texts <= {str(v) for v in facts.distinct_values(
                plan_outcome, 50)}:
            return LABEL
    listed = ", ".join(shown(str(v)) for v in values[:5]) + (" ..." if len(values) > 5 else "")
    positive = "" if spec.outcome_type != "label" else f", or the outcome's own values with '{positive_words(spec.positive)}'"
    raise LuskinError(f"The prediction column '{name}' holds {listed}: a prediction must be 0/1, true/false or "
                      f"yes/no{positive} for positive; for a column of scores, give a prediction cut-off.")


def is_numeric_series(series: pd.Series) -> bool:
    """Whether a column holds numbers (booleans are not numbers here)."""
    return bool(pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series))


def plain_value(value: Any) -> Any:
    """A numpy scalar as the plain Python value (other values unchanged)."""
    return value.item() if isinstance(value, np.generic) else value
