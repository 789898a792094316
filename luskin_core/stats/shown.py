"""Statistics of a comparison that every audit table shows, each declared once.

A statistic shown on every surface (the frame a library user gets, the page's table, the command
line's table, the report's table) is one :class:`Shown` line in :data:`SHOWN`: its heading (the
report's and the frame's), its short heading (the page's and the command line's, where columns are
narrow), what it means (the page's column help and the report's glossary), how it is read from a
:class:`~luskin_core.stats.comparisons.Comparison` and its words. The four tables append these
columns in this order, so a new statistic is its computation (``comparisons``) and one line here;
the JSON has it from the comparison's record already.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Shown:
    """One statistic every audit table shows: headings, meaning, value and words, declared once."""

    heading: str                     # the report's and the frame's column
    short: str                       # the page's and the command line's column
    meaning: str                     # the page's help and the report's glossary
    value: Callable[[Any], Any]      # from a Comparison: the number or flag (None: does not apply)
    words: Callable[[Any], str]      # the value as every table writes it

    def text(self, comparison: Any) -> str:
        """The statistic of one comparison in words ('' where it does not apply)."""
        value = self.value(comparison)
        return "" if value is None else self.words(value)


SHOWN: tuple[Shown, ...] = (
    Shown("Below four-fifths", "4/5", "'below': the impact ratio is under 0.8, which fails the four-fifths rule.",
          lambda c: c.four_fifths, lambda below: "below" if below else ""),
)

__all__ = ["SHOWN", "Shown"]
