"""The one step every model tool starts with: prepare the rows, choose the features, split them.

``retrain`` (40/40/20: D1, D2, D4), ``tune_thresholds`` (60/20/20: train, tuning, test; or 50/50:
tuning, test for a score column already in the data) and ``equalize_frame`` (60/20/20) all call
:func:`prepare_split`, so they restrict to the same rows, label them the same way, choose features
by the same rule and split the same way.

Rows. :func:`luskin_core.counting.prepared.prepare` keeps the population's rows whose outcome, protected
column and filter columns are known (the audit's exclusions), computes the 0/1 outcome, the
protected class and the filter cell of each row.

Split. Seeded (``seed``) scikit-learn ``train_test_split`` calls: the last part is split off first
(20%, or 50% for the 50/50 shape), then the rest is divided (40/40/20: halved; 60/20/20: a
quarter of the rest, i.e. 20% of all rows, becomes the tuning part). Each part is stratified.

Stratification fallback: the one rule. A split shape lists candidate stratifications, finest first;
the split uses the first candidate whose every stratum (a combination that occurs) has at least
``MIN_STRATUM`` = 5 rows, so that every stratum can reach every part; the last candidate is no
stratification. The candidates are the shape's own, and are kept exactly as each tool has always
used them so that the same seed gives the same rows:

* 40/40/20 (retraining): outcome x protected class x filter cell (when there is a filter), then
  outcome x protected class, then outcome, then none. Each part is kept in the data's row order.
* 60/20/20 and 50/50 (thresholds, equalized distribution): outcome x protected class, then none.
  The parts keep ``train_test_split``'s shuffled order.

Large sources. ``max_rows`` is the place where a large source is cut down before the split: when
more rows are left than ``max_rows``, a seeded sample of ``max_rows`` rows, stratified by the
finest usable candidate, is drawn first (kept in row order) and the result says so
(``sampled_from``). Today it samples the in-memory frame; a query engine can take the same place.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from luskin_core.errors import LuskinError
from luskin_core.spec.names import GroupNames, other_group_name
from luskin_core.spec.options import SEED

MIN_STRATUM = 5  # a stratum needs at least this many rows to appear in every part of a split

# Names of the candidate stratifications (also shown to users: "stratified by ...").
BY_CELL = "outcome x protected class x filter cell"
BY_CLASS = "outcome x protected class"
BY_OUTCOME = "outcome"
NO_STRATA = "none"


@dataclass(frozen=True)
class SplitShape:
    """How rows are divided: the parts' names, the two test sizes, the strata candidates, the order."""

    name: str
    parts: tuple[str, ...]
    test_size: float                 # share of all rows in the last part
    rest_test_size: float | None     # share of the remaining rows in the middle part (None: two parts)
    strata: tuple[str, ...]          # candidate stratifications, finest first (the last is NO_STRATA)
    row_order: bool                  # parts sorted back into the data's row order


SHAPES: dict[str, SplitShape] = {
    "40/40/20": SplitShape("40/40/20", ("D1", "D2", "D4"), 0.2, 0.5,
                           (BY_CELL, BY_CLASS, BY_OUTCOME, NO_STRATA), True),
    "60/20/20": SplitShape("60/20/20", ("train", "tune", "test"), 0.2, 0.25, (BY_CLASS, NO_STRATA), False),
    "50/50": SplitShape("50/50", ("tune", "test"), 0.5, None, (BY_CLASS, NO_STRATA), False),
}


@dataclass(frozen=True, eq=False)
class PreparedSplit:
    """The rows a model tool works on, their labels, classes, cells, features and split.

    Every array has one entry per prepared row (``frame``'s rows, in order); ``parts`` maps each
    part's name to positions into those rows. ``groups`` holds each row's group label (``labels``: the
    specification's group or other name, so the tools' arithmetic and its tie-breaks do not depend on the data's
    words); ``names`` the classes as the data names them (the rest by its value when it has one, e.g. 'Male' not
    'Non-Female'), and :meth:`shown` turns a label into that name; ``cells`` the filter (None without a filter).
    ``features`` lists the model's columns (empty when none were chosen) and ``dropped`` the
    columns left out automatically, with the reason. ``rest`` holds the positions left after the
    last part was split off, in the order the split returned them (the rows cross-fitting folds
    over), and ``strata`` each row's stratum code (None when not stratified).
    """

    frame: pd.DataFrame
    y: np.ndarray
    in_group: np.ndarray
    groups: np.ndarray
    cells: np.ndarray | None
    features: tuple[str, ...]
    dropped: dict[str, str]
    parts: dict[str, np.ndarray]
    rest: np.ndarray
    strata: np.ndarray | None
    stratified_by: str
    shape: SplitShape
    n_excluded: int = 0
    sampled_from: int | None = None
    names: GroupNames | None = None
    labels: GroupNames | None = None

    @property
    def n(self) -> int:
        return len(self.y)

    def shown(self, label: Any) -> str:
        """A row's group label (one of ``groups``) as the data names it ('Male', not 'Non-Female').

        The one place a model tool's group label becomes the name its page, charts, report, slides and command
        line show: the Thresholds and Equalized results are keyed by these names.
        """
        text = str(label)
        if self.names is None or self.labels is None:
            return text
        return {self.labels.group: self.names.group, self.labels.other: self.names.other}.get(text, text)

    @property
    def has_filter(self) -> bool:
        return self.cells is not None

    def part(self, name: str) -> np.ndarray:
        return self.parts[name]


def strata_codes(name: str, y: np.ndarray, in_group: np.ndarray, cells: np.ndarray | None) -> np.ndarray | None:
    """Integer stratum of each row for a candidate stratification (None: not stratified)."""
    yy = np.asarray(y).astype(np.int64)
    gg = np.asarray(in_group).astype(np.int64)
    if name == BY_CELL:
        if cells is None:
            raise ValueError("no filter cells to stratify by")
        return 4 * yy + 2 * gg + np.asarray(cells).astype(np.int64)
    if name == BY_CLASS:
        return 2 * yy + gg
    if name == BY_OUTCOME:
        return yy
    if name == NO_STRATA:
        return None
    raise ValueError(f"unknown stratification {name!r}")


def choose_strata(shape: SplitShape, y: np.ndarray, in_group: np.ndarray,
                  cells: np.ndarray | None) -> tuple[str, np.ndarray | None]:
    """The first candidate of ``shape`` whose every stratum has at least ``MIN_STRATUM`` rows."""
    for name in shape.strata:
        if name == BY_CELL and cells is None:
            continue
        codes = strata_codes(name, y, in_group, cells)
        if codes is None or np.unique(codes, return_counts=True)[1].min() >= MIN_STRATUM:
            return name, codes
    raise AssertionError("the last candidate must be no stratification")  # pragma: no cover


def split_positions(n: int, shape: SplitShape, codes: np.ndarray | None, seed: int) -> dict[str, np.ndarray]:
    """Seeded positions of each part of ``shape`` over ``n`` rows, stratified by ``codes``.

    Also returns, under ``"rest"``, every position but the last part's, in the split's order.
    """
    from sklearn.model_selection import train_test_split

    positions = np.arange(n)
    rest, last = train_test_split(positions, test_size=shape.test_size, random_state=seed, stratify=codes)
    if shape.rest_test_size is None:
        pieces = [rest, last]
    else:
        first, middle = train_test_split(rest, test_size=shape.rest_test_size, random_state=seed,
                                         stratify=None if codes is None else codes[rest])
        pieces = [first, middle, last]
    if shape.row_order:
        pieces = [np.sort(p) for p in pieces]
        rest = np.sort(rest)
    return {**dict(zip(shape.parts, pieces)), "rest": rest}


def prepare_split(
    frame: pd.DataFrame,
    spec: Any,
    *,
    shape: str,
    seed: int,
    purpose: str,
    min_rows: int,
    features: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
    exclude_protected: bool = True,
    choose: bool = True,
    max_rows: int | None = None,
) -> PreparedSplit:
    """Prepare ``frame`` under ``spec``, choose the features and split the rows (see the module doc).

    ``purpose`` starts the message when there are fewer than ``min_rows`` rows (e.g. "Retraining
    splits the data 40/40/20 and"). ``features`` None means every usable column but the outcome
    (identifier-like text, empty and one-valued columns are left out), without the protected
    column when ``exclude_protected``; ``exclude`` removes columns from either choice. With
    ``choose=False`` no features are chosen (a score column already in the data).
    """
    from luskin_core.corrections.models import choose_features
    from luskin_core.counting.prepared import prepare
    from luskin_core.spec.validation import check_finite

    if shape not in SHAPES:
        raise ValueError(f"unknown split shape {shape!r}")
    seed = SEED.check(seed)  # the seed's one constraint (spec/options.py): numpy and scikit-learn's range
    split_shape = SHAPES[shape]
    prepared = prepare(frame, spec)
    y = prepared.y.astype(np.int8)
    in_group = np.asarray(prepared.in_group, dtype=bool)
    cells = np.asarray(prepared.filter_holds, dtype=bool) if prepared.has_filter else None
    n = len(y)
    if n < min_rows:
        raise LuskinError(f"{purpose} needs at least {min_rows} rows with a known outcome and group; there are {n}.")
    if y.min() == y.max():
        raise LuskinError(
            f"Every row's outcome is {'positive' if y[0] == 1 else 'not positive'} "
            f"({spec.outcome} {'==' if y[0] == 1 else '!='} {spec.positive}), so there is nothing to learn."
        )
    rows = prepared.frame
    columns: tuple[str, ...] = ()
    dropped: dict[str, str] = {}
    if choose:
        excluded = list(exclude)
        if exclude_protected and not features and spec.protected.column in rows.columns:
            excluded.append(spec.protected.column)
        choice = choose_features(rows, spec.outcome, features, excluded)
        columns, dropped = tuple(choice.columns), dict(choice.dropped)
        check_finite(rows, columns)
    sampled_from = None
    if max_rows is not None and n > max_rows:
        _, codes = choose_strata(split_shape, y, in_group, cells)
        keep = _stratified_sample(n, int(max_rows), codes, seed)
        rows = rows.iloc[keep]
        y, in_group = y[keep], in_group[keep]
        cells = None if cells is None else cells[keep]
        sampled_from, n = n, len(keep)
    stratified_by, codes = choose_strata(split_shape, y, in_group, cells)
    parts = split_positions(n, split_shape, codes, seed)
    rest = parts.pop("rest")
    names = class_names(prepared.frame, spec)
    # the per-row labels keep the spec's names (the solvers sort them: their tie-breaks stay as they were);
    # PreparedSplit.shown names them as the data does, for every word a user reads
    labels = GroupNames.of(spec)
    groups = np.where(in_group, labels.group, labels.other).astype(object)
    return PreparedSplit(
        frame=rows, y=y, in_group=in_group, groups=groups, cells=cells, features=columns, dropped=dropped,
        parts=parts, rest=rest, strata=codes, stratified_by=stratified_by, shape=split_shape,
        n_excluded=prepared.n_excluded, sampled_from=sampled_from, names=names, labels=labels,
    )


def class_names(frame: pd.DataFrame, spec: Any) -> GroupNames:
    """The two classes' names as this data names them: the rest by its one value when it has one (the audit's
    names, so a model page and the Audit page say the same 'Female with Male')."""
    c = spec.protected
    if c is None or c.column not in frame.columns:
        return GroupNames.of(spec)
    return GroupNames.of(spec, other_group_name(spec, pd.Series(frame[c.column].dropna().unique())))


def _stratified_sample(n: int, size: int, codes: np.ndarray | None, seed: int) -> np.ndarray:
    """Positions of a seeded sample of ``size`` of ``n`` rows, stratified by ``codes``, in row order."""
    from sklearn.model_selection import train_test_split

    if size < 1:
        raise LuskinError("The sample size must be at least one row.")
    keep, _ = train_test_split(np.arange(n), train_size=size, random_state=seed, stratify=codes)
    return np.sort(keep)
