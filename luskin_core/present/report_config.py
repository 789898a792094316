"""The saved configuration: which data, the audit specification and the pages' options, as one JSON document.

Written by the dashboard's Report page (:mod:`luskin_app.config`) and read back by it and by the
command line (``--config``). Moved out of :mod:`luskin_core.present.report`, which re-exports these names.
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from luskin_core.errors import LuskinError
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.spec.dataref import DataRef

CONFIG_KIND = "luskin-configuration"  # the same "kind" as luskin_app.config writes
CONFIG_VERSION = 1


# ------------------------------------------------------------------------------------------
# Configuration document
# ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class DatasetRef:
    """Which data a view was made from: a bundled sample or an uploaded file.

    ``kind`` is "sample" (``name`` is the sample's name, e.g. "adult") or "upload" (``name`` is
    the file's name as uploaded) or "source" (``name`` is a source the dashboard's administrator
    set up, by its name only: its address and password are never saved). ``fingerprint`` is
    :func:`luskin_core.counting.data.frame_fingerprint` of the loaded table, so that loading a configuration
    can tell whether the data is the same. In JSON it is written as the dashboard's ``source``
    string: ``sample:adult``, ``upload:<file name>`` or ``source:<name>``.
    """

    kind: str
    name: str
    fingerprint: str | None = None
    rows: int | None = None
    columns: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("sample", "upload", "source"):
            raise LuskinError(f"A dataset is a 'sample', an 'upload' or a 'source', not '{self.kind}'.")
        if not str(self.name).strip():
            raise LuskinError("The saved configuration does not name its dataset.")

    @classmethod
    def for_frame(cls, name: str, frame: pd.DataFrame | None, *, sample: bool) -> DatasetRef:
        """The reference for a loaded table (computes its fingerprint)."""
        from luskin_core.counting.data import frame_fingerprint

        if frame is None:
            return cls("sample" if sample else "upload", str(name))
        return cls("sample" if sample else "upload", str(name), frame_fingerprint(frame),
                   int(frame.shape[0]), int(frame.shape[1]))

    @classmethod
    def coerce(cls, value: DatasetRef | Mapping[str, Any] | str) -> DatasetRef:
        """Accept a DatasetRef, its dict form, or a string: ``sample:NAME``, ``upload:NAME`` or a file name."""
        if isinstance(value, DatasetRef):
            return value
        if isinstance(value, str):
            ref = DataRef.parse(value)
            return cls("upload" if ref.kind == "file" else ref.kind, ref.name)
        if isinstance(value, Mapping):
            if "source" in value:
                base = cls.coerce(str(value["source"]))
            elif "kind" in value and "name" in value:
                base = cls(str(value["kind"]), str(value["name"]))
            else:
                raise LuskinError("The saved configuration does not say which data it was made from "
                                  "(its 'data' entry lacks 'source').")
            return cls(base.kind, base.name, value.get("fingerprint"), _opt_int(value.get("rows")),
                       _opt_int(value.get("columns")))
        raise LuskinError("The saved dataset reference must be a sample name or a file name.")

    @property
    def source(self) -> str:
        """``sample:NAME`` or ``upload:NAME`` (the dashboard's spelling)."""
        return str(DataRef(self.kind, self.name))  # type: ignore[arg-type]  # kind checked in __post_init__

    @property
    def label(self) -> str:
        """How the dataset is named on screen and in the report."""
        if self.kind == "source":
            return f"source '{self.name}' (set up by the administrator)"
        return f"sample '{self.name}'" if self.kind == "sample" else f"uploaded file '{self.name}'"

    def matches(self, frame: pd.DataFrame) -> bool:
        """True when ``frame`` has this reference's fingerprint (or no fingerprint was saved)."""
        from luskin_core.counting.data import frame_fingerprint

        return self.fingerprint is None or frame_fingerprint(frame) == self.fingerprint

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "fingerprint": self.fingerprint, "rows": self.rows,
                "columns": self.columns}


def _opt_int(value: Any) -> int | None:
    if value is None:
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise LuskinError(f"The saved dataset size '{value}' is not a whole number.") from None


@dataclass(frozen=True)
class LuskinConfig:
    """A saved view: the dataset, the audit specification and everything else saved with them.

    ``extra`` holds the document's other top-level entries (e.g. ``features`` and ``options``,
    the pages' settings), exactly as they were passed to :func:`config_to_json`.
    """

    dataset: DatasetRef
    spec: AuditSpec
    extra: dict[str, Any] = field(default_factory=dict)
    luskin_version: str = ""
    saved_at: str = ""


_RESERVED = ("kind", "version", "luskin_version", "saved_at", "data", "spec")


def json_default(value: Any) -> Any:
    """numpy scalars/arrays, tuples, sets and dates into JSON; anything else is refused plainly."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    if isinstance(value, (_dt.date, _dt.datetime)):
        return value.isoformat()
    if hasattr(value, "to_dict"):
        return value.to_dict()
    raise LuskinError(f"The option value {value!r} cannot be saved in a configuration file.")


def config_to_json(dataset_ref: DatasetRef | Mapping[str, Any] | str, spec: AuditSpec,
                   extra: Mapping[str, Any] | None = None) -> str:
    """The configuration document (pretty JSON) that :func:`config_from_json` reads back.

    Layout: ``{"kind": "luskin-configuration", "version": 1, "luskin_version", "saved_at",
    "data": {"source", "fingerprint", "rows", "columns"}, "spec": {...}, **extra}``; pass the
    pages' settings in ``extra`` (e.g. ``{"features": [...], "options": {"retrain": {...}}}``).
    """
    from luskin_core import __version__

    if not isinstance(spec, AuditSpec):
        raise LuskinError("There is no audit specification to save yet: choose an outcome and a group first.")
    clash = [k for k in (extra or {}) if k in _RESERVED]
    if clash:
        raise LuskinError(f"The option {'name' if len(clash) == 1 else 'names'} {', '.join(clash)} "
                          f"{'is' if len(clash) == 1 else 'are'} reserved in a configuration file.")
    document = {
        "kind": CONFIG_KIND,
        "version": CONFIG_VERSION,
        "luskin_version": __version__,
        "saved_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "data": DatasetRef.coerce(dataset_ref).to_dict(),
        "spec": spec.to_dict(),
        **dict(extra or {}),
    }
    try:
        return json.dumps(document, indent=2, default=json_default, allow_nan=False)
    except ValueError as err:  # NaN / infinity, which JSON cannot hold
        raise LuskinError(f"A setting cannot be saved in a configuration file ({err}).") from None


def config_from_json(text: str | bytes) -> LuskinConfig:
    """Read a configuration document back; anything malformed is a plain LuskinError."""
    from luskin_core.spec.configfile import parse_json_document

    data = parse_json_document(text)  # size, encoding, depth, syntax and entry types checked
    if not isinstance(data, dict) or data.get("kind") != CONFIG_KIND:
        raise LuskinError("This JSON file is not a Luskin configuration (it lacks \"kind\": "
                          f"\"{CONFIG_KIND}\"). Choose a file saved from Luskin's Report page.")
    version = data.get("version", 1)
    if not isinstance(version, int) or version > CONFIG_VERSION:
        raise LuskinError(f"This configuration was saved in format version {version!r}, which this Luskin "
                          f"(format {CONFIG_VERSION}) cannot read. Update Luskin.")
    for key in ("data", "spec"):
        if not data.get(key):
            raise LuskinError(f"The configuration file lacks its '{key}' entry.")
    if not isinstance(data["data"], dict):
        raise LuskinError("The configuration's 'data' entry must say which data was used.")
    try:
        spec = AuditSpec.from_dict(data["spec"])
    except LuskinError as err:
        raise LuskinError(f"The saved audit settings are not usable: {err}") from None
    except (TypeError, ValueError, AttributeError) as err:
        raise LuskinError(f"The saved audit settings are malformed ({err}).") from None
    extra = {k: v for k, v in data.items() if k not in _RESERVED}
    return LuskinConfig(DatasetRef.coerce(data["data"]), spec, extra,
                        str(data.get("luskin_version", "")), str(data.get("saved_at", "")))
