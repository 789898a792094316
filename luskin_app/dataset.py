"""The data a session works on: the bundled samples and uploaded files.

The session keeps the last dataset that loaded without error: a bad upload never replaces it.
A sample comes with the paper's preset; an uploaded file with first guesses that the user
confirms before the first verdict (see :mod:`luskin_app.choices`). A configuration waiting for
its file (loaded on the Report page before the file) is applied when that file arrives.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd
import streamlit as st

from luskin_core.counting.data import PRESETS, frame_fingerprint, load_csv, load_sample, sqf_shared_path
from luskin_core.errors import LuskinError
from luskin_core.spec.validation import check_column_names

from . import keys

log = logging.getLogger("luskin.app")

DEFAULT_SAMPLE = "adult"
SAMPLE_TITLES = {"adult": "Adult (census income)", "compas": "COMPAS (re-offending)",
                 "sqf": "NYPD stop-and-frisk 2014"}


@dataclass(frozen=True)
class Dataset:
    """The data the session works on: where it came from, the frame, and its fingerprint."""

    source: str          # "sample:adult", "upload:<file name>" or "source:<configured name>"
    title: str
    frame: pd.DataFrame  # for a configured source: its distinct values only (see luskin_app.source_view)
    fingerprint: str
    engine: Any = field(default=None, compare=False, repr=False)  # the opened source the audit runs on, or None
    table_rows: int | None = None  # rows of a configured source (its frame holds none of them)

    @property
    def n_rows(self) -> int:
        """Rows of the data (a configured source's count comes from its engine)."""
        return self.table_rows if self.table_rows is not None else len(self.frame)

    @property
    def sample(self) -> str | None:
        """The sample's name when the data is a bundled sample, else None."""
        return self.source.split(":", 1)[1] if self.source.startswith("sample:") else None

    @property
    def file_name(self) -> str:
        """The uploaded file's name, or the sample's name."""
        return self.source.split(":", 1)[1]


@st.cache_resource(show_spinner="Loading the sample data…", max_entries=4)
def _sample_dataset(name: str) -> Dataset:
    """A bundled sample, loaded once per server (shared; never mutated)."""
    frame = load_sample(name)
    return Dataset(f"sample:{name}", PRESETS[name].title, frame, frame_fingerprint(frame))


def sample_dataset(name: str) -> Dataset:
    """A bundled sample by name (Adult, COMPAS, and SQF when its file is present)."""
    if name not in SAMPLE_TITLES:
        raise LuskinError(f"There is no sample called '{name}'. Samples: {', '.join(SAMPLE_TITLES)}.")
    return private_dataset(_sample_dataset(name))


def private_dataset(data: Dataset) -> Dataset:
    """A session's own handle on a dataset shared by the server's cache: its frame is a copy on write,
    so that adding or changing a column in one session never reaches another."""
    return replace(data, frame=data.frame.copy(deep=False))


def available_samples() -> list[str]:
    """Samples a user can pick: Adult and COMPAS always, SQF when its file is present."""
    return [name for name in SAMPLE_TITLES if name != "sqf" or sqf_shared_path() is not None]


KEY_PARAM = "data"        # ?data=KEY: an upload the server keeps (luskin_app.keep)
KEPT_KEY = keys.KEPT_KEY  # the session's kept upload's key
LOST = keys.KEPT_LOST     # True when the address named an upload that is no longer kept


def dataset() -> Dataset:
    """The current dataset: the upload the address names, else on the first visit the Adult sample."""
    if keys.DATASET not in st.session_state:
        key = st.query_params.get(KEY_PARAM)
        if key and _restore(str(key)):
            return st.session_state[keys.DATASET]
        if key:
            st.session_state[LOST] = True   # said on every page until the user uploads again or moves on
        use_sample(DEFAULT_SAMPLE)
    return st.session_state[keys.DATASET]


def _restore(key: str) -> bool:
    """Bring back a kept upload and its settings (a refresh, a bookmark, a second tab)."""
    from . import keep
    from .choices import guess_choices, set_choices

    kept = keep.load(key)
    if kept is None:
        return False
    name, raw, settings = kept
    try:
        data = read_upload(name, raw)
    except LuskinError:
        return False
    st.session_state[keys.DATASET] = data
    st.session_state[KEPT_KEY] = key
    choices, guesses = guess_choices(data.frame)
    set_choices(choices, confirmed=False, guesses=guesses)
    if settings:
        from .config import apply_configuration

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
    from . import keep
    from .choices import needs_confirmation
    from .config import configuration_json

    if not needs_confirmation():
        try:
            keep.save_settings(key, configuration_json())
        except LuskinError:
            pass


def forget_kept() -> None:
    """Button callback: the server deletes the kept upload now; the address no longer brings it back."""
    from . import keep

    key = st.session_state.pop(KEPT_KEY, None)
    if key:
        keep.forget(key)
    if KEY_PARAM in st.query_params:
        del st.query_params[KEY_PARAM]


def render_lost() -> None:
    """Where the address named an upload that is gone: say so and offer to upload again (never silently)."""
    if not st.session_state.get(LOST):
        return
    from . import keep

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
    from .choices import choices_from_spec, set_choices

    if st.session_state.get(keys.DATASET) is not None:
        st.session_state.pop(LOST, None)   # the user chose a sample: nothing is shown silently any more

    data = sample_dataset(name)
    preset = PRESETS[name]
    st.session_state[keys.DATASET] = data
    set_choices(choices_from_spec(preset.spec, data.frame, features=preset.features), confirmed=True)


def read_upload(name: str, raw: bytes) -> Dataset:
    """Read an uploaded file into a Dataset, or raise LuskinError in plain words (nothing changes)."""
    try:
        frame = load_csv(raw)
    except LuskinError:
        raise
    except Exception as err:
        log.exception("reading the upload %r failed", name)
        raise LuskinError(f"The file could not be read as a table ({type(err).__name__}). Check that it is a "
                          "CSV file (comma, semicolon or tab separated) and not damaged.") from None
    check_column_names(frame)
    return Dataset(f"upload:{name}", name, frame, frame_fingerprint(frame))


def use_upload(name: str, raw: bytes) -> str:
    """Read an uploaded CSV; on success it becomes the dataset, on failure the old one stays.

    The first choices are guesses the user confirms; a configuration waiting for this very file
    is applied instead. Returns a note for the user (empty when there is nothing to add).
    Raises LuskinError with a plain message (empty file, not a CSV, a single column, ...).
    """
    from .choices import guess_choices, set_choices
    from .config import apply_pending_to

    data = read_upload(name, raw)
    choices, guesses = guess_choices(data.frame)
    note = apply_pending_to(data)
    _keep(name, raw)
    if note is None:
        st.session_state[keys.DATASET] = data
        set_choices(choices, confirmed=False, guesses=guesses)
        return ""
    return note


def _keep(name: str, raw: bytes) -> None:
    """Keep the upload on the server under a new unguessable key (the address carries it)."""
    from . import keep

    old = st.session_state.get(KEPT_KEY)
    if old:
        keep.forget(old)
    st.session_state[KEPT_KEY] = keep.store(name, raw)
    st.session_state.pop(LOST, None)


def is_new_upload(upload: Any, token_key: str) -> bool:
    """True once per uploaded file: Streamlit hands the same file to every rerun of the page."""
    token = f"{upload.file_id}:{upload.name}:{upload.size}"
    if st.session_state.get(token_key) == token:
        return False
    st.session_state[token_key] = token
    return True
