"""Numbers as a committee reads them: one rule for percentages everywhere (CLI, pages, charts, report).

The one place a share (:func:`format_percent`), a gap in percentage points (:func:`format_points`,
:func:`points`), a p-value (:func:`format_p`) or a plain number (:func:`format_number`) is turned
into text, and the one table of what a table cell holds (:data:`CELL_KINDS`: :data:`SHARE`, :data:`GAP`,
:data:`GAP_SIZE`, :data:`RATIO`, :data:`P_VALUE`, :data:`AUC`, :data:`COUNT`, :data:`AMOUNT`, :data:`AMOUNT_GAP`, each one formatter and its plotly format) that the
page's, the report's and the command line's tables write their numbers with; the sentences that use them live in :mod:`luskin_core.analyses.narrative`. ``tests/test_narrative.py``
fails when another module formats one of them by hand.

Standard library only: the command line imports it at start-up.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["AMOUNT", "AMOUNT_GAP", "AUC", "CELL_KINDS", "COUNT", "GAP", "GAP_SIZE", "P_VALUE", "RATIO", "SHARE", "CellKind", "amount_digits", "below_majority", "count_of", "finite_float", "format_amount", "format_memory", "format_number", "format_p", "format_percent", "format_percent_pair", "format_points",
           "format_table", "points"]


def finite_float(x: Any) -> float | None:
    """``x`` as a finite float, or None when there is no number (None, NaN, infinite, pandas' NA, text)."""
    if x is None:
        return None
    try:
        value = float(x)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def format_percent(share: float | None, digits: int = 1) -> str:
    """A share (0..1) as a percentage that never rounds to 0% or 100% unless it is exactly that.

    99.96% with one decimal would print as "100.0%", which reads as "every one": near the ends
    up to two more decimals are shown, and beyond them a bound (">99.999%", "<0.001%").
    """
    number = finite_float(share)
    if number is None:
        return "n/a"
    value = 100.0 * number + 0.0  # + 0.0 turns -0.0 into 0.0
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


def format_memory(size: float) -> str:
    """An amount of memory in bytes as people read it: "350 MB", "7.4 GB"."""
    if size >= 1e9:
        return f"{size / 1e9:,.1f} GB"
    return f"{max(1.0, size / 1e6):,.0f} MB"


def format_number(x: float | None, digits: int = 3) -> str:
    """A number with fixed decimals, or "n/a" when there is none (None, NaN, infinite)."""
    number = finite_float(x)
    return "n/a" if number is None else f"{number:.{digits}f}"


def amount_digits(values: Sequence[float | None]) -> int:
    """The decimals an amount's table is written with: none once the typical amount is 1,000 or more (a salary),
    two below (an hourly wage, a price), so every number of one table has the same decimals."""
    finite = sorted(abs(v) for v in (finite_float(x) for x in values) if v is not None)
    if not finite:
        return 2
    return 0 if finite[len(finite) // 2] >= 1000 else 2


def format_amount(x: float | None, digits: int = 2, *, signed: bool = False) -> str:
    """An amount in its own units with thousands separators, never in scientific notation: 101,000 or 7.10
    ("+2.51" signed; a gap of zero is "0.00", never "-0.00"); "n/a" without one."""
    number = finite_float(x)
    if number is None:
        return "n/a"
    value = round(number, digits) + 0.0
    text = f"{value:,.{digits}f}"
    if signed and value > 0:
        return "+" + text
    return text


def format_points(difference: float | None, digits: int = 1, *, signed: bool = False) -> str:
    """A difference of two shares in percentage points: 0.021 -> "2.1" ("+2.1" signed), "n/a" without one.

    The rule of :func:`format_percent` for gaps: a gap that is not zero never reads as "0.0" (up to
    two more decimals, then a bound: "<0.001"), and zero is "0.0", never "-0.0" or "+0.0". A
    negative gap keeps its minus; ``signed`` adds the plus to a positive one.
    """
    number = finite_float(difference)
    if number is None:
        return "n/a"
    value = 100.0 * number + 0.0
    if value == 0.0:
        return f"{0.0:.{digits}f}"
    sign = "+" if signed else ""
    for places in range(digits, digits + 3):
        text = f"{value:{sign}.{places}f}"
        if float(text) != 0.0:
            return text
    step = f"{10.0 ** -places:.{places}f}"
    if value < 0:
        return f">-{step}"
    return f"<+{step}" if signed else f"<{step}"


def points(difference: float | None) -> str:
    """A gap as a sentence says it: "14 points", "1 point", "0.4 points" (whole points from one up, unsigned)."""
    number = finite_float(difference)
    text = format_points(None if number is None else abs(number), 0)
    if text == "n/a":
        return "an unknown number of points"
    return f"{text} point" + ("" if text == "1" else "s")


def count_of(n: int, word: str, words: str | None = None) -> str:
    """A count with its noun agreeing, thousands separated: "1 row", "3,412 rows" (never "row(s)").

    ``words`` is the plural when it is not ``word`` + "s" ("1 category", "2 categories").
    """
    return f"{n:,} {word if n == 1 else (words or word + 's')}"


def format_p(p: float | None, *, short: bool = False) -> str:
    """A p-value: 'p < 0.001' / 'p = 0.034' in a sentence, '<0.001' / '0.034' in a table (short).

    The one spelling on every surface; without a p-value: "p not computable" in a sentence, "n/a" in a table.
    """
    number = finite_float(p)
    if number is None:
        return "n/a" if short else "p not computable"
    if short:
        return "<0.001" if number < 0.001 else f"{number:.3f}"
    return "p < 0.001" if number < 0.001 else f"p = {number:.3f}"


def format_table(rows: Sequence[Sequence[Any]], header: Sequence[str]) -> str:
    """A plain aligned text table."""
    cells = [[str(h) for h in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------
# The kinds of number a table cell holds, each written one way on every surface
# ------------------------------------------------------------------------------------------
def _count_text(x: Any) -> str:
    number = finite_float(x)
    return "n/a" if number is None else f"{number:,.0f}"   # an estimated count (a proxy's weights) rounds


@dataclass(frozen=True)
class CellKind:
    """One kind of number a table cell holds (a share, a gap, an impact ratio, a p-value, a count, an amount):
    how the page's, the report's and the command line's tables write it, the unit their headings give it, and
    plotly's format for a chart's hover or bar text.

    The cell is the number alone and the heading carries the unit ("Share (%)": "42.3", "Gap (points)": "+2.1"),
    so a narrow page column and a report column read the same. A chart plots ``scale`` times the number (a share
    and a gap as percent and points) and writes it with ``d3``.
    """

    name: str
    unit: str                              # in the heading: "Share (%)", "Gap (points)"; "" for none
    write: Callable[[Any], str]            # the cell's text ("n/a" without a number)
    bound: Callable[[Any, int], str]       # an interval bound, with the decimals given
    d3: str                                # plotly's format of the charted value ("+.1f": "+2.1")
    scale: float = 1.0                     # what a chart multiplies the number by before ``d3`` writes it
    digits: int = 1                        # an interval bound's decimals in a table that has room

    def text(self, x: Any) -> str:
        """The number as every table cell writes it."""
        return self.write(x)

    def at(self, x: Any, digits: int) -> str:
        """The number with the decimals given: an amount's table writes every amount with its amounts' decimals
        (:func:`amount_digits`: a salary 101,000, a wage 7.10)."""
        return self.bound(x, digits)

    def ci(self, x: Any, low: Any, high: Any, *, whole: bool = False) -> str:
        """The number with its 95% interval, "42.3 [41.4, 43.1]"; the bounds in whole units where columns are
        narrow (the page: "42.3 [41, 44]"); the number alone without an interval."""
        text = self.write(x)
        if finite_float(low) is None or finite_float(high) is None:
            return text
        digits = 0 if whole else self.digits
        return f"{text} [{self.bound(low, digits)}, {self.bound(high, digits)}]"

    def heading(self, words: str, *, ci: str = "") -> str:
        """A column heading with the kind's unit: heading("Share", ci="95% CI") -> "Share (%) [95% CI]"."""
        unit = f" ({self.unit})" if self.unit else ""
        return f"{words}{unit}" + (f" [{ci}]" if ci else "")

    def hover(self, axis: str = "x") -> str:
        """plotly's placeholder for a charted value of this kind: hover("y") -> "%{y:+.1f}"."""
        return "%{" + axis + ":" + self.d3 + "}"

    def chart(self, x: Any) -> float | None:
        """The number as a chart plots it (times ``scale``), or None without one."""
        number = finite_float(x)
        return None if number is None else self.scale * number


SHARE = CellKind("share", "%", lambda x: format_percent(x).rstrip("%"),
                 lambda x, d: format_percent(x, d).rstrip("%"), ".1f", scale=100.0)
GAP = CellKind("gap", "points", lambda x: format_points(x, signed=True),
               lambda x, d: format_points(x, d, signed=True), "+.1f", scale=100.0)
GAP_SIZE = CellKind("gap size", "points", lambda x: format_points(x),   # the largest gap between any groups: no sign
                    lambda x, d: format_points(x, d), ".1f", scale=100.0)
RATIO = CellKind("ratio", "", lambda x: format_number(x, 2),   # an impact ratio, an odds ratio
                 lambda x, d: format_number(x, 2), ".2f", digits=2)
P_VALUE = CellKind("p-value", "", lambda x: format_p(x, short=True), lambda x, d: format_p(x, short=True), ".3f")
AUC = CellKind("AUC", "", lambda x: format_number(x, 3), lambda x, d: format_number(x, 3), ".3f", digits=3)
COUNT = CellKind("count", "", _count_text, lambda x, d: _count_text(x), ",d", digits=0)
AMOUNT = CellKind("amount", "", lambda x: format_amount(x), lambda x, d: format_amount(x, d), ",.2f", digits=2)
AMOUNT_GAP = CellKind("amount gap", "", lambda x: format_amount(x, signed=True),   # two groups' amounts apart
                      lambda x, d: format_amount(x, d, signed=True), "+,.2f", digits=2)
CELL_KINDS: tuple[CellKind, ...] = (SHARE, GAP, GAP_SIZE, RATIO, P_VALUE, AUC, COUNT, AMOUNT, AMOUNT_GAP)
