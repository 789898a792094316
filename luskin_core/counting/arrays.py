"""The counting rules executed by numpy: the in-memory path for small frames.

DuckDB runs the rules over a pandas frame in one query, but a query has a fixed cost (registering
the frame, planning, starting its threads) that was a third of a small audit: on the Adult preset's
48,842 rows this module is faster than DuckDB's query (benchmarks/results/code_timings.md). The rules are not written again: this
module reads the same expression trees (:func:`luskin_core.counting.rules.count_rules`) as the SQL
and Ibis executors, with SQL's meaning (a missing value makes a comparison missing, ``and``/``or``
follow three-valued logic, a CASE's missing condition takes the ELSE branch, a floating NaN is
missing). Whatever it cannot read exactly as DuckDB does (a text cast of a number, which DuckDB
spells its own way; text ordering; a datetime column; the yes/no words of a prediction) raises
:class:`Unsupported`, and the frame goes to DuckDB. The tests run every rule through both.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd
else:  # imported on first use: a file's audit on the command line never needs it
    from luskin_core._lazy import pandas as pd

SMALL_ROWS = 100_000  # measured: numpy and DuckDB even at 100,000 rows of 6 groups x 20 strata; DuckDB ahead past

Expr = tuple[Any, ...]
_NUM, _INT, _BOOL, _TEXT = "num", "int", "bool", "text"
_OPS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
        ">=": operator.ge}


class Unsupported(Exception):
    """A rule or a column this executor does not read exactly as DuckDB does: DuckDB counts the frame."""


@dataclass(frozen=True)
class _Values:
    """A column or an expression's value per row (or one value for all), where it is missing, and its kind.

    Text is held as codes into ``words`` (its distinct values), so a comparison is made once per
    distinct value: comparing 48,842 Python strings cost more than DuckDB's whole query.
    """

    values: Any
    null: Any
    kind: str
    words: Any = None


def _column(series: pd.Series) -> _Values:
    """A frame's column as DuckDB reads it (text as pandas strings, as the DuckDB executor registers it)."""
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        if isinstance(dtype, np.dtype):
            return _Values(series.to_numpy(), np.zeros(len(series), dtype=bool), _BOOL)
        return _Values(series.to_numpy(dtype=bool, na_value=False), series.isna().to_numpy(), _BOOL)
    if pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype):
        values = series.to_numpy(dtype=float, na_value=np.nan)
        return _Values(values, np.isnan(values), _NUM)
    if dtype == object or isinstance(dtype, (pd.CategoricalDtype, pd.StringDtype)):
        text = series if isinstance(dtype, pd.StringDtype) else series.astype("string")
        codes, uniques = pd.factorize(text, use_na_sentinel=True)
        return _Values(codes, codes < 0, _TEXT, np.array(list(uniques), dtype=object))
    raise Unsupported(str(dtype))


def _literal(value: Any) -> _Values:
    if isinstance(value, (bool, np.bool_)):
        return _Values(bool(value), False, _BOOL)
    if isinstance(value, (int, np.integer)):
        return _Values(int(value), False, _INT)
    if isinstance(value, (float, np.floating)):
        return _Values(float(value), False, _NUM)
    if isinstance(value, str):
        return _Values(0, False, _TEXT, np.array([value], dtype=object))
    raise Unsupported(type(value).__name__)


def _known(v: _Values, truth: bool) -> Any:
    """Where a boolean is known to be ``truth``."""
    return (v.values if truth else ~np.asarray(v.values)) & ~np.asarray(v.null)


class _Reader:
    """Evaluates rule trees over a frame's columns (``env``: names already evaluated, such as y and d)."""

    def __init__(self, frame: pd.DataFrame, env: Mapping[str, _Values] | None = None) -> None:
        self.frame = frame
        self.env = dict(env or {})
        self.columns: dict[str, _Values] = {}

    def col(self, name: str) -> _Values:
        if name in self.env:
            return self.env[name]
        if name not in self.columns:
            self.columns[name] = _column(self.frame[name])
        return self.columns[name]

    def __call__(self, expr: Expr) -> _Values:
        op = expr[0]
        if op == "col":
            return self.col(expr[1])
        if op == "lit":
            return _literal(expr[1])
        if op == "cmp":
            return self._compare(expr[1], self(expr[2]), self(expr[3]))
        if op == "in":
            return self._isin(self(expr[1]), expr[2])
        if op == "if":
            return self._if(self(expr[1]), expr[2], self(expr[3]))
        if op == "null":
            raise Unsupported("a missing value outside a CASE")
        args = [self(e) for e in expr[1:]]
        if op == "isnull":
            return _Values(np.asarray(args[0].null), False, _BOOL)
        if op == "not":
            self._want(args[0], _BOOL)
            return _Values(~np.asarray(args[0].values), args[0].null, _BOOL)
        if op in ("and", "or"):
            a, b = args
            self._want(a, _BOOL)
            self._want(b, _BOOL)
            if op == "and":
                values = _known(a, True) & _known(b, True)
                null = ~(values | _known(a, False) | _known(b, False))
            else:
                values = _known(a, True) | _known(b, True)
                null = ~(values | (_known(a, False) & _known(b, False)))
            return _Values(values, null, _BOOL)
        if op == "false_if_null":
            self._want(args[0], _BOOL)
            return _Values(_known(args[0], True), False, _BOOL)
        if op == "add":
            a, b = args
            self._want(a, _INT)
            self._want(b, _INT)
            return _Values(a.values + b.values, a.null | b.null, _INT)
        if op in ("float", "int", "bool", "text"):
            return self._cast(op, args[0])
        raise Unsupported(op)  # "words": DuckDB's trim and lower of any value as text

    @staticmethod
    def _want(v: _Values, kind: str) -> None:
        if v.kind != kind:
            raise Unsupported(f"{v.kind} where {kind} is read")

    @staticmethod
    def _cast(to: str, v: _Values) -> _Values:
        if to == "float" and v.kind in (_NUM, _INT, _BOOL):
            return _Values(np.asarray(v.values, dtype=float), v.null, _NUM)
        if to == "int" and v.kind in (_INT, _BOOL):
            return _Values(np.asarray(v.values, dtype=np.int64), v.null, _INT)
        if (to, v.kind) in (("bool", _BOOL), ("text", _TEXT)):
            return v
        raise Unsupported(f"{v.kind} as {to}")  # e.g. a number as text: DuckDB's own spelling

    @staticmethod
    def _compare(op: str, a: _Values, b: _Values) -> _Values:
        numbers = {_NUM, _INT}
        same = a.kind == b.kind or (a.kind in numbers and b.kind in numbers)
        if not same or (a.kind == _TEXT and op not in ("==", "!=")):
            raise Unsupported(f"{a.kind} {op} {b.kind}")
        null = a.null | b.null
        if a.kind == _TEXT:  # text with one value (a literal): compared once per distinct value
            if np.ndim(b.values) or len(b.words) != 1:
                raise Unsupported("text compared with text")
            hits = np.asarray(_OPS[op](a.words, b.words[0]), dtype=bool)
            return _Values(_pick(hits, a.values) & ~np.asarray(null), null, _BOOL)
        with np.errstate(invalid="ignore"):
            values = np.asarray(_OPS[op](a.values, b.values), dtype=bool)
        return _Values(values & ~np.asarray(null), null, _BOOL)

    @staticmethod
    def _isin(a: _Values, listed: Sequence[Any]) -> _Values:
        kinds = {_literal(v).kind for v in listed}
        if a.kind == _TEXT and kinds <= {_TEXT}:
            values = _pick(pd.Series(a.words, dtype=object).isin(list(listed)).to_numpy(), a.values)
        elif a.kind in (_NUM, _INT) and kinds <= {_NUM, _INT}:
            values = np.isin(a.values, np.asarray(listed, dtype=float))
        else:
            raise Unsupported(f"{a.kind} in {kinds}")
        return _Values(values & ~np.asarray(a.null), a.null, _BOOL)

    def _if(self, condition: _Values, then: Expr, otherwise: _Values) -> _Values:
        self._want(condition, _BOOL)
        chosen = _known(condition, True)
        if then == ("null",):
            return _Values(otherwise.values, chosen | otherwise.null, otherwise.kind, otherwise.words)
        a = self(then)
        if a.kind != otherwise.kind:
            raise Unsupported(f"CASE of {a.kind} and {otherwise.kind}")
        null = np.where(chosen, a.null, otherwise.null)
        if a.kind == _TEXT:  # one list of words: the second branch's codes after the first's
            return _Values(np.where(chosen, a.values, np.asarray(otherwise.values) + len(a.words)), null, _TEXT,
                           np.concatenate([a.words, otherwise.words]))
        return _Values(np.where(chosen, a.values, otherwise.values), null, a.kind)


def _pick(per_word: np.ndarray, codes: Any) -> np.ndarray:
    """A value per distinct word, per row (a missing word, code -1, gives False)."""
    return np.append(per_word, False)[codes]


def _full(v: _Values, n: int) -> _Values:
    """One value per row (a literal or a constant spread over the rows)."""
    values = np.asarray(v.values)
    null = np.asarray(v.null)
    if values.shape != (n,):
        values = np.full(n, v.values)
    if null.shape != (n,):
        null = np.full(n, bool(v.null))
    return _Values(values, null, v.kind, v.words)


def _codes(v: _Values) -> tuple[np.ndarray, list[Any]]:
    """Each row's key code (0: missing) and the value behind each code (None first)."""
    if v.kind == _BOOL:
        return np.where(v.null, 0, 1 + v.values.astype(np.int64)), [None, False, True]
    values = v.values
    if v.kind in (_NUM, _INT):
        values = np.where(v.null, np.nan, values.astype(float))
        codes, uniques = pd.factorize(values, use_na_sentinel=True)
        kinds = float if v.kind == _NUM else int
        return codes.astype(np.int64) + 1, [None, *(kinds(u) for u in uniques)]
    word_codes, words = pd.factorize(v.words)  # a word may be listed twice (two CASE branches)
    codes = np.where(v.null, 0, np.append(word_codes, -1)[values] + 1)
    return codes.astype(np.int64), [None, *words.tolist()]


def count_rows(frame: pd.DataFrame, keys: Mapping[str, Expr], checks: Sequence[tuple[int, Expr]],
               values: Mapping[str, Expr], metrics: Mapping[str, tuple[str, Expr]]) -> pd.DataFrame:
    """The counting query's grouped rows, as DuckDB returns them: keys, ``r{code}`` flags, metrics.

    Raises :class:`Unsupported` where a rule or column is not read here exactly as DuckDB reads it.
    """
    n = len(frame)
    read = _Reader(frame)
    key_values = {name: _full(read(expr), n) for name, expr in keys.items()}
    flags = {f"r{code}": _full(read(expr), n) for code, expr in checks}
    for flag in flags.values():
        _Reader._want(flag, _BOOL)
    rows = {name: _full(read(expr), n) for name, expr in values.items()}
    combined = np.zeros(n, dtype=np.int64)
    radix = 1
    lookup: dict[str, list[Any]] = {}
    for name, v in [*key_values.items(), *flags.items()]:
        codes, uniques = _codes(v)
        if radix * len(uniques) >= 2**62:
            raise Unsupported("too many keys for one integer")
        combined += codes * radix
        radix *= len(uniques)
        lookup[name] = uniques
    groups, inverse = np.unique(combined, return_inverse=True)
    out: dict[str, Any] = {}
    radix = 1
    for name, uniques in lookup.items():
        codes = (groups // radix) % len(uniques)
        radix *= len(uniques)
        column = np.empty(len(groups), dtype=object)
        column[:] = [uniques[c] for c in codes]
        out[name] = column
    summed = _Reader(frame, rows)
    for name, (how, what) in metrics.items():
        if how == "count":
            out[name] = np.bincount(inverse, minlength=len(groups)).astype(np.int64)
            continue
        v = _full(summed(what), n)
        x = np.where(v.null, 0, v.values).astype(float)
        if how == "sumsq":
            x = x * x
        total = np.bincount(inverse, weights=x, minlength=len(groups))
        out[name] = total if name.startswith("score") else np.rint(total).astype(np.int64)
    return pd.DataFrame(out)


__all__ = ["SMALL_ROWS", "Unsupported", "count_rows"]
