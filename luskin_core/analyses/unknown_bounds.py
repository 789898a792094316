"""Best- and worst-case gaps and impact ratios over the rows whose group is unknown (``luskin audit --bounds``).

An audit by the values of a column keeps the rows with no value as the group "Unknown"; its gaps and
impact ratios compare only the known groups. Those rows belong to some group: if they all belonged to
the compared group or the reference, in the worst and the best way, how far could each comparison move?
Per cell, the U unknown rows (T of them with the counted outcome) are placed; the reference is held
fixed (the audit's). Each row moved into a group moves its share one way only, so the extremes put every
row that lowers a share into the group and every row that raises one into the reference (or the other
way round), with nothing left to the other groups: the bounds are attained, hence sharp.

For an adverse outcome the impact ratio compares favourable shares, as the audit's does.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from luskin_core.formatting import format_number, format_points


@dataclass(frozen=True)
class GapBound:
    """One comparison's gap and impact ratio, and their ranges over the cell's unknown rows."""

    group: str
    cell: str | None
    reference: str
    unknown_n: int
    unknown_positives: int
    difference: float | None
    difference_low: float | None
    difference_high: float | None
    impact_ratio: float | None
    impact_ratio_low: float | None
    impact_ratio_high: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _share(k: int, n: int) -> float | None:
    return k / n if n else None


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None or b == 0 else a / b


def _minus(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def gap_bounds(result: Any, unknown: str = "Unknown") -> tuple[GapBound, ...]:
    """Per judged comparison, the gap and impact ratio with the unknown rows of its cell placed at the extremes."""
    adverse = result.spec.direction.adverse
    unknowns = {c.cell: (c.n, c.positives) for c in result.comparisons if c.group == unknown}
    out = []
    for c in result.comparisons:
        if c.is_reference or c.group == unknown:
            continue
        u, t = unknowns.get(c.cell, (0, 0))
        k, n, rk, rn = c.positives, c.n, c.reference_positives, c.reference_n
        low = _minus(_share(k, n + u - t), _share(rk + t, rn + t))  # the group gets every row without the outcome
        high = _minus(_share(k + t, n + t), _share(rk, rn + u - t))
        f, fr, good = n - k, rn - rk, u - t  # favourable counts, for the impact ratio
        if not adverse:
            f, fr, good = k, rk, t
        ratio_low = _ratio(_share(f, n + u - good), _share(fr + good, rn + good))
        ratio_high = _ratio(_share(f + good, n + good), _share(fr, rn + u - good))
        out.append(GapBound(c.group, c.cell, c.reference, u, t, c.difference, low, high, c.impact_ratio,
                            ratio_low, ratio_high))
    return tuple(out)


def bound_sentences(bounds: tuple[GapBound, ...]) -> list[str]:
    """The ranges in words, one sentence per comparison with unknown rows in its cell."""
    out = []
    for b in bounds:
        if not b.unknown_n:
            continue
        where = f" in {b.cell}" if b.cell else ""
        out.append(f"{b.group} against {b.reference}{where}: if the {b.unknown_n:,} rows of unknown group belonged to "
                   f"either, the gap would lie between {format_points(b.difference_low, signed=True)} and "
                   f"{format_points(b.difference_high, signed=True)} points (measured "
                   f"{format_points(b.difference, signed=True)}) and the impact ratio between "
                   f"{format_number(b.impact_ratio_low, 2)} and {format_number(b.impact_ratio_high, 2)} (measured "
                   f"{format_number(b.impact_ratio, 2)}), the reference held fixed.")
    if not out:
        out.append("No row has an unknown group, so the gaps and impact ratios stand as measured.")
    return out


__all__ = ["GapBound", "bound_sentences", "gap_bounds"]
