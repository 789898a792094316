"""Names people use for the groups, resolved once the data is known.

A protected condition compares a group with the rest. Without the data the rest can only be
called "Non-Female"; with it, a column of two values names the rest by its other value ("Male"),
under the name the user gave that value (``AuditSpec.value_names``), and a column of more
values calls it "everyone else". A name the user typed (``other_label``) always wins.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from .errors import LuskinError
from .spec import AuditSpec

MAX_SCAN = 200_000   # rows read to find a column's values (a sample beyond; the audit reads them all)


def other_group_name(spec: AuditSpec, frame: pd.DataFrame) -> str | None:
    """The name of the rest for a protected condition on this frame, or None to keep the spec's own."""
    c = spec.protected
    if c is None or spec.other_label or c.op not in ("==", "in"):
        return None
    column = next((name for name in frame.columns if str(name).lower() == c.column.lower()), None)
    if column is None:
        return None
    series = frame[column]
    if len(series) > MAX_SCAN:
        series = series.sample(MAX_SCAN, random_state=0)
    distinct = series.dropna().drop_duplicates()
    values = distinct.tolist()
    if len(values) < 2:
        return None
    inside = c.mask(pd.DataFrame({c.column: distinct.to_numpy()}).astype({c.column: series.dtype}))
    rest = [v for v, hit in zip(values, inside) if not hit]
    if len(rest) == 1:
        name = spec.name_of(c.column, rest[0])
        return None if name == spec.group_name else name
    return "everyone else" if rest else None


def with_group_names(spec: AuditSpec, frame: Any) -> AuditSpec:
    """The spec with the rest named from the data (see the module docstring); unchanged when nothing applies."""
    if not isinstance(frame, pd.DataFrame):
        return spec
    try:
        name = other_group_name(spec, frame)
    except (LuskinError, TypeError, ValueError, KeyError):  # the audit itself says what is wrong
        return spec
    if name is None or name == spec.other_name:
        return spec
    changes: dict[str, Any] = {"other_label": name}
    if spec.reference is not None and spec.reference == spec.other_name:
        changes["reference"] = name
    return spec.with_changes(**changes)


__all__ = ["other_group_name", "with_group_names"]
