"""Hostile but well-formed input to the model tools: huge finite numbers, huge numbers in a saved configuration.

Every such input ends in one plain sentence (exit 2 on the command line, an error box without
"internal error" on a page), never in a traceback.
"""

from __future__ import annotations

import pandas as pd
import pytest
from test_app import _with_data, goto, messages, small_csv

from luskin_cli.main import main


def _huge_frame() -> pd.DataFrame:
    from luskin_core.counting.data import load_csv

    frame = load_csv(small_csv())
    frame["x"] = frame["x"].astype(float)
    frame.loc[[3, 9], "x"] = [1e308, -1e308]       # finite, but scaling them overflows
    return frame


@pytest.mark.parametrize("command", [["retrain"], ["thresholds"], ["thresholds", "--solver", "pso"], ["equalize"]])
def test_huge_finite_feature_values_are_a_plain_message_on_the_command_line(command, tmp_path, capsys) -> None:
    path = tmp_path / "huge.csv"
    _huge_frame().to_csv(path, index=False)
    status = main([*command, "--data", str(path), "--outcome", "y", "--positive", "yes", "--protected", "race == B",
                   "--no-filter", "--features", "edu,x,job"])
    out, err = capsys.readouterr()
    assert status == 2, (out, err)
    assert "'x' in 2 rows" in err and "beyond ±1e150" in err and "Traceback" not in err


def test_large_but_scalable_feature_values_still_train() -> None:
    from luskin_core.corrections.thresholds import tune_thresholds
    from luskin_core.spec.audit_spec import AuditSpec

    frame = _huge_frame()
    frame.loc[[3, 9], "x"] = [1e149, -1e149]
    spec = AuditSpec(outcome="y", positive="yes", protected="race == B")
    report = tune_thresholds(frame, spec, features=["edu", "x", "job"], seed=0)
    assert report is not None


def test_huge_finite_feature_values_have_a_way_out_on_each_model_page() -> None:
    at = _with_data(_huge_frame())
    for page, key in (("retrain", "retrain_fix_inf_0"), ("thresholds", "thresholds_fix_inf_0"),
                      ("equalized", "equalized_fix_inf_0")):
        goto(at, page)
        errors = messages(at, "error")
        assert not any("internal error" in e for e in errors), (page, errors)
        assert any("beyond ±1e150" in e and "'x' in 2 rows" in e for e in errors), (page, errors)
        assert [b.label for b in at.button if b.key == key] == ["Leave x out of the model inputs"], page


def _huge_numbers() -> list[tuple[str, str]]:
    """(entry, JSON number) pairs a hand-edited configuration may hold: 10^400 three ways, 5,000 digits."""
    return [("tolerance", "1e400"), ("tolerance", "-1e400"), ("tolerance", "1" + "0" * 400),
            ("min_group_size", "7" * 5000), ("tolerance", "0." + "1" * 5000)]


def _config_with(entry: str, number: str) -> str:
    return '{"outcome": "income", "positive": ">50K", "protected": "race == White", "' + entry + '": ' + number + "}"


@pytest.mark.parametrize(("entry", "number"), _huge_numbers())
def test_a_configuration_with_a_huge_number_is_a_plain_message_on_the_command_line(entry, number, tmp_path,
                                                                                    capsys) -> None:
    path = tmp_path / "edited.json"
    path.write_text(_config_with(entry, number))
    status = main(["audit", "--data", "sample:adult", "--config", str(path)])
    out, err = capsys.readouterr()
    if number.startswith("0."):       # a long fraction is an ordinary number, checked as a tolerance
        assert status == 0, err
        return
    assert status == 2, (out, err)
    assert err.startswith("luskin: The configuration file holds") and "Traceback" not in err
    assert len(err) < 400                  # the number is not echoed in full


@pytest.mark.parametrize(("entry", "number"), [n for n in _huge_numbers() if not n[1].startswith("0.")])
def test_a_configuration_with_a_huge_number_is_a_plain_message_in_the_app(entry, number) -> None:
    import json

    from test_app import _config_text, open_app

    at = open_app()
    saved = json.loads(_config_text(at))
    text = json.dumps(saved)
    body = text.replace('"spec": {', '"spec": {"' + entry + '": ' + number + ", ", 1)
    at.file_uploader(key="config_upload").set_value(("edited.json", body.encode(), "application/json")).run()
    assert not at.exception
    errors = messages(at, "error")
    assert any("The configuration file holds" in e and "Nothing was changed" in e for e in errors), errors


def test_retraining_options_with_a_huge_number_are_a_plain_message() -> None:
    from luskin_core.corrections.retrain import RetrainOptions
    from luskin_core.errors import LuskinError

    with pytest.raises(LuskinError, match="not valid JSON"):
        RetrainOptions.from_json('{"seed": ' + "9" * 5000 + "}")
    with pytest.raises(LuskinError, match="threshold"):
        RetrainOptions(threshold=10**400)
