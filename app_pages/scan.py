"""Scan: where are the gaps nobody asked about?

The page gathers the outcome (or a model's decisions against the truth, or its predicted probabilities),
the columns to scan and the depth, asks the core for the scan (:func:`luskin_core.analyses.scan.scan`, on the
loaded rows or inside the configured source's engine) and shows the findings as sentences, a chart of every
group against the bar, a table, and the JSON; when nothing survives, the smallest gap the scan could have seen.
"""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from luskin_app import choices as ch_
from luskin_app import dataset, trail, ui
from luskin_app.cache import cached_run, keep_result, options_key
from luskin_core.analyses.scan import MAX_SCAN_VALUES, ScanSpec, default_columns, scan
from luskin_core.errors import LuskinError
from luskin_core.present.scan_plots import scan_figure, scan_table

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
positive_default_ = 0
if spec_ is not None and spec_.outcome == outcome_:
    positive_default_ = next((i for i, v in enumerate(values_) if str(v) == str(spec_.positive)), 0)
positive_ = right.selectbox("Value that counts as positive", values_, index=positive_default_ if values_ else None,
                            key="scan_positive", format_func=ui.option_text)
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
if not chosen_:
    st.info("Choose at least one column to scan.", icon=ui.ICONS["info"])
    st.stop()
left, middle, right = st.columns(3)
depth_ = left.slider("Columns combined at most", 1, max(1, min(3, len(chosen_))), min(3, len(chosen_)),
                     key="scan_depth") if len(chosen_) > 1 else 1
min_size_ = int(middle.number_input("Smallest group (rows)", 5, 1_000_000, 30, key="scan_min_size"))
level_ = float(right.select_slider("Error level", [0.01, 0.05, 0.1], value=0.05, key="scan_level",
                                   help="The chance that the scan reports any group when no group truly differs "
                                        "(family-wise error rate); it bounds the share of false findings too."))
try:
    spec = ScanSpec(outcome_, positive_, tuple(chosen_), depth=int(depth_), min_size=min_size_, level=level_,
                    measure=measure_, prediction=prediction_, prediction_cutoff=cutoff_, probability=probability_)
except LuskinError as err:
    st.error(ui.md(err), icon=ui.ICONS["error"])
    st.stop()
source_ = data_.engine if data_.engine is not None else frame_
key_ = options_key({"data": data_.fingerprint, "spec": spec.to_dict()})
try:
    with st.spinner("Scanning every group and calibrating on 999 shuffles of the outcome..."):
        checked_: ScanSpec = spec
        result_ = cached_run("scan", key_, lambda: scan(source_, checked_))
except LuskinError as err:
    st.error(ui.md(err), icon=ui.ICONS["error"])
    st.stop()
trail.note("scan", settings={"spec": spec.to_dict()}, produced=trail.result_text(result_))
keep_result("scan", result_)   # the Report page and the presentation add the scan's findings
if result_.findings:
    st.markdown(f"**{ui.md(result_.headline())}**")
    for i, finding in enumerate(result_.findings):
        st.warning(f"{i + 1}. {ui.md(finding.sentence)}", icon=ui.ICONS["beyond"])
else:
    st.success(ui.md(result_.headline()), icon=ui.ICONS["ok"])
st.plotly_chart(ui.fit_chart(scan_figure(result_)), key="scan_chart", theme=None)
if result_.findings:
    header_, rows_ = scan_table(result_)
    ui.grid(pd.DataFrame(rows_, columns=list(header_)), hide_index=True)
st.caption(ui.md(f"Controlled: the {result_.error_control}. Intervals are simultaneous: they hold together for "
                 "every group the scan could have picked."))
ui.download_button("Download the scan (JSON)", json.dumps(result_.to_dict(), indent=2, default=str).encode(),
                   "luskin_scan.json", "application/json", icon=ui.ICONS["download"])
