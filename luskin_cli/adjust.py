"""``luskin adjust``: each group's gap adjusted for many controls at once, and how much the controls explain.

Registered by :func:`luskin_cli.main.build_parser` through :func:`add_parsers`. The data, group
and verdict options are ``luskin audit``'s; ``--controls`` names the columns held equal (text and number codes
with few values as categories, as the audit reads them; numbers with many values linear), ``--categorical``
reads a numeric column as categories, ``--as-numbers`` fits a code as a straight line, ``--control-bins age=5`` cuts a numeric control into quantile bins, ``--control-curves
age=4`` fits one as a curve (a restricted cubic spline with 4 knots), ``--cluster`` clusters the
standard errors. Without ``--positive`` a numeric outcome is a score read by the audit's one rule (strictly above
its median, or at or above ``--score-cutoff``) and modelled as yes/no, its gaps in points of that share; ``--amount
COL`` models the number itself (linear). ``--json`` prints
:meth:`luskin_core.analyses.adjust.AdjustResult.to_dict` (its ``adjusted`` list holds one object per
non-reference group).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from luskin_cli.options import CommandOptions
from luskin_core.errors import LuskinError

if TYPE_CHECKING:
    from luskin_core.analyses.adjust import AdjustResult

ADJUST_DESCRIPTION = (
    "Compare each group with the reference after holding many controls equal: a logistic model for a yes/no "
    "outcome or a score past its cut (a linear one for an amount) with the group as a factor, read as the average "
    "marginal effect in "
    "points with its 95% interval (delta method, or clustered), p-value, adjusted p-value and odds ratio; the "
    "raw gap split into the part the controls explain and the part they do not (Oaxaca-Blinder, or Yun's "
    "decomposition for yes/no); a verdict in the audit's four states, and warnings in words."
)


def add_adjust_options(parser: argparse.ArgumentParser) -> None:
    """--controls, --categorical, --cluster (shared by ``luskin adjust`` and ``luskin report``)."""
    group = parser.add_argument_group("controls (regression adjustment)")
    group.add_argument("--controls", action="append", default=None, metavar="COLS",
                       help="comma-separated columns held equal, e.g. dti,ltv,income (numbers with many values "
                            "linear; text, and number codes with few values, categories, as the audit reads them); "
                            "repeatable")
    group.add_argument("--categorical", action="append", default=None, metavar="COLS",
                       help="comma-separated numeric columns to treat as categories (added to the controls)")
    group.add_argument("--as-numbers", action="append", default=None, metavar="COLS", dest="as_numbers",
                       help="comma-separated number codes to fit as straight lines, not as categories (added to "
                            "the controls)")
    group.add_argument("--control-bins", action="append", default=None, metavar="COL=N", dest="control_bins",
                       help="cut a numeric control into N bins of equal shares of rows, each its own effect (e.g. "
                            "age=5); comma-separated or repeatable; the column is added to the controls")
    group.add_argument("--control-curves", action="append", default=None, metavar="COL=K", dest="control_curves",
                       help="fit a numeric control as a curve: a restricted cubic spline with K knots (3 to 7) at "
                            "Harrell's quantiles, straight beyond the outer ones (e.g. age=4); comma-separated or "
                            "repeatable; the column is added to the controls")
    group.add_argument("--cluster", default=None, metavar="COL",
                       help="cluster the standard errors by this column (e.g. branch, precinct, office)")
    from luskin_cli.common import add_option_flags

    add_option_flags(group, "adjusted", only=("log",))   # declared in luskin_core/spec/options.py


def add_parsers(subparsers: Any) -> None:
    """Register the ``adjust`` subcommand."""
    from luskin_cli.common import add_audit_options, add_data_options

    parser = subparsers.add_parser("adjust", help="gaps adjusted for many controls (regression, decomposition)",
                                   description=ADJUST_DESCRIPTION)
    add_data_options(parser)
    add_audit_options(parser)
    add_adjust_options(parser)
    parser.set_defaults(run=run)


def _names(items: list[str] | None) -> tuple[str, ...]:
    return tuple(part.strip() for item in items or [] for part in item.split(",") if part.strip())


def _bins(items: list[str] | None, option: str = "--control-bins", what: str = "bins") -> dict[str, int]:
    """``--control-bins age=5,income=4`` as {column: bins} (``--bins`` is the audit's cut points for groups);
    ``--control-curves age=4`` alike, as {column: knots}."""
    out: dict[str, int] = {}
    for part in _names(items):
        column, sep, count = part.rpartition("=")
        if not sep or not column.strip():
            raise LuskinError(f"{option} takes COLUMN=NUMBER (e.g. age=5), not '{part}'.")
        try:
            out[column.strip()] = int(count)
        except ValueError:
            raise LuskinError(f"{option} takes a whole number of {what} after '=' (e.g. age=5), not '{count}'.") \
                from None
    return out


def _curves(args: CommandOptions) -> dict[str, int]:
    return _bins(args.control_curves, "--control-curves", "knots")


def adjust_from_args(args: CommandOptions) -> AdjustResult | None:
    """The adjusted gaps the options ask for (None without --controls/--categorical/--as-numbers)."""
    controls, categorical = _names(args.controls), _names(args.categorical)
    if not controls and not categorical and not _names(args.as_numbers) and not _bins(args.control_bins) and \
            not _curves(args):
        if args.cluster:
            raise LuskinError("--cluster clusters the adjusted gaps' standard errors: add --controls.")
        return None
    if args.positive is None and not args.score and \
            not args.amount and \
            args.score_cutoff is None and not args.preset and \
            not args.config:
        args.score = True  # a number without a positive value: a score, past its median (the audit's one rule)
    from luskin_cli.common import resolve

    located, spec, _ = resolve(args, engine=True)
    return adjust_located(args, located, spec)


def adjust_located(args: CommandOptions, located: Any, spec: Any) -> AdjustResult | None:
    """The adjusted gaps on data already resolved (a frame or an engine source); None without controls."""
    from luskin_core.present.report_parts import analysis
    from luskin_core.spec.options import AdjustOptions

    options = AdjustOptions(controls=_names(args.controls), categorical=_names(args.categorical),
                            as_numbers=_names(args.as_numbers),
                            bins=tuple(_bins(args.control_bins).items()), splines=tuple(_curves(args).items()),
                            cluster=args.cluster,
                            log=bool(args.log))
    if not options.any_control:
        if args.cluster:
            raise LuskinError("--cluster clusters the adjusted gaps' standard errors: add --controls.")
        return None
    if args.log and spec.outcome_type != "amount":
        raise LuskinError("--log models the logarithm of an amount: give the amount with --amount COLUMN.")
    result: AdjustResult = analysis("adjusted").runner()(located, spec, options)
    return result


def run(args: CommandOptions) -> int:
    """Fit and print; returns the exit status."""
    from luskin_cli.common import print_json

    result = adjust_from_args(args)
    if result is None:
        raise LuskinError("Say which columns to hold equal: --controls age,hours (and --categorical for code "
                          "columns).")
    if args.json:
        print_json(result.to_dict())
    else:
        print(format_adjust(result))
    return 0


def format_adjust(result: AdjustResult) -> str:
    """The adjusted gaps as plain text: a table in points, then the sentences."""
    from luskin_core.analyses.adjust_model import number_format
    from luskin_core.formatting import RATIO, format_p, format_percent, format_points, format_table

    linear = result.model == "linear"
    unit = (" (log points)" if result.scale == "log" else "") if linear else " (points)"
    amount = number_format(result)   # the outcome's units, thousands separated, never scientific notation

    def num(x: float | None) -> str:
        return amount(x) if linear else format_points(x, signed=True)

    rows = []
    for g in result.gaps:
        odds = "" if g.odds_ratio is None else RATIO.text(g.odds_ratio)
        rows.append([g.group, num(g.raw_difference), num(g.adjusted_difference),
                     f"{num(g.adjusted_ci_low)} to {num(g.adjusted_ci_high)}", format_p(g.adjusted_p_value, short=True),
                     format_p(g.adjusted_p_corrected, short=True), odds, num(g.explained), num(g.unexplained),
                     *([format_percent(g.adjusted_gap_share)] if result.scale else []),
                     g.verdict + (" (flagged)" if g.flagged else "")])
    header = ["group", "raw gap" + unit, "adjusted", "95% CI", "p", "p adj.", "odds ratio", "explained", "unexplained",
              *(["gap share"] if result.scale else []), "verdict"]
    title = (f"Adjusted gaps against {result.reference}, {result.model} model of {result.outcome_text}, holding "
             f"{', '.join(result.controls)} equal:")
    lines = [title, reading_lines(result), "", format_table(rows, header), ""]
    lines += result.sentences()
    if result.score_rule:
        lines.append(f"To model the score's mean instead (gaps in its own units): --amount {result.spec.outcome}.")
    lines += ["", f"Decomposition: {result.decomposition}"]
    return "\n".join(lines)


def reading_lines(result: AdjustResult) -> str:
    """Which controls were read as categories and which as numbers, and the options that change it."""
    change = []
    if any(c in result.codes for c in result.categorical):
        change.append("--as-numbers COLUMN fits a number code as a straight line")
    if result.numbers:
        change.append("--categorical COLUMN reads a number as categories")
    return result.reading + (f" To change it: {'; '.join(change)}." if change else "")
