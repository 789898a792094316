"""The model behind adjusted gaps: cells, the design, the fit, average marginal effects, and the result.

Entry points are in :mod:`luskin_core.analyses.adjust`; the engine (:mod:`adjust_engine`, :mod:`adjust_sums`),
the diagnostics and the decomposition build on this module, so none of them imports another in a circle.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from scipy import linalg, sparse, special

from luskin_core.counting.executor import executor_for, group_names
from luskin_core.counting.memory import plan_for_frame, row_group_labels
from luskin_core.counting.prepared import prepare
from luskin_core.errors import LuskinError
from luskin_core.formatting import amount_digits, format_amount, format_p, format_percent, format_points, points
from luskin_core.spec.audit_spec import AuditSpec, resolve_column
from luskin_core.spec.unknown import UNKNOWN
from luskin_core.stats.comparisons import choose_reference
from luskin_core.stats.judgement import Judgement, ScoreRule
from luskin_core.stats.verdict import Verdict

MAX_ITERATIONS = 100
# Past this many cells an engine's fit runs from per-key sums in the engine (luskin_core.analyses.adjust_sums).
MAX_CELLS = 1_000_000
# Non-zero entries of the (sparse) design past which the fit would need too much memory (about 12 bytes each).
MAX_DESIGN_ENTRIES = 60_000_000
# Values of one categorical control past which a coefficient per value is refused: the dense Gram matrix of
# 10,000 levels took minutes and 3.3 GB (issue 30); 2,000 levels fit in seconds.
MAX_CONTROL_LEVELS = 2_000
# Numbers beyond this size cannot enter a model: their squares (in the Gram matrix) overflow a float.
NUMBER_LIMIT = 1e150


def check_size(name: str, values: np.ndarray, what: str) -> None:
    """A plain refusal for numbers too large for a model (the fit would fail with a linear-algebra error)."""
    finite = values[np.isfinite(values)]
    if finite.size and float(np.abs(finite).max()) > NUMBER_LIMIT:
        largest = float(np.abs(finite).max())
        raise LuskinError(f"The {what} '{name}' holds numbers as large as {largest:.3g}: a model cannot use numbers "
                          f"beyond ±{NUMBER_LIMIT:.0e} (their squares overflow). Rescale the column (divide it by a "
                          "power of ten) or leave it out.")


def check_levels(name: str, count: int) -> None:
    """A plain refusal for a categorical control with more values than a model can hold one by one."""
    if count > MAX_CONTROL_LEVELS:
        raise LuskinError(f"The control '{name}' has {count:,} distinct values: holding each one equal needs a "
                          f"coefficient per value, more than the {MAX_CONTROL_LEVELS:,} a model here can fit. Group "
                          "rare values into one, use a coarser column, or give a number as a number (or in bins).")


# ------------------------------------------------------------------------------------------
# Results
# ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class AdjustedGap:
    """One group against the reference: raw gap, adjusted gap (AME), odds ratio, decomposition, verdict."""

    group: str
    reference: str
    n: int
    reference_n: int
    rate: float
    reference_rate: float
    raw_difference: float
    adjusted_difference: float
    adjusted_se: float
    adjusted_ci_low: float
    adjusted_ci_high: float
    adjusted_p_value: float
    adjusted_p_corrected: float
    odds_ratio: float | None
    odds_ratio_ci_low: float | None
    odds_ratio_ci_high: float | None
    explained: float
    explained_ci_low: float
    explained_ci_high: float
    unexplained: float
    unexplained_ci_low: float
    unexplained_ci_high: float
    explained_by: tuple[tuple[str, float], ...]
    verdict: Verdict
    sentence: str = ""
    # Favourable share with the group set to this group over the same with the group set to the reference, over
    # all rows (the adjusted impact ratio; logistic models only: a mean of numbers has no impact ratio).
    adjusted_impact_ratio: float | None = None
    # An amount: the adjusted and raw gaps as shares of the reference's amount (positive: the group fares worse;
    # the model on the log: the ratio with the controls held equal), judged against the tolerance as a share.
    adjusted_gap_share: float | None = None
    adjusted_gap_share_ci_low: float | None = None
    adjusted_gap_share_ci_high: float | None = None
    raw_gap_share: float | None = None
    unexplained_share: float | None = None

    @property
    def flagged(self) -> bool:
        """Beyond the bar once the controls are held equal, and not by chance: the verdict, as a flag."""
        return self.verdict == Verdict.BEYOND

    def json_entry(self, amount: bool = False) -> dict[str, Any]:
        """The issue's ``adjusted`` object: exactly these keys (fractions, not points); an amount's adds its gap
        shares (``amount``)."""
        out = {
            "group": self.group, "reference": self.reference, "raw_difference": self.raw_difference,
            "adjusted_difference": self.adjusted_difference, "adjusted_ci_low": self.adjusted_ci_low,
            "adjusted_ci_high": self.adjusted_ci_high, "adjusted_p_value": self.adjusted_p_value,
            "odds_ratio": self.odds_ratio, "odds_ratio_ci_low": self.odds_ratio_ci_low,
            "odds_ratio_ci_high": self.odds_ratio_ci_high, "explained": self.explained,
            "unexplained": self.unexplained, "verdict": self.verdict,
        }
        if amount:
            out.update({"adjusted_gap_share": self.adjusted_gap_share,
                        "adjusted_gap_share_ci_low": self.adjusted_gap_share_ci_low,
                        "adjusted_gap_share_ci_high": self.adjusted_gap_share_ci_high,
                        "raw_gap_share": self.raw_gap_share})
        return out

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["explained_by"] = dict(self.explained_by)
        out["flagged"] = self.flagged
        return out


@dataclass(frozen=True)
class Coefficient:
    """One model coefficient with its standard error (the group's and every control's)."""

    name: str
    estimate: float
    se: float


@dataclass(frozen=True)
class AdjustResult:
    """Every group's adjusted gap against the reference, with the model's diagnostics in words."""

    spec: AuditSpec
    model: str                       # "logistic" or "linear"
    outcome_text: str
    reference: str
    controls: tuple[str, ...]
    categorical: tuple[str, ...]
    cluster: str | None
    tolerance: float
    gaps: tuple[AdjustedGap, ...]
    n_rows: int
    n_cells: int
    n_parameters: int
    n_clusters: int | None
    converged: bool
    iterations: int
    coefficients: tuple[Coefficient, ...]
    diagnostics: tuple[str, ...]
    decomposition: str
    rows_note: str = ""
    source: str = "in memory"
    scale: str = ""   # an amount: "amount" (the model on the amount) or "log" (on its logarithm); else ""
    codes: tuple[str, ...] = ()   # numeric controls read as categories by the one rule (few values, or codes)
    # A score: the one score rule that made the yes/no outcome, in words with its number ("ai_score above the
    # median (57.4)", "ai_score at or above 60"), and that number (the median, or the cut-off); else "" and None.
    score_rule: str = ""
    score_cutoff: float | None = None

    @property
    def outcome_note(self) -> str:
        """A score's outcome in words: which rule made it, and that the gaps are points of its share ("" else; no
        option named: the page and the command line each say in their own terms how to model the score's mean)."""
        if not self.score_rule:
            return ""
        return (f"The outcome modelled is {self.score_rule}: the rows counted as positive by the audit's rule for "
                f"this score, so each gap is in points of that share, judged against the audit's "
                f"{_tolerance(self.spec).removeprefix('the ')}.")

    @property
    def numbers(self) -> tuple[str, ...]:
        """The controls fitted as numbers (a straight line, or a curve where asked)."""
        return tuple(c for c in self.controls if c not in self.categorical)

    @property
    def reading(self) -> str:
        """Which controls were read as categories and which as numbers, in words."""
        from luskin_core.analyses.adjust_reading import reading_sentence

        return reading_sentence(self.controls, self.categorical, self.codes)

    def to_frame(self) -> pd.DataFrame:
        """One row per non-reference group (fractions; the explained split per control as columns)."""
        rows = []
        for gap in self.gaps:
            row = {k: v for k, v in gap.to_dict().items() if k not in ("explained_by", "sentence")}
            for name, value in gap.explained_by:
                row[f"explained_by {name}"] = value
            rows.append(row)
        return pd.DataFrame(rows)

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model, "outcome": self.outcome_text, "reference": self.reference,
            "controls": list(self.controls), "categorical": list(self.categorical), "numbers": list(self.numbers),
            "codes": list(self.codes), "reading": self.reading, "cluster": self.cluster,
            "tolerance": self.tolerance, "n_rows": self.n_rows, "n_cells": self.n_cells,
            "n_parameters": self.n_parameters, "n_clusters": self.n_clusters, "converged": self.converged,
            "iterations": self.iterations, "source": self.source, "scale": self.scale or None,
            "score_rule": self.score_rule or None, "score_cutoff": self.score_cutoff,
            "adjusted": [g.json_entry(bool(self.scale)) for g in self.gaps],
            "details": [g.to_dict() for g in self.gaps],
            "coefficients": [asdict(c) for c in self.coefficients],
            "diagnostics": list(self.diagnostics), "decomposition": self.decomposition,
            "rows_note": self.rows_note, "sentences": self.sentences(),
        }

    def sentences(self) -> list[str]:
        """What a committee reads: the outcome a score's rule made, the rows used, each group's gap, then the
        warnings."""
        out = [self.outcome_note] if self.outcome_note else []
        out += [self.rows_note] if self.rows_note else []
        out += [g.sentence for g in self.gaps]
        out += list(self.diagnostics)
        return out

    @property
    def flagged(self) -> tuple[AdjustedGap, ...]:
        return tuple(g for g in self.gaps if g.flagged)

    def summary(self) -> list[str]:
        """One short sentence per group for a report's first page: the adjusted gap, its interval and verdict."""
        held = ", ".join(self.controls)
        out = []
        for g in self.gaps:
            if self.scale:
                gap = (f"{format_percent(g.adjusted_gap_share)} of {g.reference}'s {_amount_noun(self)} (95% CI "
                       f"{format_percent(g.adjusted_gap_share_ci_low)} to {format_percent(g.adjusted_gap_share_ci_high)})")
                raw = format_percent(g.raw_gap_share)
            elif self.model == "linear":
                num = number_format(self)
                gap = f"{num(g.adjusted_difference)} (95% CI {num(g.adjusted_ci_low)} to {num(g.adjusted_ci_high)})"
                raw = num(g.raw_difference)
            else:
                gap = (f"{_pp(g.adjusted_difference)} points (95% CI {_pp(g.adjusted_ci_low)} to "
                       f"{_pp(g.adjusted_ci_high)})")
                raw = f"{_pp(g.raw_difference)} points"
            out.append(f"Holding {held} equal, the gap between {g.group} and {g.reference} is {gap}, against a raw "
                       f"gap of {raw}: {g.verdict.words} ({format_p(g.adjusted_p_corrected)} after adjusting for the "
                       "number of comparisons).")
        return out

    def table(self) -> pd.DataFrame:
        """The per-group table a page or report shows, in words: points (not fractions), p-values as p-values."""
        linear = self.model == "linear"
        unit = (" (log points)" if self.scale == "log" else "") if linear else " (points)"
        num = number_format(self) if linear else _pp

        rows = []
        for g in self.gaps:
            share = {} if not self.scale else {
                "Adjusted gap share": format_percent(g.adjusted_gap_share),
                "Its 95% interval": (f"{format_percent(g.adjusted_gap_share_ci_low)} to "
                                     f"{format_percent(g.adjusted_gap_share_ci_high)}")}
            rows.append({
                "Group": g.group, f"Raw gap{unit}": num(g.raw_difference),
                f"Adjusted gap{unit}": num(g.adjusted_difference),
                "95% interval": f"{num(g.adjusted_ci_low)} to {num(g.adjusted_ci_high)}", **share,
                "p (adjusted for comparisons)": format_p(g.adjusted_p_corrected, short=True),
                "Odds ratio": "" if g.odds_ratio is None else f"{g.odds_ratio:.2f}",
                f"Explained{unit}": num(g.explained), f"Unexplained{unit}": num(g.unexplained),
                "Verdict": g.verdict.words + (" (flagged)" if g.flagged else ""),
            })
        return pd.DataFrame(rows)


# ------------------------------------------------------------------------------------------
# Cells: rows with the same group, control values and cluster, with their sums
# ------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Cells:
    """The data a fit needs: one row per distinct (group, controls, cluster) with n, k (and sum of squares).

    ``numeric`` controls hold floats, ``categorical`` ones strings (missing as "Unknown").
    ``frame`` columns: "group", each control, optionally "cluster", "n", "k", "y2".
    """

    frame: pd.DataFrame
    numeric: tuple[str, ...]
    categorical: tuple[str, ...]
    cluster: str | None
    linear: bool
    dropped_missing: int = 0
    note: str = ""
    splines: Mapping[str, tuple[float, ...]] = field(default_factory=dict)  # numeric control -> its knots
    binned: tuple[str, ...] = ()  # categorical controls that are a numeric control's bins
    log: bool = False  # an amount modelled on its logarithm (its gaps read back as shares)
    # A score: the one rule's words with its number and the number (see score_outcome); else "" and None.
    score_rule: str = ""
    score_cutoff: float | None = None


def score_outcome(spec: AuditSpec, plan: Any) -> dict[str, Any]:
    """A score's yes/no outcome as the audit counts it: the words of the one rule (:class:`ScoreRule`: strictly
    above the median, or at or above the cut-off) with the number the plan resolved, and that number; the fields
    of :class:`Cells` (empty for an outcome that is not a score)."""
    if spec.outcome_type != "score" or plan.score_cutoff is None:
        return {}
    cutoff = float(plan.score_cutoff)
    return {"score_rule": f"{spec.outcome} {ScoreRule(spec.score_cutoff).words(cutoff)}", "score_cutoff": cutoff}


def _cell_frame(keys: dict[str, tuple[np.ndarray, Any]], y: np.ndarray) -> pd.DataFrame:
    """Collapse rows to cells: ``keys`` maps each column to (integer codes per row, the value of each code).

    One integer key per row (mixed radix over the codes, re-factorised when it would overflow),
    then ``bincount`` sums: no pandas groupby over object columns. Text columns come back as
    ``pd.Categorical``, numbers as floats.
    """
    combined = np.zeros(len(y), dtype=np.int64)
    size = 1
    for codes, uniques in keys.values():
        width = len(uniques) + 1
        if size * width >= 2**62:
            combined, seen = pd.factorize(combined)
            size = len(seen)
        combined = combined * width + (codes + 1)
        size *= width
    cell, _ = pd.factorize(combined)
    m = int(cell.max()) + 1 if len(cell) else 0
    first = np.unique(cell, return_index=True)[1]  # factorize numbers cells in order of first appearance
    out: dict[str, Any] = {}
    for name, (codes, uniques) in keys.items():
        picked = codes[first]
        if isinstance(uniques, pd.Index) and uniques.dtype.kind == "f":
            out[name] = uniques.to_numpy()[picked]
        elif name == "group":
            out[name] = np.asarray(uniques, dtype=object)[picked]
        else:
            out[name] = pd.Categorical.from_codes(picked, categories=pd.Index(uniques, dtype=object))
    out["n"] = np.bincount(cell, minlength=m).astype(np.int64)
    out["k"] = np.bincount(cell, weights=y, minlength=m)
    out["y2"] = np.bincount(cell, weights=y * y, minlength=m)
    return pd.DataFrame(out)


def _is_numeric(series: pd.Series) -> bool:
    return bool(pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series))


def _control_names(frame: pd.DataFrame, spec: AuditSpec, controls: Sequence[str], categorical: Sequence[str],
                   cluster: str | None) -> tuple[list[str], set[str], str | None]:
    names = [resolve_column(frame, c, "control") for c in controls]
    forced = {resolve_column(frame, c, "control") for c in categorical}
    for name in forced:
        if name not in names:
            names.append(name)
    if len({n.lower() for n in names}) != len(names):
        raise LuskinError("A control column is named twice.")
    group_cols = {c.lower() for c in spec.group_by} or {spec.protected.column.lower()}  # type: ignore[union-attr]
    for name in names:
        if name.lower() == spec.outcome.lower():
            raise LuskinError(f"'{name}' is the outcome, so it cannot also be a control.")
        if name.lower() in group_cols:
            raise LuskinError(f"'{name}' forms the groups, so it cannot also be a control.")
    cluster_name = resolve_column(frame, cluster, "cluster") if cluster else None
    return names, forced, cluster_name


def is_linear(spec: AuditSpec) -> bool:
    """Whether the outcome is modelled as a number: an amount only. A score is yes/no, past its cut by the one score
    rule (the rows the audit counts as positive), so its gaps are points of a share judged by the audit's tolerance;
    the score's means are the amount's path (``outcome_type="amount"``)."""
    return spec.outcome_type == "amount"


def check_log(data: Any, spec: AuditSpec) -> None:
    """A model on the amount's logarithm needs every amount above 0: counted through the audit's one path (the
    amount's count table holds the rows above 0), refused in words otherwise."""
    from luskin_core.counting.executor import counted_table

    if spec.outcome_type != "amount":
        raise LuskinError("A model on the logarithm is for an amount (pay, a price): say the outcome is an amount.")
    table, _ = counted_table(data, spec)
    rows, above = int(table.n.sum()), int(table.positives.sum())
    if above < rows:
        raise LuskinError(f"{rows - above:,} of the {rows:,} amounts of '{spec.outcome}' are 0 or below, and their "
                          "logarithm does not exist: model the amount itself, or leave them out with a population "
                          f"({spec.outcome} > 0) and say so.")


def gap_share(adjusted: float, reference_mean: float, *, log: bool, adverse: bool = False) -> float | None:
    """An adjusted gap as a share of the reference's amount, positive when the group fares worse (paid less, or
    for an adverse amount charged more): ``1 - exp(gap)`` on the log scale (the ratio of the two with the
    controls held equal), ``-gap / reference mean`` on the amount's own scale (the reference's mean taken as
    known); None where the reference's mean is 0 or below."""
    if not math.isfinite(adjusted):
        return None
    if log:
        share = 1.0 - math.exp(adjusted) if adjusted < 700 else -math.inf
    elif reference_mean > 0:
        share = -adjusted / reference_mean
    else:
        return None
    return -share if adverse else share


def cells_from_frame(frame: pd.DataFrame, spec: AuditSpec, controls: Sequence[str] = (),
                     categorical: Sequence[str] = (), cluster: str | None = None,
                     bins: Mapping[str, int] | None = None, splines: Mapping[str, int] | None = None,
                     log: bool = False) -> Cells:
    """The cell table of an in-memory frame: the audit's rows and groups, grouped by controls (and cluster);
    ``log``: an amount's logarithm as the outcome (every amount above 0: :func:`check_log`)."""
    extra = [b for b in dict.fromkeys([*(bins or {}), *(splines or {})]) if b not in controls]
    names, forced, cluster_name = _control_names(frame, spec, [*controls, *extra], categorical, cluster)
    prepared = prepare(frame, spec, allow_groups=True)
    rows = prepared.frame
    score = score_outcome(spec, plan_for_frame(frame, spec))   # the cut prepare's outcome was counted by
    knots: dict[str, tuple[float, ...]] = {}
    if splines:
        from luskin_core.counting.memory import FrameFacts

        population = plan_for_frame(frame, spec).population
        counts = spline_counts(frame, splines)
        check_curves(counts, forced, bin_counts(frame, bins or {}), lambda name: _is_numeric(pd.Series(frame[name])))
        for name, count in counts.items():
            knots[name] = spline_knots(name, FrameFacts(frame, population).quantiles(name, spline_probs(count)))
    binned: dict[str, np.ndarray] = {}
    if bins:
        from luskin_core.counting.memory import FrameFacts

        population = plan_for_frame(frame, spec).population
        for name, count in bin_counts(frame, bins).items():
            if not _is_numeric(frame[name]):
                raise LuskinError(f"'{name}' holds text, so it cannot be cut into bins; its values are used as "
                                  "categories.")
            part = bin_part(name, FrameFacts(frame, population).quantiles(name, bin_probs(count)))
            binned[name] = bin_labels(rows[name].to_numpy(dtype=float, na_value=np.nan), part)
        rows = rows.assign(**binned)
        forced = forced | set(binned)
    plan = plan_for_frame(rows, spec)
    if plan.protected is not None:   # "Black", not "Non-White", as the audit names a two-valued column
        plan = replace(plan, names=group_names(executor_for(frame), spec, plan.protected.column))
    labels = row_group_labels(rows, plan)
    linear = is_linear(spec)
    if linear:
        y = rows[plan.outcome].to_numpy(dtype=float, na_value=np.nan)
        check_size(plan.outcome, y, "outcome")
        if log:
            with np.errstate(divide="ignore", invalid="ignore"):
                y = np.log(y)
    else:
        y = prepared.y.astype(float)
    keys: dict[str, tuple[np.ndarray, Any]] = {"group": pd.factorize(labels)}
    numeric, cats = [], []
    keep = np.ones(len(rows), dtype=bool)
    for name in names:
        series = rows[name]
        if _is_numeric(series) and name not in forced:
            values = series.to_numpy(dtype=float, na_value=np.nan)
            check_size(name, values, "control")
            keep &= np.isfinite(values)
            codes, uniques = pd.factorize(values)
            keys[name] = (codes, pd.Index(np.asarray(uniques, dtype=float)))
            numeric.append(name)
        else:
            check_levels(name, int(series.nunique()))
            keys[name] = _text_codes(series)
            cats.append(name)
    if cluster_name is not None:
        keys["cluster"] = _text_codes(rows[cluster_name])
    dropped = int((~keep).sum())
    if dropped:
        keys = {name: (codes[keep], uniques) for name, (codes, uniques) in keys.items()}
    cells = _cell_frame(keys, y[keep])
    return Cells(cells, tuple(numeric), tuple(cats), cluster_name, linear, dropped,
                 note=spline_note(knots), splines=knots, binned=tuple(name for name in cats if name in binned),
                 log=log and linear, **score)


def check_curves(counts: Mapping[str, int], forced: set[str], binned: Mapping[str, int],
                  numeric: Any) -> None:
    """A control fitted as a curve must be a number, neither categorical nor cut into bins."""
    for name in counts:
        if name in binned:
            raise LuskinError(f"'{name}' is both cut into bins and fitted as a curve: choose one.")
        if name in forced or not numeric(name):
            raise LuskinError(f"'{name}' holds categories, so it cannot be fitted as a curve; its values are used as "
                              "categories.")


def _counts(frame: Any, wanted: Mapping[str, int], low: int, high: int, words: str) -> dict[str, int]:
    """``wanted`` with the columns' own names (``frame``'s, when it is a pandas frame), each count in
    ``low``..``high``, else ``words`` (with ``{name}``, ``{count}``) in a plain sentence."""
    out = {}
    for name, count in wanted.items():
        column = resolve_column(frame, name, "control") if isinstance(frame, pd.DataFrame) else name
        if not low <= int(count) <= high:
            raise LuskinError(words.format(name=name, count=count))
        out[column] = int(count)
    return out


def bin_counts(frame: Any, bins: Mapping[str, int]) -> dict[str, int]:
    """``bins`` with the columns' own names, each count checked (2 to 50 bins)."""
    return _counts(frame, bins, 2, 50, "Cut '{name}' into 2 to 50 bins (not {count}).")


def bin_probs(count: int) -> list[float]:
    """The quantiles a control is cut at (its minimum first): equal shares of the audited rows."""
    return [0.0, *(i / count for i in range(1, count))]


def bin_part(name: str, quantiles: Sequence[float]) -> Any:
    """The cut points (rounded as the audit rounds its group bins, so engines agree) as a key part with labels."""
    from luskin_core.counting.plan import KeyPart, round_significant

    low, *inner = quantiles
    cuts = sorted({round_significant(q) for q in inner if math.isfinite(q)})
    cuts = [c for c in cuts if c > low]
    if not cuts:
        raise LuskinError(f"'{name}' holds too few distinct values to cut into bins: use it as it is.")
    return KeyPart(name, "bins", True, tuple(cuts))


def bin_labels(values: np.ndarray, part: Any) -> np.ndarray:
    """Each value's bin in words ("28 ≤ age < 37"); missing values stay missing."""
    index = np.zeros(len(values), dtype=np.int64)
    for cut in part.cuts:
        index += values >= cut
    words = np.array([part.label(i) for i in range(len(part.cuts) + 1)], dtype=object)
    out = words[index]
    out[np.isnan(values)] = None
    return out


def level_prefix(control: str, binned: Collection[str] = ()) -> str:
    """What a level's coefficient name starts with: "occupation = " before "Sales"; nothing before a bin,
    whose words name the column already ("28 ≤ age < 37", not "age = 28 ≤ age < 37")."""
    return "" if control in binned else f"{control} = "


def spline_probs(count: int) -> list[float]:
    """Where a curve's knots go, as shares of the audited rows (Harrell's rule, as Hmisc's ``rcspline.eval``):
    3 knots at 10%, 50%, 90%; 4 to 6 equally spaced from 5% to 95%; 7 from 2.5% to 97.5%."""
    low = 0.10 if count == 3 else 0.05 if count <= 6 else 0.025
    return [low + (1 - 2 * low) * i / (count - 1) for i in range(count)]


def spline_knots(name: str, quantiles: Sequence[float]) -> tuple[float, ...]:
    """The knots (rounded as the audit rounds its group bins, so engines agree), at least 3 distinct ones."""
    from luskin_core.counting.plan import round_significant

    knots = tuple(sorted({round_significant(q) for q in quantiles if math.isfinite(q)}))
    if len(knots) < 3:
        raise LuskinError(f"'{name}' holds too few distinct values to fit as a curve: use it as it is, or cut it "
                          "into bins.")
    return knots


def spline_terms(x: np.ndarray, knots: Sequence[float]) -> np.ndarray:
    """The restricted cubic spline's non-linear terms of ``x`` (one column per inner knot; ``x`` itself is the
    linear term): Devlin and Weeks' truncated power basis, scaled by the squared knot span as Hmisc's
    ``rcspline.eval(norm=2)`` does, so each term is on the scale of ``x``. Linear beyond the outer knots."""
    t = np.asarray(knots, dtype=float)
    last, before = t[-1], t[-2]
    scale = (last - t[0]) ** 2

    def cube(k: float) -> np.ndarray:
        return np.maximum(x - k, 0.0) ** 3

    tail_last, tail_before = cube(last), cube(before)
    columns = [(cube(k) - tail_before * (last - k) / (last - before) + tail_last * (before - k) / (last - before))
               / scale for k in t[:-2]]
    return np.column_stack(columns)


def spline_term_name(name: str, j: int) -> str:
    """The j-th non-linear term's name in the coefficients' table."""
    return f"{name} (curve {j})"


def spline_note(splines: Mapping[str, Sequence[float]]) -> str:
    """One sentence naming the controls fitted as curves and their knots ('' without any)."""
    if not splines:
        return ""
    parts = [f"{name} (knots at {', '.join(number_text(k) for k in knots)})" for name, knots in splines.items()]
    return ("Fitted as curves (restricted cubic splines, straight beyond the outer knots): " + "; ".join(parts)
            + ".")


def spline_counts(frame: Any, splines: Mapping[str, int]) -> dict[str, int]:
    """``splines`` with the columns' own names, each number of knots checked (3 to 7)."""
    return _counts(frame, splines, 3, 7, "Fit '{name}' as a curve with 3 to 7 knots (not {count}).")


def _text_codes(series: pd.Series) -> tuple[np.ndarray, list[str]]:
    """A categorical control's values as (codes, distinct texts), missing ones as "Unknown" (the audit's convention)."""
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    if _is_numeric(series):
        words = [number_text(v) for v in uniques]
    else:
        words = [str(v) for v in uniques]
    words.append(UNKNOWN)
    codes = np.where(codes < 0, len(words) - 1, codes)
    merged, distinct = pd.factorize(np.array(words, dtype=object))  # "Unknown" may also be a value
    return merged[codes].astype(np.int64), [str(v) for v in distinct]


def category_codes(values: Any) -> tuple[np.ndarray, list[str]]:
    """(codes, texts) of a cell table's categorical column (``pd.Categorical`` or text), observed values only."""
    if isinstance(values, pd.Series):
        values = values.array
    if isinstance(values, pd.Categorical):
        codes, used = pd.factorize(values.codes)
        categories = list(values.categories)
        return codes.astype(np.int64), [str(categories[int(c)]) if c >= 0 else UNKNOWN for c in used]
    codes, uniques = pd.factorize(np.asarray(values, dtype=object))
    return codes.astype(np.int64), [str(u) for u in uniques]


def number_text(value: Any) -> str:
    from luskin_core.counting.plan import plain_number

    return plain_number(value)


# ------------------------------------------------------------------------------------------
# The design and the fit
# ------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Design:
    """The dense design of the cells: intercept, group dummies, numeric controls, control dummies."""

    X: Any                               # scipy.sparse CSR (cells x coefficients)
    names: tuple[str, ...]
    groups: tuple[str, ...]              # every group, reference first
    group_code: np.ndarray               # index into groups per cell
    group_cols: tuple[int, ...]          # column of each non-reference group
    control_cols: dict[str, tuple[int, ...]]
    base_levels: dict[str, str]
    blocks: Blocks | None = None         # the same design as factors and numbers (fast weighted Gram matrices)


@dataclass(frozen=True, eq=False)
class Blocks:
    """A design held as its factors (a level code per cell, the column of each level or -1) and numbers.

    ``X' diag(w) X`` then takes one ``bincount`` per pair of factors instead of a sparse product,
    which is most of a Newton step's time (the same sums an engine computes per key).
    """

    factors: tuple[tuple[np.ndarray, np.ndarray], ...]   # (codes per cell, column per level or -1)
    numbers: tuple[tuple[int, np.ndarray], ...]          # (column, values per cell)
    p: int

    def gram(self, w: np.ndarray) -> np.ndarray:
        """X' diag(w) X."""
        flat = np.zeros(self.p * self.p)
        for index, size, source, target in self._terms():
            flat[target] += np.bincount(index, weights=w, minlength=size)[source]
        wx = [w * x for _, x in self.numbers]
        for codes, cols in self.factors:
            keep = cols >= 0
            for (j, _), v in zip(self.numbers, wx):
                col = np.bincount(codes, weights=v, minlength=len(cols))[keep]
                flat[cols[keep] * self.p + j] += col
                flat[j * self.p + cols[keep]] += col
        H = flat.reshape(self.p, self.p)
        for i, (j, _) in enumerate(self.numbers):
            for j2, x2 in self.numbers[i:]:
                H[j, j2] = H[j2, j] = dot(wx[i], x2)
        return H

    def _terms(self) -> list[tuple[np.ndarray, int, np.ndarray, np.ndarray]]:
        """Per pair of factors (and each factor alone): the combined code per cell, and where its sums go in H."""
        cached = self.__dict__.get("_cached_terms")
        if cached is not None:
            return cached
        terms = []
        p = self.p
        for a, (ca, cols_a) in enumerate(self.factors):
            keep = np.flatnonzero(cols_a >= 0)
            terms.append((ca, len(cols_a), keep, cols_a[keep] * (p + 1)))
            for cb, cols_b in self.factors[a + 1:]:
                lb = len(cols_b)
                ia, ib = np.nonzero(np.outer(cols_a >= 0, cols_b >= 0))
                source = ia * lb + ib
                index = ca * lb + cb
                size = len(cols_a) * lb
                terms.append((index, size, source, cols_a[ia] * p + cols_b[ib]))
                terms.append((index, size, source, cols_b[ib] * p + cols_a[ia]))
        object.__setattr__(self, "_cached_terms", terms)
        return terms

    def without(self, remap: dict[int, int], p: int) -> Blocks:
        """The same blocks after columns were dropped (``remap``: old column -> new)."""
        factors = tuple((codes, np.array([remap.get(int(c), -1) for c in cols], dtype=np.int64))
                        for codes, cols in self.factors)
        numbers = tuple((remap[j], x) for j, x in self.numbers if j in remap)
        return Blocks(factors, numbers, p)


def build_design(cells: Cells, groups: Sequence[str]) -> tuple[Design, list[str]]:
    """The design matrix of the cells (reference group first in ``groups``) and notes on dropped controls."""
    frame = cells.frame
    notes: list[str] = []
    m = len(frame)
    all_rows = np.arange(m)
    group_code = _codes_in(frame["group"].to_numpy(dtype=object), list(groups))
    # (rows, columns, values) of the sparse design, one piece per block
    pieces: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = [(all_rows, np.zeros(m, dtype=np.int64), np.ones(m))]
    names = ["intercept"]
    factors: list[tuple[np.ndarray, np.ndarray]] = [(np.zeros(m, dtype=np.int64), np.array([0]))]
    numbers: list[tuple[int, np.ndarray]] = []

    def dummies(codes: np.ndarray, labels: Sequence[str], prefix: str) -> list[int]:
        start = len(names)
        inside = codes > 0
        pieces.append((all_rows[inside], start + codes[inside] - 1, np.ones(int(inside.sum()))))
        names.extend(f"{prefix}{label}" for label in labels[1:])
        factors.append((codes, np.array([-1] + list(range(start, len(names))), dtype=np.int64)))
        return list(range(start, len(names)))

    group_cols = dummies(group_code, list(groups), "group = ")
    control_cols: dict[str, tuple[int, ...]] = {}
    base_levels: dict[str, str] = {}
    n = frame["n"].to_numpy(dtype=float)
    for name in cells.numeric:
        values = frame[name].to_numpy(dtype=float)
        if np.ptp(values) == 0:
            notes.append(f"The control '{name}' holds a single value ({number_text(values[0])}) in the rows "
                         "analysed, so it cannot explain anything and is left out.")
            continue
        knots = cells.splines.get(name)
        terms = [(name, values)]
        if knots:
            terms += [(spline_term_name(name, j), t) for j, t in enumerate(spline_terms(values, knots).T, start=1)]
        control_cols[name] = tuple(range(len(names), len(names) + len(terms)))
        for term, column in terms:
            pieces.append((all_rows, np.full(m, len(names)), column))
            numbers.append((len(names), column))
            names.append(term)
    for name in cells.categorical:
        raw_codes, uniques = category_codes(frame[name])
        weights = np.bincount(raw_codes, weights=n, minlength=len(uniques))
        order = sorted(range(len(uniques)), key=lambda i: (-weights[i], str(uniques[i])))  # most rows first
        levels = [str(uniques[i]) for i in order]
        if len(levels) < 2:
            notes.append(f"The control '{name}' holds a single value ('{levels[0]}') in the rows analysed, so it "
                         "cannot explain anything and is left out.")
            continue
        base_levels[name] = levels[0]
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        control_cols[name] = tuple(dummies(rank[raw_codes], levels, level_prefix(name, cells.binned)))
    nnz = sum(len(r) for r, _, _ in pieces)
    if nnz > MAX_DESIGN_ENTRIES:
        raise LuskinError(f"The model would need {m:,} distinct rows x {len(names):,} coefficients, more than "
                          "fits in memory: use fewer or coarser controls, or bin the numeric ones.")
    rows = np.concatenate([r for r, _, _ in pieces])
    cols = np.concatenate([c for _, c, _ in pieces])
    vals = np.concatenate([v for _, _, v in pieces])
    X = sparse.csr_matrix((vals, (rows, cols)), shape=(m, len(names)))
    blocks = Blocks(tuple(factors), tuple(numbers), len(names))
    return Design(X, tuple(names), tuple(groups), group_code, tuple(group_cols), control_cols, base_levels,
                  blocks), notes


def _codes_in(values: np.ndarray, categories: Sequence[str]) -> np.ndarray:
    """The index of each value in ``categories`` (-1 where absent), by one factorisation."""
    codes, uniques = pd.factorize(values)
    where = {c: i for i, c in enumerate(categories)}
    lookup = np.array([where.get(u, -1) for u in uniques] + [-1], dtype=np.int64)
    return lookup[codes]


@dataclass(frozen=True, eq=False)
class Fit:
    """A fitted model on cells: coefficients, covariance, fitted linear predictor."""

    beta: np.ndarray
    cov: np.ndarray
    eta: np.ndarray
    converged: bool
    iterations: int
    dropped: tuple[int, ...]
    df_resid: float
    n_clusters: int | None
    use_t: bool


def _xv(X: Any, v: np.ndarray) -> np.ndarray:
    """X @ v (X sparse, or dense with numpy's own loop: BLAS threads wait on a busy shared machine)."""
    if sparse.issparse(X):
        return np.asarray(X @ v)
    return np.einsum("ij,j->i", X, v)


def xtv(X: Any, v: np.ndarray) -> np.ndarray:
    """X.T @ v without BLAS threads."""
    if sparse.issparse(X):
        return np.asarray(X.T @ v)
    return np.einsum("ij,i->j", X, v)


def dot(a: np.ndarray, b: np.ndarray) -> float:
    """a . b over rows without BLAS threads."""
    return float(np.einsum("i,i->", a, b))


def sparse_gram(X: Any, w: np.ndarray) -> np.ndarray:
    """X.T @ diag(w) @ X: sparse products (the dummies of a control with hundreds of levels are mostly zero)."""
    if sparse.issparse(X):
        return np.asarray((X.T @ sparse.diags(w) @ X).toarray())
    return np.einsum("ni,nj->ij", X * w[:, None], X)


def _scale_rows(X: Any, r: np.ndarray) -> Any:
    """diag(r) @ X."""
    return sparse.diags(r) @ X if sparse.issparse(X) else X * r[:, None]


def zero_column(X: Any, c: int) -> Any:
    """X with column c set to zero (a group's rows with the reference's effect)."""
    mask = np.ones(X.shape[1])
    mask[c] = 0.0
    return X @ sparse.diags(mask) if sparse.issparse(X) else X * mask


def aliased_columns(gram: np.ndarray) -> list[int]:
    """Columns that are linear combinations of earlier ones (Cholesky of the weighted Gram matrix, in order)."""
    scale = np.sqrt(np.maximum(np.diag(gram), 1e-300))
    gram = gram / np.outer(scale, scale)
    if np.linalg.eigvalsh(gram)[0] > 1e-9:
        return []
    p = gram.shape[0]
    keep: list[int] = []
    L = np.zeros((p, p))
    for j in range(p):
        m = len(keep)
        if m:
            v = linalg.solve_triangular(L[:m, :m], gram[keep, j], lower=True)
            r = gram[j, j] - float(v @ v)
        else:
            v, r = np.zeros(0), gram[j, j]
        if r > 1e-9:
            L[m, :m] = v
            L[m, m] = math.sqrt(r)
            keep.append(j)
    return [j for j in range(p) if j not in set(keep)]


def fit_cells(X: Any, n: np.ndarray, k: np.ndarray, y2: np.ndarray | None, *, linear: bool,
              clusters: np.ndarray | None = None, blocks: Blocks | None = None) -> Fit:
    """Logistic (binomial counts k of n) or linear (sums k, squares y2, weights n) fit on cells, by Newton.

    Weighted cells give exactly the estimates of the rows they stand for. Covariance: the
    inverse information (logistic), sigma^2 (X'WX)^-1 (linear), or with ``clusters`` (a code
    per cell) the sandwich with statsmodels' small-sample factor G/(G-1) (N-1)/(N-p).
    """
    N = float(n.sum())
    p = X.shape[1]
    iterations, converged = 0, True

    def _gram(X: Any, w: np.ndarray) -> np.ndarray:
        return blocks.gram(w) if blocks is not None else sparse_gram(X, w)

    if linear:
        H = _gram(X, n)
        beta = linalg.solve(H, xtv(X, k), assume_a="pos")
        eta = _xv(X, beta)
        assert y2 is not None
        rss = float(y2.sum() - 2 * dot(eta, k) + dot(n * eta, eta))
        resid_score = _scale_rows(X, k - n * eta)
        df_resid = N - p
        bread = linalg.inv(H)
        cov = bread * max(rss, 0.0) / df_resid
    else:
        share = float(k.sum() / N)
        beta = np.zeros(p)
        beta[0] = math.log(share / (1 - share))
        eta = _xv(X, beta)
        loglik = _loglik(eta, n, k)
        converged = False
        for iterations in range(1, MAX_ITERATIONS + 1):
            mu = special.expit(eta)
            H = _gram(X, n * mu * (1 - mu))
            score = xtv(X, k - n * mu)
            try:
                step = np.linalg.solve(H, score)  # numpy's solve: no warning for a near-singular H (separation)
            except np.linalg.LinAlgError:
                step = np.linalg.lstsq(H, score, rcond=None)[0]
            t = 1.0
            while True:
                trial = beta + t * step
                eta_t = _xv(X, trial)
                ll_t = _loglik(eta_t, n, k)
                if ll_t >= loglik - 1e-12 * abs(loglik) or t < 1e-6:
                    break
                t /= 2
            change = ll_t - loglik
            beta, eta, loglik = trial, eta_t, ll_t
            if np.max(np.abs(t * step)) < 1e-10 or (abs(change) < 1e-13 * (abs(loglik) + 1) and iterations > 3):
                converged = bool(np.max(np.abs(t * step)) < 1e-4)
                break
        mu = special.expit(eta)
        H = _gram(X, n * mu * (1 - mu))
        bread = inverse_matrix(H)
        cov = bread
        resid_score = _scale_rows(X, k - n * mu)
        df_resid = N - p
    n_clusters = None
    if clusters is not None:
        codes, uniques = pd.factorize(clusters)
        G = len(uniques)
        n_clusters = G
        member = sparse.csr_matrix((np.ones(len(codes)), (codes, np.arange(len(codes)))), shape=(G, len(codes)))
        sums = np.asarray((member @ resid_score).todense()) if sparse.issparse(resid_score) else member @ resid_score
        meat = np.einsum("gi,gj->ij", sums, sums)
        factor = G / (G - 1.0) * (N - 1.0) / (N - p) if G > 1 else math.nan
        cov = factor * bread @ meat @ bread
    return Fit(beta, cov, eta, converged, iterations, (), df_resid, n_clusters, use_t=linear and clusters is None)


def inverse_matrix(H: np.ndarray) -> np.ndarray:
    try:
        return np.linalg.inv(H)
    except np.linalg.LinAlgError:
        return np.linalg.pinv(H)


def _loglik(eta: np.ndarray, n: np.ndarray, k: np.ndarray) -> float:
    # k*log(mu) + (n-k)*log(1-mu), stably
    return float(np.sum(k * eta - n * np.logaddexp(0.0, eta)))


# ------------------------------------------------------------------------------------------
# Average marginal effects
# ------------------------------------------------------------------------------------------
def average_marginal_effects(design: Design, fit: Fit, n: np.ndarray, *, linear: bool) -> tuple[np.ndarray, np.ndarray]:
    """AME of each non-reference group (mean over all rows of F(group g) - F(reference)) and its covariance.

    Returns (ame, cov) over the groups in ``design.group_cols`` order; the covariance is the
    delta method J V J' with the fit's (model-based or cluster-robust) covariance.
    """
    X, beta = design.X, fit.beta
    gcols = list(design.group_cols)
    N = float(n.sum())
    if linear:
        J = np.zeros((len(gcols), len(beta)))
        for i, c in enumerate(gcols):
            J[i, c] = 1.0
        return beta[gcols], J @ fit.cov @ J.T
    own = _xv(X[:, gcols], beta[gcols]) if gcols else np.zeros(X.shape[0])
    base = fit.eta - own
    mu_r = special.expit(base)
    d_r = mu_r * (1 - mu_r)
    other = np.ones(X.shape[1], dtype=bool)
    other[gcols] = False
    ame = np.zeros(len(gcols))
    J = np.zeros((len(gcols), len(beta)))
    for i, c in enumerate(gcols):
        mu_g = special.expit(base + beta[c])
        d_g = mu_g * (1 - mu_g)
        ame[i] = dot(n, mu_g - mu_r) / N
        J[i, other] = xtv(X[:, other], n * (d_g - d_r)) / N
        J[i, c] = dot(n, d_g) / N
    return ame, J @ fit.cov @ J.T


def reference_share(design: Design, fit: Fit, n: np.ndarray, *, linear: bool) -> float | None:
    """The mean predicted outcome share over all rows with the group set to the reference (None for a linear model)."""
    if linear:
        return None
    gcols = list(design.group_cols)
    own = _xv(design.X[:, gcols], fit.beta[gcols]) if gcols else np.zeros(design.X.shape[0])
    return dot(n, special.expit(fit.eta - own)) / float(n.sum())


# ------------------------------------------------------------------------------------------
# The one entry point
# ------------------------------------------------------------------------------------------
def reference_group(cells: Cells, spec: AuditSpec) -> tuple[str, list[str]]:
    """The audit's reference over the analysed rows, and every group (audit order)."""
    frame = cells.frame
    by_group = frame.groupby("group", sort=False)[["n", "k"]].sum()
    from luskin_core.counting.count_table import CountTable

    present = [g for g in by_group.index]
    order = _audit_order(present, spec)
    n = by_group.loc[order, "n"].to_numpy(dtype=np.int64)[:, None]
    if cells.linear:
        # An amount: rank by the mean (a score is yes/no here, ranked by its share past the cut, as the audit).
        mean = by_group.loc[order, "k"].to_numpy(dtype=float) / np.maximum(n[:, 0], 1)
        scale = max(float(np.abs(mean).max()), 1.0)
        k = np.rint((mean - mean.min()) / (2 * scale) * n[:, 0]).astype(np.int64)[:, None]
    else:
        k = np.rint(by_group.loc[order, "k"].to_numpy(dtype=float)).astype(np.int64)[:, None]
    table = CountTable(groups=tuple(order), cell_keys=(None,), cell_labels=("All rows",), n=n, positives=k,
                       excluded={}, n_excluded=0)
    return choose_reference(table, spec), order


def compared_groups(cells: Cells, spec: AuditSpec) -> tuple[str, list[str]]:
    """The reference and every group, the reference first (the model's design order); refused in words when the
    analysed rows hold one group only."""
    reference, order = reference_group(cells, spec)
    if len(order) < 2:
        raise LuskinError(f"Every analysed row is in the group '{order[0]}', so there is no other group to "
                          "compare with.")
    return reference, [reference] + [g for g in order if g != reference]


def _audit_order(groups: list[str], spec: AuditSpec) -> list[str]:
    if spec.protected is not None:   # the protected class first, then the rest (as the data named it)
        return sorted(groups, key=lambda g: g != spec.group_name)
    return sorted(groups, key=lambda g: (UNKNOWN in g.split(" × "), _natural(g)))


def _natural(label: str) -> tuple[Any, ...]:
    out: list[Any] = []
    for piece in label.split(" × "):
        try:
            out.append((0, float(piece), ""))
        except ValueError:
            out.append((1, 0.0, piece))
    return tuple(out)


@dataclass(frozen=True)
class _Tested:
    """What every group's adjusted gap reads: the fit, its effects' standard errors, p-values and the judgement."""

    cells: Cells
    spec: AuditSpec
    judgement: Any
    fit: Fit
    ame: np.ndarray
    se: np.ndarray
    pvals: np.ndarray
    p_corr: np.ndarray
    too_few: np.ndarray
    crit: float
    group_cols: Sequence[int]
    decomposition: Sequence[Any]
    sizes: dict[Any, Any]
    sums_k: dict[str, float]
    reference: str
    rate_ref: float
    reference_share: float | None


def _adjusted_gap(t: _Tested, i: int, g: str) -> AdjustedGap:
    """Group ``g``'s adjusted gap against the reference, its interval, odds ratio, parts and verdict."""
    spec, fit, linear = t.spec, t.fit, t.cells.linear
    c = t.group_cols[i]
    rate = t.sums_k[g] / float(t.sizes[g])
    raw = rate - t.rate_ref
    odds = low_or = high_or = None
    if not linear:
        b, sb = float(fit.beta[c]), math.sqrt(max(float(fit.cov[c, c]), 0.0))
        odds, low_or, high_or = (_finite_exp(v) for v in (b, b - t.crit * sb, b + t.crit * sb))
    part = t.decomposition[i]
    adj = float(t.ame[i])
    ratio = fav_g = fav_ref = None
    if not linear and t.reference_share is not None and math.isfinite(t.reference_share):
        fav_ref = spec.favourable_share(t.reference_share)
        fav_g = spec.favourable_share(t.reference_share + adj)
        ratio = fav_g / fav_ref if fav_ref > 0 else None
    metric = spec.metric if not linear and t.reference_share is not None else "difference"
    bar = replace(t.judgement, metric=metric)
    low, high = adj - t.crit * float(t.se[i]), adj + t.crit * float(t.se[i])
    shares: tuple[float | None, ...] = (None, None, None, None, None)
    if linear and spec.outcome_type == "amount":
        # the tolerance is a share of the reference's amount (5%: the Directive's), not of its units
        shares = _gap_shares(t, adj, low, high, raw, part.unexplained)
        within = bar.within_estimate(shares[0])
    else:
        within = bar.within_estimate(adj, fav_g, fav_ref) if math.isfinite(adj) else None
    share, share_low, share_high, raw_share, unexplained_share = shares
    p_corrected = float(t.p_corr[i]) if math.isfinite(t.p_corr[i]) else None
    verdict = bar.verdict(within, p_corrected, too_few=bool(t.too_few[i]))
    corrected = p_corrected if p_corrected is not None else float(t.pvals[i])
    return AdjustedGap(
        group=g, reference=t.reference, n=int(t.sizes[g]), reference_n=int(t.sizes[t.reference]), rate=rate,
        reference_rate=t.rate_ref, raw_difference=raw, adjusted_difference=adj, adjusted_se=float(t.se[i]),
        adjusted_ci_low=low, adjusted_ci_high=high,
        adjusted_p_value=float(t.pvals[i]), adjusted_p_corrected=corrected, odds_ratio=odds,
        odds_ratio_ci_low=low_or, odds_ratio_ci_high=high_or,
        explained=raw - part.unexplained, explained_ci_low=part.explained_ci[0],
        explained_ci_high=part.explained_ci[1], unexplained=part.unexplained,
        unexplained_ci_low=part.unexplained_ci[0], unexplained_ci_high=part.unexplained_ci[1],
        explained_by=part.by_control, verdict=verdict, adjusted_impact_ratio=ratio, adjusted_gap_share=share,
        adjusted_gap_share_ci_low=share_low, adjusted_gap_share_ci_high=share_high, raw_gap_share=raw_share,
        unexplained_share=unexplained_share)


def _gap_shares(t: _Tested, adj: float, low: float, high: float, raw: float,
                unexplained: float) -> tuple[float | None, ...]:
    """An amount's gaps as shares of the reference's amount: the adjusted gap, its interval, the raw and the
    unexplained gap."""
    log, adverse = t.cells.log, t.judgement.adverse
    ends = [gap_share(v, t.rate_ref, log=log, adverse=adverse) for v in (low, high)]
    share = gap_share(adj, t.rate_ref, log=log, adverse=adverse)
    share_low = share_high = None
    if ends[0] is not None and ends[1] is not None:
        share_low, share_high = min(ends[0], ends[1]), max(ends[0], ends[1])
    return (share, share_low, share_high, gap_share(raw, t.rate_ref, log=log, adverse=adverse),
            gap_share(unexplained, t.rate_ref, log=log, adverse=adverse))


def _cluster_warning(cells: Cells, fit: Fit) -> list[str]:
    """Clustered intervals read with care: fewer than 30 clusters, or one holding most rows."""
    if fit.n_clusters is None:
        return []
    frame = cells.frame
    share = float(frame.groupby("cluster", sort=False)["n"].sum().max() / frame["n"].to_numpy(dtype=float).sum())
    if fit.n_clusters < 30 or share > 0.5:
        return [(f"The standard errors are clustered by {cells.cluster}, which has {fit.n_clusters:,} "
                 f"clusters (the largest holds {format_percent(share, 0)} of rows): with fewer than 30 "
                 "clusters, or one that holds most rows, clustered intervals can be far too narrow.")]
    return []


def finish(cells: Cells, spec: AuditSpec, *, source: str, names: Sequence[str], group_cols: Sequence[int], fit: Fit,
           ame: np.ndarray, ame_cov: np.ndarray, decomposition: Sequence[Any], diagnostics: list[str],
           groups: Sequence[str], reference: str, rows_note: str,
           reference_share: float | None = None) -> AdjustResult:
    """The result from a fit: intervals, p-values, verdicts and sentences per group (any way the fit was made).

    The verdict is :func:`luskin_core.stats.verdict.judge`'s, as the audit's: the adjusted gap against the
    tolerance, or with ``spec.metric == "ratio"`` the adjusted impact ratio against the threshold. That ratio
    is the favourable share predicted with every row set to the group over the same with every row set to the
    reference (``reference_share`` is the latter's mean outcome share; the favourable share is 1 minus it for
    an adverse outcome). A linear model's outcome is an amount, not a share, so it has no impact ratio: its
    adjusted gap as a share of the reference's amount is judged against the tolerance whatever the metric. A score
    is a yes/no outcome here (past its cut by the one score rule), judged as any share is.
    """
    frame = cells.frame
    n = frame["n"].to_numpy(dtype=float)
    linear = cells.linear
    amount = linear and spec.outcome_type == "amount"
    judgement = Judgement.of(spec)
    se = np.sqrt(np.maximum(np.diag(ame_cov), 0.0))
    z = ame / np.where(se > 0, se, np.nan)
    from luskin_core.stats.inference import adjust_p, critical_value, two_sided_p

    df = fit.df_resid if fit.use_t else None
    crit, pvals = critical_value(df), two_sided_p(z, df)

    by_group = frame.groupby("group", sort=False)[["n", "k"]].sum()
    sizes = by_group["n"].to_dict()
    too_few = np.array([sizes[g] < spec.min_group_size or sizes[reference] < spec.min_group_size
                        or sizes[g] / float(n.sum()) < spec.min_group_share for g in groups[1:]])
    p_corr = adjust_p(np.where(too_few, np.nan, pvals), spec.correction)
    sums_k = {str(g): float(v) for g, v in by_group["k"].items()}
    rate_ref = sums_k[reference] / float(sizes[reference])
    tested = _Tested(cells, spec, judgement, fit, ame, se, pvals, p_corr, too_few, crit, group_cols, decomposition,
                     sizes, sums_k, reference, rate_ref, reference_share)
    gaps = [_adjusted_gap(tested, i, g) for i, g in enumerate(groups[1:])]
    controls = tuple(cells.numeric) + tuple(cells.categorical)
    outcome_text = ((f"the logarithm of {spec.outcome}" if cells.log else spec.outcome) if linear
                    else cells.score_rule or spec.outcome_text)
    scale = ("log" if cells.log else "amount") if amount else ""
    digits = amount_digits([rate_ref]) if not cells.log else 3
    gaps = [_replace(g, sentence=_amount_sentence(g, spec, controls, spec.outcome, cells.log, digits) if amount
                     else _sentence(g, spec, controls, outcome_text)) for g in gaps]
    diagnostics = list(diagnostics) + _cluster_warning(cells, fit)
    coefficients = tuple(Coefficient(name, float(b), float(math.sqrt(max(v, 0.0))))
                         for name, b, v in zip(names, fit.beta, np.diag(fit.cov)))
    method = ("Yun's non-linear decomposition (deterministic, and its parts add up to the raw gap exactly, unlike "
              "Fairlie's random matching), with the pooled model's coefficients" if not linear else
              "Oaxaca-Blinder, twofold, with the pooled model's coefficients (all groups, the group as a factor)")
    return AdjustResult(
        spec=spec, model="linear" if linear else "logistic", outcome_text=outcome_text, reference=reference,
        controls=controls, categorical=tuple(cells.categorical), cluster=cells.cluster, tolerance=spec.tolerance,
        gaps=tuple(gaps), n_rows=int(n.sum()), n_cells=len(frame), n_parameters=len(names),
        n_clusters=fit.n_clusters, converged=fit.converged, iterations=fit.iterations, coefficients=coefficients,
        diagnostics=tuple(diagnostics), decomposition=method + "; intervals by the delta method over the "
        "coefficients (the groups' control means held fixed)" + (
            ", on the logarithm of the amount (log points; a gap g is the share 1 - exp(g) of the reference's "
            "amount, controls held equal)" if cells.log else "") + ".", rows_note=rows_note, source=source,
        scale=scale, score_rule=cells.score_rule, score_cutoff=cells.score_cutoff)


def _finite_exp(x: float) -> float | None:
    """exp(x), or None where it is not a finite number (a level that predicts perfectly)."""
    return math.exp(x) if math.isfinite(x) and x < 700 else None


def without_columns(design: Design, drop: Sequence[int]) -> tuple[Design, list[str]]:
    keep = [j for j in range(design.X.shape[1]) if j not in set(drop)]
    remap = {old: new for new, old in enumerate(keep)}
    names = [design.names[j] for j in drop]
    notes = [f"These control levels are fixed by the others and were left out of the model: {', '.join(names[:5])}"
             + (" ..." if len(names) > 5 else "") + "."]
    controls = {name: tuple(remap[c] for c in cols if c in remap) for name, cols in design.control_cols.items()}
    controls = {name: cols for name, cols in controls.items() if cols}
    blocks = design.blocks.without(remap, len(keep)) if design.blocks is not None else None
    return Design(design.X[:, keep], tuple(design.names[j] for j in keep), design.groups, design.group_code,
                  tuple(remap[c] for c in design.group_cols), controls, design.base_levels, blocks), notes


def rows_note_text(cells: Cells, fit: Fit, p: int) -> str:
    n = int(cells.frame["n"].sum())
    text = f"The model uses {n:,} rows ({len(cells.frame):,} distinct combinations of group and controls) and {p:,} " \
           "coefficients"
    if fit.n_clusters is not None:
        text += f"; standard errors are clustered by {cells.cluster} ({fit.n_clusters:,} clusters)"
    text += "."
    if cells.dropped_missing:
        text += f" {cells.dropped_missing:,} rows missing a numeric control were left out."
    if cells.note:
        text += " " + cells.note
    return text


def number_format(result: AdjustResult) -> Any:
    """How a linear model's numbers are written: in the outcome's units with thousands separators (never in
    scientific notation), the decimals of its reference's mean; log points with 3 decimals."""
    digits = 3 if result.scale == "log" else amount_digits([g.reference_rate for g in result.gaps])

    def num(x: float | None) -> str:
        return format_amount(x, digits, signed=True)

    return num


def _amount_noun(result: AdjustResult) -> str:
    return "geometric mean" if result.scale == "log" else "mean"


def _pp(x: float) -> str:
    """A signed difference in points with one decimal (+1.9, -14.2)."""
    return format_points(x, signed=True)


def _sentence(g: AdjustedGap, spec: AuditSpec, controls: Sequence[str], outcome: str) -> str:
    """One group's adjusted gap on a yes/no outcome (a score's too, past its cut), in points of the share (an amount's
    is :func:`_amount_sentence`)."""
    held = ", ".join(controls)
    raw = (f"Before adjusting, {outcome} for {format_percent(g.rate)} of {g.group} and "
           f"{format_percent(g.reference_rate)} of {g.reference} (a raw gap of {_pp(g.raw_difference)} points)")
    odds = ""
    if None not in (g.odds_ratio, g.odds_ratio_ci_low, g.odds_ratio_ci_high):
        odds = f", odds ratio {g.odds_ratio:.2f} ({g.odds_ratio_ci_low:.2f} to {g.odds_ratio_ci_high:.2f})"
    adj = (f"holding {held} equal, the gap is {_pp(g.adjusted_difference)} points (95% CI "
           f"{_pp(g.adjusted_ci_low)} to {_pp(g.adjusted_ci_high)}, {format_p(g.adjusted_p_value)}{odds})")
    parts = (f"The controls explain {_pp(g.explained)} of the {_pp(g.raw_difference)} points and "
             f"{_pp(g.unexplained)} remain unexplained")
    ranked = sorted(g.explained_by, key=lambda item: -abs(item[1]))[:2]
    if ranked and len(controls) > 1:
        words = [f"{name} {_pp(value)} points" for name, value in ranked]
        parts += f" (the largest parts: {' and '.join(words)})"
    across = g.adjusted_ci_low <= 0 <= g.adjusted_ci_high
    verdict = _verdict_clause(g, spec, _tolerance(spec))
    interval = " The interval includes zero: once the controls are held equal, no gap is shown." if across else ""
    why = ""
    if abs(g.adjusted_difference - g.unexplained) >= 0.005:
        why = (f" The adjusted gap ({_pp(g.adjusted_difference)}) and the unexplained part "
               f"({_pp(g.unexplained)}) answer different questions: the first switches every row's group and "
               f"averages over all rows, the second keeps each group's own controls (Yun's decomposition), so they "
               "differ when the groups' controls differ.")
    return f"{raw}; {adj}.{interval} {parts}.{why} {verdict}."


def _amount_sentence(g: AdjustedGap, spec: AuditSpec, controls: Sequence[str], outcome: str, log: bool,
                     digits: int) -> str:
    """One group's adjusted gap on an amount: in the amount's units (or log points), and as a share of the
    reference's amount, judged against the tolerance as a share."""
    held = ", ".join(controls)

    def num(x: float) -> str:
        return format_amount(x, digits, signed=True)

    def pct(share: float | None) -> str:
        """'25.5% lower': the size of the gap and which way (a positive share is worse: lower pay, or for an
        adverse amount a higher one)."""
        if share is None:
            return "n/a"
        if share == 0:
            return "no different"
        return f"{format_percent(abs(share))} {'lower' if (share > 0) != spec.direction.adverse else 'higher'}"

    if log:
        raw = (f"Before adjusting, the geometric mean {outcome} of {g.group} is {pct(g.raw_gap_share)} than "
               f"{g.reference}'s (a difference of {num(g.raw_difference)} in log {outcome})")
        adj = (f"holding {held} equal, {g.group}'s is {pct(g.adjusted_gap_share)} (the gap's 95% CI "
               f"{format_percent(g.adjusted_gap_share_ci_low)} to {format_percent(g.adjusted_gap_share_ci_high)} of "
               f"{g.reference}'s; {num(g.adjusted_difference)} log points, {format_p(g.adjusted_p_value)})")
        parts = (f"The controls explain {num(g.explained)} of the {num(g.raw_difference)} log points and "
                 f"{num(g.unexplained)} remain unexplained")
    else:
        money = digits
        raw = (f"Before adjusting, the mean {outcome} is {format_amount(g.rate, money)} for {g.group} and "
               f"{format_amount(g.reference_rate, money)} for {g.reference} (a difference of {num(g.raw_difference)}, "
               f"{pct(g.raw_gap_share)})")
        adj = (f"holding {held} equal, the difference is {num(g.adjusted_difference)} (95% CI "
               f"{num(g.adjusted_ci_low)} to {num(g.adjusted_ci_high)}, {format_p(g.adjusted_p_value)}): "
               f"{pct(g.adjusted_gap_share)} than {g.reference}'s mean")
        parts = (f"The controls explain {num(g.explained)} of the raw difference and {num(g.unexplained)} remains "
                 "unexplained (Oaxaca-Blinder)")
    ranked = sorted(g.explained_by, key=lambda item: -abs(item[1]))[:2]
    if ranked and len(controls) > 1:
        parts += f" (the largest parts: {' and '.join(f'{name} {num(value)}' for name, value in ranked)})"
    verdict = _verdict_clause(g, spec, _tolerance(spec, amount=True))
    return f"{raw}; {adj}. {parts}. {verdict}."


def _verdict_clause(g: Any, spec: Any, bar: str) -> str:
    """The adjusted gap's verdict in words, against ``bar`` (the tolerance as the sentence states it)."""
    if g.verdict == Verdict.TOO_FEW:
        return (f"With {min(g.n, g.reference_n):,} rows in the smaller group (fewer than "
                f"{spec.min_group_size:,}), there are {Verdict.TOO_FEW.mark}")
    if g.verdict == Verdict.WITHIN:
        return f"The adjusted gap is within {bar}"
    chance = f"({format_p(g.adjusted_p_corrected)} after adjusting for the number of comparisons)"
    if g.verdict == Verdict.BEYOND:
        return f"The adjusted gap is larger than {bar} and not due to chance {chance}: flagged"
    return f"The adjusted gap is larger than {bar}, but it could be due to chance {chance}"


def _tolerance(spec: AuditSpec, *, amount: bool = False) -> str:
    """The bar a gap is judged against, in words: points of a share, the impact-ratio threshold, or an amount's
    share (a gap is never judged in a number's own units)."""
    if amount:
        return f"the {format_percent(spec.tolerance, 0)} tolerance (a share of the reference's amount)"
    if spec.metric == "ratio":
        return f"the {spec.ratio_threshold:g} impact-ratio threshold"
    return "the " + points(spec.tolerance).replace(" points", "-point").replace(" point", "-point") + " tolerance"


def _replace(obj: Any, **changes: Any) -> Any:
    from dataclasses import replace

    return replace(obj, **changes)


__all__ = ["AdjustResult", "AdjustedGap", "Cells", "cells_from_frame", "check_log", "fit_cells", "gap_share",
           "is_linear", "number_format", "score_outcome"]
