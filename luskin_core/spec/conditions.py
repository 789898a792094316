"""Conditions on one column: the protected condition and the filter's parts.

A condition is written the way an analyst would say it: ``race == White``,
``education-num > 10``, ``race in [Black, Other]``, ``native-country == United-States``.
Column names and values may contain hyphens and spaces; values may be quoted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from luskin_core.errors import LuskinError
from luskin_core.spec.columns import check_column

if TYPE_CHECKING:
    import pandas as pd
else:  # imported on first use: a file's audit on the command line never needs it
    from luskin_core._lazy import pandas as pd

OPERATORS: tuple[str, ...] = ("==", "!=", "<", "<=", ">", ">=", "in", "not in")
_ORDER_OPS = ("<", "<=", ">", ">=")
_WORDS = {"==": "is", "!=": "is not", "<": "is below", "<=": "is at most", ">": "is above",
          ">=": "is at least", "in": "is one of", "not in": "is none of"}

# Longest symbols first so that "<=" is not read as "<" followed by "=".
_SYMBOL_RE = re.compile(r"^(?P<col>[^=!<>].*?)\s*(?P<op>==|!=|<=|>=|<|>|=)\s*(?P<val>.*)$", re.DOTALL)
_WORD_RE = re.compile(r"^(?P<col>.+?)\s+(?P<op>not\s+in|in)\s+(?P<val>[\[(].*[\])])\s*$", re.DOTALL | re.IGNORECASE)


def _unquote(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"`":
        return text[1:-1]
    return text


def _parse_value(text: str) -> Any:
    """Read a literal: a number when it looks like one, otherwise the text itself."""
    raw = text.strip()
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        return raw[1:-1]
    try:
        number = float(raw)
    except ValueError:
        return raw
    if not np.isfinite(number):
        return raw
    return int(number) if number.is_integer() and re.fullmatch(r"[+-]?\d+", raw) else number


def _split_list(text: str) -> list[Any]:
    inner = text.strip()[1:-1]
    items, buf, quote = [], [], ""
    for ch in inner:
        if quote:
            buf.append(ch)
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
            buf.append(ch)
        elif ch == ",":
            items.append("".join(buf))
            buf = []
        else:
            buf.append(ch)
    items.append("".join(buf))
    values = [_parse_value(item) for item in items if item.strip()]
    if not values:
        raise LuskinError(f"The list of values in '{text.strip()}' is empty: name at least one value.")
    return values


@dataclass(frozen=True)
class Condition:
    """``column op value``; for ``in`` / ``not in`` the value is a tuple of values."""

    column: str
    op: str
    value: Any

    def __post_init__(self) -> None:
        if self.op not in OPERATORS:
            raise LuskinError(f"Unknown comparison '{self.op}'. Use one of: {', '.join(OPERATORS)}.")
        if not str(self.column).strip():
            raise LuskinError("A condition needs a column name before the comparison.")
        if self.op in ("in", "not in"):
            values = self.value if isinstance(self.value, (list, tuple)) else (self.value,)
            object.__setattr__(self, "value", tuple(values))
            if not self.value:
                raise LuskinError(f"'{self.column} {self.op} [...]' needs at least one value.")
        elif isinstance(self.value, (list, tuple)):
            raise LuskinError(f"'{self.op}' compares with one value; use 'in' for a list of values.")
        elif self.value is None or (isinstance(self.value, str) and not self.value.strip()):
            raise LuskinError(f"The condition on '{self.column}' has no value to compare with.")

    @property
    def values(self) -> tuple[Any, ...]:
        """The values the condition names (one, but for ``in`` / ``not in``)."""
        return self.value if isinstance(self.value, tuple) else (self.value,)

    def __str__(self) -> str:
        if self.op in ("in", "not in"):
            return f"{self.column} {self.op} [{', '.join(str(v) for v in self.value)}]"
        return f"{self.column} {self.op} {self.value}"

    def describe(self) -> str:
        """The condition in words, for sentences shown to a committee."""
        if self.op in ("in", "not in"):
            return f"{self.column} {_WORDS[self.op]} {', '.join(str(v) for v in self.value)}"
        return f"{self.column} {_WORDS[self.op]} {self.value}"

    def to_dict(self) -> dict[str, Any]:
        value = list(self.value) if isinstance(self.value, tuple) else self.value
        return {"column": self.column, "op": self.op, "value": value}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Condition:
        try:
            return cls(str(data["column"]), str(data["op"]), data["value"])
        except KeyError as missing:
            raise LuskinError(f"A saved condition lacks its {missing.args[0]!r} part.") from None

    def known(self, frame: pd.DataFrame) -> np.ndarray:
        """Rows where the column has a value, so the condition can be decided at all."""
        return frame[self._column_in(frame)].notna().to_numpy()

    def mask(self, frame: pd.DataFrame) -> np.ndarray:
        """Boolean array: where the condition holds (False where the value is missing)."""
        column = self._column_in(frame)
        series = frame[column]
        numeric = pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series)
        values = self.values
        if numeric:
            values = tuple(self._as_number(column, v) for v in values)
        elif self.op in _ORDER_OPS:
            raise LuskinError(
                f"'{column}' holds text, so '{self.op}' cannot compare it with {self.value}. "
                "Use == or != (or 'in') for text columns."
            )
        else:
            values = tuple(str(v) for v in values)
            series = series.astype("string")
        data = series.to_numpy(dtype=float, na_value=np.nan) if numeric else series
        if self.op == "==":
            out = data == values[0]
        elif self.op == "!=":
            out = data != values[0]
        elif self.op == "<":
            out = data < values[0]
        elif self.op == "<=":
            out = data <= values[0]
        elif self.op == ">":
            out = data > values[0]
        elif self.op == ">=":
            out = data >= values[0]
        elif self.op == "in":
            out = np.isin(data, values) if numeric else series.isin(values)
        else:
            out = ~np.isin(data, values) if numeric else ~series.isin(values)
        result = np.asarray(pd.Series(out).fillna(False), dtype=bool)
        return result & self.known(frame)

    def _column_in(self, frame: pd.DataFrame) -> str:
        if self.column in frame.columns:
            return self.column
        lowered = {str(c).lower(): c for c in frame.columns}
        if str(self.column).lower() in lowered:
            return lowered[str(self.column).lower()]
        return check_column(frame, self.column)

    def _as_number(self, column: str, value: Any) -> float:
        if isinstance(value, bool):
            return float(value)
        try:
            return float(value)
        except (TypeError, ValueError):
            raise LuskinError(
                f"'{column}' holds numbers, but the condition compares it with '{value}', "
                "which is not a number."
            ) from None


def parse_condition(text: str) -> Condition:
    """Read ``column op value`` (also ``column in [a, b]``); a single ``=`` means ``==``."""
    if not isinstance(text, str) or not text.strip():
        raise LuskinError("A condition is empty. Write it as: column == value (for example: race == White).")
    source = text.strip()
    match = _WORD_RE.match(source)
    if match:
        op = "not in" if match["op"].lower().startswith("not") else "in"
        column = _unquote(match["col"])
        return Condition(column, op, tuple(_split_list(match["val"])))
    if source[0] in "=!<>":
        raise LuskinError(f"The condition '{source}' has no column name before the comparison.")
    match = _SYMBOL_RE.match(source)
    if not match:
        raise LuskinError(
            f"Cannot read the condition '{source}'. Write it as: column operator value, "
            f"with an operator among {', '.join(OPERATORS)} (for example: education-num > 10)."
        )
    column, op, raw = _unquote(match["col"]), match["op"], match["val"]
    op = "==" if op == "=" else op
    if not column:
        raise LuskinError(f"The condition '{source}' has no column name before '{op}'.")
    if not raw.strip():
        raise LuskinError(f"The condition '{source}' has no value after '{op}'.")
    if raw.strip()[:1] == "[":
        raise LuskinError(f"'{op}' compares with one value; write '{column} in {raw.strip()}' for a list.")
    return Condition(column, op, _parse_value(raw))


def as_condition(value: Condition | str | dict[str, Any]) -> Condition:
    """Accept a Condition, its text, or its JSON dict."""
    if isinstance(value, Condition):
        return value
    if isinstance(value, dict):
        return Condition.from_dict(value)
    return parse_condition(value)


def conjunction_mask(conditions: Sequence[Condition], frame: pd.DataFrame) -> np.ndarray:
    """Rows where every condition holds (all rows for no conditions)."""
    out = np.ones(len(frame), dtype=bool)
    for condition in conditions:
        out &= condition.mask(frame)
    return out


