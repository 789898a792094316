"""Adjusted gaps fitted from sums the engine computes, when numeric controls take too many values to collapse.

A numeric control such as income makes nearly one cell per row, so the cell table of
:mod:`luskin_core.analyses.adjust_engine` would be the table itself. The fit does not need the cells: it
needs sums, which the engine computes where the data lives, grouped by the categorical *key*
(group, categorical controls, cluster), with the numeric values kept as sums per key.

* Each key column's distinct values come first (one small query per column); each value gets a
  code and, in later passes, its coefficient, joined back to the rows as a small table. The key
  of a row is then one integer (its codes in mixed radix), so every pass is a GROUP BY on one
  integer column.
* Linear model: one pass of n, sum y, sum y^2, sum x, sum x x', sum x y per key gives X'X and
  X'y exactly (the sufficient statistics), the residual sum of squares and the clustered scores.
* Logistic model: IRLS. The same first pass starts the fit from the key means (the cells with the
  numeric controls at their key means, fitted in memory); then each Newton step is one aggregate
  query computing, per key, sum w, sum w x, sum w x x', sum (y - mu), sum (y - mu) x and the
  log-likelihood at the current coefficients (w = mu (1 - mu)). X'WX and X'(y - mu) follow from
  the one-hot design of the keys. The pass that finds the step below 1e-9 also computes the sums
  the average marginal effects and Yun's decomposition need (each group's derivative per key; its
  prediction and its derivative times x per group, in a second query), so the result is exact,
  not a sample.
* On DuckDB (files, databases, uploads) the coded rows are first kept as a temporary table in key
  order: a pass then costs a fraction of a read from the source (see :func:`_kept_in_key_order`; figures in
  benchmarks/results/code_timings.md).
  PostgreSQL and Spark sources are read-only: each pass reads the source, with CASE for the codes.
"""

from __future__ import annotations

import math
import shutil
import tempfile
import uuid
import weakref
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import linalg, sparse

from luskin_core.analyses.adjust_model import (
    AdjustResult,
    Blocks,
    Cells,
    Design,
    Fit,
    aliased_columns,
    build_design,
    compared_groups,
    finish,
    fit_cells,
    inverse_matrix,
    is_linear,
    level_prefix,
    number_text,
    score_outcome,
    spline_note,
    spline_term_name,
    without_columns,
)
from luskin_core.counting.plan import CROSS
from luskin_core.counting.sources import Source, check_exprs, load_ibis, mask_expr, outcome_expr, part_expr
from luskin_core.errors import LuskinError
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.spec.unknown import UNKNOWN
from luskin_core.stats.inference import critical_value

MAX_PASSES = 30
STEP_DONE = 1e-9       # Newton step (largest coefficient change) at which the fit is final (1e-10 in memory)
STEP_NEARLY = 1e-4     # ... at which the next pass is expected to be the last (and computes the effects' sums)
ETA_LIMIT = 500.0      # the linear predictor is clipped here in the engine (exp overflows past about 709)
SHARED_EXP_LIMIT = 200.0  # group coefficients up to this share one exp a row (exp(500 + 200) < the largest double)


@dataclass
class _KeyColumn:
    """One column of the key: its expression's name, distinct values, their codes and texts."""

    name: str
    values: list[Any]          # distinct non-missing raw values
    codes: np.ndarray          # code of each value (values with the same text share one)
    null_code: int
    texts: list[str]           # text of each code
    boolean: bool


def adjust_by_sums(source: Source, spec: AuditSpec, plan: Any, rows: Any, numeric: Sequence[str],
                   cats: Sequence[str], cluster: str | None, *, where: str,
                   splines: Mapping[str, tuple[float, ...]] | None = None, binned: Sequence[str] = (),
                   log: bool = False) -> AdjustResult:
    """The adjusted gaps of ``source`` fitted from per-key sums (``rows``: the view with the needed columns;
    ``splines``: the knots of numeric controls fitted as curves, whose terms the engine computes)."""
    with ExitStack() as stack:
        return _adjust_by_sums(source, spec, plan, rows, numeric, cats, cluster, where=where, stack=stack,
                               splines=dict(splines or {}), binned=tuple(binned), log=log)


def _adjust_by_sums(source: Source, spec: AuditSpec, plan: Any, rows: Any, controls: Sequence[str],
                    cats: Sequence[str], cluster: str | None, *, where: str, stack: ExitStack,
                    splines: dict[str, tuple[float, ...]], binned: tuple[str, ...], log: bool = False) -> AdjustResult:
    numeric, owner = _numeric_terms(controls, splines)
    linear = is_linear(spec)
    log = log and linear
    selected, group_names = _selected_rows(rows, plan, cats, cluster, numeric, owner, splines, linear=linear, log=log)
    key_names = [*group_names, *(f"_c{i}" for i in range(len(cats))), *(["_cluster"] if cluster else [])]

    # 1. Each key column's distinct values (one query for all) and codes.
    keys = _key_columns(source, selected, key_names, plan, spec)
    radix = [len(key.texts) for key in keys]
    joins = source.engine.embedded   # a small table joined in: only an embedded DuckDB takes one from here
    coded, key_exprs, complete, base, queries = _coded_base(source, selected, keys, radix, len(numeric), stack,
                                                            in_order=not linear and joins)

    # 2. The first pass: n, sums of y, x, x x', x y (and ranges) per key.
    first = _first_pass(source, base, key_exprs, len(numeric))
    done = first["_complete"].fillna(False).astype(bool).to_numpy()
    dropped = int(pd.to_numeric(first.loc[~done, "n"]).sum())
    first = first.loc[done].reset_index(drop=True)
    if first.empty:
        raise LuskinError("No row has a value in every control, so nothing can be adjusted.")
    first_keys = {name: pd.to_numeric(first[name]).to_numpy(dtype=np.int64) for name in key_exprs}
    frame = _key_frame(_decode(first, key_exprs, radix), keys, group_names, cats, cluster)
    n, k, sums = _first_sums(first, frame, len(numeric), linear)
    cells = Cells(frame, (), tuple(cats), cluster, linear, dropped, binned=binned, log=log,
                  **score_outcome(spec, plan))
    if not linear and float(k.sum()) in (0.0, float(n.sum())):
        raise LuskinError(f"Every analysed row has the same outcome ({'positive' if k.sum() else 'negative'}), so "
                          "there is no gap to adjust.")
    reference, groups = compared_groups(cells, spec)
    design, notes = build_design(cells, groups)
    design, num_names, (sx, sxy, sxx, lo, hi) = _identified(design, n, numeric, sums, notes)
    pk, q = design.X.shape[1], len(num_names)
    x_index = [numeric.index(name) for name in num_names]
    N = float(n.sum())

    if linear:
        beta, bread, cov, r0, r1 = _linear_fit(design, frame, n, k, sx, sxy, sxx)
        passes, converged, iterations, effects = 1, True, 0, None
    else:
        offsets = None if joins else _case_offsets(keys, len(group_names), cats, design, binned)
        reader = _PassReader(source, coded, key_exprs, complete, first_keys, design, x_index, offsets, (lo, hi))
        beta, bread, r0, r1, effects, passes, converged, iterations = _logistic_fit(reader, design, n, k, sx, q)
        cov = bread
    clusters = pd.factorize(frame["cluster"].to_numpy(dtype=object))[0] if cluster else None
    cov, n_clusters = _clustered(cov, bread, clusters, r0, r1, design.X, N, pk + q)
    fit = Fit(beta, cov, np.zeros(0), converged, iterations, (), N - pk - q, n_clusters,
              use_t=linear and clusters is None)
    return _sums_result(
        source, spec, where=where, design=design, fit=fit, cells=cells, groups=groups, reference=reference,
        n=n, k=k, arrays=(sx, sxx, lo, hi), effects=effects, num_names=num_names, owner=owner, linear=linear,
        frame=frame, cats=cats, cluster=cluster, dropped=dropped, binned=binned, log=log, notes=notes,
        splines=splines, scan=(coded, key_exprs, complete, first_keys, x_index, radix, len(group_names)),
        queries=passes + queries)


def _numeric_terms(controls: Sequence[str], splines: dict[str, tuple[float, ...]]) -> tuple[list[str], dict[str, str]]:
    """The model's numeric columns: each numeric control, followed by its curve's terms (as in memory), and the
    control each belongs to."""
    numeric: list[str] = []
    owner: dict[str, str] = {}
    for name in controls:
        numeric.append(name)
        owner[name] = name
        for j in range(1, len(splines.get(name, ())) - 1):
            numeric.append(spline_term_name(name, j))
            owner[numeric[-1]] = name
    return numeric, owner


def _selected_rows(rows: Any, plan: Any, cats: Sequence[str], cluster: str | None, numeric: list[str],
                   owner: dict[str, str], splines: dict[str, tuple[float, ...]], *, linear: bool,
                   log: bool) -> tuple[Any, list[str]]:
    """The rows the audit counts (its checks passed), as the model's columns: the group keys, the categorical
    controls, the cluster, the numeric terms and the outcome (its logarithm with ``log``)."""
    ibis = load_ibis()
    keep = ibis.literal(True)
    for _, failing in check_exprs(rows, plan):
        keep = keep & ~failing
    t = rows.filter(keep)
    fields: dict[str, Any] = {}
    group_names: list[str] = []
    if plan.protected is not None:
        fields["_g0"] = mask_expr(t, plan.protected)
        group_names.append("_g0")
    else:
        for i, part in enumerate(plan.group_parts):
            fields[f"_g{i}"] = part_expr(t, part)
            group_names.append(f"_g{i}")
    for i, name in enumerate(cats):
        fields[f"_c{i}"] = t[name]
    if cluster is not None:
        fields["_cluster"] = t[cluster].cast("string")
    term_index = {name: 0 for name in owner.values()}
    for j, name in enumerate(numeric):
        x = t[owner[name]].cast("float64")
        if owner[name] != name:
            term_index[owner[name]] += 1
            x = _spline_term(x, splines[owner[name]], term_index[owner[name]])
        fields[f"_x{j}"] = x
    # A boolean is made a number through int32 (PostgreSQL casts boolean to integer only).
    fields["_y"] = t[plan.outcome].cast("float64") if linear else outcome_expr(t, plan).cast("int32").cast("float64")
    if log:   # every amount above 0 (checked first through the count: adjust_model.check_log)
        fields["_y"] = fields["_y"].ln()
    return t.select(**fields), group_names


def _key_columns(source: Source, selected: Any, key_names: list[str], plan: Any, spec: AuditSpec) -> list[_KeyColumn]:
    """Each key column's distinct values (one query for all), their texts and codes."""
    listed = source._run(selected.aggregate(**{name: selected[name].collect(distinct=True) for name in key_names}),
                         fetch=True, what="the adjusted gaps' query")
    keys: list[_KeyColumn] = []
    for name in key_names:
        cell = listed[name].iloc[0]
        values = [v for v in (list(cell) if cell is not None else []) if not _missing(v)]
        dtype = selected[name].type()
        if dtype.is_integer():
            values = [int(v) for v in values]
        boolean = bool(dtype.is_boolean())
        texts = [_text(name, v, plan, spec) for v in values] + [_text(name, None, plan, spec)]
        merged, distinct_texts = pd.factorize(np.array(texts, dtype=object))
        keys.append(_KeyColumn(name, values, merged[:-1].astype(np.int64), int(merged[-1]),
                               [str(x) for x in distinct_texts], boolean))
    return keys


def _coded_base(source: Source, selected: Any, keys: list[_KeyColumn], radix: list[int], q: int, stack: ExitStack,
                *, in_order: bool) -> tuple[Any, dict[str, Any], Any, Any, int]:
    """The rows with their keys coded (packed into one integer when they fit), whether every control has a value,
    and the outcome and terms; with ``in_order`` (Newton's passes read the rows again and again) kept once, in key
    order. Returns the coded rows, the key expressions, the complete flag, the base and the queries it took."""
    ibis = load_ibis()
    joins = source.engine.embedded
    coded, code_names = _coded(selected, keys, joins)
    if math.prod(radix) < 2**62:
        kid = _packed_key(coded, code_names, radix)
        key_exprs = {"_kid": kid.cast("int32") if math.prod(radix) < 2**31 else kid}
    else:
        key_exprs = {c: coded[c] for c in code_names}
    complete = ibis.literal(True)
    for j in range(q):
        complete = complete & coded[f"_x{j}"].notnull()
    base = coded.select(**key_exprs, _complete=complete, _y=coded._y.cast("int8") if in_order else coded._y,
                        **{f"_x{j}": coded[f"_x{j}"] for j in range(q)})
    queries = 1  # the keys' values
    if in_order:
        base, stored = stack.enter_context(_kept_in_key_order(source, base, list(key_exprs)))
        queries += stored
        coded, complete = base, base._complete
        key_exprs = {name: base[name] for name in key_exprs}
    return coded, key_exprs, complete, base, queries


def _first_pass(source: Source, base: Any, key_exprs: dict[str, Any], q: int) -> pd.DataFrame:
    """n, sums of y, y², x, x x', x y and each term's range, per key and completeness."""
    y = base._y.cast("float64")
    metrics: dict[str, Any] = {"n": base.count(), "k": y.sum(), "y2": (y * y).sum()}
    for j in range(q):
        x = base[f"_x{j}"]
        metrics[f"sx{j}"] = x.sum()
        metrics[f"sxy{j}"] = (x * y).sum()
        metrics[f"lo{j}"] = x.min()
        metrics[f"hi{j}"] = x.max()
        for m in range(j, q):
            metrics[f"sxx{j}_{m}"] = (x * base[f"_x{m}"]).sum()
    return source._run(base.group_by([*key_exprs, "_complete"]).aggregate(**metrics), fetch=True,
                       what="the adjusted gaps' query")


def _first_sums(first: pd.DataFrame, frame: pd.DataFrame, q: int, linear: bool
                ) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, ...]]:
    """The first pass read back: n and k per key (written into ``frame`` with y², as the cells' table), and the
    terms' sums, cross products and ranges (sx, sxy, sxx, lo, hi)."""
    n = pd.to_numeric(first["n"]).to_numpy(dtype=float)
    k = pd.to_numeric(first["k"]).fillna(0).to_numpy(dtype=float)
    frame["n"], frame["k"] = n, k
    frame["y2"] = pd.to_numeric(first["y2"]).fillna(0).to_numpy(dtype=float) if linear else k
    sx = _matrix(first, [f"sx{j}" for j in range(q)])
    sxy = _matrix(first, [f"sxy{j}" for j in range(q)])
    sxx = np.zeros((len(first), q, q))
    for j in range(q):
        for m in range(j, q):
            sxx[:, j, m] = sxx[:, m, j] = pd.to_numeric(first[f"sxx{j}_{m}"]).to_numpy(dtype=float)
    lo = _matrix(first, [f"lo{j}" for j in range(q)])
    hi = _matrix(first, [f"hi{j}" for j in range(q)])
    return n, k, (sx, sxy, sxx, lo, hi)


def _identified(design: Any, n: np.ndarray, numeric: list[str], sums: tuple[np.ndarray, ...],
                notes: list[str]) -> tuple[Any, list[str], tuple[np.ndarray, ...]]:
    """Numeric controls with a single value left out; aliased columns too (groups last, as in memory), each said in
    ``notes``; a group the controls determine exactly is refused. The design, the numeric terms kept, their sums."""
    sx, sxy, sxx, lo, hi = sums
    used = []
    for j, name in enumerate(numeric):
        if float(np.nanmin(lo[:, j])) == float(np.nanmax(hi[:, j])):
            notes.append(f"The control '{name}' holds a single value ({number_text(float(lo[0, j]))}) in the rows "
                         "analysed, so it cannot explain anything and is left out.")
        else:
            used.append(j)
    num_names = [numeric[j] for j in used]
    sx, sxy, sxx, lo, hi = sx[:, used], sxy[:, used], sxx[:, used][:, :, used], lo[:, used], hi[:, used]
    pk = design.X.shape[1]
    gram = _full_gram(design, n, sx, sxx)
    last = [j for j in range(pk + len(used)) if j not in design.group_cols] + list(design.group_cols)
    aliased = sorted(last[j] for j in aliased_columns(gram[np.ix_(last, last)]))
    if any(c in design.group_cols for c in aliased):
        which = ", ".join(design.names[c].removeprefix("group = ") for c in aliased if c in design.group_cols)
        raise LuskinError(f"The controls determine the group exactly (for {which}), so no gap can be held apart from "
                          "them: leave out the control that encodes the group (a proxy such as a code per group).")
    drop_num = [c - pk for c in aliased if c >= pk]
    if drop_num:
        notes.append("These controls are fixed by the others and were left out of the model: "
                     + ", ".join(num_names[j] for j in drop_num) + ".")
        kept = [j for j in range(len(used)) if j not in drop_num]
        num_names = [num_names[j] for j in kept]
        sx, sxy, sxx, lo, hi = sx[:, kept], sxy[:, kept], sxx[:, kept][:, :, kept], lo[:, kept], hi[:, kept]
    drop_k = [c for c in aliased if c < pk]
    if drop_k:
        design, more = without_columns(design, drop_k)
        notes += more
    return design, num_names, (sx, sxy, sxx, lo, hi)


def _linear_fit(design: Any, frame: pd.DataFrame, n: np.ndarray, k: np.ndarray, sx: np.ndarray, sxy: np.ndarray,
                sxx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Least squares from the sums: the coefficients, the bread, their covariance and the scores' parts (r0, r1)."""
    K = design.X
    pk, q = K.shape[1], sx.shape[1]
    N = float(n.sum())
    H = _full_gram(design, n, sx, sxx)
    beta = linalg.solve(H, np.concatenate([_xtk(K, k), sxy.sum(axis=0)]), assume_a="pos")
    off = np.asarray(K @ beta[:pk]).ravel()
    b = beta[pk:]
    xty = np.concatenate([_xtk(K, k), sxy.sum(axis=0)])
    rss = float(frame["y2"].sum() - 2 * beta @ xty + beta @ H @ beta)
    bread = linalg.inv(H)
    r0 = k - n * off - sx @ b
    r1 = sxy - off[:, None] * sx - np.einsum("kjm,m->kj", sxx, b)
    cov = bread * max(rss, 0.0) / (N - pk - q)
    return beta, bread, cov, r0, r1


@dataclass(frozen=True)
class _PassReader:
    """What one Newton pass over the rows in the engine reads (:func:`_logistic_pass`), but the coefficients."""

    source: Source
    coded: Any
    key_exprs: dict[str, Any]
    complete: Any
    first_keys: dict[str, np.ndarray]
    design: Any
    x_index: list[int]
    offsets: Any
    ranges: tuple[np.ndarray, np.ndarray]

    def read(self, beta: np.ndarray, want_effects: bool) -> dict[str, Any]:
        return _logistic_pass(self.source, self.coded, self.key_exprs, self.complete, self.first_keys, self.design,
                              beta, self.x_index, want_effects, self.offsets, self.ranges)


def _logistic_fit(reader: _PassReader, design: Any, n: np.ndarray, k: np.ndarray, sx: np.ndarray, q: int
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Any, int, bool, int]:
    """Newton's method, each pass a query in the engine, halving a step that lowers the likelihood (as in memory):
    the coefficients, the bread, the scores' parts, the effects' sums, the passes, converged and iterations."""
    K = design.X
    p = K.shape[1] + q
    beta = _start(design, n, k, sx, q)
    loglik = -math.inf
    passes, converged, iterations, step_size, effects = 1, False, 0, math.inf, None
    step = np.zeros(p)
    t_step = 1.0
    previous = beta.copy()
    while passes < MAX_PASSES:
        sums = reader.read(beta, step_size < STEP_NEARLY)
        passes += sums["queries"]
        if sums["ll"] < loglik - 1e-9 * abs(loglik) and t_step > 1e-6:  # step too long: halve it
            t_step /= 2
            beta = previous + t_step * step
            continue
        iterations += 1
        change, loglik = sums["ll"] - loglik, sums["ll"]
        H = _full_gram(design, sums["w"], sums["wx"], sums["wxx"])
        score = np.concatenate([_xtk(K, sums["r0"]), sums["r1"].sum(axis=0)])
        try:
            step = np.linalg.solve(H, score)
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(H, score, rcond=None)[0]
        step_size = float(np.max(np.abs(step)))
        if step_size < STEP_DONE and sums.get("effects") is not None:
            converged, effects = True, sums["effects"]
            r0, r1 = sums["r0"], sums["r1"]
            break
        if abs(change) < 1e-13 * (abs(loglik) + 1) and iterations > 3:  # as in memory: a level predicts perfectly
            converged = step_size < 1e-4
            effects, r0, r1 = sums.get("effects"), sums["r0"], sums["r1"]
            break
        previous, t_step = beta.copy(), 1.0
        beta = beta + step
    else:
        r0, r1 = sums["r0"], sums["r1"]
        effects = sums.get("effects")
    if effects is None:  # not settled: the effects at the last coefficients
        sums = reader.read(beta, True)
        passes += sums["queries"]
        H = _full_gram(design, sums["w"], sums["wx"], sums["wxx"])
        effects, r0, r1 = sums["effects"], sums["r0"], sums["r1"]
    return beta, inverse_matrix(H), r0, r1, effects, passes, converged, iterations


def _clustered(cov: np.ndarray, bread: np.ndarray, clusters: np.ndarray | None, r0: np.ndarray, r1: np.ndarray,
               K: Any, N: float, p: int) -> tuple[np.ndarray, int | None]:
    """The covariance clustered by ``clusters`` (the sandwich with the small-sample factor), and the clusters."""
    if clusters is None:
        return cov, None
    G = int(clusters.max()) + 1
    member = sparse.csr_matrix((np.ones(len(clusters)), (clusters, np.arange(len(clusters)))),
                               shape=(G, len(clusters)))
    scores = np.hstack([np.asarray((member @ sparse.diags(r0) @ K).todense()), member @ r1])
    meat = np.einsum("gi,gj->ij", scores, scores)
    factor = G / (G - 1.0) * (N - 1.0) / (N - p) if G > 1 else math.nan
    return factor * bread @ meat @ bread, G


def _sums_result(source: Source, spec: AuditSpec, *, where: str, design: Any, fit: Fit, cells: Any,
                 groups: list[str], reference: str, n: np.ndarray, k: np.ndarray, arrays: tuple[np.ndarray, ...],
                 effects: Any, num_names: list[str], owner: dict[str, str], linear: bool, frame: pd.DataFrame,
                 cats: Sequence[str], cluster: str | None, dropped: int, binned: tuple[str, ...], log: bool,
                 notes: list[str], splines: dict[str, tuple[float, ...]], scan: tuple[Any, ...],
                 queries: int) -> AdjustResult:
    """The fit's gaps (average marginal effects), decomposition, diagnostics and rows note, in the model's
    canonical order (intercept, groups, numeric controls, categorical dummies, as in memory)."""
    from luskin_core.analyses.adjust_diagnostics import diagnose

    sx, sxx, lo, hi = arrays
    coded, key_exprs, complete, first_keys, x_index, radix, n_groups = scan
    beta, cov, converged, iterations, n_clusters = fit.beta, fit.cov, fit.converged, fit.iterations, fit.n_clusters
    pk, q = design.X.shape[1], len(num_names)
    p, N = pk + q, float(n.sum())
    gcols = list(design.group_cols)
    if linear:
        J = np.zeros((len(gcols), p))
        for i, c in enumerate(gcols):
            J[i, c] = 1.0
        ame, ame_cov = beta[gcols], J @ cov @ J.T
    else:
        assert effects is not None
        ame, ame_cov = _ame(design, effects, cov, N, pk, q)
    decomposition = _decompose(design, fit, n, k, sx, effects, num_names, linear=linear, owner=owner)
    order_idx = list(range(1 + len(gcols))) + list(range(pk, p)) + list(range(1 + len(gcols), pk))
    names = [*design.names, *num_names]
    names = [names[i] for i in order_idx]
    fit_out = Fit(beta[order_idx], cov[np.ix_(order_idx, order_idx)], fit.eta, converged, iterations, (), N - p,
                  n_clusters, use_t=fit.use_t)
    group_cols_out = tuple(order_idx.index(c) for c in gcols)
    out_cells = Cells(frame, tuple(name for name in num_names if owner[name] == name), tuple(cats), cluster, linear,
                      dropped, binned=binned, log=log, score_rule=cells.score_rule,
                      score_cutoff=cells.score_cutoff)
    outside = effects.get("outside") if effects is not None else None
    if outside is None and q:
        outside = _outside(source, coded, key_exprs, complete, first_keys, design, lo, hi, x_index)
        queries += 1
    own = [j for j, name in enumerate(num_names) if owner[name] == name]  # a curve's terms are not controls
    diagnostics = notes + _numeric_diagnostics([num_names[j] for j in own], design, groups, n, sx[:, own],
                                               sxx[:, own][:, :, own], lo[:, own], hi[:, own],
                                               None if outside is None else outside[:, :, own], splines)
    fine = _fine_counts(source, coded, complete, radix, n_groups,
                        [(num_names[j], x_index[j], float(np.nanmin(lo[:, j])), float(np.nanmax(hi[:, j])))
                         for j in own])
    queries += len(fine)
    diagnostics += diagnose(cells, design, fit, n, k, groups, linear=linear, n_parameters=p, fine=fine)
    rows_note = (f"The model uses {int(N):,} rows and {p:,} coefficients, fitted from sums the engine computed per "
                 f"combination of group and categorical controls ({len(frame):,} of them) in {queries:,} "
                 "queries, not from a sample")
    if n_clusters is not None:
        rows_note += f"; standard errors are clustered by {cluster} ({n_clusters:,} clusters)"
    rows_note += "."
    if dropped:
        rows_note += f" {dropped:,} rows missing a numeric control were left out."
    if splines:
        rows_note += " " + spline_note(splines)
    # The mean predicted share with every row set to the reference (the adjusted impact ratio's denominator).
    share_ref = None if linear or effects is None else float(effects["m"][:, 0].sum()) / N
    return finish(out_cells, spec, source=where, names=names, group_cols=group_cols_out, fit=fit_out, ame=ame,
                  ame_cov=ame_cov, decomposition=decomposition, diagnostics=diagnostics, groups=groups,
                  reference=reference, rows_note=rows_note, reference_share=share_ref)


# ------------------------------------------------------------------------------------------
# Keys
# ------------------------------------------------------------------------------------------
def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or value is pd.NA or value is pd.NaT


def _text(name: str, value: Any, plan: Any, spec: AuditSpec) -> str:
    """The text a key value has in the in-memory cell table (group label, control level, cluster)."""
    if name.startswith("_g"):
        if plan.protected is not None:
            return plan.class_names.group if value is not None and bool(value) else plan.class_names.other
        part = plan.group_parts[int(name[2:])]
        if value is not None and part.numeric and part.kind == "value":
            value = float(value)
        return str(part.label(value))
    if value is None:
        return UNKNOWN
    if name == "_cluster":
        return str(value)
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_)):
        return number_text(value)
    return str(value)


FIT_MEMORY = "400MB"  # DuckDB's share of the process while a file's rows are kept for the fit (the rest spills)
_PRIVATE_TEMP: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


@contextmanager
def _kept_in_key_order(source: Source, rows: Any, order: Sequence[str]) -> Iterator[tuple[Any, bool]]:
    """``rows`` stored once as a temporary table sorted by the key, dropped on leaving (DuckDB only); and
    whether they were (else ``rows`` themselves).

    Each Newton step sums about 15 products per key. Over 10M rows in 144,000 keys, DuckDB's
    hash aggregate spends most of a pass jumping between keys (1.2 s for 10 sums, 0.25 s on rows in
    key order), and reading a Parquet file and coding the keys costs 3 s a pass. A file's rows are
    kept under a memory limit on the source's own DuckDB (the rest spills to a private folder), so
    10M rows stay under 1 GB. A database opened read-only takes a temporary table too; where none can
    be made at all, each pass reads the rows from the source.
    """
    backend: Any = source.backend
    con = getattr(backend, "con", None)
    if con is None or not source.engine.embedded:
        yield rows, False
        return
    name = f"_luskin_fit_{uuid.uuid4().hex}"
    limited = source.engine.from_disk  # nothing else lives in that DuckDB: a file read from disk
    try:
        if limited:
            _private_temp(backend)
            con.execute(f"SET memory_limit = '{FIT_MEMORY}'").fetchall()
        backend.create_table(name, obj=rows.order_by(list(order)), temp=True)
    except Exception:  # noqa: BLE001 - no table here: each pass reads the rows from the source
        if limited:
            con.execute("RESET memory_limit").fetchall()
        yield rows, False
        return
    try:
        yield backend.table(name), True
    finally:
        con.execute(f"DROP TABLE IF EXISTS temp.main.{name}").fetchall()
        if limited:
            con.execute("RESET memory_limit").fetchall()


def _private_temp(backend: Any) -> None:
    """Point the backend's spill folder at a private one, removed with it (DuckDB's default is the working folder)."""
    if backend in _PRIVATE_TEMP:
        return
    folder = tempfile.mkdtemp(prefix="luskin-duckdb-")
    backend.con.execute(f"SET temp_directory = '{folder}'").fetchall()
    _PRIVATE_TEMP[backend] = folder
    weakref.finalize(backend, shutil.rmtree, folder, True)


def _coded(selected: Any, keys: Sequence[_KeyColumn], joins: bool) -> tuple[Any, list[str]]:
    """``selected`` with each key column's code beside it.

    DuckDB joins a small table of the values (a CASE with hundreds of arms took 20 times longer
    over 10M rows); PostgreSQL and Spark sources are read-only, so there it is a CASE.
    """
    ibis = load_ibis()
    table = selected
    code_names = []
    for i, key in enumerate(keys):
        col = table[key.name]
        code_name = f"_k{i}"
        if key.boolean:
            by_value = {bool(v): int(c) for v, c in zip(key.values, key.codes)}
            code = ibis.ifelse(col.isnull(), key.null_code,
                               ibis.ifelse(col, by_value.get(True, key.null_code), by_value.get(False, key.null_code)))
            table = table.mutate(**{code_name: code.cast("int64")})
        elif not joins:
            mapping = {v: int(c) for v, c in zip(key.values, key.codes)}
            code = col.substitute(mapping, else_=key.null_code) if mapping else ibis.literal(key.null_code)
            table = table.mutate(**{code_name: code.cast("int64")})
        else:
            lookup = ibis.memtable(pd.DataFrame({f"_v{i}": pd.Series(key.values, dtype=object),
                                                 f"_code{i}": key.codes.astype(np.int64)}),
                                   schema=ibis.schema({f"_v{i}": col.type(), f"_code{i}": "int64"}))
            joined = table.left_join(lookup, table[key.name] == lookup[f"_v{i}"])
            keep = [c for c in table.columns]
            table = joined.select(*keep, **{code_name: joined[f"_code{i}"].fill_null(key.null_code).cast("int64")})
        code_names.append(code_name)
    return table, code_names


def _case_offsets(keys: Sequence[_KeyColumn], n_group_parts: int, cats: Sequence[str], design: Design,
                  binned: Sequence[str] = ()) -> Any:
    """A function (table, beta) -> (offset, own group's coefficient) as CASE expressions on the key codes."""
    ibis = load_ibis()
    column = {name: j for j, name in enumerate(design.names)}
    radix = [len(key.texts) for key in keys[:n_group_parts]]
    labels = []
    for combo in np.ndindex(*reversed(radix)):
        codes = list(reversed(combo))
        labels.append(CROSS.join(keys[i].texts[c] for i, c in enumerate(codes)))
    group_index = [column.get(f"group = {label}", -1) for label in labels]  # by packed group code
    position = {label: h for h, label in enumerate(design.groups)}
    h_map = {g: position[label] for g, label in enumerate(labels) if label in position}

    def offsets(table: Any, beta: np.ndarray) -> tuple[Any, Any, Any]:
        gcode = _packed_key(table, [f"_k{i}" for i in range(n_group_parts)], radix)
        own_map = {g: float(beta[j]) for g, j in enumerate(group_index) if j >= 0}
        own = gcode.substitute(own_map, else_=0.0) if own_map else ibis.literal(0.0)
        h = gcode.substitute(h_map, else_=-1)
        off = ibis.literal(float(beta[0])) + own
        for i, name in enumerate(cats):
            key = keys[n_group_parts + i]
            prefix = level_prefix(name, binned)
            mapping = {c: float(beta[column[prefix + text]]) for c, text in enumerate(key.texts)
                       if prefix + text in column}
            if mapping:
                off = off + table[f"_k{n_group_parts + i}"].substitute(mapping, else_=0.0)
        return off.cast("float64"), own.cast("float64"), h.cast("int16")

    return offsets


def _packed_key(table: Any, code_names: Sequence[str], radix: Sequence[int]) -> Any:
    """One integer per row: the key columns' codes in mixed radix."""
    key = None
    scale = 1
    for name, size in zip(code_names, radix):
        term = table[name] * scale if scale != 1 else table[name]
        key = term if key is None else key + term
        scale *= size
    return key if key is not None else load_ibis().literal(0, "int64")


def _decode(frame: pd.DataFrame, key_exprs: dict[str, Any], radix: Sequence[int]) -> list[np.ndarray]:
    """Each key column's code per row of an aggregate."""
    if "_kid" in key_exprs:
        kid = pd.to_numeric(frame["_kid"]).to_numpy(dtype=np.int64)
        out = []
        for size in radix:
            out.append(kid % size)
            kid = kid // size
        return out
    return [pd.to_numeric(frame[f"_k{i}"]).to_numpy(dtype=np.int64) for i in range(len(radix))]


def _key_frame(codes: Sequence[np.ndarray], keys: Sequence[_KeyColumn], group_names: Sequence[str],
               cats: Sequence[str], cluster: str | None) -> pd.DataFrame:
    """The cell table of the keys (group label, categorical controls, cluster), as the in-memory one names them."""
    texts = [np.asarray(key.texts, dtype=object)[c] for key, c in zip(keys, codes)]
    group = texts[0]
    for piece in texts[1:len(group_names)]:
        group = group + CROSS + piece
    out: dict[str, Any] = {"group": np.asarray(group, dtype=object)}
    for i, name in enumerate(cats):
        key = keys[len(group_names) + i]
        out[name] = pd.Categorical.from_codes(codes[len(group_names) + i], categories=pd.Index(key.texts, dtype=object))
    if cluster is not None:
        out["cluster"] = texts[-1]
    return pd.DataFrame(out)


def _matrix(frame: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    if not columns:
        return np.zeros((len(frame), 0))
    return np.column_stack([pd.to_numeric(frame[c]).astype(float).fillna(0.0).to_numpy() for c in columns])


# ------------------------------------------------------------------------------------------
# The fit from sums
# ------------------------------------------------------------------------------------------
def _xtk(K: Any, v: np.ndarray) -> np.ndarray:
    """K' v for the keys' one-hot design."""
    return np.asarray(K.T @ v).ravel()


def _full_gram(design: Design, w: np.ndarray, wx: np.ndarray, wxx: np.ndarray) -> np.ndarray:
    """X'WX of keys x numbers from per-key sums: sum w, sum w x, sum w x x'."""
    K = design.X
    pk, q = K.shape[1], wx.shape[1]
    H = np.zeros((pk + q, pk + q))
    H[:pk, :pk] = design.blocks.gram(w) if design.blocks is not None else np.asarray((K.T @ sparse.diags(w) @ K)
                                                                                        .toarray())
    if q:
        cross = np.asarray(K.T @ wx)
        H[:pk, pk:] = cross
        H[pk:, :pk] = cross.T
        H[pk:, pk:] = wxx.sum(axis=0)
    return H


def _start(design: Design, n: np.ndarray, k: np.ndarray, sx: np.ndarray, q: int) -> np.ndarray:
    """Starting coefficients: the logistic fit of the keys with the numeric controls at their key means."""
    means = sx / n[:, None]
    pk = design.X.shape[1]
    X = sparse.hstack([design.X, sparse.csr_matrix(means)], format="csr")
    blocks = None
    if design.blocks is not None:
        blocks = Blocks(design.blocks.factors, design.blocks.numbers + tuple((pk + j, means[:, j]) for j in range(q)),
                        pk + q)
    return fit_cells(X, n, k, k, linear=False, blocks=blocks).beta


def _logistic_pass(source: Source, coded: Any, key_exprs: dict[str, Any], complete: Any,
                   first_keys: dict[str, np.ndarray], design: Design, beta: np.ndarray, x_index: Sequence[int],
                   effects: bool, offsets: Any = None, ranges: tuple[np.ndarray, np.ndarray] | None = None
                   ) -> dict[str, Any]:
    """One aggregate query at ``beta``: the Newton step's sums per key (and, with ``effects``, the AMEs' sums)."""
    pk = design.X.shape[1]
    q = len(x_index)
    gbeta = np.concatenate([[0.0], beta[list(design.group_cols)]])
    joined = _with_offsets(coded, key_exprs, complete, first_keys, design, beta, x_index, offsets)
    cols = {name: joined[name] for name in first_keys}
    last = _newton_rows(joined, cols, beta, pk, q, gbeta, effects)
    metrics, by_group = _pass_metrics(last, design, q, len(gbeta), effects, ranges)
    result = source._run(last.group_by(list(cols)).aggregate(**metrics), fetch=True, what="the adjusted gaps' query")
    result = result.iloc[_positions(result, first_keys)].reset_index(drop=True)  # the first pass's key order
    out: dict[str, Any] = {
        "w": _matrix(result, ["w"])[:, 0], "r0": _matrix(result, ["r0"])[:, 0],
        "ll": float(pd.to_numeric(result["ll"]).sum()), "queries": 2 if effects else 1,
        "wx": _matrix(result, [f"wx{j}" for j in range(q)]), "r1": _matrix(result, [f"r1{j}" for j in range(q)]),
    }
    wxx = np.zeros((len(result), q, q))
    for j in range(q):
        for m in range(j, q):
            wxx[:, j, m] = wxx[:, m, j] = pd.to_numeric(result[f"wxx{j}_{m}"]).to_numpy(dtype=float)
    out["wxx"] = wxx
    if effects:
        out["effects"] = _effect_sums(source, last, by_group, result, len(gbeta), q, outside=ranges is not None)
    return out


def _with_offsets(coded: Any, key_exprs: dict[str, Any], complete: Any, first_keys: dict[str, np.ndarray],
                  design: Design, beta: np.ndarray, x_index: Sequence[int], offsets: Any) -> Any:
    """The complete rows with each key's offset (intercept, group, categorical controls), its group's coefficient
    and group: a CASE per key column (read-only engines), or on DuckDB joined by the key's integer."""
    ibis = load_ibis()
    pk = design.X.shape[1]
    offset = np.asarray(design.X @ beta[:pk]).ravel()
    gbeta = np.concatenate([[0.0], beta[list(design.group_cols)]])
    own = gbeta[design.group_code]
    table = coded.filter(complete)
    numbers = {f"_x{j}": table[f"_x{i}"] for j, i in enumerate(x_index)}
    if offsets is not None:  # a CASE per key column (read-only engines)
        off, own_expr, h_expr = offsets(table, beta)
        return table.select(**key_exprs, _y=table._y, _off=off, _own=own_expr, _h=h_expr, **numbers)
    base = table.select(**key_exprs, _y=table._y, **numbers)
    lookup_frame = pd.DataFrame({**{name: values for name, values in first_keys.items()}, "_off": offset,
                                 "_own": own, "_h": design.group_code.astype(np.int16)})
    schema = ({name: key_exprs[name].type() for name in first_keys}
              | {"_off": "float64", "_own": "float64", "_h": "int16"})
    lookup = ibis.memtable(lookup_frame, schema=ibis.schema(schema))
    return base.join(lookup, [base[name] == lookup[name] for name in first_keys])


def _newton_rows(joined: Any, cols: dict[str, Any], beta: np.ndarray, pk: int, q: int, gbeta: np.ndarray,
                 effects: bool) -> Any:
    """Each row's linear predictor, prediction, weight, residual and log-likelihood (and, with ``effects``, each
    group's prediction and derivative), each step its own SELECT (``view``): Ibis would otherwise write every use
    of a column out in full, and an exp used by 15 sums was computed 15 times."""
    eta = joined._off
    for j in range(q):
        eta = eta + joined[f"_x{j}"] * float(beta[pk + j])
    step1 = joined.select(**cols, _y=joined._y, _own=joined._own, _h=joined._h, _eta=_clipped(eta),
                          **{f"_x{j}": joined[f"_x{j}"] for j in range(q)}).view()
    # One exp a row: with e = exp(-eta) (eta clipped, so e is a double), mu = 1 / (1 + e) and the
    # log-likelihood is y eta - log(1 + exp(eta)) = (y - 1) eta - log(1 + e).
    step2 = step1.mutate(_e=(-step1._eta).exp()).view()
    step3 = step2.mutate(_mu=1.0 / (1.0 + step2._e)).view()
    step4 = step3.mutate(_w=step3._mu * (1.0 - step3._mu), _r=step3._y - step3._mu,
                         _ll=(step3._y - 1.0) * step3._eta - (1.0 + step3._e).ln()).view()
    if not effects:
        return step4
    # each group's prediction and derivative at every row:
    # exp(-(z + b_h)) = exp(-z) exp(-b_h): one exp a row for every group (z clipped, so no overflow).
    if np.all(np.abs(gbeta) <= SHARED_EXP_LIMIT):
        step5 = step4.mutate(_ez=(-_clipped(step4._eta - step4._own)).exp()).view()
        step6 = step5.mutate(**{f"_m{h}": 1.0 / (1.0 + step5._ez * math.exp(-float(b)))
                                for h, b in enumerate(gbeta)}).view()
    else:
        step6 = step4.mutate(**{f"_m{h}": 1.0 / (1.0 + (-(step4._eta - step4._own + float(b))).exp())
                                for h, b in enumerate(gbeta)}).view()
    return step6.mutate(**{f"_d{h}": step6[f"_m{h}"] * (1.0 - step6[f"_m{h}"]) for h in range(len(gbeta))}).view()


def _pass_metrics(last: Any, design: Design, q: int, n_groups: int, effects: bool,
                  ranges: tuple[np.ndarray, np.ndarray] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The sums per key (weights, residuals, log-likelihood, their products with the terms; with ``effects`` the
    derivatives), and with ``effects`` the sums per group (a second, cheaper query)."""
    w, r = last._w, last._r
    metrics: dict[str, Any] = {"w": w.sum(), "r0": r.sum(), "ll": last._ll.sum()}
    for j in range(q):
        x = last[f"_x{j}"]
        metrics[f"wx{j}"] = (w * x).sum()
        metrics[f"r1{j}"] = (r * x).sum()
        for m in range(j, q):
            metrics[f"wxx{j}_{m}"] = (w * x * last[f"_x{m}"]).sum()
    by_group: dict[str, Any] = {}
    if effects:  # the derivatives per key (K' d); the rest is summed per group
        for h in range(n_groups):
            d_h = last[f"_d{h}"]
            metrics[f"d{h}"] = d_h.sum()
            by_group[f"m{h}"] = last[f"_m{h}"].sum()
            for j in range(q):
                by_group[f"dx{h}_{j}"] = (d_h * last[f"_x{j}"]).sum()
        if ranges is not None:  # the diagnostics' counts ride on the last pass
            by_group.update(_range_metrics(last, design, *ranges, list(range(q))))
    return metrics, by_group


def _effect_sums(source: Source, last: Any, by_group: dict[str, Any], result: pd.DataFrame, G: int, q: int, *,
                 outside: bool) -> dict[str, np.ndarray]:
    """The AMEs' sums: each group's mean prediction and derivatives (per group), the derivatives per key, and
    (with ``outside``) the rows outside each control's range per group."""
    groups = source._run(last.group_by("_h").aggregate(**by_group), fetch=True, what="the adjusted gaps' query")
    at = pd.to_numeric(groups["_h"]).to_numpy(dtype=np.int64)
    if (at < 0).any() or (at >= G).any():
        raise LuskinError("The data changed while the model was being fitted: run the adjustment again.")

    def per_group(columns: Sequence[str]) -> np.ndarray:
        values = np.zeros((G, len(columns)))
        values[at] = _matrix(groups, columns)
        return values

    effects = {
        "m": per_group([f"m{h}" for h in range(G)]),                              # (group, as group h)
        "d": _matrix(result, [f"d{h}" for h in range(G)]),                        # (key, as group h)
        "dx": np.stack([per_group([f"dx{h}_{j}" for j in range(q)]) for h in range(G)]),  # (as h, group, x)
    }
    if outside:
        effects["outside"] = np.stack([per_group([f"o{h}_{j}" for j in range(q)]) for h in range(G)])
    return effects


# ------------------------------------------------------------------------------------------
# Average marginal effects and the decomposition from the effects' sums
# ------------------------------------------------------------------------------------------
def _ame(design: Design, effects: dict[str, np.ndarray], cov: np.ndarray, N: float, pk: int,
         q: int) -> tuple[np.ndarray, np.ndarray]:
    """AME per group (mean over rows of F(group g) - F(reference)) and the delta-method covariance.

    ``effects``: ``m`` (group, as group h) and ``dx`` (as h, group, control) summed per group, ``d``
    (key, as group h) per key: the sums of the prediction, its derivative and the derivative times x.
    """
    K = design.X
    gcols = list(design.group_cols)
    other = np.ones(pk + q, dtype=bool)
    other[gcols] = False
    m, d, dx = effects["m"], effects["d"], effects["dx"]
    ame = np.zeros(len(gcols))
    J = np.zeros((len(gcols), pk + q))
    for i, c in enumerate(gcols):
        h = i + 1
        ame[i] = float(m[:, h].sum() - m[:, 0].sum()) / N
        grad = np.concatenate([_xtk(K, d[:, h] - d[:, 0]), (dx[h] - dx[0]).sum(axis=0)]) / N
        J[i, other] = grad[other]
        J[i, c] = float(d[:, h].sum()) / N
    return ame, J @ cov @ J.T


def _decompose(design: Design, fit: Fit, n: np.ndarray, k: np.ndarray, sx: np.ndarray,
               effects: dict[str, np.ndarray] | None, num_names: Sequence[str], *, linear: bool,
               owner: Mapping[str, str] | None = None) -> list[Any]:
    """Oaxaca-Blinder (linear) or Yun (logistic) from per-key sums, as :func:`luskin_core.analyses.decompose.decompose`."""
    from luskin_core.analyses.decompose import decomposition

    K = design.X
    pk, q = K.shape[1], len(num_names)
    beta = fit.beta
    crit = critical_value(fit.df_resid if fit.use_t else None)
    codes = design.group_code
    ref = codes == 0
    gcols = list(design.group_cols)
    other = np.ones(pk + q, dtype=bool)
    other[gcols] = False
    other[0] = False

    def xsum(mask: np.ndarray, w0: np.ndarray, numbers: np.ndarray, zero: int | None = None) -> np.ndarray:
        """Sum over the keys in ``mask`` of the design times ``w0``, beside the numeric controls' sums."""
        v = np.concatenate([_xtk(K[mask], w0[mask]), numbers])
        if zero is not None:
            v[zero] = 0.0
        return v

    n_r = float(n[ref].sum())
    xbar_r = xsum(ref, n, sx[ref].sum(axis=0)) / n_r
    out = []
    for i, c in enumerate(gcols):
        mine = codes == i + 1
        n_g = float(n[mine].sum())
        raw = float(k[mine].sum() / n_g - k[ref].sum() / n_r)
        xbar_g = xsum(mine, n, sx[mine].sum(axis=0)) / n_g
        delta_x = np.where(other, xbar_g - xbar_r, 0.0)
        contrib = delta_x * beta
        if linear:
            unexplained = float(beta[c])
            g_unexp = np.zeros_like(beta)
            g_unexp[c] = 1.0
            g_expl = delta_x
            scale = 1.0
        else:
            assert effects is not None
            m, d, dx = effects["m"], effects["d"], effects["dx"]
            h = i + 1
            unexplained = float(m[h, h] - m[h, 0]) / n_g
            g_unexp = (xsum(mine, d[:, h], dx[h][h]) - xsum(mine, d[:, 0], dx[0][h], zero=c)) / n_g
            g_expl = xsum(mine, d[:, 0], dx[0][h], zero=c) / n_g - xsum(ref, d[:, 0], dx[0][0]) / n_r
            total = float(contrib.sum())
            scale = (raw - unexplained) / total if total != 0 else 0.0
        by_number: dict[str, float] = {}  # a curve's terms count for their control
        for j, name in enumerate(num_names):
            control = owner.get(name, name) if owner else name
            by_number[control] = by_number.get(control, 0.0) + float(contrib[pk + j] * scale)
        by_control = list(by_number.items())
        by_control += [(name, float(contrib[list(cols)].sum() * scale)) for name, cols in design.control_cols.items()]
        out.append(decomposition(raw, unexplained, g_expl, g_unexp, fit.cov, crit, by_control))
    return out


def _outside(source: Source, coded: Any, key_exprs: dict[str, Any], complete: Any, first_keys: dict[str, np.ndarray],
             design: Design, lo: np.ndarray, hi: np.ndarray, x_index: Sequence[int]) -> np.ndarray:
    """Rows of each group outside each group's range of each numeric control: (as group h, group, control)."""
    codes = design.group_code
    G = int(codes.max()) + 1
    q = len(x_index)
    table = coded.filter(complete)
    grouped = table.select(**key_exprs, **{f"_x{i}": table[f"_x{i}"] for i in x_index})
    metrics = _range_metrics(grouped, design, lo, hi, x_index)
    result = source._run(grouped.group_by(list(key_exprs)).aggregate(**metrics), fetch=True,
                         what="the adjusted gaps' query")
    result = result.iloc[_positions(result, first_keys)].reset_index(drop=True)
    per_key = _range_counts(result, G, q)
    return np.stack([np.stack([per_key[h][codes == g].sum(axis=0) for g in range(G)]) for h in range(G)])


def _group_code(table: Any, radix: Sequence[int], n_group_parts: int) -> Any:
    """Each row's group as one integer (the key's group columns in mixed radix, as :func:`_packed_key` packs them)."""
    if "_kid" in table.columns:  # the rows kept for the fit: only the packed key
        size = math.prod(radix[:n_group_parts])
        return table["_kid"] % size if size < math.prod(radix) else table["_kid"]
    return _packed_key(table, [f"_k{i}" for i in range(n_group_parts)], radix[:n_group_parts])


def _fine_counts(source: Source, coded: Any, complete: Any, radix: Sequence[int],
                 n_group_parts: int, controls: Sequence[tuple[str, int, float, float]]) -> dict[str, np.ndarray]:
    """Rows per (fine bin, group) of each numeric control (name, column, lowest, highest), one query each.

    The proxy check's counts (:func:`~luskin_core.analyses.adjust_diagnostics.proxy_levels`): equal-width
    bins need only the range the first pass found, so no quantile (a sort of every row) is computed.
    """
    from luskin_core.analyses.adjust_diagnostics import FINE_BINS, fine_bin_bounds

    ibis = load_ibis()
    table = coded.filter(complete)
    group = _group_code(table, radix, n_group_parts)
    out: dict[str, np.ndarray] = {}
    for name, i, low, high in controls:
        if not low < high:
            continue
        start, scale = fine_bin_bounds(low, high)
        fine = ibis.least(ibis.greatest(((table[f"_x{i}"] - start) * scale).floor(), 0), FINE_BINS - 1)
        counted = table.select(_g=group, _b=fine).group_by(["_g", "_b"]).aggregate(_n=ibis._.count())
        result = source._run(counted, fetch=True, what="the adjusted gaps' query")
        g = pd.to_numeric(result["_g"]).to_numpy(dtype=np.int64)
        b = pd.to_numeric(result["_b"]).to_numpy(dtype=np.int64)
        counts = np.zeros((FINE_BINS, int(g.max()) + 1 if len(g) else 1))
        np.add.at(counts, (b, g), pd.to_numeric(result["_n"]).to_numpy(dtype=float))
        out[name] = counts
    return out


def _spline_term(x: Any, knots: Sequence[float], j: int) -> Any:
    """The j-th non-linear term of a restricted cubic spline, as :func:`~luskin_core.analyses.adjust_model.spline_terms`
    computes it in memory, as an engine expression."""
    ibis = load_ibis()
    t = [float(v) for v in knots]
    last, before, k = t[-1], t[-2], t[j - 1]
    scale = (last - t[0]) ** 2

    def cube(at: float) -> Any:
        v = ibis.greatest(x - at, 0.0)
        return v * v * v

    return (cube(k) - cube(before) * ((last - k) / (last - before))
            + cube(last) * ((before - k) / (last - before))) / scale


def _clipped(value: Any) -> Any:
    """``value`` held within +-ETA_LIMIT, where exp still has a double."""
    ibis = load_ibis()
    return ibis.least(ibis.greatest(value, -ETA_LIMIT), ETA_LIMIT)


def _range_metrics(table: Any, design: Design, lo: np.ndarray, hi: np.ndarray, x_index: Sequence[int]) -> dict[str, Any]:
    """Per key, the rows outside each group's range of each numeric control (``table``'s ``_x{i}`` columns)."""
    codes = design.group_code
    metrics = {}
    for h in range(int(codes.max()) + 1):
        mine = codes == h
        for j, i in enumerate(x_index):
            low, high = float(np.nanmin(lo[mine, j])), float(np.nanmax(hi[mine, j]))
            x = table[f"_x{i}"]
            metrics[f"o{h}_{j}"] = ((x < low) | (x > high)).cast("int32").sum()
    return metrics


def _range_counts(result: pd.DataFrame, G: int, q: int) -> np.ndarray:
    out = np.zeros((G, len(result), q))
    for h in range(G):
        out[h] = _matrix(result, [f"o{h}_{j}" for j in range(q)])
    return out


def _positions(result: pd.DataFrame, first_keys: dict[str, np.ndarray]) -> np.ndarray:
    """Where each of the first pass's keys is in a later aggregate (the same rows, in any order)."""
    index = pd.MultiIndex.from_arrays([first_keys[c] for c in first_keys], names=list(first_keys))
    got = pd.MultiIndex.from_arrays([pd.to_numeric(result[c]).to_numpy(dtype=np.int64) for c in first_keys],
                                    names=list(first_keys))
    position = got.get_indexer(index)
    if (position < 0).any() or len(result) != len(index):
        raise LuskinError("The data changed while the model was being fitted: run the adjustment again.")
    return position


def _numeric_diagnostics(names: Sequence[str], design: Design, groups: Sequence[str], n: np.ndarray, sx: np.ndarray,
                         sxx: np.ndarray, lo: np.ndarray, hi: np.ndarray, outside: np.ndarray | None,
                         curves: Collection[str] = ()) -> list[str]:
    """Little overlap on the numeric controls, from per-key sums and counts (as in memory)."""
    from luskin_core.analyses.adjust_diagnostics import numeric_overlap

    if outside is None:
        return []
    codes = design.group_code
    ref = codes == 0
    n_r = float(n[ref].sum())
    out: list[str] = []
    for j, name in enumerate(names):
        moments = {}
        for gi in range(len(groups)):
            mine = codes == gi
            total = float(n[mine].sum())
            if total == 0:
                continue
            mean = float(sx[mine, j].sum()) / total
            var = (float(sxx[mine, j, j].sum()) - total * mean * mean) / max(total - 1, 1.0)
            moments[gi] = (mean, max(var, 0.0), total)
        if 0 not in moments:
            continue
        per_group = []
        for gi, (m_g, v_g, total) in moments.items():
            if gi == 0:
                continue
            share = float(outside[0][gi, j]) / total
            back = float(outside[gi][0, j]) / n_r
            per_group.append((groups[gi], m_g, v_g, share, back))
        out += numeric_overlap(name, groups[0], moments[0][0], moments[0][1], per_group, curve=name in curves)
    return out


__all__ = ["adjust_by_sums"]
