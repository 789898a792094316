"""How fast the command line answers (issue 9: under 0.5 s; it took 1.7 s, 48x a bare Python).

Each command runs as a fresh process, 7 times; the median wall time is printed beside a bare
Python start and the imports the command line used to make eagerly (pandas, scipy.stats and
scikit-learn), measured in the same run.

Run:   .venv/bin/python benchmarks/bench_cli_start.py
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent
TARGET = 0.5
RUNS = 7

COMMANDS: list[tuple[str, list[str]]] = [
    ("bare python (python -c pass)", [sys.executable, "-c", "pass"]),
    ("luskin --version", [str(BIN / "luskin"), "--version"]),
    ("luskin --help", [str(BIN / "luskin"), "--help"]),
    ("luskin audit --help", [str(BIN / "luskin"), "audit", "--help"]),
    ("peer: the old eager imports (pandas, scipy.stats, sklearn)",
     [sys.executable, "-c", "import pandas, scipy.stats, sklearn.linear_model"]),
    ("luskin audit --preset adult (whole audit)", [str(BIN / "luskin"), "audit", "--preset", "adult"]),
]


def seconds(argv: list[str], cwd: str) -> float:
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        done = subprocess.run(argv, cwd=cwd, capture_output=True, timeout=300, check=False)
        times.append(time.perf_counter() - start)
        if done.returncode != 0:
            raise SystemExit(f"{argv} failed: {done.stderr.decode()[-500:]}")
    return statistics.median(times)


def main() -> None:
    print(f"load average: {os.getloadavg()[0]:.2f}; median of {RUNS} runs each, fresh processes")
    with tempfile.TemporaryDirectory() as folder:
        results = [(name, seconds(argv, folder)) for name, argv in COMMANDS]
    bare = results[0][1]
    width = max(len(n) for n, _ in results)
    for name, value in results:
        mark = ""
        if name.startswith("luskin") and "whole audit" not in name:
            mark = "  OK (< 0.5 s)" if value < TARGET else "  SLOW (target 0.5 s)"
        print(f"{name.ljust(width)}  {value:6.3f} s  ({value / bare:4.1f}x bare){mark}")


if __name__ == "__main__":
    main()
