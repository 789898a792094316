"""``luskin report``: run the audit and the chosen corrections, and write the report as HTML and/or PDF.

Registered by :func:`luskin_cli.main.build_parser` through :func:`add_parsers`. The data and
specification options are the other subcommands'; ``--retrain``, ``--thresholds`` and
``--equalize`` add each correction (with the paper's defaults: Algorithm 2 with C2 an MLP,
lambda 1, the default alphas), and ``--html`` / ``--pdf`` say where to write. Progress and
timings go to stderr; with ``--json`` one JSON document on stdout says what was written.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from luskin_core.errors import LuskinError
from luskin_core.formatting import format_percent, format_points


def add_parsers(subparsers: Any) -> None:
    """Register the ``report`` subcommand."""
    from luskin_cli.common import add_data_options

    parser = subparsers.add_parser(
        "report", help="write the report (HTML and/or PDF): the audit and the corrections you choose",
        description="Audit the data, run the corrections you choose (--retrain, --thresholds, --equalize) and write "
                    "one report with every finding: a first page a committee reads in a minute, a section per tool "
                    "with its settings, charts, tables and warnings, and the cost of each correction on one chart. "
                    "--html writes a self-contained page (opens offline); --pdf the same content as PDF (its charts "
                    "are drawn by Chromium).")
    add_data_options(parser)
    from luskin_cli.common import add_audit_options

    add_audit_options(parser)  # a report of every group within strata, as luskin audit draws it
    from luskin_cli.adjust import add_adjust_options

    add_adjust_options(parser)  # --controls: a section of gaps adjusted by regression
    from luskin_cli.common import add_template_options

    add_template_options(parser, csv=False)  # --template ll144|eeoc adds the regulator's sections
    from luskin_cli.series import add_series_options

    add_series_options(parser)  # --period COLUMN: the "Over time" section
    out = parser.add_argument_group("report")
    out.add_argument("--html", metavar="PATH", help="write the HTML report here")
    out.add_argument("--pdf", metavar="PATH", help="write the PDF report here")
    out.add_argument("--title", default="Fairness audit report", help="the report's title")
    out.add_argument("--browser", metavar="PATH",
                     help="the Chromium that draws the PDF's charts (default: chromium on the PATH)")

    from luskin_cli.common import add_option_flags
    from luskin_core.spec.options import ALPHA  # declared once (light: no heavy import)

    # Each tool's flags made from its declarations (luskin_core/spec/options.py), unset when not given: an option
    # of a tool that was not asked for is refused below; several algorithms, second models or lambdas compare.
    rt = parser.add_argument_group("retraining (--retrain)")
    rt.add_argument("--retrain", action="store_true", help="relabel and retrain (paper section 3)")
    add_option_flags(rt, "retrain", only=("algorithm", "first", "second", "direction", "all_cells"),
                     repeated={"algorithm": "algorithm", "second": "second"}, unset=True)

    th = parser.add_argument_group("per-group thresholds (--thresholds)")
    th.add_argument("--thresholds", action="store_true", help="one decision threshold per group (paper section 4)")
    source = th.add_mutually_exclusive_group()
    add_option_flags(source, "thresholds", only=("model",), unset=True)
    source.add_argument("--score-column", metavar="COL", help="tune thresholds on an existing score column")
    add_option_flags(th, "thresholds", only=("lam", "solver"), repeated={"lam": "lams"}, unset=True)
    th.add_argument("--default-threshold", type=float, default=None, metavar="T",
                    help="the single threshold to compare with ('before')")

    eq = parser.add_argument_group("equalized distribution (--equalize)")
    eq.add_argument("--equalize", action="store_true", help="the equalized-distribution sweep (paper section 4)")
    add_option_flags(eq, "equalize", only=("alphas",), unset=True)
    eq.add_argument("--alpha-shown", **ALPHA.argparse("--alpha-shown"), default=0.1, metavar="A",
                    help="the alpha whose score histograms the report draws (default 0.1, the paper's)")
    parser.set_defaults(run=run)


def _target(path: str | None) -> Path | None:
    """Where to write, checked before any work is done (a missing folder is a plain error)."""
    if path is None:
        return None
    target = Path(path)
    if target.is_dir():
        raise LuskinError(f"'{path}' is a folder: give a file name for the report, e.g. {Path(path) / 'report.html'}.")
    if not target.parent.exists():
        raise LuskinError(f"Cannot write the report to '{path}': the folder '{target.parent}' does not exist.")
    return target


def _write(target: Path, data: bytes) -> None:
    try:
        target.write_bytes(data)
    except OSError as err:
        raise LuskinError(f"Cannot write the report to '{target}': {err.strerror}.") from None


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _say_warnings(warnings: Any) -> None:
    """A correction's warnings on the progress stream too (the report also carries them)."""
    for sentence in warnings:
        _say(f"  Warning: {sentence}")


def run(args: argparse.Namespace) -> int:
    """Audit, run the chosen corrections, and write the report(s); returns the exit status."""
    import pandas as pd

    from luskin_cli.common import option_or_default, resolve
    from luskin_cli.parity import _paper_compas
    from luskin_core.analyses.audit import audit
    from luskin_core.present.report import DatasetRef, close_chart_renderer, report_content
    from luskin_core.spec.options import option_default

    if not args.html and not args.pdf:
        raise LuskinError("Say where to write the report: --html report.html, --pdf report.pdf, or both.")
    for tool, given in (("--retrain", {"--algorithm": args.algorithm, "--first": args.first, "--second": args.second,
                                       "--direction": args.direction, "--all-cells": args.all_cells or None}),
                        ("--thresholds", {"--lambda": args.lams, "--model": args.model, "--solver": args.solver,
                                          "--score-column": args.score_column,
                                          "--default-threshold": args.default_threshold}),
                        ("--equalize", {"--alphas": args.alphas})):
        unused = [name for name, value in given.items() if value is not None]
        if unused and not getattr(args, tool.lstrip("-")):
            raise LuskinError(f"{', '.join(unused)} {'sets' if len(unused) == 1 else 'set'} an option of {tool}, "
                              f"which was not asked for: add {tool}.")
    html_path, pdf_path = _target(args.html), _target(args.pdf)
    alphas = option_or_default(args.alphas, "equalize", "alphas") if args.equalize else ()
    timings: dict[str, float] = {}
    clock = time.perf_counter
    start = clock()

    located, spec, features = resolve(args, engine=True)
    source = args.data or f"sample:{args.preset}"
    name = source.split(":", 1)[1] if source.startswith("sample:") else Path(source).name
    sample_note = None
    in_memory = isinstance(located, pd.DataFrame)  # else a Source: an engine counts, the models get a sample
    if in_memory:
        frame: pd.DataFrame | None = located
        dataset = DatasetRef.for_frame(name, frame, sample=source.startswith("sample:"))
    else:
        # A database, Spark, Parquet or a big CSV: the audit counts inside the engine over every row;
        # the model tools get a seeded stratified sample, and the report says which rows they used.
        dataset = DatasetRef("upload", located.name)  # the source's own name: never a password
        frame = None
        if args.retrain or args.thresholds or args.equalize:
            frame, spec, features = resolve(args)
            info = getattr(args, "sample_info", None)
            sample_note = info.sentence() if info is not None else None
    timings["load"] = clock() - start

    t = clock()
    result = audit(located, spec)
    timings["audit"] = clock() - t
    _say(f"Audit: {result.headline()} ({timings['audit']:.1f} s)")
    regulator = []
    if args.template:  # a regulator table's section (luskin_core.analyses.regulator_tables)
        from luskin_cli.regulator import template_choices
        from luskin_core.analyses.regulator_tables import REGULATOR_TABLES

        regulator.append(REGULATOR_TABLES[args.template].build(located, spec, template_choices(args)))

    series = None
    if args.period:
        from luskin_cli.series import series_for

        t = clock()
        series = series_for(args, located, spec, source)
        timings["series"] = clock() - t
        _say(f"Over time: {series.headline()} ({timings['series']:.1f} s)")

    from luskin_cli.adjust import adjust_located

    t = clock()
    adjusted = adjust_located(args, located, spec)
    if adjusted is not None:
        timings["adjusted"] = clock() - t
        _say(f"Adjusted gaps: {len(adjusted.flagged)} of {len(adjusted.gaps)} flagged ({timings['adjusted']:.1f} s)")

    retrains = []
    if args.retrain:
        assert frame is not None  # rows were loaded (or sampled) above for every model tool
        from luskin_core.corrections.retrain import RetrainOptions, retrain

        first = option_or_default(args.first, "retrain", "first")
        for algorithm in args.algorithm or [option_default("retrain", "algorithm")]:
            for second in args.second or [option_default("retrain", "second")]:
                t = clock()
                options = RetrainOptions(algorithm=int(algorithm), first=first, second=second,
                                         direction=option_or_default(args.direction, "retrain", "direction"),
                                         all_cells=bool(args.all_cells), seed=args.seed, features=features)
                retrains.append(retrain(frame, spec, options))
                timings[f"retrain {len(retrains)}"] = clock() - t
                _say(f"Retraining, Algorithm {algorithm}, A1 {first} then C2 {second}: AUC "
                     f"{retrains[-1].auc_first:.3f} -> {retrains[-1].auc_second:.3f} ({clock() - t:.1f} s)")
                _say_warnings(retrains[-1].warnings)

    reports = []
    if args.thresholds:
        assert frame is not None  # rows were loaded (or sampled) above for every model tool
        from luskin_core.corrections.thresholds import tune_thresholds

        model = None if args.score_column else option_or_default(args.model, "thresholds", "model")
        for lam in args.lams or [option_default("thresholds", "lam")]:
            t = clock()
            pipeline = None
            if model is not None and _paper_compas(args, features):
                from luskin_core.corrections.models import compas_paper_pipeline

                pipeline = compas_paper_pipeline(model, random_state=args.seed)
            reports.append(tune_thresholds(frame, spec, model=model, score_column=args.score_column,
                                           features=features, lam=lam, seed=args.seed,
                                           solver=option_or_default(args.solver, "thresholds", "solver"),
                                           pipeline=pipeline, default_threshold=args.default_threshold))
            timings[f"thresholds {len(reports)}"] = clock() - t
            after = reports[-1].after
            _say(f"Thresholds, lambda {lam:g}: accuracy {format_percent(after.accuracy)}, TPR gap "
                 f"{format_points(after.tpr_gap)} points, FPR gap {format_points(after.fpr_gap)} points "
                 f"({clock() - t:.1f} s)")
            _say_warnings(reports[-1].warnings)

    sweep = None
    if args.equalize:
        assert frame is not None  # rows were loaded (or sampled) above for every model tool
        from luskin_core.corrections.equalize import equalize_frame

        t = clock()
        preprocess = None
        if _paper_compas(args, features):
            from luskin_core.corrections.models import compas_paper_pipeline

            preprocess = compas_paper_pipeline("LR", random_state=args.seed)[:-1]
        sweep = equalize_frame(frame, spec, alphas=alphas, features=features, preprocess=preprocess, seed=args.seed,
                               progress=lambda fraction, message: _say(f"  {message}"))
        timings["equalize"] = clock() - t
        _say(f"Equalized distribution: {len(sweep.points)} alphas ({timings['equalize']:.1f} s)")
        _say_warnings(sweep.warnings)

    t = clock()
    content = report_content(result, frame=frame if in_memory else None, dataset=dataset,
                             retrain=retrains or None, thresholds=reports or None, equalized=sweep,
                             equalized_alpha=args.alpha_shown if sweep is not None else None, title=args.title,
                             sample_note=sample_note, adjusted=adjusted, regulator=regulator, series=series)
    timings["report content"] = clock() - t
    written: dict[str, str] = {}
    if html_path is not None:
        t = clock()
        _write(html_path, content.html().encode("utf-8"))
        timings["html"] = clock() - t
        written["html"] = str(html_path)
        _say(f"Wrote {html_path} ({html_path.stat().st_size / 1e6:.1f} MB, {timings['html']:.1f} s)")
    if pdf_path is not None:
        t = clock()
        try:
            data = content.pdf(browser_path=args.browser)
        finally:
            close_chart_renderer()
        _write(pdf_path, data)
        timings["pdf"] = clock() - t
        written["pdf"] = str(pdf_path)
        _say(f"Wrote {pdf_path} ({pdf_path.stat().st_size / 1e6:.1f} MB, {timings['pdf']:.1f} s)")
    timings["total"] = clock() - start
    if args.json:
        print(json.dumps({"written": written, "headline": result.headline(),
                          "seconds": {k: round(v, 3) for k, v in timings.items()}}, indent=2))
    return 0

