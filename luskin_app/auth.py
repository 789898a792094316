"""Who is using the dashboard: sign-in through any OpenID Connect provider, and the roles its claims give.

When the secrets file has an ``[auth]`` section (Streamlit's own ``st.login``: ``redirect_uri``,
``cookie_secret``, ``client_id``, ``client_secret``, ``server_metadata_url``), nothing of Luskin shows
before sign-in: :func:`gate` draws the sign-in page and stops the run. Without ``[auth]`` the app is the
analyst's own (served on 127.0.0.1 only, see deploy/start.sh): everyone is the one local user, who is
also the administrator, and :func:`user_id` is ``""``.

Roles come from the provider's claims, as the operator sets them in ``[luskin.roles]``::

    [luskin.roles]
    claim = "groups"                     # the claim holding the user's groups or roles
    admin_groups = ["luskin-admins"]     # administrators: configure sources, read the record
    analyst_groups = ["luskin-analysts"] # analysts; leave both analyst settings out to let every
    analyst_domains = ["agency.gov"]     #   signed-in user in (e-mail domains count too)
    admin_domains = []

An administrator is also an analyst. A signed-in user with neither role sees a plain refusal and the
sign-out. A missing claim is said to the user in plain words and to the operator in the log.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import streamlit as st

log = logging.getLogger("luskin.app.auth")

SIGNED_OUT = "\x00signed-out"   # never an owner: a signed-out visitor opens nothing
DEFAULT_CLAIM = "groups"


@dataclass(frozen=True)
class User:
    """The signed-in user as Luskin uses it: a stable id, the words shown, the groups and the roles."""

    id: str
    name: str
    email: str
    groups: tuple[str, ...]
    admin: bool
    analyst: bool
    claim_missing: bool = False

    @property
    def shown(self) -> str:
        return self.name or self.email or "signed-in user"


LOCAL = User("", "local user", "", (), admin=True, analyst=True)


@dataclass(frozen=True)
class Roles:
    """The operator's rules: which claim holds the groups, which groups and e-mail domains give which role."""

    claim: str = DEFAULT_CLAIM
    admin_groups: tuple[str, ...] = ()
    analyst_groups: tuple[str, ...] = ()
    admin_domains: tuple[str, ...] = ()
    analyst_domains: tuple[str, ...] = ()

    @property
    def open_to_all(self) -> bool:
        """No analyst rule: every signed-in user is an analyst."""
        return not self.analyst_groups and not self.analyst_domains

    @property
    def uses_claim(self) -> bool:
        return bool(self.admin_groups or self.analyst_groups)


def _names(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, Iterable):
        return ()
    return tuple(str(v).strip() for v in value if str(v).strip())


def roles_from(section: Mapping[str, Any] | None) -> Roles:
    """The ``[luskin.roles]`` section read leniently (unknown keys ignored, one name or a list)."""
    section = section or {}
    claim = str(section.get("claim") or DEFAULT_CLAIM).strip() or DEFAULT_CLAIM
    return Roles(claim, _names(section.get("admin_groups")), _names(section.get("analyst_groups")),
                 tuple(d.lower().lstrip("@") for d in _names(section.get("admin_domains"))),
                 tuple(d.lower().lstrip("@") for d in _names(section.get("analyst_domains"))))


def user_from_claims(claims: Mapping[str, Any], roles: Roles) -> User:
    """The user that the identity token's claims describe, with the roles ``roles`` give them."""
    issuer = str(claims.get("iss") or "")
    subject = str(claims.get("sub") or claims.get("email") or "")
    email = str(claims.get("email") or "")
    name = str(claims.get("name") or claims.get("preferred_username") or email or subject)
    raw = claims.get(roles.claim)
    groups = _names(raw)
    domain = email.rsplit("@", 1)[1].lower() if "@" in email else ""
    admin = bool(set(groups) & set(roles.admin_groups)) or (bool(domain) and domain in roles.admin_domains)
    analyst = admin or roles.open_to_all or bool(set(groups) & set(roles.analyst_groups)) \
        or (bool(domain) and domain in roles.analyst_domains)
    return User(f"{issuer}|{subject}", name, email, groups, admin, analyst,
                claim_missing=roles.uses_claim and raw is None)


# --------------------------------------------------------------------------------------------
# Streamlit's side: is sign-in configured, who is signed in
# --------------------------------------------------------------------------------------------
def secrets_section(name: str) -> Mapping[str, Any] | None:
    try:
        value = st.secrets.get(name)
    except Exception:  # noqa: BLE001 - no secrets file, or a malformed one: no sign-in configured
        return None
    return value if isinstance(value, Mapping) else None


def enabled() -> bool:
    """Whether sign-in is configured (an ``[auth]`` section in the secrets)."""
    return secrets_section("auth") is not None


def roles() -> Roles:
    luskin = secrets_section("luskin") or {}
    section = luskin.get("roles") if isinstance(luskin, Mapping) else None
    return roles_from(section if isinstance(section, Mapping) else None)


def _streamlit_signed_in() -> bool:
    try:
        return bool(st.user.is_logged_in)
    except Exception:  # noqa: BLE001 - outside a run (a thread), or no auth at all
        return False


def _token() -> str | None:
    """The browser's token of the server's own sign-in (its ``luskin_signin`` cookie), if it sent one."""
    from . import signins

    try:
        value = st.context.cookies.get(signins.COOKIE)
    except Exception:  # noqa: BLE001 - no request context (a test harness, a thread)
        return None
    return str(value) if value else None


def session_sign_in() -> Any:
    """The server's own sign-in of this session's browser when it holds (:mod:`luskin_app.signins`), else None:
    Streamlit's cookie alone is not a sign-in. Checked on every run; the maximum age and the roles' interval are
    the operator's (``LUSKIN_SIGNIN_HOURS``, ``LUSKIN_ROLES_MINUTES``)."""
    from . import signins

    if not _streamlit_signed_in():
        return None
    signin = signins.find(_token())
    if signin is None or signin.ended:
        return None
    try:
        claims = st.user.to_dict()
    except Exception:  # noqa: BLE001 - outside a run
        return None
    if signin.subject != user_from_claims(claims, Roles()).id:
        return None
    if signins.expired(signin):
        end_sign_in("expired")
        return None
    return signin


def signed_in() -> bool:
    """Whether this session's browser is signed in: Streamlit's cookie and the server's own sign-in, holding."""
    return session_sign_in() is not None


def ended_why() -> str:
    """Why this browser's sign-in no longer holds ("" when it holds or there was none): said on the sign-in page."""
    from . import signins

    token = _token()
    if token is None:   # no sign-in of this server; Streamlit's cookie alone (a server started without the guard)
        return "unknown" if _streamlit_signed_in() else ""
    signin = signins.find(token)
    if signin is None:
        return "unknown"
    return signin.ended or ("expired" if signins.expired(signin) else "")


def end_sign_in(why: str) -> bool:
    """End this browser's sign-in (sign-out, expiry), written to the record once; whether one was ended."""
    from . import record, signins

    ended = signins.end(_token(), why)
    if ended is None:
        return False
    user = user_from_claims(ended.claims, roles())
    action = "sign-out" if why == "signed out" else f"sign-in {why}"
    try:
        record.append({"action": action, "user": {"id": user.id, "name": user.shown, "email": user.email},
                       "page": "", "settings": {"hours": round(signins.limits().max_age / 3600, 2)}})
    except Exception as err:  # noqa: BLE001 - the sign-in ends either way; the operator reads why
        log.error("the record could not be written for %s: %s", action, err)
    return True


def confirm_roles() -> bool:
    """Ask the provider again for this sign-in's claims when the operator's interval has passed; whether the sign-in
    still holds afterwards. A refused access token ends it, as do roles two intervals old (a provider that does
    not answer); a change of roles is a line of the record."""
    from . import record, signins

    signin = session_sign_in()
    if signin is None:
        return False
    if not signins.due(signin):
        return True
    url = _userinfo_url()
    answer = signins.ask_provider(url, signin.access_token) if url else signins.Answer(None, refused=False)
    after = signins.confirm(signin, answer)
    before_user, after_user = user_from_claims(signin.claims, roles()), user_from_claims(after.claims, roles())
    who = {"id": after_user.id, "name": after_user.shown, "email": after_user.email}
    if after.ended:
        log.info("a sign-in ended: the provider no longer confirms it")
        _record_quietly(record, {"action": "sign-in not confirmed", "user": who, "page": ""})
        return False
    if (before_user.admin, before_user.analyst, before_user.groups) != (after_user.admin, after_user.analyst,
                                                                         after_user.groups):
        _record_quietly(record, {"action": "roles changed", "user": who, "page": "",
                                 "settings": {"before": _role_word(before_user), "after": _role_word(after_user)}})
    if answer.claims is None and signins.stale(after):
        signins.mark_ended(after, "not confirmed")
        log.warning("a sign-in ended: the provider did not confirm its roles for two intervals")
        _record_quietly(record, {"action": "sign-in not confirmed", "user": who, "page": ""})
        return False
    return True


def _role_word(user: User) -> str:
    return "administrator" if user.admin else "analyst" if user.analyst else "none"


def _record_quietly(record: Any, entry: dict[str, Any]) -> None:
    try:
        record.append(entry)
    except Exception as err:  # noqa: BLE001 - the sign-in's state is decided either way
        log.error("the record could not be written for %s: %s", entry.get("action"), err)


_DOCUMENTS: dict[str, tuple[float, dict[str, Any]]] = {}   # discovery URL -> (when read, the document)


def _userinfo_url() -> str:
    """The provider's userinfo endpoint, from its discovery document (read at most once an hour)."""
    import time

    section = secrets_section("auth") or {}
    _, chosen = provider(section)
    url = str(chosen.get("server_metadata_url") or "")
    held = _DOCUMENTS.get(url)
    if held is None or time.monotonic() - held[0] > 3600:
        import httpx

        try:
            response = httpx.get(url, timeout=5.0, follow_redirects=True)
            response.raise_for_status()
            document = response.json()
        except (httpx.HTTPError, OSError, ValueError):
            return ""
        if not isinstance(document, dict):
            return ""
        held = (time.monotonic(), document)
        _DOCUMENTS[url] = held
    return str(held[1].get("userinfo_endpoint") or "")


def current() -> User:
    """The user of this session: the local user without sign-in, else the one the server's own sign-in names,
    with the roles of its claims as the provider last confirmed them (never only the cookie's)."""
    if not enabled():
        return LOCAL
    signin = session_sign_in()
    if signin is None:
        return User(SIGNED_OUT, "", "", (), admin=False, analyst=False)
    return user_from_claims(signin.claims, roles())


def user_id() -> str:
    """The owner of what this session keeps ("" on a local app without sign-in)."""
    return current().id


def is_admin() -> bool:
    return current().admin


def may_use_source(setting: Any) -> bool:
    """Whether this user may use a configured source (its ``groups``; administrators may use every one)."""
    user = current()
    if user.admin:
        return True
    if not user.analyst:
        return False
    allowed = tuple(getattr(setting, "groups", ()) or ())
    return not allowed or bool(set(allowed) & set(user.groups))


# --------------------------------------------------------------------------------------------
# The operator's settings, checked in plain words
# --------------------------------------------------------------------------------------------
_PROVIDER_KEYS = ("client_id", "client_secret", "server_metadata_url")
_CHECKED: dict[str, tuple[float, str | None]] = {}   # metadata URL -> (when checked, problem or None)
_CHECK_EVERY = 60.0


def provider(section: Mapping[str, Any]) -> tuple[str | None, Mapping[str, Any]]:
    """The provider to sign in with: the [auth] section itself, or its one named sub-section."""
    named = [(k, v) for k, v in section.items() if isinstance(v, Mapping) and "client_id" in v]
    if named and not all(k in section for k in _PROVIDER_KEYS):
        return str(named[0][0]), named[0][1]
    return None, section


def setup_problem() -> str | None:
    """What is wrong with the sign-in settings, in plain words for the operator (and the log); None when
    they look right. Checks the settings Streamlit needs (never printing a value), that the provider's
    discovery document answers (at most once a minute), and that the server runs behind Luskin's guard."""
    problem = _settings_problem()
    if problem is None and not _guarded():
        problem = ("Luskin was started without its sign-in guard (streamlit run app.py), so no sign-in can be "
                   "trusted: start it with 'streamlit run serve.py' (deploy/start.sh and 'luskin app' do).")
        log.error("sign-in is not available: %s", problem)
    return problem


def _guarded() -> bool:
    from . import guard

    return guard.installed()


def _settings_problem() -> str | None:
    import time

    section = secrets_section("auth") or {}
    missing = [k for k in ("redirect_uri", "cookie_secret") if not section.get(k)]
    _, chosen = provider(section)
    missing += [k for k in _PROVIDER_KEYS if not chosen.get(k)]
    url = str(chosen.get("server_metadata_url") or "")
    checked = _CHECKED.get(url)
    if checked is None or time.monotonic() - checked[0] > _CHECK_EVERY:
        problem = (f"The [auth] section of the secrets file lacks {', '.join(missing)}." if missing
                   else _metadata_problem(url))
        checked = (time.monotonic(), problem)
        _CHECKED[url] = checked
        if problem:
            log.error("sign-in is not available: %s", problem)
    return checked[1]


def _metadata_problem(url: str) -> str | None:
    from urllib.parse import urlsplit

    import httpx

    host = urlsplit(url).netloc or url
    try:
        response = httpx.get(url, timeout=5.0, follow_redirects=True)
        response.raise_for_status()
        document = response.json()
    except httpx.HTTPStatusError as err:
        return f"The sign-in provider at {host} answered {err.response.status_code} for its discovery document " \
               "(server_metadata_url)."
    except (httpx.HTTPError, OSError):
        return f"The sign-in provider at {host} does not answer (server_metadata_url); check the address and " \
               "that this server can reach it."
    except ValueError:
        return f"The sign-in provider at {host} did not send a discovery document (server_metadata_url)."
    if not isinstance(document, dict) or "authorization_endpoint" not in document:
        return f"The address server_metadata_url names at {host} is not an OpenID Connect discovery document."
    return None


XSRF_COOKIE = "_streamlit_xsrf"   # Streamlit's per-browser cookie; its token stays the same across sign-in redirects
_REFUSED_KEEP = 300.0             # seconds a refused sign-in is told to the browser that tried it
_REFUSED_MAX = 1_000              # browsers remembered at most (the oldest are forgotten first)
_REFUSED: dict[str, float] = {}   # browser key -> when the provider refused that browser's sign-in
_REFUSED_LOCK = threading.Lock()


def browser_key(cookie: str | None) -> str | None:
    """A short hash of the token inside Streamlit's XSRF cookie: the same browser whatever the cookie's mask.

    The cookie is ``2|mask|masked-token|time`` (version 2, a new mask each time the page is served) or the
    token itself (version 1). None without a cookie (XSRF protection turned off): then nothing is told.
    """
    import binascii
    import hashlib

    value = (cookie or "").strip("\"'")
    if not value:
        return None
    token = value.encode("utf-8")
    if value.startswith("2|"):
        try:
            _, mask_hex, masked_hex, _ = value.split("|")
            mask, masked = binascii.a2b_hex(mask_hex), binascii.a2b_hex(masked_hex)
        except ValueError:
            return None
        if not mask:
            return None
        token = bytes(b ^ mask[i % len(mask)] for i, b in enumerate(masked))
    return hashlib.sha256(token).hexdigest()[:32]


def _request_cookie() -> str | None:
    """The XSRF cookie of the sign-in callback being handled (the frame of Streamlit's callback route that logs
    the failure is on the stack while it logs). None when it cannot be found."""
    import sys

    frame = sys._getframe(1)
    while frame is not None:
        request = frame.f_locals.get("request")
        cookies = getattr(request, "cookies", None)
        if isinstance(cookies, Mapping):
            value = cookies.get(XSRF_COOKIE)
            return str(value) if value else None
        frame = frame.f_back   # type: ignore[assignment]
    return None


def note_refusal(key: str | None) -> None:
    """Remember that the browser ``key`` had its sign-in refused (told once to that browser, no other)."""
    import time

    if key is None:
        return
    with _REFUSED_LOCK:
        _REFUSED.pop(key, None)
        _REFUSED[key] = time.monotonic()
        while len(_REFUSED) > _REFUSED_MAX:
            _REFUSED.pop(next(iter(_REFUSED)))


def take_refusal(key: str | None) -> bool:
    """Whether the browser ``key`` had a sign-in refused in the last minutes (then forgotten: said once)."""
    import time

    if key is None:
        return False
    with _REFUSED_LOCK:
        when = _REFUSED.pop(key, None)
    return when is not None and time.monotonic() - when < _REFUSED_KEEP


class _RefusedSignIns(logging.Filter):
    """Turns Streamlit's failed sign-in callbacks into a plain log line for the operator and a notice for the
    browser that tried (never for the other visitors): "token exchange failed" (a wrong client secret, a clock
    off, the provider unreachable from this server) and "Error during authentication" (the provider refused)."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Said in Luskin's plain line instead: Streamlit's warning and its traceback (which may carry the provider's
        answer) are dropped for these three; any other line of the sign-in routes passes."""
        message = record.getMessage()
        if "token exchange failed" in message:
            log.error("a sign-in was refused by the provider when Luskin exchanged its code: check client_id and "
                      "client_secret in [auth] against the provider's settings for this application, and that "
                      "this server reaches the provider's token endpoint")
        elif "Error during authentication" in message:
            log.error("the sign-in provider sent an error back instead of a sign-in (%s)",
                      message.split(":", 1)[-1].strip()[:300])
        elif "Error during OAuth authorization redirect" in message:
            # The provider stopped answering after the sign-in page checked it: Streamlit answers the browser
            # "Authentication error"; the next sign-in page checks the provider again and says so.
            _CHECKED.clear()
            log.error("a user pressed Sign in but this server could not reach the sign-in provider "
                      "(server_metadata_url) to send them there (%s); they were shown a page saying so",
                      _reason(record))
            return False
        else:
            return True
        try:
            note_refusal(browser_key(_request_cookie()))
        except Exception as err:  # noqa: BLE001 - the notice is a courtesy; the log line above is what counts
            log.debug("could not tell the refused browser: %s", err)
        return False


def _reason(record: logging.LogRecord) -> str:
    """The failure's kind (its exception's class name), never its text (it may hold an address or an answer)."""
    info = record.exc_info
    return type(info[1]).__name__ if info and info[1] is not None else "no reason given"


def watch_sign_ins() -> None:
    """Once per process: hear Streamlit's sign-in failures (app.py)."""
    target = logging.getLogger("streamlit.web.server.starlette.starlette_auth_routes")
    if not any(isinstance(f, _RefusedSignIns) for f in target.filters):
        target.addFilter(_RefusedSignIns())


def recent_refusal() -> bool:
    """Whether this session's browser had its sign-in refused a moment ago (said once per session)."""
    from . import keys

    if keys.SIGN_IN_REFUSED not in st.session_state:
        try:
            cookie = st.context.cookies.get(XSRF_COOKIE)
        except Exception:  # noqa: BLE001 - no request context (a test harness): no browser to tell
            cookie = None
        st.session_state[keys.SIGN_IN_REFUSED] = take_refusal(browser_key(cookie))
    return bool(st.session_state[keys.SIGN_IN_REFUSED])


__all__ = [
    "LOCAL",
    "Roles",
    "User",
    "browser_key",
    "confirm_roles",
    "current",
    "enabled",
    "end_sign_in",
    "ended_why",
    "is_admin",
    "may_use_source",
    "recent_refusal",
    "roles",
    "roles_from",
    "session_sign_in",
    "setup_problem",
    "signed_in",
    "take_refusal",
    "user_from_claims",
    "user_id",
    "watch_sign_ins",
]
