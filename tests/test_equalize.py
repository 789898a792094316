"""The equalized-distribution classifier: gradient, solvers, estimator contract, sweep."""

from __future__ import annotations

import functools
import threading
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.utils.estimator_checks import parametrize_with_checks

from luskin_core.corrections.equalize import (
    BIN_CENTERS,
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
    # every alpha starts from plain logistic regression: each point equals a stand-alone fit
    for a in (0.1, 0.5):
        alone = EqualizedDistributionClassifier(alpha=a).fit(Xtr, ytr, gtr)
        assert sweep.point(a).loss == pytest.approx(alone.loss_, rel=1e-12)
        assert sweep.point(a).accuracy == pytest.approx(np.mean(alone.predict(Xte) == yte))
    low, high = sweep.point(0.1), sweep.point(1.0)
    alone_point = alpha_sweep(Xtr, ytr, gtr, Xte, yte, gte, alphas=(0.1,)).point(0.1)  # whatever else is swept
    assert (alone_point.loss, alone_point.groups, alone_point.histograms) == (low.loss, low.groups, low.histograms)
    assert low.tpr_gap + low.fpr_gap < high.tpr_gap + high.fpr_gap
    d = sweep.to_dict()
    assert [p["alpha"] for p in d["points"]] == [0.1, 0.5, 1.0]
    with pytest.raises(LuskinError, match="between 0 and 1"):
        alpha_sweep(Xtr, ytr, gtr, Xte, yte, gte, alphas=(2.0,))


def test_sweep_reports_progress_after_each_alpha():
    """The dashboard's progress bar is driven by this callback (an Adult sweep takes a minute)."""
    from luskin_core.corrections.equalize import equalize_frame
    from luskin_core.counting.data import PRESETS, load_sample

    seen: list[tuple[float, str]] = []
    compas = load_sample("compas")
    equalize_frame(compas, PRESETS["compas"].spec, alphas=(0.1, 1.0), features=["age", "priors_count"],
                   progress=lambda fraction, message: seen.append((fraction, message)))
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[0] == 0.0 and fractions[-1] == 1.0
    assert len(seen) == 3 and "alpha = 1" in seen[0][1]


@pytest.mark.parametrize("bandwidth", [0.02, 0.005, 0.001, 0.2])
def test_penalty_equals_the_full_kernel_over_every_bin(bandwidth):
    """The windowed, sorted penalty gives E_f of the plain definition (every row, every bin)."""
    rng = np.random.default_rng(11)
    n = 900
    g = rng.choice(["A", "B", "C"], n, p=[0.5, 0.3, 0.2])
    y = (rng.random(n) < 0.4).astype(int)
    X = rng.normal(size=(n, 2))
    theta = np.array([2.5, -1.5, 0.3])  # scores from near 0 to near 1: windows clipped at both ends
    s = 1 / (1 + np.exp(-(X @ theta[:2] + theta[2])))
    K = np.exp(-((s[:, None] - BIN_CENTERS[None, :]) ** 2) / (2 * bandwidth**2))
    K *= 0.02 / (np.sqrt(2 * np.pi) * bandwidth)

    def hist(m):
        return K[m].sum(0) / m.sum()

    expected = sum(np.sum((hist((g == "A") & (y == c)) - hist((g == k) & (y == c))) ** 2)
                   for k in ("B", "C") for c in (0, 1))
    value, _ = equalized_loss(theta, X, y, g, alpha=0.0, bandwidth=bandwidth)
    assert value == pytest.approx(expected, rel=1e-10, abs=1e-15)


def test_warm_start_reaches_the_cold_loss():
    """Starting each alpha from its neighbour's solution ends where starting from plain logistic
    regression does, where the loss has one minimum: here a smooth kernel and alpha >= 0.05. (At
    the default bandwidth, or at alpha 0.01 and 0, this sample's loss has several minima and the
    two starts may settle in different ones: 1e-4 to 30% apart.)"""
    X, y, g = _biased(n=1500, d=5, seed=1)
    Xtr, ytr, gtr, Xte, yte, gte = X[:1050], y[:1050], g[:1050], X[1050:], y[1050:], g[1050:]
    alphas = (0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 1.0)
    warm = alpha_sweep(Xtr, ytr, gtr, Xte, yte, gte, alphas, bandwidth=0.05, start="path")
    cold = alpha_sweep(Xtr, ytr, gtr, Xte, yte, gte, alphas, bandwidth=0.05, start="lr")
    for w, c in zip(warm.points, cold.points, strict=True):
        assert w.converged and c.converged
        assert w.loss == pytest.approx(c.loss, rel=1e-7), w.alpha
        assert w.accuracy == c.accuracy
    assert sum(p.iterations for p in warm.points) < sum(p.iterations for p in cold.points)
    # one estimator started from a neighbour's coefficients, against a cold fit
    near = EqualizedDistributionClassifier(alpha=0.3, bandwidth=0.05).fit(Xtr, ytr, gtr)
    start = np.concatenate([near.coef_[0], near.intercept_])
    hot = EqualizedDistributionClassifier(alpha=0.2, bandwidth=0.05).fit(Xtr, ytr, gtr, coef_init=start)
    alone = EqualizedDistributionClassifier(alpha=0.2, bandwidth=0.05).fit(Xtr, ytr, gtr)
    assert hot.converged_ and alone.converged_
    assert hot.loss_ == pytest.approx(alone.loss_, rel=1e-7)
    assert hot.n_iter_[0] < alone.n_iter_[0]


def test_a_fit_that_stops_at_its_limit_says_so():
    X, y, g = _biased(n=800, seed=9)
    with pytest.warns(ConvergenceWarning, match="did not converge in 2 iterations"):
        clf = EqualizedDistributionClassifier(alpha=0.1, max_iter=2).fit(X, y, g)
    assert clf.converged_ is False and clf.n_iter_.tolist() == [2]
    assert "ITERATIONS" in clf.convergence_message_.upper()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # a converged fit is silent
        ok = EqualizedDistributionClassifier(alpha=0.1).fit(X, y, g)
    assert ok.converged_ is True and 0 < ok.n_iter_[0] < 500 and ok.convergence_sentence() == ""
    # the sweep carries it in words (what the page, the CLI and the report show), without warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        sweep = alpha_sweep(X[:600], y[:600], g[:600], X[600:], y[600:], g[600:], (0.1, 1.0), max_iter=2)
    low = sweep.point(0.1)
    assert not low.converged and low.iterations == 2 and not sweep.converged
    assert any("alpha = 0.1 did not converge in 2 iterations" in w for w in sweep.warnings)
    assert sweep.to_dict()["points"][0]["converged"] is False


def test_cli_prints_the_warnings(capsys, monkeypatch):
    import luskin_core.corrections.equalize as eq
    from luskin_cli.main import main

    monkeypatch.setattr(eq, "alpha_sweep", functools.partial(eq.alpha_sweep, max_iter=1))
    assert main(["equalize", "--preset", "compas", "--alphas", "0.1,1"]) == 0
    out = capsys.readouterr().out
    assert "Warnings:" in out and "alpha = 0.1 did not converge in 1 iteration (the limit)" in out


def test_fits_in_two_threads_equal_fits_alone():
    """The server runs analysts' fits side by side: no shared buffers, no process-wide state."""
    data = [_biased(n=1200, seed=s) for s in (12, 13)]

    def sweep(k):
        X, y, g = data[k]
        return alpha_sweep(X[:900], y[:900], g[:900], X[900:], y[900:], g[900:], (0.0, 0.1, 0.5, 1.0)).to_dict()

    def strip(d):
        return {**d, "points": [{k: v for k, v in p.items() if k != "seconds"} for p in d["points"]]}

    alone = [strip(sweep(k)) for k in (0, 1)]
    results: dict[int, dict] = {}
    barrier = threading.Barrier(2)

    def run(k):
        barrier.wait()
        results[k] = strip(sweep(k))

    threads = [threading.Thread(target=run, args=(k,)) for k in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results[0] == alone[0] and results[1] == alone[1]
    assert alone[0] != alone[1]


@pytest.mark.parametrize("alpha", [1.0, 0.5])
def test_numpy_lbfgs_matches_scipy(alpha):
    """The numpy L-BFGS (no BLAS threads) reaches scipy L-BFGS-B's loss on the same whitened problem."""
    from luskin_core.corrections.equalize import _lbfgs, _Objective

    X, y, g = _biased(n=1500, seed=14)
    obj = _Objective(X, y.astype(float), g, alpha, 0.05, True)
    start = np.zeros(X.shape[1] + 1)
    limits = {"maxiter": 500, "gtol": 1e-5, "ftol": 2.220446049250313e-09}
    ours = _lbfgs(obj, alpha, start, **limits)
    ref = _lbfgs(obj, alpha, start, **limits, engine="scipy")
    assert ours[2] and ref[2]
    assert obj(ours[0], alpha)[0] == pytest.approx(obj(ref[0], alpha)[0], rel=1e-8)
    np.testing.assert_allclose(ours[0], ref[0], atol=1e-3)


def test_many_columns_are_whitened_by_the_diagonal_and_reach_the_same_fit(monkeypatch):
    """Past _DENSE_WHITENING_MAX columns the Hessian's diagonal preconditions the fit (the full d x d one
    took 125 s and 3.8 GB on COMPAS with every column, about 12,000 one-hot columns): forced on a small
    problem, it ends at the loss the full whitening reaches."""
    import luskin_core.corrections.equalize as eq

    X, y, g = _biased(n=1500, d=8, seed=2)
    full = EqualizedDistributionClassifier(alpha=0.3, bandwidth=0.05, max_iter=2000).fit(X, y, g)
    monkeypatch.setattr(eq, "_DENSE_WHITENING_MAX", 0)
    diagonal = EqualizedDistributionClassifier(alpha=0.3, bandwidth=0.05, max_iter=2000).fit(X, y, g)
    assert full.converged_ and diagonal.converged_
    assert diagonal.loss_ == pytest.approx(full.loss_, rel=1e-6)
    np.testing.assert_allclose(diagonal.predict_proba(X), full.predict_proba(X), atol=1e-3)
    # sparse input takes the same path
    sparse = EqualizedDistributionClassifier(alpha=0.3, bandwidth=0.05, max_iter=2000).fit(sp.csr_matrix(X), y, g)
    assert sparse.loss_ == pytest.approx(diagonal.loss_, rel=1e-9)
