"""First guesses for a file Luskin has never seen (luskin_core.spec.guess), on real layouts.

The three fixtures carry the real column names and codings of German credit, the LSAC law-school
study and HMDA (see tests/fixtures/guess_fixtures.README.md); Adult and COMPAS are the bundled
real files. The old rule audited German credit by ``sex``, counted failing the bar as the
positive outcome and offered COMPAS's ``id`` as a score: each is checked here.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from luskin_core.counting.data import load_csv, load_sample
from luskin_core.spec.conditions import Condition
from luskin_core.spec.guess import (
    first_choices,
    guess_group,
    guess_outcome,
    guess_positive,
    guess_protected,
    is_id_like,
    protected_kind,
    score_columns,
    words,
)

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def fixture(name: str) -> pd.DataFrame:
    return load_csv(FIXTURES / f"{name}.csv")


@pytest.fixture(scope="module")
def compas() -> pd.DataFrame:
    return load_sample("compas")


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    return load_sample("adult")


# ------------------------------------------------------------------------------------------
# Real layouts
# ------------------------------------------------------------------------------------------
def test_german_credit_audits_credit_not_sex() -> None:
    frame = fixture("german_credit")
    assert list(frame.columns[-2:]) == ["credit", "sex"]   # the layout that misled the old rule
    guess = first_choices(frame)
    assert guess.outcome.value == "credit" and guess.outcome.sure
    assert guess.positive.value == 1 and not guess.positive.sure   # 1 = good, but a 1/2 coding is a guess
    assert "guess" in guess.positive.reason
    assert guess.protected.value == "sex" and guess.protected.sure
    assert guess.group.value == Condition("sex", "==", "female") and guess.group.sure


def test_law_school_counts_passing_the_bar_as_positive() -> None:
    frame = fixture("law_school")
    assert frame["pass_bar"].value_counts().idxmin() == 0   # the old rule's rarest value: failing
    guess = first_choices(frame)
    assert guess.outcome.value == "pass_bar" and guess.outcome.sure
    assert guess.positive.value == 1 and guess.positive.sure and guess.positive.reason == "1 means yes"
    assert guess.protected.value == "racetxt"                  # race, although not spelled as a word
    assert guess.group.value == Condition("racetxt", "==", "Black") and guess.group.sure


def test_hmda_action_taken_and_race() -> None:
    frame = fixture("hmda_lar")
    guess = first_choices(frame)
    assert guess.outcome.value == "action_taken" and guess.outcome.sure
    assert guess.positive.value == 1 and "loan originated" in guess.positive.reason
    assert guess.protected.value == "derived_race"
    assert guess.group.value == Condition("derived_race", "==", "Black or African American")
    # applicant_age_above_62 is a Yes/No column but a protected attribute, never the outcome
    assert protected_kind("applicant_age_above_62") == "age"


def test_adult_and_compas(adult: pd.DataFrame, compas: pd.DataFrame) -> None:
    guess = first_choices(adult)
    assert (guess.outcome.value, guess.positive.value, guess.protected.value) == ("income", ">50K", "race")
    assert guess.positive.sure and guess.group.value == Condition("race", "==", "Black")
    guess = first_choices(compas)
    assert (guess.outcome.value, guess.positive.value, guess.protected.value) == ("two_year_recid", 1, "race")
    assert guess.group.value == Condition("race", "==", "African-American")
    sentences = guess.sentences()
    assert guess.outcome_is.value == "adverse" and "bad for the person" in sentences[-1]
    assert len(sentences) == 5 and all("recognised" in s or "guess" in s or "means yes" in s for s in sentences)


# ------------------------------------------------------------------------------------------
# Names
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, expected", [
    ("two_year_recid", ["two", "year", "recid"]), ("isRecid", ["is", "recid"]), ("decile1b", ["decile", "1", "b"]),
    ("applicant_race-1", ["applicant", "race", "1"]), ("Sex & Marital Status", ["sex", "marital", "status"]),
])
def test_words_of_a_column_name(name: str, expected: list[str]) -> None:
    assert words(name) == expected


@pytest.mark.parametrize("name, kind", [
    ("race", "race"), ("racetxt", "race"), ("derived_ethnicity", "ethnicity"), ("Gender", "sex"), ("male", "sex"),
    ("applicant_age", "age"), ("age_cat", "age"), ("foreign_worker", "nationality"), ("marital-status", "marital status"),
    ("agency", None), ("usage", None), ("terrace", None), ("grace_period", None), ("sextant_reading", None),
])
def test_protected_names_are_whole_words(name: str, kind: str | None) -> None:
    assert protected_kind(name) == kind


def test_outcome_names_are_whole_words() -> None:
    rng = np.random.default_rng(0)
    n = 200
    frame = pd.DataFrame({"workclass": rng.choice(["a", "b"], n), "yearly": rng.choice(["p", "q"], n),
                          "decision": rng.choice(["approved", "denied"], n), "zone": rng.choice(["x", "y"], n)})
    guess = guess_outcome(frame)
    assert guess.value == "decision" and guess.sure and guess.reason == "recognised from its name"


def test_outcome_without_a_telling_name_is_said_to_be_a_guess() -> None:
    rng = np.random.default_rng(1)
    n = 200
    frame = pd.DataFrame({"amount": rng.normal(size=n), "region": rng.choice(list("abcdef"), n),
                          "flag_a": rng.choice(["yes", "no"], n), "colour": rng.choice(["red", "blue"], n)})
    guess = guess_outcome(frame)
    assert guess.value == "flag_a" and not guess.sure and "yes/no" in guess.reason
    frame = frame.drop(columns="flag_a")
    guess = guess_outcome(frame)
    assert guess.value == "colour" and not guess.sure and "last column with two values" in guess.reason


# ------------------------------------------------------------------------------------------
# The positive value
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("values, expected, sure", [
    (["no", "yes", "no"], "yes", True), (["N", "Y", "N"], "Y", True), (["False", "True"], "True", True),
    (["bad", "good", "good"], "good", True), (["<=50K", ">50K", "<=50K"], ">50K", True),
    (["Denied", "Approved", "Denied"], "Approved", True), (["fail", "other", "fail"], "other", True),
    ([0, 1, 0, 0], 1, True), ([0.0, 1.0, 0.0], 1, True), ([2, 1, 1], 1, False),
    (["approved", "denied", "withdrawn", "denied"], "approved", True),
    (["A", "B", "B"], "B", False),
])
def test_positive_value(values: list, expected: object, sure: bool) -> None:
    guess = guess_positive(pd.Series(values * 10, name="outcome"))
    assert guess.value == expected and guess.sure is sure
    if not sure:
        assert "guess" in guess.reason


# ------------------------------------------------------------------------------------------
# The protected column and group
# ------------------------------------------------------------------------------------------
def test_race_is_preferred_and_the_outcome_is_never_protected() -> None:
    frame = pd.DataFrame({"sex": ["F", "M"] * 20, "race": ["A", "B", "C", "A"] * 10, "y": [0, 1] * 20})
    assert guess_protected(frame, "y").value == "race"
    assert guess_protected(frame, "race").value == "sex"


def test_no_protected_name_is_said_to_be_a_guess() -> None:
    frame = pd.DataFrame({"amount": range(40), "branch": ["north", "south"] * 20, "y": [0, 1] * 20})
    guess = guess_protected(frame, "y")
    assert guess.value == "branch" and not guess.sure and "guess" in guess.reason


def test_group_recognised_values_and_unknowns() -> None:
    sex = pd.Series(["Male"] * 50 + ["Female"] * 30 + ["Sex Not Available"] * 20, name="derived_sex")
    assert guess_group(sex).value == Condition("derived_sex", "==", "Female")
    eth = pd.Series(["Not Hispanic or Latino"] * 60 + ["Hispanic or Latino"] * 20 + ["Joint"] * 5,
                    name="derived_ethnicity")
    assert guess_group(eth).value == Condition("derived_ethnicity", "==", "Hispanic or Latino")
    male = pd.Series([1.0] * 60 + [0.0] * 40, name="male")
    guess = guess_group(male)
    assert guess.value == Condition("male", "==", 0) and guess.sure and "women" in guess.reason


def test_group_that_is_not_recognised_is_never_silently_the_majority() -> None:
    two = pd.Series(["urban"] * 70 + ["rural"] * 30, name="area")
    guess = guess_group(two)
    assert guess.value == Condition("area", "==", "rural") and not guess.sure and "smaller" in guess.reason
    many = pd.Series(["Catholic"] * 50 + ["Protestant"] * 30 + ["Unknown"] * 25 + ["Jewish"] * 10, name="religion")
    guess = guess_group(many)
    assert guess.value == Condition("religion", "==", "Protestant") and not guess.sure
    assert "second largest" in guess.reason and "'Catholic'" in guess.reason


def test_age_as_a_number_uses_the_age_discrimination_convention() -> None:
    guess = guess_group(pd.Series(range(18, 80), name="age"))
    assert guess.value == Condition("age", ">=", 40) and not guess.sure and "40" in guess.reason
    guess = guess_group(pd.Series(range(18, 30), name="age"))    # nobody 40 or older: the median
    assert guess.value.op == ">=" and guess.value.value == 23.5 and "upper half" in guess.reason


# ------------------------------------------------------------------------------------------
# Score columns for the Thresholds page
# ------------------------------------------------------------------------------------------
def test_compas_scores_come_first_and_id_is_never_offered(compas: pd.DataFrame) -> None:
    found = score_columns(compas, "two_year_recid", "race")
    assert found.columns[:3] == ("decile_score", "decile_score.1", "v_decile_score")
    assert found.named == ("decile_score", "decile_score.1", "v_decile_score")
    assert "id" not in found.columns and "two_year_recid" not in found.columns and "age" not in found.columns


def test_identifiers_and_codes_are_not_scores() -> None:
    frame = fixture("hmda_lar")
    found = score_columns(frame, "action_taken", "derived_race")
    for name in ("census_tract", "county_code", "derived_msa-md", "activity_year", "loan_type", "lien_status",
                 "purchaser_type", "applicant_credit_score_type", "denial_reason-1", "applicant_race-1"):
        assert name not in found.columns, name
    assert "interest_rate" in found.columns
    assert "No column's name says it is a score" in found.note


def test_unique_whole_numbers_are_identifiers_but_unique_probabilities_are_scores() -> None:
    rng = np.random.default_rng(3)
    n = 500
    frame = pd.DataFrame({"applicant": rng.permutation(n) + 10_000, "prob_default": rng.random(n),
                          "zip": rng.integers(10_000, 99_999, n), "y": rng.integers(0, 2, n)})
    assert is_id_like(frame["applicant"]) and not is_id_like(frame["prob_default"]) and is_id_like(frame["zip"])
    found = score_columns(frame, "y")
    assert found.columns == ("prob_default",) and found.named == ("prob_default",)


def test_no_plausible_score_column_is_said_plainly() -> None:
    frame = pd.DataFrame({"id": range(100), "race": ["a", "b"] * 50, "y": [0, 1] * 50})
    found = score_columns(frame, "y", "race")
    assert found.columns == () and "No column can serve as a score" in found.note
