"""``luskin retrain``: the JSON document's shape, the synthetic export, and plain errors (exit 2)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from luskin_cli.main import main
from luskin_core.counting.data import PRESETS

FEATURES = ",".join(PRESETS["adult"].features)


@pytest.fixture(scope="module")
def adult_csv(adult, tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "adult_small.csv"
    adult.sample(2500, random_state=7).to_csv(path, index=False)
    return path


def spec_args(path):
    return ["--data", str(path), "--outcome", "income", "--positive", ">50K", "--protected", "race == White",
            "--filter", "education-num > 10", "--tolerance", "0", "--features", FEATURES]


def run(capsys, *argv):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_json_shape(capsys, adult_csv, tmp_path):
    target = tmp_path / "d3.csv"
    status, out, err = run(capsys, "retrain", *spec_args(adult_csv), "--algorithm", "1", "--first", "LR",
                           "--second", "LR", "--seed", "5", "--json", "--synthetic-out", target)
    assert status == 0, err
    doc = json.loads(out)
    for key in ("original", "first", "second"):
        cells, gaps = doc[key]["cells"], doc[key]["gaps"]
        assert len(cells) == 4 and len(gaps) == 2
        for cell in cells:
            assert {"filter_holds", "in_group", "n", "positives", "ratio", "ci_low", "ci_high"} <= set(cell)
            assert isinstance(cell["filter_holds"], bool) and isinstance(cell["in_group"], bool)
        for gap in gaps:
            assert {"filter_holds", "gap", "p_value", "fair"} <= set(gap)
    assert set(doc["auc"]) == {"first", "second"} and all(0 < v <= 1 for v in doc["auc"].values())
    assert doc["options"]["algorithm"] == 1 and doc["options"]["second"] == "LR"
    assert doc["seed"] == 5 and doc["options"]["seed"] == 5
    assert {"first", "second", "total"} <= set(doc["timings"])
    assert sum(c["n"] for c in doc["original"]["cells"]) == doc["sizes"]["D4"] == 500
    assert doc["synthetic_out"] == str(target)

    syn = pd.read_csv(target)
    assert len(syn) == doc["sizes"]["D2"] == 1000
    assert list(syn.columns[-3:]) == ["luskin_risk", "luskin_label_before", "luskin_label_after"]
    assert "fnlwgt" in syn.columns  # every original column, not only the features
    assert set(syn["luskin_label_before"]) <= {0, 1} and set(syn["luskin_label_after"]) <= {0, 1}
    # Algorithm 1: 'before' is A1's decision at 0.5.
    assert ((syn["luskin_risk"] >= 0.5).astype(int) == syn["luskin_label_before"]).all()
    changed = syn["luskin_label_before"] != syn["luskin_label_after"]
    assert changed.sum() == doc["relabel"]["n_changed"] > 0


def test_table_by_default(capsys, adult_csv):
    status, out, err = run(capsys, "retrain", *spec_args(adult_csv), "--second", "LR", "--direction", "up",
                           "--all-cells")
    assert status == 0, err
    assert "Original" in out and "A1 (LR)" in out and "C2 (LR)" in out
    assert "AUC vs recorded labels" in out and "gap (points, group - other)" in out
    assert "direction up; every filter cell" in out
    assert "Traceback" not in out + err


@pytest.mark.parametrize("argv, words", [
    (["--algorithm", "3"], "invalid choice"),
    (["--first", "SVM"], "invalid choice"),
    (["--direction", "sideways"], "invalid choice"),
    (["--threshold", "2"], "threshold must be between 0 and 1"),
    (["--protected", "colour == blue"], "protected column named 'colour'"),
])
def test_bad_input_exits_2_with_a_message(capsys, adult_csv, argv, words):
    base = spec_args(adult_csv)
    if argv[0] in base:  # an option given twice is its own mistake: replace the base's value instead
        at = base.index(argv[0])
        del base[at:at + 2]
    status, out, err = run(capsys, "retrain", *base, *argv)
    assert status == 2
    assert words in err and "Traceback" not in err
    assert out == ""


def test_too_few_rows_exits_2(capsys, adult, tmp_path):
    path = tmp_path / "tiny.csv"
    adult.head(20).to_csv(path, index=False)
    status, _out, err = run(capsys, "retrain", *spec_args(path))
    assert status == 2 and "at least 50 rows" in err and "Traceback" not in err


def test_unwritable_synthetic_out_exits_2(capsys, adult_csv, tmp_path):
    status, _, err = run(capsys, "retrain", *spec_args(adult_csv), "--second", "LR",
                         "--synthetic-out", tmp_path / "no" / "such" / "dir" / "d3.csv")
    assert status == 2 and "Cannot write the synthetic data" in err


def test_a_correction_that_backfires_is_said_in_the_text_output(capsys):
    """COMPAS, filter priors_count > 2, Algorithm 1, LR then MLP, seed 0: the cell's gap grows from 14.5 to 21.7."""
    status, out, err = run(capsys, "retrain", "--preset", "compas", "--filter", "priors_count > 2", "--algorithm",
                           "1", "--first", "LR", "--second", "MLP", "--seed", "0")
    assert status == 0, err
    warnings = out.split("Warnings:", 1)[1]
    assert "In the cell 'priors_count > 2' the gap" in warnings and "grew from 14.5 to 21.7 points" in warnings
    assert "less fair" in warnings
