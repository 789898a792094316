"""The audit command line: tables, the JSON document's shape, and plain errors with exit status 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from luskin_cli.main import main


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_preset_table(capsys):
    status, out, err = run(capsys, "audit", "--preset", "adult")
    assert status == 0 and err == ""
    assert "more than 10 years of education" in out and "44.3 [" in out and "NOT fair" in out
    assert "44% of White" in out


def test_json_document_shape(capsys):
    status, out, _ = run(capsys, "audit", "--data", "sample:adult", "--outcome", "income", "--positive", ">50K",
                         "--protected", "race == White", "--filter", "education-num > 10",
                         "--filter", "sex == Female", "--tolerance", "0.1", "--json")
    assert status == 0
    doc = json.loads(out)
    assert len(doc["cells"]) == 4 and len(doc["gaps"]) == 2
    for cell in doc["cells"]:
        assert {"filter_holds", "in_group", "n", "positives", "ratio", "ci_low", "ci_high"} <= set(cell)
        assert isinstance(cell["filter_holds"], bool) and isinstance(cell["in_group"], bool)
    for gap in doc["gaps"]:
        assert {"filter_holds", "gap", "p_value", "fair"} <= set(gap)
    assert doc["spec"]["tolerance"] == 0.1
    assert [f["column"] for f in doc["spec"]["filters"]] == ["education-num", "sex"]


def test_without_filter_filter_holds_is_null(capsys):
    status, out, _ = run(capsys, "audit", "--preset", "compas", "--json")
    doc = json.loads(out)
    assert status == 0 and [c["filter_holds"] for c in doc["cells"]] == [None, None]
    assert doc["cells"][0]["n"] == 3696


def test_hyphens_and_spaces_in_names_and_values(capsys, tmp_path):
    path = tmp_path / "people.csv"
    path.write_text("native country;decision;group name\nUnited-States;yes;A B\nMexico;no;A B\n"
                    "United-States;no;C\nMexico;yes;C\n", encoding="utf-8")
    status, out, _ = run(capsys, "audit", "--data", str(path), "--outcome", "decision", "--positive", "yes",
                         "--protected", "group name == A B", "--filter", "native country == United-States",
                         "--json")
    assert status == 0
    cells = {(c["filter_holds"], c["in_group"]): (c["n"], c["positives"]) for c in json.loads(out)["cells"]}
    assert cells == {(True, True): (1, 1), (True, False): (1, 0), (False, True): (1, 0), (False, False): (1, 1)}


def test_saved_config_is_reused(capsys, tmp_path):
    from luskin_core.counting.data import PRESETS

    path = tmp_path / "spec.json"
    path.write_text(PRESETS["adult"].spec.with_changes(tolerance=0.2).to_json())
    status, out, _ = run(capsys, "audit", "--data", "sample:adult", "--config", str(path), "--json")
    assert status == 0 and json.loads(out)["tolerance"] == 0.2


@pytest.mark.parametrize("argv, words", [
    (["audit"], "Say which data"),
    (["audit", "--data", "sample:adult"], "Choose the outcome column"),
    (["audit", "--preset", "adult", "--positive", "rich"], "never occurs"),
    (["audit", "--preset", "adult", "--filter", "education-num >> 3"], "education-num"),
    (["audit", "--preset", "adult", "--protected", "colour == White"], "no protected column named 'colour'"),
    (["audit", "--data", "no/such/file.csv", "--outcome", "a", "--positive", "1", "--protected", "b == 1"],
     "no file"),
    (["audit", "--preset", "adult", "--tolerance", "3"], "between 0 and 1"),
    (["audit", "--preset", "nope"], "invalid choice"),
    (["frobnicate"], "invalid choice"),
])
def test_user_mistakes_exit_2_with_one_plain_line(capsys, argv, words):
    status, _out, err = run(capsys, *argv)
    assert status == 2
    assert words in err and "Traceback" not in err
    assert err.startswith("luskin: ")


def test_bad_config_file(capsys, tmp_path):
    path = tmp_path / "broken.json"
    path.write_text("{oops")
    status, _, err = run(capsys, "audit", "--preset", "adult", "--config", str(path))
    assert status == 2 and "not valid JSON" in err


def test_module_entry_point_runs():
    done = subprocess.run([sys.executable, "-m", "luskin_cli", "audit", "--preset", "compas", "--json"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["cells"][1]["label"] == "Caucasian"
    bad = subprocess.run([sys.executable, "-m", "luskin_cli", "audit", "--preset", "adult", "--positive", "x"],
                         capture_output=True, text=True, timeout=120, check=False)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "never occurs" in bad.stderr
