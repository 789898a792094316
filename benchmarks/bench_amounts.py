"""The amount audit (issue 50): its speed beside DuckDB's own GROUP BY, and its intervals' coverage by simulation.

``speed``: a Parquet file of N rows (default 10M: 4 groups, 12 strata, lognormal pay on a pay scale, so ties),
audited by ``luskin_core.analyses.amounts.run`` through the engine path (the count tables and one
order-statistics query, overall and per stratum, in DuckDB over the file), beside DuckDB's own queries giving the
same numbers (``count``, ``avg``, ``var_samp``, ``min``, ``max`` and the median by ``quantile_cont``, grouped by
group and stratum, and by group), measured in one run, in one process, best of ``--repeat`` after a warm-up of
each, the two alternated. The goal: within 2x of DuckDB.

``sim``: the coverage of every 95% interval and the bias of the gap shares, on skewed pay (lognormal, sigma 0.8),
on a pay scale (rounded to 50: ties), and in small groups (6, 10, 30, 100 rows against 100), with known truth:
the mean, the median, their gaps and their gaps as shares of the reference's. Each replicate draws both groups
afresh; coverage is given with its Wilson interval. Usage:

    .venv/bin/python benchmarks/bench_amounts.py speed [--rows 10000000] [--repeat 3]
    .venv/bin/python benchmarks/bench_amounts.py sim [--reps 2000]
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd


def _file(folder: Path, rows: int) -> Path:
    rng = np.random.default_rng(50)
    group = rng.choice(np.array(["a", "b", "c", "d"]), rows, p=[0.4, 0.35, 0.2, 0.05])
    stratum = rng.integers(0, 12, rows)
    pay = rng.lognormal(10 + 0.05 * stratum - 0.04 * (group == "b"), 0.5, rows)
    pay = np.where(rng.random(rows) < 0.3, np.round(pay, -3), np.round(pay, 2))   # a pay scale: many ties
    path = folder / f"pay_{rows}.parquet"
    pd.DataFrame({"g": group, "grade": stratum, "pay": pay}).to_parquet(path, row_group_size=1_000_000)
    return path


def _duckdb(path: Path) -> tuple[int, int]:
    """DuckDB's own: the same statistics per group and stratum and per group, with the median."""
    import duckdb

    con = duckdb.connect()
    stats = "count(*), avg(pay), var_samp(pay), min(pay), max(pay), quantile_cont(pay, 0.5)"
    cells = con.execute(f"SELECT g, grade, {stats} FROM read_parquet('{path}') GROUP BY g, grade").fetchall()
    overall = con.execute(f"SELECT g, {stats} FROM read_parquet('{path}') GROUP BY g").fetchall()
    con.close()
    return len(cells), len(overall)


def _luskin(path: Path) -> tuple[int, int]:
    from luskin_core import AuditSpec
    from luskin_core.analyses.amounts import run
    from luskin_core.counting.files import open_file

    result = run(open_file(str(path)), AuditSpec("pay", outcome_type="amount", group_by=("g",), strata=("grade",)))
    return len(result.by_cell), len(result.overall)


def _timed(function, path: Path) -> tuple[float, tuple[int, int]]:
    started = time.perf_counter()
    out = function(path)
    return time.perf_counter() - started, out


def speed(rows: int, repeat: int) -> None:
    import os

    with tempfile.TemporaryDirectory() as folder:
        path = _file(Path(folder), rows)
        print(f"{rows:,} rows in a Parquet file ({path.stat().st_size / 1e6:,.0f} MB), 4 groups x 12 strata; "
              f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        _duckdb(path), _luskin(path)   # warm-up: the file in the page cache, imports done
        ducks, ourses = [], []
        for _ in range(repeat):   # alternated, so a change of the machine's load falls on both alike
            duck, shape_d = _timed(_duckdb, path)
            ours, shape_l = _timed(_luskin, path)
            ducks.append(duck)
            ourses.append(ours)
        duck, ours = min(ducks), min(ourses)
        print(f"DuckDB GROUP BY (group x stratum, and group) with medians: {duck:.2f} s ({shape_d[0]} cells)")
        print(f"luskin amounts (counts, order statistics, tests, verdicts): {ours:.2f} s ({shape_l[0]} cells)")
        print(f"ratio: {ours / duck:.2f}x, best of {repeat} each, alternated (goal: at most 2x); "
              f"load {os.getloadavg()[0]:.1f} at the end")


def _wilson(k: int, n: int) -> tuple[float, float]:
    z = 1.959963984540054
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def _truth(mu: float, sigma: float, scale: float | None, rng: np.random.Generator) -> tuple[float, float]:
    """The true mean and median of the pay law (exact for lognormal; by a large draw when rounded to a scale)."""
    if scale is None:
        return math.exp(mu + sigma * sigma / 2), math.exp(mu)
    big = np.round(rng.lognormal(mu, sigma, 4_000_000) / scale) * scale
    return float(big.mean()), float(np.median(big))


def sim(reps: int) -> None:
    from luskin_core.stats.amounts import compare, summary_of

    rng = np.random.default_rng(2050)
    settings = [  # (name, n group, n reference, sigma, scale)
        ("skewed, 100 vs 100", 100, 100, 0.8, None),
        ("skewed, 30 vs 100", 30, 100, 0.8, None),
        ("skewed, 10 vs 100", 10, 100, 0.8, None),
        ("skewed, 6 vs 100", 6, 100, 0.8, None),
        ("pay scale (ties), 30 vs 100", 30, 100, 0.5, 50.0),
        ("pay scale (ties), 100 vs 100", 100, 100, 0.5, 50.0),
    ]
    mu_g, mu_r = math.log(2500.0), math.log(3000.0)
    names = ("mean", "median", "mean gap", "median gap", "mean gap share", "median gap share")
    print(f"{reps:,} replicates a setting; 95% intervals; coverage [Wilson 95%]; bias of the shares in points")
    lines = []
    for label, n_g, n_r, sigma, scale in settings:
        mean_g, median_g = _truth(mu_g, sigma, scale, rng)
        mean_r, median_r = _truth(mu_r, sigma, scale, rng)
        true = (mean_g, median_g, mean_g - mean_r, median_g - median_r, 1 - mean_g / mean_r, 1 - median_g / median_r)
        hits = [0] * 6
        counted = [0] * 6
        share_sum = [0.0, 0.0]
        for _ in range(reps):
            g = rng.lognormal(mu_g, sigma, n_g)
            r = rng.lognormal(mu_r, sigma, n_r)
            if scale is not None:
                g, r = np.round(g / scale) * scale, np.round(r / scale) * scale
            sg, sr = summary_of(g), summary_of(r)
            c = compare("g", None, "", sg, sr)
            intervals = (sg.mean_interval(), sg.median_interval(), (c.mean_gap.low, c.mean_gap.high),
                         (c.median_gap.low, c.median_gap.high), c.mean_share_interval, c.median_share_interval)
            for i, ci in enumerate(intervals):
                if ci is None or ci[0] is None or ci[1] is None:
                    continue
                counted[i] += 1
                hits[i] += ci[0] <= true[i] <= ci[1]
            share_sum[0] += c.mean_gap_share or 0.0
            share_sum[1] += c.median_gap_share or 0.0
        cells = []
        for i, name in enumerate(names):
            if counted[i] == 0:
                cells.append(f"{name} none")
                continue
            low, high = _wilson(hits[i], counted[i])
            cells.append(f"{name} {100 * hits[i] / counted[i]:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"
                         + ("" if counted[i] == reps else f" ({counted[i]:,} with an interval)"))
        bias = (100 * (share_sum[0] / reps - true[4]), 100 * (share_sum[1] / reps - true[5]))
        line = (f"{label}: " + "; ".join(cells)
                + f"; bias: mean gap share {bias[0]:+.2f}, median gap share {bias[1]:+.2f} points "
                  f"(true {100 * true[4]:.1f}% and {100 * true[5]:.1f}%)")
        lines.append(line)
        print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="kind", required=True)
    s = sub.add_parser("speed")
    s.add_argument("--rows", type=int, default=10_000_000)
    s.add_argument("--repeat", type=int, default=3)
    m = sub.add_parser("sim")
    m.add_argument("--reps", type=int, default=2000)
    args = parser.parse_args()
    if args.kind == "speed":
        speed(args.rows, args.repeat)
    else:
        sim(args.reps)


if __name__ == "__main__":
    main()
