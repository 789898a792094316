"""The rows an audit or a model sees: the specification applied to a frame in memory.

:func:`prepare` restricts a frame to the population and to decidable rows, with exactly the rules
and the reasons the count table uses (:func:`~luskin_core.counting.memory.row_reasons`, :data:`~luskin_core.counting.plan.REASONS`), so the model tools train
on the rows the audit counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from luskin_core.counting.memory import outcome_values, plan_for_frame, row_group_labels, row_reasons
from luskin_core.counting.plan import REASONS
from luskin_core.errors import LuskinError
from luskin_core.spec import validation as _check
from luskin_core.spec.audit_spec import AuditSpec, resolve_column
from luskin_core.spec.conditions import conjunction_mask

if TYPE_CHECKING:
    import pandas as pd
else:  # imported on first use: a file's audit on the command line never needs it
    from luskin_core._lazy import pandas as pd


@dataclass(frozen=True)
class Prepared:
    """The rows an audit or a model sees, with the labels and classes already decided.

    ``frame`` keeps the user's columns (restricted to the population and to rows where the
    outcome, the protected column and the filter columns are known); ``y`` is 1 where the
    outcome equals the positive value (or a score is at or above its cut-off); ``in_group`` is
    the protected condition (None when groups are the values of columns: then ``groups``
    holds each row's group label, as the audit names it); ``filter_holds`` the filter (all
    True without a filter); ``kept`` marks, over the user's rows, the ones that remain.
    """

    frame: pd.DataFrame
    y: np.ndarray
    in_group: np.ndarray | None
    filter_holds: np.ndarray
    has_filter: bool
    kept: np.ndarray
    n_excluded: int = 0
    excluded_reasons: dict[str, int] = field(default_factory=dict)
    groups: np.ndarray | None = None


def nothing_to_audit(plan: Any, reasons: dict[str, int]) -> LuskinError:
    """The error when every row lacks a value the audit needs, naming only the columns that lack them.

    ``reasons`` counts the rows left out per reason (:data:`luskin_core.counting.plan.REASONS`; a row is
    counted under the first that applies, so the outcome alone means the outcome is empty).
    """
    shown = _check.shown
    if set(reasons) == {"outcome missing"}:
        return LuskinError(f"The outcome column '{shown(plan.outcome)}' has no values at all (every row is missing), "
                           "so nothing can be audited. Choose another outcome column.")
    group = ("the group columns" if plan.protected is None
             else f"the protected column '{shown(plan.protected.column)}'")
    words = {"outcome missing": f"the outcome '{shown(plan.outcome)}'",
             "prediction missing": f"the prediction column '{shown(plan.prediction)}'",
             "protected value missing or unknown": group, "filter value missing": "a filter column"}
    named = [words[r] for r in words if r in reasons] or list(words.values())[:1]
    listed = named[0] if len(named) == 1 else ", ".join(named[:-1]) + " or " + named[-1]
    return LuskinError(f"Every row lacks a value in {listed}, so nothing can be audited. Choose other columns, or "
                       "fill in the missing values and load the file again.")


def prepare(frame: pd.DataFrame, spec: AuditSpec, *, check_positive: bool = True,
            allow_groups: bool = False) -> Prepared:
    """Restrict to the population and to decidable rows; compute labels, classes and cells.

    The rows left out, and why, are exactly the audit's (:func:`luskin_core.counting.memory.row_reasons`).
    Groups formed by the values of columns are accepted only by tools that handle many groups
    (``allow_groups``); the others compare a protected group with the rest and say so.
    """
    if frame is None or len(frame) == 0:
        raise LuskinError("The data has no rows.")
    if spec.group_mode == "columns" and not allow_groups:
        raise LuskinError(
            "This tool compares a protected group with everyone else (e.g. race == White): choose a protected "
            f"group instead of grouping by {' × '.join(spec.group_by)}."
        )
    plan = plan_for_frame(frame, spec)
    reason = row_reasons(frame, plan)
    keep = reason == 0
    if spec.population and not (reason != 1).any():
        raise LuskinError(
            "No row matches the population restriction "
            f"({' and '.join(str(c) for c in spec.population)})."
        )
    reasons = {REASONS[code]: int((reason == code).sum()) for code in range(2, len(REASONS))
               if (reason == code).any()}
    if not keep.any():
        raise nothing_to_audit(plan, reasons)
    rows = frame.loc[keep]
    if check_positive and spec.outcome_type == "label":
        _check.check_positive_present(rows[plan.outcome], spec.positive)
    y = outcome_values(rows, plan)[0].astype(np.int8)
    in_group = None
    groups = None
    if plan.protected is not None:
        in_group = plan.protected.mask(rows)
        assert spec.protected is not None  # the condition mode
        _check.check_two_classes(rows[resolve_column(rows, spec.protected.column, "protected")], spec.protected,
                          int(in_group.sum()), int((~in_group).sum()))
    else:
        groups = row_group_labels(rows, plan)
        if len(set(groups.tolist())) < 2:
            raise LuskinError(f"Every row is in the group '{groups[0]}', so there is no other group to compare "
                              "with.")
    filter_holds = conjunction_mask(plan.filters, rows)
    n_excluded = int(len(frame) - len(rows))
    return Prepared(rows, y, in_group, filter_holds, bool(spec.filters), keep, n_excluded, reasons, groups)
