"""The subgroup scan, measured: honest on noise, exact on planted gaps, fast on 10,000,000 rows.

Two parts (issue 31):

``sim``: at 100,000 rows x 8 columns (cardinalities 5, 2, 6, 4, 5, 3, 4, 5: 4,684 groups at depth 3),
``--runs`` runs per scenario. Each run starts from the count table: cell sizes drawn multinomial (every
column uniform and independent) and each cell's positives binomial at its rate, which is exactly the
distribution of the count table of rows simulated one by one, so a run costs a table, not 100,000 rows.
* null: base rate 0.3 everywhere; the share of runs that report anything (goal <= 5%: the family-wise
  error rate the scan controls).
* planted: 1-3 disjoint slices of 2-3 columns holding 1-5% of the rows, each with a lift sized so that
  its expected z against the rest is ``--signal`` (default 6.5: an oracle that tests only the true slice
  at the 5% level has power about 1, and at the scan's own calibrated bar (about 4.4) about 0.98); the
  mean false discovery proportion (goal <= 5%), the share of runs whose findings are exactly the planted
  slices (goal >= 95%), and the share of planted slices found exactly.
Replicates per run: ``--replicates`` (default 199; the permutation p-value (1 + count) / (R + 1) keeps
its level at any R, only the power and the bar's Monte Carlo error depend on it). ``--calibration union``:
the calibration of a scan whose groups are counted with GROUPING SETS (no joint table, no replicates: a
union bound over each group's permutation law), on the same tables.

``speed``: a Parquet file of ``--rows`` rows x 8 integer columns (the cardinalities above) and a 0/1
outcome, scanned at depth 3 with 999 replicates by ``luskin scan --json`` in a fresh process (wall time
and peak memory, VmHWM), beside DuckDB's single GROUP BY over the same 8 columns in a fresh process.

``calibration``: the Scan page's default scan of the Adult sample (its default columns, depth 3, 999 replicates),
its replicates summed into the scanned groups by one sparse product (the default where it fits) and into every
group of the full cross (``SPARSE_ENTRIES = 0``), in alternating rounds in one process: CPU seconds of the scan,
and whether both give the same findings and critical value.

Run: .venv/bin/python benchmarks/bench_scan.py sim [--runs 1000] [--scenario null|planted|both] [--seed S] [--out F]
                                                   [--calibration replicates|union]
     .venv/bin/python benchmarks/bench_scan.py combine F1 F2 ...   (pool shards run in parallel)
     .venv/bin/python benchmarks/bench_scan.py speed [--rows 10000000] [--data FOLDER]
     .venv/bin/python benchmarks/bench_scan.py calibration [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from luskin_core.stats import subgroups as sg

CARDS = (5, 2, 6, 4, 5, 3, 4, 5)
ROWS = 100_000
BASE = 0.3


def load() -> str:
    with open("/proc/loadavg") as handle:
        return " ".join(handle.read().split()[:3])


# -- simulation ---------------------------------------------------------------------------------
def _slices(rng: np.random.Generator, how_many: int) -> list[dict[int, int]]:
    """Disjoint slices of 2-3 columns holding 1-5% of the rows (every pair sets one column to different values)."""
    out: list[dict[int, int]] = []
    while len(out) < how_many:
        depth = int(rng.integers(2, 4))
        columns = sorted(rng.choice(len(CARDS), depth, replace=False).tolist())
        share = 1 / math.prod(CARDS[j] for j in columns)
        if not 0.01 <= share <= 0.05:
            continue
        candidate = {j: int(rng.integers(0, CARDS[j])) for j in columns}
        if all(any(j in other and other[j] != v for j, v in candidate.items()) for other in out):
            out.append(candidate)
    return out


def simulate(rng: np.random.Generator, slices: list[dict[int, int]], signal: float) -> sg.Cells:
    """The count table of ROWS rows: sizes multinomial over the full cross, positives binomial per cell."""
    total = math.prod(CARDS)
    sizes = rng.multinomial(ROWS, np.full(total, 1 / total))
    codes = np.stack(np.unravel_index(np.arange(total), CARDS), axis=1)
    rate = np.full(total, BASE)
    for s in slices:
        inside = np.ones(total, dtype=bool)
        for j, v in s.items():
            inside &= codes[:, j] == v
        n = ROWS / math.prod(CARDS[j] for j in s)   # expected slice size
        rate[inside] += lift(n, signal)
    positives = rng.binomial(sizes, rate)
    keep = sizes > 0
    return sg.Cells(codes[keep], CARDS, sizes[keep].astype(float), positives[keep].astype(float))


def lift(n: float, signal: float) -> float:
    """The lift that makes a slice of n rows show an expected z of ``signal`` against the rest."""
    return signal * math.sqrt(BASE * (1 - BASE) * (1 / n + 1 / (ROWS - n)))


def scan_cells(cells: sg.Cells, replicates: int, seed: int, level: float = 0.05,
               union: bool = False) -> tuple[list[dict[int, int]], str]:
    """The scan's findings on a count table (the library's own steps: groups, calibration, carrier rule).

    ``union``: the calibration of a scan counted one grouping at a time (GROUPING SETS: no joint table, so
    no replicates), the union bound over each group's permutation law (sg.bound_calibration); its groups'
    counts are the table's marginals, as the GROUPING SETS query gives them (tests/test_scan.py)."""
    groups = sg.groups_of(cells, 3, 30)
    if union:
        bound = sg.bound_calibration(groups, cells.total, cells.positives, level)
        significant = groups.valid & (bound.p_adjusted(groups.z) <= level)
        chosen = sg.carriers(cells, groups, significant, bound.critical)
        return [{int(j): int(groups.codes[g][j]) for j in np.flatnonzero(groups.codes[g] >= 0)}
                for g in chosen], bound.method
    observed = float(np.abs(groups.z[groups.valid]).max()) if groups.valid.any() else 0.0
    # Stopping once enough replicates pass the observed largest |z| gives the full calibration's decision
    # (nothing significant) at a fraction of the cost: the same draws in the same order (see sg.calibrate).
    calibration = sg.calibrate(cells, groups, replicates, level, seed, stop_above=observed)
    if calibration.replicates < replicates:
        return [], calibration.method
    significant = groups.valid & (calibration.p_adjusted(groups.z) <= level)
    chosen = sg.carriers(cells, groups, significant, calibration.critical)
    found = [{int(j): int(groups.codes[g][j]) for j in np.flatnonzero(groups.codes[g] >= 0)} for g in chosen]
    return found, calibration.method


def oracle_z(cells: sg.Cells, slice_: dict[int, int]) -> float:
    """The two-proportion z of the true slice against the rest: what an oracle testing only that slice sees."""
    inside = np.ones(len(cells.n), dtype=bool)
    for j, v in slice_.items():
        inside &= cells.codes[:, j] == v
    n, k = float(cells.n[inside].sum()), float(cells.k[inside].sum())
    return sg.pair_z(n, k, cells.total - n, cells.positives - k)


def _share(hits: float, runs: int) -> str:
    """A share with its Monte Carlo standard error, in percent."""
    p = hits / runs
    return f"{100 * p:.1f}% (MC s.e. {100 * math.sqrt(p * (1 - p) / runs):.1f})"


def run_sim(args: argparse.Namespace) -> None:
    scenarios = ["null", "planted"] if args.scenario == "both" else [args.scenario]
    out_path = Path(args.out)
    command = "nice -n 10 .venv/bin/python benchmarks/bench_scan.py " + " ".join(sys.argv[1:])
    for scenario in scenarios:
        rng = np.random.default_rng(args.seed + (0 if scenario == "null" else 1))
        reported = exact = slices_found = slices_total = oracle_hits = 0
        fdps: list[float] = []
        methods: set[str] = set()
        started, load_start = time.time(), load()
        for run in range(args.runs):
            planted = _slices(rng, int(rng.integers(1, 4))) if scenario == "planted" else []
            cells = simulate(rng, planted, args.signal)
            found, method = scan_cells(cells, args.replicates, seed=1_000_000 * args.seed + run, level=args.level,
                                       union=args.calibration == "union")
            methods.add(method)
            done = run + 1
            reported += bool(found)
            false = [f for f in found if f not in planted]
            fdps.append(len(false) / max(1, len(found)))
            exact += sorted(map(sorted, map(dict.items, found))) == sorted(map(sorted, map(dict.items, planted)))
            slices_found += sum(p in found for p in planted)
            slices_total += len(planted)
            oracle_hits += sum(abs(oracle_z(cells, p)) > 1.959964 for p in planted)
            last = done == args.runs or time.time() - started > args.budget
            if done % 50 == 0 or last:
                fdp = np.asarray(fdps)
                summary = {"scenario": scenario, "runs": done, "calibration": args.calibration,
                           "replicates": args.replicates,
                           "replicate_method": sorted(methods),
                           "share_reporting_anything": reported / done,
                           "share_reporting_anything_text": _share(reported, done),
                           "mean_fdp": float(fdp.mean()),
                           "mean_fdp_se": float(fdp.std(ddof=1) / math.sqrt(done)) if done > 1 else None,
                           "exact_recovery": exact / done if scenario == "planted" else None,
                           "exact_recovery_text": _share(exact, done) if scenario == "planted" else None,
                           "slices_found_exactly": slices_found / slices_total if slices_total else None,
                           "slices_found_exactly_text": _share(slices_found, slices_total) if slices_total else None,
                           "oracle_power": oracle_hits / slices_total if slices_total else None,
                           "signal_z": args.signal, "level": args.level, "seconds": round(time.time() - started, 1),
                           "load_start": load_start, "load_now": load(), "command": command}
                print(json.dumps(summary), flush=True)
                with out_path.open("a") as handle:
                    handle.write(json.dumps(summary) + "\n")
            if last:
                break


def run_combine(args: argparse.Namespace) -> None:
    """Pool the last summary of each shard (``sim --seed S --out FILE`` run in parallel): counts add up, the
    false discovery proportions' means are weighted by runs and their standard errors combined."""
    pooled: dict[str, dict[str, float]] = {}
    for name in args.files:
        lines = [json.loads(line) for line in Path(name).read_text().splitlines() if line.strip()]
        last = lines[-1]
        runs = last["runs"]
        into = pooled.setdefault(last["scenario"], {"runs": 0, "reported": 0, "exact": 0, "fdp": 0.0, "fdp_var": 0.0,
                                                     "shards": 0})
        into["runs"] += runs
        into["shards"] += 1
        into["reported"] += round(last["share_reporting_anything"] * runs)
        into["exact"] += round((last["exact_recovery"] or 0) * runs)
        into["fdp"] += last["mean_fdp"] * runs
        into["fdp_var"] += (last["mean_fdp_se"] or 0) ** 2 * runs ** 2
        for key in ("slices_found_exactly", "oracle_power"):
            if last.get(key) is not None:
                into.setdefault(key + "_sum", 0.0)
                into[key + "_sum"] += last[key] * runs
    for scenario, p in pooled.items():
        runs = int(p["runs"])
        line = (f"{scenario}: {runs:,} runs ({int(p['shards'])} shards); reports anything "
                f"{_share(p['reported'], runs)}; mean FDP {100 * p['fdp'] / runs:.2f}% (MC s.e. "
                f"{100 * math.sqrt(p['fdp_var']) / runs:.2f})")
        if scenario == "planted":
            line += (f"; exact recovery {_share(p['exact'], runs)}; slices found exactly (run-weighted) "
                     f"{100 * p['slices_found_exactly_sum'] / runs:.1f}%; oracle power at 5% "
                     f"{100 * p['oracle_power_sum'] / runs:.1f}%")
        print(line)


# -- speed --------------------------------------------------------------------------------------
def child(code: str) -> tuple[float, float, str]:
    """Run ``code`` in a fresh Python; (wall seconds, peak MB from VmHWM, stdout)."""
    wrapped = ("import atexit, sys\ndef _peak():\n    for line in open('/proc/self/status'):\n"
               "        if line.startswith('VmHWM'):\n            print('VmHWM', line.split()[1], file=sys.stderr)\n"
               "atexit.register(_peak)\n" + code)
    started = time.time()
    done = subprocess.run([sys.executable, "-c", wrapped], capture_output=True, text=True, cwd=ROOT, check=True)
    wall = time.time() - started
    peak = next(float(line.split()[1]) / 1024 for line in done.stderr.splitlines() if line.startswith("VmHWM"))
    return wall, peak, done.stdout


def make_parquet(path: Path, rows: int) -> None:
    import duckdb

    columns = ", ".join(f"CAST(floor(random() * {c}) AS INTEGER) AS c{j}" for j, c in enumerate(CARDS))
    con = duckdb.connect()
    con.execute("SELECT setseed(0.42)")
    con.execute(f"COPY (SELECT {columns}, CAST(random() < 0.3 AS INTEGER) AS y FROM range({rows})) "
                f"TO '{path}' (FORMAT PARQUET)")
    con.close()


def run_speed(args: argparse.Namespace) -> None:
    folder = Path(args.data or tempfile.mkdtemp(prefix="luskin-scan-"))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"scan_{args.rows}.parquet"
    if not path.exists():
        make_parquet(path, args.rows)
    names = ",".join(f"c{j}" for j in range(len(CARDS)))
    scan_code = ("import sys, json\nfrom luskin_cli.main import main\n"
                 f"sys.exit(main(['scan', '--data', {str(path)!r}, '--outcome', 'y', '--positive', '1', '--columns', "
                 f"{names!r}, '--depth', '3', '--replicates', '999', '--json']))")
    group_code = ("import duckdb\ncon = duckdb.connect()\ncon.execute('SET enable_progress_bar = false')\n"
                  f"print(len(con.sql(\"SELECT {names}, count(*) n, sum(y) k FROM read_parquet('{path}') "
                  f"GROUP BY ALL\").fetchall()))")
    rows = []
    for _ in range(args.repeat):
        before = load()
        wall, peak, out = child(scan_code)
        document = json.loads(out)
        rows.append(("luskin scan (depth 3, 999 replicates)", wall, peak, before,
                     (f"{document['groups_scanned']:,} groups, {len(document['findings'])} findings, "
                      f"{document['replicate_method']}")))
        before = load()
        wall, peak, out = child(group_code)
        rows.append(("DuckDB GROUP BY over the 8 columns", wall, peak, before, f"{int(out.strip().splitlines()[-1]):,} cells"))
    print(f"{args.rows:,} rows x {len(CARDS)} columns {CARDS}, Parquet; fresh process each; load before each run")
    for name, wall, peak, before, note in rows:
        print(f"{name:42s} {wall:6.1f} s {peak:7.0f} MB  load {before}  {note}")


def run_calibration(args: argparse.Namespace) -> None:
    from luskin_core.analyses.scan import ScanSpec, default_columns, scan
    from luskin_core.counting.data import load_sample

    adult = load_sample("adult")
    columns = default_columns(adult, [c for c in adult.columns if c != "income"])
    spec = ScanSpec("income", ">50K", tuple(columns), depth=3)
    entries = sg.SPARSE_ENTRIES
    seconds: dict[str, list[float]] = {"scanned groups (sparse product)": [], "full cross (every group)": []}
    answers = {}
    for _ in range(args.rounds):
        for name, limit in (("scanned groups (sparse product)", entries), ("full cross (every group)", 0)):
            sg.SPARSE_ENTRIES = limit
            start = time.process_time()
            result = scan(adult, spec)
            seconds[name].append(time.process_time() - start)
            answers[name] = (result.critical_value, [f.sentence for f in result.findings])
    sg.SPARSE_ENTRIES = entries
    print(f"Adult, the Scan page's default: {len(columns)} columns {columns}, depth 3, {spec.replicates} replicates, "
          f"{result.groups_scanned:,} groups scanned; CPU seconds of scan(), {args.rounds} alternating rounds")
    for name, values in seconds.items():
        print(f"{name:34s} " + "  ".join(f"{v:5.2f}" for v in values) + f"   median {sorted(values)[len(values) // 2]:.2f} s")
    same = len({json.dumps(a) for a in answers.values()}) == 1
    print(f"same critical value ({result.critical_value:.4f}) and {len(result.findings)} findings: {same}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="part", required=True)
    sim = sub.add_parser("sim")
    sim.add_argument("--runs", type=int, default=1000)
    sim.add_argument("--replicates", type=int, default=199)
    sim.add_argument("--scenario", choices=["null", "planted", "both"], default="both")
    sim.add_argument("--signal", type=float, default=6.5)
    sim.add_argument("--seed", type=int, default=0)
    sim.add_argument("--level", type=float, default=0.05, help="the family-wise error level (--fdr)")
    sim.add_argument("--budget", type=float, default=float("inf"), help="stop a scenario after this many seconds")
    sim.add_argument("--out", default=os.devnull)
    sim.add_argument("--calibration", choices=["replicates", "union"], default="replicates",
                     help="union: the GROUPING SETS path's union bound instead of replicates")
    combine = sub.add_parser("combine")
    combine.add_argument("files", nargs="+")
    speed = sub.add_parser("speed")
    speed.add_argument("--rows", type=int, default=10_000_000)
    speed.add_argument("--repeat", type=int, default=1)
    speed.add_argument("--data", default=None)
    calibration = sub.add_parser("calibration")
    calibration.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    {"sim": run_sim, "combine": run_combine, "speed": run_speed, "calibration": run_calibration}[args.part](args)


if __name__ == "__main__":
    main()
