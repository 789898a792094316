"""Columns by name, and how names and values appear in a message: the base of the validator.

Conditions look their column up here and the validator (:mod:`luskin_core.spec.validation`)
re-exports every name, so the rules have one place and nothing imports in a circle.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from luskin_core.errors import LuskinError

if TYPE_CHECKING:
    import pandas as pd
else:  # imported on first use: a file's audit on the command line never needs it
    from luskin_core._lazy import pandas as pd

MAX_LISTED = 100       # column names listed in full in a message (more: the first ones and the count)
MAX_LISTED_VALUES = 10  # values listed in a message
MAX_SHOWN_CHARS = 60    # a value longer than this is shortened in messages

ROLE_PROMPTS = {
    "outcome": "Choose the outcome column (the decision or label to audit).",
    "protected": "Choose the protected column (e.g. race or sex).",
}


def shown(value: Any, limit: int = MAX_SHOWN_CHARS) -> str:
    """A value as it appears in a message: shortened when long (a 50 MB cell must not fill the screen)."""
    text = str(value)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


def column_list(names: Sequence[Any], limit: int = MAX_LISTED) -> str:
    """Every column name, or the first ``limit`` and how many there are in all."""
    names = [shown(n) for n in names]
    if len(names) <= limit:
        return ", ".join(names)
    return ", ".join(names[:limit]) + f" … ({len(names):,} columns in all)"


def check_column_names(frame: pd.DataFrame) -> None:
    """Column names must be distinct, also when compared without surrounding blanks and case.

    Columns are found by name regardless of case (``Race`` and ``race`` are the same column for
    the command line and a saved configuration), so two names that differ only there are ambiguous.
    """
    seen: dict[str, Any] = {}
    for name in frame.columns:
        key = str(name).strip().lower()
        if key in seen:
            first, second = str(seen[key]).strip(), str(name).strip()
            named = f"'{shown(first)}' twice" if first == second else f"'{shown(first)}' and '{shown(second)}'"
            raise LuskinError(
                f"The file has two columns named {named} (names are compared without surrounding blanks "
                "or case). Rename one of them and load the file again."
            )
        seen[key] = name


def check_column(frame: pd.DataFrame | Sequence[Any], name: Any, role: str = "") -> str:
    """The frame's own spelling of a column (matched regardless of case), or a plain error.

    ``frame`` may also be the list of column names (a source's, counted where it lives). The error
    names the closest column names, then every column (the first 40 of a wide file).
    """
    if name is None or not str(name).strip():
        raise LuskinError(ROLE_PROMPTS.get(role, f"Choose the {role} column." if role else "Choose a column."))
    columns = list(frame.columns) if hasattr(frame, "columns") else list(frame)
    if name in columns:
        return str(name)
    lowered = {str(c).lower(): c for c in columns}
    if str(name).lower() in lowered:
        return str(lowered[str(name).lower()])
    names = [str(c) for c in columns]
    close = difflib.get_close_matches(str(name), names, n=3, cutoff=0.6)
    if not close:
        close = [c for c in names if str(name).lower() in c.lower() or c.lower() in str(name).lower()][:3]
    hint = f" Did you mean {' or '.join(repr(shown(c)) for c in close)}?" if close else ""
    role = f"{role} " if role else ""
    raise LuskinError(f"There is no {role}column named '{shown(name)}' in the data.{hint} "
                      f"Columns are: {column_list(names)}.")
