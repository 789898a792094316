"""Synthetic labels for retraining to controlled fairness (paper sections 3.1 and 3.2).

Two pure functions over aligned arrays (one entry per row of D2):

* :func:`selective_risk_adjustment` (Algorithm 1): label the rows with the first model's
  decision (risk >= threshold), then, inside a filter cell, give the adjusted protected class
  exactly ``round(alpha)`` positives: its ``round(alpha)`` highest-risk rows. This is the
  paper's shift of the class's scores by Delta = th' - th.
* :func:`risk_based_flipping` (Algorithm 2): keep the recorded labels and flip only
  ``beta = #positives - round(alpha)`` positives of the adjusted class to negative, the
  lowest-risk ones first (the paper prints ``alpha - #positives``: a sign slip).

``alpha = |adjusted class| * ratio(other class)``: the number of positives the adjusted class
must hold for its ratio to equal the other class's. Direction ``down`` (the paper) adjusts the
class whose ratio is higher; ``up`` adjusts the lower class instead and raises it (Algorithm 1:
its ``round(alpha)`` highest-risk rows become positive; Algorithm 2: its highest-risk negatives
are flipped to positive).

Conventions, fixed so that results are reproducible and explainable:

* ``round`` is round-half-up, computed in integers: ``round(n * k / m) = (2nk + m) // 2m``.
* Ties in risk are broken by row order: among equal risks the earlier row counts as the
  higher one when ranking from the top, and as the lower one when ranking from the bottom.
  (Algorithm 1 is therefore defined by rank, not by comparing shifted scores with the
  threshold, so that the count is exactly ``round(alpha)`` even when scores tie.)
* A cell is left alone, and the record says why, when a class in it has no rows, when the
  two ratios are already equal, or when the gap is within ``tolerance`` (the paper's
  CheckFair). Nothing divides by zero.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np

from luskin_core.errors import LuskinError
from luskin_core.formatting import format_percent
from luskin_core.spec.options import ALGORITHM_NAMES, check_algorithm, check_direction
from luskin_core.spec.validation import check_labels_01
from luskin_core.stats.verdict import Verdict

Direction = Literal["down", "up"]

# Why a cell was or was not relabelled (the ``status`` of a CellAdjustment).
ADJUSTED = "adjusted"
EQUAL = "already equal"
WITHIN_TOLERANCE = Verdict.WITHIN.words
EMPTY_CLASS = "a class has no rows"
NOT_SELECTED = "not selected"


@dataclass(frozen=True)
class CellAdjustment:
    """What happened in one filter cell.

    ``adjusted_in_group`` is the protected condition's value for the class whose labels were
    changed (True: the protected group, False: the other class), None when nothing changed.
    ``alpha`` is the number of positives the adjusted class needs for its ratio to equal the
    reference class's; ``target`` is ``round(alpha)``. ``beta`` (Algorithm 2) is the number of
    flips: positives to negatives going down, negatives to positives going up. ``changed`` is
    the number of labels that differ from the labels before. ``threshold_new`` and ``delta``
    (Algorithm 1) are the paper's th' (the risk of the lowest-ranked row kept positive) and
    Delta = th' - th; None when no row is positive after the adjustment.
    """

    filter_holds: bool | None
    status: str
    adjusted_in_group: bool | None
    n_group: int
    n_other: int
    positives_group_before: int
    positives_other_before: int
    ratio_group_before: float | None
    ratio_other_before: float | None
    alpha: float | None
    target: int | None
    beta: int | None
    changed: int
    threshold_new: float | None
    delta: float | None
    message: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, eq=False)
class RelabelResult:
    """The synthetic labels and a record per filter cell of what was adjusted and why."""

    algorithm: int
    direction: str
    threshold: float | None
    labels_before: np.ndarray
    labels: np.ndarray
    cells: tuple[CellAdjustment, ...]

    @property
    def changed(self) -> np.ndarray:
        """Boolean mask of the rows whose label was changed."""
        return self.labels != self.labels_before

    @property
    def n_changed(self) -> int:
        return int(self.changed.sum())

    def cell(self, filter_holds: bool | None) -> CellAdjustment:
        for c in self.cells:
            if c.filter_holds == filter_holds:
                return c
        raise KeyError(filter_holds)

    def sentences(self) -> list[str]:
        return [c.message for c in self.cells]

    def to_dict(self) -> dict[str, Any]:
        """The record without the label arrays (those go into the synthetic data set)."""
        return {
            "algorithm": self.algorithm,
            "algorithm_name": ALGORITHM_NAMES[self.algorithm],
            "direction": self.direction,
            "threshold": self.threshold,
            "n_rows": len(self.labels),
            "n_changed": self.n_changed,
            "cells": [c.to_dict() for c in self.cells],
        }


# ----------------------------------------------------------------------------------------
# Helpers
# ----------------------------------------------------------------------------------------
def round_half_up_ratio(n: int, k: int, m: int) -> int:
    """round(n * k / m) with halves rounded up, exactly (integers only). Requires m > 0."""
    return (2 * int(n) * int(k) + int(m)) // (2 * int(m))


def initial_labels(risk: np.ndarray, threshold: float = 0.5) -> np.ndarray:
    """The first model's decisions: 1 where risk >= threshold (the paper's InitializeLabels)."""
    return (_check_risk(risk) >= float(threshold)).astype(np.int8)


def _check_risk(risk: Any) -> np.ndarray:
    values = np.asarray(risk, dtype=float)
    if values.ndim != 1:
        raise LuskinError("Risk scores must be one number per row.")
    if not np.isfinite(values).all():
        raise LuskinError("Some risk scores are missing or infinite, so rows cannot be ranked by risk.")
    return values


def _align(risk: Any, in_group: Any, filter_holds: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    r = _check_risk(risk)
    g = np.asarray(in_group, dtype=bool)
    if g.shape != r.shape:
        raise LuskinError(f"The protected-class marks ({g.shape[0]}) and the risk scores ({r.shape[0]}) "
                          "must have one entry per row.")
    f = None
    if filter_holds is not None:
        f = np.asarray(filter_holds, dtype=bool)
        if f.shape != r.shape:
            raise LuskinError(f"The filter marks ({f.shape[0]}) and the risk scores ({r.shape[0]}) must "
                              "have one entry per row.")
    return r, g, f


def _cells(filter_holds: np.ndarray | None, n: int, all_cells: bool) -> list[tuple[bool | None, np.ndarray, bool]]:
    """(cell key, row mask, selected for relabelling) for each filter cell."""
    if filter_holds is None:
        return [(None, np.ones(n, dtype=bool), True)]
    return [(True, filter_holds, True), (False, ~filter_holds, bool(all_cells))]


def top_by_risk(risk: np.ndarray, count: int) -> np.ndarray:
    """Positions (into ``risk``) of the ``count`` highest risks; ties: earlier position first."""
    order = np.argsort(-risk, kind="stable")
    return order[:count]


def bottom_by_risk(risk: np.ndarray, count: int) -> np.ndarray:
    """Positions of the ``count`` lowest risks; ties: earlier position first."""
    order = np.argsort(risk, kind="stable")
    return order[:count]


def _ratio(k: int, n: int) -> float | None:
    return k / n if n else None


def _cell_words(fh: bool | None) -> str:
    return "all rows" if fh is None else ("the cell where the filter holds" if fh else
                                         "the cell where the filter does not hold")


def _class_words(in_group: bool) -> str:
    return "the protected group" if in_group else "the other class"


def _relabel(
    algorithm: int,
    before: np.ndarray,
    risk: np.ndarray,
    in_group: np.ndarray,
    filter_holds: np.ndarray | None,
    *,
    threshold: float | None,
    direction: str,
    all_cells: bool,
    tolerance: float,
) -> RelabelResult:
    direction = check_direction(direction)
    tolerance = float(tolerance)
    if not 0 <= tolerance < 1:
        raise LuskinError(f"The tolerance must be between 0 and 1, not {tolerance}.")
    after = before.copy()
    records = []
    for fh, rows, selected in _cells(filter_holds, len(before), all_cells):
        g_rows = rows & in_group
        o_rows = rows & ~in_group
        n_g, n_o = int(g_rows.sum()), int(o_rows.sum())
        k_g, k_o = int(before[g_rows].sum()), int(before[o_rows].sum())
        r_g, r_o = _ratio(k_g, n_g), _ratio(k_o, n_o)
        base: dict[str, Any] = {"filter_holds": fh, "n_group": n_g, "n_other": n_o, "positives_group_before": k_g,
                    "positives_other_before": k_o, "ratio_group_before": r_g, "ratio_other_before": r_o}
        where = _cell_words(fh)

        def skip(status: str, message: str, base: dict[str, Any] = base) -> CellAdjustment:
            return CellAdjustment(**base, status=status, adjusted_in_group=None, alpha=None, target=None,
                                  beta=None, changed=0, threshold_new=None, delta=None, message=message)

        if not selected:
            records.append(skip(NOT_SELECTED, f"In {where} nothing was relabelled (only the filter cell is "
                                              "relabelled unless every cell is chosen)."))
            continue
        if n_g == 0 or n_o == 0:
            empty = _class_words(n_g == 0)
            records.append(skip(EMPTY_CLASS, f"In {where} {empty} has no rows, so the classes cannot be "
                                             "compared and nothing was relabelled."))
            continue
        # Compare k_g / n_g with k_o / n_o exactly (cross-multiplied integers).
        if k_g * n_o == k_o * n_g:
            records.append(skip(EQUAL, f"In {where} both classes already have the same ratio "
                                       f"({format_percent(r_g)}); nothing was relabelled."))
            continue
        assert r_g is not None and r_o is not None  # both classes have rows here
        if abs(r_g - r_o) <= tolerance + 1e-12:
            records.append(skip(WITHIN_TOLERANCE, f"In {where} the gap ({format_percent(r_g)} vs {format_percent(r_o)}) is "
                                                  f"already within the tolerance of {tolerance:g}; nothing "
                                                  "was relabelled."))
            continue
        group_higher = k_g * n_o > k_o * n_g
        adjusted = group_higher if direction == "down" else not group_higher
        adj_rows, _ref_rows = (g_rows, o_rows) if adjusted else (o_rows, g_rows)
        n_a, k_a = (n_g, k_g) if adjusted else (n_o, k_o)
        n_r, k_r = (n_o, k_o) if adjusted else (n_g, k_g)
        alpha = n_a * k_r / n_r
        target = round_half_up_ratio(n_a, k_r, n_r)
        idx = np.flatnonzero(adj_rows)
        beta: int | None = None
        th_new: float | None = None
        delta: float | None = None
        if algorithm == 1:
            new = np.zeros(len(idx), dtype=np.int8)
            top = top_by_risk(risk[idx], target)
            new[top] = 1
            after[idx] = new
            if target > 0:
                th_new = float(risk[idx][top].min())
                delta = th_new - float(threshold)  # type: ignore[arg-type]
        else:
            labels_a = before[idx]
            if direction == "down":
                beta = k_a - target
                pos = idx[labels_a == 1]
                flip = pos[bottom_by_risk(risk[pos], beta)]
                after[flip] = 0
            else:
                beta = target - k_a
                neg = idx[labels_a == 0]
                flip = neg[top_by_risk(risk[neg], beta)]
                after[flip] = 1
        changed = int((after[idx] != before[idx]).sum())
        adj_words = _class_words(adjusted)
        ref_words = _class_words(not adjusted)
        if algorithm == 1:
            how = (f"its {target:,} highest-risk rows are now positive" +
                   (f" (the paper's shift: th' = {th_new:.4f}, Delta = {delta:+.4f})" if th_new is not None else ""))
        else:
            how = (f"{beta:,} of its positives, the lowest-risk ones, were flipped to negative" if direction == "down"
                   else f"{beta:,} of its negatives, the highest-risk ones, were flipped to positive")
        message = (f"In {where}, {adj_words} ({format_percent(k_a / n_a)} of {n_a:,}) was brought {direction} to the "
                   f"ratio of {ref_words} ({format_percent(k_r / n_r)}): alpha = {alpha:.2f}, so {target:,} positives; "
                   f"{how}; {changed:,} labels changed.")
        records.append(CellAdjustment(**base, status=ADJUSTED, adjusted_in_group=adjusted, alpha=float(alpha),
                                      target=int(target), beta=beta, changed=changed, threshold_new=th_new,
                                      delta=delta, message=message))
    return RelabelResult(algorithm, direction, None if threshold is None else float(threshold),
                         before, after, tuple(records))


# ----------------------------------------------------------------------------------------
# The two algorithms
# ----------------------------------------------------------------------------------------
def selective_risk_adjustment(
    risk: Any,
    in_group: Any,
    filter_holds: Any = None,
    *,
    threshold: float = 0.5,
    direction: str = "down",
    all_cells: bool = False,
    tolerance: float = 0.0,
) -> RelabelResult:
    """Algorithm 1: the first model's labels, with one class's positives set to round(alpha).

    ``risk``: the first model's scores on D2; ``in_group``: the protected condition;
    ``filter_holds``: the filter (None without a filter: all rows are one cell). Only the cell
    where the filter holds is relabelled unless ``all_cells``. In a relabelled cell the adjusted
    class gets exactly round(alpha) positives, its highest-risk rows; every other row keeps
    its label ``risk >= threshold``.
    """
    r, g, f = _align(risk, in_group, filter_holds)
    before = initial_labels(r, threshold)
    return _relabel(1, before, r, g, f, threshold=float(threshold), direction=direction,
                    all_cells=all_cells, tolerance=tolerance)


def risk_based_flipping(
    y: Any,
    risk: Any,
    in_group: Any,
    filter_holds: Any = None,
    *,
    direction: str = "down",
    all_cells: bool = False,
    tolerance: float = 0.0,
) -> RelabelResult:
    """Algorithm 2: the recorded labels ``y``, with the fewest flips that equalise the ratios.

    Going down, the higher class's beta = #positives - round(alpha) lowest-risk positives become
    negative; going up, the lower class's beta = round(alpha) - #positives highest-risk
    negatives become positive. Every other label is kept.
    """
    r, g, f = _align(risk, in_group, filter_holds)
    before = check_labels_01(y, len(r))
    return _relabel(2, before, r, g, f, threshold=None, direction=direction,
                    all_cells=all_cells, tolerance=tolerance)


def relabel(
    algorithm: int,
    y: Any,
    risk: Any,
    in_group: Any,
    filter_holds: Any = None,
    *,
    threshold: float = 0.5,
    direction: str = "down",
    all_cells: bool = False,
    tolerance: float = 0.0,
) -> RelabelResult:
    """Run Algorithm 1 (ignores ``y``) or Algorithm 2 (ignores ``threshold``)."""
    algorithm = check_algorithm(algorithm)
    if algorithm == 1:
        return selective_risk_adjustment(risk, in_group, filter_holds, threshold=threshold,
                                         direction=direction, all_cells=all_cells, tolerance=tolerance)
    return risk_based_flipping(y, risk, in_group, filter_holds, direction=direction,
                               all_cells=all_cells, tolerance=tolerance)
