"""The Local Law 144 bounds as they were before issue 48 (kept as a reference: the tests check the new code against it on
tables too large to enumerate). Sharp bounds on Local Law 144 impact ratios over every way a table's unknown individuals could be spread.

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
  W: it is the (W+1)-th largest of all the values s_j / (n_j + x), x = 0..U, merged (``_Ladder``). The highest ratio is the maximum over T of ``min(1, [(s_g + T) / (n_g + T)] / M(U - T))``.

Categories left out of the impact ratios (the 2% rule) are neither g nor a competitor: an unknown
placed there changes no ratio, so they never improve an extreme (the brute-force test places
unknowns there too). A category with no known individual has no rate and takes no part. Values
are exact fractions; ``None`` where no assignment gives a defined ratio (nobody selected anywhere).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from luskin_core.errors import LuskinError

FOUR_FIFTHS = Fraction(4, 5)
PASSES, COULD_FAIL, FAILS = "passes", "could_fail", "fails"


class _Ladder:
    """Every category's rate after 0..U added unselected individuals, merged in decreasing order.

    Giving each unit in turn to the highest current rate takes these values in exactly this order
    (each category's own rates fall as it receives units), so the lowest possible largest rate among
    the competitors of g after w units is the (w+1)-th of the merged values once g's are left out.
    """

    def __init__(self, counts: Sequence[tuple[int, int]], units: int) -> None:
        added = np.arange(units + 1)
        n = np.array([c[0] for c in counts], dtype=np.int64)[:, None] + added[None, :]
        s = np.repeat(np.array([c[1] for c in counts], dtype=np.int64)[:, None], units + 1, axis=1)
        order = np.argsort(-(s / n).ravel(), kind="stable")
        self.category = (order // (units + 1)).astype(np.int64)
        self.num = s.ravel()[order]
        self.den = n.ravel()[order]
        self.units = units

    def without(self, g: int) -> tuple[np.ndarray, np.ndarray]:
        """M(w) for w = 0..units as numerators and denominators, category g left out."""
        keep = self.category != g
        return self.num[keep][: self.units + 1], self.den[keep][: self.units + 1]


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
    ladder = _Ladder(live, unknown) if len(live) > 1 else None
    boosted = _Boosted(live, totals) if len(live) > 1 else None
    for position, j in enumerate(index):
        tops = ladder.without(position) if ladder is not None else None
        out[j] = (_lowest(position, live, unknown, totals, boosted), _highest(live[position], tops, unknown, totals))
    return out


def _ratio(num: int, den: int, top: Fraction) -> Fraction | None:
    rate = Fraction(num, den) if den else Fraction(0)
    best = max(rate, top)
    return None if best == 0 else rate / best


class _Boosted:
    """Every category's rate with 0..U selected individuals added, and per number added the two highest
    (the best competitor of any g: the highest, or the second when the highest is g itself)."""

    def __init__(self, counts: Sequence[tuple[int, int]], totals: np.ndarray) -> None:
        n = np.array([c[0] for c in counts], dtype=np.int64)[:, None]
        s = np.array([c[1] for c in counts], dtype=np.int64)[:, None]
        rates = (s + totals[None, :]) / (n + totals[None, :])
        order = np.argsort(-rates, axis=0, kind="stable")
        self.first = order[0]
        self.second = order[1] if len(counts) > 1 else order[0]
        columns = np.arange(rates.shape[1])
        self.first_rate, self.second_rate = rates[self.first, columns], rates[self.second, columns]

    def best_without(self, g: int) -> tuple[np.ndarray, np.ndarray]:
        """Per number added: the competitor (other than g) whose boosted rate is highest, and that rate."""
        own = self.first == g
        return np.where(own, self.second, self.first), np.where(own, self.second_rate, self.first_rate)


def _lowest(position: int, live: list[tuple[int, int]], unknown: int, totals: np.ndarray,
            boosted: _Boosted | None) -> Fraction | None:
    """All unselected unknowns in g, all selected ones in the competitor whose rate they raise highest."""
    n_g, s_g = live[position]
    if boosted is None:  # alone in the ratios: the most selected whatever happens, unless nobody is selected
        return _only(live[position], unknown, totals)
    rate_g = s_g / (n_g + unknown - totals)
    who, rate_h = boosted.best_without(position)
    # fed to h, its rate is at least its own, so the largest other rate is max(boosted h, every other's own)
    own = [Fraction(s, n) for k, (n, s) in enumerate(live) if k != position]
    static = float(max(own))
    top = np.maximum(np.maximum(rate_h, static), rate_g)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where(top > 0, rate_g / np.where(top > 0, top, 1), np.inf)
    i = int(np.argmin(value))
    if not np.isfinite(value[i]):
        return None
    t, h = int(totals[i]), int(who[i])
    n_h, s_h = live[h]
    return _ratio(s_g, n_g + unknown - t, max(Fraction(s_h + t, n_h + t), max(own)))


def _highest(g: tuple[int, int], tops: tuple[np.ndarray, np.ndarray] | None, unknown: int,
             totals: np.ndarray) -> Fraction | None:
    n_g, s_g = g
    if tops is None:
        return _only(g, unknown, totals)
    top_num, top_den = tops[0][unknown - totals], tops[1][unknown - totals]
    rate_g = (s_g + totals) / (n_g + totals)
    top = np.maximum(top_num / top_den, rate_g)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where(top > 0, rate_g / np.where(top > 0, top, 1), -np.inf)
    i = int(np.argmax(value))
    if not np.isfinite(value[i]):
        return None
    t = int(totals[i])
    return _ratio(s_g + t, n_g + t, Fraction(int(top_num[i]), int(top_den[i])))


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
