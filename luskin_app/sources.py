"""The data sources the server's operator sets up: a TOML settings file of named sources.

The file is found through the ``LUSKIN_SOURCES`` environment variable (read, never set), else
``.streamlit/luskin_sources.toml`` in the working folder, else ``~/.config/luskin/sources.toml``.
Each ``[[source]]`` entry has a ``name`` (what analysts see and what a saved configuration refers
to), a ``location`` (a file, a folder of Parquet files, a DuckDB file, ``postgresql://...`` or
``spark:``; relative paths are taken from the settings file's folder), an optional ``table`` (a
table, or a SELECT query for PostgreSQL), an optional ``description``, ``sample_cap`` and, for an engine
that can stop a slow query (PostgreSQL), ``statement_timeout`` (seconds a query may run), and the
password, if any, as ``password_env`` (an environment variable's name) or ``password_file`` (a
file holding it). See ``docs/sources.example.toml``.

A password never leaves this module: it is not kept in :class:`SourceSetting` (a typed one only sealed),
not shown in any message or log line, and a location with a password written in it is refused. The settings are
read on every call (the operator may edit the file while the server runs); a problem with the
file or an entry is one plain sentence, and the other entries stay usable.

Administrators may also add and remove sources on the Administration page (when sign-in is on, or on a
local app): those are kept on the server in ``LUSKIN_STATE_DIR/sources/sources.json`` (mode 0600, written
atomically; :func:`add_source`, :func:`remove_source`), in the same form and with the same checks as a
``[[source]]`` entry; a password is named by ``password_env`` or ``password_file``, or typed on the page and
kept encrypted under the server's key (``password_sealed``: AES-256-GCM, luskin_app.keep), never as typed. They are
listed with the file's sources (a name the file uses too is the file's). The file's sources are changed by
editing the file only.

An administrator is not the operator: what the page may name is bounded (:func:`check_place`). A file, folder or
password file must lie inside a folder the operator names in ``LUSKIN_SOURCE_FOLDERS`` (none named: the page adds
databases only), and never in or above the server's own files (the state folder with the kept uploads and the
record, the key files, the secrets files, the sources settings file), whatever links lead there; an environment
variable it names must start with ``LUSKIN_SOURCE_PASSWORD_``. The check is made when the source is added and
again each time it is opened (a link swapped in later finds nothing).

This module does not import Streamlit (see :mod:`luskin_app.source_view` for the page).
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit, urlunsplit

from luskin_core.counting.engines import address_engine, address_prefixes, engine_for, local_path
from luskin_core.counting.sources import DEFAULT_SAMPLE_CAP, Source, open_source
from luskin_core.errors import LuskinError

log = logging.getLogger("luskin.app.sources")

ENV_VAR = "LUSKIN_SOURCES"
FOLDERS_VAR = "LUSKIN_SOURCE_FOLDERS"   # the folders administrators may name on the page (os.pathsep-separated)
QUERY_TIMEOUT_VAR = "LUSKIN_QUERY_TIMEOUT"   # seconds any one query of a source may run (its own setting first)
PASSWORD_ENV_PREFIX = "LUSKIN_SOURCE_PASSWORD_"   # the only environment variables a page-added source may name
LOCAL_FILE = Path(".streamlit") / "luskin_sources.toml"
USER_FILE = Path("~/.config/luskin/sources.toml")
MAX_SETTINGS_BYTES = 1_000_000
MAX_PASSWORD_BYTES = 10_000
_KEYS = {"name", "location", "table", "password_env", "password_file", "description", "sample_cap",
         "statement_timeout", "groups"}   # a settings file's; the page's store also holds "password_sealed"
SEALED_PURPOSE = "source-password"   # what a typed password is sealed for (luskin_app.keep.seal_text)


@dataclass(frozen=True)
class SourceSetting:
    """One configured source, as the settings file names it (never holding a password)."""

    name: str
    location: str = field(repr=False)
    table: str | None = field(default=None, repr=False)
    password_env: str | None = field(default=None, repr=False)
    password_file: str | None = field(default=None, repr=False)
    description: str = ""
    sample_cap: int = DEFAULT_SAMPLE_CAP
    statement_timeout: float | None = None   # seconds a query may run (None: the engine's default)
    groups: tuple[str, ...] = ()   # who may use it when sign-in is on (groups or roles); empty: every analyst
    password_sealed: str | None = field(default=None, repr=False)   # typed on the Administration page, encrypted
    added: bool = False   # added on the Administration page (its places are checked again each time it is opened)

    @property
    def key(self) -> str:
        """What identifies the opened source in the server's caches (no password in it)."""
        return "\x1f".join((self.name, self.location, self.table or "", self.password_env or "",
                            self.password_file or "", self.password_sealed or ""))

    @property
    def is_url(self) -> bool:
        """A database address (PostgreSQL, Spark) rather than a file or folder."""
        return address_engine(self.location) is not None


@dataclass(frozen=True)
class Settings:
    """The operator's sources, the file they came from, and the problems found (plain sentences)."""

    path: Path | None
    sources: tuple[SourceSetting, ...] = ()
    problems: tuple[str, ...] = ()
    added: tuple[str, ...] = ()   # the names of the sources added on the Administration page (removable there)

    def get(self, name: str) -> SourceSetting:
        for setting in self.sources:
            if setting.name == name:
                return setting
        raise LuskinError(f"No source named '{name}' is set up on this server"
                          + (": ask the administrator." if self.sources or self.path else
                             " (there is no sources settings file)."))


def settings_path(environ: Mapping[str, str] | None = None) -> Path | None:
    """The settings file to read: $LUSKIN_SOURCES, else the local, else the user's file; None when none exists."""
    env = os.environ if environ is None else environ
    named = env.get(ENV_VAR, "").strip()
    if named:
        return Path(named).expanduser()  # named explicitly: a missing file is reported, not skipped
    for candidate in (LOCAL_FILE, USER_FILE.expanduser()):
        if candidate.is_file():
            return candidate
    return None


def load_settings(path: Path | None = None, environ: Mapping[str, str] | None = None) -> Settings:
    """The configured sources (the settings file's, then those added on the Administration page); never
    raises (a problem becomes a sentence in ``problems``)."""
    path = path if path is not None else settings_path(environ)
    if path is None:
        found = Settings(None)
    else:
        try:
            found = read_settings(path)
        except LuskinError as err:
            log.warning("sources settings file %s not used: %s", path.name, err)
            found = Settings(path, (), (str(err),))
    added, problems = _read_added(store_path(environ))
    taken = {s.name for s in found.sources}
    clashes = [s.name for s in added if s.name in taken]
    problems += [f"The source '{name}' added on the Administration page has the name of a source in the settings "
                 "file; the file's is used: remove the added one." for name in clashes]
    kept = tuple(s for s in added if s.name not in taken)
    return Settings(found.path, found.sources + kept, found.problems + tuple(problems), tuple(s.name for s in kept))


# --------------------------------------------------------------------------------------------
# Sources added on the Administration page: kept by the server, in its state folder
# --------------------------------------------------------------------------------------------
_STORE_LOCK = threading.Lock()
_STORE_KEYS = ("name", "location", "table", "password_env", "password_file", "description", "statement_timeout",
               "groups")


def store_path(environ: Mapping[str, str] | None = None) -> Path:
    """Where the sources added on the Administration page are kept (read from the environment, never set)."""
    env = os.environ if environ is None else environ
    state = Path(env.get("LUSKIN_STATE_DIR", "").strip() or "~/.local/state/luskin").expanduser()
    return state / "sources" / "sources.json"


def _read_entries(path: Path) -> list[dict[str, Any]]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as err:
        raise LuskinError("The sources added on the Administration page could not be read from the server's "
                          f"state folder ({type(err).__name__}).") from None
    entries = value.get("source") if isinstance(value, dict) else None
    return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []


def _read_added(path: Path) -> tuple[list[SourceSetting], list[str]]:
    try:
        entries = _read_entries(path)
    except LuskinError as err:
        return [], [str(err)]
    added: list[SourceSetting] = []
    problems: list[str] = []
    for number, entry in enumerate(entries, start=1):
        try:
            added.append(_entry(entry, number, path.parent, stored=True))
        except LuskinError as err:
            problems.append(f"{err} (added on the Administration page)")
    return added, problems


def _write_entries(path: Path, entries: list[dict[str, Any]]) -> None:
    """Write the added sources whole or not at all, readable by the server only (keep's atomic write)."""
    from .keep import write_atomic

    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    write_atomic(path, json.dumps({"source": entries}, indent=2).encode("utf-8"))


def _state_dir(env: Mapping[str, str]) -> Path:
    return Path(env.get("LUSKIN_STATE_DIR", "").strip() or "~/.local/state/luskin").expanduser()


def allowed_folders(environ: Mapping[str, str] | None = None) -> tuple[Path, ...]:
    """The folders the operator lets administrators name on the page (``LUSKIN_SOURCE_FOLDERS``), resolved."""
    env = os.environ if environ is None else environ
    named = [part.strip() for part in env.get(FOLDERS_VAR, "").split(os.pathsep) if part.strip()]
    return tuple(Path(part).expanduser().resolve() for part in named if Path(part).expanduser().is_absolute())


def protected_places(environ: Mapping[str, str] | None = None, secrets_files: tuple[str, ...] = ()) -> tuple[Path, ...]:
    """The server's own files, which no source added on the page may read: the state folder (kept uploads, the
    record, the sign-in and keep keys), the key files named elsewhere, the record, the sources settings file and
    the secrets files (``secrets_files``, as Streamlit reads them; its two default places too)."""
    env = os.environ if environ is None else environ
    places: list[str | Path] = [_state_dir(env), Path("~/.streamlit/secrets.toml").expanduser(),
                                Path(".streamlit/secrets.toml"), *secrets_files]
    for name in ("LUSKIN_KEEP_KEY_FILE", "LUSKIN_RECORD_KEY_FILE", "LUSKIN_RECORD_FILE", ENV_VAR, "LUSKIN_SECRETS"):
        if env.get(name, "").strip():
            places.append(env[name].strip())
    found = settings_path(env)
    if found is not None:
        places.append(found)
    return tuple(dict.fromkeys(Path(p).expanduser().resolve() for p in places))


def check_place(text: str, what: str, environ: Mapping[str, str] | None = None,
                secrets_files: tuple[str, ...] = ()) -> None:
    """Refuse, in plain words, a path an administrator named on the page (a file, a folder, a password file) that
    is not inside a folder the operator allows, or that is, holds or lies inside one of the server's own files.
    Links are followed first: the place checked is where the path really leads."""
    path = Path(text).expanduser()
    if not path.is_absolute():
        raise LuskinError(f"{what}: give the full path on the server (it starts with /).")
    real = path.resolve()
    for place in protected_places(environ, secrets_files):
        if real == place or place in real.parents or real in place.parents:
            raise LuskinError(f"{what}: that place holds the server's own files (its kept uploads, record, keys or "
                              "secrets), which no source may read.")
    folders = allowed_folders(environ)
    if not folders:
        raise LuskinError(f"{what}: on this server a file can be added here only from a folder the operator names in "
                          f"{FOLDERS_VAR}, and none is named. Ask the operator, or have the file put in the sources "
                          "settings file.")
    if not any(real == f or f in real.parents for f in folders):
        raise LuskinError(f"{what}: the file is outside the folders the operator lets administrators use "
                          f"({FOLDERS_VAR}).")


def check_added_places(setting: SourceSetting, environ: Mapping[str, str] | None = None,
                       secrets_files: tuple[str, ...] = ()) -> None:
    """The places a page-added source reads (its file or folder, its password file, its variable), checked."""
    what = f"The source '{setting.name}'"
    path = local_path(setting.location)
    if path is not None:
        check_place(path, what, environ, secrets_files)
    if setting.password_file:
        check_place(setting.password_file, f"{what}'s password file", environ, secrets_files)
    if setting.password_env and not setting.password_env.startswith(PASSWORD_ENV_PREFIX):
        raise LuskinError(f"{what}: a source added here may take its password only from an environment variable "
                          f"whose name starts with {PASSWORD_ENV_PREFIX} (the operator sets those for sources).")


def add_source(entry: Mapping[str, Any], environ: Mapping[str, str] | None = None,
               secrets_files: tuple[str, ...] = ()) -> SourceSetting:
    """Check and keep a source an administrator added (the same checks as a [[source]] entry); LuskinError in
    plain words when it cannot be used. A file's location must be a full path on the server. A ``password``
    typed on the page is kept encrypted with the server's key (luskin_app.keep.seal_text), never as typed."""
    typed = entry.get("password")
    clean = {k: v.strip() if isinstance(v, str) else v for k, v in entry.items() if k in _STORE_KEYS}
    clean = {k: v for k, v in clean.items() if v not in (None, "", [], ())}
    groups = clean.get("groups")
    if isinstance(groups, str):
        groups = [groups]
    if isinstance(groups, (list, tuple)):   # blank names dropped (a trailing comma in the page's field)
        clean["groups"] = [g.strip() for g in groups if not isinstance(g, str) or g.strip()]
        if not clean["groups"]:
            del clean["groups"]
    if not clean.get("name"):
        raise LuskinError("Give the source a name: analysts see it by that name.")
    if not clean.get("location"):
        raise LuskinError("Give the source's location: a file or folder on the server, a DuckDB file, "
                          "postgresql://... or spark:.")
    if isinstance(typed, str) and typed:
        from .keep import seal_text

        if clean.get("password_env") or clean.get("password_file"):
            raise LuskinError(f"The source '{clean['name']}': type the password, or name where the server keeps "
                              "it, not both.")
        clean["password_sealed"] = seal_text(SEALED_PURPOSE, typed)
    setting = _entry(clean, 1, Path("/"), stored=True)
    if not engine_for(setting.location).is_address and not Path(str(clean["location"])).expanduser().is_absolute():
        raise LuskinError(f"The source '{setting.name}': give the file's or folder's full path on the server "
                          "(it starts with /).")
    for key in ("password_file",):
        if clean.get(key) and not Path(str(clean[key])).expanduser().is_absolute():
            raise LuskinError(f"The source '{setting.name}': give the password file's full path on the server.")
    check_added_places(setting, environ, secrets_files)
    clean["name"] = setting.name
    path = store_path(environ)
    with _STORE_LOCK:
        if any(s.name == setting.name for s in load_settings(environ=environ).sources):
            raise LuskinError(f"A source named '{setting.name}' is set up already: choose another name, or remove "
                              "that one first.")
        entries = _read_entries(path)
        _write_entries(path, [*entries, clean])
    log.info("a source was added on the Administration page: %r", setting.name)
    return setting


def remove_source(name: str, environ: Mapping[str, str] | None = None) -> bool:
    """Remove a source added on the Administration page; whether there was one of that name (the settings
    file's sources are removed by editing the file)."""
    path = store_path(environ)
    with _STORE_LOCK:
        entries = _read_entries(path)
        kept = [e for e in entries if " ".join(str(e.get("name", "")).split())[:200] != name]
        if len(kept) == len(entries):
            return False
        _write_entries(path, kept)
    log.info("a source was removed on the Administration page: %r", name)
    return True


def read_settings(path: Path) -> Settings:
    """Read and check a settings file; raise LuskinError when the file as a whole cannot be used.

    A bad entry does not spoil the others: it is left out and its problem is listed.
    """
    shown = path.name
    try:
        if path.stat().st_size > MAX_SETTINGS_BYTES:
            raise LuskinError(f"The sources settings file '{shown}' is too large to be a settings file.")
        raw = path.read_bytes()
    except FileNotFoundError:
        raise LuskinError(f"The sources settings file '{shown}' does not exist (check {ENV_VAR}).") from None
    except OSError:
        raise LuskinError(f"The sources settings file '{shown}' could not be read.") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise LuskinError(f"The sources settings file '{shown}' is not a text file (UTF-8).") from None
    except tomllib.TOMLDecodeError as err:
        where = f" ({err.args[0].split('(', 1)[1].rstrip(')')})" if "(at line" in str(err) else ""
        raise LuskinError(f"The sources settings file '{shown}' is not valid TOML{where}.") from None
    entries = data.get("source")
    if entries is None:
        raise LuskinError(f"The sources settings file '{shown}' lists no sources: add [[source]] entries.")
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise LuskinError(f"In the sources settings file '{shown}', 'source' must be a list of [[source]] tables.")
    sources: list[SourceSetting] = []
    problems: list[str] = []
    for number, entry in enumerate(entries, start=1):
        try:
            setting = _entry(entry, number, path.parent)
        except LuskinError as err:
            problems.append(str(err))
            continue
        if any(s.name == setting.name for s in sources):
            problems.append(f"The source name '{setting.name}' is used twice; only the first is listed.")
            continue
        sources.append(setting)
    return Settings(path, tuple(sources), tuple(problems))


def _text(entry: Mapping[str, Any], key: str, what: str) -> str | None:
    value = entry.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise LuskinError(f"{what}: '{key}' must be a non-empty text.")
    return value.strip()


def _entry(entry: Mapping[str, Any], number: int, folder: Path, *, stored: bool = False) -> SourceSetting:
    """One [[source]] entry, checked; relative file locations are taken from the settings file's folder.
    ``stored``: an entry of the Administration page's store, which may hold a sealed typed password."""
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise LuskinError(f"Source number {number} in the settings file has no name.")
    name = " ".join(name.split())[:200]
    what = f"The source '{name}'"
    unknown = sorted(set(entry) - _KEYS - ({"password_sealed"} if stored else set()))
    if unknown:
        raise LuskinError(f"{what} has settings Luskin does not know: {', '.join(unknown)} "
                          f"(known: {', '.join(sorted(_KEYS))}).")
    location = _text(entry, "location", what)
    if location is None:
        raise LuskinError(f"{what} has no location (a file, a folder, a DuckDB file or postgresql://...).")
    table = _text(entry, "table", what)
    found, (password_env, password_file, password_sealed) = _entry_passwords(entry, what, location, stored=stored)
    if not found.is_address:
        location = _from_folder(location, folder)
    if password_file:
        password_file = _from_folder(password_file, folder)
    description = entry.get("description", "")
    if not isinstance(description, str):
        raise LuskinError(f"{what}: 'description' must be a text.")
    cap, timeout = _entry_limits(entry, what, found)
    return SourceSetting(name, location, table, password_env, password_file, description.strip()[:500], cap,
                         timeout, _entry_groups(entry, what), password_sealed=password_sealed, added=stored)


def _from_folder(location: str, folder: Path) -> str:
    """A file's location, a relative one taken from the settings file's folder."""
    path = Path(location).expanduser()
    return str(path if path.is_absolute() else folder / path)


def _entry_passwords(entry: Mapping[str, Any], what: str, location: str, *,
                     stored: bool) -> tuple[Any, tuple[str | None, str | None, str | None]]:
    """The location's engine, and where the entry's password is kept (an environment variable, a file, or sealed in
    the store): at most one, never in the location, none for a file or DuckDB database."""
    password_env = _text(entry, "password_env", what)
    password_file = _text(entry, "password_file", what)
    password_sealed = _text(entry, "password_sealed", what) if stored else None
    if password_env and password_file:
        raise LuskinError(f"{what} names both password_env and password_file: keep one.")
    if password_sealed and (password_env or password_file):
        raise LuskinError(f"{what} has a typed password and names where the server keeps one: keep one.")
    found = engine_for(location)
    if found.takes_password:
        if urlsplit(location).password is not None:
            raise LuskinError(f"{what} has a password written in its location: move it to an environment "
                              "variable (password_env) or a file (password_file).")
    elif (password_env or password_file or password_sealed) and not found.is_address:
        raise LuskinError(f"{what} is a file or DuckDB database, which takes no password.")
    return found, (password_env, password_file, password_sealed)


def _entry_limits(entry: Mapping[str, Any], what: str, found: Any) -> tuple[int, float | None]:
    """The entry's sample cap (rows) and statement timeout (seconds, only for an engine that can stop a query)."""
    cap = entry.get("sample_cap", DEFAULT_SAMPLE_CAP)
    if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
        raise LuskinError(f"{what}: 'sample_cap' must be a whole number of rows, at least 1.")
    timeout = entry.get("statement_timeout")
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= 86_400:
            raise LuskinError(f"{what}: 'statement_timeout' must be a number of seconds, more than 0 and at most "
                              "86400 (a day).")
        if not found.statement_timeout:
            raise LuskinError(f"{what}: a {found.title} source cannot stop a slow query, so it takes no "
                              "'statement_timeout'.")
    return int(cap), None if timeout is None else float(timeout)


def _entry_groups(entry: Mapping[str, Any], what: str) -> tuple[str, ...]:
    """The groups or roles that may use the source (a name alone stands for a list of one)."""
    groups = entry.get("groups", [])
    if isinstance(groups, str):
        groups = [groups]
    if not isinstance(groups, list) or not all(isinstance(g, str) and g.strip() for g in groups):
        raise LuskinError(f"{what}: 'groups' must be a list of group or role names (e.g. [\"analysts\"]).")
    return tuple(g.strip() for g in groups)


def _password(setting: SourceSetting, environ: Mapping[str, str] | None = None) -> str | None:
    """The source's password from its environment variable or file (read each time; never logged)."""
    if setting.password_env:
        env = os.environ if environ is None else environ
        value = env.get(setting.password_env)
        if not value:
            raise LuskinError(f"The password of '{setting.name}' is not available: the environment variable "
                              f"{setting.password_env} is not set on the server. Ask the administrator.")
        return value
    if setting.password_sealed:
        from .keep import open_text

        try:
            return open_text(SEALED_PURPOSE, setting.password_sealed)
        except (ValueError, LuskinError):
            raise LuskinError(f"The password kept for '{setting.name}' does not open with this server's key (was "
                              "the key file changed?). Ask the administrator to add the source again.") from None
    if setting.password_file:
        path = Path(setting.password_file)
        try:
            if path.stat().st_size > MAX_PASSWORD_BYTES:
                raise LuskinError(f"The password file of '{setting.name}' is too large to hold a password.")
            value = path.read_text(encoding="utf-8").strip("\r\n")
        except (OSError, UnicodeDecodeError):
            raise LuskinError(f"The password file of '{setting.name}' could not be read. "
                              "Ask the administrator.") from None
        if not value:
            raise LuskinError(f"The password file of '{setting.name}' is empty. Ask the administrator.")
        return value
    return None


def _with_password(url: str, password: str) -> str:
    """The PostgreSQL URL with the password put in (percent-encoded, so any character is safe)."""
    parts = urlsplit(url)
    user = quote(parts.username or "", safe="")
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, f"{user}:{quote(password, safe='')}@{host}", parts.path, parts.query,
                       parts.fragment))


def query_timeout(setting: SourceSetting, environ: Mapping[str, str] | None = None) -> float:
    """The per-query deadline of ``setting``: its own ``statement_timeout``, else the server's ``LUSKIN_QUERY_TIMEOUT``
    (seconds, for every source), else the default (:data:`~luskin_core.counting.deadline.DEFAULT_DEADLINE`). A
    server setting that is not a number of seconds is said in the log and the default used."""
    from luskin_core.counting.deadline import DEFAULT_DEADLINE, checked_deadline

    if setting.statement_timeout is not None:
        return setting.statement_timeout
    value = (os.environ if environ is None else environ).get(QUERY_TIMEOUT_VAR, "").strip()
    try:
        return checked_deadline(value or None, QUERY_TIMEOUT_VAR)
    except LuskinError as err:
        log.warning("%s; the default of %g seconds is used", str(err).rstrip("."), DEFAULT_DEADLINE)
        return DEFAULT_DEADLINE


def open_setting(setting: SourceSetting, environ: Mapping[str, str] | None = None,
                 secrets_files: tuple[str, ...] = ()) -> Source:
    """Open a configured source through the engine (no rows are read); LuskinError in plain words. A source added
    on the Administration page has its places checked again first (:func:`check_added_places`)."""
    if setting.added:
        try:
            check_added_places(setting, environ, secrets_files)
        except LuskinError as err:
            log.warning("the source %r added on the Administration page was not opened: %s", setting.name, err)
            raise LuskinError(f"The source '{setting.name}' could not be opened: it reads a place this server does "
                              "not allow. Ask the administrator.") from None
    password = _password(setting, environ)
    location = setting.location
    if setting.added and not engine_for(location).is_address:
        location = str(Path(location).expanduser().resolve())   # where the check found it, not a link swapped later
    if password is not None and engine_for(location).takes_password:
        location = _with_password(location, password)
    settings = {"statement_timeout": query_timeout(setting, environ)}
    try:
        source = open_source(location, setting.table, **settings)
        source.n_rows()  # reaches the engine now, so an unreachable source is said at once
    except LuskinError as err:
        log.warning("opening the source %r failed: %s", setting.name, _scrub(str(err), password))
        raise LuskinError(f"The source '{setting.name}' could not be opened: "
                          f"{hide_details(_scrub(str(err), password), setting)}") from None
    except Exception as err:  # noqa: BLE001 - any engine failure is one plain sentence (never its text)
        log.warning("opening the source %r failed (%s)", setting.name, type(err).__name__)
        raise LuskinError(f"The source '{setting.name}' could not be opened: the engine refused it "
                          f"({type(err).__name__}). Ask the administrator.") from None
    log.info("opened the source %r (%s, %s rows)", setting.name, source.kind, f"{source.n_rows():,}")
    # Analysts see a source by its name (and description) only: the engine's own name for it holds the
    # user, host, socket folder, port, database or file path, and every message the core words about the
    # source (no rows, a lost connection, a missing column) uses it.
    source.name = f"'{setting.name}'"
    return source


_DETAILS = re.compile("(?:" + "|".join(re.escape(p) for p in address_prefixes()) + r")[^\s'\"),;]*(?: \(query\))?",
                      re.IGNORECASE)


def hide_details(text: str, setting: SourceSetting) -> str:
    """A message about ``setting`` with its connection details (URL, user, host, port, socket, path) replaced
    by the source's name: analysts are promised the name and the description only."""
    shown = f"'{setting.name}'"
    forms = {setting.location, Path(setting.location).name} if not setting.is_url else {setting.location}
    if engine_for(setting.location).takes_password:   # a server's address: its host and user are details too
        parts = urlsplit(setting.location)
        for value in (parts.hostname, *parse_qs(parts.query).get("host", []), parts.username):
            if value:
                forms.add(value)
    text = _DETAILS.sub(shown, text)           # whole URLs first, then what is left of them
    for form in sorted((f for f in forms if f and len(f) > 1), key=len, reverse=True):
        text = text.replace(form, shown)
    return text.replace(f"'{shown}'", shown)


def _scrub(text: str, password: str | None) -> str:
    """A message with any copy of the password (plain or percent-encoded) blotted out."""
    if password:
        for form in {password, quote(password, safe="")}:
            text = text.replace(form, "•••")
    return text
