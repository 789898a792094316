"""Sources added and removed by an administrator on the Administration page: kept by the server (its state
folder, mode 0600), checked as a settings file's entry is (no password in a location, a full path for a file),
listed beside the settings file's sources, opened and audited like them, and never drawn back into the page.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest
from test_app import APP, all_text

from luskin_app import keep, sources
from luskin_app.ui import unescape
from luskin_core.analyses.audit import audit
from luskin_core.errors import LuskinError
from luskin_core.spec.audit_spec import AuditSpec

TIMEOUT = 300
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """A fresh state folder and no settings file: the environment as the server reads it."""
    environ = {"LUSKIN_STATE_DIR": str(tmp_path / "state"), "LUSKIN_SOURCES": "", "LUSKIN_SOURCE_FOLDERS": str(tmp_path)}
    monkeypatch.setenv("LUSKIN_STATE_DIR", environ["LUSKIN_STATE_DIR"])
    monkeypatch.setenv("LUSKIN_SOURCE_FOLDERS", environ["LUSKIN_SOURCE_FOLDERS"])
    monkeypatch.delenv("LUSKIN_SOURCES", raising=False)
    monkeypatch.chdir(tmp_path)   # no .streamlit/luskin_sources.toml here
    monkeypatch.setattr(sources, "USER_FILE", tmp_path / "no-user-file.toml")
    keep.configure(keep.place_from(environ))   # the server's key in this state folder
    yield environ
    keep.configure(None)


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
    ({"name": "A", "location": "{tmp}/x.csv", "groups": "hr"}, None),   # one group as a text is accepted
])
def test_a_source_that_cannot_be_used_is_refused_in_words(state: dict[str, str], entry: dict, said: str | None,
                                                          tmp_path: Path) -> None:
    entry = {k: v.replace("{tmp}", str(tmp_path)) if isinstance(v, str) else v for k, v in entry.items()}
    if said is None:
        assert sources.add_source(entry, environ=state).groups == ("hr",)
        return
    with pytest.raises(LuskinError, match=said):
        sources.add_source(entry, environ=state)
    assert sources.load_settings(environ=state).sources == ()
    assert "secret" not in (sources.store_path(state).read_text() if sources.store_path(state).exists() else "")


def test_a_typed_password_is_kept_encrypted_and_opens_with_the_servers_key_only(state: dict[str, str],
                                                                               tmp_path: Path) -> None:
    typed = "s3cret-Ünïcode-pw"
    setting = sources.add_source({"name": "Agency DB", "location": "postgresql://ana@db.agency.gov/hr",
                                  "table": "decisions", "password": typed}, environ=state)
    kept = sources.store_path(state).read_text(encoding="utf-8")
    assert typed not in kept and typed.encode("utf-8").hex() not in kept and "password_sealed" in kept
    assert typed not in repr(setting) and typed not in repr(sources.load_settings(environ=state))
    assert sources._password(sources.load_settings(environ=state).get("Agency DB")) == typed
    # typed and named at once is refused; a file takes no password
    with pytest.raises(LuskinError, match="not both"):
        sources.add_source({"name": "B", "location": "postgresql://ana@db.agency.gov/hr", "password": "x",
                            "password_env": "PW"}, environ=state)
    with pytest.raises(LuskinError, match="takes no password"):
        sources.add_source({"name": "C", "location": str(tmp_path / "x.csv"), "password": "x"}, environ=state)
    # Another server key (a copied folder without the key file) opens nothing, and says so in words.
    keep.configure(keep.place_from({**state, "LUSKIN_STATE_DIR": str(tmp_path / "elsewhere")}))
    with pytest.raises(LuskinError, match="does not open with this server's key"):
        sources._password(sources.load_settings(environ=state).get("Agency DB"))


def test_a_typed_password_opens_a_real_postgresql_source(state: dict[str, str], postgres_url: str, adult) -> None:
    from engine_servers import PASSWORD
    from test_app_sources import _load_postgres

    _load_postgres(postgres_url, adult)
    without = postgres_url.replace(f":{PASSWORD}@", "@")
    sources.add_source({"name": "Agency records", "location": without, "table": "adult_app", "password": PASSWORD},
                       environ=state)
    assert PASSWORD not in sources.store_path(state).read_text(encoding="utf-8")
    source = sources.open_setting(sources.load_settings(environ=state).get("Agency records"))
    assert source.n_rows() == len(adult)
    sources.add_source({"name": "Wrong", "location": without, "table": "adult_app", "password": "not-it"},
                       environ=state)
    with pytest.raises(LuskinError) as refused:
        sources.open_setting(sources.load_settings(environ=state).get("Wrong"))
    assert "not-it" not in str(refused.value) and "could not be opened" in str(refused.value)


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
    # A database with its password typed on the page: kept sealed, the field emptied, never drawn.
    page.text_input(key="admin_source_name").input("Agency DB")
    page.text_input(key="admin_source_location").input("postgresql://ana@db.agency.gov/hr")
    page.radio(key="admin_source_password").set_value("typed")
    page.text_input(key="admin_source_password_typed").input("typed-pw-4711")
    page.button(key="admin_source_add").click().run()
    assert not page.exception, page.exception
    assert "Added the source 'Agency DB'" in all_text(page)
    assert page.text_input(key="admin_source_password_typed").value == ""
    assert "typed-pw-4711" not in all_text(page) and "db.agency.gov" not in all_text(page)
    assert "typed-pw-4711" not in sources.store_path(state).read_text(encoding="utf-8")


def test_a_settings_file_cannot_carry_a_sealed_password(state: dict[str, str], tmp_path: Path) -> None:
    """Only the server's own store holds sealed passwords; in the operator's file the key is unknown."""
    path = tmp_path / "sources.toml"
    path.write_text('[[source]]\nname = "X"\nlocation = "postgresql://a@h/db"\npassword_sealed = "00"\n')
    found = sources.load_settings(path, environ=state)
    assert found.sources == () and "does not know: password_sealed" in found.problems[0]
    assert "password_sealed" not in found.problems[0].split("(known:")[1]


SECRETS = """[auth]
cookie_secret = "the-cookie-secret-of-this-server"
client_secret = "the-client-secret-of-this-server"
"""


@pytest.mark.parametrize("where", ["secrets", "keep key", "state folder", "record", "link to secrets",
                                   "folder above the state", "password file", "outside", "spark path"])
def test_an_administrator_cannot_name_the_servers_own_files(state: dict[str, str], tmp_path: Path,
                                                            where: str) -> None:
    """Issue 47: Administration -> Add a source took any absolute path, so an administrator could read the secrets
    file (cookie_secret, client_secret) on the Data page, and then sign in as anyone. The places a page-added
    source reads must be inside the operator's folders and never the server's own files, whatever links lead there."""
    secrets_file = tmp_path / "etc" / "secrets.toml"
    secrets_file.parent.mkdir()
    secrets_file.write_text(SECRETS)
    keep.store("x.csv", b"a,b\n1,2\n", "someone")   # the server's key file and an upload exist in the state folder
    (tmp_path / "link.csv").symlink_to(secrets_file)
    elsewhere = tmp_path.parent / f"{tmp_path.name}-elsewhere.csv"
    elsewhere.write_text("a,b\n1,2\n")
    entry = {"secrets": {"location": str(secrets_file)},
             "keep key": {"location": str(tmp_path / "state" / "keep.key")},
             "state folder": {"location": str(tmp_path / "state")},
             "record": {"location": str(tmp_path / "state" / "record" / "record.jsonl")},
             "link to secrets": {"location": str(tmp_path / "link.csv")},
             "folder above the state": {"location": str(tmp_path)},
             "password file": {"location": "postgresql://ana@db.agency.gov/hr", "table": "t",
                               "password_file": str(secrets_file)},
             "outside": {"location": str(elsewhere)},
             "spark path": {"location": f"spark:{secrets_file}"}}[where]
    said = "outside the folders" if where == "outside" else "holds the server's own files"
    with pytest.raises(LuskinError, match=said):
        sources.add_source({"name": "Leak", **entry}, environ={**state, "LUSKIN_SECRETS": str(secrets_file)})
    assert sources.load_settings(environ=state).sources == ()


def test_without_allowed_folders_only_databases_are_added(state: dict[str, str], hires: Path) -> None:
    closed = {**state, "LUSKIN_SOURCE_FOLDERS": ""}
    with pytest.raises(LuskinError, match="none is named"):
        sources.add_source({"name": "Hires", "location": str(hires)}, environ=closed)
    with pytest.raises(LuskinError, match="starts with LUSKIN_SOURCE_PASSWORD_"):
        sources.add_source({"name": "DB", "location": "postgresql://ana@db.agency.gov/hr", "table": "t",
                            "password_env": "HOME"}, environ=closed)
    added = sources.add_source({"name": "DB", "location": "postgresql://ana@db.agency.gov/hr", "table": "t",
                                "password_env": "LUSKIN_SOURCE_PASSWORD_HR"}, environ=closed)
    assert added.password_env == "LUSKIN_SOURCE_PASSWORD_HR"


def test_a_link_swapped_after_the_source_was_added_opens_nothing(state: dict[str, str], hires: Path,
                                                                  tmp_path: Path) -> None:
    link = tmp_path / "current.csv"
    link.symlink_to(hires)
    sources.add_source({"name": "Current", "location": str(link)}, environ=state)
    assert sources.open_setting(sources.load_settings(environ=state).get("Current"), environ=state).n_rows() == 100
    secrets_file = tmp_path / "secrets.toml"
    secrets_file.write_text(SECRETS)
    link.unlink()
    link.symlink_to(secrets_file)
    with pytest.raises(LuskinError, match="reads a place this server does not allow") as refused:
        sources.open_setting(sources.load_settings(environ=state).get("Current"),
                             environ={**state, "LUSKIN_SECRETS": str(secrets_file)})
    assert "cookie" not in str(refused.value) and str(secrets_file) not in str(refused.value)


def test_the_page_refuses_the_servers_key_and_a_one_column_source_is_said_plainly(state: dict[str, str],
                                                                                    tmp_path: Path) -> None:
    keep.store("x.csv", b"a,b\n1,2\n", "someone")
    page = AppTest.from_file(str(ROOT / "app_pages" / "admin.py"), default_timeout=TIMEOUT).run()
    page.text_input(key="admin_source_name").input("Key")
    page.text_input(key="admin_source_location").input(str(tmp_path / "state" / "keep.key"))
    page.button(key="admin_source_add").click().run()
    assert not page.exception, page.exception
    assert any("holds the server's own files" in unescape(e.value) for e in page.error)
    assert sources.load_settings(environ=state).sources == ()
    # A source of one column (a file of lines: how the secrets file read back) opened on the Data page: a plain
    # sentence, not the internal-error box of columns[0] on an empty list.
    lines = tmp_path / "lines.csv"
    lines.write_text("only\n" + "".join(f"line {i}\n" for i in range(40)))
    sources.add_source({"name": "Lines", "location": str(lines)}, environ=state)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.button(key="source_open").click().run()
    assert not at.exception, at.exception
    assert any("single column" in unescape(e.value) for e in at.error)
    assert at.session_state["dataset"].source.startswith("sample:")   # the data loaded before stays
