"""What the regulator tables share: reading their input, and the shape of their output.

Input: the spellings read as "unknown" (:data:`UNKNOWN_SPELLINGS`, compared by :func:`unknown_key`), counts of
people as whole numbers (:func:`whole_count`), a published summary table read as text (:func:`read_summary`,
its table and column names, its rates), and the sex and race/ethnicity columns guessed only where the data
support it (:func:`guess_ll144_columns`). Output: :class:`ShownTable` (one table as the page and the report
show it) and the data sufficiency lines every regulator output opens with. Local Law 144 is
:mod:`luskin_core.analyses.regulator_ll144`, the EEOC Uniform Guidelines :mod:`luskin_core.analyses.regulator_eeoc`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from luskin_core.errors import LuskinError
from luskin_core.spec.unknown import UNKNOWN_SPELLINGS, unknown_key


def unknown_keys(extra: Sequence[str] = ()) -> frozenset[str]:
    """The spellings read as unknown: the common ones and the user's."""
    return frozenset(UNKNOWN_SPELLINGS) | {unknown_key(v) for v in extra}


def named_unknown(names: Sequence[tuple[str, Sequence[tuple[str, str]]]],
                  found: Sequence[tuple[str, str]]) -> dict[str, dict[str, str]]:
    """The specification's value names, plus every (column, value) in ``found`` (values read as unknown) named
    "Unknown", so that an audit counts them with the column's missing values rather than as a group of their own.
    A value the user named is found through its name."""
    merged = {str(column): dict(pairs) for column, pairs in names}
    for column, value in found:
        if value == "Unknown":
            continue
        given = merged.setdefault(column, {})
        for raw in [raw for raw, shown in given.items() if shown == value] or [value]:
            given[raw] = "Unknown"
    return merged


def whole_count(value: Any, what: str) -> int:
    """A count as a whole number of at least 0, or a plain refusal (an integer is kept exact, however large)."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        if value < 0:
            raise LuskinError(f"{what} is {value}: a count cannot be negative.")
        return int(value)
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise LuskinError(f"{what} is '{value}', not a number.") from None
    if not math.isfinite(number) or number != int(number):
        raise LuskinError(f"{what} is {value}: counts of people are whole numbers.")
    if number < 0:
        raise LuskinError(f"{what} is {value}: a count cannot be negative.")
    return int(number)


# ------------------------------------------------------------------------------------------
# A published summary table as input (read as text; luskin_core.analyses.regulator_ll144 reads its counts)
# ------------------------------------------------------------------------------------------
TABLE_NAMES = {"sex": "sex", "gender": "sex", "race_ethnicity": "race_ethnicity", "race ethnicity": "race_ethnicity",
               "race": "race_ethnicity", "ethnicity": "race_ethnicity", "intersectional": "intersectional",
               "intersection": "intersectional", "sex race ethnicity": "intersectional",
               "sex race": "intersectional"}
SUMMARY_COLUMNS = {"table": "table", "category": "category", "applicants": "applicants", "n": "applicants",
                   "individuals": "applicants", "selected": "selected", "scored above median": "selected",
                   "scoring rate": "scoring_rate", "selection rate": "selection_rate", "impact ratio": "impact_ratio"}


def read_summary(path: Any) -> pd.DataFrame:
    """A published summary table (CSV) read as text, or a plain refusal."""
    try:
        return pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    except FileNotFoundError:
        raise LuskinError(f"There is no file '{path}'.") from None
    except (OSError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as err:
        raise LuskinError(f"Could not read the published table '{path}' as CSV: {err}.") from None


def summary_share(text: str, where: str) -> float:
    value = text.strip()
    percent = value.endswith("%")
    try:
        number = float(value.rstrip("%").replace(",", "").strip())
    except ValueError:
        raise LuskinError(f"{where}: the scoring rate is '{value}', not a number or a percentage.") from None
    number = number / 100 if percent else number
    if not 0 <= number <= 1:
        raise LuskinError(f"{where}: the scoring rate is {value}; write it as a share (0.543) or a percentage "
                          "(54.3%).")
    return number


SEX_NAME = re.compile(r"(?i)(^|[^a-z])(sex|gender)([^a-z]|$)")
RACE_NAME = re.compile(r"(?i)(race|ethnic)")
SEX_WORDS = frozenset({"female", "male", "f", "m", "woman", "man", "women", "men", "non binary", "nonbinary",
                       "other gender", "transgender", "intersex"})
RACE_WORDS = re.compile(r"(?i)\b(white|black|african|asian|hispanic|latino|latina|latinx|caucasian|native|pacific|"
                        r"hawaiian|alaska|american indian|indigenous|two or more|multiracial|mixed)\b")


def guess_ll144_columns(frame: pd.DataFrame, skip: Sequence[str] = ()) -> tuple[str | None, str | None]:
    """The sex and race/ethnicity columns, guessed only where the data support it, else None.

    A sex column is named sex or gender with at most 10 values, or most of its known rows hold words like
    female/male; a race/ethnicity column is named race or ethnic(ity) with at most 60 values, or most of its
    known rows hold race words (White, Black, Asian, Hispanic...). A credit limit is neither.
    """
    skipped = {s.lower() for s in skip}
    sex = race = None
    for column in frame.columns:
        name = str(column)
        if name.lower() in skipped:
            continue
        values = frame[column].dropna()
        if values.empty:
            continue
        counts = values.astype(str).value_counts()
        if len(counts) > 60:
            continue
        keys = unknown_keys()
        known = counts[[unknown_key(v) not in keys for v in counts.index]]
        if known.empty:
            continue
        sex_share = known[[unknown_key(v) in SEX_WORDS for v in known.index]].sum() / known.sum()
        race_share = known[[bool(RACE_WORDS.search(str(v))) for v in known.index]].sum() / known.sum()
        if sex is None and ((SEX_NAME.search(name) and len(known) <= 10) or sex_share > 0.5):
            sex = name
        elif race is None and (RACE_NAME.search(name) or race_share > 0.5):
            race = name
    return sex, race


# ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ShownTable:
    """One table as the page and the report show it: text cells (the report), numbers (the page's grid)."""

    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    flagged: tuple[bool, ...]
    note: str = ""
    frame: pd.DataFrame | None = None
    intro: tuple[str, ...] = ()  # sentences before the table (what the data could show)
    reason: str | None = None  # why the table has no impact ratios
    wide: bool = False

    def words(self) -> pd.DataFrame:
        """The table as a reader sees it (the page's grid): the report's headers and text cells, so one
        precision per column, counts with thousands separators and no code names (``frame`` keeps the numbers)."""
        return pd.DataFrame([list(row) for row in self.rows], columns=list(self.header), dtype=object)


def known_sufficiency(result: Any, spec: Any = None) -> tuple[Any, ...]:
    """What an audit's data could show, per comparison of a group of known category (the result's judgement)."""
    from luskin_core.stats.power import sufficiency

    return tuple(sufficiency(result.comparisons, result.judgement))


def sufficiency_bullets(items: Sequence[Any]) -> list[str]:
    from luskin_core.stats.power import sufficiency_lines

    return [line.strip(" -") for line in sufficiency_lines(items)]


def sufficiency_text(items: Sequence[Any]) -> list[str]:
    """The data sufficiency lines as the command line prints them."""
    from luskin_core.stats.power import sufficiency_lines

    return list(sufficiency_lines(items))


__all__ = [
    "RACE_NAME",
    "RACE_WORDS",
    "SEX_NAME",
    "SEX_WORDS",
    "SUMMARY_COLUMNS",
    "TABLE_NAMES",
    "UNKNOWN_SPELLINGS",
    "ShownTable",
    "guess_ll144_columns",
    "named_unknown",
    "read_summary",
    "sufficiency_text",
    "summary_share",
    "unknown_key",
    "unknown_keys",
    "whole_count",
]
