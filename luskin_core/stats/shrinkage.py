"""Partially pooled shares for small groups: empirical-Bayes beta-binomial shrinkage toward the parent.

A cross of two or three columns makes groups of ten or twenty rows whose raw shares swing
wildly. Beside the raw share and its Wilson interval, each group gets a partially pooled share:

* **Parent.** For a cross (race × sex), a group's parent is the cross of all its columns but
  the last (for "Black × Female": every Black row, all sexes), in the same cell. For a single
  column (and for the paper's protected condition) the parent is every row of the cell. The
  prior centre ``m`` is the parent's share *without the group itself* (its siblings' rows:
  ``(K_parent - k) / (N_parent - n)``, with half a row added to each side so that it is never
  0 or 1); when the group is its parent's only child, the other rows of the cell are used.
* **Model.** ``p_group ~ Beta(kappa * m, kappa * (1 - m))`` and ``k ~ Binomial(n, p_group)``;
  one concentration ``kappa`` per cell is shared by its groups (how far children stray from
  their parents). The centre is itself estimated from the siblings, so the prior's variance is
  that of the group's true share around the siblings' *observed* share, integrating over the
  parent's unknown true share: the group's own spread around it, the siblings' average spread
  around it (``H / (kappa + 1)``, H the sum of the siblings' squared shares of the siblings' rows:
  1 for one sibling, 1 / J for J of equal size) and the siblings' sampling error over their
  ``N`` rows. The group's prior concentration is ``kappa_g`` with
  ``1 / (kappa_g + 1) = (1 + H) / (kappa + 1) + 1 / (N + 1)`` (checked by simulation in the
  tests). A prior cannot know more than the rows it comes from: when the groups do not differ
  at all (kappa infinite) the estimate becomes the pooled share of the whole parent.
* **Hyperparameter uncertainty.** Plugging in the maximum-likelihood ``kappa`` gives intervals
  that are too short when the data cannot tell how much groups differ (few groups, small
  ones). Instead ``kappa`` is integrated out on a grid of 113 values from 0.1 to 10^6 (equally
  spaced in log kappa), weighted by the beta-binomial marginal likelihood of the cell's counts
  times a hyperprior ``p(kappa) ~ kappa ** -2`` (``kappa ** -1`` per unit of log kappa: the
  tail of the uniform shrinkage prior of Christiansen and Morris (1997) and Daniels (1999),
  ``n0 / (kappa + n0) ** 2``, which is uniform on the share of the estimate taken from the parent).
  Lighter tails put too much weight on "the groups do not differ" when the data cannot tell:
  BDA's ``(alpha + beta) ** -2.5`` (``kappa ** -0.5`` per unit of log kappa; section 5.3) gave
  90.7% and 91.5% coverage with kappa 100 in 4 x 3 and 6 x 4 crosses without the siblings'
  spread term and 91.2% and 92.0% with it (100 audits); ``kappa ** -0.25`` 88.2%; the full
  uniform shrinkage prior (n0 the harmonic mean of the group sizes) 91.0% with kappa 20 in a
  2 x 2 cross (too little weight on small kappa).
  The pooled share is the posterior mean and its 95% interval the 2.5% and 97.5% quantiles of
  the resulting mixture of beta posteriors; where a very skewed mixture puts its mean outside that interval,
  the pooled share is the posterior median instead, so an estimate is never printed outside its own interval.

Coverage (``benchmarks/bench_shrinkage.py``) is the share of groups whose interval holds their
true share, on average over groups drawn around their parents: like every empirical-Bayes
interval it is not a guarantee for one group far from its parent (that group's raw Wilson
interval stays beside it). Measured for groups of 10 to 100 rows (150 simulated audits per
setting): 93.4% to 96.3% when children stray from their parents with kappa 5 to 100, in 2 x 2,
4 x 3 and 6 x 4 crosses; 98.9% to 99.6% when children hardly differ (kappa 1000 or more: too
long, because the data cannot rule out a moderate spread, and the posterior keeps weight on
it); the intervals are 0.78 times as wide as Wilson's on average.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from luskin_core.counting.count_table import CountTable
from luskin_core.counting.plan import CROSS
from luskin_core.spec.audit_spec import AuditSpec

LEVEL = 0.95
KAPPA_GRID = np.logspace(-1.0, 6.0, 113)
# The prior on log kappa is proportional to kappa ** -PRIOR_POWER (see the module's docstring).
PRIOR_POWER = 1.0
# The sentence quotes the pooled share for groups with fewer rows than this in the cell.
SMALL_GROUP = 100
_EDGE = 0.5  # half a row added to each side of a parent's share (never 0 or 1)
# Cells are pooled together, up to this many groups x cells at a time; from MIN_CELLS_THREADED cells on, they are
# shared among up to MAX_THREADS threads.
CHUNK_ROWS = 2048
MAX_THREADS = 4
MIN_CELLS_THREADED = 4


@dataclass(frozen=True)
class PooledEstimates:
    """Partially pooled shares of every group in every cell (arrays shaped like the count table).

    ``parent`` names each group's parent; ``prior_weight`` is the posterior mean of
    ``kappa / (kappa + n)``: how much of the estimate comes from the parent (0: the raw share).
    ``kappa_ml`` is the maximum-likelihood concentration of each cell (on the grid), for reference.
    """

    rate: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    prior_mean: np.ndarray
    prior_weight: np.ndarray
    parent: tuple[str, ...]
    kappa_ml: np.ndarray


def parent_of(group: str, n_columns: int) -> str | None:
    """The parent's label of a group of a cross of ``n_columns`` columns (None: the whole cell)."""
    if n_columns < 2 or CROSS not in group:
        return None
    return group.rsplit(CROSS, 1)[0]


def log_marginal(k: np.ndarray, n: np.ndarray, m: np.ndarray, kappa: np.ndarray) -> np.ndarray:
    """Beta-binomial log likelihood of each group's count for each kappa, without the binomial coefficient.

    ``k``, ``n``, ``m``: shape (G,), or (G, C) for several cells; ``kappa``: their shape plus (J,), or (J,).
    Returns their shape plus (J,).
    """
    from scipy.special import betaln

    kappa = np.broadcast_to(kappa, (*np.shape(k), np.shape(kappa)[-1]))
    a = kappa * m[..., None]
    b = kappa * (1.0 - m[..., None])
    return betaln(k[..., None] + a, (n - k)[..., None] + b) - betaln(a, b)


# Beta(a, b) components with both parameters at least this large are read through their Edgeworth expansion
# (see _edgeworth_cdf), not scipy's incomplete beta function (5 microseconds an element at parameters in the millions);
# a quantile whose error bound is over EDGE_TOLERANCE is computed exactly, so this is a matter of speed only
# (the thresholds tried: benchmarks/results/stratified_files_issue26.md).
LARGE_BETA = 3e3
# The largest gap between the expansion's CDF and the exact one, over x, measured on a grid of a and b (min(a, b)
# from 300 to 1e7, the other up to 1e5 times larger): 0.055 * min(a, b) ** -1.5 (0.058 at 300), and 7e-9 at most
# where a + b reaches 1e11 (rounding of the exact function): the bound below holds both with room.
_EDGE_CDF_C, _EDGE_CDF_FLOOR = 0.07, 1e-8
# A quantile whose error bound (the components' CDF bounds over the mixture's density) is above this is computed
# exactly: 100 times below the 1e-6 the JSON's numbers promise.
EDGE_TOLERANCE = 1e-8
# From this size on, Newton's steps start at the components' Cornish-Fisher quantiles (measured within 1e-5 of the
# exact ones from min(a, b) = 100 on) rather than scipy's betaincinv: only the start, the steps read exact CDFs.
START_BETA = 100.0


def _beta_moments(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, ...]:
    """Mean, standard deviation, skewness and excess kurtosis of Beta(a, b)."""
    s = a + b
    mean = a / s
    sd = np.sqrt(a * b / (s * s * (s + 1.0)))
    skew = 2.0 * (b - a) * np.sqrt(s + 1.0) / ((s + 2.0) * np.sqrt(a * b))
    kurt = 6.0 * ((a - b) ** 2 * (s + 1.0) - a * b * (s + 2.0)) / (a * b * (s + 2.0) * (s + 3.0))
    return mean, sd, skew, kurt


def _edgeworth_cdf(moments: tuple[np.ndarray, ...], x: np.ndarray) -> np.ndarray:
    """Beta(a, b)'s CDF at ``x`` by its Edgeworth expansion to the second order (skewness and kurtosis terms).

    Its error is of order min(a, b) ** -1.5 (see _EDGE_CDF_C): below 6e-8 from min(a, b) = 10,000 on."""
    from scipy.special import ndtr

    mean, sd, skew, kurt = moments
    y = (x - mean) / sd
    y2 = y * y
    density = np.exp(-0.5 * y2) * _INV_SQRT_2PI
    terms = skew / 6.0 * (y2 - 1.0) + kurt / 24.0 * y * (y2 - 3.0) + skew * skew / 72.0 * y * (y2 * (y2 - 10.0) + 15.0)
    return np.clip(ndtr(y) - density * terms, 0.0, 1.0)


def _cornish_fisher(moments: tuple[np.ndarray, ...], q: float) -> np.ndarray:
    """Beta(a, b)'s q-quantile by the Cornish-Fisher expansion to the second order (a starting point)."""
    from scipy.special import ndtri

    mean, sd, skew, kurt = moments
    z = float(ndtri(q))
    w = z + skew / 6.0 * (z * z - 1.0) + kurt / 24.0 * (z ** 3 - 3.0 * z) - skew * skew / 36.0 * (2.0 * z ** 3 - 5.0 * z)
    return np.clip(mean + sd * w, 0.0, 1.0)


_INV_SQRT_2PI = 1.0 / np.sqrt(2.0 * np.pi)


def _placed(values: np.ndarray, where: np.ndarray) -> np.ndarray:
    """``values`` (one per True of ``where``) put in an array shaped like ``where`` (zero elsewhere)."""
    out = np.zeros(where.shape)
    out[where] = values
    return out


def mixture_quantile(weights: np.ndarray, a: np.ndarray, b: np.ndarray, q: float, iterations: int = 60,
                     approximate: bool = True, start: np.ndarray | None = None) -> np.ndarray:
    """The q-quantile of each row's mixture of Beta(a, b) distributions.

    Safeguarded Newton steps on the mixture's CDF, from the weighted mean of the components' own
    quantiles, inside the bracket of those quantiles (the mixture's quantile lies between the
    smallest and the largest): a step that would leave the bracket halves it instead. Stops when
    no estimate moves by more than 1e-11, or by more than a billionth of itself near 0 (checked against scipy's
    brentq in the tests).

    Components with both parameters at least LARGE_BETA (groups of tens of thousands of rows) are
    read through their Edgeworth expansion (``approximate``): a row whose error bound (the
    expansion's bound on each component's CDF over the mixture's density at the quantile) is above
    EDGE_TOLERANCE is computed again with scipy's exact function alone, its Newton steps starting at the
    expansion's answer (``start``: within about the bound of the exact one, two or three steps from it where the
    components' quantiles are five or six away; the bracket is the same, so only the path changes).
    """
    from scipy.special import betainc, betaincinv, betaln

    smallest = np.minimum(a, b)
    weighed = weights > 0   # a component without weight (a grid point a family does not use) is never computed
    large = (smallest >= LARGE_BETA) & weighed if approximate else np.zeros(a.shape, dtype=bool)
    exact = ~large & weighed
    any_large = bool(large.any())
    big = _beta_moments(a[large], b[large]) if any_large else ()
    # The starting points: scipy's exact quantiles, or where both parameters are at least START_BETA (the
    # Cornish-Fisher quantile is then within 1e-5 of the exact one) the expansion, with the bracket widened by 1e-4.
    started = ((smallest >= START_BETA) if approximate else np.zeros(a.shape, dtype=bool)) & weighed
    own = np.zeros_like(a)
    first = ~started & weighed
    own[first] = betaincinv(a[first], b[first], q)
    if started.any():
        own[started] = _cornish_fisher(_beta_moments(a[started], b[started]), q)
    low = np.min(np.where(weighed, own, 1.0), axis=1)
    high = np.max(np.where(weighed, own, 0.0), axis=1)
    rows = started.any(axis=1)
    low = np.where(rows, np.maximum(low - 1e-4, 0.0), low)
    high = np.where(rows, np.minimum(high + 1e-4, 1.0), high)
    x = np.clip(np.sum(weights * own, axis=1) if start is None else start, low, high)
    log_norm = np.where(weighed, betaln(a, b), 0.0)
    pdf = np.zeros(len(x))
    if any_large:   # each large component's moments, where the rows still moving can pick them
        big = tuple(_placed(values, large) for values in big)
    active = np.arange(len(x))   # the rows still moving: a row that has converged is not computed again
    for _ in range(iterations):
        wa, aa, ba, xa = weights[active], a[active], b[active], x[active]
        ex, lg = exact[active], large[active]
        cdfs = np.zeros_like(aa)
        grid = np.broadcast_to(xa[:, None], aa.shape)
        cdfs[ex] = betainc(aa[ex], ba[ex], grid[ex])
        if any_large:
            cdfs[lg] = _edgeworth_cdf(tuple(values[active][lg] for values in big), grid[lg])
        cdf = np.sum(wa * cdfs, axis=1) - q
        inner = np.clip(xa, 1e-300, 1 - 1e-16)[:, None]
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            density = np.where(weighed[active], wa * np.exp((aa - 1) * np.log(inner) + (ba - 1) * np.log1p(-inner)
                                                            - log_norm[active]), 0.0)
            pdf[active] = np.sum(density, axis=1)
            # Halley's step: the density's slope (each component's f' = f ((a - 1) / x - (b - 1) / (1 - x))) bends
            # Newton's, one step fewer from the same start; where the correction is large, Newton's step alone.
            slope = np.sum(density * ((aa - 1) / inner - (ba - 1) / (1 - inner)), axis=1)
            newton = cdf / pdf[active]
            bend = 1.0 - 0.5 * newton * slope / pdf[active]
            step = xa - np.where(np.isfinite(bend) & (bend > 0.5) & (bend < 2.0), newton / bend, newton)
        la = np.where(cdf < 0, xa, low[active])
        ha = np.where(cdf < 0, high[active], xa)
        inside = np.isfinite(step) & (step >= la) & (step <= ha)
        moved = np.where(inside, step, 0.5 * (la + ha))
        # converged: within 1e-11, or within a billionth of itself for a quantile near 0 (1e-12: no absolute
        # tolerance can tell it from its neighbours)
        tol = np.minimum(1e-11, 1e-9 * np.maximum(np.minimum(moved, 1.0 - moved), 1e-300))
        still = ~((np.abs(moved - xa) < tol) | (ha - la < tol))
        x[active], low[active], high[active] = moved, la, ha
        active = active[still]
        if not len(active):
            break
    if any_large:
        # The quantile moves by at most the mixture's CDF error over its density there.
        floor = np.zeros(a.shape)
        floor[large] = _EDGE_CDF_C * np.minimum(a[large], b[large]) ** -1.5 + _EDGE_CDF_FLOOR
        with np.errstate(divide="ignore", invalid="ignore"):
            bound = np.sum(weights * floor, axis=1) / pdf
        redo = ~(bound <= EDGE_TOLERANCE)
        if redo.any():
            x[redo] = mixture_quantile(weights[redo], a[redo], b[redo], q, iterations, approximate=False,
                                       start=x[redo])
    return x


def effective_kappa(grid: np.ndarray, cap: np.ndarray, spread: Any = 1.0) -> np.ndarray:
    """Each group's prior concentration for each kappa of the grid, shape (G, J).

    The variance of the group's true share around its centre (the siblings' observed share), in
    units of m (1 - m): the group's own spread around the parent's true share (1 / (kappa + 1)),
    the siblings' average spread (``H / (kappa + 1)``, H the sum of the siblings' squared shares of
    rows: 1 for one sibling, 1 / J for J equal ones; ``spread`` is 1 + H) and the siblings'
    sampling error (1 / (cap + 1)).
    """
    cap = np.maximum(np.asarray(cap, dtype=float), 0.0)[:, None]
    spread = np.broadcast_to(np.asarray(spread, dtype=float), cap.shape[:1])[:, None]
    return np.maximum(1.0 / (spread / (grid[None, :] + 1.0) + 1.0 / (cap + 1.0)) - 1.0, 1e-3)


def _unique_rows(*columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The first of each distinct row of the columns (arrays of one shape, read flat), and each row's distinct one."""
    _, first, inverse = np.unique(np.stack(columns, axis=-1).reshape(-1, len(columns)), axis=0, return_index=True,
                                  return_inverse=True)
    return first, inverse.reshape(-1)


def pool_families(k: Any, n: Any, m: Any, cap: Any, level: float = LEVEL, grid: np.ndarray = KAPPA_GRID,
                  spread: Any = 1.0) -> dict[str, np.ndarray]:
    """Pooled shares of several families of groups at once: a column of the (G, C) arrays is one cell, whose groups
    share a concentration kappa.

    ``m``: each group's prior centre; ``cap``: the largest kappa for each group (its siblings'
    rows). Groups with no rows get the prior's mean and quantiles. Returns (G, C) arrays ``rate``,
    ``low``, ``high``, ``weight`` (posterior mean of kappa / (kappa + n)) and, per cell, ``kappa_ml``.
    Every cell at once: one cell at a time spent most of an audit of 51 strata in numpy's per-call overhead.
    """
    k, n, m, cap = (np.asarray(v, dtype=float) for v in (k, n, m, cap))
    spread = np.broadcast_to(np.asarray(spread, dtype=float), k.shape)
    shape = k.shape
    kappa = effective_kappa(grid, cap.ravel(), spread.ravel()).reshape(*shape, len(grid))  # (G, C, J)
    loglik = log_marginal(k, n, m, kappa).sum(axis=0)            # (C, J)
    kappa_ml = grid[np.argmax(loglik, axis=1)]                  # (C,)
    loglik = loglik - PRIOR_POWER * np.log(grid)                 # the log posterior on the grid, (C, J)
    w = np.exp(loglik - loglik.max(axis=1, keepdims=True))
    w = np.where(w > 1e-9, w, 0.0)  # grid points without weight are left out (at most 1e-7 of the mass in all)
    w = w / w.sum(axis=1, keepdims=True)
    a = k[..., None] + kappa * m[..., None]
    b = (n - k)[..., None] + kappa * (1.0 - m[..., None])
    weights = np.broadcast_to(w, a.shape)
    rate = np.sum(weights * a / (a + b), axis=2)
    tail = (1.0 - level) / 2.0
    rows = (shape[0] * shape[1], len(grid))
    # Groups with the same counts and prior in the same cell have the same mixture (every group without rows in a
    # cell of the same parent: half of a sparse cross's entries): its quantiles are computed once.
    first, inverse = _unique_rows(k, n, m, cap, spread, np.broadcast_to(np.arange(shape[1], dtype=float), shape))
    flat = (np.ascontiguousarray(weights).reshape(rows)[first], a.reshape(rows)[first], b.reshape(rows)[first])
    low = mixture_quantile(*flat, tail)[inverse].reshape(shape)
    high = mixture_quantile(*flat, 1.0 - tail)[inverse].reshape(shape)
    # A very skewed mixture can put its mean outside its own 95% interval (0.02% against <0.01% to <0.01%): there
    # the estimate is the posterior median, which an equal-tailed interval always holds.
    outside = np.flatnonzero(((rate < low) | (rate > high)).ravel()[first])
    if len(outside):
        median = mixture_quantile(flat[0][outside], flat[1][outside], flat[2][outside], 0.5)
        fixed = rate.ravel()[first]
        fixed[outside] = median
        rate = fixed[inverse].reshape(shape)
    weight = np.sum(weights * kappa / (kappa + n[..., None]), axis=2)
    return {"rate": rate, "low": low, "high": high, "weight": weight, "kappa_ml": kappa_ml}


def pool_family(k: Any, n: Any, m: Any, cap: Any, level: float = LEVEL,
                grid: np.ndarray = KAPPA_GRID, spread: Any = 1.0) -> dict[str, np.ndarray]:
    """Pooled shares of one family of groups (one cell): :func:`pool_families` of one column."""
    k, n, m, cap = (np.asarray(v, dtype=float).reshape(-1, 1) for v in (k, n, m, cap))
    spread = np.broadcast_to(np.asarray(spread, dtype=float), k.shape[:1]).reshape(-1, 1)
    out = pool_families(k, n, m, cap, level=level, grid=grid, spread=spread)
    return {name: (values[0] if name == "kappa_ml" else values[:, 0]) for name, values in out.items()}


def prior_centres(table: CountTable, n_columns: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[str, ...]]:
    """Per group and cell: the prior centre (the siblings' share), the cap (the siblings' rows), the
    spread factor 1 + H (H: the siblings' squared shares of rows, summed) and the parents' names."""
    n = table.n.astype(float)
    k = table.positives.astype(float)
    parents = tuple(parent_of(g, n_columns) or "" for g in table.groups)
    m = np.zeros_like(n)
    cap = np.zeros_like(n)
    spread = np.ones_like(n)
    cell_n, cell_k, cell_sq = n.sum(axis=0), k.sum(axis=0), (n ** 2).sum(axis=0)
    for gi, parent in enumerate(parents):
        if parent:
            family = [i for i, p in enumerate(parents) if p == parent]
            par_n, par_k, par_sq = n[family].sum(axis=0), k[family].sum(axis=0), (n[family] ** 2).sum(axis=0)
        else:
            par_n, par_k, par_sq = cell_n, cell_k, cell_sq
        sib_n, sib_k, sib_sq = par_n - n[gi], par_k - k[gi], par_sq - n[gi] ** 2
        alone = sib_n <= 0  # the parent's only child: its siblings are the other rows of the cell
        sib_n = np.where(alone, cell_n - n[gi], sib_n)
        sib_k = np.where(alone, cell_k - k[gi], sib_k)
        sib_sq = np.where(alone, cell_sq - n[gi] ** 2, sib_sq)
        m[gi] = (sib_k + _EDGE) / (sib_n + 2 * _EDGE)
        cap[gi] = sib_n
        with np.errstate(divide="ignore", invalid="ignore"):
            spread[gi] = np.where(sib_n > 0, 1.0 + sib_sq / sib_n ** 2, 1.0)
    names = tuple(p if p else "all rows of the cell" for p in parents)
    return m, cap, spread, names


def pooled_estimates(table: CountTable, spec: AuditSpec, level: float = LEVEL) -> PooledEstimates:
    """Partially pooled share of every group in every cell of the count table."""
    n_columns = len(spec.group_by) if spec.group_mode == "columns" else 1
    m, cap, spread, parents = prior_centres(table, n_columns)
    n = table.n.astype(float)
    k = table.positives.astype(float)
    shape = n.shape
    out = {name: np.full(shape, np.nan) for name in ("rate", "low", "high", "weight")}
    kappa_ml = np.full(shape[1], np.nan)
    cells = np.array([ci for ci in range(shape[1]) if n[:, ci].sum() > 0], dtype=int)
    # Every cell at once, in chunks of CHUNK_ROWS groups x cells (the arrays hold a row per grid point). Many
    # chunks run on the machine's cores: scipy's beta functions release the GIL.
    threads = min(os.cpu_count() or 1, MAX_THREADS) if len(cells) >= MIN_CELLS_THREADED else 1
    per = max(1, min(CHUNK_ROWS // max(shape[0], 1), -(-len(cells) // threads)))
    chunks = [cells[i:i + per] for i in range(0, len(cells), per)]

    def families(columns: np.ndarray) -> dict[str, np.ndarray]:
        return pool_families(k[:, columns], n[:, columns], m[:, columns], cap[:, columns], level,
                             spread=spread[:, columns])

    workers = min(len(chunks), threads)
    if workers > 1:
        with ThreadPoolExecutor(workers, thread_name_prefix="luskin-shrinkage") as pool:
            done = list(pool.map(families, chunks))
    else:
        done = [families(columns) for columns in chunks]
    for columns, fam in zip(chunks, done):
        for name, values in out.items():
            values[:, columns] = fam[name]
        kappa_ml[columns] = fam["kappa_ml"]
    return PooledEstimates(out["rate"], out["low"], out["high"], m, out["weight"], parents, kappa_ml)


def _num(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def with_pooled(table: CountTable, spec: AuditSpec, comparisons: Sequence[Any]) -> tuple[Any, ...]:
    """The comparisons with their pooled share, its interval and toward what it is pooled (the narrative quotes
    it for small groups); a group with no row in a cell has none.

    Only where there is more than one group (a pooled share needs siblings). The audit calls this
    once on its comparisons (:func:`luskin_core.analyses.audit.result_from_counts`).
    """
    if len(table.groups) < 2 or table.n.sum() == 0:
        return tuple(comparisons)
    est = pooled_estimates(table, spec)
    gi = {g: i for i, g in enumerate(table.groups)}
    ci = {key: i for i, key in enumerate(table.cell_keys)}
    out = []
    for c in comparisons:
        if not c.n:   # no row: the prior alone, which a reader of the numbers would take for an estimate
            out.append(c)
            continue
        i, j = gi[c.group], ci[c.cell_key]
        rate, low, high = _num(est.rate[i, j]), _num(est.ci_low[i, j]), _num(est.ci_high[i, j])
        out.append(replace(c, pooled_rate=rate, pooled_ci_low=low, pooled_ci_high=high, pooled_parent=est.parent[i]))
    return tuple(out)


__all__ = [
    "SMALL_GROUP",
    "PooledEstimates",
    "log_marginal",
    "mixture_quantile",
    "parent_of",
    "pool_families",
    "pool_family",
    "pooled_estimates",
    "with_pooled",
]
