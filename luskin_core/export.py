"""CSV that is safe to open in a spreadsheet: cells a spreadsheet would run as a formula are neutralised.

OWASP's advice for CSV injection: a text cell starting with ``=``, ``+``, ``-``, ``@``, tab or carriage return
gets a leading single quote. Numeric columns are written as numbers (a genuine -3.5 stays -3.5); column names
are treated like text cells. Rows end in CRLF (RFC 4180), so a cell holding a bare carriage return is quoted
rather than splitting its row.
"""
from __future__ import annotations

from collections.abc import Callable

import pandas as pd

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def neutralise_cell(value: object) -> object:
    """The value with a leading ``'`` if it is text a spreadsheet would read as a formula."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def safe_frame(frame: pd.DataFrame, cell: Callable[[object], object] = neutralise_cell) -> pd.DataFrame:
    """A copy whose text cells and column names cannot start a formula; numeric and boolean columns untouched.

    ``cell`` makes one text cell safe (the dashboard's grids keep the numbers they write, "+22.8", as written).
    """
    out = frame.copy()
    for position in range(out.shape[1]):
        column = out.iloc[:, position]
        if pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column):
            continue
        out.isetitem(position, column.map(cell, na_action="ignore").array)
    out.columns = [neutralise_cell(str(name)) for name in out.columns]
    return out


HEADING_WORDS = {"n": "Number", "p": "p-value", "ci_low": "95% interval, low", "ci_high": "95% interval, high"}


def plain_heading(name: str) -> str:
    """A machine heading in words for a reader's download: 'impact_ratio_low' -> 'Impact ratio low'."""
    if name in HEADING_WORDS:
        return HEADING_WORDS[name]
    if not name.replace("_", "").isalnum() or name != name.lower():
        return name   # already words (or a user's column name): kept as it is
    words = name.replace("_", " ").strip()
    return words[:1].upper() + words[1:]


def plain_headings(frame: pd.DataFrame, values: dict[str, dict[str, str]] | None = None) -> pd.DataFrame:
    """The frame a dashboard user downloads: headings in words, and the coded values of the named columns
    (``values``: column -> code -> words, e.g. LL144's status 'could_fail') in words; other cells (a user's
    categories among them) untouched. The command line keeps the machine names for scripts."""
    out = frame.copy()
    for column, words in (values or {}).items():
        if column in out.columns:
            out[column] = out[column].map(lambda v, w=words: w.get(v, v) if isinstance(v, str) else v)
    out.columns = [plain_heading(str(c)) for c in out.columns]
    return out


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """The frame as UTF-8 CSV bytes without the index, formula cells neutralised."""
    return safe_frame(frame).to_csv(index=False, lineterminator="\r\n").encode("utf-8")


def write_csv(frame: pd.DataFrame, path: object) -> None:
    """Write the frame as CSV without the index, formula cells neutralised (OSError is the caller's to word)."""
    safe_frame(frame).to_csv(path, index=False, lineterminator="\r\n")  # type: ignore[call-overload]


__all__ = ["FORMULA_STARTS", "HEADING_WORDS", "csv_bytes", "neutralise_cell", "plain_heading", "plain_headings", "safe_frame",
           "write_csv"]
