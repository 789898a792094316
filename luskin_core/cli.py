"""The ``luskin`` command line: audit, retrain, thresholds, equalize.

Every subcommand reads the same data and specification options; a user's mistake prints one
plain sentence on stderr and exits with status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from . import __version__
from .audit import AuditResult, audit
from .conditions import conjunction_mask, parse_condition
from .models import choose_features
from .data import PRESETS, get_preset, load_data
from .errors import LuskinError
from .spec import DEFAULT_TOLERANCE, AuditSpec, resolve_column

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage mistakes as a LuskinError (one message, exit 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise LuskinError(f"{message}. Run '{self.prog} --help' for the options.")


def add_data_options(parser: argparse.ArgumentParser, *, outcome: bool = True) -> None:
    """The options every subcommand shares: where the data is and what to audit."""
    data = parser.add_argument_group("data and specification")
    data.add_argument("--data", help="a CSV file, or sample:adult / sample:compas / sample:sqf")
    data.add_argument("--preset", choices=sorted(PRESETS),
                      help="the paper's setup for a sample (data, outcome, group, filter, features); "
                           "other options override it")
    data.add_argument("--config", help="a saved specification (JSON) to start from")
    if outcome:
        data.add_argument("--outcome", help="the outcome column, e.g. income")
        data.add_argument("--positive", help="the outcome value that counts as positive, e.g. '>50K'")
    data.add_argument("--protected", help="the protected condition, e.g. 'race == White'")
    data.add_argument("--group-label", help="a name for the protected group (default from the condition)")
    data.add_argument("--other-label", help="a name for the other class")
    data.add_argument("--filter", action="append", default=None, metavar="COND",
                      help="a filter condition; repeat to join several with AND")
    data.add_argument("--no-filter", action="store_true", help="drop the preset's filter")
    data.add_argument("--population", action="append", default=None, metavar="COND",
                      help="keep only rows where COND holds (repeatable)")
    data.add_argument("--tolerance", type=float, default=None,
                      help=f"largest gap counted as fair (default {DEFAULT_TOLERANCE})")
    data.add_argument("--features", default=None, help="comma-separated columns the models use")
    data.add_argument("--exclude", default=None, help="comma-separated columns the models must not use")
    data.add_argument("--seed", type=int, default=0, help="random seed for splits and models")
    data.add_argument("--json", action="store_true", help="print one JSON document instead of tables")


def _split_names(text: str | None) -> tuple[str, ...]:
    return tuple(part.strip() for part in (text or "").split(",") if part.strip())


def resolve(args: argparse.Namespace) -> tuple[pd.DataFrame, AuditSpec, tuple[str, ...] | None]:
    """Load the data and build the specification from a preset, a saved config and options.

    Returns the frame already restricted to the population, the specification, and the
    model features (None means every column but the outcome).
    """
    preset = get_preset(args.preset) if args.preset else None
    base: AuditSpec | None = preset.spec if preset else None
    if getattr(args, "config", None):
        try:
            with open(args.config, encoding="utf-8") as handle:
                text = handle.read()
        except OSError as err:
            raise LuskinError(f"Cannot read the configuration file '{args.config}': {err.strerror}.") from None
        try:
            loaded = json.loads(text)
        except json.JSONDecodeError as err:
            raise LuskinError(f"The configuration file '{args.config}' is not valid JSON ({err.msg}).") from None
        # A saved dashboard configuration keeps the specification under "spec".
        base = AuditSpec.from_dict(loaded.get("spec", loaded) if isinstance(loaded, dict) else loaded)
    source = args.data or (f"sample:{preset.name}" if preset else None)
    if not source:
        raise LuskinError("Say which data to use: --data FILE.csv, --data sample:adult, or --preset adult.")
    frame = load_data(source)

    fields: dict[str, Any] = base.to_dict() if base else {}
    if getattr(args, "outcome", None):
        fields["outcome"] = args.outcome
    if getattr(args, "positive", None) is not None:
        fields["positive"] = args.positive
    if args.protected:
        fields["protected"] = parse_condition(args.protected).to_dict()
        if base is None or args.protected != str(base.protected):
            fields["group_label"], fields["other_label"] = None, None
    if args.group_label:
        fields["group_label"] = args.group_label
    if args.other_label:
        fields["other_label"] = args.other_label
    if args.filter is not None or args.no_filter:
        fields["filters"] = [parse_condition(c).to_dict() for c in (args.filter or [])]
        fields["filter_label"], fields["not_filter_label"] = None, None
    if args.population is not None:
        fields["population"] = [parse_condition(c).to_dict() for c in args.population]
    if args.tolerance is not None:
        fields["tolerance"] = args.tolerance
    missing = [name for name in ("outcome", "positive", "protected") if fields.get(name) in (None, "")]
    if missing:
        raise LuskinError(
            "Missing " + ", ".join(f"--{m}" for m in missing)
            + " (or use --preset adult|compas|sqf for the paper's setup)."
        )
    spec = AuditSpec.from_dict(fields)
    if spec.population:
        keep = conjunction_mask(spec.population, frame)
        if not keep.any():
            raise LuskinError("No row matches the population restriction.")
        frame = frame.loc[keep].reset_index(drop=True)
    features = _split_names(args.features) or (preset.features if preset and args.data is None else None)
    exclude = _split_names(args.exclude)
    if exclude:
        features = choose_features(frame, spec.outcome, features, exclude).columns
    return frame, spec, features


# ----------------------------------------------------------------------------------------
# Printing
# ----------------------------------------------------------------------------------------
def _fmt(x: float | None, digits: int = 3) -> str:
    return "n/a" if x is None or (isinstance(x, float) and not np.isfinite(x)) else f"{x:.{digits}f}"


def format_table(rows: Sequence[Sequence[Any]], header: Sequence[str]) -> str:
    """A plain aligned text table."""
    cells = [[str(h) for h in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def format_audit(result: AuditResult) -> str:
    """The audit as a table and one sentence per filter cell."""
    rows = []
    for c in result.cells:
        g = result.gap(c.filter_holds)
        rows.append([c.cell, c.label, f"{c.n:,}", f"{c.positives:,}", _fmt(c.ratio),
                     f"[{_fmt(c.ci_low)}, {_fmt(c.ci_high)}]", _fmt(g.gap),
                     "n/a" if g.p_value is None else f"{g.p_value:.2g}",
                     {True: "fair", False: "NOT fair", None: "not computable"}[g.fair]])
    spec = result.spec
    head = (f"Audit of {result.source}: {spec.outcome} == {spec.positive}, {spec.group_name} vs "
            f"{spec.other_name}, tolerance {spec.tolerance:g} ({result.n_rows:,} rows")
    head += f"; {result.n_excluded:,} left out: " + ", ".join(
        f"{k} {v:,}" for k, v in result.excluded_reasons.items()) + ")" if result.n_excluded else ")"
    table = format_table(rows, ["cell", "group", "n", "positive", "ratio", "95% CI", "gap", "p", "verdict"])
    return "\n".join([head, "", table, ""] + [f"- {s}" for s in result.sentences()])


def print_json(document: Any) -> None:
    print(json.dumps(document, indent=2, default=_json_default))


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if hasattr(value, "to_dict"):
        return value.to_dict()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


# ----------------------------------------------------------------------------------------
# Subcommands
# ----------------------------------------------------------------------------------------
def _run_audit(args: argparse.Namespace) -> int:
    frame, spec, _ = resolve(args)
    predictions = None
    if args.predictions:
        predictions = frame[resolve_column(frame, args.predictions, "predictions")].to_numpy()
    result = audit(frame, spec, predictions,
                   source=f"predictions in '{args.predictions}'" if args.predictions else None)
    if args.json:
        print_json(result.to_dict())
    else:
        print(format_audit(result))
    return 0


def _add_audit(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "audit", help="controlled-fairness audit of recorded decisions or predictions",
        description="Compare the outcome ratio of the protected group and the other class in each "
                    "filter cell, with 95%% confidence intervals, a significance test of each gap, "
                    "and a verdict against the tolerance.")
    add_data_options(parser)
    parser.add_argument("--predictions", help="audit a 0/1 prediction column instead of the outcome")
    parser.set_defaults(run=_run_audit)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="luskin", description="Audit a classifier or a record of decisions for bias, "
                                                "and correct it (controlled fairness, retraining, "
                                                "per-group thresholds, equalized distributions).")
    parser.add_argument("--version", action="version", version=f"luskin {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    _add_audit(subparsers)
    for register in _extensions():
        register(subparsers)
    return parser


def _extensions() -> list[Callable[[Any], None]]:
    """Subcommands that live beside their core modules (retrain; thresholds and equalize)."""
    found = []
    for module in ("._cli_retrain", "._cli_parity", "._cli_report"):
        try:
            imported = __import__(f"luskin_core{module}", fromlist=["add_parsers"])
        except ModuleNotFoundError as err:
            if err.name != f"luskin_core{module}":
                raise
            continue
        found.append(imported.add_parsers)
    return found


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 2 a user mistake)."""
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if not getattr(args, "run", None):
            parser.print_help()
            return EXIT_USAGE
        return int(args.run(args) or 0)
    except LuskinError as err:
        print(f"luskin: {err}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # e.g. `luskin ... --json | head`: the reader left; not an error
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("luskin: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
