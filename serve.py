"""Luskin served to a team: the dashboard (``app.py``) behind Luskin's guard. Run ``streamlit run serve.py``.

Streamlit finds the ``app`` below (its ``st.App``) and serves ``app.py`` with the guard in front of its routes
(:mod:`luskin_app.guard`): a sign-in counts only when this server made it and it still holds (ended at sign-out,
after ``LUSKIN_SIGNIN_HOURS``, or when the provider stops confirming it), and a download opens only for the
signed-in user it was made for. With ``[auth]`` in the secrets, ``app.py`` refuses every sign-in unless it is
served this way (``deploy/start.sh`` and ``luskin app`` do). At the start, before the first visitor, expired
uploads are deleted. Every ``streamlit run`` flag works as with ``app.py``.
"""

import streamlit as st
from starlette.middleware import Middleware

from luskin_app import guard

app = st.App("app.py", middleware=[Middleware(guard.Guard)], lifespan=guard.lifespan)
