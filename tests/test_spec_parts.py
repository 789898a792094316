"""The specification's typed parts, and every rule said once: the same words from the library, the
command line and the dashboard.

``fixtures/specs_saved_before_parts.json`` holds specifications saved (``to_dict``) by the version
before the parts existed (flat ``AuditSpec``): they must still load, to the same settings.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from cli_fork import ForkedCli
from test_app import _config_text, goto, messages, open_app

from luskin_core.counting.data import PRESETS, load_sample
from luskin_core.errors import LuskinError
from luskin_core.spec.audit_spec import (
    ESTIMATED_RACE,
    FLAT_FIELDS,
    PARTS,
    AuditSpec,
    CellSpec,
    GroupSpec,
    Judgement,
    OutcomeSpec,
)
from luskin_core.spec.validation import check_spec

ROOT = Path(__file__).resolve().parent.parent
SAVED = json.loads((ROOT / "tests" / "fixtures" / "specs_saved_before_parts.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    return load_sample("adult")


# ------------------------------------------------------------------------------------------
# The parts
# ------------------------------------------------------------------------------------------
SPECS = {
    "adult preset": PRESETS["adult"].spec,
    "compas preset": PRESETS["compas"].spec,
    "groups, strata, bins, names": AuditSpec("income", ">50K", group_by=("race", "sex"), strata=("age",),
                                             bins={"age": [30, 50]}, reference="White × Male", metric="ratio",
                                             correction="bh", min_group_size=10, min_group_share=0.02,
                                             value_names={"sex": {"Male": "men"}}),
    "prediction": AuditSpec("two_year_recid", 1, group_by=("sex",), prediction="decile_score", prediction_cutoff=5,
                            criterion="odds", outcome_is="adverse"),
    "score": AuditSpec("decile_score", group_by=("race",), outcome_type="score", score_cutoff=5, tolerance=0.1),
    "values named unknown": AuditSpec("arstmade", "Y", group_by=("race",), unknown_values=("U", 9),
                                      outcome_is="adverse"),
    "estimated race (the proxy audit)": AuditSpec("approved", "yes", estimated=ESTIMATED_RACE, strata=("region",),
                                                  reference="Black", outcome_is="adverse", tolerance=0.1),
}


@pytest.mark.parametrize("name", list(SPECS))
def test_each_part_and_the_whole_round_trip_through_json(name):
    spec = SPECS[name]
    assert AuditSpec.from_json(spec.to_json()) == spec
    flat = spec.to_dict()
    # the saved format is the flat one, as before; an entry saved only when set (estimated groups) only then
    assert list(flat) == [f for f in FLAT_FIELDS if f in flat] and set(FLAT_FIELDS) - set(flat) <= {"estimated", "unknown_values"}
    assert ("estimated" in flat) == (spec.group_spec.estimated is not None)
    assert ("unknown_values" in flat) == bool(spec.unknown_values)
    for attribute, cls in PARTS.items():
        part = getattr(spec, attribute)
        assert isinstance(part, cls)
        assert cls.from_dict(json.loads(json.dumps(part.to_dict()))) == part
        assert set(part.to_dict()) <= set(flat) and all(flat[k] == v for k, v in part.to_dict().items())
    assert AuditSpec.from_parts(spec.outcome_spec, spec.group_spec, spec.cell_spec, spec.judgement) == spec
    for key in FLAT_FIELDS:                                   # flat reads are the parts' values
        owner = next(getattr(spec, a) for a, cls in PARTS.items() if key in cls.__dataclass_fields__)
        assert getattr(spec, key) == getattr(owner, key)


@pytest.mark.parametrize("name", list(SAVED))
def test_specifications_saved_before_the_parts_still_load_to_the_same_settings(name):
    saved = SAVED[name]
    spec = AuditSpec.from_dict(saved)
    assert spec.to_dict() == {**saved, "outcome_is": spec.outcome_is}   # 'favorable' is read as 'favourable'
    if name in ("adult_preset", "compas_preset"):
        assert spec == PRESETS[name.split("_")[0]].spec
    assert AuditSpec(**saved) == spec                                    # the flat keywords build the same


def test_settings_change_by_name_or_by_part_and_each_part_checks_itself():
    spec = PRESETS["adult"].spec
    stricter = spec.with_changes(tolerance=0.01, correction="none")
    assert stricter.judgement == Judgement(tolerance=0.01, correction="none")
    assert stricter.outcome_spec == spec.outcome_spec and stricter.cell_spec == spec.cell_spec
    assert spec.with_parts(judgement=Judgement(tolerance=0.01, correction="none")) == stricter
    assert spec.with_changes(judgement=Judgement(metric="ratio"), correction="bh").judgement == \
        Judgement(metric="ratio", correction="bh")
    built = AuditSpec.from_parts(OutcomeSpec("income", ">50K"), GroupSpec(group_by=("race",)))
    assert built == AuditSpec("income", ">50K", group_by=("race",))
    assert built.cell_spec == CellSpec() and built.judgement == Judgement()
    with pytest.raises(LuskinError, match="no setting named colour"):
        spec.with_changes(colour="red")
    with pytest.raises(LuskinError, match="tolerance must be between 0 and 1"):
        Judgement(tolerance=2)
    with pytest.raises(LuskinError, match="Choose one way to compare like with like"):
        CellSpec(filters=("age > 3",), strata=("sex",))
    with pytest.raises(LuskinError, match="must be 'White' or 'Non-White'"):
        GroupSpec(protected="race == White", reference="Black")


# ------------------------------------------------------------------------------------------
# Every rule, one message: library, command line, page
# ------------------------------------------------------------------------------------------
# name -> (changes to the Adult preset's saved specification, the command line's options after `--preset adult`)
RULES = {
    "groups both ways": ({"group_by": ["race"]}, ["--groups", "race", "--protected", "race == White"]),
    "cells both ways": ({"strata": ["sex"]}, ["--stratify", "sex", "--filter", "education-num > 10"]),
    "tolerance": ({"tolerance": 3}, ["--tolerance", "3"]),
    "smallest group": ({"min_group_size": 0}, ["--min-group-size", "0"]),
    "share": ({"min_group_share": 1.5}, ["--min-group-share", "1.5"]),
    "too many crosses": ({"protected": None, "group_by": ["race", "sex", "age", "workclass"]},
                         ["--groups", "race", "--groups", "sex", "--groups", "age", "--groups", "workclass"]),
    "outcome forms groups": ({"protected": None, "group_by": ["income"]}, ["--groups", "income"]),
    "filter on a group column": ({"protected": None, "group_by": ["education-num"]}, ["--groups", "education-num"]),
    "stratum forms groups": ({"protected": None, "group_by": ["race"], "filters": [], "strata": ["race"]},
                             ["--groups", "race", "--stratify", "race"]),
    "score with a positive value": ({"outcome_type": "score"}, ["--score", "--positive", ">50K"]),
    "criterion without predictions": ({"criterion": "odds"}, ["--criterion", "odds"]),
    "cut-off without predictions": ({"prediction_cutoff": 0.5}, ["--prediction-cutoff", "0.5"]),
    "reference not a class": ({"reference": "Martian"}, ["--reference", "Martian"]),
    # the rules that need the rows (validation.check_spec)
    "unknown protected column": ({"protected": "colour == White", "group_label": None, "other_label": None},
                                 ["--protected", "colour == White"]),
    "positive never occurs": ({"positive": "rich"}, ["--positive", "rich"]),
    "unknown group column": ({"protected": None, "group_by": ["colour"]}, ["--groups", "colour"]),
    "protected group empty": ({"protected": "race == Martian", "group_label": None, "other_label": None},
                              ["--protected", "race == Martian"]),
}


def saved_with(changes: dict) -> dict:
    return {**PRESETS["adult"].spec.to_dict(), **changes}


def library_message(changes: dict, frame: pd.DataFrame) -> str:
    """The library's words: building the specification, then checking it against the data."""
    with pytest.raises(LuskinError) as caught:
        check_spec(AuditSpec.from_dict(saved_with(changes)), frame)
    return str(caught.value)


def cli(*argv: str) -> subprocess.CompletedProcess:
    """``luskin audit ARGV`` through the real executable (Python's start-up included)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "luskin_cli", "audit", *argv], check=False, capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=300)


@pytest.fixture(scope="module")
def forked() -> Iterator[ForkedCli]:
    """The command in processes forked from one that has imported what it imports (``tests/cli_fork.py``): 34 runs
    without 34 Python start-ups; the first rule still goes through the real executable."""
    server = ForkedCli([sys.executable, "-m", "luskin_cli"], [["audit", "--preset", "adult", "--json"]], ROOT)
    yield server
    server.close()


@pytest.mark.parametrize("rule", list(RULES))
def test_each_rule_reads_the_same_in_the_library_and_on_the_command_line(rule, adult, tmp_path, forked):
    changes, options = RULES[rule]
    message = library_message(changes, adult)

    def run(*argv: str) -> subprocess.CompletedProcess:
        return cli(*argv) if rule == next(iter(RULES)) else forked.run(["audit", *argv], 300)

    done = run("--preset", "adult", *options)
    assert done.returncode == 2, done.stdout
    assert done.stderr == f"luskin: {message}\n"          # one line, the library's words, no traceback
    saved = tmp_path / "saved.json"                          # and from a saved configuration
    saved.write_text(json.dumps({"spec": saved_with(changes)}))
    done = run("--data", "sample:adult", "--config", str(saved))
    assert done.returncode == 2 and done.stderr == f"luskin: {message}\n"


def test_each_rule_reads_the_same_on_the_page(adult):
    """A saved configuration breaking each rule, loaded on the Report page: the page says the library's words."""
    at = open_app()
    document = json.loads(_config_text(at))
    for i, (rule, (changes, _)) in enumerate(RULES.items()):
        message = library_message(changes, adult)
        text = json.dumps({**document, "spec": saved_with(changes)})
        at.file_uploader(key="config_upload").set_value((f"rule_{i}.json", text.encode(), "application/json")).run()
        assert not at.exception, (rule, at.exception)
        assert any(message in e for e in messages(at, "error")), (rule, message, messages(at, "error"))


def test_a_rule_broken_with_the_pages_widgets_reads_as_in_the_library(adult):
    """The Audit page's own choices (group by race, stratify by race) break the rule in the library's words."""
    changes, _ = RULES["stratum forms groups"]
    message = library_message(changes, adult)
    at = goto(open_app(), "audit")
    at.radio(key="audit_group_mode").set_value("columns").run()
    at.multiselect(key="audit_group_by").set_value(["race"]).run()
    at.radio(key="audit_cell_mode").set_value("strata").run()
    at.multiselect(key="audit_strata").set_value(["race"]).run()
    assert not at.exception
    assert message in messages(at, "error")
    at.multiselect(key="audit_strata").set_value(["sex"]).run()
    at.multiselect(key="audit_group_by").set_value([]).run()
    assert library_message({"protected": None, "group_by": []}, adult) in messages(at, "error")
