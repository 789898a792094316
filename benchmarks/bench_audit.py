"""Speed of the audit (every number: rates, intervals, tests, impact ratios, pooled tests), in-process.

Targets: the paper's Adult preset under 20 ms (issue 8); 1,000,000 rows with 6 groups x 20 strata,
every number, under 0.5 s. Printed beside peers on the same rows: a plain pandas groupby (counts
only) and Fairlearn's MetricFrame (selection rate per group x stratum, no intervals or tests).
Run: .venv/bin/python benchmarks/bench_audit.py
"""

from __future__ import annotations

import os
import statistics
import time

import numpy as np
import pandas as pd

from luskin_core import AuditSpec, audit
from luskin_core.counting.data import PRESETS, load_sample


def timed(fn, repeat: int) -> tuple[float, float]:
    """Median and best wall time in seconds over ``repeat`` runs (after one warm-up)."""
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times)


def synthetic(n: int, seed: int = 0) -> pd.DataFrame:
    """n rows: 6 groups of unequal size, 20 strata, a 0/1 decision whose rate depends on both."""
    rng = np.random.default_rng(seed)
    group = rng.choice(np.array(["A", "B", "C", "D", "E", "F"]), n, p=[0.4, 0.2, 0.15, 0.1, 0.1, 0.05])
    stratum = rng.integers(0, 20, n)
    rate = 0.2 + 0.02 * stratum + np.select([group == "A", group == "F"], [0.05, -0.05], 0.0)
    frame = pd.DataFrame({"group": group, "stratum": stratum, "decision": (rng.random(n) < rate).astype(int)})
    frame["group"] = frame["group"].astype("string")
    return frame


def main() -> None:
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    adult = load_sample("adult")
    spec = PRESETS["adult"].spec
    med, best = timed(lambda: audit(adult, spec), 30)
    print(f"audit, Adult preset ({len(adult):,} rows, White vs Non-White, 1 filter): median {med * 1e3:.1f} ms, "
          f"best {best * 1e3:.1f} ms (target < 20 ms)")
    groups = AuditSpec("income", ">50K", group_by=("race", "sex"), strata=("education",))
    med, best = timed(lambda: audit(adult, groups), 10)
    print(f"audit, Adult race x sex (10 groups) within 16 education strata: median {med * 1e3:.1f} ms")

    big = synthetic(1_000_000)
    spec6 = AuditSpec("decision", 1, group_by=("group",), strata=("stratum",))
    result = audit(big, spec6)
    med, best = timed(lambda: audit(big, spec6), 5)
    print(f"audit, 1,000,000 rows, 6 groups x 20 strata ({len(result.comparisons)} comparisons, "
          f"{len(result.pooled)} pooled): median {med:.3f} s, best {best:.3f} s (target < 0.5 s)")
    med, _ = timed(lambda: big.groupby(["group", "stratum"])["decision"].agg(["size", "sum"]), 5)
    print(f"  peer: pandas groupby, counts only: median {med:.3f} s")
    try:
        from fairlearn.metrics import MetricFrame, selection_rate
    except ImportError:
        print("  peer: fairlearn not installed")
    else:
        def fairlearn_frame() -> None:
            frame = MetricFrame(metrics=selection_rate, y_true=big["decision"], y_pred=big["decision"],
                                sensitive_features=big["group"], control_features=big["stratum"])
            assert len(frame.by_group) > 0
        med, _ = timed(fairlearn_frame, 3)
        print(f"  peer: fairlearn MetricFrame, selection rate per group x stratum (no intervals or tests): "
              f"median {med:.3f} s")
    two = spec.with_changes(filters=("education-num > 10", "sex == Female"))
    resampled = adult.iloc[np.random.default_rng(0).integers(0, len(adult), 1_000_000)].reset_index(drop=True)
    med, best = timed(lambda: audit(resampled, two), 5)
    print(f"audit, 1,000,000 rows resampled from Adult, paper's two classes, 2-condition filter: median {med:.3f} s")


if __name__ == "__main__":
    main()
