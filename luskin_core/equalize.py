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
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.optimize import minimize
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from luskin_core.errors import LuskinError

__all__ = [
    "BIN_CENTERS",
    "BIN_EDGES",
    "EqualizedDistributionClassifier",
    "equalized_loss",
    "AlphaPoint",
    "AlphaSweep",
    "DEFAULT_ALPHAS",
    "alpha_sweep",
    "equalize_frame",
]

BIN_CENTERS = np.round(np.arange(0.01, 1.0, 0.02), 10)  # 50 bins of width 0.02
BIN_EDGES = np.round(np.linspace(0.0, 1.0, 51), 10)
DEFAULT_ALPHAS = (0.0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.7, 0.9, 1.0)


class _SoftHistogramPenalty:
    """E_f and its gradient with respect to the scores, with preallocated buffers.

    Rows must be sorted so that each (group, class) segment is contiguous; ``segments`` lists
    (start, stop, group index, class) and ``ref`` is the reference group's index. Each row only
    touches the bins within 8 kernel widths of its score (beyond that the kernel is below 1e-13
    of its peak), which cuts the work about threefold at the default bandwidth.
    """

    def __init__(
        self, n: int, segments: list[tuple[int, int, int, int]], ref: int, bandwidth: float
    ) -> None:
        self.segments = segments
        self.ref = ref
        nb = len(BIN_CENTERS)
        half = int(np.ceil(8.0 * bandwidth / 0.02))
        self.L = min(nb, 2 * half + 1)
        self.half = half
        self.nb = nb
        self.inv2s2 = 1.0 / (2.0 * bandwidth * bandwidth)
        self.invs2 = 1.0 / (bandwidth * bandwidth)
        # each row's kernel sums to about 1 over the bins, like the paper's box histogram
        self.kscale = 0.02 / (np.sqrt(2.0 * np.pi) * bandwidth)
        self.offsets = np.arange(self.L) * 0.02
        seg_id = np.empty(n, dtype=np.int64)
        sizes = np.empty(len(segments))
        for k, (a, b, _, _) in enumerate(segments):
            seg_id[a:b] = k
            sizes[k] = b - a
        self.seg_base = seg_id * nb
        self.sizes = sizes
        self.neg_row_scale = -self.invs2 * self.kscale / sizes[seg_id]
        self.D = np.empty((self.L, n))
        self.K = np.empty((self.L, n))
        self.G = np.empty((self.L, n))
        self.B = np.empty((self.L, n), dtype=np.int64)
        self.lo = np.zeros(n, dtype=np.int64)
        self._tmp = np.empty(n)
        self.arange_L = np.arange(self.L)
        index = {(gi, cl): k for k, (_, _, gi, cl) in enumerate(segments)}
        # (segment, reference segment of the same class) for every non-reference segment
        self.pairs = [(k, index[ref, cl]) for (gi, cl), k in index.items() if gi != ref]

    def __call__(self, s: np.ndarray) -> tuple[float, np.ndarray]:
        nb, L = self.nb, self.L
        lo = self.lo
        if L < nb:
            np.rint((s - 0.01) / 0.02, out=self._tmp)
            lo[:] = self._tmp
            lo -= self.half
            np.clip(lo, 0, nb - L, out=lo)
        # buffers are (L, n): the long axis contiguous, which numpy streams fastest
        D, K, B = self.D, self.K, self.B
        np.subtract((s - BIN_CENTERS[lo])[None, :], self.offsets[:, None], out=D)  # s - centre
        np.square(D, out=K)
        K *= -self.inv2s2
        np.exp(K, out=K)
        np.add((self.seg_base + lo)[None, :], self.arange_L[:, None], out=B)
        nseg = len(self.segments)
        hist = np.bincount(B.ravel(), weights=K.ravel(), minlength=nseg * nb).reshape(nseg, nb)
        hist *= self.kscale / self.sizes[:, None]
        dh = np.zeros((nseg, nb))
        value = 0.0
        for k, r in self.pairs:
            diff = hist[k] - hist[r]
            value += float(diff @ diff)
            dh[k] += 2.0 * diff
            dh[r] -= 2.0 * diff
        # dE/ds_i = sum_b dh_b K_ib (c_b - s_i) / (n_seg sigma^2) = -sum_l dh[B_li] K_li D_li * scale
        G = np.take(dh.ravel(), B, out=self.G)
        G *= K
        G *= D
        grad = G.sum(axis=0)
        grad *= self.neg_row_scale
        return value, grad


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
            g = np.asarray(groups)
            if g.shape != (n,):
                raise LuskinError(
                    f"There must be one group label per row ({n} rows, {g.size} group labels)."
                )
            if pd.isna(g).any():
                raise LuskinError("Some rows have no group label. Remove them before training.")
            labels, gi = np.unique(g, return_inverse=True)
            if len(labels) < 2:
                raise LuskinError(
                    f"Every row is in the group '{labels[0]}', so there is no other group to make "
                    "the score distributions equal with. Check the protected condition."
                )
            for k, lab in enumerate(labels):
                for cl, word in ((1, "positive"), (0, "negative")):
                    if not np.any((gi == k) & (y01 == cl)):
                        raise LuskinError(
                            f"The group '{lab}' has no rows with a {word} outcome, so its score "
                            "distribution for that outcome cannot be compared. Use more data."
                        )
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

    def __call__(self, theta: np.ndarray, alpha: float | None = None) -> tuple[float, np.ndarray]:
        alpha = self.alpha if alpha is None else alpha
        d, n = self.d, self.n
        b = theta[d] if self.fit_intercept else 0.0
        z = np.asarray(self.X @ theta[:d]).ravel() + b
        s = expit(z)
        ll = float(np.mean(np.logaddexp(0.0, z) - self.y * z))
        gz = (s - self.y) * (alpha / n)
        total = alpha * ll
        if self.penalty is not None and alpha < 1.0:
            ef, gs = self.penalty(s)
            total += (1.0 - alpha) * ef
            gz += (1.0 - alpha) * gs * s * (1.0 - s)
        grad = np.empty_like(theta, dtype=np.float64)
        grad[:d] = self.X.T @ gz
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


class EqualizedDistributionClassifier(ClassifierMixin, BaseEstimator):
    """Logistic regression whose score distributions are pulled together across groups.

    Parameters
    ----------
    alpha : weight of the log-loss in [0, 1]; ``1 - alpha`` weighs the histogram distance.
        1 is plain logistic regression, near 0 equal score distributions (the paper recommends
        0.1-0.2).
    bandwidth : standard deviation of the Gaussian kernel that replaces the histogram's box.
    solver : ``"lbfgs"`` (scipy L-BFGS-B with the analytic gradient, default) or
        ``"momentum"`` (the paper: gradient descent with momentum).
    fit_intercept : learn an intercept.
    max_iter : iteration limit; ``None`` means 500 for lbfgs and 2000 (the paper's) for momentum.
    tol : gradient tolerance of L-BFGS-B.
    learning_rate, momentum : momentum solver settings (paper: 1 and 0.9).
    init : ``"lr"`` (default) starts from the plain logistic regression solution, so that every
        alpha moves away from the accurate model and a fit does not depend on other fits;
        ``"zeros"`` starts from all-zero weights (every score 0.5, where E_f is already 0).

    Learned attributes: ``classes_``, ``coef_`` (1, n_features), ``intercept_`` (1,),
    ``n_features_in_``, ``n_iter_``, ``loss_``, ``log_loss_``, ``fairness_loss_`` (E_f at the
    solution, on the training rows), ``groups_`` and ``reference_group_`` (None without groups).
    """

    def __init__(
        self,
        alpha: float = 0.2,
        bandwidth: float = 0.02,
        solver: str = "lbfgs",
        fit_intercept: bool = True,
        max_iter: int | None = None,
        tol: float = 1e-6,
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

    def fit(
        self, X: Any, y: Any, groups: Any = None, *, coef_init: Any = None
    ) -> "EqualizedDistributionClassifier":
        """Fit on features X, two-valued outcome y and (optionally) group labels per row.

        ``coef_init`` (coefficients, then the intercept) replaces the start chosen by ``init``;
        the alpha sweep passes the plain logistic regression solution it computed once. BLAS is
        held to one thread: the products here are small, and on a busy machine threads that
        wait for each other made fits several times slower.
        """
        with threadpool_limits(limits=1, user_api="blas"):
            return self._fit(X, y, groups, coef_init)

    def _fit(
        self, X: Any, y: Any, groups: Any, coef_init: Any
    ) -> "EqualizedDistributionClassifier":
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
        n, d = X.shape
        alpha = float(self.alpha)
        obj = _Objective(X, yb, groups, alpha, float(self.bandwidth), bool(self.fit_intercept))
        self.groups_ = obj.labels
        self.reference_group_ = None if obj.labels is None else obj.labels[obj.ref]
        loss_grad = obj
        penalty = obj.penalty
        fi = obj.fit_intercept
        theta0 = np.zeros(d + int(fi))
        lbfgs_options = {
            "maxiter": 500 if self.max_iter is None else int(self.max_iter),
            "gtol": float(self.tol),
            "ftol": 1e-12,
        }
        if coef_init is not None:
            coef_init = np.asarray(coef_init, dtype=float).ravel()
            if coef_init.shape != theta0.shape:
                raise ValueError("coef_init needs one value per feature (+ the intercept).")
            theta0 = coef_init.copy()
        elif self.init == "lr" and penalty is not None and alpha < 1.0:
            theta0 = minimize(
                lambda t: loss_grad(t, 1.0), theta0, jac=True, method="L-BFGS-B",
                options=lbfgs_options,
            ).x
        if self.solver == "lbfgs":
            res = minimize(
                loss_grad, theta0, jac=True, method="L-BFGS-B", options=lbfgs_options
            )
            theta = res.x
            self.n_iter_ = np.array([int(res.nit)])
        else:
            max_iter = 2000 if self.max_iter is None else int(self.max_iter)
            theta = theta0
            v = np.zeros_like(theta)
            lr, mom = float(self.learning_rate), float(self.momentum)
            for _ in range(max_iter):
                _, grad = loss_grad(theta)
                v = mom * v - lr * grad
                theta = theta + v
            self.n_iter_ = np.array([max_iter])
        self.coef_ = theta[:d].reshape(1, d).copy()
        self.intercept_ = np.array([theta[d] if fi else 0.0])
        self.loss_ = float(loss_grad(theta)[0])
        self.log_loss_, self.fairness_loss_ = obj.parts(theta)
        return self

    # -- prediction ---------------------------------------------------------------------------

    def decision_function(self, X: Any) -> np.ndarray:
        """Log-odds of the second class (the positive outcome)."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=False)
        return np.asarray(X @ self.coef_[0] + self.intercept_[0]).ravel()

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
    """

    alpha: float
    accuracy: float
    groups: dict[str, dict[str, float]]
    histograms: dict[str, dict[str, list[int]]]
    loss: float
    fairness_loss: float
    seconds: float

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
    back in ascending alpha. ``progress(fraction, message)`` is told after each alpha (a page's
    progress bar: an Adult sweep takes about a minute).
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
    points: list[AlphaPoint] = []
    init = None
    ref = ""
    n_train = int(np.asarray(y_train).shape[0])
    g_train = np.asarray(g_train).astype(str)
    if warm_start:
        lr = EqualizedDistributionClassifier(alpha=1.0, bandwidth=bandwidth).fit(
            X_train, y_train, g_train
        )
        init = np.concatenate([lr.coef_[0], lr.intercept_])
    for done, a in enumerate(sorted(alphas, reverse=True)):
        if progress is not None:
            progress(done / len(alphas), f"Training the model for alpha = {a:g} ({done + 1} of {len(alphas)})")
        t0 = time.perf_counter()
        clf = EqualizedDistributionClassifier(alpha=a, bandwidth=bandwidth, solver=solver)
        clf.fit(X_train, y_train, g_train, coef_init=init)
        seconds = time.perf_counter() - t0
        ref = str(clf.reference_group_)
        s = clf.predict_proba(X_test)[:, 1]
        pred = (s > 0.5).astype(np.int64)
        hists = {}
        for lab in labels:
            m = gt == lab
            hists[lab] = {
                "positive": np.histogram(s[m & (yt == 1)], bins=BIN_EDGES)[0].tolist(),
                "negative": np.histogram(s[m & (yt == 0)], bins=BIN_EDGES)[0].tolist(),
            }
        points.append(
            AlphaPoint(
                alpha=a,
                accuracy=float(np.mean(pred == yt)),
                groups=_rates(yt, pred, gt, labels),
                histograms=hists,
                loss=clf.loss_,
                fairness_loss=clf.fairness_loss_,
                seconds=seconds,
            )
        )
    points.sort(key=lambda p: p.alpha)
    if progress is not None:
        progress(1.0, f"{len(alphas)} models trained")
    return AlphaSweep(
        points=tuple(points),
        bin_edges=tuple(float(e) for e in BIN_EDGES),
        group_labels=tuple(labels),
        reference_group=ref,
        n_train=n_train,
        n_test=int(len(yt)),
    )


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
