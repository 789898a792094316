"""``luskin audit --template NAME``: the tables regulators name, from the usual audit options.

Every table of :data:`luskin_core.analyses.regulator_tables.REGULATOR_TABLES` is a template:
``--template ll144 --sex COL --race COL`` prints the NYC Local Law 144 tables (selection rate, or
for a score outcome the scoring rate, and impact ratios for sex, race/ethnicity and their
intersection, each with its unknown category and the range of every impact ratio over it);
``--template ll144 --counts FILE`` reads a published summary table instead of rows;
``--template eeoc`` prints the Uniform Guidelines table (four-fifths beside two standard
deviations and Fisher's exact test, shortfall, flip test) for each of --sex and --race, or for
the --groups given. Each opens with the data sufficiency summary. ``--json`` prints the table's
document; ``--csv FILE`` writes its table (formula cells neutralised).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from luskin_cli.options import CommandOptions, given
from luskin_core.errors import LuskinError
from luskin_core.spec.dataref import DataRef


def template_choices(args: CommandOptions) -> Any:
    """The regulator choices from the command line's options."""
    from luskin_core.analyses.regulator_tables import RegulatorChoices

    return RegulatorChoices(sex=(args.sex or "").strip() or None, race=(args.race or "").strip() or None,
                            exclude_small=bool(args.exclude_small),
                            unknown=tuple(args.unknown or ()),
                            groups=bool(args.groups),
                            bonus=(args.bonus or "").strip() or None)


def run_template(args: CommandOptions, key: Any = None) -> int:
    """Run the chosen template and print it (text or JSON); with --evidence, write its evidence (``key`` signs it)."""
    from luskin_cli import evidence
    from luskin_cli.common import print_json, resolve
    from luskin_core.analyses.regulator_tables import REGULATOR_TABLES

    entry = REGULATOR_TABLES[given(args.template, "--template")]
    wanted = bool(args.evidence)
    if wanted and (entry.name != "ll144" or args.bounds):
        evidence.refuse(f"--template {entry.name}" if entry.name != "ll144" else "--bounds")
    data: Any = None  # the rows (none from a published table)
    choices = template_choices(args)
    if args.counts:
        if entry.summary is None:
            raise LuskinError(f"--counts reads a published table; --template {entry.name} has none: give --data.")
        if args.data or args.preset or args.sex or args.race:
            raise LuskinError("--counts takes the published table in place of the rows: leave out --data, --preset, "
                              "--sex and --race.")
        output = entry.from_summary(args.counts, choices)
        if wanted:
            from luskin_core.evidence.fingerprint import data_bytes
            from luskin_core.evidence.kinds import published_counts_part
            from luskin_core.evidence.make import DataFacts

            raw = Path(args.counts).read_bytes()
            evidence.write_for(args, key, "ll144_published", {"choices": _choices_part(choices)},
                               published_counts_part(raw),
                               DataFacts(str(DataRef.upload(Path(args.counts).name)), "published table", args.counts,
                                         data_bytes(args.counts)))
    else:
        data, spec = resolve(args, engine=True, one_value_groups=True)[:2]
        if wanted:
            from luskin_core.analyses.regulator_ll144 import ll144_counted, ll144_output
            from luskin_core.evidence.kinds import ll144_counts_part

            counted = ll144_counted(data, spec, choices)
            output = ll144_output(counted, spec, choices)
            evidence.write_for(args, key, "ll144", {"spec": spec.to_dict(), "choices": _choices_part(choices)},
                               ll144_counts_part(counted), evidence.data_facts(args, data))
        else:
            output = entry.build(data, spec, choices)
    bounds = _bounds(args, entry.name, output, data)
    if args.csv:
        from luskin_core.export import safe_frame

        _write_csv(args.csv, safe_frame(output.csv_frame()).to_csv(index=False))
    if args.json:
        document = output.document()
        for audited, part in zip(document.get("audits", ()), bounds):
            audited["bounds"] = [b.to_dict() for b in part[1]]
        print_json(document)
    else:
        print(output.text())
        for label, part, what in bounds:
            print(f"\n{label}: over the {what} (best and worst case):")
            print("\n".join(f"- {s}" for s in _sentences(part, what)))
    return 0


def _choices_part(choices: Any) -> dict[str, Any]:
    """The LL144 choices as the evidence's specification keeps them."""
    return {"sex": choices.sex, "race": choices.race, "exclude_small": choices.exclude_small,
            "unknown": list(choices.unknown)}


def _bounds(args: CommandOptions, name: str, output: Any, data: Any) -> list[tuple[str, Any, str]]:
    """With --bounds, each EEOC audit's gaps and impact ratios over its rows of unknown group (the LL144 tables
    carry their own bounds over the unknowns always): (label, bounds, what the unknown rows are)."""
    if not args.bounds or name == "ll144":
        return []
    parts = getattr(output, "parts", None)
    if parts is None or data is None:
        raise LuskinError(f"--bounds gives the best and worst case of a plain audit's comparisons; --template {name} "
                          "does not take it.")
    from luskin_core.analyses.unknown_bounds import audit_bounds, unknown_words

    return [(p.label, audit_bounds(data, p.audit), unknown_words(p.audit.spec)) for p in parts]


def _sentences(bounds: Any, what: str) -> list[str]:
    from luskin_core.analyses.unknown_bounds import bound_sentences

    return bound_sentences(bounds, what)


def _write_csv(path: str, text: str) -> None:
    target = Path(path)
    if target.is_dir():
        raise LuskinError(f"'{path}' is a folder: give a file name for --csv.")
    try:
        target.write_text(text, encoding="utf-8")
    except OSError as err:
        raise LuskinError(f"Could not write '{path}': {err.strerror or err}.") from None


__all__ = ["run_template", "template_choices"]
