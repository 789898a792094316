"""Every check of a user's input in one place, as scikit-learn keeps ``utils/validation.py``.

The specification, the pages, the command line and the estimators call these functions, so a
mistake gets the same plain sentence wherever it is made. Each check raises
:class:`luskin_core.errors.LuskinError` with words a policy analyst understands.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from luskin_core.errors import LuskinError
from luskin_core.formatting import count_of
from luskin_core.spec.columns import (  # noqa: F401  (the column checks are part of the one validator)
    MAX_LISTED,
    MAX_LISTED_VALUES,
    MAX_SHOWN_CHARS,
    ROLE_PROMPTS,
    check_column,
    check_column_names,
    column_list,
    shown,
)
from luskin_core.spec.conditions import Condition
from luskin_core.spec.unknown import unknown_spellings

if TYPE_CHECKING:
    import pandas as pd

    from luskin_core.spec.audit_spec import AuditSpec
else:  # imported on first use: a file's audit on the command line never needs it
    from luskin_core._lazy import pandas as pd

# ------------------------------------------------------------------------------------------
# Columns and specifications
# ------------------------------------------------------------------------------------------
# ------------------------------------------------------------------------------------------
# The specification's rules: each once, in one wording, for the library, the page and the CLI
# ------------------------------------------------------------------------------------------
OUTCOME_TYPES = ("label", "score", "amount")   # an amount: pay, a price, a sentence (its mean and median)
METRICS = ("difference", "ratio")
CORRECTIONS = ("holm", "bh", "none")
# What equal treatment means for a model's decisions (with a prediction column): equal shares
# predicted positive, equal true positive rates (equal opportunity), equal true and false
# positive rates (equalized odds), or equal precision.
CRITERIA = ("selection", "opportunity", "odds", "precision")
OUTCOME_MEANINGS = ("favourable", "adverse")   # is the counted outcome good or bad for the person?
MAX_CROSS = 3                   # groups may cross at most three columns (race x sex x age band)
_MEANING_SPELLINGS = {"favorable": "favourable", "unfavourable": "adverse", "unfavorable": "adverse"}


def check_outcome_name(value: Any) -> str:
    """The outcome column's name, stripped; a missing one asks for it."""
    if not isinstance(value, str) or not value.strip():
        raise LuskinError(ROLE_PROMPTS["outcome"])
    return value


def check_outcome_type(value: Any) -> str:
    if value not in OUTCOME_TYPES:
        raise LuskinError(f"The outcome is a 'label' (with a positive value), a 'score' or an 'amount', not "
                          f"'{shown(value)}'.")
    return str(value)


def positive_values(positive: Any) -> tuple[Any, ...]:
    """The outcome's positive values as a tuple: one value, or the several an outcome may count ("Fail" or
    "Withdrawn"). Every rule that reads the positive value reads it through this, so one value and a set of them
    are counted alike (the mask, the counting rules of every engine, the checks, the words)."""
    if isinstance(positive, (tuple, list)):
        return tuple(positive)
    return (positive,)


def check_positive_value(positive: Any) -> Any:
    """One positive value as given, or several as a tuple (a list from JSON or the page; duplicates dropped, the
    order kept); a list of one is that value. An empty list is no value."""
    if not isinstance(positive, (tuple, list)):
        return positive
    values: list[Any] = []
    for value in positive:
        if isinstance(value, (tuple, list, dict, set)):
            raise LuskinError("Each positive value is one value (e.g. Fail), not a list.")
        if isinstance(value, np.generic):
            value = value.item()
        if value_key(value) not in {value_key(v) for v in values}:
            values.append(value)
    if not values:
        return None
    return values[0] if len(values) == 1 else tuple(values)


def positive_words(positive: Any) -> str:
    """The positive value(s) for a sentence: 'Yes', or 'Fail or Withdrawn'."""
    return " or ".join(shown(value_key(v)) for v in positive_values(positive))


def check_positive_given(outcome_type: str, positive: Any, prediction: str | None = None) -> None:
    """A label outcome needs its positive value; a score outcome has none (its cut-off decides)."""
    if outcome_type == "label":
        if positive is None or (isinstance(positive, str) and not positive.strip()) or any(
                v is None or (isinstance(v, str) and not v.strip()) for v in positive_values(positive)):
            raise LuskinError("Choose which value of the outcome counts as positive (e.g. Y, >50K or 1).")
    elif positive is not None and outcome_type == "amount":
        raise LuskinError("An amount has no positive value: its mean and median are compared.")
    elif positive is not None:
        hint = ""
        if prediction is not None:
            hint = (f" The score cut-off cuts the outcome (the truth the predictions are checked against), not the "
                    f"prediction column '{shown(prediction)}': to read the predictions as a score, give a prediction "
                    "cut-off instead.")
        raise LuskinError("A score outcome has no positive value: rows at or above the cut-off count as positive."
                          + hint)


def check_share(value: Any, name: str, example: str, strict: bool = False) -> float:
    """A share between 0 and 1: [0, 1) or, ``strict``, (0, 1]."""
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise LuskinError(f"The {name} must be a number between 0 and 1, not '{shown(value)}'.") from None
    if not (0 < number <= 1 if strict else 0 <= number < 1):
        raise LuskinError(f"The {name} must be between 0 and 1 {example}, not {number:g}.")
    return number


def check_whole(value: Any, name: str, low: int, high: int | None = None) -> int:
    """A whole number from ``low`` (to ``high``)."""
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        number = float("nan")
    if not (np.isfinite(number) and number.is_integer()) or isinstance(value, bool):
        raise LuskinError(f"The {name} must be a whole number, not '{shown(value)}'.")
    if number < low or (high is not None and number > high):
        top = f" and {high}" if high is not None else " or more"
        raise LuskinError(f"The {name} must be {'between ' if high is not None else ''}{low}{top}, not {int(number)}.")
    return int(number)


def check_optional_number(value: Any, name: str) -> float | None:
    """None, or a finite number (``name`` starts the message: "The score cut-off")."""
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise LuskinError(f"{name} must be a number, not '{shown(value)}'.") from None
    if not np.isfinite(number):
        raise LuskinError(f"{name} must be a finite number.")
    return number


def check_metric(value: Any) -> str:
    if value not in METRICS:
        raise LuskinError(f"The metric is 'difference' or 'ratio', not '{shown(value)}'.")
    return str(value)


def check_correction(value: Any) -> str:
    if value not in CORRECTIONS:
        raise LuskinError(f"The correction for many comparisons is 'holm', 'bh' (Benjamini-Hochberg) or 'none', not "
                          f"'{shown(value)}'.")
    return str(value)


def check_outcome_meaning(value: Any) -> str:
    """'favourable' or 'adverse' (American spellings and 'unfavourable' accepted)."""
    text = str(value).strip().lower()
    meaning = _MEANING_SPELLINGS.get(text, text)
    if meaning not in OUTCOME_MEANINGS:
        raise LuskinError(f"The outcome is 'favourable' (good for the person) or 'adverse' (bad for them), not "
                          f"'{shown(value)}'.")
    return meaning


def check_criterion(value: Any) -> str:
    if value not in CRITERIA:
        raise LuskinError("What equal treatment means is 'selection' (equal shares predicted positive), 'opportunity' "
                          "(equal true positive rates), 'odds' (equal true and false positive rates) or 'precision', "
                          f"not '{shown(value)}'.")
    return str(value)


def check_prediction_needed(prediction: str | None, criterion: str, prediction_cutoff: float | None) -> None:
    """A prediction cut-off, and any criterion but 'selection', are about a model's decisions."""
    if prediction is None and (criterion != "selection" or prediction_cutoff is not None):
        what = "A prediction cut-off" if prediction_cutoff is not None else f"The criterion '{criterion}'"
        raise LuskinError(f"{what} needs a prediction column: name the column holding the model's decisions or "
                          "scores.")


def as_items(value: Any) -> tuple[Any, ...]:
    """One item (text, a mapping, a condition) or a list of them, as a tuple."""
    if value is None:
        return ()
    if isinstance(value, (str, dict, Condition)):
        return (value,)
    try:
        return tuple(value)
    except TypeError:
        raise LuskinError(f"Expected a list of conditions, not {shown(repr(value))}.") from None


def check_names(value: Any, role: str) -> tuple[str, ...]:
    """Column names as a tuple of stripped strings (one name may be given as a string), none twice."""
    out = []
    for item in as_items(value):
        if not isinstance(item, str) or not item.strip():
            raise LuskinError(f"Each {role} column must be a column name, not {shown(repr(item))}.")
        out.append(item.strip())
    if len({n.lower() for n in out}) != len(out):
        raise LuskinError(f"A {role} column is named twice: {', '.join(shown(n) for n in out)}.")
    return tuple(out)


def value_key(value: Any) -> str:
    """A value as the key of its name: numbers without a trailing .0 (1.0 and 1 are the same code)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def check_value_names(value: Any) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
    """Names of values per column: {column: {value: name}} or its tuple form, names stripped and non-empty."""
    if not value:
        return ()
    try:
        items = value.items() if isinstance(value, dict) else value
        out = []
        for column, names in items:
            pairs = names.items() if isinstance(names, dict) else names
            kept = tuple((value_key(raw), str(name).strip()) for raw, name in pairs if str(name).strip())
            if kept:
                out.append((str(column), kept))
    except (TypeError, ValueError, AttributeError):
        raise LuskinError("Names of values are given per column, e.g. {\"sex\": {\"1\": \"male\", \"2\": "
                          "\"female\"}}.") from None
    return tuple(out)


def check_unknown_values(value: Any) -> tuple[str, ...]:
    """Values named as "unknown": a tuple of non-empty texts (one may be given as a text), each once."""
    out: list[str] = []
    for item in (value,) if isinstance(value, (int, float)) else as_items(value):
        text = value_key(item) if isinstance(item, (str, int, float, np.generic)) and not isinstance(item, bool) \
            else None
        if not text:
            raise LuskinError(f"A value read as unknown must be a value of the column, not {shown(repr(item))}.")
        if text not in out:
            out.append(text)
    return tuple(out)


def check_bins(value: Any) -> tuple[tuple[str, tuple[float, ...]], ...]:
    """User cut points: {column: [cuts]} or ((column, cuts), ...), cuts sorted and distinct."""
    if not value:
        return ()
    out = []
    try:
        items = value.items() if isinstance(value, dict) else value
        for name, cuts in items:
            numbers = sorted({float(c) for c in (cuts if isinstance(cuts, (list, tuple)) else [cuts])})
            if not numbers or not all(np.isfinite(numbers)):
                raise ValueError
            out.append((str(name), tuple(numbers)))
    except (TypeError, ValueError, OverflowError):
        raise LuskinError("Cut points are given per column as numbers, e.g. {\"age\": [25, 40, 60]}.") from None
    return tuple(out)


def check_groups(protected: Condition | None, group_by: tuple[str, ...]) -> None:
    """Groups are formed one way: a protected condition, or the values of one to three columns."""
    if group_by and protected is not None:
        raise LuskinError("Choose one way to form groups: a protected condition (race == White) or the values of "
                          "columns (race, or race × sex), not both.")
    if not group_by and protected is None:
        raise LuskinError("Choose the protected column and group (e.g. race == White), or group by the values of a "
                          "column.")
    if len(group_by) > MAX_CROSS:
        raise LuskinError(f"Groups may cross at most {MAX_CROSS} columns (e.g. race × sex × age band); "
                          f"{len(group_by)} are chosen.")


def check_estimated(estimated: Any, known: Sequence[str], protected: Condition | None,
                    group_by: tuple[str, ...]) -> str | None:
    """Groups declared as estimated (one of ``known``), formed so alone: not also a protected condition or columns."""
    if estimated is None:
        return None
    text = str(estimated).strip()
    if not text:
        return None
    if text.lower() not in [k.lower() for k in known]:
        raise LuskinError(f"The estimated groups must be {' or '.join(repr(k) for k in known)}, not '{shown(text)}'.")
    if protected is not None or group_by:
        raise LuskinError("Choose one way to form groups: groups estimated from surnames and places, a protected "
                          "condition (race == White) or the values of columns, not more than one.")
    return next(k for k in known if k.lower() == text.lower())


def refuse_estimated(groups: Any) -> None:
    """Groups declared as estimated (a :class:`~luskin_core.spec.audit_spec.GroupSpec`'s ``estimated``) are in no
    column: only the proxy audit estimates and counts them, so any other analysis refuses them in words."""
    estimated = getattr(groups, "estimated", None)
    if estimated is not None:
        raise LuskinError(f"The groups are {estimated}: they are in no column, so only the proxy audit can estimate "
                          "and compare them (the Proxy audit page, or the command line's proxy audit).")


def check_reference_name(reference: str | None, group_name: str, other_name: str) -> None:
    """With a protected condition, the reference is one of its two classes."""
    if reference is not None and reference not in (group_name, other_name):
        raise LuskinError(f"The reference group '{shown(reference)}' must be '{shown(group_name)}' or "
                          f"'{shown(other_name)}'.")


def check_cells(filters: tuple[Condition, ...], strata: tuple[str, ...]) -> None:
    """Cells are formed one way: a filter (and its complement) or strata."""
    if filters and strata:
        raise LuskinError("Choose one way to compare like with like: a filter (and its complement) or strata (every "
                          "value of control columns), not both.")


def check_roles(outcome: str, prediction: str | None, group_columns: Sequence[str],
                filters: Sequence[Condition], strata: Sequence[str]) -> None:
    """Each column plays one role: outcome, prediction, group, filter or stratum."""
    out = outcome.lower()
    groups = [c.lower() for c in group_columns]
    if out in groups:
        raise LuskinError(f"'{shown(outcome)}' is the outcome, so it cannot also form the groups.")
    if prediction is not None and prediction.lower() in groups + [out]:
        raise LuskinError("The prediction column must differ from the outcome and the group columns.")
    for condition in filters:
        if condition.column.lower() in groups:
            raise LuskinError(f"The filter uses the protected column '{shown(condition.column)}'. Filters compare "
                              "like with like on the other (unprotected) columns.")
        if condition.column.lower() == out:
            raise LuskinError(f"The filter uses the outcome column '{shown(condition.column)}' itself.")
    for name in strata:
        if name.lower() in groups:
            raise LuskinError(f"'{shown(name)}' forms the groups, so it cannot also be a stratum.")
        if name.lower() == out:
            raise LuskinError(f"'{shown(name)}' is the outcome, so it cannot also be a stratum.")


def check_group_columns(frame: pd.DataFrame, names: Sequence[Any], *, one_value: bool = False) -> tuple[str, ...]:
    """Columns whose values (or crosses) form the groups, each with at least two values (any number with
    ``one_value``: the Local Law 144 tables say themselves what one value prevents); the frame's spelling."""
    out = []
    for name in names:
        column = check_column(frame, name, "group")
        if not one_value:
            present = distinct_values(frame[column])
            if len(present) < 2:
                only = f" ('{shown(present.iloc[0])}')" if len(present) else ""
                raise LuskinError(f"The group column '{shown(column)}' has only one value{only}, so it does not split the "
                                  "rows into groups. Remove it from the groups or choose another column.")
        out.append(column)
    return tuple(out)


def check_strata_columns(frame: pd.DataFrame, names: Sequence[Any]) -> tuple[str, ...]:
    """Control columns whose values (or bins) form the strata; the frame's spelling."""
    out = []
    for name in names:
        column = check_column(frame, name, "strata")
        if frame[column].notna().sum() == 0:
            raise LuskinError(f"The column '{shown(column)}' has no values at all, so it forms no strata. Remove it "
                              "from the strata.")
        out.append(column)
    return tuple(out)


def check_score_column(frame: pd.DataFrame, name: Any) -> str:
    """A score outcome: a numeric column with at least two values; the frame's spelling."""
    column = check_column(frame, name, "score")
    series = frame[column]
    if not pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
        raise LuskinError(f"The score column '{shown(column)}' does not hold numbers, so it has no cut-off. Choose a "
                          "numeric column, or audit the outcome label instead.")
    if series.nunique(dropna=True) < 2:
        raise LuskinError(f"The score column '{shown(column)}' has a single value, so there is nothing to compare. "
                          "Choose another score column.")
    return column


def check_amount_column(frame: pd.DataFrame, name: Any) -> str:
    """An amount outcome: a numeric column; the frame's spelling. Text that spells amounts ("$1,234.50") is
    named as such, with what to do."""
    column = check_column(frame, name, "amount")
    series = frame[column]
    if not pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
        raise LuskinError(not_an_amount(column, series.dropna().astype(str).head(200).tolist()))
    return column


_CURRENCY = re.compile(r"^\s*[-+(]?\s*[$€£¥₹]?\s*[-+]?\s*[$€£¥₹]?\s*\d[\d,. \u00a0']*\)?\s*(?:[$€£¥₹]|[A-Z]{3})?\s*$")


def not_an_amount(column: str, values: Sequence[str]) -> str:
    """Why a column of text cannot be an amount, in words: currency text ("$1,234.50") said as such."""
    sample = [v for v in values if v.strip()][:200]
    money = [v for v in sample if _CURRENCY.match(v) and not _plain_number(v)]
    if sample and len(money) >= max(1, len(sample) // 2):
        return (f"The amount '{shown(column)}' holds text that spells amounts (e.g. '{shown(money[0])}'): write the "
                "numbers without currency signs or thousands separators (1234.50) and load the file again.")
    example = f" (e.g. '{shown(sample[0])}')" if sample else ""
    return (f"The amount '{shown(column)}' does not hold numbers{example}, so it has no mean or median. Choose a "
            "numeric column (pay, a price, a sentence's length in days).")


def _plain_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def check_spec(spec: AuditSpec, frame: pd.DataFrame, *, one_value_groups: bool = False) -> AuditSpec:
    """The specification against the data: every column exists, and each can play its role.

    The rules that need no data hold when the specification is built (its parts call the checks
    above); this adds the ones that need the rows: the outcome has two values and holds the
    positive value (or is a numeric score), the protected condition splits the rows into two
    classes, each group column has two values, each stratum column has values. Returns the
    specification with every column in the data's own spelling. The page, the command line
    and a library user call this one function, so a mistake reads the same everywhere.
    """
    from dataclasses import replace

    outcome_part, groups, cells = spec.outcome_spec, spec.group_spec, spec.cell_spec
    if outcome_part.outcome_type == "score":
        outcome = check_score_column(frame, outcome_part.outcome)
    elif outcome_part.outcome_type == "amount":
        outcome = check_amount_column(frame, outcome_part.outcome)
    else:
        outcome = check_outcome(frame, outcome_part.outcome, outcome_part.positive)
    prediction = None if outcome_part.prediction is None else check_column(frame, outcome_part.prediction,
                                                                          "prediction")
    protected = groups.protected
    if protected is not None:
        protected = Condition(check_protected(frame, protected, both_classes=True), protected.op, protected.value)
    group_by = check_group_columns(frame, groups.group_by, one_value=one_value_groups)
    strata = check_strata_columns(frame, cells.strata)
    filters = tuple(Condition(check_column(frame, c.column, "filter"), c.op, c.value) for c in cells.filters)
    population = tuple(Condition(check_column(frame, c.column, "population"), c.op, c.value)
                       for c in cells.population)
    for condition in filters + population:
        condition.mask(frame.head(1))  # a comparison that does not fit the column's type says so here
    return spec.with_parts(
        outcome_spec=replace(outcome_part, outcome=outcome, prediction=prediction),
        group_spec=replace(groups, protected=protected, group_by=group_by),
        cell_spec=replace(cells, strata=strata, filters=filters, population=population),
    )


def outcome_mask(series: pd.Series, positive: Any) -> np.ndarray:
    """Where the outcome holds the positive value (any of them, when several), numbers compared as numbers
    (missing: False)."""
    if isinstance(positive, (tuple, list)):
        out = np.zeros(len(series), dtype=bool)
        for value in positive:
            out |= _value_mask(series, value)
        return out
    return _value_mask(series, positive)


def _value_mask(series: pd.Series, positive: Any) -> np.ndarray:
    """Where the outcome equals one positive value."""
    if pd.api.types.is_bool_dtype(series):
        text = str(positive).strip().lower()
        return series.fillna(False).to_numpy(dtype=bool) == (text in ("true", "1", "yes", "y"))
    if pd.api.types.is_numeric_dtype(series):
        try:
            target = float(positive)
        except (TypeError, ValueError):
            raise LuskinError(
                f"The outcome '{shown(series.name)}' holds numbers, so its positive value must be a number, "
                f"not '{shown(positive)}'."
            ) from None
        return series.to_numpy(dtype=float, na_value=np.nan) == target
    return np.asarray(series.astype("string").fillna("").to_numpy(dtype=object) == str(positive), dtype=bool)


def distinct_values(series: pd.Series) -> pd.Series:
    """A column's distinct present values as a Series (most frequent first), named as the column.

    The checks below look at these instead of every row: one hashing pass over the column, so that
    checking a specification stays cheap beside the audit itself on a million rows.
    """
    counts = series.value_counts(dropna=True, sort=True)
    counts = counts[counts > 0]                # a categorical column lists its unused categories too
    return pd.Series(counts.index, name=series.name, dtype=series.dtype)


def _listed(values: pd.Series, limit: int = MAX_LISTED_VALUES) -> str:
    """Distinct values (most frequent first) for a message: as a column's values are listed."""
    shown_values = [shown(v) for v in values.iloc[:limit]]
    more = f" … ({len(values):,} values in all)" if len(values) > limit else ""
    return ", ".join(shown_values) + more


def check_outcome(frame: pd.DataFrame, column: Any, positive: Any) -> str:
    """The outcome column exists, has at least two values, and the positive value occurs in it.

    Returns the column's own spelling. Numbers are compared as numbers (1 and 1.0 are the same).
    """
    name = check_column(frame, column, "outcome")
    present = distinct_values(frame[name])
    if present.empty:
        raise LuskinError(f"The outcome column '{shown(name)}' has no values at all (every row is missing). "
                          "Choose another outcome column.")
    if len(present) < 2:
        raise LuskinError(f"The outcome column '{shown(name)}' has a single value ('{shown(present.iloc[0])}'), "
                          "so there is nothing to compare. Choose another outcome column.")
    if positive is None or (isinstance(positive, str) and not positive.strip()):
        raise LuskinError("Choose which value of the outcome counts as positive (e.g. Y, >50K or 1).")
    for value in positive_values(positive):   # each one: a value never seen is a typo, even beside others
        if not outcome_mask(present, value).any():
            raise never_occurs(value, name, present)
    return name


def check_protected(frame: pd.DataFrame, condition: Condition, *, both_classes: bool = False) -> str:
    """The protected column exists, holds at least two values, and the comparison fits its type;
    with ``both_classes``, the condition also holds for some rows and fails for others.

    Returns the column's own spelling.
    """
    name = check_column(frame, condition.column, "protected")
    present = distinct_values(frame[name])
    if len(present) < 2:
        only = f" ('{shown(present.iloc[0])}')" if len(present) else ""
        raise LuskinError(f"The protected column '{shown(name)}' has only one value{only}, so there are no two "
                          "groups to compare. Choose another protected column.")
    condition.mask(frame.head(1))  # a comparison that does not fit the column's type says so here
    if both_classes:
        _check_both_classes(Condition(name, condition.op, condition.value), present)
    return name


def _check_both_classes(condition: Condition, present: pd.Series) -> None:
    """On the column's distinct values: the condition holds for some and fails for others."""
    held = condition.mask(present.to_frame())
    if not held.any() or held.all():
        raise no_two_classes(condition, present, empty=not held.any())


def check_features(frame: pd.DataFrame, features: Any, outcome: str | None = None) -> tuple[str, ...] | None:
    """Model input columns: None (every column but the outcome) or a list of the data's column names."""
    if features is None:
        return None
    if isinstance(features, (str, bytes)) or not isinstance(features, (list, tuple)):
        raise LuskinError("The model input columns must be a list of column names, "
                          f"not '{shown(features)}'.")
    names = []
    for item in features:
        if not isinstance(item, str):
            raise LuskinError(f"Each model input column must be a column name, not '{shown(item)}'.")
        names.append(check_column(frame, item, "model input"))
    if outcome is not None and any(n.lower() == str(outcome).lower() for n in names):
        raise LuskinError(f"The outcome '{shown(outcome)}' cannot also be a model input column.")
    return tuple(dict.fromkeys(names)) or None


# A number feature beyond this size cannot be standardised: the sum of squares behind the scaler's
# variance overflows to infinity (1e150 squared is 1e300; a billion rows of it still fit in a float).
FEATURE_LIMIT = 1e150


def infinite_counts(frame: pd.DataFrame, columns: Sequence[str], limit: float = FEATURE_LIMIT) -> dict[str, int]:
    """Per numeric column, how many rows hold an infinite number or one beyond ``limit`` in size.

    Infinite: read from 'inf', or too large for a float. Beyond ``FEATURE_LIMIT`` (1e308, say) a model's
    scaling overflows to infinity, so those count too.
    """
    counts = {}
    for name in columns:
        series = frame[name]
        if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
            values = series.to_numpy(dtype=float, na_value=np.nan)
            with np.errstate(invalid="ignore"):
                n = int((np.abs(values) > limit).sum()) if np.isfinite(limit) else int(np.isinf(values).sum())
            if n:
                counts[str(name)] = n
    return counts


def check_finite(frame: pd.DataFrame, columns: Sequence[str], limit: float = FEATURE_LIMIT) -> None:
    """Model input columns must hold finite numbers no larger than ``limit``: a model cannot learn from 'inf'."""
    counts = infinite_counts(frame, columns, limit)
    if counts:
        where = "; ".join(f"'{shown(c)}' in {n:,} row{'s' if n > 1 else ''}" for c, n in counts.items())
        what = ("infinite numbers ('inf', or a number too large to store)" if not np.isfinite(limit) else
                f"infinite numbers or numbers beyond ±{limit:.0e} ('inf', a number too large to store, or one "
                "too large to scale)").replace("e+", "e")
        raise LuskinError(f"A model cannot learn from {what}: "
                          f"{where}. Leave {'that column' if len(counts) == 1 else 'those columns'} out of the "
                          "model inputs, or correct those cells and load the file again.")


def never_occurs(positive: Any, column: Any, values: pd.Series) -> LuskinError:
    """The one message for a positive value the outcome column never holds (usually a typo).

    ``values`` are the column's distinct values, most frequent first (:func:`distinct_values`).
    """
    return LuskinError(f"The value '{shown(positive)}' never occurs in the outcome column '{shown(column)}'. "
                       f"Its values are: {_listed(values)}.")


def check_positive_present(series: pd.Series, positive: Any) -> None:
    """The positive value must occur in the outcome column: when it never does, it is usually a typo."""
    present = distinct_values(series)
    for value in positive_values(positive):
        if not outcome_mask(present, value).any():
            raise never_occurs(value, series.name, present)


def no_two_classes(condition: Condition, values: pd.Series, *, empty: bool) -> LuskinError:
    """The one message for a protected condition that holds for no row (``empty``) or for every row.

    ``values`` are the protected column's distinct values, most frequent first (:func:`distinct_values`).
    """
    name = shown(values.name)
    unknown = unknown_spellings(values.tolist(), condition.values)
    why = "" if not unknown else (
        f" Rows whose '{name}' says it is not known ({_listed(pd.Series(unknown, dtype=object))}) are in neither class.")
    if empty:
        return LuskinError(f"No row has {shown(condition, 200)}, so the protected group is empty. "
                           f"Values of '{name}' include: {_listed(values)}.{why} Choose other values.")
    return LuskinError(f"Every row has {shown(condition, 200)}, so there is no other class to compare with. "
                       f"Values of '{name}' include: {_listed(values)}.{why} Choose fewer values for the group.")


def check_two_classes(values: pd.Series, protected: Condition, group_rows: int, other_rows: int) -> None:
    """Both sides of a protected condition must have rows, or there is nothing to compare (usually a typo).

    ``values`` is the protected column (its values are listed in the message).
    """
    if group_rows > 0 and other_rows > 0:
        return
    raise no_two_classes(protected, distinct_values(values), empty=group_rows == 0)


# ------------------------------------------------------------------------------------------
# Arrays handed to estimators (scores, 0/1 labels, group labels)
# ------------------------------------------------------------------------------------------
def check_groups_argument(groups: Any, sensitive_features: Any) -> Any:
    """The group labels given as ``groups`` or (fairlearn's name) ``sensitive_features``: exactly one."""
    if groups is not None and sensitive_features is not None:
        raise LuskinError("Give the group of each row once: as groups or as sensitive_features, not both.")
    if groups is None and sensitive_features is None:
        raise LuskinError("Give the group of each row (groups=..., or sensitive_features=... as in fairlearn).")
    return groups if groups is not None else sensitive_features


def check_finite_scores(s: np.ndarray) -> np.ndarray:
    """Every score a finite number: the one rule for tuning on scores and for deciding with them.

    A missing score is refused, not decided (``NaN >= t`` is false: the row would silently be a "no").
    """
    if np.isnan(s).any():
        raise LuskinError(
            f"{count_of(int(np.isnan(s).sum()), 'row')} {'has' if int(np.isnan(s).sum()) == 1 else 'have'} no score "
            "(empty or not a number). "
            "Remove those rows or choose a score column without gaps."
        )
    if np.isinf(s).any():
        raise LuskinError("Some scores are infinite; every score must be a finite number.")
    return s


def score_array(scores: Any) -> np.ndarray:
    """One number per row, as floats (not yet checked for being finite)."""
    s = np.asarray(scores)
    if s.ndim != 1:
        raise LuskinError("The scores must be one number per row (a single column).")
    try:
        return s.astype(float)
    except (TypeError, ValueError):
        raise LuskinError("The score column must contain numbers only.") from None


def check_scores_outcomes_groups(scores: Any, y: Any, groups: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Finite scores, 0/1 outcomes with both values, and a group label per row, as numpy arrays."""
    s = score_array(scores)
    yy = np.asarray(y)
    g = np.asarray(groups)
    if not (len(s) == len(yy) == len(g)):
        raise LuskinError(
            "Scores, outcomes and groups must have the same number of rows "
            f"(got {len(s)}, {len(yy)} and {len(g)})."
        )
    if len(s) == 0:
        raise LuskinError("There are no rows to tune thresholds on.")
    check_finite_scores(s)
    yy = check_outcome_01(yy, both=True)
    check_group_labels(g, len(s), action="tuning thresholds")
    return s, yy, g


def check_outcome_01(y: Any, *, both: bool = True) -> np.ndarray:
    """Outcomes coded 0 (negative) and 1 (positive), none missing; with ``both``, each value present."""
    yy = np.asarray(y)
    if pd.isna(yy).any():
        raise LuskinError("Some rows have no outcome. Remove them or choose another outcome.")
    uy = np.unique(yy)
    if not set(uy.tolist()) <= {0, 1}:  # True and False count as 1 and 0
        raise LuskinError("The outcome must be coded 0 (negative) and 1 (positive).")
    if both and len(uy) < 2:
        only = "positive" if uy[0] == 1 else "negative"
        raise LuskinError(
            f"Every row has a {only} outcome, so true and false positive rates cannot be "
            "measured. Choose data with both outcomes."
        )
    return yy.astype(np.int8)


def check_labels_01(y: Any, n_rows: int) -> np.ndarray:
    """One 0/1 label per row, none missing (the labels a relabelling algorithm starts from)."""
    labels = np.asarray(y)
    if labels.shape != (n_rows,):
        raise LuskinError(f"There are {labels.shape[0] if labels.ndim else 0} labels for {n_rows} rows.")
    return check_outcome_01(labels, both=False)


def check_group_labels(groups: Any, n_rows: int, *, action: str) -> np.ndarray:
    """One group label per row and none missing; ``action`` completes "Remove them before ..."."""
    g = np.asarray(groups)
    if g.shape != (n_rows,):
        raise LuskinError(f"There must be one group label per row ({n_rows} rows, {g.size} group labels).")
    if pd.isna(g).any():
        raise LuskinError(f"Some rows have no group label. Remove them before {action}.")
    return g


def check_both_outcomes_per_group(
    y: np.ndarray,
    groups: np.ndarray,
    labels: Sequence[Any],
    *,
    purpose: str,
    positive_need: str,
    negative_need: str,
    remedy: str,
) -> None:
    """At least two groups, each with rows of both outcomes.

    ``purpose`` names what needs two groups ("Thresholds per group"); ``positive_need`` /
    ``negative_need`` say what a group without positives / negatives makes impossible ("its true
    positive rate cannot be measured"); ``remedy`` ends those messages.
    """
    if len(labels) < 2:
        only = shown(labels[0]) if len(labels) else ""
        raise LuskinError(
            f"Every row is in the group '{only}', so there is no other group to compare with "
            f"({purpose} need at least two groups). Check the protected condition."
        )
    for lab in labels:
        m = groups == lab
        rows = int(m.sum())
        npos = int(y[m].sum())
        if rows == 0:
            raise LuskinError(f"The group '{shown(lab)}' has no rows.")
        if npos == 0:
            raise LuskinError(
                f"The group '{shown(lab)}' has no rows with a positive outcome, so {positive_need}. {remedy}"
            )
        if npos == rows:
            raise LuskinError(
                f"The group '{shown(lab)}' has no rows with a negative outcome, so {negative_need}. {remedy}"
            )
