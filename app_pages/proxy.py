"""Proxy audit page: race and ethnicity estimated from surnames and places (BISG/BIFSG), then audited with the
outcome-aware (BIRDiE) estimate.

Thin: the surname and place columns are guessed only when the values look like surnames and ZIP codes or tracts
(luskin_core.analyses.proxy.guess_columns), the outcome is the one chosen on the Data page, and the analyses'
table's line does the work (``run_entry("proxy", data, spec, options)``: the specification declares its groups as
race estimated from surname and place, with the outcome and the judgement chosen here; the options say how race is
estimated), on the rows in memory or inside a configured source's engine. The page draws the fallback counts, the outcome-aware table, the
weighted and threshold estimates kept for comparison, the bounds and the caveats in words (caveats are notes,
not error boxes).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from luskin_app import choices as ch_
from luskin_app import dataset, trail, ui
from luskin_app.analysis_page import run_entry
from luskin_app.cache import keep_result, shared
from luskin_app.option_inputs import OptionInputs
from luskin_core import formatting as cells
from luskin_core.analyses.proxy import add_probabilities, guess_columns, probabilities_in_words
from luskin_core.analyses.proxy_audit import BOUNDS_NOTE, DEFAULT_THRESHOLD, ProxyAudit
from luskin_core.analyses.proxy_run import proxy_spec
from luskin_core.errors import LuskinError
from luskin_core.export import csv_bytes
from luskin_core.spec.options import ProxyOptions

NONE = "(none)"
METRICS = {"difference": "Difference in shares (tolerance)", "ratio": "Impact ratio (four-fifths rule, 0.8)"}
PLACES = {"zcta": "ZIP code / ZCTA", "tract": "Census tract (11-digit FIPS)"}
METHOD_NAMES = {"birdie": "outcome-aware (BIRDiE)", "weighted": "weighted by probabilities",
                "threshold": "most likely group (threshold)"}


@st.cache_data(show_spinner=False, max_entries=8)
def _guess(fingerprint: str, _frame: pd.DataFrame) -> dict[str, str | None]:
    """The columns whose values look like surnames, first names and places (cached on the data's fingerprint)."""
    return guess_columns(_frame)


def _spec_and_options(choices: tuple) -> tuple[Any, ProxyOptions]:
    """The proxy audit's specification (race estimated from surname and place; the outcome and the judgement chosen
    here) and its options (how race is estimated), from the page's choices."""
    surname, first, level, place, outcome, positive, threshold, tolerance, metric, adverse, model = choices
    spec = proxy_spec(outcome, positive, outcome_is="adverse" if adverse else "favourable", tolerance=tolerance,
                      metric=metric)
    options = ProxyOptions(surname=surname, place=place, level=level, first_name=None if first == NONE else first,
                           threshold=threshold, model=model)
    return spec, options


@shared(max_entries=8)   # per owner: another analyst with the same file and choices computes it again
def _run(fingerprint: str, choices: tuple, _data: Any) -> ProxyAudit:
    """The audit through the analyses' table's line, cached on the data's fingerprint and the choices."""
    spec, options = _spec_and_options(choices)
    audit: ProxyAudit = run_entry("proxy", _data, spec, options)
    return audit


@shared(max_entries=8)
def _download(fingerprint: str, choices: tuple, _frame: pd.DataFrame) -> bytes:
    """The rows with their probabilities, headed in words (the CSV to download), cached as :func:`_run` is."""
    _, options = _spec_and_options(choices)
    with_p, _ = add_probabilities(_frame, surname=str(options.surname), geography=str(options.place),
                                  level=options.level, first_name=options.first_name)
    return csv_bytes(probabilities_in_words(with_p))


def _index(options: list[str], value: str | None) -> int:
    return options.index(value) if value in options else 0


st.title("Proxy audit")
st.markdown("When race was never recorded, estimate each row's probabilities of the six Census race and "
            "ethnicity categories from its surname and place (BISG), and first name if you have it (BIFSG), "
            "then audit the outcome across the estimated groups.")
data = dataset.dataset()
frame = data.frame
ch = ch_.choices()
columns = [str(c) for c in frame.columns]
guess = _guess(data.fingerprint, frame)
outcome, positive = ch.get("outcome"), ch.get("positive")
adverse = ch.get("outcome_is") == "adverse"

if guess["surname"] is None:
    st.info("No column of this file looks like surnames (few of its values are in the Census 2010 surname list), "
            "so none is chosen. A proxy audit needs each person's surname; choose its column below if the file "
            "has one.", icon=ui.ICONS["info"])
if guess["place"] is None:
    st.info("No column of this file looks like ZIP codes or census tracts, so none is chosen. Choose the place "
            "column below if the file has one.", icon=ui.ICONS["info"])
left, right = st.columns(2)
with left:
    surname = st.selectbox("Surname column", [NONE, *columns], index=_index([NONE, *columns], guess["surname"]),
                           key="proxy_surname", format_func=ui.option_text)
    first = st.selectbox("First-name column (optional, BIFSG)", [NONE, *columns],
                         index=_index([NONE, *columns], guess["first_name"]), key="proxy_first",
                         format_func=ui.option_text)
    level = st.radio("Place", list(PLACES), index=_index(list(PLACES), guess["level"]), format_func=PLACES.get,
                     key="proxy_level", horizontal=True)
    place = st.selectbox("Place column", [NONE, *columns], index=_index([NONE, *columns], guess["place"]),
                         key="proxy_place", format_func=ui.option_text)
with right:
    if outcome in frame.columns and positive is not None:
        direction = "an adverse outcome" if adverse else "a favourable outcome"
        st.markdown(f"Outcome (chosen on the Data page): **{ui.md(outcome)}** is **{ui.md(positive)}**, "
                    f"{direction}.")
    st.page_link(ui.PAGE_FILES["data"], label="Change the outcome on the Data page", icon=ui.ICONS["data"])
    ch_.seed("proxy_threshold", DEFAULT_THRESHOLD)   # kept settings are in the session state: seeded, no value given
    ch_.seed("proxy_tolerance", 5)
    threshold = st.slider("Threshold method: assign the most likely group when its probability is at least",
                          0.5, 0.99, step=0.01, key="proxy_threshold")
    metric = st.radio("Judge a gap by", list(METRICS), format_func=METRICS.get, key="proxy_metric",
                      horizontal=True)
    tolerance = st.slider("Tolerance (percentage points)", 0, 20, key="proxy_tolerance") / 100
    model = OptionInputs("proxy", {}).show("model")  # from its declaration (luskin_core/spec/options.py)

if outcome not in frame.columns or positive is None:
    st.info("Choose the outcome to audit and its positive value on the Data page first.", icon=ui.ICONS["info"])
    st.stop()
if surname == NONE or place == NONE:
    st.info("Choose the surname and place columns above to estimate race and ethnicity.", icon=ui.ICONS["info"])
    st.stop()
if outcome in (surname, place):
    st.info(ui.md(f"The outcome '{outcome}' cannot also be the surname or the place: choose other columns."),
            icon=ui.ICONS["info"])
    st.stop()
chosen = (surname, first, level, place, outcome, positive, float(threshold), float(tolerance), metric, adverse, model)
try:
    with st.spinner("Estimating race and ethnicity and auditing…"):
        audit = _run(data.fingerprint, chosen, data)
        # the rows themselves (a configured source's frame holds its distinct values only: nothing to download)
        download = None if data.engine is not None else _download(data.fingerprint, chosen, frame)
except LuskinError as err:
    ui.show_error(err)
    st.stop()
trail.note("proxy audit", settings={"surname": surname, "first_name": None if first == NONE else first, "level": level,
                                    "place": place, "outcome": outcome, "positive": positive,
                                    "outcome_is": "adverse" if adverse else "favourable",
                                    "threshold": float(threshold), "tolerance": float(tolerance), "metric": metric,
                                    "model": model},
           produced=trail.result_text(audit))
keep_result("proxy", audit)   # the Report page and the presentation add the proxy audit

st.header("How each row was estimated")
for sentence in audit.estimation_sentences():
    st.markdown(ui.md(sentence))
counts = audit.proxy.get("methods", {})
ui.grid(pd.DataFrame({"how the row was estimated": list(counts), "rows": list(counts.values())}), hide_index=True,
        key="proxy_fallbacks")


def _rows(method: str) -> pd.DataFrame:
    rows = []
    for c in audit.comparisons:
        if c.method != method:
            continue
        rows.append({"estimated group": c.group + (" (reference)" if c.is_reference else ""),
                     "cell": c.cell or "all rows", "rows": cells.COUNT.text(c.n),
                     cells.SHARE.heading("share", ci="95% CI"): cells.SHARE.ci(c.rate, c.ci_low, c.ci_high),
                     cells.GAP.heading("gap"): "" if c.is_reference else cells.GAP.text(c.difference),
                     "impact ratio [95% CI]": "" if c.is_reference or c.impact_ratio is None else
                     cells.RATIO.ci(c.impact_ratio, c.impact_ratio_ci_low, c.impact_ratio_ci_high),
                     "p adj.": "" if c.is_reference else cells.P_VALUE.text(c.p_adjusted),
                     "verdict": "" if c.is_reference else str(c.verdict)})
    return pd.DataFrame(rows)


headline = "birdie" if any(c.method == "birdie" for c in audit.comparisons) else "weighted"
st.header("Each estimated group against the reference (outcome-aware estimate)")
ui.grid(_rows(headline), hide_index=True, key="proxy_table")
for sentence in audit.sentences():
    st.markdown("- " + ui.md(sentence))

with st.expander("The weighted and threshold estimates, kept for comparison"):
    for method in ("weighted", "threshold"):
        if method != headline:
            st.markdown(f"**{METHOD_NAMES[method].capitalize()}**")
            ui.grid(_rows(method), hide_index=True, key=f"proxy_table_{method}")

st.header("Bounds that hold whatever the proxy's errors")
st.caption(BOUNDS_NOTE)
for sentence in audit.bounds_sentences() or ["No gap could be bounded (a group has no estimated rows)."]:
    st.markdown("- " + ui.md(sentence))

st.header("What the estimate assumes, and caveats")
for caveat in audit.caveats:
    st.caption(ui.md(caveat))
if download is not None:
    ui.download_button("Download the rows with their probabilities (CSV)", download, file_name="proxy.csv",
                       mime="text/csv", key="proxy_download")
