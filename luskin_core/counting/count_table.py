"""The count table: an executor's raw counts shaped alike (:func:`finish_raw`), then labelled into a complete group x
cell grid (:class:`CountTable`). Step 3 of :mod:`luskin_core.counting`."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from luskin_core._lazy import is_missing, loaded
from luskin_core.counting.plan import (
    ALL_ROWS,
    COUNT_COLUMNS,
    CROSS,
    KEPT,
    OUTSIDE,
    REASONS,
    Plan,
    binned_parts,
    plain_value,
)
from luskin_core.counting.rules import CountRules
from luskin_core.errors import LuskinError

if TYPE_CHECKING:
    import pandas as pd
else:  # imported on first use: a file's audit on the command line never needs it
    from luskin_core._lazy import pandas as pd


def values_and_missing(column: Any) -> tuple[np.ndarray, np.ndarray]:
    """A column of an executor's result as (values, missing): a pandas Series, a numpy array, or a numpy
    masked array (DuckDB's ``fetchnumpy``, the file path that never imports pandas)."""
    if isinstance(column, np.ma.MaskedArray):
        values = np.asarray(column.data)
        missing = np.ma.getmaskarray(column).copy()
    else:
        dtype = getattr(column, "dtype", None)
        if hasattr(column, "to_numpy") and not (isinstance(dtype, np.dtype) and dtype.kind not in "mM"):
            values = column.to_numpy(dtype=object)   # pandas' own types (Int64, string, dates) as its objects
        else:
            values = np.asarray(column)
        missing = np.zeros(len(values), dtype=bool)
    if values.dtype.kind == "f":
        missing |= np.isnan(values)
    elif values.dtype.kind == "O":
        pandas = loaded("pandas")   # a value can be pandas' NA (or NaT) only if pandas is loaded
        missing |= (pandas.isna(values) if pandas is not None
                    else np.fromiter((is_missing(v) for v in values), dtype=bool, count=len(values)))
    return values, missing


def _count_values(column: Any, kind: type) -> np.ndarray:
    """A count or sum column as a numpy array (engines return integers, floats, decimals or None)."""
    values, missing = values_and_missing(column)
    if values.dtype == kind and kind is np.int64 and not missing.any():
        return values
    values = np.where(missing, 0, values).astype(float)
    return values.astype(kind) if kind is np.int64 else values


@dataclass(frozen=True, eq=False)
class RawCounts:
    """The raw count table every executor returns, before labels: one row per combination of keys kept,
    and one per reason rows were left out (those carry no keys).

    Columns: the keys ``g0..`` (group parts), ``c0..`` (cell parts) and ``period`` (raw values: column
    values, bin indices or booleans, as Python objects; None for missing), ``reason`` (a name from
    REASONS) and the counts of COUNT_COLUMNS present. numpy arrays rather than a pandas frame, so a
    file's audit from the command line never imports pandas; :meth:`to_frame` gives the frame.
    ``assumptions_hold`` is False when an engine's count found a key value its plan assumed absent
    (:meth:`luskin_core.counting.ibis_source.Source.count`).
    """

    columns: dict[str, np.ndarray]
    assumptions_hold: bool = True

    def __len__(self) -> int:
        return len(self.columns["reason"])

    def __getitem__(self, name: str) -> np.ndarray:
        return self.columns[name]

    def __contains__(self, name: object) -> bool:
        return name in self.columns

    def take(self, rows: np.ndarray) -> RawCounts:
        """The rows selected by a boolean mask or indices."""
        return RawCounts({name: values[rows] for name, values in self.columns.items()}, self.assumptions_hold)

    def without(self, name: str) -> RawCounts:
        """The table without one column (the period key, to count every period together)."""
        return RawCounts({k: v for k, v in self.columns.items() if k != name}, self.assumptions_hold)

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, assumptions_hold: bool = True) -> RawCounts:
        """A table reshaped with pandas, back: keys as objects (None where missing), counts as numbers."""
        columns: dict[str, np.ndarray] = {}
        for name in frame.columns:
            if name in COUNT_COLUMNS:
                columns[name] = frame[name].to_numpy()
                continue
            values, missing = values_and_missing(frame[name])
            values = values.astype(object)
            values[missing] = None
            columns[name] = values
        return cls(columns, assumptions_hold)

    def to_frame(self) -> pd.DataFrame:
        """The table as a pandas frame: keys as objects, the reason as text, counts as numbers."""
        return pd.DataFrame({name: values if name in COUNT_COLUMNS
                             else pd.Series(values.tolist()) if name == "reason"   # text, as pandas infers it
                             else pd.Series(values, dtype=object)
                             for name, values in self.columns.items()})


def finish_raw(raw: Any, plan: Plan, rules: CountRules) -> RawCounts:
    """The raw count table (as every executor returns it) from the counting query's grouped rows.

    ``raw`` (a pandas frame, or a mapping of names to numpy arrays) holds the keys, one boolean
    column ``r{code}`` per check and the metrics. The reason of a row is the first check that
    fails; a row left out keeps its count only, under its reason (one row per reason). Built with
    numpy (a few rows, many columns: pandas' per-call cost was most of a small audit's time).
    """
    names = list(raw)
    n_rows = len(raw[names[0]]) if names else 0
    reasons = np.zeros(n_rows, dtype=np.int64)
    for code, _ in reversed(rules.checks):  # the first check that fails names the reason
        flag, missing = values_and_missing(raw[f"r{code}"])
        flag = np.where(missing, False, flag).astype(bool)
        reasons[flag] = code
    kept = reasons == 0
    left = np.unique(reasons[~kept])   # the reasons a row was left out for, in REASONS order
    flags = {f"r{code}" for code, _ in rules.checks}
    columns: dict[str, np.ndarray] = {}
    for name in names:
        if name in flags:
            continue
        if name in ("n", "positives", "tp", "fp", "fn", "score_sum", "score_sumsq"):
            values = _count_values(raw[name], float if name.startswith("score") else np.int64)
            totals = ([values[reasons == code].sum() for code in left] if name == "n"
                      else [values.dtype.type(0)] * len(left))
            columns[name] = np.concatenate([values[kept], np.asarray(totals, dtype=values.dtype)])
            continue
        part = rules.parts.get(name)
        values, missing = values_and_missing(raw[name])
        if part is not None and part.kind == "value" and part.numeric:
            values = np.where(missing, np.nan, values).astype(float)
        values = values.astype(object)[kept]
        values[missing[kept]] = None
        columns[name] = np.concatenate([values, np.full(len(left), None, dtype=object)])
    columns["reason"] = np.array([REASONS[0]] * int(kept.sum()) + [REASONS[int(r)] for r in left], dtype=object)
    if plan.prediction is not None:
        columns["tn"] = columns["n"] - columns["tp"] - columns["fp"] - columns["fn"]
    order = [c for c in columns if c not in COUNT_COLUMNS] + [c for c in COUNT_COLUMNS if c in columns]
    return RawCounts({c: columns[c] for c in order})


# ------------------------------------------------------------------------------------------
# The count table
# ------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class CountTable:
    """Counts per group (rows of the arrays) and cell (columns), with the rows left out.

    ``cell_keys`` are None (one cell: all rows), True/False (the filter holds / does not, the
    paper's cells) or the stratum's label. ``tp``/``fp``/``fn``/``tn`` are present when a
    model's decisions are audited against the outcome, ``score_sum``/``score_sumsq`` for a
    score outcome.
    """

    groups: tuple[str, ...]
    cell_keys: tuple[Any, ...]
    cell_labels: tuple[str, ...]
    n: np.ndarray
    positives: np.ndarray
    excluded: dict[str, int]
    n_excluded: int
    tp: np.ndarray | None = None
    fp: np.ndarray | None = None
    fn: np.ndarray | None = None
    tn: np.ndarray | None = None
    score_sum: np.ndarray | None = None
    score_sumsq: np.ndarray | None = None
    score_cutoff: float | None = None
    score_above_median: bool = False   # the cut-off is the median: a row counts when strictly above it
    group_in_protected: tuple[bool, ...] | None = None
    # Under a protected condition, the values named "not known" that its column does not hold (Plan.unknown_not_found).
    unknown_not_found: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)
    # Columns cut into ranges at their quantiles (column, cut points): a result says so (binned_parts).
    binned: tuple[tuple[str, tuple[float, ...]], ...] = ()

    @property
    def n_rows(self) -> int:
        return int(self.n.sum())

    def group_index(self, label: str) -> int:
        return self.groups.index(label)

    @property
    def score_rule_words(self) -> str | None:
        """When a score counts as positive, with the number: 'above the median (67.8)', 'at or above 5'; None for
        an outcome that is not a score."""
        if self.score_cutoff is None:
            return None
        if self.score_above_median:
            return f"above the median ({self.score_cutoff:g})"
        return f"at or above {self.score_cutoff:g}"

    def to_frame(self) -> pd.DataFrame:
        """Long form: one row per group and cell with every count (what the engines must agree on)."""
        rows = []
        for gi, group in enumerate(self.groups):
            for ci, (key, label) in enumerate(zip(self.cell_keys, self.cell_labels)):
                row: dict[str, Any] = {"group": group, "cell": label, "n": int(self.n[gi, ci]),
                                       "positives": int(self.positives[gi, ci])}
                for name in ("tp", "fp", "fn", "tn"):
                    array = getattr(self, name)
                    if array is not None:
                        row[name] = int(array[gi, ci])
                for name in ("score_sum", "score_sumsq"):
                    array = getattr(self, name)
                    if array is not None:
                        row[name] = float(array[gi, ci])
                rows.append(row)
        return pd.DataFrame(rows)

    @classmethod
    def from_raw(cls, raw: RawCounts, plan: Plan) -> CountTable:
        """Labels and a complete group x cell grid from an aggregation's raw table."""
        reasons = raw["reason"]
        kept_rows = reasons == KEPT
        excluded_all: dict[str, int] = {}
        for reason, count in zip(reasons[~kept_rows].tolist(), raw["n"][~kept_rows].tolist()):
            excluded_all[reason] = excluded_all.get(reason, 0) + int(count)
        excluded = {str(r): v for r, v in excluded_all.items() if r != OUTSIDE and v > 0}
        ordered = {r: excluded[r] for r in REASONS if r in excluded}
        n_excluded = sum(excluded_all.values())
        kept = raw.take(kept_rows)
        keys = label_keys(kept, plan)
        groups, cell_keys, cell_labels, in_protected = keys.groups, keys.cell_keys, keys.cell_labels, keys.in_protected
        if not groups:
            raise LuskinError("Every row was left out, so nothing can be audited"
                              + (f" ({', '.join(f'{k}: {v:,}' for k, v in ordered.items())})." if ordered else "."))
        shape = (len(groups), len(cell_keys))
        present = [name for name in COUNT_COLUMNS if name in kept]
        arrays = {name: np.zeros(shape, dtype=float) for name in present}
        rows_g, rows_c = keys.rows_g, keys.rows_c
        for name in present:
            np.add.at(arrays[name], (rows_g, rows_c), kept[name].astype(float))
        ints = {name: np.rint(arrays[name]).astype(np.int64) for name in present
                if name not in ("score_sum", "score_sumsq")}
        return cls(
            groups=tuple(groups), cell_keys=tuple(cell_keys), cell_labels=tuple(cell_labels),
            n=ints["n"], positives=ints["positives"], excluded=ordered, n_excluded=n_excluded,
            tp=ints.get("tp"), fp=ints.get("fp"), fn=ints.get("fn"), tn=ints.get("tn"),
            score_sum=arrays.get("score_sum"), score_sumsq=arrays.get("score_sumsq"),
            score_cutoff=plan.score_cutoff, score_above_median=plan.score_above_median,
            group_in_protected=in_protected, unknown_not_found=plan.unknown_not_found,
            binned=tuple((p.column, p.cuts) for p in binned_parts(plan)),
        )


@dataclass(frozen=True)
class KeyLabels:
    """The labels of a raw table's kept rows: the groups and cells in their order, and each row's place in the grid."""

    groups: list[str]
    cell_keys: list[Any]
    cell_labels: list[str]
    in_protected: tuple[bool, ...] | None
    rows_g: np.ndarray   # each row's group (index into groups)
    rows_c: np.ndarray   # each row's cell (index into cell_keys)


def label_keys(kept: RawCounts, plan: Plan) -> KeyLabels:
    """Group and cell labels ("White", "White × Female", "age < 28", "Unknown") for a raw table's kept rows, in
    the count table's order: the one naming of raw keys, read by :meth:`CountTable.from_raw` and by the amounts'
    order statistics (:mod:`luskin_core.counting.order`)."""
    spec = plan.spec
    n_group = plan.n_group_keys
    group_cols = [f"g{i}" for i in range(n_group)]
    cell_cols = [f"c{i}" for i in range(plan.n_cell_keys)]
    # Group labels and order
    if plan.protected is not None:
        names = plan.class_names
        groups_by_raw = {True: names.group, False: names.other}
        group_labels = [groups_by_raw[bool(v)] for v in kept["g0"]]
        groups = [names.group, names.other]
        in_protected: tuple[bool, ...] | None = (True, False)
        if names.group == names.other:
            raise LuskinError("The protected group and the other class have the same name: give them "
                              "different names.")
    else:
        in_protected = None
        raw_keys = [tuple(_nan_to_none(v) for v in row) for row in zip(*(kept[c].tolist() for c in group_cols))]
        group_labels = [CROSS.join(p.label(v) for p, v in zip(plan.group_parts, key)) for key in raw_keys]
        order = sorted(set(zip(raw_keys, group_labels)),
                       key=lambda kl: tuple(p.sort_key(v) for p, v in zip(plan.group_parts, kl[0])))
        groups = list(dict.fromkeys(label for _, label in order))
    # Cell keys, labels and order
    if plan.cell_parts:
        raw_cells = [tuple(_nan_to_none(v) for v in row) for row in zip(*(kept[c].tolist() for c in cell_cols))]
        cell_label_list = [CROSS.join(p.label(v, with_column=True) for p, v in zip(plan.cell_parts, key))
                           for key in raw_cells]
        order_c = sorted(set(zip(raw_cells, cell_label_list)),
                         key=lambda kl: tuple(p.sort_key(v) for p, v in zip(plan.cell_parts, kl[0])))
        cell_labels = list(dict.fromkeys(label for _, label in order_c))
        cell_keys: list[Any] = list(cell_labels)
        row_cells: list[Any] = cell_label_list
    elif plan.filters:
        cell_keys = [True, False]
        cell_labels = [spec.cell_name(True), spec.cell_name(False)]
        row_cells = [bool(v) for v in kept["c0"]]
    else:
        cell_keys, cell_labels = [None], [ALL_ROWS]
        row_cells = [None] * len(kept)
    gi = {g: i for i, g in enumerate(groups)}
    ci = {k: i for i, k in enumerate(cell_keys)}
    rows_g = np.array([gi[g] for g in group_labels], dtype=np.int64)
    rows_c = np.array([ci[c] for c in row_cells], dtype=np.int64)
    return KeyLabels(groups, cell_keys, cell_labels, in_protected, rows_g, rows_c)


def _nan_to_none(value: Any) -> Any:
    if value is None:   # finish_raw made every other missing value None, but a float NaN
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    return plain_value(value)
