"""Luskin dashboard: the entry point. Run with ``streamlit run app.py``.

It sets up the page, loads the Adult sample with the paper's settings on a first visit (so a
visitor sees a result without doing anything) and routes to the pages in ``app_pages/``.

The page files are NOT in a folder named ``pages/``: Streamlit treats such a folder as an old-style
multipage app, and a visitor whose first request is a deep link (e.g. /retrain) would then get
that page without this entry point (no navigation titles, no page setup), depending on which
session reached the server first.

A presenter's bookmark may also name the page in the query string (``/?page=present&slide=3``):
the visitor is sent to that page with the rest of the query kept.
"""

from __future__ import annotations

import streamlit as st

from luskin_app import opening

# Before the pages' modules are imported (on a server just started they wait for its warm-up): a line in the main
# area says what is being prepared, instead of a blank beside the sidebar (luskin_app/opening.py).
opening_ = opening.show()

from luskin_app import analysis_page, auth, housekeeping, pages, session, signin, trail, ui

housekeeping.start()  # closed sessions let go of their uploads (luskin_app/housekeeping.py)
# With [auth] in the secrets, nothing below runs before sign-in: the sign-in page, then a stop.
if auth.enabled():
    opening.done(opening_)   # the sign-in page stands alone
user = signin.gate()

admin = auth.enabled() and user.admin  # the record and the sources' settings: administrators only
PAGES = {p.name: st.Page(p.file or analysis_page.page(p.analysis or p.name), title=p.title, icon=p.icon,
                         default=p.default, url_path=p.url_path)
         for p in pages.PAGES if admin or not p.admin_only}  # one line per page in luskin_app/pages.py, or per analysis

# expanded: every page in the sidebar without a click (by default Streamlit folds a list of more than 12 pages
# behind "View N more"; with Scan and Administration there are 13)
navigation = st.navigation(list(PAGES.values()), expanded=True)
ui.page_style()
wanted = st.query_params.get("page")
if wanted in PAGES and wanted != "data" and navigation.url_path != PAGES[wanted].url_path:
    st.switch_page(PAGES[wanted], query_params={k: v for k, v in st.query_params.to_dict().items() if k != "page"})
try:
    session.start()
except Exception as err:  # noqa: BLE001 - the bundled sample itself failed: say so rather than crash
    st.error(ui.md(f"The sample data could not be loaded: {err}"), icon=ui.ICONS["error"])
    st.stop()
# Before the page: a page may end the run with st.stop() (a missing choice), and then nothing after it
# runs. The key goes in the address and the settings are kept now (luskin_app/session.py); the sidebar's
# summary is drawn now and redrawn after the page, so that it shows what the page just changed.
session.keep_address(before_page=True)
summary = st.sidebar.empty()
ui.sidebar_summary(summary.container())
signin.sidebar(user, session.forget_everything)
session.render_lost()
trail.set_page(navigation.title)
try:
    navigation.run()
finally:  # after the page, even one that ends its run with st.stop(): the line is never gone before the page draws
    opening.done(opening_)
ui.sidebar_summary(summary.container())
session.keep_address(before_page=False)
