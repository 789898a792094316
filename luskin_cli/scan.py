"""``luskin scan``: where does the outcome (or a model's error rate) differ from everyone else's, beyond chance?

Registered by :func:`luskin_cli.main.build_parser` through :func:`add_parsers`. Scans every group of 1..depth
of ``--columns`` (missing values as Unknown, numeric columns with many values cut into ranges) with the
family-wise error rate controlled at ``--fdr`` (which bounds the false discovery rate too) by calibrating
the largest statistic over all groups on ``--replicates`` null replicates. A Parquet file, a big CSV, a
database or Spark is counted where it lives (one aggregation); ``--json`` prints
:meth:`luskin_core.analyses.scan.ScanResult.to_dict`.
"""

from __future__ import annotations

import argparse
from typing import Any

from luskin_core.errors import LuskinError

SCAN_DESCRIPTION = (
    "Scan every combination of 1 to 3 columns and their values for a group whose rate differs from everyone "
    "else's by more than chance would explain, with the family-wise error rate over all groups scanned "
    "controlled (single-step max-T on null replicates drawn from the count table; this bounds the false "
    "discovery rate too). Reports the group that carries each gap, not its parents or refinements, with "
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
    data.add_argument("--positive", help="the outcome value that counts as positive, e.g. Y")
    data.add_argument("--seed", type=int, default=0, help="random seed of the replicates (default 0)")
    data.add_argument("--json", action="store_true", help="print one JSON document instead of text")
    add_engine_options(parser)
    group = parser.add_argument_group("the scan")
    group.add_argument("--columns", action="append", default=None, metavar="COLS",
                       help="comma-separated columns to scan, e.g. sex,race,age,borough (repeatable)")
    group.add_argument("--depth", type=int, default=None,
                       help="how many columns a group combines at most (1-3 usual; default 3)")
    group.add_argument("--min-size", type=int, default=None, metavar="N",
                       help="rows a group needs, inside it and outside it (default 30)")
    group.add_argument("--fdr", "--level", type=float, default=0.05, dest="level", metavar="Q",
                       help="the error level: the family-wise error rate over all groups is controlled at Q, "
                            "which also bounds the false discovery rate at Q (default 0.05)")
    group.add_argument("--replicates", type=int, default=None, metavar="R",
                       help="null replicates that calibrate the search (default 999)")
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
    model.add_argument("--measure", choices=["rate", "fpr", "fnr", "error", "calibration"], default=None,
                       help="what is compared: rate (the share with the positive outcome; with --predictions, "
                            "the share predicted positive), fpr / fnr / error (with --predictions; default "
                            "error), calibration (the outcome against --probability)")
    model.add_argument("--probability", metavar="COL",
                       help="a column of a model's predicted probabilities of the positive outcome: scan where "
                            "the model over- or under-predicts (calibration)")
    parser.set_defaults(run=run)


def spec_from_args(args: argparse.Namespace) -> Any:
    """The :class:`~luskin_core.analyses.scan.ScanSpec` the options describe."""
    from luskin_cli.common import _bins
    from luskin_core.analyses.scan import DEFAULT_MIN_SIZE, DEFAULT_REPLICATES, ScanSpec

    if not args.outcome:
        raise LuskinError("Say which column is the outcome: --outcome COL (and --positive VALUE).")
    if args.positive is None:
        raise LuskinError("Say which value of the outcome counts as positive: --positive VALUE.")
    columns = tuple(part.strip() for item in (args.columns or []) for part in item.split(",") if part.strip())
    if not columns:
        raise LuskinError("Say which columns to scan: --columns a,b,c.")
    measure = args.measure or ("calibration" if args.probability else "error" if args.predictions else "rate")
    bins = tuple((name, tuple(cuts)) for name, cuts in _bins(args.bins or []).items())
    return ScanSpec(args.outcome.strip(), _positive(args.positive), columns, depth=args.depth or 0,
                    min_size=args.min_size or DEFAULT_MIN_SIZE, level=args.level,
                    replicates=args.replicates or DEFAULT_REPLICATES, seed=args.seed, measure=measure,
                    prediction=args.predictions, prediction_cutoff=args.prediction_cutoff,
                    probability=args.probability, n_bins=args.n_bins, bins=bins)


def _positive(text: str) -> Any:
    return text.strip()


def _data(args: argparse.Namespace) -> Any:
    """A file or database an engine counts (Parquet, a big CSV, PostgreSQL, Spark), or the rows of a CSV or sample."""
    from luskin_cli.engine import is_engine_location, open_for_args

    if not args.data:
        raise LuskinError("Say which data to scan: --data FILE.csv (or a Parquet file, a database, sample:compas).")
    if is_engine_location(args.data, getattr(args, "table", None)):
        return open_for_args(args, args.data)
    from luskin_core.counting.data import load_data

    return load_data(args.data)


def run(args: argparse.Namespace) -> int:
    """Scan and print the findings (text or JSON)."""
    from luskin_cli.common import print_json
    from luskin_core.analyses.scan import scan

    spec = spec_from_args(args)
    data = _data(args)
    result = scan(data, spec, source=getattr(data, "name", None) or str(args.data))
    if args.json:
        print_json(result.to_dict())
        return 0
    print("\n".join(text_lines(result)))
    return 0


def text_lines(result: Any) -> list[str]:
    """The scan as a reader sees it: the headline, each finding in a sentence and in a table, what was controlled."""
    from luskin_core.formatting import format_p, format_percent, format_points, format_table

    title = (f"Subgroup scan of {result.source}: {result.n_judged:,} rows, {result.groups_scanned:,} groups of "
             f"1 to {result.spec.depth} of {', '.join(result.spec.columns)}")
    lines = [title, "", result.headline()]
    if result.findings:
        lines += [""] + [f"- {f.sentence}" for f in result.findings]
        rows = [[f.name, f"{f.n:,}", format_percent(f.rate), format_percent(f.rest_rate),
                 format_points(f.difference, signed=True), f"{format_points(f.ci_low)} to {format_points(f.ci_high)}",
                 format_p(f.p_adjusted, short=True)] for f in result.findings]
        other = "Predicted" if result.measure == "calibration" else "Everyone else"
        lines += ["", format_table(rows, ["Group", "Rows", "Rate", other, "Gap (points)", "Simultaneous CI",
                                          "Adjusted p"])]
    lines += ["", f"Controlled: the {result.error_control}."]
    if result.groups_too_small:
        lines.append(f"{result.groups_too_small:,} groups had fewer than {result.spec.min_size:,} rows inside or "
                     "outside them and were not scanned.")
    return lines
