"""Where are the gaps nobody asked about? An exhaustive subgroup scan that stays silent on noise.

Every combination of 1..depth of the scanned columns and their values (missing values as their own
"Unknown" value; numeric columns with many values cut into a few bins) is a group; each group's rate
(the share with a positive outcome, a model's false positive, false negative or error rate, or the
observed rate against the model's predicted probability) is compared with everyone else's.

One count table does it all: the full cross of the scanned columns, counted by the same counting plan
as every audit (:mod:`luskin_core.counting`: in memory, DuckDB for files, PostgreSQL, Spark),
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
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

import numpy as np

from luskin_core.counting.count_table import RawCounts
from luskin_core.counting.plan import KEPT, KeyPart, Plan
from luskin_core.counting.sources import Source
from luskin_core.errors import LuskinError
from luskin_core.formatting import format_memory, format_p, format_percent, format_points, points
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.spec.columns import shown
from luskin_core.spec.options import OPTION_CONSTRAINTS, ScanOptions, option_default
from luskin_core.spec.validation import check_unknown_values, positive_words
from luskin_core.stats import subgroups as sg
from luskin_core.stats.judgement import ScoreRule

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
ERRORS = {"fwer": "the family-wise error rate", "fdr": "the false discovery rate"}
MAX_SCAN_VALUES = 50          # a column with more distinct values is refused (bin it or leave it out)
MEMORY_SHARE = 0.25           # a scan may hold at most this share of the machine's memory (the server is shared)
DEFAULT_MIN_SIZE: int = option_default("scan", "min_size")
DEFAULT_REPLICATES: int = option_default("scan", "replicates")
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
    error: str = "fwer"   # "fwer": the family-wise error rate at level; "fdr": the false discovery rate at level
    calibration: str = "auto"   # the family-wise bar: "auto", "replicates" (max-T) or "bound" (no replicates)
    # a score outcome (ai_score): its rows count above its median (``score_cutoff`` None) or at or above the cut-off,
    # as the audit reads it; no positive value then
    outcome_type: str = "label"
    score_cutoff: float | None = None
    # values of the scanned columns that mean "not known" beyond the common spellings (the audit's unknown_values,
    # such as the SQF file's race code "U"): a group with such a value is set apart, as the audit sets it apart
    unknown_values: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        columns = (self.columns,) if isinstance(self.columns, str) else tuple(self.columns)
        columns = tuple(str(c).strip() for c in columns if str(c).strip())
        object.__setattr__(self, "columns", columns)
        object.__setattr__(self, "unknown_values", check_unknown_values(self.unknown_values))
        if not columns:
            raise LuskinError("Choose at least one column to scan.")
        if len({c.lower() for c in columns}) != len(columns):
            raise LuskinError(f"A column is named twice among the columns to scan: {', '.join(map(shown, columns))}.")
        # the settings ScanOptions declares are checked by the same constraints (luskin_core/spec/options.py)
        for name, constraint in OPTION_CONSTRAINTS["scan"].items():
            if name != "measure" or self.measure is not None:
                object.__setattr__(self, name, constraint.check(getattr(self, name)))
        if self.measure is None:
            raise LuskinError(f"Choose what the scan compares: {', '.join(MEASURES)}.")
        if self.depth == 0:
            object.__setattr__(self, "depth", min(DEFAULT_DEPTH, len(columns)))
        if self.depth > len(columns):
            raise LuskinError(f"A depth of {self.depth} combines {self.depth} columns, but only {len(columns)} "
                              f"{'is' if len(columns) == 1 else 'are'} scanned: choose a depth of at most "
                              f"{len(columns)}, or scan more columns.")
        if self.measure in ("fpr", "fnr", "error") and not self.prediction:
            raise LuskinError("Error rates compare a model's decisions with the truth: name the prediction column.")
        if self.measure == "calibration" and not self.probability:
            raise LuskinError("Calibration compares the outcome with a model's predicted probabilities: name the "
                              "column that holds them.")
        if self.outcome_type not in ("label", "score"):
            raise LuskinError("The scan compares a share: its outcome is a label or a score read above a line.")
        if self.positive is None and self.outcome_type == "label":
            raise LuskinError("Say which value of the outcome counts as positive.")
        if self.outcome.strip().lower() in {c.lower() for c in columns}:
            raise LuskinError(f"The outcome '{shown(self.outcome)}' is also among the columns to scan: leave it out.")
        object.__setattr__(self, "bins", tuple((str(c), tuple(float(x) for x in cuts)) for c, cuts in self.bins))

    def to_dict(self) -> dict[str, Any]:
        """Every field, in its order (a field added for a new option is written with no edit here): tuples as lists,
        the cuts as {column: cuts}, the values read as unknown only when there are some."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "bins":
                value = {c: list(cuts) for c, cuts in value}
            elif f.name == "unknown_values" and not value:
                continue
            out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

    def audit_spec(self, *, probability: bool = False) -> AuditSpec:
        """The counting plan's specification: the full cross of the columns (first as group, others as strata)."""
        common: dict[str, Any] = {"group_by": self.columns[:1], "strata": self.columns[1:], "n_bins": self.n_bins,
                                  "bins": self.bins}
        if probability:
            assert self.probability is not None
            return AuditSpec(self.probability, None, outcome_type="score", score_cutoff=0.5, **common)
        prediction = self.prediction if self.measure != "calibration" else None
        if self.outcome_type == "score":
            return AuditSpec(self.outcome, None, outcome_type="score", score_cutoff=self.score_cutoff, **common)
        return AuditSpec(self.outcome, self.positive, prediction=prediction,
                         prediction_cutoff=self.prediction_cutoff if prediction else None, **common)


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
    kind: str = "main effect"            # "main effect" (one condition) or "intersection" (beyond its parts)
    parts_rate: float | None = None      # an intersection: the rate its conditions, each acting alone, predict
    parts_z: float | None = None         # an intersection: z of its own effect beside its parts'
    within: str = ""                     # the reported group this one lies inside (its gap differs from the rest of it)
    explains: int = 0                    # groups beyond the bar that are this one's gap seen again
    unknown: bool = False                # a group of unknown category: shown, set apart from the findings

    @property
    def name(self) -> str:
        return " and ".join(self.labels)

    def to_dict(self) -> dict[str, Any]:
        return {"conditions": dict(self.conditions), "n": self.n, "events": self.events, "rate": self.rate,
                "rest_rate": self.rest_rate, "difference": self.difference, "ci_low": self.ci_low,
                "ci_high": self.ci_high, "z": self.z, "p_adjusted": self.p_adjusted, "kind": self.kind,
                "parts_rate": self.parts_rate, "parts_z": self.parts_z, "within": self.within or None,
                "explains": self.explains, "unknown_category": self.unknown, "sentence": self.sentence}


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
    threshold: float | None = None                 # the false discovery rate: the p-value a discovery is below
    columns: tuple[tuple[str, tuple[str, ...]], ...] = ()
    sizes: np.ndarray | None = field(default=None, repr=False, compare=False)
    differences: np.ndarray | None = field(default=None, repr=False, compare=False)
    set_apart: tuple[ScanFinding, ...] = ()       # groups of unknown category beyond the bar (not findings)
    not_reported: dict[str, int] = field(default_factory=dict)   # beyond the bar, not reported: why -> how many
    status: np.ndarray | None = field(default=None, repr=False, compare=False)   # per scanned group (WITHIN...)

    @property
    def reported(self) -> int:
        return len(self.findings)

    @property
    def explained(self) -> int:
        """Groups beyond the bar that are not reported (and not of unknown category)."""
        return self.significant - len(self.findings) - len(self.set_apart)

    @property
    def level(self) -> float:
        return self.spec.level

    @property
    def null_rate(self) -> float:
        """The chance that the scan reports any group when none differs: with R replicates the max-T test
        rejects when the observed largest |z| ranks r-th among R + 1 exchangeable values with r / (R + 1) below
        the level (strictly: the project's one rule), so exactly (the number of such ranks) / (R + 1) with exact
        draws and no ties (4.9% at 0.05 with 999 replicates, 4.5% with 199), less with ties; without replicates
        (a union bound), at most the level."""
        if self.replicates == 0 or self.fdr:
            return self.level
        return (sg.allowed_reaching(self.replicates, self.level) + 1) / (self.replicates + 1)

    @property
    def null_rate_words(self) -> str:
        if self.fdr:
            return ("at most the level (with no group differing every discovery is false: the false discovery rate "
                    "is then the chance of any report)")
        if self.replicates == 0:
            return "at most the level (a union bound: usually below it)"
        exact = "exactly, with exact permutation draws and no ties" if self.method == sg.EXACT else \
            "to the normal limit's accuracy"
        ranks = sg.allowed_reaching(self.replicates, self.level) + 1
        return (f"{format_percent(self.null_rate, 1)}: {ranks:,} of the {self.replicates + 1:,} ranks the observed "
                f"largest |z| can take give an adjusted p-value below {self.level:g} ({exact}; ties make it "
                "smaller)")

    @property
    def fdr(self) -> bool:
        return self.spec.error == "fdr"

    @property
    def error_control(self) -> str:
        if self.fdr:
            return (f"false discovery rate at {self.level:g} over all {self.groups_scanned:,} groups scanned "
                    f"({self.method}): among the groups reported, the expected share reported by chance is at most "
                    f"{self.level:g}; a discovery's p-value was below {self.threshold:.3g}")
        if self.replicates == 0:
            return (f"family-wise error rate at {self.level:g} over all {self.groups_scanned:,} groups scanned "
                    f"(the chance that any group reaches the bar by chance is at most the sum of each group's "
                    f"chance: {self.method}); this also bounds the false discovery rate at {self.level:g}")
        return (f"family-wise error rate at {self.level:g} over all {self.groups_scanned:,} groups scanned "
                f"(single-step max-T, Westfall-Young, calibrated on {self.replicates:,} null replicates: "
                f"{self.method}); this also bounds the false discovery rate at {self.level:g}")

    def headline(self) -> str:
        return headline(self)

    @property
    def control_words(self) -> str:
        return f"false discovery rate {self.level:g}" if self.fdr else f"family-wise error rate {self.level:g}"

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
            "error_rate": self.spec.error, "fdr_threshold": self.threshold,
            "interval": ("the pooled test inverted (score interval) at each discovery's own bar: adjusted for the "
                         "false discovery rate (Benjamini-Yekutieli's false coverage rate)" if self.fdr else
                         "simultaneous: the pooled test inverted (score interval) at the scan's critical value, so "
                         "it holds 0 exactly when the group is within the bar"),
            "groups_beyond_the_bar": self.significant, "reported": self.reported,
            "set_apart_of_unknown_category": len(self.set_apart), "not_reported": dict(self.not_reported),
            "significance": f"a group is beyond the bar when its adjusted p-value is below {self.level:g} "
                            f"(strictly), that is when its |z| is above {self.critical_value:.4f}",
            "headline": self.headline(), "bar": bar_sentence(self),
            "findings": [f.to_dict() for f in self.findings],
            "set_apart": [f.to_dict() for f in self.set_apart],
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
    from luskin_core.counting.executor import count_plan, executor_for

    return count_plan(executor_for(data), spec)


def _check_values(data: Any, spec: ScanSpec) -> None:
    """Refuse a text column with more distinct values than a scan can read (a number is binned instead).

    Asked of the executor, so a frame and every engine refuse the same column in the same words."""
    from luskin_core.counting.executor import executor_for

    executor = executor_for(data)
    facts = executor.facts(spec.audit_spec())
    for column in spec.columns:
        name = facts.resolve(column, "scanned")
        if facts.is_numeric(name):
            continue
        if len(executor.distinct(name, MAX_SCAN_VALUES + 1)) > MAX_SCAN_VALUES:
            raise _too_many(name)


def _too_many(column: str) -> LuskinError:
    return LuskinError(f"The column '{shown(column)}' has more than {MAX_SCAN_VALUES} distinct values, too many to scan (at most "
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
        found = _codes_of(kept[key], part)
        codes.append(found[0])
        values.append(found[1])
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


def _codes_of(raw: Any, part: KeyPart) -> tuple[np.ndarray, tuple[Any, ...]]:
    """Each counted row's value code (values in the audit's order, Unknown last) and the values. A column of
    numbers is coded by numpy (691,200 cells x 8 columns: a Python loop over every value took seconds)."""
    array = np.asarray(raw)
    if array.dtype.kind == "O" and len(array) and isinstance(array[0], (int, float, np.integer, np.floating)):
        try:   # numbers held as Python objects (an engine's keys): as floats, when every one is a number
            array = array.astype(np.float64)
        except (TypeError, ValueError):
            pass
    if array.dtype.kind in "iub" or (array.dtype.kind == "f" and not np.isnan(array).any()):
        unique, inverse = np.unique(array, return_inverse=True)
        plain = [_plain(v) for v in unique.tolist()]
        order = sorted(range(len(plain)), key=lambda i: part.sort_key(plain[i]))
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order))
        return rank[inverse.ravel()], tuple(plain[i] for i in order)
    column = list(raw.tolist()) if hasattr(raw, "tolist") else list(raw)
    mapped = {v: _plain(v) for v in set(column)} if len(column) else {}
    ordered = sorted(set(mapped.values()), key=lambda v: part.sort_key(v))
    position = {v: i for i, v in enumerate(ordered)}
    index = {raw_value: position[p] for raw_value, p in mapped.items()}
    return np.fromiter((index[v] for v in column), dtype=np.int64, count=len(column)), tuple(ordered)


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
    if math.prod(cards) <= sg.DENSE_CELLS:   # a count per cell of the full cross: no sort
        sums = [np.bincount(flat, weights=np.asarray(w, dtype=np.float64), minlength=math.prod(cards))
                for w in weights]
        present = np.flatnonzero(np.bincount(flat, minlength=math.prod(cards)))
        unique = np.stack(np.unravel_index(present, cards), axis=1).astype(np.int64)
        return unique, [w[present] for w in sums]
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
    """The columns a scan offers by default (:func:`suited_columns`), at most :data:`DEFAULT_MAX_COLUMNS`."""
    return suited_columns(frame, candidates, few)[:DEFAULT_MAX_COLUMNS]


def default_columns_note(frame: pd.DataFrame, candidates: Sequence[str], few: int = DEFAULT_FEW_VALUES) -> str:
    """The words that say the default stops at :data:`DEFAULT_MAX_COLUMNS` columns and which suited ones it left
    out ("" when none was left out)."""
    suited = suited_columns(frame, candidates, few)
    if len(suited) <= DEFAULT_MAX_COLUMNS:
        return ""
    left = suited[DEFAULT_MAX_COLUMNS:]
    listed = ", ".join(f"'{shown(c)}'" for c in left[:10]) + (f" and {len(left) - 10:,} more" if len(left) > 10 else "")
    return (f"The first {DEFAULT_MAX_COLUMNS} of the {len(suited):,} columns that suit a scan are chosen (every "
            f"column more multiplies the groups to scan); also suited, add them above to scan them: {listed}.")


def suited_columns(frame: pd.DataFrame, candidates: Sequence[str], few: int = DEFAULT_FEW_VALUES) -> list[str]:
    """The columns a scan offers by default: each with few distinct values, and numbers that are cut into a
    few ranges ("age 25-34"); not a column with one value (or none), nor a number per row (an identifier or a survey weight: named so, or whole
    numbers that many rows hold alone, :func:`per_row_values`) nor codes with many values (whole numbers
    taken value by value: each would be a group of its own)."""
    from luskin_core.counting.memory import cut_into_ranges

    chosen = []
    for column in candidates:
        series = frame[column]
        distinct = int(series.nunique(dropna=True))
        if distinct + bool(series.isna().any()) < 2:
            continue   # one value for every row (or none at all): no group differs from the rest
        binned = cut_into_ranges(series) and not per_row_name(str(column)) and not per_row_values(series)
        if distinct <= few or binned:
            chosen.append(column)
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
    _check_values(data, spec)   # the executor's facts refuse data with no row first
    spec, plan, table = _counted(data, spec)
    table, groups, calibration, p_adjusted, significant, choice = _tested(data, plan, table, spec, memory, progress)
    cells = table.cells
    chosen = sorted(choice.chosen, key=lambda g: (-abs(float(groups.z[g])), g))
    big, overall = cells.total, cells.positives / cells.total
    labels = _labels(table)
    apart = [g for g in chosen if _of_unknown_category(g, groups, table, spec.unknown_values)]
    known = [g for g in chosen if g not in apart]
    parts = sg.Parts(groups)
    made = {g: _finding(g, groups, cells, _bar(calibration, groups, cells, g), float(p_adjusted[g]), labels, table,
                        spec, parts)
            for g in chosen}
    explains = {g: 0 for g in chosen}
    for h, _ in choice.why.values():
        if h in explains:
            explains[h] += 1
    findings = _nested_findings(known, groups, made, explains)
    set_apart = tuple(_replace_finding(made[g], explains=explains[g], unknown=True) for g in apart)
    not_reported = _reasons(significant, choice, chosen, apart)
    status = np.zeros(len(groups.n), dtype=np.int8)
    status[significant] = BEYOND_EXPLAINED
    status[known] = FOUND
    status[apart] = APART
    sizes = groups.n[groups.valid]
    median = int(np.median(sizes))
    smallest = int(sizes.min())
    rate_for_power = overall if spec.measure != "calibration" else float(cells.expected.sum() / big)  # type: ignore[union-attr]
    result = ScanResult(
        spec=spec, source=source or _source_name(data, "in-memory data"), measure=spec.measure,
        n_rows=table.n_rows, n_judged=big, overall_rate=float(overall), groups_scanned=int(groups.valid.sum()),
        groups_too_small=sg.group_count(cells.cards, spec.depth) - int(groups.valid.sum()),
        replicates=calibration.replicates,
        critical_value=calibration.critical, method=calibration.method, significant=int(significant.sum()),
        findings=(), median_size=median,
        detectable_median=sg.detectable_gap(median, big, rate_for_power, calibration.critical),
        detectable_smallest=sg.detectable_gap(smallest, big, rate_for_power, calibration.critical),
        n_excluded=table.n_excluded, threshold=getattr(calibration, "threshold", None),
        columns=tuple((p.column, tuple(labels[j])) for j, p in enumerate(table.parts)),
        sizes=groups.n[groups.valid], differences=_differences(groups, cells)[groups.valid],
        set_apart=(), not_reported=not_reported, status=status[groups.valid],
    )
    worded = tuple(_with_sentence(f, result) for f in findings)
    return _replace(result, findings=worded, set_apart=tuple(_with_sentence(f, result) for f in set_apart))


# the scan options scan_spec reads itself (the columns fall back on the audit's, the measure on the columns given)
_READ_HERE = ("columns", "measure")


def scan_spec(spec: AuditSpec, options: ScanOptions | None = None) -> ScanSpec:
    """The scan an audit's specification and the scan's options describe: the outcome and its positive value, a
    model's prediction column and its cut-off and the numeric columns' cuts from ``spec``; the columns scanned
    (none given: the audit's groups and strata, or its protected column) and how hard to look from ``options``."""
    options = options or ScanOptions()
    columns = options.columns or (*spec.group_by, *spec.strata) or \
        ((spec.protected.column,) if spec.protected is not None else ())
    # by default the audit's own reading: the share with the positive outcome (with a prediction column, the share
    # the model decides positive: the audit's selection rate), or calibration against a column of probabilities
    measure = options.measure or ("calibration" if options.probability else "rate")
    score: dict[str, Any] = ({"outcome_type": "score", "score_cutoff": spec.score_cutoff}
                             if spec.outcome_type == "score" and measure == "rate" and not spec.prediction else {})
    # every other option is the spec's field of its name, passed as it is: an option declared later reaches the
    # scan and its JSON (ScanSpec.to_dict) with no line here; one the spec has no field for is refused here
    passed = {f.name: getattr(options, f.name) for f in fields(options) if f.name not in _READ_HERE}
    missing = sorted(set(passed) - {f.name for f in fields(ScanSpec)})
    if missing:
        raise TypeError(f"The scan's options {', '.join(missing)} have no field of ScanSpec to reach the scan: add "
                        "one (luskin_core/analyses/scan.py), where the scan reads it.")
    return ScanSpec(spec.outcome, spec.positive, columns, measure=measure, prediction=spec.prediction,
                    prediction_cutoff=spec.prediction_cutoff, n_bins=spec.n_bins, bins=spec.bins,
                    unknown_values=spec.unknown_values, **passed, **score)


def run(data: pd.DataFrame | Source, spec: AuditSpec, options: ScanOptions | None = None, *,
        source: str | None = None, progress: Callable[[float], None] | None = None,
        memory: int | None = None) -> ScanResult:
    """The scan as an entry of the analyses' table (``run(data, spec, options)``): :func:`scan` of
    :func:`scan_spec`. ``source`` names the data in the result's words; ``progress`` and ``memory`` as
    :func:`scan`'s."""
    return scan(data, scan_spec(spec, options), source=source, progress=progress, memory=memory)


def _source_name(data: Any, otherwise: str) -> str:
    """A Source's name; a frame's ``name`` is a column when it has one (COMPAS does), so it is not the data's name."""
    return (data.name or otherwise) if isinstance(data, Source) else otherwise


def _counted(data: pd.DataFrame | Source, spec: ScanSpec) -> tuple[ScanSpec, Any, Any]:
    """The scan's count table (ranges cut at round numbers people read, counted again); refused when nothing
    can differ (no row judged, none or every row counted)."""
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
    return spec, plan, table


def _tested(data: pd.DataFrame | Source, plan: Any, table: Any, spec: ScanSpec, memory: int | None,
            progress: Callable[[float], None] | None) -> tuple[Any, Any, Any, Any, Any, Any]:
    """Every group's test and the choice of findings: in memory, or one grouping at a time when the full table
    would not fit (table, groups, calibration, adjusted p-values, significant, choice)."""
    need, allowed = _memory_need(table, spec, memory)
    if need > allowed and _by_grouping_sets(data, table, spec, allowed):
        return _grouping_sets_scan(data, plan, table, spec)
    cells = table.cells
    _check_size(table, spec, memory=memory)
    groups = sg.groups_of(cells, spec.depth, spec.min_size)
    if not groups.valid.any():
        raise _none_large_enough(spec)
    calibration = _calibration(table, groups, spec, progress)
    p_adjusted = calibration.p_adjusted(groups.z)
    significant = groups.valid & sg.significant_p(p_adjusted, spec.level)
    choice = choose(cells, groups, significant, calibration.critical)
    return table, groups, calibration, p_adjusted, significant, choice


def _calibration(table: Any, groups: Any, spec: ScanSpec,
                 progress: Callable[[float], None] | None) -> sg.Calibration | sg.FalseDiscovery:
    """The false discovery rate, the union bound (when replicates cost too much, or asked), or replicates."""
    cells = table.cells
    if spec.error == "fdr":
        return sg.false_discovery(groups, cells, spec.level)
    if not cells.calibration and (spec.calibration == "bound" or spec.calibration == "auto" and not
                                  sg.replicates_affordable(cells, groups, spec.replicates, table.n_rows)):
        return sg.bound_calibration(groups, cells.total, cells.positives, spec.level, sg.BOUND)
    return sg.calibrate(cells, groups, spec.replicates, spec.level, spec.seed, progress)


def _nested_findings(known: list[int], groups: Any, made: dict[int, Any], explains: dict[int, int]) -> list[Any]:
    """The findings, each inside another following it (never listed beside it as a finding of its own rank)."""
    findings = []
    for g in known:
        parent = next((h for h in known if h != g and sg._refines(groups.codes[g], groups.codes[h])), None)
        findings.append(_replace_finding(made[g], explains=explains[g],
                                         within=made[parent].name if parent is not None else ""))
    tops = [f for f in findings if not f.within]
    return [x for f in tops for x in (f, *(c for c in findings if c.within == f.name))] + \
        [f for f in findings if f.within and f.within not in {t.name for t in tops}]


# A scanned group's place on the chart: within the bar, beyond it but not reported (explained), a finding, or a
# group of unknown category set apart.
WITHIN, BEYOND_EXPLAINED, FOUND, APART = 0, 1, 2, 3
UNKNOWN_CATEGORY = "of unknown category (set apart, as the audit sets them apart)"
UNEXAMINED = "not examined (beyond the strongest 2,000 read by membership)"


def _bar(calibration: Any, groups: sg.Groups, cells: sg.Cells, g: int) -> float:
    """The |z| group ``g``'s interval is inverted at: the scan's bar, or under the false discovery rate the |z| at
    which its own p-value falls below the Benjamini-Hochberg threshold (so the interval holds 0 exactly when the
    group is not a discovery)."""
    if not isinstance(calibration, sg.FalseDiscovery):
        return float(calibration.critical)
    scale, _ = sg._linear(groups.n[g:g + 1], None, None, cells.total, cells.positives, np.array([True]))
    return calibration.group_bar(float(groups.n[g]), float(scale[0]))


def _of_unknown_category(g: int, groups: sg.Groups, table: _Table, extra: tuple[str, ...] = ()) -> bool:
    """Whether a group has a condition on a value of unknown category ("Unknown", "Decline to self-identify", or
    one of ``extra``, the values the user named so): the audit's one rule,
    :func:`luskin_core.counting.plan.is_unknown_group`, on its values."""
    from luskin_core.counting.plan import CROSS, is_unknown_group
    from luskin_core.spec.unknown import UNKNOWN

    code = groups.codes[g]
    values = []
    for j in np.flatnonzero(code >= 0):
        part, value = table.parts[j], table.values[j][code[j]]
        if value is None:
            values.append(UNKNOWN)
        elif part.kind == "bins":
            values.append(f"range {value}")   # a range of numbers is a known category
        else:
            values.append(str(value))
    return is_unknown_group(CROSS.join(values), extra=extra)


def _reasons(significant: np.ndarray, choice: _Choice, chosen: list[int], apart: list[int]) -> dict[str, int]:
    """How many groups beyond the bar are not reported, by why: explained by a reported group (inside it, holding
    it, overlapping it, or beside it: differing from everyone else only because they hold it), what their parts
    predict, or (the membership path) not examined."""
    out: dict[str, int] = {}
    reported = set(chosen)
    unknown = set(apart)
    for g in np.flatnonzero(significant).tolist():
        if g in reported:
            continue
        if choice.by_parts[g]:
            reason = sg.PARTS
        elif g in choice.why:
            h, relation = choice.why[g]
            reason = relation.replace("a reported group", "a group of unknown category") if h in unknown else relation
        else:
            reason = UNEXAMINED
        out[reason] = out.get(reason, 0) + 1
    return dict(sorted(out.items(), key=lambda item: -item[1]))


def _replace_finding(finding: ScanFinding, **changes: Any) -> ScanFinding:
    from dataclasses import replace

    return replace(finding, **changes)


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
        _Table, sg.Groups, sg.Calibration | sg.FalseDiscovery, np.ndarray, np.ndarray, _Choice]:
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
    light = sg.Cells(np.zeros((1, m), dtype=np.int64), cards, np.array([float(total)]), np.array([float(positives)]))
    calibration = (sg.false_discovery(groups, light, spec.level) if spec.error == "fdr" else
                   sg.bound_calibration(groups, total, positives, spec.level))
    p_adjusted = calibration.p_adjusted(groups.z)
    significant = groups.valid & sg.significant_p(p_adjusted, spec.level)
    by_parts = _explained_by_parts(groups, significant, calibration.critical)
    candidates = significant & ~by_parts
    top = sg.carrier_order(groups, candidates)[:MAX_MEMBERS]
    capped = np.zeros_like(significant)
    capped[top] = True
    conditions = [{keys[j]: values[j][groups.codes[g][j]] for j in np.flatnonzero(groups.codes[g] >= 0)}
                  for g in top]
    chosen: list[int] = []
    why: dict[int, tuple[int, str]] = {}
    if top:
        member, counts = membership_counts(data, plan, conditions)
        n_p, k_p = _judged(counts, spec.measure)
        where = {g: i for i, g in enumerate(top)}
        patterns = sg.membership_cells(member, n_p, k_p)
        chosen, why = sg.carriers_explained(patterns, groups, capped, calibration.critical,
                                            members=lambda g: member[:, where[g]],
                                            totals=(float(total), float(positives)))
    table = _Table(light, parts, tuple(values), full.n_rows, full.n_excluded, full.whole)
    unexamined = candidates & ~capped
    return table, groups, calibration, p_adjusted, significant, _Choice(chosen, why, by_parts, unexamined)


@dataclass(frozen=True)
class _Choice:
    """Which significant groups the rules report, and why each other one is not (see :func:`_reasons`)."""

    chosen: list[int]
    why: dict[int, tuple[int, str]]           # explained by a reported group: (that group, how they relate)
    by_parts: np.ndarray                      # intersections that are what their parts predict
    unexamined: np.ndarray                    # beyond MAX_MEMBERS (the GROUPING SETS path only)


def choose(cells: sg.Cells, groups: sg.Groups, significant: np.ndarray, critical: float) -> _Choice:
    """The groups the scan reports from those beyond the bar, and why each other one is not: intersections that
    are what their parts predict are set aside, then the rule that picks the group carrying each gap
    (:func:`~luskin_core.stats.subgroups.carriers_explained`). The benchmark's simulations call it too."""
    by_parts = _explained_by_parts(groups, significant, critical)
    chosen, why = sg.carriers_explained(cells, groups, significant & ~by_parts, critical)
    return _Choice(chosen, why, by_parts, np.zeros_like(significant))


def _explained_by_parts(groups: sg.Groups, significant: np.ndarray, critical: float) -> np.ndarray:
    """The significant intersections (two or more conditions) whose rate is what their parts predict: the score
    test of their own effect, beside one effect per condition, stays within :func:`parts_bar`
    (:class:`~luskin_core.stats.subgroups.Parts`)."""
    out = np.zeros(len(groups.n), dtype=bool)
    depth = (groups.codes >= 0).sum(axis=1)
    candidates = np.flatnonzero(significant & (depth >= 2))
    if not candidates.size:
        return out
    parts = sg.Parts(groups)
    bar = parts_bar(len(candidates), critical)
    for g in candidates.tolist():
        z, _ = parts.test(g)
        out[g] = abs(z) <= bar
    return out


def parts_bar(tested: int, critical: float, level: float = 0.05) -> float:
    """The |z| an intersection's own effect must pass: Bonferroni over the intersections beyond the bar that are
    tested (they were chosen by the scan's family-wise test already), never above the scan's own bar."""
    from statistics import NormalDist

    return min(critical, NormalDist().inv_cdf(1 - level / (2 * max(tested, 1))))


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
        from luskin_core.counting.executor import executor_for

        found = executor_for(data).distinct(plan.outcome, 10).tolist()
    except Exception:  # noqa: BLE001 - the values are only an aid to the message
        found = []
    listed = ", ".join(shown(v) for v in found)
    return LuskinError(f"The value '{positive_words(spec.positive)}' never occurs in the outcome column '{shown(plan.outcome)}'"
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
    from luskin_core.counting.executor import executor_for

    try:
        facts = executor_for(data).facts(spec.audit_spec())
        return frozenset(c for c in binned if facts.is_integer(c))
    except LuskinError:  # without the type, ranges keep their plain "to under" words
        return frozenset()


def _replace_table(table: _Table, **changes: Any) -> _Table:
    from dataclasses import replace

    return replace(table, **changes)


def bin_label(part: KeyPart, index: int, whole: bool) -> str:
    """A range's name people read: "age under 25", "age 25-34", "age 65 or over" (whole numbers), or
    "score 0.25 to under 0.5" (a range of any numbers: its lower end included, its upper end not)."""
    from luskin_core.counting.plan import plain_number

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
             labels: list[list[str]], table: _Table, spec: ScanSpec, parts: sg.Parts) -> ScanFinding:
    code = groups.codes[g]
    set_columns = [int(j) for j in np.flatnonzero(code >= 0)]
    conditions = {table.parts[j].column: _data_value(table.parts[j], table.values[j][code[j]], labels[j][code[j]])
                  for j in set_columns}
    names = tuple(labels[j][code[j]] for j in set_columns)
    n, k = float(groups.n[g]), float(groups.k[g])
    rate = k / n
    if cells.calibration:
        # the test's own standard error (the model's variance, sqrt(V) / n): the interval holds 0 exactly when
        # |z| = |O - E| / sqrt(V) is within the bar
        assert groups.expected is not None and groups.variance is not None
        other = float(groups.expected[g]) / n
        se = math.sqrt(float(groups.variance[g])) / n
        difference = rate - other
        low, high = difference - critical * se, difference + critical * se
    else:
        # the pooled z the scan tests, inverted (score interval): one standard error for the test and the interval
        rest_n, rest_k = cells.total - n, cells.positives - k
        other = rest_k / rest_n
        difference = rate - other
        ends = sg.score_interval(k, n, rest_k, rest_n, critical)
        low, high = float(ends[0][0]), float(ends[1][0])
    kind, parts_rate, parts_z = MAIN_EFFECT, None, None
    if len(set_columns) >= 2:
        kind = INTERSECTION
        parts_z, parts_rate = parts.test(g)
        if cells.calibration:
            parts_rate = other + parts_rate   # the predicted rate shifted by the gap its parts predict
    return ScanFinding(conditions, names, int(n), round(k), rate, other, difference, low, high,
                       float(groups.z[g]), p_adjusted, kind=kind, parts_rate=parts_rate, parts_z=parts_z)


MAIN_EFFECT, INTERSECTION = "main effect", "intersection"


# -- the words ----------------------------------------------------------------------------------
def _event(spec: ScanSpec) -> str:
    if spec.measure == "fpr":
        return "a false positive"
    if spec.measure == "fnr":
        return "a false negative"
    if spec.measure == "error":
        return "an error"
    if spec.prediction:
        return f"decided {positive_words(spec.positive)} by the model"
    if spec.outcome_type == "score":
        return f"{shown(spec.outcome)} is {ScoreRule(spec.score_cutoff).words()}"
    return f"{shown(spec.outcome)} is {positive_words(spec.positive)}"


def _rate_words(spec: ScanSpec) -> str:
    if spec.measure in ("fpr", "fnr", "error"):
        return MEASURES[spec.measure]
    return f"{'with' if spec.prediction else 'where'} {_event(spec)}"


def _with_sentence(finding: ScanFinding, result: ScanResult) -> ScanFinding:
    from dataclasses import replace

    return replace(finding, sentence=finding_sentence(finding, result))


def finding_sentence(f: ScanFinding, result: ScanResult) -> str:
    """One finding in words: who, their rate against everyone else's (or the model's), the gap and its interval;
    for an intersection, what its parts alone predict; for a group of unknown category, that it is set apart."""
    body = _finding_body(f, result)
    if f.within:
        body = f"Inside {f.within}: {body}"
    if f.kind == INTERSECTION and f.parts_rate is not None:
        body += (f" An intersection: each of its conditions acting alone would predict "
                            f"{format_percent(f.parts_rate)} for it.")
    if f.unknown:
        body += (" This group is of unknown category: shown with its numbers but set apart from the "
                            "findings, as the audit sets such groups apart.")
    return body


def _finding_body(f: ScanFinding, result: ScanResult) -> str:
    spec = result.spec
    who = f"{f.name} ({f.n:,} rows)"
    # the gap and its interval both signed ("a gap of -14.2 points (CI -20.1 to -8.0 points)"): the sign is never
    # left to the interval alone
    low, high = format_points(f.ci_low, 1, signed=True), format_points(f.ci_high, 1, signed=True)
    gap = f"{format_points(f.difference, 1, signed=True)} points"
    if result.fdr:
        interval = f"CI {low} to {high} points, adjusted for the selection"
        held = (f"a discovery at a false discovery rate of {spec.level:g} over the {result.groups_scanned:,} groups "
                f"scanned ({format_p(f.p_adjusted).replace('p ', 'q ', 1)})")
    else:
        interval = f"simultaneous {format_percent(1 - spec.level, 0)} CI {low} to {high} points"
        held = (f"this holds after accounting for the {result.groups_scanned:,} groups scanned "
                f"(adjusted {format_p(f.p_adjusted)})")
    if spec.measure == "calibration":
        way = "under-predicted" if f.difference > 0 else "over-predicted"
        return (f"{who}: {format_percent(f.rate)} {_rate_words(spec)} against {format_percent(f.rest_rate)} predicted "
                f"by the model, {way} by {points(f.difference)} (a gap of {gap}, {interval}); {held}.")
    if spec.measure in ("fpr", "fnr", "error"):
        what = f"{MEASURES[spec.measure]} {format_percent(f.rate)}"
    else:
        what = f"{format_percent(f.rate)} {_rate_words(spec)}"
    return (f"{who}: {what} against {format_percent(f.rest_rate)} for everyone else, a gap of {gap} ({interval}); "
            f"{held}.")


def bar_sentence(result: ScanResult) -> str:
    """How many groups cleared the bar, how many are reported, and why the others are not (the same counts as
    the JSON's and the chart's)."""
    if not result.significant:
        return f"None of the {result.groups_scanned:,} groups scanned cleared the bar."
    cleared = (f"{result.significant:,} of the {result.groups_scanned:,} groups scanned cleared the bar; "
               f"{result.reported:,} {'is' if result.reported == 1 else 'are'} reported")
    if result.set_apart:
        cleared += f" and {len(result.set_apart):,} of unknown category set apart"
    if not result.not_reported:
        return cleared + "."
    why = "; ".join(f"{count:,} {reason}" for reason, count in result.not_reported.items())
    return f"{cleared}. The other {sum(result.not_reported.values()):,} are not reported: {why}."


def headline(result: ScanResult) -> str:
    """What the scan found in one sentence, or what it could have seen when it found nothing."""
    apart = ""
    if result.set_apart:
        count = len(result.set_apart)
        apart = (f" {count} group{'s' if count != 1 else ''} of unknown category also differ{'' if count != 1 else 's'}"
                 f" ({', '.join(f.name for f in result.set_apart[:3])}{', ...' if count > 3 else ''}): set apart, "
                 "as the audit sets such groups apart.")
    if result.findings:
        count = len(result.findings)
        return (f"{count} group{'s' if count != 1 else ''} of the {result.groups_scanned:,} scanned "
                f"differ{'' if count != 1 else 's'} from the rest by more than chance would explain "
                f"({result.control_words}); {result.significant:,} cleared the bar, the others being "
                f"{'its' if count == 1 else 'their'} gaps seen again or what their parts predict.{apart}")
    if result.significant:
        return (f"No group of known category is reported, among the {result.groups_scanned:,} groups scanned "
                f"({result.control_words}): {bar_sentence(result)}{apart}")
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


__all__ = ["MEASURES", "ScanFinding", "ScanOptions", "ScanResult", "ScanSpec", "finding_sentence", "headline", "run",
           "scan", "scan_spec"]
