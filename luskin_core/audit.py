"""Controlled-fairness audit (paper section 3, Definition 1).

In each filter cell (filter holds / does not) the outcome ratio of the protected class is
compared with the other class's: with a Wilson 95% interval for each ratio, a significance
test of the gap, and a verdict against the user's tolerance. It runs on the recorded outcome
or on a model's 0/1 predictions for the same rows.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .errors import LuskinError
from .spec import AuditSpec, Prepared, prepare
from .stats import format_p, gap_test, wilson_interval


@dataclass(frozen=True)
class Cell:
    """One protected class inside one filter cell."""

    filter_holds: bool | None
    in_group: bool
    label: str
    cell: str
    n: int
    positives: int
    ratio: float | None
    ci_low: float | None
    ci_high: float | None


@dataclass(frozen=True)
class Gap:
    """The comparison of the two protected classes inside one filter cell.

    ``gap`` is ratio(protected group) - ratio(other class); ``fair`` is |gap| <= tolerance.
    Both are None when a class is empty in this cell ("not computable").
    """

    filter_holds: bool | None
    cell: str
    gap: float | None
    p_value: float | None
    test: str
    fair: bool | None
    significant: bool | None
    sentence: str


@dataclass(frozen=True)
class AuditResult:
    """Everything an audit found, with views for tables, charts, JSON and sentences."""

    spec: AuditSpec
    source: str
    cells: tuple[Cell, ...]
    gaps: tuple[Gap, ...]
    n_rows: int
    n_excluded: int
    excluded_reasons: dict[str, int]

    @property
    def fair(self) -> bool | None:
        """True when every computable cell is within tolerance; None if none is computable."""
        verdicts = [g.fair for g in self.gaps if g.fair is not None]
        return all(verdicts) if verdicts else None

    def cell(self, filter_holds: bool | None, in_group: bool) -> Cell:
        for c in self.cells:
            if c.filter_holds == filter_holds and c.in_group == in_group:
                return c
        raise KeyError((filter_holds, in_group))

    def gap(self, filter_holds: bool | None) -> Gap:
        for g in self.gaps:
            if g.filter_holds == filter_holds:
                return g
        raise KeyError(filter_holds)

    def to_frame(self) -> pd.DataFrame:
        """One row per class per cell: the table view a page shows."""
        rows = []
        for c in self.cells:
            g = self.gap(c.filter_holds)
            rows.append({
                "Filter cell": c.cell, "Group": c.label, "Rows": c.n, "Positive": c.positives,
                "Ratio": c.ratio, "95% CI low": c.ci_low, "95% CI high": c.ci_high,
                "Gap (group - other)": g.gap, "p-value": g.p_value,
                "Within tolerance": g.fair,
            })
        return pd.DataFrame(rows)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "spec": self.spec.to_dict(),
            "n_rows": self.n_rows,
            "n_excluded": self.n_excluded,
            "excluded_reasons": dict(self.excluded_reasons),
            "tolerance": self.spec.tolerance,
            "fair": self.fair,
            "cells": [asdict(c) for c in self.cells],
            "gaps": [asdict(g) for g in self.gaps],
        }

    def sentences(self) -> list[str]:
        return [g.sentence for g in self.gaps]


def _num(x: float) -> float | None:
    return None if x is None or not np.isfinite(x) else float(x)


def audit(
    frame: pd.DataFrame,
    spec: AuditSpec,
    predictions: Sequence[int] | np.ndarray | None = None,
    *,
    source: str | None = None,
) -> AuditResult:
    """Audit the recorded outcome (or ``predictions`` for the same rows) against ``spec``."""
    prepared = prepare(frame, spec, check_positive=predictions is None)
    y = prepared.y
    if predictions is not None:
        y = _check_predictions(predictions, frame, prepared)
    return audit_arrays(y, prepared.in_group, prepared.filter_holds if prepared.has_filter else None,
                        spec, source=source or ("predictions" if predictions is not None else "recorded outcome"),
                        n_excluded=prepared.n_excluded, excluded_reasons=prepared.excluded_reasons)


def _check_predictions(predictions: Any, frame: pd.DataFrame, prepared: Prepared) -> np.ndarray:
    values = np.asarray(predictions)
    if values.shape[0] == len(frame):
        values = values[prepared.kept]
    elif values.shape[0] != len(prepared.frame):
        raise LuskinError(
            f"There are {values.shape[0]} predictions for {len(frame)} rows: give one prediction per row."
        )
    try:
        values = values.astype(float)
    except (TypeError, ValueError):
        raise LuskinError("Predictions must be 0 or 1 (or true/false).") from None
    if np.isnan(values).any() or not np.isin(values, (0.0, 1.0)).all():
        raise LuskinError("Predictions must be 0 or 1 (or true/false), with no missing values.")
    return values.astype(np.int8)


def audit_arrays(
    y: np.ndarray,
    in_group: np.ndarray,
    filter_holds: np.ndarray | None,
    spec: AuditSpec,
    *,
    source: str = "labels",
    n_excluded: int = 0,
    excluded_reasons: dict[str, int] | None = None,
) -> AuditResult:
    """The audit's arithmetic on aligned 0/1 labels, class membership and filter membership."""
    y = np.asarray(y, dtype=np.int64)
    g = np.asarray(in_group, dtype=bool)
    f = np.ones_like(g) if filter_holds is None else np.asarray(filter_holds, dtype=bool)
    # Index 0..3 = (filter holds, in group) as 2*f + g; one pass of bincount counts everything.
    code = 2 * f.astype(np.int64) + g.astype(np.int64)
    n = np.bincount(code, minlength=4)
    k = np.bincount(code, weights=y, minlength=4).astype(np.int64)
    low, high = wilson_interval(k, n)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = k / n
    cell_keys: list[bool | None] = [None] if filter_holds is None else [True, False]
    cells, gaps = [], []
    for fh in cell_keys:
        base = 2 if fh in (None, True) else 0
        name = spec.cell_name(fh)
        for member in (True, False):
            i = base + int(member)
            cells.append(Cell(fh, member, spec.group_name if member else spec.other_name, name,
                              int(n[i]), int(k[i]), _num(ratio[i]), _num(low[i]), _num(high[i])))
        gi, oi = base + 1, base
        p, test = gap_test(int(k[gi]), int(n[gi]), int(k[oi]), int(n[oi]))
        if n[gi] > 0 and n[oi] > 0:
            diff = float(ratio[gi] - ratio[oi])
            fair = bool(abs(diff) <= spec.tolerance + 1e-12)
            significant = bool(p is not None and p < 0.05)
        else:
            diff, fair, significant = None, None, None
        gaps.append(Gap(fh, name, diff, p, test, fair, significant,
                        _sentence(spec, fh, cells[-2], cells[-1], diff, p, fair)))
    return AuditResult(spec, source, tuple(cells), tuple(gaps), int(len(y)), n_excluded,
                       dict(excluded_reasons or {}))


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def _points(x: float) -> str:
    value = 100 * abs(x)
    text = f"{value:.0f}" if value >= 1 or value == 0 else f"{value:.1f}"
    return f"{text} point" + ("" if text == "1" else "s")


def _sentence(spec: AuditSpec, fh: bool | None, group: Cell, other: Cell, diff: float | None,
              p: float | None, fair: bool | None) -> str:
    """The verdict for one cell in one plain sentence a committee can read."""
    where = "Among all rows" if fh is None else f"Where {spec.cell_name(fh)}"
    outcome = f"{spec.outcome} is {spec.positive}"
    if diff is None:
        empty = group.label if group.n == 0 else other.label
        return (f"{where}, there are no {empty} rows, so the two groups cannot be compared here "
                "(not computable).")
    tol = _points(spec.tolerance).replace(" points", "-point").replace(" point", "-point")
    size = "within" if fair else "larger than"
    if p is not None and p < 0.05:
        chance = f"and not due to chance ({format_p(p)})"
    else:
        chance = f"and it could be due to chance ({format_p(p)})"
    return (f"{where}, {outcome} for {_pct(group.ratio)} of {group.label} ({group.positives:,} of {group.n:,}) "
            f"and {_pct(other.ratio)} of {other.label} ({other.positives:,} of {other.n:,}): a gap of "
            f"{_points(diff)}, {size} the {tol} tolerance, {chance}.")
