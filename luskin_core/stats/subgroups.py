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
    """The replicates' largest |z|, sorted, and what they give: the critical value and adjusted p-values.

    ``critical`` is the bar in the project's one rule (``p < level``, strict): a group's adjusted p-value is
    below the level exactly when its |z| is above ``critical`` (:func:`beyond`), and the simultaneous intervals
    are the differences whose statistic stays within it, so an interval holds 0 exactly when its group is not
    beyond the bar."""

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


def significant_p(p: np.ndarray | float, level: float) -> np.ndarray:
    """The project's one significance rule (issue 45): a p-value is significant when strictly below the level."""
    return np.asarray(p) < level


def allowed_reaching(replicates: int, level: float) -> int:
    """The most replicates whose largest |z| may reach a group's |z| with its adjusted p-value still below the
    level: the largest a with (1 + a) / (R + 1) < level, computed as the p-values are (-1: none)."""
    a = int(level * (replicates + 1)) + 1
    while a >= 0 and not (1.0 + a) / (replicates + 1.0) < level:
        a -= 1
    return a


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

    ``stop_above`` (the simulation benchmark): stop drawing once more than :func:`allowed_reaching` replicates
    reach it (the observed largest |z|): no group can then be significant, whatever the remaining replicates
    are, so the scan's decision is the full calibration's (the same draws, in the same order). The
    Calibration then holds only the replicates drawn.
    """
    if replicates < 1:
        raise LuskinError("The scan needs at least one replicate.")
    allowed = allowed_reaching(replicates, level)
    if allowed < 0:
        fewest = next(r for r in range(1, 10 ** 7) if allowed_reaching(r, level) >= 0)
        raise LuskinError(f"{replicates:,} replicates cannot calibrate a level of {level:g}: use at least "
                          f"{fewest:,} replicates.")
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
                int(np.count_nonzero(maxima[:done] >= stop_above * (1 - TIE))) > allowed:
            maxima = np.sort(maxima[:done])
            return Calibration(maxima, float(maxima[-1]) / (1 - TIE), method)
    maxima.sort()
    # the (allowed + 1)-th largest maximum: a |z| above it (with the tie margin) is reached by at most ``allowed``
    critical = float(maxima[replicates - 1 - allowed]) / (1 - TIE)
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
    """The significant groups that carry a gap (:func:`carriers_explained` without the reasons)."""
    return carriers_explained(cells, groups, significant, critical, members, totals)[0]


# Why a group beyond the bar is not reported on its own (the relation to the reported group that explains it).
INSIDE, HOLDS, OVERLAPS, BESIDE, PARTS = ("inside a reported group", "holding a reported group",
                                          "overlapping a reported group",
                                          ("beside a reported group (differing from everyone else only because "
                                           "everyone else holds it)"), "what their parts predict")


def _relation(g: np.ndarray, h: np.ndarray) -> str:
    """How group ``g`` stands to a reported group ``h``: inside it, holding it, overlapping it, or apart."""
    if _refines(g, h) or bool(np.all(g == h)):
        return INSIDE
    if _refines(h, g):
        return HOLDS
    return BESIDE if _disjoint(g, h) else OVERLAPS


def complement_pairs(groups: Groups) -> list[tuple[int, int]]:
    """The pairs of scanned groups that are each other's "everyone else": the two values of a column with two
    values (their |z| are equal and opposite; the smaller is the one to name)."""
    cards = groups.codes.max(axis=0) + 1 if len(groups.codes) else np.zeros(0, dtype=np.int64)
    single = np.flatnonzero((groups.codes >= 0).sum(axis=1) == 1)
    by_column: dict[int, list[int]] = {}
    for g in single.tolist():
        by_column.setdefault(int(np.flatnonzero(groups.codes[g] >= 0)[0]), []).append(g)
    return [(found[0], found[1]) for j, found in by_column.items() if cards[j] == 2 and len(found) == 2]


def carrier_order(groups: Groups, significant: np.ndarray) -> list[int]:
    """The significant groups by |z|, largest first; of a column's two values (each the other's everyone else,
    the same |z| but for rounding), the smaller first, so that a rare value is named as itself."""
    strength = np.abs(groups.z).astype(np.float64)
    for a, b in complement_pairs(groups):
        strength[a] = strength[b] = max(strength[a], strength[b])
    return sorted(np.flatnonzero(significant).tolist(), key=lambda g: (-float(strength[g]), float(groups.n[g]), g))


def carriers_explained(cells: Cells, groups: Groups, significant: np.ndarray, critical: float,
                       members: Callable[[int], np.ndarray] | None = None,
                       totals: tuple[float, float] | None = None) -> tuple[list[int], dict[int, tuple[int, str]]]:
    """The significant groups that carry a gap, not their parents, refinements or overlapping neighbours.

    ``cells`` are the full cross's cells, or (without it: :func:`membership_cells`) the rows of the significant
    groups counted by which of them they belong to, with ``members(g)`` the cells inside group ``g`` and
    ``totals`` everyone's size and events.

    The rule, with ``critical`` the scan's calibrated bar:
    0. Order the significant groups by |z|, largest first; then, of a group and its refinement both
       significant, the one that carries the gap goes first: the refinement when it differs from the rest
       of the group beyond chance over the group's significant refinements (Bonferroni at 5%) and more
       than the rest of the group differs from everyone outside it, else the group (by
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
    order = carrier_order(groups, significant)
    masks: dict[int, np.ndarray] = {}
    why: dict[int, tuple[int, str]] = {}

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

    bars: dict[int, float] = {}
    significant_list = np.flatnonzero(significant).tolist()

    def refine_bar(coarse: int) -> float:
        """Bonferroni at two-sided 5% over the coarse group's refinements beyond the bar (at most the bar)."""
        if coarse not in bars:
            from statistics import NormalDist

            m = sum(_refines(groups.codes[f], groups.codes[coarse]) for f in significant_list)
            bars[coarse] = min(critical, NormalDist().inv_cdf(1 - 0.025 / max(m, 1)))
        return bars[coarse]

    def first_pass(order: list[int], swaps: bool = True) -> tuple[list[int], tuple[int, int] | None]:
        """Step 1; or the (coarse, fine) pair to reorder when a kept group's relative carries the gap instead."""
        kept: list[int] = []
        why.clear()
        for g in order:
            explained = False
            for h in kept:
                if swaps and (_refines(groups.codes[h], groups.codes[g]) or _refines(groups.codes[g], groups.codes[h])):
                    coarse, fine = (g, h) if _refines(groups.codes[h], groups.codes[g]) else (h, g)
                    outside, within = split(coarse, fine)
                    # the refinement carries the gap only when it differs from the rest of the group beyond chance
                    # over the group's significant refinements too (Bonferroni at 5%: parsimony, else its extra
                    # condition is noise; at 5% alone one of a slice's many refinements passed in 5 of 100 tables)
                    carrier = fine if within > max(outside, refine_bar(coarse)) else coarse
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
                    why[g] = (h, _relation(groups.codes[g], groups.codes[h]))
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
                why[g] = (h, INSIDE)
                break
        if not drop:
            out.append(g)
    # a group explained by one that was itself dropped is explained by what explained that one
    for g, (h, relation) in list(why.items()):
        seen = {g}
        while h in why and h not in seen:
            seen.add(h)
            h = why[h][0]
        why[g] = (h, relation if h == why[g][0] else _relation(groups.codes[g], groups.codes[h]))
    return out, dict(why)


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
        t = np.abs(np.asarray(z, dtype=np.float64))   # no replicates in float32: no tie margin
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


def _erfc(x: np.ndarray) -> np.ndarray:
    """erfc for x >= 0 with a relative error below 1.2e-7 everywhere (the Chebyshev fit of Numerical Recipes'
    erfcc): the scan's own, since importing scipy.special costs a third of a scan of 100,000 rows."""
    t = 1.0 / (1.0 + 0.5 * x)
    poly = (-1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (
        0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))))
    return t * np.exp(-x * x + poly)


def ndtr(x: Any) -> np.ndarray:
    """The standard normal's distribution function, each tail to a relative error below 1.2e-7 (tested against
    scipy.special.ndtr)."""
    x = np.asarray(x, dtype=np.float64)
    half = 0.5 * _erfc(np.abs(x) / math.sqrt(2))
    return np.where(x < 0, half, 1.0 - half)


def _skewed_tail(w: np.ndarray, a: np.ndarray) -> np.ndarray:
    """P(|W| >= w) for W = (Z + a (Z^2 - 1)) / sqrt(1 + 2 a^2), Z standard normal (w >= 0)."""
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
    p = positives / total
    constant = math.lgamma(positives + 1) + math.lgamma(total - positives + 1) - math.lgamma(total + 1)
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
        # the law at its lowest atom, then each next atom by the ratio of successive probabilities (one log an atom
        # where the five log-gammas of every atom cost seconds over 13,000 groups)
        lg = np.frompyfunc(math.lgamma, 1, 1)
        first = (constant - lg(low + 1) - lg(positives - low + 1) - lg(nc - low + 1)
                 - lg(total - positives - nc + low + 1) + lg(nc + 1) + lg(total - nc + 1)).astype(np.float64)
        # (in place, the same operations in the same order: the same numbers with half the temporary arrays)
        head = k[:, :-1]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = positives - head
            ratio *= nc[:, None] - head
            below = head + 1
            rest = total - positives - nc[:, None] + head
            rest += 1
            below *= rest
            ratio /= below
            ratio[~inside[:, 1:]] = 1.0
            np.log(ratio, out=ratio)   # log 1 = 0 exactly past a group's last atom
        log = np.empty(k.shape)
        log[:, 0] = 0.0
        np.cumsum(ratio, axis=1, out=log[:, 1:])
        log += first[:, None]
        mass = np.exp(log, out=log)
        mass[~inside] = 0.0
        z = k - mean[:, None]
        np.abs(z, out=z)
        z *= sc[:, None]
        np.maximum(z, ATOM_FLOOR, out=z)
        missing_all.append(np.maximum(0.0, 1.0 - mass.sum(axis=1)))
        keep = inside & (mass > 0)
        found_z.append(z[keep])
        found_w.append(mass[keep])
    atoms = np.concatenate([found_z[0], *found_z[1:]])
    weights = np.concatenate([*missing_all, *found_w])
    # Each atom moved up to the next point of a grid of ATOM_STEP in |z| (an atom beyond ATOM_TOP at infinity):
    # a histogram instead of sorting millions of atoms, and never below the exact sum (the bar at most ATOM_STEP
    # higher than the exact atoms give).
    top = round(ATOM_TOP / ATOM_STEP)
    bins = np.where(np.isfinite(atoms), np.ceil(np.minimum(atoms, ATOM_TOP * 2) / ATOM_STEP - 1e-9), top + 1)
    bins = np.minimum(bins, top + 1).astype(np.int64)
    mass = np.bincount(bins, weights=weights, minlength=top + 2)
    grid = np.concatenate([np.arange(top + 1) * ATOM_STEP, [np.inf]])
    above = np.concatenate([np.cumsum(mass[::-1])[::-1], [0.0]])
    return grid, above


# The grid the union bound's exact atoms are gathered on (|z| units) and where it stops (beyond: infinity).
ATOM_STEP = 1e-4
ATOM_TOP = 60.0


BOUND = ("no replicates: a union bound over every group's own permutation law (exact, or its normal limit with "
         "skewness for a large group), as replicates over this many combinations of values would cost many times "
         "the counting itself")
# Replicates are drawn while their work (about one operation per cell drawn and per cell summed into a group, per
# replicate: replicate_work) stays within this budget: a fixed part and a part per row counted, so the calibration
# costs about what counting the rows does (the engine's GROUP BY); past it, the union bound (no replicates).
REPLICATE_BUDGET_FIXED = 50_000_000
REPLICATE_BUDGET_PER_ROW = 10


def replicate_work(cells: Cells, groups: Groups, replicates: int) -> int:
    """The work of ``replicates`` null replicates, in element operations: each draws every nonempty cell (exact
    draws: the cheaper of its rows and 20 x its cells) and sums them into the scanned groups (a sparse product over
    the cells of each subset of columns, or the marginals of the full cross, about twice its size)."""
    method = replicate_method(cells, groups, replicates)
    draw = _draw_cost(cells) if method == EXACT else 6 * len(cells.n)
    entries = len(groups.subsets) * len(cells.n)
    full = math.prod(cells.cards)
    if entries <= SPARSE_ENTRIES and entries * replicates >= SPARSE_WORK:
        sums = entries
    elif full <= DENSE_CELLS:
        sums = 2 * full + len(cells.n)
    else:
        sums = 10 * entries   # np.add.at over the nonempty cells, subset by subset
    return replicates * (draw + sums)


def replicates_affordable(cells: Cells, groups: Groups, replicates: int, rows: int) -> bool:
    """Whether the replicates fit the budget (:data:`REPLICATE_BUDGET_FIXED` + :data:`REPLICATE_BUDGET_PER_ROW` a
    row): decided from the table's shape alone, so every run of the same scan calibrates the same way."""
    return replicate_work(cells, groups, replicates) <= REPLICATE_BUDGET_FIXED + REPLICATE_BUDGET_PER_ROW * rows


def bound_calibration(groups: Groups, total: int, positives: int, level: float,
                      method: str = UNION) -> BoundCalibration:
    """The critical value c, the least t whose union bound is below ``level`` (to 1e-9, by bisection): a group's
    bound is below the level exactly when its |z| is at least c."""
    keep = groups.valid.copy()
    for a, b in complement_pairs(groups):   # a column's two values: one event (|z| equal), counted once
        if keep[a] and keep[b]:
            keep[max(a, b)] = False
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
    made = BoundCalibration(np.zeros(0), 0.0, method, atoms, above, skew / 6, sd * scale[~small])
    if not keep.any():
        return made
    low, high = 0.0, 1.0
    while made.bound(high) >= level:   # the least t whose bound is strictly below the level (p < level)
        low, high = high, high * 2
    while high - low > 1e-9 * max(1.0, high):
        middle = (low + high) / 2
        if made.bound(middle) >= level:
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


# -- the false discovery rate: Benjamini-Hochberg on each group's own permutation p-value -------------------
FDR_METHOD = ("Benjamini-Hochberg over every group scanned, on each group's own permutation p-value (the exact "
              "hypergeometric law of its events given its size; its normal limit with skewness for a group whose "
              "count of events has a standard deviation above 40)")
FDR_CALIBRATED = ("Benjamini-Hochberg over every group scanned, on each group's p-value under a calibrated model "
                  "(the normal limit of observed minus predicted)")


@dataclass(frozen=True, eq=False)
class FalseDiscovery:
    """Each scanned group's own p-value, the Benjamini-Hochberg adjusted p-values (q-values) and the threshold.

    Under the permutation null a group's count of events is hypergeometric given its size and the totals, so its
    two-sided p-value (the chance of a count at least as far from its mean) is exact without replicates. A group
    is a discovery when its q-value is below the level (p < level, strict), that is when its p-value is below
    ``threshold`` (k Q / m for the largest rank k with p_(k) < k Q / m). ``critical`` is the |z| at which a
    normal p-value meets the threshold: the bar the chart draws and the rule that picks carriers reads."""

    p: np.ndarray
    q: np.ndarray
    threshold: float
    critical: float
    method: str
    total: int = 0
    positives: int = 0

    @property
    def replicates(self) -> int:
        return 0

    def p_adjusted(self, z: np.ndarray) -> np.ndarray:   # the q-values, in the groups' order
        return self.q

    def group_bar(self, n: float, scale: float) -> float:
        """The |z| at which group ``n``'s own exact p-value falls below the threshold (its interval's bar)."""
        if self.method == FDR_CALIBRATED or not self.threshold:
            return self.critical
        return _exact_bar(n, scale, self.total, self.positives, self.threshold)


def _hypergeometric_window(n: np.ndarray, total: int, positives: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each group's count of events under the permutation law, over mean +- 12 standard deviations (the mass
    outside is below 1e-30): the atoms k (G, W), their probabilities, and each atom's distance from the mean."""
    from scipy.special import gammaln

    p = positives / total
    mean = n * p
    sd = np.sqrt(np.maximum(n * p * (1 - p) * (total - n) / max(total - 1, 1), 1e-12))
    reach = np.ceil(12 * sd + 5)
    low = np.maximum(np.maximum(0, n + positives - total), np.floor(mean - reach))
    high = np.minimum(np.minimum(n, positives), np.ceil(mean + reach))
    width = int((high - low).max()) + 1 if len(n) else 1
    k = low[:, None] + np.arange(width)[None, :]
    inside = k <= high[:, None]
    k = np.where(inside, k, low[:, None])
    constant = gammaln(positives + 1) + gammaln(total - positives + 1) - gammaln(total + 1)
    log = (constant - gammaln(k + 1) - gammaln(positives - k + 1) - gammaln(n[:, None] - k + 1)
           - gammaln(total - positives - n[:, None] + k + 1) + (gammaln(n + 1) + gammaln(total - n + 1))[:, None])
    mass = np.where(inside, np.exp(log), 0.0)
    return k, mass, np.abs(k - mean[:, None])


def group_p_values(groups: Groups, total: int, positives: int) -> np.ndarray:
    """Each scanned group's two-sided permutation p-value (1 for a group not scanned): the chance of a count of
    events at least as far from its mean, exact (the hypergeometric law, summed) up to a standard deviation of
    :data:`EXACT_SD` of its count, else the normal limit with the hypergeometric's skewness (as the union
    bound). Checked against scipy's ``hypergeom`` in tests/test_scan_findings.py."""
    out = np.ones(len(groups.n))
    keep = np.flatnonzero(groups.valid)
    n, k = groups.n[keep], groups.k[keep]
    p = positives / total
    mean = n * p
    sd = np.sqrt(n * p * (1 - p) * (total - n) / max(total - 1, 1))
    small = sd <= EXACT_SD
    distance = np.abs(k - mean)
    values = np.empty(len(keep))
    where = np.flatnonzero(small)
    for chunk in range(0, len(where), 2_000):
        rows = where[chunk:chunk + 2_000]
        _, mass, far = _hypergeometric_window(n[rows], total, positives)
        reach = distance[rows][:, None] * (1 - 1e-9) - 1e-9
        values[rows] = np.where(far >= reach, mass, 0.0).sum(axis=1)
    big = float(total)
    nb = n[~small]
    if nb.size:
        skew = ((big - 2 * positives) * math.sqrt(max(big - 1, 1)) * (big - 2 * nb)
                / (np.sqrt(nb * positives * (big - positives) * (big - nb)) * max(big - 2, 1)))
        values[~small] = _skewed_tail(distance[~small] / np.maximum(sd[~small], 1e-300), skew / 6)
    out[keep] = np.clip(values, 0.0, 1.0)
    return out


def _exact_bar(n: float, scale: float, total: int, positives: int, threshold: float) -> float:
    """The bar of a group of ``n`` rows: a |z| between the largest attainable one whose two-sided p-value (as
    :func:`group_p_values` computes it) is not below ``threshold`` and the smallest one whose p-value is."""
    p = positives / total
    sd = math.sqrt(n * p * (1 - p) * (total - n) / max(total - 1, 1))
    if sd > EXACT_SD:   # the normal limit: the bar where the (skewed) tail meets the threshold
        big = float(total)
        a = ((big - 2 * positives) * math.sqrt(max(big - 1, 1)) * (big - 2 * n)
             / (math.sqrt(n * positives * (big - positives) * (big - n)) * max(big - 2, 1))) / 6
        low, high = 0.0, 40.0
        for _ in range(100):
            middle = (low + high) / 2
            if float(_skewed_tail(np.array([middle]), np.array([a]))[0]) < threshold:
                high = middle
            else:
                low = middle
        return high * sd * scale   # from standard deviations of the count to the scan's z
    _, mass, far = _hypergeometric_window(np.array([float(n)]), total, positives)
    distances = np.unique(far[0][mass[0] > 0])
    tails = np.array([mass[0][far[0] >= d * (1 - 1e-9) - 1e-9].sum() for d in distances])
    passing = tails < threshold
    if not passing.any():
        return math.inf
    first = int(np.argmax(passing))   # tails fall as the distance grows: from here on every atom passes
    below = float(distances[first - 1]) if first > 0 else 0.0
    # between the last atom that does not pass and the first that does: |z| beyond it is a discovery, within it not
    return (below + float(distances[first])) / 2 * scale


def false_discovery(groups: Groups, cells: Cells, level: float) -> FalseDiscovery:
    """Benjamini-Hochberg at ``level`` over every scanned group (:class:`FalseDiscovery`)."""
    from scipy.special import ndtri

    from luskin_core.stats.inference import adjust_p

    if cells.calibration:
        from scipy.special import ndtr

        p = np.where(groups.valid, 2 * ndtr(-np.abs(groups.z)), 1.0)
        method = FDR_CALIBRATED
    else:
        p = group_p_values(groups, cells.total, cells.positives)
        method = FDR_METHOD
    scanned = np.flatnonzero(groups.valid)
    q = np.ones(len(p))
    q[scanned] = adjust_p(p[scanned], "bh")
    m = len(scanned)
    ranked = np.sort(p[scanned])
    passing = np.flatnonzero(ranked < np.arange(1, m + 1) * level / m)
    threshold = (int(passing[-1]) + 1) * level / m if passing.size else level / max(m, 1)
    critical = float(ndtri(1 - threshold / 2))
    return FalseDiscovery(p, q, threshold, critical, method, cells.total, cells.positives)


# -- an intersection against what its parts predict -----------------------------------------------
class Parts:
    """Whether an intersection (a group of two or more conditions) differs from what its parts predict.

    Its parts are its conditions, each acting alone: the rate a model with one effect per condition (on the
    log-odds for a rate; on the gap itself for calibration, observed against predicted) gives the rows that
    meet all of them, fitted to the table of who meets which condition (2^d cells, summed from the groups of
    the same columns). The intersection differs from its parts when the score test of one more effect, for the
    rows that meet every condition, passes the scan's bar: "White and Female" at 11.9% is what being female
    predicts there, not an intersection of its own.
    """

    def __init__(self, groups: Groups) -> None:
        self.groups = groups
        self.rows = {si: np.flatnonzero(groups.subset == si) for si in range(len(groups.subsets))}

    def table(self, g: int) -> tuple[np.ndarray, list[np.ndarray]]:
        """The 2^d table of condition membership of group ``g``'s columns: the pattern of each cell (d, 2^d)
        and the sums (n, k[, expected, variance]) per pattern."""
        groups = self.groups
        columns = np.flatnonzero(groups.codes[g] >= 0)
        rows = self.rows[int(groups.subset[g])]
        inside = groups.codes[np.ix_(rows, columns)] == groups.codes[g][columns][None, :]
        pattern = (inside * (1 << np.arange(len(columns)))[None, :]).sum(axis=1)
        size = 1 << len(columns)
        values = [groups.n, groups.k] + ([groups.expected, groups.variance] if groups.expected is not None else [])
        sums = [np.bincount(pattern, weights=np.asarray(v)[rows], minlength=size) for v in values]  # type: ignore[index]
        bits = ((np.arange(size)[None, :] >> np.arange(len(columns))[:, None]) & 1).astype(np.float64)
        return bits, sums

    def test(self, g: int) -> tuple[float, float]:
        """(z of the intersection against what its parts predict, the rate -- or for calibration the gap -- its
        parts predict for it)."""
        bits, sums = self.table(g)
        size = bits.shape[1]
        design = np.vstack([np.ones(size), bits]).T          # intercept and one effect per condition
        last = size - 1                                      # the cell of the rows meeting every condition
        if len(sums) == 4:
            return _parts_linear(design, last, *sums)
        return _parts_logistic(design, last, sums[0], sums[1])


def _parts_logistic(x: np.ndarray, last: int, n: np.ndarray, k: np.ndarray) -> tuple[float, float]:
    """A logistic model of main effects on the membership table (Newton steps, each at most 5 on the log-odds);
    the score test of the all-in cell's own effect."""
    use = n > 0
    beta = np.zeros(x.shape[1])
    rate = float(k.sum() / n.sum())
    beta[0] = math.log(max(rate, 1e-9) / max(1 - rate, 1e-9))
    for _ in range(60):   # Newton steps; under separation the rates still converge (the effects grow)
        mu = 1 / (1 + np.exp(-(x @ beta)))
        w = np.where(use, n * mu * (1 - mu), 0.0)
        gradient = x.T @ np.where(use, k - n * mu, 0.0)
        hessian = x.T @ (w[:, None] * x)
        step = np.clip(np.linalg.lstsq(hessian, gradient, rcond=None)[0], -5.0, 5.0)
        beta += step
        if float(np.max(np.abs(step))) < 1e-10:
            break
    mu = 1 / (1 + np.exp(-(x @ beta)))
    w = np.where(use, n * mu * (1 - mu), 0.0)
    information = x.T @ (w[:, None] * x)
    cross = w[last] * x[last]
    variance = w[last] - float(cross @ np.linalg.pinv(information) @ cross)
    score = float(k[last] - n[last] * mu[last])
    z = 0.0 if variance <= 1e-12 * max(w[last], 1e-300) else score / math.sqrt(variance)
    return z, float(mu[last])


def _parts_linear(x: np.ndarray, last: int, n: np.ndarray, k: np.ndarray, expected: np.ndarray,
                  variance: np.ndarray) -> tuple[float, float]:
    """Calibration: each condition shifts the gap (observed minus predicted, per row) by its own amount, fitted by
    weighted least squares on the membership table; the score test of the all-in cell's own shift."""
    use = (n > 0) & (variance > 0)
    design = x * n[:, None]
    weight = np.where(use, 1 / np.where(use, variance, 1.0), 0.0)
    residual = k - expected
    information = design.T @ (weight[:, None] * design)
    beta = np.linalg.pinv(information) @ (design.T @ (weight * residual))
    score = float(residual[last] - design[last] @ beta)
    var = float(variance[last] - design[last] @ np.linalg.pinv(information) @ design[last])
    z = 0.0 if var <= 1e-12 * max(float(variance[last]), 1e-300) else score / math.sqrt(var)
    return z, float(x[last] @ beta) if n[last] > 0 else 0.0


# -- the interval: the test inverted ---------------------------------------------------------------
def _restricted(k1: np.ndarray, n1: np.ndarray, k2: np.ndarray, n2: np.ndarray,
                d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The maximum-likelihood rates (p1, p2) of two binomials under p1 - p2 = d (Farrington and Manning 1990,
    the closed form of Miettinen and Nurminen's cubic)."""
    theta = n2 / n1
    a = 1 + theta
    r1, r2 = k1 / n1, k2 / n2
    b = -(1 + theta + r1 + theta * r2 + d * (theta + 2))
    c = d * d + d * (2 * r1 + theta + 1) + r1 + theta * r2
    e = -r1 * d * (1 + d)
    v = b ** 3 / (27 * a ** 3) - b * c / (6 * a * a) + e / (2 * a)
    u = np.sign(v) * np.sqrt(np.maximum(b * b / (9 * a * a) - c / (3 * a), 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(u != 0, v / np.where(u != 0, u ** 3, 1.0), 0.0)
    w = (math.pi + np.arccos(np.clip(ratio, -1.0, 1.0))) / 3
    p1 = np.clip(2 * u * np.cos(w) - b / (3 * a), 0.0, 1.0)
    p2 = np.clip(p1 - d, 0.0, 1.0)
    return p1, p2


def score_statistic(k1: Any, n1: Any, k2: Any, n2: Any, d: Any) -> np.ndarray:
    """The score statistic of p1 - p2 = d, (r1 - r2 - d) / its standard error at the restricted rates: at d = 0
    the pooled two-proportion z the scan tests every group with (the rates pooled are the restricted ones)."""
    k1, n1, k2, n2, d = (np.asarray(x, dtype=np.float64) for x in (k1, n1, k2, n2, d))
    p1, p2 = _restricted(k1, n1, k2, n2, d)
    var = p1 * (1 - p1) / n1 + p2 * (1 - p2) / n2
    gap = k1 / n1 - k2 / n2 - d
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(var > 0, gap / np.sqrt(np.where(var > 0, var, 1.0)), np.where(gap == 0, 0.0, np.sign(gap) * np.inf))


def score_interval(k1: Any, n1: Any, k2: Any, n2: Any, critical: float) -> tuple[np.ndarray, np.ndarray]:
    """The differences p1 - p2 whose score statistic stays within +-``critical``: the test the scan makes,
    inverted (Farrington-Manning), so the interval holds 0 exactly when |z| does not pass the bar; with
    ``critical`` the scan's calibrated bar it is simultaneous over every group scanned. (statsmodels 0.15's
    ``score_test_proportions_2indep`` for a difference d != 0 solves another cubic whose rates have a lower
    likelihood than the restricted maximum: its intervals differ in the third digit; tests/test_scan.py checks
    the rates against a numerical maximum.)"""
    k1, n1, k2, n2 = (np.atleast_1d(np.asarray(x, dtype=np.float64)) for x in (k1, n1, k2, n2))
    centre = k1 / n1 - k2 / n2
    ends = []
    for side in (-1.0, 1.0):
        inner, outer = centre.copy(), np.full_like(centre, side * 1.0)
        for _ in range(64):   # the statistic falls as d rises: bisect between the estimate and the end of [-1, 1]
            middle = (inner + outer) / 2
            t = score_statistic(k1, n1, k2, n2, middle)
            inside = np.abs(t) <= critical
            inner, outer = np.where(inside, middle, inner), np.where(inside, outer, middle)
        ends.append(inner)
    return ends[0], ends[1]


def detectable_gap(n: float, big: float, rate: float, critical: float) -> float | None:
    """The smallest gap (a share) a group of ``n`` rows would show beyond the scan's bar with 80% chance.

    The project's rule (:func:`luskin_core.stats.power.minimum_detectable_difference`) at the two-sided
    level whose critical value is the scan's calibrated bar.
    """
    if n <= 0 or big - n <= 0 or not 0 < rate < 1:
        return None
    # power.minimum_detectable_difference for one group, with the standard library's normal (scipy.special's
    # import is a third of a small scan): Cohen's h at 80% power for the two-sided test at the bar, by Newton steps
    # on the full two-tailed power, turned into a drop below the rate (tests/test_scan_findings.py: the same to
    # 1e-12)
    from statistics import NormalDist

    def cdf(x: float) -> float:
        return 0.5 * math.erfc(-x / math.sqrt(2))

    def pdf(x: float) -> float:
        return math.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)

    se = math.sqrt(1 / n + 1 / (big - n))
    h = (critical + NormalDist().inv_cdf(0.8)) * se
    for _ in range(4):
        a, b = h / se - critical, -h / se - critical
        h -= (cdf(a) + cdf(b) - 0.8) / ((pdf(a) - pdf(b)) / se)
    angle = math.asin(math.sqrt(rate)) - h / 2
    if angle < 0:
        return None
    value = rate - math.sin(angle) ** 2
    return value if math.isfinite(value) else None


__all__ = [
    "EXACT",
    "NORMAL",
    "UNION",
    "BoundCalibration",
    "Calibration",
    "Cells",
    "Groups",
    "Parts",
    "allowed_reaching",
    "bound_calibration",
    "calibrate",
    "carrier_order",
    "carriers",
    "carriers_explained",
    "complement_pairs",
    "detectable_gap",
    "group_count",
    "groups_from_counts",
    "groups_of",
    "membership_cells",
    "memory_estimate",
    "pair_z",
    "score_interval",
    "score_statistic",
    "significant_p",
    "subsets_of",
]
