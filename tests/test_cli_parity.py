"""``luskin thresholds`` and ``luskin equalize``: JSON shape, tables, plain errors."""

from __future__ import annotations

import json

import pytest

from luskin_cli.main import main

GROUPS = {"African-American", "Caucasian"}


def _json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_thresholds_json_with_paper_model(capsys):
    doc = _json(capsys, ["thresholds", "--preset", "compas", "--model", "LR", "--json"])
    assert set(doc["thresholds"]) == GROUPS
    assert isinstance(doc["objective"], float)
    for when in ("before", "after"):
        assert 0.5 < doc[when]["accuracy"] < 0.8
        assert set(doc[when]["groups"]) == GROUPS
        for rates in doc[when]["groups"].values():
            assert 0 <= rates["tpr"] <= 1 and 0 <= rates["fpr"] <= 1
    assert doc["rows"] == {"train": 3690, "tuning": 1230, "test": 1230}
    gap = lambda d: max(g["tpr"] for g in d["groups"].values()) - min(
        g["tpr"] for g in d["groups"].values())
    assert gap(doc["after"]) < gap(doc["before"])


def test_thresholds_score_column_pso_is_seeded(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    argv = ["thresholds", "--preset", "compas", "--score-column", "decile_score",
            "--solver", "pso", "--seed", "3", "--lambda", "0.5", "--json"]
    first = _json(capsys, argv)
    second = _json(capsys, argv)
    assert first["thresholds"] == second["thresholds"]
    assert first["before"] == second["before"] and first["lambda"] == 0.5
    assert not (tmp_path / "report.log").exists()


def test_thresholds_table(capsys):
    assert main(["thresholds", "--preset", "compas", "--score-column", "decile_score"]) == 0
    out = capsys.readouterr().out
    assert "African-American" in out and "threshold after" in out and "Test accuracy" in out


def test_equalize_json_one_object_per_alpha(capsys):
    doc = _json(capsys, ["equalize", "--preset", "compas", "--alphas", "1,0.2", "--json"])
    assert [p["alpha"] for p in doc] == [0.2, 1.0]
    for point in doc:
        assert set(point) >= {"alpha", "accuracy", "groups"}
        assert set(point["groups"]) == GROUPS
        assert "histograms" not in point
    # plain logistic regression (alpha 1) is the more accurate, alpha 0.2 the fairer
    assert doc[1]["accuracy"] > doc[0]["accuracy"]
    assert doc[0]["tpr_gap"] < doc[1]["tpr_gap"]


def test_equalize_table_and_histograms(capsys):
    assert main(["equalize", "--preset", "compas", "--alpha", "0.5"]) == 0
    assert "TPR gap" in capsys.readouterr().out
    doc = _json(capsys, ["equalize", "--preset", "compas", "--alpha", "1", "--json", "--histograms"])
    assert len(doc[0]["histograms"]["Caucasian"]["positive"]) == 50


@pytest.mark.parametrize(
    "argv, words",
    [
        (["equalize", "--preset", "compas", "--alpha", "1.5"], "between 0 and 1"),
        (["equalize", "--preset", "compas", "--alphas", "0.1,x"], "not a number"),
        (["thresholds", "--preset", "compas", "--score-column", "nope"], "nope"),
        (["thresholds", "--preset", "compas", "--model", "LR", "--score-column", "decile_score"],
         "not allowed with"),
        (["thresholds", "--preset", "compas", "--score-column", "decile_score",
          "--protected", "race == Martian"], ""),
    ],
)
def test_mistakes_exit_2_with_one_plain_line(capsys, argv, words):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.startswith("luskin: ") and words in err


def test_thresholds_that_backfire_are_said_in_the_text_output(capsys, tmp_path):
    """A score unrelated to the outcome: thresholds tuned on it fall below always-the-majority accuracy."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(5)
    n = 400
    group = rng.choice(["a", "b"], n)
    y = (rng.random(n) < 0.3).astype(int)
    frame = pd.DataFrame({"group": group, "score": np.round(rng.random(n), 3), "y": y})
    frame.to_csv(tmp_path / "noise.csv", index=False)
    status = main(["thresholds", "--data", str(tmp_path / "noise.csv"), "--outcome", "y", "--positive", "1",
                   "--protected", "group == a", "--score-column", "score", "--lambda", "1"])
    out, err = capsys.readouterr()
    assert status == 0, err
    warnings = out.split("Warnings:", 1)[1]
    assert "the test accuracy (64.0%) is below what always predicting the most common outcome (negative) gets " \
           "(67.5%)" in warnings


def test_the_rest_of_a_two_valued_column_is_named_by_its_value(capsys, tmp_path):
    """Issue 27: 'luskin thresholds' and 'luskin equalize' on sex == Female (two values) name the rest 'Male', never
    'Non-Female', in the table, the reference group and the JSON; a three-valued column's rest is 'everyone else'."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(27)
    n = 900
    sex = rng.choice(["Female", "Male"], n)
    x = rng.normal(size=n)
    score = 1 / (1 + np.exp(-(x + 0.5 * (sex == "Male"))))
    path = tmp_path / "people.csv"
    pd.DataFrame({"sex": sex, "region": rng.choice(["north", "south", "east"], n), "x": x, "score": score,
                  "y": (rng.random(n) < score).astype(int)}).to_csv(path, index=False)
    data = ["--data", str(path), "--outcome", "y", "--positive", "1"]
    assert main(["thresholds", *data, "--protected", "sex == Female", "--score-column", "score"]) == 0
    out = capsys.readouterr().out
    assert "Non-" not in out and "reference group" in out
    assert {line.split()[0] for line in out.splitlines()[4:6]} == {"Female", "Male"}
    doc = _json(capsys, ["thresholds", *data, "--protected", "sex == Female", "--score-column", "score", "--json"])
    assert set(doc["thresholds"]) == {"Female", "Male"} and doc["reference_group"] in ("Female", "Male")
    assert "Non-" not in json.dumps(doc)
    assert main(["equalize", *data, "--protected", "sex == Female", "--alphas", "0.5,1"]) == 0
    out = capsys.readouterr().out
    assert "TPR Female" in out and "TPR Male" in out and "Non-" not in out
    doc = _json(capsys, ["equalize", *data, "--protected", "region == north", "--alphas", "1", "--json"])
    assert set(doc[0]["groups"]) == {"north", "everyone else"}
