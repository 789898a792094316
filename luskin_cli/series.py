"""``luskin audit --period COLUMN --every month|quarter|year``: the audit over time.

Registered on the audit command by :func:`add_series_options`; :func:`run_series` prints every
comparison per period, the trend per group and the alerts, or with ``--json``
:meth:`luskin_core.analyses.series.SeriesResult.to_dict` (the audit's keys plus ``series``, ``trends``,
``alerts`` and ``flagged_periods``). Periods where every group's share is 0% or 100%, or with few rows,
are set aside from the trends and alerts unless ``--keep-flagged-periods`` is given.
"""

from __future__ import annotations

import argparse
from typing import Any

from luskin_cli.common import add_option_flags
from luskin_cli.options import CommandOptions, given
from luskin_core.errors import LuskinError


def add_series_options(parser: argparse.ArgumentParser) -> None:
    """--period, --every, --period-format and --keep-flagged-periods."""
    group = parser.add_argument_group("over time")
    group.add_argument("--period", metavar="COLUMN",
                       help="a date column: audit every month (or --every quarter|year) apart, with a trend test "
                            "and alerts when a gap changes beyond chance")
    add_option_flags(group, "series", only=("every",))   # declared in luskin_core/spec/options.py
    group.add_argument("--period-format", metavar="FORMAT",
                       help="how the dates are written, e.g. %%m%%d%%Y for 01312014 (default: recognised)")
    group.add_argument("--keep-flagged-periods", action="store_true",
                       help="keep in the trends and alerts the periods where every group's share is 0%% or 100%%, "
                            "or with fewer than a third of the rows of the median period (set aside by default)")


def series_for(args: CommandOptions, data: Any, spec: Any, source: str | None) -> Any:
    """The series the options ask for; a date format Luskin could not recognise names the option that gives it."""
    from luskin_core.present.report_parts import analysis
    from luskin_core.spec.options import SeriesOptions

    options = SeriesOptions(period=given(args.period, "--period"), every=args.every, period_format=args.period_format,
                            keep_flagged=bool(args.keep_flagged_periods))
    try:
        return analysis("series").runner()(data, spec, options, source=source)
    except LuskinError as err:
        said = str(err)
        if "give their date format in strptime codes" in said:
            raise LuskinError(said.replace("give their date format in strptime codes",
                                           "give their date format with --period-format")) from None
        raise


def run_series(args: CommandOptions, data: Any, spec: Any, source: str | None) -> int:
    """Audit per period and print the series (text or JSON)."""
    from luskin_cli.common import print_json
    from luskin_core.formatting import format_table
    from luskin_core.present.series_report import series_table

    result = series_for(args, data, spec, source)
    bounds = None
    if args.bounds:  # per period, over the rows of unknown group (unknown_bounds.series_bounds)
        from luskin_core.analyses.unknown_bounds import series_bounds

        bounds = series_bounds(data, result)
    if args.json:
        document = result.to_dict()
        if bounds is not None:
            document["bounds"] = [row for period in bounds for row in period.to_dict()]
        print_json(document)
        return 0
    header, rows = series_table(result)
    if not any(row[-1] for row in rows):  # no period flagged: no empty column
        header, rows = header[:-1], [row[:-1] for row in rows]
    lines = [f"Audit over time of {result.overall.source}: {spec.outcome_text}, per {result.every} of "
             f"'{result.column}'" + (f" (dates read as {result.period_format})" if result.period_format else ""),
             "", result.headline(), "", format_table(rows, list(header)), ""]
    lines += [f"- {s}" for s in result.sentences()[1:]]
    if bounds is not None:
        from luskin_core.analyses.unknown_bounds import bound_sentences, unknown_words

        what = unknown_words(result.overall.spec)
        lines += ["", f"Over the {what}, per {result.every} (best and worst case):"]
        lines += [f"- {period.period}: {s}" for period in bounds for s in bound_sentences(period.bounds, what)]
    print("\n".join(lines))
    return 0
