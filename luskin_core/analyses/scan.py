"""Where are the gaps nobody asked about? An exhaustive subgroup scan that stays silent on noise.

Every combination of 1..depth of the scanned columns and their values (missing values as their own
"Unknown" value; numeric columns with many values cut into a few bins) is a group; each group's rate
(the share with a positive outcome, a model's false positive, false negative or error rate, or the
observed rate against the model's predicted probability) is compared with everyone else's.

One count table does it all: the full cross of the scanned columns, counted by the same counting plan
as every audit (:mod:`luskin_core.counting.counts`: in memory, DuckDB for files, PostgreSQL, Spark),
with the first column as the group key and the others as strata. Every group is a marginal sum of that
table, and so is every null replicate (:mod:`luskin_core.stats.subgroups`), so the rows are read once.

What is controlled: the family-wise error rate over every group scanned, at ``level`` (single-step
max-T, Westfall-Young): under the null that the outcome is independent of the scanned columns, the
chance that the scan reports any group at all is at most ``level``, however many groups overlap. That
also bounds the false discovery rate by ``level``. Intervals are simultaneous: the difference plus or
minus the calibrated critical value times its standard error, so they hold for whichever groups the
scan picks. Which group is reported when a gap is found in nested groups:
:func:`luskin_core.stats.subgroups.carriers`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from luskin_core.counting.counts import KEPT, KeyPart, Plan, RawCounts
from luskin_core.counting.sources import Source
from luskin_core.errors import LuskinError
from luskin_core.formatting import format_memory, format_p, format_percent, format_points, points
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.spec.columns import shown
from luskin_core.stats import subgroups as sg

if TYPE_CHECKING:
    import pandas as pd
else:
    from luskin_core._lazy import pandas as pd

MEASURES = {
    "rate": "the share with the positive outcome",
    "fpr": "false positive rate",
    "fnr": "false negative rate",
    "error": "error rate",
    "calibration": "observed against predicted",
}
MAX_SCAN_VALUES = 50          # a column with more distinct values is refused (bin it or leave it out)
MEMORY_SHARE = 0.25           # a scan may hold at most this share of the machine's memory (the server is shared)
DEFAULT_MIN_SIZE = 30
DEFAULT_REPLICATES = 999
DEFAULT_DEPTH = 3


@dataclass(frozen=True)
class ScanSpec:
    """What to scan: an outcome (or a model's decisions against it), the columns, and how hard to look.

    ``measure``: "rate" (the share with ``positive``; with ``prediction``, the share the model decides
    positive), "fpr"/"fnr"/"error" (a model's error rates; ``prediction`` required) or "calibration"
    (observed against ``probability``, a column of predicted probabilities). ``level``: the family-wise
    error rate controlled (which bounds the false discovery rate too). ``min_size``: rows a group needs,
    inside and (for rates) outside it. ``bins``: the user's cut points for numeric columns. ``depth``: how
    many columns a group combines at most (0, the default: 3, or fewer when fewer columns are scanned).
    """

    outcome: str
    positive: Any = None
    columns: tuple[str, ...] = ()
    depth: int = 0
    min_size: int = DEFAULT_MIN_SIZE
    level: float = 0.05
    replicates: int = DEFAULT_REPLICATES
    seed: int = 0
    measure: str = "rate"
    prediction: str | None = None
    prediction_cutoff: float | None = None
    probability: str | None = None
    n_bins: int = 4
    bins: tuple[tuple[str, tuple[float, ...]], ...] = ()

    def __post_init__(self) -> None:
        columns = (self.columns,) if isinstance(self.columns, str) else tuple(self.columns)
        columns = tuple(str(c).strip() for c in columns if str(c).strip())
        object.__setattr__(self, "columns", columns)
        if not columns:
            raise LuskinError("Choose at least one column to scan.")
        if len({c.lower() for c in columns}) != len(columns):
            raise LuskinError(f"A column is named twice among the columns to scan: {', '.join(map(shown, columns))}.")
        if self.measure not in MEASURES:
            raise LuskinError(f"Unknown measure '{shown(self.measure)}': choose one of {', '.join(MEASURES)}.")
        if isinstance(self.depth, (int, np.integer)) and not isinstance(self.depth, bool) and self.depth == 0:
            object.__setattr__(self, "depth", min(DEFAULT_DEPTH, len(columns)))
        _whole(self.depth, "depth", 1)
        if self.depth > len(columns):
            raise LuskinError(f"A depth of {self.depth} combines {self.depth} columns, but only {len(columns)} "
                              f"{'is' if len(columns) == 1 else 'are'} scanned: choose a depth of at most "
                              f"{len(columns)}, or scan more columns.")
        _whole(self.min_size, "smallest group size", 1)
        _whole(self.replicates, "number of replicates", 1)
        _whole(self.seed, "seed", 0)
        if not isinstance(self.level, (int, float)) or not 0 < float(self.level) < 1:
            raise LuskinError(f"The error level must be a share between 0 and 1 (e.g. 0.05), not {shown(self.level)}.")
        if self.measure in ("fpr", "fnr", "error") and not self.prediction:
            raise LuskinError("Error rates compare a model's decisions with the truth: name the prediction column.")
        if self.measure == "calibration" and not self.probability:
            raise LuskinError("Calibration compares the outcome with a model's predicted probabilities: name the "
                              "column that holds them.")
        if self.positive is None:
            raise LuskinError("Say which value of the outcome counts as positive.")
        if self.outcome.strip().lower() in {c.lower() for c in columns}:
            raise LuskinError(f"The outcome '{shown(self.outcome)}' is also among the columns to scan: leave it out.")
        object.__setattr__(self, "bins", tuple((str(c), tuple(float(x) for x in cuts)) for c, cuts in self.bins))

    def to_dict(self) -> dict[str, Any]:
        return {"outcome": self.outcome, "positive": self.positive, "columns": list(self.columns),
                "depth": self.depth, "min_size": self.min_size, "level": self.level,
                "replicates": self.replicates, "seed": self.seed, "measure": self.measure,
                "prediction": self.prediction, "prediction_cutoff": self.prediction_cutoff,
                "probability": self.probability, "n_bins": self.n_bins,
                "bins": {c: list(cuts) for c, cuts in self.bins}}

    def audit_spec(self, *, probability: bool = False) -> AuditSpec:
        """The counting plan's specification: the full cross of the columns (first as group, others as strata)."""
        common: dict[str, Any] = {"group_by": self.columns[:1], "strata": self.columns[1:], "n_bins": self.n_bins,
                                  "bins": self.bins}
        if probability:
            assert self.probability is not None
            return AuditSpec(self.probability, None, outcome_type="score", score_cutoff=0.5, **common)
        prediction = self.prediction if self.measure != "calibration" else None
        return AuditSpec(self.outcome, self.positive, prediction=prediction,
                         prediction_cutoff=self.prediction_cutoff if prediction else None, **common)


def _whole(value: Any, what: str, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise LuskinError(f"The {what} must be a whole number of at least {low}, not {shown(value)}.")


@dataclass(frozen=True)
class ScanFinding:
    """One group that carries a gap: its conditions, size, rates, the gap with its interval, and its sentence."""

    conditions: dict[str, Any]
    labels: tuple[str, ...]
    n: int
    events: int
    rate: float
    rest_rate: float
    difference: float
    ci_low: float
    ci_high: float
    z: float
    p_adjusted: float
    sentence: str = ""

    @property
    def name(self) -> str:
        return " and ".join(self.labels)

    def to_dict(self) -> dict[str, Any]:
        return {"conditions": dict(self.conditions), "n": self.n, "events": self.events, "rate": self.rate,
                "rest_rate": self.rest_rate, "difference": self.difference, "ci_low": self.ci_low,
                "ci_high": self.ci_high, "z": self.z, "p_adjusted": self.p_adjusted, "sentence": self.sentence}


@dataclass(frozen=True)
class ScanResult:
    """What a scan found: the groups that carry a gap (ranked), and what it looked at and could have seen."""

    spec: ScanSpec
    source: str
    measure: str
    n_rows: int
    n_judged: int
    overall_rate: float
    groups_scanned: int
    groups_too_small: int
    replicates: int
    critical_value: float
    method: str
    significant: int
    findings: tuple[ScanFinding, ...]
    median_size: int
    detectable_median: float | None
    detectable_smallest: float | None
    n_excluded: int = 0
    columns: tuple[tuple[str, tuple[str, ...]], ...] = ()
    sizes: np.ndarray | None = field(default=None, repr=False, compare=False)
    differences: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def level(self) -> float:
        return self.spec.level

    @property
    def null_rate(self) -> float:
        """The chance that the scan reports any group when none differs: with R replicates the max-T test
        rejects when the observed largest |z| is among the top floor(level (R + 1)) of R + 1 exchangeable
        values, so exactly floor(level (R + 1)) / (R + 1) with exact draws and no ties (5.0% at 0.05 with 199
        or 999 replicates: the level itself; R + 1 not a multiple of 1 / level puts it strictly below), less
        with ties; without replicates (a union bound), at most the level."""
        if self.replicates == 0:
            return self.level
        return math.floor(self.level * (self.replicates + 1)) / (self.replicates + 1)

    @property
    def null_rate_words(self) -> str:
        if self.replicates == 0:
            return "at most the level (a union bound: usually below it)"
        exact = "exactly, with exact permutation draws and no ties" if self.method == sg.EXACT else \
            "to the normal limit's accuracy"
        return (f"{format_percent(self.null_rate, 1)}: floor({self.level:g} x {self.replicates + 1:,}) / "
                f"{self.replicates + 1:,} ({exact}; ties make it smaller)")

    @property
    def error_control(self) -> str:
        if self.replicates == 0:
            return (f"family-wise error rate at {self.level:g} over all {self.groups_scanned:,} groups scanned "
                    f"(the chance that any group reaches the bar by chance is at most the sum of each group's "
                    f"chance: {self.method}); this also bounds the false discovery rate at {self.level:g}")
        return (f"family-wise error rate at {self.level:g} over all {self.groups_scanned:,} groups scanned "
                f"(single-step max-T, Westfall-Young, calibrated on {self.replicates:,} null replicates: "
                f"{self.method}); this also bounds the false discovery rate at {self.level:g}")

    def headline(self) -> str:
        return headline(self)

    def sentences(self) -> list[str]:
        return [f.sentence for f in self.findings] or [self.headline()]

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source, "spec": self.spec.to_dict(), "measure": self.measure, "n_rows": self.n_rows,
            "n_judged": self.n_judged, "n_excluded": self.n_excluded, "overall_rate": self.overall_rate,
            "rest_rate_is": ("the model's mean predicted probability in the group" if self.measure == "calibration"
                             else "the rate of everyone outside the group"),
            "groups_scanned": self.groups_scanned, "groups_too_small": self.groups_too_small,
            "replicates": self.replicates, "level": self.level, "critical_value": self.critical_value,
            "replicate_method": self.method, "error_control": self.error_control,
            "null_report_rate": self.null_rate, "null_report_rate_is": self.null_rate_words,
            "interval": "simultaneous: difference ± the max-T critical value × its standard error",
            "groups_beyond_the_bar": self.significant, "headline": self.headline(),
            "findings": [f.to_dict() for f in self.findings],
            "median_group_size": self.median_size, "detectable_gap_median_group": self.detectable_median,
            "detectable_gap_smallest_group": self.detectable_smallest,
            "columns": {c: list(values) for c, values in self.columns},
        }

    def to_frame(self) -> pd.DataFrame:
        """One row per finding, as a page shows them."""
        return pd.DataFrame([{"Group": f.name, "Rows": f.n, "Rate": f.rate, "Everyone else": f.rest_rate,
                              "Gap": f.difference, "CI low": f.ci_low, "CI high": f.ci_high,
                              "Adjusted p": f.p_adjusted} for f in self.findings],
                            columns=["Group", "Rows", "Rate", "Everyone else", "Gap", "CI low", "CI high",
                                     "Adjusted p"])


# -- counting -----------------------------------------------------------------------------------
def _count(data: Any, spec: AuditSpec) -> tuple[Plan, RawCounts]:
    """The plan and raw count table of ``spec``: the counting plan every audit uses, on any engine."""
    if isinstance(data, Source):
        return data.counts(spec)
    from luskin_core.counting.counts import aggregate_frame, plan_for_frame

    plan = plan_for_frame(data, spec)
    return plan, aggregate_frame(data, plan)


def _check_values(data: Any, spec: ScanSpec) -> None:
    """Refuse a text column with more distinct values than a scan can read (a number is binned instead)."""
    if isinstance(data, Source):
        for column in spec.columns:
            name = data._resolve(column, "scanned")
            numeric = data.kind_of(name) == "numeric" if hasattr(data, "kind_of") else _engine_numeric(data, name)
            if numeric:
                continue
            found = data.value_counts(name, MAX_SCAN_VALUES + 1)
            if len(found) > MAX_SCAN_VALUES:
                raise _too_many(name, None)
        return
    from luskin_core.spec.audit_spec import resolve_column

    for column in spec.columns:
        name = resolve_column(data, column, "scanned")
        series = data[name]
        if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
            continue
        count = int(series.nunique(dropna=True))
        if count > MAX_SCAN_VALUES:
            raise _too_many(name, count)


def _engine_numeric(data: Source, column: str) -> bool:
    dtype = data.table.schema()[column]
    return bool(dtype.is_numeric()) and not dtype.is_boolean()


def _too_many(column: str, count: int | None) -> LuskinError:
    many = f"{count:,}" if count is not None else f"more than {MAX_SCAN_VALUES}"
    return LuskinError(f"The column '{shown(column)}' has {many} distinct values, too many to scan (at most "
                       f"{MAX_SCAN_VALUES}). Leave it out, or bin it: group its values into a few in a new column "
                       "(a numeric column is cut into ranges by itself).")


@dataclass(frozen=True)
class _Table:
    cells: sg.Cells
    parts: tuple[KeyPart, ...]
    values: tuple[tuple[Any, ...], ...]   # per column, the raw value of each code (None: Unknown)
    n_rows: int
    n_excluded: int
    whole: frozenset[str] = frozenset()   # binned columns of whole numbers (ranges read "age 25-34")


def _cells(plan: Plan, raw: RawCounts, measure: str, extra: tuple[Plan, RawCounts] | None = None) -> _Table:
    """The nonempty cells of the full cross, coded per column (values in the audit's order, Unknown last)."""
    kept = raw.take(raw["reason"] == KEPT)
    parts = (*plan.group_parts, *plan.cell_parts)
    keys = ["g0", *(f"c{i}" for i in range(len(plan.cell_parts)))]
    codes, values = [], []
    for part, key in zip(parts, keys):
        column = kept[key].tolist()
        plain = {v: _plain(v) for v in set(column)} if len(column) else {}
        unique = sorted(set(plain.values()), key=lambda v: part.sort_key(v))
        order = {v: i for i, v in enumerate(unique)}
        index = {raw_value: order[p] for raw_value, p in plain.items()}
        codes.append(np.fromiter((index[v] for v in column), dtype=np.int64, count=len(column)))
        values.append(tuple(unique))
    matrix = np.stack(codes, axis=1) if codes else np.zeros((len(kept), 0), dtype=np.int64)
    cards = tuple(len(v) for v in values)
    n, k = _judged(kept, measure)
    if measure == "calibration" and plan.prediction is None:
        k = np.asarray(_observed(kept), dtype=np.float64)
    columns = [n, k]
    if extra is not None:
        _, e_raw = extra
        e_kept = e_raw.take(e_raw["reason"] == KEPT)
        e_codes = []
        for key, known in zip(keys, values):
            index = {v: i for i, v in enumerate(known)}
            column = [_plain(v) for v in e_kept[key].tolist()]
            if any(v not in index for v in column):
                raise _misaligned()
            e_codes.append(np.array([index[v] for v in column], dtype=np.int64))
        e_matrix = np.stack(e_codes, axis=1)
        total = e_kept["score_sum"].astype(float)
        square = e_kept["score_sumsq"].astype(float)
        both = np.concatenate([matrix, e_matrix])
        weights = [np.concatenate([columns[0], np.zeros(len(e_matrix))]),
                   np.concatenate([columns[1], np.zeros(len(e_matrix))]),
                   np.concatenate([np.zeros(len(matrix)), e_kept["n"].astype(float)]),
                   np.concatenate([np.zeros(len(matrix)), total]),
                   np.concatenate([np.zeros(len(matrix)), total - square])]
        matrix, sums = _combine(both, weights)
        if not np.allclose(sums[0], sums[2]):
            raise _misaligned()
        cells = sg.Cells(matrix, cards, sums[0], sums[1], sums[3], sums[4])
    else:
        matrix, sums = _combine(matrix, columns)
        keep = sums[0] > 0
        cells = sg.Cells(matrix[keep], cards, sums[0][keep], sums[1][keep])
    n_excluded = int(raw["n"][raw["reason"] != KEPT].sum())
    return _Table(cells, parts, tuple(values), int(np.asarray(kept["n"], dtype=np.int64).sum()), n_excluded)


def _observed(kept: RawCounts) -> np.ndarray:
    return kept["positives"].astype(np.int64)


def _misaligned() -> LuskinError:
    return LuskinError("Some rows have an outcome but no predicted probability, or the other way round: the "
                       "calibration needs both on every row. Remove those rows first.")


def _combine(codes: np.ndarray, weights: Sequence[np.ndarray]) -> tuple[np.ndarray, list[np.ndarray]]:
    """Rows with the same codes added together (an engine may split one cell over several raw rows)."""
    if len(codes) == 0:
        return codes, [np.asarray(w, dtype=np.float64) for w in weights]
    cards = tuple(int(c) + 1 for c in codes.max(axis=0))
    flat = np.ravel_multi_index(tuple(codes.T), cards)
    keys, inverse = np.unique(flat, return_inverse=True)
    unique = np.stack(np.unravel_index(keys, cards), axis=1).astype(np.int64)
    return unique, [np.bincount(inverse.ravel(), weights=np.asarray(w, dtype=np.float64), minlength=len(keys))
                    for w in weights]


def _plain(value: Any) -> Any:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return value.item() if isinstance(value, np.generic) else value


DEFAULT_FEW_VALUES = 12       # text columns offered by default have at most this many values
DEFAULT_MAX_COLUMNS = 8       # columns offered by default at most
# A column of whole numbers in which at least this share of rows hold a value no other row holds is a number per
# row (an identifier, a survey weight), not an attribute people group by: measured on the bundled samples,
# Adult's fnlwgt 0.375 and COMPAS's id 1.0, every attribute 0.051 or less (COMPAS's r_days_from_arrest; age,
# hours-per-week, capital-gain, priors_count 0.001 or less).
PER_ROW_SHARE = 0.25
# Words of a column's name that say it holds a number per row, not an attribute: an identifier or a weight
# (whole words, after splitting at non-letters and camelCase: "person_id", "PersonID", "fnlwgt", "PERWT").
_ID_WORDS = frozenset({"id", "ids", "uuid", "guid", "key", "index", "idx", "rowid", "serial"})
_WEIGHT_WORD = re.compile(r"^(?:\w*wgt\w*|\w*wght\w*|\w*wt|weights?|sweight|pweight|hweight)$")
_SURVEY_WORDS = frozenset({"survey", "sample", "sampling", "final", "person", "household", "design", "base",
                           "replicate", "analysis", "inverse", "probability", "frequency", "freq", "case"})


def per_row_name(column: str) -> bool:
    """Whether the column's name says it holds an identifier or a (survey) weight, not an attribute.

    "weight" alone is a person's weight (an attribute); with a survey word ("sampling weight", "final_weight")
    or abbreviated ("fnlwgt", "perwt", "wt") it is a weight.
    """
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", str(column))
    words = [w for w in re.split(r"[^a-z0-9]+", spaced.lower()) if w]
    if any(w in _ID_WORDS for w in words):
        return True
    weights = [w for w in words if _WEIGHT_WORD.match(w)]
    if not weights:
        return False
    return any(w not in ("weight", "weights") for w in weights) or any(w in _SURVEY_WORDS for w in words)


def per_row_values(series: pd.Series) -> bool:
    """Whether a numeric column holds a number per row: whole numbers that many rows hold alone (an identifier,
    a survey weight); a measurement in decimals (a score, an amount) is cut into ranges and stays an attribute."""
    with np.errstate(invalid="ignore"):
        whole = pd.api.types.is_integer_dtype(series) or (
            pd.api.types.is_float_dtype(series) and bool(np.all(np.mod(series.dropna().to_numpy(), 1) == 0)))
    present = int(series.notna().sum())
    if not whole or present == 0:
        return False
    counts = series.value_counts(dropna=True)
    return int((counts == 1).sum()) >= PER_ROW_SHARE * present


def default_columns(frame: pd.DataFrame, candidates: Sequence[str], few: int = DEFAULT_FEW_VALUES) -> list[str]:
    """The columns a scan offers by default: each with few distinct values, and numbers that are cut into a
    few ranges ("age 25-34"); not a column with one value (or none), nor a number per row (an identifier or a survey weight: named so, or whole
    numbers that many rows hold alone, :func:`per_row_values`) nor codes with many values (whole numbers
    taken value by value: each would be a group of its own)."""
    from luskin_core.counting.counts import cut_into_ranges

    chosen = []
    for column in candidates:
        series = frame[column]
        distinct = int(series.nunique(dropna=True))
        if distinct + bool(series.isna().any()) < 2:
            continue   # one value for every row (or none at all): no group differs from the rest
        binned = cut_into_ranges(series) and not per_row_name(str(column)) and not per_row_values(series)
        if distinct <= few or binned:
            chosen.append(column)
        if len(chosen) == DEFAULT_MAX_COLUMNS:
            break
    return chosen


# -- the scan -----------------------------------------------------------------------------------
def scan(data: pd.DataFrame | Source, spec: ScanSpec, *, source: str | None = None,
         progress: Callable[[float], None] | None = None, memory: int | None = None) -> ScanResult:
    """Scan every group of 1..``spec.depth`` of ``spec.columns`` for a gap beyond chance (see the module).

    ``data``: a pandas frame or a :class:`~luskin_core.counting.sources.Source` (a file in DuckDB,
    PostgreSQL, Spark): the same findings for the same seed. ``progress(share)`` is told how far the
    calibration is. ``memory``: the bytes this scan may hold (default: a quarter of the machine's memory).
    A scan whose full count table is too large for it, but whose groups are not, counts the groups one
    grouping at a time (GROUPING SETS, where the data lives) and calibrates with a union bound
    (:func:`_grouping_sets_scan`); a scan too large either way is refused with what to drop.
    """
    if data is None or (not isinstance(data, Source) and len(data) == 0):
        raise LuskinError("The data has no rows.")
    _check_values(data, spec)
    plan, raw = _count(data, spec.audit_spec())
    readable = _readable_cuts(plan, spec)
    if readable:   # the ranges cut at round numbers people read, counted again
        from dataclasses import replace

        spec = replace(spec, bins=(*spec.bins, *readable))
        plan, raw = _count(data, spec.audit_spec())
    extra = _count(data, spec.audit_spec(probability=True)) if spec.measure == "calibration" else None
    table = _cells(plan, raw, spec.measure, extra)
    table = _replace_table(table, whole=_whole_columns(data, spec, table))
    cells = table.cells
    if cells.total == 0:
        raise LuskinError(_nothing_judged(spec))
    if spec.measure != "calibration":
        if cells.positives == 0:
            raise _no_positive(data, spec, plan)
        if cells.positives == cells.total:
            raise LuskinError(f"Every row is counted ({_event(spec)}), so no group can differ from the rest.")
    need, allowed = _memory_need(table, spec, memory)
    if need > allowed and _by_grouping_sets(data, table, spec, allowed):
        del cells
        table, groups, calibration, p_adjusted, significant, chosen = _grouping_sets_scan(data, plan, table, spec)
        cells = table.cells
    else:
        _check_size(table, spec, memory=memory)
        groups = sg.groups_of(cells, spec.depth, spec.min_size)
        if not groups.valid.any():
            raise _none_large_enough(spec)
        calibration = sg.calibrate(cells, groups, spec.replicates, spec.level, spec.seed, progress)
        p_adjusted = calibration.p_adjusted(groups.z)
        significant = groups.valid & (p_adjusted <= spec.level)
        chosen = sg.carriers(cells, groups, significant, calibration.critical)
    chosen.sort(key=lambda g: (-abs(float(groups.z[g])), g))
    big, overall = cells.total, cells.positives / cells.total if spec.measure != "calibration" else 0.0
    if spec.measure == "calibration":
        overall = cells.positives / cells.total
    labels = _labels(table)
    findings = [_finding(g, groups, cells, calibration.critical, float(p_adjusted[g]), labels, table, spec)
                for g in chosen]
    sizes = groups.n[groups.valid]
    median = int(np.median(sizes))
    smallest = int(sizes.min())
    rate_for_power = overall if spec.measure != "calibration" else float(cells.expected.sum() / big)  # type: ignore[union-attr]
    result = ScanResult(
        spec=spec, source=source or str(getattr(data, "name", "in-memory data")), measure=spec.measure,
        n_rows=table.n_rows, n_judged=big, overall_rate=float(overall), groups_scanned=int(groups.valid.sum()),
        groups_too_small=sg.group_count(cells.cards, spec.depth) - int(groups.valid.sum()),
        replicates=calibration.replicates,
        critical_value=calibration.critical, method=calibration.method, significant=int(significant.sum()),
        findings=(), median_size=median,
        detectable_median=sg.detectable_gap(median, big, rate_for_power, calibration.critical),
        detectable_smallest=sg.detectable_gap(smallest, big, rate_for_power, calibration.critical),
        n_excluded=table.n_excluded,
        columns=tuple((p.column, tuple(labels[j])) for j, p in enumerate(table.parts)),
        sizes=groups.n[groups.valid], differences=_differences(groups, cells)[groups.valid],
    )
    worded = tuple(_with_sentence(f, result) for f in findings)
    return _replace(result, findings=worded)


def _none_large_enough(spec: ScanSpec) -> LuskinError:
    return LuskinError(f"No group has at least {spec.min_size:,} rows (and as many outside it): lower the "
                       "smallest group size, or scan fewer columns.")


# The carriers' rule reads the rows of at most this many significant groups (those with the largest |z|) when
# the groups are counted one grouping at a time: one membership condition each in one query.
MAX_MEMBERS = 2_000


def _by_grouping_sets(data: Any, table: _Table, spec: ScanSpec, allowed: int) -> bool:
    """Whether a scan too large for its full count table can count its groups instead: a rate (not
    calibration, whose per-group law needs the model's probabilities row by row), data counted where
    GROUPING SETS run (a frame, a file in DuckDB), and groups few enough to hold."""
    from luskin_core.counting.grouping import supports

    return (spec.measure != "calibration" and supports(data)
            and grouping_sets_memory(table.cells.cards, spec.depth) <= allowed)


def grouping_sets_memory(cards: Sequence[int], depth: int) -> int:
    """Bytes a scan counted one grouping at a time holds: the scan's per-group arrays, and the query's rows
    (one per group: each key and its flag, and the counts, as Python values of about 40 bytes)."""
    return sg.MEMORY_FIXED + (sg.MEMORY_PER_GROUP + 40 * (2 * len(cards) + 5)) * sg.group_count(cards, depth)


def _grouping_sets_scan(data: Any, plan: Plan, full: _Table, spec: ScanSpec) -> tuple[
        _Table, sg.Groups, sg.Calibration, np.ndarray, np.ndarray, list[int]]:
    """The scan from each group's own counts (GROUPING SETS over the plan's keys, in the engine), without the
    full cross: the calibration is a union bound over every group's exact permutation law
    (:class:`~luskin_core.stats.subgroups.BoundCalibration`: exact replicates need the joint table), and the
    rule that picks the group carrying a gap reads the significant groups' rows by membership."""
    from luskin_core.counting.grouping import grouping_set_counts, membership_counts

    parts = (*plan.group_parts, *plan.cell_parts)
    keys = ["g0", *(f"c{i}" for i in range(len(plan.cell_parts)))]
    m = len(keys)
    subsets = sg.subsets_of(m, spec.depth)
    found = grouping_set_counts(data, plan, [tuple(keys[j] for j in s) for s in subsets])
    out = np.stack([np.asarray(found[f"q_{k}"], dtype=np.int64) for k in keys], axis=1) == 1
    n_all, k_all = _judged(found, spec.measure)
    grand = out.all(axis=1)
    total, positives = int(n_all[grand].sum()), int(k_all[grand].sum())
    codes = np.full(out.shape, -1, dtype=np.int64)
    values = []
    for j, (part, key) in enumerate(zip(parts, keys)):
        inside = ~out[:, j]
        raw = [_plain(v) for v in found[key][inside]]
        unique = sorted(set(raw), key=part.sort_key)
        order = {v: i for i, v in enumerate(unique)}
        codes[inside, j] = [order[v] for v in raw]
        values.append(tuple(unique))
    cards = tuple(len(v) for v in values)
    rows = ~grand
    groups = sg.groups_from_counts(cards, spec.depth, codes[rows], n_all[rows], k_all[rows], spec.min_size,
                                   total, positives)
    if not groups.valid.any():
        raise _none_large_enough(spec)
    calibration = sg.bound_calibration(groups, total, positives, spec.level)
    p_adjusted = calibration.p_adjusted(groups.z)
    significant = groups.valid & (p_adjusted <= spec.level)
    top = sorted(np.flatnonzero(significant).tolist(), key=lambda g: -abs(float(groups.z[g])))[:MAX_MEMBERS]
    capped = np.zeros_like(significant)
    capped[top] = True
    conditions = [{keys[j]: values[j][groups.codes[g][j]] for j in np.flatnonzero(groups.codes[g] >= 0)}
                  for g in top]
    chosen: list[int] = []
    if top:
        member, counts = membership_counts(data, plan, conditions)
        n_p, k_p = _judged(counts, spec.measure)
        where = {g: i for i, g in enumerate(top)}
        patterns = sg.membership_cells(member, n_p, k_p)
        chosen = sg.carriers(patterns, groups, capped, calibration.critical,
                             members=lambda g: member[:, where[g]], totals=(float(total), float(positives)))
    light = sg.Cells(np.zeros((1, m), dtype=np.int64), cards, np.array([float(total)]), np.array([float(positives)]))
    table = _Table(light, parts, tuple(values), full.n_rows, full.n_excluded, full.whole)
    return table, groups, calibration, p_adjusted, significant, chosen


def _judged(counts: Any, measure: str) -> tuple[np.ndarray, np.ndarray]:
    """The judged rows and events of each counted row (a cell, a group, a pattern of membership) from the
    plan's counts: all rows and positives for a rate; for error rates, the rows the rate is taken over and
    its errors (true negatives counted, or the rest of the rows where a count has none)."""
    n = np.asarray(counts["n"], dtype=np.float64)
    if measure in ("rate", "calibration"):
        return n, np.asarray(counts["positives"], dtype=np.float64)
    tp, fp, fn = (np.asarray(counts[c], dtype=np.float64) for c in ("tp", "fp", "fn"))
    tn = np.asarray(counts["tn"], dtype=np.float64) if "tn" in counts else n - tp - fp - fn
    if measure == "fpr":
        return fp + tn, fp
    if measure == "fnr":
        return tp + fn, fn
    return n, fp + fn


def _replace(result: ScanResult, **changes: Any) -> ScanResult:
    from dataclasses import replace

    return replace(result, **changes)


def _differences(groups: sg.Groups, cells: sg.Cells) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        if cells.calibration:
            assert groups.expected is not None
            return (groups.k - groups.expected) / groups.n
        return groups.k / groups.n - (cells.positives - groups.k) / (cells.total - groups.n)


def _nothing_judged(spec: ScanSpec) -> str:
    if spec.measure == "fpr":
        return "No row has a negative true outcome, so there is no false positive rate to scan."
    if spec.measure == "fnr":
        return "No row has a positive true outcome, so there is no false negative rate to scan."
    return "Every row lacks a value the scan needs (the outcome, or a prediction), so nothing can be scanned."


def _no_positive(data: Any, spec: ScanSpec, plan: Plan) -> LuskinError:
    if spec.measure != "rate" or spec.prediction:
        return LuskinError(f"No row is counted ({_event(spec)}), so no group can differ from the rest.")
    try:
        found = data.value_counts(plan.outcome, 10)["value"].dropna().tolist() if isinstance(data, Source) else \
            data[plan.outcome].dropna().value_counts().index[:10].tolist()
    except Exception:  # noqa: BLE001 - the values are only an aid to the message
        found = []
    listed = ", ".join(shown(v) for v in found)
    return LuskinError(f"The value '{shown(spec.positive)}' never occurs in the outcome column '{shown(plan.outcome)}'"
                       + (f". Its values are: {listed}." if listed else "."))


def machine_memory() -> int:
    """The machine's physical memory in bytes (0 when the system does not say)."""
    import os

    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return 0


def _allowed(machine: int | None = None, memory: int | None = None) -> int:
    """The bytes a scan may hold: ``memory`` when given, else a quarter of the machine's memory."""
    if memory is not None:
        return int(memory)
    total = machine_memory() if machine is None else machine
    return int(MEMORY_SHARE * total) if total else 8_000_000_000


def _memory_need(table: _Table, spec: ScanSpec, memory: int | None = None) -> tuple[int, int]:
    """(bytes the full-table scan needs, bytes a scan may hold)."""
    return sg.memory_estimate(len(table.cells.n), table.cells.cards, spec.depth), _allowed(memory=memory)


def _check_size(table: _Table, spec: ScanSpec, machine: int | None = None, memory: int | None = None) -> None:
    """A scan the machine cannot hold gets a plain refusal: how much memory it needs, how much a scan may
    use here, and what to drop (a lower depth, or the columns with most values) with what each would need."""
    cards, cells = table.cells.cards, len(table.cells.n)
    need = sg.memory_estimate(cells, cards, spec.depth)
    allowed = _allowed(machine, memory)
    if need <= allowed:
        return
    groups = sg.group_count(cards, spec.depth)
    options = []
    for depth in range(spec.depth - 1, 0, -1):
        lower = sg.memory_estimate(cells, cards, depth)
        if lower <= allowed:
            options.append(f"lower the depth to {depth} (about {format_memory(lower)})")
            break
    widest = sorted(range(len(cards)), key=lambda j: -cards[j])[:3]
    drops = []
    for j in widest:
        rest = cards[:j] + cards[j + 1:]
        without = sg.memory_estimate(cells, rest, min(spec.depth, len(rest))) if rest else 0
        drops.append(f"'{shown(table.parts[j].column)}' ({cards[j]:,} values: without it about "
                     f"{format_memory(without)})")
    options.append("leave out or bin the columns with most values: " + ", ".join(drops))
    share = "" if memory is not None else " (a quarter of the machine's memory)"
    raise LuskinError(f"This scan is too large for the machine: about {format_memory(need)} of memory for "
                      f"{groups:,} groups over {cells:,} combinations of values, where a scan may use "
                      f"{format_memory(allowed)} here{share}. "
                      + "; or ".join(options)[:1].upper() + "; or ".join(options)[1:] + ".")


def _readable_cuts(plan: Plan, spec: ScanSpec) -> tuple[tuple[str, tuple[float, ...]], ...]:
    """Round the counting plan's quantile cut points to two significant digits (a whole number at least) so
    that ranges read "age 25-34"; empty when they are round already or no column was cut at its quantiles."""
    out = []
    for part in (*plan.group_parts, *plan.cell_parts):
        if part.kind != "bins" or not part.quantiles:
            continue
        rounded = tuple(sorted({_round_cut(c) for c in part.cuts}))
        if rounded != tuple(part.cuts):
            out.append((part.column, rounded))
    return tuple(out)


def _round_cut(x: float) -> float:
    """Two significant digits; a whole number when the value is at least 10 (33.5 -> 34, 25,430 -> 25,000)."""
    if x == 0 or not math.isfinite(x):
        return float(x)
    digits = 1 - math.floor(math.log10(abs(x)))
    return float(round(x, min(digits, 0) if abs(x) >= 10 else digits))


def _whole_columns(data: Any, spec: ScanSpec, table: _Table) -> frozenset[str]:
    """The binned columns whose type holds whole numbers only, cut at whole numbers: their ranges read "25-34".

    The column's type decides (an integer type in pandas or in the engine), so every engine words a range
    alike; a column of decimals keeps "from ... to under ..." words.
    """
    binned = [p.column for p in table.parts if p.kind == "bins" and all(float(c).is_integer() for c in p.cuts)]
    if not binned:
        return frozenset()
    if isinstance(data, Source):
        try:
            facts = data.facts(spec.audit_spec())
            whole = getattr(facts, "is_integer", None)
            return frozenset(c for c in binned if whole is not None and bool(whole(c)))
        except Exception:  # noqa: BLE001 - without the type, ranges keep their plain "to under" words
            return frozenset()
    return frozenset(c for c in binned if pd.api.types.is_integer_dtype(data[c]))


def _replace_table(table: _Table, **changes: Any) -> _Table:
    from dataclasses import replace

    return replace(table, **changes)


def bin_label(part: KeyPart, index: int, whole: bool) -> str:
    """A range's name people read: "age under 25", "age 25-34", "age 65 or over" (whole numbers), or
    "score 0.25 to under 0.5" (a range of any numbers: its lower end included, its upper end not)."""
    from luskin_core.counting.counts import plain_number

    cuts, column = part.cuts, part.column
    if index == 0:
        return f"{column} under {plain_number(cuts[0])}"
    if index == len(cuts):
        return f"{column} {plain_number(cuts[-1])} or over"
    low, high = cuts[index - 1], cuts[index]
    if whole:
        last = high - 1
        return f"{column} {plain_number(low)}" if last == low else f"{column} {plain_number(low)}-{plain_number(last)}"
    return f"{column} {plain_number(low)} to under {plain_number(high)}"


def _value_label(part: KeyPart, value: Any, whole: bool = False) -> str:
    if part.kind == "bins" and value is not None:
        return bin_label(part, int(value), whole)
    return part.label(value, with_column=True) if part.kind == "value" or value is None else part.label(value)


def _labels(table: _Table) -> list[list[str]]:
    return [[_value_label(p, v, p.column in table.whole) for v in values] for p, values in zip(table.parts, table.values)]


def _data_value(part: KeyPart, value: Any, label: str) -> Any:
    """A condition's value as in the data (a whole number without ".0"), or the bin's label."""
    if value is None:
        return None
    if part.kind == "bins":
        return label
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return int(value)
    return value


def _finding(g: int, groups: sg.Groups, cells: sg.Cells, critical: float, p_adjusted: float,
             labels: list[list[str]], table: _Table, spec: ScanSpec) -> ScanFinding:
    code = groups.codes[g]
    set_columns = [int(j) for j in np.flatnonzero(code >= 0)]
    conditions = {table.parts[j].column: _data_value(table.parts[j], table.values[j][code[j]], labels[j][code[j]])
                  for j in set_columns}
    names = tuple(labels[j][code[j]] for j in set_columns)
    n, k = float(groups.n[g]), float(groups.k[g])
    rate = k / n
    if cells.calibration:
        assert groups.expected is not None and groups.variance is not None
        other = float(groups.expected[g]) / n
        se = math.sqrt(float(groups.variance[g])) / n
    else:
        rest_n, rest_k = cells.total - n, cells.positives - k
        other = rest_k / rest_n
        se = math.sqrt(rate * (1 - rate) / n + other * (1 - other) / rest_n)
    difference = rate - other
    return ScanFinding(conditions, names, int(n), round(k), rate, other, difference, difference - critical * se,
                       difference + critical * se, float(groups.z[g]), p_adjusted)


# -- the words ----------------------------------------------------------------------------------
def _event(spec: ScanSpec) -> str:
    if spec.measure == "fpr":
        return "a false positive"
    if spec.measure == "fnr":
        return "a false negative"
    if spec.measure == "error":
        return "an error"
    if spec.prediction:
        return f"decided {shown(spec.positive)} by the model"
    return f"{shown(spec.outcome)} is {shown(spec.positive)}"


def _rate_words(spec: ScanSpec) -> str:
    if spec.measure in ("fpr", "fnr", "error"):
        return MEASURES[spec.measure]
    return f"{'with' if spec.prediction else 'where'} {_event(spec)}"


def _with_sentence(finding: ScanFinding, result: ScanResult) -> ScanFinding:
    from dataclasses import replace

    return replace(finding, sentence=finding_sentence(finding, result))


def finding_sentence(f: ScanFinding, result: ScanResult) -> str:
    """One finding in words: who, their rate against everyone else's (or the model's), the gap and its interval."""
    spec = result.spec
    who = f"{f.name} ({f.n:,} rows)"
    low, high = format_points(f.ci_low, 1), format_points(f.ci_high, 1)
    interval = f"simultaneous {format_percent(1 - spec.level, 0)} CI {low} to {high} points"
    held = (f"this holds after accounting for the {result.groups_scanned:,} groups scanned "
            f"(adjusted {format_p(f.p_adjusted)})")
    if spec.measure == "calibration":
        way = "under-predicted" if f.difference > 0 else "over-predicted"
        return (f"{who}: {format_percent(f.rate)} {_rate_words(spec)} against {format_percent(f.rest_rate)} predicted "
                f"by the model, {way} by {points(f.difference)} ({interval}); {held}.")
    if spec.measure in ("fpr", "fnr", "error"):
        what = f"{MEASURES[spec.measure]} {format_percent(f.rate)}"
    else:
        what = f"{format_percent(f.rate)} {_rate_words(spec)}"
    return (f"{who}: {what} against {format_percent(f.rest_rate)} for everyone else, a gap of "
            f"{points(f.difference)} ({interval}); {held}.")


def headline(result: ScanResult) -> str:
    """What the scan found in one sentence, or what it could have seen when it found nothing."""
    if result.findings:
        count = len(result.findings)
        return (f"{count} group{'s' if count != 1 else ''} of the {result.groups_scanned:,} scanned "
                f"differ{'' if count != 1 else 's'} from the rest by more than chance would explain "
                f"(family-wise error rate {result.level:g}).")
    sizes = f"a group of {result.median_size:,} rows (the median size)"
    if result.detectable_median is None:
        could = "the data are too few to say how large a gap it could have seen"
    else:
        could = (f"it would have found, with 80% chance, a gap of about {points(result.detectable_median)} in "
                 f"{sizes}")
        if result.detectable_smallest is not None:
            could += (f" and of about {points(result.detectable_smallest)} in the smallest group scanned "
                      f"({result.spec.min_size:,} rows or more)")
    return (f"No group differs from the rest by more than chance would explain, among the "
            f"{result.groups_scanned:,} groups scanned; {could}.")


__all__ = ["MEASURES", "ScanFinding", "ScanResult", "ScanSpec", "finding_sentence", "headline", "scan"]
