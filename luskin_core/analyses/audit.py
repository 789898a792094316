"""Controlled-fairness audit (paper section 3, Definition 1), generalised to what agencies are asked for.

The paper compares the protected class with the other class inside each filter cell. Here the
same comparison runs for every group (a protected condition vs the rest, each value of a column,
or a cross of columns) against a reference group, inside every cell (all rows, a filter and its
complement, or strata of control columns), with intervals, tests adjusted for the number of
comparisons, impact ratios, a pooled view across cells and a verdict that separates a real gap
from chance and from too few rows (see :mod:`luskin_core.stats.comparisons`).

Every number comes from one count table (:mod:`luskin_core.counting.count_table`), made by one aggregation.
One truth: the comparisons' verdicts. For the paper's setup (two classes, one filter) the
result also keeps the paper's view, ``cells`` (each class in each filter cell) and ``gaps``
(one per cell), but a gap is a view of that cell's comparison: the same difference (group
minus reference, as everywhere), p-values and verdict, and ``fair`` is the verdict as a flag.
``AuditResult.fair``, the headline, the JSON, the pages, the report and the slides all read it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from luskin_core.analyses import narrative
from luskin_core.counting.count_table import CountTable
from luskin_core.counting.executor import counted_table, executor_for, group_names
from luskin_core.counting.ibis_source import Source
from luskin_core.counting.memory import count_arrays
from luskin_core.counting.prepared import Prepared, prepare
from luskin_core.errors import LuskinError
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.spec.names import GroupNames
from luskin_core.spec.validation import refuse_estimated
from luskin_core.stats import shown as shown_statistics
from luskin_core.stats.comparisons import Comparison, JudgedRate, PooledComparison, compare, record_dict
from luskin_core.stats.inference import wilson_interval
from luskin_core.stats.judgement import Judgement
from luskin_core.stats.shrinkage import with_pooled
from luskin_core.stats.verdict import JUDGED_ORDER, SET_APART_SHORT, Verdict

if TYPE_CHECKING:
    import pandas as pd
else:  # imported on first use: a file's audit on the command line never needs it
    from luskin_core._lazy import pandas as pd


@dataclass(frozen=True)
class Cell:
    """One protected class inside one filter cell (the paper's view)."""

    filter_holds: bool | None
    in_group: bool
    label: str
    cell: str
    n: int
    positives: int
    ratio: float | None
    ci_low: float | None
    ci_high: float | None


@dataclass(frozen=True)
class Gap:
    """The comparison of the two protected classes inside one filter cell (the paper's view of it).

    Derived from the cell's comparison (:class:`luskin_core.stats.comparisons.Comparison`), nothing copied:
    ``gap`` is the judged rate of ``group`` minus the ``reference``'s (the share with a positive decision,
    or the error rate the criterion judges), ``p_value``/``p_adjusted`` its tests, ``verdict`` the
    comparison's verdict and ``fair`` that verdict as a flag: True within the tolerance, False beyond it
    (by chance or not), None when it is not judged (too few rows, or a class is empty in the cell: "not
    computable"). ``sentence`` is the narrative's, written when asked for.
    """

    filter_holds: bool | None
    cell: str
    comparison: Comparison = field(repr=False)
    spec: AuditSpec = field(repr=False, compare=False)

    @property
    def _rate(self) -> JudgedRate | None:
        return self.comparison.deciding

    @property
    def gap(self) -> float | None:
        return None if self._rate is None else self._rate.difference

    @property
    def p_value(self) -> float | None:
        return None if self._rate is None else self._rate.p_value

    @property
    def p_adjusted(self) -> float | None:
        return None if self._rate is None else self._rate.p_adjusted

    @property
    def test(self) -> str:
        rate = self._rate
        return rate.test if rate is not None and rate.p_value is not None else "not computable (a class has no rows)"

    @property
    def significant(self) -> bool | None:
        """Below 0.05 after adjusting (or unadjusted when no adjusted p exists); None when untested."""
        judgement = Judgement.of(self.spec)
        return judgement.significant(self.p_adjusted if self.p_adjusted is not None else self.p_value)

    @property
    def verdict(self) -> Verdict:
        return self.comparison.verdict

    @property
    def fair(self) -> bool | None:
        return self.comparison.fair

    @property
    def group(self) -> str:
        return self.comparison.group

    @property
    def reference(self) -> str:
        return self.comparison.reference

    @property
    def measure(self) -> str:
        return "selection" if self._rate is None else self._rate.name

    @property
    def sentence(self) -> str:
        return narrative.sentence(self.comparison, self.spec)

    def to_dict(self) -> dict[str, Any]:
        """The JSON of a gap (the keys it has always had)."""
        return {"filter_holds": self.filter_holds, "cell": self.cell, "gap": self.gap, "p_value": self.p_value,
                "test": self.test, "fair": self.fair, "significant": self.significant, "sentence": self.sentence,
                "verdict": self.verdict, "p_adjusted": self.p_adjusted, "group": self.group,
                "reference": self.reference, "measure": self.measure}


@dataclass(frozen=True)
class AuditResult:
    """Everything an audit found, with views for tables, charts, JSON and sentences.

    ``comparisons``: one per group per cell (the reference included); ``pooled``: one per
    non-reference group across the cells. ``cells``/``gaps``: the paper's two-class view (empty
    when groups are the values of columns).
    """

    spec: AuditSpec
    source: str
    cells: tuple[Cell, ...]
    gaps: tuple[Gap, ...]
    n_rows: int
    n_excluded: int
    excluded_reasons: dict[str, int]
    comparisons: tuple[Comparison, ...] = ()
    pooled: tuple[PooledComparison, ...] = ()
    reference: str = ""
    counts: CountTable | None = field(default=None, repr=False, compare=False)
    judgement: Judgement = field(default_factory=Judgement, repr=False, compare=False)

    # -- lookups ----------------------------------------------------------------------------
    @property
    def class_names(self) -> GroupNames:
        """The protected class's and the rest's names as the data named them ("Male", where the spec says
        "Non-Female"): resolved from the data and carried on the count table, the spec left as given."""
        counts = self.counts
        if counts is not None and counts.group_in_protected is not None and len(counts.groups) == 2:
            return GroupNames(counts.groups[0], counts.groups[1])
        return GroupNames.of(self.spec)

    @property
    def groups_text(self) -> str:
        """Who is compared, in words: the compared class first, then the reference (the classes named as the data
        names them)."""
        if self.spec.group_by:
            return self.spec.groups_text
        names = self.class_names
        if self.reference == names.group:   # the user named the protected class as the reference
            return f"{names.other} vs {names.group}"
        return f"{names.group} vs {names.other}"

    @property
    def groups(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(c.group for c in self.comparisons))

    @property
    def cell_names(self) -> tuple[str | None, ...]:
        return tuple(dict.fromkeys(c.cell for c in self.comparisons))

    @property
    def judged(self) -> tuple[Comparison, ...]:
        """The comparisons that carry a verdict (not the reference's own rows)."""
        return tuple(c for c in self.comparisons if not c.is_reference)

    @property
    def unknown_groups(self) -> tuple[str, ...]:
        """The groups of unknown category ("Unknown", "Decline to self-identify", a cross with either).

        Compared and shown, but not counted in the verdict, the headline or the findings: their members
        belong to the groups compared, and regulators set unknowns apart too. None for a protected condition,
        whose unknown rows are left out (:data:`luskin_core.counting.plan.REASONS`), and never the reference
        (a user may name "Unknown" as the one to compare with)."""
        return self.judgement.unknown

    @property
    def counted(self) -> tuple[Comparison, ...]:
        """The judged comparisons of groups of known category (the verdict's, the headline's)."""
        unknown = set(self.unknown_groups)
        return tuple(c for c in self.judged if c.group not in unknown)

    def set_apart(self, c: Comparison) -> bool:
        """Whether a comparison is of a group of unknown category: its numbers are shown, its verdict is not."""
        return not c.is_reference and c.group in self.unknown_groups

    def of_known_groups(self) -> AuditResult:
        """This result without the comparisons of groups of unknown category (the findings are made from it)."""
        unknown = set(self.unknown_groups)
        if not unknown:
            return self
        return replace(self, comparisons=tuple(c for c in self.comparisons if c.group not in unknown),
                       pooled=tuple(p for p in self.pooled if p.group not in unknown))

    @property
    def fair(self) -> bool | None:
        """True when every comparison that can be judged is within tolerance; None if none can be judged.

        Read from the verdicts alone (the headline's source too): too-few-rows comparisons count
        for neither side, nor do groups of unknown category (:attr:`unknown_groups`). For the paper's two
        classes: "every judged filter cell is within".
        """
        flags = [c.fair for c in self.counted if c.fair is not None]
        return all(flags) if flags else None

    @property
    def simpson(self) -> tuple[PooledComparison, ...]:
        """Groups of known category whose overall gap disagrees with the gap within the cells (a group of unknown
        category is set apart from every finding, this one too)."""
        return tuple(p for p in self.pooled if p.simpson and p.group not in self.unknown_groups)

    def simpson_words(self, p: PooledComparison, *, no: str = "no") -> str:
        """A pooled table's Simpson column: 'YES', ``no``, or 'apart' for a group of unknown category."""
        if p.group in self.unknown_groups:
            return SET_APART_SHORT
        return "YES" if p.simpson else no

    def verdict_counts(self) -> dict[Verdict, int]:
        """How many comparisons of groups of known category got each verdict."""
        out = {v: 0 for v in JUDGED_ORDER}
        for c in self.counted:
            out[c.verdict] += 1
        return out

    def cell(self, filter_holds: bool | None, in_group: bool) -> Cell:
        for c in self.cells:
            if c.filter_holds == filter_holds and c.in_group == in_group:
                return c
        raise KeyError((filter_holds, in_group))

    def gap(self, filter_holds: bool | None) -> Gap:
        for g in self.gaps:
            if g.filter_holds == filter_holds:
                return g
        raise KeyError(filter_holds)

    def comparison(self, group: str, cell: str | None = None) -> Comparison:
        for c in self.comparisons:
            if c.group == group and (c.cell == cell or (cell is None and len(self.cell_names) == 1)):
                return c
        raise KeyError((group, cell))

    # -- views ------------------------------------------------------------------------------
    def to_frame(self) -> pd.DataFrame:
        """The table a page shows: the paper's one row per class per cell, or every comparison."""
        if not self.cells:
            return self.comparisons_frame()
        rows = []
        for c in self.cells:
            g = self.gap(c.filter_holds)
            rows.append({
                "Filter cell": c.cell, "Group": c.label, "Rows": c.n, "Positive": c.positives,
                "Ratio": c.ratio, "95% CI low": c.ci_low, "95% CI high": c.ci_high,
                "Gap (group - reference)": g.gap, "p-value": g.p_value,
                Verdict.WITHIN.heading: g.fair, "Verdict": g.verdict,
            })
        return pd.DataFrame(rows)

    def comparisons_frame(self) -> pd.DataFrame:
        """One row per group per cell against the reference: every number of the audit."""
        rows = []
        for c in self.comparisons:
            row = {
                "Cell": c.cell if c.cell is not None else "All rows", "Group": c.group, "Rows": c.n,
                "Positive": c.positives, "Share": c.rate, "95% CI low": c.ci_low, "95% CI high": c.ci_high,
                "Reference": c.reference, "Difference": c.difference,
                "Difference CI low": c.difference_ci_low, "Difference CI high": c.difference_ci_high,
                "Impact ratio": c.impact_ratio, "Impact ratio CI low": c.impact_ratio_ci_low,
                "Impact ratio CI high": c.impact_ratio_ci_high, "p-value": c.p_value,
                "Adjusted p-value": c.p_adjusted, **{s.heading: s.value(c) for s in shown_statistics.SHOWN}, "Verdict": c.verdict,
            }
            if c.criterion != "selection" and not c.is_reference:
                for j in c.judged_rates:
                    row[f"{j.name.upper() if j.name != 'precision' else 'Precision'} adjusted p-value"] = j.p_adjusted
            if c.score is not None:
                row.update({"Mean score": c.score["mean"], "Mean CI low": c.score["mean_ci_low"],
                            "Mean CI high": c.score["mean_ci_high"], "SMD": c.score["smd"]})
            if c.error_rates is not None:
                for name, values in c.error_rates.items():
                    row[name.upper() if name != "precision" else "Precision"] = values["rate"]
            rows.append(row)
        return pd.DataFrame(rows)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "spec": self.spec.to_dict(),
            "n_rows": self.n_rows,
            "n_excluded": self.n_excluded,
            "excluded_reasons": dict(self.excluded_reasons),
            "tolerance": self.spec.tolerance,
            "judgement": self.judgement.to_dict(),
            "fair": self.fair,
            "headline": self.headline(),
            "sentences": self.sentences(),
            "reference": self.reference,
            "group_mode": self.spec.group_mode,
            "cell_mode": self.spec.cell_mode,
            "score_cutoff": None if self.counts is None else self.counts.score_cutoff,
            "criterion": self.spec.criterion,
            "verdict_counts": self.verdict_counts(),
            "cells": [record_dict(c) for c in self.cells],
            "gaps": [g.to_dict() for g in self.gaps],
            "comparisons": [{**c.to_dict(), "sentence": self.sentence(c),
                             "power_sentence": narrative.power_words(c, self.spec)} for c in self.comparisons],
            "pooled": [{**p.to_dict(), "sentence": self.pooled_sentence(p), "notes": list(self.notes(p))}
                       for p in self.pooled],
        }

    def sentence(self, c: Comparison) -> str:
        """One comparison in words (the narrative's, written now from its numbers)."""
        return narrative.sentence(c, self.spec)

    def pooled_sentence(self, p: PooledComparison) -> str:
        """One group across the cells in words: overall, and within them."""
        return narrative.pooled_sentence(p, self.spec, len(self.cell_names) > 1)

    def sufficiency_lines(self) -> list[str]:
        """What the data could show, in words: the groups of known category (more rows of unknown category would
        not tell the committee more about any group)."""
        from luskin_core.stats.power import sufficiency, sufficiency_lines

        return sufficiency_lines(sufficiency(self.comparisons, self.judgement))

    def power_sentences(self) -> list[str]:
        """What each comparison judged within the tolerance (or could be chance) could have seen, in words."""
        return [text for c in self.comparisons
                if not self.set_apart(c) and (text := narrative.power_words(c, self.spec))]

    def notes(self, p: PooledComparison) -> tuple[str, ...]:
        """What to mind when reading a group's pooled view (the gap differs from cell to cell)."""
        return narrative.pooled_notes(p, self.spec, len(self.cell_names) > 1)

    def headline(self) -> str:
        """The finding in one sentence: how many comparisons exceed the tolerance, and whether by chance."""
        return narrative.headline(self)

    def sentences(self) -> list[str]:
        """One plain sentence per finding: per cell for the paper's two classes, per group otherwise."""
        return narrative.sentences(self)


def _num(x: float) -> float | None:
    return None if x is None or not np.isfinite(x) else float(x)


def audit(
    frame: pd.DataFrame | Source,
    spec: AuditSpec,
    predictions: Sequence[int] | np.ndarray | None = None,
    *,
    source: str | None = None,
) -> AuditResult:
    """Audit the recorded outcome (or ``predictions`` for the same rows) against ``spec``.

    ``predictions`` (one 0/1 decision per row) replaces the audited decision, as the paper's
    tables audit A1's and C2's decisions; to audit a model's decisions against the truth, with
    error rates, name a prediction column in ``spec.prediction`` instead. ``frame`` may also be a
    :class:`~luskin_core.counting.sources.Source` (DuckDB, PostgreSQL, Spark): the same audit, counted
    where the data lives.
    """
    refuse_estimated(spec.group_spec)   # race estimated from surname and place: the proxy audit's groups
    if spec.outcome_type == "amount":   # its shares of rows above 0 would read as "no gap" (issue 50)
        raise LuskinError(f"'{spec.outcome}' is an amount: its groups' means and medians are compared by the Amounts "
                          "analysis (the Amounts page; luskin_core.analyses.amounts.run), not as the share of a "
                          "yes/no outcome.")
    if isinstance(frame, Source) and predictions is not None:
        raise LuskinError("Predictions given as a list need the rows in memory; on a database, name a "
                          "prediction column instead.")
    if predictions is not None:
        assert not isinstance(frame, Source)   # refused above
        prepared = prepare(frame, spec, check_positive=False)
        y = _check_predictions(predictions, frame, prepared)
        if spec.group_mode != "condition":
            raise LuskinError("Predictions given as a list are audited for a protected condition only; for groups "
                              "formed by columns, put the predictions in a column and name it as the prediction.")
        assert prepared.in_group is not None  # set for a protected condition
        return audit_arrays(y, prepared.in_group, prepared.filter_holds if prepared.has_filter else None,
                            spec, source=source or "predictions", n_excluded=prepared.n_excluded,
                            excluded_reasons=prepared.excluded_reasons,
                            names=group_names(executor_for(frame), spec))   # "Male", not "Non-Female"
    table, _ = counted_table(frame, spec)   # counted once, checked once, in one wording, on every executor
    default = "recorded outcome" if spec.prediction is None else f"decisions in '{spec.prediction}'"
    return result_from_counts(table, spec, source=source or default)


def _check_predictions(predictions: Any, frame: pd.DataFrame, prepared: Prepared) -> np.ndarray:
    values = np.asarray(predictions)
    if values.shape[0] == len(frame):
        values = values[prepared.kept]
    elif values.shape[0] != len(prepared.frame):
        raise LuskinError(
            f"There are {values.shape[0]} predictions for {len(frame)} rows: give one prediction per row."
        )
    if values.dtype.kind in "OUS":  # text: true/false, yes/no, 0/1 in any spelling, as a prediction column
        from luskin_core.counting.plan import FALSE_WORDS, TRUE_WORDS

        words = pd.Series(values, dtype="string").str.strip().str.lower()
        if not words.isin((*TRUE_WORDS, *FALSE_WORDS)).fillna(False).all():
            raise LuskinError("Predictions must be 0 or 1 (or true/false, yes/no), with no missing values.")
        values = words.isin(TRUE_WORDS).to_numpy(dtype=bool)
    try:
        values = values.astype(float)
    except (TypeError, ValueError):
        raise LuskinError("Predictions must be 0 or 1 (or true/false).") from None
    if np.isnan(values).any() or not np.isin(values, (0.0, 1.0)).all():
        raise LuskinError("Predictions must be 0 or 1 (or true/false), with no missing values.")
    return values.astype(np.int8)


def audit_arrays(
    y: np.ndarray,
    in_group: np.ndarray,
    filter_holds: np.ndarray | None,
    spec: AuditSpec,
    *,
    source: str = "labels",
    n_excluded: int = 0,
    excluded_reasons: dict[str, int] | None = None,
    names: GroupNames | None = None,
) -> AuditResult:
    """The audit's arithmetic on aligned 0/1 decisions, class membership and filter membership.

    ``names``: the two classes' names as the data names them (default: the spec's own)."""
    table = count_arrays(y, in_group, filter_holds, spec, n_excluded=n_excluded, excluded=excluded_reasons,
                         names=names)
    return result_from_counts(table, spec, source=source)


def result_from_counts(table: CountTable, spec: AuditSpec, *, source: str) -> AuditResult:
    """Every statistic of the audit from its count table, judged by the specification's judgement resolved on it."""
    judgement = Judgement.of(spec).resolved(table)
    comparisons, pooled, reference = compare(table, judgement)
    comparisons = with_pooled(table, spec, comparisons)  # partially pooled shares of small groups
    cells: list[Cell] = []
    gaps: list[Gap] = []
    if table.group_in_protected is not None:
        cells, gaps = _paper_view(table, spec, comparisons)
    return AuditResult(spec, source, tuple(cells), tuple(gaps), table.n_rows, table.n_excluded,
                       dict(table.excluded), comparisons, pooled, reference, table, judgement)


def _paper_view(table: CountTable, spec: AuditSpec, comparisons: Sequence[Comparison]) -> tuple[list[Cell], list[Gap]]:
    """The paper's cells (protected class x filter cell) and gaps: each gap a view of its cell's comparison."""
    n, k = table.n, table.positives
    low, high = wilson_interval(k, n)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = k / n
    cells: list[Cell] = []
    gaps: list[Gap] = []
    for ci, (key, name) in enumerate(zip(table.cell_keys, table.cell_labels)):
        for gi, member in ((0, True), (1, False)):
            cells.append(Cell(key, member, table.groups[gi], name, int(n[gi, ci]), int(k[gi, ci]),
                              _num(ratio[gi, ci]), _num(low[gi, ci]), _num(high[gi, ci])))
        judged = next(c for c in comparisons if not c.is_reference and c.cell_key == key)
        gaps.append(Gap(key, name, judged, spec))
    return cells, gaps


__all__ = ["AuditResult", "Cell", "Gap", "audit", "audit_arrays", "result_from_counts"]
