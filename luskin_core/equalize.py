"""Equalized-distribution logistic regression (paper section 4.3, no protected attribute at
decision time).

The classifier is a logistic regression trained on

    L = alpha * E_a + (1 - alpha) * E_f

* ``E_a`` the MEAN log-loss (the paper prints a sum without the minus sign; a sum would drown
  ``E_f``);
* ``E_f = sum_{k != ref} sum_{c in {pos, neg}} || h_{ref,c} - h_{k,c} ||^2``, where ``h_{k,c}`` is
  the soft histogram of the predicted probabilities of group k's rows of true class c: 50 bins
  of width 0.02 centred 0.01, 0.03, ..., 0.99, each row adding
  ``0.02 / (sqrt(2 pi) bandwidth) * exp(-(s - centre)^2 / (2 bandwidth^2))`` to every bin, divided
  by the number of rows (the paper's ``norm_hist``). The factor in front makes a row's
  contributions sum to about 1, as in the paper's box histogram where each row counts once, so
  the soft histogram approximates the share of rows per bin whatever the kernel width (without
  it, E_f grows with the width and alpha's meaning would shift with it). ``ref`` is the largest
  group (ties: first label in sorted order).

Groups are needed at fit time only; predictions use the features alone. With ``groups=None``
``E_f`` is zero (and at ``alpha=1`` it has no weight): the model is then plain unpenalised logistic
regression, which keeps the scikit-learn estimator contract (``fit(X, y)``) intact.

Fitting (L-BFGS-B, the default solver). The weights are optimised in coordinates whitened by the
log-loss's curvature at the start (``theta = R^-1 phi`` with ``R^T R`` the Hessian of the mean
log-loss there, plus a tiny ridge): one-hot columns that overlap the intercept and features on very
different scales then no longer slow the search, and the gradient tolerance ``tol`` means the same
whatever the features' units (``|grad|^2 / 2`` in these coordinates estimates how far the loss is
from its minimum). A fit stops when that gradient is below ``tol`` (1e-5) or one iteration lowers the
loss by less than ``ftol`` (scipy's default 2.2e-9, relative to max(|loss|, 1)), and records whether
it converged (``converged_``, with scipy's message in ``convergence_message_``); a fit that stops
at ``max_iter`` says so (a ``ConvergenceWarning`` from the estimator, a sentence in the sweep's
``warnings``). Products with the features use no BLAS threads (numpy's own loops for dense
features, scipy.sparse for sparse ones), so nothing here depends on, or changes, the process's
thread settings.

Warnings (``AlphaPoint.warnings``, ``AlphaSweep.warnings``): a fit that did not converge; a test
accuracy below what always predicting the most common outcome gets; a TPR or FPR gap at least
``GAP_GROWTH`` (one point) larger than plain logistic regression's (alpha = 1, when in the sweep).
"""

from __future__ import annotations

import time
import warnings as _warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.optimize import minimize
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from luskin_core.errors import LuskinError
from luskin_core.validation import check_both_outcomes_per_group, check_group_labels, check_groups_argument

__all__ = [
    "BIN_CENTERS",
    "BIN_EDGES",
    "DEFAULT_ALPHAS",
    "GAP_GROWTH",
    "AlphaPoint",
    "AlphaSweep",
    "EqualizedDistributionClassifier",
    "alpha_sweep",
    "equalize_frame",
    "equalized_loss",
]

BIN_WIDTH = 0.02
BIN_CENTERS = np.round(np.arange(0.01, 1.0, 0.02), 10)  # 50 bins of width 0.02
BIN_EDGES = np.round(np.linspace(0.0, 1.0, 51), 10)
DEFAULT_ALPHAS = (0.0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.7, 0.9, 1.0)
GAP_GROWTH = 0.01   # a gap this much larger than plain logistic regression's is worth a warning
DEFAULT_FTOL = 2.220446049250313e-09  # scipy's L-BFGS-B default (factr = 1e7: "moderate accuracy")
_RIDGE = 1e-6       # relative ridge on the preconditioner's diagonal (for collinear one-hot columns)


class _SoftHistogramPenalty:
    """E_f and its gradient with respect to the scores, with preallocated buffers.

    Rows must be sorted so that each (group, class) segment is contiguous; ``segments`` lists
    (start, stop, group index, class) and ``ref`` is the reference group's index. Each row only
    touches the ``L`` bins within 8 kernel widths of its score (beyond that the kernel is below
    1e-13 of its peak), which cuts the work about threefold at the default bandwidth.

    The kernel values along a row's window follow a recurrence, so two exponentials per row give
    all of them: with ``d = s - c_first`` and ``a = 1 / (2 bandwidth^2)``,
    ``K_l = exp(-a (d - l w)^2) = K_{l-1} * exp(2 a w d) * exp(-a w^2 (2l - 1))`` (relative error a
    few 1e-15). For very narrow kernels, where those factors would leave floating point's range,
    every value is computed directly.
    """

    def __init__(
        self, n: int, segments: list[tuple[int, int, int, int]], ref: int, bandwidth: float
    ) -> None:
        self.segments = segments
        self.ref = ref
        nb = len(BIN_CENTERS)
        half = int(np.ceil(8.0 * bandwidth / BIN_WIDTH))
        self.L = L = min(nb, 2 * half + 1)
        self.half = half
        self.nb = nb
        self.a = a = 1.0 / (2.0 * bandwidth * bandwidth)
        # each row's kernel sums to about 1 over the bins, like the paper's box histogram
        self.kscale = BIN_WIDTH / (np.sqrt(2.0 * np.pi) * bandwidth)
        d_max = (L - 0.5) * BIN_WIDTH
        self.recurrence = (a * d_max * d_max < 600.0 and 2.0 * a * BIN_WIDTH * d_max < 600.0
                           and a * BIN_WIDTH * BIN_WIDTH * (2 * L) < 600.0)
        steps = np.arange(L)
        self.step_factor = np.exp(-a * BIN_WIDTH * BIN_WIDTH * (2 * steps - 1))
        self.offsets = steps * BIN_WIDTH
        seg_id = np.empty(n, dtype=np.int64)
        sizes = np.empty(len(segments))
        for k, (lo, hi, _, _) in enumerate(segments):
            seg_id[lo:hi] = k
            sizes[k] = hi - lo
        self.seg_base = seg_id * nb
        self.sizes = sizes
        self.neg_row_scale = -self.kscale / (bandwidth * bandwidth) / sizes[seg_id]
        self.K = np.empty((L, n))
        self.lo = np.zeros(n, dtype=np.int64)
        self.idx = np.empty(n, dtype=np.int64)
        self._t = np.empty(n)
        self._r = np.empty(n)
        self._d0 = np.empty(n)
        self._acc0 = np.empty(n)
        self._acc1 = np.empty(n)
        index = {(gi, cl): k for k, (_, _, gi, cl) in enumerate(segments)}
        # (segment, reference segment of the same class) for every non-reference segment
        self.pairs = [(k, index[ref, cl]) for (gi, cl), k in index.items() if gi != ref]

    def _kernel(self, d0: np.ndarray) -> np.ndarray:
        """K[l, i] = exp(-a (d0_i - l w)^2) for every row i and window position l."""
        K, a = self.K, self.a
        if self.recurrence:
            np.square(d0, out=K[0])
            K[0] *= -a
            np.exp(K[0], out=K[0])
            r = np.multiply(d0, 2.0 * a * BIN_WIDTH, out=self._r)
            np.exp(r, out=r)
            for step in range(1, self.L):
                np.multiply(K[step - 1], r, out=K[step])
                K[step] *= self.step_factor[step]
        else:
            np.subtract(d0[None, :], self.offsets[:, None], out=K)
            np.square(K, out=K)
            K *= -a
            np.exp(K, out=K)
        return K

    def __call__(self, s: np.ndarray) -> tuple[float, np.ndarray]:
        nb, L = self.nb, self.L
        lo = self.lo
        if L < nb:
            np.rint((s - 0.01) / BIN_WIDTH, out=self._t)
            lo[:] = self._t
            lo -= self.half
            np.clip(lo, 0, nb - L, out=lo)
        d0 = np.subtract(s, BIN_CENTERS[lo], out=self._d0)  # score minus its window's first centre
        K = self._kernel(d0)
        idx = np.add(self.seg_base, lo, out=self.idx)
        nseg = len(self.segments)
        size = nseg * nb
        flat = np.zeros(size)
        for step in range(L):
            flat[step:] += np.bincount(idx, weights=K[step], minlength=size)[: size - step]
        hist = flat.reshape(nseg, nb)
        hist *= self.kscale / self.sizes[:, None]
        dh = np.zeros((nseg, nb))
        value = 0.0
        for k, r in self.pairs:
            diff = hist[k] - hist[r]
            value += float(diff @ diff)
            dh[k] += 2.0 * diff
            dh[r] -= 2.0 * diff
        # dE/ds_i = -scale_i * sum_l dh[idx_i + l] K_li (d0_i - l w) = -scale_i (d0_i A_i - w B_i)
        dhf = dh.ravel()
        acc0, acc1, t = self._acc0, self._acc1, self._t
        acc0.fill(0.0)
        acc1.fill(0.0)
        for step in range(L):
            np.take(dhf[step:], idx, out=t)
            t *= K[step]
            acc0 += t
            if step:
                t *= step
                acc1 += t
        acc0 *= d0
        acc1 *= BIN_WIDTH
        acc0 -= acc1
        acc0 *= self.neg_row_scale
        return value, acc0


def _matvec(X: Any, w: np.ndarray) -> np.ndarray:
    """X @ w without BLAS threads (numpy's own loop for dense X, scipy.sparse otherwise)."""
    if sp.issparse(X):
        return np.asarray(X @ w).ravel()
    return np.einsum("ij,j->i", X, w)


def _rmatvec(X: Any, v: np.ndarray) -> np.ndarray:
    """X.T @ v without BLAS threads."""
    if sp.issparse(X):
        return np.asarray(X.T @ v).ravel()
    return np.einsum("ij,i->j", X, v)


class _Objective:
    """alpha * mean log-loss + (1 - alpha) * E_f and its gradient in the weights (then intercept).

    Validates the groups and sorts rows so each (group, class) segment is contiguous.
    """

    def __init__(
        self,
        X: Any,
        y01: np.ndarray,
        groups: Any,
        alpha: float,
        bandwidth: float,
        fit_intercept: bool,
    ) -> None:
        n, d = X.shape
        self.n, self.d, self.alpha, self.fit_intercept = n, d, alpha, fit_intercept
        order = np.arange(n)
        segments: list[tuple[int, int, int, int]] = []
        self.labels: np.ndarray | None = None
        self.ref = 0
        if groups is not None:
            g = check_group_labels(groups, n, action="training")
            labels, gi = np.unique(g, return_inverse=True)
            _check_groups_outcomes(y01, gi, labels)
            self.ref = int(np.argmax(np.bincount(gi)))
            key = gi * 2 + (1 - y01.astype(np.int64))
            order = np.argsort(key, kind="stable")
            ks = key[order]
            bounds = np.flatnonzero(np.diff(ks)) + 1
            for a, b in zip(np.concatenate([[0], bounds]), np.concatenate([bounds, [n]])):
                kk = int(ks[a])
                segments.append((int(a), int(b), kk // 2, 1 - kk % 2))
            self.labels = labels
        self.X = X[order]
        self.y = np.asarray(y01, dtype=np.float64)[order]
        self.penalty = (
            _SoftHistogramPenalty(n, segments, self.ref, bandwidth) if segments else None
        )

    def scores(self, theta: np.ndarray) -> np.ndarray:
        """The log-odds of every (sorted) training row."""
        z = _matvec(self.X, theta[: self.d])
        if self.fit_intercept:
            z += theta[self.d]
        return z

    def __call__(self, theta: np.ndarray, alpha: float | None = None) -> tuple[float, np.ndarray]:
        alpha = self.alpha if alpha is None else alpha
        d, n = self.d, self.n
        z = self.scores(theta)
        e = np.exp(-np.abs(z))
        ll = float(np.mean(np.log1p(e) + np.maximum(z, 0.0) - self.y * z))  # log(1 + exp(z)) - y z
        s = np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))  # expit(z), stably
        gz = (s - self.y) * (alpha / n)
        total = alpha * ll
        if self.penalty is not None and alpha < 1.0:
            ef, gs = self.penalty(s)
            total += (1.0 - alpha) * ef
            gz += (1.0 - alpha) * gs * s * (1.0 - s)
        grad = np.empty(len(theta), dtype=np.float64)
        grad[:d] = _rmatvec(self.X, gz)
        if self.fit_intercept:
            grad[d] = gz.sum()
        return total, grad

    def parts(self, theta: np.ndarray) -> tuple[float, float]:
        """(mean log-loss, E_f) at theta."""
        ll = self(theta, 1.0)[0]
        if self.penalty is None:
            return float(ll), 0.0
        ef = self(theta, 0.0)[0]
        return float(ll), float(ef)

    def whitening(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(R, R^-1)``, upper triangular, with ``R^T R`` the mean log-loss's Hessian at theta + a ridge.

        Identities when the Hessian cannot be factorised (e.g. every feature is zero).
        """
        n, d = self.n, self.d
        p = expit(self.scores(theta))
        w = p * (1.0 - p) / n
        X = self.X
        if sp.issparse(X):
            xtwx = np.asarray((X.T @ X.multiply(w[:, None])).todense())
        else:
            xtwx = X.T @ (X * w[:, None])
        if self.fit_intercept:
            xtw = _rmatvec(X, w)
            H = np.empty((d + 1, d + 1))
            H[:d, :d] = xtwx
            H[:d, d] = H[d, :d] = xtw
            H[d, d] = w.sum()
        else:
            H = np.array(xtwx, dtype=float)
        dim = len(H)
        scale = float(np.trace(H)) / dim
        if not (np.isfinite(scale) and scale > 0):
            return np.eye(dim), np.eye(dim)
        H[np.diag_indices(dim)] += _RIDGE * scale
        try:
            R = sla.cholesky(H, lower=False)
            return R, sla.solve_triangular(R, np.eye(dim), lower=False)
        except (np.linalg.LinAlgError, ValueError):
            return np.eye(dim), np.eye(dim)


def _check_groups_outcomes(y01: np.ndarray, gi: np.ndarray, labels: np.ndarray) -> None:
    """At least two groups, each with rows of both outcomes (see validation.py)."""
    check_both_outcomes_per_group(
        y01, labels[gi], labels.tolist(), purpose="equal score distributions",
        positive_need="its score distribution for that outcome cannot be compared",
        negative_need="its score distribution for that outcome cannot be compared",
        remedy="Use more data.",
    )


def _lbfgs(
    obj: _Objective, alpha: float, theta0: np.ndarray, *, maxiter: int, gtol: float, ftol: float
) -> tuple[np.ndarray, int, bool, str]:
    """Minimise the objective at ``alpha`` from ``theta0`` in whitened coordinates.

    Returns (theta, iterations, converged, scipy's message).
    """
    R, W = obj.whitening(theta0)  # theta = W phi, phi = R theta

    def fun(phi: np.ndarray) -> tuple[float, np.ndarray]:
        value, grad = obj(np.einsum("ij,j->i", W, phi), alpha)
        return value, np.einsum("ij,i->j", W, grad)

    phi0 = np.einsum("ij,j->i", R, theta0)
    res = minimize(fun, phi0, jac=True, method="L-BFGS-B",
                   options={"maxiter": maxiter, "gtol": gtol, "ftol": ftol})
    theta = np.einsum("ij,j->i", W, res.x)
    return theta, int(res.nit), bool(res.status == 0), str(res.message)


def equalized_loss(
    theta: Any,
    X: Any,
    y: Any,
    groups: Any,
    *,
    alpha: float,
    bandwidth: float = 0.02,
    fit_intercept: bool = True,
) -> tuple[float, np.ndarray]:
    """The training loss and its gradient at ``theta`` (weights, then intercept); y is 0/1.

    Exposed so that the analytic gradient can be checked against finite differences.
    """
    X = np.asarray(X, dtype=np.float64)
    obj = _Objective(X, np.asarray(y, dtype=np.float64), groups, alpha, bandwidth, fit_intercept)
    return obj(np.asarray(theta, dtype=np.float64))


def _not_converged_sentence(alpha: float, iterations: int, message: str) -> str:
    if "ITERATIONS REACHED LIMIT" in message.upper():
        why = f"in {iterations} iterations (the limit)"
    else:
        why = f"after {iterations} iterations: the optimiser could not lower the loss further ({message.lower()})"
    return (f"The fit at alpha = {alpha:g} did not converge {why}; its figures may still move with more "
            "iterations (max_iter).")


class EqualizedDistributionClassifier(ClassifierMixin, BaseEstimator):
    """Logistic regression whose score distributions are pulled together across groups.

    Parameters
    ----------
    alpha : weight of the log-loss in [0, 1]; ``1 - alpha`` weighs the histogram distance.
        1 is plain logistic regression, near 0 equal score distributions (the paper recommends
        0.1-0.2).
    bandwidth : standard deviation of the Gaussian kernel that replaces the histogram's box.
    solver : ``"lbfgs"`` (scipy L-BFGS-B with the analytic gradient, in whitened coordinates;
        default) or ``"momentum"`` (the paper: gradient descent with momentum).
    fit_intercept : learn an intercept.
    max_iter : iteration limit; ``None`` means 500 for lbfgs and 2000 (the paper's) for momentum.
    tol : gradient tolerance of L-BFGS-B (in whitened coordinates, see the module doc); for the
        momentum solver, ``converged_`` says whether the final gradient is within ``tol``.
    ftol : L-BFGS-B also stops when one iteration lowers the loss by less than ``ftol`` times
        max(|loss|, 1) (scipy's default).
    learning_rate, momentum : momentum solver settings (paper: 1 and 0.9).
    init : ``"lr"`` (default) starts from the plain logistic regression solution, so that every
        alpha moves away from the accurate model and a fit does not depend on other fits;
        ``"zeros"`` starts from all-zero weights (every score 0.5, where E_f is already 0).

    Learned attributes: ``classes_``, ``coef_`` (1, n_features), ``intercept_`` (1,),
    ``n_features_in_``, ``n_iter_``, ``converged_``, ``convergence_message_``, ``loss_``,
    ``log_loss_``, ``fairness_loss_`` (E_f at the solution, on the training rows), ``groups_``
    and ``reference_group_`` (None without groups).
    """

    def __init__(
        self,
        alpha: float = 0.2,
        bandwidth: float = 0.02,
        solver: str = "lbfgs",
        fit_intercept: bool = True,
        max_iter: int | None = None,
        tol: float = 1e-5,
        ftol: float = DEFAULT_FTOL,
        learning_rate: float = 1.0,
        momentum: float = 0.9,
        init: str = "lr",
    ) -> None:
        self.alpha = alpha
        self.bandwidth = bandwidth
        self.solver = solver
        self.fit_intercept = fit_intercept
        self.max_iter = max_iter
        self.tol = tol
        self.ftol = ftol
        self.learning_rate = learning_rate
        self.momentum = momentum
        self.init = init

    def __sklearn_tags__(self):  # type: ignore[no-untyped-def]
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.sparse = True
        return tags

    # -- fitting ------------------------------------------------------------------------------

    def _check_params(self) -> None:
        try:
            alpha = float(self.alpha)
        except (TypeError, ValueError):
            raise LuskinError(f"alpha must be a number between 0 and 1, not '{self.alpha}'.") from None
        if not 0.0 <= alpha <= 1.0:
            raise LuskinError(f"alpha must be between 0 and 1 (got {alpha}).")
        if not (np.isfinite(self.bandwidth) and self.bandwidth > 0):
            raise LuskinError("The histogram bandwidth must be a positive number, e.g. 0.02.")
        if self.solver not in ("lbfgs", "momentum"):
            raise LuskinError(f"Unknown solver '{self.solver}': choose 'lbfgs' or 'momentum'.")
        if self.init not in ("lr", "zeros"):
            raise LuskinError(f"Unknown init '{self.init}': choose 'lr' or 'zeros'.")
        if self.max_iter is not None and int(self.max_iter) < 1:
            raise LuskinError("max_iter must be at least 1.")
        for name in ("tol", "ftol"):
            value = getattr(self, name)
            if not (np.isfinite(value) and value >= 0):
                raise LuskinError(f"{name} must be a number of 0 or more.")

    def fit(
        self,
        X: Any,
        y: Any,
        groups: Any = None,
        *,
        sensitive_features: Any = None,
        coef_init: Any = None,
    ) -> EqualizedDistributionClassifier:
        """Fit on features X, two-valued outcome y and (optionally) each row's group label.

        The group labels may be given as ``groups`` or, as in fairlearn, ``sensitive_features``.
        ``coef_init`` (coefficients, then the intercept) replaces the start chosen by ``init``;
        the alpha sweep passes the plain logistic regression solution it computed once. A fit
        that stops without converging warns (``sklearn.exceptions.ConvergenceWarning``).
        """
        if groups is not None or sensitive_features is not None:
            groups = check_groups_argument(groups, sensitive_features)
        self._fit(X, y, groups, coef_init)
        if not self.converged_:
            _warnings.warn(self.convergence_sentence(), ConvergenceWarning, stacklevel=2)
        return self

    def convergence_sentence(self) -> str:
        """A plain sentence when the fit did not converge ('' when it did)."""
        check_is_fitted(self)
        if self.converged_:
            return ""
        return _not_converged_sentence(float(self.alpha), int(self.n_iter_[0]), self.convergence_message_)

    def _fit(self, X: Any, y: Any, groups: Any, coef_init: Any) -> EqualizedDistributionClassifier:
        self._check_params()
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if len(self.classes_) != 2:
            if len(self.classes_) < 2:
                raise LuskinError(
                    "Every row has the same outcome, so there is nothing to learn: the classifier "
                    "needs rows of both outcomes (one class only)."
                )
            raise LuskinError(
                "Only binary classification is supported: the outcome must have exactly two "
                f"values, not {len(self.classes_)}."
            )
        yb = (y == self.classes_[1]).astype(np.float64)
        d = X.shape[1]
        alpha = float(self.alpha)
        obj = _Objective(X, yb, groups, alpha, float(self.bandwidth), bool(self.fit_intercept))
        self.groups_ = obj.labels
        self.reference_group_ = None if obj.labels is None else obj.labels[obj.ref]
        fi = obj.fit_intercept
        theta0 = np.zeros(d + int(fi))
        limits = {
            "maxiter": 500 if self.max_iter is None else int(self.max_iter),
            "gtol": float(self.tol),
            "ftol": float(self.ftol),
        }
        if coef_init is not None:
            coef_init = np.asarray(coef_init, dtype=float).ravel()
            if coef_init.shape != theta0.shape:
                raise ValueError("coef_init needs one value per feature (+ the intercept).")
            theta0 = coef_init.copy()
        elif self.init == "lr" and obj.penalty is not None and alpha < 1.0:
            theta0 = _lbfgs(obj, 1.0, theta0, **limits)[0]
        if self.solver == "lbfgs":
            theta, nit, converged, message = _lbfgs(obj, alpha, theta0, **limits)
        else:
            max_iter = 2000 if self.max_iter is None else int(self.max_iter)
            theta = theta0
            v = np.zeros_like(theta)
            lr, mom = float(self.learning_rate), float(self.momentum)
            for _ in range(max_iter):
                _, grad = obj(theta)
                v = mom * v - lr * grad
                theta = theta + v
            nit = max_iter
            converged = bool(np.max(np.abs(obj(theta)[1]), initial=0.0) <= float(self.tol))
            message = ("the paper's fixed number of momentum steps; final gradient within tol" if converged
                       else "ITERATIONS REACHED LIMIT")
        self.n_iter_ = np.array([nit])
        self.converged_ = converged
        self.convergence_message_ = message
        self.coef_ = theta[:d].reshape(1, d).copy()
        self.intercept_ = np.array([theta[d] if fi else 0.0])
        self.loss_ = float(obj(theta)[0])
        self.log_loss_, self.fairness_loss_ = obj.parts(theta)
        return self

    # -- prediction ---------------------------------------------------------------------------

    def decision_function(self, X: Any) -> np.ndarray:
        """Log-odds of the second class (the positive outcome)."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        return _matvec(X, self.coef_[0]) + self.intercept_[0]

    def predict_proba(self, X: Any) -> np.ndarray:
        """Probabilities of the two classes, in the order of ``classes_``."""
        p = expit(self.decision_function(X))
        return np.column_stack([1.0 - p, p])

    def predict(self, X: Any) -> np.ndarray:
        """The positive class where the probability is above 0.5 (as LogisticRegression)."""
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(int)]


# --------------------------------------------------------------------------------------------
# alpha sweep
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AlphaPoint:
    """The classifier trained at one alpha, measured on the test rows.

    ``groups``: label -> {"tpr", "fpr"} at the 0.5 probability threshold; ``histograms``:
    label -> {"positive": counts, "negative": counts} of test scores in the 50 bins ``BIN_EDGES``.
    ``converged`` and ``iterations`` describe the fit; ``warnings`` says in plain sentences what
    went wrong at this alpha (see the module's "Warnings").
    """

    alpha: float
    accuracy: float
    groups: dict[str, dict[str, float]]
    histograms: dict[str, dict[str, list[int]]]
    loss: float
    fairness_loss: float
    seconds: float
    converged: bool = True
    iterations: int = 0
    warnings: tuple[str, ...] = ()

    @property
    def tpr_gap(self) -> float:
        v = [r["tpr"] for r in self.groups.values()]
        return float(max(v) - min(v))

    @property
    def fpr_gap(self) -> float:
        v = [r["fpr"] for r in self.groups.values()]
        return float(max(v) - min(v))

    def to_dict(self) -> dict[str, Any]:
        return {
            "alpha": self.alpha,
            "accuracy": self.accuracy,
            "groups": self.groups,
            "tpr_gap": self.tpr_gap,
            "fpr_gap": self.fpr_gap,
            "histograms": self.histograms,
            "train_loss": self.loss,
            "train_fairness_loss": self.fairness_loss,
            "seconds": self.seconds,
            "converged": self.converged,
            "iterations": self.iterations,
            "warnings": list(self.warnings),
        }


@dataclass(frozen=True)
class AlphaSweep:
    """One point per alpha (ascending), the bin edges of the histograms and the group labels."""

    points: tuple[AlphaPoint, ...]
    bin_edges: tuple[float, ...]
    group_labels: tuple[str, ...]
    reference_group: str
    n_train: int
    n_test: int

    @property
    def alphas(self) -> tuple[float, ...]:
        return tuple(p.alpha for p in self.points)

    @property
    def warnings(self) -> tuple[str, ...]:
        """Every point's warnings, in ascending alpha."""
        return tuple(w for p in self.points for w in p.warnings)

    @property
    def converged(self) -> bool:
        """Whether every fit of the sweep converged."""
        return all(p.converged for p in self.points)

    def point(self, alpha: float) -> AlphaPoint:
        """The point whose alpha is nearest to the given one (for a slider)."""
        return min(self.points, key=lambda p: abs(p.alpha - alpha))

    def to_dict(self) -> dict[str, Any]:
        return {
            "points": [p.to_dict() for p in self.points],
            "bin_edges": list(self.bin_edges),
            "group_labels": list(self.group_labels),
            "reference_group": self.reference_group,
            "rows": {"train": self.n_train, "test": self.n_test},
            "converged": self.converged,
            "warnings": list(self.warnings),
        }


def _rates(y: np.ndarray, pred: np.ndarray, g: np.ndarray, labels: Sequence[Any]) -> dict[str, dict[str, float]]:
    out = {}
    for lab in labels:
        m = g == lab
        P = int(y[m].sum())
        N = int(m.sum()) - P
        out[str(lab)] = {
            "tpr": float(pred[m & (y == 1)].sum() / P) if P else float("nan"),
            "fpr": float(pred[m & (y == 0)].sum() / N) if N else float("nan"),
        }
    return out


def alpha_sweep(
    X_train: Any,
    y_train: Any,
    g_train: Any,
    X_test: Any,
    y_test: Any,
    g_test: Any,
    alphas: Sequence[float] = DEFAULT_ALPHAS,
    *,
    bandwidth: float = 0.02,
    solver: str = "lbfgs",
    warm_start: bool = True,
    progress: Callable[[float, str], None] | None = None,
) -> AlphaSweep:
    """Train one equalized-distribution classifier per alpha and measure each on the test rows.

    y must be 0/1. With ``warm_start`` the plain logistic regression solution is computed once
    and every alpha starts from it: the same start a single fit uses (``init="lr"``), so each
    point equals ``EqualizedDistributionClassifier(alpha=a).fit(...)`` on its own. Points come
    back in ascending alpha, each saying whether its fit converged and, in ``warnings``, what
    backfired. ``progress(fraction, message)`` is told before each alpha (a page's progress bar).
    """
    alphas = sorted({float(a) for a in alphas})
    if not alphas:
        raise LuskinError("Give at least one alpha between 0 and 1.")
    for a in alphas:
        if not 0.0 <= a <= 1.0:
            raise LuskinError(f"Every alpha must be between 0 and 1 (got {a}).")
    yt = np.asarray(y_test).astype(np.int64)
    gt = np.asarray(g_test)
    labels = [str(v) for v in np.unique(np.asarray(g_train))]
    gt = gt.astype(str)
    fits: list[tuple[float, EqualizedDistributionClassifier, float]] = []
    init = None
    n_train = int(np.asarray(y_train).shape[0])
    g_train = np.asarray(g_train).astype(str)
    if warm_start:
        lr = EqualizedDistributionClassifier(alpha=1.0, bandwidth=bandwidth)._fit(X_train, y_train, g_train, None)
        init = np.concatenate([lr.coef_[0], lr.intercept_])
    for done, a in enumerate(sorted(alphas, reverse=True)):
        if progress is not None:
            progress(done / len(alphas), f"Training the model for alpha = {a:g} ({done + 1} of {len(alphas)})")
        t0 = time.perf_counter()
        clf = EqualizedDistributionClassifier(alpha=a, bandwidth=bandwidth, solver=solver)
        clf._fit(X_train, y_train, g_train, init)  # no ConvergenceWarning: the point says it in words
        fits.append((a, clf, time.perf_counter() - t0))
    share = float(np.mean(yt)) if len(yt) else 0.0
    majority = max(share, 1.0 - share)
    points: list[AlphaPoint] = []
    measured = {a: _measure(clf, X_test, yt, gt, labels) for a, clf, _ in fits}
    plain = measured.get(1.0)
    for a, clf, seconds in fits:
        accuracy, rates, hists = measured[a]
        notes = [] if clf.converged_ else [clf.convergence_sentence()]
        if accuracy < majority:
            common = "positive" if share >= 0.5 else "negative"
            notes.append(
                f"At alpha = {a:g} the model's test accuracy ({100 * accuracy:.1f}%) is below what always "
                f"predicting the most common outcome ({common}) gets ({100 * majority:.1f}%)."
            )
        if plain is not None and a < 1.0:
            for key, name in (("tpr", "true positive rate"), ("fpr", "false positive rate")):
                gap, base = _gap(rates, key), _gap(plain[1], key)
                if gap - base >= GAP_GROWTH:
                    notes.append(
                        f"At alpha = {a:g} the gap in {name} on the test rows ({gap:.3f}) is larger than plain "
                        f"logistic regression's (alpha = 1: {base:.3f}): equalizing the score distributions "
                        "did not narrow it here."
                    )
        points.append(
            AlphaPoint(
                alpha=a, accuracy=accuracy, groups=rates, histograms=hists, loss=clf.loss_,
                fairness_loss=clf.fairness_loss_, seconds=seconds, converged=bool(clf.converged_),
                iterations=int(clf.n_iter_[0]), warnings=tuple(notes),
            )
        )
    points.sort(key=lambda p: p.alpha)
    if progress is not None:
        progress(1.0, f"{len(alphas)} models trained")
    return AlphaSweep(
        points=tuple(points),
        bin_edges=tuple(float(e) for e in BIN_EDGES),
        group_labels=tuple(labels),
        reference_group=str(fits[-1][1].reference_group_),
        n_train=n_train,
        n_test=len(yt),
    )


def _gap(rates: dict[str, dict[str, float]], key: str) -> float:
    values = [r[key] for r in rates.values()]
    return float(max(values) - min(values))


def _measure(
    clf: EqualizedDistributionClassifier, X_test: Any, yt: np.ndarray, gt: np.ndarray, labels: Sequence[str]
) -> tuple[float, dict[str, dict[str, float]], dict[str, dict[str, list[int]]]]:
    """Test accuracy, TPR/FPR per group at 0.5, and the groups' score histograms."""
    s = clf.predict_proba(X_test)[:, 1]
    pred = (s > 0.5).astype(np.int64)
    hists = {}
    for lab in labels:
        m = gt == lab
        hists[lab] = {
            "positive": np.histogram(s[m & (yt == 1)], bins=BIN_EDGES)[0].tolist(),
            "negative": np.histogram(s[m & (yt == 0)], bins=BIN_EDGES)[0].tolist(),
        }
    return float(np.mean(pred == yt)), _rates(yt, pred, gt, labels), hists


def equalize_frame(
    frame: pd.DataFrame,
    spec: Any,
    *,
    alphas: Sequence[float] = DEFAULT_ALPHAS,
    features: Sequence[str] | None = None,
    preprocess: Any = None,
    seed: int = 0,
    bandwidth: float = 0.02,
    solver: str = "lbfgs",
    progress: Callable[[float, str], None] | None = None,
) -> AlphaSweep:
    """The alpha sweep on a frame described by an AuditSpec (what the CLI and the page call).

    Rows split 60/20/20 (train / validation / test, seeded and stratified by outcome and group,
    the same split as the thresholds tool); the classifier trains on the 60% and is measured on
    the 20% test rows (the validation rows are not used). ``preprocess`` is an unfitted sklearn
    transformer over ``features`` (e.g. the paper's COMPAS encoding + PCA); by default the
    features are imputed, standardised and one-hot encoded. The protected column is never a
    feature unless named in ``features``.
    """
    from luskin_core import models
    from luskin_core.pipeline import prepare_split

    split = prepare_split(frame, spec, shape="60/20/20", seed=seed, min_rows=10, features=features,
                          purpose="Training the equalized-distribution classifier splits the data 60/20/20 and")
    data, y, g = split.frame, split.y.astype(np.int64), split.groups.astype(str)
    features = list(split.features)
    train_idx, test_idx = split.part("train"), split.part("test")
    X = data[features]
    if preprocess is None:
        preprocess = models.make_model("LR", X.iloc[train_idx], features, random_state=seed)[:-1]
    Xtr = preprocess.fit_transform(X.iloc[train_idx])
    Xte = preprocess.transform(X.iloc[test_idx])
    if sp.issparse(Xtr):
        Xtr, Xte = sp.csr_matrix(Xtr), sp.csr_matrix(Xte)
    return alpha_sweep(
        Xtr, y[train_idx], g[train_idx], Xte, y[test_idx], g[test_idx], alphas,
        bandwidth=bandwidth, solver=solver, progress=progress,
    )
