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
    The paper's particle swarm: pyswarms 1.3's ``GlobalBestPSO`` update rule, reimplemented here
    draw for draw (:func:`global_best_pso`), so that a seed gives exactly the thresholds pyswarms
    gives after ``numpy.random.seed(seed)`` (tests/test_thresholds.py runs pyswarms in a separate
    process and compares the best position bit for bit). It draws from its own generator: it never
    touches numpy's global one, the environment or the working folder, so sessions running at once
    in one server get the same thresholds as alone. pyswarms is not needed at run time. Its result
    is a feasible set of thresholds, so its objective is never above the exact one.

Reported threshold values
-------------------------
For a candidate "positive iff score >= u_j" the reported threshold is the midpoint between the
group's previous distinct score and ``u_j`` (the widest margin on both sides, which matters for
scores never seen while tuning); "everyone positive" is ``-inf`` and "nobody positive" ``+inf``.
On the tuning rows the midpoint gives exactly the same predictions as ``u_j`` itself.

Warnings
--------
``ThresholdReport.warnings`` says in words when tuning backfired on the test rows: a TPR or FPR
gap at least ``GAP_GROWTH`` (one point) larger after tuning than before, or a test accuracy below
what always predicting the most common outcome gets.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from luskin_core.corrections.correction import ERROR_RATES, CorrectionResult, CorrectionStage, GroupCounts
from luskin_core.errors import LuskinError
from luskin_core.formatting import below_majority, count_of
from luskin_core.spec.names import GroupNames
from luskin_core.spec.options import MODEL_KINDS, OPTION_CONSTRAINTS, SEED, ThresholdOptions
from luskin_core.spec.validation import (
    check_both_outcomes_per_group,
    check_finite_scores,
    check_groups_argument,
    check_scores_outcomes_groups,
    score_array,
)

__all__ = [
    "GAP_GROWTH",
    "GroupRates",
    "GroupRoc",
    "GroupThresholdOptimizer",
    "SeedSpread",
    "ThresholdOptions",
    "ThresholdReport",
    "ThresholdsNotFitted",
    "global_best_pso",
    "group_rates",
    "objective",
    "roc_curves",
    "seed_spread",
    "threshold_warnings",
    "tune_thresholds",
]

GAP_GROWTH = 0.01  # a test gap this much larger after tuning than before is worth a warning


def _validate(scores: Any, y: Any, groups: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[Any]]:
    """Checked scores, 0/1 outcomes and group labels, and the sorted labels (see validation.py)."""
    s, yy, g = check_scores_outcomes_groups(scores, y, groups)
    labels = np.unique(g).tolist()
    check_both_outcomes_per_group(yy, g, labels, purpose="thresholds per group",
                                  positive_need="its true positive rate cannot be measured",
                                  negative_need="its false positive rate cannot be measured",
                                  remedy="Use more data or a different split of the groups.")
    return s, yy, g, labels


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

PSO_DEFAULTS = {"c1": 0.5, "c2": 0.3, "w": 0.9}


def _periodic(position: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """pyswarms' default boundary handler ("periodic"): wrap coordinates back into the bounds."""
    greater = np.nonzero(position > upper)
    below = np.nonzero(position < lower)
    n = position.shape[0]
    span = np.tile(np.abs(np.array(upper) - np.array(lower)), (n, 1))
    up = np.tile(upper, (n, 1))
    low = np.tile(lower, (n, 1))
    if below[0].size != 0 and below[1].size != 0:
        position[below] = up[below] - np.mod(low[below] - position[below], span[below])
    if greater[0].size != 0 and greater[1].size != 0:
        position[greater] = low[greater] + np.mod(position[greater] - up[greater], span[greater])
    return position


def _random_state(random_state: Any) -> np.random.RandomState:
    """A generator of our own: a seed, a RandomState to use, or None for fresh entropy.

    Never numpy's global generator (``sklearn.utils.check_random_state(None)`` would return it).
    """
    if random_state is None:
        return np.random.RandomState()
    if isinstance(random_state, np.random.RandomState):
        return random_state
    return np.random.RandomState(SEED.check(random_state))  # the seed's one constraint (spec/options.py)


def global_best_pso(
    cost: Callable[[np.ndarray], np.ndarray],
    lower: np.ndarray,
    upper: np.ndarray,
    *,
    n_particles: int = 50,
    iters: int = 200,
    c1: float = 0.5,
    c2: float = 0.3,
    w: float = 0.9,
    random_state: Any = None,
    ftol: float = -np.inf,
    ftol_iter: int = 1,
) -> tuple[float, np.ndarray]:
    """pyswarms 1.3's ``GlobalBestPSO(...).optimize(cost, iters)``, draw for draw; returns (cost, position).

    The same rule with pyswarms' defaults (star topology, "periodic" boundary handler,
    "unmodified" velocity handler, no velocity clamp, centre 1): positions start uniform in the
    bounds and velocities uniform in [0, 1); each iteration evaluates the swarm, keeps each
    particle's best position (strictly lower cost replaces it) and the swarm's best, stops early
    when the best cost changed by less than ``ftol * (1 + |previous best|)`` for ``ftol_iter``
    iterations running (never, with the default ``ftol=-inf``), then moves:
    ``v = w v + c1 r1 (personal best - x) + c2 r2 (swarm best - x)``, ``x = wrap(x + v)``.
    The draws come in pyswarms' order from ``random_state`` (a seed, a ``RandomState``, or None),
    never from numpy's global generator. pyswarms builds its swarm twice (its base class and
    ``GlobalBestPSO`` both call ``reset()``), so the first positions and velocities are drawn
    and discarded here too. The returned position is the personal best of lowest cost.
    """
    rng = _random_state(random_state)
    lower = np.asarray(lower, dtype=float)
    upper = np.asarray(upper, dtype=float)
    size = (int(n_particles), len(lower))
    low = np.repeat(np.array(lower)[np.newaxis, :], size[0], axis=0)
    high = np.repeat(np.array(upper)[np.newaxis, :], size[0], axis=0)
    for _ in range(2):  # pyswarms' two reset() calls: the first swarm is discarded
        position = 1.0 * rng.uniform(low=low, high=high, size=size)
        velocity = (1 - 0) * rng.random_sample(size=size) + 0
    pbest_pos = position
    pbest_cost = np.full(size[0], np.inf)
    best_pos = np.array([])
    best_cost = np.inf
    history: deque[bool] = deque(maxlen=ftol_iter)
    for i in range(int(iters)):
        current = cost(position)
        improved = current < pbest_cost
        pbest_pos = np.where(~np.repeat(improved[:, np.newaxis], size[1], axis=1), pbest_pos, position)
        pbest_cost = np.where(~improved, pbest_cost, current)
        previous = best_cost
        if np.min(pbest_cost) < best_cost:
            best_pos = pbest_pos[np.argmin(pbest_cost)]
            best_cost = np.min(pbest_cost)
        history.append(bool(np.abs(best_cost - previous) < ftol * (1 + np.abs(previous))))
        if i >= ftol_iter and all(history):
            break
        cognitive = c1 * rng.uniform(0, 1, size) * (pbest_pos - position)
        social = c2 * rng.uniform(0, 1, size) * (best_pos - position)
        velocity = (w * velocity) + cognitive + social
        moved = position.copy()
        moved += velocity
        position = _periodic(moved, lower, upper)
    return float(best_cost), pbest_pos[pbest_cost.argmin()].copy()


def _pso_problem(
    s: np.ndarray, y: np.ndarray, g: np.ndarray, labels: Sequence[Any], ref: int, lam: float
) -> tuple[Callable[[np.ndarray], np.ndarray], np.ndarray, np.ndarray]:
    """The swarm's cost (minus the objective, for each particle's thresholds) and search bounds."""
    n = len(s)
    pos_sorted, neg_sorted, P, N = [], [], [], []
    lo_b, hi_b = [], []
    for lab in labels:
        m = g == lab
        sp_ = np.sort(s[m & (y == 1)])
        sn = np.sort(s[m & (y == 0)])
        pos_sorted.append(sp_)
        neg_sorted.append(sn)
        P.append(len(sp_))
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

    return cost, lo, hi


def _solve_pso(
    s: np.ndarray,
    y: np.ndarray,
    g: np.ndarray,
    labels: Sequence[Any],
    ref: int,
    lam: float,
    random_state: Any,
    n_particles: int,
    iters: int,
    options: Mapping[str, float],
) -> np.ndarray:
    """The paper's particle swarm over one threshold per group; returns the best position."""
    cost, lo, hi = _pso_problem(s, y, g, labels, ref, lam)
    _, best = global_best_pso(cost, lo, hi, n_particles=n_particles, iters=iters, c1=options["c1"],
                              c2=options["c2"], w=options["w"], random_state=random_state)
    return np.asarray(best, dtype=float)


# --------------------------------------------------------------------------------------------
# estimator
# --------------------------------------------------------------------------------------------


class ThresholdsNotFitted(NotFittedError, LuskinError):
    """Predicting before fitting: scikit-learn's NotFittedError, and a plain LuskinError for pages and CLI."""


class GroupThresholdOptimizer(BaseEstimator):
    """Choose one decision threshold per group to maximise accuracy - lam * (TPR/FPR gaps).

    scikit-learn conventions, as fairlearn's ``ThresholdOptimizer``: the group of each row is a
    keyword argument, ``groups`` or its fairlearn name ``sensitive_features`` (one of them), at
    ``fit`` and at ``predict``; ``fit`` returns the estimator; ``get_params``, ``set_params`` and
    ``sklearn.base.clone`` work; learned attributes end in ``_``; ``predict`` before ``fit`` raises
    :class:`ThresholdsNotFitted` (a ``NotFittedError``); a missing or infinite score is refused in
    one sentence at ``fit`` and at ``predict`` alike (never silently decided "no").

    What ``X`` is. Without ``estimator``, ``X`` is the scores: one number per row (a 1-D array or a
    single column). With ``estimator`` (a classifier), ``X`` is its input and the scores are its
    probability of the positive class (``predict_proba``), or its ``decision_function``; with
    ``prefit=True`` the estimator must be fitted already and is used as it is (so the optimizer can
    end a ``Pipeline`` after a fitted model: ``pipe.fit(X, y, thr__groups=g)``, ``pipe.predict(X,
    groups=g)``), otherwise a clone of it is fitted on ``X`` and ``y`` first (``estimator_``).

    Parameters
    ----------
    lam : weight of the fairness term (the paper's lambda; 1 in its experiments).
    solver : ``"exact"`` (true optimum, default) or ``"pso"`` (the paper's particle swarm).
    reference : group label whose TPR/FPR the others are compared with; ``None`` = the largest
        group (ties: first label in sorted order).
    random_state : seed (or a ``numpy.random.RandomState``) for the PSO solver; unused by
        ``exact``. None draws fresh entropy; numpy's global generator is never used.
    n_particles, iters, pso_options : particle swarm settings; defaults 50 particles, 200
        iterations, c1=0.5, c2=0.3, w=0.9 (the paper does not give its own). The swarm searches
        each group's threshold between its lowest and (just above) its highest score.
    estimator : a classifier whose scores are thresholded (None: ``X`` is the scores).
    prefit : the estimator is already fitted (fairlearn's ``prefit``); ignored without estimator.

    Learned attributes: ``groups_`` (sorted labels), ``reference_``, ``thresholds_`` (label ->
    threshold, predict positive iff score >= threshold), ``objective_`` (on the fitting rows),
    ``fit_seconds_``, ``classes_`` (``[0, 1]``), ``n_features_in_`` (1 for scores, else the
    estimator's), ``estimator_`` (the estimator used, when there is one).
    """

    def __init__(
        self,
        lam: float = 1.0,
        solver: str = "exact",
        reference: Any = None,
        random_state: Any = None,
        n_particles: int = 50,
        iters: int = 200,
        pso_options: Mapping[str, float] | None = None,
        estimator: Any = None,
        prefit: bool = False,
    ) -> None:
        self.lam = lam
        self.solver = solver
        self.reference = reference
        self.random_state = random_state
        self.n_particles = n_particles
        self.iters = iters
        self.pso_options = pso_options
        self.estimator = estimator
        self.prefit = prefit

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "thresholds_")

    def _scores(self, X: Any, estimator: Any) -> np.ndarray:
        """The scores of the rows: ``X`` itself (one column), or the estimator's scores of ``X``."""
        if estimator is None:
            s = np.asarray(X)
            if s.ndim == 2 and s.shape[1] == 1:
                s = s[:, 0]
            return s
        from luskin_core.corrections.models import risk_scores

        if hasattr(estimator, "predict_proba") or hasattr(estimator, "decision_function"):
            return np.asarray(risk_scores(estimator, X), dtype=float)
        raise LuskinError("The estimator gives no scores to threshold (it has neither predict_proba nor "
                          "decision_function).")

    def _fitted_estimator(self, X: Any, y: Any) -> Any:
        if self.estimator is None:
            return None
        if self.prefit:
            try:
                check_is_fitted(self.estimator)
            except NotFittedError:
                raise LuskinError("prefit=True needs an estimator that is already fitted: fit it first, or "
                                  "leave prefit out to have it fitted on these rows.") from None
            return self.estimator
        from sklearn.base import clone

        return clone(self.estimator).fit(X, np.asarray(y))

    def fit(
        self, X: Any, y: Any, *, groups: Any = None, sensitive_features: Any = None
    ) -> GroupThresholdOptimizer:
        """Find the thresholds on these rows: scores (or the estimator's input), 0/1 outcomes, each row's group."""
        solver = OPTION_CONSTRAINTS["thresholds"]["solver"].check(self.solver)  # declared once: spec/options.py
        lam = OPTION_CONSTRAINTS["thresholds"]["lam"].check(self.lam)
        g_in = check_groups_argument(groups, sensitive_features)
        estimator = self._fitted_estimator(X, y)
        s, yy, g, labels = _validate(self._scores(X, estimator), y, g_in)
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
        if solver == "exact":
            idx, obj = _solve_exact(curves, ref, lam, n)
            thr = [c.threshold_value(j) for c, j in zip(curves, idx)]
        else:
            opts = {**PSO_DEFAULTS, **dict(self.pso_options or {})}
            if int(self.n_particles) < 1 or int(self.iters) < 1:
                raise LuskinError("The particle swarm needs at least one particle and one iteration.")
            best = _solve_pso(
                s, yy, g, labels, ref, lam, self.random_state, int(self.n_particles), int(self.iters), opts
            )
            thr = [float(t) for t in best]
            idx = [int(np.searchsorted(c.u, t, side="left")) for c, t in zip(curves, thr)]
            obj = _objective_from_counts(curves, idx, ref, lam, n)
        self.fit_seconds_ = time.perf_counter() - t0
        self.groups_ = labels
        self.reference_ = labels[ref]
        self.thresholds_ = {lab: float(t) for lab, t in zip(labels, thr)}
        self.objective_ = float(obj)
        self.classes_ = np.array([0, 1])
        self.estimator_ = estimator
        self.n_features_in_ = 1 if estimator is None else int(getattr(estimator, "n_features_in_",
                                                                      np.shape(X)[1] if np.ndim(X) == 2 else 1))
        return self

    def predict(self, X: Any, *, groups: Any = None, sensitive_features: Any = None) -> np.ndarray:
        """0/1 decisions: 1 where the row's score is at least its group's threshold."""
        if not self.__sklearn_is_fitted__():
            raise ThresholdsNotFitted("Tune the thresholds (fit) before predicting.")
        g = np.asarray(check_groups_argument(groups, sensitive_features))
        s = score_array(self._scores(X, self.estimator_))
        if s.shape != g.shape:
            raise LuskinError("Scores and groups must have the same number of rows.")
        check_finite_scores(s)
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
    s, yy, g, labels = _validate(scores, y, groups)
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
        tpr, fpr = self.gap_interval("tpr"), self.gap_interval("fpr")
        return {
            "accuracy": self.accuracy,
            "groups": {lab: r.to_dict() for lab, r in self.groups.items()},
            "tpr_gap": self.tpr_gap, "fpr_gap": self.fpr_gap,
            "tpr_gap_ci95": list(tpr) if tpr else None, "fpr_gap_ci95": list(fpr) if fpr else None,
        }

    @property
    def tpr_gap(self) -> float:
        v = [r.tpr for r in self.groups.values()]
        return float(max(v) - min(v))

    @property
    def fpr_gap(self) -> float:
        v = [r.fpr for r in self.groups.values()]
        return float(max(v) - min(v))

    def gap_interval(self, rate: str) -> tuple[float, float] | None:
        """The 95% Newcombe interval of the largest gap in ``rate`` ("tpr" or "fpr") on these rows: the difference
        between the groups with the highest and the lowest rate, each a count over its group's positives (TPR) or
        negatives (FPR). With more than two groups it is the interval of that pair, chosen after seeing the rates.
        None when a group has no row to count the rate over."""
        from luskin_core.stats.inference import newcombe_interval

        items = [(r.tpr if rate == "tpr" else r.fpr, r) for r in self.groups.values()]
        if len(items) < 2 or any(v != v for v, _ in items):   # noqa: PLR0124 (NaN)
            return None
        (high_rate, high), (low_rate, low) = max(items, key=lambda x: x[0]), min(items, key=lambda x: x[0])

        def count(r: GroupRates, value: float) -> tuple[int, int]:
            n = r.positives if rate == "tpr" else r.n - r.positives
            return round(value * n), n

        k1, n1 = count(high, high_rate)
        k2, n2 = count(low, low_rate)
        if not n1 or not n2:
            return None
        lo, hi = newcombe_interval(k1, n1, k2, n2)
        return float(np.asarray(lo).ravel()[0]), float(np.asarray(hi).ravel()[0])

    def counts(self) -> tuple[GroupCounts, ...]:
        """Each group's confusion counts (exact: each rate is a count over its group's positives or negatives)."""
        out = []
        for group, r in self.groups.items():
            negatives = int(r.n) - int(r.positives)
            tp = round(r.tpr * r.positives) if r.positives else 0
            fp = round(r.fpr * negatives) if negatives else 0
            out.append(GroupCounts(str(group), "All rows", tp, fp, int(r.positives) - tp, negatives - fp))
        return tuple(out)


@dataclass(frozen=True)
class ThresholdReport:
    """Everything the thresholds page, the command line and the report show.

    ``before`` uses the model's default threshold for every group (0.5 for probabilities, 0 for
    an SVM's decision function, none for a user's score column: see ``default_threshold``);
    ``after`` the tuned thresholds. ``*_tune`` are on the tuning split, the others on the test
    split. ``roc_tune`` holds the groups' ROC curves on the tuning split for plotting, with the
    before/after operating points in ``before_tune`` / ``after_tune``. ``warnings`` says in plain
    sentences where tuning backfired on the test rows (see the module's "Warnings"). ``options``
    are the settings it was tuned with; ``correction`` the result in the shape every correction
    shares (:class:`~luskin_core.corrections.correction.CorrectionResult`). Groups are named as the
    data names them ('Female' and 'Male', never 'Non-Female'); ``names`` says which is the protected
    group and which the rest (None: not known, e.g. a report saved before the names were kept).
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
    warnings: tuple[str, ...] = ()
    options: ThresholdOptions | None = None
    names: GroupNames | None = None
    spread: SeedSpread | None = None   # the same run over seeds 0-9, when asked for (seed_spread)

    def gap_lines(self) -> list[str]:
        """The test-set gaps with their 95% intervals (and the spread over seeds when it was run), in words."""
        from luskin_core.formatting import format_points

        def said(split: SplitResult, rate: str) -> str:
            gap = split.tpr_gap if rate == "tpr" else split.fpr_gap
            ci = split.gap_interval(rate)
            return f"{format_points(gap, signed=True)} points" + (
                "" if ci is None else f" (95% CI {format_points(ci[0], signed=True)} to "
                                      f"{format_points(ci[1], signed=True)})")

        lines = []
        for name, split in (("before", self.before), ("after", self.after)):
            if split is not None:
                lines.append(f"Test rows, {name}: TPR gap {said(split, 'tpr')}, FPR gap {said(split, 'fpr')} "
                             f"({self.n_test:,} test rows).")
        if self.spread is not None:
            lines.append(self.spread.sentence())
        return lines

    @property
    def correction(self) -> CorrectionResult:
        """One shared threshold (before, when there is one) and each group's own (after), on the test rows."""
        lam = float(self.lam)
        options = self.options or ThresholdOptions(
            model=self.score_source.split()[1].rstrip(",") if self.score_source.startswith("model ") else None,
            solver=self.solver, lam=lam, seed=self.seed, tuning=self.tuning_method)
        stages = [CorrectionStage(stage, label, split.counts(), "accuracy", float(split.accuracy), setting=lam)
                  for stage, split, label in (("before", self.before, "one threshold"),
                                              ("after", self.after, f"own thresholds, λ = {lam:g}"))
                  if split is not None]
        return CorrectionResult(
            tool="thresholds", name=f"Per-group thresholds, lambda {lam:g} ({self.score_source})", options=options,
            stages=tuple(stages), n_test=int(self.n_test), gap_measure=ERROR_RATES, warnings=tuple(self.warnings),
        )

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
            "warnings": list(self.warnings),
            "correction": self.correction.to_dict(),
            "seed_spread": self.spread.to_dict() if self.spread is not None else None,
        }


def _split_result(
    s: np.ndarray, y: np.ndarray, g: np.ndarray, thresholds: Mapping[str, float],
    shown: Callable[[Any], str] = str,
) -> SplitResult:
    """Accuracy and each group's rates; the groups keyed by ``shown(label)`` (the data's names)."""
    pred = _predict_with(s, g, thresholds)
    rates = group_rates(s, y, g, thresholds)
    return SplitResult(accuracy=float(np.mean(pred == y)), groups={shown(k): r for k, r in rates.items()})


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


class _Scored(NamedTuple):
    """The rows split, the tuning and test rows' scores, the single threshold "before" and where the scores came from."""

    split: Any
    tune_idx: Any
    test_idx: Any
    s_tune: np.ndarray
    s_test: np.ndarray
    n_train: int
    default: float | None
    source: str
    kind: str | None   # the model's kind (None for a score column)


def _column_scores(frame: pd.DataFrame, spec: Any, score_column: str, seed: int,
                   default_threshold: float | None) -> _Scored:
    """The user's own score column, its rows split into tuning and test halves."""
    from luskin_core.corrections.pipeline import prepare_split
    from luskin_core.spec.audit_spec import resolve_column

    split = prepare_split(frame, spec, shape="50/50", seed=seed, min_rows=10, choose=False,
                          purpose="Tuning thresholds on a score column splits the data 50/50 and")
    data, y = split.frame, split.y
    col_name = resolve_column(data, score_column, "score")
    col = pd.to_numeric(data[col_name], errors="coerce")
    if col.isna().all():
        raise LuskinError(f"The column '{col_name}' holds no numbers to use as scores.")
    scores = col.to_numpy(dtype=float)
    if np.isnan(scores).any():
        raise LuskinError(
            f"{count_of(int(np.isnan(scores).sum()), 'row')} {'has' if np.isnan(scores).sum() == 1 else 'have'} "
            "no number in the score column "
            f"'{col_name}'. Remove those rows or choose a score column without gaps."
        )
    tune_idx, test_idx = split.part("tune"), split.part("test")
    s_tune, s_test = scores[tune_idx], scores[test_idx]
    if default_threshold is not None:
        default = float(default_threshold)
    elif set(np.unique(scores).tolist()) <= {0.0, 1.0}:
        default = 0.5
    else:
        default = best_common_threshold(s_tune, y[tune_idx])
    return _Scored(split, tune_idx, test_idx, s_tune, s_test, 0, default, f"column {col_name}", None)


def _model_scores(frame: pd.DataFrame, spec: Any, model: str | None, features: Sequence[str] | None, pipeline: Any,
                  tuning: str, seed: int, default_threshold: float | None) -> _Scored:
    """A model trained on 60% of the rows, scoring 20% to tune on (or 80% out of fold, cross-fitted) and 20% to test."""
    from luskin_core.corrections import models
    from luskin_core.corrections.pipeline import prepare_split

    kind = models.check_kind(model) if model is not None else "custom"
    split = prepare_split(frame, spec, shape="60/20/20", seed=seed, min_rows=10, features=features,
                          purpose="Tuning thresholds splits the data 60/20/20 and")
    data, y = split.frame, split.y
    features = list(split.features)
    train_idx, tune_idx, test_idx = split.part("train"), split.part("tune"), split.part("test")
    X = data[features]
    if tuning == "validation":
        if pipeline is None:
            pipeline = models.make_model(kind, X.iloc[train_idx], features, random_state=seed)
        pipeline.fit(X.iloc[train_idx], y[train_idx])
        s_tune = np.asarray(models.risk_scores(pipeline, X.iloc[tune_idx]), dtype=float)
        s_test = np.asarray(models.risk_scores(pipeline, X.iloc[test_idx]), dtype=float)
        n_train = len(train_idx)
    else:
        rest = split.rest
        s_tune, s_test, pipeline = _crossfit_scores(
            pipeline, kind, X, y, rest, test_idx, features, split.strata, seed
        )
        tune_idx = rest
        n_train = len(rest)
    default = float(models.default_threshold(pipeline) if default_threshold is None else default_threshold)
    source = f"model {kind}" + (", cross-fitted" if tuning == "crossfit" else "")
    return _Scored(split, tune_idx, test_idx, s_tune, s_test, n_train, default, source, kind)


def tune_thresholds(
    frame: pd.DataFrame,
    spec: Any,
    *,
    model: str | None = ThresholdOptions.model,
    score_column: str | None = None,
    features: Sequence[str] | None = None,
    solver: str = ThresholdOptions.solver,
    lam: float = ThresholdOptions.lam,
    seed: int = ThresholdOptions.seed,
    pipeline: Any = None,
    tuning: str = ThresholdOptions.tuning,
    default_threshold: float | None = ThresholdOptions.default_threshold,
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

    if score_column is not None and model is not None:
        raise LuskinError("Choose either a model to train or an existing score column, not both.")
    constraints = OPTION_CONSTRAINTS["thresholds"]  # declared once: spec/options.py
    tuning, solver = constraints["tuning"].check(tuning), constraints["solver"].check(solver)
    lam, seed = constraints["lam"].check(lam), constraints["seed"].check(seed)
    if tuning == "crossfit" and score_column is not None:
        raise LuskinError(
            "Cross-fitting needs a model to retrain; with an existing score column the rows are "
            "simply split into tuning and test halves."
        )
    if score_column is None and model is None and pipeline is None:
        raise LuskinError("Choose a model to train (LR, MLP or SVM) or an existing score column.")
    if score_column is not None:
        scored = _column_scores(frame, spec, score_column, seed, default_threshold)
    else:
        scored = _model_scores(frame, spec, model, features, pipeline, tuning, seed, default_threshold)
    split, default, source, kind = scored.split, scored.default, scored.source, scored.kind
    y, g, tune_idx, test_idx = split.y, split.groups, scored.tune_idx, scored.test_idx
    s_tune, s_test, n_train = scored.s_tune, scored.s_test, scored.n_train
    y_tune, g_tune = y[tune_idx], g[tune_idx]
    opt = GroupThresholdOptimizer(lam=lam, solver=solver, random_state=seed)
    opt.fit(s_tune, y_tune, groups=g_tune)
    thr = {str(k): v for k, v in opt.thresholds_.items()}
    st, yt, gt = s_test, y[test_idx], g[test_idx]
    shown = split.shown   # the labels keep the spec's names (the solver's order); every surface reads the data's
    for lab in thr:
        if not (gt == lab).any():
            raise LuskinError(f"The test split has no rows of the group '{shown(lab)}'. Use more data.")
    dflt = None if default is None else {lab: default for lab in thr}
    before = _split_result(st, yt, gt, dflt, shown) if dflt else None
    after = _split_result(st, yt, gt, thr, shown)
    return ThresholdReport(
        thresholds={shown(k): v for k, v in thr.items()},
        objective=opt.objective_,
        lam=float(lam),
        solver=solver,
        reference=shown(opt.reference_),
        default_threshold=default,
        score_source=source,
        before=before,
        after=after,
        before_tune=_split_result(s_tune, y_tune, g_tune, dflt, shown) if dflt else None,
        after_tune=_split_result(s_tune, y_tune, g_tune, thr, shown),
        roc_tune={shown(k): v for k, v in roc_curves(s_tune, y_tune, g_tune).items()},
        roc_test={shown(k): v for k, v in roc_curves(st, yt, gt).items()},
        n_train=n_train,
        n_tune=len(tune_idx),
        n_test=len(test_idx),
        seed=seed,
        fit_seconds=opt.fit_seconds_,
        tuning_method=tuning,
        warnings=threshold_warnings(before, after, yt),
        options=ThresholdOptions(model=kind if kind in MODEL_KINDS else None, solver=solver,
                                 lam=float(lam), seed=seed, tuning=tuning, default_threshold=default_threshold),
        names=split.names,
    )


@dataclass(frozen=True)
class SeedSpread:
    """The same tuning run again with seeds 0..k-1 (a new split, model and tuning each time): how much the test-set
    gaps and accuracy move with the split alone (the paper reports one seed)."""

    seeds: tuple[int, ...]
    tpr_gaps: tuple[float, ...]
    fpr_gaps: tuple[float, ...]
    accuracy_before: tuple[float | None, ...]
    accuracy_after: tuple[float, ...]
    target: float = 0.05

    @property
    def within_target(self) -> int:
        """Seeds whose test-set TPR and FPR gaps are both at most :attr:`target` (the paper's 0.05)."""
        return sum(t <= self.target and f <= self.target for t, f in zip(self.tpr_gaps, self.fpr_gaps))

    def sentence(self) -> str:
        """The spread in words, with the median and range of each number."""
        from luskin_core.formatting import format_percent, format_points

        def spread(values: Sequence[float], points: bool = True) -> str:
            shown = format_points if points else format_percent
            a = np.asarray(values, dtype=float)
            return (f"median {shown(float(np.median(a)))}{' points' if points else ''}, "
                    f"{shown(float(a.min()))} to {shown(float(a.max()))}")

        return (f"Over seeds {self.seeds[0]}-{self.seeds[-1]} ({len(self.seeds)} splits, each with its own model and "
                f"tuning): TPR gap {spread(self.tpr_gaps)}; FPR gap {spread(self.fpr_gaps)}; accuracy after "
                f"{spread(self.accuracy_after, False)}; both gaps at most {format_points(self.target)} points in "
                f"{self.within_target} of {len(self.seeds)}.")

    def to_dict(self) -> dict[str, Any]:
        return {"seeds": list(self.seeds), "tpr_gaps": list(self.tpr_gaps), "fpr_gaps": list(self.fpr_gaps),
                "accuracy_before": list(self.accuracy_before), "accuracy_after": list(self.accuracy_after),
                "target": self.target, "within_target": self.within_target, "sentence": self.sentence()}


def seed_spread(frame: pd.DataFrame, spec: Any, *, seeds: Sequence[int] = tuple(range(10)),
                pipeline_for: Callable[[int], Any] | None = None, **options: Any) -> SeedSpread:
    """:func:`tune_thresholds` once per seed (``options`` as for it; ``pipeline_for(seed)`` an unfitted pipeline
    per seed, e.g. the paper's COMPAS encoding): the test-set gaps and accuracy of each."""
    reports = []
    for seed in seeds:
        pipeline = pipeline_for(seed) if pipeline_for is not None else options.get("pipeline")
        reports.append(tune_thresholds(frame, spec, **{**options, "seed": int(seed), "pipeline": pipeline}))
    return SeedSpread(tuple(int(x) for x in seeds), tuple(r.after.tpr_gap for r in reports),
                      tuple(r.after.fpr_gap for r in reports),
                      tuple(r.before.accuracy if r.before else None for r in reports),
                      tuple(r.after.accuracy for r in reports))


def threshold_warnings(before: SplitResult | None, after: SplitResult, y_test: np.ndarray) -> tuple[str, ...]:
    """Plain sentences for every way the tuned thresholds did worse on the test rows (module doc)."""
    out: list[str] = []
    if before is not None:
        for name, b, a in (("true positive rate", before.tpr_gap, after.tpr_gap),
                           ("false positive rate", before.fpr_gap, after.fpr_gap)):
            if np.isfinite(a) and np.isfinite(b) and a - b >= GAP_GROWTH:
                out.append(
                    f"After per-group thresholds the gap in {name} on the test rows is larger than before "
                    f"({a:.3f} after, {b:.3f} before): the thresholds tuned on other rows did not carry over "
                    "to these. Try cross-fitted tuning or more data."
                )
    shortfall = below_majority(after.accuracy, float(np.mean(y_test)) if len(y_test) else 0.0)
    if shortfall is not None:
        accuracy_text, common, majority_text = shortfall
        out.append(
            f"With the tuned thresholds the test accuracy ({accuracy_text}) is below what always "
            f"predicting the most common outcome ({common}) gets ({majority_text})."
        )
    return tuple(out)


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

    from luskin_core.corrections import models

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
