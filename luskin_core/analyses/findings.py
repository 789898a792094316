"""What an audit found, ranked by what a committee must know first.

One rule, used by the Audit page, the slides, the report's first page and the command line's
text output, so that every surface tells the same story in the same order:

0. **Simpson's paradox first**: when the pooled result within the parts contradicts the overall gap, that
   is said before anything else, with the way the within-part result leans and where the overall gap
   comes from (the overall answer follows it; the within-part finding of that group is not repeated).
1. **The overall answer**: each group's overall share against the reference group's, who is
   favoured and by how much (percentage points, and whether it is beyond the tolerance and not
   chance). With several groups, the largest overall gap comes first.
2. **Overall vs within** (only when strata or a filter split the rows into several parts): the
   pooled result within the parts (Mantel-Haenszel odds ratio with its 95% interval): the gap
   holds within them, or there is none within them (then the overall gap comes from which part
   each group falls in: Simpson's paradox), or it points the other way.
3. **The comparisons beyond tolerance and not due to chance**, largest gap first, each saying
   who is favoured, by how much, and where. (Without parts the overall answer already said the
   largest one; it is not repeated.)
4. **The rest, grouped**: the gaps beyond the tolerance that could be chance; the parts where
   the gap is within the tolerance ("in the other 4 departments the gap is under 5 points");
   the comparisons with too few rows to judge; last, the groups of unknown category ("Unknown",
   "Decline to self-identify"), which are shown apart and counted in none of the above.

"Favoured" follows the outcome's meaning: when the counted outcome is good for the person
(``spec.outcome_is == "favourable"``, the default) the group with the higher share is
favoured; when it is adverse (a denial, a default, an arrest) the group with the lower share is.

Findings are plain text (pages escape them before drawing). No Streamlit here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from luskin_core.analyses.narrative import share, tolerance_words, under_words, unknown_groups_words
from luskin_core.formatting import format_p, points
from luskin_core.stats.comparisons import Comparison, PooledComparison
from luskin_core.stats.judgement import Judgement
from luskin_core.stats.verdict import Verdict

BEYOND, CHANCE, TOO_FEW, WITHIN = Verdict.BEYOND, Verdict.CHANCE, Verdict.TOO_FEW, Verdict.WITHIN

OVERALL, WITHIN_PARTS, BEYOND_PART, REST, UNKNOWN_GROUPS = "overall", "within", "beyond", "rest", "unknown"
KINDS = (OVERALL, WITHIN_PARTS, BEYOND_PART, REST, UNKNOWN_GROUPS)


@dataclass(frozen=True)
class Finding:
    """One ranked finding: its kind (:data:`KINDS`), its sentence, and the numbers behind it.

    ``group``/``reference``/``part`` say what is compared where (None when the finding groups
    several comparisons); ``favoured`` names the group the gap favours (None without a gap);
    ``difference`` is the group's share minus the reference's (shares, not points).
    """

    kind: str
    sentence: str
    group: str | None = None
    reference: str | None = None
    part: str | None = None
    favoured: str | None = None
    difference: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Findings:
    """The ranked findings of one audit (see the module's rule)."""

    items: tuple[Finding, ...]

    def __iter__(self) -> Any:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    @property
    def headline(self) -> str:
        """The first finding: the overall answer."""
        return self.items[0].sentence if self.items else "No comparison could be made: there is only one group."

    def sentences(self) -> list[str]:
        return [f.sentence for f in self.items]

    def to_dict(self) -> list[dict[str, Any]]:
        return [f.to_dict() for f in self.items]


# ------------------------------------------------------------------------------------------
# Words
# ------------------------------------------------------------------------------------------
def adverse(spec: Any) -> bool:
    """True when the counted outcome is bad for the person (a denial, a default, an arrest)."""
    from luskin_core.spec.audit_spec import Direction

    return Direction(getattr(spec, "outcome_is", Direction.FAVOURABLE)).adverse


def favoured(spec: Any, group: str, rate: float | None, reference: str, reference_rate: float | None) -> str | None:
    """The group a gap favours: the higher share of a favourable outcome, the lower of an adverse one."""
    if rate is None or reference_rate is None or rate == reference_rate:
        return None
    higher = group if rate > reference_rate else reference
    lower = reference if higher == group else group
    return lower if adverse(spec) else higher


def _plural(word: str) -> str:
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and len(word) > 1 and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def part_nouns(spec: Any) -> tuple[str, str]:
    """What one part of the rows is called, singular and plural ('department', 'departments')."""
    if getattr(spec, "cell_mode", "none") == "strata":
        if len(spec.strata) == 1:
            name = spec.strata[0]
            if name.isalpha() and name.islower():   # a word ("department"): its plural reads well
                return name, _plural(name)
            return f"stratum of {name}", f"strata of {name}"   # a code name ("victim_race") is not pluralised
        return "stratum", "strata"
    return "side of the filter", "the two sides of the filter"


def part_name(spec: Any, cell: str | None) -> str:
    """A part of the rows as a committee reads it: 'department A' for the cell 'department = A'."""
    if cell is None:
        return "all rows"
    if getattr(spec, "cell_mode", "none") == "strata" and len(spec.strata) == 1:
        return cell.replace(" = ", " ", 1)
    return cell


def _judgement(spec: Any, verdict: Verdict | None, p: float | None) -> str:
    if verdict == BEYOND:
        return f"beyond {tolerance_words(spec)} and not due to chance ({format_p(p)})"
    if verdict == CHANCE:
        return f"beyond {tolerance_words(spec)} but it {CHANCE.heading.lower()} ({format_p(p)})"
    if verdict == WITHIN:
        return f"within {tolerance_words(spec)} ({format_p(p)})"
    return format_p(p)


def _outcome(spec: Any) -> str:
    return str(spec.decision_text)


def _gap_words(spec: Any, group: str, rate: float | None, reference: str, reference_rate: float | None,
               difference: float | None) -> tuple[str, str | None]:
    """'Male favoured by 14 points' (or 'no gap'), and the favoured group."""
    who = favoured(spec, group, rate, reference, reference_rate)
    if who is None or difference is None:
        return "no gap", None
    return f"{who} favoured by {points(difference)}", who


def four_fifths_words(judgement: Judgement, group: str, k: int, n: int, reference: str, rk: int, rn: int,
                      verdict: Verdict | None, detectable: float | None = None) -> str:
    """The committee's question for one comparison, in a clause: '' when neither share is under four-fifths of
    the other; else which one is, its impact ratio, the favourable decisions it lacks (the shortfall), and, when
    chance cannot be ruled out, the smallest gap the data could have detected ("; below four-fifths ...").

    Read on the favourable counts, with the one exact test (:meth:`Judgement.below_four_fifths`)."""
    from luskin_core.stats.uniform import shortfall

    lower = judgement.four_fifths_lower(k, n, rk, rn)
    if lower is None:
        return ""
    if lower == "group":
        low, lk, ln, high, hk, hn = group, k, n, reference, rk, rn
    else:
        low, lk, ln, high, hk, hn = reference, rk, rn, group, k, n
    fav, ref_fav = judgement.favourable(lk, ln), judgement.favourable(hk, hn)
    ratio = (fav / ln) / (ref_fav / hn)
    need = shortfall(fav, ln, ref_fav, hn) or 0
    what = "favourable decision" if judgement.adverse else "selection"
    text = (f"; {low}'s impact ratio of {ratio:.2f} is below four-fifths of {high}'s (the EEOC rule of thumb): "
            f"{need:,} more {what}{'' if need == 1 else 's'} of {low} would reach it")
    if verdict in (CHANCE, WITHIN) and detectable is not None:
        text += f"; with these numbers only a gap of {points(detectable)} or more could be detected (80% power)"
    elif verdict in (CHANCE, WITHIN):
        text += "; with these numbers no gap could be detected with 80% power"
    return text


def _comparison_fifths(judgement: Judgement, c: Comparison) -> str:
    """:func:`four_fifths_words` of one comparison (its counts, verdict and detectable difference)."""
    mdd = None if c.uniform is None else c.uniform.minimum_detectable_difference
    return four_fifths_words(judgement, c.group, c.positives, c.n, c.reference, c.reference_positives,
                             c.reference_n, c.verdict, mdd)


def _pooled_fifths(judgement: Judgement, pc: PooledComparison, verdict: Verdict | None) -> str:
    """:func:`four_fifths_words` of a group's overall (marginal) shares."""
    if pc.marginal_rate is None or pc.reference_marginal_rate is None:
        return ""
    from luskin_core.stats.power import minimum_detectable_difference

    k, rk = round(pc.marginal_rate * pc.n), round(pc.reference_marginal_rate * pc.reference_n)
    mdd = float(minimum_detectable_difference(pc.n, pc.reference_n,
                                              judgement.favourable_share(pc.reference_marginal_rate)))
    return four_fifths_words(judgement, pc.group, k, pc.n, pc.reference, rk, pc.reference_n, verdict,
                             mdd if math.isfinite(mdd) else None)


# ------------------------------------------------------------------------------------------
# The rule
# ------------------------------------------------------------------------------------------
def _overall_verdict(judgement: Judgement, pc: PooledComparison, comparisons: Sequence[Comparison],
                     several: bool) -> Verdict | None:
    """The overall comparison's verdict: the single cell's own, or judged like a cell when there are parts.

    The overall p-value is not adjusted (one comparison per group, read beside the cells' own verdicts).
    """
    if not several:
        mine = [c for c in comparisons if c.group == pc.group and not c.is_reference]
        return mine[0].verdict if mine else None
    if pc.marginal_difference is None:
        return None
    within = judgement.within_estimate(pc.marginal_difference, judgement.favourable_share(pc.marginal_rate),
                                       judgement.favourable_share(pc.reference_marginal_rate))
    return judgement.verdict(within, pc.marginal_p_value, too_few=judgement.too_few(pc.n, pc.reference_n))


def _overall(result: Any, several: bool) -> list[Finding]:
    spec = result.spec
    pooled = [p for p in result.pooled if p.marginal_difference is not None]
    if not pooled:
        return []
    pooled.sort(key=lambda p: -abs(p.marginal_difference or 0.0))
    top = pooled[0]
    verdict = _overall_verdict(result.judgement, top, result.comparisons, several)
    gap, who = _gap_words(spec, top.group, top.marginal_rate, top.reference, top.reference_marginal_rate,
                          top.marginal_difference)
    judged = _judgement(spec, verdict, top.marginal_p_value)
    mine = [c for c in result.comparisons if c.group == top.group and not c.is_reference]
    fifths = _comparison_fifths(result.judgement, mine[0]) if not several and mine else \
        _pooled_fifths(result.judgement, top, verdict)
    sentence = (f"Overall, {_outcome(spec)} for {share(top.marginal_rate)} of {top.group} and "
                f"{share(top.reference_marginal_rate)} of {top.reference}: "
                + (f"{gap}, {judged}{fifths}." if who else f"no gap ({format_p(top.marginal_p_value)}){fifths}."))
    if verdict == TOO_FEW:
        sentence = sentence[:-1] + f"; with fewer than {spec.min_group_size:,} rows in a group, too few to judge."
    if len(pooled) > 1:
        beyond = [p for p in pooled[1:] if _overall_verdict(result.judgement, p, result.comparisons, several) == BEYOND]
        others = len(pooled) - 1
        if beyond:
            names = ", ".join(p.group for p in beyond[:4]) + (" and others" if len(beyond) > 4 else "")
            sentence += (f" This is the largest of {len(pooled)} overall gaps with {top.reference}; "
                         f"{len(beyond)} of the other {others} are also beyond {tolerance_words(spec)} ({names}).")
        else:
            sentence += (f" This is the largest of {len(pooled)} overall gaps with {top.reference}; none of the other "
                         f"{others} is beyond {tolerance_words(spec)} and not due to chance.")
    return [Finding(OVERALL, sentence, top.group, top.reference, None, who, top.marginal_difference)]


def _within(result: Any) -> list[Finding]:
    spec = result.spec
    _, parts = part_nouns(spec)
    out = []
    for pc in sorted(result.pooled, key=lambda p: -abs(p.marginal_difference or 0.0))[:3]:
        if pc.mh_odds_ratio is None or pc.cmh_p_value is None:
            out.append(Finding(WITHIN_PARTS, f"Within the {parts}, {pc.group} and {pc.reference} cannot be pooled "
                                             "(no part holds both groups with both outcomes).", pc.group, pc.reference))
            continue
        ci = ""
        if pc.mh_ci_low is not None and pc.mh_ci_high is not None:
            ci = f", 95% CI {pc.mh_ci_low:.2f} to {pc.mh_ci_high:.2f}"
        pooled = f"pooled odds ratio {pc.mh_odds_ratio:.2f}{ci}, {format_p(pc.cmh_p_value)}"
        names = f"{pc.group} and {pc.reference}" if len(result.pooled) > 1 else "the groups"
        if not result.judgement.significant(pc.cmh_p_value):
            sentence = f"Within {parts}, no gap between {names} ({pooled})"
            who = None
            if pc.simpson:
                sentence += (f": the overall gap comes from which {parts} each group is in; inside them no gap is "
                             "shown beyond chance (Simpson's paradox)")
        else:
            # An odds ratio above 1: the group's odds of the counted outcome are higher than the reference's.
            higher = pc.group if pc.mh_odds_ratio > 1 else pc.reference
            lower = pc.reference if higher == pc.group else pc.group
            who = lower if adverse(spec) else higher
            over = f" over {lower if who == higher else higher}" if len(result.pooled) > 1 else ""
            sentence = f"Within {parts}, {who} favoured{over} ({pooled})"
            overall_who = favoured(spec, pc.group, pc.marginal_rate, pc.reference, pc.reference_marginal_rate)
            if pc.simpson and overall_who is not None and overall_who != who:
                sentence += ": the opposite of the overall gap (Simpson's paradox)"
            else:
                sentence += ": the gap holds within them"
        sentence += "."
        notes: list[str] = []
        if result.judgement.significant(pc.breslow_day_p_value):
            notes.append(f"The gap differs from one {part_nouns(spec)[0]} to another (Breslow-Day-Tarone "
                         f"{format_p(pc.breslow_day_p_value)}): read them one by one.")
        out.append(Finding(WITHIN_PARTS, " ".join([sentence, *notes]), pc.group, pc.reference, None, who,
                           pc.weighted_difference))
    return out


def _beyond(result: Any, several: bool, said: Finding | None) -> list[Finding]:
    spec = result.spec
    items = [c for c in result.comparisons if not c.is_reference and c.verdict == BEYOND and c.difference is not None]
    if not several and said is not None:
        items = [c for c in items if c.group != said.group]
    items.sort(key=lambda c: -abs(c.difference or 0.0))
    out = []
    for c in items:
        who = favoured(spec, c.group, c.rate, c.reference, c.reference_rate)
        where = f"In {part_name(spec, c.cell)}, " if several else ""
        sentence = (f"{where}{who} favoured: {_outcome(spec)} for {share(c.rate)} of {c.group} and "
                    f"{share(c.reference_rate)} of {c.reference}, a gap of {points(c.difference or 0.0)} "
                    f"({format_p(c.p_adjusted if c.p_adjusted is not None else c.p_value)})"
                    f"{_comparison_fifths(result.judgement, c)}.")
        out.append(Finding(BEYOND_PART, sentence[0].upper() + sentence[1:], c.group, c.reference,
                           c.cell if several else None, who, c.difference))
    return out


def _listed(names: Sequence[str], limit: int = 6) -> str:
    names = list(dict.fromkeys(names))
    if len(names) <= limit:
        return ", ".join(names)
    return ", ".join(names[:limit]) + f" and {len(names) - limit} more"


def _rest(result: Any, several: bool, said: Finding | None) -> list[Finding]:
    """The comparisons not beyond the bar, one finding per verdict (within, chance, too few)."""
    spec = result.spec
    rest = [c for c in result.comparisons if not c.is_reference and c.verdict != BEYOND]
    if not several and said is not None:
        rest = [c for c in rest if c.group != said.group]
    out = []
    for verdict in (CHANCE, WITHIN, TOO_FEW):
        mine = [c for c in rest if c.verdict == verdict]
        if not mine:
            continue
        where = _rest_where(result, mine, verdict, several, said)
        fifths = _rest_fifths(result, mine, several)
        if verdict == WITHIN:
            sentence = f"{where}, {under_words(spec)}{fifths}."
        elif verdict == CHANCE:
            sentence = f"{where}, the gap is beyond {tolerance_words(spec)} but {CHANCE.heading.lower()}{fifths}."
        else:
            sentence = f"{where}, {TOO_FEW.mark} (fewer than {spec.min_group_size:,} in a group){fifths}."
        out.append(Finding(REST, sentence))
    return out


def _rest_where(result: Any, mine: list[Any], verdict: Any, several: bool, said: Finding | None) -> str:
    """Who the finding is about: the cells of one group, the comparisons within parts, or the groups."""
    spec = result.spec
    part, parts = part_nouns(spec)
    other = "other " if verdict == WITHIN and any(c.verdict == BEYOND for c in result.comparisons) else ""
    if several and len(result.pooled) <= 1:
        names = [str(c.cell).split(" = ", 1)[-1] if spec.cell_mode == "strata" and len(spec.strata) == 1
                 else str(c.cell) for c in mine]
        noun = part if len(mine) == 1 else parts
        return f"In the {other}{len(mine)} {noun} ({_listed(names)})" if len(mine) > 1 else \
            f"In {part_name(spec, mine[0].cell)}"
    if several:
        listed = [f"{c.group} in {part_name(spec, c.cell)}" for c in mine]
        if len(mine) == 1:
            return f"For {listed[0]}"
        return (f"In {len(mine)} {other}comparisons of a group "
                f"with {result.reference} within {'an' if part[:1] in 'aeiou' else 'a'} {part}"
                + (f" ({_listed(listed)})" if len(mine) <= 3 else ""))
    return (f"For {mine[0].group}" if len(mine) == 1 else
            f"For {'the other ' if said is not None else ''}{len(mine)} groups ({_listed([c.group for c in mine])})")


def _rest_fifths(result: Any, mine: list[Any], several: bool) -> str:
    """The four-fifths words: the one comparison's, or which of several are below four-fifths."""
    if len(mine) == 1:
        return _comparison_fifths(result.judgement, mine[0])
    spec = result.spec
    below = []
    for c in mine:   # the side below four-fifths of the other, which may be the reference
        lower = result.judgement.four_fifths_lower(c.positives, c.n, c.reference_positives, c.reference_n)
        if lower is not None:
            name = c.group if lower == "group" else f"{c.reference} (against {c.group})"
            below.append(name if not several else f"{name} in {part_name(spec, c.cell)}")
    return "" if not below else f"; below four-fifths: {_listed(below)}"


def _simpson_lead(result: Any) -> Finding | None:
    """When the gap within the parts contradicts the overall one (Simpson's paradox), the finding said first.

    It says which way the pooled within-part result leans, by how much and how sure, then where the overall
    gap comes from: "Within departments, decision is admitted slightly more often for Female than for Male
    (pooled odds ratio 1.11, 95% CI 0.94 to 1.30, p = 0.217: could be chance): the overall gap of 14 points
    favouring Male comes from which departments each group is in, not from different treatment within them
    (Simpson's paradox)."
    """
    spec = result.spec
    pooled = [p for p in result.pooled if p.simpson and p.mh_odds_ratio is not None and p.cmh_p_value is not None
              and p.marginal_difference is not None]
    if not pooled:
        return None
    pc = max(pooled, key=lambda p: abs(p.marginal_difference or 0.0))
    _, parts = part_nouns(spec)
    overall_who = favoured(spec, pc.group, pc.marginal_rate, pc.reference, pc.reference_marginal_rate)
    ci = "" if pc.mh_ci_low is None or pc.mh_ci_high is None else f", 95% CI {pc.mh_ci_low:.2f} to {pc.mh_ci_high:.2f}"
    sure = bool(result.judgement.significant(pc.cmh_p_value))
    numbers = f"pooled odds ratio {pc.mh_odds_ratio:.2f}{ci}, {format_p(pc.cmh_p_value)}"
    if not sure:
        numbers += ": could be chance"
    if pc.mh_odds_ratio == 1:
        lean = f"{_outcome(spec)} as often for {pc.group} as for {pc.reference}"
        who = None
    else:
        higher = pc.group if pc.mh_odds_ratio > 1 else pc.reference
        lower = pc.reference if higher == pc.group else pc.group
        lean = f"{_outcome(spec)} {'' if sure else 'slightly '}more often for {higher} than for {lower}"
        who = lower if adverse(spec) else higher
    gap = "" if overall_who is None else f" of {points(abs(pc.marginal_difference or 0.0))} favouring {overall_who}"
    if sure and who is not None:
        # A significant gap inside the parts is different treatment inside them: said as such, never denied.
        sentence = (f"Within {parts}, {lean} ({numbers}): {who} is favoured inside them, the opposite of the overall "
                    f"gap{gap}, which comes from which {parts} each group is in (Simpson's paradox).")
    elif pc.cells_beyond:
        sentence = (f"Within {parts}, {lean} ({numbers}): the overall gap{gap} comes from which {parts} each group "
                    f"is in, though in {pc.cells_beyond} of them the gap exceeds the tolerance beyond chance "
                    "(Simpson's paradox).")
    else:
        sentence = (f"Within {parts}, {lean} ({numbers}): the overall gap{gap} comes from which {parts} each group "
                    "is in; inside them no gap is shown beyond chance (Simpson's paradox).")
    if result.judgement.significant(pc.breslow_day_p_value):
        sentence += (f" The gap differs from one {part_nouns(spec)[0]} to another (Breslow-Day-Tarone "
                     f"{format_p(pc.breslow_day_p_value)}): read them one by one.")
    return Finding(WITHIN_PARTS, sentence, pc.group, pc.reference, None, who, pc.weighted_difference)


def findings(result: Any) -> Findings:
    """The audit's findings in the order of the module's rule (see the module docstring).

    When the gap within the parts contradicts the overall one (Simpson's paradox), that is said first, in
    plain words and with the way the within-part result leans; the overall gap follows.
    """
    several = len(result.cell_names) > 1
    known = result.of_known_groups()
    items = _overall(known, several)
    said = items[0] if items else None
    lead = _simpson_lead(known) if several else None
    if lead is not None:
        items = [lead, *items]
    if several:
        items += [f for f in _within(known) if lead is None or f.group != lead.group]
    items += _beyond(known, several, said)
    items += _rest(known, several, said)
    items += _unknown(result)
    return Findings(tuple(items))


def _unknown(result: Any) -> list[Finding]:
    """The groups of unknown category, said last and apart: their overall shares, not a finding about a group."""
    spec = result.spec
    unknown = list(result.unknown_groups)
    missing = _not_found(result)
    if not unknown:
        return missing
    room = 120
    subject = unknown_groups_words(unknown, spec, room)
    pooled = {p.group: p for p in result.pooled}
    shares = [f"{share(pooled[g].marginal_rate)} of {g}" for g in unknown
              if g in pooled and pooled[g].marginal_rate is not None]
    reference_rate = next((p.reference_marginal_rate for p in result.pooled if p.reference_marginal_rate is not None),
                          None)
    numbers = ("" if not shares or reference_rate is None or sum(map(len, unknown)) > room else
               f" ({_outcome(spec)} for {', '.join(shares)}, against {share(reference_rate)} of {result.reference})")
    one = len(unknown) == 1
    bounds = ", and the bounds over the unknowns say how far they could move each gap" if len(spec.group_by) == 1 else ""
    sentence = (f"{subject} shown apart and not counted above{numbers}: "
                f"{'its' if one else 'their'} members belong to the groups compared{bounds}.")
    return [Finding(UNKNOWN_GROUPS, sentence), *missing]


def _not_found(result: Any) -> list[Finding]:
    """Values named "not known" that no group holds (a typo, or another file's code): said, since they set nothing
    apart and the user may believe they did."""
    values = list(result.judgement.unknown_not_found)
    if not values:
        return []
    named = ", ".join(f"'{v}'" for v in values[:5]) + (f" and {len(values) - 5:,} more" if len(values) > 5 else "")
    one = len(values) == 1
    protected = result.spec.protected
    held = (f"{'is not a value' if one else 'are not values'} of '{protected.column}'"
            if result.judgement.condition and protected is not None else f"{'is' if one else 'are'} held by no group")
    return [Finding(UNKNOWN_GROUPS, f"{'A value' if one else 'Values'} named as meaning 'not known' ({named}) "
                                    f"{held}, so nothing was set apart because of "
                                    f"{'it' if one else 'them'}: check {'its' if one else 'their'} spelling.")]


__all__ = ["BEYOND_PART", "KINDS", "OVERALL", "REST", "UNKNOWN_GROUPS", "WITHIN_PARTS", "Finding", "Findings", "adverse", "favoured",
           "findings", "part_name", "part_nouns"]
