"""The cells of an adjusted-gap model made where the data lives (DuckDB, PostgreSQL, Spark through Ibis).

One GROUP BY over (group, controls, cluster) with the row count, the sum of the outcome and its
sum of squares gives the cell table :func:`luskin_core.adjust.adjust_cells` fits: with
categorical (or few-valued numeric) controls it is small and the fit is exactly the row-level
one. Numeric controls with many distinct values make nearly one cell per row; then the engine
bounds the cells by the columns' distinct counts (one scan) and, past ``MAX_CELLS``, a seeded
Bernoulli sample of about that many rows is aggregated instead, and the result says so (measured in benchmarks/bench_adjust.py: per-iteration aggregations of a
logistic fit cost a scan of the table each, about 7 scans).
The group keys, the rows left out and the outcome are the audit's own expressions
(:mod:`luskin_core.sources`), so the groups are exactly the audit's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .adjust import MAX_CELLS, Cells, _number_text
from .counts import CROSS, UNKNOWN
from .errors import LuskinError
from .formatting import format_percent
from .sources import Source, _checks, _ibis, _is_numeric, _mask, _outcome_expr, _part_expr
from .spec import AuditSpec


def cells_from_source(source: Source, spec: AuditSpec, controls: Sequence[str] = (), categorical: Sequence[str] = (),
                      cluster: str | None = None, *, seed: int = 0, max_cells: int | None = None) -> Cells:
    """The cell table of ``source``, aggregated by the engine (a seeded sample when the cells are too many)."""
    plan = source.plan(spec)
    names = [source._resolve(c, "control") for c in controls]
    forced = {source._resolve(c, "control") for c in categorical}
    names += [c for c in forced if c not in names]
    group_cols = {p.column.lower() for p in plan.group_parts} or {plan.protected.column.lower()}  # type: ignore[union-attr]
    for name in names:
        if name.lower() == plan.outcome.lower():
            raise LuskinError(f"'{name}' is the outcome, so it cannot also be a control.")
        if name.lower() in group_cols:
            raise LuskinError(f"'{name}' forms the groups, so it cannot also be a control.")
    cluster_name = source._resolve(cluster, "cluster") if cluster else None
    schema = source.table.schema()
    numeric = [c for c in names if _is_numeric(schema[c]) and c not in forced]
    cats = [c for c in names if c not in numeric]
    linear = spec.outcome_type == "score"
    total = source.n_rows()
    # The design holds about (groups + numeric + levels) columns; the cells must fit beside it.
    limit = max_cells or MAX_CELLS
    needed = [plan.outcome, *names, *([cluster_name] if cluster_name else [])]
    needed += [p.column for p in plan.group_parts] + ([plan.protected.column] if plan.protected else [])
    needed += [c.column for c in (*plan.filters, *plan.population)] + ([plan.prediction] if plan.prediction else [])
    needed = list(dict.fromkeys(needed))
    cells_expr = _cells_expr(_light_view(source._raw, needed), plan, numeric, cats, cluster_name, linear)
    note = ""
    if numeric and total > limit:
        # Would the cells be too many? The columns' distinct counts bound them (one scan, no GROUP BY of millions).
        t = _light_view(source._raw, needed)
        distinct = source._run(t.aggregate(**{f"d{i}": t[c].approx_nunique() for i, c in enumerate(numeric + cats)}),
                               fetch=True).iloc[0]
        bound = 1.0
        for value in distinct:
            bound = min(bound * max(float(value), 1.0), float(total))
        if bound > limit:
            fraction = min(1.0, limit / max(total, 1))
            sampled = _light_view(source._raw.sample(fraction, seed=seed), needed)
            cells_expr = _cells_expr(sampled, plan, numeric, cats, cluster_name, linear)
            note = (f"The numeric controls take too many distinct values to fit every one of the {total:,} rows from "
                    f"the engine's table, so a seeded random sample of about {format_percent(fraction)} of them "
                    f"(seed {seed}) is "
                    "fitted: its intervals are wider than the full data's would be.")
    raw = source._run(cells_expr, fetch=True)
    frame = _labelled(raw, plan, spec, numeric, cats, cluster_name)
    complete = frame.pop("_complete").astype(bool).to_numpy()
    dropped = int(frame.loc[~complete, "n"].sum())
    frame = frame.loc[complete].reset_index(drop=True)
    if not linear:
        frame["y2"] = frame["k"]
    return Cells(frame, tuple(numeric), tuple(cats), cluster_name, linear, dropped, int(frame["n"].sum()), note)


def _light_view(raw: Any, columns: Sequence[str]) -> Any:
    """Only the columns the model needs, a floating NaN read as missing (as pandas reads it).

    ``isnan`` is a cheap test per value; the sources' general view casts every float of the table
    to text to find NaN, which took 68 s of a 70 s query over 10M rows with three float controls.
    """
    ibis = _ibis()
    schema = raw.schema()
    out = {}
    for name in columns:
        col = raw[name]
        if schema[name].is_floating():
            col = ibis.ifelse(col.isnan().fill_null(False), ibis.null().cast(schema[name]), col)
        out[name] = col
    return raw.select(**out)


def _cells_expr(t: Any, plan: Any, numeric: Sequence[str], cats: Sequence[str], cluster: str | None,
                linear: bool) -> Any:
    ibis = _ibis()
    keep = ibis.literal(True)
    for _, failing in _checks(t, plan):
        keep = keep & ~failing
    rows = t.filter(keep)
    keys: dict[str, Any] = {}
    if plan.protected is not None:
        keys["_g0"] = _mask(rows, plan.protected)
    else:
        for i, part in enumerate(plan.group_parts):
            keys[f"_g{i}"] = _part_expr(rows, part)
    complete = ibis.literal(True)
    for i, name in enumerate(numeric):
        keys[f"_x{i}"] = rows[name].cast("float64")
        complete = complete & rows[name].notnull()
    for i, name in enumerate(cats):
        keys[f"_c{i}"] = rows[name]
    if cluster is not None:
        keys["_cluster"] = rows[cluster].cast("string")
    keys["_complete"] = complete
    if linear:
        y = rows[plan.outcome].cast("float64")
    else:
        y = _outcome_expr(rows, plan).cast("int32")
    selected = rows.select(**keys, _y=y)
    metrics: dict[str, Any] = {"n": selected.count(), "k": selected._y.sum()}
    if linear:
        metrics["y2"] = (selected._y * selected._y).sum()
    return selected.group_by(list(keys)).aggregate(**metrics)


def _labelled(raw: pd.DataFrame, plan: Any, spec: AuditSpec, numeric: Sequence[str], cats: Sequence[str],
              cluster: str | None) -> pd.DataFrame:
    """The engine's raw keys turned into the in-memory cell table's columns and labels."""
    out: dict[str, Any] = {}
    if plan.protected is not None:
        inside = raw["_g0"].astype(bool).to_numpy()
        out["group"] = np.where(inside, spec.group_name, spec.other_name).astype(object)
    else:
        labels = None
        for i, part in enumerate(plan.group_parts):
            values = raw[f"_g{i}"].astype(object).where(raw[f"_g{i}"].notna(), None)
            if part.numeric and part.kind == "value":
                values = values.map(lambda v: None if v is None else float(v))
            piece = np.array([part.label(v) for v in values], dtype=object)
            labels = piece if labels is None else labels + CROSS + piece
        out["group"] = labels
    for i, name in enumerate(numeric):
        out[name] = pd.to_numeric(raw[f"_x{i}"]).astype(float).to_numpy()
    for i, name in enumerate(cats):
        series = raw[f"_c{i}"]
        if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
            codes, uniques = pd.factorize(series, use_na_sentinel=True)
            words = np.array([_number_text(v) for v in uniques] + [UNKNOWN], dtype=object)
            text = pd.Series(words[np.where(codes < 0, len(uniques), codes)])
        else:
            text = series.astype("string").astype(object).where(series.notna(), UNKNOWN)
        out[name] = np.asarray(text, dtype=object)
    if cluster is not None:
        out["cluster"] = np.asarray(raw["_cluster"].astype(object).where(raw["_cluster"].notna(), UNKNOWN),
                                    dtype=object)
    out["_complete"] = raw["_complete"].fillna(False).to_numpy()
    out["n"] = pd.to_numeric(raw["n"]).astype(float).to_numpy()
    out["k"] = pd.to_numeric(raw["k"]).astype(float).fillna(0.0).to_numpy()
    if "y2" in raw.columns:
        out["y2"] = pd.to_numeric(raw["y2"]).astype(float).fillna(0.0).to_numpy()
    frame = pd.DataFrame(out)
    if frame.empty:
        raise LuskinError("No row has a value in every control, so nothing can be adjusted.")
    return frame
