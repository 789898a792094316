"""What every ``luskin`` command shares: the data and specification options, the one parser from
arguments to a specification (:func:`spec_from_args`), loading (:func:`resolve`) and printing.

The subcommands import this module and :mod:`luskin_cli.main` imports the subcommands, so nothing
imports in a circle. Standard library only at import time, so ``luskin --help`` answers at once.
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from luskin_cli.options import CommandOptions
from luskin_core.errors import LuskinError
from luskin_core.spec.dataref import DataRef

if TYPE_CHECKING:
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


class Parser(argparse.ArgumentParser):
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
        positive = getattr(parsed, "positive", None)
        if isinstance(positive, list):   # --positive given once is that value; several times, the list of them
            parsed.positive = positive[0] if len(positive) == 1 else positive
        return parsed


def _group_options() -> list[str]:
    """The options of ``luskin audit`` and ``luskin report`` that the model tools do not take (they
    compare one group with the rest), as :func:`add_audit_options` defines them."""
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
        data.add_argument("--positive", action="append", default=None,
                          help="the outcome value that counts as positive, e.g. '>50K'; repeat to count several "
                               "together, e.g. --positive Fail --positive Withdrawn")
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
    from luskin_core.spec.options import SEED_OPTION  # the seed's one declaration (light: no heavy import)

    data.add_argument(SEED_OPTION.cli_flag, default=0, **SEED_OPTION.constraint.argparse(), help=SEED_OPTION.flag_help)
    data.add_argument("--json", action="store_true", help="print one JSON document instead of tables")
    from luskin_cli.engine import add_engine_options

    add_engine_options(parser)


def option_dest(name: str, prefix: str = "") -> str:
    """Where a declared option's flag lands: its name, or in a command offering an analysis' options behind the
    analysis' name (``luskin report``'s ``--scan-depth``), that name and the option's (``scan_depth``)."""
    return f"{prefix.replace('-', '_')}_{name}" if prefix else name


def option_flags(option: Any, prefix: str = "") -> tuple[str, ...]:
    """A declared option's flag and its aliases; behind ``prefix`` each is prefixed (``--scan-depth``), and the
    option a command needs (``flag_requires``: the scan's columns) is the prefix's own flag (``--scan COLS``, its
    prefixed name an alias)."""
    if not prefix:
        return tuple(option.cli_flags)
    prefixed = tuple(f"--{prefix}-{flag[2:]}" for flag in option.cli_flags)
    return (f"--{prefix}", *prefixed) if option.flag_requires else prefixed


def prefixed_words(text: str, tool: str, prefix: str = "") -> str:
    """A declaration's help or refusal with the flags of ``tool``'s options it names spelled as they are behind
    ``prefix`` ("--columns a,b" reads "--scan a,b", "--predictions" reads "--scan-predictions")."""
    if not prefix:
        return text
    from luskin_core.spec.options import OPTIONS

    flags = {flag: option_flags(option, prefix)[0] for option in OPTIONS[tool] if option.on_command
             for flag in option.cli_flags}
    if not flags:
        return text
    pattern = "|".join(re.escape(flag) for flag in sorted(flags, key=len, reverse=True))
    return re.sub(rf"(?<![\w-])({pattern})(?![\w-])", lambda m: flags[m.group(1)], text)


def add_option_flags(group: Any, tool: str, *, skip: Sequence[str] = (), only: Sequence[str] | None = None,
                     repeated: Mapping[str, str] | None = None, unset: bool = False, prefix: str = "") -> None:
    """One flag per declared option of a model tool (``OPTIONS`` in luskin_core/spec/options.py).

    Each flag is made from its declaration: its name, its help, its type and choices (argparse refuses what
    the option's constraint refuses, in its words) and its default (the options class's). A flag the parser
    already has (``--seed``, from the data options) and the options a command places itself (``skip``: a
    flag in a group of alternatives, a list) are left out. The flag's value lands under the option's name.
    A command offering some of a tool's options (``luskin report``) names them in ``only``; ``repeated`` maps an
    option that may be given several times to where its list lands; with ``unset`` a flag not given is None
    (the command then knows what was asked and takes the class's default itself: :func:`option_or_default`).
    With ``prefix`` (an analysis' name) every flag is behind it (:func:`option_flags`, ``--scan-depth``) and lands
    under :func:`option_dest` (``scan_depth``); its help names the other flags as they are spelled behind it.
    """
    from luskin_core.spec.options import OPTIONS, option_default  # light: no heavy import

    taken = group._option_string_actions  # shared by a parser and its groups
    repeated = dict(repeated or {})
    for option in OPTIONS[tool]:
        flags = option_flags(option, prefix)
        # behind a prefix argparse would name the value after the dest (SCAN_SEED): the option's name (SEED)
        metavar = option.metavar or (option.name.upper() if prefix and option.constraint.kind != "choice" else None)
        if option.name in skip or flags[0] in taken or (only is not None and option.name not in only):
            continue
        if not option.on_command or option.instead_of:   # set by another flag, or added with the option it replaces
            continue
        default = None if option.spec or option.repeat else option_default(tool, option.name)
        given = None if unset or option.name in repeated else default
        words = prefixed_words(option.command_help(default), tool, prefix)
        dest = option_dest(option.name, prefix)
        alternative = next((other for other in OPTIONS[tool] if other.instead_of == option.name), None)
        if alternative is not None:   # one flag or the other (--level A or --fdr Q); each refusal names its flag
            pair = group.add_mutually_exclusive_group()
            for one, said in ((option, words), (alternative, prefixed_words(alternative.command_help(None), tool,
                                                                            prefix))):
                flag = option_flags(one, prefix)[0]
                pair.add_argument(flag, dest=option_dest(one.name, prefix), default=None, metavar=one.metavar,
                                  help=said, **one.constraint.argparse(flag))
            continue
        if option.repeat:
            group.add_argument(*flags, dest=dest, default=None, action="append",
                               metavar=metavar, help=words, **option.constraint.argparse())
            continue
        if option.constraint.kind == "flag":
            group.add_argument(*flags, dest=dest, default=given, help=words,
                               action=argparse.BooleanOptionalAction if default else "store_true")
            continue
        if option.name in repeated:
            group.add_argument(*flags, dest=repeated[option.name], default=None, action="append",
                               metavar=metavar, help=f"{words}; repeat for several",
                               **option.constraint.argparse())
            continue
        group.add_argument(*flags, dest=dest, default=given, metavar=metavar,
                           help=words, **option.constraint.argparse())


def declared_values(args: CommandOptions, tool: str, prefix: str = "") -> tuple[dict[str, Any], dict[str, Any]]:
    """The declared options of ``tool`` a command made from its analysis' line was given: the keyword arguments of
    its options class, and those of the specification (an option declared as a field of it, ``spec``).

    A flag not given is left out (the class's or the specification's default), or takes the value its declaration
    says it takes when another option is given (``default_when``), or is refused in its declaration's words when
    the command needs it (``flag_requires``); an alternative's flag (``instead_of``) gives its value to the option it
    replaces and sets the other it names (``sets``); a list of columns names the specification's groups too
    (``spec_groups``: its first). With ``prefix``, the flags behind an analysis' name (:func:`add_option_flags`)."""
    from luskin_core.spec.options import DATA_KINDS, OPTIONS

    options: dict[str, Any] = {}
    spec: dict[str, Any] = {}
    for option in OPTIONS[tool]:
        dest = option_dest(option.name, prefix)
        if not option.on_command or not args.has(dest):
            continue
        value = args.value(dest)
        if option.constraint.kind == "columns" and isinstance(value, list):   # repeated, each separated by commas
            value = ",".join(value)
        if value is None:
            value = next((then for other, then in option.default_when
                          if args.has(option_dest(other, prefix)) and args.value(option_dest(other, prefix))), None)
        if option.constraint.kind in DATA_KINDS and value is not None:
            value = option.constraint.check(value)
        if option.flag_requires and not value:
            raise LuskinError(prefixed_words(option.flag_requires, tool, prefix))
        if value is None:
            continue
        if option.spec:
            spec[option.spec] = value
        elif option.instead_of:
            options[option.instead_of] = value
            if option.sets is not None:
                options[option.sets[0]] = option.sets[1]
        else:
            options[option.name] = value
        if option.spec_groups:
            spec["group_by"] = tuple(value)[:1]
    return options, spec


def add_outcome_options(parser: argparse.ArgumentParser) -> Any:
    """The data options of a command that counts the data as given (its groups are its own options): where the
    data is, the outcome and its positive value. Returns their group (the command adds its own flags to it)."""
    data = parser.add_argument_group("data")
    data.add_argument("--data", help="a CSV file, or sample:adult / sample:compas; also a Parquet file or folder, "
                                     "a DuckDB file, postgresql://user@host/db or spark: (with --table)")
    data.add_argument("--outcome", help="the outcome column, e.g. approved")
    data.add_argument("--positive", action="append", default=None,
                      help="the outcome value that counts as positive, e.g. Y; repeat to count several together")
    return data


def outcome_of(args: CommandOptions) -> tuple[str, Any]:
    """The outcome and its positive value of a command that counts the data as given (each refused in plain words
    when not given); several positive values are counted together."""
    if not args.outcome:
        raise LuskinError("Say which column is the outcome: --outcome COL (and --positive VALUE).")
    if args.positive is None:
        raise LuskinError("Say which value of the outcome counts as positive: --positive VALUE.")
    positive = args.positive
    return args.outcome.strip(), (tuple(t.strip() for t in positive) if isinstance(positive, list)
                                  else positive.strip())


def data_as_given(args: CommandOptions, verb: str) -> Any:
    """A file or database an engine counts where it lives (Parquet, a big CSV, PostgreSQL, Spark), or the rows of
    a CSV or a sample, unchecked against a specification (the analysis checks its own columns)."""
    from luskin_cli.engine import is_engine_location, open_for_args

    if not args.data:
        raise LuskinError(f"Say which data to {verb}: --data FILE.csv (or a Parquet file, a database, sample:compas).")
    if is_engine_location(args.data, args.table):
        return open_for_args(args, args.data)
    from luskin_core.counting.data import load_data

    return load_data(args.data)


def option_or_default(value: Any, tool: str, name: str) -> Any:
    """A flag's value, or its option's declared default when it was not given (flags added with ``unset``)."""
    from luskin_core.spec.options import option_default

    return option_default(tool, name) if value is None else value


def option_values(args: CommandOptions, tool: str, *, skip: Sequence[str] = ()) -> dict[str, Any]:
    """The declared options of ``tool`` as a parsed command gives them (keyword arguments of its estimator)."""
    from luskin_core.spec.options import OPTIONS

    return {option.name: args.value(option.name) for option in OPTIONS[tool]
            if option.name not in skip and args.has(option.name)}


def _split_names(text: str | None) -> tuple[str, ...]:
    return tuple(part.strip() for part in (text or "").split(",") if part.strip())


def resolve(args: CommandOptions, *, engine: bool = False, restrict: bool = True,
            one_value_groups: bool = False, csv_engine: bool = False) -> tuple[Any, AuditSpec, tuple[str, ...] | None]:
    """:func:`_resolve`, then, once the data and the specification are sound, the sentence saying which direction
    the outcome was given when the core's rule chose it (on stderr: stdout stays the table or the JSON)."""
    loaded = _resolve(args, engine=engine, restrict=restrict, one_value_groups=one_value_groups,
                      csv_engine=csv_engine)
    if args.direction_note and not args.direction_told and loaded[1].outcome_type != "amount":
        import sys

        print(args.direction_note, file=sys.stderr)
        args.direction_told = True   # said once (a command resolving twice says it once)
    return loaded


def _resolve(args: CommandOptions, *, engine: bool = False, restrict: bool = True,
             one_value_groups: bool = False, csv_engine: bool = False) -> tuple[Any, AuditSpec, tuple[str, ...] | None]:
    """Load the data and build the specification from a preset, a saved config and options.

    Returns the frame restricted to the population (unless ``restrict`` is false: the audit counts
    the rows outside it itself), the specification, and the model features (None means every
    column but the outcome). With ``engine``, a source an engine reads
    (:mod:`luskin_cli.engine`) is returned unloaded as a ``Source``; with ``csv_engine`` too, a CSV
    file the upload reader would read in memory (from ``engine.DUCKDB_CSV_BYTES`` up) is counted by DuckDB when it reads it as the upload
    reader does and the specification passes the same checks
    (:func:`~luskin_core.counting.files.open_csv_audited`), else it is read in memory as before.
    """
    loaded = None
    if args.config:
        from luskin_core.spec.configfile import read_config_file

        # size, encoding, depth and entry types checked first: a broken file is refused before pandas loads
        loaded = read_config_file(args.config)
    from luskin_core.spec.audit_spec import AuditSpec
    from luskin_core.spec.conditions import conjunction_mask

    preset = None
    if args.preset:
        from luskin_core.counting.data import get_preset

        preset = get_preset(args.preset)
    base: AuditSpec | None = preset.spec if preset else None
    if loaded is not None:
        # A saved dashboard configuration keeps the specification under "spec".
        base = AuditSpec.from_dict(loaded.get("spec", loaded))
    source = args.data or (str(DataRef.sample(preset.name)) if preset else None)
    if not source:
        raise LuskinError("Say which data to use: --data FILE.csv, --data sample:adult, or --preset adult.")

    spec = spec_from_args(args, base)
    from luskin_core.spec.validation import refuse_estimated

    refuse_estimated(spec.group_spec)   # a saved proxy audit's groups are in no column (luskin audit --proxy)
    from luskin_cli.engine import is_checked_csv, is_engine_location, open_for_args, sample_for_args

    # --exclude is checked against the loaded frame below (choose_features): such a command reads it in memory.
    if engine and csv_engine and not _split_names(args.exclude) and is_checked_csv(source, args.table):
        from luskin_core.counting.deadline import checked_deadline
        from luskin_core.counting.files import open_csv_audited

        opened = open_csv_audited(source, spec, one_value_groups=one_value_groups)
        if opened is not None:
            opened[0].statement_timeout = checked_deadline(args.query_timeout, "--query-timeout")
            return opened[0], opened[1], _split_names(args.features) or None
    if is_engine_location(source, args.table):
        if engine:
            return open_for_args(args, source), spec, _split_names(args.features) or None
        frame = sample_for_args(args, source, spec)
    else:
        from luskin_core.counting.data import load_data
        from luskin_core.spec.validation import check_column_names, check_spec

        frame = load_data(source)
        check_column_names(frame)  # 'Race' and 'race' are one column to --protected: refuse, as the upload does
        spec = check_spec(spec, frame, one_value_groups=one_value_groups)  # the rules that need the rows: the page's, in the same words
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


def print_json(document: Any) -> None:
    """The document as JSON: indented two levels deep, each deeper value (a comparison, a cell) on one line.

    Readable a record per line, and written by json's C encoder (``indent`` makes json use its Python one,
    0.1 s of an audit of 700 comparisons).
    """
    print(_json_text(document, 0))


def _json_text(value: Any, depth: int) -> str:
    if depth < 2 and isinstance(value, dict) and value:
        pad = "  " * (depth + 1)
        inner = ",\n".join(f"{pad}{json.dumps({k: 0})[1:-4]}: {_json_text(v, depth + 1)}" for k, v in value.items())
        return "{\n" + inner + "\n" + "  " * depth + "}"
    if depth < 2 and isinstance(value, (list, tuple)) and value:
        pad = "  " * (depth + 1)
        return "[\n" + ",\n".join(pad + _json_text(v, depth + 1) for v in value) + "\n" + "  " * depth + "]"
    return json.dumps(value, default=_json_default)


def _json_default(value: Any) -> Any:
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if hasattr(value, "to_dict"):
        return value.to_dict()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def add_audit_options(parser: argparse.ArgumentParser) -> None:
    """Who is compared, within what, and how a gap is judged (issue 8's options)."""
    group = parser.add_argument_group("groups, cells and verdicts")
    group.add_argument("--groups", action="append", default=None, metavar="COL",
                       help="compare every value of this column (instead of --protected); repeat to cross "
                            "columns, e.g. --groups race --groups sex")
    group.add_argument("--reference", metavar="GROUP",
                       help="the group every other group is compared with (default: the highest share among "
                            "groups big enough, as the four-fifths rule does)")
    group.add_argument("--stratify", action="append", default=None, metavar="COL",
                       help="compare within every value of this control column (instead of --filter); repeat "
                            "to cross")
    group.add_argument("--bins", action="append", default=None, metavar="COL=CUTS",
                       help="cut a numeric column at these points, e.g. age=25,40,60 (default: quartiles for "
                            "a column with more than 20 values)")
    group.add_argument("--metric", choices=["difference", "ratio"], default=None,
                       help="judge a gap by the difference in shares (with --tolerance) or by the impact ratio "
                            "(with --ratio-threshold, default 0.8: the four-fifths rule)")
    group.add_argument("--ratio-threshold", type=float, default=None, metavar="R",
                       help="smallest impact ratio counted as fair with --metric ratio (default 0.8)")
    group.add_argument("--correction", choices=["holm", "bh", "none"], default=None,
                       help="adjust p-values for the number of comparisons: holm (default), bh "
                            "(Benjamini-Hochberg) or none")
    group.add_argument("--min-group-size", type=int, default=None, metavar="N",
                       help="groups with fewer rows in a cell are shown but not judged (default 30)")
    group.add_argument("--min-group-share", type=float, default=None, metavar="S",
                       help="groups under this share of all rows are set aside (e.g. 0.02; default 0)")
    way = group.add_mutually_exclusive_group()
    way.add_argument("--adverse", action="store_true", default=None,
                     help="the counted outcome is bad for the person (a denial, a default, an arrest): the group "
                          "with the lower share is favoured and the four-fifths rule uses 1 - share (default: "
                          "recognised from the outcome's name and value, else favourable, said on stderr)")
    way.add_argument("--favourable", "--favorable", action="store_true", default=None, dest="favourable",
                     help="the counted outcome is good for the person (hired, admitted, approved): the group with "
                          "the higher share is favoured")
    group.add_argument("--name", action="append", default=None, metavar="COL:VALUE=NAME",
                       help="a name for a coded value, shown instead of the code, e.g. --name sex:1=male; repeat")
    group.add_argument("--score", action="store_true",
                       help="the outcome is a numeric score: compare the share at or above --score-cutoff "
                            "(default: the median), and the mean")
    group.add_argument("--score-cutoff", type=float, default=None, metavar="X",
                       help="the score at or above which a row counts as positive (implies --score)")
    group.add_argument("--amount", metavar="COL", default=None,
                       help="the outcome is this numeric column, an amount (pay, a bonus, a price): its mean and "
                            "median are compared (instead of --outcome and --positive)")


def add_prediction_options(parser: argparse.ArgumentParser) -> None:
    """How a prediction column is read and judged (``luskin audit --predictions COL``)."""
    group = parser.add_argument_group("a model's decisions (with --predictions)")
    group.add_argument("--prediction-cutoff", type=float, default=None, metavar="X",
                       help="the prediction column is a score: a row is predicted positive at or above X (e.g. 0.5, "
                            "or 5 for a decile score)")
    group.add_argument("--criterion", choices=["selection", "opportunity", "odds", "precision"], default=None,
                       help="what equal treatment means for the model: selection (default; equal shares predicted "
                            "positive), opportunity (equal true positive rates), odds (equal true and false "
                            "positive rates) or precision (equal precision)")


def cut_points(items: list[str]) -> dict[str, list[float]]:
    """--bins COL=CUTS options as {column: cuts} (declared once: luskin_core.spec.options.cut_points)."""
    from luskin_core.spec.options import cut_points as declared

    return declared(items)


def _value_names(items: list[str], start: Any) -> dict[str, dict[str, str]]:
    """--name COL:VALUE=NAME options folded into {column: {value: name}} (over a saved configuration's)."""
    out: dict[str, dict[str, str]] = {}
    for column, pairs in (start.items() if isinstance(start, dict) else start or ()):
        out[str(column)] = dict(pairs.items() if isinstance(pairs, dict) else pairs)
    for item in items:
        left, sep, name = item.partition("=")
        column, colon, value = left.rpartition(":")
        if not sep or not colon or not column.strip() or not name.strip():
            raise LuskinError(f"Write a value's name as COLUMN:VALUE=NAME (e.g. sex:1=male), not '{item}'.")
        out.setdefault(column.strip(), {})[value.strip()] = name.strip()
    return out


def spec_from_args(args: CommandOptions, base: AuditSpec | None = None) -> AuditSpec:
    """The one parser from the command line's options to the specification.

    Starts from ``base`` (a preset's or a saved configuration's specification) and lays the options
    over it; an option that forms the groups or the cells another way replaces the base's way
    (``--groups`` over a preset's protected group, ``--filter`` over saved strata). Whether the result
    makes sense is the specification's own rules (:mod:`luskin_core.spec.validation`), so a mistake
    reads here as it does on the page and in the library.
    """
    from luskin_core.spec.audit_spec import AuditSpec
    from luskin_core.spec.conditions import parse_condition

    fields: dict[str, Any] = base.to_dict() if base else {}
    if args.outcome:
        fields["outcome"] = args.outcome
    if args.positive is not None:
        fields["positive"] = args.positive
    protected = args.protected
    if protected:
        fields["protected"] = parse_condition(protected).to_dict()
        if base is None or protected != str(base.protected):
            fields["group_label"], fields["other_label"] = None, None
        if not args.groups:
            fields["group_by"] = []
    if args.group_label:
        fields["group_label"] = args.group_label
    if args.other_label:
        fields["other_label"] = args.other_label
    if args.filter is not None or args.no_filter:
        fields["filters"] = [parse_condition(c).to_dict() for c in (args.filter or [])]
        fields["filter_label"], fields["not_filter_label"] = None, None
        if not args.stratify:
            fields["strata"] = []
    if args.population is not None:
        fields["population"] = [parse_condition(c).to_dict() for c in args.population]
    if args.tolerance is not None:
        fields["tolerance"] = args.tolerance
    _audit_options(args, fields, base)
    _prediction_options(args, fields)
    return AuditSpec(**{k: v for k, v in fields.items() if v is not None or k in ("positive", "protected")})


def _audit_options(args: CommandOptions, fields: dict[str, Any], base: AuditSpec | None = None) -> None:
    """Fold ``luskin audit``'s own options (groups, strata, judgement, score) into the fields."""
    groups = args.groups
    if groups:
        fields["group_by"] = [g.strip() for g in groups]
        if not args.protected:  # given both: the specification says to choose one way
            fields["protected"] = None
            fields["group_label"] = fields["other_label"] = None
    strata = args.stratify
    if strata:
        fields["strata"] = [s.strip() for s in strata]
        if args.filter is None:  # given both: the specification says to choose one way
            fields["filters"] = []
            fields["filter_label"] = fields["not_filter_label"] = None
    if args.bins:
        fields["bins"] = cut_points(args.bins)
    fields["outcome_is"] = _direction(args, fields, base)
    if args.name:
        fields["value_names"] = _value_names(args.name, fields.get("value_names"))
    if args.unknown:   # every analysis sets them apart (the judgement's), the regulator tables too; each kept once
        fields["unknown_values"] = [*(fields.get("unknown_values") or ()), *args.unknown]
    for option, key in (("reference", "reference"), ("metric", "metric"), ("ratio_threshold", "ratio_threshold"),
                        ("correction", "correction"), ("min_group_size", "min_group_size"),
                        ("min_group_share", "min_group_share"), ("score_cutoff", "score_cutoff")):
        value = args.value(option)
        if value is not None:
            fields[key] = value
    if args.amount:
        fields["outcome"], fields["outcome_type"], fields["positive"] = args.amount, "amount", None
        fields["score_cutoff"] = None
    elif args.score or args.score_cutoff is not None:
        fields["outcome_type"] = "score"
        # a preset's positive value gives way; one given here with --score is refused by the specification
        fields["positive"] = args.positive
    apply_template(args, fields)  # --template ll144|eeoc: the groups come from --sex/--race


def _direction(args: CommandOptions, fields: dict[str, Any], base: AuditSpec | None) -> str:
    """Whether the counted outcome is good or bad for the person, and (in ``args.direction_note``) the sentence
    saying which was taken, why, and the flag that changes it.

    A flag decides; else a preset's or saved configuration's direction for its own outcome; else the core's one
    rule (:func:`luskin_core.spec.direction.outcome_direction`, the Data page's): recognised from the outcome's
    name and value, or, where they do not say, favourable, said to be unrecognised. :func:`resolve` prints the
    note on stderr when the rule decided (a flag or a preset said it already).
    """
    from luskin_core.spec.direction import outcome_direction

    score = bool(args.score or args.score_cutoff is not None)
    positive = None if score else fields.get("positive")
    shown = str(fields.get("outcome")) + ("" if positive is None else " = " + (
        " or ".join(map(str, positive)) if isinstance(positive, (list, tuple)) else str(positive)))
    if args.adverse or args.favourable:
        meaning, why = ("adverse" if args.adverse else "favourable"), "as given"
    elif base is not None and base.outcome == fields.get("outcome") and (score or base.positive == positive):
        meaning, why = base.outcome_is, "as the preset or configuration says"
    else:
        guess = outcome_direction(fields.get("outcome"), positive)
        meaning = guess.value or "favourable"
        why = guess.reason if guess.value else "not recognised from the names, so taken as good for the person"
    other = "--favourable" if meaning == "adverse" else "--adverse"
    good = "bad" if meaning == "adverse" else "good"
    note = (f"Counted '{shown}' as {meaning} ({good} for the person: {why}); if it is "
            f"{'good' if meaning == 'adverse' else 'bad'} for the person, give {other}.")
    # nothing to say on stderr when the user or a configuration said it, nor again when already said (the file's
    # DuckDB route resolves the specification twice)
    args.direction_told = why in ("as given", "as the preset or configuration says") or (
        args.direction_told and args.direction_note == note)
    args.direction_note = note
    return meaning


def _prediction_options(args: CommandOptions, fields: dict[str, Any]) -> None:
    """The prediction column, its cut-off and the criterion (without a column, the specification refuses the rest)."""
    for option, key in (("predictions", "prediction"), ("prediction_cutoff", "prediction_cutoff"),
                        ("criterion", "criterion")):
        value = args.value(option)
        if value is not None:
            fields[key] = value


def add_template_options(parser: argparse.ArgumentParser, *, csv: bool = True) -> None:
    """The regulator templates' options (added to ``luskin audit``, and without --csv to ``luskin report``)."""
    from luskin_core.analyses.regulator_tables import REGULATOR_TABLES

    group = parser.add_argument_group("regulator templates")
    group.add_argument("--template", choices=list(REGULATOR_TABLES), default=None,
                       help="print " + "; or ".join(f"{t.help} ({t.name})" for t in REGULATOR_TABLES.values()))
    group.add_argument("--sex", metavar="COL", help="the sex column (for --template)")
    group.add_argument("--race", metavar="COL", help="the race/ethnicity column (for --template)")
    group.add_argument("--bonus", metavar="COL", help="a column of complementary or variable pay, a bonus (for "
                       "--template eu-pay)")
    group.add_argument("--unknown", metavar="VALUE", action="append", default=None,
                       help="read this value of a group column (or of --sex and --race) as unknown category, as "
                            "common spellings such as 'Decline to self-identify' and 'Prefer not to say' already "
                            "are: shown apart, never judged or the reference (repeatable; e.g. --unknown U)")
    if csv:  # luskin audit only: a report needs the rows
        group.add_argument("--counts", metavar="FILE",
                           help="LL144 from a published summary table instead of rows (CSV with columns table, "
                                "category, applicants, selected or scoring_rate; each table's unknowns as category "
                                "Unknown)")
    group.add_argument("--exclude-small", action="store_true",
                       help="LL144: leave categories under 2%% of the data out of the impact ratios (their n and "
                            "rate are still shown, with the justification)")
    if csv:
        group.add_argument("--csv", metavar="FILE", help="also write the template's table to this CSV file")
        parser.add_argument("--bounds", action="store_true",
                            help="also give each gap and impact ratio's best and worst case over the rows whose group "
                                 "is unknown (or, with --protected, whose protected value is missing), the reference "
                                 "held fixed; with --period, per period")


def apply_template(args: CommandOptions, fields: dict[str, Any]) -> None:
    """With a template and no --groups, the groups come from --sex and --race (so --protected is not needed)."""
    from luskin_core.analyses.regulator_tables import REGULATOR_TABLES

    template = args.template
    if template is None:
        if args.sex or args.race or args.exclude_small or args.counts:
            raise LuskinError("--sex, --race, --counts and --exclude-small go with --template "
                              + " or --template ".join(REGULATOR_TABLES) + ".")
        return
    columns = [c.strip() for c in (args.sex, args.race) if c]
    if REGULATOR_TABLES[template].needs_both and len(columns) != 2:
        raise LuskinError(f"--template {template} needs both columns: --sex COLUMN --race COLUMN.")
    if not columns and not args.groups:
        raise LuskinError(f"--template {template} needs --sex COLUMN, --race COLUMN or --groups COLUMN.")
    if args.protected:
        raise LuskinError(f"--template {template} compares every category: use --sex/--race, not --protected.")
    if not args.groups:
        fields["group_by"] = columns
        fields["protected"] = None
        fields["group_label"] = fields["other_label"] = None
