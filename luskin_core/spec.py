"""One specification of an audit: what the page, the command line and the report all share.

It names the outcome (a label with a positive value, or a numeric score with a cut-off), who is
compared (a protected condition vs the rest, as in the paper, or every value of one to three
columns against a reference group), the cells inside which they are compared (all rows, a
filter and its complement, or strata of control columns), who is audited at all (the
population, e.g. COMPAS keeps only African-American and Caucasian rows), and how a gap is
judged (tolerance or impact-ratio threshold, smallest group, correction for many comparisons).
It round-trips through JSON so that a saved configuration reproduces the same view; files saved
before groups and strata existed still load.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np
import pandas as pd

from .conditions import Condition, as_condition, conjunction_mask
from .errors import LuskinError

DEFAULT_TOLERANCE = 0.05


GROUP_MODES = ("condition", "columns")
METRICS = ("difference", "ratio")
OUTCOME_TYPES = ("label", "score")
# What equal treatment means for a model's decisions (with a prediction column): equal shares
# predicted positive, equal true positive rates (equal opportunity), equal true and false
# positive rates (equalized odds), or equal precision.
CRITERIA = ("selection", "opportunity", "odds", "precision")
OUTCOME_MEANINGS = ("favourable", "adverse")   # is the counted outcome good or bad for the person?
DEFAULT_MIN_GROUP_SIZE = 30
DEFAULT_RATIO_THRESHOLD = 0.8   # the EEOC four-fifths rule
DEFAULT_BINS = 4                # quantile bins for a numeric column with many values
MAX_CROSS = 3                   # groups may cross at most three columns (race x sex x age band)


@dataclass(frozen=True)
class AuditSpec:
    """What to audit: an outcome, compared between groups, inside cells.

    Groups, one of:
      * a protected condition vs the rest (``protected``; the paper's White vs Non-White);
      * each value of a column, or the cross of two or three columns (``group_by``), each
        against a ``reference`` group (default: the group with the highest rate overall, as the
        four-fifths rule does). Missing values form an explicit "Unknown" group.
    Cells, one of: all rows; the ``filters`` and their complement (the paper); or ``strata``:
    every value of one or more control columns. A numeric group or strata column with more
    than 20 distinct values is cut into ``n_bins`` quantile bins, or at the user's ``bins``.
    ``population`` restricts who is audited at all.
    The outcome is a column with a ``positive`` value, or (``outcome_type="score"``) a numeric
    score whose share at or above ``score_cutoff`` (default: the median) is compared. With
    ``prediction`` the audited decision is that column (a model's decisions: 0/1, true/false,
    yes/no, or a score with ``prediction_cutoff``) and the outcome is the truth it is checked
    against (TPR, FPR, FNR, precision per group); ``criterion`` says which of them is judged
    ("selection": the share predicted positive; "opportunity": TPR; "odds": TPR and FPR;
    "precision").
    A comparison is judged against ``tolerance`` (the difference, in shares) or, with
    ``metric="ratio"``, against ``ratio_threshold`` (the impact ratio); groups with fewer than
    ``min_group_size`` rows in a cell (or under ``min_group_share`` of all rows) are shown but
    not judged; p-values are adjusted with ``correction`` over every comparison.
    ``outcome_is`` says whether the counted outcome is good for the person ("favourable": hired,
    admitted) or bad ("adverse": denied, a default, an arrest); the four-fifths rule and the words
    "who is favoured" follow it. ``value_names`` gives codes names people use ({"sex": {"1": "male"}}),
    shown on every surface instead of the codes.
    """

    outcome: str
    positive: Any = None
    protected: Condition | None = None
    filters: tuple[Condition, ...] = ()
    population: tuple[Condition, ...] = ()
    tolerance: float = DEFAULT_TOLERANCE
    group_label: str | None = None
    other_label: str | None = None
    filter_label: str | None = None
    not_filter_label: str | None = None
    group_by: tuple[str, ...] = ()
    reference: str | None = None
    strata: tuple[str, ...] = ()
    bins: tuple[tuple[str, tuple[float, ...]], ...] = ()
    n_bins: int = DEFAULT_BINS
    min_group_size: int = DEFAULT_MIN_GROUP_SIZE
    min_group_share: float = 0.0
    metric: str = "difference"
    ratio_threshold: float = DEFAULT_RATIO_THRESHOLD
    correction: str = "holm"
    outcome_type: str = "label"
    score_cutoff: float | None = None
    prediction: str | None = None
    criterion: str = "selection"
    prediction_cutoff: float | None = None
    outcome_is: str = "favourable"
    value_names: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        if self.protected is not None:
            set_(self, "protected", as_condition(self.protected))
        set_(self, "filters", tuple(as_condition(c) for c in _as_tuple(self.filters)))
        set_(self, "population", tuple(as_condition(c) for c in _as_tuple(self.population)))
        set_(self, "group_by", _names(self.group_by, "group"))
        set_(self, "strata", _names(self.strata, "strata"))
        set_(self, "bins", _bins(self.bins))
        if not isinstance(self.outcome, str) or not self.outcome.strip():
            raise LuskinError("Choose the outcome column (the decision or label to audit).")
        if self.outcome_type not in OUTCOME_TYPES:
            raise LuskinError(f"The outcome is a 'label' (with a positive value) or a 'score', not "
                              f"'{self.outcome_type}'.")
        if self.outcome_type == "label":
            if self.positive is None or (isinstance(self.positive, str) and not self.positive.strip()):
                raise LuskinError("Choose which value of the outcome counts as positive (e.g. Y, >50K or 1).")
        elif self.positive is not None:
            raise LuskinError("A score outcome has no positive value: rows at or above the cut-off count "
                              "as positive.")
        set_(self, "score_cutoff", _opt_number(self.score_cutoff, "The score cut-off"))
        set_(self, "tolerance", _share(self.tolerance, "tolerance", "(e.g. 0.05 for 5 points)"))
        set_(self, "ratio_threshold", _share(self.ratio_threshold, "impact-ratio threshold",
                                             "(the four-fifths rule uses 0.8)", strict=True))
        set_(self, "min_group_share", _share(self.min_group_share, "smallest group share", "(e.g. 0.02)"))
        set_(self, "min_group_size", _whole(self.min_group_size, "smallest group size", 1))
        set_(self, "n_bins", _whole(self.n_bins, "number of bins", 2, 20))
        if self.metric not in METRICS:
            raise LuskinError(f"The metric is 'difference' or 'ratio', not '{self.metric}'.")
        if self.correction not in ("holm", "bh", "none"):
            raise LuskinError(f"The correction for many comparisons is 'holm', 'bh' (Benjamini-Hochberg) or "
                              f"'none', not '{self.correction}'.")
        meaning = {"favorable": "favourable", "unfavourable": "adverse", "unfavorable": "adverse"}.get(
            str(self.outcome_is).strip().lower(), str(self.outcome_is).strip().lower())
        if meaning not in OUTCOME_MEANINGS:
            raise LuskinError(f"The outcome is 'favourable' (good for the person) or 'adverse' (bad for them), not "
                              f"'{self.outcome_is}'.")
        set_(self, "outcome_is", meaning)
        set_(self, "value_names", _value_names(self.value_names))
        if self.reference is not None:
            set_(self, "reference", str(self.reference))
        if self.prediction is not None:
            set_(self, "prediction", str(self.prediction).strip() or None)
        set_(self, "prediction_cutoff", _opt_number(self.prediction_cutoff, "The prediction cut-off"))
        if self.criterion not in CRITERIA:
            raise LuskinError("What equal treatment means is 'selection' (equal shares predicted positive), "
                              "'opportunity' (equal true positive rates), 'odds' (equal true and false positive "
                              f"rates) or 'precision', not '{self.criterion}'.")
        if self.prediction is None and (self.criterion != "selection" or self.prediction_cutoff is not None):
            what = "A prediction cut-off" if self.prediction_cutoff is not None else f"The criterion '{self.criterion}'"
            raise LuskinError(f"{what} needs a prediction column: name the column holding the model's decisions "
                              "or scores.")
        self._check_roles()

    def _check_roles(self) -> None:
        """Each column plays one role: outcome, prediction, group, filter/strata."""
        outcome = self.outcome.lower()
        if self.group_by and self.protected is not None:
            raise LuskinError("Choose one way to form groups: a protected condition (race == White) or the "
                              "values of columns (race, or race x sex), not both.")
        if not self.group_by and self.protected is None:
            raise LuskinError("Choose the protected column and group (e.g. race == White), or group by the "
                              "values of a column.")
        if len(self.group_by) > MAX_CROSS:
            raise LuskinError(f"Groups may cross at most {MAX_CROSS} columns (e.g. race x sex x age band).")
        if self.filters and self.strata:
            raise LuskinError("Choose one way to compare like with like: a filter (and its complement) or "
                              "strata (every value of control columns), not both.")
        group_cols = [c.lower() for c in self.group_by] or [self.protected.column.lower()]  # type: ignore[union-attr]
        if outcome in group_cols:
            raise LuskinError("The protected column and the outcome column must be different columns.")
        if self.prediction is not None and self.prediction.lower() in group_cols + [outcome]:
            raise LuskinError("The prediction column must differ from the outcome and the group columns.")
        for condition in self.filters:
            if condition.column.lower() in group_cols:
                raise LuskinError(
                    f"The filter uses the protected column '{condition.column}'. Filters compare like "
                    "with like on the other (unprotected) columns."
                )
            if condition.column.lower() == outcome:
                raise LuskinError(f"The filter uses the outcome column '{condition.column}' itself.")
        for name in self.strata:
            if name.lower() in group_cols:
                raise LuskinError(f"'{name}' forms the groups, so it cannot also be a stratum.")
            if name.lower() == outcome:
                raise LuskinError(f"'{name}' is the outcome, so it cannot also be a stratum.")
        if self.reference is not None and not self.group_by and \
                self.reference not in (self.group_name, self.other_name):
            raise LuskinError(f"The reference group '{self.reference}' must be '{self.group_name}' or "
                              f"'{self.other_name}'.")

    # Modes -----------------------------------------------------------------------------
    @property
    def group_mode(self) -> str:
        """'condition' (a protected condition vs the rest) or 'columns' (values of columns)."""
        return "columns" if self.group_by else "condition"

    @property
    def cell_mode(self) -> str:
        """'none' (one cell), 'filter' (the filter and its complement) or 'strata'."""
        return "strata" if self.strata else ("filter" if self.filters else "none")

    def cuts_for(self, column: str) -> tuple[float, ...] | None:
        """The user's cut points for a column, if any."""
        for name, cuts in self.bins:
            if name.lower() == column.lower():
                return cuts
        return None

    # Words shown on screen -------------------------------------------------------------
    @property
    def adverse(self) -> bool:
        """True when the counted outcome is bad for the person (a denial, a default, an arrest)."""
        return self.outcome_is == "adverse"

    def name_of(self, column: str, value: Any) -> str:
        """A value as people call it: its given name (``value_names``), else the value itself."""
        text = _value_key(value)
        for name, pairs in self.value_names:
            if name.lower() == str(column).lower():
                for raw, shown in pairs:
                    if raw == text:
                        return shown
        return str(value)

    @property
    def group_name(self) -> str:
        """Name of the class where the protected condition holds (the paper's W)."""
        if self.group_label:
            return self.group_label
        c = self.protected
        if c is None:
            return " × ".join(self.group_by)
        if c.op == "==":
            return self.name_of(c.column, c.value)
        if c.op == "in":
            return " or ".join(self.name_of(c.column, v) for v in c.value)
        return str(c)

    @property
    def other_name(self) -> str:
        """Name of the other class (the paper's NW)."""
        if self.other_label:
            return self.other_label
        c = self.protected
        if c is None:
            return ""
        if c.op == "==":
            shown = self.name_of(c.column, c.value)
            # "Non-Non-White" helps no one: a group already named by a negation is set against everyone else.
            if shown.strip().lower().startswith(("non-", "non ", "not ", "no ")):
                return "everyone else"
            return f"Non-{shown}"
        return f"not ({self.group_name})"

    @property
    def groups_text(self) -> str:
        """Who is compared, in words."""
        if self.group_by:
            return "each " + " × ".join(self.group_by) + " group"
        return f"{self.group_name} vs {self.other_name}"

    @property
    def outcome_text(self) -> str:
        """The audited outcome in words ('income is >50K', 'score at or above 5')."""
        if self.outcome_type == "score":
            cut = "the median" if self.score_cutoff is None else f"{self.score_cutoff:g}"
            return f"{self.outcome} at or above {cut}"
        return f"{self.outcome} is {self.name_of(self.outcome, _value_key(self.positive))}"

    @property
    def meaning_text(self) -> str:
        """Whether the counted outcome is good or bad for the person, in one sentence."""
        if self.adverse:
            return (f"'{self.outcome_text}' is adverse (bad for the person): the group with the lower share is "
                    "favoured, and the four-fifths rule compares the shares without it.")
        return f"'{self.outcome_text}' is favourable (good for the person): the group with the higher share is favoured."

    @property
    def decision_text(self) -> str:
        """What the audited share counts, in words: the outcome, or a model's prediction of it."""
        if self.prediction is not None:
            return f"'{self.prediction}' predicts {self.outcome_text}"
        return self.outcome_text

    @property
    def filter_text(self) -> str:
        return " and ".join(str(c) for c in self.filters)

    @property
    def filter_name(self) -> str:
        """Name of the cell where the filter holds (the paper's E / A)."""
        return self.filter_label or self.filter_text or "All rows"

    @property
    def not_filter_name(self) -> str:
        return self.not_filter_label or (f"not ({self.filter_text})" if self.filters else "")

    def cell_name(self, filter_holds: bool | None) -> str:
        if filter_holds is None:
            return "All rows"
        return self.filter_name if filter_holds else self.not_filter_name

    def with_changes(self, **changes: Any) -> AuditSpec:
        return replace(self, **changes)

    # JSON ------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "positive": _jsonable(self.positive),
            "protected": None if self.protected is None else self.protected.to_dict(),
            "filters": [c.to_dict() for c in self.filters],
            "population": [c.to_dict() for c in self.population],
            "tolerance": self.tolerance,
            "group_label": self.group_label,
            "other_label": self.other_label,
            "filter_label": self.filter_label,
            "not_filter_label": self.not_filter_label,
            "group_by": list(self.group_by),
            "reference": self.reference,
            "strata": list(self.strata),
            "bins": {name: list(cuts) for name, cuts in self.bins},
            "n_bins": self.n_bins,
            "min_group_size": self.min_group_size,
            "min_group_share": self.min_group_share,
            "metric": self.metric,
            "ratio_threshold": self.ratio_threshold,
            "correction": self.correction,
            "outcome_type": self.outcome_type,
            "score_cutoff": self.score_cutoff,
            "prediction": self.prediction,
            "criterion": self.criterion,
            "prediction_cutoff": self.prediction_cutoff,
            "outcome_is": self.outcome_is,
            "value_names": {name: dict(pairs) for name, pairs in self.value_names},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AuditSpec:
        """Read a saved specification; files saved before groups and strata existed still load."""
        if not isinstance(data, dict):
            raise LuskinError("The saved configuration is not a JSON object describing an audit.")
        known = {f.name for f in fields(cls)}
        unknown = sorted(str(k) for k in data if k not in known)
        if unknown:
            raise LuskinError(f"The saved audit settings hold entries this version does not know: "
                              f"{', '.join(unknown)}.")
        if "outcome" not in data:
            raise LuskinError("The saved configuration lacks its 'outcome' entry.")
        values = {k: v for k, v in data.items() if v is not None or k in ("positive", "protected")}
        if "positive" not in data and data.get("outcome_type", "label") == "label":
            raise LuskinError("The saved configuration lacks its 'positive' entry.")
        if "protected" not in data and not data.get("group_by"):
            raise LuskinError("The saved configuration lacks its 'protected' entry.")
        try:
            return cls(**values)
        except TypeError as err:
            raise LuskinError(f"The saved audit settings are malformed ({err}).") from None

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    @classmethod
    def from_json(cls, text: str) -> AuditSpec:
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, TypeError) as err:
            raise LuskinError(f"The configuration file is not valid JSON ({err}).") from None
        return cls.from_dict(data)


def _as_tuple(value: Any) -> tuple[Any, ...]:
    if value is None:
        return ()
    if isinstance(value, (str, dict, Condition)):
        return (value,)
    try:
        return tuple(value)
    except TypeError:
        raise LuskinError(f"Expected a list of conditions, not {value!r}.") from None


def _names(value: Any, role: str) -> tuple[str, ...]:
    """Column names as a tuple of stripped strings (one name may be given as a string)."""
    items = _as_tuple(value)
    out = []
    for item in items:
        if not isinstance(item, str) or not item.strip():
            raise LuskinError(f"Each {role} column must be a column name, not {item!r}.")
        out.append(item.strip())
    if len({n.lower() for n in out}) != len(out):
        raise LuskinError(f"A {role} column is named twice: {', '.join(out)}.")
    return tuple(out)


def _value_key(value: Any) -> str:
    """A value as the key of its name: numbers without a trailing .0 (1.0 and 1 are the same code)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def _value_names(value: Any) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
    """Names of values per column: {column: {value: name}} or its tuple form, names stripped and non-empty."""
    if not value:
        return ()
    try:
        items = value.items() if isinstance(value, dict) else value
        out = []
        for column, names in items:
            pairs = names.items() if isinstance(names, dict) else names
            kept = tuple((_value_key(raw), str(shown).strip()) for raw, shown in pairs if str(shown).strip())
            if kept:
                out.append((str(column), kept))
    except (TypeError, ValueError, AttributeError):
        raise LuskinError("Names of values are given per column, e.g. {\"sex\": {\"1\": \"male\", \"2\": "
                          "\"female\"}}.") from None
    return tuple(out)


def _bins(value: Any) -> tuple[tuple[str, tuple[float, ...]], ...]:
    """User cut points: {column: [cuts]} or ((column, cuts), ...), cuts sorted and distinct."""
    if not value:
        return ()
    items = value.items() if isinstance(value, dict) else value
    out = []
    try:
        for name, cuts in items:
            numbers = sorted({float(c) for c in (cuts if isinstance(cuts, (list, tuple)) else [cuts])})
            if not numbers or not all(np.isfinite(numbers)):
                raise ValueError
            out.append((str(name), tuple(numbers)))
    except (TypeError, ValueError):
        raise LuskinError("Cut points are given per column as numbers, e.g. {\"age\": [25, 40, 60]}.") from None
    return tuple(out)


def _share(value: Any, name: str, example: str, strict: bool = False) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise LuskinError(f"The {name} must be a number between 0 and 1, not '{value}'.") from None
    if not (0 < number <= 1 if strict else 0 <= number < 1):
        raise LuskinError(f"The {name} must be between 0 and 1 {example}, not {number:g}.")
    return number


def _whole(value: Any, name: str, low: int, high: int | None = None) -> int:
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if not (math.isfinite(number) and number.is_integer()) or isinstance(value, bool):
        raise LuskinError(f"The {name} must be a whole number, not '{value}'.")
    if number < low or (high is not None and number > high):
        top = f" and {high}" if high is not None else " or more"
        raise LuskinError(f"The {name} must be {'between ' if high is not None else ''}{low}{top}, not {int(number)}.")
    return int(number)


def _opt_number(value: Any, name: str) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise LuskinError(f"{name} must be a number, not '{value}'.") from None
    if not math.isfinite(number):
        raise LuskinError(f"{name} must be a finite number.")
    return number


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    return value


@dataclass(frozen=True)
class Prepared:
    """The rows an audit or a model sees, with the labels and classes already decided.

    ``frame`` keeps the user's columns (restricted to the population and to rows where the
    outcome, the protected column and the filter columns are known); ``y`` is 1 where the
    outcome equals the positive value (or a score is at or above its cut-off); ``in_group`` is
    the protected condition (None when groups are the values of columns: then ``groups``
    holds each row's group label, as the audit names it); ``filter_holds`` the filter (all
    True without a filter); ``kept`` marks, over the user's rows, the ones that remain.
    """

    frame: pd.DataFrame
    y: np.ndarray
    in_group: np.ndarray | None
    filter_holds: np.ndarray
    has_filter: bool
    kept: np.ndarray
    n_excluded: int = 0
    excluded_reasons: dict[str, int] = field(default_factory=dict)
    groups: np.ndarray | None = None


def outcome_mask(series: pd.Series, positive: Any) -> np.ndarray:
    """Where the outcome equals the positive value, comparing numbers as numbers."""
    if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
        try:
            target = float(positive)
        except (TypeError, ValueError):
            raise LuskinError(
                f"The outcome '{series.name}' holds numbers, so its positive value must be a number, "
                f"not '{positive}'."
            ) from None
        return (series.to_numpy(dtype=float, na_value=np.nan) == target)
    if pd.api.types.is_bool_dtype(series):
        text = str(positive).strip().lower()
        return series.fillna(False).to_numpy(dtype=bool) == (text in ("true", "1", "yes", "y"))
    return series.astype("string").fillna("").to_numpy(dtype=object) == str(positive)


def nothing_to_audit(plan: Any, reasons: dict[str, int]) -> LuskinError:
    """The error when every row lacks a value the audit needs, naming only the columns that lack them.

    ``reasons`` counts the rows left out per reason (:data:`luskin_core.counts.REASONS`; a row is
    counted under the first that applies, so the outcome alone means the outcome is empty).
    """
    from .validation import shown

    if set(reasons) == {"outcome missing"}:
        return LuskinError(f"The outcome column '{shown(plan.outcome)}' has no values at all (every row is missing), "
                           "so nothing can be audited. Choose another outcome column.")
    group = ("the group columns" if plan.protected is None
             else f"the protected column '{shown(plan.protected.column)}'")
    words = {"outcome missing": f"the outcome '{shown(plan.outcome)}'",
             "prediction missing": f"the prediction column '{shown(plan.prediction)}'",
             "protected value missing": group, "filter value missing": "a filter column"}
    named = [words[r] for r in words if r in reasons] or list(words.values())[:1]
    listed = named[0] if len(named) == 1 else ", ".join(named[:-1]) + " or " + named[-1]
    return LuskinError(f"Every row lacks a value in {listed}, so nothing can be audited. Choose other columns, or "
                       "fill in the missing values and load the file again.")


def prepare(frame: pd.DataFrame, spec: AuditSpec, *, check_positive: bool = True,
            allow_groups: bool = False) -> Prepared:
    """Restrict to the population and to decidable rows; compute labels, classes and cells.

    The rows left out, and why, are exactly the audit's (:func:`luskin_core.counts.row_reasons`).
    Groups formed by the values of columns are accepted only by tools that handle many groups
    (``allow_groups``); the others compare a protected group with the rest and say so.
    """
    from .counts import REASONS, outcome_values, plan_for_frame, row_group_labels, row_reasons

    if frame is None or len(frame) == 0:
        raise LuskinError("The data has no rows.")
    if spec.group_mode == "columns" and not allow_groups:
        raise LuskinError(
            "This tool compares a protected group with everyone else (e.g. race == White): choose a protected "
            f"group instead of grouping by {' × '.join(spec.group_by)}."
        )
    plan = plan_for_frame(frame, spec)
    reason = row_reasons(frame, plan)
    keep = reason == 0
    if spec.population and not (reason != 1).any():
        raise LuskinError(
            "No row matches the population restriction "
            f"({' and '.join(str(c) for c in spec.population)})."
        )
    reasons = {REASONS[code]: int((reason == code).sum()) for code in range(2, len(REASONS))
               if (reason == code).any()}
    if not keep.any():
        raise nothing_to_audit(plan, reasons)
    rows = frame.loc[keep]
    if check_positive and spec.outcome_type == "label":
        from .validation import check_positive_present

        check_positive_present(rows[plan.outcome], spec.positive)
    y = outcome_values(rows, plan)[0].astype(np.int8)
    in_group = None
    groups = None
    if plan.protected is not None:
        in_group = plan.protected.mask(rows)
        from .validation import check_two_classes

        assert spec.protected is not None  # the condition mode
        check_two_classes(rows[resolve_column(rows, spec.protected.column, "protected")], spec.protected,
                          int(in_group.sum()), int((~in_group).sum()))
    else:
        groups = row_group_labels(rows, plan)
        if len(set(groups.tolist())) < 2:
            raise LuskinError(f"Every row is in the group '{groups[0]}', so there is no other group to compare "
                              "with.")
    filter_holds = conjunction_mask(plan.filters, rows)
    n_excluded = int(len(frame) - len(rows))
    return Prepared(rows, y, in_group, filter_holds, bool(spec.filters), keep, n_excluded, reasons, groups)


def resolve_column(frame: pd.DataFrame, name: str, role: str = "") -> str:
    """The frame's own spelling of a column name (matched without regard to case).

    An unknown name is :func:`luskin_core.validation.check_column`'s error: the closest names, then
    every column.
    """
    if name in frame.columns:
        return name
    from .validation import check_column

    return check_column(frame, name, role)

