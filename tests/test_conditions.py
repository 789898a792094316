"""Every condition operator and every parse error a user can make."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from luskin_core import Condition, LuskinError, parse_condition
from luskin_core.spec.conditions import conjunction_mask

FRAME = pd.DataFrame({
    "race": pd.array(["White", "Black", "Other", None, "White"], dtype="string"),
    "education-num": [9, 10, 11, 13, np.nan],
    "native country": pd.array(["United-States", "Mexico", "United-States", "India", "Cuba"], dtype="string"),
})


@pytest.mark.parametrize("text, column, op, value", [
    ("race == White", "race", "==", "White"),
    ("race = White", "race", "==", "White"),
    ("race != White", "race", "!=", "White"),
    ("education-num > 10", "education-num", ">", 10),
    ("education-num >= 10", "education-num", ">=", 10),
    ("education-num < 10.5", "education-num", "<", 10.5),
    ("education-num <= 10", "education-num", "<=", 10),
    ("race in [Black, Other]", "race", "in", ("Black", "Other")),
    ("race not in [Black, 'Other']", "race", "not in", ("Black", "Other")),
    ("native country == United-States", "native country", "==", "United-States"),
    ("`native country` == 'United States'", "native country", "==", "United States"),
    ("crimsusp == \"MIS/ASSAULT\"", "crimsusp", "==", "MIS/ASSAULT"),
])
def test_parse(text, column, op, value):
    condition = parse_condition(text)
    assert (condition.column, condition.op, condition.value) == (column, op, value)


@pytest.mark.parametrize("text, words", [
    ("", "empty"),
    ("   ", "empty"),
    ("race White", "Cannot read"),
    ("== White", "no column"),
    ("race ==", "no value"),
    ("race in []", "empty"),
    ("race == [Black, Other]", "for a list"),
])
def test_parse_errors_are_plain(text, words):
    with pytest.raises(LuskinError, match=words):
        parse_condition(text)


@pytest.mark.parametrize("text, expected", [
    ("race == White", [1, 0, 0, 0, 1]),
    ("race != White", [0, 1, 1, 0, 0]),  # a missing value satisfies neither side
    ("race in [Black, Other]", [0, 1, 1, 0, 0]),
    ("race not in [Black, Other]", [1, 0, 0, 0, 1]),
    ("education-num > 10", [0, 0, 1, 1, 0]),
    ("education-num >= 10", [0, 1, 1, 1, 0]),
    ("education-num < 10", [1, 0, 0, 0, 0]),
    ("education-num <= 10", [1, 1, 0, 0, 0]),
    ("education-num == 13", [0, 0, 0, 1, 0]),
    ("education-num != 13", [1, 1, 1, 0, 0]),
    ("education-num in [9, 11]", [1, 0, 1, 0, 0]),
    ("education-num not in [9, 11]", [0, 1, 0, 1, 0]),
    ("native country == United-States", [1, 0, 1, 0, 0]),
    ("RACE == White", [1, 0, 0, 0, 1]),  # column names match without regard to case
])
def test_masks(text, expected):
    assert parse_condition(text).mask(FRAME).astype(int).tolist() == expected


def test_known_marks_missing_values():
    assert parse_condition("race == White").known(FRAME).tolist() == [True, True, True, False, True]


def test_conjunction():
    conds = [parse_condition("education-num >= 10"), parse_condition("race != Black")]
    assert conjunction_mask(conds, FRAME).astype(int).tolist() == [0, 0, 1, 0, 0]
    assert conjunction_mask([], FRAME).all()


@pytest.mark.parametrize("text, words", [
    ("race > White", "holds text"),
    ("education-num > ten", "not a number"),
    ("income == 1", "no column named 'income'"),
])
def test_evaluation_errors_are_plain(text, words):
    with pytest.raises(LuskinError, match=words):
        parse_condition(text).mask(FRAME)


def test_round_trip_and_words():
    for text in ["race in [Black, Other]", "education-num > 10", "native country == United-States"]:
        c = parse_condition(text)
        assert Condition.from_dict(c.to_dict()) == c
        assert parse_condition(str(c)) == c
    assert parse_condition("education-num > 10").describe() == "education-num is above 10"


def test_unknown_operator():
    with pytest.raises(LuskinError, match="Unknown comparison"):
        Condition("race", "~=", "White")
