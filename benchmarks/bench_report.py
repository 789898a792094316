"""Time to build the report on Adult (48,842 rows) with every tool run, beside the peers it must beat.

The tools run once (audit; one retrain: Algorithm 2, A1 LR then C2 MLP, the paper's default; per-group
thresholds, LR, lambda 1; the equalized-distribution sweep over the default 11 alphas), then each
report is built from their results:

* the report's content (sentences, tables, every chart as a plotly figure, the cost points);
* the HTML page (plotly.js embedded once);
* the PDF: cold (the first PDF of the process starts Chromium) and warm (the browser is reused).

Peers, on the same results in the same run:

* HTML: the report builder before this one (commit ``REPORT_BEFORE``: audit-only first part, raw JSON
  options, no cost chart), loaded from git;
* PDF: the same page with each chart exported the way plotly does it without a server
  (``plotly.io.to_image(figure, format="svg")``: kaleido starts a browser for every image), then WeasyPrint.

Run:  .venv/bin/python benchmarks/bench_report.py [--repeat 3] [--peer-charts 3]
      [--out benchmarks/results/bench_report.md]
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
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from luskin_core import audit
from luskin_core.corrections.equalize import equalize_frame
from luskin_core.corrections.retrain import RetrainOptions, retrain
from luskin_core.corrections.thresholds import tune_thresholds
from luskin_core.counting.data import PRESETS, load_sample
from luskin_core.present.report import DatasetRef, close_chart_renderer, report_content

REPORT_BEFORE = "dffafa0"  # the last commit with the previous report builder


def _load_old_report() -> object:
    """The previous ``luskin_core/present/report.py``, imported as ``luskin_core._report_before``."""
    source = subprocess.run(["git", "show", f"{REPORT_BEFORE}:luskin_core/present/report.py"], cwd=ROOT, check=True,
                            capture_output=True, text=True).stdout
    folder = Path(tempfile.mkdtemp(prefix="luskin-bench-"))
    path = folder / "report_before.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("luskin_core._report_before", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _timed(function, repeat: int) -> tuple[float, float, object]:
    times, value = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        value = function()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times), value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--peer-charts", type=int, default=3,
                        help="charts exported the peer's way (each starts a browser); the total is extrapolated")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "bench_report.md"))
    args = parser.parse_args(argv)
    load = os.getloadavg()
    print(f"load average before: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}", flush=True)

    adult = load_sample("adult")
    preset = PRESETS["adult"]
    tools = {}
    start = time.perf_counter()
    result = audit(adult, preset.spec)
    tools["audit"] = time.perf_counter() - start
    start = time.perf_counter()
    retrained = retrain(adult, preset.spec, RetrainOptions(algorithm=2, first="LR", second="MLP",
                                                           features=preset.features))
    tools["retrain (Algorithm 2, LR then MLP)"] = time.perf_counter() - start
    start = time.perf_counter()
    thresholds = tune_thresholds(adult, preset.spec, model="LR", features=preset.features, lam=1.0)
    tools["thresholds (LR, lambda 1)"] = time.perf_counter() - start
    start = time.perf_counter()
    sweep = equalize_frame(adult, preset.spec, features=preset.features)
    tools[f"equalized sweep ({len(sweep.points)} alphas)"] = time.perf_counter() - start
    for name, seconds in tools.items():
        print(f"tool {name}: {seconds:.2f} s", flush=True)
    dataset = DatasetRef.for_frame("adult", adult, sample=True)
    results = [result, retrained, thresholds, sweep.shown_at(0.1)]

    content_med, content_best, content = _timed(lambda: report_content(results, frame=adult, dataset=dataset),
                                                args.repeat)
    html_med, html_best, page = _timed(lambda: content.html(), args.repeat)
    start = time.perf_counter()
    pdf = content.pdf()
    pdf_cold = time.perf_counter() - start
    pdf_med, pdf_best, pdf = _timed(lambda: content.pdf(), args.repeat)
    charts = len(content.charts())
    print(f"report content: median {content_med:.2f} s; HTML: median {html_med:.2f} s ({len(page) / 1e6:.1f} MB); "
          f"PDF cold {pdf_cold:.1f} s, warm median {pdf_med:.1f} s ({len(pdf) / 1e6:.2f} MB, {charts} charts)",
          flush=True)

    old = _load_old_report()
    old_med, _old_best, old_page = _timed(
        lambda: old.build_html_report(result, frame=adult, dataset="sample:adult", retrain=retrained,  # type: ignore
                                      thresholds=thresholds, equalized=sweep, equalized_alpha=0.1), args.repeat)
    print(f"peer: the previous HTML report builder: median {old_med:.2f} s ({len(old_page) / 1e6:.1f} MB)",
          flush=True)

    # Peer PDF: each chart exported with plotly's own path (kaleido starts a browser per image).
    figures = [c.figure for c in content.charts()][: args.peer_charts]
    start = time.perf_counter()
    import plotly.io

    for figure in figures:
        plotly.io.to_image(figure, format="svg", width=820, height=int(figure["layout"].get("height") or 520))
    per_chart = (time.perf_counter() - start) / len(figures)
    import base64

    import weasyprint

    from luskin_core.present import report_blocks, report_render

    start = time.perf_counter()
    images = report_render.CHART_RENDERER.svgs([c.figure for c in content.charts()])
    our_svgs = time.perf_counter() - start
    drawn = {id(c): report_blocks.Chart(c.caption, c.figure, width_pct=100,
                                        src="data:image/svg+xml;base64," + base64.b64encode(svg).decode("ascii"))
             for c, svg in zip(content.charts(), images)}
    start = time.perf_counter()
    weasyprint.HTML(string=content._render(pdf=True, charts=drawn)).write_pdf()
    layout_only = time.perf_counter() - start
    print(f"PDF parts (browser reused): charts as SVG {our_svgs:.1f} s, WeasyPrint layout {layout_only:.1f} s",
          flush=True)
    peer_pdf = per_chart * charts + layout_only
    print(f"peer: PDF with one browser per chart: {per_chart:.1f} s per chart x {charts} + layout {layout_only:.1f} s "
          f"= {peer_pdf:.1f} s (measured on {len(figures)} charts)", flush=True)
    close_chart_renderer()

    lines = [
        "# Time to build the report on Adult with every tool run", "",
        (f"Generated by `benchmarks/bench_report.py` on {platform.machine()} with {os.cpu_count()} cores (shared), "
        f"Python {platform.python_version()}. Wall times; load average before the run "
        f"{load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}. Medians of {args.repeat} repeats."), "",
        "## The tools (run once; their results feed every report)", "",
        "| tool | s |", "|---|---|", *[f"| {k} | {v:.2f} |" for k, v in tools.items()], "",
        f"## The report ({charts} charts)", "",
        "| step | median s | best s | size |", "|---|---|---|---|",
        f"| content (sentences, tables, figures, cost points) | {content_med:.2f} | {content_best:.2f} | |",
        f"| HTML page | {html_med:.2f} | {html_best:.2f} | {len(page) / 1e6:.1f} MB |",
        f"| HTML report = content + page | {content_med + html_med:.2f} | | |",
        f"| PDF, first of the process (starts Chromium) | {pdf_cold:.1f} | | {len(pdf) / 1e6:.2f} MB |",
        f"| PDF, browser reused | {pdf_med:.1f} | {pdf_best:.1f} | |",
        f"| PDF report = content + PDF (browser reused) | {content_med + pdf_med:.1f} | | |",
        f"| of which: {charts} charts as SVG / WeasyPrint layout | {our_svgs:.1f} / {layout_only:.1f} | | |", "",
        "## Peers (same results, same run)", "",
        "| builder | s |", "|---|---|",
        f"| previous HTML report builder (commit {REPORT_BEFORE}; fewer sections, no cost chart) | {old_med:.2f} |",
        f"| this HTML report (content + page) | {content_med + html_med:.2f} |",
        (f"| PDF with one browser per chart (plotly's `to_image`; {per_chart:.1f} s per chart, measured on "
        f"{len(figures)}) + WeasyPrint | {peer_pdf:.1f} |"),
        f"| this PDF report (content + PDF, browser reused) | {content_med + pdf_med:.1f} |", "",
    ]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines), encoding="utf-8")
    print(f"Wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
