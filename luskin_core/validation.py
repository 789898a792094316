"""Every check of a user's input in one place, as scikit-learn keeps ``utils/validation.py``.

The specification, the pages, the command line and the estimators call these functions, so a
mistake gets the same plain sentence wherever it is made. Each check raises
:class:`luskin_core.errors.LuskinError` with words a policy analyst understands.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .conditions import Condition
from .errors import LuskinError

# ------------------------------------------------------------------------------------------
# Columns and specifications
# ------------------------------------------------------------------------------------------
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


def value_list(series: pd.Series, limit: int = MAX_LISTED_VALUES) -> str:
    """The distinct values of a column, most frequent first, for a message."""
    counts = series.dropna().value_counts()
    values = [shown(v) for v in counts.index[:limit]]
    more = f" … ({len(counts):,} values in all)" if len(counts) > limit else ""
    return ", ".join(values) + more


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


def check_column(frame: pd.DataFrame, name: Any, role: str = "") -> str:
    """The frame's own spelling of a column (matched regardless of case), or a plain error.

    The error names the closest column names, then every column (the first 40 of a wide file).
    """
    if name is None or not str(name).strip():
        raise LuskinError(ROLE_PROMPTS.get(role, f"Choose the {role} column." if role else "Choose a column."))
    if name in frame.columns:
        return str(name)
    lowered = {str(c).lower(): c for c in frame.columns}
    if str(name).lower() in lowered:
        return str(lowered[str(name).lower()])
    names = [str(c) for c in frame.columns]
    close = difflib.get_close_matches(str(name), names, n=3, cutoff=0.6)
    if not close:
        close = [c for c in names if str(name).lower() in c.lower() or c.lower() in str(name).lower()][:3]
    hint = f" Did you mean {' or '.join(repr(shown(c)) for c in close)}?" if close else ""
    role = f"{role} " if role else ""
    raise LuskinError(f"There is no {role}column named '{shown(name)}' in the data.{hint} "
                      f"Columns are: {column_list(names)}.")


def positive_mask(series: pd.Series, positive: Any) -> np.ndarray:
    """Where the outcome equals the positive value, comparing numbers as numbers (missing: False)."""
    if pd.api.types.is_bool_dtype(series):
        text = str(positive).strip().lower()
        return series.fillna(False).to_numpy(dtype=bool) == (text in ("true", "1", "yes", "y"))
    if pd.api.types.is_numeric_dtype(series):
        try:
            target = float(positive)
        except (TypeError, ValueError):
            raise LuskinError(
                f"The outcome '{shown(series.name)}' holds numbers, so its positive value must be a number, "
                f"not '{shown(positive)}'."
            ) from None
        return series.to_numpy(dtype=float, na_value=np.nan) == target
    return np.asarray(series.astype("string").fillna("").to_numpy(dtype=object) == str(positive), dtype=bool)


def check_outcome(frame: pd.DataFrame, column: Any, positive: Any) -> str:
    """The outcome column exists, has at least two values, and the positive value occurs in it.

    Returns the column's own spelling. Numbers are compared as numbers (1 and 1.0 are the same).
    """
    name = check_column(frame, column, "outcome")
    series = frame[name]
    present = series.dropna()
    if present.empty:
        raise LuskinError(f"The outcome column '{shown(name)}' has no values at all (every row is missing). "
                          "Choose another outcome column.")
    if present.nunique() < 2:
        raise LuskinError(f"The outcome column '{shown(name)}' has a single value ('{shown(present.iloc[0])}'), "
                          "so there is nothing to compare. Choose another outcome column.")
    if positive is None or (isinstance(positive, str) and not positive.strip()):
        raise LuskinError("Choose which value of the outcome counts as positive (e.g. Y, >50K or 1).")
    if not positive_mask(present, positive).any():
        raise LuskinError(f"The value '{shown(positive)}' never occurs in the outcome column '{shown(name)}'. "
                          f"Its values are: {value_list(series)}.")
    return name


def check_protected(frame: pd.DataFrame, condition: Condition) -> str:
    """The protected column exists, holds at least two values, and the comparison fits its type.

    Returns the column's own spelling.
    """
    name = check_column(frame, condition.column, "protected")
    present = frame[name].dropna()
    if present.nunique() < 2:
        only = f" ('{shown(present.iloc[0])}')" if len(present) else ""
        raise LuskinError(f"The protected column '{shown(name)}' has only one value{only}, so there are no two "
                          "groups to compare. Choose another protected column.")
    condition.mask(frame.head(1))  # a comparison that does not fit the column's type says so here
    return name


def check_two_groups(frame: pd.DataFrame, condition: Condition) -> None:
    """The protected condition must hold for some rows with a value and fail for others."""
    name = check_column(frame, condition.column, "protected")
    held = condition.mask(frame)
    known = condition.known(frame)
    if not held.any():
        raise LuskinError(f"No row has {shown(condition, 200)}, so the protected group is empty. "
                          f"Values of '{shown(name)}' include: {value_list(frame[name])}. Choose other values.")
    if held[known].all():
        raise LuskinError(f"Every row has {shown(condition, 200)}, so there is no other class to compare with. "
                          f"Values of '{shown(name)}' include: {value_list(frame[name])}. "
                          "Choose fewer values for the group.")


def check_features(frame: pd.DataFrame, features: Any, outcome: str | None = None) -> tuple[str, ...] | None:
    """Model input columns: None (every column but the outcome) or a list of the data's column names."""
    if features is None:
        return None
    if isinstance(features, (str, bytes)) or not isinstance(features, (list, tuple)):
        raise LuskinError("The model input columns must be a list of column names, "
                          f"not '{shown(features)}'.")
    names = []
    for item in features:
        if not isinstance(item, str):
            raise LuskinError(f"Each model input column must be a column name, not '{shown(item)}'.")
        names.append(check_column(frame, item, "model input"))
    if outcome is not None and any(n.lower() == str(outcome).lower() for n in names):
        raise LuskinError(f"The outcome '{shown(outcome)}' cannot also be a model input column.")
    return tuple(dict.fromkeys(names)) or None


# A number feature beyond this size cannot be standardised: the sum of squares behind the scaler's
# variance overflows to infinity (1e150 squared is 1e300; a billion rows of it still fit in a float).
FEATURE_LIMIT = 1e150


def infinite_counts(frame: pd.DataFrame, columns: Sequence[str], limit: float = FEATURE_LIMIT) -> dict[str, int]:
    """Per numeric column, how many rows hold an infinite number or one beyond ``limit`` in size.

    Infinite: read from 'inf', or too large for a float. Beyond ``FEATURE_LIMIT`` (1e308, say) a model's
    scaling overflows to infinity, so those count too.
    """
    counts = {}
    for name in columns:
        series = frame[name]
        if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
            values = series.to_numpy(dtype=float, na_value=np.nan)
            with np.errstate(invalid="ignore"):
                n = int((np.abs(values) > limit).sum()) if np.isfinite(limit) else int(np.isinf(values).sum())
            if n:
                counts[str(name)] = n
    return counts


def check_finite(frame: pd.DataFrame, columns: Sequence[str], limit: float = FEATURE_LIMIT) -> None:
    """Model input columns must hold finite numbers no larger than ``limit``: a model cannot learn from 'inf'."""
    counts = infinite_counts(frame, columns, limit)
    if counts:
        where = "; ".join(f"'{shown(c)}' in {n:,} row{'s' if n > 1 else ''}" for c, n in counts.items())
        what = ("infinite numbers ('inf', or a number too large to store)" if not np.isfinite(limit) else
                f"infinite numbers or numbers beyond ±{limit:.0e} ('inf', a number too large to store, or one "
                "too large to scale)").replace("e+", "e")
        raise LuskinError(f"A model cannot learn from {what}: "
                          f"{where}. Leave {'that column' if len(counts) == 1 else 'those columns'} out of the "
                          "model inputs, or correct those cells and load the file again.")


def check_positive_present(series: pd.Series, positive: Any) -> None:
    """The positive value must occur in the outcome column: when it never does, it is usually a typo."""
    from .spec import outcome_mask

    hits = outcome_mask(series.dropna(), positive)
    if not hits.any():
        values = ", ".join(str(v) for v in series.dropna().unique()[:MAX_LISTED_VALUES])
        raise LuskinError(
            f"The value '{positive}' never occurs in the outcome column '{series.name}'. "
            f"Its values are: {values}."
        )


def check_two_classes(values: pd.Series, protected: Condition, group_rows: int, other_rows: int) -> None:
    """Both sides of a protected condition must have rows, or there is nothing to compare (usually a typo).

    ``values`` is the protected column (its values are listed in the message).
    """
    if group_rows > 0 and other_rows > 0:
        return
    listed = ", ".join(str(v) for v in values.dropna().unique()[:MAX_LISTED_VALUES])
    if group_rows == 0:
        raise LuskinError(f"No row has {protected}, so the protected group is empty. "
                          f"Values of '{values.name}' include: {listed}.")
    raise LuskinError(f"Every row has {protected}, so there is no other class to compare with. "
                      f"Values of '{values.name}' include: {listed}.")


# ------------------------------------------------------------------------------------------
# Arrays handed to estimators (scores, 0/1 labels, group labels)
# ------------------------------------------------------------------------------------------
def check_groups_argument(groups: Any, sensitive_features: Any) -> Any:
    """The group labels given as ``groups`` or (fairlearn's name) ``sensitive_features``: exactly one."""
    if groups is not None and sensitive_features is not None:
        raise LuskinError("Give the group of each row once: as groups or as sensitive_features, not both.")
    if groups is None and sensitive_features is None:
        raise LuskinError("Give the group of each row (groups=..., or sensitive_features=... as in fairlearn).")
    return groups if groups is not None else sensitive_features


def check_finite_scores(s: np.ndarray) -> np.ndarray:
    """Every score a finite number: the one rule for tuning on scores and for deciding with them.

    A missing score is refused, not decided (``NaN >= t`` is false: the row would silently be a "no").
    """
    if np.isnan(s).any():
        raise LuskinError(
            f"{int(np.isnan(s).sum())} row(s) have no score (empty or not a number). "
            "Remove those rows or choose a score column without gaps."
        )
    if np.isinf(s).any():
        raise LuskinError("Some scores are infinite; every score must be a finite number.")
    return s


def score_array(scores: Any) -> np.ndarray:
    """One number per row, as floats (not yet checked for being finite)."""
    s = np.asarray(scores)
    if s.ndim != 1:
        raise LuskinError("The scores must be one number per row (a single column).")
    try:
        return s.astype(float)
    except (TypeError, ValueError):
        raise LuskinError("The score column must contain numbers only.") from None


def check_scores_outcomes_groups(scores: Any, y: Any, groups: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Finite scores, 0/1 outcomes with both values, and a group label per row, as numpy arrays."""
    s = score_array(scores)
    yy = np.asarray(y)
    g = np.asarray(groups)
    if not (len(s) == len(yy) == len(g)):
        raise LuskinError(
            "Scores, outcomes and groups must have the same number of rows "
            f"(got {len(s)}, {len(yy)} and {len(g)})."
        )
    if len(s) == 0:
        raise LuskinError("There are no rows to tune thresholds on.")
    check_finite_scores(s)
    yy = check_outcome_01(yy, both=True)
    check_group_labels(g, len(s), action="tuning thresholds")
    return s, yy, g


def check_outcome_01(y: Any, *, both: bool = True) -> np.ndarray:
    """Outcomes coded 0 (negative) and 1 (positive), none missing; with ``both``, each value present."""
    yy = np.asarray(y)
    if pd.isna(yy).any():
        raise LuskinError("Some rows have no outcome. Remove them or choose another outcome.")
    uy = np.unique(yy)
    if not set(uy.tolist()) <= {0, 1}:  # True and False count as 1 and 0
        raise LuskinError("The outcome must be coded 0 (negative) and 1 (positive).")
    if both and len(uy) < 2:
        only = "positive" if uy[0] == 1 else "negative"
        raise LuskinError(
            f"Every row has a {only} outcome, so true and false positive rates cannot be "
            "measured. Choose data with both outcomes."
        )
    return yy.astype(np.int8)


def check_labels_01(y: Any, n_rows: int) -> np.ndarray:
    """One 0/1 label per row, none missing (the labels a relabelling algorithm starts from)."""
    labels = np.asarray(y)
    if labels.shape != (n_rows,):
        raise LuskinError(f"There are {labels.shape[0] if labels.ndim else 0} labels for {n_rows} rows.")
    return check_outcome_01(labels, both=False)


def check_group_labels(groups: Any, n_rows: int, *, action: str) -> np.ndarray:
    """One group label per row and none missing; ``action`` completes "Remove them before ..."."""
    g = np.asarray(groups)
    if g.shape != (n_rows,):
        raise LuskinError(f"There must be one group label per row ({n_rows} rows, {g.size} group labels).")
    if pd.isna(g).any():
        raise LuskinError(f"Some rows have no group label. Remove them before {action}.")
    return g


def check_both_outcomes_per_group(
    y: np.ndarray,
    groups: np.ndarray,
    labels: Sequence[Any],
    *,
    purpose: str,
    positive_need: str,
    negative_need: str,
    remedy: str,
) -> None:
    """At least two groups, each with rows of both outcomes.

    ``purpose`` names what needs two groups ("Thresholds per group"); ``positive_need`` /
    ``negative_need`` say what a group without positives / negatives makes impossible ("its true
    positive rate cannot be measured"); ``remedy`` ends those messages.
    """
    if len(labels) < 2:
        only = shown(labels[0]) if len(labels) else ""
        raise LuskinError(
            f"Every row is in the group '{only}', so there is no other group to compare with "
            f"({purpose} need at least two groups). Check the protected condition."
        )
    for lab in labels:
        m = groups == lab
        rows = int(m.sum())
        npos = int(y[m].sum())
        if rows == 0:
            raise LuskinError(f"The group '{shown(lab)}' has no rows.")
        if npos == 0:
            raise LuskinError(
                f"The group '{shown(lab)}' has no rows with a positive outcome, so {positive_need}. {remedy}"
            )
        if npos == rows:
            raise LuskinError(
                f"The group '{shown(lab)}' has no rows with a negative outcome, so {negative_need}. {remedy}"
            )
