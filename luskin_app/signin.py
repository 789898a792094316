"""The sign-in page, the refusal of a user without a role, and the signed-in user's corner of the sidebar.

Who the user is and which roles the claims give is :mod:`luskin_app.auth`; this module draws it. Every
word about a problem with the operator's settings is plain, and the detail goes to the server's log.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import streamlit as st

from luskin_core.formatting import count_of

from . import auth, keys
from .ui import md

log = logging.getLogger("luskin.app.auth")


# --------------------------------------------------------------------------------------------
def gate() -> auth.User:
    """Before anything else in a run: without sign-in configured, the local user; else the signed-in user,
    or the sign-in page (and the run stops there: no page, sample or upload shows before sign-in)."""
    if not auth.enabled():
        return auth.LOCAL
    auth.watch_sign_ins()
    if not auth.signed_in() or not auth.confirm_roles():
        _sign_in_page(auth.ended_why())
        st.stop()
    user = auth.current()
    if user.id == auth.SIGNED_OUT:   # its maximum age reached between the checks above and now: ended, not refused
        _sign_in_page(auth.ended_why())
        st.stop()
    if not user.analyst:
        _refusal(user)
        st.stop()
    return user


ENDED = {
    "signed out": "You signed out (in this tab or another one). Sign in again to go on.",
    "expired": "Your sign-in has ended: this server keeps a sign-in for {hours} at most. Sign in again to go on.",
    "not confirmed": "Your sign-in has ended: the sign-in service no longer confirms it (your access may have "
                     "changed). Sign in again to go on.",
    "unknown": "Please sign in again: this server does not know your sign-in (it may have restarted since).",
}


def _hours() -> str:
    from . import signins

    seconds = signins.limits().max_age
    if seconds >= 3600 and float(seconds / 3600).is_integer():
        return f"{seconds / 3600:,.0f} hours"
    return f"{seconds / 60:,.0f} minutes" if seconds >= 120 else f"{seconds:,.0f} seconds"


def _sign_in_page(ended: str = "") -> None:
    st.title("Luskin: fairness audit")
    problem = auth.setup_problem()
    if problem:
        st.error("Sign-in is not available right now: this server's sign-in settings need attention. Please tell "
                 "your administrator (the server's log says what to fix).", icon=":material/error:")
        return
    st.markdown("Sign in with your organisation's account to use Luskin. Your uploads and settings are kept for "
                "you alone.")
    if ended in ENDED:
        st.info(ENDED[ended].format(hours=_hours()), icon=":material/logout:")
    if auth.recent_refusal():
        st.warning("A sign-in did not complete a moment ago: the sign-in service did not confirm it to this server. "
                   "Try again; if it happens again, please tell your administrator.", icon=":material/error:")
    if st.button("Sign in", type="primary", icon=":material/login:", key="auth_sign_in"):
        section = auth.secrets_section("auth") or {}
        name, _ = auth.provider(section)
        try:
            st.login(name) if name else st.login()
        except Exception as err:  # noqa: BLE001 - a settings problem: plain words here, the detail in the log
            log.error("st.login failed: %s", err)
            st.error("Sign-in is not available right now: this server's sign-in settings need attention. Please "
                     "tell your administrator.", icon=":material/error:")


def _refusal(user: auth.User) -> None:
    st.title("Luskin: fairness audit")
    if user.claim_missing:
        claim = auth.roles().claim
        log.error("the provider sent no '%s' claim for a user: Luskin cannot tell roles; add the claim to the "
                  "scopes or the token (client_kwargs scope) or set [luskin.roles] analyst_domains", claim)
        st.error(f"You are signed in as {md(user.shown)}, but your sign-in did not say which groups you belong to, "
                 "so Luskin cannot tell whether you may use it. Please tell your administrator: the sign-in "
                 f"service must send the '{md(claim)}' claim to Luskin.", icon=":material/error:")
    else:
        st.error(f"You are signed in as {md(user.shown)}, but this account is not among Luskin's analysts or "
                 "administrators. Ask your administrator for access.", icon=":material/block:")
    if st.button("Sign out", key="auth_refused_sign_out", icon=":material/logout:"):
        auth.end_sign_in("signed out")
        st.logout()


def sidebar(user: auth.User, forget_all: Callable[[], int]) -> None:
    """The signed-in name, the sign-out (optionally deleting my uploads) and "Forget everything of mine"."""
    if not auth.enabled():
        return
    with st.sidebar:
        role = "administrator" if user.admin else "analyst"
        st.markdown(f"**Signed in:** {md(user.shown, 80)} ({role})")
        st.checkbox("Delete my uploads when I sign out", key=keys.FORGET_ON_SIGN_OUT)
        left, right = st.columns(2)
        if left.button("Sign out", key="auth_sign_out", icon=":material/logout:"):
            if st.session_state.get(keys.FORGET_ON_SIGN_OUT):
                forget_all()
            auth.end_sign_in("signed out")   # the server's sign-in ends now: a copied cookie opens nothing after
            st.logout()
        if right.button("Forget everything of mine", key="auth_forget_all", icon=":material/delete_forever:",
                        help="Deletes every upload you left on this server, with the settings kept with them."):
            st.toast(f"Deleted {count_of(forget_all(), 'upload')} of yours from the server.")
