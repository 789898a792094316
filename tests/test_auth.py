"""Roles from the provider's claims, sources by group, the record of who ran what, and the sign-in page's
plain words when the operator's settings are wrong (issue 30). The sign-in itself, against a real
provider in Chromium, is tests/browser/test_auth_browser.py."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from luskin_app import auth, record
from luskin_app.sources import read_settings

ROLES = auth.roles_from({"claim": "groups", "admin_groups": ["luskin-admins"], "analyst_groups": "luskin-analysts",
                         "analyst_domains": ["@Agency.gov"]})


def claims(**more: object) -> dict[str, object]:
    return {"iss": "https://idp.example", "sub": "u1", "email": "u1@elsewhere.org", "name": "U One", **more}


def test_roles_come_from_the_groups_claim_or_the_e_mail_domain() -> None:
    admin = auth.user_from_claims(claims(groups=["luskin-admins", "x"]), ROLES)
    assert admin.admin and admin.analyst and admin.id == "https://idp.example|u1" and admin.shown == "U One"
    analyst = auth.user_from_claims(claims(groups=["luskin-analysts"]), ROLES)
    assert analyst.analyst and not analyst.admin
    by_domain = auth.user_from_claims(claims(email="ann@agency.gov", groups=[]), ROLES)
    assert by_domain.analyst and not by_domain.admin
    outsider = auth.user_from_claims(claims(groups=["staff"]), ROLES)
    assert not outsider.analyst and not outsider.admin and not outsider.claim_missing
    missing = auth.user_from_claims(claims(), ROLES)
    assert not missing.analyst and missing.claim_missing
    one_group = auth.user_from_claims(claims(groups="luskin-admins"), ROLES)   # a claim with a single value
    assert one_group.admin
    assert auth.user_from_claims(claims(), auth.roles_from(None)).analyst   # no rule: every signed-in user


def test_the_same_subject_at_two_providers_is_two_users() -> None:
    one = auth.user_from_claims(claims(groups=["luskin-admins"]), ROLES)
    other = auth.user_from_claims(claims(iss="https://other.example", groups=["luskin-admins"]), ROLES)
    assert one.id != other.id


def test_a_source_lists_who_may_use_it(tmp_path: Path) -> None:
    (tmp_path / "s.toml").write_text('[[source]]\nname = "A"\nlocation = "a.csv"\ngroups = ["luskin-admins"]\n'
                                     '[[source]]\nname = "B"\nlocation = "b.csv"\n'
                                     '[[source]]\nname = "C"\nlocation = "c.csv"\ngroups = [1]\n')
    found = read_settings(tmp_path / "s.toml")
    assert [(s.name, s.groups) for s in found.sources] == [("A", ("luskin-admins",)), ("B", ())]
    assert "'groups' must be a list" in found.problems[0]


def test_the_record_appends_one_numbered_json_line_per_entry_and_rotates(tmp_path: Path) -> None:
    record.configure(record.Where(tmp_path / "r" / "record.jsonl", max_bytes=2_000, key_file=tmp_path / "key",
                                  state=tmp_path / "r"))
    (tmp_path / "key").write_bytes(bytes(range(32)))
    try:
        for number in range(100):
            record.append({"user": {"id": "x"}, "action": "audit", "settings": {"k": number}})
        current = tmp_path / "r" / "record.jsonl"
        lines = [json.loads(line) for line in current.read_text().splitlines()]
        assert lines and lines[-1]["n"] == 100 and lines[-1]["settings"]["k"] == 99 and all("time" in e for e in lines)
        assert len(list((tmp_path / "r").glob("record.jsonl.*[0-9]"))) >= 2   # rotated, every file kept
        assert current.stat().st_mode & 0o077 == 0
        assert record.read(5)[-1]["n"] == 100
    finally:
        record.configure(None)


def test_the_record_names_a_file_by_its_bytes_as_saved_and_their_hash() -> None:
    """A downloaded text file is its UTF-8 bytes: the size is theirs (not the count of characters), and the hash is
    what ``sha256sum`` of the saved file begins with."""
    import hashlib

    text = "Région,Zoë\n"
    measured = record.measure(text)
    assert measured == {"bytes": 13, "hash": hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]}
    assert record.measure(text.encode("utf-8")) == measured


def test_the_record_settings_come_from_the_environment(tmp_path: Path) -> None:
    where = record.where_from({"LUSKIN_STATE_DIR": str(tmp_path), "LUSKIN_RECORD_MAX_MB": "2",
                               "LUSKIN_RECORD_FILES": "3"})
    assert where.path == tmp_path / "record" / "record.jsonl" and where.max_bytes == 2_000_000 and where.files == 3


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


AUTH = {"redirect_uri": "http://127.0.0.1:8501/oauth2callback", "cookie_secret": "c" * 32, "client_id": "luskin",
        "client_secret": "s"}


def _app(secrets: dict[str, object]) -> AppTest:
    at = AppTest.from_file(str(Path(__file__).resolve().parent.parent / "app.py"), default_timeout=60)
    at.secrets["auth"] = secrets
    return at.run()


def test_signed_out_visitors_see_the_sign_in_page_and_nothing_else() -> None:
    at = _app({**AUTH, "server_metadata_url": f"http://127.0.0.1:{_closed_port()}/.well-known/openid-configuration"})
    assert not at.exception
    text = " ".join(e.value for e in at.markdown) + " ".join(e.value for e in at.error)
    assert "Adult" not in text and "rows ×" not in text
    assert "dataset" not in at.session_state   # not even the sample was loaded


def test_an_unreachable_provider_is_said_plainly(caplog: pytest.LogCaptureFixture) -> None:
    port = _closed_port()
    at = _app({**AUTH, "server_metadata_url": f"http://127.0.0.1:{port}/.well-known/openid-configuration"})
    assert not at.exception
    said = ("Sign-in is not available right now: this server's sign-in settings need attention. Please tell your "
            "administrator (the server's log says what to fix).")
    assert [e.value for e in at.error] == [said]
    assert f"127.0.0.1:{port} does not answer" in caplog.text
    assert not at.button   # no sign-in button that would end in an error page


def test_missing_sign_in_settings_are_named_for_the_operator(caplog: pytest.LogCaptureFixture) -> None:
    at = _app({"redirect_uri": "http://127.0.0.1:8501/oauth2callback", "client_id": "luskin"})
    assert not at.exception and at.error
    assert "lacks cookie_secret, client_secret, server_metadata_url" in caplog.text
    assert "Traceback" not in caplog.text


def _xsrf_v2(token: bytes, mask: bytes) -> str:
    """Streamlit's version-2 XSRF cookie: the token masked with a fresh mask each time the page is served."""
    masked = bytes(b ^ mask[i % len(mask)] for i, b in enumerate(token))
    return f"2|{mask.hex()}|{masked.hex()}|1764270000"


def test_a_refused_sign_in_is_told_to_that_browser_once_and_to_no_other() -> None:
    token, other = b"t" * 32, b"u" * 32
    first, second = _xsrf_v2(token, b"\x01\x02\x03\x04"), _xsrf_v2(token, b"\xaa\xbb\xcc\xdd")
    assert first != second and auth.browser_key(first) == auth.browser_key(second)   # one browser, two masks
    assert auth.browser_key(_xsrf_v2(other, b"\x01\x02\x03\x04")) != auth.browser_key(first)
    assert auth.browser_key(None) is None and auth.browser_key("2|zz|yy|1") is None
    auth.note_refusal(auth.browser_key(first))
    assert not auth.take_refusal(auth.browser_key(_xsrf_v2(other, b"\x05\x06\x07\x08")))   # another browser
    assert auth.take_refusal(auth.browser_key(second))        # the browser that tried, whatever its mask
    assert not auth.take_refusal(auth.browser_key(second))    # said once


def test_streamlits_failed_callback_is_heard_for_the_browser_that_made_it(caplog: pytest.LogCaptureFixture) -> None:
    """The filter on Streamlit's auth-route logger finds the callback's request on the stack (as when Streamlit's
    route logs) and remembers that browser only; the operator gets a plain line."""
    import logging

    class Request:   # what the filter reads of Starlette's request: its cookies
        def __init__(self, cookie: str) -> None:
            self.cookies = {auth.XSRF_COOKIE: cookie}

    hers, other = _xsrf_v2(b"h" * 32, b"\x01\x01\x01\x01"), _xsrf_v2(b"o" * 32, b"\x02\x02\x02\x02")
    routes = logging.getLogger("streamlit.web.server.starlette.starlette_auth_routes")
    auth.watch_sign_ins()
    auth.watch_sign_ins()   # once per process, however often the app starts a run
    assert sum(isinstance(f, auth._RefusedSignIns) for f in routes.filters) == 1

    def callback(request: Request) -> None:   # stands for Streamlit's _auth_callback, whose local is `request`
        routes.warning("OAuth token exchange failed for provider '%s'. Clearing auth cookies.", "default")

    with caplog.at_level(logging.ERROR, logger="luskin.app.auth"):
        callback(Request(hers))
    assert "check client_id and client_secret" in caplog.text
    assert not auth.take_refusal(auth.browser_key(other))
    assert auth.take_refusal(auth.browser_key(_xsrf_v2(b"h" * 32, b"\x07\x07\x07\x07")))


def test_the_sign_in_limits_are_the_operators_in_plain_words() -> None:
    from luskin_app import signins
    from luskin_core.errors import LuskinError

    assert signins.limits_from({}) == signins.Limits(8 * 3600, 15 * 60)   # a working day; roles every 15 minutes
    assert signins.limits_from({"LUSKIN_SIGNIN_HOURS": "1", "LUSKIN_ROLES_MINUTES": "5"}) == signins.Limits(3600, 300)
    for environ, said in (({"LUSKIN_SIGNIN_HOURS": "a day"}, "must be a number of hours"),
                          ({"LUSKIN_SIGNIN_HOURS": "0"}, "more than 0"),
                          ({"LUSKIN_SIGNIN_HOURS": "1", "LUSKIN_ROLES_MINUTES": "90"}, "at most 60 minutes")):
        with pytest.raises(LuskinError, match=said):
            signins.limits_from(environ)


def test_a_sign_in_ends_when_the_provider_stops_confirming_it() -> None:
    from luskin_app import signins

    signins.configure(signins.Limits(max_age=3600, roles_every=60))
    try:
        token, made = signins.make({"iss": "https://idp", "sub": "u1", "groups": ["a"], "auth_time": 1000.0},
                                   "tok", now=2000.0)
        assert made.made == 1000.0   # the provider's auth_time starts the clock, not the callback
        assert signins.expired(made, now=1000.0 + 3600) and not signins.expired(made, now=1000.0 + 3599)
        assert signins.due(made, now=2061.0) and not signins.due(made, now=2059.0)
        kept = signins.confirm(made, signins.Answer({"sub": "u1", "groups": ["b"]}, refused=False), now=2061.0)
        assert kept.claims["groups"] == ["b"] and kept.claims["iss"] == "https://idp" and not kept.ended
        silent = signins.confirm(kept, signins.Answer(None, refused=False), now=2130.0)
        assert not silent.ended and not signins.stale(silent, now=2180.0) and signins.stale(silent, now=2181.0)
        other = signins.confirm(silent, signins.Answer({"sub": "someone-else"}, refused=False), now=2140.0)
        assert other.ended == "not confirmed"   # the provider answered for another user: not this sign-in
        token2, second = signins.make({"iss": "https://idp", "sub": "u2"}, "tok2", now=2000.0)
        assert signins.confirm(second, signins.Answer(None, refused=True), now=2100.0).ended == "not confirmed"
        assert signins.find(token2).ended == "not confirmed" and signins.find(token).ended == "not confirmed"
        assert signins.find("not-a-token") is None and signins.end("not-a-token", "signed out") is None
    finally:
        signins.configure(None)


def test_sign_in_refuses_to_start_without_the_guard(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """With [auth] and a provider that answers, `streamlit run app.py` alone (no serve.py in front) cannot trust
    any sign-in: the operator is told how to start it, the visitor gets no Sign in button."""
    import oidc_server

    with oidc_server.provider({"u": {"email": "u@agency.gov"}}, "http://127.0.0.1:8501/oauth2callback",
                              tmp_path / "provider.log") as issuer:
        auth._CHECKED.clear()
        at = _app({**AUTH, "server_metadata_url": f"{issuer}/.well-known/openid-configuration"})
    assert not at.exception
    assert [e.value for e in at.error] and not at.button
    assert "started without its sign-in guard" in caplog.text and "serve.py" in caplog.text


def test_a_sign_in_that_ends_during_the_gates_checks_shows_the_sign_in_page_not_a_refusal(monkeypatch):
    """CI saw it at the operator's maximum age under load: the gate found the sign-in holding, the sign-in then
    expired, and the user read a moment later was the signed-out one, refused as 'not among Luskin's analysts'
    under the name 'signed-in user'. An ended sign-in is the sign-in page saying why."""
    import streamlit as st

    from luskin_app import auth, signin

    shown: list[tuple[str, str]] = []
    monkeypatch.setattr(auth, "enabled", lambda: True)
    monkeypatch.setattr(auth, "watch_sign_ins", lambda: None)
    monkeypatch.setattr(auth, "signed_in", lambda: True)        # holding when the gate looked
    monkeypatch.setattr(auth, "confirm_roles", lambda: True)
    monkeypatch.setattr(auth, "current", lambda: auth.User(auth.SIGNED_OUT, "", "", (), admin=False, analyst=False))
    monkeypatch.setattr(auth, "ended_why", lambda: "expired")   # and ended a moment later
    monkeypatch.setattr(signin, "_sign_in_page", lambda why="": shown.append(("sign-in page", why)))
    monkeypatch.setattr(signin, "_refusal", lambda user: shown.append(("refusal", user.shown)))

    class Stopped(Exception):
        pass

    def stop() -> None:
        raise Stopped

    monkeypatch.setattr(st, "stop", stop)
    try:
        signin.gate()
    except Stopped:
        pass
    assert shown == [("sign-in page", "expired")]
