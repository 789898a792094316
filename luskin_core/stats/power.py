"""What the data could have shown: the minimum detectable difference and data sufficiency.

A verdict of "within tolerance" or "could be chance" on 40 rows says little: a real gap of 20
points would often go unseen. This module says how large a gap each comparison could detect.

Definition (so that it can be checked): the smallest drop below the reference's rate that a
two-sided test at the 5% level detects with 80% power, for the group's and the reference's
sizes. It is solved on Cohen's h scale (h = 2 asin(sqrt(p1)) - 2 asin(sqrt(p2))), exactly as
statsmodels' ``NormalIndPower`` does: power(h) = Phi(h sqrt(m) - z) + Phi(-h sqrt(m) - z), with
m = 1 / (1/n_group + 1/n_reference) and z the two-sided critical value; then turned back into
a difference of rates at the reference's rate: ``p_ref - sin(asin(sqrt(p_ref)) - h/2)^2``. When
even a drop to 0 could not be detected the difference is None ("no drop could be detected").

Rows needed to see a gap of the tolerance keep the reference's rows as they are and ask how
many rows of the group would give 80% power for a drop of the tolerance below the reference's
rate (None when no number would: the reference itself has too few rows).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import ndtr, ndtri

from luskin_core.formatting import points
from luskin_core.stats.judgement import ALPHA, Judgement

POWER = 0.80


# The normal's tails through scipy.special: scipy.stats costs 0.8 s to import, most of a file's audit
# from the command line (norm.cdf = ndtr, norm.sf(x) = ndtr(-x), norm.isf(p) = -ndtri(p)).
def _isf(p: float) -> float:
    return float(-ndtri(p))


def _pdf(x: Any) -> Any:
    return np.exp(-0.5 * np.square(x)) / math.sqrt(2 * math.pi)


def _critical(alpha: float) -> float:
    return _isf(alpha / 2)


def power_h(h: Any, n1: Any, n2: Any, alpha: float = ALPHA) -> np.ndarray:
    """Power of the two-sided two-sample test of proportions for Cohen's h (NormalIndPower's formula)."""
    h, n1, n2 = (np.asarray(v, dtype=float) for v in (h, n1, n2))
    scale = np.sqrt(1.0 / (1.0 / n1 + 1.0 / n2))
    z = _critical(alpha)
    return ndtr(-(z - h * scale)) + ndtr(-z - h * scale)


def detectable_h(n1: Any, n2: Any, alpha: float = ALPHA, power: float = POWER) -> np.ndarray:
    """The Cohen's h detected with the given power for sizes n1 and n2 (NaN where a size is 0).

    Start from the one-tail solution (z_alpha/2 + z_beta) * se, then Newton steps on the full
    two-tailed power (the other tail changes h by about 1e-6; the steps make it exact).
    """
    n1 = np.asarray(n1, dtype=float)
    n2 = np.asarray(n2, dtype=float)
    ok = (n1 > 0) & (n2 > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        se = np.where(ok, np.sqrt(1.0 / np.where(ok, n1, 1.0) + 1.0 / np.where(ok, n2, 1.0)), np.nan)
    z = _critical(alpha)
    h = (z + _isf(1 - power)) * se
    for _ in range(4):
        a, b = h / se - z, -h / se - z
        f = ndtr(a) + ndtr(b) - power
        slope = (_pdf(a) - _pdf(b)) / se
        h = h - f / slope
    return np.where(ok, h, np.nan)


def h_to_drop(h: Any, reference_rate: Any) -> np.ndarray:
    """The drop below the reference's rate that Cohen's h represents (NaN where no drop reaches h)."""
    h = np.asarray(h, dtype=float)
    p = np.clip(np.asarray(reference_rate, dtype=float), 0.0, 1.0)
    angle = np.arcsin(np.sqrt(p)) - h / 2
    with np.errstate(invalid="ignore"):
        lower = np.sin(np.clip(angle, 0.0, None)) ** 2
    return np.where(angle >= 0, p - lower, np.nan)


def drop_to_h(drop: Any, reference_rate: Any) -> np.ndarray:
    """Cohen's h of a drop below the reference's rate (NaN where the drop passes 0)."""
    p = np.asarray(reference_rate, dtype=float)
    q = p - np.asarray(drop, dtype=float)
    with np.errstate(invalid="ignore"):
        h = 2 * np.arcsin(np.sqrt(np.clip(p, 0, 1))) - 2 * np.arcsin(np.sqrt(np.clip(q, 0, 1)))
    return np.where((q >= 0) & (p <= 1), h, np.nan)


def minimum_detectable_difference(n: Any, reference_n: Any, reference_rate: Any, alpha: float = ALPHA,
                                  power: float = POWER) -> np.ndarray:
    """The smallest drop below the reference's rate detected with 80% power (a fraction; NaN if none)."""
    return h_to_drop(detectable_h(n, reference_n, alpha, power), reference_rate)


def rows_needed(drop: float, reference_n: int, reference_rate: float, alpha: float = ALPHA,
                power: float = POWER) -> int | None:
    """Rows of the group needed to detect ``drop`` below the reference's rate, the reference as it is.

    None when no number of rows would do (the reference alone is too small for that drop).
    """
    h = float(drop_to_h(drop, reference_rate))
    if not math.isfinite(h) or h <= 0 or reference_n <= 0:
        return None
    z, zb = _critical(alpha), _isf(1 - power)
    # 1/n1 + 1/n2 = (h / (z + zb))^2 from the one-tail solution; then walk to the exact integer.
    target = (h / (z + zb)) ** 2 - 1.0 / reference_n
    if target <= 0:
        return None
    n1 = max(1, math.floor(1.0 / target) - 2)
    while float(power_h(h, n1, reference_n, alpha)) < power:
        n1 += 1
        if n1 > 10**9:  # pragma: no cover - unreachable for target > 0
            return None
    while n1 > 1 and float(power_h(h, n1 - 1, reference_n, alpha)) >= power:
        n1 -= 1
    return n1


def tolerance_drop(judgement: Judgement, reference_favourable: float | None) -> float | None:
    """The gap the judgement's bar allows below the reference's favourable share, in points (a fraction)."""
    if reference_favourable is None:
        return None
    if judgement.metric == "ratio":
        return (1.0 - float(judgement.ratio_threshold)) * reference_favourable
    return float(judgement.tolerance)


def power_sentence(group: str, n: int, reference: str, reference_n: int, mdd: float | None,
                   tolerance: float | None) -> str:
    """Whether a gap of the tolerance could have been seen with these sizes, in words."""
    rows = f"With {n:,} {group} rows (and {reference_n:,} {reference})"
    if mdd is None:
        return (f"{rows}, no drop below {reference}'s rate could be detected with 80% power: this is absence "
                "of evidence, not evidence of fairness.")
    if tolerance is not None and mdd > tolerance + 1e-12:
        return (f"{rows}, gaps under {points(mdd)} could not be detected (80% power, 5% level): this is "
                "absence of evidence, not evidence of fairness.")
    tol = "" if tolerance is None else f"; a gap of {points(tolerance)} would have been seen"
    return f"{rows}, gaps of {points(mdd)} or more would be detected 80% of the time{tol}."


# ------------------------------------------------------------------------------------------
# Data sufficiency
# ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Sufficiency:
    """Per group and cell: is it big enough to see a gap of the tolerance, and how many rows would be."""

    group: str
    cell: str | None
    n: int
    reference_n: int
    minimum_detectable_difference: float | None
    tolerance: float | None
    sufficient: bool
    rows_needed: int | None
    verdict: str = ""
    reference: str = ""

    @property
    def too_small(self) -> bool:
        """Could not have seen a gap of the tolerance, and did not find one beyond chance."""
        from luskin_core.stats.verdict import Verdict

        return not self.sufficient and self.verdict != Verdict.BEYOND

    def to_dict(self) -> dict[str, Any]:
        return {"group": self.group, "cell": self.cell, "n": self.n, "reference_n": self.reference_n,
                "minimum_detectable_difference": self.minimum_detectable_difference,
                "tolerance": self.tolerance, "sufficient": self.sufficient, "too_small": self.too_small,
                "rows_needed": self.rows_needed, "verdict": self.verdict}


def sufficiency(comparisons: Sequence[Any], judgement: Judgement) -> tuple[Sufficiency, ...]:
    """One entry per judged comparison of a group of known category (not the reference's own rows, not the groups
    the judgement sets apart), read on the favourable share: a drop below the reference's favourable share."""
    return tuple(sufficiency_of(c.group, c.cell, c.n, c.reference, c.reference_n,
                                judgement.favourable_share(c.reference_rate), judgement, c.verdict)
                 for c in comparisons if not c.is_reference and not judgement.is_unknown(c.group))


def sufficiency_of(group: str, cell: str | None, n: int, reference: str, reference_n: int,
                   reference_favourable: float | None, judgement: Judgement, verdict: str = "") -> Sufficiency:
    """Whether one comparison could see a gap of the judgement's bar below the reference's favourable share."""
    mdd = _finite(minimum_detectable_difference(n, reference_n, reference_favourable
                                                if reference_favourable is not None else np.nan))
    tol = tolerance_drop(judgement, reference_favourable)
    enough = mdd is not None and tol is not None and mdd <= tol + 1e-12
    needed = None
    if not enough and tol is not None and reference_favourable is not None and tol > 0:
        needed = rows_needed(tol, reference_n, reference_favourable)
    return Sufficiency(group, cell, n, reference_n, mdd, tol, enough, needed, verdict, reference)


def sufficiency_lines(items: Sequence[Sufficiency]) -> list[str]:
    """The data-sufficiency summary an audit opens with: which groups are too small, and what would do.

    Too small: the comparison could not have detected a gap of the tolerance (80% power, 5% level)
    and found no gap beyond chance (a gap it did find is judged, however small the group).
    """
    small = [s for s in items if s.too_small]
    if not items:
        return []
    if not small:
        return [("Data sufficiency: every comparison could detect a gap of the tolerance, or found a larger one "
                 "(80% power, 5% level).")]
    # Not "too small to judge": these were judged (within the tolerance, or could be chance); what they lack is
    # the power to have seen a gap of the tolerance, so their verdict is absence of evidence.
    lines = [(f"Data sufficiency: {len(small)} of {len(items)} comparisons could not have detected a gap of the "
              "tolerance (80% power, 5% level) and found none beyond chance, so their verdict is absence of "
              "evidence, not evidence of fairness:")]
    for s in small[:12]:
        where = "" if s.cell is None else f" where {s.cell}"
        seen = ("no drop is detectable" if s.minimum_detectable_difference is None
                else f"detectable gap {points(s.minimum_detectable_difference)}")
        tol = "the tolerance" if s.tolerance is None else points(s.tolerance)
        if s.rows_needed is None:
            need = (f"no number of {s.group} rows would detect {tol}: the reference ({s.reference}, "
                    f"{s.reference_n:,} rows) has too few")
        else:
            need = f"about {s.rows_needed:,} {s.group} rows would be needed to detect {tol}"
        lines.append(f"  - {s.group}{where}: {s.n:,} rows, {seen}; {need}.")
    if len(small) > 12:
        lines.append(f"  - ... and {len(small) - 12} more.")
    return lines


def _finite(x: Any) -> float | None:
    value = float(np.asarray(x).reshape(-1)[0]) if np.size(x) else math.nan
    return value if math.isfinite(value) else None


__all__ = ["Sufficiency", "detectable_h", "drop_to_h", "h_to_drop", "minimum_detectable_difference", "power_h",
           "power_sentence", "rows_needed", "sufficiency", "sufficiency_lines", "sufficiency_of", "tolerance_drop"]
