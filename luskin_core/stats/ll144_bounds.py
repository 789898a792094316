"""Sharp bounds on Local Law 144 impact ratios over every way a table's unknown individuals could be spread.

A table has categories with known counts (n_j individuals, s_j selected) and U individuals whose
category is unknown, T of them selected (T is known when the rows are at hand or the published
table gives it; otherwise any T from 0 to U). An *assignment* puts u_j of the unknowns, t_j of them
selected, into category j (sum u_j = U, sum t_j = T, 0 <= t_j <= u_j). The impact ratio of a
category g is then r_g / max_j r_j with r_j = (s_j + t_j) / (n_j + u_j), the most selected category
chosen again for every assignment. The bounds are the lowest and highest ratio over all assignments.
Values are exact fractions; ``None`` where no assignment gives a defined ratio (nobody selected anywhere).
Categories left out of the impact ratios (the 2% rule) are neither g nor a competitor: an unknown placed
there changes no ratio, so they never improve an extreme. A category with no known individual has no rate.

Why the extremes have a simple shape (R_g = r_g / max(r_g, M) with M the largest other rate is
non-decreasing in r_g and non-increasing in every other rate): an unselected unknown lowers whichever
rate it joins and a selected one raises it, so for the lowest ratio every unselected unknown goes to g
and every selected one to a competitor, all to one competitor h (``(s_h + t) / (n_h + t)`` grows with t,
and the largest of rates fed separately is at most the largest fed everything); for the highest, every
selected unknown goes to g and every unselected one to the competitors. Each published table is then
solved without building anything of size U (the Eightfold audits have 61 million unknowns):

* **Lowest**, with ``a(t) = s_g / (n_g + U - t)`` and ``b_h(t) = (s_h + t) / (n_h + t)``. Since
  ``b_h(t) >= r_h``, the largest other rate is ``B(t) = max_h b_h(t)``, and ``a / max(a, B) = min(1, min_h
  a / b_h)``: the lowest ratio is ``min(1, min over h != g and t of a(t) / b_h(t))``. For one pair,
  ``log(a / b_h) = log s_g + log(n_h + t) - log(n_g + U - t) - log(s_h + t)`` has second derivative
  ``1/(n_g+U-t)^2 + 1/(s_h+t)^2 - 1/(n_h+t)^2 > 0`` (as s_h <= n_h): convex in t, its real minimiser solves
  ``t^2 + 2 n_h t + n_h s_h - d_h (n_g + U) = 0`` with ``d_h = n_h - s_h``, i.e. ``t* = sqrt(d_h (n_h + n_g + U))
  - n_h``, so the whole number minimising it in the allowed range is floor or ceiling of t* (``math.isqrt``),
  clipped. Only competitors that are the largest ``b_h(t)`` at some allowed t can give the minimum, and
  ``b_h`` is largest exactly where ``(n_h + t) / d_h`` is, a straight line in t: the upper envelope of
  those lines (``_envelope``) names them. Leaving g out can only uncover lines of the second envelope (the
  envelope of the lines not on the first), so g is paired with the first envelope, or with both when it
  is on the first. A pair that is never largest only adds a value at least the minimum, so extra
  candidates never change the answer.
* **Highest**. With t selected unknowns in g (rate ``c(t) = (s_g + t) / (n_g + t)``), the w = U - t
  unselected ones are spread over the competitors to make their largest rate as low as possible. Giving
  each unit in turn to the highest current rate is optimal, so that lowest largest rate ``M(w)`` is the
  (w+1)-th largest of the *ladder*, every competitor's values ``s_j / (n_j + y)``, y = 0, 1, 2, ...
  (``_Ladder``). It is found without listing the ladder: the continuous spread (water filling) gives a
  level ``rho = S_A / (w + N_A)`` over the competitors A above it, and the number of ladder values above
  rho, ``sum_j ceil(s_j / rho - n_j)`` over A, is w plus less than |A|; the few values just above rho
  settle it exactly (``_Ladder.top``). With T known that is one evaluation: ``min(1, c(T) / M(U - T))``.
  With T free, the highest is ``max over w of c(U - w) / M(w)``. The continuous level ``M_c(w) <= M(w)``
  gives an upper bound ``c(U - w) / M_c(w)`` that is log-concave in w (``1 / M_c`` is the inverse of the
  convex piecewise linear ``sum_j (s_j u - n_j)+``, hence concave, and ``log c`` is concave), so the w whose
  upper bound reaches the best exact value found at its maximiser form one interval; since
  ``M(w) <= M_c(w - |A|)`` that interval holds about ``sqrt(|A| (U + N))`` values of w (some thousands for
  the largest published tables), and it is searched in full: every ladder value of its ranks, sorted as
  floating point numbers (rounding is monotone, so the k-th largest rounded value is the rounded k-th
  largest), the best w's checked in exact fractions.

The tests check both against enumeration of every assignment on small tables and against the
previous implementation (which built the ladder) on tables too large to enumerate.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from math import isqrt

import numpy as np

from luskin_core.errors import LuskinError

FOUR_FIFTHS = Fraction(4, 5)
PASSES, COULD_FAIL, FAILS = "passes", "could_fail", "fails"
_CHUNK = 1 << 20  # ranks of the ladder sorted at once in the search over w (memory ~ 40 bytes each)
_SLACK = 1e-9  # relative margin on floating point bounds (their error is under 1e-15)
_INT64_LIMIT = 2 ** 31  # counts (with the unknowns) from here on are Python integers: products pass int64
_CLOSE = 1e-14  # ratios within this of the best floating point one are checked exactly (their error: a few 1e-16)


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
    low, high = (0, int(unknown)) if unknown_selected is None else (int(unknown_selected), int(unknown_selected))
    if len(live) == 1:  # alone in the ratios: the most selected whatever happens, unless nobody is selected
        only = Fraction(1) if live[0][1] > 0 or high > 0 else None
        out[index[0]] = (only, only)
        return out
    if live:
        table = _Table(live, int(unknown), low, high)
        for position, j in enumerate(index):
            out[j] = (table.lowest(position), table.highest(position))
    return out


class _Table:
    """The categories in the ratios (n, s), U unknowns and the allowed numbers selected among them [lo, hi]."""

    def __init__(self, live: list[tuple[int, int]], unknown: int, lo: int, hi: int) -> None:
        self.live, self.unknown, self.lo, self.hi = live, unknown, lo, hi
        self.selecting = [k for k, (_, s) in enumerate(live) if s > 0]
        everyone = [k for k, (n, s) in enumerate(live) if s == n]  # rate 1 whatever is added to them
        self.everyone = everyone[:2]
        lines = [k for k, (n, s) in enumerate(live) if s < n]
        self.first = _envelope(live, lines, lo, hi)
        self._second: list[int] | None = None
        self._lines = lines
        self.ordered = _by_rate(live, self.selecting)
        self.where = {k: i for i, k in enumerate(self.ordered)}
        wide = unknown + sum(n for n, _ in live) >= _INT64_LIMIT  # products of counts may pass int64
        kind: type = object if wide else np.int64
        self._counts: tuple[np.ndarray, np.ndarray] = (np.array([live[k][0] for k in self.ordered], dtype=kind),
                        np.array([live[k][1] for k in self.ordered], dtype=kind))
        self._shared: _Ladder | None = None
        self._floor: Fraction | None = None

    # ---- lowest ------------------------------------------------------------------------------------
    def lowest(self, g: int) -> Fraction | None:
        s_g = self.live[g][1]
        if s_g == 0:  # a rate of 0 whatever happens: the ratio is 0 once anyone is selected
            others = any(k != g for k in self.selecting)
            return Fraction(0) if others or self.hi > 0 else None
        best = (1, 1)
        for h in self._feeders(g):
            value = self._fed(g, h)
            if value is not None and value[0] * best[1] < best[0] * value[1]:
                best = value
        return Fraction(*best)

    def _feeders(self, g: int) -> list[int]:
        """Competitors that are the largest b_h(t) for some allowed t once g is left out (a superset is fine)."""
        ones = [k for k in self.everyone if k != g]
        if ones:  # a competitor selecting everyone stays at rate 1: nothing rises above it
            return ones[:1]
        if g not in self.first:
            return self.first
        if self._second is None:
            on_first = set(self.first)
            self._second = _envelope(self.live, [k for k in self._lines if k not in on_first], self.lo, self.hi)
        return [k for k in dict.fromkeys(self.first + self._second) if k != g]

    def _fed(self, g: int, h: int) -> tuple[int, int] | None:
        """min over allowed t of a(t) / b_h(t) (numerator, denominator): g takes the U - t unselected unknowns,
        h the t selected."""
        n_g, s_g = self.live[g]
        n_h, s_h = self.live[h]
        lo = max(self.lo, 1) if s_h == 0 else self.lo  # b_h(0) = 0 puts nobody above g
        if lo > self.hi:
            return None
        total = n_g + self.unknown
        root = isqrt((n_h - s_h) * (n_h + total))  # floor of sqrt(d_h (n_h + n_g + U)): t* = root - n_h (+1)
        best = None
        for t in {min(max(root - n_h, lo), self.hi), min(max(root - n_h + 1, lo), self.hi)}:
            value = (s_g * (n_h + t), (total - t) * (s_h + t))
            if best is None or value[0] * best[1] < best[0] * value[1]:
                best = value
        return best

    # ---- highest -----------------------------------------------------------------------------------
    def highest(self, g: int) -> Fraction | None:
        n_g, s_g = self.live[g]
        ladder = self._ladder(g)
        if ladder is None:  # no competitor selects anyone, nor can one (all selected unknowns go to g)
            return Fraction(1) if s_g > 0 or self.hi > 0 else None
        if self.lo == self.hi:
            t = self.hi
            return min(Fraction(1), Fraction(s_g + t, n_g + t) / ladder.top(self.unknown - t))
        full = Fraction(s_g + self.unknown, n_g + self.unknown) / ladder.top(0)  # every unknown selected, in g
        if full >= 1:
            return Fraction(1)
        return min(Fraction(1), _best_spread(ladder, n_g, s_g, self.unknown))

    def _ladder(self, g: int) -> _Ladder | None:
        """The competitors of g that select anyone, in decreasing rate (shared when g cannot matter to them)."""
        if len(self.ordered) - (g in self.where) == 0:
            return None
        shared = self._all()
        if g not in self.where:  # selects nobody: never on the ladder
            return shared
        # g's values are all at most its own rate: below the lowest level the competitors can reach, g is never
        # among the ladder's ranks that matter, and leaving it out changes nothing
        if self._floor is None:
            self._floor = shared.top(self.unknown)
        n_g, s_g = self.live[g]
        if s_g * self._floor.denominator < self._floor.numerator * n_g:
            return shared
        return shared.without(self.where[g])

    def _all(self) -> _Ladder:
        if self._shared is None:
            self._shared = _Ladder(*self._counts)
        return self._shared


def _by_rate(live: list[tuple[int, int]], members: list[int]) -> list[int]:
    """``members`` in decreasing rate s / n, exactly (sorted as floats, then runs of equal floats in fractions)."""
    rates = np.array([live[k][1] / live[k][0] for k in members])
    order = [members[i] for i in np.argsort(-rates, kind="stable")]
    ranked = sorted(rates, reverse=True)
    out: list[int] = []
    i = 0
    while i < len(order):
        j = i + 1
        while j < len(order) and ranked[j] == ranked[i]:
            j += 1
        run = order[i:j]
        out += run if j - i == 1 else sorted(run, key=lambda k: Fraction(live[k][1], live[k][0]), reverse=True)
        i = j
    return out


def _envelope(live: list[tuple[int, int]], members: Iterable[int], lo: int, hi: int) -> list[int]:
    """The categories whose line (n + t) / d (d = n - s > 0) is the highest for some t in [lo, hi].

    A category with the largest (s + t) / (n + t) = 1 - d / (n + t) has the largest (n + t) / d. Lines in
    increasing slope 1/d (equal slopes: the highest only); one is dropped when its neighbours cross before it
    rises above the first of them; the rest are each highest between their crossings with their neighbours."""
    best: dict[int, int] = {}
    for k in members:
        n, s = live[k]
        d = n - s
        if d not in best or live[best[d]][0] < n:
            best[d] = k
    lines = sorted(best.values(), key=lambda k: live[k][0] - live[k][1], reverse=True)  # d down: slope up

    def cross(i: int, j: int) -> Fraction:  # where line j (steeper) overtakes line i
        (n_i, s_i), (n_j, s_j) = live[i], live[j]
        d_i, d_j = n_i - s_i, n_j - s_j
        return Fraction(d_i * n_j - d_j * n_i, d_j - d_i)

    def hidden(a: int, b: int, c: int) -> bool:  # c overtakes a no later than b does: cross(a, c) <= cross(a, b)
        (n_a, s_a), (n_b, s_b), (n_c, s_c) = live[a], live[b], live[c]
        d_a, d_b, d_c = n_a - s_a, n_b - s_b, n_c - s_c  # d_a > d_b > d_c: both denominators negative
        return (d_a * n_c - d_c * n_a) * (d_b - d_a) <= (d_a * n_b - d_b * n_a) * (d_c - d_a)

    hull: list[int] = []
    for k in lines:
        while len(hull) >= 2 and hidden(hull[-2], hull[-1], k):
            hull.pop()
        hull.append(k)
    kept = []
    for i, k in enumerate(hull):
        start = cross(hull[i - 1], k) if i else None
        end = cross(k, hull[i + 1]) if i + 1 < len(hull) else None
        if (start is None or start <= hi) and (end is None or end >= lo):
            kept.append(k)
    return kept


class _Ladder:
    """Competitors (n, s), s > 0, in decreasing rate: the lowest largest rate ``M(w)`` after w unselected units.

    ``M(w)`` is the (w+1)-th largest of the values s_j / (n_j + y), y >= 0 (``top``); ``level`` is the
    continuous spread's level, a lower bound on it. ``n`` and ``s`` are int64 arrays, or Python integers in
    object arrays when products of counts could pass int64."""

    def __init__(self, n: np.ndarray, s: np.ndarray) -> None:
        self.n, self.s = n, s
        self.prefix_n = np.concatenate((np.zeros(1, dtype=n.dtype), np.cumsum(n)))
        self.prefix_s = np.concatenate((np.zeros(1, dtype=s.dtype), np.cumsum(s)))
        self.nf, self.sf = n.astype(float), s.astype(float)
        self._edges: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._tops: dict[int, Fraction] = {}

    def without(self, position: int) -> _Ladder:
        """The same competitors but the one at ``position``."""
        return _Ladder(np.delete(self.n, position), np.delete(self.s, position))

    def _active(self, w: int) -> int:
        """How many competitors the continuous spread of w units lowers: the first p with w <= W_p, where
        W_p = S_p n_{p+1} / s_{p+1} - N_p (the (p+1)-th is not above the level S_p / (w + N_p)); W_p grows with p."""
        n, s, big_n, big_s = self.n, self.s, self.prefix_n, self.prefix_s
        lo, hi = 1, len(n)  # the answer lies in [lo, hi]; W at the last one is infinite
        while lo < hi:
            p = (lo + hi) // 2
            if int(s[p]) * (w + int(big_n[p])) <= int(big_s[p]) * int(n[p]):
                hi = p
            else:
                lo = p + 1
        return lo

    def level(self, w: np.ndarray) -> np.ndarray:
        """The continuous spread's level for each w (floating point): at most M(w)."""
        if self._edges is None:
            big_s, big_n = self.prefix_s[1:].astype(float), self.prefix_n[1:].astype(float)
            edges = np.append(big_s[:-1] * self.nf[1:] / self.sf[1:] - big_n[:-1], np.inf)
            self._edges = (edges, big_s, big_n)
        edges, big_s, big_n = self._edges
        p = np.searchsorted(edges, w, side="left")
        return big_s[p] / (w + big_n[p])

    def _above(self, num: int, den: int) -> np.ndarray:
        """Per competitor, how many of its values exceed num / den: ceil(s / rho - n), at least 0."""
        wide = self.n.dtype == object
        num_a, den_a = (num, den) if wide else (np.int64(num), np.int64(den))
        return np.maximum(-((self.n * num_a - self.s * den_a) // num_a), 0)

    def value(self, k: int, y: int) -> Fraction:
        return Fraction(int(self.s[k]), int(self.n[k]) + y)

    def top(self, w: int) -> Fraction:
        """M(w) exactly: the (w+1)-th largest ladder value."""
        known = self._tops.get(w)
        if known is not None:
            return known
        p = self._active(w)
        num, den = int(self.prefix_s[p]), w + int(self.prefix_n[p])
        need = self._above(num, den)
        extra = int(need.sum()) - w  # 0 <= extra < p
        if extra <= 0:
            found = Fraction(num, den)
        else:
            # the extra-th smallest of the values above the level: gather those up to the extra-th smallest of
            # each competitor's first value above it (at least extra values lie there), then choose exactly
            live = np.nonzero(need > 0)[0]
            y = np.asarray(need[live], dtype=np.int64) - 1
            first = self.sf[live] / (self.nf[live] + y)
            rough = np.partition(first, extra - 1)[extra - 1]  # its float; the exact largest that rounds to it
            cut_value = max(self.value(int(k), int(need[k]) - 1) for k in live[first == rough])
            bound = self._above(cut_value.numerator, cut_value.denominator)  # values above the cut
            values, cats, ys = self._values(bound, need, largest=False)
            found = _exact_rank(values, cats, ys, extra - 1, self, largest=False)  # increasing already
        self._tops[w] = found
        return found

    def _values(self, start: np.ndarray, stop: np.ndarray, largest: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every value y in [start, stop) of each competitor, sorted (decreasing when ``largest``) as floats, with
        its competitor and y."""
        counts = np.asarray(stop - start, dtype=np.int64)
        some = np.nonzero(counts > 0)[0]
        counts = counts[some]
        cats = np.repeat(some, counts)
        ys = np.asarray(np.repeat(start[some], counts), dtype=np.int64) + (
            np.arange(len(cats)) - np.repeat(np.cumsum(counts) - counts, counts))
        values = self.sf[cats] / (self.nf[cats] + ys)
        order = np.argsort(-values if largest else values, kind="stable")
        return values[order], cats[order], ys[order]

    def window(self, a: int, b: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        """Ladder values of ranks a+1..b+1 and around them, in decreasing order, with their competitor and y, and
        the number of values above them all: M(w) is ``values[w - offset]`` for a <= w <= b."""
        high, low = self.top(a), self.top(b)
        start = self._above(high.numerator, high.denominator)
        stop = self._above(low.numerator, low.denominator) + 1
        values, cats, ys = self._values(start, stop, largest=True)
        return values, cats, ys, int(np.asarray(start, dtype=object).sum())


def _exact_rank(keys: np.ndarray, cats: np.ndarray, ys: np.ndarray, position: int, ladder: _Ladder,
                largest: bool) -> Fraction:
    """The exact value at ``position`` of values sorted as floats (``keys``: the values, or minus them when
    ``largest``, increasing): rounding keeps order, so only the values that round to the same float as it can be
    out of order; those are put in exact order."""
    first = int(np.searchsorted(keys, keys[position], side="left"))
    last = int(np.searchsorted(keys, keys[position], side="right"))
    if last - first == 1:
        return ladder.value(int(cats[position]), int(ys[position]))
    tied = sorted((ladder.value(int(c), int(y)) for c, y in zip(cats[first:last], ys[first:last])), reverse=largest)
    return tied[position - first]


def _best_spread(ladder: _Ladder, n_g: int, s_g: int, unknown: int) -> Fraction:
    """max over w = 0..U of c(U - w) / M(w), c(t) = (s_g + t) / (n_g + t): exactly, searching only the w whose
    log-concave upper bound c(U - w) / M_c(w) reaches the best value found at its maximiser."""

    def bound(w: np.ndarray) -> np.ndarray:
        t = unknown - w
        return ((s_g + t) / (n_g + t)) / ladder.level(w)

    def exact(w: int) -> Fraction:
        t = unknown - w
        return Fraction(s_g + t, n_g + t) / ladder.top(w)

    lo, hi = 0, unknown  # ternary search of the (strictly log-concave) bound's maximiser
    while hi - lo > 2:
        third = (hi - lo) // 3
        left, right = bound(np.array([lo + third, hi - third], dtype=float))
        if left < right:
            lo = lo + third + 1
        else:
            hi = hi - third
    tried = {w for w in range(max(0, lo - 1), min(unknown, hi + 1) + 1)} | {0, unknown}
    best, at = max((exact(w), w) for w in tried)
    if best >= 1:
        return Fraction(1)
    floor = float(best) * (1 - _SLACK)

    def reaches(w: int) -> bool:
        return bool(bound(np.array([w], dtype=float))[0] * (1 + _SLACK) >= floor)

    first, last = _edge(0, at, reaches, lower=True), _edge(at, unknown, reaches, lower=False)
    for a in range(first, last + 1, _CHUNK):
        b = min(last, a + _CHUNK - 1)
        values, cats, ys, offset = ladder.window(a, b)
        w = np.arange(a, b + 1)
        t = (unknown - w).astype(float)
        tops = values[w - offset]
        keys = -values
        ratio = ((s_g + t) / (n_g + t)) / tops
        peak = float(ratio.max())
        for i in np.nonzero(ratio >= peak * (1 - _CLOSE))[0]:
            top = _exact_rank(keys, cats, ys, int(w[i]) - offset, ladder, largest=True)
            value = Fraction(s_g + unknown - int(w[i]), n_g + unknown - int(w[i])) / top
            best = max(best, value)
    return best


def _edge(lo: int, hi: int, reaches: Callable[[int], bool], lower: bool) -> int:
    """The first (lower) or last w in [lo, hi] where ``reaches`` holds, it holding at hi (lower) or lo (not):
    the set where it holds is an interval (a superlevel set of a log-concave function)."""
    while lo < hi:
        mid = (lo + hi) // 2 if lower else (lo + hi + 1) // 2
        if reaches(mid):
            hi, lo = (mid, lo) if lower else (hi, mid)
        else:
            lo, hi = (mid + 1, hi) if lower else (lo, mid - 1)
    return lo


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
