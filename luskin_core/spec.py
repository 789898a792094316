"""One specification of an audit: what the page, the command line and the report all share.

It names the outcome and its positive value, the protected group, the filter (a conjunction of
conditions on unprotected columns), an optional population restriction (e.g. COMPAS keeps only
African-American and Caucasian rows), the tolerance and the words used for each class and cell.
It round-trips through JSON so that a saved configuration reproduces the same view.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from .conditions import Condition, as_condition, conjunction_known, conjunction_mask
from .errors import LuskinError

DEFAULT_TOLERANCE = 0.05


@dataclass(frozen=True)
class AuditSpec:
    """What to audit: outcome == positive, compared between protected classes in filter cells."""

    outcome: str
    positive: Any
    protected: Condition
    filters: tuple[Condition, ...] = ()
    population: tuple[Condition, ...] = ()
    tolerance: float = DEFAULT_TOLERANCE
    group_label: str | None = None
    other_label: str | None = None
    filter_label: str | None = None
    not_filter_label: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "protected", as_condition(self.protected))
        object.__setattr__(self, "filters", tuple(as_condition(c) for c in self.filters))
        object.__setattr__(self, "population", tuple(as_condition(c) for c in self.population))
        if not str(self.outcome).strip():
            raise LuskinError("Choose the outcome column (the decision or label to audit).")
        if self.positive is None or (isinstance(self.positive, str) and not self.positive.strip()):
            raise LuskinError("Choose which value of the outcome counts as positive (e.g. Y, >50K or 1).")
        try:
            tolerance = float(self.tolerance)
        except (TypeError, ValueError):
            raise LuskinError(f"The tolerance must be a number between 0 and 1, not '{self.tolerance}'.") from None
        if not 0 <= tolerance < 1:
            raise LuskinError(f"The tolerance must be between 0 and 1 (e.g. 0.05 for 5 points), not {tolerance}.")
        object.__setattr__(self, "tolerance", tolerance)
        for condition in self.filters:
            if condition.column.lower() == self.protected.column.lower():
                raise LuskinError(
                    f"The filter uses the protected column '{condition.column}'. Filters compare like "
                    "with like on the other (unprotected) columns."
                )
            if condition.column.lower() == str(self.outcome).lower():
                raise LuskinError(f"The filter uses the outcome column '{condition.column}' itself.")
        if self.protected.column.lower() == str(self.outcome).lower():
            raise LuskinError("The protected column and the outcome column must be different columns.")

    # Words shown on screen -------------------------------------------------------------
    @property
    def group_name(self) -> str:
        """Name of the class where the protected condition holds (the paper's W)."""
        if self.group_label:
            return self.group_label
        c = self.protected
        if c.op == "==":
            return str(c.value)
        if c.op == "in":
            return " or ".join(str(v) for v in c.value)
        return str(c)

    @property
    def other_name(self) -> str:
        """Name of the other class (the paper's NW)."""
        if self.other_label:
            return self.other_label
        c = self.protected
        if c.op == "==":
            return f"Non-{c.value}"
        return f"not ({self.group_name})"

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

    def with_changes(self, **changes: Any) -> "AuditSpec":
        return replace(self, **changes)

    # JSON ------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "positive": _jsonable(self.positive),
            "protected": self.protected.to_dict(),
            "filters": [c.to_dict() for c in self.filters],
            "population": [c.to_dict() for c in self.population],
            "tolerance": self.tolerance,
            "group_label": self.group_label,
            "other_label": self.other_label,
            "filter_label": self.filter_label,
            "not_filter_label": self.not_filter_label,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "AuditSpec":
        if not isinstance(data, dict):
            raise LuskinError("The saved configuration is not a JSON object describing an audit.")
        try:
            return cls(
                outcome=data["outcome"],
                positive=data["positive"],
                protected=data["protected"],
                filters=tuple(data.get("filters") or ()),
                population=tuple(data.get("population") or ()),
                tolerance=data.get("tolerance", DEFAULT_TOLERANCE),
                group_label=data.get("group_label"),
                other_label=data.get("other_label"),
                filter_label=data.get("filter_label"),
                not_filter_label=data.get("not_filter_label"),
            )
        except KeyError as missing:
            raise LuskinError(f"The saved configuration lacks its '{missing.args[0]}' entry.") from None

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    @classmethod
    def from_json(cls, text: str) -> "AuditSpec":
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, TypeError) as err:
            raise LuskinError(f"The configuration file is not valid JSON ({err}).") from None
        return cls.from_dict(data)


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    return value


@dataclass(frozen=True)
class Prepared:
    """The rows an audit or a model sees, with the labels and classes already decided.

    ``frame`` keeps the user's columns (restricted to the population and to rows where the
    outcome, the protected column and the filter columns are known); ``y`` is 1 where the
    outcome equals the positive value; ``in_group`` is the protected condition;
    ``filter_holds`` the filter (all True without a filter); ``kept`` marks, over the user's
    rows, the ones that remain.
    """

    frame: pd.DataFrame
    y: np.ndarray
    in_group: np.ndarray
    filter_holds: np.ndarray
    has_filter: bool
    kept: np.ndarray
    n_excluded: int = 0
    excluded_reasons: dict[str, int] = field(default_factory=dict)


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


def check_positive_present(series: pd.Series, positive: Any) -> None:
    """Raise a plain message when the positive value never occurs (usually a typo)."""
    hits = outcome_mask(series.dropna(), positive)
    if not hits.any():
        values = ", ".join(str(v) for v in series.dropna().unique()[:10])
        raise LuskinError(
            f"The value '{positive}' never occurs in the outcome column '{series.name}'. "
            f"Its values are: {values}."
        )


def prepare(frame: pd.DataFrame, spec: AuditSpec, *, check_positive: bool = True) -> Prepared:
    """Restrict to the population and to decidable rows; compute labels, classes and cells."""
    if frame is None or len(frame) == 0:
        raise LuskinError("The data has no rows.")
    outcome_col = resolve_column(frame, spec.outcome, "outcome")
    keep = conjunction_mask(spec.population, frame) if spec.population else np.ones(len(frame), bool)
    if spec.population and not keep.any():
        raise LuskinError(
            "No row matches the population restriction "
            f"({' and '.join(str(c) for c in spec.population)})."
        )
    reasons: dict[str, int] = {}
    outcome_known = frame[outcome_col].notna().to_numpy()
    protected_known = spec.protected.known(frame)
    filter_known = conjunction_known(spec.filters, frame)
    for name, known in (("outcome missing", outcome_known), ("protected value missing", protected_known),
                        ("filter value missing", filter_known)):
        lost = int((keep & ~known).sum())
        if lost:
            reasons[name] = lost
        keep &= known
    if not keep.any():
        raise LuskinError(
            f"Every row lacks a value in the outcome '{outcome_col}', the protected column "
            f"'{spec.protected.column}' or a filter column, so nothing can be audited."
        )
    rows = frame.loc[keep]
    if check_positive:
        check_positive_present(rows[outcome_col], spec.positive)
    y = outcome_mask(rows[outcome_col], spec.positive).astype(np.int8)
    in_group = spec.protected.mask(rows)
    _check_two_classes(rows, spec, in_group)
    filter_holds = conjunction_mask(spec.filters, rows)
    n_excluded = int(len(frame) - len(rows))
    return Prepared(rows, y, in_group, filter_holds, bool(spec.filters), keep, n_excluded, reasons)


def _check_two_classes(rows: pd.DataFrame, spec: AuditSpec, in_group: np.ndarray) -> None:
    """Both protected classes must have rows, or there is nothing to compare (usually a typo)."""
    if in_group.any() and not in_group.all():
        return
    column = resolve_column(rows, spec.protected.column, "protected")
    values = ", ".join(str(v) for v in rows[column].dropna().unique()[:10])
    if not in_group.any():
        raise LuskinError(f"No row has {spec.protected}, so the protected group is empty. "
                          f"Values of '{column}' include: {values}.")
    raise LuskinError(f"Every row has {spec.protected}, so there is no other class to compare with. "
                      f"Values of '{column}' include: {values}.")


def resolve_column(frame: pd.DataFrame, name: str, role: str = "") -> str:
    """The frame's own spelling of a column name (matched without regard to case)."""
    if name in frame.columns:
        return name
    lowered = {str(c).lower(): c for c in frame.columns}
    if str(name).lower() in lowered:
        return lowered[str(name).lower()]
    shown = ", ".join(str(c) for c in list(frame.columns)[:12])
    role = f"{role} " if role else ""
    raise LuskinError(f"There is no {role}column named '{name}' in the data. Columns are: {shown}.")

