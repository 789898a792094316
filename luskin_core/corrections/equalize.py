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

Fitting (L-BFGS, the default solver: our own numpy L-BFGS with scipy L-BFGS-B's stopping rules,
see ``_minimize_lbfgs`` for why not scipy's). The weights are optimised in coordinates whitened by
the log-loss's curvature at the start (``theta = R^-1 phi`` with ``R^T R`` the Hessian of the mean
log-loss there, plus a tiny ridge): one-hot columns that overlap the intercept and features on very
different scales then no longer slow the search, and the tolerances mean the same whatever the
features' units. The optimiser sees the loss divided by max(alpha, 0.1), so that the log-loss
part weighs 1 and the tolerances mean the same precision at every alpha (at alpha = 0.2 without
groups the fit is exactly plain logistic regression's). A fit stops when the gradient's largest
entry is below ``tol`` (1e-5) or one iteration lowers that loss by less than ``ftol`` (scipy's
default 2.2e-9, relative to max(|loss|, 1)), and records whether it converged (``converged_``,
the iterations in ``n_iter_``, the stopping rule in ``convergence_message_``); a fit that stops at
``max_iter`` (or whose line search fails twice) says so: a ``ConvergenceWarning`` from the
estimator, a sentence in the sweep's ``warnings`` (which the page, the command line and the report
show). Products with the features, and the optimiser's own, use no BLAS threads (numpy's own
loops for dense features, scipy.sparse for sparse ones), so nothing here depends on, or changes,
the process's thread settings; every buffer belongs to one fit, so fits in different threads do
not meet.

The alpha sweep checks, groups and sorts the training rows once, fits plain logistic regression
once, and starts every alpha from it (``start="lr"``, so each point equals a fit on its own), or
each alpha from the solution at the alpha above (``start="path"``, a warm start). The loss is not
convex for small alpha: it has several local minima, and the two starts can settle in different
ones. On Adult (29,304 training rows x 49 features) the cheaper penalty, the numpy L-BFGS and the
shared preparation make the 11-alpha sweep several times faster; the warm path saves only a little
more (figures in benchmarks/results/bench_equalize.md and code_timings.md).

Warnings (``AlphaPoint.warnings``, ``AlphaSweep.warnings``): a fit that did not converge; a test
accuracy below what always predicting the most common outcome gets; a TPR or FPR gap at least
``GAP_GROWTH`` (one point) larger than plain logistic regression's (alpha = 1, when in the sweep).
"""

from __future__ import annotations

import time
import warnings as _warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
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

from luskin_core.corrections.correction import ERROR_RATES, CorrectionResult, CorrectionStage, GroupCounts
from luskin_core.errors import LuskinError
from luskin_core.formatting import below_majority
from luskin_core.spec.names import GroupNames
from luskin_core.spec.options import ALPHA, DEFAULT_ALPHAS, OPTION_CONSTRAINTS, EqualizeOptions
from luskin_core.spec.validation import check_both_outcomes_per_group, check_group_labels, check_groups_argument

__all__ = [
    "BIN_CENTERS",
    "BIN_EDGES",
    "DEFAULT_ALPHAS",
    "GAP_GROWTH",
    "AlphaPoint",
    "AlphaSweep",
    "EqualizeOptions",
    "EqualizedDistributionClassifier",
    "alpha_sweep",
    "equalize_frame",
    "equalized_loss",
]

BIN_WIDTH = 0.02
BIN_CENTERS = np.round(np.arange(0.01, 1.0, 0.02), 10)  # 50 bins of width 0.02
BIN_EDGES = np.round(np.linspace(0.0, 1.0, 51), 10)
GAP_GROWTH = 0.01   # a gap this much larger than plain logistic regression's is worth a warning
DEFAULT_FTOL = 2.220446049250313e-09  # scipy's L-BFGS-B default (factr = 1e7: "moderate accuracy")
# The optimiser sees the loss divided by max(alpha, _LOSS_FLOOR): the log-loss part then weighs 1
# whatever alpha, so the tolerances mean the same precision in the weights at every alpha >= 0.1
# (and alpha = 0.2 without groups is exactly plain logistic regression, as at alpha = 1).
_LOSS_FLOOR = 0.1
_DENSE_WHITENING_MAX = 1500  # columns (+ intercept) up to which the full Hessian whitens the problem
_RIDGE = 1e-6       # relative ridge on the preconditioner's diagonal (for collinear one-hot columns)


class _SoftHistogramPenalty:
    """E_f and its gradient with respect to the scores, with preallocated buffers.

    Rows must be sorted so that each (group, class) segment is contiguous; ``segments`` lists
    (start, stop, group index, class) and ``ref`` is the reference group's index.

    Each row only touches the ``L = 2 h`` bins around its score, ``h`` bins on either side
    (``h`` the smallest whole number of bins covering 8 kernel widths): every bin left out is at
    least 8 widths away, where the kernel is below 1.3e-14 of its peak. That is 16 of the 50
    bins at the default bandwidth. Each call orders the rows by (segment, first bin of their
    window) with a stable radix sort of a small integer key, so that rows sharing a window form
    contiguous runs: the histogram is then a running sum over each run (``np.add.reduceat``) and
    the gradient reads ``dE/dh`` once per run, in place of a ``bincount`` and a gather over every
    row at every window position (about 1.7x less CPU time on Adult's 29,304 rows).

    The kernel values along a row's window follow a recurrence, so two exponentials per row give
    all of them: with ``d = s - c_first`` and ``a = 1 / (2 bandwidth^2)``,
    ``K_l = exp(-a (d - l w)^2) = K_{l-1} * exp(2 a w d) * exp(-a w^2 (2l - 1))`` (relative error a
    few 1e-15). The histogram pass and the gradient pass each run the recurrence over one
    row-length buffer (recomputing is cheaper than keeping an L x n array, which leaves the
    cache). For very narrow kernels, where those factors would leave floating point's range,
    every value is computed directly. Everything is float64: E_f is a difference of sums of
    thousands of kernel values, and the line search compares losses to ~1e-10.
    """

    def __init__(
        self, n: int, segments: list[tuple[int, int, int, int]], ref: int, bandwidth: float
    ) -> None:
        self.segments = segments
        self.ref = ref
        self.n = n
        nb = len(BIN_CENTERS)
        half = int(np.ceil(8.0 * bandwidth / BIN_WIDTH))
        self.L = L = min(nb, 2 * half)
        self.half = half
        self.nb = nb
        self.a = a = 1.0 / (2.0 * bandwidth * bandwidth)
        # each row's kernel sums to about 1 over the bins, like the paper's box histogram
        self.kscale = BIN_WIDTH / (np.sqrt(2.0 * np.pi) * bandwidth)
        d_max = (L - 0.5) * BIN_WIDTH  # the farthest a score is from its window's first centre
        self.recurrence = (a * d_max * d_max < 600.0 and 2.0 * a * BIN_WIDTH * d_max < 600.0
                           and a * BIN_WIDTH * BIN_WIDTH * (2 * L) < 600.0)
        steps = np.arange(L)
        self.steps = steps
        self.step_factor = np.exp(-a * BIN_WIDTH * BIN_WIDTH * (2 * steps - 1))
        seg_id = np.empty(n, dtype=np.int64)
        sizes = np.empty(len(segments))
        for k, (lo, hi, _, _) in enumerate(segments):
            seg_id[lo:hi] = k
            sizes[k] = hi - lo
        self.seg_base = seg_id * nb
        self.sizes = sizes
        self.neg_row_scale = -self.kscale / (bandwidth * bandwidth) / sizes[seg_id]
        self.size = len(segments) * nb
        # numpy's stable argsort is a radix sort for 16-bit keys
        self.key_dtype: type = np.int16 if self.size < np.iinfo(np.int16).max else np.int64
        self._key = np.empty(n, dtype=np.int64)
        self._skey = np.empty(n, dtype=self.key_dtype)
        self._t = np.empty(n)
        self._d0 = np.empty(n)
        self._k0 = np.empty(n)
        self._r = np.empty(n)
        self._k = np.empty(n)
        self._acc0 = np.empty(n)
        self._acc1 = np.empty(n)
        self._out = np.empty(n)
        index = {(gi, cl): k for k, (_, _, gi, cl) in enumerate(segments)}
        # (segment, reference segment of the same class) for every non-reference segment
        self.pairs = [(k, index[ref, cl]) for (gi, cl), k in index.items() if gi != ref]

    def _kernel_start(self, d0: np.ndarray) -> None:
        """K_0 = exp(-a d0^2) into ``_k0`` and the ratio exp(2 a w d0) into ``_r`` (recurrence)."""
        if self.recurrence:
            k0 = np.square(d0, out=self._k0)
            k0 *= -self.a
            np.exp(k0, out=k0)
            r = np.multiply(d0, 2.0 * self.a * BIN_WIDTH, out=self._r)
            np.exp(r, out=r)

    def _kernel(self, step: int, d0: np.ndarray) -> np.ndarray:
        """K_step = exp(-a (d0 - step w)^2) in the buffer ``_k`` (call with step = 0, 1, 2, ...)."""
        k = self._k
        if not self.recurrence:
            np.subtract(d0, step * BIN_WIDTH, out=k)
            np.square(k, out=k)
            k *= -self.a
            np.exp(k, out=k)
        elif step == 0:
            np.copyto(k, self._k0)
        else:
            k *= self._r
            k *= self.step_factor[step]
        return k

    def __call__(self, s: np.ndarray) -> tuple[float, np.ndarray]:
        """(E_f, dE_f/ds) at the scores s (probabilities, in the segments' row order).

        The gradient is a buffer of this object, overwritten by the next call.
        """
        nb, L, n = self.nb, self.L, self.n
        key = self._key
        if L < nb:  # the first bin of each row's window, kept inside the 50 bins
            t = np.subtract(s, BIN_CENTERS[0], out=self._t)
            t *= 1.0 / BIN_WIDTH
            np.floor(t, out=t)
            key[:] = t
            np.subtract(key, self.half - 1, out=key)
            np.clip(key, 0, nb - L, out=key)
        else:
            key.fill(0)
        first = BIN_CENTERS[key]
        np.add(key, self.seg_base, out=key)
        skey = self._skey
        skey[:] = key
        order = np.argsort(skey, kind="stable")  # rows sharing a window side by side
        ks = key[order]
        starts = np.concatenate(([0], np.flatnonzero(np.diff(ks)) + 1))
        counts = np.diff(np.append(starts, n))
        runs = ks[starts]
        d0 = np.take(s, order, out=self._d0)
        d0 -= first[order]  # each score minus its window's first centre, in sorted order
        self._kernel_start(d0)
        sums = np.empty((L, len(runs)))  # each run's kernel mass at each window position
        for step in range(L):
            np.add.reduceat(self._kernel(step, d0), starts, out=sums[step])
        cells = runs[None, :] + self.steps[:, None]
        flat = np.bincount(cells.ravel(), weights=sums.ravel(), minlength=self.size)
        hist = flat.reshape(len(self.segments), nb)
        hist *= self.kscale / self.sizes[:, None]
        dh = np.zeros_like(hist)
        value = 0.0
        for k, r in self.pairs:
            diff = hist[k] - hist[r]
            value += float(np.einsum("i,i->", diff, diff))
            dh[k] += 2.0 * diff
            dh[r] -= 2.0 * diff
        # dE/ds_i = -scale_i * sum_l dh[key_i + l] K_li (d0_i - l w) = -scale_i (d0_i A_i - w B_i)
        dh_cells = dh.ravel()[cells]  # (L, runs): dE/dh at each run's window
        acc0, acc1 = self._acc0, self._acc1
        acc0.fill(0.0)
        acc1.fill(0.0)
        for step in range(L):
            kv = self._kernel(step, d0)
            t = np.repeat(dh_cells[step], counts)
            t *= kv
            acc0 += t
            if step:
                t *= step
                acc1 += t
        acc0 *= d0
        acc1 *= BIN_WIDTH
        acc0 -= acc1
        acc0 *= self.neg_row_scale[order]
        out = self._out
        out[order] = acc0
        return value, out


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

    Validates the groups and sorts rows so each (group, class) segment is contiguous. Built once
    per fit, or once per alpha sweep and reused for every alpha (the sorting, the checks and the
    buffers are the same); it holds buffers, so one object serves one thread at a time.
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
        self._e = np.empty(n)
        self._s = np.empty(n)
        self._gz = np.empty(n)
        self._neg = np.empty(n, dtype=bool)
        self.last_parts = (np.nan, np.nan)

    def scores(self, theta: np.ndarray) -> np.ndarray:
        """The log-odds of every (sorted) training row."""
        z = _matvec(self.X, theta[: self.d])
        if self.fit_intercept:
            z += theta[self.d]
        return z

    def __call__(
        self, theta: np.ndarray, alpha: float | None = None, *, with_penalty: bool = False
    ) -> tuple[float, np.ndarray]:
        """(loss, gradient) at theta; ``last_parts`` is then (mean log-loss, E_f or nan).

        E_f is computed when it has weight (alpha < 1) or when ``with_penalty`` asks for it.
        Products over rows use numpy's own loops, not BLAS: a BLAS dot product over the rows
        starts threads, which is slow on a busy machine (5 ms instead of 0.05 ms on 29,304 rows).
        """
        alpha = self.alpha if alpha is None else alpha
        d, n = self.d, self.n
        z = self.scores(theta)
        e, s, gz, neg = self._e, self._s, self._gz, self._neg
        np.less(z, 0.0, out=neg)
        np.abs(z, out=e)
        np.negative(e, out=e)
        np.exp(e, out=e)                      # exp(-|z|), in (0, 1]
        np.log1p(e, out=s)                    # log(1 + exp(z)) - y z = log1p(exp(-|z|)) + max(z, 0) - y z
        np.maximum(z, 0.0, out=gz)
        ll = (float(s.sum()) + float(gz.sum()) - float(np.einsum("i,i->", self.y, z))) / n
        np.add(e, 1.0, out=s)
        np.reciprocal(s, out=s)               # 1 / (1 + exp(-|z|))
        np.multiply(s, e, out=s, where=neg)   # expit(z), stably on both sides
        np.subtract(s, self.y, out=gz)
        gz *= alpha / n
        total = alpha * ll
        ef = np.nan
        if self.penalty is not None and (alpha < 1.0 or with_penalty):
            ef, gs = self.penalty(s)
            if alpha < 1.0:
                total += (1.0 - alpha) * ef
                gs *= s
                np.subtract(1.0, s, out=e)
                gs *= e
                gs *= 1.0 - alpha
                gz += gs
        elif self.penalty is None:
            ef = 0.0
        self.last_parts = (ll, float(ef))
        grad = np.empty(len(theta), dtype=np.float64)
        grad[:d] = _rmatvec(self.X, gz)
        if self.fit_intercept:
            grad[d] = gz.sum()
        return total, grad

    def parts(self, theta: np.ndarray) -> tuple[float, float]:
        """(mean log-loss, E_f) at theta, from one evaluation."""
        self(theta, with_penalty=True)
        return self.last_parts

    def whitening(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(R, R^-1)``, upper triangular, with ``R^T R`` the mean log-loss's Hessian at theta + a ridge.

        Identities when the Hessian cannot be factorised (e.g. every feature is zero). The
        Hessian is ``X^T diag(w) X``: for sparse X the product of ``sqrt(w) X`` with itself
        (scipy.sparse), for dense X numpy's einsum (no BLAS threads).

        With more than ``_DENSE_WHITENING_MAX`` columns (one-hot text: COMPAS with every column is
        about 12,000) the full Hessian would be a dense d x d matrix (1.2 GB, minutes to factorise,
        and every step a d x d product): its diagonal is used instead, returned as two vectors.
        """
        n, d = self.n, self.d
        z = self.scores(theta)
        p = np.exp(-np.abs(z))
        w = p / (1.0 + p) ** 2 / n          # expit(z) (1 - expit(z)) / n
        X = self.X
        if d + int(self.fit_intercept) > _DENSE_WHITENING_MAX:
            if sp.issparse(X):
                diag = np.asarray(X.multiply(X).T @ w).ravel()
            else:
                diag = np.einsum("ni,ni,n->i", X, X, w)
            if self.fit_intercept:
                diag = np.append(diag, w.sum())
            scale = float(diag.mean()) if len(diag) else 0.0
            if not (np.isfinite(scale) and scale > 0):
                ones = np.ones(len(diag))
                return ones, ones
            root = np.sqrt(diag + _RIDGE * scale)
            return root, 1.0 / root
        if sp.issparse(X):
            A = sp.csr_matrix(X.multiply(np.sqrt(w)[:, None]))
            xtwx = (A.T @ A).toarray()
        else:
            xtwx = np.einsum("ni,nj->ij", X * w[:, None], X)
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


def _dot(a: np.ndarray, b: np.ndarray) -> float:
    """a . b with numpy's own loop (no BLAS call, hence no BLAS threads)."""
    return float(np.einsum("i,i->", a, b))


def _wolfe_step(
    fg: Callable[[np.ndarray], tuple[float, np.ndarray]],
    x: np.ndarray, f0: float, g0: np.ndarray, d: np.ndarray, step: float,
    *, c1: float = 1e-4, c2: float = 0.9, max_evals: int = 20,
) -> tuple[np.ndarray, float, np.ndarray, int] | tuple[None, float, None, int]:
    """A step along the descent direction d meeting the strong Wolfe conditions.

    Nocedal & Wright's algorithms 3.5 and 3.6 (bracketing, then zooming with safeguarded cubic
    interpolation), each trial point costing one loss+gradient. Returns (x, f, g, evaluations),
    x None when no such step was found within ``max_evals`` evaluations.
    """
    slope0 = _dot(g0, d)
    evals = 0

    def trial(a: float) -> tuple[float, np.ndarray, float, np.ndarray]:
        xa = x + a * d
        fa, ga = fg(xa)
        return fa, ga, _dot(ga, d), xa

    def cubic(a: float, fa: float, da: float, b: float, fb: float, db: float) -> float:
        lo, hi = min(a, b), max(a, b)
        guard = 0.1 * (hi - lo)
        d1 = da + db - 3.0 * (fa - fb) / (a - b)
        disc = d1 * d1 - da * db
        if disc >= 0 and np.isfinite(disc):
            d2 = np.copysign(np.sqrt(disc), b - a)
            denom = db - da + 2.0 * d2
            if denom != 0:
                c = b - (b - a) * (db + d2 - d1) / denom
                if np.isfinite(c):
                    return float(min(max(c, lo + guard), hi - guard))
        return 0.5 * (lo + hi)

    a_prev, f_prev, s_prev = 0.0, f0, slope0
    a = step
    while evals < max_evals:
        fa, ga, sa, xa = trial(a)
        evals += 1
        if not np.isfinite(fa) or fa > f0 + c1 * a * slope0 or (evals > 1 and fa >= f_prev):
            lo, f_lo, s_lo, hi, f_hi, s_hi = a_prev, f_prev, s_prev, a, fa, sa
            break
        if abs(sa) <= -c2 * slope0:
            return xa, fa, ga, evals
        if sa >= 0:
            lo, f_lo, s_lo, hi, f_hi, s_hi = a, fa, sa, a_prev, f_prev, s_prev
            break
        a_prev, f_prev, s_prev = a, fa, sa
        a *= 4.0
    else:
        return None, f0, None, evals
    while evals < max_evals:  # zoom: lo meets sufficient decrease, the minimiser lies between lo and hi
        if np.isfinite(f_hi) and np.isfinite(s_hi):
            a = cubic(lo, f_lo, s_lo, hi, f_hi, s_hi)
        else:
            a = 0.5 * (lo + hi)
        if a == lo or a == hi:
            break
        fa, ga, sa, xa = trial(a)
        evals += 1
        if not np.isfinite(fa) or fa > f0 + c1 * a * slope0 or fa >= f_lo:
            hi, f_hi, s_hi = a, fa, sa
        else:
            if abs(sa) <= -c2 * slope0:
                return xa, fa, ga, evals
            if sa * (hi - lo) >= 0:
                hi, f_hi, s_hi = lo, f_lo, s_lo
            lo, f_lo, s_lo = a, fa, sa
    return None, f0, None, evals


def _minimize_lbfgs(
    fg: Callable[[np.ndarray], tuple[float, np.ndarray]], x0: np.ndarray,
    *, maxiter: int, gtol: float, ftol: float, memory: int = 10,
) -> tuple[np.ndarray, int, bool, str]:
    """Unconstrained L-BFGS with scipy L-BFGS-B's stopping rules, in numpy.

    Why not ``scipy.optimize.minimize(method="L-BFGS-B")``: scipy 1.17's L-BFGS-B calls the
    process's multi-threaded OpenBLAS on its tiny matrices at every iteration. On these shared
    cores (load about 5) that cost 2.3 ms of wall time (1 ms of CPU) per evaluation on a
    50-dimensional quadratic, against 0.07 ms with one BLAS thread, and 40% of an Adult sweep's
    time under cProfile; limiting BLAS threads would change process-wide state. Here every
    product is a numpy loop over a vector of the problem's size.

    Stops like scipy: converged when the gradient's largest entry is at most ``gtol`` or one
    iteration lowered the loss by at most ``ftol * max(|f_old|, |f_new|, 1)``; not converged when
    ``maxiter`` iterations ran or the line search found no step twice in a row (the second time
    from the steepest-descent direction, the memory cleared). Returns (x, iterations, converged,
    message) with scipy's messages.
    """
    x = np.array(x0, dtype=np.float64)
    f, g = fg(x)
    S: list[np.ndarray] = []
    Y: list[np.ndarray] = []
    rho: list[float] = []
    if not np.isfinite(f):
        return x, 0, False, "ABNORMAL: THE LOSS IS NOT FINITE AT THE START"
    if np.max(np.abs(g), initial=0.0) <= gtol:
        return x, 0, True, "CONVERGENCE: NORM OF PROJECTED GRADIENT <= PGTOL"
    for it in range(1, maxiter + 1):
        retried = False
        while True:
            if S:  # two-loop recursion: d = -H g
                q = g.copy()
                coef = []
                for s, yv, r in zip(reversed(S), reversed(Y), reversed(rho)):
                    c = r * _dot(s, q)
                    coef.append(c)
                    q -= c * yv
                q *= _dot(S[-1], Y[-1]) / _dot(Y[-1], Y[-1])
                for s, yv, r, c in zip(S, Y, rho, reversed(coef)):
                    q += s * (c - r * _dot(yv, q))
                d = -q
                step = 1.0
            else:
                d = -g
                step = min(1.0, 1.0 / max(float(np.sqrt(_dot(g, g))), 1e-300))
            if _dot(g, d) >= 0:  # not a descent direction (rounding): start the memory afresh
                del S[:], Y[:], rho[:]
                d = -g
                step = min(1.0, 1.0 / max(float(np.sqrt(_dot(g, g))), 1e-300))
            x_new, f_new, g_new, _ = _wolfe_step(fg, x, f, g, d, step)
            if x_new is not None and g_new is not None:
                break
            if retried or not S:
                return x, it - 1, False, "ABNORMAL_TERMINATION_IN_LNSRCH"
            del S[:], Y[:], rho[:]
            retried = True
        s = x_new - x
        yv = g_new - g
        sy = _dot(s, yv)
        if sy > 1e-10 * _dot(yv, yv):  # keep the pair only where the curvature is positive
            S.append(s)
            Y.append(yv)
            rho.append(1.0 / sy)
            if len(S) > memory:
                del S[0], Y[0], rho[0]
        reduction = f - f_new
        x, f, g = x_new, f_new, g_new
        if reduction <= ftol * max(abs(f), abs(f + reduction), 1.0):
            return x, it, True, "CONVERGENCE: RELATIVE REDUCTION OF F <= FACTR*EPSMCH"
        if np.max(np.abs(g), initial=0.0) <= gtol:
            return x, it, True, "CONVERGENCE: NORM OF PROJECTED GRADIENT <= PGTOL"
    return x, maxiter, False, "STOP: TOTAL NO. OF ITERATIONS REACHED LIMIT"


def _lbfgs(
    obj: _Objective, alpha: float, theta0: np.ndarray, *, maxiter: int, gtol: float, ftol: float,
    engine: str = "numpy",
) -> tuple[np.ndarray, int, bool, str]:
    """Minimise the objective at ``alpha`` from ``theta0`` in whitened coordinates.

    Returns (theta, iterations, converged, message). ``converged``: the gradient's largest entry
    (whitened) at most ``gtol``, or a last step that lowered the loss by at most ``ftol``
    (relative to max(|loss|, 1): in practice absolute, in units of the mean log-loss, whatever
    alpha); not the iteration limit, nor a line search that failed. ``engine="scipy"`` runs
    scipy's L-BFGS-B instead of ``_minimize_lbfgs`` (the tests compare the two).
    """
    R, W = obj.whitening(theta0)  # theta = W phi, phi = R theta (vectors: diagonal matrices)
    scale = 1.0 / max(alpha, _LOSS_FLOOR)
    diagonal = R.ndim == 1

    def to_theta(phi: np.ndarray) -> np.ndarray:
        return W * phi if diagonal else np.einsum("ij,j->i", W, phi)

    def fun(phi: np.ndarray) -> tuple[float, np.ndarray]:
        value, grad = obj(to_theta(phi), alpha)
        return value * scale, (W * grad if diagonal else np.einsum("ij,i->j", W, grad)) * scale

    phi0 = R * theta0 if diagonal else np.einsum("ij,j->i", R, theta0)
    if engine == "scipy":
        res = minimize(fun, phi0, jac=True, method="L-BFGS-B",
                       options={"maxiter": maxiter, "gtol": gtol, "ftol": ftol})
        phi, nit, converged, message = res.x, int(res.nit), bool(res.status == 0), str(res.message)
    else:
        phi, nit, converged, message = _minimize_lbfgs(fun, phi0, maxiter=maxiter, gtol=gtol, ftol=ftol)
    return to_theta(phi), nit, converged, message


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
    """The plain sentence a sweep point and a ConvergenceWarning carry."""
    count = f"{iterations} iteration{'' if iterations == 1 else 's'}"
    if "ITERATIONS REACHED LIMIT" in message.upper():
        why = f"in {count} (the limit)"
    else:
        why = f"after {count}: the optimiser could not lower the loss further ({message.lower()})"
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
    solver : ``"lbfgs"`` (L-BFGS with the analytic gradient, in whitened coordinates;
        default) or ``"momentum"`` (the paper: gradient descent with momentum).
    fit_intercept : learn an intercept.
    max_iter : iteration limit; ``None`` means 500 for lbfgs and 2000 (the paper's) for momentum.
    tol : gradient tolerance of L-BFGS (in whitened coordinates, see the module doc); for the
        momentum solver, ``converged_`` says whether the final gradient is within ``tol``.
    ftol : L-BFGS also stops when one iteration lowers the loss (divided by max(alpha, 0.1)) by
        less than ``ftol`` times max(|loss|, 1) (scipy's L-BFGS-B default).
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
        constraints = OPTION_CONSTRAINTS["equalize"]  # declared once: spec/options.py
        ALPHA.check(self.alpha)
        constraints["bandwidth"].check(self.bandwidth)
        constraints["solver"].check(self.solver)
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
        X, yb = self._prepare(X, y)
        obj = _Objective(X, yb, groups, float(self.alpha), float(self.bandwidth), bool(self.fit_intercept))
        theta0 = np.zeros(obj.d + int(obj.fit_intercept))
        if coef_init is not None:
            coef_init = np.asarray(coef_init, dtype=float).ravel()
            if coef_init.shape != theta0.shape:
                raise ValueError("coef_init needs one value per feature (+ the intercept).")
            theta0 = coef_init.copy()
        elif self.init == "lr" and obj.penalty is not None and float(self.alpha) < 1.0:
            theta0 = _lbfgs(obj, 1.0, theta0, **self._limits())[0]
        return self._solve(obj, theta0)

    def _prepare(self, X: Any, y: Any) -> tuple[Any, np.ndarray]:
        """Check the parameters and data; set ``classes_`` (and ``n_features_in_``); y as 0/1."""
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
        return X, (y == self.classes_[1]).astype(np.float64)

    def _limits(self) -> dict[str, Any]:
        return {
            "maxiter": 500 if self.max_iter is None else int(self.max_iter),
            "gtol": float(self.tol),
            "ftol": float(self.ftol),
        }

    def _solve(self, obj: _Objective, theta0: np.ndarray) -> EqualizedDistributionClassifier:
        """Minimise from theta0 and set the learned attributes (``obj`` may be shared by a sweep)."""
        alpha = float(self.alpha)
        d, fi = obj.d, obj.fit_intercept
        if OPTION_CONSTRAINTS["equalize"]["solver"].check(self.solver) == "lbfgs":
            theta, nit, converged, message = _lbfgs(obj, alpha, theta0, **self._limits())
        else:
            max_iter = 2000 if self.max_iter is None else int(self.max_iter)
            theta = theta0
            v = np.zeros_like(theta)
            lr, mom = float(self.learning_rate), float(self.momentum)
            for _ in range(max_iter):
                _, grad = obj(theta, alpha)
                v = mom * v - lr * grad
                theta = theta + v
            nit = max_iter
            converged = bool(np.max(np.abs(obj(theta, alpha)[1]), initial=0.0) <= float(self.tol))
            message = ("the paper's fixed number of momentum steps; final gradient within tol" if converged
                       else "ITERATIONS REACHED LIMIT")
        self.groups_ = obj.labels
        self.reference_group_ = None if obj.labels is None else obj.labels[obj.ref]
        self.n_iter_ = np.array([nit])
        self.converged_ = converged
        self.convergence_message_ = message
        self.coef_ = theta[:d].reshape(1, d).copy()
        self.intercept_ = np.array([theta[d] if fi else 0.0])
        loss, _ = obj(theta, alpha, with_penalty=True)
        self.loss_ = float(loss)
        self.log_loss_, self.fairness_loss_ = (float(v) for v in obj.last_parts)
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

    def counts(self) -> tuple[GroupCounts, ...]:
        """Each group's confusion counts on the test rows (its outcomes from the histograms, decisions from the rates)."""
        out = []
        for group, rates in self.groups.items():
            hist = self.histograms[group]
            positives, negatives = int(sum(hist["positive"])), int(sum(hist["negative"]))
            tpr, fpr = float(rates["tpr"]), float(rates["fpr"])
            tp = round(tpr * positives) if positives and np.isfinite(tpr) else 0
            fp = round(fpr * negatives) if negatives and np.isfinite(fpr) else 0
            out.append(GroupCounts(str(group), "All rows", tp, fp, positives - tp, negatives - fp))
        return tuple(out)

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
    """One point per alpha (ascending), the bin edges of the histograms and the group labels.

    ``options`` are the settings of the sweep; ``correction`` the result in the shape every
    correction shares (:class:`~luskin_core.corrections.correction.CorrectionResult`): alpha = 1 (plain
    logistic regression) is the model before the correction, every smaller alpha one after it.
    ``names``: which label is the protected group and which the rest, when the sweep was run on a
    specification (:func:`equalize_frame`: the labels are then the data's names, 'Female' and 'Male').
    """

    points: tuple[AlphaPoint, ...]
    bin_edges: tuple[float, ...]
    group_labels: tuple[str, ...]
    reference_group: str
    n_train: int
    n_test: int
    options: EqualizeOptions | None = None
    names: GroupNames | None = None
    shown_alpha: float | None = None

    def shown_at(self, alpha: float | None) -> AlphaSweep:
        """The same sweep shown at ``alpha`` (the slider's value): the report and slides draw its histograms there."""
        return replace(self, shown_alpha=alpha)

    @property
    def classes(self) -> tuple[str, str]:
        """The protected group's label and the rest's (charts give each its fixed colour by them)."""
        labels = list(self.group_labels)
        if self.names is not None and self.names.group in labels and self.names.other in labels:
            return self.names.group, self.names.other
        return labels[0], labels[-1]

    def named(self, shown: Callable[[Any], str], names: GroupNames | None) -> AlphaSweep:
        """The same sweep with every group label turned into ``shown(label)`` (the data's names)."""
        points = tuple(replace(p, groups={shown(k): v for k, v in p.groups.items()},
                               histograms={shown(k): v for k, v in p.histograms.items()}) for p in self.points)
        return replace(self, points=points, group_labels=tuple(shown(g) for g in self.group_labels),
                       reference_group=shown(self.reference_group), names=names)

    @property
    def correction(self) -> CorrectionResult:
        """Every alpha on the test rows: alpha = 1 before the correction, the others after."""
        stages = []
        for p in self.points:
            plain = p.alpha >= 1.0
            stages.append(CorrectionStage(
                "before" if plain else "after", f"α = {p.alpha:g}" + (" (plain logistic regression)" if plain else ""),
                p.counts(), "accuracy", float(p.accuracy), setting=float(p.alpha), warnings=tuple(p.warnings)))
        return CorrectionResult(
            tool="equalized", name="Equalized distribution", options=self.options or EqualizeOptions(alphas=self.alphas),
            stages=tuple(stages), n_test=int(self.n_test), gap_measure=ERROR_RATES, warnings=self.warnings,
        )

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
            "correction": self.correction.to_dict(),
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
    start: str = "lr",
    max_iter: int | None = None,
    progress: Callable[[float, str], None] | None = None,
) -> AlphaSweep:
    """Train one equalized-distribution classifier per alpha and measure each on the test rows.

    y must be 0/1. The training rows are checked, grouped and sorted once, and plain logistic
    regression is fitted once (the start of a single fit, ``init="lr"``). Then, from alpha = 1
    down, ``start="lr"`` (default) starts every alpha from plain logistic regression, so that each
    point equals ``EqualizedDistributionClassifier(alpha=a).fit(...)`` on its own (and
    ``luskin equalize --alpha a``) whichever other alphas are swept; ``start="path"`` starts each
    alpha from the solution of the alpha above it (a warm start). Where the loss has one minimum
    the two reach the same loss (tested); for small alpha it has several, and the two starts can
    settle in different ones. The warm path saves about 10% of the iterations on Adult, 4-9% of
    the time (benchmarks/results/bench_equalize.md), too little to give up independent points.
    ``max_iter`` is each fit's (None: the estimator's default). Points come back in ascending
    alpha, each saying whether its fit converged and, in ``warnings``, what backfired.
    ``progress(fraction, message)`` is told before each alpha (a page's progress bar).
    """
    constraints = OPTION_CONSTRAINTS["equalize"]  # declared once: spec/options.py
    alphas = sorted(set(constraints["alphas"].check(tuple(alphas))))  # at least one, each from 0 to 1
    start, solver = constraints["start"].check(start), constraints["solver"].check(solver)
    yt = np.asarray(y_test).astype(np.int64)
    gt = np.asarray(g_test)
    labels = [str(v) for v in np.unique(np.asarray(g_train))]
    gt = gt.astype(str)
    fits: list[tuple[float, EqualizedDistributionClassifier, float]] = []
    n_train = int(np.asarray(y_train).shape[0])
    g_train = np.asarray(g_train).astype(str)
    first = EqualizedDistributionClassifier(alpha=1.0, bandwidth=bandwidth, max_iter=max_iter)
    X, yb = first._prepare(X_train, y_train)
    obj = _Objective(X, yb, g_train, 1.0, float(bandwidth), True)
    lr = _lbfgs(obj, 1.0, np.zeros(obj.d + 1), **first._limits())[0]
    theta = lr
    for done, a in enumerate(sorted(alphas, reverse=True)):
        if progress is not None:
            progress(done / len(alphas), f"Training the model for alpha = {a:g} ({done + 1} of {len(alphas)})")
        t0 = time.perf_counter()
        clf = EqualizedDistributionClassifier(alpha=a, bandwidth=bandwidth, solver=solver, max_iter=max_iter)
        clf._prepare(X, y_train)
        # no ConvergenceWarning: the point says it in words
        clf._solve(obj, theta if start == "path" else lr)
        theta = np.concatenate([clf.coef_[0], clf.intercept_])
        fits.append((a, clf, time.perf_counter() - t0))
    share = float(np.mean(yt)) if len(yt) else 0.0
    points: list[AlphaPoint] = []
    measured = {a: _measure(clf, X_test, yt, gt, labels) for a, clf, _ in fits}
    plain = measured.get(1.0)
    for a, clf, seconds in fits:
        accuracy, rates, hists = measured[a]
        notes = [] if clf.converged_ else [clf.convergence_sentence()]
        shortfall = below_majority(accuracy, share)
        if shortfall is not None:
            accuracy_text, common, majority_text = shortfall
            notes.append(
                f"At alpha = {a:g} the model's test accuracy ({accuracy_text}) is below what always "
                f"predicting the most common outcome ({common}) gets ({majority_text})."
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
        options=EqualizeOptions(alphas=tuple(alphas), bandwidth=float(bandwidth), solver=solver, start=start),
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
    alphas: Sequence[float] = EqualizeOptions.alphas,
    features: Sequence[str] | None = None,
    preprocess: Any = None,
    seed: int = EqualizeOptions.seed,
    bandwidth: float = EqualizeOptions.bandwidth,
    solver: str = EqualizeOptions.solver,
    start: str = EqualizeOptions.start,
    progress: Callable[[float, str], None] | None = None,
) -> AlphaSweep:
    """The alpha sweep on a frame described by an AuditSpec (what the CLI and the page call).

    Rows split 60/20/20 (train / validation / test, seeded and stratified by outcome and group,
    the same split as the thresholds tool); the classifier trains on the 60% and is measured on
    the 20% test rows (the validation rows are not used). ``preprocess`` is an unfitted sklearn
    transformer over ``features`` (e.g. the paper's COMPAS encoding + PCA); by default the
    features are imputed, standardised and one-hot encoded. The protected column is never a
    feature unless named in ``features``. ``start`` is alpha_sweep's (``"lr"``: each alpha from
    plain logistic regression; ``"path"``: each from its neighbour's solution).
    """
    from luskin_core.corrections import models
    from luskin_core.corrections.pipeline import prepare_split

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
    sweep = alpha_sweep(
        Xtr, y[train_idx], g[train_idx], Xte, y[test_idx], g[test_idx], alphas,
        bandwidth=bandwidth, solver=solver, start=start, progress=progress,
    )
    # trained on the spec's labels (their sorted order picks the reference); shown by the data's names
    sweep = sweep.named(split.shown, split.names)
    return replace(sweep, options=replace(sweep.options or EqualizeOptions(), seed=int(seed)))
