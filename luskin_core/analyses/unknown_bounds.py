"""Best- and worst-case gaps and impact ratios over the rows whose group is unknown (``luskin audit --bounds``).

An audit by the values of a column keeps the rows with no value as the group "Unknown" (and a value that
spells it, "Decline to self-identify", as a group of its own); the bounds compare only the known groups.
Those rows belong to some group: if they all belonged to the compared group or the reference, in the
worst and the best way, how far could each comparison move?
Per cell, the U unknown rows (T of them with the counted outcome) are placed; the reference is held
fixed (the audit's). Each row moved into a group moves its share one way only, so the extremes put every
row that lowers a share into the group and every row that raises one into the reference (or the other
way round), with nothing left to the other groups: the bounds are attained, hence sharp.

For an adverse outcome the impact ratio compares favourable shares, as the audit's does.

An audit of a protected condition (``--protected "race == Black"``) has no "Unknown" group: a row
whose protected column is missing, or spells "unknown" ("Decline to self-identify"), is left out ("protected
value missing or unknown"). Those rows are counted
per cell by the same counting with the groups taken from the condition's column
(:func:`unknown_rows`); each belongs to the protected group or to the rest, so placing every one in
the group or the reference is every possibility, and the bounds are sharp there too. A row whose
protected value and cell are both unknown has no cell and is in no bound. The series (``luskin audit
--period ... --bounds``) gets the same bounds per period (:func:`series_bounds`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from luskin_core.counting.plan import ALL_ROWS, is_unknown_group
from luskin_core.formatting import format_number, format_points
from luskin_core.spec.unknown import is_unknown_value


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


def unknown_cells(table: Any, named: Collection[str] = (),
                  extra: Collection[str] = ()) -> dict[str | None, tuple[int, int]]:
    """Per cell label (None for one cell of all rows), the rows of a count table whose group is unknown (a part of
    the group's label is "Unknown" or spells it, :func:`~luskin_core.spec.unknown.is_unknown_value`, and is not one
    of the values a protected condition ``named``: :func:`~luskin_core.counting.plan.is_unknown_group`) and how
    many of them have the counted outcome. ``extra``: the values the specification names as unknown."""
    out: dict[str | None, tuple[int, int]] = {}
    for gi, group in enumerate(table.groups):
        if not is_unknown_group(group, named, extra):
            continue
        for ci, label in enumerate(table.cell_labels):
            cell = None if label == ALL_ROWS else label
            n, k = out.get(cell, (0, 0))
            out[cell] = (n + int(table.n[gi, ci]), k + int(table.positives[gi, ci]))
    return out


def condition_spec(spec: Any) -> Any:
    """The specification that counts a protected condition's rows by the values of its column (missing values
    form the group "Unknown"), everything else unchanged."""
    return spec.with_changes(group_by=(spec.protected.column,), protected=None, group_label=None, other_label=None,
                             reference=None, min_group_share=0.0)


def condition_named(spec: Any) -> tuple[str, ...]:
    """The values a protected condition names (``sex == Unknown`` asks about those rows: they are not unknown)."""
    return tuple(str(v) for v in spec.protected.values)


def unknown_rows(data: Any, spec: Any) -> dict[str | None, tuple[int, int]]:
    """Per cell, the rows whose protected value is missing and how many have the counted outcome (for a
    protected condition; {} for an audit by columns, whose unknown rows are its "Unknown" group)."""
    from luskin_core.counting.count_table import CountTable
    from luskin_core.counting.executor import count_plan, executor_for

    if spec.protected is None:
        return {}
    plan, raw = count_plan(executor_for(data), condition_spec(spec))
    table = CountTable.from_raw(raw, plan)
    return unknown_cells(table, condition_named(spec), spec.unknown_values)


def audit_bounds(data: Any, result: Any) -> tuple[GapBound, ...]:
    """:func:`gap_bounds` of an audit of ``data``: the unknown rows are its "Unknown" group, or for a protected
    condition the rows whose protected value is missing (counted again from ``data``)."""
    if result.spec.protected is None:
        return gap_bounds(result)
    return gap_bounds(result, rows=unknown_rows(data, result.spec))


@dataclass(frozen=True)
class PeriodBound:
    """One period's bounds (the series')."""

    period: str
    bounds: tuple[GapBound, ...]

    def to_dict(self) -> list[dict[str, Any]]:
        return [{"period": self.period, **b.to_dict()} for b in self.bounds]


def series_bounds(data: Any, series: Any) -> tuple[PeriodBound, ...]:
    """Per period of a series (:func:`luskin_core.analyses.series.audit_series` of ``data``), the same bounds as
    :func:`audit_bounds`: from each period's "Unknown" group, or, for a protected condition, from the rows of
    that period whose protected value is missing (counted again per period, as the series counts)."""
    if series.overall.spec.protected is None:
        return tuple(PeriodBound(label, gap_bounds(result)) for label, result in zip(series.periods, series.results))
    from luskin_core.analyses.series import period_tables, series_counts

    raw, plan, *_ = series_counts(data, condition_spec(series.overall.spec), series.column, series.every,
                                  series.period_format)
    named = condition_named(series.overall.spec)
    extra = series.overall.spec.unknown_values
    per_period = {label: unknown_cells(table, named, extra)
                  for label, table in period_tables(raw, plan, series.every)}
    return tuple(PeriodBound(label, gap_bounds(result, rows=per_period.get(label, {})))
                 for label, result in zip(series.periods, series.results))


def gap_bounds(result: Any, rows: Mapping[str | None, tuple[int, int]] | None = None) -> tuple[GapBound, ...]:
    """Per judged comparison, the gap and impact ratio with the unknown rows of its cell placed at the extremes.

    The unknown rows of each cell (individuals, with the outcome) are the result's groups of unknown category
    ("Unknown", "Decline to self-identify": :func:`~luskin_core.spec.unknown.is_unknown_value`), or ``rows`` when
    given (a protected condition's missing or unknown values: :func:`unknown_rows`)."""
    adverse = result.spec.direction.adverse
    extra = result.spec.unknown_values
    if rows is None:
        unknowns: dict[str | None, tuple[int, int]] = {}
        for c in result.comparisons:
            if is_unknown_value(c.group, extra):
                n, k = unknowns.get(c.cell, (0, 0))
                unknowns[c.cell] = (n + c.n, k + c.positives)
    else:
        unknowns = dict(rows)
    out = []
    for c in result.comparisons:
        if c.is_reference or is_unknown_value(c.group, extra):
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


def unknown_words(spec: Any) -> str:
    """What the unknown rows are, in words: of unknown group, or with no value of the protected column."""
    return "rows of unknown group" if spec.protected is None else f"rows with no known value of '{spec.protected.column}'"


def bound_sentences(bounds: tuple[GapBound, ...], what: str = "rows of unknown group") -> list[str]:
    """The ranges in words, one sentence per comparison with unknown rows in its cell (``what``: the rows in
    words, :func:`unknown_words`)."""
    out = []
    for b in bounds:
        if not b.unknown_n:
            continue
        where = f" in {b.cell}" if b.cell else ""
        out.append(f"{b.group} against {b.reference}{where}: if the {b.unknown_n:,} {what} belonged to "
                   f"either, the gap would lie between {format_points(b.difference_low, signed=True)} and "
                   f"{format_points(b.difference_high, signed=True)} points (measured "
                   f"{format_points(b.difference, signed=True)}) and the impact ratio between "
                   f"{format_number(b.impact_ratio_low, 2)} and {format_number(b.impact_ratio_high, 2)} (measured "
                   f"{format_number(b.impact_ratio, 2)}), the reference held fixed.")
    if not out:
        out.append("No row has an unknown group, so the gaps and impact ratios stand as measured."
                   if what == "rows of unknown group" else
                   f"There are no {what} in any cell, so the gaps and impact ratios stand as measured.")
    return out


__all__ = ["GapBound", "PeriodBound", "audit_bounds", "bound_sentences", "condition_named", "condition_spec",
           "gap_bounds", "series_bounds", "unknown_cells", "unknown_rows", "unknown_words"]
