"""AppTest of the Regulator page: the LL144 tables, the EEOC table and the sufficiency lines (Adult sample)."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from luskin_app.ui import unescape
from luskin_core import load_sample

APP = str(Path(__file__).resolve().parent.parent / "app.py")


def test_regulator_page_shows_ll144_and_eeoc_tables_on_adult():
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception
    at.switch_page("app_pages/regulator.py").run()
    assert not at.exception, at.exception
    assert [s.value for s in at.selectbox][:2] == ["sex", "race"]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Individuals assessed"] == f"{len(load_sample('adult')):,}"
    assert metrics["Unknown category (not in the tables)"] == "0"
    subheaders = [unescape(s.value) for s in at.subheader]
    assert "Intersectional (sex × race/ethnicity) categories" in subheaders
    assert any(s.startswith("sex: every group against") for s in subheaders)
    text = "\n".join(unescape(m.value) for m in at.markdown)
    assert "Data sufficiency" in text and "four-fifths" in text
    tables = at.dataframe
    assert len(tables) == 3 + 2
    sex = tables[0].value
    assert list(sex["category"]) == ["Female", "Male"] and sex["impact_ratio"].max() == 1.0
    at.checkbox(key="regulator_exclude").check().run()
    assert not at.exception
    race = at.dataframe[1].value
    assert race["excluded"].any()  # Amer-Indian-Eskimo and Other are under 2% of Adult


def test_audit_page_opens_with_the_sufficiency_summary():
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception
    at.switch_page("app_pages/audit.py").run()
    assert not at.exception, at.exception
    captions = [unescape(c.value) for c in at.caption]
    assert any(c.startswith("Data sufficiency:") for c in captions)
