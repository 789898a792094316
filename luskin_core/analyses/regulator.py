"""The tables regulators name: NYC Local Law 144 bias audits and the EEOC Uniform Guidelines.

**Local Law 144** (NYC DCWP rules, 6 RCNY §5-300/5-301). Per category: the number of
individuals, the number selected, the selection rate (or, for a score, the *scoring rate*: the
share scoring strictly above the median score of the whole sample) and the impact ratio (the
rate divided by the rate of the most selected category), computed separately for sex, for
race/ethnicity and for the intersectional categories (sex × race/ethnicity). Individuals whose
sex or race/ethnicity is missing form the unknown category: counted (``unknown_count``) and
left out of every table. A category under 2% of the data may be left out of the impact ratios
(``exclude_small=True``) with the justification shown; its n and rate are still reported.

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from luskin_core.errors import LuskinError
from luskin_core.formatting import format_number, format_p, format_percent
from luskin_core.stats.uniform import below_four_fifths, fisher_p, flip, shortfall, two_sd_z

SMALL_SHARE = 0.02
KINDS = ("sex", "race_ethnicity", "intersectional")
KIND_TITLES = {"sex": "Sex", "race_ethnicity": "Race/ethnicity", "intersectional": "Intersectional (sex × race/ethnicity)"}
CROSS = " × "
EXCLUSION_JUSTIFICATION = (
    "Categories with fewer than 2% of the individuals in the table are left out of the impact ratios "
    "(6 RCNY §5-301(d)): so few individuals make a rate, and the most selected category, unstable. Their "
    "number of individuals and rate are still reported.")


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

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def eeoc_rows(comparisons: Sequence[Any]) -> tuple[EEOCRow, ...]:
    """The Uniform Guidelines table for every non-reference comparison, with words where the tests disagree.

    "Significant" is the two-standard-deviations test (|z| > 2), or Fisher's exact test (p < 0.05)
    where an expected count is under 5 (the audit's own test choice).
    """
    from luskin_core.stats.power import minimum_detectable_difference

    rows = []
    for c in comparisons:
        if c.is_reference:
            continue
        k, n, rk, rn = c.positives, c.n, c.reference_positives, c.reference_n
        z = two_sd_z(k, n, rk, rn)
        fp = fisher_p(k, n, rk, rn)
        small = "Fisher" in (c.test or "")
        if small:
            significant = None if fp is None else fp < 0.05
        else:
            significant = None if z is None else abs(z) > 2
        below = below_four_fifths(k, n, rk, rn)
        mdd = None
        if c.reference_rate is not None and n > 0 and rn > 0:
            value = float(minimum_detectable_difference(n, rn, c.reference_rate))
            mdd = value if math.isfinite(value) else None
        extras = getattr(c, "extras", None) or {}
        row = EEOCRow(
            group=c.group, cell=c.cell, reference=c.reference, n=n, selected=k, rate=c.rate, reference_n=rn,
            reference_selected=rk, reference_rate=c.reference_rate, impact_ratio=c.impact_ratio,
            below_four_fifths=below, z=z, beyond_two_sd=None if z is None else abs(z) > 2, fisher_p=fp,
            significant=significant,
            shortfall_four_fifths=extras.get("shortfall_four_fifths", shortfall(k, n, rk, rn)),
            shortfall_parity=extras.get("shortfall_parity", shortfall(k, n, rk, rn, (1, 1))),
            flip=extras.get("flip", flip(k, n, rk, rn)), minimum_detectable_difference=mdd, sentence="",
        )
        rows.append(_eeoc_sentence(row, small))
    return tuple(rows)


def _eeoc_sentence(r: EEOCRow, small: bool) -> EEOCRow:
    from dataclasses import replace

    if r.below_four_fifths is None or r.significant is None:
        return replace(r, sentence=f"{r.group} cannot be compared with {r.reference} (a rate is not computable).")
    test = (f"Fisher's exact test {format_p(r.fisher_p)}" if small
            else f"{abs(r.z or 0):.1f} standard deviations")
    ratio = f"impact ratio {format_number(r.impact_ratio, 2)}"
    if r.below_four_fifths and r.significant:
        text = f"{r.group}: below four-fifths ({ratio}) and statistically significant ({test}): adverse impact."
    elif r.below_four_fifths:
        text = (f"{r.group}: below four-fifths ({ratio}) but not statistically significant ({test}): the two "
                "tests disagree; with these numbers the gap could be chance.")
    elif r.significant:
        text = (f"{r.group}: passes four-fifths ({ratio}) but the difference is statistically significant "
                f"({test}): the two tests disagree; a small gap measured on many people can be real.")
    else:
        text = f"{r.group}: passes four-fifths ({ratio}) and the difference is not statistically significant ({test})."
    if r.shortfall_four_fifths:
        text += (f" {r.shortfall_four_fifths:,} more selection{'s' if r.shortfall_four_fifths != 1 else ''} "
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


# ------------------------------------------------------------------------------------------
# Local Law 144
# ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LL144Row:
    """One category: individuals, selected (or scoring above the median), rate, impact ratio."""

    category: str
    n: int
    selected: int
    rate: float | None
    impact_ratio: float | None
    excluded: bool

    def to_dict(self) -> dict[str, Any]:
        return {"category": self.category, "n": self.n, "selected": self.selected, "rate": self.rate,
                "impact_ratio": self.impact_ratio, "excluded": self.excluded}


@dataclass(frozen=True)
class LL144Table:
    """One of the three tables (sex, race/ethnicity, intersectional)."""

    kind: str
    rows: tuple[LL144Row, ...]

    @property
    def most_selected(self) -> str | None:
        kept = [r for r in self.rows if not r.excluded and r.rate is not None]
        return max(kept, key=lambda r: (r.rate, r.n)).category if kept else None

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "rows": [r.to_dict() for r in self.rows]}


@dataclass(frozen=True)
class LL144Result:
    """A Local Law 144 bias audit: three tables and the unknown category."""

    tables: tuple[LL144Table, ...]
    unknown_count: int
    scoring: bool = False
    median: float | None = None
    exclude_small: bool = False
    sex_column: str = "sex"
    race_column: str = "race/ethnicity"
    outcome: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def rate_name(self) -> str:
        return "scoring rate" if self.scoring else "selection rate"

    def table(self, kind: str) -> LL144Table:
        for t in self.tables:
            if t.kind == kind:
                return t
        raise KeyError(kind)

    @property
    def total(self) -> int:
        return sum(r.n for r in self.table("sex").rows) if self.tables else 0

    @property
    def justification(self) -> str | None:
        if not self.exclude_small or not any(r.excluded for t in self.tables for r in t.rows):
            return None
        return EXCLUSION_JUSTIFICATION

    def to_dict(self) -> dict[str, Any]:
        return {"unknown_count": self.unknown_count, "tables": [t.to_dict() for t in self.tables],
                "rate": self.rate_name, "median_score": self.median, "n_assessed": self.total + self.unknown_count,
                "sex_column": self.sex_column, "race_column": self.race_column,
                "exclusion_justification": self.justification}

    def to_frame(self) -> pd.DataFrame:
        """Long form, one row per category of every table (the CSV export)."""
        rows = []
        for t in self.tables:
            for r in t.rows:
                rows.append({"table": t.kind, "category": r.category, "n": r.n,
                             ("scored_above_median" if self.scoring else "selected"): r.selected,
                             ("scoring_rate" if self.scoring else "selection_rate"): r.rate,
                             "impact_ratio": r.impact_ratio, "excluded": r.excluded})
        return pd.DataFrame(rows)

    def to_csv(self) -> str:
        return str(self.to_frame().to_csv(index=False))

    def sentences(self) -> list[str]:
        """The findings in words: per table the most selected category and those under four-fifths."""
        out = []
        if self.scoring and self.median is not None:
            out.append(f"The scoring rate is the share scoring strictly above the median score of all "
                       f"{self.total + self.unknown_count:,} individuals ({self.median:g}).")
        for t in self.tables:
            best = t.most_selected
            if best is None:
                continue
            low = [r for r in t.rows if r.impact_ratio is not None and r.impact_ratio < 0.8 and not r.excluded]
            title = KIND_TITLES[t.kind].split(" (")[0]
            text = f"{title}: the most selected category is {best}"
            if low:
                text += "; under four-fifths: " + ", ".join(f"{r.category} ({r.impact_ratio:.2f})" for r in low)
            else:
                text += "; every impact ratio is at least 0.80"
            out.append(text + ".")
        out.append(f"{self.unknown_count:,} individuals with an unknown sex or race/ethnicity were assessed and are "
                   "not included in the tables.")
        if self.justification:
            out.append(self.justification)
        return out


def ll144_table(kind: str, counts: Mapping[str, tuple[int, int]], *, exclude_small: bool = False,
                threshold: float = SMALL_SHARE) -> LL144Table:
    """One LL144 table from counts per category: category -> (individuals, selected), in display order.

    With ``exclude_small``, a category under ``threshold`` of the table's individuals is left out of
    the impact ratios (and cannot be the most selected); its n and rate stay.
    """
    total = sum(n for n, _ in counts.values())
    rates = {c: (s / n if n else None) for c, (n, s) in counts.items()}
    excluded = {c: bool(exclude_small and total and n / total < threshold) for c, (n, _) in counts.items()}
    kept = [r for c, r in rates.items() if not excluded[c] and r is not None]
    best = max(kept) if kept else None
    rows = []
    for c, (n, s) in counts.items():
        rate = rates[c]
        ratio = None
        if not excluded[c] and rate is not None and best:
            ratio = rate / best
        rows.append(LL144Row(str(c), int(n), int(s), rate, ratio, excluded[c]))
    return LL144Table(kind, tuple(rows))


def ll144_from_counts(intersections: Mapping[tuple[str, str], tuple[int, int]], unknown_count: int = 0, *,
                      exclude_small: bool = False, scoring: bool = False, median: float | None = None,
                      sex_column: str = "sex", race_column: str = "race/ethnicity", outcome: str = "") -> LL144Result:
    """The three tables from counts per (sex, race/ethnicity): (individuals, selected).

    The sex and race/ethnicity tables are the margins of the intersections, so one person counts
    once in each table.
    """
    sexes: dict[str, list[int]] = {}
    races: dict[str, list[int]] = {}
    inter: dict[str, tuple[int, int]] = {}
    for (sex, race), (n, s) in intersections.items():
        sexes.setdefault(sex, [0, 0])
        races.setdefault(race, [0, 0])
        sexes[sex][0] += n
        sexes[sex][1] += s
        races[race][0] += n
        races[race][1] += s
        inter[f"{sex}{CROSS}{race}"] = (n, s)
    tables = (
        ll144_table("sex", {k: (v[0], v[1]) for k, v in sexes.items()}, exclude_small=exclude_small),
        ll144_table("race_ethnicity", {k: (v[0], v[1]) for k, v in races.items()}, exclude_small=exclude_small),
        ll144_table("intersectional", inter, exclude_small=exclude_small),
    )
    return LL144Result(tables, int(unknown_count), scoring, median, exclude_small, sex_column, race_column, outcome)


def ll144_from_count_table(table: Any, *, exclude_small: bool = False, scoring: bool = False,
                           median: float | None = None, sex_column: str = "sex", race_column: str = "race/ethnicity",
                           outcome: str = "") -> LL144Result:
    """The LL144 result from an audit's count table grouped by (sex, race/ethnicity), one cell."""
    from luskin_core.counting.counts import UNKNOWN

    n = table.n.sum(axis=1)
    k = table.positives.sum(axis=1)
    counts: dict[tuple[str, str], tuple[int, int]] = {}
    unknown = 0
    for label, ni, ki in zip(table.groups, n, k):
        parts = label.split(CROSS)
        if len(parts) != 2:
            raise LuskinError(f"The category '{label}' cannot be split into sex and race/ethnicity: a value "
                              f"contains '{CROSS.strip()}'. Rename it and try again.")
        if UNKNOWN in parts:
            unknown += int(ni)
            continue
        counts[(parts[0], parts[1])] = (int(ni), int(ki))
    if not counts:
        raise LuskinError("Every individual has an unknown sex or race/ethnicity, so no LL144 table can be made.")
    return ll144_from_counts(counts, unknown, exclude_small=exclude_small, scoring=scoring, median=median,
                             sex_column=sex_column, race_column=race_column, outcome=outcome)


def ll144_spec(spec: Any, sex: str, race: str) -> Any:
    """The audit specification LL144 counts with: groups sex × race/ethnicity, one cell, no protected condition."""
    return spec.with_changes(group_by=(sex, race), protected=None, group_label=None, other_label=None,
                             strata=(), filters=(), filter_label=None, not_filter_label=None, reference=None,
                             min_group_share=0.0)


def ll144_audit(data: Any, spec: Any, sex: str, race: str, *, exclude_small: bool = False) -> LL144Result:
    """A Local Law 144 audit of a frame or an engine source, by the specification's outcome.

    For a score outcome the scoring rate counts rows strictly above the median of the whole sample
    (every row with a score, the unknown category included): the median is found first, then rows
    are counted at or above the next representable number above it, which is "strictly above".
    """
    from luskin_core.counting.counts import count_frame, plan_for_frame
    from luskin_core.counting.sources import Source

    base = ll144_spec(spec, sex, race)
    scoring = base.outcome_type == "score"
    median = None
    if scoring:
        if base.score_cutoff is not None:
            raise LuskinError("The LL144 scoring rate uses the median of the whole sample: leave out --score-cutoff.")
        if isinstance(data, Source):
            median = data.count_table(base).score_cutoff
        else:
            median = plan_for_frame(data, base).score_cutoff
        assert median is not None
        base = base.with_changes(score_cutoff=float(np.nextafter(median, np.inf)))
    table = data.count_table(base) if isinstance(data, Source) else count_frame(data, base)[0]
    return ll144_from_count_table(table, exclude_small=exclude_small, scoring=scoring, median=median,
                                  sex_column=sex, race_column=race, outcome=base.outcome)


# ------------------------------------------------------------------------------------------
# Text
# ------------------------------------------------------------------------------------------
def format_ll144(result: LL144Result) -> str:
    """The three tables as plain text, laid out like published LL144 summaries of results."""
    from luskin_core.formatting import format_table

    rate = result.rate_name.capitalize()
    selected = "Scored above median" if result.scoring else "# Selected"
    lines = [f"NYC Local Law 144 bias audit ({result.rate_name}s, impact ratios against the most selected category)",
             (f"Individuals assessed: {result.total + result.unknown_count:,}; unknown category (missing sex or "
              f"race/ethnicity, not included below): {result.unknown_count:,}")]
    if result.scoring and result.median is not None:
        lines.append(f"Median score of the full sample: {result.median:g}; the scoring rate is the share strictly "
                     "above it.")
    for t in result.tables:
        rows = [[r.category, f"{r.n:,}", f"{r.selected:,}", format_percent(r.rate),
                 "excluded (<2%)" if r.excluded else format_number(r.impact_ratio, 2)] for r in t.rows]
        lines += ["", KIND_TITLES[t.kind] + " categories",
                  format_table(rows, ["category", "# of applicants", selected, rate, "impact ratio"])]
    if result.justification:
        lines += ["", "Note: " + result.justification]
    lines += [""] + [f"- {s}" for s in result.sentences()]
    return "\n".join(lines)



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


def format_eeoc(rows: Sequence[EEOCRow]) -> str:
    """The Uniform Guidelines table as plain text, then one sentence per group."""
    from luskin_core.formatting import format_table

    table = []
    for r in rows:
        table.append([r.cell or "all rows", r.group, f"{r.n:,}", format_percent(r.rate), r.reference,
                      format_percent(r.reference_rate), *eeoc_cells(r, below="BELOW")])
    head = ["cell", "group", "n", "rate", "reference", "ref. rate", "ratio", "4/5 rule", "z (SD)", "Fisher p",
            "shortfall 4/5", "shortfall parity", "flip", "detectable gap"]
    lines = ["EEOC Uniform Guidelines: four-fifths rule, two standard deviations, Fisher's exact test",
             format_table(table, head), ""]
    lines += [f"- {r.sentence}" for r in rows]
    return "\n".join(lines)


__all__ = ["EEOCRow", "LL144Result", "LL144Row", "LL144Table", "eeoc_frame",
           "eeoc_rows", "format_eeoc", "format_ll144", "ll144_audit", "ll144_from_count_table",
           "ll144_from_counts", "ll144_spec", "ll144_table"]
