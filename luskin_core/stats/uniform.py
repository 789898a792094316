"""The Uniform Guidelines' statistics of one group against a reference: four-fifths, its shortfall and
flip test, two standard deviations and Fisher's exact test, and the power a comparison had.

Numbers of two counts only, so every comparison carries them (:func:`attach_uniform`, a typed
:class:`UniformStats`) and the regulator tables (:mod:`luskin_core.analyses.regulator`) lay them out. The
power sentence is the narrative's (:func:`luskin_core.analyses.narrative.power_words`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from luskin_core.stats.judgement import Judgement, below


def shortfall(k: int, n: int, ref_k: int, ref_n: int, fraction: tuple[int, int] = (4, 5)) -> int | None:
    """Fewest additional selections in the group for k/n to reach ``fraction`` of ref_k/ref_n (0 if there).

    On favourable counts (a selection is the favourable decision).

    Whole-number arithmetic: the smallest s >= 0 with (k + s) * ref_n * den >= num * ref_k * n.
    None when the group or the reference has no rows.
    """
    if n <= 0 or ref_n <= 0:
        return None
    num, den = fraction
    need = num * ref_k * n - den * ref_n * k  # (k + s) den ref_n >= num ref_k n  <=>  s den ref_n >= need
    if need <= 0:
        return 0
    return -(-need // (den * ref_n))


def flip(k: int, n: int, ref_k: int, ref_n: int) -> bool | None:
    """True when moving one or two people (in the group or the reference) changes the four-fifths verdict.

    On favourable counts, with the one four-fifths arithmetic (:func:`luskin_core.stats.judgement.below`).

    A move turns one person's outcome from selected to not selected or back; up to two moves in
    all, within each side's size. None when the verdict itself is undefined.
    """
    now = below(k, n, ref_k, ref_n)
    if now is None:
        return None
    for d in range(-2, 3):
        for e in range(-2, 3):
            if (d == 0 and e == 0) or abs(d) + abs(e) > 2:
                continue
            k2, r2 = k + d, ref_k + e
            if not (0 <= k2 <= n and 0 <= r2 <= ref_n):
                continue
            after = below(k2, n, r2, ref_n)
            if after is not None and after != now:
                return True
    return False


def two_sd_z(k: int, n: int, ref_k: int, ref_n: int) -> float | None:
    """The pooled two-proportion z statistic (group minus reference), in standard deviations."""
    if n <= 0 or ref_n <= 0:
        return None
    pooled = (k + ref_k) / (n + ref_n)
    var = pooled * (1 - pooled) * (1 / n + 1 / ref_n)
    if var <= 0:
        return None
    return (k / n - ref_k / ref_n) / math.sqrt(var)


def fisher_p(k: int, n: int, ref_k: int, ref_n: int) -> float | None:
    """Fisher's exact test, two-sided."""
    if n <= 0 or ref_n <= 0:
        return None
    from scipy.stats import fisher_exact

    return float(fisher_exact([[k, n - k], [ref_k, ref_n - ref_k]], alternative="two-sided")[1])


@dataclass(frozen=True)
class UniformStats:
    """One comparison's Uniform Guidelines numbers: shortfalls to four-fifths and to parity (people), whether
    moving one or two people flips the four-fifths result, and the smallest drop the data could detect."""

    shortfall_four_fifths: int | None
    shortfall_parity: int | None
    flip: bool | None
    minimum_detectable_difference: float | None


def uniform_stats(comparisons: Sequence[Any], judgement: Judgement) -> list[UniformStats]:
    """Per comparison: shortfall to four-fifths and parity, the flip test, the minimum detectable difference.

    All read the favourable counts (``judgement.favourable``): for an adverse outcome the shortfall counts the
    favourable decisions the group lacks and the detectable difference is a drop below the reference's
    favourable share. The reference's own rows get 0, 0, False and no detectable difference.
    """
    from luskin_core.stats.power import minimum_detectable_difference

    n = np.array([c.n for c in comparisons], dtype=float)
    ref_n = np.array([c.reference_n for c in comparisons], dtype=float)
    ref_rate = np.array([np.nan if c.reference_rate is None else judgement.favourable_share(c.reference_rate)
                         for c in comparisons])
    mdd = minimum_detectable_difference(n, ref_n, ref_rate) if len(comparisons) else np.array([])
    out: list[UniformStats] = []
    for c, m in zip(comparisons, mdd):
        if c.is_reference:
            out.append(UniformStats(0, 0, False, None))
            continue
        k, rk = judgement.favourable(c.positives, c.n), judgement.favourable(c.reference_positives, c.reference_n)
        out.append(UniformStats(
            shortfall_four_fifths=shortfall(k, c.n, rk, c.reference_n),
            shortfall_parity=shortfall(k, c.n, rk, c.reference_n, (1, 1)),
            flip=flip(k, c.n, rk, c.reference_n),
            minimum_detectable_difference=float(m) if math.isfinite(float(m)) else None))
    return out


def attach_uniform(comparisons: list[Any], judgement: Judgement) -> list[Any]:
    """The comparisons with :func:`uniform_stats` attached (called as every comparison is made)."""
    return [replace(c, uniform=u) for c, u in zip(comparisons, uniform_stats(comparisons, judgement))]
