"""What may make an adjusted gap misleading, in words (never a traceback).

* Little overlap: a control whose values differ strongly between a group and the reference
  (standardised difference above 0.25 in absolute value, the usual rule of thumb), or where many
  of a group's rows lie outside the reference's range (numbers) or in levels the reference never
  has (categories): the model then compares rows that have no counterpart and extrapolates.
* A proxy: a control that alone predicts the group for more than 90% of rows and removes at
  least half of the errors of guessing the largest group (e.g. ZIP code for race): holding it
  equal holds the group itself nearly equal and hides the gap. A numeric control predicts by
  its bins (:func:`proxy_levels`), counted alike in memory and by an engine.
* Perfect prediction (levels whose rows all have the same outcome) and a fit that did not
  converge.
* Too few rows (or, for yes/no, too few of the rarer outcome) per coefficient: fewer than 10.
Single-valued controls are reported where the design leaves them out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from luskin_core.analyses.adjust_model import category_codes, level_prefix
from luskin_core.formatting import format_percent

if TYPE_CHECKING:
    from luskin_core.analyses.adjust_model import Cells, Design, Fit

SMD_LIMIT = 0.25
OUTSIDE_LIMIT = 0.05
PROXY_ACCURACY = 0.90
PER_PARAMETER = 10
FINE_BINS = 1000  # a numeric control's equal-width bins for the proxy check
FEW_BINS = 50  # at most this many occupied: each its own level; more: merged into PROXY_BINS
PROXY_BINS = 20


def diagnose(cells: Cells, design: Design, fit: Fit, n: np.ndarray, k: np.ndarray, groups: Sequence[str], *,
             linear: bool, n_parameters: int | None = None, fine: Mapping[str, np.ndarray] | None = None) -> list[str]:
    """Every warning about the fit, one sentence each (``n_parameters``: the model's, where ``design`` holds part;
    ``fine``: rows per (fine bin, group) of numeric controls an engine counted, see :func:`fine_bins`)."""
    out: list[str] = []
    frame = cells.frame
    codes = design.group_code
    ref = codes == 0
    for name in cells.numeric:
        if name not in design.control_cols:
            continue
        x = frame[name].to_numpy(dtype=float)
        m_r, v_r = _moments(x[ref], n[ref])
        lo, hi = x[ref].min(), x[ref].max()
        per_group = []
        for gi, g in enumerate(groups[1:], start=1):
            mine = codes == gi
            if not mine.any():
                continue
            m_g, v_g = _moments(x[mine], n[mine])
            share = float(n[mine][(x[mine] < lo) | (x[mine] > hi)].sum() / n[mine].sum())
            g_lo, g_hi = x[mine].min(), x[mine].max()
            back = float(n[ref][(x[ref] < g_lo) | (x[ref] > g_hi)].sum() / n[ref].sum())
            per_group.append((g, m_g, v_g, share, back))
        out += numeric_overlap(name, groups[0], m_r, v_r, per_group, curve=name in cells.splines)
    for name in cells.categorical:
        if name not in design.control_cols:
            continue
        table = _table(category_codes(frame[name])[0], codes, n, len(groups))
        totals = table.sum(axis=0)
        if totals[0] == 0:
            continue
        with np.errstate(divide="ignore", invalid="ignore"):
            shares = table / totals
        ref_share = shares[:, 0]
        outside, far = [], []
        for gi, g in enumerate(groups[1:], start=1):
            if totals[gi] == 0:
                continue
            s = shares[:, gi]
            alone = float(s[ref_share == 0].sum())
            back = float(ref_share[s == 0].sum())
            if alone > OUTSIDE_LIMIT or back > OUTSIDE_LIMIT:
                outside.append(f"{format_percent(alone, 0)} of {g} in levels {groups[0]} never has and "
                               f"{format_percent(back, 0)} of {groups[0]} in levels {g} never has")
            p = (s + ref_share) / 2
            with np.errstate(divide="ignore", invalid="ignore"):
                smd = np.where(p * (1 - p) > 0, (s - ref_share) / np.sqrt(p * (1 - p)), 0.0)
            if np.max(np.abs(smd)) > SMD_LIMIT:
                far.append(g)
        if far:
            out.append(f"Little overlap on '{name}': the share of some of its levels differs from {groups[0]}'s by more "
                       f"than {SMD_LIMIT} standard deviations for {', '.join(far[:6])}.")
        if outside:
            out.append(f"On '{name}', {'; '.join(outside[:4])}: those rows have no counterpart to compare with.")
    out += _proxies(cells, design, n, fine or {})
    if not linear:
        out += _separation(cells, design, fit, n, k)
    if not fit.converged:
        out.append(f"The model did not settle after {fit.iterations} steps, so its numbers may not be final: use fewer "
                   "or coarser controls.")
    p = n_parameters or design.X.shape[1]
    total = float(n.sum())
    if linear:
        per = total / p
        if per < PER_PARAMETER:
            out.append(f"Only {per:.1f} rows per coefficient ({total:,.0f} rows, {p:,} coefficients; at least "
                       f"{PER_PARAMETER} are advised): the estimates are unstable. Use fewer controls or levels.")
    else:
        rare = min(float(k.sum()), total - float(k.sum()))
        per = rare / p
        if per < PER_PARAMETER:
            out.append(f"Only {per:.1f} rows of the rarer outcome per coefficient ({rare:,.0f} such rows, {p:,} "
                       f"coefficients; at least {PER_PARAMETER} are advised): the estimates are unstable. Use fewer "
                       "controls or levels.")
    return out


def numeric_overlap(name: str, reference: str, m_r: float, v_r: float,
                    per_group: Sequence[tuple[str, float, float, float, float]], curve: bool = False) -> list[str]:
    """Little overlap on a numeric control, in words.

    ``per_group``: (group, mean, variance, share of its rows outside the reference's range, share of
    the reference's rows outside its range); ``curve``: the control is fitted as a curve, not a line.
    """
    far, outside, out = [], [], []
    for g, m_g, v_g, share, back in per_group:
        pooled = np.sqrt((v_g + v_r) / 2)
        smd = (m_g - m_r) / pooled if pooled > 0 else 0.0
        if abs(smd) > SMD_LIMIT:
            far.append(f"{g} {smd:+.2f}")
        if share > OUTSIDE_LIMIT or back > OUTSIDE_LIMIT:
            outside.append(f"{format_percent(share, 0)} of {g} outside the {reference} range and "
                           f"{format_percent(back, 0)} of {reference} outside the {g} range")
    if far:
        out.append(f"Little overlap on '{name}': its standardised difference from {reference} is "
                   f"{', '.join(far[:6])} (above {SMD_LIMIT} in size), so the model compares rows that differ a "
                   f"lot and leans on its {'curve' if curve else 'straight line'} to bridge them.")
    if outside:
        out.append(f"On '{name}', {'; '.join(outside[:4])}: the adjusted gap extrapolates for those rows.")
    return out


def _table(level: np.ndarray, codes: np.ndarray, n: np.ndarray, n_groups: int) -> np.ndarray:
    """Rows per (level code, group): a levels x groups array of summed weights."""
    levels = int(level.max()) + 1 if len(level) else 0
    flat = np.bincount(level * n_groups + codes, weights=n, minlength=levels * n_groups)
    return flat.reshape(levels, n_groups)


def _moments(x: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    total = float(w.sum())
    mean = float(np.einsum("i,i->", w, x)) / total  # einsum: no BLAS threads on a busy machine
    d = x - mean
    var = float(np.einsum("i,i,i->", w, d, d)) / max(total - 1, 1.0)
    return mean, var


def fine_bin_bounds(lo: float, hi: float) -> tuple[float, float]:
    """The start and scale of a numeric control's fine bins: ``floor((x - start) * scale)``, held in 0..999.

    Both are rounded to 12 significant digits, so an engine reads them from SQL as exactly the
    doubles numpy uses (a 17-digit literal can be read as a decimal and land one unit off), and
    every engine and the in-memory path put each value in the same bin.
    """
    return float(f"{lo:.12g}"), float(f"{FINE_BINS / (hi - lo):.12g}")


def fine_bins(x: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Each value's fine bin (as an engine computes it from :func:`fine_bin_bounds`)."""
    start, scale = fine_bin_bounds(lo, hi)
    return np.clip(np.floor((x - start) * scale), 0, FINE_BINS - 1).astype(np.int64)


def proxy_levels(fine: np.ndarray) -> np.ndarray:
    """Rows per (level, group) of a numeric control from its rows per (fine bin, group).

    The rule, one for every path: the control's range cut into 1,000 bins of equal width; where at
    most 50 hold rows (a code or a count), each is its own level; else neighbouring bins are merged
    into 20 levels of about equal weight, a bin going where the middle of its rows falls. Ties stay
    together and no row order matters, so an engine that counts the fine bins gets the same levels.
    """
    rows = fine.sum(axis=1)
    occupied = fine[rows > 0]
    if len(occupied) <= FEW_BINS:
        return occupied
    total = float(rows.sum())
    middle = (np.cumsum(rows) - rows / 2) / total
    level = np.minimum((middle * PROXY_BINS).astype(np.int64), PROXY_BINS - 1)
    out = np.zeros((PROXY_BINS, fine.shape[1]))
    np.add.at(out, level, fine)
    return out


def _proxies(cells: Cells, design: Design, n: np.ndarray, fine: Mapping[str, np.ndarray]) -> list[str]:
    """Controls that alone predict the group for most rows (majority group per level or per bin).

    ``fine``: numeric controls whose fine bins an engine counted (their rows are not in ``cells``).
    """
    frame = cells.frame
    codes = design.group_code
    n_groups = int(codes.max()) + 1
    total = float(n.sum())
    base = float(np.bincount(codes, weights=n).max()) / total
    tables: list[tuple[str, np.ndarray]] = []
    for name in cells.numeric:
        x = frame[name].to_numpy(dtype=float)
        if name in design.control_cols and x.min() < x.max():
            tables.append((name, proxy_levels(_table(fine_bins(x, float(x.min()), float(x.max())), codes, n,
                                                     n_groups))))
    tables += [(name, proxy_levels(table)) for name, table in fine.items()]
    for name in cells.categorical:
        if name in design.control_cols:
            tables.append((name, _table(category_codes(frame[name])[0], codes, n, n_groups)))
    out = []
    for name, table in tables:
        accuracy = float(table.max(axis=1).sum()) / total
        gain = (accuracy - base) / (1 - base) if base < 1 else 0.0
        if accuracy > PROXY_ACCURACY and gain >= 0.5:
            out.append(f"'{name}' alone tells the group of {format_percent(accuracy, 0)} of rows (guessing the largest "
                       f"group is right for {format_percent(base, 0)}): it stands in for the group, so holding it equal "
                       "can hide the very gap being audited. Consider leaving it out.")
    return out


def _separation(cells: Cells, design: Design, fit: Fit, n: np.ndarray, k: np.ndarray) -> list[str]:
    """Levels whose rows all have the same outcome: their coefficients run off to infinity."""
    frame = cells.frame
    found = []
    for name in cells.categorical:
        if name not in design.control_cols:
            continue
        level, words = category_codes(frame[name])
        rows = np.bincount(level, weights=n, minlength=len(words))
        positives = np.bincount(level, weights=k, minlength=len(words))
        for i in sorted(np.flatnonzero((positives == 0) | (positives == rows)), key=lambda i: words[i]):
            outcome = "positive" if positives[i] == rows[i] else "negative"
            found.append(f"{level_prefix(name, cells.binned)}{words[i]} ({int(rows[i]):,} rows, all {outcome})")
    if not found:
        return []
    return [f"Perfect prediction: every row has the same outcome where {'; '.join(found[:4])}"
            + (f" and {len(found) - 4} more" if len(found) > 4 else "")
            + ". Those levels' coefficients have no finite value; the adjusted gaps still use their (near-certain) "
              "predictions, but consider merging rare levels."]
