"""Sources set up by the operator (a TOML settings file), in the dashboard: listed, opened without
loading rows, audited by their engine with the in-memory numbers, sampled for the model pages, and
never showing a password. Real engines: DuckDB (a database file and a Parquet file) and, when
installed, a throwaway PostgreSQL cluster (tests/engine_servers.py).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import duckdb
import pytest
from engine_servers import PASSWORD, load_postgres
from streamlit.testing.v1 import AppTest
from test_app import APP, all_text, goto, messages, metric

from luskin_app import keys
from luskin_app.sources import SourceSetting, load_settings, open_setting, read_settings
from luskin_app.ui import bullet_list, unescape
from luskin_core.analyses.audit import audit
from luskin_core.errors import LuskinError
from luskin_core.present.report import DatasetRef, build_html_report

TIMEOUT = 300  # seconds for one script run: generous, a loaded 2-core machine is slow (a wait, not a speed check)


@pytest.fixture(scope="module")
def adult_files(tmp_path_factory, adult):
    """The Adult sample as a DuckDB database (table 'adult') and as a Parquet file."""
    folder = tmp_path_factory.mktemp("sources")
    adult.to_parquet(folder / "adult.parquet")
    con = duckdb.connect(str(folder / "adult.duckdb"))
    con.register("frame", adult)
    con.execute("CREATE TABLE adult AS SELECT * FROM frame")
    con.close()
    return folder


def write_settings(folder: Path, text: str, name: str = "sources.toml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


ADULT_SOURCES = """
[[source]]
name = "Adult in DuckDB"
location = "adult.duckdb"
table = "adult"
description = "The census table, in a DuckDB database."

[[source]]
name = "Adult as Parquet"
location = "adult.parquet"
sample_cap = 5000
"""


def open_app(monkeypatch, settings: Path | None) -> AppTest:
    if settings is None:
        monkeypatch.delenv("LUSKIN_SOURCES", raising=False)
    else:
        monkeypatch.setenv("LUSKIN_SOURCES", str(settings))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    return at


def open_source(at: AppTest, name: str, confirm: bool = True) -> AppTest:
    at.selectbox(key="source_pick").set_value(name).run()
    at.button(key="source_open").click().run()
    assert not at.exception, at.exception
    if confirm and [b for b in at.button if b.key == "data_confirm"]:
        at.button(key="data_confirm").click().run()
        assert not at.exception, at.exception
    return at


def glance(at: AppTest) -> str:
    found = [m.value for m in at.markdown if m.value.startswith("**At a glance")]
    assert found, all_text(at)
    return found[0]


def current_spec(at: AppTest):
    state = at.session_state[keys.SPEC_MEMO]           # the typed specification the page keeps
    spec, problem = state.spec, state.problem
    assert spec is not None, problem
    return spec


def page_dump(at: AppTest) -> str:
    """Everything the page holds for the browser: every element's message, in the main area and the sidebar."""
    parts: list[str] = []

    def walk(node) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None:
            parts.append(str(proto))
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return "\n".join(parts)


# ------------------------------------------------------------------------------------------
# Listing, opening, auditing
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name, kind", [("Adult in DuckDB", "DuckDB table"), ("Adult as Parquet", "Parquet file")])
def test_a_source_is_listed_opened_without_rows_and_audited_like_in_memory(monkeypatch, adult_files, adult, name,
                                                                           kind):
    at = open_app(monkeypatch, write_settings(adult_files, ADULT_SOURCES))
    assert at.selectbox(key="source_pick").options == ["Adult in DuckDB", "Adult as Parquet"]
    open_source(at, name, confirm=False)
    data = at.session_state["dataset"]
    assert data.source == f"source:{name}" and data.engine is not None
    assert len(data.frame) < 400  # the stand-in holds distinct values, not the 48,842 rows
    assert metric(at, "Rows") == "48,842" and metric(at, "Columns") == "15" and metric(at, "Kind") == kind
    assert "48,842 rows × 15 columns" in " ".join(unescape(m.value) for m in at.sidebar.markdown)
    assert not at.error
    at.button(key="data_confirm").click().run()
    # the dropdowns offer the engine's values, most frequent first
    race = adult["race"].value_counts()
    assert at.selectbox(key="protected_column").value == "race"
    assert at.multiselect(key="protected_values").options == [str(v) for v in race.index]
    assert at.multiselect(key="positive").options == [str(v) for v in adult["income"].value_counts().index]
    # the audit runs inside the engine and says exactly what the in-memory audit says
    spec = current_spec(at)
    assert glance(at) == "**At a glance:**\n" + bullet_list(audit(adult, spec).sentences())
    at.multiselect(key="protected_values").set_value(["White"]).run()
    spec = current_spec(at)
    assert spec.protected.value == "White"
    assert glance(at) == "**At a glance:**\n" + bullet_list(audit(adult, spec).sentences())
    goto(at, "audit")
    assert not at.error


def test_switching_back_to_a_sample_and_the_saved_configuration_names_the_source(monkeypatch, adult_files):
    at = open_source(open_app(monkeypatch, write_settings(adult_files, ADULT_SOURCES)), "Adult in DuckDB")
    goto(at, "report")
    config = json.loads(at.code[0].value)
    assert config["data"]["source"] == "source:Adult in DuckDB" and config["data"]["rows"] == 48_842
    assert "adult.duckdb" not in at.code[0].value and str(adult_files) not in at.code[0].value
    # loading it again (after switching to COMPAS) reopens the source by its name
    goto(at, "data")
    at.button(key="sample_compas").click().run()
    assert at.session_state["dataset"].source == "sample:compas"
    goto(at, "report")
    at.file_uploader(key="config_upload").set_value(("saved.json", json.dumps(config).encode(),
                                                     "application/json")).run()
    assert not at.exception, at.exception
    assert at.session_state["dataset"].source == "source:Adult in DuckDB"
    assert DatasetRef.coerce(config["data"]).label == "source 'Adult in DuckDB' (set up by the administrator)"


def test_model_pages_on_a_source_say_the_sample_size_and_so_does_the_report(monkeypatch, adult_files, adult):
    at = open_source(open_app(monkeypatch, write_settings(adult_files, ADULT_SOURCES)), "Adult as Parquet")
    goto(at, "retrain")
    at.selectbox(key="retrain_pair").set_value("LR/LR").run()
    at.button(key="retrain_run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    said = [m for m in messages(at, "info") if "stratified sample" in m]
    assert said == [("The models use a stratified sample of 5,000 of 48,842 rows of the source 'Adult as Parquet' "
                    "(drawn by its engine, stratified by group and outcome, seed 0).")]
    result = at.session_state["results"]["retrain"][2]
    assert sum(result.sizes.values()) == 5_000
    goto(at, "thresholds")
    assert said[0] in messages(at, "info")
    goto(at, "report")
    assert not at.exception and not at.error
    note = at.session_state["source_sample"][2]
    assert note == said[0]
    spec = result.spec
    html = build_html_report([audit(adult, spec), result], dataset=DatasetRef("source", "Adult as Parquet"), sample_note=note)
    assert "Rows the models used" in html and "5,000 of 48,842 rows" in html
    assert "Data: source &#39;Adult as Parquet&#39; (set up by the administrator)" in html


def test_a_source_within_its_cap_is_used_whole(monkeypatch, adult_files):
    at = open_source(open_app(monkeypatch, write_settings(adult_files, ADULT_SOURCES)), "Adult in DuckDB")
    goto(at, "thresholds")
    assert "The models use all 48,842 rows of the source 'Adult in DuckDB'." in messages(at, "info")


# ------------------------------------------------------------------------------------------
# Bad settings and bad sources: one sentence, the app keeps working
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, words", [
    ("[[source]\nname = 'x'", "is not valid TOML (at line 1"),
    ("title = 'no sources'", "lists no sources"),
    ("source = 3", "must be a list of [[source]] tables"),
])
def test_a_broken_settings_file_is_one_sentence_and_the_app_works(monkeypatch, tmp_path, text, words):
    at = open_app(monkeypatch, write_settings(tmp_path, text))
    warnings = messages(at, "warning")
    assert len(warnings) == 1 and words in warnings[0] and "'sources.toml'" in warnings[0], warnings
    assert not at.error
    at.button(key="sample_compas").click().run()
    assert not at.exception and at.session_state["dataset"].source == "sample:compas"
    assert "At a glance" in glance(at)


def test_a_missing_settings_file_named_by_the_variable_is_said(monkeypatch, tmp_path):
    at = open_app(monkeypatch, tmp_path / "nowhere.toml")
    assert messages(at, "warning")[0].startswith("The sources settings file 'nowhere.toml' does not exist")
    assert "At a glance" in glance(at)


def test_without_a_settings_file_nothing_is_shown(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # no .streamlit/luskin_sources.toml here
    monkeypatch.setenv("HOME", str(tmp_path))
    at = open_app(monkeypatch, None)
    assert "Sources set up by your administrator" not in page_dump(at)
    assert not at.warning and not at.error


def test_an_unreachable_or_missing_source_is_one_sentence_and_the_data_stays(monkeypatch, adult_files, tmp_path):
    settings = write_settings(tmp_path, f"""
[[source]]
name = "Gone"
location = "{tmp_path / 'gone.parquet'}"

[[source]]
name = "No such table"
location = "{adult_files / 'adult.duckdb'}"
table = "people"

[[source]]
name = "Nobody answers"
location = "postgresql://luskin@127.0.0.1:1/db"
table = "adult"

[[source]]
name = "Half done"
""")
    at = open_app(monkeypatch, settings)
    assert messages(at, "warning") == [("The source 'Half done' has no location (a file, a folder, a DuckDB file or "
                                       "postgresql://...). The other sources and the rest of Luskin work as usual.")]
    # Analysts see a source's name (and description) only: no path, file name, user, host or port
    expected = {
        "Gone": "The source 'Gone' could not be opened: There is no file or folder 'Gone'.",
        "No such table": "The source 'No such table' could not be opened: The DuckDB database 'No such table' has no "
                         "table 'people'. Its tables are: adult.",
        "Nobody answers": "The source 'Nobody answers' could not be opened: The database server 'Nobody answers' does "
                          "not answer: check the address, the port and that it is running.",
    }
    for name, sentence in expected.items():
        open_source(at, name, confirm=False)
        assert messages(at, "error") == [sentence + " The data loaded before is still in use."]
        assert at.session_state["dataset"].source == "sample:adult"
        assert "At a glance" in glance(at)


# ------------------------------------------------------------------------------------------
# The settings file itself
# ------------------------------------------------------------------------------------------
def test_settings_entries_are_checked_one_by_one(tmp_path):
    (tmp_path / "pw.txt").write_text("s3cret\n")
    settings = read_settings(write_settings(tmp_path, """
[[source]]
name = "Good"
location = "data/stops.parquet"

[[source]]
name = "Inline password"
location = "postgresql://ana:hunter2@db.example.org/agency"
table = "stops"

[[source]]
name = "Both"
location = "postgresql://ana@db.example.org/agency"
password_env = "PGPASSWORD_AGENCY"
password_file = "pw.txt"

[[source]]
name = "Typo"
location = "x.parquet"
tabel = "x"

[[source]]
name = "Good"
location = "other.parquet"

[[source]]
name = "File password"
location = "postgresql://ana@db.example.org/agency"
table = "stops"
password_file = "pw.txt"
statement_timeout = 30

[[source]]
name = "File timeout"
location = "x.parquet"
statement_timeout = 30

[[source]]
name = "Word timeout"
location = "postgresql://ana@db.example.org/agency"
table = "stops"
statement_timeout = "soon"
"""))
    assert [s.name for s in settings.sources] == ["Good", "File password", "File timeout"]   # DuckDB is interrupted
    assert settings.sources[1].statement_timeout == 30.0 and settings.sources[0].statement_timeout is None
    assert settings.sources[0].location == str(tmp_path / "data" / "stops.parquet")
    assert settings.sources[1].password_file == str(tmp_path / "pw.txt")
    assert settings.problems == (
        ("The source 'Inline password' has a password written in its location: move it to an environment variable "
        "(password_env) or a file (password_file)."),
        "The source 'Both' names both password_env and password_file: keep one.",
        ("The source 'Typo' has settings Luskin does not know: tabel (known: description, groups, location, name, "
        "password_env, password_file, sample_cap, statement_timeout, table)."),
        "The source name 'Good' is used twice; only the first is listed.",
        ("The source 'Word timeout': 'statement_timeout' must be a number of seconds, more than 0 and at most 86400 "
         "(a day)."),
    )
    assert "hunter2" not in repr(settings) and "s3cret" not in repr(settings)


def test_the_settings_file_is_found_by_variable_then_local_then_user_file(tmp_path):
    local = tmp_path / "local.toml"
    write_settings(tmp_path, "[[source]]\nname = 'A'\nlocation = 'a.parquet'\n", "local.toml")
    assert load_settings(environ={"LUSKIN_SOURCES": str(local)}).sources[0].name == "A"
    assert load_settings(local).path == local
    assert load_settings(environ={}).path in (None, Path(".streamlit/luskin_sources.toml"),
                                              Path("~/.config/luskin/sources.toml").expanduser())


def test_a_password_variable_that_is_not_set_is_named_but_no_value_is_shown():
    setting = SourceSetting("Agency", "postgresql://ana@db.example.org/agency", "stops",
                            password_env="PGPASSWORD_AGENCY")
    with pytest.raises(LuskinError) as caught:
        open_setting(setting, environ={})
    assert str(caught.value) == ("The password of 'Agency' is not available: the environment variable "
                                 "PGPASSWORD_AGENCY is not set on the server. Ask the administrator.")


# ------------------------------------------------------------------------------------------
# A PostgreSQL source with a password (a real throwaway cluster)
# ------------------------------------------------------------------------------------------
def _load_postgres(url: str, frame) -> None:
    from urllib.parse import parse_qs, urlsplit

    import ibis  # type: ignore[import-untyped]

    host = parse_qs(urlsplit(url).query)["host"][0]
    con = ibis.postgres.connect(user="luskin", password=PASSWORD, host=host, database="postgres")
    stored = "adult_app" in con.list_tables()
    con.disconnect()
    if not stored:
        load_postgres(url, "adult_app", frame)


def test_a_postgres_source_with_a_password_never_shows_it(monkeypatch, tmp_path, postgres_url, adult,
                                                          caplog):
    _load_postgres(postgres_url, adult)
    without = postgres_url.replace(f":{PASSWORD}@", "@")
    assert PASSWORD not in without
    (tmp_path / "pg.pw").write_text(PASSWORD + "\n")
    (tmp_path / "wrong.pw").write_text("not-the-" + PASSWORD + "\n")
    settings = write_settings(tmp_path, f"""
[[source]]
name = "Agency records"
location = "{without}"
table = "adult_app"
password_file = "pg.pw"

[[source]]
name = "Wrong password"
location = "{without}"
table = "adult_app"
password_file = "wrong.pw"

[[source]]
name = "Password in the environment"
location = "{without}"
table = "adult_app"
password_env = "LUSKIN_TEST_PG_PASSWORD"
""")
    monkeypatch.setenv("LUSKIN_TEST_PG_PASSWORD", PASSWORD)
    caplog.set_level(logging.DEBUG)
    at = open_app(monkeypatch, settings)
    open_source(at, "Wrong password", confirm=False)
    refused = messages(at, "error")
    assert len(refused) == 1 and "refused the user name or password" in refused[0]
    assert "postgresql://" not in refused[0] and "sock" not in refused[0] and "5432" not in refused[0], refused[0]
    open_source(at, "Agency records")
    assert metric(at, "Rows") == "48,842" and metric(at, "Kind") == "PostgreSQL"
    spec = current_spec(at)
    assert glance(at) == "**At a glance:**\n" + bullet_list(audit(adult, spec).sentences())
    seen = [page_dump(at)]
    goto(at, "report")
    saved = at.code[0].value
    assert json.loads(saved)["data"]["source"] == "source:Agency records"
    seen += [page_dump(at), saved]
    goto(at, "data")
    open_source(at, "Password in the environment")
    assert metric(at, "Rows") == "48,842"
    seen += [page_dump(at), repr(at.session_state._state.filtered_state), caplog.text]
    for word in ("Agency records", "48,842"):
        assert word in seen[0], word
    # the connection's details stay with the operator: the pages show the source's name only
    details = urlsplit(without)
    for page in (seen[0], seen[1], seen[3]):
        for detail in (details.hostname or "localhost", *parse_qs(details.query).get("host", []),
                       f":{details.port or 5432}", f"{details.username}@", "postgresql://", "adult_app"):
            assert detail not in page, detail
    assert "opened the source 'Agency records'" in caplog.text
    for text in seen:
        assert PASSWORD not in text


def test_the_example_settings_file_is_valid():
    example = Path(__file__).resolve().parent.parent / "docs" / "sources.example.toml"
    settings = read_settings(example)
    assert settings.problems == ()
    assert len(settings.sources) == 7 and settings.get("HMDA 2022").password_env == "PGPASSWORD_HMDA"
    assert settings.get("Personnel decisions (HR only)").groups == ("hr-analysts",)
    with pytest.raises(LuskinError, match="No source named 'Elsewhere'"):
        settings.get("Elsewhere")
