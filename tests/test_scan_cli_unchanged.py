"""``luskin scan``, made from the scan's line of the analyses' table (issue 45), says what the command written for
the scan said: its help, and the text, JSON and refusals of a set of commands (sample:adult, sample:compas and a
Parquet file; --columns, --fdr, --level, --predictions with --measure, --probability, --bins, --unknown, --seed,
bad inputs), byte for byte. tests/fixtures/scan_cli_before.json holds what the command written for the scan
(luskin_cli/scan.py, before it was removed) printed, with ``COLUMNS=100``; ``@PARQUET@`` stands for the Parquet
file's path (a file named compas.parquet, the name the scan reports)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from luskin_cli.main import main

BEFORE = json.loads((Path(__file__).parent / "fixtures" / "scan_cli_before.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def parquet(tmp_path_factory) -> str:
    """COMPAS's columns the commands scan, with a column of probabilities made from the decile score."""
    from luskin_core.counting.data import load_data

    frame = load_data("sample:compas")[["race", "sex", "age", "age_cat", "two_year_recid", "decile_score"]].copy()
    frame["p"] = (frame["decile_score"] / 11.0).round(3)
    path = tmp_path_factory.mktemp("scan_unchanged") / "compas.parquet"
    frame.to_parquet(path)
    return str(path)


@pytest.mark.parametrize("name", sorted(BEFORE))
def test_the_scan_command_says_what_it_said_before_it_was_made_from_its_line(name, parquet, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")   # argparse's width, as the fixture was written
    case = BEFORE[name]
    argv = [a.replace("@PARQUET@", parquet) for a in case["argv"]]
    try:
        status = main(["scan", *argv])
    except SystemExit as stop:   # --help
        status = int(stop.code or 0)
    said = capsys.readouterr()
    assert (status, said.out.replace(parquet, "@PARQUET@"), said.err.replace(parquet, "@PARQUET@")) == \
        (case["status"], case["stdout"], case["stderr"])


def test_the_comparison_can_fail():
    """A changed word in the help is seen (the fixture is not compared with itself)."""
    assert "--fdr Q" in BEFORE["help"]["stdout"] and BEFORE["bad_fdr_and_level"]["status"] == 2
    assert BEFORE["compas_fdr_json"]["stdout"].startswith("{") and "Benjamini" in BEFORE["compas_fdr_json"]["stdout"]
