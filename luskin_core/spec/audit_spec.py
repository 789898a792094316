"""One specification of an audit: what the page, the command line and the report all share.

It is made of four typed parts, each a frozen dataclass that checks itself when it is built:

* :class:`OutcomeSpec` -- what is counted: the outcome column with a positive value, or a numeric
  score with a cut-off; optionally a model's prediction column (with its own cut-off) checked
  against that outcome; and whether the counted outcome is good or bad for the person;
* :class:`GroupSpec` -- who is compared: a protected condition vs the rest (the paper's), or every
  value of one to three columns against a reference group; the names of groups and of values;
* :class:`CellSpec` -- within what, and among whom: all rows, a filter and its complement, or
  strata of control columns (with bins for numbers); the population audited at all (COMPAS keeps
  only African-American and Caucasian rows);
* :class:`Judgement` -- how a gap is judged: the metric and its tolerance or impact-ratio
  threshold, what equal treatment means for a model, the correction for many comparisons, the
  smallest group.

:class:`AuditSpec` holds the four and the rules between them (a column plays one role). It is
still built with the flat keyword arguments it always took (``AuditSpec("income", ">50K",
protected="race == White")``) and read flat (``spec.tolerance``), so saved configurations and
every caller keep working; ``spec.judgement`` and the other parts give the typed view. Every
rule and its wording lives in :mod:`luskin_core.spec.validation` (:func:`~luskin_core.spec.validation.check_spec`
adds the ones that need the data). It round-trips through JSON (the flat entries, as before), so
a saved configuration reproduces the same view; files saved before groups and strata existed
still load.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import numpy as np

from luskin_core.errors import LuskinError
from luskin_core.spec import validation as _check
from luskin_core.spec.conditions import Condition, as_condition
from luskin_core.spec.validation import CRITERIA, MAX_CROSS, METRICS, OUTCOME_MEANINGS, OUTCOME_TYPES  # noqa: F401 (re-exported)

if TYPE_CHECKING:
    import pandas as pd
else:  # imported on first use: a file's audit on the command line never needs it
    from luskin_core._lazy import pandas as pd

DEFAULT_TOLERANCE = 0.05
GROUP_MODES = ("condition", "columns")
DEFAULT_MIN_GROUP_SIZE = 30
DEFAULT_RATIO_THRESHOLD = 0.8   # the EEOC four-fifths rule
DEFAULT_BINS = 4                # quantile bins for a numeric column with many values
# The groups a specification may declare as estimated, not read from a column: race and ethnicity estimated from
# each row's surname and place (BISG/BIFSG, luskin_core.analyses.proxy), which only the proxy audit counts.
ESTIMATED_RACE = "race estimated from surname and place"
ESTIMATED_GROUPS: tuple[str, ...] = (ESTIMATED_RACE,)

_set = object.__setattr__


# ------------------------------------------------------------------------------------------
# The direction of the outcome
# ------------------------------------------------------------------------------------------
class Direction(StrEnum):
    """Whether the counted outcome is good for the person ("favourable") or bad ("adverse").

    Decided once, in the specification (``OutcomeSpec.outcome_is``); every analysis reads it from here:
    impact ratios compare favourable shares, the reference is the most favoured group, a selection under
    Local Law 144 is the favourable outcome.
    """

    FAVOURABLE = "favourable"
    ADVERSE = "adverse"

    @property
    def adverse(self) -> bool:
        return self is Direction.ADVERSE

    def favourable_share(self, rate: float) -> float:
        """The share with the favourable outcome, from the share with the counted outcome."""
        return 1.0 - rate if self is Direction.ADVERSE else rate


# ------------------------------------------------------------------------------------------
# The parts
# ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class OutcomeSpec:
    """What is counted.

    ``outcome`` is a column with a ``positive`` value, or (``outcome_type="score"``) a numeric
    score whose share at or above ``score_cutoff`` is compared (without one: the share strictly above the
    median, Local Law 144's scoring rate), or (``outcome_type="amount"``) an amount (pay, a price) whose mean and
    median are compared. With
    ``prediction`` the audited decision is that column (a model's decisions: 0/1, true/false,
    yes/no, or a score with ``prediction_cutoff``) and the outcome is the truth it is checked
    against. ``outcome_is`` says whether the counted outcome is good for the person
    ("favourable": hired, admitted) or bad ("adverse": denied, a default, an arrest).
    """

    outcome: str
    positive: Any = None
    outcome_type: str = "label"
    score_cutoff: float | None = None
    prediction: str | None = None
    prediction_cutoff: float | None = None
    outcome_is: str = "favourable"

    def __post_init__(self) -> None:
        _set(self, "outcome", _check.check_outcome_name(self.outcome))
        _set(self, "outcome_type", _check.check_outcome_type(self.outcome_type))
        if self.prediction is not None:
            _set(self, "prediction", str(self.prediction).strip() or None)
        _set(self, "positive", _check.check_positive_value(self.positive))
        _check.check_positive_given(self.outcome_type, self.positive, self.prediction)
        _set(self, "score_cutoff", _check.check_optional_number(self.score_cutoff, "The score cut-off"))
        _set(self, "prediction_cutoff", _check.check_optional_number(self.prediction_cutoff,
                                                                      "The prediction cut-off"))
        _set(self, "outcome_is", _check.check_outcome_meaning(self.outcome_is))

    @property
    def direction(self) -> Direction:
        """Whether the counted outcome is good or bad for the person, decided once here for every analysis."""
        return Direction(self.outcome_is)

    def to_dict(self) -> dict[str, Any]:
        return {"outcome": self.outcome, "positive": _jsonable(self.positive), "outcome_type": self.outcome_type,
                "score_cutoff": self.score_cutoff, "prediction": self.prediction,
                "prediction_cutoff": self.prediction_cutoff, "outcome_is": self.outcome_is}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> OutcomeSpec:
        return _part_from_dict(cls, data)


@dataclass(frozen=True)
class GroupSpec:
    """Who is compared, and what groups and values are called.

    Either a ``protected`` condition vs the rest (the paper's White vs Non-White; named by
    ``group_label`` and ``other_label``), or each value of a column, or the cross of two or three
    columns (``group_by``), each against a ``reference`` group (default: the group with the highest
    rate overall, as the four-fifths rule does). Missing values form an explicit "Unknown" group.
    ``value_names`` gives codes names people use ({"sex": {"1": "male"}}), shown on every surface.
    ``unknown_values``: values of the group columns that mean the category is not known (a data set's own code,
    such as the Stop, Question and Frisk file's race "U"), read as the common spellings ("Unknown", "Decline to
    self-identify") are: set apart from every verdict, never a reference; a protected condition leaves them out.

    Or ``estimated``: groups declared as estimated, read from no column (:data:`ESTIMATED_GROUPS`: race
    estimated from surname and place, which the proxy audit estimates and judges); the ``reference`` is then one
    of the estimated groups, checked where they are known.
    """

    protected: Condition | None = None
    group_by: tuple[str, ...] = ()
    reference: str | None = None
    group_label: str | None = None
    other_label: str | None = None
    value_names: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    estimated: str | None = None
    unknown_values: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.protected is not None:
            _set(self, "protected", as_condition(self.protected))
        _set(self, "group_by", _check.check_names(self.group_by, "group"))
        _set(self, "unknown_values", _check.check_unknown_values(self.unknown_values))
        _set(self, "value_names", _check.check_value_names(self.value_names))
        if self.reference is not None:
            _set(self, "reference", str(self.reference))
        _set(self, "estimated", _check.check_estimated(self.estimated, ESTIMATED_GROUPS, self.protected,
                                                       self.group_by))
        if self.estimated is not None:
            return
        _check.check_groups(self.protected, self.group_by)
        if not self.group_by:
            _check.check_reference_name(self.reference, self.group_name, self.other_name)

    @property
    def columns(self) -> tuple[str, ...]:
        """The columns that form the groups (the protected condition's one, or ``group_by``; none for estimated
        groups)."""
        if self.estimated is not None:
            return ()
        return self.group_by or (self.protected.column,)  # type: ignore[union-attr]

    def name_of(self, column: str, value: Any) -> str:
        """A value as people call it: its given name (``value_names``), else the value itself."""
        text = _check.value_key(value)
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
        if self.estimated is not None:
            return self.estimated
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

    def to_dict(self) -> dict[str, Any]:
        return {"protected": None if self.protected is None else self.protected.to_dict(),
                "group_label": self.group_label, "other_label": self.other_label, "group_by": list(self.group_by),
                "reference": self.reference,
                "value_names": {name: dict(pairs) for name, pairs in self.value_names},
                **({} if self.estimated is None else {"estimated": self.estimated}),
                # said only when given: a specification without it reads (and hashes) as it always did
                **({"unknown_values": list(self.unknown_values)} if self.unknown_values else {})}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GroupSpec:
        return _part_from_dict(cls, data)


@dataclass(frozen=True)
class CellSpec:
    """Within what the groups are compared, and who is audited at all.

    Cells, one of: all rows; the ``filters`` and their complement (the paper's; named by
    ``filter_label`` and ``not_filter_label``); or ``strata``: every value of one or more control
    columns. A numeric group or strata column with more than 20 distinct values is cut into
    ``n_bins`` quantile bins, or at the user's ``bins``. ``population`` restricts who is audited.
    """

    filters: tuple[Condition, ...] = ()
    filter_label: str | None = None
    not_filter_label: str | None = None
    strata: tuple[str, ...] = ()
    bins: tuple[tuple[str, tuple[float, ...]], ...] = ()
    n_bins: int = DEFAULT_BINS
    population: tuple[Condition, ...] = ()

    def __post_init__(self) -> None:
        _set(self, "filters", tuple(as_condition(c) for c in _check.as_items(self.filters)))
        _set(self, "population", tuple(as_condition(c) for c in _check.as_items(self.population)))
        _set(self, "strata", _check.check_names(self.strata, "strata"))
        _set(self, "bins", _check.check_bins(self.bins))
        _set(self, "n_bins", _check.check_whole(self.n_bins, "number of bins", 2, 20))
        _check.check_cells(self.filters, self.strata)

    @property
    def cell_mode(self) -> str:
        """'none' (one cell), 'filter' (the filter and its complement) or 'strata'."""
        return "strata" if self.strata else ("filter" if self.filters else "none")

    def to_dict(self) -> dict[str, Any]:
        return {"filters": [c.to_dict() for c in self.filters], "population": [c.to_dict() for c in self.population],
                "filter_label": self.filter_label, "not_filter_label": self.not_filter_label,
                "strata": list(self.strata), "bins": {name: list(cuts) for name, cuts in self.bins},
                "n_bins": self.n_bins}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CellSpec:
        return _part_from_dict(cls, data)


@dataclass(frozen=True)
class Judgement:
    """How a gap is judged.

    Against ``tolerance`` (the difference, in shares) or, with ``metric="ratio"``, against
    ``ratio_threshold`` (the impact ratio); with a prediction column, ``criterion`` says which
    rate is judged ("selection": the share predicted positive; "opportunity": TPR; "odds": TPR
    and FPR; "precision"). Groups with fewer than ``min_group_size`` rows in a cell (or under
    ``min_group_share`` of all rows) are shown but not judged; p-values are adjusted with
    ``correction`` over every comparison.
    """

    metric: str = "difference"
    tolerance: float = DEFAULT_TOLERANCE
    ratio_threshold: float = DEFAULT_RATIO_THRESHOLD
    criterion: str = "selection"
    correction: str = "holm"
    min_group_size: int = DEFAULT_MIN_GROUP_SIZE
    min_group_share: float = 0.0

    def __post_init__(self) -> None:
        _set(self, "tolerance", _check.check_share(self.tolerance, "tolerance", "(e.g. 0.05 for 5 points)"))
        _set(self, "ratio_threshold", _check.check_share(self.ratio_threshold, "impact-ratio threshold",
                                                         "(the four-fifths rule uses 0.8)", strict=True))
        _set(self, "min_group_share", _check.check_share(self.min_group_share, "smallest group share",
                                                         "(e.g. 0.02)"))
        _set(self, "min_group_size", _check.check_whole(self.min_group_size, "smallest group size", 1))
        _set(self, "metric", _check.check_metric(self.metric))
        _set(self, "correction", _check.check_correction(self.correction))
        _set(self, "criterion", _check.check_criterion(self.criterion))

    def to_dict(self) -> dict[str, Any]:
        return {"tolerance": self.tolerance, "min_group_size": self.min_group_size,
                "min_group_share": self.min_group_share, "metric": self.metric,
                "ratio_threshold": self.ratio_threshold, "correction": self.correction, "criterion": self.criterion}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Judgement:
        return _part_from_dict(cls, data)


PARTS = {"outcome_spec": OutcomeSpec, "group_spec": GroupSpec, "cell_spec": CellSpec, "judgement": Judgement}
# Each flat setting (a saved file's entry, a keyword of AuditSpec) and the part that holds it.
_OWNER = {f.name: part for part, cls in PARTS.items() for f in fields(cls)}  # type: ignore[arg-type]
# The flat keywords in the order AuditSpec always took them (positional callers rely on the first ones).
FLAT_FIELDS = ("outcome", "positive", "protected", "filters", "population", "tolerance", "group_label",
               "other_label", "filter_label", "not_filter_label", "group_by", "reference", "strata", "bins", "n_bins",
               "min_group_size", "min_group_share", "metric", "ratio_threshold", "correction", "outcome_type",
               "score_cutoff", "prediction", "criterion", "prediction_cutoff", "outcome_is", "value_names",
               "estimated", "unknown_values")
assert set(FLAT_FIELDS) == set(_OWNER), "every flat setting belongs to exactly one part"


def _part_from_dict(cls: Any, data: dict[str, Any]) -> Any:
    """A part from its entries of a saved specification (entries of other parts are ignored; null is the default)."""
    names = {f.name for f in fields(cls)}
    try:
        return cls(**{k: v for k, v in data.items() if k in names and (v is not None or k == "positive")})
    except TypeError as err:
        raise LuskinError(f"The saved audit settings are malformed ({err}).") from None


# ------------------------------------------------------------------------------------------
# The whole specification
# ------------------------------------------------------------------------------------------
@dataclass(frozen=True, init=False)
class AuditSpec:
    """What to audit: an outcome (:class:`OutcomeSpec`), compared between groups (:class:`GroupSpec`),
    inside cells (:class:`CellSpec`), judged so (:class:`Judgement`).

    Built from the flat keywords every caller and saved file uses (each one belongs to one part;
    see the parts for what they mean), or from the parts with :meth:`from_parts`. The flat
    settings read as attributes (``spec.tolerance`` is ``spec.judgement.tolerance``).
    """

    outcome_spec: OutcomeSpec
    group_spec: GroupSpec
    cell_spec: CellSpec
    judgement: Judgement

    def __init__(self, outcome: str | None = None, positive: Any = None, protected: Condition | str | dict[str, Any]
                 | None = None, filters: Any = (), population: Any = (), tolerance: float = DEFAULT_TOLERANCE,
                 group_label: str | None = None, other_label: str | None = None, filter_label: str | None = None,
                 not_filter_label: str | None = None, group_by: Any = (), reference: str | None = None,
                 strata: Any = (), bins: Any = (), n_bins: int = DEFAULT_BINS,
                 min_group_size: int = DEFAULT_MIN_GROUP_SIZE, min_group_share: float = 0.0,
                 metric: str = "difference", ratio_threshold: float = DEFAULT_RATIO_THRESHOLD,
                 correction: str = "holm", outcome_type: str = "label", score_cutoff: float | None = None,
                 prediction: str | None = None, criterion: str = "selection", prediction_cutoff: float | None = None,
                 outcome_is: str = "favourable", value_names: Any = (), estimated: str | None = None,
                 unknown_values: Any = ()) -> None:
        flat = dict(locals())
        flat.pop("self")
        flat.pop("__class__", None)
        parts = {name: cls(**{f.name: flat[f.name] for f in fields(cls)})  # type: ignore[arg-type]
                 for name, cls in PARTS.items()}
        self._join(**parts)

    def _join(self, outcome_spec: OutcomeSpec, group_spec: GroupSpec, cell_spec: CellSpec,
              judgement: Judgement) -> None:
        """Set the parts and check the rules between them."""
        for name, value in (("outcome_spec", outcome_spec), ("group_spec", group_spec), ("cell_spec", cell_spec),
                            ("judgement", judgement)):
            if not isinstance(value, PARTS[name]):
                raise LuskinError(f"The specification's {name.replace('_', ' ')} must be a {PARTS[name].__name__}.")
            _set(self, name, value)
        _check.check_prediction_needed(outcome_spec.prediction, judgement.criterion, outcome_spec.prediction_cutoff)
        _check.check_roles(outcome_spec.outcome, outcome_spec.prediction, group_spec.columns, cell_spec.filters,
                           cell_spec.strata)

    @classmethod
    def from_parts(cls, outcome_spec: OutcomeSpec, group_spec: GroupSpec, cell_spec: CellSpec | None = None,
                   judgement: Judgement | None = None) -> AuditSpec:
        """The specification made of its typed parts (cells: all rows; judgement: the defaults)."""
        spec = cls.__new__(cls)
        spec._join(outcome_spec, group_spec, cell_spec if cell_spec is not None else CellSpec(),
                   judgement if judgement is not None else Judgement())
        return spec

    def with_parts(self, **parts: Any) -> AuditSpec:
        """A copy with some parts replaced (``spec.with_parts(judgement=Judgement(metric="ratio"))``)."""
        unknown = sorted(set(parts) - set(PARTS))
        if unknown:
            raise LuskinError(f"An audit specification has no part named {', '.join(unknown)}.")
        current = {name: getattr(self, name) for name in PARTS}
        return AuditSpec.from_parts(**{**current, **parts})

    def with_changes(self, **changes: Any) -> AuditSpec:
        """A copy with some settings changed: flat names (``tolerance=0.1``) or whole parts (``judgement=...``)."""
        parts = {name: changes.pop(name) for name in list(changes) if name in PARTS}
        unknown = sorted(set(changes) - set(_OWNER))
        if unknown:
            raise LuskinError(f"An audit specification has no setting named {', '.join(unknown)}.")
        by_part: dict[str, dict[str, Any]] = {}
        for key, value in changes.items():
            by_part.setdefault(_OWNER[key], {})[key] = value
        for name, values in by_part.items():
            parts[name] = replace(parts.get(name, getattr(self, name)), **values)
        return self.with_parts(**parts)

    # The flat settings, read from their parts ------------------------------------------------
    @property
    def outcome(self) -> str:
        return self.outcome_spec.outcome

    @property
    def positive(self) -> Any:
        return self.outcome_spec.positive

    @property
    def outcome_type(self) -> str:
        return self.outcome_spec.outcome_type

    @property
    def score_cutoff(self) -> float | None:
        return self.outcome_spec.score_cutoff

    @property
    def prediction(self) -> str | None:
        return self.outcome_spec.prediction

    @property
    def prediction_cutoff(self) -> float | None:
        return self.outcome_spec.prediction_cutoff

    @property
    def outcome_is(self) -> str:
        return self.outcome_spec.outcome_is

    @property
    def direction(self) -> Direction:
        """Favourable or adverse: the one place every analysis reads the outcome's direction from."""
        return self.outcome_spec.direction

    def favourable_share(self, rate: float) -> float:
        """The share with the favourable outcome: ``rate`` itself, or ``1 - rate`` for an adverse outcome."""
        return self.direction.favourable_share(rate)

    @property
    def protected(self) -> Condition | None:
        return self.group_spec.protected

    @property
    def group_by(self) -> tuple[str, ...]:
        return self.group_spec.group_by

    @property
    def unknown_values(self) -> tuple[str, ...]:
        return self.group_spec.unknown_values

    @property
    def reference(self) -> str | None:
        return self.group_spec.reference

    @property
    def group_label(self) -> str | None:
        return self.group_spec.group_label

    @property
    def other_label(self) -> str | None:
        return self.group_spec.other_label

    @property
    def value_names(self) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
        return self.group_spec.value_names

    @property
    def estimated(self) -> str | None:
        """Groups declared as estimated (race from surname and place: the proxy audit's), or None."""
        return self.group_spec.estimated

    @property
    def filters(self) -> tuple[Condition, ...]:
        return self.cell_spec.filters

    @property
    def filter_label(self) -> str | None:
        return self.cell_spec.filter_label

    @property
    def not_filter_label(self) -> str | None:
        return self.cell_spec.not_filter_label

    @property
    def strata(self) -> tuple[str, ...]:
        return self.cell_spec.strata

    @property
    def bins(self) -> tuple[tuple[str, tuple[float, ...]], ...]:
        return self.cell_spec.bins

    @property
    def n_bins(self) -> int:
        return self.cell_spec.n_bins

    @property
    def population(self) -> tuple[Condition, ...]:
        return self.cell_spec.population

    @property
    def metric(self) -> str:
        return self.judgement.metric

    @property
    def tolerance(self) -> float:
        return self.judgement.tolerance

    @property
    def ratio_threshold(self) -> float:
        return self.judgement.ratio_threshold

    @property
    def criterion(self) -> str:
        return self.judgement.criterion

    @property
    def correction(self) -> str:
        return self.judgement.correction

    @property
    def min_group_size(self) -> int:
        return self.judgement.min_group_size

    @property
    def min_group_share(self) -> float:
        return self.judgement.min_group_share

    # Modes -----------------------------------------------------------------------------
    @property
    def group_mode(self) -> str:
        """'condition' (a protected condition vs the rest) or 'columns' (values of columns)."""
        return "columns" if self.group_by else "condition"

    @property
    def cell_mode(self) -> str:
        """'none' (one cell), 'filter' (the filter and its complement) or 'strata'."""
        return self.cell_spec.cell_mode

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
        return self.direction.adverse

    def name_of(self, column: str, value: Any) -> str:
        """A value as people call it: its given name (``value_names``), else the value itself."""
        return self.group_spec.name_of(column, value)

    @property
    def group_name(self) -> str:
        """Name of the class where the protected condition holds (the paper's W)."""
        return self.group_spec.group_name

    @property
    def other_name(self) -> str:
        """Name of the other class (the paper's NW)."""
        return self.group_spec.other_name

    @property
    def groups_text(self) -> str:
        """Who is compared, in words."""
        if self.group_by:
            return "each " + " × ".join(self.group_by) + " group"
        if self.group_spec.estimated is not None:
            return f"each group of {self.group_spec.estimated}"
        return f"{self.group_name} vs {self.other_name}"

    @property
    def outcome_text(self) -> str:
        """The audited outcome in words ('income is >50K', 'score at or above 5')."""
        if self.outcome_type == "score":
            if self.score_cutoff is None:   # strictly above, as Local Law 144's scoring rate (ScoreRule)
                return f"{self.outcome} above the median"
            return f"{self.outcome} at or above {self.score_cutoff:g}"
        if self.outcome_type == "amount":
            return f"the amount {self.outcome}"
        return f"{self.outcome} is {self.positive_name}"

    @property
    def positive_name(self) -> str:
        """The counted value as people call it: its given name, else the value as written (1.0 reads '1')."""
        return " or ".join(self.name_of(self.outcome, _check.value_key(v)) for v in _check.positive_values(self.positive))

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

    # JSON ------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The flat entries of a saved specification (the format files have always had; ``estimated`` and
        ``unknown_values`` only when they are set, so files saved before them are unchanged)."""
        merged = {**self.outcome_spec.to_dict(), **self.group_spec.to_dict(), **self.cell_spec.to_dict(),
                  **self.judgement.to_dict()}
        return {name: merged[name] for name in FLAT_FIELDS if name in merged}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AuditSpec:
        """Read a saved specification; files saved before groups and strata existed still load."""
        if not isinstance(data, dict):
            raise LuskinError("The saved configuration is not a JSON object describing an audit.")
        unknown = sorted(str(k) for k in data if k not in _OWNER)
        if unknown:
            raise LuskinError(f"The saved audit settings hold entries this version does not know: "
                              f"{', '.join(unknown)}.")
        if "outcome" not in data:
            raise LuskinError("The saved configuration lacks its 'outcome' entry.")
        values = {k: v for k, v in data.items() if v is not None or k in ("positive", "protected")}
        if "positive" not in data and data.get("outcome_type", "label") == "label":
            raise LuskinError("The saved configuration lacks its 'positive' entry.")
        if "protected" not in data and not data.get("group_by") and not data.get("estimated"):
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
        except (json.JSONDecodeError, TypeError, ValueError) as err:  # ValueError: an integer of 4,300+ digits
            raise LuskinError(f"The configuration file is not valid JSON ({str(err)[:200]}).") from None
        return cls.from_dict(data)


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple):   # several positive values: a list in JSON, a tuple again when read
        return [_jsonable(v) for v in value]
    return value


def resolve_column(frame: pd.DataFrame, name: str, role: str = "") -> str:
    """The frame's own spelling of a column name (matched without regard to case).

    An unknown name is :func:`luskin_core.spec.validation.check_column`'s error: the closest names, then
    every column.
    """
    if name in frame.columns:
        return name
    return _check.check_column(frame, name, role)

