"""Thresholds page (classification parity, paper section 4.2): one threshold per group.

A score already in the data is chosen only among plausible score columns (numeric, not the
outcome or the protected column, never an identifier such as COMPAS's ``id``), those whose
names say score, risk, probability or decile first.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from luskin_app import choices as ch_
from luskin_app import dataset, keys, source_view, ui
from luskin_app.cache import options_key, remember, shared
from luskin_app.help import HELP
from luskin_app.option_inputs import OptionInputs
from luskin_core.corrections.thresholds import ThresholdReport, tune_thresholds
from luskin_core.errors import LuskinError
from luskin_core.formatting import format_percent, format_points
from luskin_core.present import plots
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.spec.guess import score_columns
from luskin_core.spec.options import OPTION_CONSTRAINTS
from luskin_core.spec.validation import check_finite

SOURCES = {"model": "Train a model on the data", "column": "Use a score column already in the data"}


@shared(show_spinner=False, max_entries=32)
def _tune_cached(fingerprint: str, spec_json: str, options_json: str, _frame: pd.DataFrame,
                 _options: dict[str, Any], _features: tuple[str, ...] | None) -> ThresholdReport:
    """Train (or read) the scores and tune the thresholds; cached on data, spec and options."""
    spec = AuditSpec.from_json(spec_json)
    use_model = _options["source"] == "model"
    declared = {name: _options[name] for name in OPTION_CONSTRAINTS["thresholds"] if name in _options}
    declared.pop("model", None)
    if not use_model:
        declared.pop("tuning", None)  # a score column is tuned on half of its rows
    arguments = {"model": _options["model"] if use_model else None,
                 "score_column": None if use_model else _options["score_column"],
                 "features": list(_features) if use_model and _features else None,
                 **declared}   # solver, lam, seed, tuning and any other declared option
    report = tune_thresholds(_frame, spec, **arguments)
    if _options.get("spread"):   # the same run over seeds 0-9: how much the test-set gaps move with the split
        from dataclasses import replace

        from luskin_core.corrections.thresholds import seed_spread

        report = replace(report, spread=seed_spread(_frame, spec, **{k: v for k, v in arguments.items()
                                                                      if k != "seed"}))
    return report


def _features(spec: AuditSpec) -> tuple[str, ...] | None:
    """The chosen model columns (without the outcome), else the core's default choice."""
    features = ch_.choices().get("features")
    if not features:
        return None
    return tuple(c for c in features if c != spec.outcome)


def _train_instead() -> None:
    st.session_state[keys.THR_SOURCE] = "model"


def render_score_column(spec: AuditSpec, opts: dict[str, Any]) -> bool:
    """The score column, among plausible ones only; False (with the way out) when there is none."""
    frame = dataset.dataset().frame
    found = score_columns(frame, spec.outcome, spec.protected.column if spec.protected else None)
    if not found.columns:
        st.warning(ui.md(found.note), icon=ui.ICONS["error"])
        st.button("Train a model instead", key="thr_train_instead", on_click=_train_instead, type="primary")
        return False
    ch_.seed("thr_score_column", opts.get("score_column") or found.columns[0])
    if st.session_state[keys.THR_SCORE_COLUMN] not in found.columns:
        st.session_state[keys.THR_SCORE_COLUMN] = found.columns[0]
    column = st.selectbox("Score column", list(found.columns), key="thr_score_column", format_func=ui.option_text,
                          help="Higher score = more likely positive (e.g. COMPAS decile_score). Identifiers, codes "
                               "and dates are not offered.")
    st.caption(ui.md(found.note))
    opts.update(source="column", score_column=column)
    return True


def render_options(spec: AuditSpec) -> dict[str, Any]:
    """Score source, model or score column, and the tool's declared options (empty when nothing can be tuned)."""
    ch = ch_.choices()
    opts = dict(ch["thresholds"])
    form = OptionInputs("thresholds", opts)
    ch_.seed("thr_source", opts["source"])
    c1, c2, c3 = st.columns(3)
    usable = True
    with c1:
        source = st.radio("Scores", list(SOURCES), format_func=SOURCES.get, key="thr_source",
                          help="Thresholds cut a score: train a model for it, or use a score the data already has.")
        if source == "model":
            form.show("model")
            form.show("tuning")
            opts["source"] = "model"
        else:
            form.drawn("model", "tuning")  # a score column needs no model (the page keeps the last one chosen)
            usable = render_score_column(spec, opts)
    with c2:
        form.show("solver")
    with c3:
        form.show("lam")
        form.show("seed")
        form.rest()  # any other option the tool declares
    ch["thresholds"] = opts
    if form.checked("thresholds") is None:  # the command line's checks of the same values
        return {}
    return opts if usable else {}


def _rates_table(report: ThresholdReport) -> pd.DataFrame:
    """Accuracy, TPR and FPR per group, before (one threshold) and after (own thresholds), test rows."""
    rows = []
    for when, split in (("Before", report.before), ("After", report.after)):
        if split is None:
            continue
        for group, r in split.groups.items():
            rows.append({"When": when, "Group": group, "Threshold": r.threshold, "Accuracy": 100 * r.accuracy,
                         "TPR": 100 * r.tpr, "FPR": 100 * r.fpr, "Rows": r.n})
        rows.append({"When": when, "Group": "All (overall accuracy)", "Threshold": None,
                     "Accuracy": 100 * split.accuracy, "TPR": None, "FPR": None,
                     "Rows": sum(r.n for r in split.groups.values())})
    return pd.DataFrame(rows)


def render_result(report: ThresholdReport, spec: AuditSpec) -> None:
    """Warnings, headline numbers, the ROC chart with before/after points, the thresholds and the table."""
    ui.show_warnings(report.correction)
    a, b, c = st.columns(3)
    after = report.after
    before = report.before
    a.metric("Accuracy (test rows)", format_percent(after.accuracy),
             None if before is None else f"{format_points(after.accuracy - before.accuracy, signed=True)} points",
             help="Share of correct decisions on rows held out from training and tuning.")
    b.metric("TPR gap", f"{format_points(after.tpr_gap)} points",
             None if before is None else format_points(after.tpr_gap - before.tpr_gap, signed=True), delta_color="inverse",
             help=HELP["tpr"] + " The gap is the largest difference between groups.")
    c.metric("FPR gap", f"{format_points(after.fpr_gap)} points",
             None if before is None else format_points(after.fpr_gap - before.fpr_gap, signed=True), delta_color="inverse",
             help=HELP["fpr"] + " The gap is the largest difference between groups.")
    for line in report.gap_lines():   # the test-set gaps with their intervals (and the spread over seeds)
        st.caption(ui.md(line))
    splits = {"tune": "tuning rows (where the thresholds were chosen)", "test": "held-out test rows"}
    ch_.seed("thr_split", ch_.choices()["thresholds"].get("split", "tune"))
    split = st.radio("Rows shown in the chart", list(splits), format_func=splits.get, key="thr_split",
                     horizontal=True)
    ch_.choices()["thresholds"]["split"] = split
    ui.chart(plots.threshold_roc(report, spec, split=split), key="thr_chart")
    chosen = "; ".join(f"{ui.md(group, 80)}: {value:.3f}" for group, value in report.thresholds.items())
    st.markdown(f"**Thresholds chosen:** {chosen} (a row is flagged when its score is at least its group's "
                f"threshold). Rows: {report.n_train:,} to train, {report.n_tune:,} to tune, {report.n_test:,} to test.")
    if before is None:
        st.caption("There is no 'before' threshold to compare with.")
    elif report.score_source.startswith("column"):
        st.caption(f"Before: one threshold for everyone ({report.default_threshold:.3f}), the single cut-off "
                   "with the best accuracy on the tuning rows (or 0.5 for a column of 0/1 decisions).")
    ui.grid(
        _rates_table(report), hide_index=True, key="thr_table",
        column_config={
            "Threshold": st.column_config.NumberColumn(format="%.3f"),
            "Accuracy": st.column_config.NumberColumn("Accuracy (%)", format="%.1f"),
            "TPR": st.column_config.NumberColumn("TPR (%)", format="%.1f", help=HELP["tpr"]),
            "FPR": st.column_config.NumberColumn("FPR (%)", format="%.1f", help=HELP["fpr"]),
        },
    )


def render_run(spec: AuditSpec, options: dict[str, Any]) -> None:
    """Check the inputs, tune (cached) and show the result."""
    data = dataset.dataset()
    features = _features(spec)
    if options["source"] == "model":
        ui.require_model_inputs(spec, "thresholds")
    else:
        try:
            check_finite(data.frame, [options["score_column"]], limit=float("inf"))  # a score is compared, not scaled
        except LuskinError as err:
            ui.show_problem(str(err), "thresholds", fixes=[], data_link=False,
                            extra="Choose another score column above, or train a model instead.")
            return
    spread = st.checkbox("Also run seeds 0-9 (ten splits, models and tunings) to see how much the gaps move",
                         key="thr_spread", help="The paper reports one seed; the test-set gaps move with the split.")
    options = {**options, "spread": bool(spread)}
    key = options_key({**{k: v for k, v in options.items() if k != "split"}, "features": features})
    with st.spinner("Training the model and tuning the thresholds…" + (" Ten more runs for the spread over "
                                                                        "seeds 0-9…" if spread else "")):
        report = ui.guarded(_tune_cached, data.fingerprint, spec.to_json(), key, source_view.model_rows(spec),
                            options, features, where="thresholds")
    if report is not None:
        remember("thresholds", spec, report)
        render_result(report, spec)


st.title("Thresholds: equal error rates with one threshold per group")
st.markdown("When the group is known at decision time, each group can get its own cut-off on the "
            "model's score so that both groups are flagged equally often when they should be "
            "(TPR) and when they should not (FPR), at a small cost in accuracy.")
spec_ = ui.require_spec("thresholds")
options_ = render_options(spec_)
if options_:
    render_run(spec_, options_)
