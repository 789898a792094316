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
        significant = groups.valid & sg.significant_p(bound.p_adjusted(groups.z), level)
        chosen = sg.carriers(cells, groups, significant, bound.critical)
        return [{int(j): int(groups.codes[g][j]) for j in np.flatnonzero(groups.codes[g] >= 0)}
                for g in chosen], bound.method
    observed = float(np.abs(groups.z[groups.valid]).max()) if groups.valid.any() else 0.0
    # Stopping once enough replicates pass the observed largest |z| gives the full calibration's decision
    # (nothing significant) at a fraction of the cost: the same draws in the same order (see sg.calibrate).
    calibration = sg.calibrate(cells, groups, replicates, level, seed, stop_above=observed)
    if calibration.replicates < replicates:
        return [], calibration.method
    significant = groups.valid & sg.significant_p(calibration.p_adjusted(groups.z), level)
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
def child(code: str, timeout: float | None = None) -> tuple[float, float, str]:
    """Run ``code`` in a fresh Python; (wall seconds, peak MB from VmHWM, stdout)."""
    wrapped = ("import atexit, sys\ndef _peak():\n    for line in open('/proc/self/status'):\n"
               "        if line.startswith('VmHWM'):\n            print('VmHWM', line.split()[1], file=sys.stderr)\n"
               "atexit.register(_peak)\n" + code)
    started = time.time()
    done = subprocess.run([sys.executable, "-c", wrapped], capture_output=True, text=True, cwd=ROOT, check=True,
                          timeout=timeout)
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


# -- issue 49: recovery and calibration per shape, through the scan's own choice -----------------------------
def wilson(hits: float, runs: int) -> str:
    """A share with its 95% Wilson interval, in percent."""
    if runs == 0:
        return "n/a"
    from luskin_core.stats.inference import wilson_interval

    low, high = wilson_interval(np.array([round(hits)]), np.array([runs]))
    return f"{100 * hits / runs:.1f}% [{100 * float(low[0]):.1f}, {100 * float(high[0]):.1f}]"


def mean_interval(values: list[float]) -> str:
    """A mean with its 95% normal interval (1.96 standard errors), in percent."""
    a = np.asarray(values, dtype=float)
    se = float(a.std(ddof=1) / math.sqrt(len(a))) if len(a) > 1 else 0.0
    return f"{100 * a.mean():.1f}% [{100 * max(0.0, a.mean() - 1.96 * se):.1f}, {100 * (a.mean() + 1.96 * se):.1f}]"


def _kind_table(rng: np.random.Generator, kind: str, bar: float) -> tuple[sg.Cells, list[dict[int, int]], list[float]]:
    """One simulated count table of ROWS rows over CARDS and its planted slices, each with its expected z drawn
    so that an oracle testing only that slice at the scan's bar has power 0.9 or more (expected z uniform from
    bar + 1.28 to bar + 3.5); returns the oracle's power per slice too.

    depth1: one value of one column. disjoint: 1-3 disjoint slices of 2-3 columns, 1-5% of the rows. overlap: one
    slice of two columns, and a third column whose value v holds 80% of the slice's rows (and its share of the
    others): a part of the slice, "slice and v", has nearly the slice's |z|. many: 8 disjoint slices of 2 columns
    at expected z 3-4.5 (below the family-wise bar: where the false discovery rate finds more). null: none."""
    from scipy.stats import norm

    total = math.prod(CARDS)
    codes = np.stack(np.unravel_index(np.arange(total), CARDS), axis=1)
    weight = np.full(total, 1.0)
    slices: list[dict[int, int]] = []
    if kind == "depth1":
        j = int(rng.integers(0, len(CARDS)))
        slices = [{j: int(rng.integers(0, CARDS[j]))}]
    elif kind == "disjoint":
        slices = _slices(rng, int(rng.integers(1, 4)))
    elif kind == "overlap":
        columns = sorted(rng.choice([0, 2, 3, 4, 6, 7], 2, replace=False).tolist())
        slices = [{j: int(rng.integers(0, CARDS[j])) for j in columns}]
        v = int(rng.integers(0, CARDS[5]))
        inside = np.all([codes[:, j] == x for j, x in slices[0].items()], axis=0)
        share = np.where(codes[:, 5] == v, 0.8 + 0.2 / CARDS[5], 0.2 / CARDS[5])
        weight = np.where(inside, share * CARDS[5], 1.0)
    elif kind == "many":
        tries = 0
        while len(slices) < 8:
            tries += 1
            if tries > 500:   # the slices drawn so far leave no room for another disjoint one: start again
                slices, tries = [], 0
            columns = sorted(rng.choice(len(CARDS), 2, replace=False).tolist())
            candidate = {j: int(rng.integers(0, CARDS[j])) for j in columns}
            if all(any(j in o and o[j] != x for j, x in candidate.items()) for o in slices):
                slices.append(candidate)
    sizes = rng.multinomial(ROWS, weight / weight.sum())
    rate = np.full(total, BASE)
    powers = []
    for slice_ in slices:
        inside = np.all([codes[:, j] == x for j, x in slice_.items()], axis=0)
        n = ROWS * float((weight * inside).sum() / weight.sum())
        signal = float(rng.uniform(3.0, 4.5)) if kind == "many" else float(rng.uniform(bar + 1.2816, bar + 3.5))
        powers.append(float(norm.sf(bar - signal) + norm.cdf(-bar - signal)))
        rate[inside] += signal * math.sqrt(BASE * (1 - BASE) * (1 / n + 1 / (ROWS - n)))
    positives = rng.binomial(sizes, np.clip(rate, 0, 1))
    keep = sizes > 0
    return sg.Cells(codes[keep], CARDS, sizes[keep].astype(float), positives[keep].astype(float)), slices, powers


def scan_choice(cells: sg.Cells, replicates: int, seed: int, level: float, error: str) -> tuple[list[dict[int, int]], float]:
    """The scan's findings on a count table: the library's steps (groups, the bar, p < level, then
    luskin_core.analyses.scan.choose: what its parts predict, the carriers); (findings, the bar)."""
    from luskin_core.analyses.scan import choose

    groups = sg.groups_of(cells, 3, 30)
    if error == "fdr":
        found = sg.false_discovery(groups, cells, level)
        p, critical = found.q, found.critical
    else:
        observed = float(np.abs(groups.z[groups.valid]).max())
        calibration = sg.calibrate(cells, groups, replicates, level, seed, stop_above=observed)
        if calibration.replicates < replicates:
            return [], calibration.critical
        p, critical = calibration.p_adjusted(groups.z), calibration.critical
    significant = groups.valid & sg.significant_p(p, level)
    chosen = choose(cells, groups, significant, critical).chosen
    return [{int(j): int(groups.codes[g][j]) for j in np.flatnonzero(groups.codes[g] >= 0)} for g in chosen], critical


def run_kinds(args: argparse.Namespace) -> None:
    """Per kind of table (``_kind_table``) ``--runs`` tables: the share reporting anything, exact recovery (the
    findings are exactly the planted slices), slices found, the mean false discovery proportion (a finding that is no
    planted slice), each with its 95% interval; the oracle's power at the scan's bar per slice."""
    command = "nice -n 10 .venv/bin/python benchmarks/bench_scan.py " + " ".join(sys.argv[1:])
    bar = 4.4   # the max-T bar of this shape at 0.05 (the calibration table above: 4.39-4.45)
    rng = np.random.default_rng(args.seed)
    started = time.time()
    rows = []
    for run in range(args.runs):
        cells, slices, powers = _kind_table(rng, args.kind, bar)
        key = sorted(map(sorted, map(dict.items, slices)))
        row = {"powers": powers}
        for error in args.errors.split(","):
            found, critical = scan_choice(cells, args.replicates, 1_000_000 * args.seed + run, args.level, error)
            # one value of a column of two values and the other value are the same finding (each is the other's
            # everyone else; of equal halves either is the one to name)
            found = [next((s_ for s_ in slices if len(f) == 1 == len(s_) and set(f) == set(s_) and
                           CARDS[next(iter(f))] == 2), f) for f in found]
            false = [f for f in found if f not in slices]
            oracle = [abs(oracle_z(cells, s_)) > critical for s_ in slices]
            apart = [f for f in false if all(any(j in s_ and s_[j] != v for j, v in f.items()) for s_ in slices)]
            row[error] = {"findings": [{str(j): v for j, v in f.items()} for f in found],
                          "found": len(found), "exact": sorted(map(sorted, map(dict.items, found))) == key,
                          "slices": sum(s_ in found for s_ in slices), "false": len(false), "apart": len(apart),
                          "fdp_apart": len(apart) / max(1, len(found)),
                          "fdp": len(false) / max(1, len(found)), "oracle_all": all(oracle), "bar": critical}
        rows.append(row)
        with Path(args.out).open("a") as handle:
            handle.write(json.dumps({"kind": args.kind, "run": run, "seed": args.seed, **row}) + "\n")
    print(f"{args.kind}: {len(rows)} tables, 100,000 rows x 8 columns {CARDS}, base rate {BASE}, level {args.level}, "
          f"{args.replicates} replicates; {time.time() - started:.0f} s; load now {load()}; {command}")
    for error in args.errors.split(","):
        runs = len(rows)
        anything = sum(r[error]["found"] > 0 for r in rows)
        line = (f"  {error}: reports anything {wilson(anything, runs)}; mean FDP (a finding that is no planted slice) "
                f"{mean_interval([r[error]['fdp'] for r in rows])}; mean share of findings holding no planted row "
                f"{mean_interval([r[error]['fdp_apart'] for r in rows])}; tables with a finding that is no "
                f"planted slice {wilson(sum(r[error]['false'] > 0 for r in rows), runs)}; false findings per table, "
                f"mean {float(np.mean([r[error]['false'] for r in rows])):.3f}")
        if args.kind != "null":
            slices = sum(len(r["powers"]) for r in rows)
            detected = [r for r in rows if r[error]["oracle_all"]]
            line += (f"; exact recovery {wilson(sum(r[error]['exact'] for r in rows), runs)}; among the "
                     f"{len(detected)} tables whose slices the oracle saw beyond the bar "
                     f"{wilson(sum(r[error]['exact'] for r in detected), len(detected))}; slices found "
                     f"{wilson(sum(r[error]['slices'] for r in rows), slices)}; oracle power at the bar, mean "
                     f"{100 * float(np.mean([p for r in rows for p in r['powers']])):.1f}%")
        print(line, flush=True)


# Where values multiply (issue 49): 8 columns whose full cross holds 72,000, 691,200 or 960,000 cells.
SHAPES = {"72,000 cells": CARDS, "691,200 cells": (2, 3, 4, 5, 6, 8, 10, 12),
          "960,000 cells": (2, 4, 5, 5, 5, 8, 10, 12)}


def make_shape(path: Path, rows: int, cards: tuple[int, ...]) -> None:
    import duckdb

    columns = ", ".join(f"CAST(floor(random() * {c}) AS INTEGER) AS c{j}" for j, c in enumerate(cards))
    con = duckdb.connect()
    con.execute("SELECT setseed(0.42)")
    con.execute(f"COPY (SELECT {columns}, CAST(random() < 0.3 AS INTEGER) AS y FROM range({rows})) "
                f"TO '{path}' (FORMAT PARQUET)")
    con.close()


def run_values(args: argparse.Namespace) -> None:
    """Each shape x size: ``luskin scan`` (depth 3, 999 replicates asked, the default calibration), DuckDB's GROUP BY
    over the 8 columns and AIF360's MDSS ``bias_scan`` (one direction, its defaults), each in a fresh process, one
    after another in one run (the machine is shared: the ratio to the GROUP BY beside it is what counts)."""
    folder = Path(args.data or tempfile.mkdtemp(prefix="luskin-values-"))
    folder.mkdir(parents=True, exist_ok=True)
    names = ",".join(f"c{j}" for j in range(8))
    sizes = [int(x) for x in args.rows.split(",")]
    shapes = [s for s in SHAPES if s.split()[0] in args.shapes.split(";")] if args.shapes else list(SHAPES)
    print(f"load at start {load()}; {os.cpu_count()} cores; each line a fresh process", flush=True)
    for shape in shapes:
        cards = SHAPES[shape]
        for rows in sizes:
            path = folder / f"values_{'x'.join(map(str, cards))}_{rows}.parquet"
            if not path.exists():
                make_shape(path, rows, cards)
            scan_code = ("import sys, json\nfrom luskin_cli.main import main\n"
                         f"sys.exit(main(['scan', '--data', {str(path)!r}, '--outcome', 'y', '--positive', '1', "
                         f"'--columns', {names!r}, '--depth', '3', '--replicates', '999', '--json']))")
            group_code = ("import duckdb\ncon = duckdb.connect()\ncon.execute('SET enable_progress_bar = false')\n"
                          f"print(len(con.sql(\"SELECT {names}, count(*) n, sum(y) k FROM read_parquet('{path}') "
                          "GROUP BY ALL\").fetchall()))")
            mdss_code = ("import warnings\nwarnings.filterwarnings('ignore')\nimport pandas as pd\n"
                         "from aif360.detectors.mdss_detector import bias_scan\n"
                         f"d = pd.read_parquet({str(path)!r})\n"
                         f"subset, score = bias_scan(d[{names.split(',')!r}], d['y'], favorable_value=1, "
                         "overpredicted=False)\nprint(len(subset), score)")
            line = [f"{shape:14s} {rows:>11,} rows"]
            walls = {}
            for name, code in (("GROUP BY", group_code), ("luskin scan", scan_code), ("MDSS", mdss_code)):
                if name == "MDSS" and (args.no_mdss or rows > args.mdss_max_rows):
                    continue
                before = load().split()[0]
                try:
                    wall, peak, out = child(code, timeout=args.mdss_timeout if name == "MDSS" else None)
                except subprocess.CalledProcessError as err:
                    line.append(f"{name} failed: {err.stderr.strip().splitlines()[-1][:120]}")
                    continue
                except subprocess.TimeoutExpired:
                    line.append(f"{name} > {args.mdss_timeout:.0f} s (stopped)")
                    continue
                walls[name] = wall
                note = ""
                if name == "luskin scan":
                    document = json.loads(out)
                    note = (f" [{document['groups_scanned']:,} groups, {len(document['findings'])} findings, "
                            f"bar {document['critical_value']:.3f}, {document['replicates']} replicates]")
                line.append(f"{name} {wall:6.1f} s {peak:6.0f} MB (load {before}){note}")
            ratio = walls.get("luskin scan", math.nan) / walls.get("GROUP BY", math.nan)
            print(" | ".join(line) + f" | scan / GROUP BY {ratio:.2f}", flush=True)


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
    kinds = sub.add_parser("kinds")
    kinds.add_argument("--kind", choices=["null", "depth1", "disjoint", "overlap", "many"], required=True)
    kinds.add_argument("--runs", type=int, default=100)
    kinds.add_argument("--replicates", type=int, default=199)
    kinds.add_argument("--seed", type=int, default=0)
    kinds.add_argument("--level", type=float, default=0.05)
    kinds.add_argument("--errors", default="fwer", help="fwer, fdr or both: fwer,fdr (the same tables)")
    kinds.add_argument("--out", default=os.devnull)
    values = sub.add_parser("values")
    values.add_argument("--rows", default="100000,1000000,10000000")
    values.add_argument("--shapes", default="", help="e.g. '691,200;72,000' (default: all three)")
    values.add_argument("--data", default=None)
    values.add_argument("--no-mdss", action="store_true")
    values.add_argument("--mdss-max-rows", type=int, default=10_000_000)
    values.add_argument("--mdss-timeout", type=float, default=900.0)
    calibration = sub.add_parser("calibration")
    calibration.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    {"sim": run_sim, "combine": run_combine, "speed": run_speed, "calibration": run_calibration,
     "values": run_values, "kinds": run_kinds}[args.part](args)


if __name__ == "__main__":
    main()
