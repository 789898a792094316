"""The take-away documents: the report (HTML and PDF, the same content) and a saved configuration (JSON).

The report is what a committee member reads: a first page that takes a minute (the question: who
is compared, on what outcome, in which cells, on which data; the verdict and its caveats: chance,
too few rows, many comparisons, Simpson's paradox; what was tried to correct it and what each
correction cost, with its warnings), the cost of every correction on one chart
(:mod:`luskin_core.corrections.cost`), a section per tool that was run (the audit with every comparison and
the pooled view; retraining; per-group thresholds; the equalized distribution) with its settings
in words, charts, tables and warnings, the data, and an appendix with the settings as JSON, how
the numbers are made and the software versions.

:func:`report_content` builds the content once; ``templates/report.html.j2`` (Jinja2, autoescaping
on: every user string is escaped) renders it as a self-contained HTML page (plotly.js embedded
once, so it opens offline) or as the page WeasyPrint lays out into a PDF, with the charts drawn as
vector images (SVG) by one headless Chromium per process through kaleido. Every string of every
chart is neutralised too (plotly would render ``<a href>`` in a label as a live link). A part
that cannot be shown is said in words; a builder that fails raises.

The configuration document records everything needed to reproduce a view: which data (a
sample's name or an uploaded file's name, with a fingerprint of its content), the audit
specification and the page options. No Streamlit here: the pages, the command line and the
tests call the same functions.

This module holds the content (what the report says) and its assembly. By job, the rest lives
beside it, and every name stays importable from here: the configuration format
(:mod:`luskin_core.present.report_config`), the building blocks of a section (:mod:`luskin_core.present.report_blocks`),
figure sanitising (:mod:`luskin_core.present.report_figures`) and rendering: Jinja, WeasyPrint and the one
Chromium that draws the charts (:mod:`luskin_core.present.report_render`).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import re
from collections.abc import Mapping, Sequence
from importlib import metadata
from typing import Any

import numpy as np
import pandas as pd

from luskin_core import formatting as cells
from luskin_core.analyses.audit import AuditResult
from luskin_core.analyses.findings import WITHIN_PARTS, findings, part_nouns
from luskin_core.analyses.narrative import group_words
from luskin_core.corrections.correction import CorrectionResult
from luskin_core.corrections.cost import CONTROLLED, GAP_NAMES, CostPoint, accuracy_interval, cost_points
from luskin_core.errors import LuskinError
from luskin_core.formatting import format_percent, format_points
from luskin_core.present.cost_plots import cost_chart
from luskin_core.present.report_blocks import Section, Table, make_block, settings_block
from luskin_core.present.report_config import (  # noqa: F401  (the configuration format moved; importable here)
    CONFIG_KIND,
    CONFIG_VERSION,
    DatasetRef,
    LuskinConfig,
    config_from_json,
    config_to_json,
    json_default,
)
from luskin_core.present.report_figures import (  # noqa: F401  (figure sanitising moved; importable here)
    safe_figure,
    safe_figure_dict,
)
from luskin_core.present.report_render import (  # noqa: F401  (the renderer moved; importable here)
    ReportContent,
    close_chart_renderer,
)
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.spec.names import GroupNames
from luskin_core.spec.options import ALGORITHM_NAMES
from luskin_core.stats import shown as shown_statistics
from luskin_core.stats.comparisons import CRITERION_NAMES, ERROR_RATE_NAMES
from luskin_core.stats.verdict import SET_APART, Verdict

CHANCE, TOO_FEW = Verdict.CHANCE, Verdict.TOO_FEW

_VERSION_PACKAGES = ("pandas", "numpy", "scikit-learn", "scipy", "plotly")


# ------------------------------------------------------------------------------------------
# HTML helpers
# ------------------------------------------------------------------------------------------
def _is_missing(value: Any) -> bool:
    if value is None or value is pd.NA:
        return True
    try:
        return isinstance(value, (float, np.floating)) and not math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def _pct(x: Any, digits: int = 1) -> str:
    return format_percent(x, digits)


def _with_ci(value: str, low: Any, high: Any, fmt: Any) -> str:
    """'44.3% [43.4%, 45.1%]': a value with its 95% interval when there is one."""
    if _is_missing(low) or _is_missing(high):
        return value
    return f"{value} [{fmt(low)}, {fmt(high)}]"


def software_versions() -> dict[str, str]:
    """Luskin's version and the libraries that computed the numbers."""
    from luskin_core import __version__

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
# The report's content: sections made of blocks, rendered by templates/report.html.j2
# ------------------------------------------------------------------------------------------
def _frame_table(frame: pd.DataFrame, caption: str, *, note: str = "", wide: bool = False) -> Table:
    """A small frame as a text table (every value shown as str; missing as n/a)."""
    rows = tuple(tuple("n/a" if _is_missing(v) else str(v) for v in row)
                 for row in frame.itertuples(index=False, name=None))
    return Table(caption, tuple(str(c) for c in frame.columns), rows, note=note, wide=wide)


_CORRECTIONS = {"holm": "Holm's method", "bh": "the Benjamini-Hochberg method", "none": "no adjustment"}


def spec_in_words(spec: AuditSpec, reference: str = "", names: GroupNames | None = None) -> list[tuple[str, str]]:
    """The audit settings as (label, plain words) pairs (``names``: the classes as the data named them)."""
    items: list[tuple[str, str]] = []
    names = names or GroupNames.of(spec)
    if spec.outcome_type == "score":
        cut = "strictly above the median score" if spec.score_cutoff is None else f"at or above {spec.score_cutoff:g}"
        items.append(("Outcome audited", (f"{spec.outcome} is a score: a row counts as positive when it is {cut} "
                                         "(as Local Law 144's scoring rate); the mean score is compared too")))
    else:
        items.append(("Outcome audited", f"{spec.outcome_text} counts as the positive outcome"))
    if spec.prediction is not None:
        items.append(("Decisions audited", (f"the decisions in '{spec.prediction}', checked against the true outcome "
                                           f"{spec.outcome} (true and false positive rates per group)")))
    if spec.group_mode == "columns":
        items.append(("Groups", (f"each value of {' × '.join(spec.group_by)}; rows with a missing value form the group "
                                "'Unknown'")))
        chosen = f"'{spec.reference}' (chosen by the user)" if spec.reference else \
            "the group with the highest share among those big enough (as the four-fifths rule does)"
        items.append(("Reference group", chosen + (f": {reference}" if reference and not spec.reference else "")))
    else:
        assert spec.protected is not None
        items.append(("Protected group", f"{names.group}: rows where {spec.protected.describe()}"))
        items.append(("Compared with", f"{names.other}: all other rows"))
    if spec.cell_mode == "filter":
        items.append(("Filter (like compared with like)", " and ".join(c.describe() for c in spec.filters)))
        items.append(("Filter cells", f"{spec.filter_name}; {spec.not_filter_name}"))
    elif spec.cell_mode == "strata":
        items.append(("Strata (like compared with like)", f"every value of {' × '.join(spec.strata)}"))
    else:
        items.append(("Filter (like compared with like)", "none: all rows form one cell"))
    for column, cuts in spec.bins:
        items.append((f"Bins of {column}", "cut at " + ", ".join(f"{c:g}" for c in cuts)))
    if spec.population:
        items.append(("Rows kept (population)", " and ".join(c.describe() for c in spec.population)))
    if spec.metric == "ratio":
        items.append(("Tolerance", f"an impact ratio of at least {spec.ratio_threshold:g} counts as fair"))
    else:
        items.append(("Tolerance", f"a gap of up to {100 * spec.tolerance:g} percentage points counts as fair"))
    items.append(("Chance", (f"p-values adjusted for the number of comparisons with {_CORRECTIONS[spec.correction]}; a "
                            "gap beyond the tolerance counts as real when its adjusted p-value is below 0.05")))
    small = f"{spec.min_group_size:,} rows in a cell"
    if spec.min_group_share:
        small += f" and {100 * spec.min_group_share:g}% of all rows"
    items.append(("Smallest group judged", small + " (smaller groups are shown, not judged)"))
    return items


def _cells_words(result: AuditResult) -> str:
    spec = result.spec
    if spec.cell_mode == "filter":
        return f"separately where {spec.filter_name} and where {spec.not_filter_name}"
    if spec.cell_mode == "strata":
        return f"within each value of {' × '.join(spec.strata)} ({len(result.cell_names):,} strata)"
    return "among all rows audited"


def question_items(result: AuditResult, dataset: DatasetRef | None) -> list[tuple[str, str]]:
    """Who is compared, on what outcome, in which cells, on which data."""
    spec = result.spec
    if spec.group_mode == "columns":
        who = (f"each {' × '.join(spec.group_by)} group, against {group_words(result.reference, spec)} (the reference "
               "group)")
    else:
        who = f"{result.class_names.group} against {result.class_names.other}"
    data = dataset.label if dataset is not None else result.source
    rows = f"{result.n_rows:,} rows audited"
    if result.n_excluded:
        rows += f", {result.n_excluded:,} left out (see 'The data')"
    outcome = spec.outcome_text if spec.prediction is None else \
        f"the decisions in '{spec.prediction}', checked against {spec.outcome_text}"
    outcome += (" (adverse: bad for the person, so the group with the lower share is favoured)" if spec.adverse
                else " (favourable: good for the person)")
    return [("Who is compared", who), ("On what outcome", outcome), ("Where", _cells_words(result)),
            ("On which data", f"{data}: {rows}")]


def caveat_sentences(result: AuditResult) -> list[str]:
    """Chance, small groups, many comparisons, Simpson's paradox, pooling: said in words."""
    spec = result.spec
    counts = result.verdict_counts()
    out = []
    judged = [c for c in result.judged if c.verdict != TOO_FEW and c.p_value is not None]
    if counts[CHANCE]:
        chance = counts[CHANCE]
        out.append(f"Chance: {chance} gap{'s' if chance > 1 else ''} beyond the tolerance could be chance (adjusted "
                   "p-value of 0.05 or more); more rows would be needed to tell.")
    if counts[TOO_FEW]:
        few = counts[TOO_FEW]
        out.append(f"{TOO_FEW.heading}: {few} comparison{'s have' if few > 1 else ' has'} fewer than "
                   f"{spec.min_group_size:,} rows in the group or the reference; shown but not judged.")
    if len(judged) > 1:
        if spec.correction == "none":
            out.append(f"Many comparisons: {len(judged)} comparisons were tested without adjustment; about "
                       f"{0.05 * len(judged):.1f} of them would look significant by chance alone.")
        else:
            out.append(f"Many comparisons: the p-values are adjusted for the {len(judged)} comparisons made "
                       f"({_CORRECTIONS[spec.correction]}), so a verdict of 'not due to chance' holds for the page "
                       "as a whole.")
    if result.simpson:
        names = ", ".join(p.group for p in result.simpson)
        parts = part_nouns(spec)[1]
        out.append(f"Simpson's paradox for {names}: the overall gap and the gap within the {parts} disagree, so "
                   f"the overall gap misleads; read the comparison within the {parts}.")
    if spec.cell_mode != "none":
        held = " and ".join(c.describe() for c in spec.filters) if spec.cell_mode == "filter" else \
            " × ".join(spec.strata)
        out.append(f"Only {held} is held equal between the groups; other differences between them are not "
                   "controlled.")
    return out


# -- the audit -----------------------------------------------------------------------------
def _comparison_rows(result: AuditResult) -> Table:
    spec = result.spec
    gap = shown_statistics.GAP   # its unit in the heading, as on the page: "Difference to Male (points) [95% CI]"
    header = ("Cell", "Group", "Rows", "Positive", cells.SHARE.heading("Share", ci="95% CI"),
              cells.GAP.heading(f"{gap.heading} to {result.reference}", ci="95% CI"), "Impact ratio [95% CI]",
              "p-value", "Adjusted p", "Verdict", *(s.heading for s in shown_statistics.SHOWN))
    rows, classes = [], []
    for c in result.comparisons:
        rows.append((
            c.cell if c.cell is not None else "All rows", c.group + (" (reference)" if c.is_reference else ""),
            cells.COUNT.text(c.n), cells.COUNT.text(c.positives), cells.SHARE.ci(c.rate, c.ci_low, c.ci_high),
            "" if c.is_reference else cells.GAP.ci(c.difference, c.difference_ci_low, c.difference_ci_high),
            "" if c.is_reference else cells.RATIO.ci(c.impact_ratio, c.impact_ratio_ci_low, c.impact_ratio_ci_high),
            "" if c.is_reference else cells.P_VALUE.text(c.p_value),
            "" if c.is_reference else cells.P_VALUE.text(c.p_adjusted),
            SET_APART if result.set_apart(c) else Verdict.of(c.verdict).words,
            *(s.text(c) for s in shown_statistics.SHOWN),
        ))
        classes.append("" if result.set_apart(c) else Verdict.of(c.verdict).css)
    note = (f"Share: the percentage of the group's rows with a positive outcome. Difference in percentage points, "
            f"group minus {result.reference}, in the same cell. Impact ratio: "
            "the group's share divided by the reference's; below 0.8 fails the four-fifths rule. Adjusted p: "
            f"{_CORRECTIONS[spec.correction]} over every comparison on this page.")
    return Table("Every group in every cell against the reference group", header, tuple(rows), tuple(classes),
                 note=note, wide=True)


def _paper_rows(result: AuditResult) -> Table:
    gap = shown_statistics.GAP
    header = ("Where", "Group", "Rows", "Positive", cells.SHARE.heading("Share", ci="95% CI"),
              f"{gap.short} ({gap.unit}, group − {result.reference})", "p-value", Verdict.WITHIN.heading, "Verdict")
    rows, classes = [], []
    for c in result.cells:
        g = result.gap(c.filter_holds)
        rows.append((c.cell, c.label, cells.COUNT.text(c.n), cells.COUNT.text(c.positives),
                     cells.SHARE.ci(c.ratio, c.ci_low, c.ci_high), cells.GAP.text(g.gap), cells.P_VALUE.text(g.p_value),
                     {True: "yes", False: "no", None: Verdict.TOO_FEW.flag}[g.fair], g.verdict))
        classes.append(Verdict.of(g.verdict).css)
    return Table("The protected group and the other class on each side of the filter", header,
                 tuple(rows), tuple(classes), wide=True)


def _error_rate_rows(result: AuditResult) -> Table:
    names = ("tpr", "fpr", "fnr", "precision")
    header = ("Cell", "Group") + tuple(
        cells.SHARE.heading(ERROR_RATE_NAMES[n].capitalize(), ci="95% CI") for n in names) + ("Verdict",)
    rows = []
    for c in result.comparisons:
        assert c.error_rates is not None
        rows.append((c.cell if c.cell is not None else "All rows",
                     c.group + (" (reference)" if c.is_reference else ""))
                    + tuple(cells.SHARE.ci(c.error_rates[n]["rate"], c.error_rates[n]["ci_low"],
                                           c.error_rates[n]["ci_high"]) for n in names)
                    + (Verdict.of(c.verdict).words,))
    judged = CRITERION_NAMES[result.spec.criterion]
    return Table(f"The model's errors per group; the verdict judges {judged} (equal opportunity: equal true positive "
                 "rates; equalized odds: equal true and false positive rates)", header, tuple(rows), wide=True)


def _score_rows(result: AuditResult) -> Table:
    header = ("Cell", "Group", "Rows", "Mean score [95% CI]", "Standardised mean difference [95% CI]")
    rows = []
    for c in result.comparisons:
        assert c.score is not None
        s = c.score

        def num(x: Any) -> str:
            return "n/a" if _is_missing(x) else f"{float(x):.3g}"

        rows.append((c.cell if c.cell is not None else "All rows", c.group + (" (reference)" if c.is_reference else ""),
                     cells.COUNT.text(c.n), _with_ci(num(s["mean"]), s["mean_ci_low"], s["mean_ci_high"], num),
                     "" if c.is_reference else _with_ci(num(s["smd"]), s["smd_ci_low"], s["smd_ci_high"], num)))
    return Table("The score itself: mean per group and the standardised difference to the reference", header,
                 tuple(rows), wide=True)


def _pooled_rows(result: AuditResult) -> Table:
    header = ("Group", f"Overall share ({cells.SHARE.unit}, group / reference)",
              cells.GAP.heading("Overall difference", ci="95% CI"), "Overall impact ratio",
              "Overall p", f"Within-cell difference ({cells.GAP.unit}, size-weighted)",
              "Pooled odds ratio (Mantel-Haenszel) [95% CI]", "CMH p", "Breslow-Day-Tarone p", "Simpson's paradox")
    rows, classes = [], []
    for p in result.pooled:
        mh = cells.RATIO.ci(p.mh_odds_ratio, p.mh_ci_low, p.mh_ci_high)
        rows.append((p.group, f"{cells.SHARE.text(p.marginal_rate)} / {cells.SHARE.text(p.reference_marginal_rate)}",
                     cells.GAP.ci(p.marginal_difference, p.marginal_difference_ci_low, p.marginal_difference_ci_high),
                     cells.RATIO.text(p.marginal_impact_ratio), cells.P_VALUE.text(p.marginal_p_value),
                     cells.GAP.text(p.weighted_difference), mh, cells.P_VALUE.text(p.cmh_p_value),
                     cells.P_VALUE.text(p.breslow_day_p_value), result.simpson_words(p)))
        classes.append("warn" if result.simpson_words(p) == "YES" else "")
    note = ("Overall: all cells together, ignoring them. Within-cell: the cells' differences averaged by their size. "
            "Pooled odds ratio and Cochran-Mantel-Haenszel (CMH) test: the gap inside the cells, pooled; Breslow-Day-Tarone: "
            "whether the gap differs from stratum to stratum (p below 0.05: read the strata one by one). Simpson's paradox: "
            "the overall gap and the gap within the strata disagree.")
    return Table(f"Overall against within the strata, per group (reference: {result.reference})", header, tuple(rows),
                 tuple(classes), note=note, wide=True)


def _audit_section(result: AuditResult) -> Section:
    from luskin_core.present import plots
    from luskin_core.present.audit_plots import audit_figures, overall_vs_within

    spec = result.spec
    section = Section("audit", "The audit: " + result.groups_text)
    section.blocks.append(settings_block(spec_in_words(spec, result.reference, result.class_names)))
    section.add("lead", text=result.headline())
    section.add("sentences", items=result.sentences(), title="Findings")
    seen = result.power_sentences()
    if seen:
        section.add("sentences", items=seen, title="What the data could have seen")
    section.warnings(["Simpson's paradox: " + result.pooled_sentence(p) for p in result.simpson],
                     "The overall gap misleads")
    if result.cells:  # the paper's two classes: the paper's bar chart, then overall vs within the cells
        section.chart(plots.audit_bars(result), "Share with the positive outcome per class and filter cell; whiskers: "
                                                "95% confidence intervals; n: rows.")
        if len(result.cell_names) > 1 and result.pooled:
            section.chart(overall_vs_within(result), "Each group's gap to the reference, overall and within the strata.")
    else:
        for caption, figure in audit_figures(result):
            section.chart(figure, caption)
    if result.cells:
        section.table(_paper_rows(result))
    section.table(_comparison_rows(result))
    if any(c.error_rates is not None for c in result.comparisons):
        section.table(_error_rate_rows(result))
    if any(c.score is not None for c in result.comparisons):
        section.table(_score_rows(result))
    if len(result.cell_names) > 1:
        if result.pooled:
            section.table(_pooled_rows(result))
        else:
            section.add("missing", text="There is no pooled view: only the reference group has rows.")
    return section


def _data_section(result: AuditResult, frame: pd.DataFrame | None, dataset: DatasetRef | None,
                  sample_note: str | None = None) -> Section:
    section = Section("data", "The data")
    items: list[tuple[str, Any]] = []
    if dataset is not None:
        items.append(("Data", dataset.label))
        if dataset.fingerprint:
            items.append(("Content fingerprint", dataset.fingerprint))
    total = len(frame) if frame is not None else result.n_rows + result.n_excluded
    items.append(("Rows in the data", f"{total:,}"))
    if frame is not None:
        missing = int(frame.isna().sum().sum())
        items.append(("Columns", f"{frame.shape[1]:,}"))
        items.append(("Missing values", f"{missing:,} cells ({format_percent(missing / max(frame.size, 1))} of all cells)"))
    items.append(("Rows audited", f"{result.n_rows:,}"))
    if result.n_excluded:
        why = "; ".join(f"{reason}: {count:,}" for reason, count in result.excluded_reasons.items())
        outside = result.n_excluded - sum(result.excluded_reasons.values())
        if outside > 0:
            why = (why + "; " if why else "") + f"outside the population: {outside:,}"
        items.append(("Rows excluded", f"{result.n_excluded:,} ({why})" if why else f"{result.n_excluded:,}"))
    else:
        items.append(("Rows excluded", "none"))
    if sample_note:
        items.append(("Rows the models used", sample_note))
    section.blocks.append(settings_block(items))
    if frame is None:
        section.add("missing", text="The report was given the counts, not the rows (an audit inside a database or "
                                    "of a large file reads only counts), so the columns are not listed.")
        return section
    from luskin_core.counting.data import column_summary

    summary = column_summary(frame)
    shown = summary.head(_MAX_COLUMNS_LISTED)
    note = "" if len(summary) <= _MAX_COLUMNS_LISTED else \
        f"The first {_MAX_COLUMNS_LISTED} of {len(summary):,} columns are listed."
    section.blocks.append(make_block("details", title="Columns, their types and missing values",
                                 table=_frame_table(shown, "One row per column of the data", note=note)))
    return section


_MAX_COLUMNS_LISTED = 80


# -- the corrections -----------------------------------------------------------------------
def correction_warnings(correction: CorrectionResult, name: str = "") -> list[str]:
    """A correction's warnings, each once: a model's own with the model named (e.g. an alpha), then the rest.

    With ``name`` (e.g. "Thresholds") every sentence starts with it.
    """
    own = [(stage.label, str(w)) for stage in correction.stages for w in stage.warnings]
    named = {w for _, w in own}
    head = f"{name}, " if name else ""
    return ([f"{head}{label}: {w}" for label, w in own]
            + [f"{name}: {w}" if name else w for w in map(str, correction.warnings) if w not in named])


def _gap_rows(audits: Sequence[tuple[str, AuditResult]]) -> Table:
    """Share per group per cell under each set of decisions, then each gap (the paper's Tables 1-4)."""
    first = audits[0][1]
    header = ("Cell", "Group") + tuple(cells.SHARE.heading(f"{name}: share", ci="95% CI") for name, _ in audits)
    rows, classes = [], []
    if first.cells:
        for key in dict.fromkeys(c.filter_holds for c in first.cells):
            cell = first.gap(key).cell
            for member in (True, False):
                label = first.cell(key, member).label
                rows.append((cell, label) + tuple(
                    cells.SHARE.ci(a.cell(key, member).ratio, a.cell(key, member).ci_low, a.cell(key, member).ci_high)
                    for _, a in audits))
                classes.append("")
            rows.append((cell, f"Gap ({cells.GAP.unit}, group − reference)") + tuple(
                f"{cells.GAP.text(a.gap(key).gap)} ({a.gap(key).group} − {a.gap(key).reference}; "
                f"p {cells.P_VALUE.text(a.gap(key).p_value)}; "
                f"{a.gap(key).verdict or 'n/a'})" for _, a in audits))
            classes.append("warn")
    else:
        for c in first.comparisons:
            rows.append((c.cell or "All rows", c.group + (" (reference)" if c.is_reference else "")) + tuple(
                cells.SHARE.ci(x.rate, x.ci_low, x.ci_high)
                for x in (a.comparison(c.group, c.cell) for _, a in audits)))
            classes.append("reference" if c.is_reference else "")
    return Table("Share with a positive decision per group and cell on the held-out rows D4", header, tuple(rows),
                 tuple(classes), wide=True)


def _retrain_section(results: Sequence[Any], points: Sequence[CostPoint]) -> Section:
    from luskin_core.present import plots

    section = Section("retrain", "Correction 1: relabel and retrain (controlled fairness)")
    section.add("paragraph", text=(
        "The rows are split 40/40/20. A first model (A1) learns from the recorded outcomes on the first 40% (D1); its "
        "risk scores on the second 40% (D2) decide which labels to change so that the groups' shares become equal "
        "within the cells (D3); a second model (C2) learns from those labels. Both are measured on the last 20% (D4), "
        "which neither has seen."))
    for index, result in enumerate(results, 1):
        options = result.options
        mine = [p for p in points if p.series == f"retrain-{index}"]
        if len(results) > 1:
            section.add("subheading", text=f"{index}. {ALGORITHM_NAMES[options.algorithm]}, A1 {options.first}, "
                                           f"C2 {options.second}")
        sizes = result.sizes
        dropped = "; ".join(f"{k} ({v})" for k, v in result.dropped_features.items())
        section.blocks.append(settings_block([
            ("Settings", options.describe()),
            ("Decision", f"a model decides positive when its score is at least {options.threshold:g}"),
            ("Split", (f"D1 {sizes['D1']:,} rows (train A1), D2 {sizes['D2']:,} rows (relabelled to train C2), D4 "
                      f"{sizes['D4']:,} rows (these numbers); stratified by {result.stratified_by}")),
            ("Model inputs", f"{len(result.features)} columns: {', '.join(result.features)}"),
            ("Left out of the inputs", dropped),
        ]))
        section.warnings(correction_warnings(result.correction), "Warnings about this correction")
        auc_rows = []
        for p in mine:
            auc_rows.append((p.label, cells.AUC.ci(p.score, p.score_low, p.score_high),
                             cells.GAP_SIZE.ci(p.gap, p.gap_low, p.gap_high), p.detail))
        section.table(Table("Quality and remaining gap of the two models on D4",
                            ("Model", "AUC against the recorded outcomes [95% CI]",
                             cells.GAP_SIZE.heading("Largest gap in any cell", ci="95% CI"), "Between"),
                            tuple(auc_rows)))
        audits = [("Recorded outcomes", result.original), (f"A1 ({options.first})", result.first),
                  (f"C2 ({options.second})", result.second)]
        section.table(_gap_rows(audits))
        if result.original.gaps:
            section.chart(plots.retrain_gaps(result), "Gap between the groups in each filter cell: recorded outcomes, "
                                                      "the first model A1 and the retrained C2 (held-out rows D4).")
        else:
            section.add("missing", text="The before-and-after gap chart is drawn for a protected group against the "
                                        "rest; the table above gives every group's share.")
        section.add("sentences", items=result.second.sentences(), title="Verdicts for the retrained model C2 on D4")
        section.add("sentences", items=result.relabelling.sentences(), title="How the training labels were changed")
    return section


def _threshold_section(reports: Sequence[Any], spec: AuditSpec) -> Section:
    from luskin_core.present import plots

    section = Section("thresholds", "Correction 2: one decision threshold per group (classification parity)")
    section.add("paragraph", text=(
        "One model scores everyone; each group gets its own threshold, chosen to maximise accuracy minus lambda times "
        "the gaps in true and false positive rates between the groups. The numbers are measured on held-out test "
        "rows. A row is decided positive when its score is at least its group's threshold."))
    solvers = {"exact": "exact (the true best thresholds)", "pso": "the paper's particle swarm (seeded)"}
    for index, report in enumerate(reports, 1):
        if len(reports) > 1:
            section.add("subheading", text=f"{index}. lambda = {report.lam:g}")
        if report.n_train:
            rows = (f"model trained on {report.n_train:,} rows, thresholds chosen on {report.n_tune:,}"
                    + (" (out of fold)" if report.tuning_method == "crossfit" else "")
                    + f", tested on {report.n_test:,} (these numbers)")
        else:
            rows = f"thresholds chosen on {report.n_tune:,} rows, tested on {report.n_test:,} (these numbers)"
        before = ("no shared threshold to compare with" if report.default_threshold is None
                  else f"one threshold of {report.default_threshold:.4g} for every group")
        section.blocks.append(settings_block([
            ("Scores", report.score_source),
            ("lambda", f"{report.lam:g} (weight on equal error rates against accuracy; the paper uses 1)"),
            ("Solver", solvers.get(report.solver, report.solver)),
            ("Reference group", report.reference),
            ("Before", before),
            ("Rows", rows),
            ("Seed", f"{report.seed}"),
            ("Thresholds chosen", "; ".join(f"{k}: {float(v):.4g}" for k, v in report.thresholds.items())),
        ]))
        section.warnings(correction_warnings(report.correction), "Warnings about this correction")
        header = ("Group", "Rows", "Threshold before", "Threshold after",
                  *(cells.SHARE.heading(f"{rate} {when}") for rate in ("TPR", "FPR") for when in ("before", "after")))
        rows_out = []
        for group, after in report.after.groups.items():
            b = report.before.groups[group] if report.before is not None else None
            rows_out.append((str(group), cells.COUNT.text(after.n), "n/a" if b is None else f"{b.threshold:.4g}",
                             f"{after.threshold:.4g}", cells.SHARE.text(None if b is None else b.tpr),
                             cells.SHARE.text(after.tpr), cells.SHARE.text(None if b is None else b.fpr),
                             cells.SHARE.text(after.fpr)))
        b_split = report.before
        rows_out.append((cells.GAP_SIZE.heading("Largest gap between groups"), "", "", "",
                         cells.GAP_SIZE.text(None if b_split is None else b_split.tpr_gap),
                         cells.GAP_SIZE.text(report.after.tpr_gap),
                         cells.GAP_SIZE.text(None if b_split is None else b_split.fpr_gap),
                         cells.GAP_SIZE.text(report.after.fpr_gap)))
        section.table(Table("True positive rate (TPR) and false positive rate (FPR) per group on the test rows",
                            header, tuple(rows_out), ("",) * (len(rows_out) - 1) + ("warn",),
                            note=f"Accuracy on the test rows: {_pct(b_split.accuracy) if b_split else 'n/a'} before, "
                                 f"{_pct(report.after.accuracy)} after.", wide=True))
        section.add("sentences", items=report.gap_lines(),
                    title="The gaps on the test rows, with their 95% intervals" +
                          (", and over seeds 0-9" if report.spread is not None else ""))
        if report.before is None:
            section.add("missing", text="There is no 'before' point: the score column has no shared threshold to "
                                        "compare with (none was given).")
        section.chart(plots.threshold_roc(report, spec, "test"), "ROC curves per group with the operating points "
                                                                 "before (cross) and after (circle) tuning, on the "
                                                                 "held-out test rows.")
    return section


def _sweep_histograms(sweep: Any, alpha: float, spec: AuditSpec) -> Any:
    """The dashboard's histogram chart, the groups named and coloured as the sweep names them (the data's names)."""
    from luskin_core.present import plots

    labels = list(sweep.group_labels)
    if getattr(sweep, "names", None) is None and spec.group_name in labels and spec.other_name in labels:
        return plots.sweep_histograms(sweep, alpha, spec.group_name, spec.other_name)   # a sweep kept before names
    return plots.sweep_histograms(sweep, alpha)


def _equalized_section(sweeps: Sequence[Any], spec: AuditSpec) -> Section:
    from luskin_core.present import plots

    section = Section("equalized", "Correction 3: equalized score distributions")
    section.add("paragraph", text=(
        "A logistic regression trained on alpha × its usual error + (1 − alpha) × the distance between the groups' "
        "score distributions (for people with a positive and a negative outcome separately). alpha = 1 is plain "
        "logistic regression; smaller alpha pulls the distributions together. The group is used in training only, "
        "not to decide. A row is decided positive when its probability is above 0.5."))
    for index, sweep in enumerate(sweeps, 1):
        points = list(sweep.points)
        if len(sweeps) > 1:
            section.add("subheading", text=f"Sweep {index}")
        alpha = getattr(sweep, "shown_alpha", None)   # a sweep kept before it had one: none shown
        chosen = sweep.point(alpha).alpha if alpha is not None else None
        section.blocks.append(settings_block([
            ("Alphas computed", ", ".join(f"{p.alpha:g}" for p in points)),
            ("Alpha shown", f"{chosen:g}" if chosen is not None else "all (histograms: the smallest)"),
            ("Rows", f"trained on {sweep.n_train:,}, tested on {sweep.n_test:,} (these numbers)"),
            ("Reference group", sweep.reference_group),
        ]))
        section.warnings(correction_warnings(sweep.correction), "Warnings about this correction")
        labels = list(sweep.group_labels)
        header = ("alpha", cells.SHARE.heading("Accuracy", ci="95% CI")) + tuple(
            cells.SHARE.heading(f"TPR {g}") for g in labels) + tuple(cells.SHARE.heading(f"FPR {g}") for g in labels) + (
            cells.GAP_SIZE.heading("TPR gap"), cells.GAP_SIZE.heading("FPR gap"))
        rows = []
        for p in points:
            low, high = accuracy_interval(p.accuracy, int(sweep.n_test))
            rows.append((f"{p.alpha:g}", cells.SHARE.ci(p.accuracy, low, high))
                        + tuple(cells.SHARE.text(p.groups[g]["tpr"]) for g in labels)
                        + tuple(cells.SHARE.text(p.groups[g]["fpr"]) for g in labels)
                        + (cells.GAP_SIZE.text(p.tpr_gap), cells.GAP_SIZE.text(p.fpr_gap)))
        section.table(Table("Accuracy and the groups' error rates on the test rows for each alpha (alpha = 1: "
                            "accuracy only)", header, tuple(rows),
                            tuple("warn" if p.alpha >= 1 else "" for p in points), wide=True))
        shown = chosen if chosen is not None else points[0].alpha
        section.chart(_sweep_histograms(sweep, shown, spec),
                      f"Score distributions of the groups at alpha = {shown:g} on the test rows.")
        section.chart(plots.alpha_accuracy([p.alpha for p in points], [p.accuracy for p in points], chosen),
                      "Accuracy on the test rows for each alpha.")
        section.chart(plots.alpha_gaps([p.alpha for p in points], [p.tpr_gap for p in points],
                                       [p.fpr_gap for p in points], chosen),
                      "The gaps in true and false positive rates between the groups for each alpha.")
    return section


def _cost_rows(points: Sequence[CostPoint]) -> list[tuple[CostPoint | None, CostPoint]]:
    """(before, after) per correction; for a sweep, the paper's default alphas (else the smallest gap)."""
    out = []
    for series in dict.fromkeys(p.series for p in points):
        group = [p for p in points if p.series == series]
        before = next((p for p in group if p.stage == "before"), None)
        afters = [p for p in group if p.stage == "after"]
        if group[0].tool == "equalized":
            defaults = [p for p in afters if p.default]
            afters = defaults or sorted(afters, key=lambda p: (p.gap is None, p.gap or 0.0))[:1]
        out += [(before, after) for after in afters]
    return out


def _cost_name(after: CostPoint) -> str:
    return f"Equalized distribution at {after.label}" if after.tool == "equalized" else after.correction


def cost_sentences(points: Sequence[CostPoint]) -> list[str]:
    """One sentence per correction: what it did to the gap and what it cost in accuracy or AUC."""
    out = []
    for before, after in _cost_rows(points):
        name = _cost_name(after)
        if before is None or before.gap is None or after.gap is None:
            out.append(f"{name}: {after.score_name} {_score_text(after)}; the gap could not be measured both before "
                       "and after, so there is nothing to compare.")
            continue
        verb = "cut" if after.gap < before.gap else ("left" if after.gap == before.gap else "WIDENED")
        change = after.score - before.score
        if after.score_name == "AUC":
            cost = f"AUC {cells.AUC.text(before.score)} → {cells.AUC.text(after.score)}"
        elif change < 0:
            cost = f"at a cost of {format_points(-change)} points of accuracy ({_pct(before.score)} → {_pct(after.score)})"
        else:
            cost = f"with no loss of accuracy ({_pct(before.score)} → {_pct(after.score)})"
        out.append(f"{name}: {verb} the {GAP_NAMES[after.family]} from {format_points(before.gap)} to "
                   f"{format_points(after.gap)} points, {cost}.")
    return out


def _score_text(p: CostPoint) -> str:
    return cells.AUC.text(p.score) if p.score_name == "AUC" else _pct(p.score)


def _summary_rows(points: Sequence[CostPoint]) -> Table:
    rows, classes = [], []
    for before, after in _cost_rows(points):
        score = f"{_score_text(before)} → {_score_text(after)}" if before is not None else _score_text(after)
        gap_b = "n/a" if before is None or before.gap is None else format_points(before.gap)
        gap_a = "n/a" if after.gap is None else format_points(after.gap)
        wider = before is not None and before.gap is not None and after.gap is not None and after.gap > before.gap
        rows.append((_cost_name(after) + (" (the paper's default)" if after.default else ""),
                     f"{after.score_name} {score}", f"{gap_b} → {gap_a} points" + (" (WIDER)" if wider else "")
                     + (" (see the warnings below)" if after.warnings else "")))
        classes.append("warn" if after.warnings or wider else "")
    families = dict.fromkeys(p.family for p in points)
    note = "Gap: " + "; ".join(f"for {'retraining' if f == CONTROLLED else 'the others'}, the {GAP_NAMES[f]}"
                               for f in families) + ". All on held-out test rows."
    return Table("", ("Correction", "Accuracy or AUC: before → after", "Remaining gap: before → after"),
                 tuple(rows), tuple(classes), note=note, row_header=True)


def _cost_section(points: Sequence[CostPoint]) -> Section:
    section = Section("cost", "What each correction costs")
    section.add("paragraph", text=(
        "Each correction trades some accuracy for a smaller gap between the groups. The chart puts every model that "
        "was computed on the same two axes: how accurate it is (AUC for retraining, as the paper reports it; "
        "accuracy for the others) and how large a gap remains. Up and to the left is better."))
    if any(p.gap is not None for p in points):
        section.chart(cost_chart(points), "Accuracy (or AUC) against the remaining gap for every correction computed; "
                                          "arrows lead from before to after the correction; stars mark the paper's "
                                          "default choices; whiskers are 95% intervals (Wilson for accuracy, Hanley "
                                          "and McNeil for AUC, Newcombe for gaps).")
    else:
        section.add("missing", text="No correction left enough test rows in both groups to measure a gap, so there "
                                    "is nothing to draw; the table lists what was computed.")
    missing = [p for p in points if p.gap is None]
    if missing:
        section.add("missing", text="Not drawn (the gap could not be measured): " + "; ".join(
            f"{p.correction}, {p.label} ({p.detail})" for p in missing) + ".")
    section.add("sentences", items=cost_sentences(points), title="In words")
    rows = []
    for p in points:
        kind = cells.AUC if p.score_name == "AUC" else cells.SHARE   # the Measure column says which
        rows.append((p.correction, p.label + (" ★" if p.default else ""), p.score_name + (f" ({kind.unit})" if kind.unit else ""),
                     kind.ci(p.score, p.score_low, p.score_high), cells.GAP_SIZE.ci(p.gap, p.gap_low, p.gap_high),
                     p.detail, cells.COUNT.text(p.n_test)))
    section.table(Table("Every point of the chart", ("Correction", "Model", "Measure", "Value [95% CI]",
                                                     cells.GAP_SIZE.heading("Remaining gap", ci="95% CI"),
                                                     "Largest gap between", "Test rows"),
                        tuple(rows), tuple("warn" if p.warnings else "" for p in points),
                        note="★ the paper's default choice. Gap: " + "; ".join(
                            f"{k}: {v}" for k, v in GAP_NAMES.items() if any(p.family == k for p in points)) + ".",
                        wide=True))
    return section


def _summary_section(result: AuditResult, dataset: DatasetRef | None, points: Sequence[CostPoint],
                     ran: Sequence[str], warnings: Sequence[str], adjusted: Any = None) -> Section:
    section = Section("summary", "The findings in one page", css="summary")
    section.add("subheading", text="The question")
    section.blocks.append(settings_block(question_items(result, dataset)))
    section.add("subheading", text="What was found, most important first")
    found = findings(result)
    section.add("lead", text=found.headline)
    # The overall answer and the within-part result always stay on this page; then the largest gaps.
    rest = found.sentences()[1:]
    keep = [f.sentence for f in found.items[1:] if f.kind == WITHIN_PARTS]
    others = [s for s in rest if s not in keep]
    shown = keep + others[:max(0, _SUMMARY_SENTENCES - len(keep))]
    if len(others) + len(keep) > len(shown):
        shown.append(f"... and {len(rest) - len(shown)} more findings, in the audit section below.")
    section.add("sentences", items=shown)
    if adjusted is not None:  # the adjusted gap belongs on the first page when it was run
        section.add("sentences", items=adjusted.summary(), title="Once the controls are held equal (regression)")
    section.add("paragraph", text=f"Verdicts: {result.headline()}")
    caveats = caveat_sentences(result)
    if caveats:
        section.add("caveats", items=caveats, title="Read with care")
    enough = [line.strip(" -") for line in result.sufficiency_lines()]
    if enough:
        section.add("caveats", items=enough, title="What the data could show")
    section.add("subheading", text="What was tried to correct it, and what it cost")
    if points:
        section.table(_summary_rows(points))
    else:
        section.add("missing", text="No correction was run. Retraining, per-group thresholds and the equalized "
                                    "distribution (the dashboard's correction pages) show what a correction would "
                                    "cost.")
    not_run = [name for name in ("retraining", "per-group thresholds", "equalized distribution") if name not in ran]
    if points and not_run:
        section.add("paragraph", text="Not run for this report: " + ", ".join(not_run) + ".")
    section.warnings(warnings, "Warnings: corrections that backfired or need care")
    return section


_SUMMARY_SENTENCES = 6

_GLOSSARY = (
    ("Share [95% CI]", "the share of a group's rows with the positive outcome, with its Wilson 95% interval"),
    ("Difference", ("a group's share minus the reference group's, in percentage points, with Newcombe's 95% "
                   "interval")),
    ("Impact ratio", ("a group's share divided by the reference group's (the Miettinen-Nurminen score interval); "
                     "below 0.8 fails the four-fifths rule")),
    ("p-value", ("the chance of a gap at least this large if the groups were treated alike (z-test; Fisher's exact "
                "test for small counts)")),
    ("Adjusted p", ("the p-value corrected for the number of comparisons that can be judged (Holm, or "
                   "Benjamini-Hochberg); comparisons with too few rows are left out of the correction")),
    ("Verdict", (f"{Verdict.TOO_FEW} (not judged); {Verdict.WITHIN}; {Verdict.BEYOND} (adjusted p below 0.05); "
                f"{Verdict.CHANCE}")),
    ("Pooled odds ratio, CMH", ("the gap inside the cells pooled across them (Mantel-Haenszel) and its test "
                               "(Cochran-Mantel-Haenszel)")),
    ("Breslow-Day-Tarone", ("Breslow and Day's test, with Tarone's adjustment, of whether the gap differs from cell "
                            "to cell; when it does, read the cells one by one")),
    ("Simpson's paradox", ("the overall gap and the gap within the cells point different ways, or only one is "
                          "significant")),
    ("TPR, FPR", ("true positive rate (share of people with a positive outcome decided positive) and false positive "
                 "rate (share of people with a negative outcome decided positive)")),
    ("AUC", ("how well a model's scores rank positive above negative rows (0.5: chance; 1: perfect), with Hanley and "
            "McNeil's interval")),
)


def _appendix(spec: AuditSpec, options: Mapping[str, Any] | None, retrains: Sequence[Any],
              thresholds: Sequence[Any], sweeps: Sequence[Any], versions: Mapping[str, str]) -> Section:
    section = Section("appendix", "Appendix: settings as JSON, how the numbers are made, software")
    section.add("paragraph", text="The same settings as above, as JSON: for Luskin's command line or a "
                                  "saved configuration.")
    section.add("json", title="Audit specification", text=spec.to_json())
    for i, result in enumerate(retrains, 1):
        section.add("json", title=f"Retraining options ({i})", text=result.options.to_json())
    for i, report in enumerate(thresholds, 1):
        section.add("json", title=f"Threshold settings ({i})", text=json.dumps({
            "lambda": report.lam, "solver": report.solver, "score_source": report.score_source,
            "default_threshold": report.default_threshold, "tuning": report.tuning_method, "seed": report.seed},
            indent=2, allow_nan=False))
    for i, sweep in enumerate(sweeps, 1):
        section.add("json", title=f"Equalized-distribution sweep ({i})", text=json.dumps({
            "alphas": list(sweep.alphas), "rows": {"train": sweep.n_train, "test": sweep.n_test},
            "reference_group": sweep.reference_group}, indent=2))
    ran = {"retrain": bool(retrains), "thresholds": bool(thresholds), "equalize": bool(sweeps)}
    used = {k: v for k, v in dict(options or {}).items() if ran.get(k, True)}   # settings of tools that ran only
    if used:
        section.add("json", title="Page options",
                    text=json.dumps(used, indent=2, default=_json_default_lenient))
    section.add("subheading", text="How the numbers are made")
    section.blocks.append(settings_block((*_GLOSSARY, *((s.heading, s.meaning) for s in shown_statistics.SHOWN))))
    section.add("subheading", text="Software")
    section.add("paragraph", text="Made with " + ", ".join(f"{k} {v}" for k, v in versions.items()) + ".")
    return section


def _json_default_lenient(value: Any) -> Any:
    try:
        return json_default(value)
    except LuskinError:
        return str(value)


# ------------------------------------------------------------------------------------------
# Building the report
# ------------------------------------------------------------------------------------------
def sort_results(results: Sequence[Any], *,
                  missing: str = "There is no audit result to report yet: run the audit first.",
                  ) -> tuple[AuditResult, list[Any], list[Any], list[Any], list[Any]]:
    """Split ``results`` into the audit, the corrections (retraining, thresholds, equalized) and the parts
    with a section of their own (:mod:`luskin_core.present.report_parts`)."""
    from luskin_core.corrections.equalize import AlphaSweep
    from luskin_core.corrections.retrain import RetrainResult
    from luskin_core.corrections.thresholds import ThresholdReport
    from luskin_core.present.report_parts import part_kind

    if isinstance(results, AuditResult) or not isinstance(results, Sequence):
        raise LuskinError("A report takes its results as one list: [the audit, and any other results beside it].")
    result: AuditResult | None = None
    retrains: list[Any] = []
    reports: list[Any] = []
    sweeps: list[Any] = []
    parts: list[Any] = []
    for item in results:
        if item is None:   # a tool that was not run
            continue
        if isinstance(item, AuditResult):
            if result is not None and item is not result:
                raise LuskinError("A report shows one audit: pass one audit result, with the other results beside it.")
            result = item
        elif isinstance(item, RetrainResult):
            retrains.append(item)
        elif isinstance(item, ThresholdReport):
            reports.append(item)
        elif isinstance(item, AlphaSweep):
            sweeps.append(item)
        else:
            part_kind(item)  # a result the report cannot show is said now, in words
            parts.append(item)
    if result is None:
        raise LuskinError(missing)
    return result, retrains, reports, sweeps, parts


def report_content(
    results: Sequence[Any],
    *,
    frame: pd.DataFrame | None = None,
    dataset: DatasetRef | Mapping[str, Any] | str | None = None,
    options: Mapping[str, Any] | None = None,
    title: str = "Fairness audit report",
    generated_at: _dt.datetime | None = None,
    sample_note: str | None = None,
) -> ReportContent:
    """Everything the report says about ``results``, for :meth:`ReportContent.html` and :meth:`ReportContent.pdf`.

    ``results`` holds the audit result and any other results, in any order (None for a tool not run): the
    corrections (each
    ``RetrainResult``, ``ThresholdReport``, ``AlphaSweep``: several algorithms, model pairs or lambdas are
    several results; a sweep's histograms are drawn at its ``shown_alpha``) and every result registered in
    :mod:`luskin_core.present.report_parts` (adjusted gaps, regulator tables and outputs, an audit over time, a
    proxy audit, a scan, or a result offering its own ``report_section``). A result the report cannot show is a
    :class:`~luskin_core.errors.LuskinError`. The rest is context: ``frame`` the data as loaded (for the data
    summary), ``dataset`` its name (:class:`DatasetRef`), ``options`` the page options (shown as JSON in the
    appendix), ``sample_note`` which rows the model tools used on a sample of a large source (e.g. "a stratified
    sample of 500,000 of 10,000,000 rows"). Tools not run are left out, and the first page says which.
    """
    from luskin_core.analyses.adjust_model import AdjustResult
    from luskin_core.present.report_parts import PartContext, part_sections
    from luskin_core.present.series_report import pooled_chart

    result, retrains, reports, sweeps, parts = sort_results(results)
    spec = result.spec
    ref = DatasetRef.coerce(dataset) if dataset is not None else None
    when = (generated_at or _dt.datetime.now().astimezone()).strftime("%d %B %Y, %H:%M %Z").strip()
    versions = software_versions()
    points = cost_points(retrains, reports, sweeps)
    ran = [name for name, items in (("retraining", retrains), ("per-group thresholds", reports),
                                    ("equalized distribution", sweeps)) if items]
    warnings: list[str] = []
    for name, items in (("Retraining", retrains), ("Thresholds", reports), ("Equalized distribution", sweeps)):
        for obj in items:
            warnings += correction_warnings(obj.correction, name)
    adjusted = next((p for p in parts if isinstance(p, AdjustResult)), None)   # its gaps are on the first page too
    sections = [_summary_section(result, ref, points, ran, list(dict.fromkeys(warnings)), adjusted)]
    if points:
        sections.append(_cost_section(points))
    audit_section = _audit_section(result)
    sections.append(audit_section)
    pooled_chart(audit_section, result)  # small groups: raw and partially pooled shares, in the audit's section
    sections += part_sections(parts, PartContext(result, ref.label if ref else ""))
    if retrains:
        sections.append(_retrain_section(retrains, points))
    if reports:
        sections.append(_threshold_section(reports, spec))
    if sweeps:
        sections.append(_equalized_section(sweeps, spec))
    sections.append(_data_section(result, frame, ref, sample_note if ran else None))
    sections.append(_appendix(spec, options, retrains, reports, sweeps, versions))
    data_line = f" Data: {ref.label}." if ref is not None else ""
    byline = f"Generated {when} by Luskin {versions['luskin']}.{data_line}"
    return ReportContent(title, byline, f"Luskin {versions['luskin']} fairness report, {when}", versions["luskin"],
                         tuple(sections))


def build_html_report(results: Sequence[Any], **context: Any) -> str:
    """A self-contained HTML page with the audit and every other result in ``results``.

    ``results`` and the context keywords (``frame``, ``dataset``, ``options``, ``title``, ``generated_at``,
    ``sample_note``) as in :func:`report_content`.
    """
    return report_content(results, **context).html()


def build_pdf_report(results: Sequence[Any], *, browser_path: str | None = None, **context: Any) -> bytes:
    """The same report as :func:`build_html_report`, as PDF bytes (charts as vector images).

    Needs WeasyPrint and kaleido with a Chromium (found on the PATH, or ``browser_path``).
    """
    return report_content(results, **context).pdf(browser_path=browser_path)


def report_filename(dataset: DatasetRef | Mapping[str, Any] | str | None, when: _dt.datetime | None = None,
                    extension: str = "html") -> str:
    """A safe download name such as ``luskin-report-adult-2026-11-22.html`` (or ``.pdf``)."""
    name = DatasetRef.coerce(dataset).name if dataset is not None else "audit"
    stem = re.sub(r"[^A-Za-z0-9_]+", "-", str(name).rsplit(".", 1)[0]).strip("-")[:40] or "audit"
    return f"luskin-report-{stem}-{(when or _dt.datetime.now()).date().isoformat()}.{extension}"
