"""Over time: the audit per month, quarter or year of a date column, the trend of each gap and the alerts.

The page gathers the period column, the period length and (if needed) the date format, asks the
core for the series (:func:`luskin_core.analyses.series.audit_series`, on the loaded rows or inside the
configured source's engine) and draws its chart, its sentences and its table.
"""

from __future__ import annotations

import streamlit as st

from luskin_app import choices as ch_
from luskin_app import dataset, ui
from luskin_app.cache import cached_run, options_key, remember
from luskin_core.analyses.series import EVERY, audit_series
from luskin_core.errors import LuskinError
from luskin_core.present.series_plots import series_figure
from luskin_core.spec.audit_spec import AuditSpec

st.title("Over time: do the gaps move?")
spec_, problem_ = ch_.current_spec()
if spec_ is None:
    ui.show_problem(str(problem_), "series")
    st.stop()
data_ = dataset.dataset()
roles = {spec_.outcome.lower(), *(c.lower() for c in spec_.group_by), *(c.lower() for c in spec_.strata)}
if spec_.protected is not None:
    roles.add(spec_.protected.column.lower())
columns_ = [str(c) for c in data_.frame.columns if str(c).lower() not in roles]
if not columns_:
    st.info("Every column plays a part in the audit already: there is no date column left to make periods.")
    st.stop()
dated = [c for c in columns_ if any(w in c.lower() for w in ("date", "day", "time", "month", "year"))]
left, middle, right = st.columns([2, 1, 1])
column_ = left.selectbox("Date column", columns_, index=columns_.index(dated[0]) if dated else 0,
                         key="series_column", format_func=ui.option_text,
                         help="Each row's date decides its period. Dates written as digits (01312014) or text "
                              "(2014-01-31, 31/01/2014) are recognised.")
every_ = middle.selectbox("Every", EVERY, key="series_every")
fmt_ = right.text_input("Date format (optional)", key="series_format", placeholder="e.g. %m%d%Y",
                        help="strptime codes, e.g. %m%d%Y for 01312014. Leave empty to recognise it.")
source_ = data_.engine if data_.engine is not None else data_.frame
key_ = options_key({"data": data_.fingerprint, "spec": spec_.to_json(), "column": column_, "every": every_,
                    "format": fmt_})
try:
    with st.spinner("Counting every period..."):
        checked_: AuditSpec = spec_  # narrowed above; a lambda does not see the narrowing
        result_ = cached_run("series", key_, lambda: audit_series(source_, checked_, column_, every_, fmt_ or None))
except LuskinError as err:
    st.error(ui.md(err), icon=ui.ICONS["error"])
    st.stop()
remember("series", spec_, result_)  # the Report page and the presentation add the series
st.markdown(f"**{ui.md(result_.headline())}**")
cells_ = list(dict.fromkeys(c.cell for r in result_.results for c in r.judged))
cell_ = None
if len(cells_) > 1:
    cell_ = st.selectbox("Cell", cells_, key="series_cell", format_func=lambda c: ui.option_text(str(c)))
st.plotly_chart(ui.fit_chart(series_figure(result_, cell_)), key="series_chart", theme=None)
st.subheader("Alerts")
if result_.alerts:
    for alert in result_.alerts:
        st.warning(ui.md(alert.sentence), icon=ui.ICONS["beyond"])
else:
    st.success("No gap changed beyond chance between periods (self-starting CUSUM, threshold 6).",
               icon=ui.ICONS["ok"])
st.subheader("Trend of each gap")
for sentence in result_.sentences()[1:]:
    if not sentence.startswith("Alert"):
        st.markdown(f"- {ui.md(sentence)}")
with st.expander("Every comparison, period by period"):
    table_ = result_.to_frame()
    ui.grid(table_, hide_index=True)
    st.download_button("Download the series (CSV)", table_.to_csv(index=False).encode(), "luskin_series.csv",
                       "text/csv", icon=ui.ICONS["download"])
