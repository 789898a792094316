"""``luskin scan``: where does the outcome (or a model's error rate) differ from everyone else's, beyond chance?

Registered by :func:`luskin_cli.main.build_parser` through :func:`add_parsers`. Scans every group of 1..depth
of ``--columns`` (missing values as Unknown, numeric columns with many values cut into ranges) with the
family-wise error rate controlled at ``--level`` by calibrating the largest statistic over all groups on
``--replicates`` null replicates, or the false discovery rate at ``--fdr`` (Benjamini-Hochberg on each group's
exact permutation p-value). A Parquet file, a big CSV, a
database or Spark is counted where it lives (one aggregation); ``--json`` prints
:meth:`luskin_core.analyses.scan.ScanResult.to_dict`.
"""

from __future__ import annotations

from typing import Any

from luskin_cli.common import add_option_flags, option_or_default
from luskin_cli.options import CommandOptions
from luskin_core.errors import LuskinError
from luskin_core.spec.options import OPTIONS, option_default

OPTIONS_BY_NAME = {option.name: option for option in OPTIONS["scan"]}

SCAN_DESCRIPTION = (
    "Scan every combination of 1 to 3 columns and their values for a group whose rate differs from everyone "
    "else's by more than chance would explain, with the family-wise error rate over all groups scanned "
    "controlled (single-step max-T on null replicates drawn from the count table), or with --fdr the false "
    "discovery rate (Benjamini-Hochberg). Reports the group that carries each gap, not its parents or refinements, with "
    "simultaneous intervals and adjusted p-values; when nothing is found, the smallest gap the scan could "
    "have seen."
)


def add_parsers(subparsers: Any) -> None:
    """Register the ``scan`` subcommand."""
    from luskin_cli.engine import add_engine_options

    parser = subparsers.add_parser("scan", help="find the groups whose outcome or error rate differs beyond chance",
                                   description=SCAN_DESCRIPTION)
    data = parser.add_argument_group("data")
    data.add_argument("--data", help="a CSV file, or sample:adult / sample:compas; also a Parquet file or folder, "
                                     "a DuckDB file, postgresql://user@host/db or spark: (with --table)")
    data.add_argument("--outcome", help="the outcome column, e.g. approved")
    data.add_argument("--positive", action="append", default=None,
                      help="the outcome value that counts as positive, e.g. Y; repeat to count several together")
    add_option_flags(data, "scan", only=("seed",))   # the scan's options: declared in luskin_core/spec/options.py
    data.add_argument("--json", action="store_true", help="print one JSON document instead of text")
    add_engine_options(parser)
    group = parser.add_argument_group("the scan")
    group.add_argument("--columns", action="append", default=None, metavar="COLS",
                       help="comma-separated columns to scan, e.g. sex,race,age,borough (repeatable)")
    add_option_flags(group, "scan", only=("depth", "min_size"))
    level = OPTIONS_BY_NAME["level"]
    control = group.add_mutually_exclusive_group()   # --level A or --fdr Q: the level of one error rate or the other
    control.add_argument("--level", default=None, metavar=level.metavar,
                         help=level.command_help(option_default("scan", "level")),
                         **level.constraint.argparse("--level"))
    control.add_argument("--fdr", default=None, metavar="Q",
                         help="control the false discovery rate at Q instead (Benjamini-Hochberg on each group's "
                              "exact permutation p-value): finds more when many groups differ, and expects a share "
                              "Q of what it reports to be chance", **level.constraint.argparse("--fdr"))
    add_option_flags(group, "scan", only=("replicates", "calibration"))
    group.add_argument("--unknown", metavar="VALUE", action="append", default=None,
                       help="read this value of a scanned column as unknown category, as common spellings such as "
                            "'Unknown' and 'Prefer not to say' already are: a group with it is shown apart, never a "
                            "finding (repeatable; e.g. --unknown U)")
    group.add_argument("--bins", action="append", default=None, metavar="COL=CUTS",
                       help="cut a numeric column at these points, e.g. age=25,35,45,55 (repeatable)")
    group.add_argument("--n-bins", type=int, default=4, metavar="K",
                       help="ranges of equal shares for a numeric column with many values (default 4)")
    model = parser.add_argument_group("a model's decisions (error rates) or probabilities (calibration)")
    model.add_argument("--predictions", metavar="COL",
                       help="a prediction column (0/1, true/false, yes/no, or a score with --prediction-cutoff): "
                            "scan its error rates against the outcome (see --measure)")
    model.add_argument("--prediction-cutoff", type=float, default=None, metavar="X",
                       help="the prediction column is a score: a row is predicted positive at or above X")
    add_option_flags(model, "scan", only=("measure",))
    model.add_argument("--probability", metavar="COL",
                       help="a column of a model's predicted probabilities of the positive outcome: scan where "
                            "the model over- or under-predicts (calibration)")
    parser.set_defaults(run=run)


def spec_from_args(args: CommandOptions) -> tuple[Any, Any]:
    """The audit's specification (the outcome, its positive value, a model's prediction column, the numeric
    columns' cuts; the first scanned column as its groups) and the scan's options the flags describe."""
    from luskin_cli.common import cut_points
    from luskin_core.spec.audit_spec import AuditSpec
    from luskin_core.spec.options import ScanOptions

    if not args.outcome:
        raise LuskinError("Say which column is the outcome: --outcome COL (and --positive VALUE).")
    if args.positive is None:
        raise LuskinError("Say which value of the outcome counts as positive: --positive VALUE.")
    columns = tuple(part.strip() for item in (args.columns or []) for part in item.split(",") if part.strip())
    if not columns:
        raise LuskinError("Say which columns to scan: --columns a,b,c.")
    options = ScanOptions(columns=columns, depth=args.depth, min_size=args.min_size,
                          level=args.fdr if args.fdr is not None else option_or_default(args.level, "scan", "level"),
                          error="fdr" if args.fdr is not None else "fwer", replicates=args.replicates, seed=args.seed,
                          measure=args.measure or ("calibration" if args.probability else "error" if args.predictions
                                                   else "rate"), calibration=args.calibration, probability=args.probability)
    spec = AuditSpec(args.outcome.strip(), _positive(args.positive), group_by=columns[:1], n_bins=args.n_bins,
                     bins=cut_points(args.bins or []), prediction=args.predictions,
                     prediction_cutoff=args.prediction_cutoff, unknown_values=tuple(args.unknown or ()))
    return spec, options


def _positive(text: str | list[str]) -> Any:
    return tuple(t.strip() for t in text) if isinstance(text, list) else text.strip()


def _data(args: CommandOptions) -> Any:
    """A file or database an engine counts (Parquet, a big CSV, PostgreSQL, Spark), or the rows of a CSV or sample."""
    from luskin_cli.engine import is_engine_location, open_for_args

    if not args.data:
        raise LuskinError("Say which data to scan: --data FILE.csv (or a Parquet file, a database, sample:compas).")
    if is_engine_location(args.data, args.table):
        return open_for_args(args, args.data)
    from luskin_core.counting.data import load_data

    return load_data(args.data)


def run(args: CommandOptions) -> int:
    """Scan and print the findings (text or JSON)."""
    from luskin_cli.common import print_json
    from luskin_core.present.report_parts import analysis

    spec, options = spec_from_args(args)
    data = _data(args)
    name = getattr(data, "name", None)   # a Source's name; a frame's "name" is a column (COMPAS has one)
    result = analysis("scan").runner()(data, spec, options, source=name if isinstance(name, str) and name
                                       else str(args.data))
    if args.json:
        print_json(result.to_dict())
        return 0
    print("\n".join(text_lines(result)))
    return 0


def text_lines(result: Any) -> list[str]:
    """The scan as a reader sees it: the headline, each finding in a sentence and in a table, what was controlled."""
    from luskin_core.analyses.scan import bar_sentence
    from luskin_core.formatting import format_p, format_percent, format_points, format_table
    from luskin_core.present.scan_plots import finding_kind

    title = (f"Subgroup scan of {result.source}: {result.n_judged:,} rows, {result.groups_scanned:,} groups of "
             f"1 to {result.spec.depth} of {', '.join(result.spec.columns)}")
    lines = [title, "", result.headline(), "", bar_sentence(result)]
    if result.findings:
        lines += [""] + [f"{'  ' if f.within else ''}- {finding_kind(f)}: {f.sentence}" for f in result.findings]
        rows = [[f.name, finding_kind(f), f"{f.n:,}", format_percent(f.rate), format_percent(f.rest_rate),
                 format_points(f.difference, signed=True), f"{format_points(f.ci_low)} to {format_points(f.ci_high)}",
                 format_p(f.p_adjusted, short=True)] for f in result.findings]
        other = "Predicted" if result.measure == "calibration" else "Everyone else"
        lines += ["", format_table(rows, ["Group", "Kind", "Rows", "Rate", other, "Gap (points)", "Simultaneous CI",
                                          "Adjusted p"])]
    if result.set_apart:
        lines += ["", "Groups of unknown category (set apart, as the audit sets them apart):"]
        lines += [f"- {f.sentence}" for f in result.set_apart]
    lines += ["", f"Controlled: the {result.error_control}."]
    if result.groups_too_small:
        lines.append(f"{result.groups_too_small:,} groups had fewer than {result.spec.min_size:,} rows inside or "
                     "outside them and were not scanned.")
    return lines
