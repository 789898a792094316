"""``luskin audit`` on files beside DuckDB's own query on the same file, each a fresh process (issue 15, section 2).

Goals: on a 10,000,000-row Parquet file the audit at most 0.3 s above DuckDB's own GROUP BY
(``python -c "import duckdb; ..."``, counts only); a CSV counted where it is cheapest whatever its
size. Each command runs ``--repeat`` times in turn; the medians of the wall time and of the peak
memory (``/usr/bin/time``'s maximum resident set) are printed with the load average before the runs
(the machine is shared).

Also (issue 26): any stratified or crossed file audit (23.3M rows of HMDA's shape, race groups by 51 state
codes, crossed with sex, or by an income cut at its quartiles) within 2x of DuckDB's GROUP BY over the same
columns plus ``luskin --version``, under 300 MB, measured interleaved; and a CSV counted by DuckDB as Parquet is.

Run: .venv/bin/python benchmarks/bench_cli_files.py [--rows 10000000] [--csv-rows 1000000] [--repeat 5]
     [--hmda-rows 23300000] [--only-stratified] [--hmda-file /tmp/h23.parquet] [--before DIR]
(run it from a folder without the code, e.g. /tmp: ``python -m`` puts the working folder first on the path)
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
ARGS = ["--outcome", "y", "--positive", "yes", "--groups", "group", "--stratify", "stratum"]


def frame_of(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    group = rng.choice(np.array(list("ABCDEF"), dtype=object), n, p=[.3, .25, .2, .15, .07, .03])
    stratum = rng.integers(0, 20, n)
    y = np.where(rng.random(n) < 0.2 + 0.01 * stratum, "yes", "no")
    extra = {f"x{i}": rng.normal(size=n).round(3) for i in range(3)}
    return pd.DataFrame({"group": group, "stratum": stratum, "y": y, **extra,
                         "note": rng.choice(np.array(["alpha", "beta", "gamma delta"], dtype=object), n)})


_COMPILED: set[Path] = set()


def run(argv: list[str], repeat: int, root: Path = ROOT) -> tuple[float, float]:
    """Median wall seconds and peak MB of ``argv`` over ``repeat`` fresh processes (the code of ``root``).

    The code runs from its compiled bytecode, as an installed luskin does (pip compiles it; a checkout writes it
    on its first run): with PYTHONDONTWRITEBYTECODE set in the shell, every run compiled 31 of luskin's modules
    again (0.1 s of an audit)."""
    seconds, peaks = [], []
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(root)
    if root not in _COMPILED:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "luskin_core"), str(root / "luskin_cli")],
                       env=env, check=True, capture_output=True)
        _COMPILED.add(root)
    for _ in range(repeat):
        done = subprocess.run(["/usr/bin/time", "-f", "TIME %e %M", *argv], capture_output=True, text=True,
                              env=env, timeout=900, check=False)
        if done.returncode != 0:
            raise SystemExit(f"{argv} failed: {done.stderr[-800:]}")
        line = [x for x in done.stderr.splitlines() if x.startswith("TIME ")][-1].split()
        seconds.append(float(line[1]))
        peaks.append(int(line[2]) / 1024)
    return statistics.median(seconds), statistics.median(peaks)


def query_sql(path: Path) -> str:
    """DuckDB's own GROUP BY on the file: the counts of the audit's 120 cells, nothing else."""
    reader = "read_parquet" if path.suffix == ".parquet" else "read_csv"
    return (f"SELECT \"group\", stratum, count(*) AS n, sum(CAST(y = 'yes' AS INTEGER)) AS k "
            f"FROM {reader}('{path}') GROUP BY ALL")


def hmda_of(n: int, seed: int = 1) -> pd.DataFrame:
    """A year of HMDA's shape: race groups, sex, 51 state codes (1-56 with gaps), an income with many values."""
    rng = np.random.default_rng(seed)
    states = np.array([s for s in range(1, 57) if s not in (3, 7, 14, 43, 52)], dtype=np.int64)
    race = rng.choice(np.array(["White", "Black", "Asian", "Native", "Pacific", "Two or more", "Unknown"],
                               dtype=object), n, p=[.6, .12, .08, .02, .01, .04, .13])
    return pd.DataFrame({"race": race, "sex": rng.choice(np.array(["F", "M"], dtype=object), n),
                         "state": rng.choice(states, n), "income": np.round(rng.lognormal(4.3, 0.6, n), 0),
                         "action": np.where(rng.random(n) < 0.7, "approved", "denied")})


def stratified(rows: int, repeat: int, keep: str | None = None) -> None:
    """Stratified and crossed file audits beside DuckDB's GROUP BY over the same columns plus the command's start-up,
    every command in turn (interleaved), fresh processes: the goal is at most 2x and under 300 MB.
    ``keep``: the Parquet file's path, written there once and read again by later runs (23.3M rows take a while)."""
    base = [sys.executable, "-m", "luskin_cli", "audit", "--json", "--outcome", "action", "--positive", "approved"]
    with tempfile.TemporaryDirectory() as folder:
        path = Path(keep) if keep else Path(folder) / "hmda.parquet"
        if not path.exists():
            hmda_of(rows).to_parquet(path, row_group_size=1_000_000)
        peer = ("SELECT race, state, count(*) AS n, sum(CAST(action = 'approved' AS INTEGER)) AS k "
                f"FROM read_parquet('{path}') GROUP BY ALL")
        crossed = ("SELECT race, sex, state, count(*) AS n, sum(CAST(action = 'approved' AS INTEGER)) AS k "
                   f"FROM read_parquet('{path}') GROUP BY ALL")
        binned = ("SELECT race, quantile_cont(income, [0.0, 0.25, 0.5, 0.75]) AS q, count(*) AS n "
                  f"FROM read_parquet('{path}') GROUP BY ALL")
        cases = {
            "luskin audit --groups race --stratify state": base + ["--data", str(path), "--groups", "race",
                                                                  "--stratify", "state"],
            "DuckDB GROUP BY race, state": [sys.executable, "-c", f"import duckdb; duckdb.sql({peer!r}).fetchall()"],
            "luskin audit --groups race --groups sex --stratify state": base + [
                "--data", str(path), "--groups", "race", "--groups", "sex", "--stratify", "state"],
            "DuckDB GROUP BY race, sex, state": [sys.executable, "-c",
                                                 f"import duckdb; duckdb.sql({crossed!r}).fetchall()"],
            "luskin audit --groups race --stratify income (quartiles)": base + [
                "--data", str(path), "--groups", "race", "--stratify", "income"],
            "DuckDB quartiles of income by race": [sys.executable, "-c",
                                                   f"import duckdb; duckdb.sql({binned!r}).fetchall()"],
            "luskin --version (start-up)": [sys.executable, "-m", "luskin_cli", "--version"],
        }
        times: dict[str, list[float]] = {name: [] for name in cases}
        peaks: dict[str, list[float]] = {name: [] for name in cases}
        load = os.getloadavg()[0]
        for _ in range(repeat):
            for name, argv in cases.items():
                seconds, peak = run(argv, 1)
                times[name].append(seconds)
                peaks[name].append(peak)
        med = {name: statistics.median(v) for name, v in times.items()}
        width = max(len(name) for name in cases)
        print(f"Stratified and crossed audits of a {rows:,}-row Parquet file (interleaved, medians of {repeat}; "
              f"load {load:.1f} before, {os.getloadavg()[0]:.1f} after)")
        for name in cases:
            print(f"  {name.ljust(width)}  {med[name]:6.2f} s  {statistics.median(peaks[name]):7.0f} MB")
        start = med["luskin --version (start-up)"]
        for ours, peer in (("luskin audit --groups race --stratify state", "DuckDB GROUP BY race, state"),
                           ("luskin audit --groups race --groups sex --stratify state", "DuckDB GROUP BY race, sex, state"),
                           ("luskin audit --groups race --stratify income (quartiles)", "DuckDB GROUP BY race, state")):
            goal = 2 * (med[peer] + start)
            print(f"  {ours}: {med[ours]:.2f} s against the goal 2 x ({med[peer]:.2f} + {start:.2f}) = {goal:.2f} s "
                  f"-> {med[ours] / (med[peer] + start):.2f}x; peak {statistics.median(peaks[ours]):.0f} MB "
                  f"(goal under 300 MB)")


def duckdb_query(path: Path) -> list[str]:
    return [sys.executable, "-c", f"import duckdb; duckdb.sql({query_sql(path)!r}).fetchall()"]


def warm(parquet: Path, repeat: int = 5) -> None:
    """In one process, everything imported: the count table (plan and query) and the audit beside DuckDB's query."""
    import time

    import duckdb

    from luskin_core import AuditSpec, audit
    from luskin_core.counting.executor import count_plan
    from luskin_core.counting.sources import open_file

    spec = AuditSpec("y", "yes", group_by=("group",), strata=("stratum",))
    sql = query_sql(parquet)

    def median(fn: Callable[[], object]) -> float:
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        return statistics.median(times)

    audit(open_file(str(parquet)), spec)
    load = os.getloadavg()[0]
    ours = median(lambda: count_plan(open_file(str(parquet)), spec))
    whole = median(lambda: audit(open_file(str(parquet)), spec))
    peer = median(lambda: duckdb.sql(sql).fetchall())
    print(f"warm, one process: count table {ours:.3f} s, audit {whole:.3f} s, DuckDB's query {peer:.3f} s "
          f"(load {load:.1f})", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--csv-rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--hmda-rows", type=int, default=23_300_000,
                        help="rows of the stratified and crossed audits' Parquet file (0: skip them)")
    parser.add_argument("--only-stratified", action="store_true")
    parser.add_argument("--hmda-file", default=None, help="keep the stratified audits' Parquet file here (reused)")
    parser.add_argument("--before", default=None, metavar="DIR",
                        help="a copy of an earlier tree (git archive): its luskin audit on the CSV runs in turn too")
    options = parser.parse_args()
    if options.hmda_rows:
        stratified(options.hmda_rows, options.repeat, options.hmda_file)
    if options.only_stratified:
        return
    luskin = [sys.executable, "-m", "luskin_cli", "audit", "--json"]
    with tempfile.TemporaryDirectory() as folder:
        parquet, csv = Path(folder) / "big.parquet", Path(folder) / "big.csv"
        frame_of(options.rows).to_parquet(parquet)
        frame_of(options.csv_rows).to_csv(csv, index=False)
        cases = [
            (f"Parquet {options.rows:,} rows: luskin audit", luskin + ["--data", str(parquet), *ARGS]),
            (f"Parquet {options.rows:,} rows: DuckDB's own query", duckdb_query(parquet)),
            (f"CSV {csv.stat().st_size / 1e6:.0f} MB: luskin audit", luskin + ["--data", str(csv), *ARGS]),
            (f"CSV {csv.stat().st_size / 1e6:.0f} MB: audit(open_file(...)) (DuckDB SQL on the file)",
             [sys.executable, "-c", ("from luskin_core import AuditSpec, audit; from luskin_core.counting.sources import open_file; "
              f"audit(open_file({str(csv)!r}), AuditSpec('y', 'yes', group_by=('group',), strata=('stratum',)))")]),
            (f"CSV {csv.stat().st_size / 1e6:.0f} MB: DuckDB's own query", duckdb_query(csv)),
            ("luskin --version (start-up)", [sys.executable, "-m", "luskin_cli", "--version"]),
            ("bare python", [sys.executable, "-c", "pass"]),
        ]
        roots = {name: ROOT for name, _ in cases}
        if options.before:
            name = f"CSV {csv.stat().st_size / 1e6:.0f} MB: luskin audit, before ({Path(options.before).name})"
            cases.insert(3, (name, luskin + ["--data", str(csv), *ARGS]))
            roots[name] = Path(options.before).resolve()
        cases += [
            ("floor: imports of luskin audit's path (luskin_cli, audit, power)",
             [sys.executable, "-c", ("import luskin_cli.main, luskin_cli.audit, luskin_core.analyses.audit, luskin_core.stats.power, "
              "luskin_core.counting.sources, duckdb")]),
            ("floor: import duckdb", [sys.executable, "-c", "import duckdb"]),
        ]
        warm(parquet)
        width = max(len(name) for name, _ in cases)
        for name, argv in cases:
            load = os.getloadavg()[0]
            seconds, peak = run(argv, options.repeat, roots.get(name, ROOT))
            print(f"{name.ljust(width)}  {seconds:6.2f} s  {peak:7.0f} MB  (load {load:.1f})", flush=True)


if __name__ == "__main__":
    main()
