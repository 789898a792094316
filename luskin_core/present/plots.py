"""Plot builders: results in, plotly figures out (no Streamlit here, so the report reuses them).

Every chart uses the Okabe-Ito palette, which readers with the common colour-vision deficiencies
can tell apart, and gives the SAME colour to the same class everywhere: the protected group
(the paper's W) is blue, the other class (NW) orange. Titles say in plain words what the chart
shows; a subtitle says how to read it. Fonts are large enough to read from the back of a room.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from luskin_core import formatting
from luskin_core.analyses.audit import AuditResult
from luskin_core.formatting import format_percent, points
from luskin_core.present import palette
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.spec.names import GroupNames
from luskin_core.stats.verdict import Verdict

# Okabe & Ito (2008), "Color Universal Design", 3:1 or better on white (luskin_core/present/palette.py).
OKABE_ITO = palette.COLORS
GROUP_COLOR = OKABE_ITO["blue"]     # the protected class (where the protected condition holds)
OTHER_COLOR = OKABE_ITO["orange"]   # the other class
# Stages of the retraining comparison, and the series of the alpha sweep.
STAGE_COLORS = (OKABE_ITO["black"], OKABE_ITO["sky"], OKABE_ITO["green"], OKABE_ITO["purple"],
                OKABE_ITO["vermillion"])
TOLERANCE_COLOR = "rgba(0, 158, 115, 0.15)"
FONT_SIZE = 18
TITLE_SIZE = 24
# A label on a chart (tick, legend entry, panel title, a name in a title) longer than this is shortened
# with an ellipsis; the table beside the chart and the chart's hover keep it whole.
CHART_LABEL_CHARS = 32


def title_pad(title: str, size: int = TITLE_SIZE) -> int:
    """Pixels above a title anchored at the top of the figure: plotly anchors a title of several
    lines (``<br>``) by its first line's box, so each further line needs its height added."""
    return 10 + int(1.3 * size * len(re.findall(r"(?i)<br\s*/?>", title or "")))


def title_block(title: str, subtitle: str, size: int, subtitle_size: int) -> dict[str, Any]:
    """A chart's title and subtitle, left-aligned and anchored at the top of the figure.

    Plotly's default centres the title block in the top margin, so a wrapped title pushed its
    subtitle into the labels above the plot; anchored by its first line, it needs ``title_pad``.
    """
    return {"text": title, "subtitle": {"text": subtitle, "font": {"size": subtitle_size}},
            "font": {"size": size}, "x": 0, "xanchor": "left",
            "y": 1, "yref": "container", "yanchor": "top", "pad": {"t": title_pad(title, size)}}


def _layout(fig: go.Figure, title: str, subtitle: str = "", **extra: Any) -> go.Figure:
    """Apply the shared look: large fonts, a title and subtitle, white background."""
    height = int(extra.get("height", 500))
    top = int(extra.pop("top_margin", 140))
    bottom = 150
    plot_height = max(height - top - bottom, 100)
    settings: dict[str, Any] = {
        "title": title_block(title, subtitle, TITLE_SIZE, FONT_SIZE - 3),
        "font": {"size": FONT_SIZE, "family": "Arial, Helvetica, sans-serif"},
        "template": "plotly_white",
        # below the x-axis title (about 75 px under the plot area), whatever the chart's height
        "legend": {"orientation": "h", "yanchor": "top", "y": -80 / plot_height, "x": 0.5, "xanchor": "center",
                   "font": {"size": FONT_SIZE}},
        "height": height,
        "margin": {"t": top, "l": 80, "r": 30, "b": bottom},
    }
    settings.update(extra)
    fig.update_layout(**settings)
    return fig


def label(value: Any) -> str:
    """A user string (column name, value, group or cell name) made safe for plotly.

    plotly renders a subset of HTML in titles, axis and tick labels, legend names, bar text and
    hover labels (``<a href>`` becomes a live link, ``<img>``-like tags and ``<span style>`` are
    honoured), and decodes entities after reading the tags. Escaping ``&`` and ``<`` is enough for
    no tag to form (``>`` alone opens nothing, so ``>50K`` stays readable in the figure's data); the
    text is displayed exactly as the user wrote it.
    """
    return str(value).replace("&", "&amp;").replace("<", "&lt;")


def shorten(value: Any, limit: int = CHART_LABEL_CHARS) -> str:
    """A label of at most ``limit`` characters for a chart: its middle replaced by an ellipsis when longer.

    The start and the end both stay, since either may tell groups apart (a crossed group's last part,
    "White × Female × 25-44", or a long value's first words). Not escaped: pass the result to
    :func:`label` (or audit_plots.text). Tables and hover labels keep the whole text.
    """
    flat = " ".join(str(value).split())
    if len(flat) <= limit:
        return str(value) if flat == str(value) else flat
    head = (limit - 1) * 3 // 5
    tail = limit - 1 - head
    return flat[:head].rstrip() + "…" + flat[len(flat) - tail:].lstrip()


def short_label(value: Any, limit: int = CHART_LABEL_CHARS) -> str:
    """:func:`shorten` then :func:`label`: a shortened user string, safe for plotly."""
    return label(shorten(value, limit))


def category_ticks(values: Sequence[Any], escape: Any = None, suffixes: Sequence[str] | None = None,
                   limit: int = CHART_LABEL_CHARS) -> dict[str, Any]:
    """Axis settings showing categories (the whole labels, escaped by ``escape``) as shortened tick text.

    The categories stay the whole labels, so the hover (``%{x}``/``%{y}``) carries them whole; only the
    ticks are shortened. Two labels that shorten alike get " (2)", " (3)"... so that ticks stay distinct.
    ``suffixes`` (e.g. " (reference)") are added after the escaped text, to both.
    """
    escape = escape or label
    extra = list(suffixes) if suffixes is not None else [""] * len(values)
    vals: list[str] = []
    texts: list[str] = []
    seen: dict[str, int] = {}
    for value, suffix in zip(values, extra, strict=True):
        vals.append(escape(value) + suffix)
        short = escape(shorten(value, limit)) + suffix
        seen[short] = seen.get(short, 0) + 1
        texts.append(short if seen[short] == 1 else f"{short} ({seen[short]})")
    return {"tickmode": "array", "tickvals": vals, "ticktext": texts}


def class_colors(group: str, other: str) -> dict[str, str]:
    """Colour by class name: the protected group blue, the other class orange."""
    return {str(group): GROUP_COLOR, str(other): OTHER_COLOR}


# ------------------------------------------------------------------------------------------
# Controlled fairness
# ------------------------------------------------------------------------------------------
def audit_bars(result: AuditResult) -> go.Figure:
    """Outcome share per protected class in each filter cell, with 95% CIs and n on each bar."""
    spec = result.spec
    fig = go.Figure()
    cell_names = list(dict.fromkeys(label(c.cell) for c in result.cells))
    outcome, positive = label(spec.outcome), label(spec.positive_name)
    top = max([c.ci_high for c in result.cells if c.ci_high is not None] or [1.0])
    axis_top = min(1.0, top * 1.15) if top > 0 else 1.0

    many = len(cell_names) > 2

    def bar_text(c: Any) -> str:
        # Two lines at the bar's base; on a short bar (the whisker's lower end under a quarter of the
        # axis) one line, so that the label stays below the whisker instead of running into it. Past
        # two panels a bar is too narrow for its n: the share alone (n in the hover and the table).
        if many:
            return format_percent(c.ratio, 0)
        short = c.ci_low is None or c.ci_low < 0.25 * axis_top
        return f"{format_percent(c.ratio, 0)}{' · ' if short else '<br>'}n = {c.n:,}"

    names = result.class_names   # as the data names them ("Male", where the spec says "Non-Female")
    for member, raw_name, color in ((True, names.group, GROUP_COLOR), (False, names.other, OTHER_COLOR)):
        name = label(raw_name)
        cells = [c for c in result.cells if c.in_group == member]
        ratio = [c.ratio if c.ratio is not None else 0.0 for c in cells]
        plus = [(c.ci_high - c.ratio) if c.ratio is not None and c.ci_high is not None else 0.0 for c in cells]
        minus = [(c.ratio - c.ci_low) if c.ratio is not None and c.ci_low is not None else 0.0 for c in cells]
        fig.add_trace(go.Bar(
            name=short_label(raw_name), x=[label(c.cell) for c in cells], y=ratio, marker_color=color,
            error_y={"type": "data", "array": plus, "arrayminus": minus, "visible": True,
                     "color": "#333333", "thickness": 2, "width": 8},
            text=[bar_text(c) for c in cells],
            textposition="inside", insidetextanchor="start", constraintext="none",
            textfont={"size": FONT_SIZE - 2, "color": "white" if member else "black"},
            insidetextfont={"size": FONT_SIZE - 2, "color": "white" if member else "black"},
            customdata=[[c.n, c.positives, format_percent(c.ratio), format_percent(c.ci_low),
                         format_percent(c.ci_high)] for c in cells],
            hovertemplate=(f"<b>{name}</b><br>%{{x}}<br>share: %{{customdata[2]}}<br>"
                           "95% CI: %{customdata[3]} to %{customdata[4]}<br>"
                           "%{customdata[1]:,} of %{customdata[0]:,} rows<extra></extra>"),
        ))
    # Above each panel its gap and verdict; past two panels in two short lines, which fit a panel's
    # width (six departments' long notes printed over each other); the sentences say it in full.
    narrow = many
    for g in result.gaps:
        if g.gap is None:
            note = "not computable:<br>a class is empty" if narrow else "not computable: a class is empty"
        elif narrow:
            note = f"{points(g.gap)}<br>{Verdict.of(g.verdict).short}"
        else:
            note = f"gap {points(g.gap)} ({Verdict.of(g.verdict).mark})"
        fig.add_annotation(x=label(g.cell), y=1.0, yref="paper", text=note, showarrow=False,
                           font={"size": FONT_SIZE - 2}, yanchor="bottom")
    tol = f"{100 * spec.tolerance:g}"
    bad = " (adverse: a lower share is better)" if spec.adverse else ""
    title = (f"Share of people where {short_label(spec.outcome)} is {short_label(spec.positive_name)}{bad}, "
             f"{short_label(names.group)} vs {short_label(names.other)}")
    subtitle = ("Bar: share; whisker: 95% confidence interval" + ("" if many else "; n: rows") + ".<br>"
                f"A gap above {tol} points (the tolerance) counts as unfair"
                + ("; above each panel: its gap and its verdict." if narrow else "."))
    _layout(fig, title, subtitle, barmode="group", bargap=0.25, height=560,
            uniformtext={"minsize": FONT_SIZE - 4, "mode": "show"})
    fig.update_yaxes(title_text=f"share where {outcome} is {positive}", tickformat=".0%",
                     range=[0, axis_top])
    fig.update_xaxes(title_text="", categoryorder="array", categoryarray=cell_names,
                     **category_ticks(list(dict.fromkeys(c.cell for c in result.cells))))
    return fig


def gap_comparison(results: Mapping[str, AuditResult], title: str | None = None) -> go.Figure:
    """Gap (group minus other, in points) per filter cell for each labelled stage, with the tolerance band.

    ``results`` maps a stage name (e.g. "Original", "A1", "C2") to its audit on the same rows.
    """
    if not results:
        raise ValueError("gap_comparison needs at least one audit result")
    first = next(iter(results.values()))
    spec = first.spec
    fig = go.Figure()
    tol = formatting.GAP.scale * spec.tolerance
    cells = list(dict.fromkeys(label(g.cell) for g in first.gaps))
    group, other = short_label(first.class_names.group), short_label(first.class_names.other)
    for i, (stage, res) in enumerate(results.items()):
        gaps = [res.gap(g.filter_holds) for g in first.gaps]
        values = [formatting.GAP.chart(g.gap) for g in gaps]
        shown, stage = short_label(stage), label(stage)
        fig.add_trace(go.Bar(
            name=shown, x=[label(g.cell) for g in gaps], y=values,
            marker_color=STAGE_COLORS[i % len(STAGE_COLORS)],
            text=[formatting.GAP.text(g.gap) for g in gaps], textposition="outside",
            textfont={"size": FONT_SIZE},
            hovertemplate=f"<b>{stage}</b><br>%{{x}}<br>gap: {formatting.GAP.hover('y')} points<extra></extra>",
        ))
    fig.add_hrect(y0=-tol, y1=tol, fillcolor=TOLERANCE_COLOR, line_width=0, layer="below")
    fig.add_hline(y=0, line_color="#555555", line_width=1)
    _layout(
        fig,
        label(title) if title else f"Gap between {group} and {other}, before and after retraining",
        (f"Gap = share of {group} minus share of {other} where {short_label(spec.outcome)} is "
         f"{short_label(spec.positive_name)}, in points.<br>The green band is the ±{tol:g}-point tolerance."),
        barmode="group", bargap=0.25,
    )
    magnitudes = [abs(float(v)) for t in fig.data for v in t.y if v is not None] + [tol]
    span = max(magnitudes) * 1.25
    fig.update_yaxes(title_text="gap (percentage points)", zeroline=True,
                     range=[-span if any(v is not None and v < 0 for t in fig.data for v in t.y) else -tol * 1.25, span])
    fig.update_xaxes(categoryorder="array", categoryarray=cells,
                     **category_ticks(list(dict.fromkeys(g.cell for g in first.gaps))))
    return fig


def retrain_gaps(result: Any) -> go.Figure:
    """The retraining chart: Original / A1 / C2 gap per filter cell (``result`` is a RetrainResult)."""
    return gap_comparison({"Original labels": result.original, "A1 (risk model)": result.first,
                           "C2 (retrained)": result.second})


# ------------------------------------------------------------------------------------------
# Classification parity: per-group thresholds
# ------------------------------------------------------------------------------------------
def _color_for(name: str, names: GroupNames | None, index: int) -> str:
    """A group's fixed colour: the protected group blue, the rest orange (whatever the data calls them)."""
    if names is not None:
        if name == names.group:
            return GROUP_COLOR
        if name == names.other:
            return OTHER_COLOR
    return (GROUP_COLOR, OTHER_COLOR, OKABE_ITO["green"], OKABE_ITO["purple"], OKABE_ITO["vermillion"])[index % 5]


def threshold_roc(report: Any, spec: AuditSpec | None = None, split: str = "tune") -> go.Figure:
    """Each group's ROC curve with its operating point before (cross) and after (circle) tuning.

    ``report`` is a thresholds.ThresholdReport; ``split`` "tune" (where thresholds were chosen)
    or "test" (held-out rows). The report's names (else ``spec``'s) fix the colours (protected group
    blue, the rest orange).
    """
    names = getattr(report, "names", None) or (GroupNames.of(spec) if spec is not None else None)
    roc = report.roc_tune if split == "tune" else report.roc_test
    before = report.before_tune if split == "tune" else report.before
    after = report.after_tune if split == "tune" else report.after
    fig = go.Figure()
    for i, (group, curve) in enumerate(roc.items()):
        color = _color_for(group, names, i)
        name, shown = label(group), short_label(group)
        fig.add_trace(go.Scatter(
            x=np.asarray(curve.fpr, float), y=np.asarray(curve.tpr, float), mode="lines",
            name=f"{shown}: ROC curve", line={"color": color, "width": 3}, legendgroup=name,
            hovertemplate=f"<b>{name}</b><br>FPR %{{x:.2f}}<br>TPR %{{y:.2f}}<extra></extra>",
        ))
        for rates, when, symbol, size in ((before, "before (one threshold)", "x", 18),
                                          (after, "after (own threshold)", "circle", 16)):
            if rates is None or group not in rates.groups:
                continue
            r = rates.groups[group]
            fig.add_trace(go.Scatter(
                x=[r.fpr], y=[r.tpr], mode="markers", name=f"{shown}: {when}", legendgroup=name,
                marker={"symbol": symbol, "size": size, "color": color, "line": {"width": 2, "color": "black"}},
                hovertemplate=(f"<b>{name} {when.split()[0]}</b><br>threshold {r.threshold:.3g}<br>"
                               "FPR %{x:.3f}<br>TPR %{y:.3f}<extra></extra>"),
            ))
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="chance",
                             line={"color": palette.GREY, "dash": "dot", "width": 1}, hoverinfo="skip"))
    where = "tuning rows" if split == "tune" else "held-out test rows"
    _layout(fig, "Right and wrong flags per group, before and after",
            (f"ROC curve per group ({where}). Cross: one shared threshold; circle: each group's own "
             "threshold.<br>Circles closer together mean more equal error rates."),
            height=680)
    # A square plot: the axis shrinks its domain (constrain) rather than widening its range past 0..100%.
    fig.update_xaxes(title_text="false positive rate (FPR)", range=[-0.01, 1.01], tickformat=".0%",
                     constrain="domain")
    fig.update_yaxes(title_text="true positive rate (TPR)", range=[-0.01, 1.01], tickformat=".0%",
                     scaleanchor="x", scaleratio=1)
    return fig


# ------------------------------------------------------------------------------------------
# Equalized distribution
# ------------------------------------------------------------------------------------------
def score_histograms(
    hist: Mapping[tuple[str, int], Sequence[float]],
    bin_edges: Sequence[float],
    group: str,
    other: str,
    alpha: float | None = None,
) -> go.Figure:
    """The two groups' score distributions, for people with a positive and a negative outcome.

    ``hist[(class name, label)]`` is the share of that class's rows with that true label (1 or 0)
    falling in each bin (each histogram sums to 1). Two panels: positives left, negatives right;
    the groups overlaid in their fixed colours. They converge as the fairness weight grows.
    """
    from plotly.subplots import make_subplots

    edges = np.asarray(bin_edges, float)
    centres = (edges[:-1] + edges[1:]) / 2
    width = float(np.median(np.diff(edges))) if len(edges) > 1 else 0.02
    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.06,
                        subplot_titles=("people with a positive outcome", "people with a negative outcome"))
    for col, outcome in ((1, 1), (2, 0)):
        for name, color in ((group, GROUP_COLOR), (other, OTHER_COLOR)):
            values = np.asarray(hist.get((name, outcome), np.zeros(len(centres))), float)
            whole = label(name)
            fig.add_trace(go.Bar(
                x=centres, y=values, width=width, name=short_label(name), marker_color=color, opacity=0.6,
                legendgroup=whole, showlegend=col == 1, customdata=[format_percent(v) for v in values],
                hovertemplate=f"<b>{whole}</b><br>score %{{x:.2f}}<br>share %{{customdata}}<extra></extra>",
            ), row=1, col=col)
    at = "" if alpha is None else f" (alpha = {alpha:g})"
    _layout(fig, f"Score distributions of {short_label(group)} and {short_label(other)}{at}",
            ("Each panel compares the two groups' model scores.<br>The closer the blue and orange "
             "shapes, the more alike the model treats the groups."),
            barmode="overlay", bargap=0, height=540, top_margin=180)
    for annotation in fig.layout.annotations:
        annotation.font.size = FONT_SIZE
    fig.update_xaxes(title_text="model score", range=[0, 1])
    fig.update_yaxes(title_text="share of the group", tickformat=".0%", row=1, col=1)
    return fig


def sweep_histograms(sweep: Any, alpha: float, group: str | None = None, other: str | None = None) -> go.Figure:
    """``score_histograms`` for the sweep point nearest ``alpha`` (``sweep`` is an equalize.AlphaSweep).

    The sweep stores counts per bin; each (class, label) histogram is scaled to sum to 1 so that
    groups of different sizes can be compared. ``group`` / ``other`` default to the sweep's own
    classes (``AlphaSweep.classes``: the data's names, the protected group first).
    """
    if group is None or other is None:
        group, other = sweep.classes
    point = sweep.point(alpha)
    hist: dict[tuple[str, int], list[float]] = {}
    for name, by_label in point.histograms.items():
        for key, outcome in (("positive", 1), ("negative", 0)):
            counts = np.asarray(by_label[key], float)
            hist[(str(name), outcome)] = (counts / counts.sum() if counts.sum() else counts).tolist()
    return score_histograms(hist, sweep.bin_edges, group, other, alpha=point.alpha)


def _alpha_marker(fig: go.Figure, alpha: float | None) -> None:
    if alpha is not None:
        fig.add_vline(x=alpha, line_color=OKABE_ITO["vermillion"], line_width=3, line_dash="dash",
                      annotation_text=f"alpha = {alpha:g}", annotation_position="top",
                      annotation_font_size=FONT_SIZE - 2)


def alpha_accuracy(alphas: Sequence[float], accuracy: Sequence[float], current: float | None = None) -> go.Figure:
    """Accuracy as the weight on accuracy (alpha) varies, with the current alpha marked."""
    fig = go.Figure(go.Scatter(
        x=list(alphas), y=list(accuracy), mode="lines+markers", name="accuracy",
        line={"color": OKABE_ITO["black"], "width": 3}, marker={"size": 9},
        customdata=[format_percent(a) for a in accuracy],
        hovertemplate="alpha %{x:g}<br>accuracy %{customdata}<extra></extra>",
    ))
    _alpha_marker(fig, current)
    _layout(fig, "Accuracy for each alpha",
            "alpha = 1: accuracy only;<br>smaller alpha: more weight on equal score distributions.",
            showlegend=False, height=460)
    fig.update_xaxes(title_text="alpha (weight on accuracy)")
    # From 0%: a 72%-to-80% axis would make a small loss of accuracy look like a collapse.
    fig.update_yaxes(title_text="accuracy (axis from 0%)", tickformat=".0%", range=[0, 1], autorange=False)
    return fig


def alpha_gaps(
    alphas: Sequence[float],
    tpr_gap: Sequence[float],
    fpr_gap: Sequence[float],
    current: float | None = None,
) -> go.Figure:
    """The groups' TPR and FPR gaps as alpha varies, in percentage points (the pages' unit), current alpha marked.

    The gaps are given as fractions (0.12) and drawn as points (12); the axis starts at 0 and its
    top is set by the largest gap of every alpha, so it does not move with the marked alpha.
    """
    tpr = [formatting.GAP_SIZE.scale * float(v) for v in tpr_gap]
    fpr = [formatting.GAP_SIZE.scale * float(v) for v in fpr_gap]
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=list(alphas), y=tpr, mode="lines+markers", name="TPR gap",
        line={"color": OKABE_ITO["green"], "width": 3}, marker={"size": 9, "symbol": "circle"},
        hovertemplate=f"alpha %{{x:g}}<br>TPR gap {formatting.GAP_SIZE.hover('y')} points<extra></extra>",
    ))
    fig.add_trace(go.Scatter(
        x=list(alphas), y=fpr, mode="lines+markers", name="FPR gap",
        line={"color": OKABE_ITO["purple"], "width": 3, "dash": "dash"}, marker={"size": 9, "symbol": "square"},
        hovertemplate=f"alpha %{{x:g}}<br>FPR gap {formatting.GAP_SIZE.hover('y')} points<extra></extra>",
    ))
    _alpha_marker(fig, current)
    _layout(fig, "Error-rate gaps between the groups",
            "TPR gap: difference in true positive rates;<br>FPR gap: in false positive rates. Lower is fairer.",
            height=460)
    fig.update_xaxes(title_text="alpha (weight on accuracy)")
    finite = [v for v in tpr + fpr if np.isfinite(v)]
    top = max(finite + [1.0])
    fig.update_yaxes(title_text="gap (percentage points)", range=[0, top * 1.1], autorange=False)
    return fig
