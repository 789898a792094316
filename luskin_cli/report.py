"""``luskin report``: run the audit and the chosen corrections, and write the report as HTML and/or PDF.

Registered by :func:`luskin_cli.main.build_parser` through :func:`add_parsers`. The data and
specification options are the other subcommands'; ``--retrain``, ``--thresholds`` and
``--equalize`` add each correction (with the paper's defaults: Algorithm 2 with C2 an MLP,
lambda 1, the default alphas), and ``--html`` / ``--pdf`` say where to write. Progress and
timings go to stderr; with ``--json`` one JSON document on stdout says what was written.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from luskin_cli.options import CommandOptions
from luskin_core.errors import LuskinError
from luskin_core.formatting import AUC, format_percent, format_points
from luskin_core.spec.dataref import DataRef


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
    from luskin_cli.analysis import add_report_flags

    add_report_flags(parser)  # each analysis made from its line: --scan COLS, --scan-depth D, ... (its declarations)
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
    th.add_argument("--spread", action="store_true",
                    help="also run seeds 0-9 and give the spread of the test-set gaps and accuracy")

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


# Options of a correction that only mean something with its flag: (the flag, its options' flags and where they land).
_TOOL_OPTIONS = (
    ("--retrain", (("--algorithm", "algorithm"), ("--first", "first"), ("--second", "second"),
                   ("--direction", "direction"), ("--all-cells", "all_cells"))),
    ("--thresholds", (("--lambda", "lams"), ("--model", "model"), ("--solver", "solver"),
                      ("--score-column", "score_column"), ("--default-threshold", "default_threshold"),
                      ("--spread", "spread"))),
    ("--equalize", (("--alphas", "alphas"),)),
)
# A store_true flag not given is False, not None: it counts as given only when set.
_FLAGS = frozenset({"all_cells", "spread"})


def _refuse_unasked_options(args: CommandOptions) -> None:
    """An option of a correction or an analysis that was not asked for is a mistake, said before any work."""
    from luskin_cli.analysis import refuse_unasked_in_report

    if not args.html and not args.pdf:
        raise LuskinError("Say where to write the report: --html report.html, --pdf report.pdf, or both.")
    refuse_unasked_in_report(args)
    for tool, flags in _TOOL_OPTIONS:
        values = {flag: args.value(dest) or None if dest in _FLAGS else args.value(dest) for flag, dest in flags}
        unused = [flag for flag, value in values.items() if value is not None]
        if unused and not args.value(tool.lstrip("-")):
            raise LuskinError(f"{', '.join(unused)} {'sets' if len(unused) == 1 else 'set'} an option of {tool}, "
                              f"which was not asked for: add {tool}.")


@dataclass
class _Run:
    """What one ``luskin report`` has loaded and timed so far, shared by its steps."""

    args: CommandOptions
    start: float
    located: Any = None
    spec: Any = None
    features: tuple[str, ...] | None = None
    frame: Any = None              # rows for the model tools (None: nothing loaded in memory)
    name: str = ""
    source: str = ""
    timings: dict[str, float] = field(default_factory=dict)

    def timed(self, key: str, started: float) -> float:
        self.timings[key] = time.perf_counter() - started
        return self.timings[key]


def _load(state: _Run) -> tuple[Any, Any, bool]:
    """The data (a frame, or a Source an engine counts), the report's dataset line, its sample note, in memory."""
    import pandas as pd

    from luskin_cli.common import resolve
    from luskin_core.present.report import DatasetRef

    args = state.args
    state.located, state.spec, state.features = resolve(args, engine=True)
    state.source = args.data or str(DataRef.sample(str(args.preset)))
    ref = DataRef.parse(state.source)
    state.name = ref.name if ref.is_sample else Path(state.source).name
    sample_note = None
    in_memory = isinstance(state.located, pd.DataFrame)  # else a Source: an engine counts, the models get a sample
    if in_memory:
        state.frame = state.located
        dataset = DatasetRef.for_frame(state.name, state.frame, sample=ref.is_sample)
    else:
        # A database, Spark, Parquet or a big CSV: the audit counts inside the engine over every row;
        # the model tools get a seeded stratified sample, and the report says which rows they used.
        dataset = DatasetRef("upload", state.located.name)  # the source's own name: never a password
        if args.retrain or args.thresholds or args.equalize:
            state.frame, state.spec, state.features = resolve(args)
            info = args.sample_info
            sample_note = info.sentence() if info is not None else None
    state.timed("load", state.start)
    return dataset, sample_note, in_memory


def _regulator_tables(state: _Run) -> list[Any]:
    """A regulator table's section (luskin_core.analyses.regulator_tables), with --template."""
    if not state.args.template:
        return []
    from luskin_cli.regulator import template_choices
    from luskin_core.analyses.regulator_tables import REGULATOR_TABLES

    table = REGULATOR_TABLES[state.args.template]
    return [table.build(state.located, state.spec, template_choices(state.args))]


def _series(state: _Run) -> Any:
    """The "Over time" section, with --period."""
    if not state.args.period:
        return None
    from luskin_cli.series import series_for

    t = time.perf_counter()
    series = series_for(state.args, state.located, state.spec, state.source)
    _say(f"Over time: {series.headline()} ({state.timed('series', t):.1f} s)")
    return series


def _adjusted(state: _Run) -> Any:
    """Gaps adjusted by regression, with --controls (None without)."""
    from luskin_cli.adjust import adjust_located

    t = time.perf_counter()
    adjusted = adjust_located(state.args, state.located, state.spec)
    if adjusted is not None:
        seconds = state.timed("adjusted", t)
        _say(f"Adjusted gaps: {len(adjusted.flagged)} of {len(adjusted.gaps)} flagged ({seconds:.1f} s)")
    return adjusted


def _table_analyses(state: _Run) -> list[Any]:
    """Each analysis made from its line that was asked for (``--scan COLS``: luskin_cli.analysis.in_report), its
    options from its own flags (``--scan-depth``, ``--scan-fdr``, ...), on the audit's data and specification."""
    from luskin_cli.analysis import asked_in_report, in_report, run_in_report

    found: list[Any] = []
    for entry in in_report():
        if not asked_in_report(state.args, entry):
            continue
        t = time.perf_counter()
        found.append(run_in_report(state.args, entry, state.located, state.spec, state.name))
        _say(f"{entry.title}: {found[-1].headline()} ({state.timed(entry.name, t):.1f} s)")
    return found


def _retrains(state: _Run) -> list[Any]:
    """Relabel and retrain, with --retrain: every algorithm and second model asked for."""
    args = state.args
    if not args.retrain:
        return []
    assert state.frame is not None  # rows were loaded (or sampled) above for every model tool
    from luskin_cli.common import option_or_default
    from luskin_core.corrections.retrain import RetrainOptions, retrain
    from luskin_core.spec.options import option_default

    retrains: list[Any] = []
    first = option_or_default(args.first, "retrain", "first")
    algorithms = args.algorithm if isinstance(args.algorithm, list) else [option_default("retrain", "algorithm")]
    for algorithm in algorithms:
        for second in args.second or [option_default("retrain", "second")]:
            t = time.perf_counter()
            options = RetrainOptions(algorithm=int(algorithm), first=first, second=second,
                                     direction=option_or_default(args.direction, "retrain", "direction"),
                                     all_cells=bool(args.all_cells), seed=args.seed, features=state.features)
            retrains.append(retrain(state.frame, state.spec, options))
            state.timed(f"retrain {len(retrains)}", t)
            _say(f"Retraining, Algorithm {algorithm}, A1 {first} then C2 {second}: AUC "
                 f"{AUC.text(retrains[-1].auc_first)} -> {AUC.text(retrains[-1].auc_second)} "
                 f"({time.perf_counter() - t:.1f} s)")
            _say_warnings(retrains[-1].warnings)
    return retrains


def _threshold_reports(state: _Run) -> list[Any]:
    """Per-group thresholds, with --thresholds: one report per lambda (and the seeds' spread with --spread)."""
    args = state.args
    if not args.thresholds:
        return []
    assert state.frame is not None  # rows were loaded (or sampled) above for every model tool
    from luskin_cli.common import option_or_default
    from luskin_cli.parity import paper_compas
    from luskin_core.corrections.thresholds import tune_thresholds
    from luskin_core.spec.options import option_default

    reports: list[Any] = []
    frame, spec, features = state.frame, state.spec, state.features
    model = None if args.score_column else option_or_default(args.model, "thresholds", "model")
    for lam in args.lams or [option_default("thresholds", "lam")]:
        t = time.perf_counter()
        pipeline = None
        if model is not None and paper_compas(args, features):
            from luskin_core.corrections.models import compas_paper_pipeline

            pipeline = compas_paper_pipeline(model, random_state=args.seed)
        tuning: dict[str, Any] = {"model": model, "score_column": args.score_column, "features": features,
                                  "lam": lam, "seed": args.seed,
                                  "solver": option_or_default(args.solver, "thresholds", "solver"),
                                  "default_threshold": args.default_threshold}
        reports.append(tune_thresholds(frame, spec, pipeline=pipeline, **tuning))
        if args.spread:
            from luskin_cli.parity import with_spread

            reports[-1] = with_spread(reports[-1], frame, spec, args, model, features, tuning)
        state.timed(f"thresholds {len(reports)}", t)
        after = reports[-1].after
        _say(f"Thresholds, lambda {lam:g}: accuracy {format_percent(after.accuracy)}, TPR gap "
             f"{format_points(after.tpr_gap)} points, FPR gap {format_points(after.fpr_gap)} points "
             f"({time.perf_counter() - t:.1f} s)")
        _say_warnings(reports[-1].warnings)
    return reports


def _sweep(state: _Run, alphas: Any) -> Any:
    """The equalized-distribution sweep, with --equalize (None without)."""
    args = state.args
    if not args.equalize:
        return None
    assert state.frame is not None  # rows were loaded (or sampled) above for every model tool
    from luskin_cli.parity import paper_compas
    from luskin_core.corrections.equalize import equalize_frame

    t = time.perf_counter()
    preprocess = None
    if paper_compas(args, state.features):
        from luskin_core.corrections.models import compas_paper_pipeline

        preprocess = compas_paper_pipeline("LR", random_state=args.seed)[:-1]
    sweep = equalize_frame(state.frame, state.spec, alphas=alphas, features=state.features, preprocess=preprocess,
                           seed=args.seed, progress=lambda fraction, message: _say(f"  {message}"))
    _say(f"Equalized distribution: {len(sweep.points)} alphas ({state.timed('equalize', t):.1f} s)")
    _say_warnings(sweep.warnings)
    return sweep


def _write_reports(state: _Run, content: Any, html_path: Path | None, pdf_path: Path | None) -> dict[str, str]:
    """The HTML and the PDF written where asked; what was written where."""
    from luskin_core.present.report import close_chart_renderer

    written: dict[str, str] = {}
    if html_path is not None:
        t = time.perf_counter()
        _write(html_path, content.html().encode("utf-8"))
        seconds = state.timed("html", t)
        written["html"] = str(html_path)
        _say(f"Wrote {html_path} ({html_path.stat().st_size / 1e6:.1f} MB, {seconds:.1f} s)")
    if pdf_path is not None:
        t = time.perf_counter()
        try:
            data = content.pdf(browser_path=state.args.browser)
        finally:
            close_chart_renderer()
        _write(pdf_path, data)
        seconds = state.timed("pdf", t)
        written["pdf"] = str(pdf_path)
        _say(f"Wrote {pdf_path} ({pdf_path.stat().st_size / 1e6:.1f} MB, {seconds:.1f} s)")
    return written


def run(args: CommandOptions) -> int:
    """Audit, run the chosen corrections, and write the report(s); returns the exit status."""
    from luskin_cli.common import option_or_default
    from luskin_core.analyses.audit import audit
    from luskin_core.present.report import report_content

    _refuse_unasked_options(args)
    html_path, pdf_path = _target(args.html), _target(args.pdf)
    alphas = option_or_default(args.alphas, "equalize", "alphas") if args.equalize else ()
    state = _Run(args, time.perf_counter())
    dataset, sample_note, in_memory = _load(state)

    t = time.perf_counter()
    result = audit(state.located, state.spec)
    _say(f"Audit: {result.headline()} ({state.timed('audit', t):.1f} s)")
    regulator = _regulator_tables(state)
    series = _series(state)
    adjusted = _adjusted(state)
    analyses = _table_analyses(state)
    retrains = _retrains(state)
    reports = _threshold_reports(state)
    sweep = _sweep(state, alphas)

    t = time.perf_counter()
    shown = sweep.shown_at(args.alpha_shown) if sweep is not None else None   # its histograms at --alpha-shown
    content = report_content([result, adjusted, *regulator, series, *analyses, *retrains, *reports, shown],
                             frame=state.frame if in_memory else None, dataset=dataset, title=args.title,
                             sample_note=sample_note)
    state.timed("report content", t)
    written = _write_reports(state, content, html_path, pdf_path)
    state.timed("total", state.start)
    if args.json:
        print(json.dumps({"written": written, "headline": result.headline(),
                          "seconds": {k: round(v, 3) for k, v in state.timings.items()}}, indent=2))
    return 0
