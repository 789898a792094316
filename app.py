"""Luskin dashboard: the entry point. Run with ``streamlit run app.py``.

It sets up the page, loads the Adult sample with the paper's settings on a first visit (so a
visitor sees a result without doing anything) and routes to the pages in ``app_pages/``.

The page files are NOT in a folder named ``pages/``: Streamlit treats such a folder as an old-style
multipage app, and a visitor whose first request is a deep link (e.g. /retrain) would then get
that page without this entry point (no navigation titles, no page setup), depending on which
session reached the server first.
"""

from __future__ import annotations

import streamlit as st

from luskin_app import dataset, ui

st.set_page_config(page_title="Luskin: fairness audit", page_icon="⚖️", layout="wide")

PAGES = [
    st.Page(ui.PAGE_FILES["data"], title="Data", icon="📄", default=True),
    st.Page(ui.PAGE_FILES["audit"], title="Audit", icon="📊", url_path="audit"),
    st.Page(ui.PAGE_FILES["retrain"], title="Retrain", icon="🔁", url_path="retrain"),
    st.Page(ui.PAGE_FILES["thresholds"], title="Thresholds", icon="🎚️", url_path="thresholds"),
    st.Page(ui.PAGE_FILES["equalized"], title="Equalized distribution", icon="📈", url_path="equalized"),
    st.Page(ui.PAGE_FILES["report"], title="Report", icon="📝", url_path="report"),
]

navigation = st.navigation(PAGES)
try:
    dataset.dataset()
except Exception as err:  # noqa: BLE001 - the bundled sample itself failed: say so rather than crash
    st.error(ui.md(f"The sample data could not be loaded: {err}"), icon="⚠️")
    st.stop()
# The summary is drawn after the page has run, into a slot reserved now, so that it shows what
# the page just changed (a new sample, another outcome) rather than the state before the click.
summary = st.sidebar.container()
try:
    navigation.run()
finally:
    ui.sidebar_summary(summary)
