"""The ``luskin`` command line: audit, retrain, thresholds, equalize, report, app.

Every subcommand reads the same data and specification options; a user's mistake prints one
plain sentence on stderr and exits with status 2, never a traceback. This module imports only
the standard library at start-up: pandas, scipy and scikit-learn are imported by the subcommand
that needs them, so ``luskin --help`` answers at once.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from luskin_cli.common import EXIT_USAGE, Parser, add_data_options
from luskin_cli.options import options_from
from luskin_core import __version__
from luskin_core.counting.deadline import COMMAND_LINE_DEADLINE
from luskin_core.errors import LuskinError


# ----------------------------------------------------------------------------------------
# Subcommands
# ----------------------------------------------------------------------------------------
def _add_audit(subparsers: Any) -> None:
    from luskin_cli.audit import AUDIT_DESCRIPTION, run_audit
    from luskin_cli.common import add_audit_options, add_prediction_options

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
    from luskin_cli.common import add_template_options

    add_template_options(parser)
    from luskin_cli.series import add_series_options

    add_series_options(parser)
    from luskin_cli.evidence import add_evidence_options

    add_evidence_options(parser)
    parser.set_defaults(run=run_audit)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="luskin", description="Audit a classifier or a record of decisions for bias, "
                                                "and correct it (controlled fairness, retraining, "
                                                "per-group thresholds, equalized distributions), or "
                                                "start the dashboard (luskin app).")
    parser.add_argument("--version", action="version", version=f"luskin {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    _add_audit(subparsers)
    for register in _extensions():
        register(subparsers)
    return parser


def _extensions() -> list[Callable[[Any], None]]:
    """Subcommands that live in their own modules (retrain; thresholds and equalize; report; app; adjust; proxy)."""
    found = []
    for module in (".retrain", ".parity", ".report", ".app", ".adjust", ".proxy", ".verify", ".analysis"):
        try:
            imported = __import__(f"luskin_cli{module}", fromlist=["add_parsers"])
        except ModuleNotFoundError as err:
            if err.name != f"luskin_cli{module}":
                raise
            continue
        found.append(imported.add_parsers)
    return found


# The library's words for a setting, as this command line spells it (its option).
CLI_WORDS = {COMMAND_LINE_DEADLINE: "--query-timeout SECONDS on the command line"}


def cli_words(message: str) -> str:
    """A library message with its settings named by this command line's options."""
    for words, option in CLI_WORDS.items():
        message = message.replace(words, option)
    return message


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 ok, 2 a user mistake)."""
    try:
        parser = build_parser()
        args = options_from(parser.parse_args(argv))
        if not args.run:
            parser.print_help()
            return EXIT_USAGE
        return int(args.run(args) or 0)
    except LuskinError as err:
        print(f"luskin: {cli_words(str(err))}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # e.g. `luskin ... --json | head`: the reader left; not an error
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("luskin: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
