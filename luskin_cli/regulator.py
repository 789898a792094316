"""``luskin audit --template ll144|eeoc``: the tables regulators name, from the usual audit options.

``--template ll144 --sex COL --race COL`` prints the NYC Local Law 144 tables (selection rate,
or for a score outcome the scoring rate, and impact ratios for sex, race/ethnicity and their
intersection, with the unknown category); ``--template eeoc`` prints the Uniform Guidelines
table (four-fifths beside two standard deviations and Fisher's exact test, shortfall, flip
test) for each of --sex and --race, or for the --groups given. Both open with the data
sufficiency summary. ``--json`` prints the audit's document with an ``ll144`` object (or the
EEOC rows); ``--csv FILE`` writes the LL144 (or EEOC) table.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from luskin_core.errors import LuskinError


def run_template(args: argparse.Namespace) -> int:
    """Run the chosen template and print it (text or JSON)."""
    from luskin_cli.common import print_json, resolve
    from luskin_core.analyses.audit import audit
    from luskin_core.analyses.regulator import eeoc_frame, eeoc_rows, format_eeoc, format_ll144, ll144_audit
    from luskin_core.stats.power import sufficiency, sufficiency_lines

    if getattr(args, "counts", None):
        return _run_summary(args)
    data, spec = resolve(args, engine=True, one_value_groups=args.template == "ll144")[:2]

    def run(s: Any) -> Any:
        return audit(data, s)

    if args.template == "ll144":
        ll144 = ll144_audit(data, spec, args.sex.strip(), args.race.strip(), exclude_small=args.exclude_small,
                            unknown=tuple(args.unknown or ()))
        if ll144.scoring and ll144.median is not None:  # the comparisons count "strictly above the median" too, as the tables do
            import numpy as np

            spec = spec.with_changes(score_cutoff=float(np.nextafter(ll144.median, np.inf)))
        try:  # the sufficiency of sex × race/ethnicity; a single-sex pool has no such comparison, and the tables say why
            result: Any = run(spec)
            items = sufficiency(result.comparisons, spec)
            lines = sufficiency_lines(items)
        except LuskinError as err:
            result, items, lines = None, (), [f"Data sufficiency: not computed ({err})"]
        if args.csv:
            _write_csv(args.csv, ll144.to_csv())
        if args.json:
            document = result.to_dict() if result is not None else {}
            document.update({"template": "ll144", "ll144": ll144.to_dict(),
                             "sufficiency": [s.to_dict() for s in items]})
            print_json(document)
        else:
            print("\n".join(lines + ["", format_ll144(ll144)]))
        return 0
    specs = [spec] if getattr(args, "groups", None) else [
        spec.with_changes(group_by=(c.strip(),)) for c in (args.sex, args.race) if c]
    documents, texts, frames = [], [], []
    for s in specs:
        result = run(s)
        rows = eeoc_rows(result.comparisons, adverse=s.adverse)
        items = sufficiency(result.comparisons, s)
        frame = eeoc_frame(rows)
        frame.insert(0, "Groups", " × ".join(s.group_by))
        frames.append(frame)
        document = result.to_dict()
        document.update({"eeoc": [r.to_dict() for r in rows], "sufficiency": [i.to_dict() for i in items]})
        documents.append(document)
        texts.append("\n".join([f"Groups: {' × '.join(s.group_by)} (reference {result.reference})"]
                               + sufficiency_lines(items) + ["", format_eeoc(rows, s)]))
    if args.csv:
        import pandas as pd

        from luskin_core.export import safe_frame

        _write_csv(args.csv, safe_frame(pd.concat(frames, ignore_index=True)).to_csv(index=False))
    if args.json:
        print_json({"template": "eeoc", "audits": documents})
    else:
        print("\n\n".join(texts))
    return 0


def _run_summary(args: argparse.Namespace) -> int:
    """``--template ll144 --counts FILE``: the tables, their words and bounds from a published summary."""
    from luskin_cli.common import print_json
    from luskin_core.analyses.regulator import format_ll144, ll144_from_summary, read_summary

    if args.template != "ll144":
        raise LuskinError("--counts reads a published Local Law 144 table: use it with --template ll144.")
    if args.data or args.preset or getattr(args, "sex", None) or getattr(args, "race", None):
        raise LuskinError("--counts takes the published table in place of the rows: leave out --data, --preset, "
                          "--sex and --race.")
    ll144 = ll144_from_summary(read_summary(args.counts), exclude_small=args.exclude_small,
                               unknown=tuple(args.unknown or ()))
    if args.csv:
        _write_csv(args.csv, ll144.to_csv())
    if args.json:
        print_json({"template": "ll144", "ll144": ll144.to_dict()})
    else:
        print(format_ll144(ll144))
    return 0


def _write_csv(path: str, text: str) -> None:
    target = Path(path)
    if target.is_dir():
        raise LuskinError(f"'{path}' is a folder: give a file name for --csv.")
    try:
        target.write_text(text, encoding="utf-8")
    except OSError as err:
        raise LuskinError(f"Could not write '{path}': {err.strerror or err}.") from None


__all__ = ["run_template"]
