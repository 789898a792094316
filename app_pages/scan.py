"""Scan: where are the gaps nobody asked about?

The page gathers the outcome (or a model's decisions against the truth, or its predicted probabilities) and
the columns to scan, draws how hard to look from the scan's declared options (``OPTIONS["scan"]``, through
``OptionInputs``), asks the core for the scan (its line of the analyses' table,
``run(data, spec, options)``, on the loaded rows or inside the configured source's engine) and shows the findings as sentences, a chart of every
group against the bar, a table, and the JSON; when nothing survives, the smallest gap the scan could have seen.
"""

from __future__ import annotations

import json
from dataclasses import asdict

import pandas as pd
import streamlit as st

from luskin_app import choices as ch_
from luskin_app import dataset, keys, trail, ui
from luskin_app.analysis_page import run_entry
from luskin_app.cache import cached_run, keep_result, options_key
from luskin_app.option_inputs import OptionInputs
from luskin_core.analyses.scan import (
    MAX_SCAN_VALUES,
    ScanSpec,
    bar_sentence,
    default_columns,
    default_columns_note,
    scan_spec,
)
from luskin_core.errors import LuskinError
from luskin_core.present.scan_plots import finding_kind, scan_figure, scan_table
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.spec.options import OPTION_CLASSES, ScanOptions
from luskin_core.stats.judgement import ScoreRule

MEASURES = {"Outcome rate": "rate", "A model's error rate": "error", "Calibration (predicted probabilities)":
            "calibration"}
ERRORS = {"Error rate": "error", "False positive rate": "fpr", "False negative rate": "fnr"}

st.title("Scan: where are the gaps nobody asked about?")
st.caption("Every combination of up to three columns and their values is compared with everyone else. A group "
           "is reported only when its gap is beyond what chance would produce anywhere in the whole scan.")
data_ = dataset.dataset()
frame_ = data_.frame
columns_ = [str(c) for c in frame_.columns]
spec_, _ = ch_.current_spec()
measure_name_ = st.radio("Compare", list(MEASURES), horizontal=True, key="scan_measure")
measure_ = MEASURES[measure_name_]
left, right = st.columns(2)
outcome_default_ = columns_.index(spec_.outcome) if spec_ is not None and spec_.outcome in columns_ else 0
outcome_ = left.selectbox("Outcome (the truth, for a model)", columns_, index=outcome_default_, key="scan_outcome",
                          format_func=ui.option_text)
values_ = [v for v in pd.unique(frame_[outcome_].dropna())][:50]
# the Data page's positive values for its outcome (several: "Pass or Distinction", counted together), else the first
counted_: list[object] = []
if spec_ is not None and spec_.outcome == outcome_ and spec_.positive is not None:
    counted_ = list(spec_.positive) if isinstance(spec_.positive, (list, tuple)) else [spec_.positive]
default_positive_ = [v for v in values_ if any(str(v) == str(p) for p in counted_)] or values_[:1]
# the Data page's score, read as there (above its median or a cut-off), not one of its values ("exactly 67.8")
score_ = (spec_ is not None and spec_.outcome == outcome_ and spec_.outcome_type == "score"
          and measure_ == "rate")
positive_: object = None
if score_:
    cut_ = spec_.score_cutoff if spec_ is not None else None
    right.caption(ui.md(f"Counted: {outcome_} {ScoreRule(cut_).words()}, as chosen on the Data page."))
else:
    chosen_positive_ = right.multiselect("Values that count as positive (several are counted together)", values_,
                                         default=default_positive_, key="scan_positive", format_func=ui.option_text)
    positive_ = (None if not chosen_positive_ else chosen_positive_[0] if len(chosen_positive_) == 1
                 else tuple(chosen_positive_))
prediction_ = probability_ = None
cutoff_: float | None = None
if measure_ == "error":
    left, middle, right = st.columns(3)
    prediction_ = left.selectbox("Prediction column", [c for c in columns_ if c != outcome_], key="scan_prediction",
                                 format_func=ui.option_text)
    measure_ = ERRORS[middle.selectbox("Error", list(ERRORS), key="scan_error")]
    cut_text_ = right.text_input("Score cut-off (for a score column)", key="scan_cutoff", placeholder="e.g. 0.5")
    try:
        cutoff_ = float(cut_text_) if cut_text_.strip() else None
    except ValueError:
        st.error("The cut-off must be a number, e.g. 0.5.", icon=ui.ICONS["error"])
        st.stop()
elif measure_ == "calibration":
    probability_ = st.selectbox("Predicted probability of the positive outcome", [c for c in columns_ if c != outcome_],
                                key="scan_probability", format_func=ui.option_text)
roles_ = {outcome_, prediction_, probability_}
candidates_ = [c for c in columns_ if c not in roles_]

default_columns_ = default_columns(frame_, candidates_)
chosen_ = st.multiselect("Columns to scan", candidates_, default=default_columns_, key="scan_columns",
                         format_func=ui.option_text,
                         help=f"Text columns with at most {MAX_SCAN_VALUES} values; numeric columns with many values "
                              "are cut into four ranges of about equal shares of rows, at round numbers "
                              "(\"age 25-34\"). Missing values form an 'Unknown' "
                              "value of their own.")
note_ = default_columns_note(frame_, candidates_)
if note_:
    st.caption(ui.md(note_))
if not chosen_:
    st.info("Choose at least one column to scan.", icon=ui.ICONS["info"])
    st.stop()
# how hard to look: drawn from the scan's declared options (OPTIONS["scan"]); one declared later lands under "More
# settings" with no edit here. No more columns are combined than are chosen.
inputs_ = OptionInputs("scan", st.session_state.setdefault(keys.analysis_options("scan"), {}),
                       high={"depth": len(chosen_)})
inputs_.row("depth", "min_size", "level")
inputs_.show("error")
with st.expander("More settings"):
    inputs_.rest()
try:   # the scan's outcome and model columns as a specification, its columns and settings as its options
    audit_ = (AuditSpec(outcome_, None, group_by=tuple(chosen_[:1]), outcome_type="score",
                        score_cutoff=spec_.score_cutoff) if score_ and spec_ is not None
              else AuditSpec(outcome_, positive_, group_by=tuple(chosen_[:1]), prediction=prediction_,
                             prediction_cutoff=cutoff_))
    options_: ScanOptions = OPTION_CLASSES["scan"](**inputs_.chosen(), columns=tuple(chosen_), measure=measure_,
                                                   probability=probability_)
    spec: ScanSpec = scan_spec(audit_, options_)
except LuskinError as err:
    st.error(ui.md(err), icon=ui.ICONS["error"])
    st.stop()
# keyed on what the scan is handed (the data, the specification and every field of the options), as the table's
# pages are: a setting declared later changes the key with no edit here, so it is never served the old setting's scan
key_ = options_key({"data": data_.fingerprint, "spec": audit_.to_json(), "options": asdict(options_)})
try:
    with st.spinner(f"Scanning every group and calibrating on {options_.replicates:,} shuffles of the outcome..."):
        result_ = cached_run("scan", key_, lambda: run_entry("scan", data_, audit_, options_))
except LuskinError as err:
    st.error(ui.md(err), icon=ui.ICONS["error"])
    st.stop()
trail.note("scan", settings={"spec": spec.to_dict()}, produced=trail.result_text(result_))
keep_result("scan", result_)   # the Report page and the presentation add the scan's findings
if result_.findings:
    st.markdown(f"**{ui.md(result_.headline())}**")
    for i, finding in enumerate(result_.findings):
        # the kind first (a main effect, or an intersection beyond its parts); a finding inside another follows it
        indent = "↳ " if finding.within else ""
        st.warning(f"{indent}{i + 1}. **{ui.md(finding_kind(finding))}.** {ui.md(finding.sentence)}",
                   icon=ui.ICONS["beyond"])
else:
    st.success(ui.md(result_.headline()), icon=ui.ICONS["ok"])
st.caption(ui.md(bar_sentence(result_)))
for finding in result_.set_apart:
    st.info(ui.md(finding.sentence), icon=ui.ICONS["info"])
ui.chart(scan_figure(result_), key="scan_chart")
if result_.findings:
    header_, rows_ = scan_table(result_)
    # in parts that each fit the window (the gap was cut off at the right at 1280 px), each part led by the
    # finding's number (the findings above are numbered alike); the kind, written above too, last
    table_ = pd.DataFrame(rows_, columns=list(header_))
    ui.grid_fitting(table_[[c for c in table_.columns if c != "Kind"] + ["Kind"]], hide_index=True)
st.caption(ui.md(f"Controlled: the {result_.error_control}. Intervals are simultaneous: they hold together for "
                 "every group the scan could have picked."))
ui.download_button("Download the scan (JSON)", json.dumps(result_.to_dict(), indent=2, default=str).encode(),
                   "luskin_scan.json", "application/json", icon=ui.ICONS["download"])
