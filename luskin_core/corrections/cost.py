"""The cost of a correction: how much accuracy (or AUC) each correction gives up for how much fairness.

Results in, points and a figure out (no Streamlit), so the report and the dashboard draw the same
chart. Every correction that was computed becomes points on one chart:

* retraining (paper section 3): the first model A1 (trained on the recorded labels) and the
  retrained C2, per pair of models and algorithm. Their fairness is the controlled-fairness gap,
  the largest difference in the share with a positive decision between a group and its
  comparison group inside any cell (the cell the correction did not target included, so a
  correction that moves the gap elsewhere shows it); their quality is the AUC against the
  recorded labels on the held-out rows D4, as the paper reports it.
* per-group thresholds (paper section 4.2): one shared threshold before, each group's own
  threshold after, per lambda;
* the equalized distribution (paper section 4.3): every alpha of the sweep (alpha = 1 is plain
  logistic regression, the uncorrected model).

Every point is computed from the correction's one shape (:class:`luskin_core.corrections.correction.CorrectionResult`,
each tool's ``result.correction``): its confusion counts per group and cell on the held-out rows.
For the last two, fairness is the error-rate gap: the larger of the gap in true positive rates
and the gap in false positive rates between the groups (Fairlearn's equalized-odds difference),
and quality is the accuracy on the held-out test rows.

Intervals (95%): Wilson for an accuracy; Hanley and McNeil (1982) for an AUC, from the numbers of
positive and negative rows; Newcombe's score interval for a gap (folded onto its absolute
value). The paper's default choices are marked: C2 a neural network (MLP) with Algorithm 1 or 2,
lambda = 1, alpha between 0.1 and 0.2.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd

from luskin_core.corrections.correction import DECISIONS, CorrectionResult, CorrectionStage
from luskin_core.formatting import format_percent
from luskin_core.stats.inference import Z95, newcombe_interval, wilson_interval
from luskin_core.stats.verdict import Verdict

CONTROLLED = "controlled"
PARITY = "parity"
FAMILY_TITLES = {
    CONTROLLED: "Retraining: AUC and the gap in decisions",
    PARITY: "Thresholds, equalized: accuracy and error-rate gap",
}
GAP_NAMES = {
    CONTROLLED: "largest gap in the share with a positive decision, in any cell",
    PARITY: "larger of the true-positive-rate and false-positive-rate gaps",
}
DEFAULT_ALPHAS = (0.1, 0.2)
DEFAULT_LAMBDA = 1.0


@dataclass(frozen=True)
class CostPoint:
    """One model (before or after a correction) on the cost chart.

    ``score`` is the AUC or the accuracy (``score_name``) with its 95% interval; ``gap`` the
    remaining gap as a share (0.05 = 5 points), with its interval; ``detail`` says which groups
    and cell the gap is between. ``series`` groups the points of one correction: arrows go from
    its "before" point to its "after" points. ``default`` marks the paper's default choice.
    """

    tool: str
    family: str
    series: str
    correction: str
    label: str
    stage: str
    score_name: str
    score: float
    score_low: float | None
    score_high: float | None
    gap: float | None
    gap_low: float | None
    gap_high: float | None
    detail: str
    n_test: int
    default: bool
    setting: float | None = None
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["warnings"] = list(self.warnings)
        return out


def _num(x: Any) -> float | None:
    if x is None:
        return None
    value = float(x)
    return value if math.isfinite(value) else None


# ------------------------------------------------------------------------------------------
# Intervals
# ------------------------------------------------------------------------------------------
def accuracy_interval(accuracy: float, n: int) -> tuple[float | None, float | None]:
    """Wilson 95% interval for an accuracy measured on ``n`` rows."""
    if n <= 0:
        return None, None
    low, high = wilson_interval(round(accuracy * n), n)
    return _num(low), _num(high)


def auc_interval(auc: float, positives: int, negatives: int) -> tuple[float | None, float | None]:
    """Hanley and McNeil's (1982) 95% interval for an AUC from the numbers of positive and negative rows."""
    if positives <= 0 or negatives <= 0:
        return None, None
    q1 = auc / (2 - auc)
    q2 = 2 * auc * auc / (1 + auc)
    variance = (auc * (1 - auc) + (positives - 1) * (q1 - auc * auc) + (negatives - 1) * (q2 - auc * auc)) \
        / (positives * negatives)
    half = Z95 * math.sqrt(max(variance, 0.0))
    return max(0.0, auc - half), min(1.0, auc + half)


def absolute_gap_interval(k1: int, n1: int, k2: int, n2: int) -> tuple[float | None, float | None]:
    """Newcombe's 95% interval for p1 - p2, folded onto |p1 - p2| (0 when it spans zero)."""
    low, high = (_num(v) for v in newcombe_interval(k1, n1, k2, n2))
    if low is None or high is None:
        return None, None
    if low <= 0 <= high:
        return 0.0, max(-low, high)
    return min(abs(low), abs(high)), max(abs(low), abs(high))


# ------------------------------------------------------------------------------------------
# Points from a correction (``correction.CorrectionResult``, the shape every tool's result exposes)
# ------------------------------------------------------------------------------------------
def _largest_gap(audit: Any) -> tuple[float | None, float | None, float | None, str]:
    """The largest judged |difference| between a group and its reference in any cell, with its interval."""
    judged = [c for c in audit.comparisons if not c.is_reference and c.difference is not None]
    usable = [c for c in judged if c.verdict != Verdict.TOO_FEW]
    if not usable:
        return None, None, None, "no cell holds enough rows of both groups to measure the gap"
    worst = max(usable, key=lambda c: abs(c.difference))
    low, high = absolute_gap_interval(worst.positives, worst.n, worst.reference_positives, worst.reference_n)
    where = "all rows" if worst.cell is None else worst.cell
    return abs(worst.difference), low, high, f"{worst.group} vs {worst.reference}, {where}"


def _error_gap(counts: dict[str, tuple[int, int, int, int]]) -> tuple[float, float | None, float | None, str]:
    """Larger of the TPR and FPR gaps from per-group (tp, positives, fp, negatives), with its interval."""
    best: tuple[float, float | None, float | None, str] | None = None
    for name, hit, total in (("true positive rate", 0, 1), ("false positive rate", 2, 3)):
        rates = {g: c[hit] / c[total] for g, c in counts.items() if c[total] > 0}
        if len(rates) < 2:
            continue
        high_g = max(rates, key=lambda g: rates[g])
        low_g = min(rates, key=lambda g: rates[g])
        gap = rates[high_g] - rates[low_g]
        lo, hi = absolute_gap_interval(counts[high_g][hit], counts[high_g][total], counts[low_g][hit],
                                       counts[low_g][total])
        detail = f"{name}: {high_g} {format_percent(rates[high_g])} vs {low_g} {format_percent(rates[low_g])}"
        if best is None or gap > best[0]:
            best = (gap, lo, hi, detail)
    if best is None:
        return math.nan, None, None, "the error rates could not be measured"
    return best


def _is_default(correction: CorrectionResult, stage: CorrectionStage) -> bool:
    """The paper's default choice: C2 an MLP; lambda 1; alpha 0.1 to 0.2."""
    if stage.stage != "after":
        return False
    if correction.tool == "retrain":
        return getattr(correction.options, "second", None) == "MLP"
    if stage.setting is None:
        return False
    if correction.tool == "thresholds":
        return abs(stage.setting - DEFAULT_LAMBDA) < 1e-12
    return DEFAULT_ALPHAS[0] - 1e-12 <= stage.setting <= DEFAULT_ALPHAS[1] + 1e-12


def correction_points(correction: CorrectionResult, index: int = 1) -> list[CostPoint]:
    """Every model of one correction as a point: its AUC or accuracy and the gap it leaves, from its counts.

    Retraining's gap (``DECISIONS``) is the largest judged gap in the share with a positive decision
    in any cell, judged by the audit's specification; the others' (``ERROR_RATES``) the larger of
    the TPR and FPR gaps between the groups.
    """
    family = CONTROLLED if correction.gap_measure == DECISIONS else PARITY
    series = f"{correction.tool}-{index}"
    points = []
    for stage in correction.stages:
        if family == CONTROLLED:
            gap, low, high, detail = _largest_gap(correction.audit(stage))
        else:
            gap, low, high, detail = _error_gap({g: (c.tp, c.positives, c.fp, c.negatives)
                                                 for g, c in stage.by_group().items()})
        if stage.score_name == "AUC":
            positives = stage.positives
            score_low, score_high = auc_interval(float(stage.score), positives, stage.n - positives)
        else:
            score_low, score_high = accuracy_interval(float(stage.score), int(correction.n_test))
        points.append(CostPoint(
            tool=correction.tool, family=family, series=series, correction=correction.name, label=stage.label,
            stage=stage.stage, score_name=stage.score_name, score=float(stage.score), score_low=score_low,
            score_high=score_high, gap=_num(gap), gap_low=low, gap_high=high, detail=detail,
            n_test=int(correction.n_test), default=_is_default(correction, stage), setting=stage.setting,
            warnings=correction.stage_warnings(stage),
        ))
    return points


def retrain_points(result: Any, index: int = 1) -> list[CostPoint]:
    """A1 (before) and C2 (after) of one retraining result (``retrain.RetrainResult``)."""
    return correction_points(result.correction, index)


def threshold_points(report: Any, index: int = 1) -> list[CostPoint]:
    """One shared threshold (before, when there is one) and each group's own (after) of a ``ThresholdReport``."""
    return correction_points(report.correction, index)


def equalized_points(sweep: Any, index: int = 1) -> list[CostPoint]:
    """Every alpha of an equalized-distribution sweep (``equalize.AlphaSweep``); alpha = 1 is the uncorrected model."""
    return correction_points(sweep.correction, index)


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def corrections_of(value: Any) -> list[CorrectionResult]:
    """The corrections of one result, a sequence of them, or None (each result exposes ``.correction``)."""
    return [item if isinstance(item, CorrectionResult) else item.correction for item in _as_list(value)]


def cost_points(retrain: Any = None, thresholds: Any = None, equalized: Any = None) -> tuple[CostPoint, ...]:
    """Every computed correction's points: each argument is one result (or its ``.correction``), a sequence, or None."""
    points: list[CostPoint] = []
    for value in (retrain, thresholds, equalized):
        for i, correction in enumerate(corrections_of(value), 1):
            points += correction_points(correction, i)
    return tuple(points)


def cost_frame(points: Iterable[CostPoint]) -> pd.DataFrame:
    """One row per point: the correction, the model, its AUC or accuracy and the remaining gap, with intervals."""
    return pd.DataFrame([{
        "Correction": p.correction, "Model": p.label, "Stage": p.stage, "Measure": p.score_name,
        "Value": p.score, "Value CI low": p.score_low, "Value CI high": p.score_high,
        "Gap measured": GAP_NAMES[p.family], "Remaining gap": p.gap, "Gap CI low": p.gap_low,
        "Gap CI high": p.gap_high, "Between": p.detail, "Test rows": p.n_test, "Paper's default": p.default,
        "Warnings": " ".join(p.warnings),
    } for p in points])


__all__ = ["CONTROLLED", "PARITY", "CostPoint", "absolute_gap_interval", "accuracy_interval", "auc_interval",
           "correction_points", "corrections_of", "cost_frame", "cost_points", "equalized_points", "retrain_points",
           "threshold_points"]
