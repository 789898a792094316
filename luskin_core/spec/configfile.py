"""Reading a JSON document a user hands to Luskin (a saved configuration), safely.

One reader for the command line (``--config FILE``), the library and the dashboard's upload:
a size limit, UTF-8 with or without a byte-order mark, a nesting limit checked before parsing
(Python's ``json`` recurses: a document nested 100,000 deep raises RecursionError, a crash in
the command line and an exception box in the app), no NaN or Infinity, no repeated key, and
the JSON type of every entry Luskin knows checked, so that ``"features": 5`` is a plain
sentence and not a TypeError three calls later. Each problem is a :class:`LuskinError`.

Whether the values make sense (a column that exists, a tolerance between 0 and 1) is the job
of :class:`~luskin_core.spec.audit_spec.AuditSpec` and :mod:`luskin_core.spec.validation`; this module only
makes sure they have the shape those checks expect.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any

from luskin_core.errors import LuskinError
from luskin_core.spec.options import OPTION_CONSTRAINTS, Constraint

MAX_CONFIG_BYTES = 5_000_000  # a saved configuration is a few kilobytes
MAX_DEPTH = 64                # a saved configuration nests 4 deep
MAX_DIGITS = 19               # a whole number with more digits does not fit in 64 bits (nor a column)

_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKETS = re.compile(r"[\[\]{}]")


# ------------------------------------------------------------------------------------------
# Bytes to a JSON object
# ------------------------------------------------------------------------------------------
def read_config_file(path: str | os.PathLike[str], *, max_bytes: int = MAX_CONFIG_BYTES) -> dict[str, Any]:
    """The JSON object in the file at ``path`` (see :func:`parse_json_document`)."""
    where = Path(path)
    try:
        info = where.stat()
    except FileNotFoundError:
        raise LuskinError(f"There is no configuration file at '{where}'.") from None
    except OSError as err:
        raise LuskinError(f"Cannot read the configuration file '{where}': {err.strerror or err}.") from None
    if stat.S_ISDIR(info.st_mode):
        raise LuskinError(f"'{where}' is a folder, not a configuration file.")
    if not stat.S_ISREG(info.st_mode):
        raise LuskinError(f"'{where}' is not a regular file (it is a device, a pipe or a socket): give the path "
                          "of the .json file Luskin saved.")
    if info.st_size > max_bytes:
        raise LuskinError(_too_big(info.st_size, max_bytes))
    try:
        with open(where, "rb") as handle:
            raw = handle.read(max_bytes + 1)
    except OSError as err:
        raise LuskinError(f"Cannot read the configuration file '{where}': {err.strerror or err}.") from None
    return parse_json_document(raw, max_bytes=max_bytes)


def read_config_upload(source: bytes | IO[bytes], *, max_bytes: int = MAX_CONFIG_BYTES) -> dict[str, Any]:
    """The JSON object in an uploaded file (bytes or a binary file object)."""
    raw = source if isinstance(source, (bytes, bytearray)) else source.read(max_bytes + 1)
    if not isinstance(raw, (bytes, bytearray)):
        raise LuskinError("The uploaded configuration could not be read as a file.")
    return parse_json_document(bytes(raw), max_bytes=max_bytes)


def parse_json_document(text: str | bytes, *, max_bytes: int = MAX_CONFIG_BYTES) -> dict[str, Any]:
    """A JSON object from text or bytes, or a LuskinError that says what is wrong with it.

    Checks, in order: size, encoding (UTF-8, a byte-order mark allowed), emptiness, nesting
    depth (without recursion), JSON syntax (no NaN/Infinity, no repeated key), an object at
    the top, and the type of each entry Luskin knows (:func:`check_entries`).
    """
    if isinstance(text, (bytes, bytearray)):
        if len(text) > max_bytes:
            raise LuskinError(_too_big(len(text), max_bytes))
        try:
            text = bytes(text).decode("utf-8-sig")
        except UnicodeDecodeError:
            raise LuskinError("The configuration file is not a text file in UTF-8. Choose the .json file Luskin "
                              "saved, unchanged.") from None
    if not isinstance(text, str):
        raise LuskinError("The configuration must be JSON text.")
    if len(text) > max_bytes:
        raise LuskinError(_too_big(len(text), max_bytes))
    text = text.lstrip("\ufeff")
    if not text.strip():
        raise LuskinError("The configuration file is empty.")
    depth = nesting_depth(text)
    if depth > MAX_DEPTH:
        raise LuskinError(f"The configuration file nests lists or objects {depth:,} deep; a Luskin configuration "
                          f"nests a few levels, and more than {MAX_DEPTH} is refused.")
    try:
        document = json.loads(text, parse_constant=_refuse_constant, object_pairs_hook=_unique_keys,
                              parse_int=_whole_number, parse_float=_number)
    except json.JSONDecodeError as err:
        raise LuskinError(f"The configuration file is not valid JSON (line {err.lineno}, column {err.colno}: "
                          f"{err.msg}). Choose the .json file Luskin saved, unchanged.") from None
    except RecursionError:  # pragma: no cover - the depth check comes first
        raise LuskinError("The configuration file nests lists or objects too deep to read.") from None
    if not isinstance(document, dict):
        raise LuskinError(f"This JSON file is not a Luskin configuration: it holds {_json_type(document)}, not a "
                          "set of named settings. Choose the .json file Luskin saved.")
    check_entries(document)
    return document


def nesting_depth(text: str) -> int:
    """The deepest nesting of [ and { outside strings, counted without recursion."""
    depth = deepest = 0
    for bracket in _BRACKETS.finditer(_STRINGS.sub("", text)):
        if bracket.group() in "[{":
            depth += 1
            deepest = max(deepest, depth)
        else:
            depth -= 1
    return deepest


def _refuse_constant(name: str) -> Any:
    raise LuskinError(f"The configuration file holds {name}, which is not a number JSON allows. Choose the "
                      ".json file Luskin saved, unchanged.")


def _whole_number(text: str) -> int:
    """A JSON integer; one with more than ``MAX_DIGITS`` digits is refused before Python converts it.

    (Python refuses more than 4,300 digits with a ValueError, and a 400-digit one overflows every
    float conversion later: both were tracebacks.)
    """
    digits = len(text.lstrip("-"))
    if digits > MAX_DIGITS:
        raise LuskinError(f"The configuration file holds a whole number of {digits:,} digits; no Luskin setting "
                          f"needs more than {MAX_DIGITS}. Choose the .json file Luskin saved, unchanged.")
    return int(text)


def _number(text: str) -> float:
    """A JSON number with a fraction or exponent; one too large for a float (1e400) is refused."""
    value = float(text)
    if not math.isfinite(value):
        raise LuskinError(f"The configuration file holds the number {_short(text, 24)}, too large to be stored "
                          "as a number. Choose the .json file Luskin saved, unchanged.")
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise LuskinError(f"The configuration file names the entry '{_short(key)}' twice in one place, so it "
                              "is not clear which to use.")
        out[key] = value
    return out


def _too_big(size: int, limit: int) -> str:
    return (f"The configuration file is {size / 1e6:,.1f} MB, more than the {limit / 1e6:,.0f} MB a configuration "
            "may be; choose the .json file Luskin saved.")


# ------------------------------------------------------------------------------------------
# The type of each known entry
# ------------------------------------------------------------------------------------------
Check = Callable[[Any], bool]


def _is_text(value: Any) -> bool:
    return isinstance(value, str)


def _is_text_or_null(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _is_number_or_null(value: Any) -> bool:
    return value is None or _is_number(value)


def _is_whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_whole_or_null(value: Any) -> bool:
    return value is None or _is_whole(value)


def _is_object(value: Any) -> bool:
    return isinstance(value, dict)


def _is_names(value: Any) -> bool:
    return value is None or isinstance(value, str) or (isinstance(value, list)
                                                       and all(isinstance(v, str) for v in value))


def _is_condition(value: Any) -> bool:
    return value is None or isinstance(value, (str, dict))


def _is_conditions(value: Any) -> bool:
    return _is_condition(value) or (isinstance(value, list) and all(isinstance(v, (str, dict)) for v in value))


def _is_bins(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, dict):
        return all(isinstance(v, list) and all(_is_number(x) for x in v) for v in value.values())
    return isinstance(value, list) and all(
        isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) and isinstance(p[1], list)
        and all(_is_number(x) for x in p[1]) for p in value)


def _is_options(value: Any) -> bool:
    return value is None or isinstance(value, dict)  # each page's entry: check_entries


def _is_flag(value: Any) -> bool:
    return isinstance(value, bool)


def _is_numbers(value: Any) -> bool:
    return isinstance(value, list) and all(_is_number(v) for v in value)


# entry -> (check, what it must be, in words)
DOCUMENT_ENTRIES: dict[str, tuple[Check, str]] = {
    "kind": (_is_text, "a word (\"luskin-configuration\")"),
    "version": (_is_whole, "a whole number"),
    "luskin_version": (_is_text_or_null, "a version number as text"),
    "saved_at": (_is_text_or_null, "a date as text"),
    "data": (_is_object, "a set of named settings (which data was used)"),
    "spec": (_is_object, "a set of named settings (the audit)"),
    "features": (_is_names, "a list of column names (or null for every column)"),
    "options": (_is_options, "a set of named settings for each page"),
}
DATA_ENTRIES: dict[str, tuple[Check, str]] = {
    "source": (_is_text, "text such as \"sample:adult\" or \"upload:file.csv\""),
    "kind": (_is_text, "\"sample\" or \"upload\""),
    "name": (_is_text, "a name as text"),
    "fingerprint": (_is_text_or_null, "text"),
    "rows": (_is_whole_or_null, "a whole number"),
    "columns": (_is_whole_or_null, "a whole number"),
}
SPEC_ENTRIES: dict[str, tuple[Check, str]] = {
    "outcome": (_is_text, "a column name"),
    "positive": (_is_scalar, "a single value (text or a number)"),
    "protected": (_is_condition, "a condition such as \"race == White\""),
    "filters": (_is_conditions, "a list of conditions"),
    "population": (_is_conditions, "a list of conditions"),
    "tolerance": (_is_number_or_null, "a number"),
    "group_label": (_is_text_or_null, "text"),
    "other_label": (_is_text_or_null, "text"),
    "filter_label": (_is_text_or_null, "text"),
    "not_filter_label": (_is_text_or_null, "text"),
    "group_by": (_is_names, "a list of column names"),
    "reference": (_is_scalar, "a group's name"),
    "strata": (_is_names, "a list of column names"),
    "bins": (_is_bins, "cut points: a list of numbers for each column"),
    "n_bins": (_is_whole_or_null, "a whole number"),
    "min_group_size": (_is_whole_or_null, "a whole number"),
    "min_group_share": (_is_number_or_null, "a number"),
    "metric": (_is_text_or_null, "a word"),
    "ratio_threshold": (_is_number_or_null, "a number"),
    "correction": (_is_text_or_null, "a word"),
    "outcome_type": (_is_text_or_null, "a word"),
    "score_cutoff": (_is_number_or_null, "a number"),
    "prediction": (_is_text_or_null, "a column name"),
}

# Each page's saved settings: a tool's option takes its JSON type from its one constraint
# (luskin_core/spec/options.py, which the dashboard's luskin_app.config checks the value against);
# the settings only a page has are listed here.
def _shape_check(constraint: Constraint) -> tuple[Check, str]:
    kind, words = constraint.json_shape()
    check: Check = {"flag": _is_flag, "text": _is_text, "number": _is_number, "numbers": _is_numbers}[kind]
    if constraint.optional:
        return (lambda value, ok=check: value is None or ok(value)), words
    return check, words


_PAGE_ENTRIES: dict[str, dict[str, tuple[Check, str]]] = {
    "retrain": {},
    "thresholds": {"source": (_is_text, "a word"), "score_column": (_is_text_or_null, "a column name"),
                   "split": (_is_text, "a word")},
    "equalize": {"alpha": (_is_number_or_null, "a number")},
}
OPTION_ENTRIES: dict[str, dict[str, tuple[Check, str]]] = {
    page: {**{key: _shape_check(c) for key, c in OPTION_CONSTRAINTS[page].items()}, **extra}
    for page, extra in _PAGE_ENTRIES.items()
}
_PAGES = {"retrain": "Retrain", "thresholds": "Thresholds", "equalize": "Equalized distribution"}


def check_entries(document: Mapping[str, Any]) -> None:
    """The JSON type of each entry Luskin knows, in a saved configuration or a bare specification.

    Unknown entries are left to the reader that knows them (the specification refuses its own).
    """
    spec_at_top = "spec" not in document and "outcome" in document
    _check(document, DOCUMENT_ENTRIES, "the configuration's")
    if isinstance(document.get("data"), dict):
        _check(document["data"], DATA_ENTRIES, "the configuration's 'data'")
    spec = document if spec_at_top else document.get("spec")
    if isinstance(spec, dict):
        _check(spec, SPEC_ENTRIES, "the saved audit's")
    options = document.get("options")
    for page, values in (options.items() if isinstance(options, dict) else ()):
        if not isinstance(values, dict):
            raise LuskinError(f"In the configuration's 'options' settings, '{_short(page)}' is {_json_type(values)}, "
                              "not a set of named settings for that page. Choose the .json file Luskin saved, "
                              "unchanged.")
        if page in OPTION_ENTRIES:
            _check(values, OPTION_ENTRIES[page], f"the saved {_PAGES[page]} page's")


def _check(mapping: Mapping[str, Any], entries: Mapping[str, tuple[Check, str]], where: str) -> None:
    for key, (ok, what) in entries.items():
        if key in mapping and not ok(mapping[key]):
            raise LuskinError(f"In {where} settings, '{key}' is {_json_type(mapping[key])}, not {what}. "
                              "Choose the .json file Luskin saved, unchanged.")


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, (int, float)):
        return f"the number {value!r}" if len(repr(value)) <= 20 else "a number"
    if isinstance(value, str):
        return f"the text '{_short(value)}'"
    if isinstance(value, list):
        return "a list"
    return "a set of named settings"


def _short(text: str, limit: int = 40) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


__all__ = ["MAX_CONFIG_BYTES", "MAX_DEPTH", "OPTION_ENTRIES", "check_entries", "nesting_depth", "parse_json_document",
           "read_config_file", "read_config_upload"]
