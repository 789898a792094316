"""``luskin proxy`` (BISG/BIFSG probabilities into a CSV) and ``luskin audit --proxy`` (audit estimated groups).

Registered by :func:`luskin_cli.main.build_parser` through :func:`add_parsers`; ``--proxy`` is added to the
audit parser by :func:`add_proxy_option` and dispatched from :func:`luskin_cli.audit.run_audit`.
"""

from __future__ import annotations

import argparse
from typing import Any

from luskin_cli.options import CommandOptions, given
from luskin_core.errors import LuskinError

PROXY_DESCRIPTION = (
    "Estimate each row's probabilities of the six Census race and ethnicity categories (Hispanic, White, Black, "
    "Asian/Pacific Islander, American Indian/Alaska Native, multiracial) from its surname and place (BISG), and "
    "first name where given (BIFSG), with the Census 2010 tables; write the rows with p_hispanic, p_white, "
    "p_black, p_api, p_aian and p_multiracial added. Rows whose name or place is not in the tables fall back to "
    "what is known (counted on the screen); a row with neither surname nor place gets empty probabilities.")


def add_parsers(subparsers: Any) -> None:
    """Register the ``proxy`` subcommand."""
    parser = subparsers.add_parser("proxy", help="estimate race and ethnicity from surnames and places (BISG)",
                                   description=PROXY_DESCRIPTION)
    parser.add_argument("--data", required=True, help="a CSV or Parquet file")
    parser.add_argument("--surname", required=True, metavar="COL", help="the surname column")
    parser.add_argument("--first-name", metavar="COL", help="the first-name column (BIFSG)")
    place = parser.add_mutually_exclusive_group(required=True)
    place.add_argument("--zcta", metavar="COL", help="the ZIP code / ZCTA column")
    place.add_argument("--tract", metavar="COL", help="the census tract column (11-digit FIPS)")
    parser.add_argument("--out", required=True, metavar="OUT.csv", help="where to write the rows with probabilities")
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")
    parser.set_defaults(run=run_proxy)


def add_proxy_option(parser: argparse.ArgumentParser) -> None:
    """``luskin audit --proxy surname=COL,zcta=COL[,first_name=COL]``."""
    group = parser.add_argument_group("estimated race (no race column)")
    group.add_argument("--proxy", metavar="SPEC",
                       help="audit race and ethnicity estimated from names and places: surname=COL,zcta=COL "
                            "(or tract=COL)[,first_name=COL]; prints weighted and threshold comparisons and "
                            "bounds on each gap")
    group.add_argument("--proxy-check", metavar="COL",
                       help="a column with race recorded for some rows (Hispanic, White, Black, Asian/Pacific "
                            "Islander, American Indian/Alaska Native, Multiracial; other values and blanks are "
                            "rows without a record): the outcome-aware estimate is checked against it")
    from luskin_cli.common import add_option_flags

    add_option_flags(group, "proxy")  # --proxy-model, from its declaration (luskin_core/spec/options.py)
    group.add_argument("--proxy-threshold", type=float, default=None, metavar="P",
                       help="the threshold method assigns a row its most likely group when that probability is "
                            "at least P (default 0.8)")


def parse_proxy_spec(text: str) -> dict[str, str]:
    """``surname=COL,zcta=COL[,first_name=COL]`` as a dict; a mistake is one sentence."""
    roles: dict[str, str] = {}
    for item in text.split(","):
        key, sep, value = item.partition("=")
        key = key.strip().lower().replace("-", "_")
        if not sep or not value.strip() or key not in ("surname", "zcta", "zip", "tract", "first_name"):
            raise LuskinError(f"Write --proxy as surname=COL,zcta=COL (or tract=COL), optionally ,first_name=COL; "
                              f"'{item.strip()}' is not one of these.")
        roles["zcta" if key == "zip" else key] = value.strip()
    if "surname" not in roles or ("zcta" in roles) == ("tract" in roles):
        raise LuskinError("--proxy needs surname=COL and one place, zcta=COL or tract=COL.")
    return roles


def _read(path: str) -> Any:
    import pandas as pd

    from luskin_core.counting.data import load_data

    if str(path).lower().endswith(".parquet"):
        try:
            return pd.read_parquet(path)
        except (OSError, ValueError) as err:
            raise LuskinError(f"The Parquet file '{path}' could not be read ({err}).") from None
    return load_data(path)


def _print_counts(result: Any) -> None:
    from luskin_core.formatting import format_table

    rows = [[method, f"{count:,}"] for method, count in result.fallback_counts().items()]
    print("\n".join(result.sentences()))
    print(format_table(rows, ["how the row was estimated", "rows"]))


def run_proxy(args: CommandOptions) -> int:
    """Write the rows with their six probabilities and print how many rows fell back."""
    from luskin_cli.common import print_json
    from luskin_core.analyses.proxy import add_probabilities
    from luskin_core.export import write_csv

    frame = _read(given(args.data, "--data"))
    level, column = ("zcta", args.zcta) if args.zcta else ("tract", args.tract)
    out, result = add_probabilities(frame, surname=given(args.surname, "--surname"),
                                    geography=given(column, "--zcta or --tract"), level=level,
                                    first_name=args.first_name)
    try:
        write_csv(out, args.out)
    except OSError as err:
        raise LuskinError(f"Could not write '{args.out}': {err.strerror or err}.") from None
    if args.json:
        print_json({**result.to_dict(), "out": args.out})
    else:
        _print_counts(result)
        print(f"Wrote {len(out):,} rows to {args.out}.")
    return 0


def run_proxy_audit(args: CommandOptions) -> int:
    """Audit the outcome across estimated groups: weighted and threshold comparisons, bounds, caveats.

    The specification (race estimated from surname and place, the outcome, the judgement's settings) and the
    proxy audit's options are made from the options given, and the analyses' table's line runs it
    (``analysis("proxy").runner()(data, spec, options)``): rows in memory for a CSV file, a Parquet file without
    strata streamed with Arrow (names looked up by dictionary index, benchmarks/bench_proxy.py), otherwise the
    source's engine (DuckDB, PostgreSQL, Spark) joins the rows with the looked-up surnames and places
    (luskin_core.analyses.proxy_engine.source_proxy_sums): only sums come back.
    """
    from luskin_cli.common import option_values
    from luskin_cli.engine import is_engine_location
    from luskin_core.analyses.proxy_audit import DEFAULT_THRESHOLD
    from luskin_core.analyses.proxy_run import proxy_spec
    from luskin_core.present.report_parts import analysis
    from luskin_core.spec.options import ProxyOptions

    roles = parse_proxy_spec(given(args.proxy, "--proxy"))
    if args.protected or args.groups:
        raise LuskinError("--proxy audits the estimated race groups: leave out --protected and --groups.")
    if not args.data or not args.outcome or args.positive is None:
        raise LuskinError("--proxy needs --data, --outcome and --positive.")
    threshold = args.proxy_threshold if args.proxy_threshold is not None else DEFAULT_THRESHOLD
    if not 0 < threshold <= 1:
        raise LuskinError("--proxy-threshold is a probability between 0 and 1, e.g. 0.8.")
    if args.ratio_threshold is not None and not 0 < args.ratio_threshold <= 1:
        raise LuskinError("--ratio-threshold is a share between 0 and 1, e.g. 0.8.")
    judged = {"tolerance": args.tolerance, "min_group_size": args.min_group_size or None,
              "correction": args.correction, "reference": args.reference, "metric": args.metric,
              "ratio_threshold": args.ratio_threshold}
    spec = proxy_spec(args.outcome, args.positive, outcome_is="adverse" if args.adverse else "favourable",
                      strata=tuple(args.stratify or ()), **{k: v for k, v in judged.items() if v is not None})
    level = "zcta" if "zcta" in roles else "tract"
    options = ProxyOptions(surname=roles["surname"], place=roles[level], level=level,
                           first_name=roles.get("first_name"), threshold=threshold, recorded=args.proxy_check,
                           **option_values(args, "proxy"))
    data: Any
    if is_engine_location(str(args.data), args.table) and not str(args.data).lower().endswith(".csv"):
        if "first_name" in roles:
            raise LuskinError("First names (BIFSG) are audited in memory: give --data a CSV file, or leave out "
                              "first_name= to audit with BISG where the data lives.")
        if args.proxy_check:   # it was dropped without a word
            raise LuskinError("--proxy-check compares the estimates with recorded race in memory: give --data a CSV "
                              "file, or leave out --proxy-check to audit where the data lives.")
        plain_parquet = str(args.data).lower().endswith(".parquet") and not args.table
        if plain_parquet and not args.stratify:
            data = str(args.data)   # streamed with Arrow
        else:
            from luskin_cli.engine import open_for_args

            data = open_for_args(args, str(args.data))
    else:
        data = _read(given(args.data, "--data"))
    audit = analysis("proxy").runner()(data, spec, options)
    _print_audit(args, audit, audit.proxy, audit.estimation_sentences())
    return 0


def _print_audit(args: CommandOptions, audit: Any, proxy: dict[str, Any], lines: list[str]) -> None:
    from luskin_cli.common import print_json
    from luskin_core.analyses.proxy_audit import format_proxy_audit

    if args.json:
        print_json(audit.to_dict())
    else:
        print("\n".join(lines))
        print()
        print(format_proxy_audit(audit))
