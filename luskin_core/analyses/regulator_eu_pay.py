"""The EU Pay Transparency Directive's Article 9 table (Directive (EU) 2023/970): a regulator table of pay.

What an employer reports under Article 9(1), each from the rows through the one counting path (a frame, a file,
DuckDB, PostgreSQL or Spark give the same numbers):

* (a) the gender pay gap and (c) the median gender pay gap: the amount audit of pay by sex
  (:mod:`luskin_core.analyses.amounts`): ``(men - women) / men`` of the mean and of the median, positive when
  women are paid less, with their intervals and tests;
* (b) and (d) the same for complementary or variable components (a bonus column), among the workers receiving
  one (as the UK's regulations count bonus gaps);
* (e) the share of each sex receiving them: the bonus's count table (the rows above 0, per sex);
* (f) the share of each sex in each quartile pay band: four bands of equal size, the workers ranked by pay, as the
  UK's gender pay gap regulations count them: cut at the pay's quartiles over every worker (the engine's own
  quantiles, linear interpolation), the workers paid less than, and exactly, each cut counted per sex, and those
  paid exactly a cut (a pay scale's step) split between the two bands beside it, each sex in proportion
  (:func:`quartile_boundary`);
* (g) the gap by category of workers (``--stratify``: the same work or work of equal value), and the categories
  where it is 5% or more: Article 10(1)(a)'s first condition for a joint pay assessment (with (b) the gap not
  justified by objective, gender-neutral criteria and (c) not remedied within six months, which data cannot say).

The reference is men: the group the user names with ``reference``, else a group whose label reads as men
("Male", "M", "men"), else the judgement's most favoured group (said). Verdicts beside the gaps are the amount
audit's, the one Judgement's; the Directive's 5% is read on the reported gap, whatever its p-value.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from luskin_core.formatting import amount_digits, count_of, format_amount, format_percent
from luskin_core.spec.audit_spec import AuditSpec

if TYPE_CHECKING:
    import pandas as pd

    from luskin_core.analyses.amounts import AmountAudit

THRESHOLD = 0.05   # Article 10(1)(a): a difference of at least 5% in a category of workers
_MEN = re.compile(r"^(m|male|males|man|men)$", re.IGNORECASE)


@dataclass(frozen=True)
class Band:
    """One quartile pay band: its range and its workers per sex."""

    label: str
    low: float | None
    high: float | None
    counts: dict[str, float]   # workers of each sex (a share of those tied at a boundary: see quartile_boundary)

    @property
    def total(self) -> float:
        return sum(self.counts.values())


@dataclass(frozen=True)
class EUPayOutput:
    """The Article 9 table (the regulator tables' shape: see :mod:`luskin_core.analyses.regulator_tables`)."""

    pay: AmountAudit | None
    bonus: AmountAudit | None = None
    bonus_column: str | None = None
    receiving: dict[str, tuple[int, int]] = field(default_factory=dict)   # sex -> (workers, receiving)
    bands: tuple[Band, ...] = ()
    cuts: tuple[float, ...] = ()
    reference_note: str = ""
    problem: str = ""
    bonus_note: str = ""   # why there is no bonus gap (nobody receives it, or one sex only), when a bonus was given
    anchor: str = "eu-pay"
    section_title: str = "EU Pay Transparency Directive: Article 9 pay gaps"
    sentences_title: str = "In words"

    # -- numbers ------------------------------------------------------------------------------------
    @property
    def women(self) -> list[Any]:
        """The pay comparisons of every sex but the reference's, every worker together."""
        return [] if self.pay is None else [r for r in self.pay.overall if not r.comparison.is_reference and not r.unknown]

    def _digits(self) -> int:
        return amount_digits([] if self.pay is None else [r.comparison.reference_mean for r in self.pay.overall])

    def _money(self, x: float | None, digits: int | None = None) -> str:
        return format_amount(x, self._digits() if digits is None else digits)

    def categories(self) -> list[Any]:
        """Every category's comparison of a sex with the reference."""
        return [] if self.pay is None else [r for r in self.pay.by_cell if not r.comparison.is_reference and not r.unknown]

    def at_threshold(self) -> list[Any]:
        """The categories where the mean pay gap is 5% or more either way (Article 10(1)(a))."""
        return [r for r in self.categories()
                if r.comparison.mean_gap_share is not None and abs(r.comparison.mean_gap_share) >= THRESHOLD]

    # -- the regulator table's shape ---------------------------------------------------------------
    def intro(self) -> list[str]:
        return []

    def notes(self) -> list[str]:
        out = [self.problem] if self.problem else []
        if self.reference_note:
            out.append(self.reference_note)
        if self.bonus_note:
            out.append(self.bonus_note)
        if self.pay is not None:
            out.append("Article 9 asks for gross hourly pay: the gaps are of the amount as given; give an hourly "
                       "amount for the Directive's figures.")
        return out

    def metrics(self) -> list[tuple[str, str]]:
        if self.pay is None:
            return []
        first = self.women[0].comparison if self.women else None
        out = [("Workers", f"{self.pay.n_rows:,}")]
        if first is not None:
            out += [("Mean pay gap", format_percent(first.mean_gap_share)),
                    ("Median pay gap", format_percent(first.median_gap_share))]
        if self.pay.by_cell:
            out.append(("Categories at 5% or more", f"{len(self.at_threshold())} of {len(self.pay.cells)}"))
        return out

    def settings(self, data_label: str = "") -> list[tuple[str, str]]:
        items = [("Data", data_label)] if data_label else []
        if self.pay is not None:
            items += [("Pay", self.pay.outcome), ("Sex", ", ".join(self.pay.groups)),
                      ("Reference (men)", self.pay.reference),
                      ("Bonus", self.bonus_column or "none given"),
                      ("Gap", "(reference - group) / reference, positive when the group is paid less"),
                      ("Categories of workers", ", ".join(self.pay.spec.strata) or "none given")]
        return [(k, v) for k, v in items if v]

    def tables(self) -> list[Any]:
        from luskin_core.analyses.regulator_common import ShownTable
        from luskin_core.formatting import format_p

        if self.pay is None:
            return []
        pay = self.pay
        out = []
        rows, flagged = [], []
        for label, audit in (("Pay", pay), ("Bonus, among those receiving it", self.bonus)):
            if audit is None:
                continue
            for r in audit.overall:   # groups of unknown category shown, marked, never in the sentences
                if r.comparison.is_reference:
                    continue
                c = r.comparison
                for what, value, ref, share, ci, p in (
                        ("mean", c.mean, c.reference_mean, c.mean_gap_share, c.mean_share_interval, c.mean_p_adjusted),
                        ("median", c.median, c.reference_median, c.median_gap_share, c.median_share_interval,
                         c.median_p_adjusted)):
                    alone = r.measure_verdict(what)   # this line's gap judged alone (the row's verdict reads both)
                    rows.append((f"{label}: {what}", str(c.group) + (" (unknown category)" if r.unknown else ""),
                                 self._money(value), self._money(ref), format_percent(share), _interval(ci),
                                 format_p(p, short=True), "n/a" if alone is None else alone.words))
                    flagged.append(share is not None and abs(share) >= THRESHOLD)
        out.append(ShownTable(f"Pay gaps (Article 9(1)(a)-(d)) against {pay.reference}",
                              ("Measure", "Group", "Group's", f"{pay.reference}'s", "Gap", "95% interval",
                               "Adjusted p", "Verdict"), tuple(rows), tuple(flagged),
                              "Gap: (reference - group) / reference, positive when the group is paid less. Marked: "
                              "5% or more either way.", wide=True))
        if self.receiving:
            out.append(ShownTable(f"Receiving '{self.bonus_column}' (Article 9(1)(e))",
                                  ("Group", "Workers", "Receiving", "Share receiving"),
                                  tuple((g, f"{n:,}", f"{k:,}", format_percent(k / n if n else None))
                                        for g, (n, k) in self.receiving.items()),
                                  tuple(False for _ in self.receiving), "Receiving: an amount above 0."))
        if self.bands:
            groups = list(self.bands[0].counts)
            out.append(ShownTable("Quartile pay bands (Article 9(1)(f))",
                                  ("Band", "Pay", "Workers", *(f"Share {g}" for g in groups)),
                                  tuple((b.label, _range(self, b), f"{round(b.total):,}",
                                         *(format_percent(b.counts[g] / b.total if b.total else None) for g in groups))
                                        for b in self.bands),
                                  tuple(False for _ in self.bands),
                                  "Four bands of equal size, the workers ranked by pay (as the UK's regulations "
                                  "count them): cut at the quartiles of pay over every worker, those paid exactly a "
                                  "cut split between the two bands beside it, each sex in proportion."))
        if pay.by_cell:
            cat_rows: list[tuple[str, ...]] = []
            flags = []
            for r in self.categories():
                c = r.comparison
                cat_rows.append((r.cell, str(c.group), f"{c.summary.n:,}", f"{c.reference.n:,}", self._money(c.mean),
                             self._money(c.reference_mean), format_percent(c.mean_gap_share),
                             format_percent(c.median_gap_share),
                             "yes" if r in self.at_threshold() else "no", r.verdict.words))
                flags.append(r in self.at_threshold())
            out.append(ShownTable("Pay gaps by category of workers (Article 9(1)(g))",
                                  ("Category", "Group", "Rows", f"{pay.reference} rows", "Mean", f"{pay.reference}'s mean",
                                   "Mean gap", "Median gap", "5% or more", "Verdict"), tuple(cat_rows), tuple(flags),
                                  "Marked: a mean pay gap of 5% or more either way (Article 10(1)(a): with no "
                                  "objective, gender-neutral justification and not remedied within six months, a "
                                  "joint pay assessment).", wide=True))
        return out

    def sentences(self) -> list[str]:
        if self.pay is None:
            return []   # the problem is the note
        out = []
        ref = self.pay.reference
        for r in self.women:
            c = r.comparison
            out.append(f"The mean pay gap of {c.group} is {format_percent(c.mean_gap_share)} ({self._money(c.mean)} "
                       f"against {self._money(c.reference_mean)} for {ref}); the median pay gap "
                       f"{format_percent(c.median_gap_share)} ({self._money(c.median)} against "
                       f"{self._money(c.reference_median)}): {r.verdict.words}.")
        if self.bonus is not None:
            for r in self.bonus.overall:
                if not r.comparison.is_reference and not r.unknown:
                    c = r.comparison
                    out.append(f"Among those receiving '{self.bonus_column}', the mean gap of {c.group} is "
                               f"{format_percent(c.mean_gap_share)} and the median gap "
                               f"{format_percent(c.median_gap_share)}.")
        if self.receiving:
            out.append("Receiving '" + str(self.bonus_column) + "': " + "; ".join(
                f"{format_percent(k / n if n else None)} of {g} ({k:,} of {n:,})" for g, (n, k) in self.receiving.items())
                + ".")
        if self.bands:
            groups = [g for g in self.bands[0].counts if g != ref and not self.pay.judgement.is_unknown(g)]
            for g in groups:
                low, high = self.bands[0], self.bands[-1]
                out.append(f"{g} are {format_percent(low.counts[g] / low.total if low.total else None)} of the lowest "
                           f"quartile pay band and {format_percent(high.counts[g] / high.total if high.total else None)}"
                           f" of the highest.")
        if self.pay.by_cell:
            at = self.at_threshold()
            cells = len(self.pay.cells)
            if at:
                out.append(f"In {count_of(len(at), 'category', 'categories')} of {cells} the mean pay gap is 5% or "
                           f"more: " + "; ".join(f"{r.cell} ({r.group} {format_percent(r.comparison.mean_gap_share)})"
                                                 for r in at)
                           + ". Unless objective, gender-neutral criteria justify it and it is remedied within six "
                           "months, Article 10 calls for a joint pay assessment.")
            else:
                out.append(f"In none of the {cells} categories is the mean pay gap 5% or more.")
        return out

    # -- downloads ------------------------------------------------------------------------------------
    def document(self) -> dict[str, Any]:
        if self.pay is None:
            return {"template": "eu-pay", "problem": self.problem}
        return {"template": "eu-pay", "pay": self.pay.to_dict(),
                "bonus": self.bonus.to_dict() if self.bonus is not None else None, "bonus_column": self.bonus_column,
                "receiving": {g: {"workers": n, "receiving": k, "share": k / n if n else None}
                              for g, (n, k) in self.receiving.items()},
                "quartile_cuts": list(self.cuts),
                "quartile_bands": [{"band": b.label, "low": b.low, "high": b.high, "workers": b.counts,
                                    "shares": {g: (k / b.total if b.total else None) for g, k in b.counts.items()}}
                                   for b in self.bands],
                "categories_at_or_above_5_percent": [{"category": r.cell, "group": r.group,
                                                      "mean_gap_share": r.comparison.mean_gap_share}
                                                     for r in self.at_threshold()]}

    def csv_frame(self) -> pd.DataFrame:
        import pandas as pd

        rows: list[dict[str, Any]] = []
        for table in self.tables():
            for row in table.rows:
                rows.append({"table": table.title, **dict(zip(table.header, row))})
        return pd.DataFrame(rows)

    def text(self) -> str:
        from luskin_core.formatting import format_table

        lines = [self.section_title, ""] + [f"- {n}" for n in self.notes()]
        for table in self.tables():
            lines += ["", table.title, format_table(table.rows, table.header)]
            if table.note:
                lines.append(table.note)
        lines += ["", self.sentences_title, *(f"- {s}" for s in self.sentences())]
        return "\n".join(lines)


def _interval(pair: Any) -> str:
    if pair is None or pair[0] is None or pair[1] is None:
        return "n/a"
    return f"{format_percent(pair[0])} to {format_percent(pair[1])}"


def _range(output: EUPayOutput, band: Band) -> str:
    digits = output._digits()
    if band.low is None:
        return f"up to {format_amount(band.high, digits)}"
    if band.high is None:
        return f"from {format_amount(band.low, digits)}"
    return f"{format_amount(band.low, digits)} to {format_amount(band.high, digits)}"


def _sex_spec(spec: AuditSpec, choices: Any) -> AuditSpec:
    from luskin_core.errors import LuskinError

    sex = choices.sex or (spec.group_by[0] if len(spec.group_by) == 1 else None)
    if sex is None:
        raise LuskinError("The EU pay table compares the sexes: name the sex column (the Regulator page's sex "
                          "column, or the command line's sex option).")
    return spec.with_changes(group_by=(sex,), protected=None, group_label=None, other_label=None)


def build_eu_pay(data: Any, spec: AuditSpec, choices: Any) -> EUPayOutput:
    """The Article 9 table of ``data``: the pay is the specification's amount, the categories its strata."""
    from luskin_core.analyses.amounts import as_amount, run
    from luskin_core.counting.executor import counted_table, executor_for

    if spec.outcome_type != "amount":
        return EUPayOutput(None, problem=f"No pay table: the outcome '{spec.outcome}' is not an amount. Audit a "
                                         "numeric pay column as an amount to make the Article 9 table.")
    spec = _sex_spec(as_amount(spec), choices)
    pay = run(data, spec)
    note = ""
    if spec.reference is None:
        men = [g for g in pay.groups if _MEN.match(g.strip())]
        if men and men[0] != pay.reference:
            spec = spec.with_changes(reference=men[0])
            pay = run(data, spec)
        elif not men:
            note = (f"No group reads as men, so the reference is {pay.reference}, the group with the highest mean "
                    "pay; name the men's group as the reference (or name the values) to compare with men.")
    pooled = spec.with_changes(strata=(), filters=())
    bonus_audit = None
    note_bonus = ""
    receiving: dict[str, tuple[int, int]] = {}
    bonus = getattr(choices, "bonus", None)
    if bonus:
        counts, _ = counted_table(data, pooled.with_changes(outcome=bonus))
        receiving = {g: (int(counts.n[i].sum()), int(counts.positives[i].sum())) for i, g in enumerate(counts.groups)}
        bonus_audit, note_bonus = _bonus_gap(data, pooled, bonus, receiving, pay.reference,
                                             pay.judgement.is_unknown)
    executor = executor_for(data)
    cuts = tuple(float(q) for q in executor.facts(pooled).quantiles(spec.outcome, [0.25, 0.5, 0.75]))
    totals = {r.group: r.n for r in pay.overall}
    bands: list[Band] = []
    if all(math.isfinite(c) for c in cuts):
        def paid_from(cutoff: float) -> dict[str, int]:   # the workers paid at or above ``cutoff``, per sex
            table, _ = counted_table(data, pooled.with_changes(outcome_type="score", score_cutoff=cutoff))
            return {g: int(table.positives[i].sum()) for i, g in enumerate(table.groups)}

        below = [quartile_boundary(totals, q, paid_from(cut), paid_from(math.nextafter(cut, math.inf)))
                 for q, cut in zip((0.25, 0.5, 0.75), cuts)]
        lower: list[dict[str, float]] = [dict.fromkeys(totals, 0.0), *below, {g: float(n) for g, n in totals.items()}]
        edges: list[float | None] = [None, *cuts, None]
        bands = [Band(("Lower", "Lower middle", "Upper middle", "Upper")[b], edges[b], edges[b + 1],
                      {g: lower[b + 1][g] - lower[b][g] for g in totals}) for b in range(4)]
    return EUPayOutput(pay, bonus_audit, bonus, receiving, tuple(bands), cuts, note, bonus_note=note_bonus)


def quartile_boundary(totals: dict[str, int], share: float, at_or_above: dict[str, int],
                      above: dict[str, int]) -> dict[str, float]:
    """The workers of each sex below the quartile boundary at ``share`` of all workers, as the UK's gender pay gap
    regulations count quartile pay bands (four sections of equal size, workers ranked by pay).

    The boundary falls at the cut (the pay's quantile at ``share``); ``at_or_above`` and ``above`` count, per sex, the
    workers paid at least and more than it. Those paid less are below; those paid exactly the cut (a pay scale's
    step holds many) are split between the two bands, each sex in proportion to its share of them, so that the
    lower bands hold ``round(share x workers)`` of them as nearly as the ties allow (GOV.UK: workers on the same pay
    at a boundary are spread evenly by gender). Cutting at the value alone put every tied worker above it: a pay
    scale of three steps gave bands of 0, 288, 50 and 262 of 600 workers.
    """
    below = {g: n - at_or_above.get(g, 0) for g, n in totals.items()}
    tied = {g: at_or_above.get(g, 0) - above.get(g, 0) for g in totals}
    everyone, under, at = sum(totals.values()), sum(below.values()), sum(tied.values())
    take = min(max(math.floor(share * everyone + 0.5) - under, 0), at)
    return {g: below[g] + (tied[g] * take / at if at else 0.0) for g in totals}


def _bonus_gap(data: Any, pooled: AuditSpec, bonus: str, receiving: dict[str, tuple[int, int]], reference: str,
               unknown: Any) -> tuple[Any, str]:
    """Article 9(1)(b) and (d): the bonus's amount audit among the workers receiving it, against the pay's reference,
    and what it cannot say (nobody receives it, or a sex none of whose workers does), so that the rest of the table
    stands: (the audit or None, a sentence or ""). ``unknown`` tells a group of unknown sex (the judgement's)."""
    from luskin_core.analyses.amounts import run
    from luskin_core.errors import LuskinError
    from luskin_core.spec.conditions import Condition

    if not any(k for _, k in receiving.values()):
        return None, (f"No worker receives '{bonus}' (every amount of it is 0 or below), so it has no gap: "
                      "Article 9(1)(b) and (d) do not apply.")
    none = [g for g, (_, k) in receiving.items() if not k and g != reference and not unknown(g)]
    if not receiving.get(reference, (0, 0))[1]:
        return None, f"No {reference} worker receives '{bonus}', so it has no gap against {reference}."
    note = (f"No {' or '.join(none)} worker receives '{bonus}': no gap of it for them (the share receiving says so)."
            if none else "")
    try:
        return run(data, pooled.with_changes(outcome=bonus, reference=reference,
                                             population=(*pooled.population, Condition(bonus, ">", 0)))), note
    except LuskinError as err:
        return None, f"No gap of '{bonus}' among those receiving it: {err}"



__all__ = ["THRESHOLD", "Band", "EUPayOutput", "build_eu_pay"]
