"""The verdicts every analysis gives, and the one place their words live.

The rule that gives a verdict is the judgement's (:meth:`luskin_core.stats.judgement.Judgement.verdict`, the
first that applies: the reference's own row; too few rows; within the bar; beyond it with a significant
adjusted p-value; beyond it but could be chance). Every surface (narrative, charts, the command line, the
page, the report's CSS) reads the verdict's words and labels from the enum. A verdict literal typed anywhere
else is a bug: ``tests/test_verdict_words.py`` scans the code for one. :data:`ALPHA` is the one significance
level (the judgement's default).

The members are strings (:class:`enum.StrEnum`): ``Verdict.WITHIN == "within tolerance"``, and JSON
holds the same words as before the enum.
"""

from __future__ import annotations

from enum import StrEnum

ALPHA = 0.05


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
            Verdict.CHANCE: f"The gap exceeds the tolerance, but the adjusted p-value is {ALPHA:g} or more."}

# The order verdicts are counted and shown in (the worst first); the reference's row is not counted.
JUDGED_ORDER = (Verdict.BEYOND, Verdict.CHANCE, Verdict.WITHIN, Verdict.TOO_FEW)


# A group of unknown category keeps its numbers in every table but no verdict of its own (its members belong to the
# groups compared, and the verdict, headline and findings leave it out): what a table's verdict column says instead.
SET_APART = "set apart: unknown category"
SET_APART_SHORT = "apart"


def fair_flag(fair: bool | None) -> str:
    """A fairness flag (a gap's ``fair``) in the command line's words: "fair", "NOT fair" or "not judged"."""
    return {True: Verdict.WITHIN.flag, False: Verdict.BEYOND.flag, None: Verdict.TOO_FEW.flag}[fair]


__all__ = ["ALPHA", "JUDGED_ORDER", "SET_APART", "SET_APART_SHORT", "Verdict", "fair_flag"]
