"""Speed and memory of ``load_csv`` on a large Adult-like CSV, beside pandas (pyarrow engine) and DuckDB.

Targets (issue 9, the in-memory path): ``load_csv`` within 1.5x of
``pandas.read_csv(engine="pyarrow")`` on the same file, and a peak memory growth under 2x the
file's size. The file is generated in a temporary folder: 10,000,000 rows drawn from the UCI
Adult sample (15 columns, comma separated, ``?`` for missing as in Adult; age, fnlwgt and
hours-per-week varied so that values are not just repeats), about 1.1 GB.

Each reader runs in its own fresh Python process, one after the other, so that its peak
resident memory (``ru_maxrss``) is its own; the growth is that peak minus the process's peak
before the read (after its imports). Every reader returns a pandas DataFrame.

Run:   .venv/bin/python benchmarks/bench_load.py            (10,000,000 rows; a few minutes)
       .venv/bin/python benchmarks/bench_load.py --quick    (1,000,000 rows)
       .venv/bin/python benchmarks/bench_load.py --rows 3000000 --repeat 3 --keep /tmp/adult3m.csv
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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

    from luskin_core.data import load_sample

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


def _measure(kind: str, path: str) -> dict[str, float]:
    """Load ``path`` with one reader in this process; wall time and peak memory growth."""
    import pandas as pd

    if kind == READERS[0]:
        from luskin_core.data import load_csv

        def read() -> pd.DataFrame:
            return load_csv(path, max_bytes=os.path.getsize(path) + 1)
    elif kind == READERS[1]:
        def read() -> pd.DataFrame:
            return pd.read_csv(path, engine="pyarrow")
    else:
        import duckdb

        def read() -> pd.DataFrame:
            with duckdb.connect() as con:
                return con.read_csv(path).df()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    start = time.perf_counter()
    frame = read()
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"seconds": seconds, "growth": peak - before, "rows": len(frame), "columns": frame.shape[1],
            "frame_bytes": float(frame.memory_usage(deep=False).sum())}


def _run(kind: str, path: Path) -> dict[str, float]:
    done = subprocess.run([sys.executable, __file__, "--measure", kind, str(path)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{kind} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--quick", action="store_true", help="1,000,000 rows")
    parser.add_argument("--repeat", type=int, default=1, help="runs per reader (median shown)")
    parser.add_argument("--keep", metavar="PATH", help="write the CSV here (reused if it exists) instead of a temp folder")
    parser.add_argument("--measure", nargs=2, metavar=("READER", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(_measure(*args.measure)))
        return
    rows = 1_000_000 if args.quick else args.rows
    with tempfile.TemporaryDirectory(prefix="luskin-bench-load-") as folder:
        path = Path(args.keep) if args.keep else Path(folder) / f"adult_like_{rows}.csv"
        if not path.exists():
            start = time.perf_counter()
            generate(path, rows)
            print(f"generated {path} in {time.perf_counter() - start:.0f} s")
        size = path.stat().st_size
        print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} "
              f"on {os.cpu_count()} cores; file: {rows:,} rows x 15 columns, {size / 1e6:,.0f} MB")
        results: dict[str, list[dict[str, float]]] = {kind: [] for kind in READERS}
        for _ in range(args.repeat):
            for kind in READERS:
                results[kind].append(_run(kind, path))
        summary = {}
        for kind, runs in results.items():
            seconds = statistics.median(r["seconds"] for r in runs)
            growth = statistics.median(r["growth"] for r in runs)
            summary[kind] = (seconds, growth)
            print(f"{kind:<36} {seconds:6.2f} s   peak memory growth {growth / 1e9:5.2f} GB "
                  f"({growth / size:4.2f}x the file; frame {runs[0]['frame_bytes'] / 1e9:4.2f} GB, "
                  f"{int(runs[0]['rows']):,} rows x {int(runs[0]['columns'])})")
        ours, peer = summary[READERS[0]], summary[READERS[1]]
        print(f"load_csv / pandas pyarrow time: {ours[0] / peer[0]:.2f}x (target <= 1.5x); "
              f"load_csv memory growth / file size: {ours[1] / size:.2f}x (target < 2x)")
        print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
