"""Adjusted gaps: Luskin beside statsmodels on rows, in the same run.

1. Adult, groups by race, 6 controls (age, education-num, hours-per-week, occupation,
   marital-status, relationship): luskin in memory, luskin through DuckDB (Source.from_frame), and
   statsmodels Logit on the rows plus the discrete-change AMEs (the same numbers, tested in
   tests/test_adjust.py).
2. 10,000,000 generated rows in Parquet: 6 groups, 8 controls (3 numeric, one categorical with 200
   levels, four with 2-5 levels), a yes/no outcome from a logistic model. Luskin reads it through
   DuckDB: the numeric controls make nearly one cell per row, so the model is fitted from sums per
   categorical key computed in the engine, one query per Newton step (luskin_core.analyses.adjust_sums), on
   every row. statsmodels on 10M rows would need a dense 10M x 218 design (17 GB): it runs on a
   1,000,000-row subset here, and the report says so.

Peak memory is the process's maximum resident set (``resource.getrusage``), read after each step;
run the steps as separate processes (``--only``) to see each peak alone.

    python benchmarks/bench_adjust.py [--rows 10000000] [--only adult|big] [--path /tmp/adjust_bench.parquet]
                                      [--max-cells N] [--no-statsmodels]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from luskin_core import load_sample
from luskin_core.analyses.adjust import adjust
from luskin_core.spec.audit_spec import AuditSpec

ADULT_CONTROLS = ["age", "education-num", "hours-per-week", "occupation", "marital-status", "relationship"]


def load() -> str:
    """The machine's load averages (1, 5, 15 minutes): the machine is shared, so every figure says it."""
    import os

    return "load " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(func, repeat: int = 3):
    best, value = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        value = func()
        best = min(best, time.perf_counter() - start)
    return best, value


def statsmodels_on_rows(frame: pd.DataFrame, group: str, reference: str, numeric, categorical, y):
    """statsmodels Logit on the rows with the same design, and the discrete-change AME per group."""
    import statsmodels.api as sm

    cols = {"intercept": np.ones(len(frame))}
    groups = sorted(frame[group].astype(str).unique())
    for g in groups:
        if g != reference:
            cols[f"g_{g}"] = (frame[group].astype(str) == g).to_numpy(dtype=float)
    for name in numeric:
        cols[name] = frame[name].to_numpy(dtype=float)
    for name in categorical:
        values = frame[name].astype(str)
        counts = values.value_counts()
        for level in sorted(counts.index, key=lambda v: (-counts[v], v))[1:]:
            cols[f"{name}={level}"] = (values == level).to_numpy(dtype=float)
    X = pd.DataFrame(cols)
    fitted = sm.Logit(y, X).fit(method="newton", tol=1e-10, disp=False)
    base = X.copy()
    gcols = [c for c in X.columns if c.startswith("g_")]
    base[gcols] = 0.0
    p0 = fitted.predict(base)
    ames = {}
    for c in gcols:
        with_g = base.copy()
        with_g[c] = 1.0
        ames[c[2:]] = float(np.mean(fitted.predict(with_g) - p0))
    return ames


def bench_adult() -> None:
    from luskin_core.counting.sources import Source

    adult = load_sample("adult")
    spec = AuditSpec(outcome="income", positive=">50K", group_by=("race",))
    seconds, result = timed(lambda: adjust(adult, spec, ADULT_CONTROLS))
    print(f"Adult, race, 6 controls: luskin in memory {seconds:.2f} s (best of 3); "
          f"{result.n_rows:,} rows, {result.n_cells:,} cells, {result.n_parameters} coefficients, peak {peak_mb():.0f} MB; "
          f"{load()}")
    source = Source.from_frame(adult)
    seconds_e, result_e = timed(lambda: adjust(source, spec, ADULT_CONTROLS))
    print(f"Adult, race, 6 controls: luskin through DuckDB {seconds_e:.2f} s (best of 3); {load()}")
    rows = adult.assign(occupation=adult["occupation"].astype("string").fillna("Unknown"))
    y = (rows["income"] == ">50K").to_numpy(dtype=float)
    start = time.perf_counter()
    ames = statsmodels_on_rows(rows, "race", result.reference, ADULT_CONTROLS[:3], ADULT_CONTROLS[3:], y)
    seconds_sm = time.perf_counter() - start
    gap = max(abs(ames[g.group] - g.adjusted_difference) for g in result.gaps)
    gap_e = max(abs(a.adjusted_difference - b.adjusted_difference) for a, b in zip(result.gaps, result_e.gaps))
    print(f"Adult, race, 6 controls: statsmodels Logit on rows + AMEs {seconds_sm:.2f} s; largest AME difference "
          f"to luskin {gap:.1e} (DuckDB vs in memory {gap_e:.1e}); {load()}")


def make_parquet(path: Path, rows: int, seed: int = 0) -> None:
    """10M rows written in chunks (never all in memory): 6 groups, 3 numeric, 5 categorical controls."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    groups = np.array(["A", "B", "C", "D", "E", "F"])
    branches = np.array([f"b{i:03d}" for i in range(200)])
    branch_effect = rng.normal(0, 0.5, 200)
    writer = None
    chunk = 1_000_000
    for start in range(0, rows, chunk):
        m = min(chunk, rows - start)
        g = rng.integers(0, 6, m)
        b = rng.integers(0, 200, m)
        c2, c3, c4, c5 = rng.integers(0, 3, m), rng.integers(0, 4, m), rng.integers(0, 5, m), rng.integers(0, 2, m)
        x1 = rng.normal(0.35 + 0.02 * g, 0.1, m)          # debt-to-income
        x2 = rng.normal(0.8, 0.1, m)                        # loan-to-value
        x3 = np.exp(rng.normal(11 - 0.05 * g, 0.5, m))      # income
        eta = (-0.5 - 0.15 * (g == 1) - 0.3 * (g == 2) + 0.1 * (g == 3) - 4 * (x1 - 0.35) - 2 * (x2 - 0.8)
               + 0.3 * (np.log(x3) - 11) + branch_effect[b] + 0.2 * c2 - 0.1 * c3 + 0.05 * c4 - 0.2 * c5)
        y = rng.random(m) < 1 / (1 + np.exp(-eta))
        table = pa.table({"race": groups[g], "dti": x1, "ltv": x2, "income": x3, "branch": branches[b],
                          "product": c2.astype(np.int64), "channel": np.array(["web", "branch", "phone", "broker"])[c3],
                          "term": (c4 + 1) * 60, "first_home": c5.astype(bool).astype(str),
                          "approved": np.where(y, "yes", "no")})
        if writer is None:
            writer = pq.ParquetWriter(str(path), table.schema)
        writer.write_table(table)
    assert writer is not None
    writer.close()


BIG_CONTROLS = ["dti", "ltv", "income", "branch", "channel", "first_home"]
BIG_CATEGORICAL = ["product", "term"]


def bench_big(path: Path, rows: int, max_cells: int | None, statsmodels: bool) -> None:
    from luskin_core.counting.sources import open_source

    if not path.exists():
        start = time.perf_counter()
        make_parquet(path, rows)
        print(f"Generated {rows:,} rows in {path} ({path.stat().st_size / 1e6:.0f} MB) in "
              f"{time.perf_counter() - start:.1f} s")
    spec = AuditSpec(outcome="approved", positive="yes", group_by=("race",), reference="A")
    start = time.perf_counter()
    source = open_source(str(path))
    result = adjust(source, spec, BIG_CONTROLS, categorical=BIG_CATEGORICAL, max_cells=max_cells)
    seconds = time.perf_counter() - start
    print(f"{rows:,} rows Parquet, 6 groups, 8 controls: luskin end to end {seconds:.1f} s, peak {peak_mb():.0f} MB; "
          f"{result.n_rows:,} rows fitted ({result.n_cells:,} keys), {result.n_parameters} coefficients, "
          f"{result.iterations} Newton steps; {load()}")
    print(f"  note: {result.rows_note}")
    for g in result.gaps:
        print(f"  {g.group}: raw {100 * g.raw_difference:+.2f}, adjusted {100 * g.adjusted_difference:+.2f} "
              f"({100 * g.adjusted_ci_low:+.2f} to {100 * g.adjusted_ci_high:+.2f}) points")
    if not statsmodels:
        return
    import duckdb

    subset_rows = 1_000_000
    start = time.perf_counter()
    con = duckdb.connect()
    frame = con.execute(f"SELECT * FROM read_parquet('{path}') USING SAMPLE reservoir({subset_rows} ROWS) "
                        "REPEATABLE (1)").df()
    y = (frame["approved"] == "yes").to_numpy(dtype=float)
    frame["product"] = frame["product"].astype(str)
    frame["term"] = frame["term"].astype(str)
    ames = statsmodels_on_rows(frame, "race", "A", ["dti", "ltv", "income"],
                               ["branch", "channel", "first_home", "product", "term"], y)
    seconds_sm = time.perf_counter() - start
    print(f"statsmodels Logit on a {subset_rows:,}-row subset (not 10M: a dense 10M x {result.n_parameters} design "
          f"is {10_000_000 * result.n_parameters * 8 / 1e9:.0f} GB) + AMEs: {seconds_sm:.1f} s, peak {peak_mb():.0f} MB; "
          f"{load()}")
    print("  AMEs: " + ", ".join(f"{g}: {100 * v:+.2f}" for g, v in sorted(ames.items())))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--only", choices=["adult", "big"])
    parser.add_argument("--path", default="/tmp/luskin_adjust_bench.parquet")
    parser.add_argument("--max-cells", type=int, default=None,
                        help="fit from per-key sums past this many cells (default 1,000,000)")
    parser.add_argument("--no-statsmodels", action="store_true", help="skip statsmodels on the 1M-row subset")
    args = parser.parse_args()
    if args.only in (None, "adult"):
        bench_adult()
    if args.only in (None, "big"):
        bench_big(Path(args.path), args.rows, args.max_cells, not args.no_statsmodels)


if __name__ == "__main__":
    main()
