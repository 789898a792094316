"""One server process serves every analyst: what one session computes must not touch another's.

* The paper's particle swarm (``solver="pso"``) is Luskin's own implementation of pyswarms 1.3's
  GlobalBestPSO, draw for draw: pyswarms itself (run in a child process, where its global
  random seed, root-logger handlers and ``report.log`` cannot reach this one) gives the same
  best position bit for bit for the same seed.
* PSO thresholds and equalized-distribution sweeps run in 8 threads at once, with different
  seeds, give exactly what each gives alone; and the process-wide state (environment, numpy's
  global generator, BLAS/OpenMP thread limits, working folder, root logging handlers) is the
  same afterwards.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from luskin_core import PRESETS
from luskin_core.corrections.equalize import equalize_frame
from luskin_core.corrections.thresholds import _pso_problem, global_best_pso, tune_thresholds

pytestmark = pytest.mark.slow


def _synthetic(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 3, n)
    y = (rng.random(n) < 0.3 + 0.15 * g).astype(int)
    s = np.clip(0.35 * y + 0.1 * g + rng.normal(0.3, 0.2, n), 0, 1)
    return s, y, g


@pytest.mark.parametrize("seed", [0, 7, 2026])
def test_our_swarm_is_pyswarms_draw_for_draw(tmp_path, seed: int) -> None:
    s, y, g = _synthetic(900, seed=seed)
    cost, lo, hi = _pso_problem(s, y, g, [0, 1, 2], 0, 1.0)
    ours_cost, ours = global_best_pso(cost, lo, hi, n_particles=30, iters=40, random_state=seed)

    child = textwrap.dedent(f"""
        import json, sys
        import numpy as np
        sys.path.insert(0, {str(os.path.dirname(os.path.dirname(__file__)))!r})
        from tests.test_concurrency import _synthetic
        from luskin_core.corrections.thresholds import _pso_problem
        import pyswarms
        s, y, g = _synthetic(900, seed={seed})
        cost, lo, hi = _pso_problem(s, y, g, [0, 1, 2], 0, 1.0)
        np.random.seed({seed})
        swarm = pyswarms.single.GlobalBestPSO(n_particles=30, dimensions=3,
                                              options={{"c1": 0.5, "c2": 0.3, "w": 0.9}}, bounds=(lo, hi))
        best_cost, best = swarm.optimize(cost, iters=40, verbose=False)
        print(json.dumps([float(best_cost), [float(v) for v in best]]))
    """)
    logging_config = tmp_path / "log.yaml"
    logging_config.write_text("version: 1\nincremental: true\nloggers: {pyswarms: {level: WARNING}}\n")
    env = {**os.environ, "LOG_CFG": str(logging_config)}  # the child's environment, not ours
    done = subprocess.run([sys.executable, "-c", child], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    their_cost, theirs = json.loads(done.stdout.strip().splitlines()[-1])
    assert ours_cost == their_cost
    assert ours.tolist() == theirs


def _process_state() -> dict[str, Any]:
    """Everything process-wide a fit could change behind another session's back."""
    state = np.random.get_state()
    return {
        "environ": dict(os.environ),
        "numpy global generator": (state[0], state[1].tobytes(), *state[2:]),
        "thread limits": [(i["internal_api"], i["num_threads"]) for i in threadpool_info()],
        "working folder": os.getcwd(),
        "root log handlers": list(logging.getLogger().handlers),
    }


def _without_timings(value: Any) -> Any:
    """A result's JSON without its wall-clock fields (the only numbers that may differ between runs)."""
    if isinstance(value, dict):
        return {k: _without_timings(v) for k, v in value.items() if "seconds" not in k}
    if isinstance(value, list):
        return [_without_timings(v) for v in value]
    return value


def _pso(compas: Any, seed: int) -> dict[str, Any]:
    report = tune_thresholds(compas, PRESETS["compas"].spec, model="LR", solver="pso", seed=seed)
    return _without_timings(report.to_dict())


def _equalized(compas: Any, seed: int) -> dict[str, Any]:
    sweep = equalize_frame(compas, PRESETS["compas"].spec, alphas=(0.2, 1.0), seed=seed)
    return _without_timings(sweep.to_dict())


def test_eight_sessions_at_once_get_what_each_gets_alone(compas) -> None:
    jobs = [(_pso, seed) for seed in range(4)] + [(_equalized, seed) for seed in range(4)]
    np.random.seed(12345)          # a state to compare with afterwards (the tools must not draw from it)
    before = _process_state()
    alone = [job(compas, seed) for job, seed in jobs]
    assert _process_state() == before

    with ThreadPoolExecutor(max_workers=8) as pool:
        for round_ in range(2):   # twice, in a different order, so that the overlap differs
            order = list(range(len(jobs))) if round_ == 0 else list(reversed(range(len(jobs))))
            futures = {i: pool.submit(jobs[i][0], compas, jobs[i][1]) for i in order}
            together = {i: f.result() for i, f in futures.items()}
            for i, (job, seed) in enumerate(jobs):
                assert together[i] == alone[i], f"{job.__name__} with seed {seed} changed when run beside others"

    assert _process_state() == before
    # different seeds are different runs (the comparison above is not between identical results)
    assert alone[0]["thresholds"] != alone[1]["thresholds"]
    assert alone[4] != alone[5]
