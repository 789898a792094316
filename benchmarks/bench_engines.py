"""Audit where the data lives: a 50,000,000-row Parquet table and a 10,000,000-row CSV, each in a child process.

Targets (issue 9): the Parquet audit (6 groups x 20 strata, every number) under 5 s end to end,
peak memory under 1 GB, within 2x of a hand-written DuckDB GROUP BY on the same file measured in
the same run; the CSV audit under 15 s without pandas. Peak memory is the child's ru_maxrss.
Peers on the same files: the hand-written DuckDB query (counts only, no statistics) and, for the
CSV, pandas.read_csv(engine="pyarrow") followed by the in-memory audit.
Run: .venv/bin/python benchmarks/bench_engines.py [--rows 50000000] [--csv-rows 10000000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD_PRELUDE = """
import json, resource, sys, time
start = time.perf_counter()
"""
CHILD_END = """
elapsed = time.perf_counter() - start
print(json.dumps({"seconds": elapsed, "after_imports": globals().get("after_imports"), "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "check": check}))
"""

LUSKIN = """
import pandas as pd
from luskin_core import AuditSpec, audit
from luskin_core.sources import open_source
# Warm the modules imported on first use (Ibis' DuckDB backend; scipy and statsmodels for the statistics).
import ibis
ibis.duckdb.connect()
audit(pd.DataFrame({"group": ["A", "A", "B", "B"], "stratum": [1, 1, 1, 1], "decision": [0, 1, 0, 1]}),
      AuditSpec("decision", 1, group_by=("group",), strata=("stratum",), min_group_size=1))
warm = time.perf_counter()
result = open_source(PATH).audit(AuditSpec("decision", 1, group_by=("group",), strata=("stratum",)))
check = [int(result.counts.n.sum()), int(result.counts.positives.sum()), len(result.comparisons)]
after_imports = time.perf_counter() - warm
"""

DUCKDB = """
import duckdb
con = duckdb.connect()
rows = con.execute("SELECT \\"group\\", stratum, count(*) AS n, sum(decision) AS k FROM READER "
                   "GROUP BY ALL").fetchall()
check = [sum(r[2] for r in rows), int(sum(r[3] for r in rows)), len(rows)]
"""

PANDAS = """
import pandas as pd
from luskin_core import AuditSpec, audit
frame = pd.read_csv(PATH, engine="pyarrow")
result = audit(frame, AuditSpec("decision", 1, group_by=("group",), strata=("stratum",)))
check = [int(result.counts.n.sum()), int(result.counts.positives.sum()), len(result.comparisons)]
"""


def child(body: str, path: Path, reader: str = "") -> dict:
    """Run ``body`` in a fresh Python; its wall time (after imports start) and peak RSS."""
    code = CHILD_PRELUDE + textwrap.dedent(body).replace("PATH", repr(str(path))).replace("READER", reader) + CHILD_END
    begun = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False)
    if out.returncode != 0:
        raise SystemExit(out.stderr[-2000:])
    figures = json.loads(out.stdout.strip().splitlines()[-1])
    figures["process_seconds"] = time.perf_counter() - begun
    return figures


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
    import statistics

    from luskin_core import AuditSpec
    from luskin_core.conditions import parse_condition
    from luskin_core.counts import count_frame
    from luskin_core.data import load_sample
    from luskin_core.sources import Source

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

    print("\nIn-memory count table (median of 15, ms): numpy path vs DuckDB on the frame")
    for label, spec in specs.items():
        numpy_ms = median_ms(lambda spec=spec: count_frame(adult, spec))
        source = Source.from_frame(adult)
        duck_ms = median_ms(lambda spec=spec, source=source: source.count_table(spec))
        with_load_ms = median_ms(lambda spec=spec: Source.from_frame(adult).count_table(spec), repeat=5)
        print(f"  {label:44} numpy {numpy_ms:6.1f}  DuckDB (frame registered) {duck_ms:6.1f}  "
              f"DuckDB incl. registering {with_load_ms:6.1f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=50_000_000)
    parser.add_argument("--csv-rows", type=int, default=10_000_000)
    parser.add_argument("--in-memory-only", action="store_true", help="only the numpy vs DuckDB in-memory figures")
    parser.add_argument("--generate", metavar="FOLDER", help="only write the test tables into FOLDER")
    args = parser.parse_args()
    if args.generate:
        generate(Path(args.generate), args.rows, args.csv_rows)
        return
    if args.in_memory_only:
        in_memory_figures()
        return
    # This process stays small (no pandas, no DuckDB): Linux keeps a parent's peak RSS in a forked child's
    # ru_maxrss, so the data are generated, and every peer measured, in child processes.
    print(f"uptime: {os.popen('uptime').read().strip()}; cores: {os.cpu_count()}")
    with tempfile.TemporaryDirectory(prefix="luskin-bench-") as tmp:
        started = time.perf_counter()
        parquet, csv = Path(tmp) / "audit.parquet", Path(tmp) / "audit.csv"
        subprocess.run([sys.executable, __file__, "--generate", tmp, "--rows", str(args.rows), "--csv-rows",
                        str(args.csv_rows)], check=True, cwd=ROOT)
        print(f"generated {args.rows:,}-row Parquet ({parquet.stat().st_size / 1e6:.0f} MB) and {args.csv_rows:,}-row "
              f"CSV ({csv.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - started:.1f} s")
        rows = [
            ("Parquet", "Luskin audit (open_source -> every number)", child(LUSKIN, parquet)),
            ("Parquet", "hand-written DuckDB GROUP BY (counts only)",
             child(DUCKDB, parquet, f"read_parquet('{parquet}')")),
            ("CSV", "Luskin audit (DuckDB reads the CSV)", child(LUSKIN, csv)),
            ("CSV", "hand-written DuckDB GROUP BY (counts only)", child(DUCKDB, csv, f"read_csv('{csv}')")),
            ("CSV", "pandas.read_csv(pyarrow) + in-memory audit", child(PANDAS, csv)),
        ]
    print(f"\n{'file':8} {'method':46} {'seconds':>8} {'warm s':>7} {'process s':>9} {'peak MB':>8}  "
          "check (n, positives, rows)")
    for file, method, f in rows:
        warm = "" if f["after_imports"] is None else f"{f['after_imports']:.2f}"
        print(f"{file:8} {method:46} {f['seconds']:8.2f} {warm:>7} {f['process_seconds']:9.2f} {f['rss_mb']:8.0f}  "
              f"{f['check']}")
    print("seconds: from the child's first line (imports included); warm s: Luskin's audit once Ibis, scipy and "
          "statsmodels are imported; process s: the whole child process; peak MB: the child's ru_maxrss")
    luskin, hand = rows[0][2], rows[1][2]
    print(f"\nParquet: Luskin {luskin['seconds']:.2f} s (target < 5 s), {luskin['rss_mb']:.0f} MB (target < 1024 MB), "
          f"{luskin['seconds'] / hand['seconds']:.2f}x the hand-written query (target < 2x); "
          f"warm: {luskin['after_imports']:.2f} s, {luskin['after_imports'] / hand['seconds']:.2f}x")
    print(f"CSV: Luskin {rows[2][2]['seconds']:.2f} s (target < 15 s), {rows[2][2]['rss_mb']:.0f} MB")
    assert luskin["check"][:2] == hand["check"][:2], "Luskin's counts differ from the hand-written query's"
    assert rows[2][2]["check"][:2] == rows[3][2]["check"][:2]
    sys.stdout.flush()
    subprocess.run([sys.executable, __file__, "--in-memory-only"], check=True, cwd=ROOT)


if __name__ == "__main__":
    main()
