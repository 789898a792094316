"""Audit where the data lives: a 50,000,000-row Parquet table and a 10,000,000-row CSV, each in fresh child processes.

Targets (issue 9): the Parquet audit (6 groups x 20 strata, every number) under 5 s end to end,
peak memory under 1 GB, within 2x of a hand-written DuckDB GROUP BY on the same file measured in
the same run; the CSV audit under 15 s without pandas.

Every figure comes from a fresh ``python -c`` child (the same process model for Luskin and its
peers), repeated ``--repeat`` times in turn, the medians reported with the load average (from
/proc/loadavg) before each child:

* *cold s*: from the child's first line to the result (imports included, interpreter start not);
* *process s*: the whole child, measured by the parent (interpreter start and exit included);
* *warm s*: the same work done a second time in one child (every module imported, the file in the
  page cache as for the cold run);
* *peak MB*: the child's ``VmHWM`` from /proc/self/status. Not ``ru_maxrss``: on Linux a fork+exec'd
  child's ``ru_maxrss`` starts from its parent's high-water mark (exec keeps the old address space's
  peak in signal->maxrss), so a child of a big parent would report the parent's size.

Peers on the same files: the hand-written DuckDB query (``import duckdb``, one GROUP BY, counts only,
no statistics) and, for the CSV, pandas.read_csv(engine="pyarrow") followed by the in-memory audit.
Luskin's count table (group, stratum, n, positives: all 120 cells) must equal the hand-written
query's, cell for cell. The floor rows time the imports alone: what any audit through Luskin's
library pays before it reads a row.

Run: .venv/bin/python benchmarks/bench_engines.py [--rows 50000000] [--csv-rows 10000000] [--repeat 5]
(``--code FOLDER`` measures the luskin_core package in FOLDER instead, e.g. an earlier commit's
``git archive COMMIT luskin_core | tar -x -C FOLDER``; ``--data FOLDER`` reuses generated tables.)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CODE = ROOT  # the folder holding the luskin_core measured (the children run there)

CHILD_PRELUDE = """
import json, time
start = time.perf_counter()
"""
CHILD_END = """
elapsed = time.perf_counter() - start
def vm_hwm_mb():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
print("\\nFIGURES " + json.dumps({"seconds": elapsed, "warm": globals().get("warm"), "rss_mb": vm_hwm_mb(),
                               "check": globals().get("check")}))
"""

LUSKIN = """
from luskin_core import AuditSpec
from luskin_core.counting.sources import open_source

def run():
    result = audit(open_source(PATH), AuditSpec("decision", 1, group_by=("group",), strata=("stratum",)))
    counts = result.counts
    assert len(result.comparisons) == 120 and len(result.pooled) == 5
    return sorted([g, c, int(counts.n[i, j]), int(counts.positives[i, j])]
                  for i, g in enumerate(counts.groups) for j, c in enumerate(counts.cell_labels))

check = run()
"""

HAND = """
import duckdb

def run():
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")  # as Luskin's connections (it draws on stdout)
    rows = con.execute("SELECT \\"group\\", stratum, count(*) AS n, sum(decision) AS k FROM READER "
                       "GROUP BY ALL").fetchall()
    return sorted([g, f"stratum = {s}", int(n), int(k)] for g, s, n, k in rows)

check = run()
"""

WARM = """
again = time.perf_counter()
assert run() == check
warm = time.perf_counter() - again
"""

PANDAS = """
import pandas as pd
from luskin_core import AuditSpec, audit
frame = pd.read_csv(PATH, engine="pyarrow")
result = audit(frame, AuditSpec("decision", 1, group_by=("group",), strata=("stratum",)))
counts = result.counts
check = sorted([g, c, int(counts.n[i, j]), int(counts.positives[i, j])]
               for i, g in enumerate(counts.groups) for j, c in enumerate(counts.cell_labels))
"""

# What Luskin's audit of a DuckDB-read file imports before it reads a row (nothing else is imported).
IMPORTS_LUSKIN = """
from luskin_core import AuditSpec
from luskin_core.counting.sources import open_source
import ibis
ibis.duckdb.connect()
import luskin_core.analyses.audit
import scipy.special
"""
# The same without Ibis: luskin_core.spec.audit_spec (pandas, numpy), duckdb, the statistics.
IMPORTS_NO_IBIS = """
from luskin_core.spec.audit_spec import AuditSpec
import duckdb
duckdb.connect()
import luskin_core.analyses.audit
import scipy.special
"""
IMPORTS_DUCKDB = """
import duckdb
duckdb.connect()
"""
NOTHING = """
"""


def env() -> dict[str, str]:
    """The children import luskin_core from CODE first."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(CODE), os.environ.get("PYTHONPATH")]))}


def load() -> str:
    """The 1-, 5- and 15-minute load averages now."""
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def child(body: str, path: Path | None = None, reader: str = "") -> dict:
    """Run ``body`` in a fresh Python; its figures (see the module docstring)."""
    code = (CHILD_PRELUDE + textwrap.dedent(body).replace("PATH", repr(str(path))).replace("READER", reader)
            + CHILD_END)
    before = load()
    begun = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=CODE, env=env(),
                         check=False)
    if out.returncode != 0:
        raise SystemExit(out.stderr[-3000:])
    figures = json.loads(next(line for line in out.stdout.splitlines() if line.startswith("FIGURES "))[8:])
    figures["process_seconds"] = time.perf_counter() - begun
    figures["load"] = before
    return figures


def cli_child(path: Path) -> dict:
    """``luskin audit --data FILE --json`` as a user runs it: the whole process, timed by the parent."""
    before = load()
    begun = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "luskin_cli", "audit", "--data", str(path), "--outcome", "decision",
                          "--positive", "1", "--groups", "group", "--stratify", "stratum", "--json"],
                         capture_output=True, text=True, cwd=CODE, env=env(),
                         check=False)
    if out.returncode != 0:
        raise SystemExit(out.stderr[-3000:])
    seconds = time.perf_counter() - begun
    result = json.loads(out.stdout)
    return {"seconds": None, "warm": None, "rss_mb": None, "process_seconds": seconds, "load": before,
            "check": len(result["comparisons"])}


def generate(folder: Path, rows: int, csv_rows: int) -> tuple[Path, Path]:
    """The test tables, written by DuckDB: 6 groups of unequal size x 20 strata, a 0/1 decision."""
    import duckdb

    parquet, csv = folder / "audit.parquet", folder / "audit.csv"
    select = """
        SELECT CASE WHEN h < 40 THEN 'A' WHEN h < 60 THEN 'B' WHEN h < 75 THEN 'C' WHEN h < 85 THEN 'D'
                    WHEN h < 95 THEN 'E' ELSE 'F' END AS "group",
               (hash(i * 7 + 1) % 20)::INTEGER AS stratum,
               CASE WHEN (hash(i * 13 + 2) % 1000) < 200 + 20 * (hash(i * 7 + 1) % 20) + (CASE WHEN h < 40 THEN 50
                    WHEN h >= 95 THEN -50 ELSE 0 END) THEN 1 ELSE 0 END AS decision
        FROM (SELECT i, hash(i) % 100 AS h FROM range({n}) t(i))
    """
    with duckdb.connect() as con:
        con.execute(f"COPY ({select.format(n=rows)}) TO '{parquet}' (FORMAT parquet, ROW_GROUP_SIZE 1000000)")
        con.execute(f"COPY ({select.format(n=csv_rows)}) TO '{csv}' (FORMAT csv, HEADER)")
    return parquet, csv


def in_memory_figures() -> None:
    """The in-memory path: numpy counting (count_frame) vs DuckDB on the same frame (Source.from_frame)."""
    from luskin_core import AuditSpec
    from luskin_core.counting.count_table import CountTable
    from luskin_core.counting.data import load_sample
    from luskin_core.counting.executor import count_plan
    from luskin_core.counting.memory import count_frame
    from luskin_core.counting.sources import Source
    from luskin_core.spec.conditions import parse_condition

    def _table(source: Source, spec: AuditSpec) -> CountTable:   # the one path every executor's count takes
        plan, raw = count_plan(source, spec)
        return CountTable.from_raw(raw, plan)

    adult = load_sample("adult")
    specs = {
        "Adult preset (race == White, one filter)": AuditSpec(
            "income", ">50K", protected=parse_condition("race == White"),
            filters=(parse_condition("education-num > 10"),)),
        "Adult race x sex within education-num": AuditSpec("income", ">50K", group_by=("race", "sex"),
                                                          strata=("education-num",)),
    }

    def median_ms(fn: object, repeat: int = 15) -> float:
        fn()  # type: ignore[operator]
        times = []
        for _ in range(repeat):
            begun = time.perf_counter()
            fn()  # type: ignore[operator]
            times.append(time.perf_counter() - begun)
        return statistics.median(times) * 1e3

    print(f"\nIn-memory count table (median of 15, ms; load {load()}): numpy path vs DuckDB on the frame")
    for label, spec in specs.items():
        numpy_ms = median_ms(lambda spec=spec: count_frame(adult, spec))
        source = Source.from_frame(adult)
        duck_ms = median_ms(lambda spec=spec, source=source: _table(source, spec))
        with_load_ms = median_ms(lambda spec=spec: _table(Source.from_frame(adult), spec), repeat=5)
        print(f"  {label:44} numpy {numpy_ms:6.1f}  DuckDB (frame registered) {duck_ms:6.1f}  "
              f"DuckDB incl. registering {with_load_ms:6.1f}")


def median(runs: list[dict], key: str) -> float | None:
    values = [r[key] for r in runs if r.get(key) is not None]
    return statistics.median(values) if values else None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=50_000_000)
    parser.add_argument("--csv-rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=5, help="runs of every child, in turn (medians reported)")
    parser.add_argument("--in-memory-only", action="store_true", help="only the numpy vs DuckDB in-memory figures")
    parser.add_argument("--generate", metavar="FOLDER", help="only write the test tables into FOLDER")
    parser.add_argument("--data", metavar="FOLDER", help="use audit.parquet and audit.csv already in FOLDER")
    parser.add_argument("--code", metavar="FOLDER", help="measure the luskin_core package in FOLDER")
    args = parser.parse_args()
    global CODE
    if args.code:
        CODE = Path(args.code).resolve()
        assert (CODE / "luskin_core" / "sources.py").is_file(), f"no luskin_core package in {CODE}"
    if args.generate:
        generate(Path(args.generate), args.rows, args.csv_rows)
        return
    if args.in_memory_only:
        in_memory_figures()
        return
    # This process stays small (no pandas, no DuckDB): the data are generated, and every peer measured, in children.
    print(f"uptime: {os.popen('uptime').read().strip()}; cores: {os.cpu_count()}; luskin_core from {CODE}")
    with tempfile.TemporaryDirectory(prefix="luskin-bench-") as tmp:
        folder = Path(args.data) if args.data else Path(tmp)
        parquet, csv = folder / "audit.parquet", folder / "audit.csv"
        if not args.data:
            started = time.perf_counter()
            subprocess.run([sys.executable, __file__, "--generate", tmp, "--rows", str(args.rows), "--csv-rows",
                            str(args.csv_rows)], check=True, cwd=ROOT)
            print(f"generated in {time.perf_counter() - started:.1f} s")
        print(f"Parquet: {parquet.stat().st_size / 1e6:.0f} MB; CSV: {csv.stat().st_size / 1e6:.0f} MB")
        parquet_reader, csv_reader = f"read_parquet('{parquet}')", f"read_csv('{csv}')"
        plan = [
            ("Parquet", "Luskin audit (open_source -> every number)", lambda: child(LUSKIN, parquet)),
            ("Parquet", "hand-written DuckDB GROUP BY (counts only)", lambda: child(HAND, parquet, parquet_reader)),
            ("Parquet", "Luskin audit, run twice in one process", lambda: child(LUSKIN + WARM, parquet)),
            ("Parquet", "hand-written query, run twice in one process",
             lambda: child(HAND + WARM, parquet, parquet_reader)),
            ("Parquet", "luskin audit --data FILE --json (command line)", lambda: cli_child(parquet)),
            ("CSV", "Luskin audit (DuckDB reads the CSV)", lambda: child(LUSKIN, csv)),
            ("CSV", "hand-written DuckDB GROUP BY (counts only)", lambda: child(HAND, csv, csv_reader)),
            ("CSV", "Luskin audit, run twice in one process", lambda: child(LUSKIN + WARM, csv)),
            ("CSV", "hand-written query, run twice in one process", lambda: child(HAND + WARM, csv, csv_reader)),
            ("CSV", "pandas.read_csv(pyarrow) + in-memory audit", lambda: child(PANDAS, csv)),
            ("floor", "python -c '' (interpreter start and exit)", lambda: child(NOTHING)),
            ("floor", "imports of Luskin's audit (with Ibis)", lambda: child(IMPORTS_LUSKIN)),
            ("floor", "the same imports without Ibis", lambda: child(IMPORTS_NO_IBIS)),
            ("floor", "import duckdb (the hand-written query's)", lambda: child(IMPORTS_DUCKDB)),
        ]
        runs: list[list[dict]] = [[] for _ in plan]
        for round_ in range(args.repeat):
            print(f"round {round_ + 1}/{args.repeat}: load {load()}", flush=True)
            for i, (_, _, run) in enumerate(plan):
                runs[i].append(run())
        print(f"after: load {load()}")
    print(f"\nmedians of {args.repeat} runs\n{'file':8} {'method':48} {'cold s':>7} {'process s':>9} {'warm s':>7} "
          f"{'peak MB':>8}  load (1, 5, 15 min) before each run")
    for (file, method, _), figures in zip(plan, runs):
        cells = []
        for key, width, digits in (("seconds", 7, 2), ("process_seconds", 9, 2), ("warm", 7, 2), ("rss_mb", 8, 0)):
            value = median(figures, key)
            cells.append(" " * width if value is None else f"{value:{width}.{digits}f}")
        print(f"{file:8} {method:48} {' '.join(cells)}  {'; '.join(f['load'] for f in figures)}")
    print("cold s: from the child's first line (imports included); process s: the whole child (interpreter start and "
          "exit included); warm s: the second run in one child; peak MB: the child's VmHWM")
    print("\nevery run (cold s / process s / warm s), in the order run")
    for (file, method, _), figures in zip(plan, runs):
        print(f"{file:8} {method:48} " + "  ".join(
            "/".join("-" if f.get(key) is None else f"{f[key]:.2f}" for key in ("seconds", "process_seconds", "warm"))
            for f in figures))

    def fig(i: int, key: str) -> float:
        value = median(runs[i], key)
        assert value is not None
        return value

    for row in (0, 2, 5, 7):  # Luskin's count table equals the hand-written query's, cell for cell, in every run
        assert all(r["check"] == runs[row + 1][0]["check"] for r in runs[row]), plan[row][:2]
    assert all(r["check"] == runs[5][0]["check"] for r in runs[9])  # pandas
    assert len(runs[0][0]["check"]) == 120 and all(r["check"] == 120 for r in runs[4])
    for name, luskin, hand in (("Parquet", 0, 1), ("CSV", 5, 6)):
        print(f"\n{name}: Luskin {fig(luskin, 'seconds'):.2f} s cold ({fig(luskin, 'process_seconds'):.2f} s the whole "
              f"process), {fig(luskin, 'rss_mb'):.0f} MB; hand-written query {fig(hand, 'seconds'):.2f} s "
              f"({fig(hand, 'process_seconds'):.2f} s), {fig(hand, 'rss_mb'):.0f} MB")
        print(f"  end to end: {fig(luskin, 'seconds') / fig(hand, 'seconds'):.2f}x cold, "
              f"{fig(luskin, 'process_seconds') / fig(hand, 'process_seconds'):.2f}x whole processes (target < 2x)")
        print(f"  warm: Luskin {fig(luskin + 2, 'warm'):.2f} s vs the query {fig(hand + 2, 'warm'):.2f} s = "
              f"{fig(luskin + 2, 'warm') / fig(hand + 2, 'warm'):.2f}x")
    print(f"\ncommand line (Parquet): {fig(4, 'process_seconds'):.2f} s the whole process")
    floor_ibis, floor_plain, duck = fig(11, "seconds"), fig(12, "seconds"), fig(13, "seconds")
    query = fig(3, "warm")
    print(f"floor: imports {floor_ibis:.2f} s with Ibis, {floor_plain:.2f} s without (the query's own: {duck:.2f} s); "
          f"imports + the hand-written query warm ({query:.2f} s) = {floor_ibis + query:.2f} s with Ibis, "
          f"{floor_plain + query:.2f} s without, against 2x the hand-written query cold = "
          f"{2 * fig(1, 'seconds'):.2f} s")
    sys.stdout.flush()
    subprocess.run([sys.executable, str(Path(__file__).resolve()), "--in-memory-only"], check=True, cwd=CODE,
                   env=env())


if __name__ == "__main__":
    main()
