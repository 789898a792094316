"""Every page tells a committee the truth in words (issue 27): the newer pages walked with files of our own.

Three small files (tests/code_words.py): credit default (an adverse outcome, sex coded 1/2 and named by the
user, a follow-up ending with every group at 100%), Berkeley 1973 (a Simpson's paradox; no race, surname or
date column) and bar passage (an outcome written 1.0, race words that are also surnames). Each is uploaded
and every page is opened as the sidebar does; every word, heading, metric, table and chart title shown is
read, and none may hold a code-like word of the issue's list, a snake_case header, a column of percentages
at two precisions or a count without separators. Beside that, what each file tests: the named codes used
everywhere, the adverse outcome's direction, no invented column, the flagged periods, the Simpson headline,
and the adjusted gap in "What we found" and on the report's first page.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
from code_words import bar_passage, berkeley, code_words, credit, table_problems
from test_app import APP, TIMEOUT

from luskin_app.ui import unescape

PAGES = ("data", "audit", "series", "adjusted", "regulator", "proxy", "report", "present")
KINDS = ("error", "warning", "info", "success", "markdown", "caption", "title", "subheader", "header")


def shown_text(at: Any) -> str:
    """Everything a reader sees on the page but the data's own preview: words, metrics, expanders, charts."""
    parts = [unescape(str(e.value)) for kind in KINDS for e in getattr(at, kind)]
    parts += [f"{m.label}: {m.value}" for m in at.metric]
    parts += [str(e.label) for e in at.get("expander")]
    parts += [str(e.label) for kind in ("selectbox", "multiselect", "radio", "checkbox", "slider", "toggle")
              for e in getattr(at, kind)]
    for chart in at.get("plotly_chart"):
        spec = json.loads(chart.proto.spec)
        layout = spec.get("layout", {})
        parts.append(str(layout.get("title", {}).get("text", "")))
        parts += [str(a.get("text", "")) for a in layout.get("annotations", [])]
        parts += [str(v.get("title", {}).get("text", "")) for k, v in layout.items()
                  if k.startswith(("xaxis", "yaxis")) and isinstance(v, dict)]
        parts += [str(t.get("name", "")) for t in spec.get("data", [])]
    return "\n".join(parts)


def shown_tables(at: Any, page: str, data: pd.DataFrame) -> list[str]:
    """The problems of the page's tables (the Data page's preview of the file itself is the file's own)."""
    out = []
    for element in at.dataframe:
        frame = element.value
        if list(frame.columns) == list(data.columns):
            continue
        out += table_problems(frame, page, set(map(str, data.columns)))
    return out


def walk(frame: pd.DataFrame, name: str, *, before: Any = None, on_page: Any = None) -> dict[str, Any]:
    """Upload ``frame``, confirm the guesses, run ``before(at)`` on the Data page, then open every page
    (``on_page(at, page)`` may set a page's choices); the problems found and each page's text."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.file_uploader(key="upload_csv").set_value((name, frame.to_csv(index=False).encode(), "text/csv")).run()
    at.button(key="data_confirm").click().run()
    assert not at.exception, at.exception
    if before is not None:
        before(at)
    found: list[str] = []
    texts: dict[str, str] = {}
    for page in PAGES:
        at.switch_page(f"app_pages/{page}.py").run()
        assert not at.exception, (page, at.exception)
        if on_page is not None:
            on_page(at, page)
            assert not at.exception, (page, at.exception)
        text = shown_text(at)
        texts[page] = text
        found += [f"{page}: {w}" for w in code_words(text)]
        found += shown_tables(at, page, frame)
        found += [f"{page}: an error box {unescape(str(e.value))[:200]!r}" for e in at.error]
    return {"at": at, "problems": found, "texts": texts}


def test_the_scan_finds_each_word_of_the_list() -> None:
    """Each word the issue saw is caught (the scan can fail), and plain words pass."""
    seen = ["compare 1 with Non-1", "Female with Non-Female", "the share with pass_bar = 1.0",
            "more than 10 years of education (E)", "a gap of 1 pts", "1 group(s) still differ",
            "use --period-format", "adjusted_p_corrected", "p = 0.0000000012"]
    for text in seen:
        assert code_words(text), text
    for text in ("compare Female with Male", "the share where pass_bar is 1", "a gap of 1 point", "1 group",
                 "p < 0.001", "−14.2 points", "Hispanic"):
        assert not code_words(text), text
    bad = pd.DataFrame({"impact_ratio": ["0.80"], "Share": ["87.79%"], "Rows": ["1835"]})
    bad = pd.concat([bad, pd.DataFrame({"impact_ratio": ["1.00"], "Share": ["89.9%"], "Rows": ["12"]})])
    assert len(table_problems(bad, "t")) == 3
    good = pd.DataFrame({"Impact ratio": ["0.80", "1.00"], "Share": ["87.8%", "89.9%"], "Rows": ["1,835", "12"]})
    assert not table_problems(good, "t")


def _name_the_codes(at: Any) -> None:
    """On the Data page, name SEX's codes as a committee says them: 1 = Male, 2 = Female."""
    boxes = {box.label: box for box in at.text_input if str(box.key).startswith("value_name_")}
    boxes["SEX = 1"].input("Male").run()
    boxes = {box.label: box for box in at.text_input if str(box.key).startswith("value_name_")}
    boxes["SEX = 2"].input("Female").run()
    assert not at.exception, at.exception


def _credit_choices(at: Any, page: str) -> None:
    if page == "adjusted":
        at.multiselect(key="adj_controls").set_value(["EDUCATION", "LIMIT_BAL"]).run()


def test_credit_default_reads_in_words_the_right_way_round_with_the_named_codes() -> None:
    frame = credit()
    seen = walk(frame, "credit.csv", before=_name_the_codes, on_page=_credit_choices)
    assert not seen["problems"], "\n".join(seen["problems"])
    texts = seen["texts"]
    # the codes, once named, are used everywhere (the sidebar too), and the rest is named by its value
    for page in ("audit", "series", "adjusted", "regulator", "present"):
        assert "Male" in texts[page] and "Female" in texts[page], page
        assert "Groups: Male vs Female" in texts[page].replace("**", ""), page
    # adverse: the group that defaults least is the most favoured, in the regulator tables and over time
    assert "the most selected category is Female" in texts["regulator"]
    assert "No race/ethnicity column was found in this file" in texts["regulator"]
    assert "share without default is 1" in texts["series"]          # the ratio compares the favourable shares
    assert "every group's share is 100%" in texts["series"]          # the follow-up's end is flagged
    assert "narrowed" not in texts["series"]
    # no invented column: no surname or place is taken, and it says so
    assert "No column of this file looks like surnames" in texts["proxy"]
    # the adjusted gap joins "What we found" on the Audit page once the Adjusted gaps page has run
    at = seen["at"]
    at.switch_page("app_pages/audit.py").run()
    assert "Once the controls are held equal" in shown_text(at)
    adjusted = at.session_state["results"]["adjusted"][2]
    assert any(s in shown_text(at) for s in adjusted.summary())


def _berkeley_choices(at: Any, page: str) -> None:
    if page == "audit":
        at.radio(key="audit_cell_mode").set_value("strata").run()
        at.multiselect(key="audit_strata").set_value(["department"]).run()
    if page == "adjusted":
        at.multiselect(key="adj_controls").set_value(["department"]).run()


def test_berkeley_leads_with_the_paradox_and_says_what_the_file_lacks() -> None:
    from luskin_core.analyses.audit import audit
    from luskin_core.present.report import report_content
    from luskin_core.present.slides import build_slides

    seen = walk(berkeley(), "berkeley.csv", on_page=_berkeley_choices)
    assert not seen["problems"], "\n".join(seen["problems"])
    texts, at = seen["texts"], seen["at"]
    assert "Female with Male" in texts["data"].replace("**", "")
    assert "no date column" in texts["series"] or "no column of dates" in texts["series"]
    assert "No race/ethnicity column was found" in texts["regulator"]
    assert "No column of this file looks like surnames" in texts["proxy"]
    # the report's first page and the slides, from the page's own results: the paradox first, the adjusted gap too
    adjusted = at.session_state["results"]["adjusted"][2]
    spec = adjusted.spec.with_changes(strata=("department",))
    result = audit(berkeley(), spec)
    first = report_content([result, adjusted]).sections[0]
    words = " ".join(" ".join(str(i) for i in b.get("items", ()) or ()) + " " + str(b.get("text", "") or "")
                     for b in first.blocks)
    assert "Once the controls are held equal (regression)" in [b.get("title") for b in first.blocks]
    assert any(s in words for s in adjusted.summary())
    lead = next(str(b["text"]) for b in first.blocks if b["kind"] == "lead")
    # the paradox first, in plain words, on the Audit page as on the report's first page
    assert "within" in lead.lower() and lead in texts["audit"], (lead, texts["audit"][:600])
    slides = " ".join(" ".join((s.title, *s.sentences)) for s in build_slides([result, adjusted]))
    problems = code_words(words) + code_words(slides)
    assert not problems, problems


def test_bar_passage_takes_no_race_for_a_surname_and_says_the_outcome_in_words() -> None:
    seen = walk(bar_passage(), "bar.csv")
    assert not seen["problems"], "\n".join(seen["problems"])
    texts = seen["texts"]
    assert "pass_bar is 1" in texts["data"]
    assert "Surname column" in texts["proxy"]
    assert "No column of this file looks like surnames" in texts["proxy"]



def test_model_pages_name_the_rest_of_adult_sex_by_its_value() -> None:
    """Thresholds and Equalized on Adult's sex (two values): 'Female' with 'Male', never 'Non-Female', in the words,
    the metrics, the charts' legends and titles and the tables' cells; each group keeps its colour (protected blue)."""
    from streamlit.testing.v1 import AppTest

    from luskin_core.present.plots import GROUP_COLOR, OTHER_COLOR

    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.selectbox(key="protected_column").set_value("sex").run()
    at.multiselect(key="protected_values").set_value(["Female"]).run()
    assert not at.exception, at.exception
    for page, chart in (("thresholds", "thr_chart"), ("equalized", "eq_hist")):
        at.switch_page(f"app_pages/{page}.py").run()
        if page == "equalized":
            at.multiselect(key="eq_alphas").set_value([0.5, 1.0]).run()
            at.button(key="eq_run").click().run()
        assert not at.exception and not at.error, (page, at.exception, [e.value for e in at.error])
        cells = "\n".join(str(v) for element in at.dataframe for v in element.value.to_numpy().ravel().tolist())
        text = shown_text(at) + "\n" + cells
        assert not code_words(text), (page, code_words(text))
        assert "Female" in text and "Male" in text.replace("Female", ""), page
        figure = json.loads(at.get("plotly_chart")[0].proto.spec) if page == "thresholds" else next(
            json.loads(c.proto.spec) for c in at.get("plotly_chart") if "Score distributions" in c.proto.spec)
        colours = {str(t["name"]).split(":")[0]: (t.get("line") or t.get("marker") or {}).get("color")
                   for t in figure["data"] if t.get("name") != "chance"}
        assert colours == {"Female": GROUP_COLOR, "Male": OTHER_COLOR}, (page, chart, colours)
