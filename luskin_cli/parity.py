"""``luskin thresholds`` and ``luskin equalize``: classification parity from the command line.

Registered by :func:`luskin_cli.main.build_parser` through :func:`add_parsers`. Both print a
plain table by default and one JSON document with ``--json``. ``--preset compas`` uses the
paper's COMPAS encoding (0/1 binaries, standardised counts, one-hot charge, PCA to 20).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from luskin_cli.options import CommandOptions
from luskin_core.formatting import GAP_SIZE, SHARE, format_percent


def add_parsers(subparsers: Any) -> None:
    """Register the ``thresholds`` and ``equalize`` subcommands."""
    from luskin_cli.common import add_data_options, add_option_flags

    th = subparsers.add_parser(
        "thresholds", help="one decision threshold per group for equal error rates (paper section 4)",
        description="Tune one decision threshold per group to maximise accuracy minus lambda times "
                    "the gaps in true and false positive rates between the groups. With --model a "
                    "model is trained on 60% of the rows, thresholds are tuned on 20% and results "
                    "are reported on the last 20%; with --score-column your own score is used, "
                    "tuned on half of the rows and reported on the other half.")
    add_data_options(th)
    group = th.add_argument_group("thresholds")
    source = group.add_mutually_exclusive_group()
    add_option_flags(source, "thresholds", only=("model",), unset=True)   # --model or --score-column
    source.add_argument("--score-column", metavar="COL",
                        help="tune thresholds on an existing score column (e.g. decile_score)")
    # every other declared option (solver, lambda, tuning, ...): its flag made from its declaration
    add_option_flags(group, "thresholds", skip=("model",))   # placed above, beside --score-column
    group.add_argument("--default-threshold", type=float, default=None, metavar="T",
                       help="the single threshold to compare with ('before'); default: 0.5 for "
                            "probabilities, 0 for an SVM, and for a score column the single threshold "
                            "with the best accuracy on the tuning rows")
    group.add_argument("--spread", action="store_true",
                       help="also run seeds 0-9 (a new split, model and tuning each) and say how much the "
                            "test-set gaps and accuracy move with the split")
    th.set_defaults(run=run_thresholds)

    eq = subparsers.add_parser(
        "equalize", help="a classifier whose score distributions match across groups (paper section 4)",
        description="Train logistic regression on alpha * log-loss + (1 - alpha) * the distance "
                    "between the groups' score histograms (for positives and negatives separately). "
                    "The protected attribute is used for training only. Rows split 60/20/20; the "
                    "model trains on the 60% and is reported on the last 20%.")
    add_data_options(eq)
    group = eq.add_argument_group("equalized distribution")
    add_option_flags(group, "equalize")  # alphas, bandwidth, solver, start, ...: from their declarations
    group.add_argument("--histograms", action="store_true",
                       help="with --json, include the test score histograms per group and outcome")
    eq.set_defaults(run=run_equalize)


def paper_compas(args: CommandOptions, features: Sequence[str] | None) -> bool:
    """The paper's COMPAS encoding applies to the compas preset with its own features."""
    from luskin_core.counting.data import PRESETS

    return (
        args.preset == "compas"
        and features is not None
        and tuple(features) == tuple(PRESETS["compas"].features)
    )


def _num(x: Any) -> str:
    if isinstance(x, str):
        return x
    return "n/a" if x != x else f"{x:.3f}"  # noqa: PLR0124 (NaN check)


def run_thresholds(args: CommandOptions) -> int:
    """Tune the thresholds and print them with before/after rates on the test rows."""
    from luskin_cli.common import format_warnings, option_or_default, option_values, print_json, resolve
    from luskin_core.corrections.thresholds import tune_thresholds
    from luskin_core.formatting import format_table

    frame, spec, features = resolve(args)
    model = None if args.score_column else option_or_default(args.model, "thresholds", "model")
    pipeline = None
    if model is not None and paper_compas(args, features):
        from luskin_core.corrections.models import compas_paper_pipeline

        pipeline = compas_paper_pipeline(model, random_state=args.seed)
    options = {"model": model, "score_column": args.score_column, "features": features,
               "default_threshold": args.default_threshold, **option_values(args, "thresholds", skip=("model",))}
    report = tune_thresholds(frame, spec, pipeline=pipeline, **options)
    if args.spread:
        report = with_spread(report, frame, spec, args, model, features, options)
    if args.json:
        from luskin_cli.engine import sample_json

        print_json({**report.to_dict(), **sample_json(args, frame)})
        return 0
    rows = []
    for label, thr in report.thresholds.items():
        after = report.after.groups[label]
        before = report.before.groups[label] if report.before else None
        rows.append([
            label,
            "n/a" if report.default_threshold is None else _num(report.default_threshold),
            _num(thr),
            SHARE.text(before.tpr if before else None),
            SHARE.text(after.tpr),
            SHARE.text(before.fpr if before else None),
            SHARE.text(after.fpr),
        ])
    split = (f"trained on {report.n_train:,} rows, tuned on {report.n_tune:,}"
             f"{' out-of-fold' if report.tuning_method == 'crossfit' else ''}, tested on "
             f"{report.n_test:,}" if report.n_train else
             f"tuned on {report.n_tune:,} rows, tested on {report.n_test:,}")
    print(f"Per-group thresholds for {report.score_source} ({report.solver} solver, lambda "
          f"{report.lam:g}, reference group {report.reference}; {split}; seed {report.seed})")
    print()
    print(format_table(rows, ["group", "threshold before", "threshold after",
                              *(SHARE.heading(f"{rate} {when}") for rate in ("TPR", "FPR") for when in ("before", "after"))]))
    print()
    if report.before:
        print(f"Test accuracy: {format_percent(report.before.accuracy)} before, {format_percent(report.after.accuracy)} after.")
        print(f"Largest gap in true positive rate: {GAP_SIZE.text(report.before.tpr_gap)} points before, "
              f"{GAP_SIZE.text(report.after.tpr_gap)} after; in false positive rate: "
              f"{GAP_SIZE.text(report.before.fpr_gap)} points before, {GAP_SIZE.text(report.after.fpr_gap)} after.")
    else:
        print(f"Test accuracy with the tuned thresholds: {format_percent(report.after.accuracy)}; largest "
              f"gap in true positive rate {GAP_SIZE.text(report.after.tpr_gap)} points, in false positive rate "
              f"{GAP_SIZE.text(report.after.fpr_gap)} points.")
    for line in report.gap_lines():
        print(line)
    print(f"Objective (accuracy - lambda x gaps) on the tuning rows: {report.objective:.4f}.")
    print("A row is predicted positive when its score is at least its group's threshold.")
    if report.warnings:  # the tuning widened a gap or fell below always-the-majority accuracy
        print(format_warnings(report.warnings))
    return 0


def with_spread(report: Any, frame: Any, spec: Any, args: CommandOptions, model: Any, features: Any,
                options: dict[str, Any]) -> Any:
    """The report with the same run over seeds 0-9 (:func:`luskin_core.corrections.thresholds.seed_spread`)."""
    from dataclasses import replace

    from luskin_core.corrections.thresholds import seed_spread

    pipeline_for = None
    if model is not None and paper_compas(args, features):
        from luskin_core.corrections.models import compas_paper_pipeline

        def pipeline_for(seed: int) -> Any:
            return compas_paper_pipeline(model, random_state=seed)
    rest = {k: v for k, v in options.items() if k != "seed"}
    return replace(report, spread=seed_spread(frame, spec, pipeline_for=pipeline_for, **rest))


def run_equalize(args: CommandOptions) -> int:
    """Train the equalized-distribution classifier at each alpha and print test results."""
    from luskin_cli.common import format_warnings, option_values, print_json, resolve
    from luskin_core.corrections.equalize import equalize_frame
    from luskin_core.formatting import format_table

    frame, spec, features = resolve(args)
    preprocess = None
    if paper_compas(args, features):
        from luskin_core.corrections.models import compas_paper_pipeline

        preprocess = compas_paper_pipeline("LR", random_state=args.seed)[:-1]
    sweep = equalize_frame(
        frame, spec, features=features, preprocess=preprocess, **option_values(args, "equalize"),
    )
    if args.json:
        points = []
        for p in sweep.points:
            d = p.to_dict()
            if not args.histograms:
                d.pop("histograms")
            from luskin_cli.engine import sample_json

            points.append({**d, **sample_json(args, frame)})
        print_json(points)
        return 0
    labels = list(sweep.group_labels)
    header = ["alpha", SHARE.heading("accuracy")] + [SHARE.heading(f"TPR {g}") for g in labels] + [
        SHARE.heading(f"FPR {g}") for g in labels] + [GAP_SIZE.heading("TPR gap"), GAP_SIZE.heading("FPR gap")]
    rows = []
    for p in sweep.points:
        rows.append([f"{p.alpha:g}", SHARE.text(p.accuracy)]
                    + [SHARE.text(p.groups[g]["tpr"]) for g in labels]
                    + [SHARE.text(p.groups[g]["fpr"]) for g in labels]
                    + [GAP_SIZE.text(p.tpr_gap), GAP_SIZE.text(p.fpr_gap)])
    print(f"Equalized-distribution logistic regression ({sweep.n_train:,} training rows, "
          f"{sweep.n_test:,} test rows, decision at probability 0.5, seed {args.seed})")
    print()
    print(format_table(rows, header))
    print()
    print("alpha = 1 is plain logistic regression; smaller alpha pulls the groups' score "
          "distributions together, usually at some cost in accuracy.")
    if sweep.warnings:  # e.g. a fit that stopped at its iteration limit without converging
        print(format_warnings(sweep.warnings))
    return 0
