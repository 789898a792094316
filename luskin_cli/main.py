"""The ``luskin`` command line: audit, retrain, thresholds, equalize, report, app.

Every subcommand reads the same data and specification options; a user's mistake prints one
plain sentence on stderr and exits with status 2, never a traceback. This module imports only
the standard library at start-up: pandas, scipy and scikit-learn are imported by the subcommand
that needs them, so ``luskin --help`` answers at once.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from luskin_core import __version__
from luskin_core.errors import LuskinError

if TYPE_CHECKING:
    from luskin_core.analyses.audit import AuditResult
    from luskin_core.spec.audit_spec import AuditSpec

EXIT_USAGE = 2


# Known without importing the modules that define them (a test checks they agree):
# luskin_core.counting.data.PRESETS and luskin_core.spec.audit_spec.DEFAULT_TOLERANCE.
PRESET_NAMES = ("adult", "compas", "sqf")
DEFAULT_TOLERANCE = 0.05


class _StoreOnce(argparse._StoreAction):
    """An option that takes one value: giving it twice is a mistake, not "the last one wins"."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        given: dict[str, Any] = namespace.__dict__.setdefault("_luskin_given", {})
        if self.dest in given:
            name = max(self.option_strings, key=len)
            parser.error(f"The option {name} was given twice ('{given[self.dest]}' and '{values}'); give it once")
        given[self.dest] = values
        setattr(namespace, self.dest, values)


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage mistakes as a LuskinError (one message, exit 2).

    An option that takes one value (the default ``store`` action) may be given only once, in
    this parser, its argument groups and its subcommands' parsers.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.register("action", None, _StoreOnce)
        self.register("action", "store", _StoreOnce)

    def error(self, message: str) -> None:  # type: ignore[override]
        audit_only = [o for o in _group_options() if re.search(rf"(^|\s){re.escape(o)}(=|\s|$)",
                                                               message.partition(":")[2])]
        if message.startswith("unrecognized arguments") and audit_only:
            raise LuskinError(
                f"{', '.join(audit_only)} {'is an option' if len(audit_only) == 1 else 'are options'} of "
                "'luskin audit' and 'luskin report' only. The model tools (retrain, thresholds, equalize) compare one protected "
                "group with everyone else, in the cells of a filter: use --protected 'column == value' and --filter.")
        raise LuskinError(f"{message}. Run '{self.prog} --help' for the options.")


    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        parsed = super().parse_args(args, namespace)
        parsed.__dict__.pop("_luskin_given", None)
        return parsed


def _group_options() -> list[str]:
    """The options of ``luskin audit`` and ``luskin report`` that the model tools do not take (they
    compare one group with the rest), as :func:`luskin_cli.audit.add_audit_options` defines them."""
    from luskin_cli.audit import add_audit_options

    probe = argparse.ArgumentParser(add_help=False)
    add_audit_options(probe)
    return [name for action in probe._actions for name in action.option_strings]


def add_data_options(parser: argparse.ArgumentParser, *, outcome: bool = True) -> None:
    """The options every subcommand shares: where the data is and what to audit."""
    data = parser.add_argument_group("data and specification")
    data.add_argument("--data", help="a CSV file, or sample:adult / sample:compas / sample:sqf; also a Parquet "
                      "file or folder, a DuckDB file, postgresql://user@host/db or spark: (with --table)")
    data.add_argument("--preset", choices=PRESET_NAMES,
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
    from luskin_cli.engine import add_engine_options

    add_engine_options(parser)


def _split_names(text: str | None) -> tuple[str, ...]:
    return tuple(part.strip() for part in (text or "").split(",") if part.strip())


def resolve(args: argparse.Namespace, *, engine: bool = False,
            restrict: bool = True) -> tuple[Any, AuditSpec, tuple[str, ...] | None]:
    """Load the data and build the specification from a preset, a saved config and options.

    Returns the frame restricted to the population (unless ``restrict`` is false: the audit counts
    the rows outside it itself), the specification, and the model features (None means every
    column but the outcome). With ``engine``, a source an engine reads
    (:mod:`luskin_cli.engine`) is returned unloaded as a ``Source``.
    """
    loaded = None
    if getattr(args, "config", None):
        from luskin_core.spec.configfile import read_config_file

        # size, encoding, depth and entry types checked first: a broken file is refused before pandas loads
        loaded = read_config_file(args.config)
    from luskin_core.counting.data import get_preset, load_data
    from luskin_core.spec.audit_spec import AuditSpec
    from luskin_core.spec.conditions import conjunction_mask

    preset = get_preset(args.preset) if args.preset else None
    base: AuditSpec | None = preset.spec if preset else None
    if loaded is not None:
        # A saved dashboard configuration keeps the specification under "spec".
        base = AuditSpec.from_dict(loaded.get("spec", loaded))
    source = args.data or (f"sample:{preset.name}" if preset else None)
    if not source:
        raise LuskinError("Say which data to use: --data FILE.csv, --data sample:adult, or --preset adult.")

    from luskin_cli.audit import spec_from_args

    spec = spec_from_args(args, base)
    from luskin_cli.engine import is_engine_location, open_for_args, sample_for_args

    if is_engine_location(source, getattr(args, "table", None)):
        if engine:
            return open_for_args(args, source), spec, _split_names(args.features) or None
        frame = sample_for_args(args, source, spec)
    else:
        from luskin_core.spec.validation import check_column_names, check_spec

        frame = load_data(source)
        check_column_names(frame)  # 'Race' and 'race' are one column to --protected: refuse, as the upload does
        spec = check_spec(spec, frame)  # the rules that need the rows: the page's, in the same words
    if spec.population and restrict:
        keep = conjunction_mask(spec.population, frame)
        if not keep.any():
            raise LuskinError("No row matches the population restriction.")
        frame = frame.loc[keep].reset_index(drop=True)
    features = _split_names(args.features) or (preset.features if preset and args.data is None else None)
    exclude = _split_names(args.exclude)
    if exclude:
        from luskin_core.corrections.models import choose_features

        features = choose_features(frame, spec.outcome, features, exclude).columns
    return frame, spec, features


# ----------------------------------------------------------------------------------------
# Printing
# ----------------------------------------------------------------------------------------
def format_warnings(warnings: Sequence[str]) -> str:
    """A correction's warnings (it backfired, a fit did not converge) as a block of text; empty when none."""
    if not warnings:
        return ""
    return "\n".join(["", "Warnings:", *[f"- {sentence}" for sentence in warnings]])


def format_audit(result: AuditResult) -> str:
    """The audit as plain text (see :func:`luskin_cli.audit.format_audit`)."""
    from luskin_cli.audit import format_audit as _format

    return _format(result)


def print_json(document: Any) -> None:
    print(json.dumps(document, indent=2, default=_json_default))


def _json_default(value: Any) -> Any:
    import numpy as np

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
def _add_audit(subparsers: Any) -> None:
    from luskin_cli.audit import AUDIT_DESCRIPTION, add_audit_options, add_prediction_options, run_audit

    parser = subparsers.add_parser(
        "audit", help="controlled-fairness audit of recorded decisions or predictions",
        description=AUDIT_DESCRIPTION)
    add_data_options(parser)
    parser.add_argument("--predictions", help="audit a prediction column (a model's decisions: 0/1, true/false, "
                                              "yes/no, or a score with --prediction-cutoff) against the outcome: "
                                              "the share predicted positive, and TPR, FPR, FNR and precision per "
                                              "group")
    add_audit_options(parser)
    add_prediction_options(parser)
    from luskin_cli.proxy import add_proxy_option

    add_proxy_option(parser)
    from luskin_cli.regulator import add_template_options

    add_template_options(parser)
    from luskin_cli.series import add_series_options

    add_series_options(parser)
    parser.set_defaults(run=run_audit)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="luskin", description="Audit a classifier or a record of decisions for bias, "
                                                "and correct it (controlled fairness, retraining, "
                                                "per-group thresholds, equalized distributions), or "
                                                "start the dashboard (luskin app).")
    parser.add_argument("--version", action="version", version=f"luskin {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    _add_audit(subparsers)
    for register in _extensions():
        register(subparsers)
    return parser


def _extensions() -> list[Callable[[Any], None]]:
    """Subcommands that live in their own modules (retrain; thresholds and equalize; report; app; adjust; proxy)."""
    found = []
    for module in (".retrain", ".parity", ".report", ".app", ".adjust", ".proxy"):
        try:
            imported = __import__(f"luskin_cli{module}", fromlist=["add_parsers"])
        except ModuleNotFoundError as err:
            if err.name != f"luskin_cli{module}":
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
