"""Speed of the controlled-fairness audit (with CIs and tests), in-process.

Targets (issue 2): Adult under 50 ms; 1,000,000 rows under 1 s.
Run: .venv/bin/python benchmarks/bench_audit.py
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from luskin_core import audit
from luskin_core.data import PRESETS, load_sample


def timed(fn, repeat: int) -> tuple[float, float]:
    """Median and best wall time in seconds over ``repeat`` runs (after one warm-up)."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times)


def main() -> None:
    adult = load_sample("adult")
    spec = PRESETS["adult"].spec
    med, best = timed(lambda: audit(adult, spec), 30)
    print(f"audit, Adult ({len(adult):,} rows, 1 filter): median {med * 1e3:.1f} ms, best {best * 1e3:.1f} ms "
          f"(target < 50 ms)")
    rng = np.random.default_rng(0)
    big = adult.iloc[rng.integers(0, len(adult), 1_000_000)].reset_index(drop=True)
    med, best = timed(lambda: audit(big, spec), 5)
    print(f"audit, 1,000,000 rows resampled from Adult: median {med:.3f} s, best {best:.3f} s (target < 1 s)")
    two = spec.with_changes(filters=("education-num > 10", "sex == Female"))
    med, best = timed(lambda: audit(big, two), 5)
    print(f"audit, 1,000,000 rows, 2-condition filter: median {med:.3f} s, best {best:.3f} s")


if __name__ == "__main__":
    main()
