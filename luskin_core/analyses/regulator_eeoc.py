"""The EEOC Uniform Guidelines table (29 CFR 1607.4(D)).

**EEOC Uniform Guidelines** (29 CFR 1607.4(D)). Per comparison: the four-fifths rule beside
the two-standard-deviations test (the pooled two-proportion z statistic in standard
deviations) and Fisher's exact test; the *shortfall* (the smallest whole number of additional
selections in the group for its rate to reach four-fifths of the reference's rate, and the
reference's rate, the group's size unchanged; 0 when already there) and the *flip test* (true
when moving one or two people, in the group or in the reference, between selected and not
selected changes the four-fifths verdict).

Everything is computed from counts with whole-number arithmetic where the rules are
thresholds (5 x selected_g x n_ref < 4 x selected_ref x n_g is "below four-fifths"), so the
verdicts do not depend on float rounding.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from luskin_core.analyses.regulator_common import (
    ShownTable,
    named_unknown,
    sufficiency_bullets,
    sufficiency_text,
    unknown_key,
    unknown_keys,
)
from luskin_core.formatting import format_number, format_p, format_percent
from luskin_core.stats.judgement import Judgement, below
from luskin_core.stats.uniform import fisher_p, flip, shortfall, two_sd_z

# The EEOC companions (shortfall, flip, two SD, Fisher) are statistics of two counts: stats/uniform.py.


@dataclass(frozen=True)
class EEOCRow:
    """One group against the reference under the Uniform Guidelines."""

    group: str
    cell: str | None
    reference: str
    n: int
    selected: int
    rate: float | None
    reference_n: int
    reference_selected: int
    reference_rate: float | None
    impact_ratio: float | None
    below_four_fifths: bool | None
    z: float | None
    beyond_two_sd: bool | None
    fisher_p: float | None
    significant: bool | None
    shortfall_four_fifths: int | None
    shortfall_parity: int | None
    flip: bool | None
    minimum_detectable_difference: float | None
    sentence: str
    outcome_is: str = "favourable"  # "adverse": selected, rates and shortfalls count the favourable decision

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def eeoc_rows(table: Any, judgement: Judgement) -> tuple[EEOCRow, ...]:
    """The Uniform Guidelines table of a count table: in every cell (all rows, or each stratum), every group of
    known category against the highest favourable rate *of that cell* (:meth:`Judgement.four_fifths_reference`),
    as the four-fifths rule compares each group with the highest rate of its own table.

    "Significant" is the two-standard-deviations test (|z| > 2), or Fisher's exact test (``p < alpha``) where an
    expected count is under 5 (the audit's own test choice). For an adverse outcome (``judgement.adverse``)
    "selected" is the favourable decision (not defaulted, not denied): the rates, the four-fifths rule, z, the
    shortfalls (in favourable decisions) and the detectable difference are all of it, as the Guidelines compare
    selection rates. Groups of unknown category get no row (:func:`eeoc_unknown` says them apart).
    """
    rows = []
    for ci, (key, label) in enumerate(zip(table.cell_keys, table.cell_labels)):
        n, k = table.n[:, ci], table.positives[:, ci]
        r = judgement.four_fifths_reference(table.groups, n, k)
        if r is None:
            continue
        for gi, group in enumerate(table.groups):
            if gi == r or judgement.is_unknown(group):
                continue
            rows.append(_eeoc_row(group, None if key is None else label, table.groups[r],
                                  int(k[gi]), int(n[gi]), int(k[r]), int(n[r]), judgement))
    return tuple(rows)


def eeoc_unknown(table: Any, judgement: Judgement) -> tuple[tuple[str, int, int], ...]:
    """The groups of unknown category a Uniform Guidelines table sets apart: (group, rows, selected), "selected"
    counting the favourable decision as the table does."""
    return tuple((g, int(table.n[i].sum()), int(judgement.favourable(table.positives[i].sum(), table.n[i].sum())))
                 for i, g in enumerate(table.groups) if judgement.is_unknown(g) and table.n[i].sum() > 0)


def unknown_words(unknown: Sequence[tuple[str, int, int]], adverse: bool = False) -> list[str]:
    """The groups of unknown category in words (one line, or none)."""
    if not unknown:
        return []
    what = "with the favourable decision" if adverse else "selected"
    parts = ", ".join(f"{g} ({n:,} rows, {format_percent(k / n)} {what})" for g, n, k in unknown)
    return [(f"Of unknown category, shown apart and not judged: {parts}. The four-fifths rule compares the "
             "categories people belong to.")]


def _eeoc_row(group: str, cell: str | None, reference: str, k: int, n: int, rk: int, rn: int,
              judgement: Judgement) -> EEOCRow:
    from luskin_core.stats.inference import two_proportion_tests
    from luskin_core.stats.power import minimum_detectable_difference

    k, rk = judgement.favourable(k, n), judgement.favourable(rk, rn)
    rate = k / n if n else None
    reference_rate = rk / rn if rn else None
    z = two_sd_z(k, n, rk, rn)
    fp = fisher_p(k, n, rk, rn)
    small = "Fisher" in two_proportion_tests(k, n, rk, rn)[1][0]
    significant = judgement.significant(fp) if small else (None if z is None else abs(z) > 2)
    mdd = None
    if reference_rate is not None and n > 0 and rn > 0:
        value = float(minimum_detectable_difference(n, rn, reference_rate))
        mdd = value if math.isfinite(value) else None
    row = EEOCRow(
        group=group, cell=cell, reference=reference, n=n, selected=k, rate=rate, reference_n=rn,
        reference_selected=rk, reference_rate=reference_rate,
        impact_ratio=None if rk == 0 or n == 0 or rn == 0 else (k / n) / (rk / rn),
        below_four_fifths=below(k, n, rk, rn), z=z, beyond_two_sd=None if z is None else abs(z) > 2, fisher_p=fp,
        significant=significant, shortfall_four_fifths=shortfall(k, n, rk, rn),
        shortfall_parity=shortfall(k, n, rk, rn, (1, 1)), flip=flip(k, n, rk, rn),
        minimum_detectable_difference=mdd, sentence="", outcome_is=judgement.direction.value,
    )
    return _eeoc_sentence(row, small)


def _eeoc_sentence(r: EEOCRow, small: bool) -> EEOCRow:
    from dataclasses import replace

    # each sentence names its stratum first and the group it is compared with (the highest rate of that stratum,
    # which differs from one stratum to the next): read alone, in a list of every stratum's sentences, it says where
    where = "" if r.cell is None else f"In {r.cell}, "
    who = f"{where}{r.group} against {r.reference}"
    if r.below_four_fifths is None or r.significant is None:
        return replace(r, sentence=f"{where}{r.group} cannot be compared with {r.reference} (a rate is not "
                                   "computable).")
    test = (f"Fisher's exact test {format_p(r.fisher_p)}" if small
            else f"{abs(r.z or 0):.1f} standard deviations")
    ratio = f"impact ratio {format_number(r.impact_ratio, 2)}"
    if r.below_four_fifths and r.significant:
        text = f"{who}: below four-fifths ({ratio}) and statistically significant ({test}): adverse impact."
    elif r.below_four_fifths:
        text = (f"{who}: below four-fifths ({ratio}) but not statistically significant ({test}): the two "
                "tests disagree; with these numbers the gap could be chance.")
    elif r.significant:
        text = (f"{who}: passes four-fifths ({ratio}) but the difference is statistically significant "
                f"({test}): the two tests disagree; a small gap measured on many people can be real.")
    else:
        text = f"{who}: passes four-fifths ({ratio}) and the difference is not statistically significant ({test})."
    if r.shortfall_four_fifths:
        what = "favourable decision" if r.outcome_is == "adverse" else "selection"
        text += (f" {r.shortfall_four_fifths:,} more {what}{'s' if r.shortfall_four_fifths != 1 else ''} "
                 f"would reach four-fifths, {r.shortfall_parity:,} parity.")
    if r.flip:
        text += " Moving one or two people would change the four-fifths verdict: it is fragile."
    return replace(r, sentence=text)


def eeoc_frame(rows: Sequence[EEOCRow]) -> pd.DataFrame:
    """The EEOC table for a page, the report and CSV."""
    return pd.DataFrame([{
        "Cell": r.cell or "All rows", "Group": r.group, "Reference": r.reference, "Rows": r.n, "Selected": r.selected,
        "Rate": r.rate, "Reference rate": r.reference_rate, "Impact ratio": r.impact_ratio,
        "Below four-fifths": r.below_four_fifths, "z (SDs)": r.z, "Beyond 2 SD": r.beyond_two_sd,
        "Fisher p": r.fisher_p, "Shortfall to 4/5": r.shortfall_four_fifths, "Shortfall to parity": r.shortfall_parity,
        "Flip": r.flip, "Minimum detectable difference": r.minimum_detectable_difference,
    } for r in rows])


def eeoc_cells(r: Any, *, below: str = "below") -> tuple[str, ...]:
    """An EEOC row's judged cells as text, the same in the command line's table and the report's: impact ratio,
    four-fifths, z, Fisher p, the two shortfalls, the flip test and the detectable difference."""
    return (format_number(r.impact_ratio, 2),
            "" if r.below_four_fifths is None else (below if r.below_four_fifths else "passes"),
            format_number(r.z, 2), format_p(r.fisher_p, short=True),
            "" if r.shortfall_four_fifths is None else f"{r.shortfall_four_fifths:,}",
            "" if r.shortfall_parity is None else f"{r.shortfall_parity:,}",
            "" if r.flip is None else ("yes" if r.flip else "no"),
            "n/a" if r.minimum_detectable_difference is None else format_percent(r.minimum_detectable_difference, 0))


def eeoc_meaning(spec: Any) -> str:
    """For an adverse outcome, what "selected" counts in the EEOC table (the favourable decision); else ''."""
    if spec is None or not spec.direction.adverse:
        return ""
    return (f"'{spec.outcome_text}' is adverse (bad for the person), so \"selected\", the rates, the four-fifths rule "
            "and the shortfalls count the favourable decision: the rows without it.")


def format_eeoc(rows: Sequence[EEOCRow], spec: Any = None) -> str:
    """The Uniform Guidelines table as plain text, then one sentence per group (with ``spec``, what is counted)."""
    from luskin_core.formatting import format_table

    table = []
    for r in rows:
        table.append([r.cell or "all rows", r.group, f"{r.n:,}", format_percent(r.rate), r.reference,
                      format_percent(r.reference_rate), *eeoc_cells(r, below="BELOW")])
    head = ["cell", "group", "n", "rate", "reference", "ref. rate", "ratio", "4/5 rule", "z (SD)", "Fisher p",
            "shortfall 4/5", "shortfall parity", "flip", "detectable gap"]
    lines = ["EEOC Uniform Guidelines: four-fifths rule, two standard deviations, Fisher's exact test"]
    meaning = eeoc_meaning(spec)
    lines += ([meaning] if meaning else []) + [format_table(table, head), ""]
    lines += [f"- {r.sentence}" for r in rows]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------
# Output: what the command line, the report and the page show (luskin_core.analyses.regulator_tables)
# ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class EEOCPart:
    """The Uniform Guidelines table of one audit (one grouping column, or the specification's groups)."""

    label: str
    audit: Any
    rows: tuple[EEOCRow, ...]
    sufficiency: tuple[Any, ...]
    unknown: tuple[tuple[str, int, int], ...] = ()   # the groups of unknown category, set apart (eeoc_unknown)

    @property
    def unknown_lines(self) -> list[str]:
        """The groups of unknown category in words."""
        return unknown_words(self.unknown, self.audit.judgement.adverse)


@dataclass(frozen=True)
class EEOCOutput:
    """The Uniform Guidelines tables, one per grouping, read in the specification's direction."""

    parts: tuple[EEOCPart, ...]
    spec: Any = None
    anchor: str = "eeoc"
    section_title: str = "EEOC Uniform Guidelines: four-fifths beside significance"
    sentences_title: str = "Where the tests agree and disagree"

    def intro(self) -> list[str]:
        return []

    def document(self) -> dict[str, Any]:
        documents = []
        for p in self.parts:
            document = p.audit.to_dict()
            document.update({"eeoc": [r.to_dict() for r in p.rows], "sufficiency": [i.to_dict() for i in p.sufficiency],
                             "unknown_groups": [{"group": g, "n": n, "selected": k} for g, n, k in p.unknown]})
            documents.append(document)
        return {"template": "eeoc", "audits": documents}

    def csv_frame(self) -> pd.DataFrame:
        frames = []
        for p in self.parts:
            frame = eeoc_frame(p.rows)
            frame.insert(0, "Groups", p.label)
            frames.append(frame)
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    def text(self) -> str:
        return "\n\n".join("\n".join([f"Groups: {p.label} ({_against(p)})"]
                                     + sufficiency_text(p.sufficiency) + ["", format_eeoc(p.rows, self.spec)]
                                     + p.unknown_lines)
                           for p in self.parts)

    def metrics(self) -> list[tuple[str, str]]:
        return []

    def notes(self) -> list[str]:
        meaning = eeoc_meaning(self.spec)
        return [meaning] if meaning else []

    def settings(self, data_label: str = "") -> list[tuple[str, str]]:
        return [("Data", data_label)] if data_label else []

    def tables(self) -> list[ShownTable]:
        out = []
        for p in self.parts:
            rows = tuple((r.group if r.cell is None else f"{r.group} ({r.cell})", r.reference, f"{r.n:,}",
                          format_percent(r.rate), *eeoc_cells(r)) for r in p.rows)
            out.append(ShownTable(
                f"{p.label}: {_against(p)}",
                ("Group", "Against", "Rows", "Rate", "Impact ratio", "Four-fifths", "z (SD)", "Fisher p", "Shortfall to 4/5",
                 "Shortfall to parity", "Flip", "Detectable gap"), rows, tuple(bool(r.below_four_fifths) for r in p.rows),
                "Shortfall: additional selections the group needs (its size unchanged). Flip: moving one or two people "
                "changes the four-fifths verdict. Detectable gap: the smallest drop below the reference's rate seen "
                "with 80% power at the 5% level.", eeoc_frame(p.rows),
                tuple(sufficiency_bullets(p.sufficiency)) + tuple(p.unknown_lines),
                wide=True))
        return out

    def sentences(self) -> list[str]:
        return [r.sentence for p in self.parts for r in p.rows] + [line for p in self.parts for line in p.unknown_lines]


def _against(part: EEOCPart) -> str:
    """Whom each group is compared with: the highest rate of its own table, or of its own stratum; among the groups
    large enough to judge where a smaller group's rate is higher (:meth:`Judgement.four_fifths_reference`), so the
    heading never calls a rate the highest with a higher one in its table."""
    references = sorted({r.reference for r in part.rows})
    strata = any(r.cell is not None for r in part.rows)
    where = "its own stratum" if strata else "the table"
    named = f": {references[0]}" if len(references) == 1 else ""
    passed = any(r.rate is not None and r.reference_rate is not None and r.rate > r.reference_rate
                 for r in part.rows)
    among = f" among groups of at least {part.audit.judgement.min_group_size:,} rows" if passed else ""
    return f"every group against the highest rate{among} of {where}{named}"


def eeoc_part(result: Any, label: str | None = None) -> EEOCPart:
    """The Uniform Guidelines table of one audit result: its count table read by its judgement."""
    spec = result.spec
    rows = eeoc_rows(result.counts, result.judgement)
    return EEOCPart(label or (" × ".join(spec.group_by) if spec.group_by else spec.groups_text), result, rows,
                    eeoc_sufficiency(rows, result.judgement), eeoc_unknown(result.counts, result.judgement))


def eeoc_output(result: Any) -> EEOCOutput:
    """The Uniform Guidelines table of one audit result, as the report and slides show it."""
    return EEOCOutput((eeoc_part(result),), result.spec)


def eeoc_sufficiency(rows: Sequence[EEOCRow], judgement: Judgement) -> tuple[Any, ...]:
    """What each row's data could show against its own reference, on the favourable share (the rows hold it)."""
    from luskin_core.stats.power import sufficiency_of
    from luskin_core.stats.verdict import Verdict

    return tuple(sufficiency_of(r.group, r.cell, r.n, r.reference, r.reference_n, r.reference_rate, judgement,
                                Verdict.BEYOND if r.significant else "") for r in rows)


def build_eeoc(data: Any, spec: Any, choices: Any) -> EEOCOutput:
    """The EEOC tables: one audit per sex and race/ethnicity column (or of the specification's own groups)."""
    from luskin_core.analyses.audit import audit

    columns = [c for c in (choices.sex, choices.race) if c]
    if choices.groups or not columns:
        specs = [spec]
    else:
        specs = [spec.with_changes(group_by=(c,), protected=None, group_label=None, other_label=None)
                 for c in columns]
    if choices.unknown:   # the values the table's box names: set apart by the audit's judgement (each kept once)
        specs = [s.with_changes(unknown_values=(*s.unknown_values, *choices.unknown)) for s in specs]
    parts = []
    for s in specs:
        result = audit(data, s)
        if not choices.groups and columns:  # 'Decline to self-identify' and --unknown values: no group of their own
            keys = unknown_keys(choices.unknown)
            labels = {c.group for c in result.comparisons} | {str(result.reference)}
            found = [(s.group_by[0], label) for label in sorted(labels) if unknown_key(label) in keys]
            if any(label != "Unknown" for _, label in found):
                s = s.with_changes(value_names=named_unknown(s.value_names, found))
                result = audit(data, s)
        parts.append(eeoc_part(result))
    return EEOCOutput(tuple(parts), spec)


__all__ = ["EEOCOutput", "EEOCPart", "EEOCRow", "build_eeoc", "eeoc_cells", "eeoc_frame", "eeoc_meaning", "eeoc_output", "eeoc_part",
           "eeoc_rows", "format_eeoc"]
