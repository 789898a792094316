"""One shape for what a correction did: the model before it and after it, counted on held-out rows.

Retraining (:mod:`luskin_core.corrections.retrain`), per-group thresholds (:mod:`luskin_core.corrections.thresholds`) and
the equalized distribution (:mod:`luskin_core.corrections.equalize`) each return their own detailed result;
each of those exposes ``.correction``, a :class:`CorrectionResult`, which is what the cost chart,
the report, the slides and the pages read. It holds:

* the correction's name and its typed options (``options.RetrainOptions``, ``ThresholdOptions``,
  ``EqualizeOptions``: their defaults live there);
* one :class:`CorrectionStage` per model measured: "before" (the uncorrected model: A1, one shared
  threshold, alpha = 1) and "after" (C2, each group's own threshold, every alpha < 1), each with
  its quality measure (AUC or accuracy) and the confusion counts (true/false positives and
  negatives) of every group in every cell on the held-out rows;
* the gap the correction targets (``gap_measure``): the share with a positive decision per cell
  (retraining, controlled fairness) or the true and false positive rates (the other two);
* plain-sentence warnings where the correction backfired.

Every rate is computed from the counts, so two surfaces cannot disagree about a number.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from luskin_core.formatting import format_percent, format_points
from luskin_core.spec.options import EqualizeOptions, RetrainOptions, ThresholdOptions

if TYPE_CHECKING:
    from luskin_core.analyses.audit import AuditResult
    from luskin_core.counting.count_table import CountTable
    from luskin_core.spec.audit_spec import AuditSpec

DECISIONS = "decisions"      # the share with a positive decision, per group and cell (controlled fairness)
ERROR_RATES = "error rates"  # true and false positive rates per group (classification parity)
CorrectionOptions = RetrainOptions | ThresholdOptions | EqualizeOptions


def _rate(k: int, n: int) -> float:
    return k / n if n else math.nan


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


@dataclass(frozen=True)
class GroupCounts:
    """One group's decisions in one cell against the recorded outcome: tp, fp, fn, tn.

    ``cell_key`` is None (all rows), True/False (the filter holds or not); ``cell`` its words.
    """

    group: str
    cell: str
    tp: int
    fp: int
    fn: int
    tn: int
    cell_key: Any = None

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    @property
    def positives(self) -> int:
        """Rows whose recorded outcome is positive."""
        return self.tp + self.fn

    @property
    def negatives(self) -> int:
        return self.fp + self.tn

    @property
    def decided_positive(self) -> int:
        return self.tp + self.fp

    @property
    def selection_rate(self) -> float:
        return _rate(self.decided_positive, self.n)

    @property
    def tpr(self) -> float:
        return _rate(self.tp, self.positives)

    @property
    def fpr(self) -> float:
        return _rate(self.fp, self.negatives)

    @property
    def accuracy(self) -> float:
        return _rate(self.tp + self.tn, self.n)

    def __add__(self, other: GroupCounts) -> GroupCounts:
        return GroupCounts(self.group, self.cell, self.tp + other.tp, self.fp + other.fp, self.fn + other.fn,
                           self.tn + other.tn, self.cell_key)

    def to_dict(self) -> dict[str, Any]:
        return {"group": self.group, "cell": self.cell, "tp": self.tp, "fp": self.fp, "fn": self.fn, "tn": self.tn,
                "n": self.n, "selection_rate": _finite(self.selection_rate), "tpr": _finite(self.tpr),
                "fpr": _finite(self.fpr), "accuracy": _finite(self.accuracy)}


def confusion_counts(y: Any, decisions: Any, groups: Any, cells: Any = None, *,
                     group_order: Sequence[Any] | None = None, cell_order: Sequence[Any] = (None,),
                     group_names: Any = str, cell_names: Any = str) -> tuple[GroupCounts, ...]:
    """Confusion counts of 0/1 ``decisions`` against 0/1 outcomes ``y``, per group (and cell).

    ``groups`` and ``cells`` are row-aligned labels (``cells`` None: one cell, key None); the
    order of the result follows ``group_order`` (default: sorted labels) and ``cell_order``.
    ``group_names`` / ``cell_names`` turn a label or key into its words.
    """
    yy = np.asarray(y).astype(np.int64)
    dd = np.asarray(decisions).astype(np.int64)
    gg = np.asarray(groups)
    cc = None if cells is None else np.asarray(cells)
    order = list(np.unique(gg).tolist()) if group_order is None else list(group_order)
    out = []
    for g in order:
        in_g = gg == g
        for key in cell_order:
            m = in_g if cc is None or key is None else in_g & (cc == key)
            yt, dt = yy[m], dd[m]
            tp = int(np.sum((yt == 1) & (dt == 1)))
            fp = int(np.sum((yt == 0) & (dt == 1)))
            fn = int(np.sum((yt == 1) & (dt == 0)))
            tn = int(np.sum((yt == 0) & (dt == 0)))
            out.append(GroupCounts(str(group_names(g)), str(cell_names(key)), tp, fp, fn, tn, key))
    return tuple(out)


@dataclass(frozen=True)
class CorrectionStage:
    """One model before or after the correction, measured on the held-out rows.

    ``score_name`` is "AUC" (retraining: against the recorded outcomes) or "accuracy"; ``setting``
    the correction's knob at this model (lambda, alpha), if any; ``warnings`` what backfired here.
    """

    stage: str
    label: str
    counts: tuple[GroupCounts, ...]
    score_name: str
    score: float
    setting: float | None = None
    warnings: tuple[str, ...] = ()

    @property
    def groups(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c.group for c in self.counts))

    def by_group(self) -> dict[str, GroupCounts]:
        """Each group's counts over every cell."""
        out: dict[str, GroupCounts] = {}
        for c in self.counts:
            whole = GroupCounts(c.group, "All rows", c.tp, c.fp, c.fn, c.tn)
            out[c.group] = out[c.group] + whole if c.group in out else whole
        return out

    @property
    def n(self) -> int:
        return sum(c.n for c in self.counts)

    @property
    def positives(self) -> int:
        """Rows whose recorded outcome is positive (every row is in one group and one cell)."""
        return sum(c.positives for c in self.counts)

    @property
    def accuracy(self) -> float:
        return _rate(sum(c.tp + c.tn for c in self.counts), self.n)

    def _gap(self, rate: str) -> float:
        values = [getattr(c, rate) for c in self.by_group().values()]
        values = [v for v in values if math.isfinite(v)]
        return max(values) - min(values) if len(values) >= 2 else math.nan

    @property
    def tpr_gap(self) -> float:
        return self._gap("tpr")

    @property
    def fpr_gap(self) -> float:
        return self._gap("fpr")

    def decision_table(self, group_in_protected: tuple[bool, ...] | None = None) -> CountTable:
        """The count table of this model's decisions (what ``count_arrays`` builds from the rows)."""
        from luskin_core.counting.count_table import CountTable

        groups = self.groups
        cells = tuple(dict.fromkeys((c.cell_key, c.cell) for c in self.counts))
        n = np.zeros((len(groups), len(cells)), dtype=np.int64)
        k = np.zeros_like(n)
        arrays = {name: np.zeros_like(n) for name in ("tp", "fp", "fn", "tn")}
        for c in self.counts:
            at = (groups.index(c.group), cells.index((c.cell_key, c.cell)))
            n[at], k[at] = c.n, c.decided_positive
            for name, array in arrays.items():
                array[at] = getattr(c, name)
        return CountTable(groups=groups, cell_keys=tuple(key for key, _ in cells),
                          cell_labels=tuple(label for _, label in cells), n=n, positives=k, excluded={},
                          n_excluded=0, group_in_protected=group_in_protected)

    def to_dict(self) -> dict[str, Any]:
        return {"stage": self.stage, "label": self.label, "score_name": self.score_name,
                "score": _finite(float(self.score)), "setting": self.setting,
                "accuracy": _finite(self.accuracy), "tpr_gap": _finite(self.tpr_gap), "fpr_gap": _finite(self.fpr_gap),
                "counts": [c.to_dict() for c in self.counts], "warnings": list(self.warnings)}


@dataclass(frozen=True)
class CorrectionResult:
    """What one correction did, the same shape for retraining, thresholds and the equalized distribution.

    ``tool`` is "retrain", "thresholds" or "equalized"; ``name`` the correction in words;
    ``options`` its typed options; ``stages`` the models measured ("before" first); ``n_test``
    the held-out rows; ``gap_measure`` :data:`DECISIONS` or :data:`ERROR_RATES`; ``spec`` the
    audit's specification (retraining judges its gaps by it); ``group_in_protected`` which groups
    are the protected class (retraining) or None.
    """

    tool: str
    name: str
    options: CorrectionOptions
    stages: tuple[CorrectionStage, ...]
    n_test: int
    gap_measure: str = ERROR_RATES
    warnings: tuple[str, ...] = ()
    spec: AuditSpec | None = None
    group_in_protected: tuple[bool, ...] | None = None

    @property
    def before(self) -> tuple[CorrectionStage, ...]:
        return tuple(s for s in self.stages if s.stage == "before")

    @property
    def after(self) -> tuple[CorrectionStage, ...]:
        return tuple(s for s in self.stages if s.stage == "after")

    def stage_warnings(self, stage: CorrectionStage) -> tuple[str, ...]:
        """The warnings a stage carries: its own, and (for an "after" stage) the correction's, without repeats."""
        extra = self.warnings if stage.stage == "after" else ()
        return tuple(dict.fromkeys((*stage.warnings, *extra)))

    def audit(self, stage: CorrectionStage) -> AuditResult:
        """The audit of a stage's decisions (the share with a positive decision per group and cell), by ``spec``."""
        from luskin_core.analyses.audit import result_from_counts

        if self.spec is None:
            raise ValueError("this correction carries no specification to judge its decisions by")
        return result_from_counts(stage.decision_table(self.group_in_protected), self.spec,
                                  source=f"{stage.label} on the held-out rows")

    def to_frame(self) -> pd.DataFrame:
        """One row per model, group and cell: the confusion counts and the rates from them."""
        rows = []
        for s in self.stages:
            for c in s.counts:
                rows.append({"Correction": self.name, "Stage": s.stage, "Model": s.label, "Setting": s.setting,
                             "Group": c.group, "Cell": c.cell, "Rows": c.n, "TP": c.tp, "FP": c.fp, "FN": c.fn,
                             "TN": c.tn, "Share decided positive": c.selection_rate, "TPR": c.tpr, "FPR": c.fpr,
                             "Accuracy": c.accuracy})
        return pd.DataFrame(rows)

    def to_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "name": self.name, "options": _options_dict(self.options),
                "gap_measure": self.gap_measure, "n_test": self.n_test,
                "stages": [s.to_dict() for s in self.stages], "warnings": list(self.warnings)}

    def sentences(self) -> list[str]:
        """Each model after the correction against the one before, in words (then the warnings)."""
        out = []
        before = self.before[0] if self.before else None
        for after in self.after:
            where = f"{self.name}, {after.label}"
            if before is None:
                out.append(f"{where}: {after.score_name} {_score(after)} on {self.n_test:,} held-out rows; there is "
                           "no model before the correction to compare with.")
                continue
            text = f"{where}: {after.score_name} {_score(before)} before, {_score(after)} after"
            if self.gap_measure == ERROR_RATES:
                text += (f"; true-positive-rate gap {_points(before.tpr_gap)} → {_points(after.tpr_gap)} points, "
                         f"false-positive-rate gap {_points(before.fpr_gap)} → {_points(after.fpr_gap)} points")
            out.append(text + f" (on {self.n_test:,} held-out rows).")
        return out + list(self.warnings)


def _score(stage: CorrectionStage) -> str:
    return f"{stage.score:.3f}" if stage.score_name == "AUC" else format_percent(stage.score)


def _points(x: float) -> str:
    return format_points(x if math.isfinite(x) else None)


def _options_dict(options: Any) -> dict[str, Any]:
    if hasattr(options, "to_dict"):
        return dict(options.to_dict())
    from dataclasses import asdict

    out = asdict(options)
    return {k: list(v) if isinstance(v, tuple) else v for k, v in out.items()}


__all__ = ["DECISIONS", "ERROR_RATES", "CorrectionResult", "CorrectionStage", "GroupCounts", "confusion_counts"]
