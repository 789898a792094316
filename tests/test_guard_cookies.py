"""The sign-in cookies the guard sets (issue 47: Streamlit's session was its cookie alone, 30 days, not Secure).

The browser tests (tests/browser/test_auth_browser.py) run on http://127.0.0.1, where a Secure cookie would not be
sent back: they check HttpOnly, SameSite and the maximum age, never Secure. Here the guard's own cookie and
Streamlit's, as the guard rewrites them at the provider's callback, are read for a dashboard served on https (Secure)
and on http (not), with the server's maximum age in place of Streamlit's 30 days.
"""

from __future__ import annotations

import threading
from http.cookies import SimpleCookie
from typing import Any

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


def test_a_download_answers_only_the_signed_in_user_it_was_made_for(monkeypatch: pytest.MonkeyPatch) -> None:
    """The guard's answer at ``/media/<id>`` (the browser test tries it with a real provider; here each case at
    once): no sign-in, another analyst's sign-in, an ended sign-in: "not found" and a refused line; the user it was
    made for, and any signed-in user for media that is not a download (a chart's image): served."""
    from luskin_app import downloads

    files = {"report": b"<html>alice's report</html>", "chart": b"\x89PNG chart"}
    monkeypatch.setattr(guard, "_media_content", lambda file_id: files.get(file_id))
    written: list[tuple[str, dict]] = []
    monkeypatch.setattr(guard, "_write", lambda event, claims, **fields: written.append((event, fields)))
    monkeypatch.setattr(guard, "_decode", lambda cookies, name: None)   # no Streamlit cookie in these requests
    monkeypatch.setattr(guard, "_INSTALLED", threading.Event())   # a Guard made here does not say "installed" later
    signins.configure(signins.Limits(max_age=3600, roles_every=900))
    downloads.clear()
    try:
        alice, _ = signins.make({"iss": "https://idp", "sub": "alice", "email": "alice@agency.gov"})
        bob, _ = signins.make({"iss": "https://idp", "sub": "bob", "email": "bob@agency.gov"})
        gone, _ = signins.make({"iss": "https://idp", "sub": "alice", "email": "alice@agency.gov"})
        signins.end(gone, "signed out")
        downloads.made_for(files["report"], "https://idp|alice")

        async def app(scope: Any, receive: Any, send: Any) -> None:   # Streamlit behind the guard: never reached
            raise AssertionError("the guard's check reached the app")

        def asked(token: str | None, file_id: str) -> bool:
            cookie = f"{signins.COOKIE}={token}".encode() if token else b""
            return guard.Guard(app)._may_serve({"headers": [(b"cookie", cookie)]}, file_id)

        assert asked(alice, "report") and asked(alice, "chart") and asked(bob, "chart")
        assert not asked(bob, "report") and not asked(None, "report") and not asked(gone, "report")
    finally:
        signins.configure(None)
        signins.clear()
        downloads.clear()
    whys = [fields["settings"]["why"] for event, fields in written if event == "refused"]
    assert whys == ["made for another user", "no sign-in", "no sign-in"], written
