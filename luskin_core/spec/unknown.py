"""Which values of a column say that a person's category is not known.

A missing value is always unknown; so are spellings such as "Decline to self-identify" or "Not
disclosed", which agencies record in place of a missing value. Every layer reads them from here: the
counting (a protected condition's rows with such a value are left out, as missing ones are), the
naming of the rest ("Male", not "everyone else", when the only other value is "Decline to
self-identify"), the choice of a reference group and the regulator tables.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from luskin_core.formatting import finite_float

# The label of a group column's missing values.
UNKNOWN = "Unknown"

# Spellings that mean "not known" rather than a category, compared case-insensitively with every run of
# characters other than letters and digits read as one space ("Decline to self-identify" = "decline to self
# identify"). The user names more with ``unknown=`` (``--unknown VALUE``, the page's box) for regulator tables.
UNKNOWN_SPELLINGS = (
    "", "unknown", "not known", "not disclosed", "undisclosed", "decline to self identify",
    "declined to self identify", "decline to identify", "declined to identify", "decline to state",
    "declined to state", "decline to answer", "declined to answer", "declined", "prefer not to say",
    "prefer not to answer", "prefer not to disclose", "i don t wish to answer", "i do not wish to answer",
    "i don t wish to say", "do not wish to answer", "not specified", "unspecified", "not provided",
    "not reported", "not available", "not stated", "missing", "n a", "na", "none given", "no answer",
)


def unknown_key(value: Any) -> str:
    """The form in which a value is compared with the unknown spellings."""
    return re.sub(r"[^0-9a-z]+", " ", str(value).lower()).strip()


def is_unknown_value(value: Any, extra: Iterable[Any] = ()) -> bool:
    """Whether a group's value (one part of a crossed group) says its category is not known: "Unknown" (missing
    values), a spelling such as "Decline to self-identify", or one the user named (``extra``: the specification's
    ``unknown_values``, such as the Stop, Question and Frisk file's race code "U"), compared as the spellings are."""
    key = unknown_key(value)
    return value == UNKNOWN or key in UNKNOWN_SPELLINGS or any(key == unknown_key(v) for v in extra)


def unknown_spellings(values: Iterable[Any], named: Iterable[Any] = (), extra: Iterable[Any] = ()) -> tuple[str, ...]:
    """The text values among ``values`` that spell "unknown" (or one of ``extra``), except those in ``named`` (a
    condition that names "Unknown" itself, ``sex == Unknown``, asks about those rows: they are not left out)."""
    keep = {str(v) for v in named}
    extra = tuple(extra)
    return tuple(sorted({v for v in values if isinstance(v, str) and v not in keep and is_unknown_value(v, extra)}))


def numeric_unknown(named: Iterable[Any], asked: Iterable[Any]) -> tuple[str, ...]:
    """The values named unknown that are numbers (as texts, in the order named), except those a protected condition
    asks about itself (``race == 9`` asks about the 9s): a numeric column's codes for "not known"."""
    taken = {finite_number(v) for v in asked}
    return tuple(v for v in named if finite_number(v) is not None and finite_number(v) not in taken)


def finite_number(value: Any) -> float | None:
    """A value as a finite number ("9", 9, 9.0 alike), or None: a word, a flag, a missing or infinite value."""
    return None if isinstance(value, bool) else finite_float(value)


__all__ = ["UNKNOWN", "UNKNOWN_SPELLINGS", "finite_number", "is_unknown_value", "numeric_unknown", "unknown_key",
           "unknown_spellings"]
