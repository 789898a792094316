"""The record of who ran what covers every page that runs an analysis, not only the audit: the regulator tables,
the proxy audit, the scan, the adjusted gaps and the over-time series each append one JSON line when they run
(a rerun that shows the same result again writes nothing), and every download goes through the one button that
writes its line. The record file is read back: each line names the page, the data by its fingerprint and the
settings, and no data value of the file (a surname, an id) is in it.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from luskin_app import record

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
MARKER = "Qzxwvmarkerson"   # a surname in one row: a data value that must never reach the record


def _applicants(n: int = 600) -> bytes:
    """Applicants with surnames, ZIP codes, sex, race, a date and an outcome (and one marked surname)."""
    rng = np.random.default_rng(30)
    surname = rng.choice(["Garcia", "Smith", "Washington", "Nguyen", "Jackson", "Kim"], n).astype(object)
    surname[7] = MARKER
    sex = rng.choice(["Female", "Male"], n)
    race = rng.choice(["White", "Black", "Asian", "Hispanic"], n)
    hired = rng.random(n) < np.where(sex == "Female", 0.3, 0.5)
    applied = pd.date_range("2024-01-01", periods=12, freq="MS").strftime("%Y-%m-%d").to_numpy()[rng.integers(0, 12, n)]
    return pd.DataFrame({"applicant_id": [f"ID-{i:05d}-RECORDTEST" for i in range(n)], "last_name": surname,
                         "zip": rng.choice(["10001", "60601", "94110", "30303"], n), "sex": sex, "race": race,
                         "age": rng.integers(20, 65, n), "applied": applied,
                         "hired": np.where(hired, "yes", "no")}).to_csv(index=False).encode()


@pytest.fixture
def record_file(tmp_path: Path):
    path = tmp_path / "record" / "record.jsonl"
    (tmp_path / "record.key").write_bytes(bytes(range(32)))
    (tmp_path / "record.key").chmod(0o600)
    record.configure(record.Where(path, max_bytes=10_000_000, key_file=tmp_path / "record.key",
                                  state=tmp_path / "record"))
    try:
        yield path
    finally:
        record.configure(None)


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


def _run(at: AppTest, page: str) -> AppTest:
    at.switch_page(f"app_pages/{page}.py").run()
    assert not at.exception, (page, at.exception)
    return at


def test_every_analysis_page_writes_one_line_when_it_runs_and_no_data_value(record_file: Path) -> None:
    at = AppTest.from_file(APP, default_timeout=300).run()
    at.file_uploader(key="upload_csv").set_value(("applicants_2024.csv", _applicants(), "text/csv")).run()
    assert not at.exception, at.exception
    _run(at, "audit")
    at.button(key="audit_confirm").click().run()   # "Use these choices": race, Black against the others
    assert not at.exception, at.exception
    _run(at, "regulator")
    _run(at, "proxy")
    _run(at, "scan")
    _run(at, "adjusted")
    at.multiselect(key="adj_controls").set_value(["age"]).run()
    assert not at.exception, at.exception
    _run(at, "series")
    analyses = [line for line in _lines(record_file) if line["data"]]
    lines = [line for line in analyses if line["data"]["name"] == record.hashed("applicants_2024.csv")]
    assert lines and all(line["data"]["name"] == "UCI Adult (census income, 48,842 people)"   # the sample first
                         for line in analyses[:-len(lines)])
    assert all(line["data"]["kind"] == "upload" for line in lines)   # an upload's file name only by its keyed hash
    by_action: dict[str, list[dict]] = {}
    for line in lines:
        by_action.setdefault(line["action"], []).append(line)
    assert {"upload", "audit", "regulator tables", "proxy audit", "scan", "adjusted", "series"} <= set(by_action), \
        sorted(by_action)
    pages = {action: {line["page"] for line in found} for action, found in by_action.items()}
    assert pages["regulator tables"] == {"Regulator tables"} and pages["proxy audit"] == {"Proxy audit"}
    assert pages["scan"] and pages["adjusted"] and pages["series"]
    # One line per table built (LL144 and EEOC), each naming its table and the columns chosen.
    tables = sorted(line["settings"]["table"] for line in by_action["regulator tables"])
    assert len(tables) == len(set(tables)) >= 2 and {line["settings"]["sex"] for line in by_action["regulator tables"]} \
        == {"sex"}
    assert by_action["proxy audit"][0]["settings"]["surname"] == "last_name"
    assert by_action["scan"][0]["settings"]["spec"]["outcome"] == "hired"
    for line in lines:
        assert line["data"]["rows"] == 600 and line["n"] and line["mac"], line
        assert len(line["data"]["hash"]) == 16 and line["user"]["id"] == "local" and line["time"]
    text = record_file.read_text(encoding="utf-8")
    assert MARKER not in text and "RECORDTEST" not in text and "Washington" not in text
    assert "applicants_2024" not in text and '"Black"' not in text and '"yes"' not in text   # values by hash only
    assert record.verify().holds
    # A rerun that shows the same results writes nothing; changing a setting is a new action.
    count = len(_lines(record_file))
    _run(at, "scan")
    _run(at, "proxy")
    assert len(_lines(record_file)) == count
    at.slider(key="proxy_tolerance").set_value(10).run()
    assert not at.exception, at.exception
    after = _lines(record_file)
    assert len(after) == count + 1 and after[-1]["action"] == "proxy audit"
    assert after[-1]["settings"]["tolerance"] == pytest.approx(0.10)


def test_every_download_button_is_the_recording_one() -> None:
    """No page or module draws ``st.download_button`` itself: ui.download_button writes each download's line."""
    offenders = []
    for path in [*sorted((ROOT / "app_pages").glob("*.py")), *sorted((ROOT / "luskin_app").glob("*.py")),
                 ROOT / "app.py"]:
        if path.name == "ui.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == "download_button" \
                    and not (isinstance(node.value, ast.Name) and node.value.id == "ui"):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offenders, offenders
