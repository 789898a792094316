"""What an Ibis source knows about its columns (:class:`~luskin_core.counting.plan.Facts`), asked of its engine.

One scan where it can be: whether a numeric group or strata column has at most 20 values (taken
value by value) is first read from the table's first rows (a LIMIT query, which reads a row group
or two); a column showing more is binned (its quantiles take a scan). A column showing at most 20
values is assumed to have no others (:attr:`EngineFacts.assumed`), and the counting query checks the
assumption on every row of the population (see :meth:`luskin_core.counting.ibis_source.Source.count`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from luskin_core.counting.ibis_rules import conjunction_expr, is_numeric, load_ibis, plain_value
from luskin_core.counting.plan import FactsBase
from luskin_core.spec.conditions import Condition

if TYPE_CHECKING:
    import pandas as pd

    from luskin_core.counting.ibis_source import Source
else:  # imported on first use: a file's audit on the command line never needs it
    from luskin_core._lazy import pandas as pd

# Rows read from the top of the table to see the values of numeric group and strata columns.
LOOK_ROWS = 50_000


class EngineFacts(FactsBase):
    """:class:`~luskin_core.counting.plan.Facts` of a source, over the audited population."""

    def __init__(self, source: Source, population: Sequence[Condition] = ()) -> None:
        self.source = source
        table = source.table
        self.population = tuple(population)
        self.rows = table.filter(conjunction_expr(table, population)) if population else table
        self.schema = table.schema()
        self._distinct: dict[str, int] = {}
        self._seen: dict[str, list[Any]] = {}
        # Columns whose distinct count was taken from the first rows: their values, to be checked.
        self.assumed: dict[str, list[Any]] = {}

    def look(self, columns: Sequence[str], rows: int | None = None) -> bool:
        """Read the first rows (one LIMIT query): whether the table has any, and the values of ``columns`` there.

        Integer and floating columns only (other numeric types are counted exactly); values of rows
        outside the population are not looked at.
        """
        t = self.source.table
        ibis = load_ibis()
        looked = [c for c in columns if self.schema[c].is_integer() or self.schema[c].is_floating()]
        exprs: dict[str, Any] = {f"k{i}": t[c] for i, c in enumerate(looked)}
        exprs["p"] = conjunction_expr(t, self.population) if self.population else ibis.literal(True)
        frame = self.source._run(t.select(**exprs).limit(int(rows or LOOK_ROWS) if looked else 1), fetch=True)
        if len(frame) == 0:
            return False
        inside = frame.loc[frame["p"].astype(bool)]
        for i, column in enumerate(looked):
            values = [plain_value(v) for v in pd.unique(inside[f"k{i}"].dropna())]
            # an integer column with missing values arrives as floats
            self._seen[column] = [int(v) for v in values] if self.schema[column].is_integer() else values
        return True

    def prefetch(self, columns: Sequence[str], *, with_total: bool) -> None:
        """Distinct counts of ``columns`` (and the table's row count) in one aggregation."""
        if not columns and (not with_total or self.source._n_rows is not None):
            return
        metrics = {f"d{i}": self.rows[c].nunique() for i, c in enumerate(columns)}
        if with_total:
            metrics["total"] = self.rows.count()
        frame = self.source._run(self.rows.aggregate(**metrics), fetch=True)
        for i, column in enumerate(columns):
            self._distinct[column] = int(frame[f"d{i}"].iloc[0])
            self.assumed.pop(column, None)
        if with_total:
            self.source._n_rows = int(frame["total"].iloc[0])

    def settle(self, columns: Sequence[str]) -> None:
        """Count the distinct values of ``columns`` exactly (their first rows' values are no longer assumed)."""
        self.prefetch(columns, with_total=False)

    def resolve(self, name: str, role: str) -> str:
        return self.source._resolve(name, role)

    def is_numeric(self, column: str) -> bool:
        return is_numeric(self.schema[column])

    def is_integer(self, column: str) -> bool:
        return bool(self.schema[column].is_integer())

    def n_distinct(self, column: str, cap: int) -> int:
        if column not in self._distinct and column in self._seen:
            seen = self._seen[column]
            if len(seen) >= cap:
                return cap  # the first rows already show cap values: the exact count is at least that
            self.assumed[column] = seen  # no more values than seen, if the counting query finds no other
            return len(seen)
        if column not in self._distinct:
            self._distinct[column] = int(self.source._run(self.rows[column].nunique()))
        return min(self._distinct[column], cap)

    def quantiles(self, column: str, probs: Sequence[float]) -> list[float]:
        present = self.rows.filter(self.rows[column].notnull())
        exprs = {f"q{i}": present[column].cast("float64").quantile(float(p)) for i, p in enumerate(probs)}
        if not self.source.engine.exact_quantiles:
            return self._exact_quantiles(column, probs)
        frame = self.source._run(present.aggregate(**exprs), fetch=True)
        out = []
        for i in range(len(probs)):
            value = frame[f"q{i}"].iloc[0] if len(frame) else None
            out.append(math.nan if value is None or pd.isna(value) else float(value))
        return out

    def _exact_quantiles(self, column: str, probs: Sequence[float]) -> list[float]:
        """Linear-interpolation quantiles from the order statistics (engines without an exact quantile)."""
        present = self.rows.filter(self.rows[column].notnull()).select(v=self.rows[column].cast("float64"))
        n = int(self.source._run(present.count()))
        if n == 0:
            return [math.nan for _ in probs]
        positions = sorted({i for p in probs for i in (math.floor((n - 1) * float(p)), math.ceil((n - 1) * float(p)))})
        ranked = present.mutate(rn=load_ibis().row_number().over(order_by="v"))
        picked = self.source._run(ranked.filter(ranked.rn.isin(positions)).select("rn", "v"), fetch=True)
        at = dict(zip(picked["rn"].astype(int), picked["v"].astype(float)))
        out = []
        for p in probs:
            h = (n - 1) * float(p)
            lo, hi = math.floor(h), math.ceil(h)
            a, b = at[lo], at[hi]
            t = h - lo  # numpy's interpolation, bit for bit (it works from the upper end past the middle)
            out.append(a if hi == lo else (b - (b - a) * (1 - t) if t >= 0.5 else a + (b - a) * t))
        return out
