"""Numbers as a committee reads them: one rule for percentages everywhere (CLI, pages, charts, report).

Standard library only: the command line imports it at start-up.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

__all__ = ["below_majority", "format_number", "format_p", "format_percent", "format_percent_pair", "format_table"]


def format_percent(share: float | None, digits: int = 1) -> str:
    """A share (0..1) as a percentage that never rounds to 0% or 100% unless it is exactly that.

    99.96% with one decimal would print as "100.0%", which reads as "every one": near the ends
    up to two more decimals are shown, and beyond them a bound (">99.999%", "<0.001%").
    """
    if share is None or not math.isfinite(share):
        return "n/a"
    value = 100.0 * float(share) + 0.0  # + 0.0 turns -0.0 into 0.0
    if value in (0.0, 100.0):
        return f"{value:.{digits}f}%"
    for places in range(digits, digits + 3):
        text = f"{value:.{places}f}"
        if float(text) not in (0.0, 100.0):
            return f"{text}%"
    step = f"{10.0 ** -places:.{places}f}"
    return f"<{step}%" if value < 50 else f">{100 - float(step):.{places}f}%"


def format_percent_pair(a: float, b: float, digits: int = 1) -> tuple[str, str]:
    """Two different shares as percentages with enough decimals that they read as different.

    "71.5% is below 71.5%" is what one decimal makes of 0.7148 and 0.7150: up to three more
    decimals are used until the two texts differ.
    """
    for places in range(digits, digits + 4):
        first, second = format_percent(a, places), format_percent(b, places)
        if first != second:
            break
    return first, second


def below_majority(accuracy: float, positive_share: float) -> tuple[str, str, str] | None:
    """When an accuracy is below what always predicting the most common outcome gets: (the accuracy,
    "positive" or "negative", that majority accuracy) as a sentence prints them; None otherwise.

    Equal accuracies up to float rounding are not below (they printed as "71.5% is below 71.5%").
    """
    majority = max(positive_share, 1.0 - positive_share)
    if not accuracy < majority - 1e-9:
        return None
    accuracy_text, majority_text = format_percent_pair(accuracy, majority)
    return accuracy_text, "positive" if positive_share >= 0.5 else "negative", majority_text


def format_number(x: float | None, digits: int = 3) -> str:
    """A number with fixed decimals, or "n/a" when there is none (None, NaN, infinite)."""
    return "n/a" if x is None or not math.isfinite(x) else f"{x:.{digits}f}"


def format_p(p: float | None, *, short: bool = False) -> str:
    """A p-value: 'p < 0.001' / 'p = 0.034' in a sentence, '<0.001' / '0.034' in a table (short)."""
    if p is None or not math.isfinite(p):
        return "n/a" if short else "p not computable"
    if short:
        return "<0.001" if p < 0.001 else f"{p:.3f}"
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def format_table(rows: Sequence[Sequence[Any]], header: Sequence[str]) -> str:
    """A plain aligned text table."""
    cells = [[str(h) for h in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
