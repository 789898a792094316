"""First guesses for a file Luskin has never seen: the outcome, its positive value, the protected
group, and the columns that could be a score.

A newcomer who uploads a file should land on a sensible audit, not a confident wrong one. The
old rule (the last two-valued column as the outcome, its rarest value as positive, the most
common protected value as "the group") audited German credit by ``sex`` and law school by
*failing* the bar. These guesses read the column names first (``outcome``, ``decision``,
``pass_bar``, ``two_year_recid``, ``race``, ``sex`` ...; whole words only, so ``workclass`` is not
``class`` and ``agency`` is not ``age``) and the values next (a 0/1, yes/no, true/false or
good/bad column; which value means "yes"). Every guess says whether it was recognised or is only
a guess, in words the page shows, so the analyst knows what to check before the first verdict.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from luskin_core.spec.conditions import Condition
from luskin_core.spec.direction import (  # noqa: F401 (the direction's rule, re-exported where it was)
    ADVERSE_WORDS,
    ASK_DIRECTION,
    FAVOURABLE_WORDS,
    NO_LIKE,
    YES_LIKE,
    Guess,
    as_plain,
    normalised_text,
    outcome_direction,
    words,
)

GUESS_ROWS = 200_000  # larger files are guessed from a seeded sample of rows (the checks use all rows)

# Outcome names, matched as whole words of the column name (two_year_recid -> two, year, recid).
OUTCOME_WORDS = frozenset({
    "outcome", "label", "target", "decision", "decided", "approved", "approval", "accepted", "hired",
    "admitted", "admission", "default", "recid", "recidivism", "result", "y", "class", "pass", "passed",
    "frisked", "arrested", "granted", "denied", "rejected", "selected", "promoted", "churn", "response",
})
# Whole column names that are outcomes in well-known public files.
OUTCOME_NAMES = frozenset({
    "income", "credit", "risk", "credit_risk", "creditability", "good_bad", "action_taken", "loan_status",
    "pass_bar", "two_year_recid", "is_recid", "y_true", "ground_truth",
})
# Values that say "yes" / "no" (compared lower-case, without blanks).
YES_VALUES = ("1", "yes", "y", "true", "t", "approved", "accepted", "accept", "pass", "passed", "good",
              "hired", "admitted", "granted", "originated", "loan originated", "success", "positive",
              "selected", "high", "favorable", "favourable")
NO_VALUES = ("0", "no", "n", "false", "f", "denied", "rejected", "reject", "fail", "failed", "bad",
             "not hired", "negative", "low", "declined", "unfavorable", "unfavourable")
# A column with a known coding: its positive value and what that value means.
KNOWN_POSITIVES = {"action_taken": (1, "HMDA's code 1, 'loan originated'")}

# Protected attributes, in the order they are preferred (the paper audits race first).
PROTECTED_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("race", re.compile(r"^(race\w*|racial)$")),
    ("ethnicity", re.compile(r"^ethnic\w*$")),
    ("sex", re.compile(r"^(sex|gender|male|female|is_male|is_female)$")),
    ("age", re.compile(r"^(age|ages|agegroup|agecat)$")),
    ("religion", re.compile(r"^religio\w*$")),
    ("nationality", re.compile(r"^(nationality|national|citizenship|citizen|foreign|immigrant|immigration)$")),
    ("disability", re.compile(r"^(disability|disabled|handicap\w*)$")),
    ("marital status", re.compile(r"^(marital|married|marriage)$")),
    ("pregnancy", re.compile(r"^pregnan\w*$")),
)
# Values of a protected column recognised as the group usually protected, per kind.
GROUP_VALUES: dict[str, tuple[re.Pattern[str], ...]] = {
    "race": (re.compile(r"^(black|african[- ]american|black or african american|afr[- ]am)$"),
             re.compile(r"\b(black|african)\b")),
    "ethnicity": (re.compile(r"^(hispanic or latino|hispanic|latino|latina|latinx|hispanic/latino)$"),),
    "sex": (re.compile(r"^(female|f|woman|women|w|girl)$"),),
}
# Values that mean "not known" rather than a group.
UNKNOWN_VALUE = re.compile(
    r"(not available|not provided|unknown|^n/?a$|^missing$|^joint$|free form text|^8888$|^9999$|^exempt$)",
    re.IGNORECASE)
AGE_LAW = 40  # US employment law (ADEA) protects workers aged 40 and over

# Score columns: names that say "score", and names that say "identifier".
SCORE_WORDS = frozenset({"score", "scores", "risk", "prob", "proba", "probability", "propensity", "decile",
                         "rating", "pred", "prediction", "predicted", "likelihood", "logit", "odds"})
ID_WORDS = frozenset({"id", "ids", "uuid", "guid", "ssn", "zip", "zipcode", "postcode", "postal", "date", "dob",
                      "phone", "index", "case", "fips", "tract", "lei", "msa", "md"})
ID_LAST_WORDS = frozenset({"number", "nr", "code", "key"})
# A name ending in one of these is a category coded as numbers (HMDA's loan_type 1-4), not a score.
CODE_ENDINGS = frozenset({"type", "status", "purpose", "reason", "category", "class", "flag", "code", "group"})


NOT_RECOGNISED = Guess(None, False, ASK_DIRECTION)


@dataclass(frozen=True)
class FirstChoices:
    """The guessed outcome, positive value, protected column and group for a new file."""

    outcome: Guess            # value: the column name
    positive: Guess           # value: the outcome value that counts as "yes"
    protected: Guess          # value: the column name
    group: Guess              # value: a Condition on the protected column
    outcome_is: Guess = NOT_RECOGNISED   # value: "favourable", "adverse" or None (ask)

    def sentences(self) -> tuple[str, ...]:
        """One plain sentence per guess, saying whether it was recognised or is only a guess."""
        return (
            f"Outcome: '{self.outcome.value}' ({self.outcome.reason}).",
            f"Counted as positive: '{self.positive.value}' ({self.positive.reason}).",
            f"Protected column: '{self.protected.value}' ({self.protected.reason}).",
            (f"Protected group: {self.group.value.describe()} ({self.group.reason})." if self.group.value is not None
             else f"Protected group: none could be formed ({self.group.reason})."),
            (f"The outcome counted is {'bad' if self.outcome_is.value == 'adverse' else 'good'} for the person: "
             f"{self.outcome_is.value} ({self.outcome_is.reason})." if self.outcome_is.value is not None else
             "Whether the outcome counted is good or bad for the person: not recognised from the names; say it "
             "below before any verdict is drawn."),
        )


def _last_word(parts: Sequence[str]) -> str:
    """The last word that is not a number (denial_reason-1 -> reason)."""
    alpha = [w for w in parts if not w.isdigit()]
    return alpha[-1] if alpha else ""


def _sample(frame: pd.DataFrame, rows: int = GUESS_ROWS) -> pd.DataFrame:
    return frame if len(frame) <= rows else frame.sample(rows, random_state=0)


def is_numeric(series: pd.Series) -> bool:
    return bool(pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series))


def protected_kind(name: Any) -> str | None:
    """The protected attribute a column name stands for (race, sex, age, ...), or None."""
    for word in words(name):
        for kind, pattern in PROTECTED_KINDS:
            if pattern.match(word):
                return kind
    return None


def is_id_like(series: pd.Series, name: Any = None) -> bool:
    """An identifier, code or date rather than a measurement: by its name, or whole numbers unique per row."""
    parts = words(series.name if name is None else name)
    if any(w in ID_WORDS for w in parts) or _last_word(parts) in ID_LAST_WORDS:
        return True
    present = series.dropna()
    if len(present) < 20 or not is_numeric(series):
        return False
    values = present.to_numpy(dtype=float)
    whole = bool(np.all(np.isfinite(values)) and np.all(values == np.round(values)))
    return whole and present.nunique() == len(present)


def _yes_no(values: Sequence[Any] | np.ndarray) -> tuple[Any | None, str, bool]:
    """Of a column's two values, the one that means "yes", why, and whether that is recognised or a guess."""
    normed = {normalised_text(v): v for v in values}
    keys = set(normed)
    if len(keys) != 2:
        return None, "", False
    if keys == {"0", "1"}:
        return normed["1"], "1 means yes", True
    if keys == {"1", "2"}:
        return normed["1"], "a guess: in a 1/2 coding 1 usually means yes", False
    yes = [k for k in keys if k in YES_VALUES]
    no = [k for k in keys if k in NO_VALUES]
    high = [k for k in keys if re.match(r"^(>|more than|over|above|greater)", k)]
    if len(yes) == 1:
        return normed[yes[0]], f"'{as_plain(normed[yes[0]])}' means yes", True
    if len(high) == 1:
        return normed[high[0]], "the higher of the two values", True
    if len(no) == 1:
        other = next(k for k in keys if k != no[0])
        return normed[other], f"the value that is not '{as_plain(normed[no[0]])}'", True
    return None, "", False


def _yes_no_many(values: Sequence[Any]) -> tuple[Any | None, str, bool]:
    """With more than two values: a single value whose word means yes (approved, hired, ...), if any."""
    yes = [v for v in values if normalised_text(v) in YES_VALUES and not normalised_text(v).isdigit() and len(normalised_text(v)) > 1]
    if len(yes) == 1:
        return yes[0], f"'{as_plain(yes[0])}' means yes", True
    return None, "", False


def guess_outcome(frame: pd.DataFrame) -> Guess:
    """The column most likely to be the decision or label: by its name, then by its values."""
    data = _sample(frame)
    best: tuple[float, int, str, str] | None = None
    for position, name in enumerate(frame.columns):
        series = data[name]
        if protected_kind(name) is not None or is_id_like(series, name):
            continue
        distinct = series.dropna().unique()
        count = len(distinct)
        if count < 2:
            continue
        parts = words(name)
        named = str(name).strip().lower() in OUTCOME_NAMES or any(w in OUTCOME_WORDS for w in parts)
        score = 0.0
        if count == 2:
            score += 2
            if _yes_no(distinct)[2]:
                score += 2
        elif count <= 10:
            score += 0.5 if named else -1
        else:
            score -= 4
        numbers = series.dropna().to_numpy(float) if is_numeric(series) else np.array([])
        numbers = numbers[np.isfinite(numbers)]
        if is_numeric(series) and count > 2 and not np.all(np.mod(numbers, 1) == 0):
            score -= 4   # a continuous measurement is not a decision
        if named:
            score += 5 if count <= 10 else 1
        if best is None or (score, position) > (best[0], best[1]):
            if named and count <= 10:
                why = "recognised from its name"
            elif count == 2 and _yes_no(distinct)[2]:
                why = "a guess: a yes/no column, the last one in the file"
            elif count == 2:
                why = "a guess: the last column with two values"
            else:
                why = "a guess: no column looks like a yes/no decision"
            best = (score, position, str(name), why)
    if best is None:
        name = str(frame.columns[-1])
        return Guess(name, False, "a guess: no column has two or more values")
    return Guess(best[2], best[3].startswith("recognised"), best[3])


def guess_positive(series: pd.Series) -> Guess:
    """The outcome value that means "yes" (1, yes, true, approved, pass, good, >50K, ...)."""
    name = str(series.name).strip().lower()
    counts = series.dropna().value_counts()
    if counts.empty:
        return Guess(None, False, "the column has no values")
    values = [as_plain(v) for v in counts.index]
    if name in KNOWN_POSITIVES:
        code, meaning = KNOWN_POSITIVES[name]
        if any(normalised_text(v) == normalised_text(code) for v in values):
            return Guess(next(v for v in values if normalised_text(v) == normalised_text(code)), True, meaning)
    if len(values) <= 10:
        value, why, sure = _yes_no(values) if len(values) == 2 else _yes_no_many(values)
        if value is not None:
            return Guess(as_plain(value), sure, why)
    return Guess(values[0], False, "a guess: the most common value; check that it means 'yes'")


def guess_outcome_is(outcome: Any, positive: Any) -> Guess:
    """The outcome's direction by the one rule (:func:`outcome_direction`); None where it is not recognised."""
    return outcome_direction(outcome, positive)


def guess_protected(frame: pd.DataFrame, outcome: str | None = None) -> Guess:
    """The protected column: race first, then ethnicity, sex, age and the other protected grounds."""
    data = _sample(frame)
    found: list[tuple[int, int, str, str]] = []
    kinds = [k for k, _ in PROTECTED_KINDS]
    for position, name in enumerate(frame.columns):
        if name == outcome:
            continue
        kind = protected_kind(name)
        if kind is not None and data[name].nunique(dropna=True) >= 2:
            found.append((kinds.index(kind), position, str(name), kind))
    if found:
        _, _, name, kind = min(found)
        return Guess(name, True, f"recognised from its name: {kind}")
    for name in frame.columns:
        series = data[name]
        if name != outcome and not is_numeric(series) and 2 <= series.nunique(dropna=True) <= 10:
            return Guess(str(name), False, "a guess: no column name says race, sex, age or the like")
    others = [c for c in frame.columns if c != outcome]
    return Guess(str((others or list(frame.columns))[0]), False,
                 "a guess: no column name says race, sex, age or the like")


def guess_group(series: pd.Series) -> Guess:
    """Which rows form the protected group (the paper compares it with everyone else)."""
    name = series.name
    kind = protected_kind(name)
    present = series.dropna()
    counts = present.value_counts()
    values = [as_plain(v) for v in counts.index]
    usable = [v for v in values if not UNKNOWN_VALUE.search(str(v))] or values
    parts = words(name)
    if is_numeric(series):
        if {normalised_text(v) for v in values} == {"0", "1"}:
            if "male" in parts:
                return Guess(Condition(str(name), "==", 0), True, f"recognised: {name} = 0 are women")
            if "female" in parts:
                return Guess(Condition(str(name), "==", 1), True, f"recognised: {name} = 1 are women")
        if kind == "age" and len(values) > 2:
            low, high = float(present.min()), float(present.max())
            if low < AGE_LAW <= high:
                return Guess(Condition(str(name), ">=", AGE_LAW), False,
                             "a convention: 40 and over, the ages US employment law protects; change it if needed")
        if len(values) == 2:
            smaller = values[-1]
            return Guess(Condition(str(name), "==", smaller), False,
                         "a guess: the smaller of the two groups, compared with the larger")
        median = float(present.median())
        median = int(median) if median.is_integer() else median
        return Guess(Condition(str(name), ">=", median), False,
                     "a guess: the upper half of the values, compared with the lower half")
    for pattern in GROUP_VALUES.get(kind or "", ()):
        hits = [v for v in usable if pattern.search(normalised_text(v))]
        if hits:
            return Guess(Condition(str(name), "==", hits[0]), True,
                         f"recognised as the group {kind} audits usually compare with the others")
    if len(usable) == 2:
        return Guess(Condition(str(name), "==", usable[-1]), False,
                     "a guess: the smaller of the two groups, compared with the larger")
    if len(usable) > 2:
        return Guess(Condition(str(name), "==", usable[1]), False,
                     f"a guess: the second largest group, compared with everyone else (the largest is "
                     f"'{usable[0]}')")
    return Guess(Condition(str(name), "==", usable[0]) if usable else None, False,
                 "a guess: the column has a single value")


def first_choices(frame: pd.DataFrame) -> FirstChoices:
    """Every first guess for a new file, each saying whether it was recognised or only guessed."""
    outcome = guess_outcome(frame)
    positive = guess_positive(frame[outcome.value])
    protected = guess_protected(frame, outcome.value)
    group = guess_group(_sample(frame)[protected.value])
    return FirstChoices(outcome, positive, protected, group, guess_outcome_is(outcome.value, positive.value))


@dataclass(frozen=True)
class ScoreColumns:
    """Columns that could hold a score, the ones whose names say so first, and a note for the page."""

    columns: tuple[str, ...]
    named: tuple[str, ...]
    note: str


def score_columns(frame: pd.DataFrame, outcome: str | None = None,
                  protected: str | Sequence[str] | None = None) -> ScoreColumns:
    """Numeric columns that could be a risk score: never the outcome, a protected column or an identifier.

    Names with score, risk, prob, decile ... come first. The note says when none is plausible,
    or when none is named like a score (then they are only numeric columns).
    """
    banned = {str(c).lower() for c in ([protected] if isinstance(protected, str) else (protected or ()))}
    if outcome is not None:
        banned.add(str(outcome).lower())
    data = _sample(frame)
    named: list[str] = []
    other: list[str] = []
    for name in frame.columns:
        series = data[name]
        if str(name).lower() in banned or not is_numeric(series) or series.nunique(dropna=True) < 2:
            continue
        if is_id_like(series, name) or protected_kind(name) is not None or _last_word(words(name)) in CODE_ENDINGS:
            continue
        (named if any(w in SCORE_WORDS for w in words(name)) else other).append(str(name))
    columns = tuple(named + other)
    if not columns:
        note = ("No column can serve as a score: a score is a numeric column other than the outcome, the "
                "protected column and identifiers (id, case number, zip code, dates). Train a model instead.")
    elif not named:
        note = ("No column's name says it is a score (score, risk, probability, decile): these are the data's "
                "numeric columns. Choose one only if higher values mean 'more likely positive'.")
    else:
        note = "Columns whose names say score, risk, probability or decile come first."
    return ScoreColumns(columns, tuple(named), note)
