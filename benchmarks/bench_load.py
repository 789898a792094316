"""Speed and memory of ``load_csv`` on a large Adult-like CSV, beside pandas (pyarrow engine) and DuckDB.

Targets (issue 9, the in-memory path): ``load_csv`` within 1.5x of
``pandas.read_csv(engine="pyarrow")`` on the same file, and a peak memory growth under 2x the
file's size. The file is generated in a temporary folder: 10,000,000 rows drawn from the UCI
Adult sample (15 columns, comma separated, ``?`` for missing as in Adult; age, fnlwgt and
hours-per-week varied so that values are not just repeats), about 1.1 GB.

Every single read runs in its own fresh Python process (started by fork+exec), readers
interleaved, so that one reader's memory or warm caches never count for another. Peak memory is
read from ``/proc/self/status`` ``VmHWM``, the high-water mark of the child's own address
space, which starts afresh at exec. ``ru_maxrss`` is not used: on Linux a child inherits its
parent's RSS high-water mark in it across exec (here, the parent that generated the file), so a
read that stayed below that mark showed no growth at all.

Two runs per reader and repeat, each in its own process:
- cold: the growth is the peak after the read minus ``VmHWM`` after the child's imports
  (pandas, pyarrow.csv, pyarrow.compute and the reader's module: code, not data); it includes
  what the reader's first use costs once per process (lazy imports, allocator arenas, threads).
- warm: the child first reads a 20,000-row copy of the file with the same reader; the growth is
  the peak minus ``VmRSS`` just before the big read: what one more file costs a process that
  has read one before (a dashboard, the command line reading several files).
The time shown is the cold run's. Every reader returns a pandas DataFrame; figures are medians
over ``--repeat`` runs.

Run:   .venv/bin/python benchmarks/bench_load.py            (10,000,000 rows; a few minutes)
       .venv/bin/python benchmarks/bench_load.py --quick    (1,000,000 rows)
       .venv/bin/python benchmarks/bench_load.py --rows 3000000 --repeat 3 --keep /tmp/adult3m.csv
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

READERS = ("luskin load_csv", "pandas read_csv(engine='pyarrow')", "duckdb read_csv(...).df()")


def generate(path: Path, rows: int, seed: int = 0) -> None:
    """Write ``rows`` Adult-like rows (header included) to ``path``."""
    import numpy as np

    from luskin_core.counting.data import load_sample

    adult = load_sample("adult")
    rng = np.random.default_rng(seed)
    text = {c: adult[c].astype(object).where(adult[c].notna(), "?").astype(str).to_numpy()
            for c in adult.columns}
    chunk = 500_000
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        out.write(",".join(adult.columns) + "\n")
        for start in range(0, rows, chunk):
            n = min(chunk, rows - start)
            pick = rng.integers(0, len(adult), n)
            columns = []
            for name in adult.columns:
                if name == "age":
                    values = rng.integers(17, 91, n).astype(str)
                elif name == "fnlwgt":
                    values = rng.integers(12_000, 1_500_000, n).astype(str)
                elif name == "hours-per-week":
                    values = rng.integers(1, 100, n).astype(str)
                else:
                    values = text[name][pick]
                columns.append(values.astype(object))
            out.write("\n".join(",".join(row) for row in zip(*columns)) + "\n")


def _high_water_mark() -> int:
    """This process's peak resident memory in bytes (``VmHWM``: fresh after exec, unlike ``ru_maxrss``)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise SystemExit("no VmHWM in /proc/self/status: this benchmark needs Linux")


def _status(field: str) -> int:
    """A memory figure of this process from ``/proc/self/status``, in bytes (``VmHWM``, ``VmRSS``)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise SystemExit(f"no {field} in /proc/self/status: this benchmark needs Linux")


def _measure(kind: str, path: str, warm_up: str) -> dict[str, float]:
    """Load ``path`` with one reader in this (fresh) process; wall time and peak memory growth.

    With ``warm_up`` (a small CSV) that file is read first and the growth counts from the
    resident memory just before the big read; otherwise from the peak after the imports.
    """
    import pandas as pd

    for module in ("pyarrow.compute", "pyarrow.csv"):  # before the baseline, for every reader: code, not data
        importlib.import_module(module)

    if kind == READERS[0]:
        from luskin_core.counting.data import load_csv

        def read(name: str) -> pd.DataFrame:
            return load_csv(name, max_bytes=os.path.getsize(name) + 1)
    elif kind == READERS[1]:
        def read(name: str) -> pd.DataFrame:
            return pd.read_csv(name, engine="pyarrow")
    else:
        import duckdb

        def read(name: str) -> pd.DataFrame:
            with duckdb.connect() as con:
                return con.read_csv(name).df()
    if warm_up:
        read(warm_up)
        before = _status("VmRSS")
    else:
        before = _status("VmHWM")
    start = time.perf_counter()
    frame = read(path)
    seconds = time.perf_counter() - start
    peak = _status("VmHWM")
    return {"seconds": seconds, "growth": peak - before, "rows": len(frame), "columns": frame.shape[1],
            "frame_bytes": float(frame.memory_usage(deep=True).sum())}


def _run(kind: str, path: Path, warm_up: Path | None = None) -> dict[str, float]:
    """One read in a fresh child process (fork+exec), so that its high-water mark is its own."""
    done = subprocess.run([sys.executable, __file__, "--measure", kind, str(path), str(warm_up or "")],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{kind} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _median(runs: list[dict[str, float]], key: str) -> float:
    return float(statistics.median(r[key] for r in runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--quick", action="store_true", help="1,000,000 rows")
    parser.add_argument("--repeat", type=int, default=1,
                        help="cold and warm runs per reader, each in a fresh process (medians shown)")
    parser.add_argument("--readers", default="0,1,2",
                        help="which readers, by number: 0 load_csv, 1 pandas (pyarrow), 2 DuckDB (default all)")
    parser.add_argument("--keep", metavar="PATH", help="write the CSV here (reused if it exists) instead of a temp folder")
    parser.add_argument("--measure", nargs=3, metavar=("READER", "PATH", "WARM_UP"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(_measure(*args.measure)))
        return
    rows = 1_000_000 if args.quick else args.rows
    kinds = [READERS[int(i)] for i in args.readers.split(",")]
    with tempfile.TemporaryDirectory(prefix="luskin-bench-load-") as folder:
        path = Path(args.keep) if args.keep else Path(folder) / f"adult_like_{rows}.csv"
        if not path.exists():
            start = time.perf_counter()
            generate(path, rows)
            print(f"generated {path} in {time.perf_counter() - start:.0f} s")
        warm_up = Path(folder) / "warm_up.csv"
        with open(path, "rb") as big, open(warm_up, "wb") as small:
            small.writelines(line for _, line in zip(range(20_001), big))
        size = path.stat().st_size
        before = _load_average()
        print(f"load average before (1, 5, 15 min): {before} on {os.cpu_count()} cores; file: {path.name}, "
              f"{size / 1e6:,.0f} MB; {args.repeat} cold and {args.repeat} warm run(s) per reader")
        cold: dict[str, list[dict[str, float]]] = {kind: [] for kind in kinds}
        warm: dict[str, list[dict[str, float]]] = {kind: [] for kind in kinds}
        for _ in range(args.repeat):
            for kind in kinds:  # interleaved, so that a burst of load from others hits every reader
                cold[kind].append(_run(kind, path))
                warm[kind].append(_run(kind, path, warm_up))
        after = _load_average()
        print("\n| reader | time (median, cold) | cold runs | peak growth cold | / file | peak growth warm | / file "
              "| frame |")
        print("|---|---|---|---|---|---|---|---|")
        for kind in kinds:
            runs = cold[kind]
            each = ", ".join(f"{r['seconds']:.2f}" for r in runs)
            growth, warmed = _median(runs, "growth"), _median(warm[kind], "growth")
            print(f"| {kind} | {_median(runs, 'seconds'):.2f} s | {each} | {growth / 1e9:.3f} GB | "
                  f"{growth / size:.2f}x | {warmed / 1e9:.3f} GB | {warmed / size:.2f}x | "
                  f"{runs[0]['frame_bytes'] / 1e9:.3f} GB, {int(runs[0]['rows']):,} x {int(runs[0]['columns'])} |")
        print(f"\nload average after (1, 5, 15 min): {after}")
        if READERS[0] in kinds:
            ours = cold[READERS[0]]
            print(f"load_csv peak memory growth / file size: cold {_median(ours, 'growth') / size:.3f}x, "
                  f"warm {_median(warm[READERS[0]], 'growth') / size:.3f}x (target < 2x)")
            if READERS[1] in kinds:
                ratio = _median(ours, "seconds") / _median(cold[READERS[1]], "seconds")
                print(f"load_csv / pandas pyarrow time (medians): {ratio:.2f}x (target <= 1.5x)")


if __name__ == "__main__":
    main()
