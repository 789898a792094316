"""Speed and convergence of the equalized-distribution sweep (issue 9), beside the previous implementation.

Figures, each the median of ``--repeat`` runs with the 1-minute load average read before every run
(the 2 cores are shared, so runs of the implementations are interleaved):

* the Adult sweep over the default 11 alphas, built as ``luskin equalize --preset adult``, the page
  and the report build it (``equalize_frame(adult, preset.spec, features=preset.features)``: split,
  preprocessing, 11 fits, test measurements); target < 10 s;
* one Adult fit (``EqualizedDistributionClassifier(alpha=...).fit`` on that sweep's training rows);
* the COMPAS sweep as ``luskin equalize --preset compas`` builds it (the paper's encoding + PCA);
* per alpha on Adult: iterations, whether the fit converged, seconds, training loss.

Implementations:

* ``before``: ``luskin_core/corrections/equalize.py`` at commit ``EQUALIZE_BEFORE`` (every alpha started from
  plain logistic regression, scipy's L-BFGS-B, bincount penalty), loaded from git;
* ``now``: the working tree, as the CLI, the page and the report run it (every alpha started from
  plain logistic regression, ``start="lr"``, the default);
* ``now-path``: the working tree with each alpha started from its neighbour's solution
  (``start="path"``), to measure what warm starts add.

Run:  .venv/bin/python benchmarks/bench_equalize.py [--repeat 5] [--out benchmarks/results/bench_equalize.md]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from luskin_core.corrections import equalize as now_module
from luskin_core.corrections import models
from luskin_core.corrections.models import compas_paper_pipeline
from luskin_core.corrections.pipeline import prepare_split
from luskin_core.counting.data import PRESETS, load_sample

EQUALIZE_BEFORE = "e046b58"  # the last commit with the previous equalize.py


def _load_before() -> ModuleType:
    """The previous ``luskin_core/corrections/equalize.py``, imported as ``luskin_core._equalize_before``."""
    source = subprocess.run(["git", "show", f"{EQUALIZE_BEFORE}:luskin_core/corrections/equalize.py"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout
    folder = Path(tempfile.mkdtemp(prefix="luskin-bench-"))
    path = folder / "equalize_before.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("luskin_core._equalize_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _adult_training_rows(seed: int = 0) -> tuple[Any, np.ndarray, np.ndarray]:
    """The training rows equalize_frame builds for the Adult preset (60% split, default preprocessing)."""
    preset = PRESETS["adult"]
    split = prepare_split(load_sample("adult"), preset.spec, shape="60/20/20", seed=seed, min_rows=10,
                          features=preset.features, purpose="Benchmark")
    features = list(split.features)
    train = split.part("train")
    X = split.frame[features].iloc[train]
    pre = models.make_model("LR", X, features, random_state=seed)[:-1]
    return pre.fit_transform(X), split.y.astype(np.int64)[train], split.groups.astype(str)[train]


def _load() -> float:
    return os.getloadavg()[0]


def _sweep_call(module: ModuleType, name: str, frame: Any, path: bool) -> Callable[[], Any]:
    preset = PRESETS[name]
    kwargs: dict[str, Any] = {"features": preset.features}
    if name == "compas":
        kwargs["preprocess"] = compas_paper_pipeline("LR", random_state=0)[:-1]
    if path:
        kwargs["start"] = "path"
    return lambda: module.equalize_frame(frame, preset.spec, **kwargs)


def _compas_figure(impls: dict[str, tuple[ModuleType, bool]], compas: Any, seeds: int) -> list[str]:
    """The paper's alpha figure on COMPAS (reproduce_parity.py's): mean +- sd over seeds, per implementation."""
    preset = PRESETS["compas"]
    sweeps: dict[str, list[Any]] = {}
    seconds: dict[str, float] = {}
    loads: dict[str, float] = {}
    for impl, (module, path) in impls.items():
        loads[impl] = _load()
        start = time.perf_counter()
        extra = {"start": "path"} if path else {}
        sweeps[impl] = [module.equalize_frame(compas, preset.spec, features=preset.features, seed=seed,
                                              preprocess=compas_paper_pipeline("LR", random_state=seed)[:-1], **extra)
                        for seed in range(seeds)]
        seconds[impl] = time.perf_counter() - start
        print(f"COMPAS alpha figure, {impl}: {seconds[impl]:.1f} s", flush=True)

    def ms(values: list[float], pct: bool = False) -> str:
        k = 100.0 if pct else 1.0
        return f"{k * np.mean(values):.{1 if pct else 3}f} ± {k * np.std(values):.{1 if pct else 3}f}"

    lines = ["", f"## COMPAS: the paper's alpha figure over {seeds} seeds (test rows, mean ± sd)", "",
             "As benchmarks/reproduce_parity.py computes it (the paper's encoding + PCA, seeds 0-"
             f"{seeds - 1}). Time for the {seeds} sweeps: "
             + ", ".join(f"{impl} {s:.1f} s (load {loads[impl]:.2f})" for impl, s in seconds.items()) + ".", "",
             "| alpha | " + " | ".join(f"{i} accuracy | {i} TPR gap | {i} FPR gap" for i in impls) + " |",
             "|---" * (1 + 3 * len(impls)) + "|"]
    first = next(iter(sweeps.values()))[0]
    for k, point in enumerate(first.points):
        cells = [f"{point.alpha:g}"]
        for runs in sweeps.values():
            pts = [s.points[k] for s in runs]
            cells += [ms([p.accuracy for p in pts], pct=True), ms([p.tpr_gap for p in pts]),
                      ms([p.fpr_gap for p in pts])]
        lines.append("| " + " | ".join(cells) + " |")
    for impl, runs in sweeps.items():
        lines.append(f"- {impl}: fits that did not converge: "
                     f"{sum(not p.converged for s in runs for p in s.points)} of {sum(len(s.points) for s in runs)}")
    return lines


def _median(values: list[float]) -> float:
    return float(statistics.median(values))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--fit-alpha", type=float, action="append",
                        help="alpha of the single Adult fit (repeatable; default 0.2 and 0.01)")
    parser.add_argument("--no-before", action="store_true", help="skip the previous implementation")
    parser.add_argument("--compas-seeds", type=int, default=10,
                        help="seeds of the paper's COMPAS alpha figure, per implementation (0 to skip)")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "bench_equalize.md"))
    args = parser.parse_args(argv)
    fit_alphas = args.fit_alpha or [0.2, 0.01]
    impls: dict[str, tuple[ModuleType, bool]] = {}
    if not args.no_before:
        impls["before"] = (_load_before(), False)
    impls["now"] = (now_module, False)
    impls["now-path"] = (now_module, True)
    load_start = os.getloadavg()
    adult, compas = load_sample("adult"), load_sample("compas")
    Xtr, ytr, gtr = _adult_training_rows()
    print(f"Adult training rows: {Xtr.shape[0]:,} x {Xtr.shape[1]} ({type(Xtr).__name__})", flush=True)

    # (figure, implementation) -> list of (seconds, load before)
    runs: dict[tuple[str, str], list[tuple[float, float]]] = {}
    last: dict[tuple[str, str], Any] = {}
    jobs: list[tuple[str, str, Callable[[], Any]]] = []
    for impl, (module, path) in impls.items():
        jobs.append(("Adult sweep (11 alphas)", impl, _sweep_call(module, "adult", adult, path)))
        jobs.append(("COMPAS sweep (11 alphas)", impl, _sweep_call(module, "compas", compas, path)))
        if not path:
            for a in fit_alphas:
                def fit(module: ModuleType = module, a: float = a) -> Any:
                    import warnings

                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        return module.EqualizedDistributionClassifier(alpha=a).fit(Xtr, ytr, gtr)
                jobs.append((f"one Adult fit, alpha {a:g}", impl, fit))
    for r in range(args.repeat):
        for figure, impl, job in jobs:
            load = _load()
            start = time.perf_counter()
            out = job()
            seconds = time.perf_counter() - start
            runs.setdefault((figure, impl), []).append((seconds, load))
            last[figure, impl] = out
            print(f"run {r + 1}/{args.repeat}  {figure:28s} {impl:9s} {seconds:7.2f} s  (load {load:.2f})", flush=True)

    lines = [
        "# Equalized-distribution sweep: speed and convergence (issue 9)",
        "",
        (f"Generated by `.venv/bin/python benchmarks/bench_equalize.py --repeat {args.repeat}` on "
         f"{platform.machine()} with {os.cpu_count()} cores (shared with other engineers), Python "
         f"{platform.python_version()}, numpy {np.__version__}. Wall times; each figure is the median of "
         f"{args.repeat} runs, the implementations interleaved; `load` is the 1-minute load average "
         "(`uptime`) read before each run (median, and min-max)."),
        "",
        (f"Adult training rows: {Xtr.shape[0]:,} x {Xtr.shape[1]} features ({type(Xtr).__name__}). "
         f"`before` = `luskin_core/corrections/equalize.py` at {EQUALIZE_BEFORE} (loaded from git; every alpha "
         "from plain logistic regression, scipy L-BFGS-B); `now` = this tree as the CLI, page and "
         "report run it (every alpha from plain logistic regression); `now-path` = this tree with each "
         "alpha warm-started from its neighbour's solution (`start=\"path\"`)."),
        "",
        "| figure | implementation | median s | min s | max s | load median (min-max) |",
        "|---|---|---|---|---|---|",
    ]
    for (figure, impl), values in runs.items():
        secs = [s for s, _ in values]
        loads = [x for _, x in values]
        lines.append(f"| {figure} | {impl} | {_median(secs):.2f} | {min(secs):.2f} | {max(secs):.2f} | "
                     f"{_median(loads):.2f} ({min(loads):.2f}-{max(loads):.2f}) |")
    for name in ("Adult", "COMPAS"):
        lines += ["", f"## {name}: per alpha (last run)", "",
                  "| alpha | " + " | ".join(f"{i} iterations | {i} converged | {i} s | {i} loss" for i in impls) + " |",
                  "|---" * (1 + 4 * len(impls)) + "|"]
        sweeps = {impl: last[f"{name} sweep (11 alphas)", impl] for impl in impls}
        first = next(iter(sweeps.values()))
        for k, point in enumerate(first.points):
            cells = [f"{point.alpha:g}"]
            for sweep in sweeps.values():
                p = sweep.points[k]
                cells += [str(p.iterations), "yes" if p.converged else "**no**", f"{p.seconds:.2f}", f"{p.loss:.7f}"]
            lines.append("| " + " | ".join(cells) + " |")
        lines += ["", f"{name}, test rows: accuracy / TPR gap / FPR gap per alpha (last run)", "",
                  "| alpha | " + " | ".join(impls) + " |", "|---" * (1 + len(impls)) + "|"]
        for k, point in enumerate(first.points):
            lines.append(f"| {point.alpha:g} | " + " | ".join(
                f"{100 * s.points[k].accuracy:.2f}% / {s.points[k].tpr_gap:.3f} / {s.points[k].fpr_gap:.3f}"
                for s in sweeps.values()) + " |")
        for impl, sweep in sweeps.items():
            lines.append("")
            lines.append(f"- {impl}: every fit converged: {sweep.converged}; warnings: "
                         + ("; ".join(sweep.warnings) if sweep.warnings else "none"))
    if args.compas_seeds:
        lines += _compas_figure(impls, compas, args.compas_seeds)
    lines += ["", "## One Adult fit (last run)", ""]
    for a in fit_alphas:
        for impl in impls:
            if (f"one Adult fit, alpha {a:g}", impl) in last:
                clf = last[f"one Adult fit, alpha {a:g}", impl]
                lines.append(f"- alpha {a:g}, {impl}: {int(clf.n_iter_[0])} iterations, converged "
                             f"{bool(clf.converged_)}, loss {clf.loss_:.7f}")
    load_end = os.getloadavg()
    lines += ["", "Load average (1, 5, 15 min) at the start: " + " / ".join(f"{x:.2f}" for x in load_start)
              + "; at the end: " + " / ".join(f"{x:.2f}" for x in load_end) + "."]
    text = "\n".join(lines) + "\n"
    print()
    print(text)
    Path(args.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
