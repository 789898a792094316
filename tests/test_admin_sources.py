"""Sources added and removed by an administrator on the Administration page: kept by the server (its state
folder, mode 0600), checked as a settings file's entry is (no password in a location, a full path for a file),
listed beside the settings file's sources, opened and audited like them, and never drawn back into the page.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest
from test_app import APP, all_text

from luskin_app import sources
from luskin_core.analyses.audit import audit
from luskin_core.errors import LuskinError
from luskin_core.spec.audit_spec import AuditSpec

TIMEOUT = 300
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A fresh state folder and no settings file: the environment as the server reads it."""
    environ = {"LUSKIN_STATE_DIR": str(tmp_path / "state"), "LUSKIN_SOURCES": ""}
    monkeypatch.setenv("LUSKIN_STATE_DIR", environ["LUSKIN_STATE_DIR"])
    monkeypatch.delenv("LUSKIN_SOURCES", raising=False)
    monkeypatch.chdir(tmp_path)   # no .streamlit/luskin_sources.toml here
    monkeypatch.setattr(sources, "USER_FILE", tmp_path / "no-user-file.toml")
    return environ


@pytest.fixture
def hires(tmp_path: Path) -> Path:
    frame = pd.DataFrame({"group": ["a", "b"] * 50, "hired": ["yes", "no", "no", "yes", "yes"] * 20})
    path = tmp_path / "hires.csv"
    frame.to_csv(path, index=False)
    return path


def test_an_added_source_is_kept_by_the_server_listed_and_removed(state: dict[str, str], hires: Path,
                                                                    tmp_path: Path) -> None:
    setting = sources.add_source({"name": " Hires  2024 ", "location": str(hires), "groups": ["hr", " "],
                                  "description": "Hiring decisions"}, environ=state)
    assert setting.name == "Hires 2024" and setting.groups == ("hr",)
    store = sources.store_path(state)
    assert stat.S_IMODE(os.stat(store).st_mode) == 0o600
    found = sources.load_settings(environ=state)
    assert [s.name for s in found.sources] == ["Hires 2024"] and found.added == ("Hires 2024",)
    assert found.path is None and not found.problems
    # it opens and audits like a settings file's source (the same numbers as pandas)
    source = sources.open_setting(found.get("Hires 2024"))
    spec = AuditSpec(outcome="hired", positive="yes", protected="group == 'a'")
    frame = pd.read_csv(hires)
    assert audit(source, spec).gaps[0].gap == pytest.approx(audit(frame, spec).gaps[0].gap)
    # a settings file's source of the same name wins, and the clash is said to the administrator
    (tmp_path / "sources.toml").write_text(f'[[source]]\nname = "Hires 2024"\nlocation = "{hires}"\n')
    both = sources.load_settings(tmp_path / "sources.toml", environ=state)
    assert [s.name for s in both.sources] == ["Hires 2024"] and both.added == ()
    assert "the file's is used" in both.problems[0]
    assert sources.remove_source("Hires 2024", environ=state)
    assert not sources.remove_source("Hires 2024", environ=state)
    assert sources.load_settings(environ=state).sources == ()
    assert json.loads(store.read_text()) == {"source": []}


@pytest.mark.parametrize(("entry", "said"), [
    ({"name": "", "location": "/x.csv"}, "Give the source a name"),
    ({"name": "A", "location": ""}, "Give the source's location"),
    ({"name": "A", "location": "relative/x.csv"}, "full path on the server"),
    ({"name": "A", "location": "postgresql://me:secret@db.agency.gov/hr"}, "password written in its location"),
    ({"name": "A", "location": "postgresql://me@db.agency.gov/hr", "password_file": "pw.txt"},
     "password file's full path"),
    ({"name": "A", "location": "/x.csv", "password_env": "PW"}, "takes no password"),
    ({"name": "A", "location": "/x.csv", "groups": "hr"}, None),   # one group as a text is accepted
])
def test_a_source_that_cannot_be_used_is_refused_in_words(state: dict[str, str], entry: dict, said: str | None) -> None:
    if said is None:
        assert sources.add_source(entry, environ=state).groups == ("hr",)
        return
    with pytest.raises(LuskinError, match=said):
        sources.add_source(entry, environ=state)
    assert sources.load_settings(environ=state).sources == ()
    assert "secret" not in (sources.store_path(state).read_text() if sources.store_path(state).exists() else "")


def test_a_name_in_use_is_refused(state: dict[str, str], hires: Path) -> None:
    sources.add_source({"name": "Hires", "location": str(hires)}, environ=state)
    with pytest.raises(LuskinError, match="set up already"):
        sources.add_source({"name": "Hires", "location": str(hires)}, environ=state)


def test_the_administration_page_adds_and_removes_a_source_without_drawing_its_location(
        state: dict[str, str], hires: Path) -> None:
    # The page alone (the app serves it to a signed-in administrator only; run alone, its user is the local one,
    # an administrator).
    page = AppTest.from_file(str(ROOT / "app_pages" / "admin.py"), default_timeout=TIMEOUT).run()
    assert not page.exception, page.exception
    page.text_input(key="admin_source_name").input("Hiring 2024")
    page.text_input(key="admin_source_location").input(str(hires))
    page.text_input(key="admin_source_description").input("Who was hired")
    page.button(key="admin_source_add").click().run()
    assert not page.exception, page.exception
    text = all_text(page)
    assert "Added the source 'Hiring 2024'" in text
    assert "Hiring 2024 (a file; used by every analyst; added here)" in text
    assert str(hires) not in text and "hires.csv" not in text
    assert page.text_input(key="admin_source_location").value == ""   # the form is cleared: nothing drawn again
    assert [s.name for s in sources.load_settings(environ=state).sources] == ["Hiring 2024"]
    # The Data page of the app lists it, and it opens without its location shown.
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert at.selectbox(key="source_pick").options == ["Hiring 2024"]
    at.button(key="source_open").click().run()
    assert not at.exception, at.exception
    assert at.session_state["dataset"].source == "source:Hiring 2024"
    assert str(hires) not in all_text(at)
    # A refused entry is said in words, and nothing is kept.
    page.text_input(key="admin_source_name").input("Relative")
    page.text_input(key="admin_source_location").input("hires.csv")
    page.button(key="admin_source_add").click().run()
    assert not page.exception and any("full path on the server" in e.value for e in page.error)
    # Removed on the page: gone for everyone.
    page.button(key="admin_remove_source_0").click().run()
    assert not page.exception, page.exception
    assert "Removed the source 'Hiring 2024'" in all_text(page)
    assert sources.load_settings(environ=state).sources == ()
