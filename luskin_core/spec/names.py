"""Names people use for the groups, resolved once the data's values are known.

A protected condition compares a group with the rest. Without the data the rest can only be
called "Non-Female"; with the protected column's values, a column of two values names the rest by
its other value ("Male"), under the name the user gave that value (``AuditSpec.value_names``), and
a column of more values calls it "everyone else". A name the user typed (``other_label``) always wins.

The specification is never rewritten: the name is resolved from the values the executor lists
(:func:`luskin_core.counting.executor.group_names`) and carried on the plan, the count table and
the result. This module only reasons about values it is given; it never asks an engine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.spec.unknown import numeric_unknown, unknown_spellings

if TYPE_CHECKING:
    import pandas as pd
else:  # imported on first use: a file's audit on the command line never needs it
    from luskin_core._lazy import pandas as pd

MAX_VALUES = 1000   # a protected column with more distinct values than this: the rest is "everyone else"


@dataclass(frozen=True)
class GroupNames:
    """The two classes' names for a protected condition, the other resolved from the data's values."""

    group: str
    other: str

    @classmethod
    def of(cls, spec: AuditSpec, other: str | None = None) -> GroupNames:
        """The spec's names, the rest named ``other`` when the data named it (None: the spec's own)."""
        return cls(spec.group_name, other or spec.other_name)


def needs_values(spec: AuditSpec) -> bool:
    """Whether naming the rest depends on the protected column's values (else the spec's name stands)."""
    c = spec.protected
    return c is not None and not spec.other_label and c.op in ("==", "in")


def other_group_name(spec: AuditSpec, values: pd.Series | Sequence[Any] | None, *,
                     complete: bool = True) -> str | None:
    """The name of the rest for a protected condition, or None to keep the spec's own.

    ``values``: every distinct present value of the protected column (a sample could miss a rare
    third value and name the rest after one of two); ``complete`` False when there were more than
    could be listed.
    """
    c = spec.protected
    if c is None or not needs_values(spec) or values is None:
        return None
    column = values if isinstance(values, pd.Series) else pd.Series(list(values), dtype=object).infer_objects()
    column = column.dropna()
    if len(column) < 2 and complete:
        return None
    known = [v for v in column.tolist() if isinstance(v, (str, int, float, bool))]
    if not complete or len(known) < len(column):  # more values than can be named one by one
        return "everyone else"
    inside = c.mask(pd.DataFrame({c.column: column.reset_index(drop=True)}))
    unknown = set(unknown_spellings(known, c.values, spec.unknown_values))
    codes = {float(v) for v in numeric_unknown(spec.unknown_values, c.values)}   # a code named unknown: in neither
    rest = [v for v, hit in zip(known, inside) if not hit and v not in unknown
            and not (isinstance(v, (int, float)) and not isinstance(v, bool) and float(v) in codes)]
    if len(rest) == 1:
        name = spec.name_of(c.column, rest[0])
        return None if name == spec.group_name else name
    return "everyone else" if rest else None


def reference_for(spec: AuditSpec, groups: Sequence[str]) -> str | None:
    """The reference the user chose, among ``groups`` as the data named them.

    A reference given by the rest's default name ("Non-Female") is the rest, whatever the data named it.
    """
    reference = spec.reference
    if reference is None or reference in groups:
        return reference
    if spec.protected is not None and len(groups) == 2 and reference == spec.other_name:
        return groups[1]
    return reference


__all__ = ["MAX_VALUES", "GroupNames", "needs_values", "other_group_name", "reference_for"]
