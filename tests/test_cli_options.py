"""The command line reads typed options (luskin_cli/options.py), built from argparse's namespace in one place.

Every flag of every command is a field of ``CommandOptions`` (or a model tool's declared option), a field whose
default is not None holds the parser's own default, the options carry exactly what argparse parsed, and no command
asks the namespace whether it has a flag (``getattr(args, ...)``).
"""

from __future__ import annotations

import argparse
import re
from dataclasses import fields
from pathlib import Path

import pytest

from luskin_cli.main import build_parser
from luskin_cli.options import CommandOptions, options_from
from luskin_core.errors import LuskinError

ROOT = Path(__file__).resolve().parent.parent


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_every_flag_of_every_command_is_a_typed_field() -> None:
    from luskin_core.present.report_parts import made_from_table
    from luskin_core.spec.options import OPTIONS

    names = {f.name for f in fields(CommandOptions)}
    declared = {option.name for options in OPTIONS.values() for option in options}
    # luskin report's flags of an analysis made from its line land behind its name (scan_depth for --scan-depth)
    declared |= {f"{e.name}_{o.name}" for e in made_from_table("command") if e.options for o in OPTIONS[e.options]}
    missing = {f"{command} {action.dest}" for command, parser in _commands().items() for action in parser._actions
               if action.dest != "help" and action.dest not in names and action.dest not in declared}
    assert not missing


def test_a_field_with_a_default_holds_the_parsers_own() -> None:
    defaults = {f.name: f.default for f in fields(CommandOptions)
                if f.default is not None and f.default is not False and isinstance(f.default, (int, float, str))}
    assert {"seed", "port", "title"} <= set(defaults)
    differ = {(command, action.dest, action.default, defaults[action.dest])
              for command, parser in _commands().items() for action in parser._actions
              if action.dest in defaults and action.default != defaults[action.dest]}
    assert not differ


@pytest.mark.parametrize("argv", [
    ["audit", "--data", "x.csv", "--outcome", "y", "--positive", "1", "--groups", "race", "--groups", "sex",
     "--stratify", "age", "--bins", "age=30,50", "--metric", "ratio", "--seed", "3", "--json"],
    ["report", "--preset", "compas", "--html", "r.html", "--retrain", "--algorithm", "1", "--algorithm", "2",
     "--thresholds", "--lambda", "0.5", "--equalize", "--alphas", "0.5,0.1", "--scan", "sex,race"],
    ["retrain", "--preset", "adult"],
    ["app", "--port", "8600"],
    ["verify", "evidence.zip"],
])
def test_the_options_carry_exactly_what_argparse_parsed(argv: list[str]) -> None:
    namespace = build_parser().parse_args(argv)
    options = options_from(namespace)
    parsed = {k: v for k, v in vars(namespace).items() if not k.startswith("_")}
    assert {k: options.value(k) for k in parsed} == parsed
    assert all(options.has(k) for k in parsed) and not options.has("no such flag")
    absent = {f.name for f in fields(CommandOptions)} - set(parsed) - {"declared", "given_by_parser"}
    assert absent and all(getattr(options, name) in (None, False) or name in {"seed", "port", "address", "title",
                                                                                 "every", "calibration", "n_bins",
                                                                                 "alpha_shown", "bandwidth", "start",
                                                                                 "tuning", "lam", "min_size",
                                                                                 "replicates"}
                          for name in absent)


def test_a_flag_without_a_field_is_refused() -> None:
    with pytest.raises(TypeError, match="no_such_flag"):
        options_from(argparse.Namespace(data="x.csv", no_such_flag=1))


def test_a_required_value_missing_is_said_in_words() -> None:
    from luskin_cli.options import given

    assert given("x.csv", "--data") == "x.csv"
    with pytest.raises(LuskinError, match="--data is needed here"):
        given(None, "--data")


def test_no_command_asks_the_namespace_whether_it_has_a_flag() -> None:
    asked = [f"{path.name}:{n}" for path in sorted((ROOT / "luskin_cli").glob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(r"\b(getattr|hasattr)\(args\b|vars\(args\)", line)]
    assert not asked
