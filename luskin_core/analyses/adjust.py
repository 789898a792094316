"""Gaps adjusted for many controls at once: a regression with the group as a factor, read as points.

With ten controls the strata of a stratified audit are nearly all empty, so the field fits a
model: logistic for a yes/no outcome (a score too: past its cut by the one score rule, the rows the audit counts
as positive), linear for an amount, the group as a factor (its reference
level the audit's reference group), numeric controls linear and text controls categorical. The
headline per group is the average marginal effect (AME): the mean over every row of the
predicted outcome with the group set to this group minus set to the reference (Stata's
``margins`` for a factor variable), with a delta-method interval (cluster-robust with
``cluster``), its p-value and the p-value adjusted over the groups (Holm by default, the
audit's correction), the odds ratio for a yes/no outcome, and a verdict in the audit's own four
states (:mod:`luskin_core.stats.comparisons`): too few rows, within the tolerance, beyond it, or
beyond it but possibly chance. The flag regulators read (CFPB examinations, Colorado's
insurance rule) is both parts at once: an adjusted effect of at least the tolerance and an
adjusted p-value under 0.05.

The fit never needs the rows themselves: rows with the same group, control values (and
cluster) are one *cell* carrying its row count ``n``, its sum of outcomes ``k`` and (numbers)
the sum of squares. A Newton (IRLS) fit on the cells with these weights gives exactly the
row-level estimates, so an engine can make the cells with one GROUP BY where the data lives
(:func:`~luskin_core.analyses.adjust_engine.engine_cells`) and an all-categorical design with millions of rows fits in
milliseconds. The raw gap is split into the part the controls explain and the part they do
not in :mod:`luskin_core.analyses.decompose`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from luskin_core.analyses.adjust_diagnostics import diagnose
from luskin_core.analyses.adjust_engine import cell_bound, engine_cells, resolved_controls
from luskin_core.analyses.adjust_model import (
    MAX_CELLS,
    AdjustedGap,
    AdjustResult,
    Cells,
    aliased_columns,
    average_marginal_effects,
    build_design,
    category_codes,
    cells_from_frame,
    check_levels,
    check_log,
    check_size,
    compared_groups,
    finish,
    fit_cells,
    reference_share,
    rows_note_text,
    sparse_gram,
    without_columns,
)
from luskin_core.analyses.adjust_reading import code_controls
from luskin_core.analyses.adjust_sums import adjust_by_sums
from luskin_core.analyses.decompose import decompose
from luskin_core.counting.sources import Source
from luskin_core.errors import LuskinError
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.spec.options import AdjustOptions


def adjust(data: Any, spec: AuditSpec, controls: Sequence[str] = (), *, categorical: Sequence[str] = (),
           cluster: str | None = None, tolerance: float | None = None, source_name: str | None = None,
           seed: int = 0, max_cells: int | None = None, bins: Mapping[str, int] | None = None,
           splines: Mapping[str, int] | None = None, log: bool = False,
           as_numbers: Sequence[str] = ()) -> AdjustResult:
    """Each group's gap against the reference, adjusted for ``controls`` by regression.

    ``data`` is a pandas frame or a :class:`luskin_core.counting.sources.Source` (then the cells are made
    by the engine). Groups are the audit's (``spec``: a condition vs the rest, each value of a
    column, or crosses), the reference the audit's :func:`~luskin_core.stats.comparisons.choose_reference`.
    A yes/no outcome gets a logistic model; so does a score (``outcome_type="score"``), on the rows past its cut
    by the one score rule (strictly above the median, or at or above ``score_cutoff``: the rows the audit counts as
    positive), its gaps points of that share against the audit's tolerance and the result's ``score_rule`` saying
    which rule made it. A numeric control is read as the audit and the scan read a column: as categories
    when it holds few values or whole-number codes (:func:`~luskin_core.counting.plan.read_as_categories`), else
    as a straight line; ``as_numbers`` fits such codes as straight lines all the same, ``categorical`` reads
    numbers with many values as categories (the result's ``codes`` and ``reading`` say what was read which way);
    ``bins`` cuts numeric controls into that many bins of equal shares of the audited rows (cut
    points rounded as the audit rounds its group bins), each bin its own effect; ``splines`` fits
    numeric controls as curves, restricted cubic splines with that many knots (3 to 7, at Harrell's
    quantiles, rounded alike), straight beyond the outer knots.
    ``max_cells`` (engine sources): past this many cells the fit runs from per-key sums computed in the
    engine, one query per Newton step (default MAX_CELLS); exact either way. ``seed`` is kept for
    callers that pass it; no step samples.

    An amount (``outcome_type="amount"``) gets a linear model on the amount itself, or with ``log`` on its
    logarithm (every amount above 0), and its gaps read back as shares of the reference's amount (positive: the
    group fares worse), judged against the tolerance as a share (5%: the Pay Transparency Directive's).
    """
    if tolerance is not None:
        spec = spec.with_changes(tolerance=tolerance)
    if not controls and not categorical and not bins and not splines and not as_numbers:
        raise LuskinError("Choose at least one control column to adjust for (e.g. age and hours worked).")
    if log:
        check_log(data, spec)
    named = {str(c).lower() for c in controls}
    controls = [*controls, *(c for c in as_numbers if str(c).lower() not in named)]
    codes = code_controls(data, spec, controls, categorical=categorical, as_numbers=as_numbers, bins=bins,
                          splines=splines)
    categorical = [*categorical, *codes]
    if isinstance(data, pd.DataFrame):
        cells = cells_from_frame(data, spec, controls, categorical, cluster, bins, splines, log=log)
        result = adjust_cells(cells, spec, source=source_name or "in memory")
    else:
        result = adjust_source(data, spec, controls, categorical, cluster, max_cells=max_cells, bins=bins,
                               splines=splines, where=source_name or data.name, log=log)
    return replace(result, codes=codes)


def run(data: Any, spec: AuditSpec, options: AdjustOptions | None = None, *,
        source: str | None = None) -> AdjustResult:
    """The adjusted gaps as an entry of the analyses' table (``run(data, spec, options)``): :func:`adjust` with the
    controls, bins, curves, cluster and logarithm of ``options``; the tolerance is the specification's.
    ``source`` names the data in the result's words."""
    options = options or AdjustOptions()
    return adjust(data, spec, options.controls, categorical=options.categorical, cluster=options.cluster,
                  source_name=source, max_cells=options.max_cells, bins=dict(options.bins) or None,
                  splines=dict(options.splines) or None, log=options.log, as_numbers=options.as_numbers)


def adjust_source(source: Source, spec: AuditSpec, controls: Sequence[str] = (), categorical: Sequence[str] = (),
                  cluster: str | None = None, *, max_cells: int | None = None, where: str = "engine",
                  bins: Mapping[str, int] | None = None, splines: Mapping[str, int] | None = None,
                  log: bool = False) -> Any:
    """The adjusted gaps of ``source``: from its cell table, or, when numeric controls would make more than
    ``max_cells`` cells, from per-key sums computed in the engine (:mod:`luskin_core.analyses.adjust_sums`); exact either way."""
    plan, numeric, cats, cluster_name, view, knots, binned = resolved_controls(source, spec, controls, categorical, cluster,
                                                                        bins, splines)
    limit = max_cells or MAX_CELLS
    if numeric and cell_bound(source, view, numeric, cats, limit) > limit:
        return adjust_by_sums(source, spec, plan, view, numeric, cats, cluster_name, where=where, splines=knots,
                              binned=binned, log=log)
    return adjust_cells(engine_cells(source, spec, plan, view, numeric, cats, cluster_name, knots, binned, log=log), spec,
                        source=where)


def adjust_cells(cells: Cells, spec: AuditSpec, *, source: str = "in memory") -> AdjustResult:
    """The adjusted gaps from a cell table (in-memory or made by an engine)."""

    frame = cells.frame
    if len(frame) == 0:
        raise LuskinError("No row has a value in every control, so nothing can be adjusted.")
    for name in cells.categorical:   # refused in plain words, whichever way the cells were made
        check_levels(name, int(frame[name].nunique()))
    for name in cells.numeric:
        check_size(name, frame[name].to_numpy(dtype=float), "control")
    if "y2" in frame.columns and not np.isfinite(frame["y2"].to_numpy(dtype=float)).all():
        raise LuskinError(f"The outcome '{spec.outcome}' holds numbers too large for a model (their squares "
                          "overflow): rescale it (divide it by a power of ten).")
    reference, groups = compared_groups(cells, spec)
    n = frame["n"].to_numpy(dtype=float)
    k = frame["k"].to_numpy(dtype=float)
    y2 = frame["y2"].to_numpy(dtype=float) if "y2" in frame.columns else None
    linear = cells.linear
    if not linear:
        total_k = float(k.sum())
        if total_k == 0 or total_k == float(n.sum()):
            raise LuskinError(f"Every analysed row has the same outcome ({'positive' if total_k else 'negative'}), "
                              "so there is no gap to adjust.")
    design, notes = build_design(cells, groups)
    # Group columns last: a control that duplicates a group is then found as the group's alias.
    last = [j for j in range(design.X.shape[1]) if j not in design.group_cols] + list(design.group_cols)
    gram = design.blocks.gram(n) if design.blocks is not None else sparse_gram(design.X, n)
    aliased = sorted(last[j] for j in aliased_columns(gram[np.ix_(last, last)]))
    aliased_groups = [c for c in aliased if c in design.group_cols]
    if aliased_groups:
        names = ", ".join(design.names[c].removeprefix("group = ") for c in aliased_groups)
        raise LuskinError(f"The controls determine the group exactly (for {names}), so no gap can be held apart from "
                          "them: leave out the control that encodes the group (a proxy such as a code per group).")
    if aliased:
        design, more = without_columns(design, aliased)
        notes += more
    fit = fit_cells(design.X, n, k, y2, linear=linear,
                    clusters=category_codes(frame["cluster"])[0] if cells.cluster else None, blocks=design.blocks)
    ame, ame_cov = average_marginal_effects(design, fit, n, linear=linear)
    decomposition = decompose(design, fit, n, k, linear=linear)
    diagnostics = notes + diagnose(cells, design, fit, n, k, groups, linear=linear)
    rows_note = rows_note_text(cells, fit, len(design.names))
    return finish(cells, spec, source=source, names=design.names, group_cols=design.group_cols, fit=fit, ame=ame,
                  ame_cov=ame_cov, decomposition=decomposition, diagnostics=diagnostics, groups=groups,
                  reference=reference, rows_note=rows_note,
                  reference_share=reference_share(design, fit, n, linear=linear))


__all__ = ["AdjustOptions", "AdjustResult", "AdjustedGap", "Cells", "adjust", "adjust_cells", "adjust_source", "cells_from_frame", "fit_cells", "run"]
