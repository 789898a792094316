"""The data a session works on: the bundled samples and uploaded files, and the session's current one.

Switching the data (a sample, an upload, a configured source) sets the choices with it, so it
lives a floor up, in :mod:`luskin_app.session`; this module only reads files and samples.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd
import streamlit as st

from luskin_core.counting.data import PRESETS, frame_fingerprint, load_csv, load_sample, sqf_shared_path
from luskin_core.errors import LuskinError
from luskin_core.spec.dataref import DataRef
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
    # the uploaded bytes' SHA-256 and size (the evidence's fingerprint of the data); None for samples and sources
    raw_digest: tuple[str, int] | None = field(default=None, compare=False)

    @property
    def n_rows(self) -> int:
        """Rows of the data (a configured source's count comes from its engine)."""
        return self.table_rows if self.table_rows is not None else len(self.frame)

    @property
    def ref(self) -> DataRef:
        """The typed reference ``source`` names (which kind of data, and its name)."""
        return DataRef.parse(self.source)

    @property
    def sample(self) -> str | None:
        """The sample's name when the data is a bundled sample, else None."""
        return self.ref.name if self.ref.is_sample else None

    @property
    def file_name(self) -> str:
        """The uploaded file's name, or the sample's name."""
        return self.ref.name


@st.cache_resource(show_spinner="Loading the sample data…", max_entries=4)
def _sample_dataset(name: str) -> Dataset:
    """A bundled sample, loaded once per server (shared; never mutated)."""
    frame = load_sample(name)
    return Dataset(str(DataRef.sample(name)), PRESETS[name].title, frame, frame_fingerprint(frame))


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


def dataset() -> Dataset:
    """The session's current dataset (set when the visit starts: :func:`luskin_app.session.start`)."""
    data = st.session_state.get(keys.DATASET)
    if data is None:  # a programming slip, never a user's: app.py starts every session first
        raise RuntimeError("No dataset in this session: luskin_app.session.start() runs first (app.py does).")
    return data


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
    import hashlib

    return Dataset(str(DataRef.upload(name)), name, frame, frame_fingerprint(frame),
                   raw_digest=(hashlib.sha256(raw).hexdigest(), len(raw)))


def is_new_upload(upload: Any, token_key: str) -> bool:
    """True once per uploaded file: Streamlit hands the same file to every rerun of the page."""
    token = f"{upload.file_id}:{upload.name}:{upload.size}"
    if st.session_state.get(token_key) == token:
        return False
    st.session_state[token_key] = token
    return True
