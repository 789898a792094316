"""The scan as a reader of a terminal sees it (``luskin scan``'s text, made from the scan's line of the analyses'
table): the headline, each finding in a sentence and in a table, what was controlled."""

from __future__ import annotations

from typing import Any


def scan_text(result: Any) -> str:
    """The scan's text: :func:`text_lines`, one line each, ending in a new line."""
    return "\n".join(text_lines(result)) + "\n"


def text_lines(result: Any) -> list[str]:
    """The scan as a reader sees it: the headline, each finding in a sentence and in a table, what was controlled."""
    from luskin_core.analyses.scan import bar_sentence
    from luskin_core.formatting import format_p, format_percent, format_points, format_table
    from luskin_core.present.scan_plots import finding_kind

    title = (f"Subgroup scan of {result.source}: {result.n_judged:,} rows, {result.groups_scanned:,} groups of "
             f"1 to {result.spec.depth} of {', '.join(result.spec.columns)}")
    lines = [title, "", result.headline(), "", bar_sentence(result)]
    if result.findings:
        lines += [""] + [f"{'  ' if f.within else ''}- {finding_kind(f)}: {f.sentence}" for f in result.findings]
        rows = [[f.name, finding_kind(f), f"{f.n:,}", format_percent(f.rate), format_percent(f.rest_rate),
                 format_points(f.difference, signed=True), f"{format_points(f.ci_low)} to {format_points(f.ci_high)}",
                 format_p(f.p_adjusted, short=True)] for f in result.findings]
        other = "Predicted" if result.measure == "calibration" else "Everyone else"
        lines += ["", format_table(rows, ["Group", "Kind", "Rows", "Rate", other, "Gap (points)", "Simultaneous CI",
                                          "Adjusted p"])]
    if result.set_apart:
        lines += ["", "Groups of unknown category (set apart, as the audit sets them apart):"]
        lines += [f"- {f.sentence}" for f in result.set_apart]
    lines += ["", f"Controlled: the {result.error_control}."]
    if result.groups_too_small:
        lines.append(f"{result.groups_too_small:,} groups had fewer than {result.spec.min_size:,} rows inside or "
                     "outside them and were not scanned.")
    return lines


__all__ = ["scan_text", "text_lines"]
