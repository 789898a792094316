"""The one verdict rule of every analysis, and the one place its words live.

Every analysis (the audit, the proxy audit, the adjusted gaps, the series) asks :func:`judge` for a
:class:`Verdict`; every surface (narrative, charts, the command line, the page, the report's CSS)
reads the verdict's words and labels from the enum. A verdict literal typed anywhere else is a bug:
``tests/test_verdict_words.py`` scans the code for one.

The rule, the first that applies:

1. ``REFERENCE``: the reference group's own row (shown, never judged);
2. ``TOO_FEW``: the group or the reference has too few rows (or a rate cannot be computed): shown,
   not judged;
3. ``WITHIN``: every judged rate is inside the bar (:func:`inside_bar`: |difference| at most the
   tolerance, or with ``metric="ratio"`` the impact ratio and its inverse at least the threshold);
4. ``BEYOND``: some rate outside the bar has an adjusted p-value below :data:`ALPHA`;
5. ``CHANCE``: otherwise (outside the bar, but it could be chance).

A gap exactly at the tolerance is inside it (``<=``), whatever its p-value: the bar is a
tolerance, not a threshold to reach.

The members are strings (:class:`enum.StrEnum`): ``Verdict.WITHIN == "within tolerance"``, and JSON
holds the same words as before the enum.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum

ALPHA = 0.05
# Comparisons of floats against the bar: a gap of exactly the tolerance is within it despite rounding.
_EPS = 1e-12


class Verdict(StrEnum):
    """The verdict of one comparison of a group with the reference."""

    REFERENCE = "reference group"
    TOO_FEW = "too few rows"
    WITHIN = "within tolerance"
    BEYOND = "beyond tolerance"
    CHANCE = "beyond tolerance but could be chance"

    @property
    def words(self) -> str:
        """The verdict in words, as JSON, tables and sentences give it ("beyond tolerance but could be chance")."""
        return self.value

    @property
    def fair(self) -> bool | None:
        """True within the bar, False beyond it (by chance or not), None when not judged."""
        return _FAIR[self]

    @property
    def judged(self) -> bool:
        """Whether the verdict says anything about fairness (not the reference's row, not too few rows)."""
        return self.fair is not None

    @property
    def heading(self) -> str:
        """A capitalised label for counts, legends and column heads ("Could be chance")."""
        return _TITLE[self]

    @property
    def short(self) -> str:
        """The shortest label, for a table's narrow column or a chart's panel ("chance?")."""
        return _SHORT[self]

    @property
    def mark(self) -> str:
        """The label a chart's hover or legend gives ("beyond tolerance, could be chance")."""
        return _MARK[self]

    @property
    def symbol(self) -> str:
        """A one-character mark beside a number in a dense chart: * beyond, ? could be chance."""
        return _SYMBOL[self]

    @property
    def flag(self) -> str:
        """The verdict as the command line's flag: "fair", "NOT fair", "not judged" or "reference"."""
        return _FLAG[self]

    @property
    def css(self) -> str:
        """The report's CSS class for a row with this verdict."""
        return _CSS[self]

    @property
    def meaning(self) -> str:
        """One sentence on what the verdict means (help text beside a count)."""
        return _MEANING[self]

    @classmethod
    def of(cls, value: str | Verdict) -> Verdict:
        """The member for its words (a verdict read back from JSON); "reference" is the reference's row."""
        if isinstance(value, Verdict):
            return value
        if value == "reference":
            return cls.REFERENCE
        return cls(value)


_FAIR: dict[Verdict, bool | None] = {Verdict.REFERENCE: None, Verdict.TOO_FEW: None, Verdict.WITHIN: True,
                                     Verdict.BEYOND: False, Verdict.CHANCE: False}
_TITLE = {Verdict.REFERENCE: "Reference group", Verdict.TOO_FEW: "Too few rows", Verdict.WITHIN: "Within tolerance",
          Verdict.BEYOND: "Beyond tolerance", Verdict.CHANCE: "Could be chance"}
_SHORT = {Verdict.REFERENCE: "ref.", Verdict.TOO_FEW: "too few", Verdict.WITHIN: "within", Verdict.BEYOND: "beyond",
          Verdict.CHANCE: "chance?"}
_MARK = {Verdict.REFERENCE: "reference group", Verdict.TOO_FEW: "too few rows to judge",
         Verdict.WITHIN: "within tolerance", Verdict.BEYOND: "beyond tolerance",
         Verdict.CHANCE: "beyond tolerance, could be chance"}
_SYMBOL = {Verdict.REFERENCE: "", Verdict.TOO_FEW: "", Verdict.WITHIN: "", Verdict.BEYOND: "*", Verdict.CHANCE: "?"}
_FLAG = {Verdict.REFERENCE: "reference", Verdict.TOO_FEW: "not judged", Verdict.WITHIN: "fair",
         Verdict.BEYOND: "NOT fair", Verdict.CHANCE: "NOT fair"}
# Only the rows the report styles get a class (its stylesheet shades the reference and a gap beyond chance).
_CSS = {Verdict.REFERENCE: "reference", Verdict.TOO_FEW: "", Verdict.WITHIN: "", Verdict.BEYOND: "beyond",
        Verdict.CHANCE: ""}
_MEANING = {Verdict.REFERENCE: "The group every other group is compared with.",
            Verdict.TOO_FEW: "The group or the reference has too few rows: shown, not judged.",
            Verdict.WITHIN: "The gap is within the tolerance.",
            Verdict.BEYOND: "The gap exceeds the tolerance and is not due to chance.",
            Verdict.CHANCE: "The gap exceeds the tolerance, but the adjusted p-value is 0.05 or more."}

# The order verdicts are counted and shown in (the worst first); the reference's row is not counted.
JUDGED_ORDER = (Verdict.BEYOND, Verdict.CHANCE, Verdict.WITHIN, Verdict.TOO_FEW)


def fair_flag(fair: bool | None) -> str:
    """A fairness flag (a gap's ``fair``) in the command line's words: "fair", "NOT fair" or "not judged"."""
    return {True: Verdict.WITHIN.flag, False: Verdict.BEYOND.flag, None: Verdict.TOO_FEW.flag}[fair]


def inside_bar(*, metric: str, difference: float, tolerance: float, ratio_threshold: float,
               ratio: float | None = None, favourable: float | None = None,
               reference_favourable: float | None = None) -> bool:
    """Whether a gap is inside the bar: |difference| <= tolerance, or (``metric="ratio"``) the impact ratio
    (favourable share over the reference's) and its inverse at least ``ratio_threshold``.

    With the ratio metric and a reference whose favourable share is 0, the group is inside only when its
    share is 0 too (no ratio exists, and any favourable share beside none is a gap).
    """
    if metric == "ratio":
        if reference_favourable is not None and reference_favourable == 0:
            return favourable == 0
        if ratio is None or ratio == 0:
            return False
        return min(ratio, 1 / ratio) >= ratio_threshold - _EPS
    return abs(difference) <= tolerance + _EPS


def judge(within: bool | None | Iterable[bool | None], p_adjusted: float | None | Iterable[float | None] = None, *,
          reference: bool = False, too_few: bool = False, alpha: float = ALPHA) -> Verdict:
    """The verdict of one comparison from its judged rates (see the module's docstring for the rule).

    ``within`` and ``p_adjusted`` are one value each, or one per judged rate (a model judged on its true and
    false positive rates); a ``within`` of None means the rate could not be computed (too few rows).
    """
    if reference:
        return Verdict.REFERENCE
    insides = (within,) if within is None or isinstance(within, bool) else tuple(within)
    if p_adjusted is None or isinstance(p_adjusted, (int, float)):
        ps: tuple[float | None, ...] = (p_adjusted,) * len(insides)
    else:
        ps = tuple(p_adjusted)
    if too_few or not insides or any(w is None for w in insides):
        return Verdict.TOO_FEW
    if all(insides):
        return Verdict.WITHIN
    if any(not w and p is not None and p < alpha for w, p in zip(insides, ps)):
        return Verdict.BEYOND
    return Verdict.CHANCE


__all__ = ["ALPHA", "JUDGED_ORDER", "Verdict", "fair_flag", "inside_bar", "judge"]
