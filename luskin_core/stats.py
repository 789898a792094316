"""Confidence intervals and tests for proportions, vectorised so an audit of a million rows is instant."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats as _st

Z95 = float(_st.norm.ppf(0.975))
# Below this expected count in any cell of the 2x2 table the normal approximation is poor,
# so the gap is tested with Fisher's exact test instead (the usual rule of thumb).
SMALL_EXPECTED = 5.0


def wilson_interval(positives: np.ndarray | int, n: np.ndarray | int, z: float = Z95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval for a proportion; NaN where n == 0 (nothing to estimate)."""
    k = np.asarray(positives, dtype=float)
    m = np.asarray(n, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = k / m
        denom = 1 + z * z / m
        centre = (p + z * z / (2 * m)) / denom
        half = z * np.sqrt(p * (1 - p) / m + z * z / (4 * m * m)) / denom
    low = np.where(m > 0, np.clip(centre - half, 0, 1), np.nan)
    high = np.where(m > 0, np.clip(centre + half, 0, 1), np.nan)
    return low, high


def gap_test(k1: int, n1: int, k2: int, n2: int) -> tuple[float | None, str]:
    """Two-sided p-value that two proportions differ, and the name of the test used.

    Pooled two-proportion z-test; Fisher's exact test when an expected count is below 5.
    Returns (None, reason) when a class is empty.
    """
    if n1 <= 0 or n2 <= 0:
        return None, "not computable (a class has no rows)"
    total_pos, total = k1 + k2, n1 + n2
    expected = [n1 * total_pos / total, n1 * (total - total_pos) / total,
                n2 * total_pos / total, n2 * (total - total_pos) / total]
    if min(expected) < SMALL_EXPECTED:
        table = [[k1, n1 - k1], [k2, n2 - k2]]
        return float(_st.fisher_exact(table, alternative="two-sided")[1]), "Fisher's exact test"
    pooled = total_pos / total
    se = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    if se == 0:
        return 1.0, "two-proportion z-test"
    z = (k1 / n1 - k2 / n2) / se
    return float(2 * _st.norm.sf(abs(z))), "two-proportion z-test"


def format_p(p: float | None) -> str:
    """p-value the way a report prints it: 'p < 0.001' or 'p = 0.034'."""
    if p is None or not np.isfinite(p):
        return "p not computable"
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"
