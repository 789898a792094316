"""What the session works on, switched as one step: a dataset and the choices that go with it.

Loading data sets the choices (a sample's paper preset, an upload's first guesses, a configuration
waiting for that file), and an upload is kept on the server so that a refresh or a bookmark brings
it back with its settings (:mod:`luskin_app.keep`). Those steps read and write the dataset, the
choices and the saved configuration together, so they sit above all three
(docs/architecture.md): :mod:`luskin_app.dataset` only reads files and samples.
"""

from __future__ import annotations

import logging

import streamlit as st

from luskin_core.counting.data import PRESETS
from luskin_core.errors import LuskinError

from . import dataset as _dataset
from . import keep, keys, source_view, ui
from .choices import choices_from_spec, guess_choices, needs_confirmation, set_choices
from .config import apply_configuration, apply_pending_to, configuration_json

log = logging.getLogger("luskin.app")

KEY_PARAM = "data"        # ?data=KEY: an upload the server keeps (luskin_app.keep)
KEPT_KEY = keys.KEPT_KEY  # the session's kept upload's key
LOST = keys.KEPT_LOST     # True when the address named an upload that is no longer kept


def start() -> _dataset.Dataset:
    """Once per run, before any page: the session's dataset and choices; on the first visit the upload the
    address names (a refresh, a bookmark, a second tab), else the Adult sample with the paper's settings."""
    if keys.DATASET not in st.session_state:
        key = st.query_params.get(KEY_PARAM)
        if key and _restore(str(key)):
            return _dataset.dataset()
        if key:
            st.session_state[LOST] = True   # said on every page until the user uploads again or moves on
        use_sample(_dataset.DEFAULT_SAMPLE)
    return _dataset.dataset()


def _restore(key: str) -> bool:
    """Bring back a kept upload and its settings (a refresh, a bookmark, a second tab)."""
    kept = keep.load(key)
    if kept is None:
        return False
    name, raw, settings = kept
    try:
        data = _dataset.read_upload(name, raw)
    except LuskinError:
        return False
    _switch_to(data)  # a first visit: no configuration waits
    st.session_state[KEPT_KEY] = key
    if settings:
        try:
            apply_configuration(settings, name)
        except LuskinError:
            pass   # settings this version cannot read: the file's guesses stay, to be confirmed
    return True


def keep_address() -> None:
    """Once per run: the kept upload's key in the address, and the current settings kept with it."""
    key = st.session_state.get(KEPT_KEY)
    data = st.session_state.get(keys.DATASET)
    if not key or data is None or not data.source.startswith("upload:"):
        if st.query_params.get(KEY_PARAM) and not st.session_state.get(LOST):
            del st.query_params[KEY_PARAM]
        return
    if st.query_params.get(KEY_PARAM) != key:
        st.query_params[KEY_PARAM] = key
    if not needs_confirmation():
        try:
            keep.save_settings(key, configuration_json())
        except LuskinError:
            pass


def forget_kept() -> None:
    """Button callback: the server deletes the kept upload now; the address no longer brings it back."""
    key = st.session_state.pop(KEPT_KEY, None)
    if key:
        keep.forget(key)
    if KEY_PARAM in st.query_params:
        del st.query_params[KEY_PARAM]


def render_lost() -> None:
    """Where the address named an upload that is gone: say so and offer to upload again (never silently)."""
    if not st.session_state.get(LOST):
        return
    st.warning(f"The file this address pointed to is no longer kept on the server (uploads are kept "
               f"{keep.KEEP_HOURS} hours, or until someone presses 'Forget this file'). What is shown below is "
               "the Adult sample, not your data: upload your file again on the Data page.",
               icon=":material/cloud_off:")
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
    set_choices(choices_from_spec(preset.spec, data.frame, features=preset.features), confirmed=True)


def use_upload(name: str, raw: bytes) -> str:
    """Read an uploaded CSV; on success it becomes the dataset, on failure the old one stays.

    The first choices are guesses the user confirms; a configuration waiting for this very file
    is applied instead. Returns a note for the user (empty when there is nothing to add).
    Raises LuskinError with a plain message (empty file, not a CSV, a single column, ...).
    """
    note = _switch_to(_dataset.read_upload(name, raw))
    _keep(name, raw)
    return note


def _switch_to(data: _dataset.Dataset) -> str:
    """Make ``data`` (an upload or a configured source) the session's dataset with its first guesses to
    confirm, or apply the configuration waiting for it instead; returns that configuration's note (or "")."""
    choices, guesses = guess_choices(data.frame)
    note = apply_pending_to(data)
    if note is None:
        st.session_state[keys.DATASET] = data
        set_choices(choices, confirmed=False, guesses=guesses)
        return ""
    return note


def _keep(name: str, raw: bytes) -> None:
    """Keep the upload on the server under a new unguessable key (the address carries it)."""
    old = st.session_state.get(KEPT_KEY)
    if old:
        keep.forget(old)
    st.session_state[KEPT_KEY] = keep.store(name, raw)
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
    """The administrator's sources beside upload and samples: pick one, open it (no rows are loaded)."""
    found = source_view.settings()
    if found.path is None and not found.problems:
        return
    with st.expander("Sources set up by your administrator", expanded=bool(found.sources or found.problems),
                     icon=":material/database:"):
        for problem in found.problems:
            st.warning(ui.md(problem, 600) + " The other sources and the rest of Luskin work as usual.",
                       icon=ui.ICONS["error"])
        if not found.sources:
            if not found.problems:
                st.caption("No source is set up on this server.")
            return
        names = [s.name for s in found.sources]
        if st.session_state.get(keys.SOURCE_PICK) not in names:
            st.session_state[keys.SOURCE_PICK] = names[0]
        pick = st.selectbox("Source", names, key="source_pick", format_func=ui.option_text,
                            help="Large tables the audit reads where they live (a file, a database); "
                                 "only counts travel, never the rows.")
        described = next(s for s in found.sources if s.name == pick).description
        if described:
            st.caption(ui.md(described, 500))
        st.button("Open this source", key="source_open", on_click=_open_chosen, icon=":material/database:")
        if st.session_state.get(keys.SOURCE_ERROR):
            st.error(ui.md(st.session_state[keys.SOURCE_ERROR], 800) + " The data loaded before is still in use.",
                     icon=ui.ICONS["error"])
        if st.session_state.get(keys.SOURCE_NOTE):
            st.success(ui.md(st.session_state[keys.SOURCE_NOTE]), icon=ui.ICONS["ok"])
