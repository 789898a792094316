"""The arithmetic of a subgroup scan, on a count table over the scanned columns' full cross.

Every group of the scan (every combination of 1..depth columns and their values) is a marginal sum of
the full cross table, so the whole scan runs on that table: observed statistics, the calibration and
the choice of the group that carries a gap. Nothing here reads rows.

Statistic. For a rate (the share with a positive outcome, or an error rate among the relevant truth
class), a group's score statistic against the rest, with the pooled variance:
``z = sqrt(N) (K_g - N_g p) / sqrt(p (1 - p) N_g (N - N_g))``, the two-proportion z of the group
against everyone else. With the total K fixed it is linear in K_g. For calibration (observed against a
model's predicted probabilities), ``z = (O_g - E_g) / sqrt(V_g)`` with E the sum of the predicted
probabilities and V the sum of p (1 - p).

Calibration of the search (family-wise error, Westfall-Young single step max-T). Under the null (the
outcome independent of the scanned columns) shuffling the outcome over the rows is the same as drawing
each cell's positives from a multivariate hypergeometric given the cells' sizes. Each replicate draws
that table, marginalises it into every group, and keeps the largest |z| over all groups. A group's
adjusted p-value is (1 + #replicates whose largest |z| reaches the group's |z|) / (R + 1), so the chance
that any group is reported under the null is at most the level, however many groups overlap. Replicates
are exact draws (numpy's ``multivariate_hypergeometric``) whenever affordable (few rows or few cells); for a large
table, they are drawn from the normal limit of that same distribution (the same means and covariances
as the permutation's, and each cell's binomial skewness, so that every group's sum has the right third
cumulant too), which is accurate when every scanned group holds many rows of each outcome
(:data:`EXACT_BUDGET`, :data:`NORMAL_MIN_EXPECTED`). For calibration the null is "the model is
calibrated" (each row positive with its own probability), drawn from its normal limit per cell.

The group that carries a gap (:func:`carriers`): see its docstring for the rule.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from luskin_core.errors import LuskinError

# Replicates are exact multivariate hypergeometric draws while their cost stays below this. A draw costs about
# its rows (numpy's "count" method shuffles the outcome over the rows' cells, ~15 ns a row) or 20 x its cells
# (the "marginals" method, one hypergeometric per cell, ~300 ns each), whichever is less: 2e8 is a few seconds.
EXACT_BUDGET = 200_000_000
# Cost of a cell relative to a row (see EXACT_BUDGET).
CELL_COST = 20
# The normal limit stands in for exact draws only if each scanned group expects at least this many of each outcome.
NORMAL_MIN_EXPECTED = 50.0
# The full cross is held as a dense array (marginals by summing axes) up to this many cells.
DENSE_CELLS = 4_000_000
# A replicate's largest |z| within this relative distance of the observed one counts as reaching it: replicates are
# computed in float32 (about 7 digits), the observed statistics in float64, and a tie must count (the exact
# permutation p-value counts replicates at least as extreme, ties included).
TIE = 1e-6
# Working memory for a batch of replicates (bytes, float32).
BATCH_BYTES = 48_000_000
# A replicate is summed into the scanned groups by one sparse product (groups x cells, 0/1) when that matrix has at
# most this many entries (8 bytes each) and the sums take at least SPARSE_WORK cell additions over all replicates
# (below that, importing scipy.sparse costs more than it saves). Else each group's marginal is summed over the full
# cross, scanned or not: the Scan page's default scan of Adult (8 columns, 4,692 cells, 522,499 groups of which
# 3,440 are scanned) took 10.6 s of CPU that way and 0.7 s with the product (benchmarks/results/scan_calibration.md).
SPARSE_ENTRIES = 4_000_000
SPARSE_WORK = 100_000_000
EXACT, NORMAL = "exact permutation draws", "the normal limit of the permutation distribution (with its skewness)"
CALIBRATED = "the normal limit of a calibrated model's outcomes"


@dataclass(frozen=True, eq=False)
class Cells:
    """The nonempty cells of the full cross of the scanned columns.

    ``codes`` (C, m): each cell's value code per column (0..cards[j]-1); ``n``: rows of the judged class
    in the cell (all rows for a rate; truth negatives for a false positive rate ...); ``k``: those with the
    judged event. For calibration ``expected`` (sum of predicted probabilities) and ``variance`` (sum of
    p (1 - p)) are set.
    """

    codes: np.ndarray
    cards: tuple[int, ...]
    n: np.ndarray
    k: np.ndarray
    expected: np.ndarray | None = None
    variance: np.ndarray | None = None

    @property
    def calibration(self) -> bool:
        return self.expected is not None

    @property
    def total(self) -> int:
        return int(self.n.sum())

    @property
    def positives(self) -> int:
        return int(self.k.sum())


@dataclass(frozen=True, eq=False)
class Groups:
    """Every group scanned: ``subsets`` of columns, and per group its subset, value codes, counts and z."""

    subsets: tuple[tuple[int, ...], ...]
    subset: np.ndarray      # (G,) index into subsets
    codes: np.ndarray       # (G, m): the value code per column, -1 where the group sets no condition
    n: np.ndarray
    k: np.ndarray
    expected: np.ndarray | None
    variance: np.ndarray | None
    z: np.ndarray
    valid: np.ndarray       # large enough (and, for a rate, large enough outside) to be scanned


@dataclass(frozen=True, eq=False)
class Calibration:
    """The replicates' largest |z|, sorted, and what they give: the critical value and adjusted p-values."""

    maxima: np.ndarray
    critical: float
    method: str

    @property
    def replicates(self) -> int:
        return int(self.maxima.size)

    def p_adjusted(self, z: np.ndarray) -> np.ndarray:
        """(1 + replicates whose largest |z| reaches |z|) / (R + 1): the single-step max-T adjusted p-value."""
        above = self.maxima.size - np.searchsorted(self.maxima, np.abs(z) * (1 - TIE), side="left")
        return (1.0 + above) / (self.maxima.size + 1.0)


def subsets_of(m: int, depth: int) -> tuple[tuple[int, ...], ...]:
    """Every set of 1..depth columns, smallest first."""
    return tuple(s for d in range(1, depth + 1) for s in itertools.combinations(range(m), d))


def group_count(cards: Sequence[int], depth: int) -> int:
    """How many groups a scan of these cardinalities looks at (before the size rule)."""
    return sum(math.prod(cards[j] for j in s) for s in subsets_of(len(cards), depth))


# Memory a scan holds (measured peaks, 200,000 rows: 459,360 groups over ~200,000 cells 324 MB above the
# data; 1,304,240 groups 426 MB): working batches, then per nonempty cell (the count table, its codes and
# masks) and per group (codes, sums, statistics, the replicates' scales), and the dense full cross's sums.
MEMORY_FIXED = 150_000_000
MEMORY_PER_CELL = 600
MEMORY_PER_GROUP = 120
MEMORY_PER_DENSE_CELL = 64


def memory_estimate(cells: int, cards: Sequence[int], depth: int) -> int:
    """Bytes a scan of ``cells`` nonempty cells over columns of these cardinalities, at ``depth``, holds at most."""
    full = math.prod(cards)
    dense = MEMORY_PER_DENSE_CELL * full if full <= DENSE_CELLS else 0
    return MEMORY_FIXED + MEMORY_PER_CELL * min(cells, full) + MEMORY_PER_GROUP * group_count(cards, depth) + dense


# -- marginal sums ------------------------------------------------------------------------------
class _Marginals:
    """Marginal sums of a table over the full cross (last axis: replicates), each from its cheapest parent."""

    def __init__(self, cells: Cells, values: np.ndarray) -> None:
        self.cards = cells.cards
        self.m = len(cells.cards)
        self.dense = math.prod(cells.cards) <= DENSE_CELLS
        self.values = values          # (C, R)
        self.codes = cells.codes
        self.memo: dict[tuple[int, ...], np.ndarray] = {}
        if self.dense:
            flat = np.ravel_multi_index(tuple(cells.codes.T), cells.cards) if self.m else np.zeros(len(values), int)
            full = np.zeros((math.prod(cells.cards), values.shape[1]), dtype=values.dtype)
            full[flat] = values
            self.memo[tuple(range(self.m))] = full.reshape(*cells.cards, values.shape[1])

    def get(self, subset: tuple[int, ...]) -> np.ndarray:
        """The marginal over ``subset`` as an array of shape (cards of subset ..., R)."""
        found = self.memo.get(subset)
        if found is not None:
            return found
        if not self.dense:
            shape = tuple(self.cards[j] for j in subset)
            flat = np.ravel_multi_index(tuple(self.codes[:, j] for j in subset), shape)
            out = np.zeros((math.prod(shape), self.values.shape[1]), dtype=self.values.dtype)
            np.add.at(out, flat, self.values)
            result = out.reshape(*shape, self.values.shape[1])
        else:
            # the smallest superset with one more column (computed on demand, kept for its siblings)
            missing = [j for j in range(self.m) if j not in subset]
            parents = [tuple(sorted((*subset, j))) for j in missing]
            parent = min(parents, key=lambda p: math.prod(self.cards[j] for j in p))
            table = self.get(parent)
            axis = parent.index(next(j for j in parent if j not in subset))
            result = table.sum(axis=axis)
        self.memo[subset] = result
        return result


def groups_of(cells: Cells, depth: int, min_size: int) -> Groups:
    """Every group of 1..depth columns with its counts and observed statistic."""
    m = len(cells.cards)
    subsets = subsets_of(m, depth)
    columns = [cells.n[:, None].astype(np.float64), cells.k[:, None].astype(np.float64)]
    if cells.calibration:
        assert cells.expected is not None and cells.variance is not None
        columns += [cells.expected[:, None], cells.variance[:, None]]
    values = np.concatenate(columns, axis=1)
    marginals = _Marginals(cells, values)
    subset_ids, codes, sums = [], [], []
    for si, s in enumerate(subsets):
        table = marginals.get(s)
        shape = table.shape[:-1]
        flat = table.reshape(-1, table.shape[-1])
        index = np.indices(shape).reshape(len(s), -1).T
        code = np.full((flat.shape[0], m), -1, dtype=np.int64)
        code[:, list(s)] = index
        subset_ids.append(np.full(flat.shape[0], si, dtype=np.int64))
        codes.append(code)
        sums.append(flat)
    total = np.concatenate(sums)
    n, k = total[:, 0], total[:, 1]
    expected = total[:, 2] if cells.calibration else None
    variance = total[:, 3] if cells.calibration else None
    big = cells.total
    valid = n >= min_size
    if not cells.calibration:
        valid &= (big - n) >= min_size
    z = _z(n, k, expected, variance, big, cells.positives, valid)
    return Groups(subsets, np.concatenate(subset_ids), np.concatenate(codes), n, k, expected, variance, z, valid)


def _z(n: np.ndarray, k: np.ndarray, expected: np.ndarray | None, variance: np.ndarray | None, big: int,
       positives: int, valid: np.ndarray) -> np.ndarray:
    scale, centre = _linear(n, expected, variance, big, positives, valid)
    return (k - centre) * scale


def _linear(n: np.ndarray, expected: np.ndarray | None, variance: np.ndarray | None, big: int, positives: int,
            valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """z = (K - centre) * scale for each group (scale 0 where the group is not scanned)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if expected is not None:
            assert variance is not None
            scale = np.where(valid & (variance > 0), 1.0 / np.sqrt(variance), 0.0)
            return scale, expected
        p = positives / big if big else 0.0
        denominator = np.sqrt(p * (1 - p) * n * (big - n))
        scale = np.where(valid & (denominator > 0), math.sqrt(big) / denominator, 0.0)
        return scale, n * p


# -- the calibration ----------------------------------------------------------------------------
def replicate_method(cells: Cells, groups: Groups, replicates: int) -> str:
    """Exact draws when they are affordable or any scanned group is small; else the normal limit."""
    if cells.calibration:
        return CALIBRATED
    if _draw_cost(cells) * replicates <= EXACT_BUDGET:
        return EXACT
    p = cells.positives / cells.total
    n = groups.n[groups.valid]
    if n.size and min(n.min() * p, n.min() * (1 - p)) < NORMAL_MIN_EXPECTED:
        return EXACT
    return NORMAL


def _draw_cost(cells: Cells) -> int:
    """The cost of one exact replicate, in rows (see EXACT_BUDGET)."""
    return min(cells.total, CELL_COST * len(cells.n))


def calibrate(cells: Cells, groups: Groups, replicates: int, level: float, seed: int,
              progress: Callable[[float], None] | None = None, stop_above: float | None = None) -> Calibration:
    """The largest |z| over every scanned group in each of ``replicates`` null replicates.

    ``stop_above`` (the simulation benchmark): stop drawing once more than ``level`` x (R + 1) - 1 replicates
    reach it (the observed largest |z|): no group can then be significant, whatever the remaining replicates
    are, so the scan's decision is the full calibration's (the same draws, in the same order). The
    Calibration then holds only the replicates drawn.
    """
    if replicates < 1:
        raise LuskinError("The scan needs at least one replicate.")
    rank = math.floor(level * (replicates + 1))
    if rank < 1:
        raise LuskinError(f"{replicates:,} replicates cannot calibrate a level of {level:g}: use at least "
                          f"{math.ceil(1 / level) - 1:,} replicates.")
    method = replicate_method(cells, groups, replicates)
    rng = np.random.default_rng(seed)
    scale, centre = _null_linear(cells, groups, method)
    indicator = _scanned_indicator(cells, groups, scale, replicates)
    largest = (_largest_over_cross(cells, groups, scale, centre) if indicator is None
               else _largest_over_scanned(scale, centre, *indicator))
    full = math.prod(cells.cards)
    cells_count = full if full <= DENSE_CELLS else len(cells.n)
    batch = int(max(1, min(replicates, BATCH_BYTES // max(1, 4 * cells_count * 2))))
    maxima = np.empty(replicates, dtype=np.float64)
    done = 0
    n_cells = cells.n.astype(np.int64)
    while done < replicates:
        size = min(batch, replicates - done)
        draws = _draw(cells, n_cells, cells.positives, size, method, rng)   # (C, size) float32
        total = draws.sum(axis=0) if method != EXACT and not cells.calibration else None
        maxima[done:done + size] = largest(draws, total)
        done += size
        if progress is not None:
            progress(done / replicates)
        if stop_above is not None and done < replicates and \
                int(np.count_nonzero(maxima[:done] >= stop_above * (1 - TIE))) >= rank:
            maxima = np.sort(maxima[:done])
            return Calibration(maxima, float(maxima[-1]), method)
    maxima.sort()
    critical = float(maxima[replicates - rank])
    return Calibration(maxima, critical, method)


# A batch of replicates (C, size) and, for the normal limit, each replicate's total -> each replicate's largest |z|.
Largest = Callable[[np.ndarray, np.ndarray | None], np.ndarray]


def _null_linear(cells: Cells, groups: Groups, method: str) -> tuple[np.ndarray, np.ndarray]:
    """Per group, float32 (scale, centre) turning a replicate's marginal M into z: (M - centre) * scale for exact
    draws and calibration, (M - centre * the replicate's total) * scale for the normal limit (scale 0: not scanned).

    Exact draws are counts: z = (M - centre) * scale. The normal limit draws each cell's deviation with variance
    n_c and the binomial's skewness (see _draw); a group's deviation under the fixed total is M - share * (sum over
    all cells), whose variance N_g (N - N_g) / N times p (1 - p) N / (N - 1) is the permutation's."""
    big, positives = cells.total, cells.positives
    scale, centre = _linear(groups.n, groups.expected, groups.variance, big, positives, groups.valid)
    if method != EXACT and cells.calibration:
        centre = np.zeros_like(groups.n, dtype=np.float64)
    elif method != EXACT:
        sd = math.sqrt(positives / big * (1 - positives / big) * big / max(big - 1, 1))
        scale, centre = scale * sd, groups.n / big
    return scale.astype(np.float32), centre.astype(np.float32)


def _subset_blocks(cells: Cells, groups: Groups) -> list[tuple[tuple[int, ...], tuple[int, ...], slice]]:
    """Each subset of columns, its marginal's shape and its groups' place in the group arrays (groups_of lists each
    subset's groups together, in its marginal's order)."""
    blocks, start = [], 0
    for subset in groups.subsets:
        shape = tuple(cells.cards[j] for j in subset)
        blocks.append((tuple(subset), shape, slice(start, start + math.prod(shape))))
        start += math.prod(shape)
    return blocks


def _largest_over_cross(cells: Cells, groups: Groups, scale_all: np.ndarray, centre_all: np.ndarray) -> Largest:
    """Each replicate's largest |z| from every group's marginal of the full cross, subset by subset (``scale_all``
    and ``centre_all``: :func:`_null_linear`)."""
    linear = [(subset, scale_all[block].reshape(*shape, 1), centre_all[block].reshape(*shape, 1))
              for subset, shape, block in _subset_blocks(cells, groups)]

    def largest(draws: np.ndarray, total: np.ndarray | None) -> np.ndarray:
        size = draws.shape[1]
        marginals = _Marginals(cells, draws)
        best = np.zeros(size, dtype=np.float32)
        for subset, scale, centre in linear:
            z = marginals.get(subset) - (centre if total is None else centre * total)
            z *= scale
            np.abs(z, out=z)
            best = np.maximum(best, z.reshape(-1, size).max(axis=0))
        return best

    return largest


def _scanned_indicator(cells: Cells, groups: Groups, scale: np.ndarray, replicates: int) -> tuple[Any, np.ndarray] | None:
    """The (scanned groups x cells) 0/1 matrix in scipy's CSR form and the scanned groups (``scale``, from
    :func:`_null_linear`, not 0), or None where summing the full cross's marginals is as cheap or the matrix too
    large (SPARSE_ENTRIES, SPARSE_WORK).

    Only scanned groups (scale > 0) can raise a replicate's largest |z|: the others have z = 0. Each row lists its
    cells in their order, so a float group sum adds its cells in the order the sums over a sparse cross did (a
    dense cross sums along its axes, in another order: float sums then differ in their last digits)."""
    bound = len(groups.subsets) * len(cells.n)
    if bound > SPARSE_ENTRIES or bound * replicates < SPARSE_WORK:
        return None
    from scipy import sparse

    kept = np.flatnonzero(scale != 0)
    row_of = np.full(len(groups.n), -1, dtype=np.int64)
    row_of[kept] = np.arange(len(kept))
    rows, columns = [], []
    every_cell = np.arange(len(cells.n))
    for subset, shape, block in _subset_blocks(cells, groups):
        row = row_of[block.start + np.ravel_multi_index(tuple(cells.codes[:, j] for j in subset), shape)]
        inside = row >= 0
        rows.append(row[inside])
        columns.append(every_cell[inside])
    row_all, column_all = np.concatenate(rows), np.concatenate(columns)
    order = np.argsort(row_all, kind="stable")   # by group, each group's cells in their order
    indptr = np.zeros(len(kept) + 1, dtype=np.int64)
    np.cumsum(np.bincount(row_all, minlength=len(kept)), out=indptr[1:])
    matrix = sparse.csr_matrix((np.ones(len(order), dtype=np.float32), column_all[order], indptr),
                               shape=(len(kept), len(cells.n)))
    return matrix, kept


def _largest_over_scanned(scale_all: np.ndarray, centre_all: np.ndarray, matrix: Any, kept: np.ndarray) -> Largest:
    """Each replicate's largest |z| from the scanned groups only, summed by one sparse product (``matrix`` and
    ``kept``: :func:`_scanned_indicator`) in blocks of groups: the same as over the cross (exact draws are whole
    numbers, summed exactly)."""
    scale, centre = scale_all[kept][:, None], centre_all[kept][:, None]

    def largest(draws: np.ndarray, total: np.ndarray | None) -> np.ndarray:
        size = draws.shape[1]
        best = np.zeros(size, dtype=np.float32)
        step = max(1, BATCH_BYTES // (8 * size))   # groups summed at once (working memory as the draws')
        for start in range(0, len(kept), step):
            block = slice(start, start + step)
            z = np.asarray(matrix[block] @ draws)   # (groups, size): each group's marginal
            z -= centre[block] if total is None else centre[block] * total
            z *= scale[block]
            np.abs(z, out=z)
            best = np.maximum(best, z.max(axis=0))
        return best

    return largest


def _draw(cells: Cells, n_cells: np.ndarray, positives: int, size: int, method: str,
          rng: np.random.Generator) -> np.ndarray:
    """``size`` null replicates as a (C, size) float32 matrix: the cells' event counts (exact draws), or their
    deviations (normal limit: sqrt(n_c) Z; calibration: sqrt(V_c) Z)."""
    if method == EXACT:
        if cells.total <= CELL_COST * len(n_cells):
            return rng.multivariate_hypergeometric(n_cells, positives, size=size, method="count").T.astype(np.float32)
        return rng.multivariate_hypergeometric(n_cells, positives, size=size, method="marginals").T.astype(np.float32)
    noise = rng.standard_normal((len(n_cells), size), dtype=np.float32)
    if cells.calibration:
        assert cells.variance is not None
        noise *= np.sqrt(cells.variance).astype(np.float32)[:, None]
        return noise
    # Each cell's deviation carries the binomial's skewness (1 - 2p) / sqrt(n p (1 - p)), so that every group's
    # sum has the permutation's third cumulant too, not only its variance: W = (Z + a (Z^2 - 1)) / sqrt(1 + 2 a^2),
    # a = skewness / 6, times sqrt(n_c).
    p = positives / max(int(n_cells.sum()), 1)
    a = ((1 - 2 * p) / np.sqrt(np.maximum(n_cells, 1) * p * (1 - p)) / 6)
    bent = noise * noise
    bent -= 1
    bent *= a.astype(np.float32)[:, None]
    noise += bent
    noise *= (np.sqrt(n_cells) / np.sqrt(1 + 2 * a * a)).astype(np.float32)[:, None]
    return noise


# -- which group carries a gap ------------------------------------------------------------------
def pair_z(n1: float, k1: float, n2: float, k2: float) -> float:
    """Two-proportion z with the pooled variance (0 when either side is empty or there is no variation)."""
    if n1 <= 0 or n2 <= 0:
        return 0.0
    p = (k1 + k2) / (n1 + n2)
    var = p * (1 - p) * (1 / n1 + 1 / n2)
    return 0.0 if var <= 0 else (k1 / n1 - k2 / n2) / math.sqrt(var)


def residual_z(o: float, e: float, v: float) -> float:
    """Calibration: observed minus expected over its standard deviation (0 without variance)."""
    return 0.0 if v <= 0 else (o - e) / math.sqrt(v)


def carriers(cells: Cells, groups: Groups, significant: np.ndarray, critical: float,
             members: Callable[[int], np.ndarray] | None = None, totals: tuple[float, float] | None = None) -> list[int]:
    """The significant groups that carry a gap, not their parents, refinements or overlapping neighbours.

    ``cells`` are the full cross's cells, or (without it: :func:`membership_cells`) the rows of the significant
    groups counted by which of them they belong to, with ``members(g)`` the cells inside group ``g`` and
    ``totals`` everyone's size and events.

    The rule, with ``critical`` the scan's calibrated bar:
    0. Order the significant groups by |z|, largest first; then, of a group and its refinement both
       significant, the one that carries the gap goes first: the refinement when it differs from the rest
       of the group more than the rest of the group differs from everyone outside it, else the group (by
       chance half of a slice can outrank the slice, and a parent can outrank a slice its extra column
       splits in two).
    1. Go through the significant groups in that order. A group is kept unless, for a group
       already kept, the group's own rows outside the kept group show no gap beyond the bar (for a rate:
       those rows against everyone outside both groups; for calibration: observed against predicted in
       those rows). A parent of a kept group whose gap lives in the kept group, a refinement of it (no
       rows outside it), and a group that differs from "the rest" only because the rest holds the kept
       group (a sibling of a large group with a gap) are dropped here.
    2. Then a kept group inside another kept group (a refinement of a parent whose own gap is real) is
       dropped when its rate does not differ beyond the bar from the rest of that parent.
    """
    order = sorted(np.flatnonzero(significant).tolist(), key=lambda g: -abs(float(groups.z[g])))
    masks: dict[int, np.ndarray] = {}

    def mask(g: int) -> np.ndarray:
        if g not in masks and members is not None:
            masks[g] = members(g)
        if g not in masks:
            code = groups.codes[g]
            keep = np.ones(len(cells.n), dtype=bool)
            for j in np.flatnonzero(code >= 0):
                keep &= cells.codes[:, j] == code[j]
            masks[g] = keep
        return masks[g]

    def sums(rows: np.ndarray) -> tuple[float, float, float, float]:
        e = float(cells.expected[rows].sum()) if cells.expected is not None else 0.0
        v = float(cells.variance[rows].sum()) if cells.variance is not None else 0.0
        return float(cells.n[rows].sum()), float(cells.k[rows].sum()), e, v

    total_n, total_k = (float(cells.total), float(cells.positives)) if totals is None else totals

    def split(coarse: int, fine: int) -> tuple[float, float]:
        """For a group and its refinement: |z| of the coarse group's other rows against everyone outside it, and
        |z| of the refinement against the coarse group's other rows (which of the two carries the gap)."""
        other = mask(coarse) & ~mask(fine)
        n, k, e, v = sums(other)
        n1, k1, e1, v1 = sums(mask(fine))
        if cells.calibration:
            outside = abs(residual_z(k, e, v))
            d = (k1 - e1) / n1 - (k - e) / n if n1 > 0 and n > 0 else 0.0
            var = v1 / n1 ** 2 + v / n ** 2 if n1 > 0 and n > 0 else 0.0
            return outside, 0.0 if var <= 0 else abs(d / math.sqrt(var))
        coarse_n, coarse_k, _, _ = sums(mask(coarse))
        return abs(pair_z(n, k, total_n - coarse_n, total_k - coarse_k)), abs(pair_z(n1, k1, n, k))

    def first_pass(order: list[int], swaps: bool = True) -> tuple[list[int], tuple[int, int] | None]:
        """Step 1; or the (coarse, fine) pair to reorder when a kept group's relative carries the gap instead."""
        kept: list[int] = []
        for g in order:
            explained = False
            for h in kept:
                if swaps and (_refines(groups.codes[h], groups.codes[g]) or _refines(groups.codes[g], groups.codes[h])):
                    coarse, fine = (g, h) if _refines(groups.codes[h], groups.codes[g]) else (h, g)
                    outside, within = split(coarse, fine)
                    carrier = fine if within > outside else coarse
                    if carrier == g:
                        return kept, (g, h)
                own = mask(g) & ~mask(h)
                n, k, e, v = sums(own)
                if cells.calibration:
                    z = residual_z(k, e, v)
                else:
                    union_n, union_k, _, _ = sums(mask(g) | mask(h))
                    z = pair_z(n, k, total_n - union_n, total_k - union_k)
                if abs(z) <= critical:
                    explained = True
                    break
            if not explained:
                kept.append(g)
        return kept, None

    # A refinement can show a larger |z| than the group that carries the gap by chance (half of a slice whose
    # other half fell short), and a parent can outrank a slice whose extra column splits it in two: of a
    # group and its refinement both beyond the bar, the refinement carries the gap when it differs from the
    # rest of the group more than the rest of the group differs from everyone outside it; else the group does.
    # The carrier then goes first (each move puts a group before one it was after, at most once per pair).
    moved: set[tuple[int, int]] = set()
    while True:
        kept, swap = first_pass(order)
        if swap is None:
            break
        if swap in moved:   # a cycle (not seen in practice): keep the order as it stands
            kept, _ = first_pass(order, swaps=False)
            break
        moved.add(swap)
        g, h = swap
        order.remove(g)
        order.insert(order.index(h), g)
    out = []
    for g in kept:
        inside = [h for h in kept if h != g and _refines(groups.codes[g], groups.codes[h])]
        drop = False
        for h in inside:
            rest = mask(h) & ~mask(g)
            n1, k1, e1, v1 = sums(mask(g))
            n2, k2, e2, v2 = sums(rest)
            if cells.calibration:
                d = (k1 - e1) / n1 - (k2 - e2) / n2 if n1 > 0 and n2 > 0 else 0.0
                var = v1 / n1 ** 2 + v2 / n2 ** 2 if n1 > 0 and n2 > 0 else 0.0
                z = 0.0 if var <= 0 else d / math.sqrt(var)
            else:
                z = pair_z(n1, k1, n2, k2)
            if abs(z) <= critical:
                drop = True
                break
        if not drop:
            out.append(g)
    return out


# -- without the full cross: groups counted one grouping at a time ----------------------------------
UNION = ("no replicates: a union bound over every group's own permutation law (exact, or its normal limit with "
         "skewness for a large group), as the full count table was too large to hold and the groups were counted "
         "one grouping at a time (GROUPING SETS)")


def groups_from_counts(cards: Sequence[int], depth: int, codes: np.ndarray, n: np.ndarray, k: np.ndarray,
                       min_size: int, total: int, positives: int) -> Groups:
    """Every group of 1..depth columns from its own counts (``codes`` (G, m), -1 where a group sets no
    condition), in the order :func:`groups_of` gives them (subset by subset, values in order); empty groups,
    absent from the counts, are left out."""
    m = len(cards)
    subsets = subsets_of(m, depth)
    index = {s: i for i, s in enumerate(subsets)}
    subset = np.array([index[tuple(int(j) for j in np.flatnonzero(c >= 0))] for c in codes], dtype=np.int64)
    order = np.lexsort((*(codes[:, j] for j in range(m - 1, -1, -1)), subset))
    codes, n, k, subset = codes[order], n[order].astype(np.float64), k[order].astype(np.float64), subset[order]
    valid = (n >= min_size) & ((total - n) >= min_size)
    z = _z(n, k, None, None, int(total), int(positives), valid)
    return Groups(subsets, subset, codes, n, k, None, None, z, valid)


@dataclass(frozen=True, eq=False)
class BoundCalibration(Calibration):
    """Family-wise error without replicates: P(some group's |z| >= t) <= the sum over groups of P(|z_g| >= t).

    Valid whatever the groups' overlaps (exact replicates would need the joint table), and close to max-T
    when the groups are many. Each group's law is its permutation law: its count of events is hypergeometric
    given its size and the totals; taken exactly (its atoms summed) for a group of moderate size
    (:data:`EXACT_SD`: a standard deviation of its count up to 40), else from its normal limit with its
    skewness (the transform the replicates use: W = (Z + a (Z^2 - 1)) / sqrt(1 + 2 a^2), a = skewness / 6).
    """

    atoms: np.ndarray = field(default_factory=lambda: np.zeros(0))     # exact groups: |z| of each atom, sorted
    above: np.ndarray = field(default_factory=lambda: np.zeros(1))     # mass of the atoms from each one on
    a: np.ndarray = field(default_factory=lambda: np.zeros(0))         # normal groups: skewness / 6
    unit: np.ndarray = field(default_factory=lambda: np.zeros(0))      # |z| of one standard deviation

    @property
    def replicates(self) -> int:
        return 0

    def bound(self, t: float) -> float:
        """The sum over scanned groups of P(|z_g| >= t) under the permutation null."""
        exact = float(self.above[np.searchsorted(self.atoms, t, side="left")])
        if not self.a.size:
            return exact
        return exact + float(np.sum(_skewed_tail(t / self.unit, self.a)))

    def p_adjusted(self, z: np.ndarray) -> np.ndarray:
        """min(1, bound(|z|)), a replicate-free analogue of the max-T adjusted p-value."""
        t = np.abs(np.asarray(z, dtype=np.float64)) * (1 - TIE)
        if t.size <= 64:
            return np.array([min(1.0, self.bound(float(x))) for x in t.ravel()]).reshape(t.shape)
        # many statistics: each takes the bound at the grid point just below it (never below its own bound);
        # the critical value is a grid point, so the groups beyond the bar are exactly those at or above it
        top = float(t.max())
        grid = np.unique(np.concatenate([np.linspace(0.0, self.critical, 41), [self.critical],
                                         np.linspace(self.critical, max(top, self.critical), 41)]))
        values = np.array([min(1.0, self.bound(float(x))) for x in grid])
        at = np.searchsorted(grid, t, side="right") - 1
        return values[np.clip(at, 0, len(grid) - 1)]


def _skewed_tail(w: np.ndarray, a: np.ndarray) -> np.ndarray:
    """P(|W| >= w) for W = (Z + a (Z^2 - 1)) / sqrt(1 + 2 a^2), Z standard normal (w >= 0)."""
    from scipy.special import ndtr

    c = np.sqrt(1 + 2 * a * a)
    out = np.empty_like(w * a)
    flat = np.abs(a) < 1e-9
    out[flat] = 2 * ndtr(-np.broadcast_to(w, a.shape)[flat])
    a_, w_ = a[~flat], np.broadcast_to(w, a.shape)[~flat]
    total = np.zeros_like(a_)
    for sign in (1.0, -1.0):
        # W >= w  <=>  a Z^2 + Z - a - w c >= 0 ;  W <= -w  <=>  a Z^2 + Z - a + w c <= 0
        b = a_ + sign * w_ * c[~flat]
        disc = 1 + 4 * a_ * b
        root = np.sqrt(np.maximum(disc, 0))
        near = 2 * b / (1 + root)                 # the root near 0 (stable form)
        far = (-1 - root) / (2 * a_)              # the root near -1/a
        low, high = np.minimum(near, far), np.maximum(near, far)
        between = np.where(disc > 0, ndtr(high) - ndtr(low), 0.0)
        outside = 1 - between
        wanted_outside = (a_ > 0) if sign > 0 else (a_ < 0)
        total += np.where(wanted_outside, outside, between)
    out[~flat] = total
    return np.clip(out, 0.0, 2.0)


# The union bound takes a group's law exactly (its atoms) up to this standard deviation of its count, else
# its normal limit with skewness: measured against the exact law at |z| 3-4.5, the limit is within 1-5% from
# a standard deviation of 40 on and off by up to 20% for groups of 60 expected events (discreteness).
EXACT_SD = 40.0
# Atoms below this |z| are moved up to it (their mass counted at it: never below the exact sum).
ATOM_FLOOR = 1.5


def _exact_atoms(n: np.ndarray, scale: np.ndarray, total: int, positives: int) -> tuple[np.ndarray, np.ndarray]:
    """Every attainable |z| of these groups with its hypergeometric probability (all groups' atoms, sorted),
    and the mass of the atoms from each one on. Mass beyond 9 standard deviations is put at infinity and
    mass below :data:`ATOM_FLOOR` at it: the bound never falls below the exact sum."""
    from scipy.special import gammaln

    p = positives / total
    constant = gammaln(positives + 1) + gammaln(total - positives + 1) - gammaln(total + 1)
    found_z, found_w = [np.full(len(n), np.inf)], []
    missing_all = []
    for chunk in range(0, len(n), 2_000):
        nc, sc = n[chunk:chunk + 2_000], scale[chunk:chunk + 2_000]
        mean = nc * p
        sd = np.sqrt(np.maximum(nc * p * (1 - p) * (total - nc) / max(total - 1, 1), 1e-12))
        reach = np.ceil(9 * sd + 5)
        low = np.maximum(np.maximum(0, nc + positives - total), np.floor(mean - reach))
        high = np.minimum(np.minimum(nc, positives), np.ceil(mean + reach))
        width = int((high - low).max()) + 1
        k = low[:, None] + np.arange(width)[None, :]
        inside = k <= high[:, None]
        k = np.where(inside, k, low[:, None])
        log = (constant - gammaln(k + 1) - gammaln(positives - k + 1) - gammaln(nc[:, None] - k + 1)
               - gammaln(total - positives - nc[:, None] + k + 1)
               + (gammaln(nc + 1) + gammaln(total - nc + 1))[:, None])
        mass = np.where(inside, np.exp(log), 0.0)
        z = np.maximum(np.abs(k - mean[:, None]) * sc[:, None], ATOM_FLOOR)
        missing_all.append(np.maximum(0.0, 1.0 - mass.sum(axis=1)))
        keep = inside & (mass > 0)
        found_z.append(z[keep])
        found_w.append(mass[keep])
    atoms = np.concatenate([found_z[0], *found_z[1:]])
    weights = np.concatenate([*missing_all, *found_w])
    order = np.argsort(atoms, kind="stable")
    above = np.concatenate([np.cumsum(weights[order][::-1])[::-1], [0.0]])
    return atoms[order], above


def bound_calibration(groups: Groups, total: int, positives: int, level: float) -> BoundCalibration:
    """The critical value c, the least t whose union bound is at most ``level`` (to 1e-9, by bisection)."""
    keep = groups.valid
    scale, _ = _linear(groups.n, None, None, total, positives, keep)
    keep = keep & (scale > 0)
    n, scale = groups.n[keep], scale[keep]
    p = positives / total
    small = n * p * (1 - p) * (total - n) / max(total - 1, 1) <= EXACT_SD ** 2
    atoms, above = _exact_atoms(n[small], scale[small], total, positives) if small.any() else (np.zeros(0),
                                                                                             np.zeros(1))
    big_n, big = n[~small], float(total)
    # the hypergeometric's skewness (N - 2K) sqrt(N - 1) (N - 2n) / (sqrt(n K (N - K) (N - n)) (N - 2))
    skew = ((big - 2 * positives) * math.sqrt(max(big - 1, 1)) * (big - 2 * big_n)
            / (np.sqrt(big_n * positives * (big - positives) * (big - big_n)) * max(big - 2, 1)))
    sd = np.sqrt(big_n * p * (1 - p) * (big - big_n) / max(big - 1, 1))
    made = BoundCalibration(np.zeros(0), 0.0, UNION, atoms, above, skew / 6, sd * scale[~small])
    if not keep.any():
        return made
    low, high = 0.0, 1.0
    while made.bound(high) > level:
        low, high = high, high * 2
    while high - low > 1e-9 * max(1.0, high):
        middle = (low + high) / 2
        if made.bound(middle) > level:
            low = middle
        else:
            high = middle
    from dataclasses import replace

    return replace(made, critical=high)


def membership_cells(member: np.ndarray, n: np.ndarray, k: np.ndarray) -> Cells:
    """Patterns of membership in the significant groups as the cells :func:`carriers` reads (column j: in
    significant group j or not)."""
    codes = member.astype(np.int64)
    return Cells(codes, (2,) * member.shape[1], np.asarray(n, dtype=np.float64), np.asarray(k, dtype=np.float64))


def _disjoint(a: np.ndarray, b: np.ndarray) -> bool:
    """Two groups share no row when they set one column to different values."""
    both = (a >= 0) & (b >= 0)
    return bool(np.any(a[both] != b[both]))


def _refines(child: np.ndarray, parent: np.ndarray) -> bool:
    """``child`` sets every condition of ``parent`` and more."""
    set_parent = parent >= 0
    return bool(np.all(child[set_parent] == parent[set_parent]) and (child >= 0).sum() > set_parent.sum())


def detectable_gap(n: float, big: float, rate: float, critical: float) -> float | None:
    """The smallest gap (a share) a group of ``n`` rows would show beyond the scan's bar with 80% chance.

    The project's rule (:func:`luskin_core.stats.power.minimum_detectable_difference`) at the two-sided
    level whose critical value is the scan's calibrated bar.
    """
    from luskin_core.stats.power import minimum_detectable_difference

    if n <= 0 or big - n <= 0 or not 0 < rate < 1:
        return None
    alpha = math.erfc(critical / math.sqrt(2))
    value = float(np.asarray(minimum_detectable_difference(n, big - n, rate, alpha=alpha)).ravel()[0])
    return value if math.isfinite(value) else None


__all__ = ["EXACT", "NORMAL", "UNION", "BoundCalibration", "Calibration", "Cells", "Groups", "bound_calibration",
           "calibrate", "carriers", "detectable_gap", "group_count", "groups_from_counts", "groups_of",
           "membership_cells", "memory_estimate", "pair_z", "subsets_of"]
