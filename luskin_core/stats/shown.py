"""Statistics of a comparison that every audit table shows, each declared once.

A statistic shown on every surface (the frame a library user gets, the page's table, the command
line's table, the report's table) is one :class:`Shown` line in :data:`SHOWN`: its heading (the
report's and the frame's), its short heading (the page's and the command line's, where columns are
narrow), what it means (the page's column help and the report's glossary), how it is read from a
:class:`~luskin_core.stats.comparisons.Comparison` and its words. The four tables append these
columns in this order, so a new statistic is its computation (``comparisons``) and one line here;
the JSON has it from the comparison's record already.

A statistic each table places itself (the gap, beside the shares) is declared here too, with its
unit, so that every heading says it the same way: :data:`GAP`, "Gap (points)" on the page, the
report's "Difference to Male (points)".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from luskin_core.formatting import format_points


@dataclass(frozen=True)
class Shown:
    """One statistic every audit table shows: headings, meaning, value and words, declared once."""

    heading: str                     # the report's and the frame's column
    short: str                       # the page's and the command line's column
    meaning: str                     # the page's help and the report's glossary
    value: Callable[[Any], Any]      # from a Comparison: the number or flag (None: does not apply)
    words: Callable[[Any], str]      # the value as every table writes it
    unit: str = ""                   # what the number is counted in ("points"), in every heading
    reads: Callable[[Any], Any] | None = None   # what the words read, where it says more than the frame's value

    def header(self, name: str | None = None, *, ci: bool = False) -> str:
        """A column heading with the unit, as the tables write it: 'Gap (points) [CI]'.

        ``name``: the heading's words (default: the short heading, e.g. 'Overall gap' for a variant).
        """
        unit = f" ({self.unit})" if self.unit else ""
        return f"{self.short if name is None else name}{unit}{' [CI]' if ci else ''}"

    def text(self, comparison: Any) -> str:
        """The statistic of one comparison in words ('' where it does not apply)."""
        value = (self.reads or self.value)(comparison)
        return "" if value is None else self.words(value)


SHOWN: tuple[Shown, ...] = (
    Shown("Below four-fifths", "4/5", "'below': the impact ratio (the group's favourable share over the reference's) "
          "is less than four-fifths, counted exactly (a ratio of exactly 4/5 is not below), which fails the "
          "four-fifths rule; 'reference below': the reference's favourable share is less than four-fifths of the "
          "group's (the rule reads the less favoured side of the pair).",
          lambda c: c.four_fifths, lambda lower: {"group": "below", "reference": "reference below"}[lower],
          reads=lambda c: c.four_fifths_lower),
)

# The gap between a group's share and the reference group's, placed by each table beside the shares (not appended).
GAP = Shown("Difference", "Gap",
            "The group's share minus the reference group's share in the same cell, in percentage points.",
            lambda c: c.difference, lambda d: format_points(d, signed=True), unit="points")

__all__ = ["GAP", "SHOWN", "Shown"]
