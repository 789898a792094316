"""Retraining to controlled fairness: the paper's experiment (sections 3.1, 3.2 and 3.5).

The rows are split 40/40/20 into D1, D2 and D4 (seeded). The first model A1 is trained on D1
with the recorded labels; its risk scores on D2 feed Algorithm 1 or 2, which builds the
synthetic labelled set D3 from D2; the second model C2 is trained on D3. Everything is
reported on D4, which neither model has seen: for the recorded labels, A1's decisions and
C2's decisions, the ratio of each protected class in each filter cell (with Wilson intervals,
the gap and its test, via :func:`luskin_core.analyses.audit.audit_arrays`) and each model's AUC against
the recorded labels: the shape of the paper's Tables 1-4.

Split (:mod:`luskin_core.corrections.pipeline`, shape 40/40/20). Rows are stratified by outcome x protected
class x filter cell, so that every split holds each combination in proportion (a 20% test set of
a small cell could otherwise miss a class). When a stratum has fewer than ``MIN_STRATUM`` rows,
the split falls back to coarser strata (outcome x class, then outcome, then none); the result
says which was used. D4 takes 20% (rounded up), and the rest is halved (D2 gets the odd row).
Each split is kept in the data's own row order.

Warnings. A correction can backfire; the result says so in words (``RetrainResult.warnings``):
when C2's AUC on D4 is more than ``AUC_DROP`` (0.02) below A1's, and for each filter cell where
C2's gap on D4 is larger than A1's by at least ``GAP_GROWTH`` (one point) and either by more
than the specification's tolerance or from within the tolerance to past it.

Decisions. A model's decision on a row is ``score >= threshold`` (default 0.5) for both A1
and C2. Algorithm 1 relabels D2 with A1's decisions at that threshold. A cell whose gap on D2
is already within the specification's tolerance is left as it is (the paper's CheckFair).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score

from luskin_core.analyses.audit import AuditResult, audit_arrays
from luskin_core.corrections.correction import (
    DECISIONS,
    CorrectionResult,
    CorrectionStage,
    GroupCounts,
    confusion_counts,
)
from luskin_core.corrections.models import make_model, risk_scores
from luskin_core.corrections.pipeline import MIN_STRATUM, SHAPES, prepare_split, split_positions
from luskin_core.corrections.relabel import RelabelResult, relabel
from luskin_core.errors import LuskinError
from luskin_core.formatting import format_points
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.spec.names import GroupNames
from luskin_core.spec.options import ALGORITHM_NAMES, MODEL_NAMES, RETRAIN_KINDS, RetrainOptions

MIN_ROWS = 50          # below this a 20% test set holds too few rows to say anything
AUC_DROP = 0.02        # C2's AUC this much below A1's is worth a warning
GAP_GROWTH = 0.01      # a gap that grew by less than one point is not called grown
SYNTHETIC_COLUMNS = ("luskin_risk", "luskin_label_before", "luskin_label_after")

Progress = Callable[[float, str], None]


# ----------------------------------------------------------------------------------------
# Result
# ----------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class RetrainResult:
    """What the experiment found on D4, how D3 was built, and the trained second model.

    ``original``, ``first`` and ``second`` audit D4's recorded labels, A1's and C2's
    decisions. ``d2_before`` / ``d2_after`` audit the labels of D2 before and after the
    relabelling (A1's decisions or the recorded labels; the synthetic labels of D3).
    ``synthetic`` is D3 for export: D2's rows with their original columns plus
    ``luskin_risk``, ``luskin_label_before`` and ``luskin_label_after`` (0/1). ``warnings`` says
    in plain sentences where the correction backfired (see the module's "Warnings").
    """

    spec: AuditSpec
    options: RetrainOptions
    features: tuple[str, ...]
    dropped_features: dict[str, str]
    sizes: dict[str, int]
    stratified_by: str
    original: AuditResult
    first: AuditResult
    second: AuditResult
    auc_first: float
    auc_second: float
    relabelling: RelabelResult
    d2_before: AuditResult
    d2_after: AuditResult
    timings: dict[str, float]
    synthetic: pd.DataFrame = field(repr=False)
    first_model: Any = field(repr=False)
    second_model: Any = field(repr=False)
    warnings: tuple[str, ...] = ()
    held_out: tuple[tuple[GroupCounts, ...], tuple[GroupCounts, ...]] = field(default=((), ()), repr=False)

    @property
    def seed(self) -> int:
        return self.options.seed

    @property
    def correction(self) -> CorrectionResult:
        """A1 (before) and C2 (after) on D4: AUC against the recorded outcomes and the counts per class and cell."""
        options = self.options
        algorithm = f"Algorithm {options.algorithm}"
        stages = (
            CorrectionStage("before", f"A1 ({options.first})", self.held_out[0], "AUC", float(self.auc_first)),
            CorrectionStage("after", f"C2 ({options.second}), {algorithm}", self.held_out[1], "AUC",
                            float(self.auc_second)),
        )
        return CorrectionResult(
            tool="retrain", name=f"Retraining, {algorithm}, A1 {options.first} then C2 {options.second}",
            options=options, stages=stages, n_test=int(self.original.n_rows), gap_measure=DECISIONS,
            warnings=tuple(self.warnings), spec=self.spec, group_in_protected=(True, False),
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready report (no models, no rows)."""
        return {
            "kind": "retrain",
            "spec": self.spec.to_dict(),
            "options": self.options.to_dict(),
            "seed": self.options.seed,
            "models": {"first": self.options.first, "second": self.options.second},
            "features": list(self.features),
            "dropped_features": dict(self.dropped_features),
            "sizes": dict(self.sizes),
            "stratified_by": self.stratified_by,
            "original": self.original.to_dict(),
            "first": self.first.to_dict(),
            "second": self.second.to_dict(),
            "auc": {"first": self.auc_first, "second": self.auc_second},
            "relabel": self.relabelling.to_dict(),
            "synthetic_audit": {"before": self.d2_before.to_dict(), "after": self.d2_after.to_dict()},
            "timings": dict(self.timings),
            "warnings": list(self.warnings),
            "correction": self.correction.to_dict(),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, allow_nan=False)

    def paper_table(self, *, ci: bool = False, gap: bool = False, digits: int = 3) -> pd.DataFrame:
        """The paper's table (Tables 1-4): see :func:`paper_table`."""
        return paper_table(self.to_dict(), ci=ci, gap=gap, digits=digits)

    def write_synthetic(self, path: str | Path) -> Path:
        """Write D3 as CSV (no index) and return the path."""
        target = Path(path)
        try:
            from luskin_core.export import write_csv

            write_csv(self.synthetic, target)
        except OSError as err:
            raise LuskinError(f"Cannot write the synthetic data to '{target}': {err.strerror}.") from None
        return target

    def synthetic_csv(self) -> bytes:
        """D3 as CSV bytes (for a download button)."""
        from luskin_core.export import csv_bytes

        return csv_bytes(self.synthetic)


def paper_table(report: Mapping[str, Any], *, ci: bool = False, gap: bool = False, digits: int = 3) -> pd.DataFrame:
    """The paper's table from a retrain report (``RetrainResult.to_dict()`` or its JSON).

    Columns: (Original / A1 (kind) / C2 (kind)) x filter cell, the cell where the filter
    does not hold first as in the paper (UE, E). Rows: AUC against the recorded labels
    (repeated under each cell of a model; empty for the recorded labels), then the ratio
    of the protected group and of the other class on D4. With ``ci`` the entries are text
    with the Wilson 95% interval; with ``gap`` a row of group - other gaps is added.
    """
    blocks = [("Original", report["original"], None),
              (f"A1 ({report['models']['first']})", report["first"], report["auc"]["first"]),
              (f"C2 ({report['models']['second']})", report["second"], report["auc"]["second"])]
    cells = report["original"]["cells"]
    keys: list[Any] = []
    for c in cells:
        if c["filter_holds"] not in keys:
            keys.append(c["filter_holds"])
    keys.sort(key=lambda k: (k is not None, bool(k)))  # not-filter (False) before filter (True)
    names = {c["filter_holds"]: c["cell"] for c in cells}
    group = next(c["label"] for c in cells if c["in_group"])
    other = next(c["label"] for c in cells if not c["in_group"])
    columns = pd.MultiIndex.from_tuples([(b, names[k]) for b, _, _ in blocks for k in keys])
    rows: dict[str, list[Any]] = {"AUC": [], group: [], other: []}
    if gap:
        rows["Gap"] = []

    def number(x: float | None) -> Any:
        if x is None:
            return "" if ci else np.nan
        return f"{x:.{digits}f}" if ci else float(x)

    for _, audit_dict, auc in blocks:
        for k in keys:
            rows["AUC"].append(number(auc))
            for member, label in ((True, group), (False, other)):
                c = next(c for c in audit_dict["cells"] if c["filter_holds"] == k and c["in_group"] == member)
                value = number(c["ratio"])
                if ci and c["ratio"] is not None:
                    value = f"{value} [{c['ci_low']:.{digits}f}, {c['ci_high']:.{digits}f}]"
                rows[label].append(value)
            if gap:
                g = next(g for g in audit_dict["gaps"] if g["filter_holds"] == k)
                rows["Gap"].append(number(g["gap"]))
    return pd.DataFrame.from_dict(rows, orient="index", columns=columns)


# ----------------------------------------------------------------------------------------
# The experiment
# ----------------------------------------------------------------------------------------
def split_rows(
    n: int, strata: Sequence[tuple[str, np.ndarray | None]], seed: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, str]:
    """Seeded 40/40/20 positions (D1, D2, D4), each sorted, and the stratification used.

    ``strata`` lists candidate stratifications, finest first, as (description, codes); the
    first whose every stratum has at least ``MIN_STRATUM`` rows is used (None: no strata), the
    rule of :mod:`luskin_core.corrections.pipeline`, which :func:`retrain` uses through ``prepare_split``.
    """
    for name, codes in strata:
        if codes is not None and np.unique(codes, return_counts=True)[1].min() < MIN_STRATUM:
            continue
        parts = split_positions(n, SHAPES["40/40/20"], codes, seed)
        return parts["D1"], parts["D2"], parts["D4"], name
    raise AssertionError("the last stratification must be None")  # pragma: no cover


def _auc(y: np.ndarray, scores: np.ndarray) -> float:
    return float(roc_auc_score(y, scores))


def _check_split(name: str, role: str, y: np.ndarray, in_group: np.ndarray, names: GroupNames) -> None:
    if y.min() == y.max():
        value = "positive" if y[0] == 1 else "not positive"
        raise LuskinError(
            f"In the {name} part of the split ({role}), every row's outcome is {value}, so "
            f"{'a model cannot be trained' if name == 'D1' else 'the comparison cannot be made'}. "
            "The data has too few rows of one outcome: use more data or another seed."
        )
    if in_group.all() or not in_group.any():
        missing = names.other if in_group.all() else names.group
        raise LuskinError(
            f"The {name} part of the split ({role}) has no {missing} rows, so the classes cannot be "
            "compared. Use more data or another seed."
        )


def retrain(
    frame: pd.DataFrame,
    spec: AuditSpec,
    options: RetrainOptions | None = None,
    progress: Progress | None = None,
) -> RetrainResult:
    """Run the paper's experiment on ``frame`` and report on the held-out 20% (D4).

    ``progress(fraction, message)`` is called as the work advances (for a progress bar).
    """
    options = options or RetrainOptions()
    report = progress or (lambda fraction, message: None)
    clock = time.perf_counter
    start = clock()
    timings: dict[str, float] = {}

    report(0.0, "Checking the data and splitting it 40/40/20")
    split = prepare_split(frame, spec, shape="40/40/20", seed=options.seed, min_rows=MIN_ROWS,
                          purpose="Retraining splits the data 40/40/20 and", features=options.features,
                          exclude=options.exclude, exclude_protected=False)
    y, in_group, filt = split.y, split.in_group, split.cells
    names = split.names or GroupNames.of(spec)
    columns = list(split.features)
    d1, d2, d4 = split.part("D1"), split.part("D2"), split.part("D4")
    stratified_by = split.stratified_by
    roles = {"D1": "training the first model", "D2": "building the synthetic data", "D4": "the final report"}
    for name, idx in (("D1", d1), ("D2", d2), ("D4", d4)):
        _check_split(name, roles[name], y[idx], in_group[idx], names)
    rows = split.frame
    X1, X2, X4 = rows.iloc[d1][columns], rows.iloc[d2][columns], rows.iloc[d4][columns]
    f2 = filt[d2] if filt is not None else None
    f4 = filt[d4] if filt is not None else None
    timings["split"] = clock() - start

    report(0.05, f"Training the first model A1 ({MODEL_NAMES[options.first]}) on D1 ({len(d1):,} rows)")
    t = clock()
    first_model = make_model(options.first, rows, columns, random_state=options.seed).fit(X1, y[d1])
    timings["first"] = clock() - t

    report(0.4, f"Scoring D2 and building the synthetic labels ({ALGORITHM_NAMES[options.algorithm]})")
    t = clock()
    risk2 = risk_scores(first_model, X2)
    relabelled = relabel(options.algorithm, y[d2], risk2, in_group[d2], f2, threshold=options.threshold,
                         direction=options.direction, all_cells=options.all_cells, tolerance=spec.tolerance)
    labels3 = relabelled.labels
    if labels3.min() == labels3.max():
        raise LuskinError(
            "Every row of the synthetic data has the same label, so the second model cannot be trained. "
            + ("The first model decides the same way for every row at this threshold: try another threshold "
               "or Algorithm 2." if options.algorithm == 1 else "Use more data.")
        )
    timings["relabel"] = clock() - t

    report(0.5, f"Training the second model C2 ({MODEL_NAMES[options.second]}) on the synthetic data D3")
    t = clock()
    second_model = make_model(options.second, rows, columns, random_state=options.seed).fit(X2, labels3)
    timings["second"] = clock() - t

    report(0.9, f"Reporting on the held-out data D4 ({len(d4):,} rows)")
    t = clock()
    risk_first4 = risk_scores(first_model, X4)
    risk_second4 = risk_scores(second_model, X4)
    y4, g4 = y[d4], in_group[d4]
    original = audit_arrays(y4, g4, f4, spec, source="recorded outcome on D4", names=names)
    first = audit_arrays((risk_first4 >= options.threshold).astype(np.int8), g4, f4, spec,
                         source=f"first model A1 ({options.first}) on D4", names=names)
    second = audit_arrays((risk_second4 >= options.threshold).astype(np.int8), g4, f4, spec,
                          source=f"second model C2 ({options.second}) on D4", names=names)
    before_source = "first model A1's decisions on D2" if options.algorithm == 1 else "recorded outcome on D2"
    d2_before = audit_arrays(relabelled.labels_before, in_group[d2], f2, spec, source=before_source, names=names)
    d2_after = audit_arrays(labels3, in_group[d2], f2, spec, source="synthetic labels (D3)", names=names)
    auc_first, auc_second = _auc(y4, risk_first4), _auc(y4, risk_second4)
    cell_order = (None,) if f4 is None else (True, False)
    held_out = tuple(
        confusion_counts(y4, (risk >= options.threshold).astype(np.int8), g4.astype(bool), f4,
                         group_order=(True, False), cell_order=cell_order,
                         group_names=lambda member: names.group if member else names.other,
                         cell_names=spec.cell_name)
        for risk in (risk_first4, risk_second4))
    synthetic = rows.iloc[d2].copy()
    synthetic["luskin_risk"] = risk2
    synthetic["luskin_label_before"] = relabelled.labels_before.astype(np.int64)
    synthetic["luskin_label_after"] = labels3.astype(np.int64)
    timings["report"] = clock() - t
    timings["total"] = clock() - start
    report(1.0, "Done")
    return RetrainResult(
        spec=spec, options=options, features=tuple(columns), dropped_features=dict(split.dropped),
        sizes={"D1": len(d1), "D2": len(d2), "D4": len(d4)}, stratified_by=stratified_by,
        original=original, first=first, second=second, auc_first=auc_first, auc_second=auc_second,
        relabelling=relabelled, d2_before=d2_before, d2_after=d2_after,
        timings={k: round(v, 4) for k, v in timings.items()},
        synthetic=synthetic, first_model=first_model, second_model=second_model,
        warnings=retrain_warnings(spec, first, second, auc_first, auc_second, names=names),
        held_out=(held_out[0], held_out[1]),
    )


def _points(x: float) -> str:
    """A share as percentage points, e.g. 0.021 -> '2.1'."""
    return format_points(x)


def retrain_warnings(spec: AuditSpec, first: AuditResult, second: AuditResult, auc_first: float,
                     auc_second: float, *, names: GroupNames | None = None) -> tuple[str, ...]:
    """Plain sentences for every way the retrained model C2 did worse than A1 on D4 (module doc); ``names``: the
    classes as the data names them (default: the spec's own)."""
    names = names or GroupNames.of(spec)
    out: list[str] = []
    drop = auc_first - auc_second
    if drop > AUC_DROP:
        out.append(
            f"The retrained model C2's AUC fell from {auc_first:.2f} to {auc_second:.2f} "
            f"({_points(drop)} points) on the held-out rows D4: it ranks people by the recorded outcome "
            "worse than the first model A1 did."
        )
    tolerance = float(spec.tolerance)
    for gap in first.gaps:
        key = gap.filter_holds
        before, after = gap.gap, second.gap(key).gap
        if before is None or after is None:
            continue
        grown = abs(after) - abs(before)
        if grown >= GAP_GROWTH and (grown > tolerance or abs(before) <= tolerance < abs(after)):
            where = "all rows" if key is None else f"the cell '{spec.cell_name(key)}'"
            past = " and is now past the tolerance" if abs(before) <= tolerance < abs(after) else ""
            out.append(
                f"In {where} the gap between {names.group} and {names.other} grew from "
                f"{_points(abs(before))} to {_points(abs(after))} points on the held-out rows D4 after retraining "
                f"(first model A1 vs retrained model C2){past}: the correction made this cell less fair."
            )
    return tuple(out)


# ----------------------------------------------------------------------------------------
# Saving the second model
# ----------------------------------------------------------------------------------------
# Types a Luskin model file may hold beyond skops' defaults (our pipelines' own steps), each with the one
# way skops builds it in a file Luskin saves (derived by saving each kind: LR, MLP and linear SVM pipelines
# from luskin_core.corrections.models, with and without text columns). The way matters: a type named under another
# loader is called with the file's own arguments (ConstructorFromReduceNode calls ``plain_missing(*args)``,
# a PartialNode or MethodNode call it too), so a type is trusted only under the loader it was saved with.
# A prefix such as "numpy." would also admit helpers that run code when the file is loaded.
_TRUSTED_LOADERS: dict[str, str] = {
    "luskin_core.corrections.models.plain_missing": "FunctionNode",
    "numpy.dtype": "DTypeNode",
    "sklearn.neural_network._stochastic_optimizers.AdamOptimizer": "ObjectNode",
}
_TRUSTED_TYPES = frozenset(_TRUSTED_LOADERS)
MAX_SCHEMA_BYTES = 50_000_000   # a saved Luskin model's schema is a few hundred kilobytes
_NOT_A_MODEL = "This file is not a model saved by Luskin (skops format)."


def model_bytes(model: Any) -> bytes:
    """The fitted model as skops bytes (a safe, inspectable format; for a download button)."""
    import skops.io as sio

    return sio.dumps(model)


def save_model(model: Any, path: str | Path) -> Path:
    """Save the fitted model with skops to ``path`` and return it."""
    target = Path(path)
    try:
        target.write_bytes(model_bytes(model))
    except OSError as err:
        raise LuskinError(f"Cannot write the model to '{target}': {err.strerror}.") from None
    return target


def load_model(source: str | Path | bytes) -> Any:
    """Load a model saved by :func:`save_model`; anything else is refused in one plain sentence.

    Refused: a file that is not a skops archive; one holding types from elsewhere; one naming a
    trusted type under another loader than a Luskin model uses (see ``_TRUSTED_LOADERS``); one skops
    cannot build (a damaged or crafted file: skops would raise AttributeError, TypeError, ValueError);
    and one that builds to anything but a fitted pipeline of luskin_core.corrections.models.
    """
    import skops.io as sio

    if isinstance(source, (bytes, bytearray)):
        data = bytes(source)
    else:
        try:
            data = Path(source).read_bytes()
        except OSError as err:
            raise LuskinError(f"Cannot read the model file '{source}': {err.strerror}.") from None
    _check_loaders(data)
    try:
        untrusted = sio.get_untrusted_types(data=data)
    except Exception:  # noqa: BLE001 - any failure here means the file is not a skops model
        raise LuskinError(_NOT_A_MODEL) from None
    foreign = [t for t in untrusted if t not in _TRUSTED_TYPES]
    if foreign:
        raise LuskinError("This model file holds objects Luskin does not recognise and was not loaded for "
                          f"safety: {', '.join(foreign)}.")
    try:
        model = sio.loads(data, trusted=untrusted)
    except Exception:  # noqa: BLE001 - a crafted or damaged file fails inside skops in many ways
        raise LuskinError("This model file is damaged: its parts could not be put together into a model, so it "
                          "was not loaded. Save the model again from Luskin.") from None
    _check_model(model)
    return model


def _check_loaders(data: bytes) -> None:
    """Each type Luskin trusts beyond skops' defaults must appear only under the loader it is saved with."""
    import io
    import zipfile

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            info = archive.getinfo("schema.json")
            if info.file_size > MAX_SCHEMA_BYTES:
                raise LuskinError(_NOT_A_MODEL)
            schema = json.loads(archive.read(info))
    except LuskinError:
        raise
    except Exception:  # noqa: BLE001 - not a zip, no schema, damaged JSON, nested too deep
        raise LuskinError(_NOT_A_MODEL) from None
    stack: list[Any] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            name = f"{node.get('__module__')}.{node.get('__class__')}"
            loader = node.get("__loader__")
            if name in _TRUSTED_LOADERS and loader is not None and loader != _TRUSTED_LOADERS[name]:
                raise LuskinError(f"This model file asks to build {name} in a way a Luskin model never does "
                                  f"({loader}, which would call it with the file's own values), so it was not "
                                  "loaded for safety.")
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def _check_model(model: Any) -> None:
    """The loaded object must be a fitted pipeline ending in one of Luskin's model kinds."""
    from sklearn.exceptions import NotFittedError
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import Pipeline
    from sklearn.svm import LinearSVC
    from sklearn.utils.validation import check_is_fitted

    try:
        steps: Any = model.steps if isinstance(model, Pipeline) else None
        ok = (isinstance(steps, list) and len(steps) > 0
              and all(isinstance(s, tuple) and len(s) == 2 and isinstance(s[0], str) for s in steps)
              and isinstance(steps[-1][1], (LogisticRegression, MLPClassifier, LinearSVC)))
        if ok:
            check_is_fitted(steps[-1][1])
    except NotFittedError:
        raise LuskinError("This model file holds a model that was never trained, so it cannot score rows.") from None
    except Exception:  # noqa: BLE001 - crafted attributes can make even these checks fail
        ok = False
    if not ok:
        raise LuskinError("This file holds something other than a model trained by Luskin (a pipeline ending in "
                          "logistic regression, a neural network or a linear SVM), so it was not loaded.")


__all__ = [
    "AUC_DROP", "GAP_GROWTH", "MIN_ROWS", "RETRAIN_KINDS", "SYNTHETIC_COLUMNS", "RetrainOptions", "RetrainResult",
    "load_model", "model_bytes", "paper_table", "retrain", "retrain_warnings", "save_model", "split_rows",
]
