"""The take-away documents: a self-contained HTML report and a saved configuration (JSON).

The HTML report is what a committee member opens offline: the settings in words and as JSON,
a summary of the data (rows, columns, missing values, rows excluded and why), the audit chart
and table, the plain-language verdicts and, when supplied, the retraining, per-group threshold
and equalized-distribution results, with the date and the software versions. plotly.js is
embedded once in the page, so the charts work with no network. Every piece of user text
(column names, values, labels, file names) is HTML-escaped.

The configuration document records everything needed to reproduce a view: which data (a
sample's name or an uploaded file's name, with a fingerprint of its content), the audit
specification and the page options. No Streamlit here: the pages, the command line and the
tests call the same functions.
"""

from __future__ import annotations

import datetime as _dt
import html
import json
import math
import re
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from .audit import AuditResult
from .errors import LuskinError
from .spec import AuditSpec
from .stats import format_p

CONFIG_KIND = "luskin-configuration"  # the same "kind" as luskin_app.state writes
CONFIG_VERSION = 1
_VERSION_PACKAGES = ("pandas", "numpy", "scikit-learn", "scipy", "plotly")


# ------------------------------------------------------------------------------------------
# Configuration document
# ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DatasetRef:
    """Which data a view was made from: a bundled sample or an uploaded file.

    ``kind`` is "sample" (``name`` is the sample's name, e.g. "adult") or "upload" (``name`` is
    the file's name as uploaded). ``fingerprint`` is :func:`luskin_core.data.frame_fingerprint`
    of the loaded table, so that loading a configuration can tell whether the data is the same.
    In JSON it is written as the dashboard's ``source`` string: ``sample:adult`` or
    ``upload:<file name>``.
    """

    kind: str
    name: str
    fingerprint: str | None = None
    rows: int | None = None
    columns: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("sample", "upload"):
            raise LuskinError(f"A dataset is either a 'sample' or an 'upload', not '{self.kind}'.")
        if not str(self.name).strip():
            raise LuskinError("The saved configuration does not name its dataset.")

    @classmethod
    def for_frame(cls, name: str, frame: pd.DataFrame | None, *, sample: bool) -> "DatasetRef":
        """The reference for a loaded table (computes its fingerprint)."""
        from .data import frame_fingerprint

        if frame is None:
            return cls("sample" if sample else "upload", str(name))
        return cls("sample" if sample else "upload", str(name), frame_fingerprint(frame),
                   int(frame.shape[0]), int(frame.shape[1]))

    @classmethod
    def coerce(cls, value: "DatasetRef | Mapping[str, Any] | str") -> "DatasetRef":
        """Accept a DatasetRef, its dict form, or a string: ``sample:NAME``, ``upload:NAME`` or a file name."""
        if isinstance(value, DatasetRef):
            return value
        if isinstance(value, str):
            kind, sep, rest = value.partition(":")
            if sep and kind in ("sample", "upload"):
                return cls(kind, rest)
            return cls("upload", value)
        if isinstance(value, Mapping):
            if "source" in value:
                base = cls.coerce(str(value["source"]))
            elif "kind" in value and "name" in value:
                base = cls(str(value["kind"]), str(value["name"]))
            else:
                raise LuskinError("The saved configuration does not say which data it was made from "
                                  "(its 'data' entry lacks 'source').")
            return cls(base.kind, base.name, value.get("fingerprint"), _opt_int(value.get("rows")),
                       _opt_int(value.get("columns")))
        raise LuskinError("The saved dataset reference must be a sample name or a file name.")

    @property
    def source(self) -> str:
        """``sample:NAME`` or ``upload:NAME`` (the dashboard's spelling)."""
        return f"{self.kind}:{self.name}"

    @property
    def label(self) -> str:
        """How the dataset is named on screen and in the report."""
        return f"sample '{self.name}'" if self.kind == "sample" else f"uploaded file '{self.name}'"

    def matches(self, frame: pd.DataFrame) -> bool:
        """True when ``frame`` has this reference's fingerprint (or no fingerprint was saved)."""
        from .data import frame_fingerprint

        return self.fingerprint is None or frame_fingerprint(frame) == self.fingerprint

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "fingerprint": self.fingerprint, "rows": self.rows,
                "columns": self.columns}


def _opt_int(value: Any) -> int | None:
    if value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise LuskinError(f"The saved dataset size '{value}' is not a whole number.") from None


@dataclass(frozen=True)
class LuskinConfig:
    """A saved view: the dataset, the audit specification and everything else saved with them.

    ``extra`` holds the document's other top-level entries (e.g. ``features`` and ``options``,
    the pages' settings), exactly as they were passed to :func:`config_to_json`.
    """

    dataset: DatasetRef
    spec: AuditSpec
    extra: dict[str, Any] = field(default_factory=dict)
    luskin_version: str = ""
    saved_at: str = ""


_RESERVED = ("kind", "version", "luskin_version", "saved_at", "data", "spec")


def _json_default(value: Any) -> Any:
    """numpy scalars/arrays, tuples, sets and dates into JSON; anything else is refused plainly."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    if hasattr(value, "to_dict"):
        return value.to_dict()
    raise LuskinError(f"The option value {value!r} cannot be saved in a configuration file.")


def config_to_json(dataset_ref: DatasetRef | Mapping[str, Any] | str, spec: AuditSpec,
                   extra: Mapping[str, Any] | None = None) -> str:
    """The configuration document (pretty JSON) that :func:`config_from_json` reads back.

    Layout: ``{"kind": "luskin-configuration", "version": 1, "luskin_version", "saved_at",
    "data": {"source", "fingerprint", "rows", "columns"}, "spec": {...}, **extra}``; pass the
    pages' settings in ``extra`` (e.g. ``{"features": [...], "options": {"retrain": {...}}}``).
    """
    from . import __version__

    if not isinstance(spec, AuditSpec):
        raise LuskinError("There is no audit specification to save yet: choose an outcome and a group first.")
    clash = [k for k in (extra or {}) if k in _RESERVED]
    if clash:
        raise LuskinError(f"The option name(s) {', '.join(clash)} are reserved in a configuration file.")
    document = {
        "kind": CONFIG_KIND,
        "version": CONFIG_VERSION,
        "luskin_version": __version__,
        "saved_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "data": DatasetRef.coerce(dataset_ref).to_dict(),
        "spec": spec.to_dict(),
        **dict(extra or {}),
    }
    try:
        return json.dumps(document, indent=2, default=_json_default, allow_nan=False)
    except ValueError as err:  # NaN / infinity, which JSON cannot hold
        raise LuskinError(f"A setting cannot be saved in a configuration file ({err}).") from None


def config_from_json(text: str | bytes) -> LuskinConfig:
    """Read a configuration document back; anything malformed is a plain LuskinError."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8-sig")
        except UnicodeDecodeError:
            raise LuskinError("The configuration file is not a text file. Choose the .json file Luskin saved.") from None
    if not isinstance(text, str) or not text.strip():
        raise LuskinError("The configuration file is empty.")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise LuskinError(
            f"The configuration file is not valid JSON (line {err.lineno}, column {err.colno}: {err.msg}). "
            "Choose the .json file Luskin saved, unchanged."
        ) from None
    if not isinstance(data, dict) or data.get("kind") != CONFIG_KIND:
        raise LuskinError("This JSON file is not a Luskin configuration (it lacks \"kind\": "
                          f"\"{CONFIG_KIND}\"). Choose a file saved from Luskin's Report page.")
    version = data.get("version", 1)
    if not isinstance(version, int) or version > CONFIG_VERSION:
        raise LuskinError(f"This configuration was saved in format version {version!r}, which this Luskin "
                          f"(format {CONFIG_VERSION}) cannot read. Update Luskin.")
    for key in ("data", "spec"):
        if not data.get(key):
            raise LuskinError(f"The configuration file lacks its '{key}' entry.")
    if not isinstance(data["data"], dict):
        raise LuskinError("The configuration's 'data' entry must say which data was used.")
    try:
        spec = AuditSpec.from_dict(data["spec"])
    except LuskinError as err:
        raise LuskinError(f"The saved audit settings are not usable: {err}") from None
    except (TypeError, ValueError, AttributeError) as err:
        raise LuskinError(f"The saved audit settings are malformed ({err}).") from None
    extra = {k: v for k, v in data.items() if k not in _RESERVED}
    return LuskinConfig(DatasetRef.coerce(data["data"]), spec, extra,
                        str(data.get("luskin_version", "")), str(data.get("saved_at", "")))


# ------------------------------------------------------------------------------------------
# HTML helpers
# ------------------------------------------------------------------------------------------
def esc(value: Any) -> str:
    """HTML-escape anything shown in the report (quotes too, for attributes)."""
    return html.escape(str(value), quote=True)


def _is_missing(value: Any) -> bool:
    if value is None or value is pd.NA:
        return True
    try:
        return isinstance(value, (float, np.floating)) and not math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def _fmt(value: Any, column: str = "") -> str:
    """A cell's text: shares as percentages, p-values as 'p < 0.001', counts with separators."""
    if _is_missing(value):
        return "n/a"
    name = column.lower()
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if isinstance(value, (float, np.floating)):
        x = float(value)
        if name in ("alpha", "lambda", "seed"):
            return f"{x:g}"
        if "p-value" in name or name == "p":
            return format_p(x).replace("p = ", "").replace("p ", "")
        if "gap" in name and "point" in name:
            return f"{x:+.1f}"
        if "gap" in name:
            return f"{100 * x:+.1f} pts"
        if any(w in name for w in ("ratio", "share", "ci", "rate", "accuracy", "tpr", "fpr")) and 0 <= x <= 1:
            return f"{100 * x:.1f}%"
        if x.is_integer() and abs(x) < 1e15:
            return f"{int(x):,}"
        return f"{x:.3g}" if abs(x) < 1e-3 or abs(x) >= 1e4 else f"{x:.3f}"
    return str(value)


def html_table(frame: pd.DataFrame, caption: str = "") -> str:
    """A pandas frame as an escaped HTML table (index shown when it carries names)."""
    show_index = not isinstance(frame.index, pd.RangeIndex)
    columns = [str(c) if not isinstance(c, tuple) else " / ".join(map(str, c)) for c in frame.columns]
    head = "".join(f"<th scope=\"col\">{esc(c)}</th>" for c in ([frame.index.name or ""] if show_index else []) + columns)
    rows = []
    for index, values in zip(frame.index, frame.itertuples(index=False, name=None)):
        cells = []
        if show_index:
            label = " / ".join(map(str, index)) if isinstance(index, tuple) else index
            cells.append(f"<th scope=\"row\">{esc(label)}</th>")
        cells += [f"<td>{esc(_fmt(v, c))}</td>" for v, c in zip(values, columns)]
        rows.append("<tr>" + "".join(cells) + "</tr>")
    cap = f"<caption>{esc(caption)}</caption>" if caption else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _definition_list(items: Sequence[tuple[str, Any]]) -> str:
    body = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in items if v not in (None, ""))
    return f"<dl>{body}</dl>"


def _sentences(sentences: Sequence[str], css: str = "verdicts") -> str:
    return f"<ul class=\"{css}\">" + "".join(f"<li>{esc(s)}</li>" for s in sentences) + "</ul>"


class _Figures:
    """Embeds plotly figures; plotly.js itself is written once, in the page head."""

    def __init__(self) -> None:
        self.count = 0

    def render(self, figure: Any, caption: str = "") -> str:
        self.count += 1
        height = getattr(getattr(figure, "layout", None), "height", None) or 520
        div = figure.to_html(full_html=False, include_plotlyjs=False, div_id=f"luskin-chart-{self.count}",
                             default_width="100%", default_height=f"{int(height)}px",
                             config={"displaylogo": False, "responsive": True})
        cap = f"<figcaption>{esc(caption)}</figcaption>" if caption else ""
        return f"<figure class=\"chart\">{div}{cap}</figure>"


def _try(builder: Any, *args: Any, **kwargs: Any) -> Any:
    """Call an optional builder; a result of an unexpected shape is left out, not fatal."""
    try:
        return builder(*args, **kwargs)
    except (AttributeError, KeyError, TypeError, ValueError, IndexError):
        return None


def software_versions() -> dict[str, str]:
    """Luskin's version and the libraries that computed the numbers."""
    from . import __version__

    versions = {"luskin": __version__}
    for name in _VERSION_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    import platform

    versions["python"] = platform.python_version()
    return versions


# ------------------------------------------------------------------------------------------
# Sections
# ------------------------------------------------------------------------------------------
def spec_in_words(spec: AuditSpec) -> list[tuple[str, str]]:
    """The audit settings as (label, plain words) pairs."""
    items = [
        ("Outcome audited", f"{spec.outcome} = {spec.positive} counts as the positive outcome"),
        ("Protected group", f"{spec.group_name}: rows where {spec.protected.describe()}"),
        ("Compared with", f"{spec.other_name}: all other rows"),
        ("Filter (like compared with like)",
         " and ".join(c.describe() for c in spec.filters) if spec.filters else "none: all rows form one cell"),
    ]
    if spec.filters:
        items.append(("Filter cells", f"{spec.filter_name}; {spec.not_filter_name}"))
    if spec.population:
        items.append(("Rows kept (population)", " and ".join(c.describe() for c in spec.population)))
    items.append(("Tolerance", f"a gap of up to {100 * spec.tolerance:g} percentage points counts as fair"))
    return items


def _data_section(result: AuditResult, frame: pd.DataFrame | None, dataset: DatasetRef | None) -> str:
    parts = []
    items: list[tuple[str, Any]] = []
    if dataset is not None:
        items.append(("Data", dataset.label))
        if dataset.fingerprint:
            items.append(("Content fingerprint", dataset.fingerprint))
    total = int(len(frame)) if frame is not None else result.n_rows + result.n_excluded
    items.append(("Rows in the data", f"{total:,}"))
    if frame is not None:
        missing = int(frame.isna().sum().sum())
        items.append(("Columns", f"{frame.shape[1]:,}"))
        items.append(("Missing values", f"{missing:,} cells ({100 * missing / max(frame.size, 1):.1f}% of all cells)"))
    items.append(("Rows audited", f"{result.n_rows:,}"))
    if result.n_excluded:
        why = "; ".join(f"{reason}: {count:,}" for reason, count in result.excluded_reasons.items())
        outside = result.n_excluded - sum(result.excluded_reasons.values())
        if outside > 0:
            why = (why + "; " if why else "") + f"outside the population: {outside:,}"
        items.append(("Rows excluded", f"{result.n_excluded:,} ({why})" if why else f"{result.n_excluded:,}"))
    else:
        items.append(("Rows excluded", "none"))
    parts.append(_definition_list(items))
    if frame is not None:
        from .data import column_summary

        summary = column_summary(frame)
        parts.append("<details><summary>Columns, their types and missing values</summary>"
                     + html_table(summary, "One row per column of the data") + "</details>")
    return "".join(parts)


def _audit_table(result: AuditResult) -> pd.DataFrame:
    frame = result.to_frame()
    return frame.rename(columns={"Ratio": "Share positive", "95% CI low": "Share 95% CI low",
                                 "95% CI high": "Share 95% CI high"})


_SETTING_NAMES = {
    "algorithm_name": "Algorithm", "direction": "Direction", "seed": "Seed (fixes the random split)",
    "solver": "Solver", "score_source": "Scores from", "reference": "Reference group",
    "n_train": "Rows to train the model", "n_tune": "Rows to choose the thresholds",
    "n_test": "Rows to test (numbers below)",
}


def _scalar_settings(obj: Any, names: Sequence[str]) -> list[tuple[str, str]]:
    """Readable (label, value) pairs for the simple attributes a result has (others are skipped)."""
    out = []
    for name in names:
        value = getattr(obj, name, None)
        if value is None or callable(value) or (name.startswith("n_") and not value):
            continue
        if isinstance(value, (str, int, float, bool, np.generic)):
            label = _SETTING_NAMES.get(name, name.replace("_", " "))
            out.append((label, _fmt(value, name) if isinstance(value, (int, float, np.generic)) else str(value)))
    return out


def _table_of(obj: Any) -> pd.DataFrame | None:
    """The result's own table (``paper_table()``, ``to_frame()`` or ``table()``), if it has one."""
    for name, kwargs in (("paper_table", {"gap": True}), ("paper_table", {}), ("to_frame", {}), ("table", {})):
        method = getattr(obj, name, None)
        if callable(method):
            table = _try(method, **kwargs)
            if isinstance(table, pd.DataFrame):
                return table
    return None


def _retrain_section(retrain: Any, figures: _Figures) -> str:
    from . import plots

    items = _scalar_settings(retrain, ("algorithm_name", "direction", "seed"))
    options = getattr(retrain, "options", None)
    describe = getattr(options, "describe", None)
    if callable(describe):
        items = [("Settings", str(_try(describe) or ""))]
    for label, name in (("AUC of the first model (A1)", "auc_first"), ("AUC of the retrained model (C2)", "auc_second")):
        value = getattr(retrain, name, None)
        if isinstance(value, (int, float)) and not _is_missing(value):
            items.append((label, f"{float(value):.3f}"))
    sizes = getattr(retrain, "sizes", None)
    if isinstance(sizes, Mapping) and sizes:
        items.append(("Rows per split", ", ".join(f"{k}: {int(v):,}" for k, v in sizes.items())))
    parts = [_definition_list(items)]
    table = _table_of(retrain)
    if table is not None:
        parts.append(html_table(table, "Original labels, the risk model A1 and the retrained C2 on the held-out rows (D4): "
                                       "share positive per group and filter cell, and AUC against the original labels"))
    figure = _try(plots.retrain_gaps, retrain)
    if figure is not None:
        parts.append(figures.render(figure, "Gap between the groups before and after retraining."))
    second = getattr(retrain, "second", None)
    if isinstance(second, AuditResult):
        parts.append("<h3>Verdicts for the retrained model (C2)</h3>" + _sentences(second.sentences()))
    relabel = getattr(retrain, "relabelling", None) or getattr(retrain, "relabel", None)
    if relabel is not None and callable(getattr(relabel, "sentences", None)):
        notes = _try(relabel.sentences)
        if notes:
            parts.append("<h3>How the training labels were adjusted</h3>" + _sentences(notes, "notes"))
    return "".join(parts)


def _split_table(report: Any) -> pd.DataFrame:
    rows = []
    for stage, split in (("Before (one threshold)", getattr(report, "before", None)),
                         ("After (own thresholds)", getattr(report, "after", None))):
        if split is None:
            continue
        for group, r in split.groups.items():
            rows.append({"Stage": stage, "Group": group, "Threshold": r.threshold, "Rows": r.n,
                         "Accuracy": r.accuracy, "TPR": r.tpr, "FPR": r.fpr})
        rows.append({"Stage": stage, "Group": "All", "Threshold": None, "Rows": None,
                     "Accuracy": split.accuracy, "TPR": split.tpr_gap, "FPR": split.fpr_gap})
    table = pd.DataFrame(rows)
    if not table.empty:
        table.loc[table["Group"] == "All", "Group"] = "All rows (TPR / FPR: gap between groups)"
    return table


def _thresholds_section(report: Any, spec: AuditSpec, figures: _Figures) -> str:
    from . import plots

    items = _scalar_settings(report, ("solver", "score_source", "reference", "seed", "n_train", "n_tune", "n_test"))
    lam = getattr(report, "lam", None)
    if lam is not None:
        items.insert(0, ("lambda (weight on equal error rates)", f"{lam:g}"))
    thresholds = getattr(report, "thresholds", None)
    if isinstance(thresholds, Mapping):
        items.append(("Thresholds chosen", "; ".join(f"{k}: {float(v):.4g}" for k, v in thresholds.items())))
    parts = [_definition_list(items)]
    table = _table_of(report)
    if table is None:
        table = _try(_split_table, report)
    if table is not None and not table.empty:
        parts.append(html_table(table, "Accuracy, true positive rate (TPR) and false positive rate (FPR) per group "
                                       "on the held-out test rows, before and after per-group thresholds"))
    figure = _try(plots.threshold_roc, report, spec, "test")
    if figure is not None:
        parts.append(figures.render(figure, "ROC curves per group with the operating points before (cross) and "
                                            "after (circle) tuning, on the held-out test rows."))
    return "".join(parts)


def _sweep_histograms(sweep: Any, alpha: float, spec: AuditSpec) -> Any:
    """The dashboard's histogram chart, with the spec's class names when the sweep uses them."""
    from . import plots

    labels = list(sweep.group_labels)
    group = spec.group_name if spec.group_name in labels else labels[0]
    other = spec.other_name if spec.other_name in labels else labels[-1]
    return plots.sweep_histograms(sweep, alpha, group, other)


def _equalized_section(sweep: Any, alpha: float | None, spec: AuditSpec, figures: _Figures) -> str:
    from . import plots

    points = list(getattr(sweep, "points", ()))
    if not points:
        return "<p>No equalized-distribution results were supplied.</p>"
    chosen = sweep.point(alpha).alpha if alpha is not None else None
    parts = [_definition_list([("Alpha shown", f"{chosen:g}" if chosen is not None else "all"),
                               ("Training rows", f"{getattr(sweep, 'n_train', 0):,}"),
                               ("Test rows", f"{getattr(sweep, 'n_test', 0):,}")])]
    table = pd.DataFrame([{"alpha": p.alpha, "Accuracy": p.accuracy, "TPR gap": p.tpr_gap,
                           "FPR gap": p.fpr_gap} for p in points])
    parts.append(html_table(table, "Accuracy and the groups' error-rate gaps on the test rows for each alpha "
                                   "(alpha = 1: accuracy only)"))
    for builder, args in ((_sweep_histograms, (sweep, chosen if chosen is not None else points[0].alpha, spec)),
                          (plots.alpha_accuracy, ([p.alpha for p in points], [p.accuracy for p in points], chosen)),
                          (plots.alpha_gaps, ([p.alpha for p in points], [p.tpr_gap for p in points],
                                              [p.fpr_gap for p in points], chosen))):
        figure = _try(builder, *args)
        if figure is not None:
            parts.append(figures.render(figure))
    return "".join(parts)


_STYLE = """
body{font-family:Arial,Helvetica,sans-serif;font-size:18px;line-height:1.5;color:#1a1a1a;
     max-width:1100px;margin:0 auto;padding:24px;}
h1{font-size:2em;margin-bottom:0.2em} h2{border-bottom:3px solid #0072B2;padding-bottom:4px;margin-top:1.6em}
.meta{color:#555} .verdicts li{margin:0.5em 0} .overall{font-size:1.15em;font-weight:bold}
table{border-collapse:collapse;margin:1em 0;font-size:0.85em;width:100%}
caption{text-align:left;font-weight:bold;padding:4px 0}
th,td{border:1px solid #bbb;padding:4px 8px;text-align:left;vertical-align:top}
thead th{background:#eef3f8} td{font-variant-numeric:tabular-nums}
dl{display:grid;grid-template-columns:max-content auto;gap:4px 16px} dt{font-weight:bold} dd{margin:0}
pre{background:#f4f4f4;padding:12px;overflow-x:auto;font-size:0.8em}
figure.chart{margin:1em 0} figcaption{color:#444;font-size:0.9em}
@media print{figure.chart,table{page-break-inside:avoid}}
"""


def build_html_report(
    result: AuditResult,
    *,
    frame: pd.DataFrame | None = None,
    dataset: DatasetRef | Mapping[str, Any] | str | None = None,
    retrain: Any = None,
    thresholds: Any = None,
    equalized: Any = None,
    equalized_alpha: float | None = None,
    options: Mapping[str, Any] | None = None,
    title: str = "Fairness audit report",
    generated_at: _dt.datetime | None = None,
) -> str:
    """A self-contained HTML page with the audit (and any other results supplied).

    ``frame`` is the data as loaded (for the data summary); ``dataset`` names it (see
    :class:`DatasetRef`); ``retrain`` a retraining result (``paper_table()``, ``original`` /
    ``first`` / ``second`` audits), ``thresholds`` a ``thresholds.ThresholdReport``,
    ``equalized`` an ``equalize.AlphaSweep`` shown at ``equalized_alpha``. Parts that are None
    are left out. ``options`` are the page options, saved with the configuration.
    """
    from . import plots

    if not isinstance(result, AuditResult):
        raise LuskinError("There is no audit result to report yet: run the audit first.")
    spec = result.spec
    ref = DatasetRef.coerce(dataset) if dataset is not None else None
    when = (generated_at or _dt.datetime.now().astimezone()).strftime("%d %B %Y, %H:%M %Z").strip()
    versions = software_versions()
    figures = _Figures()
    sections: list[tuple[str, str, str]] = []  # (anchor, heading, body)

    overall = {True: "Every comparison is within the tolerance.",
               False: "At least one comparison shows a gap larger than the tolerance.",
               None: "No comparison could be computed (a group is empty in every cell)."}[result.fair]
    sections.append(("verdicts", "Findings in plain words",
                     f"<p class=\"overall\">{esc(overall)}</p>" + _sentences(result.sentences())
                     + f"<p class=\"meta\">Source audited: {esc(result.source)}.</p>"))
    sections.append(("settings", "Settings", _definition_list(spec_in_words(spec))
                     + "<details><summary>The same settings as JSON (for Luskin's command line or a saved configuration)</summary>"
                     f"<pre>{esc(spec.to_json())}</pre></details>"))
    sections.append(("data", "The data", _data_section(result, frame, ref)))
    chart = _try(plots.audit_bars, result)
    audit_body = figures.render(chart, "Bars: share positive per group and filter cell; whiskers: 95% confidence "
                                       "intervals; n: rows.") if chart is not None else ""
    audit_body += html_table(_audit_table(result), "The audit's numbers: one row per group per filter cell")
    sections.append(("audit", "Controlled-fairness audit", audit_body))
    if retrain is not None:
        sections.append(("retrain", "Retraining to controlled fairness", _retrain_section(retrain, figures)))
    if thresholds is not None:
        sections.append(("thresholds", "Per-group thresholds (classification parity)",
                         _thresholds_section(thresholds, spec, figures)))
    if equalized is not None:
        sections.append(("equalized", "Equalized score distributions",
                         _equalized_section(equalized, equalized_alpha, spec, figures)))
    if options:
        opts = json.dumps(dict(options), indent=2, default=_json_default_lenient)
        sections.append(("options", "Page options", f"<pre>{esc(opts)}</pre>"))
    version_text = ", ".join(f"{k} {v}" for k, v in versions.items())
    sections.append(("software", "Software", "<p>" + esc(f"Made with {version_text}.") + "</p>"))

    plotly_js = ""
    if figures.count:
        from plotly.offline import get_plotlyjs

        plotly_js = f"<script type=\"text/javascript\">{get_plotlyjs()}</script>"
    toc = "".join(f"<li><a href=\"#{a}\">{esc(h)}</a></li>" for a, h, _ in sections)
    body = "".join(f"<section id=\"{a}\"><h2>{esc(h)}</h2>{b}</section>" for a, h, b in sections)
    data_line = f" Data: {ref.label}." if ref is not None else ""
    byline = f"Generated {when} by Luskin {versions['luskin']}.{data_line}"
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<meta name=\"generator\" content=\"Luskin {esc(versions['luskin'])}\">"
        f"<title>{esc(title)}</title><style>{_STYLE}</style>{plotly_js}</head><body>"
        f"<header><h1>{esc(title)}</h1><p class=\"meta\">{esc(byline)}"
        "</p><nav><ul>" + toc + "</ul></nav></header>"
        f"<main>{body}</main></body></html>\n"
    )


def _json_default_lenient(value: Any) -> Any:
    try:
        return _json_default(value)
    except LuskinError:
        return str(value)


def report_filename(dataset: DatasetRef | Mapping[str, Any] | str | None, when: _dt.datetime | None = None) -> str:
    """A safe download name such as ``luskin-report-adult-2026-11-22.html``."""
    name = DatasetRef.coerce(dataset).name if dataset is not None else "audit"
    stem = re.sub(r"[^A-Za-z0-9_]+", "-", str(name).rsplit(".", 1)[0]).strip("-")[:40] or "audit"
    return f"luskin-report-{stem}-{(when or _dt.datetime.now()).date().isoformat()}.html"
