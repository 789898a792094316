"""What the session works on, switched as one step: a dataset and the choices that go with it.

Loading data sets the choices (a sample's paper preset, an upload's first guesses, a configuration
waiting for that file), and an upload is kept on the server so that a refresh or a bookmark brings
it back with its settings (:mod:`luskin_app.keep`). Those steps read and write the dataset, the
choices and the saved configuration together, so they sit above all three
(docs/architecture.md): :mod:`luskin_app.dataset` only reads files and samples.

The address carries the kept upload's key (``?data=KEY``). Streamlit's sidebar drops the query string
when it moves to another page, and a page that ends with ``st.stop()`` (a missing choice, a file
without a date column) ends the whole run there: nothing after the page runs, so a key written
only after the page was lost on every such page, and a reload there showed the Adult sample.
:func:`keep_address` therefore runs *before* the page (app.py), and again after it when the page
finishes. Widgets of the newer pages keep their values across pages and with the kept upload
(:func:`hold_page_settings`).
"""

from __future__ import annotations

import logging
from typing import Any

import streamlit as st

from luskin_core.counting.data import PRESETS
from luskin_core.errors import LuskinError

from . import auth, cache, keep, keys, record, source_view, trail, ui
from . import dataset as _dataset
from .choices import choices_from_spec, guess_choices, needs_confirmation, set_choices
from .config import apply_configuration, apply_pending_to, configuration_json

log = logging.getLogger("luskin.app")

KEY_PARAM = "data"        # ?data=KEY: an upload the server keeps (luskin_app.keep)
KEPT_KEY = keys.KEPT_KEY  # the session's kept upload's key
LOST = keys.KEPT_LOST     # True when the address named an upload that is no longer kept
_PLAIN = (str, int, float, bool, type(None))


def start() -> _dataset.Dataset:
    """Once per run, before any page: the session's dataset and choices; on the first visit the upload the
    address names (a refresh, a bookmark, a second tab), else the Adult sample with the paper's settings."""
    if keys.DATASET not in st.session_state:
        key = st.query_params.get(KEY_PARAM)
        if key and _restore(str(key)):
            return _dataset.dataset()
        if key:
            st.session_state[LOST] = True   # said on every page until the user uploads again or moves on
            trail.event("refused", settings={"what": "upload", "why": "not kept for this user (gone, expired or "
                                                                      "someone else's)"},
                        produced={"address": record.hashed(str(key))}, data=None)
        use_sample(_dataset.DEFAULT_SAMPLE)
    return _dataset.dataset()


def _restore(key: str) -> bool:
    """Bring back a kept upload and its settings (a refresh, a bookmark, a second tab): its owner's only."""
    try:
        kept = keep.load(key, auth.user_id())
    except LuskinError as err:   # the server's key or folder is misconfigured: the operator's to fix
        log.warning("kept uploads are unavailable: %s", err)
        return False
    if kept is None:
        return False
    try:
        data = _dataset.read_upload(kept.name, kept.raw)
    except LuskinError:
        return False
    _switch_to(data)  # a first visit: no configuration waits
    st.session_state[KEPT_KEY] = key
    if kept.settings:
        try:
            apply_configuration(kept.settings, kept.name)
        except LuskinError:
            pass   # settings this version cannot read: the file's guesses stay, to be confirmed
    for name, value in kept.page.items():
        if name in keys.PAGE_SETTINGS and _plain(value):
            st.session_state[name] = value
    return True


def _plain(value: Any) -> bool:
    """A widget value that can be kept as JSON (text, a number, a flag, or a list of them)."""
    if isinstance(value, list | tuple):
        return all(isinstance(v, _PLAIN) for v in value)
    return isinstance(value, _PLAIN)


def hold_page_settings(*, write: bool) -> dict[str, Any]:
    """The newer pages' widget values; with ``write`` (before the page) also kept across pages.

    Streamlit forgets a widget's value on a run that does not draw it (another page): writing the value
    back through the Session State API before the page keeps it until its page is drawn again. (After
    the page has drawn its widgets, their values may no longer be written: ``write=False`` then.)
    """
    held: dict[str, Any] = {}
    for name in keys.PAGE_SETTINGS:
        if name in st.session_state:
            value = st.session_state[name]
            if write:
                st.session_state[name] = value
            if _plain(value):
                held[name] = list(value) if isinstance(value, tuple) else value
    return held


def _drop_page_settings() -> None:
    """New data: the pages' own settings (a date column, controls) belong to the old data."""
    for name in keys.PAGE_SETTINGS:
        st.session_state.pop(name, None)


def keep_address(*, before_page: bool) -> None:
    """The kept upload's key in the address, and the current settings kept with it.

    Called before the page (so that a page that stops early still leaves the key in the address, and
    the pages' settings are held across pages) and after it (so that what the page changed is kept too).
    """
    page_settings = hold_page_settings(write=before_page)
    key = st.session_state.get(KEPT_KEY)
    data = st.session_state.get(keys.DATASET)
    if not key or data is None or not data.ref.is_upload:
        if st.query_params.get(KEY_PARAM) and not st.session_state.get(LOST):
            del st.query_params[KEY_PARAM]
        return
    if st.query_params.get(KEY_PARAM) != key:
        st.query_params[KEY_PARAM] = key
    if not needs_confirmation():
        try:
            keep.save_settings(key, configuration_json(), auth.user_id(), page_settings)
        except (LuskinError, OSError) as err:
            log.info("the settings were not kept with the upload (%s)", type(err).__name__)


def kept_note() -> str:
    """What the Data page says about the kept upload: how long, where, who can open it."""
    who = ("you alone (signed in as yourself), with this page's address" if auth.enabled()
           else "whoever has this page's address on this computer")
    return (f"The server keeps this file for {keep.hours_text()}, encrypted, so that a refresh, a bookmark or a "
            f"second tab finds it again; it opens for {who}. 'Forget this file now' deletes it at once.")


def forget_kept() -> None:
    """Button callback: the server deletes the kept upload now; the address no longer brings it back."""
    key = st.session_state.pop(KEPT_KEY, None)
    st.session_state.pop(keys.KEPT_MINE, None)
    if key:
        if keep.forget(key, auth.user_id()):
            trail.event("upload deleted", settings={"how": "forget this file"}, produced={"uploads": 1})
        data = st.session_state.get(keys.DATASET)
        if data is not None and data.ref.is_upload:
            cache.forget_owner(containing=str(data.fingerprint))   # its results go with it
    if KEY_PARAM in st.query_params:
        del st.query_params[KEY_PARAM]


def forget_everything() -> int:
    """Delete every upload (with the settings kept with it) of the signed-in user; the number deleted."""
    deleted = keep.forget_all(auth.user_id())
    cache.forget_owner()   # the results computed for them too: nobody is shown them again
    trail.event("uploads deleted", settings={"how": "forget everything of mine"}, produced={"uploads": deleted},
                data=None)
    st.session_state.pop(KEPT_KEY, None)
    st.session_state.pop(keys.KEPT_MINE, None)
    if KEY_PARAM in st.query_params:
        del st.query_params[KEY_PARAM]
    return deleted


def render_lost() -> None:
    """Where the address named an upload that is gone: say so and offer to upload again (never silently)."""
    if not st.session_state.get(LOST):
        return
    st.warning(f"The file this address pointed to was not found on the server: uploads are kept "
               f"{keep.hours_text()}, until someone presses 'Forget this file', and open only for the person "
               "who uploaded them. What is shown below is the Adult sample, not your data: upload your file "
               "again on the Data page.", icon=":material/cloud_off:")
    if st.button("Understood: continue with the sample", key="kept_lost_ok"):
        st.session_state.pop(LOST, None)
        if KEY_PARAM in st.query_params:
            del st.query_params[KEY_PARAM]
        st.rerun()


def use_sample(name: str) -> None:
    """Switch to a bundled sample and apply its paper preset (no confirmation needed)."""
    if st.session_state.get(keys.DATASET) is not None:
        st.session_state.pop(LOST, None)   # the user chose a sample: nothing is shown silently any more

    data = _dataset.sample_dataset(name)
    preset = PRESETS[name]
    st.session_state[keys.DATASET] = data
    _drop_page_settings()
    set_choices(choices_from_spec(preset.spec, data.frame, features=preset.features), confirmed=True)


def use_upload(name: str, raw: bytes) -> str:
    """Read an uploaded CSV; on success it becomes the dataset, on failure the old one stays.

    The first choices are guesses the user confirms; a configuration waiting for this very file
    is applied instead. Returns a note for the user (empty when there is nothing to add).
    Raises LuskinError with a plain message (empty file, not a CSV, a single column, ...).
    """
    note = _switch_to(_dataset.read_upload(name, raw))
    _keep(name, raw)
    trail.event("upload", produced={"bytes": len(raw), "kept": bool(st.session_state.get(KEPT_KEY))},
                data=trail.fingerprint() if keys.DATASET in st.session_state else None)
    return note


def _switch_to(data: _dataset.Dataset) -> str:
    """Make ``data`` (an upload or a configured source) the session's dataset with its first guesses to
    confirm, or apply the configuration waiting for it instead; returns that configuration's note (or "")."""
    choices, guesses = guess_choices(data.frame)
    _drop_page_settings()
    note = apply_pending_to(data)
    if note is None:
        st.session_state[keys.DATASET] = data
        set_choices(choices, confirmed=False, guesses=guesses)
        return ""
    return note


def _keep(name: str, raw: bytes) -> None:
    """Keep the upload on the server under a new unguessable key (the address carries it).

    The new upload is written first and the one it replaces is deleted only once the new one is kept: a server
    killed in between (or a write that fails) leaves the earlier upload where it was, never neither of them. The
    old one is deleted only when this session made it: an upload opened from someone else's address (a
    colleague's shared link) is theirs to keep.
    """
    old = st.session_state.get(KEPT_KEY) if st.session_state.get(keys.KEPT_MINE) else None
    try:
        new = keep.store(name, raw, auth.user_id())
    except (LuskinError, OSError) as err:   # the data is in use; only a refresh will not find it
        log.warning("an upload could not be kept on the server: %s", err)
        st.session_state.pop(KEPT_KEY, None)   # the address no longer names the earlier upload (not this data)...
        st.session_state.pop(keys.KEPT_MINE, None)
        st.session_state.pop(LOST, None)
        return   # ...which stays kept: its own address (a bookmark) still finds it
    st.session_state[KEPT_KEY] = new
    st.session_state[keys.KEPT_MINE] = True
    if old:
        keep.forget(old, auth.user_id())
    st.session_state.pop(LOST, None)


# --------------------------------------------------------------------------------------------
# A source set up by the administrator (the Data page's picker)
# --------------------------------------------------------------------------------------------
def use_source(name: str) -> str:
    """Make the configured source the session's data (its first choices are guesses to confirm).

    A configuration waiting for this source is applied instead. Returns a note for the user.
    Raises LuskinError in plain words; then the data loaded before stays.
    """
    return _switch_to(source_view.source_dataset(name))


def _open_chosen() -> None:
    name = st.session_state.get(keys.SOURCE_PICK)
    for key in ("source_error", "source_note"):
        st.session_state.pop(key, None)
    if not name:
        return
    try:
        st.session_state[keys.SOURCE_NOTE] = use_source(name)
    except LuskinError as err:
        st.session_state[keys.SOURCE_ERROR] = str(err)
        log.info("the source %r could not be opened", name)


def render_sources() -> None:
    """The sources this user may use beside upload and samples: pick one, open it (no rows are loaded).

    Problems with the settings file are shown to administrators only (on a local app without sign-in,
    its one user is the administrator); an analyst sees the names and descriptions of the sources
    allowed to them, never a location.
    """
    found = source_view.settings()
    admin = auth.is_admin()
    allowed = [s for s in found.sources if auth.may_use_source(s)]
    problems = found.problems if admin else ()
    if found.path is None and not found.sources and not problems:
        return
    if not admin and not allowed:
        return
    with st.expander("Sources set up by your administrator", expanded=bool(allowed or problems),
                     icon=":material/database:"):
        for problem in problems:
            st.warning(ui.md(problem, 600) + " The other sources and the rest of Luskin work as usual.",
                       icon=ui.ICONS["error"])
        if not allowed:
            if not problems:
                st.caption("No source is set up on this server.")
            return
        names = [s.name for s in allowed]
        if st.session_state.get(keys.SOURCE_PICK) not in names:
            st.session_state[keys.SOURCE_PICK] = names[0]
        pick = st.selectbox("Source", names, key="source_pick", format_func=ui.option_text,
                            help="Large tables the audit reads where they live (a file, a database); "
                                 "only counts travel, never the rows.")
        described = next(s for s in allowed if s.name == pick).description
        if described:
            st.caption(ui.md(described, 500))
        st.button("Open this source", key="source_open", on_click=_open_chosen, icon=":material/database:")
        if st.session_state.get(keys.SOURCE_ERROR):
            st.error(ui.md(st.session_state[keys.SOURCE_ERROR], 800) + " The data loaded before is still in use.",
                     icon=ui.ICONS["error"])
        if st.session_state.get(keys.SOURCE_NOTE):
            st.success(ui.md(st.session_state[keys.SOURCE_NOTE]), icon=ui.ICONS["ok"])
