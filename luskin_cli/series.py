"""``luskin audit --period COLUMN --every month|quarter|year``: the audit over time.

Registered on the audit command by :func:`add_series_options`; :func:`run_series` prints every
comparison per period, the trend per group and the alerts, or with ``--json``
:meth:`luskin_core.analyses.series.SeriesResult.to_dict` (the audit's keys plus ``series``, ``trends``
and ``alerts``).
"""

from __future__ import annotations

import argparse
from typing import Any

from luskin_core.formatting import format_number, format_p


def add_series_options(parser: argparse.ArgumentParser) -> None:
    """--period, --every and --period-format."""
    group = parser.add_argument_group("over time")
    group.add_argument("--period", metavar="COLUMN",
                       help="a date column: audit every month (or --every quarter|year) apart, with a trend test "
                            "and alerts when a gap changes beyond chance")
    group.add_argument("--every", choices=["month", "quarter", "year"], default="month",
                       help="the length of a period (default month)")
    group.add_argument("--period-format", metavar="FORMAT",
                       help="how the dates are written, e.g. %%m%%d%%Y for 01312014 (default: recognised)")


def run_series(args: argparse.Namespace, data: Any, spec: Any, source: str | None) -> int:
    """Audit per period and print the series (text or JSON)."""
    from luskin_cli.common import print_json
    from luskin_core.analyses.series import audit_series
    from luskin_core.formatting import format_table

    result = audit_series(data, spec, args.period, args.every, args.period_format, source=source)
    if args.json:
        print_json(result.to_dict())
        return 0
    rows = []
    for label, period in zip(result.periods, result.results):
        for c in period.judged:
            rows.append([label, c.cell or "all rows", c.group, f"{c.n:,}", format_number(c.rate),
                         format_number(c.difference),
                         f"[{format_number(c.difference_ci_low)}, {format_number(c.difference_ci_high)}]",
                         format_number(c.impact_ratio, 2), format_p(c.p_adjusted, short=True), c.verdict])
    lines = [f"Audit over time of {result.overall.source}: {spec.outcome_text}, per {result.every} of "
             f"'{result.column}'" + (f" (dates read as {result.period_format})" if result.period_format else ""),
             "", result.headline(), "",
             format_table(rows, ["period", "cell", "group", "n", "share", "difference", "95% CI", "ratio", "p adj.",
                                 "verdict"]), ""]
    lines += [f"- {s}" for s in result.sentences()[1:]]
    print("\n".join(lines))
    return 0
