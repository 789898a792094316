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

from collections.abc import Mapping
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


def in_report() -> tuple[Any, ...]:
    """The analyses made from their line that ``luskin report`` runs when asked: those with declared options (their
    flags behind the analysis' name). A line without options (the amounts) is the outcome's own audit: the report
    takes it from the outcome, not from a flag."""
    from luskin_core.present.report_parts import made_from_table

    return tuple(entry for entry in made_from_table("command") if entry.options is not None)


def _needed(entry: Any) -> Any:
    """The option the analysis' command needs (``flag_requires``: the scan's columns), which in the report is the
    analysis' own flag (``--scan COLS``); None: the report's flag is a switch (``--name``)."""
    from luskin_core.spec.options import OPTIONS

    return next((option for option in OPTIONS[entry.options] if option.flag_requires and option.on_command), None)


def _switch(entry: Any) -> str:
    """The report's flag that asks for the analysis, as a refusal shows it (``--scan COLS``)."""
    needed = _needed(entry)
    return f"--{entry.name}" if needed is None else f"--{entry.name} {needed.metavar or 'VALUE'}"


def add_report_flags(parser: Any) -> None:
    """``luskin report``'s flags of every analysis of :func:`in_report`, each group titled with the analysis: its
    declared options behind its name (``--scan COLS``, ``--scan-depth D``, ``--scan-fdr Q``, ...; each unset when
    not given, so the options class keeps its defaults), or a switch ``--name`` and its options."""
    for entry in in_report():
        group = parser.add_argument_group(f"{entry.title.lower()} (--{entry.name})",
                                          f"{entry.help or entry.title}, on the audit's data, outcome and "
                                          "positive value")
        if _needed(entry) is None:
            group.add_argument(f"--{entry.name}", dest=entry.name.replace("-", "_"), action="store_true",
                               default=None, help=f"add the {entry.title.lower()}: {entry.help or entry.title}")
        add_option_flags(group, entry.options, unset=True, prefix=entry.name)


def _given_in_report(args: CommandOptions, entry: Any) -> list[str]:
    """The report's flags of the analysis' options that were given (its own flag aside), as the user wrote them."""
    from luskin_cli.common import option_dest, option_flags
    from luskin_core.spec.options import OPTIONS

    needed = _needed(entry)
    dests = {option_dest(option.name, entry.name): option for option in OPTIONS[entry.options]
             if option is not needed and option.on_command}
    return [option_flags(option, entry.name)[0] for dest, option in dests.items()
            if args.has(dest) and args.value(dest) not in (None, False)]


def asked_in_report(args: CommandOptions, entry: Any) -> bool:
    """Whether ``luskin report`` was asked for the analysis (its own flag given)."""
    from luskin_cli.common import option_dest

    needed = _needed(entry)
    dest = entry.name.replace("-", "_") if needed is None else option_dest(needed.name, entry.name)
    return args.has(dest) and args.value(dest) not in (None, False)


def refuse_unasked_in_report(args: CommandOptions) -> None:
    """An option of an analysis the report was not asked for is a mistake, said before any work."""
    from luskin_core.errors import LuskinError

    for entry in in_report():
        unused = _given_in_report(args, entry)
        if unused and not asked_in_report(args, entry):
            flag = _switch(entry)
            raise LuskinError(f"{', '.join(unused)} {'sets' if len(unused) == 1 else 'set'} an option of "
                              f"--{entry.name}, which was not asked for: add {flag}.")


def run_in_report(args: CommandOptions, entry: Any, data: Any, spec: Any, label: str) -> Any:
    """The analysis as ``luskin report`` runs it, on the audit's data and specification: its options from its flags
    (:func:`luskin_cli.common.declared_values` behind its name; checked by the declared constraints), a field of the
    specification its flags give (the scan's cuts, its values read as unknown) joined to the audit's for this
    analysis only; the specification's groups stay the audit's."""
    from luskin_cli.common import declared_values

    values, fields = declared_values(args, given(entry.options, "the options"), prefix=entry.name)
    fields.pop("group_by", None)   # a command without groups of its own takes them from its columns; the report has
    if fields:
        spec = spec.with_changes(**{name: _joined(getattr(spec, name), value) for name, value in fields.items()})
    made = entry.options_class()
    options = made(**values) if made is not None else None
    keywords = {"source": label} if entry.labelled else {}
    return entry.runner()(data, spec, options, **keywords)


def _joined(audit: Any, own: Any) -> Any:
    """A field of the specification as an analysis' own flags give it, joined to the audit's: a column's cuts in
    place of the audit's for that column, values added to the audit's; anything else the flag's value."""
    if isinstance(own, Mapping):   # {column: cuts}
        return {**dict(audit or ()), **own}
    if isinstance(audit, tuple) and isinstance(own, (tuple, list)):
        return (*audit, *(item for item in own if item not in audit))
    return own


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


__all__ = ["add_parsers", "add_report_flags", "asked_in_report", "in_report", "refuse_unasked_in_report",
           "run", "run_in_report"]
