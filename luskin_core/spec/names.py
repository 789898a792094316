"""Names people use for the groups, resolved once the data is known.

A protected condition compares a group with the rest. Without the data the rest can only be
called "Non-Female"; with it, a column of two values names the rest by its other value ("Male"),
under the name the user gave that value (``AuditSpec.value_names``), and a column of more
values calls it "everyone else". A name the user typed (``other_label``) always wins.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from luskin_core.errors import LuskinError
from luskin_core.spec.audit_spec import AuditSpec

if TYPE_CHECKING:
    import pandas as pd
else:  # imported on first use: a file's audit on the command line never needs it
    from luskin_core._lazy import pandas as pd

MAX_VALUES = 1000   # a protected column with more distinct values than this: the rest is "everyone else"


def _distinct(data: Any, column: str) -> tuple[list[Any], Any] | None:
    """Every distinct non-missing value of a column (and its dtype), in memory or counted in the engine."""
    if isinstance(data, pd.DataFrame):
        name = next((n for n in data.columns if str(n).lower() == column.lower()), None)
        if name is None:
            return None
        series = data[name]
        return series.dropna().drop_duplicates().tolist(), series.dtype
    if hasattr(data, "value_counts"):  # a Source: the engine lists the values
        counts = data.value_counts(column, MAX_VALUES + 1)
        values = [v for v in counts["value"].tolist() if v is not None]
        return (values if len(counts) <= MAX_VALUES else values + [object()]), None
    return None


def other_group_name(spec: AuditSpec, data: Any) -> str | None:
    """The name of the rest for a protected condition on this data, or None to keep the spec's own.

    Every value is looked at (a sample could miss a rare third value and name the rest after one of two).
    """
    c = spec.protected
    if c is None or spec.other_label or c.op not in ("==", "in"):
        return None
    found = _distinct(data, c.column)
    if found is None:
        return None
    values, dtype = found
    if len(values) < 2:
        return None
    known = [v for v in values if isinstance(v, (str, int, float, bool))]
    if len(known) < len(values):  # more values than can be named one by one
        return "everyone else"
    column = pd.Series(known, dtype=dtype) if dtype is not None else pd.Series(known)
    inside = c.mask(pd.DataFrame({c.column: column}))
    rest = [v for v, hit in zip(known, inside) if not hit]
    if len(rest) == 1:
        name = spec.name_of(c.column, rest[0])
        return None if name == spec.group_name else name
    return "everyone else" if rest else None


def with_group_names(spec: AuditSpec, data: Any) -> AuditSpec:
    """The spec with the rest named from the data (see the module docstring); unchanged when nothing applies."""
    try:
        name = other_group_name(spec, data)
    except (LuskinError, TypeError, ValueError, KeyError):  # the audit itself says what is wrong
        return spec
    if name is None or name == spec.other_name:
        return spec
    changes: dict[str, Any] = {"other_label": name}
    if spec.reference is not None and spec.reference == spec.other_name:
        changes["reference"] = name
    return spec.with_changes(**changes)


__all__ = ["other_group_name", "with_group_names"]
