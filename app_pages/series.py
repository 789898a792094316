"""Over time: the audit per month, quarter or year of a date column, the trend of each gap and the alerts.

The page gathers the period column, the period length and (if needed) the date format, asks the
core for the series (its line of the analyses' table, ``run(data, spec, options)``, on the loaded rows or
inside the configured source's engine) and draws its chart, its sentences and its table. Only columns whose
values read as dates are offered (:func:`luskin_core.analyses.series.date_columns`); a file without one
is told so. Periods that are artefacts of the data (every group at 0% or 100%, few rows) are set
aside from the trends and alerts unless the user keeps them.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from luskin_app import choices as ch_
from luskin_app import dataset, ui
from luskin_app.analysis_page import run_entry
from luskin_app.cache import cached_run, options_key, remember
from luskin_core.analyses.series import EVERY, audit_columns, date_columns
from luskin_core.analyses.unknown_bounds import bound_sentences, series_bounds, unknown_words
from luskin_core.errors import LuskinError
from luskin_core.export import csv_bytes
from luskin_core.present.series_plots import series_figure
from luskin_core.present.series_report import series_table
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.spec.options import SeriesOptions

st.title("Over time: do the gaps move?")
spec_, problem_ = ch_.current_spec()
if spec_ is None:
    ui.show_problem(str(problem_), "series")
    st.stop()
data_ = dataset.dataset()
roles_ = audit_columns(spec_)
columns_ = [str(c) for c in data_.frame.columns if str(c).lower() not in roles_]
if not columns_:
    st.info("Every column plays a part in the audit already: there is no date column left to make periods.",
            icon=ui.ICONS["info"])
    st.stop()
frame_ = data_.frame
dated_: list[str] = cached_run("series_dates", options_key({"data": data_.fingerprint, "roles": sorted(roles_)}),
                               lambda: date_columns(frame_, exclude=tuple(roles_)))
if not dated_:
    st.info("This file has no column of dates, so it cannot be audited over time: no column's values read as "
            "dates (such as 2014-01-31, 31/01/2014, 01312014, 201401 or 2014).", icon=ui.ICONS["info"])
selectors_ = st.container()  # drawn above the checkbox that decides which columns it offers
any_column_ = st.checkbox("Offer every column (for dates written in a format of your own)", key="series_any_column",
                          help="Only columns whose values read as dates are offered. Tick this to choose another "
                               "column, and give its date format.")
if not dated_ and not any_column_:
    st.stop()
offered_ = columns_ if any_column_ else dated_
left, middle, right = selectors_.columns([2, 1, 1])
column_ = left.selectbox("Date column", offered_, key="series_column", format_func=ui.option_text,
                         help="Each row's date decides its period. Dates written as digits (01312014) or text "
                              "(2014-01-31, 31/01/2014) are recognised.")
every_ = middle.selectbox("Every", EVERY, key="series_every")
fmt_ = right.text_input("Date format (optional)", key="series_format", placeholder="e.g. %m%d%Y",
                        help="strptime codes, e.g. %m%d%Y for 01312014. Leave empty to recognise it.")
keep_ = st.checkbox("Keep the flagged periods in the trends and alerts", key="series_keep_flagged",
                    help="Periods where every group's share is 0% or 100%, or with fewer than a third of the rows of a "
                         "typical period, are set aside: their gap says more about the data (a follow-up that "
                         "ends, a month still being collected) than about the decisions.")
key_ = options_key({"data": data_.fingerprint, "spec": spec_.to_json(), "column": column_, "every": every_,
                    "format": fmt_, "keep": keep_})
try:
    with st.spinner("Counting every period..."):
        checked_: AuditSpec = spec_  # narrowed above; a lambda does not see the narrowing
        options_ = SeriesOptions(period=column_, every=every_, period_format=fmt_ or None, keep_flagged=keep_)
        result_ = cached_run("series", key_, lambda: run_entry("series", data_, checked_, options_))
except LuskinError as err:
    st.error(ui.md(err), icon=ui.ICONS["error"])
    st.stop()
remember("series", spec_, result_)  # the Report page and the presentation add the series
st.markdown(f"**{ui.md(result_.headline())}**")
for note in result_.flag_sentences():
    st.info(ui.md(note), icon=ui.ICONS["info"])
cells_ = list(dict.fromkeys(c.cell for r in result_.results for c in r.judged))
cell_ = None
if len(cells_) > 1:
    cell_ = st.selectbox("Cell", cells_, key="series_cell", format_func=lambda c: ui.option_text(str(c)))
ui.chart(series_figure(result_, cell_), key="series_chart")
st.header("Alerts")
if result_.alerts:
    for alert in result_.alerts:
        st.warning(ui.md(alert.sentence), icon=ui.ICONS["beyond"])
else:
    st.success("No gap changed beyond chance between periods (self-starting CUSUM, threshold 6).",
               icon=ui.ICONS["ok"])
st.header("Trend of each gap")
for trend in result_.trends:
    st.markdown(f"- {ui.md(trend.sentence)}")
said_ = {*result_.flag_sentences(), *(t.sentence for t in result_.trends), *(a.sentence for a in result_.alerts)}
for note in result_.sentences()[1:]:
    if note not in said_:  # rows without a date, periods without the reference group
        st.info(ui.md(note), icon=ui.ICONS["info"])
if st.checkbox("Best and worst case over the rows of unknown group, per period", key="series_bounds",
               help="Each gap and impact ratio if the rows whose group is unknown (or, for a protected condition, "
                    "whose protected value is missing) all belonged to the group or the reference, in the worst "
                    "and the best way; the reference is held fixed."):
    what_ = unknown_words(result_.overall.spec)
    if data_.engine is not None:   # a configured source: counted inside its engine, under its lock
        bounds_ = cached_run("series_bounds", key_, lambda: data_.engine.run(series_bounds, data_.engine.source, result_))
    else:
        bounds_ = cached_run("series_bounds", key_, lambda: series_bounds(data_.frame, result_))
    lines_ = [f"{p.period}: {s}" for p in bounds_ if any(b.unknown_n for b in p.bounds)
              for s in bound_sentences(p.bounds, what_)]
    if lines_:
        st.markdown(ui.bullet_list(lines_))
    else:
        st.info(ui.md(bound_sentences((), what_)[0]), icon=ui.ICONS["info"])
with st.expander("Every comparison, period by period"):
    header_, rows_ = series_table(result_)
    shown_ = pd.DataFrame(rows_, columns=list(header_))
    if not result_.flagged:
        shown_ = shown_.drop(columns="Note")
    ui.grid(shown_, hide_index=True)
    table_ = result_.to_frame()
    ui.download_button("Download the series (CSV)", csv_bytes(table_), "luskin_series.csv",
                       "text/csv", icon=ui.ICONS["download"])
