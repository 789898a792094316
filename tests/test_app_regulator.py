"""AppTest of the Regulator page: the LL144 tables, the EEOC table and the sufficiency lines (Adult sample)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from luskin_app.ui import unescape
from luskin_core import load_sample

APP = str(Path(__file__).resolve().parent.parent / "app.py")


def whole_tables(at) -> list:
    """The page's tables as wholes: a wide table is drawn in parts that each fit the window (issue 46), each part
    led by the same first column; consecutive parts with the same first column are joined back."""
    import pandas as pd

    out: list = []
    for grid in at.dataframe:
        frame = grid.value
        if out and frame.columns[0] == out[-1].columns[0] and \
                list(frame.iloc[:, 0]) == list(out[-1].iloc[:, 0]) and not set(frame.columns[1:]) & set(out[-1].columns):
            out[-1] = pd.concat([out[-1], frame.iloc[:, 1:]], axis=1)
        else:
            out.append(frame)
    return out


def test_regulator_page_shows_ll144_and_eeoc_tables_on_adult():
    at = AppTest.from_file(APP, default_timeout=300).run()
    assert not at.exception
    at.switch_page("app_pages/regulator.py").run()
    assert not at.exception, at.exception
    assert [s.value for s in at.selectbox][:2] == ["sex", "race"]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Individuals assessed"] == f"{len(load_sample('adult')):,}"
    assert metrics["Unknown sex or race/ethnicity"] == "0"
    subheaders = [unescape(s.value) for s in at.header]
    assert "Intersectional (sex × race/ethnicity) categories" in subheaders
    assert any(s.startswith("sex: every group against") for s in subheaders)
    text = "\n".join(unescape(m.value) for m in at.markdown)
    assert "Data sufficiency" in text and "four-fifths" in text
    tables = whole_tables(at)
    assert len(tables) == 3 + 2
    sex = tables[0]
    # the table in words (issue 27): headers as published, one precision, no snake_case column names
    assert list(sex.columns) == ["Category", "# of applicants", "# Selected", "Selection rate", "Impact ratio"]
    assert list(sex["Category"]) == ["Female", "Male"] and list(sex["Impact ratio"])[1] == "1.00"
    at.checkbox(key="regulator_exclude").check().run()
    assert not at.exception
    race = whole_tables(at)[1]
    assert race["Impact ratio"].str.startswith("excluded").any()  # Amer-Indian-Eskimo and Other are under 2% of Adult


def test_audit_page_opens_with_the_sufficiency_summary():
    at = AppTest.from_file(APP, default_timeout=300).run()
    assert not at.exception
    at.switch_page("app_pages/audit.py").run()
    assert not at.exception, at.exception
    captions = [unescape(c.value) for c in at.caption]
    assert any(c.startswith("Data sufficiency:") for c in captions)


def test_regulator_page_escapes_hostile_categories():
    """Values that are Markdown or HTML are shown as text in every body the page renders."""
    import re

    import numpy as np
    import pandas as pd

    evil = ["![x](https://attacker.example/beacon.png)", '<img src="https://attacker.example/i.png">']
    rng = np.random.default_rng(5)
    n = 600
    frame = pd.DataFrame({"decision": rng.choice(["yes", "no"], n), "race": rng.choice(["White", *evil], n),
                          "gender": rng.choice(["F", "M", "[m](https://attacker.example/m)"], n)})
    at = AppTest.from_file(APP, default_timeout=300).run()
    at.file_uploader(key="upload_csv").set_value(("hostile.csv", frame.to_csv(index=False).encode(), "text/csv")).run()
    if at.radio(key="outcome_is").value is None:   # 'decision is yes': the page asks which way is good (issue 46)
        at.radio(key="outcome_is").set_value("favourable").run()
    at.button(key="data_confirm").click().run()
    at.switch_page("app_pages/regulator.py").run()
    assert not at.exception, at.exception
    live = [re.compile(p) for p in (r"(?<!\\)<(?:img|a\b|script)", r"(?<!\\)\]\(", r"https?://")]
    bodies = [str(e.value) for kind in ("markdown", "caption", "subheader", "error", "warning", "info")
              for e in getattr(at, kind)]
    bodies += [str(m.label) for m in at.metric]
    assert bodies
    for body in bodies:
        assert not [p.pattern for p in live if p.search(body)], body[:300]
    categories = set(whole_tables(at)[1]["Category"])
    assert set(evil) <= categories  # shown as text in the tables


def test_regulator_page_on_a_credit_file_with_an_adverse_outcome_and_no_race_column():
    """Issue 27: no race column means no race table (the credit limit is not a race); a default is adverse."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(27)
    n = 2000
    sex = rng.choice(["Female", "Male"], n)
    frame = pd.DataFrame({"LIMIT_BAL": rng.integers(1, 50, n) * 10000, "SEX": sex,
                          "default": (rng.random(n) < np.where(sex == "Male", 0.35, 0.15)).astype(int)})
    at = AppTest.from_file(APP, default_timeout=300).run()
    at.file_uploader(key="upload_csv").set_value(("credit.csv", frame.to_csv(index=False).encode(), "text/csv")).run()
    at.button(key="data_confirm").click().run()
    at.switch_page("app_pages/regulator.py").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="regulator_sex").value == "SEX"
    assert at.selectbox(key="regulator_race").value == "(no such column)"
    infos = "\n".join(unescape(i.value) for i in at.info)
    assert "No race/ethnicity column was found in this file" in infos
    assert "is adverse" in infos and "favourable decision" in infos
    subheaders = [unescape(s.value) for s in at.header]
    assert "Race/ethnicity categories" in subheaders  # said, not filled with the credit limit
    assert "the data has no race/ethnicity column" in infos
    assert {m.label: m.value for m in at.metric}["Unknown sex"] == "0"
    sex_table = whole_tables(at)[0]
    selected = dict(zip(sex_table["Category"], sex_table["# Selected"]))
    favourable = frame.assign(ok=frame["default"] == 0).groupby("SEX")["ok"].sum()
    assert selected == {k: f"{int(v):,}" for k, v in favourable.items()}
    assert sex_table.set_index("Category").loc["Female", "Impact ratio"] == "1.00"
    text = "\n".join(unescape(m.value) for m in at.markdown)
    assert "the most selected category is Female" in text


def test_regulator_page_reads_a_published_table():
    """'I have the published table, not the rows': the same tables, bounds and words as the command line."""
    import pandas as pd

    from luskin_core.analyses.regulator import ll144_from_summary

    published = pd.DataFrame({"table": ["sex", "sex", "sex", "race_ethnicity", "race_ethnicity", "race_ethnicity"],
                              "category": ["Male", "Female", "Unknown", "=HYPERLINK(\"x\")", "B", "Unknown"],
                              "applicants": [1390, 1181, 250, 900, 800, 250],
                              "selected": [667, 555, "", 450, 300, 100]})
    at = AppTest.from_file(APP, default_timeout=300).run()
    at.switch_page("app_pages/regulator.py").run()
    at.toggle(key="regulator_published").set_value(True).run()
    assert not at.exception, at.exception
    at.file_uploader(key="regulator_summary").set_value(
        ("published.csv", published.to_csv(index=False).encode(), "text/csv")).run()
    assert not at.exception, at.exception
    expected = ll144_from_summary(published.astype(str).replace({"": ""}))
    sex = whole_tables(at)[0]
    assert list(sex["Category"]) == ["Male", "Female"]
    assert list(sex["Status"]) == ["passes whatever the unknowns were", "passes whatever the unknowns were"]
    female = expected.table("sex").rows[1]
    low = sex.set_index("Category").loc["Female", "Range over the unknowns"].split("–")[0]
    assert float(low) == pytest.approx(female.impact_ratio_low, abs=0.005)
    race = whole_tables(at)[1]
    assert "'=HYPERLINK(\"x\")" in set(race["Category"])  # shown as text, as the CSV writes it
    text = "\n".join(unescape(m.value) for m in at.markdown)
    assert "Spread over the categories in every possible way" in text
    assert "the published table has no intersectional rows" in "\n".join(unescape(i.value) for i in at.info)


def test_a_registered_table_gets_its_own_tab(monkeypatch):
    from luskin_core.analyses import regulator_tables

    entry = regulator_tables.RegulatorTable("toy", "Toy table", "a toy table", "tests.test_cli_regulator:build_toy")
    monkeypatch.setitem(regulator_tables.REGULATOR_TABLES, "toy", entry)
    at = AppTest.from_file(APP, default_timeout=300).run()
    at.switch_page("app_pages/regulator.py").run()
    assert not at.exception, at.exception
    assert [t.label for t in at.tabs] == ["Local Law 144", "EEOC Uniform Guidelines", "EU pay transparency",
                                          "Toy table"]
    assert any(unescape(s.value) == "Toy counts" for s in at.header)
    assert f"The toy table counted {len(load_sample('adult'))} rows" in "\n".join(unescape(m.value) for m in at.markdown)


def test_regulator_page_reads_the_users_unknown_spellings():
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(30)
    n = 900
    frame = pd.DataFrame({"hired": rng.choice(["yes", "no"], n),
                          "gender": rng.choice(["Female", "Male", "Prefer not to say"], n, p=[0.45, 0.45, 0.1]),
                          "race": rng.choice(["White", "Black", "Asian", "Not given"], n)})
    at = AppTest.from_file(APP, default_timeout=300).run()
    at.file_uploader(key="upload_csv").set_value(("hires.csv", frame.to_csv(index=False).encode(), "text/csv")).run()
    at.button(key="data_confirm").click().run()
    at.switch_page("app_pages/regulator.py").run()
    assert not at.exception, at.exception
    assert (at.selectbox(key="regulator_sex").value, at.selectbox(key="regulator_race").value) == ("gender", "race")
    assert "Prefer not to say" not in set(whole_tables(at)[0]["Category"])  # a common spelling: unknown already
    assert "Not given" in set(whole_tables(at)[1]["Category"])
    at.text_input(key="regulator_unknown").input("Not given").run()
    assert not at.exception, at.exception
    assert set(whole_tables(at)[1]["Category"]) == {"White", "Black", "Asian"}
    text = "\n".join(unescape(m.value) for m in at.markdown)
    assert "'Not given'" in text and "'Prefer not to say'" in text


def test_regulator_page_with_a_race_column_only():
    """A pool that collects race/ethnicity only: the race table (equal to pandas) with its own unknown count, and
    the sex and intersectional tables say plainly why they cannot be made."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(28)
    n = 900
    frame = pd.DataFrame({"ethnicity": rng.choice(["White", "Black", "Asian", "Prefer not to say"], n),
                          "hired": rng.choice(["yes", "no"], n, p=[.4, .6])})
    at = AppTest.from_file(APP, default_timeout=300).run()
    at.file_uploader(key="upload_csv").set_value(("pool.csv", frame.to_csv(index=False).encode(), "text/csv")).run()
    at.button(key="data_confirm").click().run()
    at.switch_page("app_pages/regulator.py").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="regulator_sex").value == "(no such column)"
    assert at.selectbox(key="regulator_race").value == "ethnicity"
    known = frame[frame["ethnicity"] != "Prefer not to say"]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Unknown race/ethnicity"] == f"{n - len(known):,}"
    race = whole_tables(at)[0]
    expected = known.groupby("ethnicity")["hired"].agg(lambda v: int((v == "yes").sum()))
    assert dict(zip(race["Category"], race["# Selected"])) == {k: f"{int(v):,}" for k, v in expected.items()}
    infos = "\n".join(unescape(i.value) for i in at.info)
    assert "the data has no sex column (none was given" in infos
    assert "there is no sex column, so there are no sex × race/ethnicity categories to compare" in infos
