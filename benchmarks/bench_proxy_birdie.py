"""The proxy estimators where the truth is known: weighted, threshold and BIRDiE (pooled and by place), their 95%
intervals' coverage and the bounds' width, over many simulated data sets.

Usage::

    PYTHONPATH=$PWD python benchmarks/bench_proxy_birdie.py [--datasets 1000] [--broken-datasets 200]
        [--by-place-datasets 200] [--rows 50000] [--place-effect 0.6]

Each data set (luskin_core.analyses.proxy_simulation): surnames uniformly from the Census 2010 list, race from
P(race | surname), a ZCTA from P(ZCTA | race), so BISG is exactly calibrated; approval depends on true race only
(rates 0.40 Hispanic, 0.50 White, 0.35 Black, 0.48 Asian/Pacific Islander, 0.38 American Indian/Alaska Native,
0.44 Multiracial: impact ratios against White 0.80, 0.70, 0.96, 0.76, 0.88). The truth is the population's
impact ratio (the rates the data were drawn from); coverage against each data set's own ratio by true race is
printed beside it. Then the broken-assumption variant: approval also depends on the place (logit shifted by
``place-effect`` per standard deviation of the ZCTA's share of White residents), with each estimator's bias.
Seeded with np.random.default_rng; the by-place fit runs on the first ``--by-place-datasets`` data sets only
(it is the slow one), its intervals a bootstrap (``--boot`` replicates) on the first ``--boot-datasets`` only.

Coverage needs many data sets to be read: over N data sets a 95% interval's coverage has a binomial standard
error of sqrt(0.95 * 0.05 / N), 1.5 points at 200 (so one of five groups falls under 93% in about a third of
runs of a correct interval), 0.7 at 1,000: the table prints it. The bounds' line says how often they decide
against 0.8 (below whatever the proxy's errors / passes / could be either; bounds_decision, as the audit's words).
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from luskin_core.analyses import birdie
from luskin_core.analyses.proxy import RACE_LABELS, RACES
from luskin_core.analyses.proxy_audit import (
    _log_ratio_interval,
    bounds_decision,
    ratio_bounds,
    sufficient_statistics,
    weighted_rates,
)
from luskin_core.analyses.proxy_simulation import TRUE_RATES, population_rates, simulate
from luskin_core.stats.inference import ratio_interval

WHITE = RACES.index("white")
GROUPS = [i for i in range(len(RACES)) if i != WHITE]
METHODS = ("weighted", "threshold", "birdie", "birdie by place")


def one(rows: int, rng: np.random.Generator, place_effect: float, boot: int, seed: int, by_place: bool) -> dict:
    """Every estimator's impact ratio (and interval, where it has one) against White on one data set."""
    s = simulate(rows, rng, place_effect=place_effect)
    sums = sufficient_statistics(s.p, s.y)
    mu, cov = weighted_rates(sums)
    out: dict = {m: {} for m in METHODS}
    out["bounds"] = {}
    table = birdie.make_table(s.p, s.y, place=s.place)
    fit = birdie.fit_pooled(table)
    place_fit = birdie.fit_by_place(table, n_boot=boot, seed=seed, pooled=fit) if by_place else None
    k, n = sums.thr_k, sums.thr_n
    thr_lo, thr_hi = ratio_interval(k, n, np.full(6, k[WHITE]), np.full(6, n[WHITE]))
    for a in GROUPS:
        lo, hi = _log_ratio_interval(mu[a], mu[WHITE], cov[a, a], cov[WHITE, WHITE], cov[a, WHITE])
        out["weighted"][a] = (mu[a] / mu[WHITE], lo, hi)
        out["threshold"][a] = ((k[a] / n[a]) / (k[WHITE] / n[WHITE]), thr_lo[a], thr_hi[a])
        out["birdie"][a] = fit.impact_ratio(a, WHITE)
        out["birdie by place"][a] = (place_fit.impact_ratio(a, WHITE) if place_fit is not None
                                     else (np.nan, np.nan, np.nan))
        out["bounds"][a] = ratio_bounds(sums.bins, a, WHITE)
    sample = s.sample_rates()
    out["sample_truth"] = {a: sample[a] / sample[WHITE] for a in GROUPS}
    out["members"] = fit.members
    return out


def report(results: list[dict], truth: np.ndarray, title: str, boot_n: int) -> None:
    se = np.sqrt(0.95 * 0.05 / len(results))
    print(f"\n{title}\n(a 95% interval's coverage over {len(results)} data sets has a standard error of "
          f"{se * 100:.1f} points)")
    print(f"{'group':32s} {'estimator':16s} {'truth':>6s} {'mean':>7s} {'mean err':>9s} {'mean |err|':>10s} "
          f"{'coverage':>9s} {'vs sample':>9s} {'CI width':>8s}")
    for a in GROUPS:
        t = truth[a] / truth[WHITE]
        members = np.mean([r["members"][a] for r in results])
        label = f"{RACE_LABELS[RACES[a]]} ({members:,.0f})"
        for m in METHODS:
            rows = [r[m][a] for r in results]
            est = np.array([x[0] for x in rows], float)
            ran = np.isfinite(est)
            lo = np.array([x[1] for x in rows], float)
            hi = np.array([x[2] for x in rows], float)
            has = np.isfinite(lo) & np.isfinite(hi)
            sample = np.array([r["sample_truth"][a] for r in results])
            cover = f"{np.mean(((lo <= t) & (t <= hi))[has]) * 100:5.1f}%" if has.sum() >= 2 else "   -  "
            cover_s = (f"{np.mean(((lo <= sample) & (sample <= hi))[has]) * 100:5.1f}%" if has.sum() >= 2
                       else "   -  ")
            width = f"{np.nanmean(hi - lo):.3f}" if has.sum() >= 2 else "  -  "
            note = f" (on {ran.sum()} data sets)" if ran.sum() < len(rows) else ""
            if has.sum() >= 2 and has.sum() < ran.sum():
                note += f" (intervals on {has.sum()})"
            print(f"{label:32s} {m:16s} {t:6.3f} {np.nanmean(est):7.3f} {np.nanmean(est - t):+9.4f} "
                  f"{np.nanmean(np.abs(est - t)):10.4f} {cover:>9s} {cover_s:>9s} {width:>8s}{note}")
            label = ""
        bounds = np.array([r["bounds"][a] for r in results], float)
        inside = np.mean((bounds[:, 0] <= t) & (t <= bounds[:, 1]))
        decided = [bounds_decision(lo_, hi_ if np.isfinite(hi_) else None, 0.8) for lo_, hi_ in bounds]
        share = {d: decided.count(d) / len(decided) * 100 for d in ("below", "passes", "above", "either")}
        print(f"{'':32s} {'bounds':16s} {t:6.3f}  [{np.nanmean(bounds[:, 0]):.3f}, {np.nanmean(bounds[:, 1]):.3f}] "
              f"width {np.nanmean(bounds[:, 1] - bounds[:, 0]):.3f}, hold the truth {inside * 100:.0f}%; against "
              f"0.8: below whatever the proxy's errors {share['below']:.0f}%, passes {share['passes']:.0f}%, "
              f"reference below {share['above']:.0f}%, could be either {share['either']:.0f}%")
    if boot_n:
        print(f"(by place: intervals from a {boot_n}-replicate bootstrap on the first data sets only)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--datasets", type=int, default=1000)
    parser.add_argument("--broken-datasets", type=int, default=200, help="data sets of the broken-assumption run")
    parser.add_argument("--by-place-datasets", type=int, default=200, help="data sets the by-place model runs on")
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--place-effect", type=float, default=0.6)
    parser.add_argument("--boot", type=int, default=30)
    parser.add_argument("--boot-datasets", type=int, default=0)
    parser.add_argument("--seed", type=int, default=20261127)
    args = parser.parse_args()
    for effect, title, count in ((0.0, "Outcome by true race only (BIRDiE's assumption holds)", args.datasets),
                                 (args.place_effect, (f"Broken assumption: the outcome also depends on the place "
                                                      f"(logit + {args.place_effect} per sd of the ZCTA's White "
                                                      f"share)"), args.broken_datasets)):
        rng = np.random.default_rng(args.seed)
        start = time.perf_counter()
        results = [one(args.rows, rng, effect, args.boot if i < args.boot_datasets else 0, args.seed + i,
                       i < args.by_place_datasets) for i in range(count)]
        truth = population_rates(TRUE_RATES, effect)
        report(results, truth, f"{title}: {count} data sets of {args.rows:,} rows "
                                f"({time.perf_counter() - start:.0f} s)", args.boot if args.boot_datasets else 0)


if __name__ == "__main__":
    main()
