"""The commands made from the analyses' table: ``luskin <name>`` for every line with ``command`` set.

Registered by :func:`luskin_cli.main.build_parser` through :func:`add_parsers`. Each command takes the data options
its line names (``data``: "audit", the data and specification options every audit takes, the outcome, the groups,
the cells, the judgement; or "outcome", where the data is and its outcome, the data counted as given), the flags
made from its declared options (``OPTIONS[line.options]`` in luskin_core/spec/options.py: each in the group of flags
its declaration names, an option and its alternative as one flag or the other) and ``--json``. It loads the data (a
file or database is counted where it lives), runs the line's ``run(data, spec, options)`` and prints the result's
text (the line's ``text``, else its report section as text:
:func:`luskin_core.present.section_text.section_text`), or with ``--json`` the result's ``to_dict()``. Nothing here
is written for one analysis: a new line of the table is a new command.
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
        parser = subparsers.add_parser(
            entry.name, help=entry.command_help or entry.help or entry.title,
            description=entry.command_description or (f"{entry.title}: {entry.help}." if entry.help else entry.title))
        groups = _groups(entry.options, f"{entry.title.lower()} options")
        if entry.data == "outcome":
            from luskin_cli.common import add_outcome_options
            from luskin_cli.engine import add_engine_options

            data = add_outcome_options(parser)
            if entry.options is not None:
                add_option_flags(data, entry.options, only=groups.pop("data", []))
            data.add_argument("--json", action="store_true", help="print one JSON document instead of text")
            add_engine_options(parser)
        else:
            add_data_options(parser)
            add_audit_options(parser)
        for title, names in groups.items():
            add_option_flags(parser.add_argument_group(title), given(entry.options, "the options"), only=names)
        parser.set_defaults(run=run, analysis=entry.name)


def _groups(tool: str | None, own: str) -> dict[str, list[str]]:
    """The declared options of ``tool`` by the title of their group of flags (``own``: those that name none), in
    the order of the declarations."""
    from luskin_core.spec.options import OPTIONS

    groups: dict[str, list[str]] = {}
    for option in OPTIONS[tool] if tool is not None else ():
        groups.setdefault(option.group or own, []).append(option.name)
    return groups


def run(args: CommandOptions) -> int:
    """Run one analysis of the table on the data the options name and print what it found."""
    from luskin_cli.common import option_values, print_json, resolve
    from luskin_core.present.report_parts import PartContext, analysis
    from luskin_core.present.section_text import section_text

    entry = analysis(given(args.analysis, "the analysis"))
    made = entry.options_class()
    options = None
    keywords: dict[str, Any] = {}
    if entry.data == "outcome":
        from luskin_cli.common import data_as_given, declared_values, outcome_of
        from luskin_core.spec.audit_spec import AuditSpec

        outcome, positive = outcome_of(args)   # said first, then the options, the specification, the data
        fields: dict[str, Any] = {}
        if made is not None and entry.options is not None:
            values, fields = declared_values(args, entry.options)
            options = made(**values)   # checked by the declared constraints
        spec = AuditSpec(outcome, positive, **fields)
        data = data_as_given(args, entry.name)
        label = str(args.data)
    else:
        data, spec, _ = resolve(args, engine=True, restrict=False, csv_engine=True)
        if made is not None and entry.options is not None:
            options = made(**option_values(args, entry.options))   # checked by the declared constraints
        label = str(args.data or (DataRef.sample(args.preset) if args.preset else ""))
    if entry.labelled:
        name = getattr(data, "name", None)   # a Source's name; a frame's "name" is a column (COMPAS has one)
        keywords["source"] = name if isinstance(name, str) and name else label
    result = entry.runner()(data, spec, options, **keywords)
    if args.json:
        print_json(result.to_dict())
        return 0
    text = entry.command_text(result)
    if text is not None:
        print(text, end="")
        return 0
    print(section_text(entry.builder(result, PartContext(data_label=label))), end="")
    return 0


__all__ = ["add_parsers", "run"]
