"""Each model tool's options, typed, with their defaults in one place.

:class:`RetrainOptions` (``luskin retrain``, the Retrain page, :func:`luskin_core.corrections.retrain.retrain`),
:class:`ThresholdOptions` (``luskin thresholds``, the Thresholds page, :func:`~luskin_core.corrections.thresholds.tune_thresholds`)
and :class:`EqualizeOptions` (``luskin equalize``, the Equalized distribution page,
:func:`~luskin_core.corrections.equalize.equalize_frame`): the command line's argument defaults, the pages' first
choices and the functions' keyword defaults are all read from these classes, so the three surfaces
start from the same settings (tests/test_options.py checks the pages and the command line).

This module imports nothing heavy (the checks import their modules when an object is built), so the
command line can read the defaults while it builds its parser without slowing ``luskin --help``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

from luskin_core.errors import LuskinError

RETRAIN_KINDS = ("LR", "MLP")
MODEL_KINDS = ("LR", "MLP", "SVM")
MODEL_NAMES = {"LR": "logistic regression", "MLP": "multi-layer perceptron (neural network)",
               "SVM": "linear support vector machine"}
DIRECTIONS: tuple[str, ...] = ("down", "up")
ALGORITHMS: tuple[int, ...] = (1, 2)
ALGORITHM_NAMES = {1: "selective risk adjustment (Algorithm 1)", 2: "risk-based flipping (Algorithm 2)"}
# The alphas of the equalized-distribution sweep (weight on accuracy; 1 = plain logistic regression).
DEFAULT_ALPHAS = (0.0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.7, 0.9, 1.0)



def check_kind(kind: str) -> str:
    key = str(kind).strip().upper()
    if key not in MODEL_KINDS:
        raise LuskinError(f"Unknown model type '{kind}'. Choose one of: {', '.join(MODEL_KINDS)}.")
    return key


def check_direction(direction: str) -> str:
    key = str(direction).strip().lower()
    if key not in DIRECTIONS:
        raise LuskinError(f"The direction must be 'down' (bring the higher group down) or 'up' (bring the "
                          f"lower group up), not '{direction}'.")
    return key


def check_algorithm(algorithm: Any) -> int:
    """1 or 2, or a plain error."""
    try:
        value = int(str(algorithm).strip())
    except ValueError:
        value = -1
    if value not in ALGORITHMS:
        raise LuskinError(f"The algorithm must be 1 (selective risk adjustment) or 2 (risk-based flipping), "
                          f"not '{algorithm}'.")
    return value


@dataclass(frozen=True)
class RetrainOptions:
    """How to retrain: which algorithm, the two model types, direction, cells, seed, threshold.

    ``features`` None means every column but the outcome (identifier-like text is left out);
    ``exclude`` removes columns from either choice.
    """

    algorithm: int = 2
    first: str = "LR"
    second: str = "MLP"
    direction: str = "down"
    all_cells: bool = False
    seed: int = 0
    threshold: float = 0.5
    features: tuple[str, ...] | None = None
    exclude: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "algorithm", check_algorithm(self.algorithm))
        object.__setattr__(self, "first", _check_retrain_kind(self.first, "first"))
        object.__setattr__(self, "second", _check_retrain_kind(self.second, "second"))
        object.__setattr__(self, "direction", check_direction(self.direction))
        object.__setattr__(self, "all_cells", bool(self.all_cells))
        try:
            seed = int(self.seed)
        except (TypeError, ValueError):
            raise LuskinError(f"The seed must be a whole number, not '{self.seed}'.") from None
        if seed < 0 or seed >= 2**32:
            raise LuskinError(f"The seed must be a whole number from 0 to {2**32 - 1}, not {seed}.")
        object.__setattr__(self, "seed", seed)
        try:
            threshold = float(self.threshold)
        except (TypeError, ValueError, OverflowError):
            raise LuskinError(f"The threshold must be a number between 0 and 1, not '{self.threshold}'.") from None
        if not 0 < threshold < 1:
            raise LuskinError(f"The threshold must be between 0 and 1 (the paper uses 0.5), not {threshold}.")
        object.__setattr__(self, "threshold", threshold)
        if self.features is not None:
            names = (self.features,) if isinstance(self.features, str) else self.features
            object.__setattr__(self, "features", tuple(str(c) for c in names) or None)
        names = (self.exclude,) if isinstance(self.exclude, str) else (self.exclude or ())
        object.__setattr__(self, "exclude", tuple(str(c) for c in names))

    def describe(self) -> str:
        return (f"{ALGORITHM_NAMES[self.algorithm]}, A1 = {self.first}, C2 = {self.second}, direction "
                f"{self.direction}, {'every filter cell' if self.all_cells else 'the filter cell only'}, "
                f"seed {self.seed}")

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["features"] = None if self.features is None else list(self.features)
        data["exclude"] = list(self.exclude)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RetrainOptions:
        if not isinstance(data, Mapping):
            raise LuskinError("The saved retraining options are not a JSON object.")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise LuskinError(f"Unknown retraining option(s): {', '.join(unknown)}.")
        values = dict(data)
        if values.get("features") is not None:
            values["features"] = tuple(values["features"])
        values["exclude"] = tuple(values.get("exclude") or ())
        return cls(**values)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    @classmethod
    def from_json(cls, text: str) -> RetrainOptions:
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, TypeError, ValueError) as err:  # ValueError: an integer of 4,300+ digits
            raise LuskinError(f"The retraining options are not valid JSON ({str(err)[:200]}).") from None
        return cls.from_dict(data)


def _check_retrain_kind(kind: Any, which: str) -> str:
    key = check_kind(kind)
    if key not in RETRAIN_KINDS:
        raise LuskinError(f"The {which} model must be LR (logistic regression) or MLP (neural network) for "
                          f"retraining, not '{kind}': the algorithms need a risk score between 0 and 1.")
    return key


@dataclass(frozen=True)
class ThresholdOptions:
    """The thresholds tool's settings (see the module doc): the model to train (None: a score column), ..."""

    model: str | None = "LR"
    solver: str = "exact"
    lam: float = 1.0
    seed: int = 0
    tuning: str = "validation"
    default_threshold: float | None = None


@dataclass(frozen=True)
class EqualizeOptions:
    """The equalized-distribution tool's settings (see the module doc): the alphas swept, the seed, ..."""

    alphas: tuple[float, ...] = DEFAULT_ALPHAS
    seed: int = 0
    bandwidth: float = 0.02
    solver: str = "lbfgs"
    start: str = "lr"


__all__ = ["DEFAULT_ALPHAS", "RETRAIN_KINDS", "EqualizeOptions", "RetrainOptions", "ThresholdOptions"]
