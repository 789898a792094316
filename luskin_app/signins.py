"""The server's own record of the sign-ins it made: revoked at sign-out, ended after a maximum age, roles re-checked.

Streamlit's sign-in is a cookie signed with the server's ``cookie_secret`` and nothing else: a copy taken before
sign-out still signed in afterwards, a cookie signed by anyone holding the secret signed in a user the provider
never saw, and a group removed at the provider kept its role for the cookie's 30 days. So Luskin keeps its own
table. When the provider's callback reaches the server and Streamlit sets its cookie, the guard in front of the
app (:mod:`luskin_app.guard`, installed by ``serve.py``) makes a sign-in here and hands the browser a second
cookie holding only a random token (``luskin_signin``); the table holds the claims the provider sent at that
moment, the access token (in memory only) and when it was made. On every script run the app finds the sign-in by
that token (:func:`find`), and a sign-in counts only when

* this server made it (a forged or replayed Streamlit cookie has no token the table knows),
* it was not ended (sign-out ends it: :func:`end`),
* it is younger than the operator's maximum age (``LUSKIN_SIGNIN_HOURS``, default 8: a working day),
* its roles were confirmed by the provider within the operator's interval (``LUSKIN_ROLES_MINUTES``, default 15):
  the provider's userinfo endpoint is asked with the sign-in's access token (:func:`confirm`); the claims it
  answers replace the old ones, an access token the provider no longer accepts ends the sign-in, and a provider
  that cannot be reached is asked again at the next run, the sign-in ending once its roles are two intervals old.

The table lives in the server's memory: a restart ends every sign-in (analysts sign in again). The who and the
why of each change goes to the record (:mod:`luskin_app.record`): sign-in, sign-out, expiry, roles changed,
refused. Streamlit-free, so the guard and the app share it.
"""

from __future__ import annotations

import hashlib
import logging
import os
import secrets
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from luskin_core.errors import LuskinError

log = logging.getLogger("luskin.app.auth")

COOKIE = "luskin_signin"
DEFAULT_HOURS = 8.0       # a working day
DEFAULT_ROLES_MINUTES = 15.0
RETRY_SECONDS = 20.0      # a provider that did not answer is asked again no sooner than this
MAX_KEPT = 100_000        # sign-ins remembered at most (ended ones are forgotten first)
FORGET_ENDED_AFTER = 24 * 3600.0


@dataclass(frozen=True)
class Limits:
    """The operator's bounds: how long a sign-in lasts, how often its roles are asked again."""

    max_age: float = DEFAULT_HOURS * 3600
    roles_every: float = DEFAULT_ROLES_MINUTES * 60


def limits_from(environ: Mapping[str, str] | None = None) -> Limits:
    """``LUSKIN_SIGNIN_HOURS`` and ``LUSKIN_ROLES_MINUTES`` as the environment sets them (read, never set)."""
    env = os.environ if environ is None else environ

    def number(name: str, default: float, low: float, high: float, unit: str) -> float:
        raw = env.get(name, "").strip()
        if not raw:
            return default
        try:
            value = float(raw)
        except ValueError:
            raise LuskinError(f"{name} must be a number of {unit}, not '{raw[:40]}'.") from None
        if not low < value <= high:
            raise LuskinError(f"{name} must be more than {low:g} and at most {high:g} {unit}.")
        return value

    hours = number("LUSKIN_SIGNIN_HOURS", DEFAULT_HOURS, 0, 24 * 7, "hours")
    minutes = number("LUSKIN_ROLES_MINUTES", DEFAULT_ROLES_MINUTES, 0, hours * 60, "minutes")
    return Limits(hours * 3600, minutes * 60)


_LIMITS: list[Limits] = []


def configure(value: Limits | None) -> None:
    """Use ``value`` from now on (tests); None reads the environment again at the next use."""
    with _LOCK:
        _LIMITS[:] = [value] if value is not None else []


def limits() -> Limits:
    with _LOCK:
        if not _LIMITS:
            _LIMITS.append(limits_from())
        return _LIMITS[0]


@dataclass(frozen=True)
class SignIn:
    """One sign-in this server made: who (the claims as last confirmed), since when, and whether it still holds."""

    key: str                      # a hash of the browser's token (the token itself is never kept)
    claims: dict[str, Any] = field(repr=False)
    made: float
    confirmed: float              # when the provider last confirmed the claims (the roles)
    access_token: str = field(default="", repr=False)
    ended: str = ""               # why it ended ("" while it holds): "signed out", "expired", ...
    tried: float = 0.0            # when the provider was last asked (answered or not)

    @property
    def subject(self) -> str:
        """The user's id as Luskin knows it (issuer | subject), the same as ``auth.user_from_claims``' id."""
        return f"{self.claims.get('iss') or ''}|{self.claims.get('sub') or self.claims.get('email') or ''}"


_LOCK = threading.RLock()
_TABLE: dict[str, SignIn] = {}


def _key(token: str) -> str:
    return hashlib.sha256(f"luskin-signin\x00{token}".encode()).hexdigest()


def start_of(claims: Mapping[str, Any], now: float) -> float:
    """When the sign-in began: the provider's ``auth_time`` when it says one earlier than now, else now."""
    try:
        auth_time = float(claims.get("auth_time") or now)
    except (TypeError, ValueError):
        auth_time = now
    return min(auth_time, now)


def make(claims: Mapping[str, Any], access_token: str = "", now: float | None = None) -> tuple[str, SignIn]:
    """A new sign-in for the claims the provider just sent; its token for the browser's cookie and the record."""
    now = time.time() if now is None else now
    token = secrets.token_urlsafe(32)
    made = SignIn(_key(token), {k: v for k, v in claims.items() if k not in ("origin", "is_logged_in")},
                  start_of(claims, now), now, access_token, "", now)
    with _LOCK:
        _forget_old(now)
        _TABLE[made.key] = made
    return token, made


def _forget_old(now: float) -> None:
    """Forget sign-ins ended a day ago, then the oldest past ``MAX_KEPT`` (under the lock)."""
    for key in [k for k, s in _TABLE.items() if s.ended and now - s.made > FORGET_ENDED_AFTER]:
        del _TABLE[key]
    while len(_TABLE) >= MAX_KEPT:
        del _TABLE[next(iter(_TABLE))]


def find(token: str | None) -> SignIn | None:
    """The sign-in the browser's token names (ended or not), or None when this server made no such sign-in."""
    if not token:
        return None
    with _LOCK:
        return _TABLE.get(_key(token))


def _set(updated: SignIn) -> SignIn:
    with _LOCK:
        if updated.key in _TABLE:
            _TABLE[updated.key] = updated
    return updated


def end(token: str | None, why: str) -> SignIn | None:
    """End the sign-in the token names (sign-out, expiry); the sign-in as it was, or None when there was none or it
    had ended already (so that an end is written to the record once)."""
    found = find(token)
    if found is None or found.ended:
        return None
    _set(replace(found, ended=why, access_token=""))
    return found


def expired(signin: SignIn, now: float | None = None) -> bool:
    """Whether the sign-in is older than the operator's maximum age."""
    now = time.time() if now is None else now
    return now - signin.made >= limits().max_age


def due(signin: SignIn, now: float | None = None) -> bool:
    """Whether the sign-in's roles are due to be asked again (and the provider was not asked a moment ago)."""
    now = time.time() if now is None else now
    return now - signin.confirmed >= limits().roles_every and now - signin.tried >= min(RETRY_SECONDS,
                                                                                          limits().roles_every)


def stale(signin: SignIn, now: float | None = None) -> bool:
    """Whether the sign-in's roles went unconfirmed for two intervals (a provider that does not answer)."""
    now = time.time() if now is None else now
    return now - signin.confirmed >= 2 * limits().roles_every


@dataclass(frozen=True)
class Answer:
    """What the provider said when asked for a sign-in's claims again."""

    claims: dict[str, Any] | None   # the claims it confirmed, or None
    refused: bool                   # it no longer accepts the sign-in's access token (the sign-in must end)


def ask_provider(userinfo_url: str, access_token: str, timeout: float = 5.0) -> Answer:
    """The provider's userinfo endpoint asked with the access token: the claims it confirms now."""
    import httpx

    if not access_token or not userinfo_url:
        return Answer(None, refused=True)
    try:
        response = httpx.get(userinfo_url, headers={"Authorization": f"Bearer {access_token}"}, timeout=timeout)
    except (httpx.HTTPError, OSError) as err:
        log.warning("the sign-in provider did not answer Luskin's check of a user's roles (%s)", type(err).__name__)
        return Answer(None, refused=False)
    if response.status_code in (401, 403):
        return Answer(None, refused=True)
    try:
        response.raise_for_status()
        value = response.json()
    except (httpx.HTTPError, ValueError):
        log.warning("the sign-in provider answered Luskin's check of a user's roles with %s", response.status_code)
        return Answer(None, refused=False)
    return Answer(value if isinstance(value, dict) else None, refused=not isinstance(value, dict))


def confirm(signin: SignIn, answer: Answer, now: float | None = None) -> SignIn:
    """The sign-in after the provider's answer: new claims (the userinfo's over the token's, the issuer kept), or
    ended when the provider refused, or only the time it was asked when it did not answer."""
    now = time.time() if now is None else now
    if answer.refused:
        return _set(replace(signin, ended="not confirmed", access_token="", tried=now))
    if answer.claims is None:
        return _set(replace(signin, tried=now))
    if str(answer.claims.get("sub") or "") not in ("", str(signin.claims.get("sub") or "")):
        return _set(replace(signin, ended="not confirmed", access_token="", tried=now))
    merged = {**signin.claims, **{k: v for k, v in answer.claims.items() if k not in ("iss", "sub", "aud")}}
    return _set(replace(signin, claims=merged, confirmed=now, tried=now))


def mark_ended(signin: SignIn, why: str) -> SignIn:
    """End ``signin`` for ``why`` (expired, roles not confirmed) and return it as ended."""
    return _set(replace(signin, ended=why, access_token=""))


def who(claims: Mapping[str, Any]) -> dict[str, str]:
    """The user as the record names one: the id (issuer | subject), the name and the e-mail."""
    subject = claims.get("sub") or claims.get("email") or ""
    return {"id": f"{claims.get('iss') or ''}|{subject}", "name": str(claims.get("name") or claims.get("email") or ""),
            "email": str(claims.get("email") or "")}


def end_expired(now: float | None = None) -> list[SignIn]:
    """End every sign-in past the maximum age (the housekeeping thread, so that the record says when each ended even
    if its browser never comes back); the ones ended now."""
    now = time.time() if now is None else now
    with _LOCK:
        due = [s for s in _TABLE.values() if not s.ended and expired(s, now)]
        for signin in due:
            _TABLE[signin.key] = replace(signin, ended="expired", access_token="")
    return due


def count_active(now: float | None = None) -> int:
    """Sign-ins that hold now (the Administration page says how many)."""
    now = time.time() if now is None else now
    with _LOCK:
        return sum(1 for s in _TABLE.values() if not s.ended and not expired(s, now))


def clear() -> None:
    """Forget every sign-in (tests)."""
    with _LOCK:
        _TABLE.clear()


__all__ = ["COOKIE", "Answer", "Limits", "SignIn", "ask_provider", "clear", "configure", "confirm", "count_active",
           "due", "end", "end_expired", "expired", "find", "limits", "limits_from", "make", "mark_ended", "stale",
           "start_of", "who"]
