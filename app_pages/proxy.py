"""Proxy audit page: race and ethnicity estimated from surnames and places (BISG/BIFSG), then audited.

Thin: the columns come from dropdowns, luskin_core.analyses.proxy and luskin_core.analyses.proxy_audit do the work, and the
page draws the fallback counts, the weighted and threshold table, the bounds and the caveats in words.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from luskin_app import dataset, ui
from luskin_core.analyses.proxy import add_probabilities
from luskin_core.analyses.proxy_audit import DEFAULT_THRESHOLD, ProxyAudit, proxy_audit
from luskin_core.errors import LuskinError
from luskin_core.export import csv_bytes
from luskin_core.formatting import format_number, format_p, format_percent
from luskin_core.spec.validation import outcome_mask

NONE = "(none)"
METRICS = {"difference": "Difference in shares (tolerance)", "ratio": "Impact ratio (four-fifths rule, 0.8)"}
PLACES = {"zcta": "ZIP code / ZCTA", "tract": "Census tract (11-digit FIPS)"}


def _guess(columns: list[str], words: tuple[str, ...]) -> int:
    for i, column in enumerate(columns):
        if any(w in str(column).lower() for w in words):
            return i
    return 0


@st.cache_data(show_spinner=False, max_entries=8)
def _run(fingerprint: str, choices: tuple, _frame: pd.DataFrame) -> tuple[ProxyAudit, dict, bytes]:
    """Probabilities and the audit, cached on the data's fingerprint and the choices."""
    surname, first, level, place, outcome, positive, threshold, tolerance, metric = choices
    with_p, result = add_probabilities(_frame, surname=surname, geography=place, level=level,
                                       first_name=None if first == NONE else first)
    y = np.asarray(outcome_mask(_frame[outcome], positive), dtype=float).copy()
    y[_frame[outcome].isna().to_numpy()] = np.nan  # a missing outcome is left out, as on the command line
    audit = proxy_audit(with_p, y, decision=f"{outcome} is {positive}", threshold=threshold, tolerance=tolerance,
                        metric=metric, proxy=result.to_dict())
    return audit, {"sentences": result.sentences(), "counts": result.fallback_counts()}, csv_bytes(with_p)


st.title("Proxy audit")
st.markdown("When race was never recorded, estimate each row's probabilities of the six Census race and "
            "ethnicity categories from its surname and place (BISG), and first name if you have it (BIFSG), "
            "then audit the outcome across the estimated groups.")
data = dataset.dataset()
frame = data.frame
columns = [str(c) for c in frame.columns]
left, right = st.columns(2)
with left:
    surname = st.selectbox("Surname column", columns, index=_guess(columns, ("surname", "last")), key="proxy_surname",
                           format_func=ui.option_text)
    first = st.selectbox("First-name column (optional, BIFSG)", [NONE, *columns], key="proxy_first",
                         format_func=ui.option_text)
    level = st.radio("Place", list(PLACES), format_func=PLACES.get, key="proxy_level", horizontal=True)
    place = st.selectbox("Place column", columns, index=_guess(columns, ("zip", "zcta", "tract", "fips")),
                         key="proxy_place", format_func=ui.option_text)
with right:
    outcome = st.selectbox("Outcome column", columns, index=_guess(columns, ("approved", "outcome", "decision")),
                           key="proxy_outcome", format_func=ui.option_text)
    values = sorted(frame[outcome].dropna().astype(str).unique().tolist())[:200]
    positive = st.selectbox("Positive value", values, key="proxy_positive", format_func=ui.option_text)
    threshold = st.slider("Threshold method: assign the most likely group when its probability is at least",
                          0.5, 0.99, DEFAULT_THRESHOLD, 0.01, key="proxy_threshold")
    metric = st.radio("Judge a gap by", list(METRICS), format_func=METRICS.get, key="proxy_metric",
                      horizontal=True)
    tolerance = st.slider("Tolerance (percentage points)", 0, 20, 5, key="proxy_tolerance") / 100

if positive is None:
    st.info("Choose an outcome column with at least one value.", icon=ui.ICONS["error"])
    st.stop()
try:
    with st.spinner("Estimating race and ethnicity and auditing…"):
        audit, proxy, download = _run(data.fingerprint, (surname, first, level, place, outcome, positive,
                                                         float(threshold), float(tolerance), metric), frame)
except LuskinError as err:
    ui.show_error(err)
    st.stop()

st.subheader("How each row was estimated")
for sentence in proxy["sentences"]:
    st.markdown(ui.md(sentence))
ui.grid(pd.DataFrame({"how the row was estimated": list(proxy["counts"]),
                           "rows": list(proxy["counts"].values())}), hide_index=True, key="proxy_fallbacks")

st.subheader("Weighted beside threshold")
rows = []
for c in audit.comparisons:
    rows.append({"method": c.method, "estimated group": c.group + (" (reference)" if c.is_reference else ""),
                 "rows": f"{c.n:,.0f}", "share": format_percent(c.rate),
                 "95% CI": f"{format_percent(c.ci_low)} to {format_percent(c.ci_high)}",
                 "gap": "" if c.is_reference else format_number(c.difference),
                 "impact ratio": "" if c.is_reference or c.impact_ratio is None else
                 f"{c.impact_ratio:.2f} ({format_number(c.impact_ratio_ci_low)} to "
                 f"{format_number(c.impact_ratio_ci_high)})",
                 "bounds on the gap": "" if c.bound_low is None else
                 f"{format_number(c.bound_low)} to {format_number(c.bound_high)}",
                 "p adj.": "" if c.is_reference else format_p(c.p_adjusted, short=True),
                 "verdict": "" if c.is_reference else c.verdict})
ui.grid(pd.DataFrame(rows), hide_index=True, key="proxy_table")
for sentence in audit.sentences():
    st.markdown("- " + ui.md(sentence))

st.subheader("Bounds that hold whatever the proxy's errors")
for sentence in audit.bounds_sentences() or ["No gap could be bounded (a group has no estimated rows)."]:
    st.info(ui.md(sentence))

st.subheader("Caveats")
for caveat in audit.caveats:
    st.warning(ui.md(caveat), icon=ui.ICONS["error"])
st.download_button("Download the rows with their probabilities (CSV)", download, file_name="proxy.csv",
                   mime="text/csv", key="proxy_download")
