"""The commands made from the analyses' table: ``luskin <name>`` for every line with ``command`` set.

Registered by :func:`luskin_cli.main.build_parser` through :func:`add_parsers`. Each command takes the data and
specification options every audit takes (the outcome, the groups, the cells, the judgement), the flags made from
its declared options (``OPTIONS[line.options]`` in luskin_core/spec/options.py) and ``--json``. It loads the data
as ``luskin audit`` does (a file or database is counted where it lives), runs the line's ``run(data, spec,
options)`` and prints the result's report section as text (:func:`luskin_core.present.section_text.section_text`),
or with ``--json`` the result's ``to_dict()``. Nothing here is written for one analysis: a new line of the table is
a new command.
"""

from __future__ import annotations

from typing import Any

from luskin_cli.common import add_audit_options, add_data_options, add_option_flags
from luskin_cli.options import CommandOptions, given
from luskin_core.spec.dataref import DataRef


def add_parsers(subparsers: Any) -> None:
    """One subcommand per analysis of the table that is made from its line."""
    from luskin_core.present.report_parts import made_from_table

    for entry in made_from_table("command"):
        parser = subparsers.add_parser(entry.name, help=entry.help or entry.title,
                                       description=f"{entry.title}: {entry.help}." if entry.help else entry.title)
        add_data_options(parser)
        add_audit_options(parser)
        if entry.options is not None:
            add_option_flags(parser.add_argument_group(f"{entry.title.lower()} options"), entry.options)
        parser.set_defaults(run=run, analysis=entry.name)


def run(args: CommandOptions) -> int:
    """Run one analysis of the table on the data the options name and print what it found."""
    from luskin_cli.common import option_values, print_json, resolve
    from luskin_core.present.report_parts import PartContext, analysis
    from luskin_core.present.section_text import section_text

    entry = analysis(given(args.analysis, "the analysis"))
    data, spec, _ = resolve(args, engine=True, restrict=False, csv_engine=True)
    options = None
    made = entry.options_class()
    if made is not None and entry.options is not None:
        options = made(**option_values(args, entry.options))   # checked by the declared constraints
    result = entry.runner()(data, spec, options)
    if args.json:
        print_json(result.to_dict())
        return 0
    label = str(args.data or (DataRef.sample(args.preset) if args.preset else ""))
    print(section_text(entry.builder(result, PartContext(data_label=label))), end="")
    return 0


__all__ = ["add_parsers", "run"]
