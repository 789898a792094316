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

import argparse
from pathlib import Path
from typing import Any

from luskin_core.errors import LuskinError


def template_choices(args: argparse.Namespace) -> Any:
    """The regulator choices from the command line's options."""
    from luskin_core.analyses.regulator_tables import RegulatorChoices

    return RegulatorChoices(sex=(args.sex or "").strip() or None, race=(args.race or "").strip() or None,
                            exclude_small=bool(getattr(args, "exclude_small", False)),
                            unknown=tuple(getattr(args, "unknown", None) or ()),
                            groups=bool(getattr(args, "groups", None)))


def run_template(args: argparse.Namespace) -> int:
    """Run the chosen template and print it (text or JSON)."""
    from luskin_cli.common import print_json, resolve
    from luskin_core.analyses.regulator_tables import REGULATOR_TABLES

    entry = REGULATOR_TABLES[args.template]
    data: Any = None  # the rows (none from a published table)
    if getattr(args, "counts", None):
        if entry.summary is None:
            raise LuskinError(f"--counts reads a published table; --template {entry.name} has none: give --data.")
        if args.data or args.preset or getattr(args, "sex", None) or getattr(args, "race", None):
            raise LuskinError("--counts takes the published table in place of the rows: leave out --data, --preset, "
                              "--sex and --race.")
        output = entry.from_summary(args.counts, template_choices(args))
    else:
        data, spec = resolve(args, engine=True, one_value_groups=True)[:2]
        output = entry.build(data, spec, template_choices(args))
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


def _bounds(args: argparse.Namespace, name: str, output: Any, data: Any) -> list[tuple[str, Any, str]]:
    """With --bounds, each EEOC audit's gaps and impact ratios over its rows of unknown group (the LL144 tables
    carry their own bounds over the unknowns always): (label, bounds, what the unknown rows are)."""
    if not getattr(args, "bounds", False) or name == "ll144":
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
