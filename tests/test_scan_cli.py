"""``luskin scan`` from the command line: the JSON a script reads, the text a person reads, and a plain message
with exit status 2 for each mistake a user makes."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from luskin_cli.main import main


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, str]:
    rng = np.random.default_rng(31)
    n = 20_000
    frame = pd.DataFrame({"sex": rng.choice(["Female", "Male"], n), "borough": rng.choice(["Queens", "Bronx", "Kings"], n),
                          "age": rng.integers(18, 80, n), "zip": rng.integers(10_000, 14_000, n).astype(str)})
    inside = (frame.sex == "Female") & (frame.borough == "Queens")
    frame["approved"] = np.where(rng.random(n) < np.where(inside, 0.45, 0.3), "Y", "N")
    truth = (frame.approved == "Y").to_numpy()
    wrong = rng.random(n) < np.where(inside & ~truth, 0.3, 0.1)
    frame["model"] = np.where(wrong, ~truth, truth).astype(int)
    folder = tmp_path_factory.mktemp("scan")
    csv, parquet = folder / "rows.csv", folder / "rows.parquet"
    frame.to_csv(csv, index=False)
    frame.to_parquet(parquet)
    return {"csv": str(csv), "parquet": str(parquet)}


def _json(capsys, *argv: str) -> dict:
    assert main(["scan", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_findings_are_the_same_from_a_csv_in_memory_and_a_parquet_file_in_duckdb(files, capsys):
    args = ("--outcome", "approved", "--positive", "Y", "--columns", "sex,borough,age", "--replicates", "199")
    memory = _json(capsys, "--data", files["csv"], *args)
    engine = _json(capsys, "--data", files["parquet"], *args)
    assert [f["conditions"] for f in memory["findings"]] == [{"sex": "Female", "borough": "Queens"}]
    memory.pop("source"), engine.pop("source")
    assert memory == engine
    finding = memory["findings"][0]
    for key in ("n", "rate", "rest_rate", "difference", "ci_low", "ci_high", "p_adjusted", "sentence"):
        assert key in finding
    assert memory["groups_scanned"] == 2 + 3 + 4 + 6 + 8 + 12 + 24 and memory["replicates"] == 199
    assert "family-wise error rate at 0.05" in memory["error_control"]


def test_text_reads_the_finding_and_what_was_controlled(files, capsys):
    assert main(["scan", "--data", files["csv"], "--outcome", "approved", "--positive", "Y", "--columns",
                 "sex,borough", "--replicates", "199"]) == 0
    out = capsys.readouterr().out
    assert "sex = Female and borough = Queens" in out
    assert "Controlled: the family-wise error rate" in out


def test_error_rates_with_the_audits_prediction_options(files, capsys):
    document = _json(capsys, "--data", files["parquet"], "--outcome", "approved", "--positive", "Y", "--columns",
                     "sex,borough", "--predictions", "model", "--measure", "fpr", "--replicates", "199")
    assert [f["conditions"] for f in document["findings"]] == [{"sex": "Female", "borough": "Queens"}]
    assert document["measure"] == "fpr"


@pytest.mark.parametrize(("argv", "said"), [
    (("--columns", "sex,zip"), "distinct values, too many to scan"),
    (("--columns", "sex,borough", "--depth", "3"), "only 2 are scanned"),
    (("--columns", "sex,borough", "--positive", "Maybe"), "never occurs"),
    (("--columns", "sex"), None),
])
def test_mistakes_get_a_plain_message_and_status_2(files, capsys, argv, said):
    base = ["scan", "--data", files["parquet"], "--outcome", "approved", "--replicates", "99"]
    if "--positive" not in argv:
        base += ["--positive", "Y"]
    status = main([*base, *argv])
    err = capsys.readouterr().err
    if said is None:
        assert status == 0
        return
    assert status == 2 and said in err and "Traceback" not in err


def test_a_scan_too_large_for_the_machine_says_what_to_drop(tmp_path, capsys):
    rng = np.random.default_rng(2)
    frame = pd.DataFrame({f"w{j}": ["v" + str(v) for v in rng.integers(0, 45, 3_000)] for j in range(6)})
    frame["y"] = rng.integers(0, 2, len(frame))
    path = tmp_path / "wide.csv"
    frame.to_csv(path, index=False)
    status = main(["scan", "--data", str(path), "--outcome", "y", "--positive", "1", "--columns",
                   ",".join(f"w{j}" for j in range(6)), "--depth", "6"])
    err = capsys.readouterr().err
    assert status == 2 and "too large for the machine" in err and "leave out or bin" in err


def test_a_frame_with_a_column_called_name_is_scanned_under_the_datas_name(capsys):
    """COMPAS has a 'name' column: the frame's .name is that column, not the data's name (a traceback on main)."""
    status = main(["scan", "--data", "sample:compas", "--outcome", "two_year_recid", "--positive", "1",
                   "--columns", "sex", "--columns", "race", "--json"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert json.loads(out)["source"] == "sample:compas"


def test_unknown_names_a_value_of_unknown_category_as_the_audits_flag_does(files, capsys):
    """``luskin scan --unknown Queens``: the group with the value is set apart (shown with its numbers, never a
    finding), as ``luskin audit --unknown`` sets it apart; the spec in the JSON says which values were so read."""
    args = ("--data", files["csv"], "--outcome", "approved", "--positive", "Y", "--columns", "sex,borough",
            "--replicates", "199")
    plain = _json(capsys, *args)
    named = _json(capsys, *args, "--unknown", "Queens")
    assert [f["conditions"] for f in plain["findings"]] == [{"sex": "Female", "borough": "Queens"}]
    assert named["findings"] == [] and named["spec"]["unknown_values"] == ["Queens"]
    assert {"sex": "Female", "borough": "Queens"} in [f["conditions"] for f in named["set_apart"]]
    assert main(["scan", *args, "--unknown", "Queens"]) == 0
    assert "unknown category" in capsys.readouterr().out
