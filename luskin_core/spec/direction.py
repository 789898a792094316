"""Whether the counted outcome is good or bad for the person: the one rule the Data page and the command line read.

Kept apart from the first guesses (:mod:`luskin_core.spec.guess`, which reads frames) so that ``luskin audit`` on a
file decides and says the direction without importing pandas.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Guess:
    """One guessed choice: the value, whether it was recognised (``sure``), and why, in words."""

    value: Any
    sure: bool
    reason: str


# Outcomes that are bad for the person: a denial, a default, an arrest, a frisk, a rejection, reoffending.
ADVERSE_WORDS = frozenset({
    "default", "defaulted", "defaults", "denied", "denial", "deny", "arrest", "arrested", "arrests", "frisk",
    "frisked", "searched", "rejected", "reject", "rejection", "recid", "recidivism", "reoffend", "reoffended",
    "declined", "fail", "failed", "failure", "bad", "fired", "terminated", "dismissed", "convicted", "jailed",
    "detained", "charged", "delinquent", "delinquency", "fraud", "churn", "evicted", "eviction", "violation",
    "flagged", "unfavorable", "unfavourable", "withdrawn", "withdrew", "dropout", "expelled", "suspended",
    "suspension", "revoked", "foreclosed", "foreclosure", "overdue",
})
YES_LIKE = frozenset({"1", "yes", "y", "true", "t"})
# Words of an outcome's name or value that say the counted outcome is good for the person.
FAVOURABLE_WORDS = frozenset({
    "approved", "approval", "approve", "accepted", "accept", "acceptance", "hired", "hire", "hiring", "admitted",
    "admission", "admit", "granted", "grant", "selected", "selection", "promoted", "promotion", "pass", "passed",
    "good", "originated", "success", "successful", "favorable", "favourable", "income", "offer", "offered",
    "awarded", "award", "released", "paroled", "graduated", "graduate", "employed", "funded", "eligible",
})
NO_LIKE = frozenset({"0", "no", "n", "false", "f"})
ASK_DIRECTION = "not recognised from the names: say whether it is good or bad for the person"


def words(name: Any) -> list[str]:
    """The words of a column name: split at non-letters and camelCase, lower-case."""
    text = re.sub(r"([a-z])([A-Z])|([A-Za-z])(?=\d)|(\d)(?=[A-Za-z])", r"\1\3\4 \2", str(name))
    return [w for w in re.split(r"[^A-Za-z0-9]+", text.lower()) if w]


def as_plain(value: Any) -> Any:
    """numpy scalars to Python ones; whole floats to int (1.0 -> 1)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def normalised_text(value: Any) -> str:
    """A value as text to compare: stripped, lower case, each run of blanks one space."""
    value = as_plain(value)
    return re.sub(r"\s+", " ", str(value).strip().lower())


def outcome_direction(outcome: Any, positive: Any = None) -> Guess:
    """Whether the counted outcome is good ("favourable") or bad ("adverse") for the person, or None: not known.

    The one rule the page and the command line read. The value counted decides first (denied, rejected, bad,
    default ... are adverse; approved, hired, pass, good ... favourable); a yes-like value (1, yes, true; or the
    higher of two values, '>50K') takes the meaning of the column's name (default, arrested, two_year_recid are
    harm; hired, admitted, pass_bar, income are good), a no-like value (0, no) the opposite. Where neither the
    value nor the name says which way is good (``death_penalty`` = Yes, ``outcome`` = 1, ``ai_score``), nothing is
    recognised: the value is None and the page asks before any verdict is drawn (a wrong direction turns
    "favoured" around). Several positive values (a tuple: "Fail" or "Withdrawn") are recognised when the ones
    recognised agree (the others unknown), and not when they disagree.
    """
    if isinstance(positive, (tuple, list, frozenset, set)):
        each = [outcome_direction(outcome, value) for value in positive]
        known = {g.value for g in each if g.value is not None}
        if len(known) == 1:
            first = next(g for g in each if g.value is not None)
            return Guess(first.value, True, first.reason)
        if len(known) > 1:
            return Guess(None, False, "the values counted disagree (some good, some bad for the person): say which "
                                      "it is")
        return Guess(None, False, ASK_DIRECTION)
    value = "" if positive is None else normalised_text(positive)
    value_words = set(words(positive)) | {value} if positive is not None else set()
    negated = value.startswith(("no ", "not ", "non-", "non ", "un"))
    if value_words & ADVERSE_WORDS and not negated:
        return Guess("adverse", True, f"recognised: '{as_plain(positive)}' is bad for the person")
    if value_words & FAVOURABLE_WORDS and not negated:
        return Guess("favourable", True, f"recognised: '{as_plain(positive)}' is good for the person")
    name_words = set(words(outcome))
    yes_like = positive is None or value in YES_LIKE or bool(re.match(r"^(>|more than|over|above|greater)", value))
    no_like = value in NO_LIKE
    if name_words & ADVERSE_WORDS and not name_words & FAVOURABLE_WORDS:
        if yes_like:
            return Guess("adverse", True, f"recognised from the name '{outcome}': counting it counts harm")
        if no_like:
            return Guess("favourable", True, f"recognised: '{outcome}' = '{as_plain(positive)}' is being spared it")
    if name_words & FAVOURABLE_WORDS and not name_words & ADVERSE_WORDS:
        if yes_like:
            return Guess("favourable", True, f"recognised from the name '{outcome}': counting it counts a benefit")
        if no_like:
            return Guess("adverse", True, f"recognised: '{outcome}' = '{as_plain(positive)}' is going without it")
    return Guess(None, False, ASK_DIRECTION)


