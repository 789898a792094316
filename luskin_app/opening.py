"""What a visitor sees first: the tab's icon, and a line in the main area while the first page is prepared.

A session's first run imports the pages' modules (on a server just started, behind its warm-up), loads the sample
and runs its first audit before the page draws its heading: seconds, under load, of a blank main area beside the
sidebar (issue 46: "the very first visit at 1024x768 showed a blank main area at 5 s"). ``app.py`` calls
:func:`show` before anything else, with Streamlit alone imported, and :func:`done` once the page has drawn (cleared
before the page, it left the main area blank beside the sidebar while the page prepared its heading: the browser saw
that under load in CI).
The placeholder is made on every run, so a page's elements sit in the same places on the first run as on the next.
"""

from __future__ import annotations

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from . import keys

# The browser tab's icon, inline: a Material name there makes Streamlit's page fetch the icon from
# fonts.gstatic.com, and the dashboard must not call outside 127.0.0.1 (agencies run it offline).
FAVICON = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" '
           'fill="#0072B2"/><path d="M16 6v19M9 25h14M6 11h20M9 11l-4 8h8zM23 11l-4 8h8z" stroke="#fff" '
           'stroke-width="2" fill="none" stroke-linejoin="round"/></svg>')
TEXT = "Opening Luskin: preparing the data and its first audit. On a first visit this takes a few seconds."


def show() -> DeltaGenerator:
    """The page's settings, then the placeholder; it holds :data:`TEXT` on a session's first run only."""
    st.set_page_config(page_title="Luskin: fairness audit", page_icon=FAVICON, layout="wide")
    place = st.empty()
    if not st.session_state.get(keys.OPENING_SEEN):
        place.info(TEXT, icon=":material/hourglass_top:")
    return place


def done(place: DeltaGenerator) -> None:
    """The line goes: the page has drawn below it (or the sign-in page draws next)."""
    place.empty()
    st.session_state[keys.OPENING_SEEN] = True
