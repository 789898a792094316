"""The equalized-distribution classifier: gradient, solvers, estimator contract, sweep."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression
from sklearn.utils.estimator_checks import parametrize_with_checks

from luskin_core.equalize import (
    BIN_EDGES,
    EqualizedDistributionClassifier,
    alpha_sweep,
    equalized_loss,
)
from luskin_core.errors import LuskinError


def _biased(n=1200, d=5, seed=0):
    """Standardised features where one feature tracks the group, so scores differ by group."""
    rng = np.random.default_rng(seed)
    g = np.where(rng.random(n) < 0.55, "B", "W")
    X = rng.normal(size=(n, d))
    X[:, 0] += 1.0 * (g == "B")
    logit = 0.9 * X[:, 0] + 0.6 * X[:, 1] - 0.3 * X[:, 2] - 0.4
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    X = (X - X.mean(0)) / X.std(0)
    return X, y, g


@parametrize_with_checks([EqualizedDistributionClassifier(max_iter=100)])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


@pytest.mark.parametrize("alpha", [0.0, 0.3, 0.9])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_gradient_matches_finite_differences(alpha, fit_intercept):
    X, y, g = _biased(n=400, d=3, seed=1)
    rng = np.random.default_rng(2)
    theta = rng.normal(scale=0.5, size=X.shape[1] + int(fit_intercept))
    _, grad = equalized_loss(theta, X, y, g, alpha=alpha, fit_intercept=fit_intercept)
    h = 1e-6
    fd = np.empty_like(theta)
    for k in range(len(theta)):
        e = np.zeros_like(theta)
        e[k] = h
        up = equalized_loss(theta + e, X, y, g, alpha=alpha, fit_intercept=fit_intercept)[0]
        down = equalized_loss(theta - e, X, y, g, alpha=alpha, fit_intercept=fit_intercept)[0]
        fd[k] = (up - down) / (2 * h)
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-8)


def test_alpha_one_is_plain_logistic_regression():
    X, y, g = _biased()
    ours = EqualizedDistributionClassifier(alpha=1.0).fit(X, y, g)
    ref = LogisticRegression(C=np.inf, max_iter=5000, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-4)
    assert np.mean(ours.predict(X) == ref.predict(X)) > 0.995
    # without groups the penalty is zero: the same model
    plain = EqualizedDistributionClassifier(alpha=0.2).fit(X, y)
    np.testing.assert_allclose(plain.coef_, ours.coef_, atol=1e-4)
    assert plain.fairness_loss_ == 0.0


def test_lbfgs_and_momentum_reach_the_same_loss():
    X, y, g = _biased(n=800, d=4, seed=3)
    fast = EqualizedDistributionClassifier(alpha=0.5, solver="lbfgs").fit(X, y, g)
    paper = EqualizedDistributionClassifier(alpha=0.5, solver="momentum").fit(X, y, g)
    assert paper.n_iter_[0] == 2000
    assert fast.loss_ == pytest.approx(paper.loss_, abs=2e-4)
    assert fast.n_iter_[0] < 2000


def test_smaller_alpha_brings_group_distributions_together():
    X, y, g = _biased(n=1500, seed=4)
    accurate = EqualizedDistributionClassifier(alpha=1.0).fit(X, y, g)
    fair = EqualizedDistributionClassifier(alpha=0.1).fit(X, y, g)
    assert fair.fairness_loss_ < accurate.fairness_loss_ / 3
    assert fair.log_loss_ > accurate.log_loss_
    assert fair.reference_group_ == "B"  # the larger group


def test_labels_are_kept_and_sparse_input_works():
    X, y, g = _biased(n=500, seed=5)
    labels = np.where(y == 1, "yes", "no")
    dense = EqualizedDistributionClassifier(alpha=0.5).fit(X, labels, g)
    assert set(dense.predict(X)) <= {"yes", "no"}
    sparse = EqualizedDistributionClassifier(alpha=0.5).fit(sp.csr_matrix(X), labels, g)
    np.testing.assert_allclose(sparse.predict_proba(X), dense.predict_proba(X), atol=1e-6)


@pytest.mark.parametrize(
    "kwargs, y_fn, g_fn, words",
    [
        ({"alpha": 1.5}, None, None, "between 0 and 1"),
        ({"alpha": -0.1}, None, None, "between 0 and 1"),
        ({"solver": "adam"}, None, None, "solver"),
        ({"bandwidth": 0}, None, None, "bandwidth"),
        ({}, lambda y: np.ones_like(y), None, "one class only"),
        ({}, None, lambda g: np.full(len(g), "W"), "no other group"),
        ({}, None, lambda g: g[:-1], "one group label per row"),
    ],
)
def test_user_mistakes_raise_plain_luskin_error(kwargs, y_fn, g_fn, words):
    X, y, g = _biased(n=200, seed=6)
    y = y_fn(y) if y_fn else y
    g = g_fn(g) if g_fn else g
    with pytest.raises(LuskinError, match=words):
        EqualizedDistributionClassifier(**kwargs).fit(X, y, g)


def test_group_without_positives_is_explained():
    X, y, g = _biased(n=200, seed=7)
    y = np.where(g == "W", 0, y)
    with pytest.raises(LuskinError, match="'W' has no rows with a positive outcome"):
        EqualizedDistributionClassifier().fit(X, y, g)


def test_alpha_sweep_is_shaped_for_a_slider():
    X, y, g = _biased(n=1000, seed=8)
    Xtr, ytr, gtr, Xte, yte, gte = X[:700], y[:700], g[:700], X[700:], y[700:], g[700:]
    sweep = alpha_sweep(Xtr, ytr, gtr, Xte, yte, gte, alphas=(1.0, 0.1, 0.5))
    assert sweep.alphas == (0.1, 0.5, 1.0)
    assert sweep.bin_edges == tuple(BIN_EDGES) and len(sweep.bin_edges) == 51
    for point in sweep.points:
        assert set(point.groups) == {"B", "W"}
        for lab in ("B", "W"):
            h = point.histograms[lab]
            assert len(h["positive"]) == 50
            assert sum(h["positive"]) == int(((gte == lab) & (yte == 1)).sum())
            assert sum(h["negative"]) == int(((gte == lab) & (yte == 0)).sum())
    # each point equals a stand-alone fit at that alpha (no dependence on the other alphas)
    alone = EqualizedDistributionClassifier(alpha=0.5).fit(Xtr, ytr, gtr)
    pred = alone.predict(Xte)
    assert sweep.point(0.5).accuracy == pytest.approx(np.mean(pred == yte))
    low, high = sweep.point(0.1), sweep.point(1.0)
    assert low.tpr_gap + low.fpr_gap < high.tpr_gap + high.fpr_gap
    d = sweep.to_dict()
    assert [p["alpha"] for p in d["points"]] == [0.1, 0.5, 1.0]
    with pytest.raises(LuskinError, match="between 0 and 1"):
        alpha_sweep(Xtr, ytr, gtr, Xte, yte, gte, alphas=(2.0,))


def test_sweep_reports_progress_after_each_alpha():
    """The dashboard's progress bar is driven by this callback (an Adult sweep takes a minute)."""
    from luskin_core.data import PRESETS, load_sample
    from luskin_core.equalize import equalize_frame

    seen: list[tuple[float, str]] = []
    compas = load_sample("compas")
    equalize_frame(compas, PRESETS["compas"].spec, alphas=(0.1, 1.0), features=["age", "priors_count"],
                   progress=lambda fraction, message: seen.append((fraction, message)))
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[0] == 0.0 and fractions[-1] == 1.0
    assert len(seen) == 3 and "alpha = 1" in seen[0][1]
