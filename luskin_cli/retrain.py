"""``luskin retrain``: the paper's relabel-and-retrain experiment from the command line.

Registered by :func:`luskin_cli.main.build_parser` through :func:`add_parsers`. Prints the
paper-shaped table (ratios with 95% intervals per class per filter cell on the held-out 20%,
gaps with p-values, AUCs) or, with ``--json``, one JSON document.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from luskin_cli.options import CommandOptions
from luskin_core import formatting as cells
from luskin_core.formatting import format_number, format_p

if TYPE_CHECKING:  # imported when the subcommand runs, so that `luskin --help` starts fast
    from luskin_core.corrections.retrain import RetrainResult


def add_parsers(subparsers: Any) -> None:
    """Register the ``retrain`` subcommand."""
    from luskin_cli.common import add_data_options, add_option_flags

    parser = subparsers.add_parser(
        "retrain", help="relabel and retrain to controlled fairness (paper section 3)",
        description="Split the data 40/40/20 (D1, D2, D4), train the first model A1 on D1, build "
                    "synthetic labels for D2 with Algorithm 1 (selective risk adjustment) or Algorithm 2 "
                    "(risk-based flipping), train the second model C2 on them, and report both models "
                    "on D4, which neither has seen.")
    add_data_options(parser)
    group = parser.add_argument_group("retraining")
    add_option_flags(group, "retrain")  # declared once: luskin_core/spec/options.py (--seed is a data option)
    group.add_argument("--synthetic-out", metavar="PATH",
                       help="write the synthetic data set D3 (D2's rows with luskin_risk, "
                            "luskin_label_before, luskin_label_after) as CSV")
    group.add_argument("--save-model", metavar="PATH", help="save the second model C2 (skops format)")
    parser.set_defaults(run=run)


def run(args: CommandOptions) -> int:
    """Run the experiment and print the report; returns the exit status."""
    from luskin_cli.common import format_warnings, option_values, print_json, resolve
    from luskin_core.corrections.retrain import RetrainOptions, retrain, save_model

    frame, spec, features = resolve(args)
    options = RetrainOptions(
        **option_values(args, "retrain"), features=features,
        exclude=(),   # --exclude is read by resolve: the features it returns leave those columns out
    )
    result = retrain(frame, spec, options)
    written: dict[str, str] = {}
    if args.synthetic_out:
        written["synthetic_out"] = str(result.write_synthetic(args.synthetic_out))
    if args.save_model:
        written["model_out"] = str(save_model(result.second_model, args.save_model))
    if args.json:
        from luskin_cli.engine import sample_json

        print_json({**result.to_dict(), **written, **sample_json(args, frame)})
    else:
        print(format_retrain(result))
        if result.warnings:  # the correction backfired: AUC fell, or a cell's gap grew
            print(format_warnings(result.warnings))
        for key, path in written.items():
            what = "Synthetic data D3" if key == "synthetic_out" else "Second model C2"
            print(f"{what} written to {path}")
    return 0


def format_retrain(result: RetrainResult) -> str:
    """The paper-style table in plain text, with intervals, gaps and the relabelling record."""
    from luskin_core.analyses.narrative import tolerance_points
    from luskin_core.formatting import format_table
    from luskin_core.spec.options import ALGORITHM_NAMES
    from luskin_core.stats.verdict import fair_flag

    opts, spec = result.options, result.spec
    blocks = [("Original", result.original), (f"A1 ({opts.first})", result.first),
              (f"C2 ({opts.second})", result.second)]
    names = result.original.class_names   # as the data names them ("Male", not "Non-Female")
    keys = [c.filter_holds for c in result.original.cells if c.in_group]
    keys.sort(key=lambda k: (k is not None, bool(k)))  # the paper's order: UE then E
    rows: list[list[str]] = []
    for k in keys:
        cell_name = spec.cell_name(k)
        for member in (True, False):
            label = names.group if member else names.other
            line = [cell_name, label]
            for _, audit in blocks:
                c = audit.cell(k, member)
                line.append(cells.SHARE.ci(c.ratio, c.ci_low, c.ci_high))
            rows.append(line)
        line = ["", f"gap ({cells.GAP.unit}, group - other)"]
        for _, audit in blocks:
            g = audit.gap(k)
            verdict = fair_flag(g.fair)
            line.append(f"{cells.GAP.text(g.gap)} ({format_p(g.p_value)}, {verdict})")
        rows.append(line)
    rows.append(["", "AUC vs recorded labels", "", format_number(result.auc_first), format_number(result.auc_second)])
    header = ["filter cell", "class"] + [name for name, _ in blocks]
    sizes = result.sizes
    lines = [
        (f"Retraining: {ALGORITHM_NAMES[opts.algorithm]}; A1 = {opts.first}, C2 = {opts.second}; direction "
         f"{opts.direction}; {'every filter cell' if opts.all_cells else 'the filter cell only'}; seed {opts.seed}."),
        (f"Outcome {spec.outcome} == {spec.positive}; {names.group} vs {names.other}; tolerance "
         f"{spec.tolerance:g} ({tolerance_points(spec)} points)."),
        (f"Split 40/40/20 (stratified by {result.stratified_by}): D1 {sizes['D1']:,} rows, D2 {sizes['D2']:,}, "
         f"D4 {sizes['D4']:,}. Models use {len(result.features)} columns: {', '.join(result.features)}."),
        "",
        "Synthetic data D3 (built from D2):",
        *[f"- {s}" for s in result.relabelling.sentences()],
        "",
        "Share with a positive outcome on D4 (held out), in percent with 95% intervals; gaps in points:",
        format_table(rows, header),
        "",
        "Time: " + ", ".join(f"{k} {v:.1f} s" for k, v in result.timings.items()),
    ]
    return "\n".join(lines)

