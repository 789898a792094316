"""``luskin report --pdf`` and ``--html`` on a file with one very long field, beside the same file without it.

Issue 47: a file with one 50 MB field made ``luskin report --pdf`` run past 240 s at 5.6 GB (the data summary's
examples carried the whole cell into the PDF's layout). Each cell is now bounded in the report (a table's cell,
any text, a chart's string). Each run is a fresh process, timed wall-clock with its peak memory (VmHWM of the
child, as GNU time reports it; the chart renderer's Chromium is apart). Usage:

    .venv/bin/python benchmarks/bench_report_bounds.py [--field-mb 50] [--timeout 300]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent


def _file(folder: Path, field_chars: int) -> Path:
    rng = np.random.default_rng(47)
    frame = pd.DataFrame({"group": rng.choice(["a", "b"], 2000), "hired": rng.choice(["yes", "no"], 2000),
                          "notes": ["short"] * 2000})
    if field_chars:
        frame.loc[7, "notes"] = "x" * field_chars
    path = folder / f"field_{field_chars}.csv"
    frame.to_csv(path, index=False)
    return path


def _run(data: Path, out: Path, kind: str, timeout: float) -> tuple[float, float, str]:
    """Seconds, peak resident memory of the report's process (MB, GNU time's %M) and how it ended."""
    stats = out.with_suffix(".time")
    command = ["/usr/bin/time", "-f", "%M", "-o", str(stats), sys.executable, "-m", "luskin_cli", "report",
               "--data", str(data), "--outcome", "hired", "--positive", "yes", "--protected", "group == 'a'",
               f"--{kind}", str(out)]
    started = time.perf_counter()
    child = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _, err = child.communicate(timeout=timeout)
        ended = "ok" if child.returncode == 0 else f"exit {child.returncode}: {err.decode()[-200:]}"
    except subprocess.TimeoutExpired:
        subprocess.run(["pkill", "-TERM", "-P", str(child.pid)], check=False)   # the report's process, by parent id
        child.communicate()
        ended = f"stopped at {timeout:.0f} s"
    seconds = time.perf_counter() - started
    try:
        peak = float(stats.read_text().split()[-1]) / 1024
    except (OSError, ValueError, IndexError):
        peak = float("nan")
    return seconds, peak, ended


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--field-mb", type=float, default=50.0)
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        place = Path(folder)
        rows = []
        for chars in (0, int(args.field_mb * 1_000_000)):
            data = _file(place, chars)
            for kind in ("html", "pdf"):
                out = place / f"report_{chars}.{kind}"
                seconds, peak, ended = _run(data, out, kind, args.timeout)
                size = out.stat().st_size / 1e6 if out.exists() else float("nan")
                rows.append((f"{chars / 1e6:g} MB field" if chars else "short field", kind, seconds, peak, size, ended))
                print(f"{rows[-1][0]:>14} {kind:>4}: {seconds:7.1f} s, peak {peak:7.0f} MB, "
                      f"file {size:6.2f} MB, {ended}", flush=True)
    load = os.getloadavg()[0]
    print(f"load {load:.1f} on {os.cpu_count()} cores (machine shared: compare the rows of one run)")


if __name__ == "__main__":
    main()
