"""The words of the amount audit (:mod:`luskin_core.analyses.amounts`): its report section (the one view the command
line prints as text and the page draws) and its slide.

Every number is written by :mod:`luskin_core.formatting` (amounts in their own units with thousands separators,
never in scientific notation; shares as percentages; p-values in the one spelling); every verdict is the
result's, decided by its :class:`~luskin_core.stats.judgement.Judgement`. No user-supplied text is rendered as
Markdown or HTML here: the report's template escapes every cell and sentence.
"""

from __future__ import annotations

from typing import Any

from luskin_core.formatting import (
    AMOUNT,
    AMOUNT_GAP,
    COUNT,
    P_VALUE,
    SHARE,
    amount_digits,
    count_of,
    format_amount,
    format_p,
    format_percent,
)
from luskin_core.present.report_blocks import Section, Table
from luskin_core.present.slide_blocks import FINDING, Slide
from luskin_core.stats.judgement import ReferenceRule
from luskin_core.stats.verdict import Verdict


def _digits(result: Any) -> int:
    return amount_digits([r.comparison.reference_mean for r in result.overall])


def _money(result: Any, x: float | None, *, signed: bool = False) -> str:
    return format_amount(x, _digits(result), signed=signed)


def _share_interval(pair: Any) -> str:
    if pair is None or pair[0] is None or pair[1] is None:
        return "n/a"
    return f"{format_percent(pair[0])} to {format_percent(pair[1])}"


def _where(cell: str) -> str:
    return f" in {cell}" if cell else ""


def bar_words(result: Any) -> str:
    """The bar in a phrase: 'the 5% tolerance (of the reference's mean and median)'."""
    j = result.judgement
    if j.metric == "ratio":
        return f"the {j.ratio_threshold:g} ratio threshold (each mean and median against the reference's)"
    return f"the {format_percent(j.tolerance, 0)} tolerance (a gap of at most that share of the reference's mean and median)"


def _than(value: float | None, reference: float | None) -> str:
    """'35.4% lower' / '12.0% higher' / 'the same' (the plain relative difference, whatever the direction)."""
    if value is None or reference is None or not reference > 0:
        return "not comparable as a share: the reference's is 0 or below"
    if value == reference:
        return "the same"
    rel = (value - reference) / reference
    return f"{format_percent(abs(rel))} {'higher' if rel > 0 else 'lower'}"


def reference_words(result: Any) -> str:
    """Why the reference is the reference, read on the amount: 'the group with the highest mean, the most favoured'
    (the judgement's rule; said without a bracket, as it stands beside the reference's name)."""
    j = result.judgement
    if j.reference_rule is ReferenceRule.MOST_FAVOURED:
        return f"the group with the {'lowest' if j.direction.adverse else 'highest'} mean, the most favoured"
    return j.reference_rule.words(j.direction)


def verdict_words(result: Any, row: Any) -> str:
    """What the verdict of one comparison says, with the adjusted p-values it read."""
    c = row.comparison
    ps = f"adjusted {format_p(c.mean_p_adjusted)} for the means, {format_p(c.median_p_adjusted)} for the medians"
    verdict = row.verdict
    if verdict is Verdict.TOO_FEW:
        return (f"not judged: fewer than {result.judgement.min_group_size:,} rows in the group or the reference "
                "(or no gap that is a share)")
    if verdict is Verdict.WITHIN:
        return f"within {bar_words(result)}"
    if verdict is Verdict.BEYOND:
        return f"beyond {bar_words(result)}, not chance ({ps})"
    return f"beyond {bar_words(result)}, but it could be chance ({ps})"


def comparison_sentence(result: Any, row: Any) -> str:
    """One group against the reference, in a sentence."""
    c = row.comparison
    unknown = " (a group of unknown category: shown, not counted in the headline)" if row.unknown else ""
    return (f"{c.group}{_where(row.cell)}{unknown}: mean {_money(result, c.mean)} against {_money(result, c.reference_mean)} "
            f"for {result.reference} ({_than(c.mean, c.reference_mean)}); median {_money(result, c.median)} against "
            f"{_money(result, c.reference_median)} ({_than(c.median, c.reference_median)}); "
            f"{verdict_words(result, row)}.")


def headline(result: Any) -> str:
    """The first sentence a committee reads."""
    judged = [r for r in result.counted]
    what = f"'{result.outcome}'"
    if not judged:
        return (f"No gap in {what} could be judged: every group or the reference {result.reference} has fewer than "
                f"{result.judgement.min_group_size:,} rows.")
    beyond = [r for r in judged if r.verdict is Verdict.BEYOND]
    chance = [r for r in judged if r.verdict is Verdict.CHANCE]
    if not beyond and not chance:
        return (f"Every judged gap in {what} against {result.reference} is within {bar_words(result)} "
                f"({count_of(len(judged), 'comparison')}).")
    first = max(beyond or chance, key=lambda r: abs(r.comparison.mean_gap_share or 0.0))
    c = first.comparison
    lead = (f"{count_of(len(beyond), 'gap')} in {what} beyond {bar_words(result)} and not chance"
            if beyond else f"{count_of(len(chance), 'gap')} in {what} beyond the tolerance that could be chance")
    return (f"{lead}; the largest: {c.group}{_where(first.cell)}, mean {_money(result, c.mean)} against "
            f"{_money(result, c.reference_mean)} for {result.reference} (a gap of {format_percent(c.mean_gap_share)} "
            f"of the reference's mean; of its median {format_percent(c.median_gap_share)}).")


def strata_sentences(result: Any) -> list[str]:
    """The honest summary across strata: the gap inside the same strata beside the overall one, the strata beyond
    the tolerance and those at it or more."""
    out = []
    cells = len(result.cells)
    for s in result.strata:
        w = s.within
        if w.share is None:
            out.append(f"{s.group}: no stratum has both it and {result.reference} with 2 rows or more, so no gap "
                       "inside the same strata.")
            continue
        # Any amount, not only pay: a sentence's length or a price is "higher", never "paid more".
        text = (f"{s.group} inside the same strata ({w.strata_used} of {cells}): {format_percent(abs(w.share))} "
                f"{'lower' if (w.share > 0) != result.adverse else 'higher'} than at {result.reference}'s mean of each "
                f"stratum (95% interval {_share_interval((w.low, w.high))}; adjusted {format_p(s.p_adjusted)}): "
                f"{s.verdict.words}")
        if s.overall_share is not None:
            text += (f". Overall the gap is {format_percent(s.overall_share)} of the reference's mean; the difference "
                     f"is which strata the group is in, not its '{result.outcome}' inside them")
            if (s.overall_share > 0) != (w.share > 0) and abs(w.share) > result.judgement.tolerance:
                text += ("; the two point opposite ways (Simpson's paradox): read the strata, not the overall gap")
        if w.rows_left_out:
            text += f"; {count_of(w.rows_left_out, 'row')} of the group in strata without a comparison left out"
        out.append(text + ".")
        beyond = ", ".join(s.beyond_cells) if s.beyond_cells else "none"
        at = ", ".join(s.at_tolerance) if s.at_tolerance else "none"
        out.append(f"{s.group}: beyond the tolerance and not chance in {len(s.beyond_cells)} of {s.judged_cells} judged "
                   f"strata ({beyond}); a gap of {format_percent(result.judgement.tolerance, 0)} or more of the "
                   f"reference's mean or median, either way, in: {at}.")
    return out


def awkward_sentences(result: Any) -> list[str]:
    """What the amounts themselves do to the numbers, in plain words."""
    out = []
    for a in result.awkward:
        where = f"{a.group}{_where(a.cell)}"
        if a.kind == "negative":
            out.append(f"{where} has amounts below 0 (the smallest {_money(result, a.value)}): they are counted as "
                       "they are and lower its mean; a share of a mean near 0 means little.")
        elif a.kind == "not_above_zero":
            out.append(f"{count_of(a.count, 'row')} of {where} {'is' if a.count == 1 else 'are'} 0 or below "
                       "(not receiving it): counted in its mean and median, as the Directive counts every worker.")
        elif a.kind == "huge":
            without = (f" from {_money(result, a.mean_without)} without them to {_money(result, a.mean)}"
                       if a.mean_without is not None else f" to {_money(result, a.mean)}")
            out.append(f"{count_of(a.count, 'amount')} of {where} {'is' if a.count == 1 else 'are'} 20 times its "
                       f"median or more (the largest {_money(result, a.value)}): they raise its mean{without}; its "
                       f"median stands at {_money(result, a.median)}. Read the median gap beside the mean's.")
        elif a.kind == "all_equal":
            out.append(f"Every amount of {where} is {_money(result, a.value)}: no spread, so its mean and median "
                       "are that value and a test against it rests on the other group's spread alone.")
        elif a.kind == "one_row":
            out.append(f"{where} has one row ({_money(result, a.value)}): no interval and no test; shown, not judged.")
        elif a.kind == "small":
            out.append(f"{where} has {a.count} rows: with skewed amounts (pay most often is) the mean's interval "
                       "and Welch's test cover less than 95% at this size (about 87% at 10 rows and 92% at 30 in "
                       "simulations of skewed pay); the median's interval and test hold theirs.")
        elif a.kind == "few_for_median":
            out.append(f"{where} has {a.count} rows: below 6 no median interval reaches 95% whatever the data, so "
                       "its median gap is not tested.")
    return out


def method_sentences(result: Any) -> list[str]:
    j = result.judgement
    tests = sum(1 for r in result.rows for p in (r.comparison.mean_p_adjusted, r.comparison.median_p_adjusted)
                if p is not None)
    return [
        ("Means: Student's t interval; the gap of means by Welch's t-test (unequal variances) and its interval; the "
        "gap as a share of the reference's mean with Fieller's interval."),
        ("Medians: the distribution-free order-statistic interval (exact binomial ranks; none below 6 rows); the gap "
        "of medians by the Price-Bonett test and interval (order-statistic standard errors, valid with ties and "
        "skew); its share of the reference's median by the Price-Bonett ratio of medians."),
        ("The gap share is (group - reference) / reference, positive when the group's amount is higher (higher is "
         "worse here: a price charged, a sentence's length)." if result.adverse else
         "The gap share is (reference - group) / reference, positive when the group's amount is lower (for pay, "
         "the EU Pay Transparency Directive's pay gap)."),
        (f"{count_of(tests, 'test')} (every mean and median test of the judged comparisons) adjusted together by "
        f"{ {'holm': 'Holm', 'bh': 'Benjamini-Hochberg', 'none': 'no correction'}[j.correction] }; a verdict reads "
        f"{bar_words(result)} on both gaps and an adjusted p-value below {j.alpha:g}."),
    ]


def _amount_cell(result: Any, x: float | None, *, gap: bool = False) -> str:
    """An amount in a table cell (a gap signed): the formatting's AMOUNT or AMOUNT_GAP with the table's decimals."""
    return (AMOUNT_GAP if gap else AMOUNT).at(x, _digits(result))


def _range(kind: Any, pair: Any, digits: int) -> str:
    """An interval in its own column, "60,638 to 66,094": each bound as the column's kind writes it."""
    if pair is None or pair[0] is None or pair[1] is None:
        return "n/a"
    return f"{kind.at(pair[0], digits)} to {kind.at(pair[1], digits)}"


def _row_cells(result: Any, row: Any, with_cell: bool) -> tuple[str, ...]:
    """One group's row: every number as its kind of cell writes it (luskin_core.formatting.CELL_KINDS), the
    unit in the heading (shares in %); amounts with the table's decimals."""
    c, s = row.comparison, row.comparison.summary
    ref = c.is_reference
    digits, share = _digits(result), SHARE.digits
    cells = (row.cell or "All rows",) if with_cell else ()
    return cells + (
        str(c.group), COUNT.text(s.n), _amount_cell(result, s.mean), _range(AMOUNT, s.mean_interval(), digits),
        _amount_cell(result, s.median), _range(AMOUNT, s.median_interval(), digits),
        "" if ref else _amount_cell(result, c.mean_gap.estimate, gap=True),
        "" if ref else SHARE.text(c.mean_gap_share), "" if ref else _range(SHARE, c.mean_share_interval, share),
        "" if ref else SHARE.text(c.median_gap_share), "" if ref else _range(SHARE, c.median_share_interval, share),
        "" if ref else P_VALUE.text(c.mean_p_adjusted), "" if ref else P_VALUE.text(c.median_p_adjusted),
        str(row.verdict.words) + (" (unknown category)" if row.unknown else ""))


HEADER = ("Group", COUNT.heading("Rows"), AMOUNT.heading("Mean"), AMOUNT.heading("Mean 95% interval"),
          AMOUNT.heading("Median"), AMOUNT.heading("Median 95% interval"), AMOUNT_GAP.heading("Mean gap"),
          SHARE.heading("Mean gap share"), SHARE.heading("Mean gap share 95% interval"),
          SHARE.heading("Median gap share"), SHARE.heading("Median gap share 95% interval"),
          P_VALUE.heading("Adjusted p (means)"), P_VALUE.heading("Adjusted p (medians)"),
          "Verdict")   # each heading once: the page's grid needs it; the unit in the heading, the number in the cell


def section(result: Any, context: Any = None) -> Section:
    """The amount audit's report section (the command line's text and the page's view too)."""
    out = Section("amounts", f"Amounts: '{result.outcome}' by group")
    out.add("lead", text=headline(result))
    out.add("settings", items=[
        ("Amount", result.outcome), ("Direction", "higher is worse (adverse)" if result.adverse else "higher is better"),
        ("Reference", f"{result.reference}: {reference_words(result)}"),
        ("Bar", bar_words(result)), ("Rows", f"{result.n_rows:,}"),
        ("Left out", ", ".join(f"{reason}: {n:,}" for reason, n in result.excluded.items() if n) or "none")])
    sentences = [comparison_sentence(result, r) for r in result.overall if not r.comparison.is_reference]
    out.add("sentences", items=sentences, title="Each group against the reference, every row together")
    out.table(Table(f"'{result.outcome}' per group against {result.reference} (gap shares: of the reference's; "
                    "positive: the group fares worse)", HEADER,
                    tuple(_row_cells(result, r, False) for r in result.overall), wide=True))
    if result.strata:
        out.add("sentences", items=strata_sentences(result), title="Across the strata")
    if result.by_cell:
        out.table(Table(f"'{result.outcome}' per group in each cell", ("Cell", *HEADER),
                        tuple(_row_cells(result, r, True) for r in result.by_cell), wide=True))
    out.warnings(awkward_sentences(result), "The amounts themselves")
    out.add("caveats", items=method_sentences(result), title="How the numbers are made")
    return out


def slides(result: Any, context: Any = None) -> list[Slide]:
    """One slide: the headline and the largest gaps, in words."""
    rows = sorted((r for r in result.overall if not r.comparison.is_reference and not r.unknown),
                  key=lambda r: -abs(r.comparison.mean_gap_share or 0.0))
    said = (headline(result), *(comparison_sentence(result, r) for r in rows[:2]),
            *(strata_sentences(result)[:1]))
    return [Slide(f"Amounts: {result.outcome}", tuple(said), None, FINDING, "amounts")]


__all__ = ["awkward_sentences", "bar_words", "comparison_sentence", "headline", "section", "slides",
           "strata_sentences"]
