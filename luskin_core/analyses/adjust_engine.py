"""The cells of an adjusted-gap model made where the data lives (DuckDB, PostgreSQL, Spark through Ibis).

One GROUP BY over (group, controls, cluster) with the row count, the sum of the outcome and its
sum of squares gives the cell table :func:`luskin_core.analyses.adjust.adjust_cells` fits: with
categorical (or few-valued numeric) controls it is small and the fit is exactly the row-level
one. Numeric controls with many distinct values make nearly one cell per row; then the engine
bounds the cells by the columns' distinct counts (one scan) and, past ``MAX_CELLS``, the model is
fitted from sums per categorical key instead (:mod:`luskin_core.analyses.adjust_sums`: one pass for a
linear model, one aggregate query per Newton step for a logistic one), still exactly.
The group keys, the rows left out and the outcome are the audit's own expressions
(:mod:`luskin_core.counting.sources`), so the groups are exactly the audit's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from luskin_core.analyses.adjust_model import (
    Cells,
    bin_counts,
    bin_part,
    bin_probs,
    check_curves,
    is_linear,
    number_text,
    score_outcome,
    spline_counts,
    spline_knots,
    spline_note,
    spline_probs,
)
from luskin_core.counting.executor import exact_plan, group_names
from luskin_core.counting.plan import CROSS
from luskin_core.counting.sources import Source, check_exprs, is_numeric, load_ibis, mask_expr, outcome_expr, part_expr
from luskin_core.errors import LuskinError
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.spec.unknown import UNKNOWN


def resolved_controls(source: Source, spec: AuditSpec, controls: Sequence[str], categorical: Sequence[str],
              cluster: str | None, bins: Mapping[str, int] | None = None, splines: Mapping[str, int] | None = None
              ) -> tuple[Any, list[str], list[str], str | None, Any, dict[str, tuple[float, ...]], tuple[str, ...]]:
    """The plan, the numeric and categorical controls, the cluster column, a view of only the needed columns
    (binned controls replaced by their bins' words, as in memory), the knots of controls fitted as curves and
    the binned controls."""
    plan = exact_plan(source, spec)
    if plan.protected is not None:   # "Black", not "Non-White", as the audit names a two-valued column
        plan = replace(plan, names=group_names(source, spec, plan.protected.column))
    binned = {source._resolve(c, "control"): n for c, n in bin_counts(None, bins or {}).items()}
    curved = {source._resolve(c, "control"): n for c, n in spline_counts(None, splines or {}).items()}
    controls = [*controls, *(c for c in dict.fromkeys([*binned, *curved]) if c not in controls)]
    names = [source._resolve(c, "control") for c in controls]
    forced = {source._resolve(c, "control") for c in categorical} | set(binned)
    names += [c for c in forced if c not in names]
    _check_control_names(plan, names)
    cluster_name = source._resolve(cluster, "cluster") if cluster else None
    schema = source.table.schema()
    check_curves(curved, forced - set(binned), binned, lambda name: is_numeric(schema[name]))
    numeric = [c for c in names if is_numeric(schema[c]) and c not in forced]
    cats = [c for c in names if c not in numeric]
    needed = [plan.outcome, *names, *([cluster_name] if cluster_name else [])]
    needed += [p.column for p in plan.group_parts] + ([plan.protected.column] if plan.protected else [])
    needed += [c.column for c in (*plan.filters, *plan.population)] + ([plan.prediction] if plan.prediction else [])
    view = _light_view(source._raw, list(dict.fromkeys(needed)))
    if binned:
        view = view.mutate(**_bin_words(source, plan, view, schema, binned))
    knots = {}
    if curved:
        from luskin_core.counting.sources import EngineFacts

        for name, count in curved.items():
            knots[name] = spline_knots(name, EngineFacts(source, plan.population).quantiles(name, spline_probs(count)))
    return plan, numeric, cats, cluster_name, view, knots, tuple(c for c in cats if c in binned)


def _check_control_names(plan: Any, names: list[str]) -> None:
    """A control named twice, the outcome or a column forming the groups as a control: refused in words."""
    if len({n.lower() for n in names}) != len(names):
        raise LuskinError("A control column is named twice.")
    group_cols = {p.column.lower() for p in plan.group_parts} or {plan.protected.column.lower()}
    for name in names:
        if name.lower() == plan.outcome.lower():
            raise LuskinError(f"'{name}' is the outcome, so it cannot also be a control.")
        if name.lower() in group_cols:
            raise LuskinError(f"'{name}' forms the groups, so it cannot also be a control.")


def _bin_words(source: Source, plan: Any, view: Any, schema: Any, binned: Mapping[str, int]) -> dict[str, Any]:
    """Each binned control as its bins' words (cut at the engine's quantiles, as in memory); text refused."""
    from luskin_core.counting.sources import EngineFacts

    ibis = load_ibis()
    words = {}
    for name, count in binned.items():
        if not is_numeric(schema[name]):
            raise LuskinError(f"'{name}' holds text, so it cannot be cut into bins; its values are used as "
                              "categories.")
        part = bin_part(name, EngineFacts(source, plan.population).quantiles(name, bin_probs(count)))
        x = view[name].cast("float64")
        index = ibis.literal(0, "int64")
        for cut in part.cuts:
            index = index + (x >= float(cut)).cast("int32")  # NULL where the value is missing
        words[name] = index.substitute({i: part.label(i) for i in range(len(part.cuts) + 1)},
                                       else_=ibis.null().cast("string"))
    return words


def cell_bound(source: Source, view: Any, numeric: Sequence[str], cats: Sequence[str], limit: float) -> float:
    """An upper bound on the cells: the product of the controls' distinct counts, at most the rows.

    Both fits are exact, so this only chooses the faster: no scan when the rows alone are few
    enough, or when a control holds floating-point numbers (nearly one value per row); else one
    scan of approximate distinct counts.
    """
    total = float(source.n_rows())
    if total <= limit:
        return total
    schema = view.schema()
    if any(schema[c].is_floating() for c in numeric):
        return total
    distinct = source._run(view.aggregate(**{f"d{i}": view[c].approx_nunique() for i, c in enumerate([*numeric, *cats])}),
                           fetch=True).iloc[0]
    bound = 1.0
    for value in distinct:
        bound = min(bound * max(float(value), 1.0), total)
    return bound


def engine_cells(source: Source, spec: AuditSpec, plan: Any, view: Any, numeric: Sequence[str], cats: Sequence[str],
           cluster_name: str | None, knots: Mapping[str, tuple[float, ...]] | None = None,
           binned: Sequence[str] = (), *, log: bool = False) -> Cells:
    linear = is_linear(spec)
    raw = source._run(_cells_expr(view, plan, numeric, cats, cluster_name, linear, log=log and linear), fetch=True)
    frame = _labelled(raw, plan, spec, numeric, cats, cluster_name)
    complete = frame.pop("_complete").astype(bool).to_numpy()
    dropped = int(frame.loc[~complete, "n"].sum())
    frame = frame.loc[complete].reset_index(drop=True)
    if not linear:
        frame["y2"] = frame["k"]
    return Cells(frame, tuple(numeric), tuple(cats), cluster_name, linear, dropped,
                 note=spline_note(knots or {}), splines=dict(knots or {}), binned=tuple(binned), log=log and linear,
                 **score_outcome(spec, plan))


def _light_view(raw: Any, columns: Sequence[str]) -> Any:
    """Only the columns the model needs, a floating NaN read as missing (as pandas reads it).

    ``isnan`` is a cheap test per value; the sources' general view casts every float of the table
    to text to find NaN, which took 68 s of a 70 s query over 10M rows with three float controls.
    """
    ibis = load_ibis()
    schema = raw.schema()
    out = {}
    for name in columns:
        col = raw[name]
        if schema[name].is_floating():
            col = ibis.ifelse(col.isnan().fill_null(False), ibis.null().cast(schema[name]), col)
        out[name] = col
    return raw.select(**out)


def _cells_expr(t: Any, plan: Any, numeric: Sequence[str], cats: Sequence[str], cluster: str | None,
                linear: bool, *, log: bool = False) -> Any:
    ibis = load_ibis()
    keep = ibis.literal(True)
    for _, failing in check_exprs(t, plan):
        keep = keep & ~failing
    rows = t.filter(keep)
    keys: dict[str, Any] = {}
    if plan.protected is not None:
        keys["_g0"] = mask_expr(rows, plan.protected)
    else:
        for i, part in enumerate(plan.group_parts):
            keys[f"_g{i}"] = part_expr(rows, part)
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
        if log:   # every amount above 0 (checked first through the count: adjust_model.check_log)
            y = y.ln()
    else:
        y = outcome_expr(rows, plan).cast("int32")
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
        names = plan.class_names
        out["group"] = np.where(inside, names.group, names.other).astype(object)
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
            words = np.array([number_text(v) for v in uniques] + [UNKNOWN], dtype=object)
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
