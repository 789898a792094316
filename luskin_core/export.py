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


def csv_bytes(frame: pd.DataFrame) -> bytes:
    """The frame as UTF-8 CSV bytes without the index, formula cells neutralised."""
    return safe_frame(frame).to_csv(index=False, lineterminator="\r\n").encode("utf-8")


def write_csv(frame: pd.DataFrame, path: object) -> None:
    """Write the frame as CSV without the index, formula cells neutralised (OSError is the caller's to word)."""
    safe_frame(frame).to_csv(path, index=False, lineterminator="\r\n")  # type: ignore[call-overload]


__all__ = ["FORMULA_STARTS", "csv_bytes", "neutralise_cell", "safe_frame", "write_csv"]
