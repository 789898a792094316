"""The NYC Local Law 144 bias audit tables.

**Local Law 144** (NYC DCWP rules, 6 RCNY §5-300/5-301). Per category: the number of
individuals, the number selected, the selection rate (or, for a score, the *scoring rate*: the
share scoring strictly above the median score of the whole sample) and the impact ratio (the
rate divided by the rate of the most selected category), computed separately for sex, for
race/ethnicity and for the intersectional categories (sex × race/ethnicity). Each table has
its own unknown category (``unknown_count``): the individuals whose characteristic(s) for that
table are missing, in none of its categories. A category under 2% of the data may be left out of the impact ratios
(``exclude_small=True``) with the justification shown; its n and rate are still reported.

Each table is built from the rows that know its characteristic(s), with its own unknown count, and every impact
ratio is bounded over the unknowns (:mod:`luskin_core.stats.ll144_bounds`). From person rows
(:func:`ll144_audit`), from counts (:func:`ll144_from_counts`, :func:`ll144_from_tables`) or from a published
summary (:func:`ll144_from_summary`). What the EEOC table shares with it (unknown spellings, whole counts, the
summary's reading, the output's shape) is :mod:`luskin_core.analyses.regulator_common`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

import pandas as pd

from luskin_core.analyses.regulator_common import (
    SUMMARY_COLUMNS,
    TABLE_NAMES,
    ShownTable,
    guess_ll144_columns,
    known_sufficiency,
    named_unknown,
    read_summary,
    sufficiency_bullets,
    summary_share,
    unknown_key,
    unknown_keys,
    whole_count,
)
from luskin_core.errors import LuskinError
from luskin_core.formatting import format_number, format_percent

SMALL_SHARE = 0.02
KINDS = ("sex", "race_ethnicity", "intersectional")
KIND_TITLES = {"sex": "Sex", "race_ethnicity": "Race/ethnicity", "intersectional": "Intersectional (sex × race/ethnicity)"}
CROSS = " × "
EXCLUSION_JUSTIFICATION = (
    "Categories with fewer than 2% of the table's known individuals (its unknown category not counted) are left "
    "out of the impact ratios "
    "(6 RCNY §5-301(d)): so few individuals make a rate, and the most selected category, unstable. Their "
    "number of individuals and rate are still reported.")


@dataclass(frozen=True)
class LL144Row:
    """One category: individuals, selected (or scoring above the median), rate, impact ratio and its bounds.

    ``impact_ratio_low``/``impact_ratio_high`` are the lowest and highest impact ratio over every way the
    table's unknown individuals could be spread over its categories (:mod:`luskin_core.stats.ll144_bounds`);
    ``status`` is ``passes`` (at least 0.80 whatever they were), ``fails`` (below whatever) or ``could_fail``.
    """

    category: str
    n: int
    selected: int
    rate: float | None
    impact_ratio: float | None
    excluded: bool
    impact_ratio_low: float | None = None
    impact_ratio_high: float | None = None
    status: str | None = None
    below_four_fifths: bool | None = None  # the ratio with the unknowns left out is under 0.80 (exact fractions)

    def to_dict(self) -> dict[str, Any]:
        return {"category": self.category, "n": self.n, "selected": self.selected, "rate": self.rate,
                "impact_ratio": self.impact_ratio, "excluded": self.excluded,
                "impact_ratio_low": self.impact_ratio_low, "impact_ratio_high": self.impact_ratio_high,
                "status": self.status}


@dataclass(frozen=True)
class LL144Table:
    """One of the three tables (sex, race/ethnicity, intersectional), built from the rows that know its
    characteristic(s), with its own unknown count. ``reason`` says why it has no impact ratios (one category,
    everybody unknown)."""

    kind: str
    rows: tuple[LL144Row, ...]
    unknown_count: int = 0
    unknown_selected: int | None = None
    reason: str | None = None

    @property
    def leaders(self) -> tuple[str, ...]:
        """Every category tied for the highest rate among those in the impact ratios (none if nobody is selected)."""
        kept = [r for r in self.rows if not r.excluded and r.rate is not None and r.n > 0]
        if not kept or self.reason:
            return ()
        best = max(Fraction(r.selected, r.n) for r in kept)
        return tuple(r.category for r in kept if best > 0 and Fraction(r.selected, r.n) == best)

    @property
    def total(self) -> int:
        """The table's known individuals (the 2% rule's base)."""
        return sum(r.n for r in self.rows)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "title": KIND_TITLES[self.kind], "unknown_count": self.unknown_count,
                "unknown_selected": self.unknown_selected, "most_selected": list(self.leaders),
                "reason": self.reason, "rows": [r.to_dict() for r in self.rows]}


@dataclass(frozen=True)
class LL144Result:
    """A Local Law 144 bias audit: three tables, each with its unknown category.

    ``unknown_count`` is the number of individuals whose sex or race/ethnicity is unknown (the
    intersectional table's); each table carries its own. ``adverse``: the audited outcome is bad for the
    person, so "selected" counts the favourable decision (``selected_means``). ``no_outcome_count``:
    rows left out because their outcome is missing. ``unknown_values``: (characteristic, value,
    individuals) of every value read as unknown.
    """

    tables: tuple[LL144Table, ...]
    unknown_count: int
    scoring: bool = False
    median: float | None = None
    exclude_small: bool = False
    sex_column: str = "sex"
    race_column: str = "race/ethnicity"
    outcome: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)
    n_assessed: int | None = None
    no_outcome_count: int = 0
    unknown_values: tuple[tuple[str, str, int], ...] = ()
    adverse: bool = False
    selected_means: str = ""
    source: str = "rows"

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
        """Individuals assessed whose sex and race/ethnicity are both known."""
        return self.assessed - self.unknown_count

    @property
    def assessed(self) -> int:
        """Every individual assessed (with an outcome), unknowns included."""
        if self.n_assessed is not None:
            return self.n_assessed
        return max((t.total + t.unknown_count for t in self.tables), default=0)

    def unknown_counts(self) -> list[tuple[str, int]]:
        """The unknown counts to show beside "Individuals assessed": the intersectional table's (sex or
        race/ethnicity unknown), or, when there is no intersectional table to speak of (one characteristic
        not collected, or not published), each made table's own."""
        inter = self.table("intersectional")
        if inter.rows or inter.unknown_count:
            return [("Unknown sex or race/ethnicity (not in the intersectional table)", self.unknown_count)]
        return [(f"Unknown {UNKNOWN_WHAT[t.kind]} (not in the {KIND_TITLES[t.kind].lower()} table)", t.unknown_count)
                for t in self.tables if t.kind != "intersectional" and (t.rows or t.unknown_count)]

    @property
    def justification(self) -> str | None:
        if not self.exclude_small or not any(r.excluded for t in self.tables for r in t.rows):
            return None
        return EXCLUSION_JUSTIFICATION

    def to_dict(self) -> dict[str, Any]:
        return {"unknown_count": self.unknown_count, "tables": [t.to_dict() for t in self.tables],
                "rate": self.rate_name, "median_score": self.median, "n_assessed": self.assessed,
                "sex_column": self.sex_column, "race_column": self.race_column,
                "exclusion_justification": self.justification, "no_outcome_count": self.no_outcome_count,
                "unknown_values": [{"characteristic": k, "value": v, "individuals": n}
                                   for k, v, n in self.unknown_values],
                "outcome_is": "adverse" if self.adverse else "favourable", "selected_means": self.selected_means,
                "source": self.source, "sentences": self.sentences()}

    def to_frame(self) -> pd.DataFrame:
        """Long form, one row per category of every table and one for its unknown category (the CSV export)."""
        selected = "scored_above_median" if self.scoring else "selected"
        rows = []
        for t in self.tables:
            for r in t.rows:
                rows.append({"table": t.kind, "category": r.category, "n": r.n, selected: r.selected,
                             ("scoring_rate" if self.scoring else "selection_rate"): r.rate,
                             "impact_ratio": r.impact_ratio, "excluded": r.excluded,
                             "impact_ratio_low": r.impact_ratio_low, "impact_ratio_high": r.impact_ratio_high,
                             "status": r.status})
            rows.append({"table": t.kind, "category": UNKNOWN_CATEGORY, "n": t.unknown_count,
                         selected: t.unknown_selected})
        frame = pd.DataFrame(rows)
        for column in ("n", selected):
            frame[column] = frame[column].astype("Int64")
        return frame

    def to_csv(self) -> str:
        """The CSV export, text cells that a spreadsheet would run as formulas neutralised."""
        from luskin_core.export import safe_frame

        return str(safe_frame(self.to_frame()).to_csv(index=False))

    def sentences(self) -> list[str]:
        """The findings in words: per table the most selected categories, those under four-fifths, and
        what the unknowns could change; then what was left out and why."""
        out = []
        if self.selected_means:
            out.append(self.selected_means)
        if self.scoring and self.median is not None:
            out.append(f"The scoring rate is the share scoring strictly above the median score of all "
                       f"{self.assessed:,} individuals ({self.median:g}).")
        for t in self.tables:
            out.append(_table_sentence(t, self.rate_name))
        if self.no_outcome_count:
            out.append(f"{self.no_outcome_count:,} row{'s' if self.no_outcome_count != 1 else ''} with no outcome "
                       f"{'were' if self.no_outcome_count != 1 else 'was'} left out: not assessed, in no table and "
                       "not in the unknown counts.")
        if self.unknown_values:
            shown_values = "; ".join(f"{KIND_TITLES[k].lower()} {_value_words(v)} ({n:,})"
                                     for k, v, n in self.unknown_values)
            out.append(f"Read as unknown: {shown_values}.")
        if self.justification:
            out.append(self.justification)
        return out + list(self.notes)


UNKNOWN_CATEGORY = "Unknown"


def _value_words(value: str) -> str:
    return "missing or 'Unknown'" if value == UNKNOWN_CATEGORY else f"'{value}'"


def _table_sentence(t: LL144Table, rate_name: str) -> str:
    title = KIND_TITLES[t.kind].split(" (")[0]
    unknown = (f" {t.unknown_count:,} individual{'s' if t.unknown_count != 1 else ''} with an unknown "
               f"{UNKNOWN_WHAT[t.kind]} {'are' if t.unknown_count != 1 else 'is'} counted apart.")
    if t.reason:
        return f"{title}: {t.reason}" + (unknown if t.unknown_count else "")
    kept = [r for r in t.rows if not r.excluded]
    if not kept:
        return (f"{title}: every category is under 2% of the table's {t.total:,} known individuals, so no impact "
                "ratio was computed." + (unknown if t.unknown_count else ""))
    leaders = t.leaders
    if not leaders:
        text = f"{title}: nobody was selected, so no impact ratio can be computed"
    else:
        if len(leaders) == 1:
            text = f"{title}: the most selected category is {leaders[0]}"
        else:
            text = (f"{title}: {len(leaders)} categories are tied for the highest {rate_name}: "
                    + ", ".join(leaders[:-1]) + f" and {leaders[-1]}")
        low = [r for r in kept if r.below_four_fifths]
        if low:
            text += "; under four-fifths: " + ", ".join(f"{r.category} ({format_number(r.impact_ratio, 2)})"
                                                       for r in low)
        else:
            text += "; every impact ratio is at least 0.80"
    text += "."
    if t.unknown_count:
        text += unknown
        judged = [r for r in kept if r.status is not None]
        if judged:
            counts = {s: sum(r.status == s for r in judged) for s in ("passes", "could_fail", "fails")}
            of = f"of {len(judged)} categor{'ies' if len(judged) != 1 else 'y'}"
            text += (f" Spread over the categories in every possible way, {counts['passes']} {of} pass whatever the "
                     f"unknowns were, {counts['could_fail']} could fall below 0.80 and {counts['fails']} "
                     f"{'are' if counts['fails'] != 1 else 'is'} below 0.80 whatever they were.")
    return text


UNKNOWN_WHAT = {"sex": "sex", "race_ethnicity": "race/ethnicity", "intersectional": "sex or race/ethnicity"}


def _checked_counts(kind: str, counts: Mapping[str, tuple[Any, Any]]) -> dict[str, tuple[int, int]]:
    out = {}
    for category, (n, s) in counts.items():
        where = f"In the {KIND_TITLES[kind].lower()} table, '{category}'"
        n_i, s_i = whole_count(n, f"{where}: the number of individuals"), whole_count(s, f"{where}: the number selected")
        if s_i > n_i:
            raise LuskinError(f"{where} has {s_i:,} selected out of {n_i:,} individuals: more selected than "
                              "assessed. Check the counts.")
        out[str(category)] = (n_i, s_i)
    return out


def ll144_table(kind: str, counts: Mapping[str, tuple[int, int]], *, exclude_small: bool = False,
                threshold: float = SMALL_SHARE, unknown_count: int = 0, unknown_selected: int | None = None,
                reason: str | None = None) -> LL144Table:
    """One LL144 table from counts per category: category -> (individuals, selected), in display order.

    With ``exclude_small``, a category under ``threshold`` of the table's known individuals is left out of
    the impact ratios (and cannot be the most selected); its n and rate stay. ``unknown_count`` individuals
    of the table's characteristic are unknown (``unknown_selected`` of them selected, None if not known):
    each impact ratio gets its bounds over every spread of them. Counts must be whole numbers, at least 0,
    with no more selected than individuals.
    """
    from luskin_core.stats.ll144_bounds import ratio_bounds, status

    checked = _checked_counts(kind, counts)
    unknown = whole_count(unknown_count, f"The {KIND_TITLES[kind].lower()} table's unknown count")
    known_selected = None if unknown_selected is None else whole_count(
        unknown_selected, f"The {KIND_TITLES[kind].lower()} table's unknown number selected")
    if known_selected is not None and known_selected > unknown:
        raise LuskinError(f"The {KIND_TITLES[kind].lower()} table has {known_selected:,} unknown individuals selected "
                          f"out of {unknown:,}: more selected than assessed.")
    total = sum(n for n, _ in checked.values())
    rates = {c: (Fraction(s, n) if n else None) for c, (n, s) in checked.items()}
    excluded = {c: bool(exclude_small and total and n / total < threshold) for c, (n, _) in checked.items()}
    if len(checked) < 2 and reason is None:
        reason = "one category only, so there is nothing to compare it with."
    kept = [r for c, r in rates.items() if not excluded[c] and r is not None]
    best = max(kept) if kept and reason is None else None
    bounds = ratio_bounds(list(checked.values()), [not excluded[c] and reason is None for c in checked], unknown,
                          known_selected)
    rows = []
    for (c, (n, s)), (low, high) in zip(checked.items(), bounds):
        rate = rates[c]
        ratio = rate / best if (not excluded[c] and rate is not None and best) else None
        rows.append(LL144Row(c, n, s, None if rate is None else float(rate), None if ratio is None else float(ratio),
                             excluded[c], None if low is None else float(low), None if high is None else float(high),
                             status(low, high) if ratio is not None else None,
                             None if ratio is None else ratio < Fraction(4, 5)))
    return LL144Table(kind, tuple(rows), unknown, known_selected, reason)


def ll144_from_counts(intersections: Mapping[tuple[str, str], tuple[int, int]], unknown_count: int = 0, *,
                      exclude_small: bool = False, scoring: bool = False, median: float | None = None,
                      sex_column: str = "sex", race_column: str = "race/ethnicity", outcome: str = "",
                      unknown_selected: int | None = None) -> LL144Result:
    """The three tables from counts per (sex, race/ethnicity) of the individuals who gave both.

    The sex and race/ethnicity tables are the margins of the intersections; the ``unknown_count``
    individuals (``unknown_selected`` of them selected, if known) are the unknown category of every table,
    as when only a combined unknown count is published. From person rows, :func:`ll144_from_cells` builds
    each table from every row that knows its characteristic instead.
    """
    unknown = whole_count(unknown_count, "The unknown count")
    cells: dict[tuple[str, str], tuple[int, int]] = {}
    for (sex, race), (n, s) in intersections.items():
        where = f"'{sex}{CROSS}{race}'"
        n_i, s_i = whole_count(n, f"{where}: the number of individuals"), whole_count(s, f"{where}: the number selected")
        if s_i > n_i:
            raise LuskinError(f"{where} has {s_i:,} selected out of {n_i:,} individuals: more selected than "
                              "assessed. Check the counts.")
        cells[(str(sex), str(race))] = (n_i, s_i)
    tables: dict[str, dict[str, tuple[int, int]]] = {kind: {} for kind in KINDS}
    for (sex, race), (n, s) in cells.items():
        for kind, category in (("sex", sex), ("race_ethnicity", race), ("intersectional", f"{sex}{CROSS}{race}")):
            old = tables[kind].get(category, (0, 0))
            tables[kind][category] = (old[0] + n, old[1] + s)
    unknowns = {kind: (unknown, unknown_selected) for kind in KINDS}
    return ll144_from_tables(tables, unknowns, exclude_small=exclude_small, scoring=scoring, median=median,
                             sex_column=sex_column, race_column=race_column, outcome=outcome,
                             n_assessed=sum(n for n, _ in cells.values()) + unknown)


def ll144_from_tables(tables: Mapping[str, Mapping[str, tuple[int, int]]],
                      unknowns: Mapping[str, tuple[int, int | None]] | None = None, *, exclude_small: bool = False,
                      scoring: bool = False, median: float | None = None, sex_column: str = "sex",
                      race_column: str = "race/ethnicity", outcome: str = "", n_assessed: int | None = None,
                      no_outcome_count: int = 0, unknown_values: Sequence[tuple[str, str, int]] = (),
                      adverse: bool = False, selected_means: str = "", source: str = "rows",
                      reasons: Mapping[str, str] | None = None, notes: Sequence[str] = ()) -> LL144Result:
    """The result from each table's own counts (kind -> category -> (individuals, selected)) and its unknown
    category (kind -> (individuals, selected or None)): what a published summary gives, and what the rows give."""
    unknowns = unknowns or {}
    reasons = reasons or {}
    built = []
    for kind in KINDS:
        counts = tables.get(kind, {})
        unknown, unknown_selected = unknowns.get(kind, (0, None))
        reason = reasons.get(kind)
        if not counts and reason is None:
            reason = "no category with a known value, so this table cannot be made."
        built.append(ll144_table(kind, counts, exclude_small=exclude_small, unknown_count=unknown,
                                 unknown_selected=unknown_selected, reason=reason))
    inter = built[2]
    return LL144Result(tuple(built), inter.unknown_count, scoring, median, exclude_small, sex_column, race_column,
                       outcome, tuple(notes), n_assessed, no_outcome_count, tuple(unknown_values), adverse, selected_means,
                       source)


def ll144_from_cells(cells: Mapping[tuple[str, str], tuple[int, int]], *, unknown: Sequence[str] = (),
                     exclude_small: bool = False, scoring: bool = False, median: float | None = None,
                     sex_column: str = "sex", race_column: str = "race/ethnicity", outcome: str = "",
                     no_outcome_count: int = 0, adverse: bool = False, selected_means: str = "",
                     absent: Sequence[str] = ()) -> LL144Result:
    """The three tables from person counts per (sex value, race/ethnicity value), unknown spellings included.

    Values that spell "unknown" (:data:`UNKNOWN_SPELLINGS`, or one of ``unknown``) are the unknown category.
    The sex table counts every individual whose sex is known (whatever their race/ethnicity), the
    race/ethnicity table every one whose race/ethnicity is known, the intersectional table those who gave
    both; each table's unknown count is the rest. A table whose characteristic has one known category (a
    single-sex pool) says so and the others are still made. ``absent`` names the characteristics the data has
    no column for ("sex", "race_ethnicity"): their tables say so, and the other is made.
    """
    keys = unknown_keys(unknown)

    def known(value: str) -> bool:
        return unknown_key(value) not in keys

    tables: dict[str, dict[str, list[int]]] = {kind: {} for kind in KINDS}
    unknowns = {kind: [0, 0] for kind in KINDS}
    seen: dict[tuple[str, str], int] = {}
    total = 0
    for (sex, race), (n, s) in cells.items():
        total += n
        sex_known, race_known = known(sex), known(race)
        for kind, value, is_known in (("sex", sex, sex_known), ("race_ethnicity", race, race_known)):
            if not is_known and kind not in absent:
                seen[(kind, value)] = seen.get((kind, value), 0) + n
        for kind, category, is_known in (("sex", sex, sex_known), ("race_ethnicity", race, race_known),
                                         ("intersectional", f"{sex}{CROSS}{race}", sex_known and race_known)):
            cell = tables[kind].setdefault(category, [0, 0]) if is_known else unknowns[kind]
            cell[0] += n
            cell[1] += s
    if total and not tables["sex"] and not tables["race_ethnicity"] and len(absent) < 2:
        listed = ", ".join(_value_words(v) for (_, v) in seen)
        raise LuskinError(f"Every one of the {total:,} individuals has an unknown sex and race/ethnicity (read as "
                          f"unknown: {listed}), so no Local Law 144 table can be made. If one of these is a real "
                          "category, check the columns chosen.")
    if not total:
        raise LuskinError("No individual with an outcome was assessed, so no Local Law 144 table can be made.")
    reasons = {}
    why_not = []  # why there are no sex × race/ethnicity categories to compare, one clause per characteristic
    for kind, what in (("sex", "sex"), ("race_ethnicity", "race/ethnicity")):
        names = list(tables[kind])
        if kind in absent:
            reasons[kind] = (f"the data has no {what} column (none was given: a pool where {what} is not "
                             "collected), so this table cannot be made.")
            unknowns[kind] = [0, 0]
            why_not.append(f"there is no {what} column")
        elif not names:
            reasons[kind] = f"every individual's {what} is unknown, so this table cannot be made."
            why_not.append(f"every individual's {what} is unknown")
        elif len(names) == 1:
            reasons[kind] = (f"every individual with a known {what} is {names[0]}, so there is no other category "
                             "to compare with and no impact ratio.")
            why_not.append(f"every individual with a known {what} is {names[0]} (the intersections would repeat "
                           f"the {'race/ethnicity' if kind == 'sex' else 'sex'} table)")
    if reasons:
        reasons["intersectional"] = (" and ".join(why_not) + ", so there are no sex × race/ethnicity categories "
                                     "to compare.")
        tables["intersectional"] = {}
        if absent:
            unknowns["intersectional"] = [0, 0]
    values = tuple((kind, value, n) for (kind, value), n in seen.items())
    return ll144_from_tables(
        {k: {c: (v[0], v[1]) for c, v in t.items()} for k, t in tables.items()},
        {k: (v[0], v[1]) for k, v in unknowns.items()}, exclude_small=exclude_small, scoring=scoring, median=median,
        sex_column=sex_column, race_column=race_column, outcome=outcome, n_assessed=total,
        no_outcome_count=no_outcome_count, unknown_values=values, adverse=adverse, selected_means=selected_means,
        reasons=reasons)


def ll144_from_count_table(table: Any, *, exclude_small: bool = False, scoring: bool = False,
                           median: float | None = None, sex_column: str = "sex", race_column: str = "race/ethnicity",
                           outcome: str = "", unknown: Sequence[str] = (), adverse: bool = False,
                           selected_means: str = "", absent: Sequence[str] = ()) -> LL144Result:
    """The LL144 result from an audit's count table grouped by (sex, race/ethnicity), one cell (or by the one
    column there is, ``absent`` naming the other).

    With ``adverse``, the counted outcome is bad for the person and "selected" is its complement.
    """
    from luskin_core.spec.unknown import UNKNOWN

    n = table.n.sum(axis=1)
    k = table.positives.sum(axis=1)
    cells: dict[tuple[str, str], tuple[int, int]] = {}
    for label, ni, ki in zip(table.groups, n, k):
        parts = label.split(CROSS)
        if absent and len(parts) == 1:
            parts = [UNKNOWN, parts[0]] if "sex" in absent else [parts[0], UNKNOWN]
        if len(parts) != 2:
            raise LuskinError(f"The category '{label}' cannot be split into sex and race/ethnicity: a value "
                              f"contains '{CROSS.strip()}'. Rename it and try again.")
        if int(ni) == 0:
            continue
        selected = int(ni) - int(ki) if adverse else int(ki)
        old = cells.get((parts[0], parts[1]), (0, 0))
        cells[(parts[0], parts[1])] = (old[0] + int(ni), old[1] + selected)
    no_outcome = int(table.excluded.get("outcome missing", 0))
    return ll144_from_cells(cells, unknown=unknown, exclude_small=exclude_small, scoring=scoring, median=median,
                            sex_column=sex_column, race_column=race_column, outcome=outcome,
                            no_outcome_count=no_outcome, adverse=adverse, selected_means=selected_means,
                            absent=absent)


def ll144_spec(spec: Any, *columns: str) -> Any:
    """The audit specification LL144 counts with: groups sex × race/ethnicity, one cell, no protected condition."""
    return spec.with_changes(group_by=tuple(columns), protected=None, group_label=None, other_label=None,
                             strata=(), filters=(), filter_label=None, not_filter_label=None, reference=None,
                             min_group_share=0.0)


def selected_meaning(spec: Any, scoring: bool) -> str:
    """For an adverse outcome, what "selected" counts in the tables (the favourable decision); else ''."""
    if spec is None or not spec.direction.adverse:
        return ""
    counted = "a score strictly above the median" if scoring else f"'{spec.outcome_text}'"
    return (f"{counted[0].upper() + counted[1:]} is adverse (bad for the person), so \"selected\" counts the favourable "
            f"decision: the individuals without {counted}; the most selected category is the one that has it least.")


def ll144_from_summary(frame: pd.DataFrame, *, exclude_small: bool = False, unknown: Sequence[str] = ()
                       ) -> LL144Result:
    """The LL144 result from a published summary: one row per category with ``table`` (sex, race_ethnicity or
    intersectional), ``category``, ``applicants`` and ``selected`` (or ``scoring_rate`` for a scoring audit);
    each table's unknown category is a row whose category is ``Unknown`` (or another unknown spelling), its
    ``selected`` may be blank (then the bounds take any number of them selected).

    From a scoring rate, the number scoring above the median is the whole number of applicants nearest the
    rate times the applicants (published rates are rounded); the tables say so. The CSV that ``to_csv``
    writes reads back the same (its ``n`` and ``scored_above_median`` columns are understood).
    """
    columns = _summary_columns(frame)
    scoring = "selected" not in columns
    read = _SummaryRows(columns, scoring, unknown_keys(unknown))
    for line, row in enumerate(frame.to_dict("records"), start=2):
        read.add(line, row)
    tables, unknowns = read.tables, read.unknowns
    if not any(tables.values()):
        raise LuskinError("The published table has no category with counts.")
    reasons = {k: (f"the published table has no {KIND_TITLES[k].split(' (')[0].lower()} rows (not collected, or not "
                   "published), so this table cannot be made.") for k in KINDS if not tables[k] and not unknowns.get(k, (0, 0))[0]}
    means = ("The published scoring rates are rounded: the number above the median is taken as the whole number "
             "nearest the rate times the applicants." if scoring else "")
    result = ll144_from_tables(tables, unknowns, exclude_small=exclude_small, scoring=scoring, sex_column="",
                               race_column="", source="summary", notes=(means,) if means else (), reasons=reasons,
                               unknown_values=read.seen)
    checks = summary_checks(tables, unknowns, selected_known=not scoring) + _printed_checks(result, read.printed)
    return replace(result, notes=result.notes + tuple(checks)) if checks else result


def _summary_columns(frame: pd.DataFrame) -> dict[str, str]:
    """The published table's columns by what they hold (the first of each spelling); refused without the needed."""
    columns: dict[str, str] = {}
    for name in frame.columns:
        key = SUMMARY_COLUMNS.get(unknown_key(name))
        if key and key not in columns:
            columns[key] = str(name)
    missing = [c for c in ("table", "category", "applicants") if c not in columns]
    if missing or not ({"selected", "scoring_rate"} & set(columns)):
        need = missing + ([] if {"selected", "scoring_rate"} & set(columns) else ["selected (or scoring_rate)"])
        raise LuskinError(f"The published table needs the columns table, category, applicants and selected (or "
                          f"scoring_rate); it lacks {', '.join(need)}. Its columns: "
                          f"{', '.join(str(c) for c in frame.columns) or 'none'}.")
    return columns


class _SummaryRows:
    """A published summary read line by line: each table's categories, each table's unknowns, the rates printed."""

    def __init__(self, columns: dict[str, str], scoring: bool, keys: Any) -> None:
        self.columns, self.scoring, self.keys = columns, scoring, keys
        self.tables: dict[str, dict[str, tuple[int, int]]] = {k: {} for k in KINDS}
        self.unknowns: dict[str, tuple[int, int | None]] = {}
        self.seen: list[tuple[str, str, int]] = []
        self.rate_column = columns.get("selection_rate") or (columns.get("scoring_rate") if not scoring else None)
        self.printed: dict[tuple[str, str], tuple[int, str, str]] = {}  # the published rate and impact ratio, as text

    def _kind(self, line: int, row: Mapping[Any, Any]) -> str | None:
        """The line's table (None for a blank line)."""
        kind_text = str(row[self.columns["table"]])
        if not kind_text.strip() and not any(str(v).strip() for v in row.values()):
            return None
        kind = TABLE_NAMES.get(unknown_key(kind_text))
        if kind is None:
            raise LuskinError(f"Line {line} of the published table names the table '{kind_text}': use sex, "
                              "race_ethnicity or intersectional.")
        return kind

    def _selected(self, row: Mapping[Any, Any], n: int, where: str) -> int | None:
        """The number selected (from the scoring rate for a scoring audit); None when blank."""
        if self.scoring:
            text = str(row[self.columns["scoring_rate"]]).strip()
            selected = None if not text else round(summary_share(text, where) * n)
        else:
            text = str(row[self.columns["selected"]]).replace(",", "").strip()
            selected = None if not text else whole_count(text, f"{where}: the number selected")
        if selected is not None and selected > n:
            raise LuskinError(f"{where} has {selected:,} selected out of {n:,} applicants: more selected than "
                              "assessed. Check the table.")
        return selected

    def add(self, line: int, row: Mapping[Any, Any]) -> None:
        kind = self._kind(line, row)
        if kind is None:
            return  # a blank line
        columns = self.columns
        category = str(row[columns["category"]]).strip()
        where = f"Line {line} ('{category}')"
        n = whole_count(str(row[columns["applicants"]]).replace(",", "").strip() or "missing",
                        f"{where}: the number of applicants")
        selected = self._selected(row, n, where)
        if unknown_key(category) in self.keys:
            if n and kind != "intersectional":
                self.seen.append((kind, category, n))
            old_n, old_s = self.unknowns.get(kind, (0, 0))
            self.unknowns[kind] = (old_n + n, None if selected is None or old_s is None else old_s + selected)
            return
        if selected is None:
            raise LuskinError(f"{where} has no number selected{' or scoring rate' if self.scoring else ''}.")
        if category in self.tables[kind]:
            raise LuskinError(f"{where}: the {KIND_TITLES[kind].lower()} table has '{category}' twice.")
        self.tables[kind][category] = (n, selected)
        self.printed[(kind, category)] = (
            line, str(row[self.rate_column]).strip() if self.rate_column else "",
            str(row[columns["impact_ratio"]]).strip() if "impact_ratio" in columns else "")


def summary_checks(tables: Mapping[str, Mapping[str, tuple[int, int]]],
                   unknowns: Mapping[str, tuple[int, int | None]], selected_known: bool = True) -> list[str]:
    """What does not add up in a published summary, in words: each table with its unknown category should count
    every individual assessed (and, where the unknowns' number selected is given, every one selected), and an
    intersectional category (sex × race/ethnicity, individuals who gave both) cannot hold more individuals or more
    selected than its sex's or its race/ethnicity's category. Published audits often fail these (Gerchick et al.,
    FAccT 2025); the tables are still computed from each table's own counts, and this says so. Numbers selected
    taken from rounded scoring rates (``selected_known`` False) are not checked: their rounding need not add up."""
    made = [k for k in KINDS if tables.get(k)]
    out = []
    for what, index in (("individuals", 0), ("selected", 1))[: 2 if selected_known else 1]:
        totals = {}
        for kind in made:
            unknown = unknowns.get(kind, (0, 0 if index == 0 else None))[index]
            if unknown is not None:
                totals[kind] = sum(c[index] for c in tables[kind].values()) + unknown
        if len(set(totals.values())) > 1:
            named = [f"the {KIND_TITLES[k].split(' (')[0].lower()} table {v:,}" for k, v in totals.items()]
            named[0] = named[0].replace(" table ", " table counts ", 1) + f" {what}"
            listed = ", ".join(named[:-1]) + " and " + named[-1]
            out.append(f"The published tables do not add up: with its unknown category each should count every "
                       f"{'individual assessed' if index == 0 else 'individual selected'}, but {listed}. Each table's "
                       "rates, impact ratios and bounds use its own counts; check the published audit.")
    inter = tables.get("intersectional") or {}
    over = []
    for margin_kind, part in (("sex", 0), ("race_ethnicity", 1)):
        margin = tables.get(margin_kind) or {}
        sums: dict[str, list[int]] = {}
        for category, (n, s) in inter.items():
            pieces = category.split(CROSS)
            if len(pieces) == 2 and pieces[part] in margin:
                total = sums.setdefault(pieces[part], [0, 0])
                total[0] += n
                total[1] += s
        for name, (n, s) in sums.items():
            m_n, m_s = margin[name]
            s, m_s = (s, m_s) if selected_known else (0, 0)
            if n > m_n or s > m_s:
                what = f"{n:,} individuals" if n > m_n else f"{s:,} selected"
                has = f"{m_n:,}" if n > m_n else f"{m_s:,}"
                over.append(f"'{name}' has {what} in the intersectional table but {has} in the "
                            f"{KIND_TITLES[margin_kind].lower()} table")
    if over:
        out.append("The published tables contradict each other: the intersectional table counts those who gave both "
                   "characteristics, so none of its categories can hold more than the same sex or race/ethnicity "
                   "does alone, yet " + "; ".join(over[:5]) + (f" (and {len(over) - 5} more)" if len(over) > 5 else "")
                   + ". Check the published audit.")
    return out


def _printed_checks(result: LL144Result, printed: Mapping[tuple[str, str], tuple[int, str, str]]) -> list[str]:
    """Published rates and impact ratios that are not what their own counts give (beyond the printed rounding)."""
    wrong = []
    for table in result.tables:
        for row in table.rows:
            line, rate_text, ratio_text = printed.get((table.kind, row.category), (0, "", ""))
            for what, text, value in (("rate", rate_text, row.rate), ("impact ratio", ratio_text, row.impact_ratio)):
                shown = _printed_share(text)
                if shown is None or value is None:
                    continue
                number, places = shown
                if abs(number - value) > 0.5 * 10.0 ** -places + 1e-12:
                    wrong.append(f"line {line} ('{row.category}'): the published {what} is {text}, its counts give "
                                 f"{format_number(value, max(places, 2) + 1)}")
    if not wrong:
        return []
    return ["Published numbers that do not follow from their own counts (the tables here use the counts): "
            + "; ".join(wrong[:6]) + (f"; and {len(wrong) - 6} more" if len(wrong) > 6 else "") + "."]


def _printed_share(text: str) -> tuple[float, int] | None:
    """A published share as (value, decimal places of the share), or None when blank or not a number."""
    value = text.strip()
    if not value:
        return None
    percent = value.endswith("%")
    digits = value.rstrip("%").strip().replace(",", "")
    try:
        number = float(digits)
    except ValueError:
        return None
    places = len(digits.split(".")[1]) if "." in digits else 0
    return (number / 100, places + 2) if percent else (number, places)


def ll144_audit(data: Any, spec: Any, sex: str | None, race: str | None, *, exclude_small: bool = False,
                unknown: Sequence[str] = ()) -> LL144Result:
    """A Local Law 144 audit of a frame or an engine source, by the specification's outcome.

    For a score outcome the scoring rate counts rows strictly above the median of the whole sample
    (every row with a score, the unknown category included), as the audit's score mode does. For
    an adverse outcome (``spec.direction``, decided once in the specification) "selected" is the favourable
    decision.
    Values spelling "unknown" (and those in ``unknown``) are each table's unknown category. With no sex
    (or no race/ethnicity) column (None), the other table is made and the missing ones say why.
    The counting (:func:`ll144_count`) and the arithmetic (:func:`ll144_from_table`) are apart, so that the
    evidence (:mod:`luskin_core.evidence`) can recompute every number from the count table alone.
    """
    table, median = ll144_count(data, spec, sex, race)
    return ll144_from_table(table, median, spec, sex, race, exclude_small=exclude_small, unknown=unknown)


def run(data: Any, spec: Any, options: Any = None) -> LL144Result:
    """The Local Law 144 tables as an entry of the analyses' table (``run(data, spec, options)``): :func:`ll144_audit`
    with the sex and race/ethnicity columns, the 2% exclusion and the values read as unknown of ``options`` (a
    :class:`~luskin_core.spec.options.RegulatorChoices`)."""
    from luskin_core.spec.options import RegulatorChoices

    choices = options or RegulatorChoices()
    return ll144_audit(data, spec, choices.sex, choices.race, exclude_small=choices.exclude_small,
                       unknown=choices.unknown)


def ll144_count(data: Any, spec: Any, sex: str | None, race: str | None) -> tuple[Any, float | None]:
    """The count table of the individuals by (sex, race/ethnicity), and for a score outcome the median of the whole
    sample (its scoring rate counts the scores strictly above it)."""
    from luskin_core.counting.executor import counted_table

    if sex is None and race is None:
        raise LuskinError("Local Law 144 tables need a sex column, a race/ethnicity column or both; this data has "
                          "neither (or none was chosen).")
    if sex is not None and race is not None and sex.strip().lower() == race.strip().lower():
        raise LuskinError("Choose different columns for sex and race/ethnicity.")
    base = ll144_spec(spec, *(c for c in (sex, race) if c is not None))
    scoring = base.outcome_type == "score"
    if scoring and base.score_cutoff is not None:
        raise LuskinError("The LL144 scoring rate uses the median of the whole sample: leave out the score cutoff.")
    # A score without a cut-off counts strictly above the median of every scored row: the plan's one rule
    # (luskin_core.stats.judgement.ScoreRule), so the audit's score mode counts the same rows.
    table, _ = counted_table(data, base)   # the one counting path and its checks, on any executor
    return table, table.score_cutoff if scoring else None


def ll144_from_table(table: Any, median: float | None, spec: Any, sex: str | None, race: str | None, *,
                     exclude_small: bool = False, unknown: Sequence[str] = ()) -> LL144Result:
    """The LL144 result from :func:`ll144_count`'s count table and median (the arithmetic of :func:`ll144_audit`)."""
    base = ll144_spec(spec, *(c for c in (sex, race) if c is not None))
    scoring = base.outcome_type == "score"
    return ll144_from_count_table(table, exclude_small=exclude_small, scoring=scoring, median=median,
                                  sex_column=sex or "", race_column=race or "", outcome=base.outcome,
                                  unknown=(*unknown, *spec.unknown_values),   # the table's box and the spec's
                                  adverse=spec.direction.adverse,
                                  selected_means=selected_meaning(spec, scoring),
                                  absent=("sex",) if sex is None else ("race_ethnicity",) if race is None else ())


# ------------------------------------------------------------------------------------------
# Text
# ------------------------------------------------------------------------------------------
def ll144_cells(result: LL144Result, row: LL144Row) -> tuple[str, ...]:
    """A row's cells as text, the same in the command line's table and the report's: individuals, selected,
    rate, impact ratio, and (when the table has unknowns) the range over them and its status."""
    ratio = "excluded (under 2%)" if row.excluded else format_number(row.impact_ratio, 2)
    return (f"{row.n:,}", f"{row.selected:,}", format_percent(row.rate), ratio)


STATUS_WORDS = {"passes": "passes whatever the unknowns were", "could_fail": "could fall below 0.80",
                "fails": "below 0.80 whatever the unknowns were"}
# The coded columns of the CSV export in words, for a reader's download (luskin_core.export.plain_headings)
CSV_VALUE_WORDS = {"status": STATUS_WORDS, "table": KIND_TITLES}


def bounds_cells(row: LL144Row) -> tuple[str, str]:
    """The range of the impact ratio over the unknowns, and its status, as text."""
    if row.impact_ratio_low is None or row.impact_ratio_high is None:
        return ("", "")
    return (f"{format_number(row.impact_ratio_low, 2)}–{format_number(row.impact_ratio_high, 2)}",
            STATUS_WORDS.get(row.status or "", ""))


def format_ll144(result: LL144Result) -> str:
    """The three tables as plain text, laid out like published LL144 summaries of results."""
    from luskin_core.formatting import format_table

    rate = result.rate_name.capitalize()
    selected = "Scored above median" if result.scoring else "# Selected"
    inter = result.table("intersectional")
    assessed_unknowns = ("unknown category (missing sex or race/ethnicity, not included in the intersectional "
                         f"table): {result.unknown_count:,}" if inter.rows or inter.unknown_count else
                         "; ".join(f"{what[0].lower() + what[1:]}: {n:,}" for what, n in result.unknown_counts()))
    lines = [f"NYC Local Law 144 bias audit ({result.rate_name}s, impact ratios against the most selected category)",
             f"Individuals assessed: {result.assessed:,}" + (f"; {assessed_unknowns}" if assessed_unknowns else "")]
    if result.selected_means:
        lines.append(result.selected_means)
    if result.no_outcome_count:
        lines.append(f"Rows with no outcome (not assessed, in no table): {result.no_outcome_count:,}")
    if result.scoring and result.median is not None:
        lines.append(f"Median score of the full sample: {result.median:g}; the scoring rate is the share strictly "
                     "above it.")
    for t in result.tables:
        unknowns = bool(t.unknown_count)
        rows = [[r.category, *ll144_cells(result, r), *(bounds_cells(r) if unknowns else ())] for r in t.rows]
        head = ["category", "# of applicants", selected, rate, "impact ratio"]
        if unknowns:
            head += ["range over the unknowns", "status"]
        counted = f" (unknown {UNKNOWN_WHAT[t.kind]}: {t.unknown_count:,})" if t.rows or t.unknown_count else ""
        lines += ["", f"{KIND_TITLES[t.kind]} categories{counted}"]
        if t.rows:
            lines.append(format_table(rows, head))
        if t.reason:
            lines.append(f"No impact ratios: {t.reason}")
    if result.justification:
        lines += ["", "Note: " + result.justification]
    lines += [""] + [f"- {s}" for s in result.sentences()]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------
# Output: what the command line, the report and the page show (luskin_core.analyses.regulator_tables)
# ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LL144Output:
    """The Local Law 144 tables with the sex × race/ethnicity audit's data sufficiency (None from a published
    table, or when a single-sex pool has no such comparison: ``audit_problem`` says why)."""

    result: LL144Result
    audit: Any = None
    sufficiency: tuple[Any, ...] = ()
    audit_problem: str = ""
    anchor: str = "ll144"
    section_title: str = "NYC Local Law 144 bias audit: summary of results"
    sentences_title: str = "In words"

    def intro(self) -> list[str]:
        if self.audit_problem:
            return [f"Data sufficiency: not computed ({self.audit_problem})"]
        return sufficiency_bullets(self.sufficiency)

    def document(self) -> dict[str, Any]:
        document = self.audit.to_dict() if self.audit is not None else {}
        document.update({"template": "ll144", "ll144": self.result.to_dict(),
                         "sufficiency": [s.to_dict() for s in self.sufficiency]})
        return document

    def csv_frame(self) -> pd.DataFrame:
        return self.result.to_frame()

    def text(self) -> str:
        lines = self.intro()
        return "\n".join([*lines, "", format_ll144(self.result)]) if lines else format_ll144(self.result)

    def metrics(self) -> list[tuple[str, str]]:
        r = self.result
        out = [("Individuals assessed", f"{r.assessed:,}"),
               *((what.split(" (")[0], f"{n:,}") for what, n in r.unknown_counts())]
        if r.scoring and r.median is not None:
            out.append(("Median score (scoring rate: strictly above)", f"{r.median:g}"))
        elif r.no_outcome_count:
            out.append(("Rows with no outcome (not assessed)", f"{r.no_outcome_count:,}"))
        return out

    def notes(self) -> list[str]:
        return [self.result.selected_means] if self.result.selected_means else []

    def settings(self, data_label: str = "") -> list[tuple[str, str]]:
        r = self.result
        items = [("Data", data_label)] if data_label else []
        items += [("Individuals assessed", f"{r.assessed:,}"), *((what, f"{n:,}") for what, n in r.unknown_counts())]
        if r.no_outcome_count:
            items.append(("Rows with no outcome (not assessed)", f"{r.no_outcome_count:,}"))
        items += [("Rate", r.rate_name + (f": the share scoring strictly above the median score ({r.median:g})"
                                          if r.scoring and r.median is not None else "")),
                  ("Impact ratio", "the category's rate divided by the rate of the most selected category")]
        if r.source == "rows":
            items += [("Sex column", r.sex_column), ("Race/ethnicity column", r.race_column)]
        return [(k, v) for k, v in items if v]

    def tables(self) -> list[ShownTable]:
        r = self.result
        frame = r.to_frame()
        selected = "Scored above median" if r.scoring else "# Selected"
        out = []
        for t in r.tables:
            unknowns = bool(t.unknown_count)
            header: tuple[str, ...] = ("Category", "# of applicants", selected, r.rate_name.capitalize(),
                                       "Impact ratio")
            if unknowns:
                header += ("Range over the unknowns", "Status")
            rows = tuple((row.category, *ll144_cells(r, row), *(bounds_cells(row) if unknowns else ()))
                         for row in t.rows)
            part = frame[(frame["table"] == t.kind) & (frame["category"] != UNKNOWN_CATEGORY)].drop(columns="table")
            part = part.assign(status=[STATUS_WORDS.get(s, "") if isinstance(s, str) else "" for s in part["status"]])
            if not unknowns:
                part = part.drop(columns=["impact_ratio_low", "impact_ratio_high", "status"])
            out.append(ShownTable(KIND_TITLES[t.kind] + " categories", header, rows,
                                  tuple(bool(row.below_four_fifths) for row in t.rows),
                                  f"Unknown {UNKNOWN_WHAT[t.kind]}: {t.unknown_count:,} (not in this table).",
                                  part.reset_index(drop=True), reason=t.reason))
        return out

    def sentences(self) -> list[str]:
        return self.result.sentences()


def unknown_named(names: Sequence[tuple[str, Sequence[tuple[str, str]]]], result: LL144Result, sex: str | None,
                  race: str | None) -> dict[str, dict[str, str]]:
    """The specification's value names, plus every value the tables read as unknown ('Decline to self-identify',
    the user's ``--unknown``) named "Unknown": the sufficiency comparisons beside the tables then count those
    individuals with the missing values, as the tables do, rather than as a category of their own. A value the
    user named is found through its name."""
    columns = {"sex": sex, "race_ethnicity": race}
    return named_unknown(names, [(column, value) for kind, value, _ in result.unknown_values
                                 if (column := columns.get(kind))])


def build_ll144(data: Any, spec: Any, choices: Any) -> LL144Output:
    """The Local Law 144 tables and the data sufficiency of the sex × race/ethnicity audit beside them."""
    return ll144_output(ll144_counted(data, spec, choices), spec, choices)


@dataclass(frozen=True)
class LL144Counts:
    """What an LL144 audit of rows counted: the table by (sex, race/ethnicity), the median of a score, and the
    count table of the sex × race/ethnicity audit beside it (None, with ``problem`` saying why, when that audit
    cannot be made: a single-sex pool). Every number of :class:`LL144Output` follows from these and the choices."""

    table: Any
    median: float | None
    crossed: Any = None
    problem: str = ""


def ll144_counted(data: Any, spec: Any, choices: Any) -> LL144Counts:
    """The counting of :func:`build_ll144` (on any engine), nothing computed from it but what the counting needs."""
    from luskin_core.counting.executor import counted_table

    table, median = ll144_count(data, spec, choices.sex, choices.race)
    result = ll144_from_table(table, median, spec, choices.sex, choices.race, exclude_small=choices.exclude_small,
                              unknown=choices.unknown)
    try:
        crossed = counted_table(data, ll144_crossed_spec(spec, result, choices))[0]
    except LuskinError as err:  # a single-sex pool has no sex × race/ethnicity comparison; the tables say why
        return LL144Counts(table, median, None, str(err))
    return LL144Counts(table, median, crossed)


def ll144_crossed_spec(spec: Any, result: LL144Result, choices: Any) -> Any:
    """The specification of the sex × race/ethnicity audit beside the tables (its data sufficiency)."""
    columns = tuple(c for c in (choices.sex, choices.race) if c)
    # the tables' own rows: one cell, no strata or filter of the Audit page (its sufficiency would describe cells
    # the tables do not have)
    crossed = ll144_spec(spec, *columns).with_changes(
        value_names=unknown_named(spec.value_names, result, choices.sex, choices.race))
    return crossed   # a score counts strictly above the median there too (the plan's one rule)


def ll144_output(counts: LL144Counts, spec: Any, choices: Any) -> LL144Output:
    """The LL144 output from what :func:`ll144_counted` counted: the arithmetic alone."""
    from luskin_core.analyses.audit import result_from_counts

    result = ll144_from_table(counts.table, counts.median, spec, choices.sex, choices.race,
                              exclude_small=choices.exclude_small, unknown=choices.unknown)
    if counts.crossed is None:
        return LL144Output(result, audit_problem=counts.problem)
    crossed = ll144_crossed_spec(spec, result, choices)
    source = "recorded outcome" if crossed.prediction is None else f"decisions in '{crossed.prediction}'"
    audited = result_from_counts(counts.crossed, crossed, source=source)
    return LL144Output(result, audited, known_sufficiency(audited, crossed))


def ll144_summary_output(path: Any, choices: Any) -> LL144Output:
    """The Local Law 144 output of a published summary table (a file or a binary buffer)."""
    return LL144Output(ll144_from_summary(read_summary(path), exclude_small=choices.exclude_small,
                                          unknown=choices.unknown))


__all__ = [
    "CROSS",
    "EXCLUSION_JUSTIFICATION",
    "KINDS",
    "KIND_TITLES",
    "SMALL_SHARE",
    "STATUS_WORDS",
    "UNKNOWN_CATEGORY",
    "UNKNOWN_WHAT",
    "LL144Counts",
    "LL144Output",
    "LL144Result",
    "LL144Row",
    "LL144Table",
    "bounds_cells",
    "build_ll144",
    "format_ll144",
    "guess_ll144_columns",
    "ll144_audit",
    "ll144_cells",
    "ll144_count",
    "ll144_counted",
    "ll144_crossed_spec",
    "ll144_from_cells",
    "ll144_from_count_table",
    "ll144_from_counts",
    "ll144_from_summary",
    "ll144_from_table",
    "ll144_from_tables",
    "ll144_output",
    "ll144_spec",
    "ll144_summary_output",
    "ll144_table",
    "read_summary",
    "run",
    "selected_meaning",
    "unknown_key",
    "unknown_keys",
]
