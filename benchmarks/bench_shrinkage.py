"""Coverage and width of the partially pooled intervals (luskin_core.stats.shrinkage) against Wilson's, by simulation.

Each simulated audit is one cell with a cross of two columns: ``parents`` values of the first
column (share m_p drawn uniformly in [0.05, 0.6]), each with ``children`` values of the second.
One child per parent is large (300 to 2,000 rows), the others small (10 to 100 rows). Each
child's true share is drawn from Beta(kappa * m_p, kappa * (1 - m_p)): kappa sets how far
children stray from their parent (kappa = inf: not at all). The counts are binomial. We report,
for the small children (10 to 100 rows), the share of 95% intervals holding the true share
(goal: 93% to 97%) and the mean width, for the pooled interval and for Wilson's, in the same run.

    python benchmarks/bench_shrinkage.py [--audits 400] [--seed 1]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from luskin_core.counting.count_table import CountTable
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.stats.inference import wilson_interval
from luskin_core.stats.shrinkage import pooled_estimates

SPEC = AuditSpec(outcome="y", positive=1, group_by=("a", "b"))


def simulate(rng: np.random.Generator, kappa: float, parents: int, children: int) -> tuple[CountTable, np.ndarray]:
    groups, ns, ps = [], [], []
    for pi in range(parents):
        m = rng.uniform(0.05, 0.6)
        for ci in range(children):
            n = int(rng.integers(300, 2001)) if ci == 0 else int(rng.integers(10, 101))
            p = m if not np.isfinite(kappa) else rng.beta(kappa * m, kappa * (1 - m))
            groups.append(f"P{pi} × C{ci}")
            ns.append(n)
            ps.append(p)
    n = np.array(ns)
    k = rng.binomial(n, ps)
    table = CountTable(groups=tuple(groups), cell_keys=(None,), cell_labels=("All rows",),
                       n=n[:, None], positives=k[:, None], excluded={}, n_excluded=0)
    return table, np.array(ps)


def run(audits: int, seed: int) -> list[dict[str, float]]:
    rows = []
    for kappa in (5.0, 20.0, 100.0, 1000.0, float("inf")):
        for parents, children in ((2, 2), (4, 3), (6, 4)):
            rng = np.random.default_rng(seed)
            hit_p = hit_w = width_p = width_w = count = 0.0
            bands = {b: [0, 0] for b in ((10, 25), (25, 50), (50, 101))}
            for _ in range(audits):
                table, truth = simulate(rng, kappa, parents, children)
                est = pooled_estimates(table, SPEC)
                n = table.n[:, 0]
                small = (n >= 10) & (n <= 100)
                lo, hi = est.ci_low[:, 0], est.ci_high[:, 0]
                wl, wh = wilson_interval(table.positives[:, 0], n)
                inside = (lo <= truth) & (truth <= hi)
                hit_p += inside[small].sum()
                hit_w += ((wl <= truth) & (truth <= wh))[small].sum()
                width_p += (hi - lo)[small].sum()
                width_w += (wh - wl)[small].sum()
                count += small.sum()
                for (a, b), acc in bands.items():
                    sel = small & (n >= a) & (n < b)
                    acc[0] += inside[sel].sum()
                    acc[1] += sel.sum()
            rows.append({"kappa": kappa, "parents": parents, "children": children, "groups": count,
                         "pooled": hit_p / count, "wilson": hit_w / count, "pooled_width": width_p / count,
                         "wilson_width": width_w / count,
                         **{f"n{a}-{b - 1}": acc[0] / max(acc[1], 1) for (a, b), acc in bands.items()}})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--audits", type=int, default=150)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    start = time.perf_counter()
    rows = run(args.audits, args.seed)
    print(f"{'kappa':>6} {'cross':>5} {'groups':>6} | {'pooled':>6} {'n10-24':>6} {'n25-49':>6} {'n50-100':>7} "
          f"{'width':>6} | {'Wilson':>6} {'width':>6}")
    for r in rows:
        print(f"{r['kappa']:>6g} {r['parents']}x{r['children']:<3} {int(r['groups']):>6} | {100 * r['pooled']:5.1f}% "
              f"{100 * r['n10-24']:5.1f}% {100 * r['n25-49']:5.1f}% {100 * r['n50-100']:6.1f}% "
              f"{r['pooled_width']:6.3f} | {100 * r['wilson']:5.1f}% {r['wilson_width']:6.3f}")
    cover = [r["pooled"] for r in rows]
    ratio = np.mean([r["pooled_width"] / r["wilson_width"] for r in rows])
    print(f"\npooled coverage from {100 * min(cover):.1f}% to {100 * max(cover):.1f}% (goal 93-97%); "
          f"mean width {ratio:.2f} x Wilson's; {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
