"""Sharp bounds on Local Law 144 impact ratios over every way a table's unknown individuals could be spread.

A table has categories with known counts (n_j individuals, s_j selected) and U individuals whose
category is unknown, T of them selected (T is known when the rows are at hand or the published
table gives it; otherwise any T from 0 to U). An *assignment* puts u_j of the unknowns, t_j of them
selected, into category j (sum u_j = U, sum t_j = T, 0 <= t_j <= u_j). The impact ratio of a
category g is then r_g / max_j r_j with r_j = (s_j + t_j) / (n_j + u_j), the most selected category
chosen again for every assignment. The bounds are the lowest and highest ratio over all assignments.

Why the extremes have a simple shape (R_g = r_g / max(r_g, M) with M the largest other rate is
non-decreasing in r_g and non-increasing in every other rate):

* **Lowest.** An unselected unknown lowers whichever rate it joins, a selected one raises it. Every
  unselected unknown is best placed in g (lowering r_g never raises R_g), and every selected one in
  a competitor; all of them in one competitor h, since (s_h + t) / (n_h + t) grows with t and the
  maximum of rates fed separately is at most the largest of them fed everything. So the lowest
  ratio is the minimum over h != g (and over T when it is free) of
  ``[s_g / (n_g + U - T)] / max(s_g / (n_g + U - T), (s_h + T) / (n_h + T), max_{j != g, h} r_j)``.
* **Highest.** Every selected unknown is best placed in g, every unselected one in a competitor,
  spread so that the largest competitor rate is as low as possible. That is a min-max allocation of
  W = U - T units to non-increasing functions s_j / (n_j + x): giving each unit in turn to the
  competitor with the highest current rate is optimal, and the allocation for W units is the first
  W steps of the allocation for W + 1, so one pass gives the best competitor maximum M(W) for every
  W. The highest ratio is the maximum over T of ``min(1, [(s_g + T) / (n_g + T)] / M(U - T))``.

Categories left out of the impact ratios (the 2% rule) are neither g nor a competitor: an unknown
placed there changes no ratio, so they never improve an extreme (the brute-force test places
unknowns there too). A category with no known individual has no rate and takes no part. Values
are exact fractions; ``None`` where no assignment gives a defined ratio (nobody selected anywhere).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from luskin_core.errors import LuskinError

FOUR_FIFTHS = Fraction(4, 5)
PASSES, COULD_FAIL, FAILS = "passes", "could_fail", "fails"


def _best_competitor_max(counts: Sequence[tuple[int, int]], units: int) -> list[tuple[int, int]]:
    """M(w) for w = 0..units as (numerator, denominator): the lowest possible largest rate among ``counts``
    after adding w unselected individuals, found by giving each in turn to the highest current rate."""
    heap = [(-s / n, j) for j, (n, s) in enumerate(counts)]
    heapq.heapify(heap)
    added = [0] * len(counts)
    out: list[tuple[int, int]] = []
    for w in range(units + 1):
        _, j = heap[0]
        n, s = counts[j]
        out.append((s, n + added[j]))
        if w == units or s == 0:  # the largest rate is 0: nothing lowers it further
            out.extend([(0, 1)] * (units - w))
            break
        added[j] += 1
        heapq.heapreplace(heap, (-s / (n + added[j]), j))
    return out


def ratio_bounds(counts: Sequence[tuple[int, int]], kept: Sequence[bool], unknown: int,
                 unknown_selected: int | None = None) -> list[tuple[Fraction | None, Fraction | None]]:
    """(lowest, highest) impact ratio of every category over all spreads of the unknowns.

    ``counts`` are (individuals, selected) per category; ``kept`` says which take part in the impact
    ratios (False: left out by the 2% rule); ``unknown`` is U and ``unknown_selected`` is T (None: any
    number from 0 to U). Categories not kept, or with no individual, get (None, None).
    """
    if unknown < 0 or (unknown_selected is not None and not 0 <= unknown_selected <= unknown):
        raise LuskinError("The unknown count must be a whole number of at least 0, and its number selected "
                          "between 0 and it.")
    index = [j for j, (n, _) in enumerate(counts) if kept[j] and n > 0]
    live = [(int(counts[j][0]), int(counts[j][1])) for j in index]
    out: list[tuple[Fraction | None, Fraction | None]] = [(None, None)] * len(counts)
    totals = np.arange(unknown + 1) if unknown_selected is None else np.array([unknown_selected])
    for position, j in enumerate(index):
        others = live[:position] + live[position + 1:]
        out[j] = (_lowest(live[position], others, unknown, totals), _highest(live[position], others, unknown, totals))
    return out


def _ratio(num: int, den: int, top: Fraction) -> Fraction | None:
    rate = Fraction(num, den) if den else Fraction(0)
    best = max(rate, top)
    return None if best == 0 else rate / best


def _lowest(g: tuple[int, int], others: list[tuple[int, int]], unknown: int, totals: np.ndarray) -> Fraction | None:
    n_g, s_g = g
    if not others:  # alone in the ratios: the most selected whatever happens, unless nobody is selected
        return _only(g, unknown, totals)
    rate_g = s_g / (n_g + unknown - totals)
    best: tuple[float, int, int] | None = None
    rates = [s / n for n, s in others]
    for h, (n_h, s_h) in enumerate(others):
        rest = max(rates[:h] + rates[h + 1:], default=0.0)
        top = np.maximum(np.maximum((s_h + totals) / (n_h + totals), rest), rate_g)
        with np.errstate(divide="ignore", invalid="ignore"):
            value = np.where(top > 0, rate_g / np.where(top > 0, top, 1), np.inf)
        i = int(np.argmin(value))
        if np.isfinite(value[i]) and (best is None or value[i] < best[0]):
            best = (float(value[i]), h, int(totals[i]))
    if best is None:
        return None
    _, h, t = best
    rest_exact = max((Fraction(s, n) for k, (n, s) in enumerate(others) if k != h), default=Fraction(0))
    n_h, s_h = others[h]
    return _ratio(s_g, n_g + unknown - t, max(Fraction(s_h + t, n_h + t), rest_exact))


def _highest(g: tuple[int, int], others: list[tuple[int, int]], unknown: int, totals: np.ndarray) -> Fraction | None:
    n_g, s_g = g
    if not others:
        return _only(g, unknown, totals)
    tops = _best_competitor_max(others, unknown)
    top_num = np.array([tops[unknown - t][0] for t in totals], dtype=float)
    top_den = np.array([tops[unknown - t][1] for t in totals], dtype=float)
    rate_g = (s_g + totals) / (n_g + totals)
    top = np.maximum(top_num / top_den, rate_g)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where(top > 0, rate_g / np.where(top > 0, top, 1), -np.inf)
    i = int(np.argmax(value))
    if not np.isfinite(value[i]):
        return None
    t = int(totals[i])
    num, den = tops[unknown - t]
    return _ratio(s_g + t, n_g + t, Fraction(num, den))


def _only(g: tuple[int, int], unknown: int, totals: np.ndarray) -> Fraction | None:
    """A category alone in the ratios: 1 whenever it selects anyone."""
    return Fraction(1) if g[1] > 0 or int(totals.max()) > 0 else None


def status(low: Fraction | None, high: Fraction | None) -> str | None:
    """'passes' (at least 0.80 whatever the unknowns were), 'fails' (below whatever) or 'could_fail'."""
    if low is None or high is None:
        return None
    if low >= FOUR_FIFTHS:
        return PASSES
    if high < FOUR_FIFTHS:
        return FAILS
    return COULD_FAIL


__all__ = ["COULD_FAIL", "FAILS", "FOUR_FIFTHS", "PASSES", "ratio_bounds", "status"]
