"""The guard in front of the dashboard when it is served with sign-in: ``serve.py`` puts it before Streamlit's routes.

Streamlit's sign-in is its signed cookie alone (see :mod:`luskin_app.signins`), and its downloads are addresses that
answer anyone while their page is open. This ASGI middleware (``st.App(..., middleware=[...])``, Streamlit's own
way to add one) sees every request before Streamlit does and:

* at the provider's callback (``/oauth2callback``), when Streamlit sets its sign-in cookie, makes the server's own
  sign-in (:func:`luskin_app.signins.make`) and hands the browser its token (``luskin_signin``, HttpOnly,
  SameSite=Lax, Secure when the address is https); Streamlit's cookies get the same maximum age instead of 30 days,
  and Secure too;
* at ``/auth/logout`` (every sign-out passes there) ends that sign-in, so a copied cookie opens nothing after;
* at the app's WebSocket, hides Streamlit's sign-in cookie unless it comes with a sign-in this server made, still
  holding, of the same user: a cookie forged with the cookie secret, or copied before sign-out, or older than the
  maximum age, reaches the app as a signed-out visitor (and the refusal is a line of the record);
* at ``/media/…`` answers only a signed-in user, and a download only the user it was made for
  (:mod:`luskin_app.downloads`); anything else is "not found", and a line of the record.

Without ``[auth]`` in the secrets it lets everything through: a local app has one user.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from http.cookies import CookieError, SimpleCookie
from typing import Any

from . import downloads, record, signins

log = logging.getLogger("luskin.app.auth")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

USER_COOKIE = "_streamlit_user"     # Streamlit's identity cookie (and its chunks _streamlit_user_1, ...)
TOKENS_COOKIE = "_streamlit_user_tokens"
_INSTALLED = threading.Event()
_REFUSED_SEEN: dict[str, float] = {}   # hashes of refused cookies already written to the record (once an hour)
_SEEN_LOCK = threading.Lock()
_WRITER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="luskin-record")   # one writer: lines stay in order


def installed() -> bool:
    """Whether this process serves the dashboard behind the guard (``serve.py``)."""
    return _INSTALLED.is_set()


def _auth_section() -> dict[str, Any]:
    from streamlit.auth_util import get_secrets_auth_section

    try:
        section = get_secrets_auth_section()
    except Exception:  # noqa: BLE001 - unreadable secrets: no sign-in configured
        return {}
    return dict(section) if section else {}


def _base_path() -> str:
    from streamlit import config

    base = str(config.get_option("server.baseUrlPath") or "").strip("/")
    return f"/{base}" if base else ""


def _secure() -> bool:
    """Whether the dashboard's address is https (then every sign-in cookie is Secure)."""
    return str(_auth_section().get("redirect_uri") or "").lower().startswith("https://")


def _cookies(scope: Scope) -> dict[str, str]:
    from starlette.requests import cookie_parser

    found: dict[str, str] = {}
    for name, value in scope.get("headers") or []:
        if name == b"cookie":
            found.update(cookie_parser(value.decode("latin-1")))
    return found


def _decode(cookies: dict[str, str], name: str) -> dict[str, Any] | None:
    """A Streamlit sign-in cookie (``name``, reassembled from its chunks) as signed with the cookie secret."""
    from streamlit.auth_util import get_cookie_with_chunks
    from streamlit.web.server.server_util import get_cookie_secret
    from streamlit.web.server.starlette.starlette_app_utils import decode_signed_value

    secret = get_cookie_secret()

    def one(cookie: str) -> bytes | None:
        value = cookies.get(cookie)
        return decode_signed_value(secret, cookie, value) if value else None

    try:
        raw = get_cookie_with_chunks(one, name)
        value = json.loads(raw) if raw else None
    except (ValueError, TypeError):
        return None
    return value if isinstance(value, dict) else None


def _write(event: str, claims: dict[str, Any] | None, **fields: Any) -> None:
    """One line of the record for what the guard did, written on a thread of its own (the server's event loop does
    not wait for the disk); it never stops a request: a failure is logged loudly."""
    _WRITER.submit(_write_now, event, claims, fields)


def _write_now(event: str, claims: dict[str, Any] | None, fields: dict[str, Any]) -> None:
    try:
        record.append({"action": event, "user": signins.who(claims) if claims else {"id": "", "name": "", "email": ""},
                       "page": "", **fields})
    except Exception as err:  # noqa: BLE001 - the request is answered either way; the operator reads why
        log.error("the record could not be written for %s: %s", event, err)


def _once(value: str) -> bool:
    """True the first time in an hour that this refused cookie is seen (a reconnecting tab is not a new try)."""
    digest = hashlib.sha256(value.encode()).hexdigest()
    now = time.monotonic()
    with _SEEN_LOCK:
        for key in [k for k, when in _REFUSED_SEEN.items() if now - when > 3600]:
            del _REFUSED_SEEN[key]
        if digest in _REFUSED_SEEN:
            return False
        _REFUSED_SEEN[digest] = now
        return True


def holding(cookies: dict[str, str], now: float | None = None) -> signins.SignIn | None:
    """The sign-in the browser's token names when it still holds (not ended, not past the maximum age); one past its
    age is ended here, and written to the record once."""
    signin = signins.find(cookies.get(signins.COOKIE))
    if signin is None or signin.ended:
        return None
    if signins.expired(signin, now):
        if signins.end(cookies.get(signins.COOKIE), "expired") is not None:
            _write("sign-in expired", signin.claims, produced={"hours": round(signins.limits().max_age / 3600, 2)})
        return None
    return signin


def _cookie_age() -> int:
    """Seconds a browser keeps the sign-in cookies: the maximum age and an hour more, so that the server, which
    ends the sign-in at the maximum age, can still tell the browser why it ended."""
    return int(signins.limits().max_age) + 3600


def _set_cookie(name: str, value: str, max_age: int) -> bytes:
    morsel = SimpleCookie()
    morsel[name] = value
    item = morsel[name]
    item["path"] = _base_path() or "/"
    item["httponly"] = True
    item["samesite"] = "Lax"
    item["max-age"] = str(max_age)
    if _secure():
        item["secure"] = True
    return item.OutputString().encode("latin-1")


def _set_cookies(headers: list[tuple[bytes, bytes]]) -> dict[str, str]:
    """The cookies a response sets (name -> value; a deleted one has the value "")."""
    found: dict[str, str] = {}
    for name, value in headers:
        if name.lower() != b"set-cookie":
            continue
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(value.decode("latin-1"))
        except CookieError:
            continue
        for key, morsel in jar.items():
            found[key] = "" if morsel["max-age"] == "0" else morsel.value
    return found


def _bounded(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """Streamlit's sign-in cookies with the server's maximum age instead of 30 days, and Secure on https."""
    out = []
    for name, value in headers:
        text = value.decode("latin-1")
        if name.lower() == b"set-cookie" and text.startswith(USER_COOKIE) and "Max-Age=0" not in text:
            jar: SimpleCookie = SimpleCookie()
            with contextlib.suppress(CookieError):
                jar.load(text)
                for morsel in jar.values():
                    morsel["max-age"] = str(_cookie_age())
                    if _secure():
                        morsel["secure"] = True
                    text = morsel.OutputString()
        out.append((name, text.encode("latin-1")))
    return out


class Guard:
    """The ASGI middleware (see the module's docstring)."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]]) -> None:
        self.app = app
        _INSTALLED.set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or not _auth_section():
            await self.app(scope, receive, send)
            return
        base = _base_path()
        path = str(scope.get("path") or "")
        here = path[len(base):] if base and path.startswith(base) else path
        if scope["type"] == "websocket":
            if here == "/_stcore/stream":
                scope = self._vetted(scope)
        elif here == "/oauth2callback":
            send = self._on_callback(send)
        elif here == "/auth/logout":
            send = self._on_sign_out(scope, send)
        elif here == "/auth/login":
            send = _on_sign_in(send, base)
        elif here.startswith("/media/") and not self._may_serve(scope, here[len("/media/"):]):
            await _not_found(send)
            return
        await self.app(scope, receive, send)

    # -- the app's WebSocket: only a sign-in this server made and that still holds reaches the app --------------
    def _vetted(self, scope: Scope) -> Scope:
        cookies = _cookies(scope)
        if not any(name.startswith(USER_COOKIE) for name in cookies):
            return scope
        signin = holding(cookies)
        claims = _decode(cookies, USER_COOKIE)
        if signin is not None and claims is not None and signin.subject == signins.who(claims)["id"]:
            return scope
        if claims is not None and _once(cookies.get(USER_COOKIE, "")):
            known = signins.find(cookies.get(signins.COOKIE))
            why = ("a sign-in this server did not make" if known is None
                   else f"a sign-in that has ended ({known.ended or 'expired'})")
            log.warning("a browser came with %s: it is shown the sign-in page", why)
            _write("refused", claims, settings={"what": "sign-in", "why": why})
        kept = "; ".join(f"{name}={value}" for name, value in cookies.items() if not name.startswith(USER_COOKIE))
        headers = [(k, v) for k, v in scope.get("headers") or [] if k != b"cookie"]
        if kept:
            headers.append((b"cookie", kept.encode("latin-1")))
        return {**scope, "headers": headers}

    # -- the provider's callback: the server's own sign-in, made as Streamlit sets its cookie ----------------
    def _on_callback(self, send: Send) -> Send:
        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers") or [])
                set_now = _set_cookies(headers)
                if set_now.get(USER_COOKIE):
                    claims = _decode({k: v for k, v in set_now.items() if v}, USER_COOKIE)
                    tokens = _decode({k: v for k, v in set_now.items() if v}, TOKENS_COOKIE) or {}
                    if claims is not None:
                        token, made = signins.make(claims, str(tokens.get("access_token") or ""))
                        headers = _bounded(headers)
                        headers.append((b"set-cookie", _set_cookie(signins.COOKIE, token, _cookie_age())))
                        _write("sign-in", made.claims,
                               settings={"provider": str(claims.get("provider") or ""),
                                         "hours": round(signins.limits().max_age / 3600, 2)})
                    else:
                        log.error("Streamlit set a sign-in cookie Luskin cannot read: no sign-in was made")
                message = {**message, "headers": headers}
            await send(message)

        return sending

    # -- sign-out: the server's sign-in ends, its cookie goes ----------------------------------------------
    def _on_sign_out(self, scope: Scope, send: Send) -> Send:
        cookies = _cookies(scope)
        ended = signins.end(cookies.get(signins.COOKIE), "signed out")
        if ended is not None:
            _write("sign-out", ended.claims)

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [*list(message.get("headers") or []), (b"set-cookie", _set_cookie(signins.COOKIE, "", 0))]
                message = {**message, "headers": headers}
            await send(message)

        return sending

    # -- /media/: a signed-in user; a download, the user it was made for ------------------------------------
    def _may_serve(self, scope: Scope, file_id: str) -> bool:
        cookies = _cookies(scope)
        signin = holding(cookies)
        claims = signin.claims if signin is not None else _decode(cookies, USER_COOKIE)
        if signin is None:
            _write("refused", claims, settings={"what": "download", "why": "no sign-in"})
            return False
        content = _media_content(file_id)
        if content is None or not downloads.is_download(content):
            return True   # not a download (or not there: Streamlit answers "not found" itself)
        if downloads.may_take(content, signin.subject):
            return True
        _write("refused", signin.claims, settings={"what": "download", "why": "made for another user"})
        return False


def _media_content(file_id: str) -> bytes | None:
    from streamlit.runtime import Runtime

    try:
        found = Runtime.instance().media_file_mgr.read_file(file_id)
    except Exception:  # noqa: BLE001 - a storage that cannot be read: not a file the dashboard made
        return None
    return bytes(found.content) if found is not None else None


# What a browser is shown when Sign in cannot send it to the provider (it stopped answering after the sign-in page
# checked it): Streamlit's own answer is a bare "Authentication error". No value of the request is in it.
_NO_PROVIDER = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign-in is not available just now - Luskin</title>
<style>body {{ font-family: sans-serif; max-width: 40rem; margin: 4rem auto; padding: 0 1rem; line-height: 1.5;
color: #1f2937; }} a {{ color: #1d4ed8; }}</style></head>
<body><main><h1>Sign-in is not available just now</h1>
<p>This server could not reach the agency's sign-in service to send you there. Nothing you had open is lost.</p>
<p>Please try again in a few minutes. If it keeps happening, tell your administrator that the sign-in service
does not answer this server.</p>
<p><a href="{home}">Back to the dashboard</a></p></main></body></html>
"""


def _on_sign_in(send: Send, base: str) -> Send:
    """At ``/auth/login``: a failure to reach the provider becomes a plain page (503) instead of Streamlit's bare
    "Authentication error" (400); a redirect to the provider passes unchanged."""
    replaced = False

    async def sending(message: Message) -> None:
        nonlocal replaced
        if message["type"] == "http.response.start" and int(message.get("status", 200)) >= 400:
            replaced = True
            body = _NO_PROVIDER.format(home=(base.rstrip("/") or "") + "/").encode("utf-8")
            await send({"type": "http.response.start", "status": 503,
                        "headers": [(b"content-type", b"text/html; charset=utf-8"),
                                    (b"content-length", str(len(body)).encode()), (b"cache-control", b"no-store"),
                                    (b"retry-after", b"60")]})
            await send({"type": "http.response.body", "body": body, "more_body": False})
            return
        if not replaced:   # Streamlit's own body of a replaced answer is dropped
            await send(message)

    return sending


async def _not_found(send: Send) -> None:
    await send({"type": "http.response.start", "status": 404,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"cache-control", b"no-store")]})
    await send({"type": "http.response.body", "body": b"Not found"})


@contextlib.asynccontextmanager
async def lifespan(_app: Any) -> AsyncIterator[None]:
    """At the server's start, before any visitor: expired uploads are deleted and the housekeeping thread runs; what
    the first page needs is loaded in the background (:mod:`luskin_app.warmup`)."""
    from . import housekeeping, warmup

    housekeeping.start_thread()
    warmup.start()
    yield


__all__ = ["Guard", "holding", "installed", "lifespan"]
