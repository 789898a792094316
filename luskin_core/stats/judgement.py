"""The one judgement: every decision an analysis makes about its numbers, resolved once, before it runs.

A count is a fact; what it means is a decision, and a regulator reads the decisions at their edges (a ratio of
exactly 4/5, an adverse outcome, a group of unknown category, a score tied with the median). Each decision is
made here, once, and every analysis and every surface (the page, the command line's text and JSON, the report,
the slides, the CSV files) reads it from the :class:`Judgement` it was given; nothing else decides.

The decisions, and the rule each one follows:

* **Direction.** Whether the counted outcome is good for the person (favourable) or bad (adverse). Every rate
  that is *judged* is read as the favourable share: the four-fifths test, the impact ratio, the shortfall, the
  flip test, the power a comparison had and the data sufficiency all read ``favourable(k, n)``, the rows without
  the adverse outcome. Differences of shares are the same either way, up to their sign.
* **Who is compared with whom.** The audit compares every group with its reference: the one the user named;
  else, for a protected condition, the protected class with the rest (the paper's ``cond_P`` against
  ``not cond_P``; whichever fares better, the question asked is about the protected class); else, for groups
  formed by columns, the most favoured group among those large enough and of known category (the four-fifths
  rule's "group with the highest rate"). A four-fifths table (the EEOC table, Local Law 144) compares every
  group with the highest rate *of its own table or stratum* (:meth:`Judgement.most_favoured`).
* **Unknown categories.** A group whose label has a part of unknown category ("Unknown", "Decline to
  self-identify", a cross with either) is shown with its numbers and set apart from every verdict, headline,
  count and finding; it is never the reference unless the user names it.
* **Four-fifths.** The Uniform Guidelines (29 CFR 1607.4(D)) speak of a rate "less than four-fifths (4/5) (or
  eighty percent)" of the highest: in exact arithmetic on the favourable counts, ``5 k n_ref < 4 k_ref n``. A
  ratio of exactly 4/5 is not below it. The same exact test, with the user's threshold as the rational it was
  written as (0.8 is 4/5, not the float nearest it), is the impact-ratio bar (``metric="ratio"``).
* **Significance.** One level, ``alpha`` (0.05), one comparison: a p-value is significant when ``p < alpha``.
* **Tolerance.** A gap is within the tolerance when ``|difference| <= tolerance`` (a gap of exactly the
  tolerance is within it): in exact arithmetic on counts (``|k r_n - r_k n| <= t n r_n``), else on the floats
  with a margin of 1e-12 for estimates that are not counts (weighted sums, model margins).
* **The verdict.** :meth:`Judgement.verdict`: the reference's own row; too few rows; within the bar; beyond it
  and significant; beyond it but could be chance (the first that applies). :meth:`Judgement.rule` names, for
  the JSON, the rule that decided each verdict.
* **A score against its median.** Where no cut-off is given, a score counts as positive when it is strictly
  above the median of every scored row: Local Law 144's scoring rate ("the rate at which individuals in a
  category receive a score above the sample's median score"), used by the audit's score mode too, so one column
  gives one count. With a cut-off, a score counts when it is at or above it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from luskin_core.counting.plan import CROSS, is_unknown_group
from luskin_core.spec.audit_spec import Direction
from luskin_core.spec.unknown import unknown_key
from luskin_core.stats.verdict import ALPHA, Verdict

if TYPE_CHECKING:
    from luskin_core.counting.count_table import CountTable
    from luskin_core.spec.audit_spec import AuditSpec

FOUR_FIFTHS = Fraction(4, 5)
_EPS = 1e-12   # a float gap of exactly the tolerance is within it despite rounding


def exact(value: float | Fraction) -> Fraction:
    """A threshold as the rational it was written as: 0.8 is 4/5 and 0.05 is 1/20, not the floats nearest them."""
    if isinstance(value, Fraction):
        return value
    return Fraction(repr(float(value)))


class ReferenceRule(StrEnum):
    """How the audit's reference was chosen (said on every surface beside the reference's name)."""

    NAMED = "named"                      # the user named it
    REST = "the rest"                    # a protected condition: the protected class against the rest
    MOST_FAVOURED = "most favoured"      # the most favourable share among groups big enough and of known category

    def words(self, direction: Direction) -> str:
        """Why this group is the reference, in a phrase ("the group with the highest share")."""
        if self is ReferenceRule.NAMED:
            return "the group you chose"
        if self is ReferenceRule.REST:
            return "the rest, against which the protected group is compared"
        return ("the group with the lowest share (the most favoured)" if direction.adverse
                else "the group with the highest share (the most favoured)")


@dataclass(frozen=True)
class ScoreRule:
    """When a numeric score counts as the positive outcome: at or above a cut-off, or strictly above the median."""

    cutoff: float | None = None

    @property
    def median(self) -> bool:
        return self.cutoff is None

    def words(self, median: float | None = None) -> str:
        """The rule in words: 'above the median (67.8)' or 'at or above 5'."""
        if self.cutoff is not None:
            return f"at or above {self.cutoff:g}"
        return "above the median" + ("" if median is None else f" ({median:g})")

    def threshold(self, median: float) -> float:
        """The smallest score counted as positive given the median: the next float above it (strictly above)."""
        return float(np.nextafter(median, np.inf))


@dataclass(frozen=True)
class Judgement:
    """Every decision the analyses make about their numbers (see the module's docstring for each rule).

    Made from a specification by :meth:`of` (the direction, the bar, the tests) and completed with the data by
    :meth:`resolved` (the reference and the groups of unknown category). Frozen: an analysis reads it, never
    changes it.
    """

    direction: Direction = Direction.FAVOURABLE
    metric: str = "difference"
    tolerance: float = 0.05
    ratio_threshold: float = 0.8
    alpha: float = ALPHA
    correction: str = "holm"
    criterion: str = "selection"
    min_group_size: int = 30
    min_group_share: float = 0.0
    score: ScoreRule = field(default_factory=ScoreRule)
    reference_rule: ReferenceRule = ReferenceRule.MOST_FAVOURED
    named_reference: str | None = None
    rest_name: str | None = None          # a protected condition's default name for the rest ("Non-Female")
    reference: str | None = None          # resolved: the audit's reference
    unknown: tuple[str, ...] = ()         # resolved: the groups of unknown category, in the table's order
    unknown_values: tuple[str, ...] = ()  # the values the specification names as unknown (beyond the spellings)
    # resolved, groups by columns: the named values no group holds (a typo, or a code of another file): said, as a
    # value named "not known" that matches nothing changes nothing
    unknown_not_found: tuple[str, ...] = ()
    condition: bool = False               # a protected condition (the protected class against the rest)

    # -- made from a specification, completed by the data ---------------------------------------------
    @classmethod
    def of(cls, spec: AuditSpec) -> Judgement:
        """The judgement a specification asks for, before the data is seen."""
        condition = spec.protected is not None and not spec.group_by
        if spec.reference is not None:
            rule = ReferenceRule.NAMED
        elif condition:
            rule = ReferenceRule.REST
        else:
            rule = ReferenceRule.MOST_FAVOURED
        return cls(direction=spec.direction, metric=spec.metric, tolerance=float(spec.tolerance),
                   ratio_threshold=float(spec.ratio_threshold), correction=spec.correction,
                   criterion=spec.criterion, min_group_size=int(spec.min_group_size),
                   min_group_share=float(spec.min_group_share), score=ScoreRule(spec.score_cutoff),
                   reference_rule=rule, named_reference=spec.reference, condition=condition,
                   rest_name=spec.other_name if condition else None, unknown_values=spec.unknown_values)

    def resolved(self, table: CountTable) -> Judgement:
        """This judgement with the data's answers: the reference and the groups of unknown category."""
        from luskin_core.errors import LuskinError

        groups = list(table.groups)
        named = self.named_reference
        if named is not None:
            reference = named
            if named not in groups:
                # "Non-Female" given where the data calls the rest "Male": the rest, whatever its name.
                if self.condition and len(groups) == 2 and named == self.rest_name:
                    reference = groups[1]
                else:
                    shown = ", ".join(groups[:30]) + (" ..." if len(groups) > 30 else "")
                    raise LuskinError(f"There is no group called '{named}' to compare with. Groups are: {shown}.")
        elif self.condition and table.group_in_protected is not None and len(groups) == 2:
            reference = groups[1]
        else:
            reference = groups[self._most_favoured_overall(table)]
        unknown = () if self.condition else tuple(g for g in groups if g != reference
                                                  and is_unknown_group(g, extra=self.unknown_values))
        return replace(self, reference=reference, unknown=unknown, unknown_not_found=self._not_found(table))

    def _not_found(self, table: CountTable) -> tuple[str, ...]:
        """The values named unknown that the data does not hold: for groups by columns, those no group's label holds
        as a part; under a protected condition (whose rest is named, not listed) those its column was found not to
        hold when the plan read its values (the count table carries them)."""
        if self.condition:
            return table.unknown_not_found
        if not self.unknown_values:
            return ()
        groups = table.groups
        parts = {unknown_key(part) for g in groups for part in g.split(CROSS)}
        return tuple(v for v in self.unknown_values if unknown_key(v) not in parts)

    def _most_favoured_overall(self, table: CountTable) -> int:
        """The audit's most favoured group: big enough overall and, with several cells, in enough of them."""
        n = table.n.sum(axis=1)
        k = table.positives.sum(axis=1)
        total = max(int(n.sum()), 1)
        eligible = [i for i, g in enumerate(table.groups)
                    if n[i] >= self.min_group_size and n[i] / total >= self.min_group_share
                    and not is_unknown_group(g, extra=self.unknown_values)]
        if len(table.cell_keys) > 1 and eligible:
            # a group large overall but thin in every stratum would leave every comparison "too few rows"
            covered = {i: int((table.n[i] >= self.min_group_size).sum()) for i in eligible}
            most = max(covered.values())
            eligible = [i for i in eligible if 2 * covered[i] >= most and (covered[i] > 0 or most == 0)]
        pool = eligible or [i for i in range(len(table.groups)) if n[i] > 0] or [0]
        return self.most_favoured(n, k, pool)

    def most_favoured(self, n: Sequence[float] | np.ndarray, k: Sequence[float] | np.ndarray,
                      pool: Iterable[int]) -> int:
        """Of the groups in ``pool``, the one with the most favourable share (ties: the larger, then the first).

        Exact on counts, so two groups at 1/3 tie whatever their sizes' floats say."""
        def key(i: int) -> tuple[Fraction, float, int]:
            size = n[i]
            share = self.favourable_fraction(k[i], size) if size > 0 else Fraction(-1)
            return share, float(size), -i

        return max(pool, key=key)

    def four_fifths_reference(self, groups: Sequence[str], n: Sequence[float] | np.ndarray,
                              k: Sequence[float] | np.ndarray) -> int | None:
        """The reference of a four-fifths table (one table or one stratum): the highest favourable share among
        groups of known category with at least ``min_group_size`` rows (any of known category with rows where
        none is that large); None when no group of known category has a row."""
        known = [i for i, g in enumerate(groups) if not self.is_unknown(g) and n[i] > 0]
        large = [i for i in known if n[i] >= self.min_group_size]
        pool = large or known
        return self.most_favoured(n, k, pool) if pool else None

    # -- counts read in the outcome's direction -------------------------------------------------------
    @property
    def adverse(self) -> bool:
        return self.direction.adverse

    def favourable(self, k: Any, n: Any) -> Any:
        """The rows with the favourable outcome, from the rows with the counted one (numbers or arrays)."""
        return n - k if self.adverse else k

    def favourable_share(self, rate: Any) -> Any:
        """The favourable share from the counted share (None stays None)."""
        if rate is None:
            return None
        return 1.0 - rate if self.adverse else rate

    def favourable_fraction(self, k: Any, n: Any) -> Fraction:
        """The favourable share as an exact fraction (counts), or the float's exact value (weighted sums)."""
        fav = self.favourable(k, n)
        if _whole(fav) and _whole(n):
            return Fraction(int(fav), int(n))
        return Fraction(float(fav) / float(n))

    # -- the tests ------------------------------------------------------------------------------------
    def below_four_fifths(self, k: Any, n: Any, ref_k: Any, ref_n: Any) -> bool | None:
        """Whether the group's favourable share is less than four-fifths of the reference's (exact, UGESP).

        ``k``/``ref_k`` count the *counted* outcome; the test reads the favourable rows. None when a share is
        undefined or the reference has no favourable row."""
        return self._below(k, n, ref_k, ref_n, FOUR_FIFTHS)

    def four_fifths_lower(self, k: Any, n: Any, ref_k: Any, ref_n: Any) -> str | None:
        """Which side of a pair is below four-fifths of the other: "group", "reference" or None (neither, or a
        share undefined). The rule compares the less favoured side with the more favoured one whichever was
        chosen as the reference, so every sentence about a pair asks this, not only whether the group is below."""
        if self.below_four_fifths(k, n, ref_k, ref_n):
            return "group"
        if self.below_four_fifths(ref_k, ref_n, k, n):
            return "reference"
        return None

    def _below(self, k: Any, n: Any, ref_k: Any, ref_n: Any, threshold: Fraction, *, counted: bool = True
               ) -> bool | None:
        if n is None or ref_n is None or n <= 0 or ref_n <= 0:
            return None
        if counted:
            k, ref_k = self.favourable(k, n), self.favourable(ref_k, ref_n)
        return below(k, n, ref_k, ref_n, threshold)

    def significant(self, p: float | None) -> bool | None:
        """Whether a p-value is below the one level (``p < alpha``); None when there is none."""
        if p is None or not math.isfinite(p):
            return None
        return p < self.alpha

    def within(self, k: Any, n: Any, ref_k: Any, ref_n: Any, *, counted: bool = True) -> bool | None:
        """Whether one rate's gap is inside the bar: the tolerance on the difference, or the impact-ratio
        threshold on the favourable shares both ways. Exact on whole counts. None when a share is undefined.

        ``counted`` False: the rate is not the counted outcome's share (a model's true positive rate) and is
        read as it is, whatever the outcome's direction."""
        if n is None or ref_n is None or n <= 0 or ref_n <= 0:
            return None
        if self.metric == "ratio":
            fav, ref_fav = (self.favourable(k, n), self.favourable(ref_k, ref_n)) if counted else (k, ref_k)
            if ref_fav == 0 or fav == 0:
                return bool(fav == ref_fav)
            threshold = exact(self.ratio_threshold)
            return not below(fav, n, ref_fav, ref_n, threshold) and not below(ref_fav, ref_n, fav, n, threshold)
        if all(_whole(v) for v in (k, n, ref_k, ref_n)):
            tol = exact(self.tolerance)
            return abs(int(k) * int(ref_n) - int(ref_k) * int(n)) <= tol * int(n) * int(ref_n)
        return abs(float(k) / float(n) - float(ref_k) / float(ref_n)) <= self.tolerance + _EPS

    def within_estimate(self, difference: float | None, favourable: float | None = None,
                        reference_favourable: float | None = None) -> bool | None:
        """The bar for an estimate that is not a ratio of counts (a model's margin, a weighted share).

        With ``metric="ratio"`` the favourable shares are needed; where they are unknown the difference is judged.
        """
        if difference is None or not math.isfinite(difference):
            return None
        if self.metric == "ratio" and favourable is not None and reference_favourable is not None:
            if reference_favourable == 0 or favourable == 0:
                return favourable == reference_favourable
            ratio = favourable / reference_favourable
            return min(ratio, 1 / ratio) >= float(exact(self.ratio_threshold)) - _EPS
        return abs(difference) <= self.tolerance + _EPS

    def too_few(self, n: Any, ref_n: Any, share: float = 1.0) -> bool:
        """Whether a comparison has too few rows to judge: either side under ``min_group_size`` rows, or the group
        under ``min_group_share`` of all rows."""
        return bool(n < self.min_group_size or ref_n < self.min_group_size or share < self.min_group_share)

    def verdict(self, within: bool | None | Iterable[bool | None],
                p_adjusted: float | None | Iterable[float | None] = None, *, reference: bool = False,
                too_few: bool = False) -> Verdict:
        """The verdict of one comparison from its judged rates: the first rule that applies.

        1. the reference's own row; 2. too few rows (or a judged rate cannot be computed); 3. every judged rate
        within the bar; 4. a rate outside the bar with a significant adjusted p-value; 5. could be chance."""
        if reference:
            return Verdict.REFERENCE
        insides = (within,) if within is None or isinstance(within, (bool, np.bool_)) else tuple(within)
        if p_adjusted is None or isinstance(p_adjusted, (int, float)):
            ps: tuple[float | None, ...] = (p_adjusted,) * len(insides)
        else:
            ps = tuple(p_adjusted)
        if too_few or not insides or any(w is None for w in insides):
            return Verdict.TOO_FEW
        if all(insides):
            return Verdict.WITHIN
        if any(not w and self.significant(p) for w, p in zip(insides, ps)):
            return Verdict.BEYOND
        return Verdict.CHANCE

    def is_unknown(self, group: str) -> bool:
        """Whether a group is of unknown category (set apart from verdicts, never a four-fifths reference)."""
        return group in self.unknown or (not self.condition and is_unknown_group(group, extra=self.unknown_values))

    # -- words and the record of the rules --------------------------------------------------------------

    def rule(self, verdict: Verdict, measure: str = "difference") -> str:
        """The rule that decided a verdict, for the JSON (a reader checks it against the numbers). ``measure``: what
        the tolerance was read on ("difference" of shares; an amount's "gap share" of the reference's mean and
        median)."""
        bar = (f"the impact ratio and its inverse are at least {self.ratio_threshold:g}" if self.metric == "ratio"
               else f"|{measure}| <= {self.tolerance:g}")
        return {
            Verdict.REFERENCE: f"the reference ({self.reference_rule.value})",
            Verdict.TOO_FEW: (f"too few rows: the group or the reference has fewer than {self.min_group_size:,} rows"
                              + (f", or the group is under {self.min_group_share:g} of all rows"
                                 if self.min_group_share else "")),
            Verdict.WITHIN: f"within: {bar}",
            Verdict.BEYOND: f"beyond: not ({bar}) and adjusted p < {self.alpha:g} ({self.correction})",
            Verdict.CHANCE: f"could be chance: not ({bar}) and adjusted p >= {self.alpha:g} ({self.correction})",
        }[verdict]

    def to_dict(self) -> dict[str, Any]:
        """The judgement as the JSON and the evidence carry it: each decision and the rule it follows."""
        return {
            "direction": self.direction.value,
            "reads": "the favourable share (1 - the counted share)" if self.adverse else "the counted share",
            "reference": self.reference, "reference_rule": self.reference_rule.value,
            "unknown_groups": list(self.unknown),
            **({"unknown_values": list(self.unknown_values)} if self.unknown_values else {}),
            **({"unknown_values_not_found": list(self.unknown_not_found)} if self.unknown_not_found else {}),
            "metric": self.metric, "tolerance": self.tolerance, "ratio_threshold": self.ratio_threshold,
            "alpha": self.alpha, "correction": self.correction, "criterion": self.criterion,
            "min_group_size": self.min_group_size, "min_group_share": self.min_group_share,
            "score_rule": "above the median" if self.score.median else f"at or above {self.score.cutoff:g}",
            "rules": {
                "four_fifths": "below when 5 * favourable * n_ref < 4 * favourable_ref * n (exact; 29 CFR 1607.4(D): "
                               "less than four-fifths)",
                "significant": f"p < {self.alpha:g}",
                "within": ("min(ratio, 1/ratio) >= " + f"{self.ratio_threshold:g}" if self.metric == "ratio"
                           else f"|difference| <= {self.tolerance:g} (exact on counts)"),
                "verdict": "reference; too few rows; within; beyond (significant); could be chance: the first that "
                           "applies",
                "score": "strictly above the median of every scored row (Local Law 144's scoring rate)"
                         if self.score.median else f"at or above {self.score.cutoff:g}",
            },
        }


def below(fav: Any, n: Any, ref_fav: Any, ref_n: Any, threshold: Fraction = FOUR_FIFTHS) -> bool | None:
    """Whether fav/n is less than ``threshold`` times ref_fav/ref_n: the one arithmetic of the four-fifths rule.

    On favourable counts; exact in integers for whole counts (``5 fav ref_n < 4 ref_fav n`` at 4/5), on floats
    less a margin of 1e-12 for weighted sums. None when a share is undefined or the reference's is 0."""
    if n is None or ref_n is None or n <= 0 or ref_n <= 0 or ref_fav <= 0:
        return None
    if _whole(fav) and _whole(ref_fav) and _whole(n) and _whole(ref_n):
        return threshold.denominator * int(fav) * int(ref_n) < threshold.numerator * int(ref_fav) * int(n)
    return float(fav) / float(n) < float(threshold) * float(ref_fav) / float(ref_n) - _EPS


def _whole(value: Any) -> bool:
    """Whether a count is a whole number (counted rows), so the exact tests apply."""
    if isinstance(value, (int, np.integer)):
        return True
    try:
        number = float(value)
    except (TypeError, ValueError):
        return False
    return math.isfinite(number) and number == int(number) and abs(number) < 2**53


__all__ = ["ALPHA", "FOUR_FIFTHS", "Judgement", "ReferenceRule", "ScoreRule", "below", "exact"]
