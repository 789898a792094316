"""Speed of the classification-parity tools (issue 3's targets).

    .venv/bin/python benchmarks/bench_parity.py

Prints: the exact two-group solver on 1,000,000 scores (target < 2 s); exact vs PSO on COMPAS
over 10 seeds (exact >= 10x faster, objective never below PSO's); one loss+gradient of the
soft-histogram loss on 6,150 rows (~2 ms); one equalized-distribution fit on COMPAS (< 0.5 s);
an 11-point alpha sweep (< 5 s). Times are the best of a few repeats (the machine is shared).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sklearn.model_selection import train_test_split

from luskin_core.corrections.equalize import (
    DEFAULT_ALPHAS,
    EqualizedDistributionClassifier,
    _Objective,
    alpha_sweep,
)
from luskin_core.corrections.models import compas_paper_pipeline, risk_scores
from luskin_core.corrections.thresholds import GroupThresholdOptimizer
from luskin_core.counting.data import PRESETS, load_sample
from luskin_core.counting.prepared import prepare


def best_of(fn: Callable[[], object], repeats: int = 3) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def compas_arrays(seed: int):
    """The paper's COMPAS setup: features after its encoding + PCA, labels, groups, 60/20/20."""
    preset = PRESETS["compas"]
    prep = prepare(load_sample("compas"), preset.spec)
    X = prep.frame[list(preset.features)]
    y = prep.y.astype(int)
    g = np.where(prep.in_group, "African-American", "Caucasian")
    strat = y * 2 + prep.in_group.astype(int)
    idx = np.arange(len(y))
    rest, test = train_test_split(idx, test_size=0.2, random_state=seed, stratify=strat)
    train, tune = train_test_split(rest, test_size=0.25, random_state=seed, stratify=strat[rest])
    return X, y, g, train, tune, test


def main() -> None:
    print("# Classification parity: speed\n")
    rng = np.random.default_rng(0)
    n = 1_000_000
    g = rng.integers(0, 2, n)
    s = rng.random(n)
    y = (rng.random(n) < 0.2 + 0.6 * s - 0.1 * g).astype(int)
    t, opt = best_of(lambda: GroupThresholdOptimizer().fit(s, y, groups=g))
    print(f"- exact solver, 2 groups, {n:,} continuous scores (~{n // 2:,} distinct per group): "
          f"{t:.2f} s (target < 2 s); objective {opt.objective_:.5f}")

    X, y, g, train, tune, test = compas_arrays(0)
    ratios, exact_t, pso_t, never_below = [], [], [], True
    diffs = []
    for seed in range(10):
        X, y, g, train, tune, test = compas_arrays(seed)
        model = compas_paper_pipeline("LR", random_state=seed).fit(X.iloc[train], y[train])
        sc = risk_scores(model, X.iloc[tune])
        te, ex = best_of(lambda sc=sc, y=y, g=g, tune=tune: GroupThresholdOptimizer().fit(sc, y[tune], groups=g[tune]), 5)
        tp, ps = best_of(
            lambda sc=sc, y=y, g=g, tune=tune, seed=seed: GroupThresholdOptimizer(solver="pso", random_state=seed).fit(
                sc, y[tune], groups=g[tune]), 1
        )
        exact_t.append(te)
        pso_t.append(tp)
        ratios.append(tp / te)
        diffs.append(ex.objective_ - ps.objective_)
        never_below &= ex.objective_ >= ps.objective_ - 1e-12
    print(f"- COMPAS LR scores, 1,230 tuning rows, 10 seeds: exact {np.median(exact_t) * 1e3:.1f} ms "
          f"(median), PSO (50 particles x 200 iterations) {np.median(pso_t) * 1e3:.0f} ms; "
          f"exact is {min(ratios):.0f}x to {max(ratios):.0f}x faster (target >= 10x); exact objective "
          f"minus PSO objective: min {min(diffs):.5f}, mean {np.mean(diffs):.5f}, max {max(diffs):.5f}; "
          f"never below PSO: {never_below}")

    X, y, g, train, tune, test = compas_arrays(0)
    pre = compas_paper_pipeline("LR", random_state=0)[:-1]
    Xall = pre.fit_transform(X)
    obj = _Objective(Xall, y.astype(float), g, 0.2, 0.02, True)
    theta = np.random.default_rng(1).normal(scale=0.3, size=Xall.shape[1] + 1)
    t, _ = best_of(lambda: [obj(theta) for _ in range(100)], 5)
    print(f"- one loss + gradient, 6,150 rows x 20 features, 50 bins: {t / 100 * 1e3:.2f} ms")

    Xtr = pre.fit_transform(X.iloc[train])
    Xte = pre.transform(X.iloc[test])
    t, clf = best_of(lambda: EqualizedDistributionClassifier(alpha=0.2).fit(Xtr, y[train], g[train]))
    print(f"- one equalized-distribution fit, alpha 0.2, COMPAS training split (3,690 rows), "
          f"L-BFGS: {t:.2f} s (target < 0.5 s), {clf.n_iter_[0]} iterations")
    t, clf = best_of(lambda: EqualizedDistributionClassifier(alpha=0.2).fit(Xall, y, g))
    print(f"- the same on all 6,150 rows: {t:.2f} s, {clf.n_iter_[0]} iterations")
    t, mom = best_of(
        lambda: EqualizedDistributionClassifier(alpha=0.2, solver="momentum").fit(Xall, y, g), 1
    )
    print(f"- the paper's momentum descent (2,000 steps) on 6,150 rows: {t:.2f} s; loss "
          f"{mom.loss_:.6f} vs L-BFGS {clf.loss_:.6f}")
    t, _sweep = best_of(
        lambda: alpha_sweep(Xtr, y[train], g[train], Xte, y[test], g[test], DEFAULT_ALPHAS), 2
    )
    print(f"- alpha sweep, {len(DEFAULT_ALPHAS)} alphas, training split: {t:.2f} s (target < 5 s)")


if __name__ == "__main__":
    main()
