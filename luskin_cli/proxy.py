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
    """Audit the outcome across estimated groups: weighted and threshold comparisons, bounds, caveats."""
    import numpy as np

    from luskin_cli.common import option_values
    from luskin_core.analyses.proxy import add_probabilities
    from luskin_core.analyses.proxy_audit import DEFAULT_THRESHOLD, proxy_audit
    from luskin_core.spec.audit_spec import DEFAULT_RATIO_THRESHOLD
    from luskin_core.spec.validation import outcome_mask

    roles = parse_proxy_spec(given(args.proxy, "--proxy"))
    if args.protected or args.groups:
        raise LuskinError("--proxy audits the estimated race groups: leave out --protected and --groups.")
    if not args.data or not args.outcome or args.positive is None:
        raise LuskinError("--proxy needs --data, --outcome and --positive.")
    threshold = args.proxy_threshold if args.proxy_threshold is not None else DEFAULT_THRESHOLD
    if not 0 < threshold <= 1:
        raise LuskinError("--proxy-threshold is a probability between 0 and 1, e.g. 0.8.")
    settings = {"tolerance": args.tolerance if args.tolerance is not None else 0.05,
                "min_group_size": args.min_group_size or 30, "correction": args.correction or "holm",
                "reference": args.reference, "threshold": threshold,
                "metric": args.metric or "difference",
                "ratio_threshold": args.ratio_threshold if args.ratio_threshold is not None
                else DEFAULT_RATIO_THRESHOLD,
                "adverse": bool(args.adverse),
                **option_values(args, "proxy")}
    if not 0 < settings["ratio_threshold"] <= 1:
        raise LuskinError("--ratio-threshold is a share between 0 and 1, e.g. 0.8.")
    level = "zcta" if "zcta" in roles else "tract"
    from luskin_cli.engine import is_engine_location

    if is_engine_location(str(args.data), args.table) and not str(args.data).lower().endswith(
            ".csv"):
        if "first_name" in roles:
            raise LuskinError("First names (BIFSG) are audited in memory: give --data a CSV file, or leave out "
                              "first_name= to audit with BISG where the data lives.")
        return _engine_audit(args, roles, level, settings)
    frame = _read(given(args.data, "--data"))
    if args.outcome not in frame.columns:
        raise LuskinError(f"There is no outcome column '{args.outcome}' in the data.")
    with_p, result = add_probabilities(frame, surname=roles["surname"], geography=roles[level], level=level,
                                       first_name=roles.get("first_name"))
    cells = None
    if args.stratify:
        missing = [c for c in args.stratify if c not in frame.columns]
        if missing:
            raise LuskinError(f"There is no column '{missing[0]}' to stratify by.")
        cells = frame[args.stratify].astype("string").fillna("(missing)").agg(", ".join, axis=1)
        cells = (", ".join(args.stratify) + " = ") + cells
    y = np.asarray(outcome_mask(frame[args.outcome], args.positive), dtype=float).copy()
    y[frame[args.outcome].isna().to_numpy()] = float("nan")  # a missing outcome is left out, as the engines do
    proxy = result.to_dict()
    lines = result.sentences()
    check_column = args.proxy_check
    if check_column:
        if check_column not in frame.columns:
            raise LuskinError(f"There is no column '{check_column}' with recorded race to check against.")
        checks = _recorded_check(with_p, y, frame[check_column])
        proxy["recorded_race_check"] = checks
        lines = [*lines, *checks]
    audit = proxy_audit(with_p, y, decision=f"{args.outcome} is {args.positive}", cells=cells,
                        proxy=proxy, places=frame[roles[level]], **settings)
    _print_audit(args, audit, proxy, lines)
    return 0


def _engine_audit(args: CommandOptions, roles: dict[str, str], level: str, settings: dict[str, Any]) -> int:
    """A Parquet file, a database table or Spark audited where the data lives: only sums come back.

    A Parquet file without strata is streamed with Arrow (names looked up by dictionary index,
    benchmarks/bench_proxy.py); otherwise the source's engine (DuckDB, PostgreSQL, Spark) joins the rows with
    the looked-up surnames and places (luskin_core.analyses.proxy_engine.source_proxy_sums).
    """
    from luskin_cli.engine import open_for_args
    from luskin_core.analyses.proxy_audit import audit_sums
    from luskin_core.analyses.proxy_engine import parquet_proxy_sums, source_proxy_sums

    plain_parquet = str(args.data).lower().endswith(".parquet") and not args.table
    if plain_parquet and not args.stratify:
        import pyarrow.parquet as pq

        try:
            names = pq.ParquetFile(str(args.data)).schema_arrow.names
        except (OSError, ValueError) as err:
            raise LuskinError(f"The Parquet file '{args.data}' could not be read ({err}).") from None
        for column in [roles["surname"], roles[level], args.outcome]:
            if column not in names:
                raise LuskinError(f"There is no column '{column}' in the data.")
        sums, counts = parquet_proxy_sums(str(args.data), surname=roles["surname"], geography=roles[level],
                                          outcome=given(args.outcome, "--outcome"), positive=args.positive, level=level,
                                          threshold=settings["threshold"])
        engine = "arrow"
    else:
        source = open_for_args(args, str(args.data))
        sums, counts = source_proxy_sums(source, surname=roles["surname"], geography=roles[level],
                                         outcome=given(args.outcome, "--outcome"), positive=args.positive, level=level,
                                         cells=list(args.stratify or []), threshold=settings["threshold"])
        engine = source.kind
    total = sum(counts.values())
    proxy = {"n_rows": total, "geography": level, "first_names": False, "methods": counts, "engine": engine}
    audit = audit_sums(sums, decision=f"{args.outcome} is {args.positive}", n_rows=total, proxy=proxy, **settings)
    lines = [f"{count:,} rows used {method}." for method, count in counts.items()]
    _print_audit(args, audit, proxy, lines)
    return 0


def _recorded_check(with_p: Any, y: Any, recorded: Any) -> list[str]:
    """Sentences: the outcome-aware estimate against the recorded race on the rows that have one."""
    from luskin_core.analyses.birdie import check_against_recorded
    from luskin_core.analyses.proxy import PROB_COLUMNS, RACE_LABELS, RACES

    names = {r: i for i, r in enumerate(RACES)} | {label.lower(): i for i, label in
                                                   enumerate(RACE_LABELS[r] for r in RACES)}
    codes = recorded.astype("string").str.strip().str.lower().map(names).fillna(-1).astype(int).to_numpy()
    checks = check_against_recorded(with_p[list(PROB_COLUMNS)].to_numpy(float), y, codes,
                                    tuple(RACE_LABELS[r] for r in RACES))
    if not checks:
        return ["Too few rows have a recorded race (at least 30 in a group) to check the outcome-aware estimate."]
    return [c.sentence() for c in checks]


def _print_audit(args: CommandOptions, audit: Any, proxy: dict[str, Any], lines: list[str]) -> None:
    from luskin_cli.common import print_json
    from luskin_core.analyses.proxy_audit import format_proxy_audit

    if args.json:
        print_json(audit.to_dict())
    else:
        print("\n".join(lines))
        print()
        print(format_proxy_audit(audit))
