"""The sign-in cookies the guard sets (issue 47: Streamlit's session was its cookie alone, 30 days, not Secure).

The browser tests (tests/browser/test_auth_browser.py) run on http://127.0.0.1, where a Secure cookie would not be
sent back: they check HttpOnly, SameSite and the maximum age, never Secure. Here the guard's own cookie and
Streamlit's, as the guard rewrites them at the provider's callback, are read for a dashboard served on https (Secure)
and on http (not), with the server's maximum age in place of Streamlit's 30 days.
"""

from __future__ import annotations

from http.cookies import SimpleCookie

import pytest

from luskin_app import guard, signins

THIRTY_DAYS = 30 * 24 * 3600


def _morsel(header: bytes) -> tuple[str, dict[str, str]]:
    """A Set-Cookie header's name and its attributes (lower-case keys; flags as 'True' or '')."""
    jar: SimpleCookie = SimpleCookie()
    jar.load(header.decode("latin-1"))
    ((name, morsel),) = jar.items()
    return name, {key: str(morsel[key]) for key in ("max-age", "secure", "httponly", "samesite", "path")}


@pytest.mark.parametrize("address,secure", [("https://luskin.agency.gov/oauth2callback", True),
                                            ("http://127.0.0.1:8501/oauth2callback", False)])
def test_sign_in_cookies_are_secure_on_https_and_last_the_servers_maximum_age(monkeypatch: pytest.MonkeyPatch,
                                                                             address: str, secure: bool) -> None:
    monkeypatch.setattr(guard, "_auth_section", lambda: {"redirect_uri": address, "cookie_secret": "x"})
    monkeypatch.setattr(guard, "_base_path", lambda: "")
    signins.configure(signins.Limits(max_age=8 * 3600, roles_every=900))
    try:
        name, ours = _morsel(guard._set_cookie(signins.COOKIE, "token", guard._cookie_age()))
        streamlit = [(b"set-cookie", f"{guard.USER_COOKIE}=signed; Max-Age={THIRTY_DAYS}; Path=/; HttpOnly".encode()),
                     (b"content-type", b"text/html")]
        rewritten = guard._bounded(streamlit)
    finally:
        signins.configure(None)
    assert name == signins.COOKIE
    assert ours["httponly"] and ours["samesite"] == "Lax" and ours["path"] == "/"
    assert ours["max-age"] == str(9 * 3600)   # the maximum age, and an hour to say why it ended
    assert bool(ours["secure"]) is secure
    assert rewritten[1] == (b"content-type", b"text/html")   # other headers pass as they were
    user, theirs = _morsel(rewritten[0][1])
    assert user == guard.USER_COOKIE and theirs["max-age"] == str(9 * 3600) and theirs["httponly"]
    assert bool(theirs["secure"]) is secure


def test_a_deleted_streamlit_cookie_stays_deleted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sign-out's "Max-Age=0" is not given the maximum age back (the cookie would come back to life)."""
    monkeypatch.setattr(guard, "_auth_section", lambda: {"redirect_uri": "https://luskin.agency.gov/oauth2callback"})
    header = (b"set-cookie", f"{guard.USER_COOKIE}=; Max-Age=0; Path=/".encode())
    assert guard._bounded([header]) == [header]
