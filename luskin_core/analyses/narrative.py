"""Every sentence an audit says, written in one place from the numbers of its records.

The statistics records (:class:`~luskin_core.stats.comparisons.Comparison`,
:class:`~luskin_core.stats.comparisons.PooledComparison`, :class:`~luskin_core.analyses.audit.AuditResult`)
hold numbers and verdicts; the words that say them live here, with every number written by
:mod:`luskin_core.formatting` (a share never reads as 0% or 100% unless it is exactly that, a
p-value is "p < 0.001" or "p = 0.034" in a sentence). The page, the command line, the JSON, the
report and the slides all read these sentences, so one comparison reads the same on each.

Layer: analyses (beside :mod:`luskin_core.analyses.audit` and :mod:`luskin_core.analyses.findings`). It reads the
comparisons' constants and records and the formatters; nothing that presents (report, plots,
slides) is imported here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from luskin_core.counting.plan import CROSS
from luskin_core.formatting import format_p, format_percent, points
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.stats.comparisons import CRITERION_NAMES, Comparison, PooledComparison
from luskin_core.stats.judgement import Judgement
from luskin_core.stats.shrinkage import SMALL_GROUP
from luskin_core.stats.verdict import Verdict

BEYOND, CHANCE, TOO_FEW, WITHIN = Verdict.BEYOND, Verdict.CHANCE, Verdict.TOO_FEW, Verdict.WITHIN

if TYPE_CHECKING:  # the audit imports this module; the hint only
    from luskin_core.analyses.audit import AuditResult

RATE_WORDS = {"tpr": ("true positive rate", "of the rows where {outcome}, the share predicted positive"),
              "fpr": ("false positive rate", "of the rows where not {outcome}, the share predicted positive"),
              "precision": ("precision", "of the rows predicted positive, the share where {outcome}")}
RATE_ON = {"tpr": "on the true positive rate", "fpr": "on the false positive rate", "precision": "on precision"}


# ------------------------------------------------------------------------------------------
# Words for the parts of a sentence
# ------------------------------------------------------------------------------------------
def share(x: float | None) -> str:
    """A share in a sentence: a whole percentage, never 0% or 100% unless exactly so (99.6% stays 99.6%)."""
    return format_percent(x, 0)


def group_words(label: str, spec: AuditSpec) -> str:
    """A group's label in a sentence: a number gets its column ("age = 0", "sex = 1 × race = 2")."""
    if not spec.group_by:
        return label
    parts = label.split(CROSS)
    if len(parts) != len(spec.group_by):
        return label
    return CROSS.join(f"{column} = {part}" if _is_number(part) else part for column, part in zip(spec.group_by, parts))


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def tolerance_words(spec: Any) -> str:
    """The bar a gap is judged against: "the 5-point tolerance" or "the 0.8 impact-ratio threshold"."""
    if spec.metric == "ratio":
        return f"the {spec.ratio_threshold:g} impact-ratio threshold"
    return f"the {tolerance_points(spec)}-point tolerance"


def tolerance_points(spec: Any) -> str:
    """The tolerance in points exactly as set (2.5 stays 2.5: a bar is not rounded)."""
    return f"{100 * float(spec.tolerance):g}"


def under_words(spec: Any) -> str:
    """What "within the tolerance" means for a gap: "the gap is under 5 points" or "the impact ratio is at least 0.8"."""
    if spec.metric == "ratio":
        return f"the impact ratio is at least {spec.ratio_threshold:g}"
    value = tolerance_points(spec)
    return f"the gap is under {value} point" + ("" if value == "1" else "s")


def _rows_of(count: int, who: str) -> str:
    """"7 Female rows", or "7 rows of age = 0" when the group's words hold a column and its value."""
    return f"{count:,} rows of {who}" if " = " in who else f"{count:,} {who} rows"


def _where(c: Comparison, spec: AuditSpec) -> str:
    if c.cell_key is not None:
        return f"Where {c.cell}"
    if spec.population:
        return "Among all rows where " + " and ".join(str(cond) for cond in spec.population)
    return "Among all rows"


def _judged_text(c: Comparison, spec: AuditSpec, group: str, ref: str) -> str:
    """The judged error rates of a comparison in words (the criterion is not "selection")."""
    out = []
    for j in c.judged_rates:
        name, meaning = RATE_WORDS[j.name]
        gap = "" if j.difference is None else f" (a gap of {points(j.difference)})"
        out.append(f"the {name} ({meaning.format(outcome=spec.outcome_text)}) is {share(j.rate)} for {group} "
                   f"({j.positives:,} of {j.n:,}) and {share(j.reference_rate)} for {ref} "
                   f"({j.reference_positives:,} of {j.reference_n:,}){gap}")
    return " and ".join(out)


# ------------------------------------------------------------------------------------------
# One comparison, one group across cells
# ------------------------------------------------------------------------------------------
def comparison_sentence(c: Comparison, spec: AuditSpec) -> str:
    """One comparison of a group with the reference in one cell, with its verdict, in words."""
    where = _where(c, spec)
    outcome = spec.decision_text
    group, ref = group_words(c.group, spec), group_words(c.reference, spec)
    if c.is_reference:
        return (f"{where}, {outcome} for {share(c.rate)} of {group} ({c.positives:,} of {c.n:,}), the reference "
                "group.")
    if c.difference is None:
        empty = group if c.n == 0 else ref
        return f"{where}, there are no {empty} rows, so {group} cannot be compared with {ref} here (not computable)."
    error_criterion = c.criterion != "selection"
    ratio = "" if c.impact_ratio is None else f", an impact ratio of {c.impact_ratio:.2f}"
    shares = (f"{outcome} for {share(c.rate)} of {group} ({c.positives:,} of {c.n:,}) and "
              f"{share(c.reference_rate)} of {ref} ({c.reference_positives:,} of {c.reference_n:,})")
    if error_criterion:
        text = (f"{where}, {shares} (a gap of {points(c.difference)} in the share predicted positive); judged on "
                f"{CRITERION_NAMES[c.criterion]}, {_judged_text(c, spec, group, ref)}")
    else:
        text = f"{where}, {shares}: a gap of {points(c.difference)}{ratio}"
    if c.verdict == TOO_FEW:
        return text + _too_few_words(c, spec, group, ref)
    text += _verdict_words(c, spec)
    if not error_criterion and c.four_fifths is not None and spec.metric == "difference":
        text += _fifths_against_tolerance(c, spec, group, ref)
    return text


def _too_few_words(c: Comparison, spec: AuditSpec, group: str, ref: str) -> str:
    """Why a comparison is kept out of the verdict: too few rows here, or a group under the smallest share.
    No word on the tolerance (chance is still said)."""
    deciding = c.deciding
    error_criterion = c.criterion != "selection"
    p_value = c.p_value if deciding is None else deciding.p_value
    if deciding is not None and error_criterion:
        mine, theirs = deciding.n, deciding.reference_n
    else:
        mine, theirs = c.n, c.reference_n
    small = min(mine, theirs)
    who = group if mine <= theirs else ref
    rows = _rows_of(small, who)
    if error_criterion and deciding is not None:
        rows += f" for the {RATE_WORDS[deciding.name][0]}"
    chance = ", and it could be due to chance" if Judgement.of(spec).significant(p_value) is False else ""
    if small >= spec.min_group_size:  # set aside by the smallest share, not by the rows in this cell
        return (f"{chance} ({format_p(p_value)}). {group} is under {format_percent(spec.min_group_share)} "
                f"of all rows, so it is set aside: {TOO_FEW.mark}.")
    return (f"{chance} ({format_p(p_value)}). With {rows} here (fewer than {spec.min_group_size:,}), "
            f"there are {TOO_FEW.mark}.")


def _verdict_words(c: Comparison, spec: AuditSpec) -> str:
    """The verdict against the bar, with the p-value (and the adjusted one where the adjustment changed it)."""
    deciding = c.deciding
    error_criterion = c.criterion != "selection"
    p_value = c.p_value if deciding is None else deciding.p_value
    p_adjusted = c.p_adjusted if deciding is None else deciding.p_adjusted
    size = "within" if c.verdict == WITHIN else ("larger than" if spec.metric == "difference" else "beyond")
    adjusted = ""
    if p_adjusted is not None and p_value is not None and spec.correction != "none" and \
            abs(p_adjusted - p_value) > 1e-12:
        adjusted = f"; {format_p(p_adjusted)} after adjusting for the number of comparisons"
    gap_word = "" if not error_criterion or deciding is None else f" {RATE_ON[deciding.name]}"
    bar = tolerance_words(spec)
    if c.verdict == BEYOND:
        return f", {size} {bar}{gap_word} and not due to chance ({format_p(p_value)}{adjusted})."
    if c.verdict == WITHIN:
        return f", within {bar} ({format_p(p_value)})."
    return f", {size} {bar}{gap_word}, and it could be due to chance ({format_p(p_value)}{adjusted})."


def _fifths_against_tolerance(c: Comparison, spec: AuditSpec, group: str, ref: str) -> str:
    """Where the four-fifths rule and the tolerance disagree, which one the verdict follows. The rule reads the
    less favoured side of the pair, which may be the reference (it said "passes" of a reference at 0.72)."""
    ratio = _ratio_words(c, group, ref)
    below = Judgement.of(spec).four_fifths_lower(c.positives, c.n, c.reference_positives, c.reference_n) is not None
    if below and c.verdict == WITHIN:
        return (f" {ratio} is below four-fifths (the EEOC rule of thumb), but the gap in points is within the "
                "tolerance: with shares this small, a ratio magnifies a small difference. The verdict follows "
                "the tolerance.")
    if not below and c.verdict in (BEYOND, CHANCE):
        return (f" {ratio} passes the four-fifths rule, but the gap in points is beyond the tolerance. The "
                "verdict follows the tolerance.")
    return ""


def _ratio_words(c: Comparison, group: str, ref: str) -> str:
    """The impact ratio the four-fifths rule reads, as the subject of a sentence: the less favoured side's share
    over the other's ("Its impact ratio of 0.75"; "Male's share, 0.75 of Female's", where the reference is the
    less favoured; "Male's share, none of Female's" where one side has no favourable outcome)."""
    ratio = c.impact_ratio
    if ratio is not None and 0 < ratio <= 1:
        return f"Its impact ratio of {ratio:.2f}"
    if ratio is None or ratio == 0:
        low, high = (group, ref) if ratio == 0 else (ref, group)
        return f"{low}'s favourable share, none of {high}'s,"
    return f"{ref}'s favourable share, {1 / ratio:.2f} of {group}'s,"


def pooled_sentence(pc: PooledComparison, spec: AuditSpec, several: bool) -> str:
    """One group against the reference across every cell: overall, and (with several cells) within them."""
    outcome = spec.decision_text
    group, ref = group_words(pc.group, spec), group_words(pc.reference, spec)
    if pc.marginal_difference is None:
        return f"{group} has no rows to compare with {ref}."
    overall = (f"Overall, {outcome} for {share(pc.marginal_rate)} of {group} and {share(pc.reference_marginal_rate)} "
               f"of {ref} (a gap of {points(pc.marginal_difference)}, {format_p(pc.marginal_p_value)})")
    if not several:
        return overall + "."
    if pc.mh_odds_ratio is None and pc.strata_used > 0:
        return overall + (f"; the strata cannot be pooled into an odds ratio: in every stratum that holds both groups, "
                          f"{group} always has the outcome or {ref} never has it, so the odds cannot be compared (the "
                          "pooled odds ratio is infinite by arithmetic). Read the strata one by one.")
    if pc.mh_odds_ratio is None or pc.cmh_p_value is None:
        return overall + "; the strata cannot be pooled (no stratum holds both groups with both outcomes)."
    if pc.mh_odds_ratio == 0:
        # Degenerate: in every cell that can be pooled one side has the outcome in every row (or none of
        # its rows), so there are no odds to compare and the pooled odds ratio is 0 by arithmetic only.
        return overall + (f"; the strata cannot be pooled into an odds ratio: in every stratum that holds both groups, "
                          f"{group} never has the outcome or {ref} always has it, so the odds cannot be compared (the "
                          "pooled odds ratio is 0 by arithmetic, not an estimate). Read the strata one by one.")
    ci = ""
    if pc.mh_ci_low is not None and pc.mh_ci_high is not None:
        ci = f", 95% CI {pc.mh_ci_low:.2f} to {pc.mh_ci_high:.2f}"
    pooled = f"pooled odds ratio {pc.mh_odds_ratio:.2f}{ci}, {format_p(pc.cmh_p_value)}"
    significant = Judgement.of(spec).significant
    uneven = bool(significant(pc.breslow_day_p_value))
    cells_note = ""
    if pc.cells_beyond:
        cells_note = (f" and in {pc.cells_beyond} {'strata' if pc.cells_beyond > 1 else 'stratum'} the gap exceeds the "
                      "tolerance beyond chance")
    if pc.simpson:
        if significant(pc.cmh_p_value):
            # Different treatment inside the strata, the other way: said, never denied.
            return (f"{overall}, but within the strata the gap points the other way ({pooled}): inside them the "
                    "groups are treated differently, the opposite of the overall gap, which comes from which strata "
                    "each group falls in" + ("; read the strata one by one." if uneven or pc.cells_beyond else "."))
        if uneven or pc.cells_beyond:
            # Not "alike": the pooled effect is small, but the gap differs between cells (Berkeley's department A).
            within = ("the pooled gap within the strata could be chance, though the gap differs from stratum to stratum"
                      + cells_note)
            return (f"{overall}, but {within} ({pooled}): the overall gap comes from which strata each group "
                    "falls in; read the strata one by one.")
        return (f"{overall}, but within each stratum the rates are alike ({pooled}): the overall gap comes from which "
                "strata each group falls in; inside them no gap is shown beyond chance.")
    if significant(pc.cmh_p_value):
        return f"{overall}; the gap holds within the strata ({pooled})."
    if uneven or pc.cells_beyond:
        return (f"{overall}; pooled over the strata the difference could be chance ({pooled}), "
                f"but the gap differs from stratum to stratum{cells_note}: read the strata one by one.")
    return f"{overall}; within the strata the difference could be chance ({pooled})."


def pooled_notes(pc: PooledComparison, spec: AuditSpec, several: bool) -> tuple[str, ...]:
    """What to mind when reading the pooled view: the gap differs from cell to cell (Breslow-Day-Tarone)."""
    if several and Judgement.of(spec).significant(pc.breslow_day_p_value):
        note = (f"The gap between {group_words(pc.group, spec)} and {group_words(pc.reference, spec)} differs from "
                f"stratum to stratum (Breslow-Day-Tarone {format_p(pc.breslow_day_p_value)}): read the strata one by one rather "
                "than the pooled odds ratio.")
        return (note,)
    return ()


def sentence(c: Comparison, spec: AuditSpec) -> str:
    """One comparison in words, written on demand from its numbers; a small group's pooled share is quoted."""
    text = comparison_sentence(c, spec)
    if 0 < c.n < SMALL_GROUP and c.pooled_rate is not None and c.pooled_parent is not None:
        text += " " + small_group_words(c.n, c.rate, c.pooled_rate, c.pooled_ci_low, c.pooled_ci_high,
                                        c.pooled_parent)
    return text


def small_group_words(n: int, raw: float | None, rate: float, low: float | None, high: float | None,
                      parent: str) -> str:
    """The pooled share in words, saying why it is quoted (a small group) and toward what it is pooled."""
    toward = "the other groups in the same stratum" if parent == "all rows of the cell" else f"the rest of {parent}"
    return (f"With only {n:,} rows the raw share ({format_percent(raw, 0)}) is unsteady: partially pooled "
            f"toward {toward}, the estimate is {format_percent(rate, 0)} (95% interval {format_percent(low, 0)} "
            f"to {format_percent(high, 0)}).")


def power_words(c: Comparison, spec: AuditSpec) -> str:
    """What a comparison judged within the tolerance (or could be chance) could have seen: its power in words.

    Empty for the reference, for a verdict of beyond or too few rows, and for an empty side.
    """
    from luskin_core.stats.power import power_sentence, tolerance_drop

    if c.verdict not in (WITHIN, CHANCE) or c.n <= 0 or c.reference_n <= 0 or c.uniform is None:
        return ""
    judgement = Judgement.of(spec)
    return power_sentence(c.group, c.n, c.reference, c.reference_n, c.uniform.minimum_detectable_difference,
                          tolerance_drop(judgement, judgement.favourable_share(c.reference_rate)))


# ------------------------------------------------------------------------------------------
# The audit as a whole
# ------------------------------------------------------------------------------------------
def unknown_groups_words(groups: list[str], spec: AuditSpec, room: int) -> str:
    """The subject of a sentence about groups of unknown category, with its verb: their names where they fit in
    ``room`` characters ("Groups of unknown category (Decline to self-identify, Unknown) are"), else their count."""
    names = ", ".join(group_words(g, spec) for g in groups)
    if len(groups) == 1:
        return f"The group of unknown category ({names}) is" if len(names) <= room else \
            "One group of unknown category is"
    return f"Groups of unknown category ({names}) are" if len(names) <= room else \
        f"{len(groups):,} groups of unknown category are"


def headline(result: AuditResult) -> str:
    """The finding in one sentence: how many comparisons exceed the tolerance, and whether by chance."""
    counts = result.verdict_counts()
    judged = sum(counts.values()) - counts[TOO_FEW]
    spec = result.spec
    bar = tolerance_words(spec)
    criterion = next((c.criterion for c in result.judged), "selection")
    if criterion != "selection":
        bar += f" on {CRITERION_NAMES[criterion]}"
    reference = group_words(result.reference, spec)
    unknown = list(result.unknown_groups)
    apart = "" if not unknown else f" {unknown_groups_words(unknown, spec, 60)} shown apart, not counted."
    if not result.counted:
        if result.judged:
            return f"No comparison could be made: {reference} is the only group of known category.{apart}"
        return "No comparison could be made: there is only one group."
    if judged == 0:
        return (f"No comparison can be judged: every group or the reference has fewer than "
                f"{spec.min_group_size:,} rows in each cell.")
    parts = []
    noun = "comparison" if judged == 1 else "comparisons"
    if counts[BEYOND]:
        verb = "exceeds" if counts[BEYOND] == 1 else "exceed"
        parts.append(f"{counts[BEYOND]} of {judged} {noun} with {reference} {verb} {bar} and "
                     f"{'is' if counts[BEYOND] == 1 else 'are'} not due to chance")
    if counts[CHANCE]:
        lead = "more" if counts[BEYOND] else f"of {judged} {noun} with {reference}"
        verb = "exceeds" if counts[CHANCE] == 1 else "exceed"
        parts.append(f"{counts[CHANCE]} {lead} {verb} {'it' if counts[BEYOND] else bar} but {CHANCE.heading.lower()}")
    if not parts:
        parts.append(f"The comparison with {reference} is within {bar}" if judged == 1 else
                     f"All {judged} comparisons with {reference} are within {bar}")
    text = "; ".join(parts)
    text = text[0].upper() + text[1:]
    if counts[TOO_FEW]:
        text += f" ({counts[TOO_FEW]:,} {'has' if counts[TOO_FEW] == 1 else 'have'} {TOO_FEW.mark})"
    text += "."
    simpson = [p for p in result.simpson if p.group not in unknown]
    if simpson:  # said first: the overall gap misleads
        names = ", ".join(group_words(p.group, spec) for p in simpson)
        text = (f"For {names}, the overall gap and the gap within the strata disagree (Simpson's paradox): read "
                f"the comparison within the strata. {text}")
    return text + apart


def sentences(result: AuditResult) -> list[str]:
    """One plain sentence per finding: per cell for the paper's two classes, per group otherwise. A group of
    unknown category gets its numbers in one sentence, last, and no verdict, Simpson or power words of its own
    (the verdict, the headline and the findings leave it out: a table of unknowns 'within' or 'beyond' said
    the opposite)."""
    unknown = set(result.unknown_groups)
    apart = [p for p in result.pooled if p.group in unknown]
    return _sentences(result.of_known_groups()) + [_apart_sentence(p, result.spec) for p in apart]


def _sentences(result: AuditResult) -> list[str]:
    spec = result.spec
    several = len(result.cell_names) > 1
    if result.gaps:
        out = [g.sentence for g in result.gaps]
        if len(result.gaps) > 1:
            out += [pooled_sentence(p, spec, several) for p in result.pooled]
        out += [note for p in result.pooled for note in pooled_notes(p, spec, several)]
        return out
    out = []
    for p in result.pooled:
        if several:
            mine = [c for c in result.judged if c.group == p.group]
            judged = [c for c in mine if c.verdict != TOO_FEW]
            tail = (f" In {p.cells_beyond} of {len(judged)} strata that can be judged the gap exceeds the "
                    "tolerance beyond chance." if judged else " No stratum has enough rows to judge.")
            out.append(pooled_sentence(p, spec, several) + tail)
            out += list(pooled_notes(p, spec, several))
        else:
            out.append(sentence(result.comparison(p.group), spec))
    return out


def _apart_sentence(p: PooledComparison, spec: AuditSpec) -> str:
    """A group of unknown category: its overall share beside the reference's, and why it carries no verdict."""
    group, ref = group_words(p.group, spec), group_words(p.reference, spec)
    numbers = ("" if p.marginal_rate is None or p.reference_marginal_rate is None else
               f": {spec.decision_text} for {share(p.marginal_rate)} of {group} ({p.n:,} rows) and "
               f"{share(p.reference_marginal_rate)} of {ref}")
    return (f"{group} is of unknown category{numbers}. It is set apart, with no verdict of its own: its members "
            "belong to the groups compared.")


__all__ = ["RATE_ON", "RATE_WORDS", "comparison_sentence", "group_words", "headline", "pooled_notes",
           "pooled_sentence", "power_words", "sentence", "sentences", "share", "small_group_words", "tolerance_points",
           "tolerance_words", "under_words", "unknown_groups_words"]
