"""Canonical JSON: one byte string per value, so that its SHA-256 is stable wherever it is written.

Keys sorted, no spaces, UTF-8, floats by Python's ``repr`` (the shortest text that reads back to the same
double, the same on every platform), numpy scalars and arrays as plain numbers and lists, tuples as lists.
JSON has no NaN or infinity: they are written as the strings ``"NaN"``, ``"Infinity"`` and ``"-Infinity"``
(a recomputed result goes through the same function, so they compare alike). The count table's own form
(:func:`count_table_dict`, :func:`count_table_from_dict`) lives here too: the evidence's counts and the data's
fingerprint are both made of it.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from luskin_core.counting.count_table import CountTable
from luskin_core.counting.plan import COUNT_COLUMNS
from luskin_core.errors import LuskinError

_FLOATS = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def plain(value: Any) -> Any:
    """``value`` made of dicts (string keys), lists, strings, ints, finite floats, booleans and None."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return [plain(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        return plain(value.item())
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, str):  # an enumeration of text (a verdict) as its text
        return str.__str__(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return value if math.isfinite(value) else _FLOATS[repr(value)]
    if hasattr(value, "to_dict"):
        return plain(value.to_dict())
    raise TypeError(f"not part of canonical JSON: {type(value).__name__}")


def canonical(value: Any) -> bytes:
    """The canonical JSON bytes of ``value``."""
    return json.dumps(plain(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def parse(data: bytes, what: str) -> Any:
    """JSON bytes read back, or a plain refusal naming the part."""
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise LuskinError(f"{what} is not readable JSON ({err}).") from None


# ------------------------------------------------------------------------------------------
# The count table
# ------------------------------------------------------------------------------------------
_ARRAYS = ("n", "positives", "tp", "fp", "fn", "tn", "score_sum", "score_sumsq")
assert set(_ARRAYS) == set(COUNT_COLUMNS)


def count_table_dict(table: CountTable) -> dict[str, Any]:
    """The count table as plain values: every number of an audit follows from it and the specification."""
    out: dict[str, Any] = {
        "groups": list(table.groups), "cell_keys": list(table.cell_keys), "cell_labels": list(table.cell_labels),
        "excluded": dict(table.excluded), "n_excluded": int(table.n_excluded), "score_cutoff": table.score_cutoff,
        "group_in_protected": None if table.group_in_protected is None else list(table.group_in_protected),
        "binned": [[column, list(cuts)] for column, cuts in table.binned],
    }
    for name in _ARRAYS:
        array = getattr(table, name)
        out[name] = None if array is None else plain(array)
    return plain(out)


def count_table_from_dict(data: Any, what: str = "The count table") -> CountTable:
    """A count table read back from :func:`count_table_dict`'s form, or a plain refusal saying what is wrong."""
    try:
        groups = tuple(str(g) for g in data["groups"])
        cells = tuple(data["cell_keys"])
        labels = tuple(str(c) for c in data["cell_labels"])
        shape = (len(groups), len(cells))
        arrays: dict[str, np.ndarray | None] = {}
        for name in _ARRAYS:
            values = data.get(name)
            if values is None:
                if name in ("n", "positives"):
                    raise KeyError(name)
                arrays[name] = None
                continue
            kind = float if name.startswith("score") else np.int64
            array = np.array(values, dtype=kind)
            if array.shape != shape:
                raise ValueError(f"'{name}' holds {array.shape} numbers for {shape[0]} groups and {shape[1]} cells")
            arrays[name] = array
        if len(labels) != len(cells) or any(not isinstance(k, (str, bool)) and k is not None for k in cells):
            raise ValueError("its cells are not named one by one")
        protected = data.get("group_in_protected")
        cutoff = data.get("score_cutoff")
        n, positives = arrays.pop("n"), arrays.pop("positives")
        assert n is not None and positives is not None
        return CountTable(
            groups=groups, cell_keys=cells, cell_labels=labels, n=n, positives=positives,
            excluded={str(k): int(v) for k, v in dict(data["excluded"]).items()}, n_excluded=int(data["n_excluded"]),
            score_cutoff=None if cutoff is None else float(cutoff),
            group_in_protected=None if protected is None else tuple(bool(v) for v in protected),
            binned=tuple((str(c), tuple(float(x) for x in cuts)) for c, cuts in data.get("binned", ())),
            tp=arrays["tp"], fp=arrays["fp"], fn=arrays["fn"], tn=arrays["tn"], score_sum=arrays["score_sum"],
            score_sumsq=arrays["score_sumsq"])
    except (KeyError, TypeError, ValueError, OverflowError) as err:
        detail = f"it lacks '{err.args[0]}'" if isinstance(err, KeyError) else str(err)
        raise LuskinError(f"{what} cannot be read: {detail}.") from None


def count_table_sha256(table: CountTable) -> str:
    """The SHA-256 of the count table's canonical JSON (the data's fingerprint, whatever engine counted it)."""
    return sha256(canonical(count_table_dict(table)))


__all__ = ["canonical", "count_table_dict", "count_table_from_dict", "count_table_sha256", "parse", "plain", "sha256"]
