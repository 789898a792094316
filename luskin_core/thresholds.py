"""Per-group decision thresholds for classification parity (paper section 4.2).

One trained score model, one threshold ``t_k`` per group, chosen to maximise

    E_a - lambda * E_f,   E_f = sum_{k != ref} |TPR_ref - TPR_k| + |FPR_ref - FPR_k|

where ``E_a`` is the accuracy over all rows and ``ref`` the *reference group*: the largest group
(ties go to the first label in sorted order) unless the caller names one. A row is predicted
positive when its score is ``>= t``.

Solvers
-------
``exact`` (default)
    The objective only changes where a threshold crosses an observed score, so each group's
    candidates are its distinct scores plus "nobody". Once the reference group's threshold is
    fixed, the objective *separates* over the other groups, and for each of them TPR and FPR only
    fall as its threshold rises: each absolute difference changes sign once, splitting that
    group's candidates into at most three contiguous ranges in which the objective is a fixed
    signed combination of accuracy, TPR and FPR. Prefix maxima, suffix maxima and a sparse table
    (range maximum) give the best candidate of every range, for all reference candidates at once.
    This is the true optimum over all candidate thresholds for any number of groups (not only
    two), in O(n log n) time.
``pso``
    The paper's particle swarm (pyswarms ``GlobalBestPSO``), seeded and reproducible. Its result
    is a feasible set of thresholds, so its objective is never above the exact one.

Reported threshold values
-------------------------
For a candidate "positive iff score >= u_j" the reported threshold is the midpoint between the
group's previous distinct score and ``u_j`` (the widest margin on both sides, which matters for
scores never seen while tuning); "everyone positive" is ``-inf`` and "nobody positive" ``+inf``.
On the tuning rows the midpoint gives exactly the same predictions as ``u_j`` itself.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Iterator, Mapping, Sequence

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from luskin_core.errors import LuskinError

__all__ = [
    "GroupThresholdOptimizer",
    "GroupRates",
    "GroupRoc",
    "ThresholdReport",
    "objective",
    "group_rates",
    "roc_curves",
    "tune_thresholds",
]


# --------------------------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------------------------


def _validate(scores: Any, y: Any, groups: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Check scores, 0/1 labels and group labels; return them as numpy arrays."""
    s = np.asarray(scores)
    if s.ndim != 1:
        raise LuskinError("The scores must be one number per row (a single column).")
    try:
        s = s.astype(float)
    except (TypeError, ValueError):
        raise LuskinError("The score column must contain numbers only.") from None
    yy = np.asarray(y)
    g = np.asarray(groups)
    if not (len(s) == len(yy) == len(g)):
        raise LuskinError(
            "Scores, outcomes and groups must have the same number of rows "
            f"(got {len(s)}, {len(yy)} and {len(g)})."
        )
    if len(s) == 0:
        raise LuskinError("There are no rows to tune thresholds on.")
    if np.isnan(s).any():
        raise LuskinError(
            f"{int(np.isnan(s).sum())} row(s) have no score (empty or not a number). "
            "Remove those rows or choose a score column without gaps."
        )
    if np.isinf(s).any():
        raise LuskinError("Some scores are infinite; every score must be a finite number.")
    if pd.isna(yy).any():
        raise LuskinError("Some rows have no outcome. Remove them or choose another outcome.")
    uy = np.unique(yy)
    if not set(uy.tolist()) <= {0, 1, False, True}:
        raise LuskinError("The outcome must be coded 0 (negative) and 1 (positive).")
    yy = yy.astype(np.int8)
    if len(uy) < 2:
        only = "positive" if uy[0] == 1 else "negative"
        raise LuskinError(
            f"Every row has a {only} outcome, so true and false positive rates cannot be "
            "measured. Choose data with both outcomes."
        )
    if pd.isna(g).any():
        raise LuskinError("Some rows have no group. Remove them before tuning thresholds.")
    return s, yy, g


def _check_groups(y: np.ndarray, g: np.ndarray, labels: Sequence[Any]) -> None:
    """Every group needs at least one positive and one negative row for TPR and FPR."""
    if len(labels) < 2:
        raise LuskinError(
            "Thresholds per group need at least two groups, but every row is in the group "
            f"'{labels[0]}'. Check the protected condition."
        )
    for lab in labels:
        m = g == lab
        npos = int(y[m].sum())
        if m.sum() == 0:
            raise LuskinError(f"The group '{lab}' has no rows.")
        if npos == 0:
            raise LuskinError(
                f"The group '{lab}' has no rows with a positive outcome, so its true positive "
                "rate cannot be measured. Use more data or a different split of the groups."
            )
        if npos == m.sum():
            raise LuskinError(
                f"The group '{lab}' has no rows with a negative outcome, so its false positive "
                "rate cannot be measured. Use more data or a different split of the groups."
            )


# --------------------------------------------------------------------------------------------
# exact solver
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Curve:
    """One group's candidates: ``tp[j]``/``fp[j]`` = counts with score >= u[j] (j = m: nobody)."""

    u: np.ndarray  # distinct scores, ascending (m,)
    tp: np.ndarray  # (m+1,) int64, non-increasing
    fp: np.ndarray  # (m+1,) int64, non-increasing
    P: int
    N: int

    @property
    def correct(self) -> np.ndarray:
        return self.tp + (self.N - self.fp)

    def threshold_value(self, j: int) -> float:
        """The reported threshold of candidate j (see module docstring)."""
        m = len(self.u)
        if j <= 0:
            return float("-inf")
        if j >= m:
            return float("inf")
        lo, hi = float(self.u[j - 1]), float(self.u[j])
        mid = lo + (hi - lo) / 2.0
        return mid if lo < mid <= hi else hi


def _curve(s: np.ndarray, y: np.ndarray) -> _Curve:
    u, inv = np.unique(s, return_inverse=True)
    m = len(u)
    pos = np.bincount(inv, weights=y, minlength=m).astype(np.int64)
    tot = np.bincount(inv, minlength=m).astype(np.int64)
    neg = tot - pos
    tp = np.zeros(m + 1, dtype=np.int64)
    fp = np.zeros(m + 1, dtype=np.int64)
    tp[:m] = np.cumsum(pos[::-1])[::-1]
    fp[:m] = np.cumsum(neg[::-1])[::-1]
    return _Curve(u=u, tp=tp, fp=fp, P=int(pos.sum()), N=int(neg.sum()))


def _sparse_table(f: np.ndarray) -> list[np.ndarray]:
    """Level k holds max(f[p : p + 2**k]) for every valid start p."""
    table = [f]
    k = 1
    while (1 << k) <= len(f):
        prev = table[-1]
        half = 1 << (k - 1)
        table.append(np.maximum(prev[:-half], prev[half:]))
        k += 1
    return table


def _range_max(table: list[np.ndarray], lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """max(f[lo:hi]) for each pair; -inf where the range is empty."""
    out = np.full(lo.shape, -np.inf)
    length = hi - lo
    ok = length > 0
    if not ok.any():
        return out
    k = np.zeros(lo.shape, dtype=np.int64)
    k[ok] = np.floor(np.log2(length[ok])).astype(np.int64)
    # guard against log2 rounding
    k[ok & ((1 << k) > length)] -= 1
    for level in np.unique(k[ok]):
        sel = ok & (k == level)
        t = table[level]
        a = t[lo[sel]]
        b = t[hi[sel] - (1 << level)]
        out[sel] = np.maximum(a, b)
    return out


def _best_other_given_ref(ref: _Curve, other: _Curve, lam: float, n: int) -> np.ndarray:
    """For each reference candidate i: max over j of acc_other(j)/n - lam*(|dTPR| + |dFPR|)."""
    a2 = other.tp / other.P
    b2 = other.fp / other.N
    c2 = other.correct / n
    M = len(a2)
    f_mm = c2 - lam * a2 - lam * b2  # a2 >= a1 and b2 >= b1
    f_pp = c2 + lam * a2 + lam * b2  # a2 <  a1 and b2 <  b1
    f_pm = c2 + lam * a2 - lam * b2  # a2 <  a1 and b2 >= b1
    f_mp = c2 - lam * a2 + lam * b2  # a2 >= a1 and b2 <  b1
    prefix = np.empty(M + 1)
    prefix[0] = -np.inf
    np.maximum.accumulate(f_mm, out=prefix[1:])  # prefix[L] = max f_mm[:L]
    suffix = np.empty(M + 1)
    suffix[M] = -np.inf
    suffix[:M] = np.maximum.accumulate(f_pp[::-1])[::-1]  # suffix[H] = max f_pp[H:]
    # sign changes, in exact integer arithmetic: a2(j) >= a1  <=>  tp2(j)*P1 >= tp1*P2
    ja = np.searchsorted(-(other.tp * ref.P), -(ref.tp * other.P), side="right")
    jb = np.searchsorted(-(other.fp * ref.N), -(ref.fp * other.N), side="right")
    a1 = ref.tp / ref.P
    b1 = ref.fp / ref.N
    lo = np.minimum(ja, jb)
    hi = np.maximum(ja, jb)
    best = np.maximum(prefix[lo] + lam * (a1 + b1), suffix[hi] - lam * (a1 + b1))
    mid = np.full(len(lo), -np.inf)
    sel_pm = ja < jb
    if sel_pm.any():
        mid[sel_pm] = _range_max(_sparse_table(f_pm), ja[sel_pm], jb[sel_pm]) + lam * (
            b1[sel_pm] - a1[sel_pm]
        )
    sel_mp = jb < ja
    if sel_mp.any():
        mid[sel_mp] = _range_max(_sparse_table(f_mp), jb[sel_mp], ja[sel_mp]) + lam * (
            a1[sel_mp] - b1[sel_mp]
        )
    return np.maximum(best, mid)


def _solve_exact(curves: list[_Curve], ref: int, lam: float, n: int) -> tuple[list[int], float]:
    """Exact optimum: candidate index per group and the objective."""
    rc = curves[ref]
    total = rc.correct / n
    for k, c in enumerate(curves):
        if k != ref:
            total = total + _best_other_given_ref(rc, c, lam, n)
    i = int(np.argmax(total))
    a1, b1 = rc.tp[i] / rc.P, rc.fp[i] / rc.N
    idx = [0] * len(curves)
    idx[ref] = i
    for k, c in enumerate(curves):
        if k == ref:
            continue
        val = c.correct / n - lam * (np.abs(a1 - c.tp / c.P) + np.abs(b1 - c.fp / c.N))
        idx[k] = int(np.argmax(val))
    return idx, _objective_from_counts(curves, idx, ref, lam, n)


def _objective_from_counts(
    curves: list[_Curve], idx: Sequence[int], ref: int, lam: float, n: int
) -> float:
    acc = sum(int(c.correct[j]) for c, j in zip(curves, idx)) / n
    rc, i = curves[ref], idx[ref]
    a1, b1 = rc.tp[i] / rc.P, rc.fp[i] / rc.N
    ef = 0.0
    for k, (c, j) in enumerate(zip(curves, idx)):
        if k != ref:
            ef += abs(a1 - c.tp[j] / c.P) + abs(b1 - c.fp[j] / c.N)
    return float(acc - lam * ef)


# --------------------------------------------------------------------------------------------
# PSO solver
# --------------------------------------------------------------------------------------------

_LOG_CFG_TEXT = "version: 1\nincremental: true\nloggers:\n  pyswarms:\n    level: WARNING\n"
_log_cfg_path: str | None = None


@contextlib.contextmanager
def _quiet_pyswarms() -> Iterator[None]:
    """Point pyswarms' reporter at a quiet logging config so it neither adds root handlers nor
    writes ``report.log`` into the working directory; restore the caller's LOG_CFG after."""
    global _log_cfg_path
    if _log_cfg_path is None or not os.path.exists(_log_cfg_path):
        fd, path = tempfile.mkstemp(prefix="luskin_pyswarms_", suffix=".yaml")
        with os.fdopen(fd, "w") as fh:
            fh.write(_LOG_CFG_TEXT)
        _log_cfg_path = path
    old = os.environ.get("LOG_CFG")
    os.environ["LOG_CFG"] = _log_cfg_path
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("LOG_CFG", None)
        else:
            os.environ["LOG_CFG"] = old


def _solve_pso(
    s: np.ndarray,
    y: np.ndarray,
    g: np.ndarray,
    labels: Sequence[Any],
    ref: int,
    lam: float,
    random_state: int | None,
    n_particles: int,
    iters: int,
    options: Mapping[str, float],
) -> np.ndarray:
    """The paper's particle swarm over one threshold per group; returns the best position."""
    with _quiet_pyswarms():
        from pyswarms.single import GlobalBestPSO  # imported lazily: heavy, and logs on import

    n = len(s)
    pos_sorted, neg_sorted, P, N = [], [], [], []
    lo_b, hi_b = [], []
    for lab in labels:
        m = g == lab
        sp = np.sort(s[m & (y == 1)])
        sn = np.sort(s[m & (y == 0)])
        pos_sorted.append(sp)
        neg_sorted.append(sn)
        P.append(len(sp))
        N.append(len(sn))
        lo_b.append(float(s[m].min()))
        hi_b.append(float(s[m].max()))
    lo = np.array(lo_b)
    hi = np.array(hi_b)
    span = np.maximum(hi - lo, 1e-12)
    hi = hi + 1e-6 * span  # lets the swarm reach "nobody positive"
    K = len(labels)

    def cost(x: np.ndarray) -> np.ndarray:
        tpr = np.empty((x.shape[0], K))
        fpr = np.empty((x.shape[0], K))
        correct = np.zeros(x.shape[0])
        for k in range(K):
            tp = P[k] - np.searchsorted(pos_sorted[k], x[:, k], side="left")
            fp = N[k] - np.searchsorted(neg_sorted[k], x[:, k], side="left")
            correct += tp + (N[k] - fp)
            tpr[:, k] = tp / P[k]
            fpr[:, k] = fp / N[k]
        ef = np.zeros(x.shape[0])
        for k in range(K):
            if k != ref:
                ef += np.abs(tpr[:, ref] - tpr[:, k]) + np.abs(fpr[:, ref] - fpr[:, k])
        return -(correct / n - lam * ef)

    state = np.random.get_state()
    try:
        if random_state is not None:
            np.random.seed(random_state)
        with _quiet_pyswarms():
            opt = GlobalBestPSO(
                n_particles=n_particles, dimensions=K, options=dict(options), bounds=(lo, hi)
            )
            _, best = opt.optimize(cost, iters=iters, verbose=False)
    finally:
        np.random.set_state(state)
    return np.asarray(best, dtype=float)


# --------------------------------------------------------------------------------------------
# estimator
# --------------------------------------------------------------------------------------------


class GroupThresholdOptimizer(BaseEstimator):
    """Choose one decision threshold per group to maximise accuracy - lam * (TPR/FPR gaps).

    Parameters
    ----------
    lam : weight of the fairness term (the paper's lambda; 1 in its experiments).
    solver : ``"exact"`` (true optimum, default) or ``"pso"`` (the paper's particle swarm).
    reference : group label whose TPR/FPR the others are compared with; ``None`` = the largest
        group (ties: first label in sorted order).
    random_state : seed for the PSO solver (unused by ``exact``).
    n_particles, iters, pso_options : particle swarm settings; defaults 50 particles, 200
        iterations, c1=0.5, c2=0.3, w=0.9 (the paper does not give its own). The swarm searches
        each group's threshold between its lowest and (just above) its highest score.

    Learned attributes: ``groups_`` (sorted labels), ``reference_``, ``thresholds_`` (label ->
    threshold, predict positive iff score >= threshold), ``objective_`` (on the fitting rows),
    ``fit_seconds_``.
    """

    def __init__(
        self,
        lam: float = 1.0,
        solver: str = "exact",
        reference: Any = None,
        random_state: int | None = None,
        n_particles: int = 50,
        iters: int = 200,
        pso_options: Mapping[str, float] | None = None,
    ) -> None:
        self.lam = lam
        self.solver = solver
        self.reference = reference
        self.random_state = random_state
        self.n_particles = n_particles
        self.iters = iters
        self.pso_options = pso_options

    def fit(self, scores: Any, y: Any, groups: Any) -> "GroupThresholdOptimizer":
        """Find the thresholds on these rows (scores, 0/1 outcomes, group labels)."""
        if self.solver not in ("exact", "pso"):
            raise LuskinError(f"Unknown solver '{self.solver}': choose 'exact' or 'pso'.")
        lam = float(self.lam)
        if not np.isfinite(lam) or lam < 0:
            raise LuskinError("The fairness weight lambda must be a number of 0 or more.")
        s, yy, g = _validate(scores, y, groups)
        labels = np.unique(g).tolist()
        _check_groups(yy, g, labels)
        if self.reference is None:
            sizes = [int((g == lab).sum()) for lab in labels]
            ref = int(np.argmax(sizes))
        else:
            if self.reference not in labels:
                raise LuskinError(f"The reference group '{self.reference}' is not in the data.")
            ref = labels.index(self.reference)
        t0 = time.perf_counter()
        curves = [_curve(s[g == lab], yy[g == lab]) for lab in labels]
        n = len(s)
        if self.solver == "exact":
            idx, obj = _solve_exact(curves, ref, lam, n)
            thr = [c.threshold_value(j) for c, j in zip(curves, idx)]
        else:
            opts = dict(self.pso_options or {"c1": 0.5, "c2": 0.3, "w": 0.9})
            best = _solve_pso(
                s, yy, g, labels, ref, lam, self.random_state, self.n_particles, self.iters, opts
            )
            thr = [float(t) for t in best]
            idx = [int(np.searchsorted(c.u, t, side="left")) for c, t in zip(curves, thr)]
            obj = _objective_from_counts(curves, idx, ref, lam, n)
        self.fit_seconds_ = time.perf_counter() - t0
        self.groups_ = labels
        self.reference_ = labels[ref]
        self.thresholds_ = {lab: float(t) for lab, t in zip(labels, thr)}
        self.objective_ = float(obj)
        return self

    def predict(self, scores: Any, groups: Any) -> np.ndarray:
        """0/1 decisions: 1 where the row's score is at least its group's threshold."""
        if not hasattr(self, "thresholds_"):
            raise LuskinError("Tune the thresholds (fit) before predicting.")
        s = np.asarray(scores, dtype=float)
        g = np.asarray(groups)
        if s.shape != g.shape:
            raise LuskinError("Scores and groups must have the same number of rows.")
        t = np.empty(len(s))
        known = np.zeros(len(s), dtype=bool)
        for lab, thr in self.thresholds_.items():
            m = g == lab
            t[m] = thr
            known |= m
        if not known.all():
            unknown = sorted({str(v) for v in g[~known]})
            raise LuskinError(
                "Some rows belong to a group the thresholds were not tuned for: "
                + ", ".join(unknown[:5])
            )
        return (s >= t).astype(np.int64)


def objective(
    scores: Any,
    y: Any,
    groups: Any,
    thresholds: Mapping[Any, float],
    lam: float = 1.0,
    reference: Any = None,
) -> float:
    """E_a - lam * E_f of the given thresholds (reference: the largest group unless named)."""
    s, yy, g = _validate(scores, y, groups)
    labels = np.unique(g).tolist()
    _check_groups(yy, g, labels)
    if reference is None:
        reference = labels[int(np.argmax([(g == lab).sum() for lab in labels]))]
    rates = group_rates(s, yy, g, thresholds)
    acc = float(np.mean(_predict_with(s, g, thresholds) == yy))
    r = rates[reference]
    ef = sum(
        abs(r.tpr - q.tpr) + abs(r.fpr - q.fpr) for lab, q in rates.items() if lab != reference
    )
    return acc - lam * ef


# --------------------------------------------------------------------------------------------
# rates, ROC curves and the report
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GroupRates:
    """One group's operating point at a threshold."""

    threshold: float
    accuracy: float
    tpr: float
    fpr: float
    n: int
    positives: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "threshold": _json_float(self.threshold),
            "accuracy": self.accuracy,
            "tpr": self.tpr,
            "fpr": self.fpr,
            "n": self.n,
            "positives": self.positives,
        }


@dataclass(frozen=True)
class GroupRoc:
    """A group's ROC curve (for plotting): false and true positive rates as the threshold falls."""

    fpr: np.ndarray
    tpr: np.ndarray
    thresholds: np.ndarray

    def to_dict(self) -> dict[str, Any]:
        return {
            "fpr": self.fpr.tolist(),
            "tpr": self.tpr.tolist(),
            "thresholds": [_json_float(t) for t in self.thresholds],
        }


def _json_float(x: float) -> float | str:
    """JSON has no infinity: write "inf" / "-inf" (everyone / nobody predicted positive)."""
    x = float(x)
    if np.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def _predict_with(s: np.ndarray, g: np.ndarray, thresholds: Mapping[Any, float]) -> np.ndarray:
    t = np.full(len(s), np.inf)
    for lab, thr in thresholds.items():
        t[g == lab] = thr
    return (s >= t).astype(np.int8)


def group_rates(
    scores: Any, y: Any, groups: Any, thresholds: Mapping[Any, float] | float
) -> dict[Any, GroupRates]:
    """Accuracy, TPR and FPR per group when each group uses its threshold (or one for all)."""
    s = np.asarray(scores, dtype=float)
    yy = np.asarray(y).astype(np.int8)
    g = np.asarray(groups)
    labels = np.unique(g).tolist()
    if not isinstance(thresholds, Mapping):
        thresholds = {lab: float(thresholds) for lab in labels}
    pred = _predict_with(s, g, thresholds)
    out: dict[Any, GroupRates] = {}
    for lab in labels:
        m = g == lab
        yt, pt = yy[m], pred[m]
        P = int(yt.sum())
        N = int(m.sum()) - P
        out[lab] = GroupRates(
            threshold=float(thresholds.get(lab, np.inf)),
            accuracy=float(np.mean(yt == pt)) if m.any() else float("nan"),
            tpr=float(pt[yt == 1].sum() / P) if P else float("nan"),
            fpr=float(pt[yt == 0].sum() / N) if N else float("nan"),
            n=int(m.sum()),
            positives=P,
        )
    return out


def roc_curves(
    scores: Any, y: Any, groups: Any, max_points: int = 400
) -> dict[Any, GroupRoc]:
    """Each group's ROC curve from (0, 0) to (1, 1), thinned to about ``max_points`` points."""
    s = np.asarray(scores, dtype=float)
    yy = np.asarray(y).astype(np.int8)
    g = np.asarray(groups)
    out: dict[Any, GroupRoc] = {}
    for lab in np.unique(g).tolist():
        m = g == lab
        c = _curve(s[m], yy[m])
        # from "nobody" (j = m) down to "everyone" (j = 0)
        fpr = (c.fp / max(c.N, 1))[::-1]
        tpr = (c.tp / max(c.P, 1))[::-1]
        thr = np.concatenate([c.u, [np.inf]])[::-1]
        if len(fpr) > max_points:
            keep = np.unique(np.linspace(0, len(fpr) - 1, max_points).round().astype(int))
            fpr, tpr, thr = fpr[keep], tpr[keep], thr[keep]
        out[lab] = GroupRoc(fpr=fpr, tpr=tpr, thresholds=thr)
    return out


@dataclass(frozen=True)
class SplitResult:
    """Accuracy and per-group operating points on one split, before or after tuning."""

    accuracy: float
    groups: dict[str, GroupRates]

    def to_dict(self) -> dict[str, Any]:
        return {
            "accuracy": self.accuracy,
            "groups": {lab: r.to_dict() for lab, r in self.groups.items()},
        }

    @property
    def tpr_gap(self) -> float:
        v = [r.tpr for r in self.groups.values()]
        return float(max(v) - min(v))

    @property
    def fpr_gap(self) -> float:
        v = [r.fpr for r in self.groups.values()]
        return float(max(v) - min(v))


@dataclass(frozen=True)
class ThresholdReport:
    """Everything the thresholds page, the command line and the report show.

    ``before`` uses the model's default threshold for every group (0.5 for probabilities, 0 for
    an SVM's decision function, none for a user's score column: see ``default_threshold``);
    ``after`` the tuned thresholds. ``*_tune`` are on the tuning split, the others on the test
    split. ``roc_tune`` holds the groups' ROC curves on the tuning split for plotting, with the
    before/after operating points in ``before_tune`` / ``after_tune``.
    """

    thresholds: dict[str, float]
    objective: float
    lam: float
    solver: str
    reference: str
    default_threshold: float | None
    score_source: str
    before: SplitResult | None
    after: SplitResult
    before_tune: SplitResult | None
    after_tune: SplitResult
    roc_tune: dict[str, GroupRoc]
    roc_test: dict[str, GroupRoc]
    n_train: int
    n_tune: int
    n_test: int
    seed: int
    fit_seconds: float
    tuning_method: str = "validation"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict; the command line prints exactly this."""
        return {
            "thresholds": {k: _json_float(v) for k, v in self.thresholds.items()},
            "objective": self.objective,
            "lambda": self.lam,
            "solver": self.solver,
            "reference_group": self.reference,
            "score_source": self.score_source,
            "default_threshold": self.default_threshold,
            "before": self.before.to_dict() if self.before else None,
            "after": self.after.to_dict(),
            "tuning": {
                "before": self.before_tune.to_dict() if self.before_tune else None,
                "after": self.after_tune.to_dict(),
            },
            "roc": {
                "tuning": {k: v.to_dict() for k, v in self.roc_tune.items()},
                "test": {k: v.to_dict() for k, v in self.roc_test.items()},
            },
            "rows": {"train": self.n_train, "tuning": self.n_tune, "test": self.n_test},
            "seed": self.seed,
            "fit_seconds": self.fit_seconds,
            "tuning_method": self.tuning_method,
        }


def _split_result(
    s: np.ndarray, y: np.ndarray, g: np.ndarray, thresholds: Mapping[str, float]
) -> SplitResult:
    pred = _predict_with(s, g, thresholds)
    return SplitResult(
        accuracy=float(np.mean(pred == y)), groups=group_rates(s, y, g, thresholds)
    )


def best_common_threshold(scores: np.ndarray, y: np.ndarray) -> float:
    """The one threshold (same for every group) with the highest accuracy; ties: the lowest.

    Candidates are the midpoints between consecutive distinct scores, as for the per-group
    thresholds, plus "everyone" (the lowest score) and "nobody" (just above the highest).
    """
    s = np.asarray(scores, dtype=float)
    yy = np.asarray(y, dtype=np.int64)
    values, inverse = np.unique(s, return_inverse=True)
    pos = np.bincount(inverse, weights=yy, minlength=len(values))
    neg = np.bincount(inverse, weights=1 - yy, minlength=len(values))
    # Threshold just below values[j]: rows with score >= values[j] are positive.
    tp = np.cumsum(pos[::-1])[::-1]
    tn = np.concatenate([[0.0], np.cumsum(neg)[:-1]])
    correct = np.append(tp + tn, neg.sum())  # last: nobody positive
    j = int(np.argmax(correct))
    if j == len(values):  # nobody positive: just above the highest score (finite, so JSON-safe)
        return float(np.nextafter(values[-1], np.inf))
    return float(values[0]) if j == 0 else float((values[j - 1] + values[j]) / 2)


def tune_thresholds(
    frame: pd.DataFrame,
    spec: Any,
    *,
    model: str | None = "LR",
    score_column: str | None = None,
    features: Sequence[str] | None = None,
    solver: str = "exact",
    lam: float = 1.0,
    seed: int = 0,
    pipeline: Any = None,
    tuning: str = "validation",
    default_threshold: float | None = None,
) -> ThresholdReport:
    """Tune per-group thresholds on a frame described by an AuditSpec; report on held-out rows.

    With ``model`` ("LR", "MLP" or "SVM") a model is trained on 60% of the rows, thresholds are
    tuned on 20% and everything is reported on the last 20% (seeded, stratified by outcome and
    group). LR and MLP score with the probability of the positive outcome (default threshold
    0.5), SVM with its decision function (default threshold 0). ``features`` default to every
    column but the outcome and the protected column. ``pipeline`` (an unfitted sklearn
    estimator over ``features``, e.g. ``models.compas_paper_pipeline``) replaces the default one.
    With ``score_column`` (model=None) the user's own score is used: rows split into tuning and
    test halves. "Before" is one threshold for everyone: ``default_threshold`` when given (an
    agency's own cut-off, e.g. 5 on COMPAS's decile_score), 0.5 for a column of 0/1 decisions,
    otherwise the single threshold with the best accuracy on the tuning rows, so that "after"
    is always compared with the best the score could do without group-specific thresholds.

    ``tuning="crossfit"`` (with a model) tunes on more rows: the train and validation rows (80%)
    are scored out of fold (5 folds), the thresholds are tuned on those 80%, and the model is
    refitted on all 80% before being applied to the same 20% test rows. On COMPAS this gave
    smaller test gaps at a smaller accuracy cost than the paper's validation-only tuning (see
    benchmarks/results/parity.md), for five extra model fits.
    """
    from sklearn.model_selection import train_test_split

    from luskin_core import models
    from luskin_core.spec import prepare, resolve_column

    if score_column is not None and model is not None:
        raise LuskinError("Choose either a model to train or an existing score column, not both.")
    if tuning not in ("validation", "crossfit"):
        raise LuskinError(f"Unknown tuning '{tuning}': choose 'validation' or 'crossfit'.")
    if tuning == "crossfit" and score_column is not None:
        raise LuskinError(
            "Cross-fitting needs a model to retrain; with an existing score column the rows are "
            "simply split into tuning and test halves."
        )
    if score_column is None and model is None and pipeline is None:
        raise LuskinError("Choose a model to train (LR, MLP or SVM) or an existing score column.")
    prep = prepare(frame, spec)
    data, y, in_group = prep.frame, prep.y.astype(np.int8), np.asarray(prep.in_group, bool)
    g = np.where(in_group, spec.group_name, spec.other_name).astype(object)
    idx = np.arange(len(y))
    if len(idx) < 10:
        raise LuskinError("There are too few rows (fewer than 10) to tune thresholds.")
    strat = _strata(y, in_group)
    default: float | None
    if score_column is not None:
        col_name = resolve_column(data, score_column, "score")
        col = pd.to_numeric(data[col_name], errors="coerce")
        if col.isna().all():
            raise LuskinError(f"The column '{col_name}' holds no numbers to use as scores.")
        scores = col.to_numpy(dtype=float)
        if np.isnan(scores).any():
            raise LuskinError(
                f"{int(np.isnan(scores).sum())} row(s) have no number in the score column "
                f"'{col_name}'. Remove those rows or choose a score column without gaps."
            )
        tune_idx, test_idx = train_test_split(
            idx, test_size=0.5, random_state=seed, stratify=strat
        )
        n_train = 0
        s_tune, s_test = scores[tune_idx], scores[test_idx]
        if default_threshold is not None:
            default = float(default_threshold)
        elif set(np.unique(scores).tolist()) <= {0.0, 1.0}:
            default = 0.5
        else:
            default = best_common_threshold(s_tune, y[tune_idx])
        source = f"column {col_name}"
    else:
        kind = models.check_kind(model) if model is not None else "custom"
        if features is None:
            exclude = [spec.protected.column] if spec.protected.column in data.columns else []
            features = models.choose_features(data, spec.outcome, None, exclude).columns
        features = [resolve_column(data, c, "feature") for c in features]
        rest, test_idx = train_test_split(idx, test_size=0.2, random_state=seed, stratify=strat)
        train_idx, tune_idx = train_test_split(
            rest, test_size=0.25, random_state=seed,
            stratify=None if strat is None else strat[rest],
        )
        X = data[features]
        if tuning == "validation":
            if pipeline is None:
                pipeline = models.make_model(kind, X.iloc[train_idx], features, random_state=seed)
            pipeline.fit(X.iloc[train_idx], y[train_idx])
            s_tune = np.asarray(models.risk_scores(pipeline, X.iloc[tune_idx]), dtype=float)
            s_test = np.asarray(models.risk_scores(pipeline, X.iloc[test_idx]), dtype=float)
            n_train = len(train_idx)
        else:
            s_tune, s_test, pipeline = _crossfit_scores(
                pipeline, kind, X, y, rest, test_idx, features, strat, seed
            )
            tune_idx = rest
            n_train = len(rest)
        default = float(models.default_threshold(pipeline) if default_threshold is None else default_threshold)
        source = f"model {kind}" + (", cross-fitted" if tuning == "crossfit" else "")
    y_tune, g_tune = y[tune_idx], g[tune_idx]
    opt = GroupThresholdOptimizer(lam=lam, solver=solver, random_state=seed)
    opt.fit(s_tune, y_tune, g_tune)
    thr = {str(k): v for k, v in opt.thresholds_.items()}
    st, yt, gt = s_test, y[test_idx], g[test_idx]
    for lab in thr:
        if not (gt == lab).any():
            raise LuskinError(f"The test split has no rows of the group '{lab}'. Use more data.")
    dflt = None if default is None else {lab: default for lab in thr}
    return ThresholdReport(
        thresholds=thr,
        objective=opt.objective_,
        lam=float(lam),
        solver=solver,
        reference=str(opt.reference_),
        default_threshold=default,
        score_source=source,
        before=_split_result(st, yt, gt, dflt) if dflt else None,
        after=_split_result(st, yt, gt, thr),
        before_tune=_split_result(s_tune, y_tune, g_tune, dflt) if dflt else None,
        after_tune=_split_result(s_tune, y_tune, g_tune, thr),
        roc_tune={str(k): v for k, v in roc_curves(s_tune, y_tune, g_tune).items()},
        roc_test={str(k): v for k, v in roc_curves(st, yt, gt).items()},
        n_train=n_train,
        n_tune=len(tune_idx),
        n_test=len(test_idx),
        seed=seed,
        fit_seconds=opt.fit_seconds_,
        tuning_method=tuning,
    )


def _crossfit_scores(
    pipeline: Any,
    kind: str,
    X: pd.DataFrame,
    y: np.ndarray,
    rest: np.ndarray,
    test_idx: np.ndarray,
    features: Sequence[str],
    strat: np.ndarray | None,
    seed: int,
) -> tuple[np.ndarray, np.ndarray, Any]:
    """Out-of-fold scores over ``rest`` (5 folds) and test scores of a model refitted on it."""
    from sklearn.base import clone
    from sklearn.model_selection import KFold, StratifiedKFold

    from luskin_core import models

    template = pipeline
    if template is None:
        template = models.make_model(kind, X.iloc[rest], features, random_state=seed)
    cells = None if strat is None else strat[rest]
    counts = np.bincount(cells) if cells is not None else np.zeros(1, dtype=int)
    if cells is not None and counts[counts > 0].min() >= 5:
        splits = StratifiedKFold(5, shuffle=True, random_state=seed).split(rest, cells)
    else:
        splits = KFold(5, shuffle=True, random_state=seed).split(rest)
    oof = np.empty(len(rest))
    for fit_part, score_part in splits:
        m = clone(template).fit(X.iloc[rest[fit_part]], y[rest[fit_part]])
        oof[score_part] = models.risk_scores(m, X.iloc[rest[score_part]])
    final = clone(template).fit(X.iloc[rest], y[rest])
    s_test = np.asarray(models.risk_scores(final, X.iloc[test_idx]), dtype=float)
    return oof, s_test, final


def _strata(y: np.ndarray, in_group: np.ndarray) -> np.ndarray | None:
    """Stratify splits by outcome x group when every cell is big enough, so no split loses a
    group's positives; otherwise fall back to a plain random split."""
    cells = y.astype(int) * 2 + in_group.astype(int)
    counts = np.bincount(cells, minlength=4)
    present = counts[counts > 0]
    return cells if present.size and present.min() >= 5 else None
