"""BISG and the proxy audit at scale, beside surgeo; and the proxy's accuracy and calibration on simulated data.

Usage::

    PYTHONPATH=$PWD python benchmarks/bench_proxy.py [--rows 10000000] [--file /tmp/luskin_proxy_10m.parquet]

1. Simulates people from the Census tables themselves (no public file with self-reported race, surnames and
   places is on the package registries; the package list has no voter-file package): a surname uniformly
   from the Census 2010 list, race from that surname's P(race | surname), a ZCTA from P(ZCTA | race), and an
   approval whose rate depends on race. In this world BISG's assumption (surname and place independent given
   race) holds, so the figures check the implementation and show the best case, not accuracy on real people.
2. Times, in a fresh child process on the Parquet file, the Census tables' load, BISG (streamed with Arrow, or
   in DuckDB through Ibis as for a database) and the weighted audit with bounds, end to end, with its peak
   memory (ru_maxrss) and CPU time.
3. On a 200,000-row subset: luskin_core.analyses.proxy beside surgeo's SurgeoModel (time, largest difference),
   accuracy (most likely group = true race), calibration by tenths of probability, and the weighted and
   threshold gaps beside the true gap.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import resource
import subprocess
import sys
import time

import numpy as np
import pandas as pd

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from luskin_core.analyses.proxy import PROB_COLUMNS, RACES, load_tables
from luskin_core.stats.judgement import Judgement

APPROVAL = np.array([0.55, 0.70, 0.45, 0.72, 0.50, 0.60])  # by true race, RACES order


def simulate(rows: int, seed: int = 0) -> pd.DataFrame:
    """People drawn from the Census tables (see the module docstring)."""
    import pyarrow as pa

    tables = load_tables()
    rng = np.random.default_rng(seed)
    names = tables.surname.index.to_numpy(dtype=object)
    name_probs = tables.surname.values / tables.surname.values.sum(axis=1, keepdims=True)
    zcta = tables.geo_given_race["zcta"]
    pick = rng.integers(0, len(names), rows)
    cumulative = name_probs.cumsum(axis=1)
    race = (cumulative[pick] > rng.random(rows)[:, None]).argmax(axis=1)
    place = np.empty(rows, dtype=np.int64)
    for r in range(len(RACES)):
        where = np.flatnonzero(race == r)
        weights = np.nan_to_num(zcta.values[:, r])
        place[where] = rng.choice(len(weights), size=len(where), p=weights / weights.sum())
    approved = (rng.random(rows) < APPROVAL[race]).astype(np.int8)
    table = pa.table({"surname": pa.array(names).take(pa.array(pick)),
                      "zip": pa.array(zcta.index.to_numpy(dtype=object)).take(pa.array(place)),
                      "approved": approved, "race": race.astype(np.int8)})
    return table.to_pandas() if rows <= 1_000_000 else table  # type: ignore[return-value]


def child(path: str, engine: str) -> None:
    """The timed part, alone in its process: tables, BISG (Arrow batches or the source's engine), the audit."""
    start = time.perf_counter()
    from luskin_core.analyses.proxy_audit import audit_sums
    from luskin_core.analyses.proxy_engine import parquet_proxy_sums

    imported = time.perf_counter()
    load_tables()
    loaded = time.perf_counter()
    if engine == "source":  # the path `luskin audit --proxy` takes with --stratify or a database (Ibis on DuckDB)
        from luskin_core.analyses.proxy_engine import source_proxy_sums
        from luskin_core.counting.sources import open_source

        sums, counts = source_proxy_sums(open_source(path), surname="surname", geography="zip",
                                         outcome="approved", positive=1)
    else:
        sums, counts = parquet_proxy_sums(path, surname="surname", geography="zip", outcome="approved", positive=1)
    summed = time.perf_counter()
    audit = audit_sums(sums, decision="approved", judgement=Judgement(named_reference="White"))
    done = time.perf_counter()
    birdie = {c.group: c.difference for c in audit.comparisons if c.method == "birdie"}
    weighted = {c.group: c.difference for c in audit.comparisons if c.method == "weighted"}
    threshold = {c.group: c.difference for c in audit.comparisons if c.method == "threshold"}
    bounds = {c.group: (c.bound_low, c.bound_high) for c in audit.comparisons if c.method == "weighted"}
    print(json.dumps({"imports_s": imported - start, "tables_s": loaded - imported, "engine_s": summed - loaded, "audit_s": done - summed,
                      "total_s": done - start, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "cpu_s": sum(resource.getrusage(resource.RUSAGE_SELF)[:2]),
                      "counts": counts, "reference": audit.reference, "weighted": weighted,
                      "threshold": threshold, "bounds": bounds, "birdie": birdie,
                      "birdie_lines": len(sums[None].table.y) if sums[None].table is not None else 0}))


def subset_figures(frame: pd.DataFrame) -> None:
    from luskin_core.analyses.proxy import compute_probabilities
    from luskin_core.analyses.proxy_audit import proxy_audit

    start = time.perf_counter()
    ours = compute_probabilities(frame["surname"], frame["zip"])
    ours_s = time.perf_counter() - start
    try:
        import surgeo

        start = time.perf_counter()
        model = surgeo.SurgeoModel()
        theirs = model.get_probabilities(frame["surname"], frame["zip"])
        surgeo_s = time.perf_counter() - start
        from luskin_core.analyses.proxy import normalize_name

        same = (model._normalize_names(frame["surname"]) == frame["surname"].map(normalize_name)).to_numpy()
        gap = np.abs(ours.probabilities.to_numpy()
                     - theirs[["hispanic", "white", "black", "api", "native", "multiple"]].to_numpy())
        print(f"subset of {len(frame):,} rows: luskin_core.analyses.proxy {ours_s:.2f} s, surgeo 1.1.2 {surgeo_s:.2f} s "
              f"(including its CSV load); largest difference where both read the name alike "
              f"{np.nanmax(gap[same]):.1e}; {(~same).sum():,} rows whose surname surgeo cuts short (a name "
              f"ending in JR, SR, III or IV, e.g. NASR read as NA) differ by up to {np.nanmax(gap[~same]):.2f}")
    except ImportError:
        print(f"subset of {len(frame):,} rows: luskin_core.analyses.proxy {ours_s:.2f} s (surgeo not installed)")
    p = ours.probabilities[list(PROB_COLUMNS)].to_numpy()
    ok = np.isfinite(p).all(axis=1)
    race = frame["race"].to_numpy()
    accuracy = (p[ok].argmax(axis=1) == race[ok]).mean()
    print(f"accuracy (most likely group = simulated race): {accuracy:.3f} on {ok.sum():,} rows")
    print("calibration (predicted probability tenth: mean predicted vs observed share, all groups pooled):")
    pred = p[ok].ravel()
    truth = (race[ok][:, None] == np.arange(len(RACES))[None, :]).ravel()
    tenth = np.minimum((pred * 10).astype(int), 9)
    for t in range(10):
        m = tenth == t
        if m.sum():
            print(f"  {t / 10:.1f}-{(t + 1) / 10:.1f}: predicted {pred[m].mean():.3f}, observed {truth[m].mean():.3f}"
                  f" ({m.sum():,} row-groups)")
    audit = proxy_audit(ours.probabilities, frame["approved"], decision="approved",
                        judgement=Judgement(named_reference="White"))
    true_rate = frame.groupby("race")["approved"].mean()
    print("gap against White, true / weighted / threshold 0.8 / bounds:")
    for c in audit.comparisons:
        if c.method != "weighted" or c.is_reference:
            continue
        i = [*(r for r in RACES)].index(RACES[[*audit_labels()].index(c.group)])
        t = next(x for x in audit.comparisons if x.method == "threshold" and x.group == c.group)
        truth_gap = true_rate.get(i, np.nan) - true_rate.get(1, np.nan)
        print(f"  {c.group}: {truth_gap:+.3f} / {c.difference:+.3f} / "
              f"{(t.difference if t.difference is not None else float('nan')):+.3f} / "
              f"[{c.bound_low:+.3f}, {c.bound_high:+.3f}]")


def audit_labels() -> tuple[str, ...]:
    from luskin_core.analyses.proxy_audit import LABELS

    return LABELS


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--file", default="/tmp/luskin_proxy_10m.parquet")
    parser.add_argument("--engines", default="arrow,source",
                        help="arrow (streamed Parquet), source (Ibis on DuckDB), comma-separated")
    parser.add_argument("--no-subset", action="store_true", help="skip the 200,000-row comparison with surgeo")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--engine", default="arrow", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.engine)
        return
    import pyarrow.parquet as pq

    path = pathlib.Path(args.file)
    if not path.exists() or pq.ParquetFile(path).metadata.num_rows != args.rows:
        start = time.perf_counter()
        table = simulate(args.rows)
        if isinstance(table, pd.DataFrame):
            table.to_parquet(path, index=False)
        else:
            pq.write_table(table, path)
        print(f"simulated {args.rows:,} rows into {path} in {time.perf_counter() - start:.1f} s "
              f"({path.stat().st_size / 1e6:.0f} MB)")
    print(f"load average before the timed runs: {' '.join(f'{x:.1f}' for x in __import__('os').getloadavg())}")
    for engine in args.engines.split(","):
        out = subprocess.run([sys.executable, __file__, "--child", str(path), "--engine", engine],
                             capture_output=True, text=True, check=True,
                             env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
        figures = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{args.rows:,} rows, BISG ({engine}) + outcome-aware (BIRDiE) audit with weighted, threshold and bounds: "
              f"{figures['total_s']:.1f} s end to end (imports {figures['imports_s']:.2f} s, Census tables "
              f"{figures['tables_s']:.2f} s, probabilities and sums {figures['engine_s']:.1f} s, audit "
              f"{figures['audit_s']:.2f} s), peak memory {figures['peak_mb']:.0f} MB, CPU time {figures['cpu_s']:.1f} s "
              "(user + system: what the run costs whatever the machine's load)")
        print(f"  fallbacks: {figures['counts']}")
        print(f"  reference {figures['reference']}; weighted gaps "
              f"{ {k: round(v, 4) for k, v in figures['weighted'].items()} }")
        print(f"  threshold gaps { {k: round(v, 4) if v is not None else None for k, v in figures['threshold'].items()} }")
        print(f"  outcome-aware (BIRDiE) gaps { {k: round(v, 4) if v is not None else None for k, v in figures['birdie'].items()} }"
              f" from a table of {figures['birdie_lines']:,} distinct (surname, place, outcome) lines; true gaps: "
              f"{ {RACES[i]: round(APPROVAL[i] - APPROVAL[1], 4) for i in range(len(RACES))} }")
    if not args.no_subset:
        subset = pq.read_table(path).slice(0, 200_000).to_pandas()
        subset_figures(subset)


if __name__ == "__main__":
    main()
