"""The newer pages walked in Chromium as a new user would (issue 27): Over time, Adjusted gaps, Regulator
tables and Proxy audit, with small files made here (tests/code_words.py).

Two sessions on one served app, each at one window size and checked at the other too:

* credit default at 1024x768 (1280x800 checked): an adverse outcome, sex coded 1/2 and named on the Data page
  (the names expander stays open while the names are typed), a follow-up that ends with every group at 100%;
* Berkeley 1973 at 1280x800 (1024x768 checked): a Simpson's paradox with no race, surname or date column.

On every page, opened from the sidebar and then reloaded: the uploaded data (its row count) and the settings
(the named codes, the adjusted gap's control) are kept, no column is invented (no race, surname or date
taken from something else), the reference group gets no verdict, none of the issue's code-like words is on
the page or in a chart, no caveat is a red error box, no list is numbered from "2.", no axis title is cut,
and the layout fits (``check_layout``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from code_words import berkeley, code_words, credit
from conftest import UI
from test_layout import check_layout

pytestmark = pytest.mark.browser

SIZES = {"1024": {"width": 1024, "height": 768}, "1280": {"width": 1280, "height": 800}}
HEADINGS = {"Over time": "Over time: do the gaps move?",
            "Adjusted gaps": "Adjusted gaps: what remains once the controls are held equal",
            "Regulator tables": "Regulator tables", "Proxy audit": "Proxy audit"}
# What the page shows, as a reader sees it: the words of the main area and the sidebar, and the charts' text.
PAGE_FACTS = """() => {
  const text = (sel) => [...document.querySelectorAll(sel)].map((e) => e.innerText || e.textContent || "").join("\\n");
  const svg = [...document.querySelectorAll('[data-testid="stPlotlyChart"] .main-svg text')]
    .map((t) => t.textContent || "");
  const axes = [...document.querySelectorAll('.g-xtitle text, .g-ytitle text')].map((t) => t.textContent || "");
  const lists = [...document.querySelectorAll('[data-testid="stMain"] ol')]
    .map((o) => o.getAttribute("start")).filter((s) => s !== null && s !== "1");
  const errors = [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stAlertContentError"]')]
    .map((e) => e.innerText);
  return {main: text('[data-testid="stMain"]'), sidebar: text('section[data-testid="stSidebar"]'),
          svg: svg.join("\\n"), axes, lists, errors};
}"""


def _rows(ui: UI) -> str:
    sidebar = ui.page.locator('section[data-testid="stSidebar"]').first.inner_text()
    found = re.search(r"([\d,]+) rows ×", sidebar)
    return found.group(1) if found else "(no row count in the sidebar)"


def _settle(ui: UI, heading: str) -> None:
    """The page as a reader sees it: its script run finished and every chart drawn (its axis titles are read)."""
    ui.page.locator('section[data-testid="stSidebar"]').get_by_text(re.compile(r"rows ×")).first.wait_for()
    ui.wait_text(heading)
    ui.idle()
    ui.charts_drawn()
    ui.settle()


def _upload(ui: UI, path: Path, size: str) -> None:
    ui.page.set_viewport_size(SIZES[size])
    ui.open()
    ui.wait_text("Ready: comparing")
    ui.idle()
    ui.page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(path))
    ui.wait_text("Luskin's first guesses for this file")
    ui.page.get_by_role("button", name="Use these choices").first.click()
    ui.wait_text("Ready: comparing")
    ui.idle()


def _name_codes(ui: UI, names: dict[str, str]) -> None:
    """Type names for codes in the Data page's expander; it must stay open from one name to the next."""
    ui.page.get_by_text("Names for coded values", exact=False).first.click()
    for label, name in names.items():
        box = ui.page.get_by_role("textbox", name=label, exact=True).first
        box.wait_for(state="visible")
        box.fill(name)
        ui.rerun_by(lambda box=box: box.press("Enter"))   # the name is the page's once its run has finished
        assert ui.page.get_by_role("textbox", name=label, exact=True).first.is_visible(), \
            f"the names expander closed after naming {label}"


def _problems(ui: UI, where: str, reference: str) -> tuple[list[str], str]:
    """What is wrong with the page as shown, and its text."""
    facts: dict[str, Any] = ui.page.evaluate(PAGE_FACTS)
    text = "\n".join((facts["main"], facts["sidebar"], facts["svg"]))
    found = [f"{where}: {w}" for w in code_words(text)]
    found += [f"{where}: an axis title cut {t!r}" for t in facts["axes"] if "…" in t]
    found += [f"{where}: a list numbered from {s}" for s in facts["lists"]]
    found += [f"{where}: a red error box {e[:160]!r}" for e in facts["errors"]]
    # the reference group gets no verdict of its own ("Female: passes four-fifths..." for the reference itself)
    verdict = re.compile(rf"^\s*{re.escape(reference)}: (?:passes|below|could)", re.MULTILINE)
    found += [f"{where}: a verdict for the reference group {m.group(0)!r}" for m in verdict.finditer(facts["main"])]
    return found, text


def _walk(ui: UI, size: str, rows: str, reference: str, control: str) -> dict[str, str]:
    """Open each newer page from the sidebar, check it at both sizes, reload it, check it again."""
    other = next(s for s in SIZES if s != size)
    problems: list[str] = []
    texts: dict[str, str] = {}
    for title, heading in HEADINGS.items():
        ui.goto_page(title)
        _settle(ui, heading)
        if title == "Adjusted gaps" and control not in ui.page.get_by_test_id("stMain").inner_text():
            ui.choose("Controls held equal", control)   # clicked once on an idle page, checked as drawn
            ui.wait_text(re.compile(rf"[Hh]olding {re.escape(control)} equal"))
            ui.idle()
        for shown in (size, other, size):
            ui.page.set_viewport_size(SIZES[shown])
            check_layout(ui, f"{title} at {shown}")
        found, _ = _problems(ui, f"{title} (from the sidebar)", reference)
        problems += found
        moved = _rows(ui)
        ui.page.reload()
        _settle(ui, heading)
        if title == "Adjusted gaps":   # the control chosen survives the reload
            ui.wait_text(re.compile(rf"[Hh]olding {re.escape(control)} equal"))
            ui.idle()
        found, texts[title] = _problems(ui, f"{title} (reloaded)", reference)
        problems += found
        if (moved, _rows(ui)) != (rows, rows):
            problems.append(f"{title}: rows {moved} from the sidebar, {_rows(ui)} reloaded; the file has {rows}")
    assert not problems, "\n".join(problems)
    return texts


@pytest.mark.timeout(900)
def test_credit_default_walk(ui: UI, tmp_path: Path) -> None:
    path = tmp_path / "credit_default.csv"
    credit().to_csv(path, index=False)
    _upload(ui, path, "1024")
    _name_codes(ui, {"SEX = 1": "Male", "SEX = 2": "Female"})
    ui.wait_text("Ready: comparing Male with Female")
    texts = _walk(ui, "1024", f"{len(credit()):,}", reference="Female", control="EDUCATION")
    for title, text in texts.items():
        assert "Groups: Male vs Female" in text, title   # the named codes, on every page after a reload
    # adverse: the group that defaults least is the most selected; the ratio compares the shares without default
    assert "the most selected category is Female" in texts["Regulator tables"]
    assert "share without default is 1" in texts["Over time"]
    assert "every group's share is 100%" in texts["Over time"]
    # no invented column: no race table from the credit limit, no surname from the first column
    assert "No race/ethnicity column was found in this file" in texts["Regulator tables"]
    assert "No column of this file looks like surnames" in texts["Proxy audit"]


@pytest.mark.timeout(900)
def test_berkeley_walk(ui: UI, tmp_path: Path) -> None:
    path = tmp_path / "berkeley_1973.csv"
    berkeley().to_csv(path, index=False)
    _upload(ui, path, "1280")
    ui.wait_text("Ready: comparing Female with Male")
    texts = _walk(ui, "1280", f"{len(berkeley()):,}", reference="Male", control="department")
    assert "no column of dates" in texts["Over time"] or "no date column" in texts["Over time"]
    assert "No race/ethnicity column was found in this file" in texts["Regulator tables"]
    assert "No column of this file looks like surnames" in texts["Proxy audit"]
    # within departments the gap reverses: the adjusted gap says which way, and the raw gap beside it
    assert "holding department equal" in texts["Adjusted gaps"].lower()


def _every_page_in_the_sidebar(ui: UI) -> None:
    """Every page's link is visible in the sidebar now, without a click (none behind 'View N more')."""
    from luskin_app.pages import PAGES

    nav = ui.page.get_by_test_id("stSidebarNav")
    more = nav.get_by_text(re.compile(r"^View \d+ more$"))
    assert not more.count(), "the sidebar folds pages behind " + repr(more.first.inner_text())
    titles = [p.title for p in PAGES if not p.admin_only]   # no sign-in here: no Administration
    hidden = [t for t in titles if not nav.get_by_role("link", name=t, exact=True).is_visible()]
    assert not hidden and nav.get_by_role("link").count() == len(titles), hidden


@pytest.mark.timeout(900)
def test_model_pages_name_the_other_group_by_its_value(ui: UI, tmp_path: Path) -> None:
    """Thresholds and Equalized distribution on the credit file (SEX 1 = Male, 2 = Female, named on the Data page):
    'Male' with 'Female' in the words, tables and charts, never 'Non-Male'; every page is in the sidebar at once."""
    path = tmp_path / "credit_default.csv"
    credit().to_csv(path, index=False)
    _upload(ui, path, "1280")
    _every_page_in_the_sidebar(ui)
    _name_codes(ui, {"SEX = 1": "Male", "SEX = 2": "Female"})
    ui.wait_text("Ready: comparing Male with Female")
    problems: list[str] = []
    for title, heading in (("Thresholds", "Thresholds: equal error rates"),
                           ("Equalized distribution", "Equalized distribution: fair scores")):
        ui.goto_page(title)
        ui.wait_text(heading)
        ui.idle()
        if title == "Equalized distribution":
            ui.page.get_by_role("button", name="Train the models").first.click()
            ui.page.locator('[data-testid="stPlotlyChart"] .main-svg').first.wait_for(timeout=600_000)
        else:
            ui.wait_text(re.compile(r"Thresholds chosen"), timeout=300_000)
            # the chart itself: its element is mounted once plotly's bundle has loaded, after the words below it,
            # later still under load (charts_drawn holds on a page with no chart yet: the legend read after it was
            # empty in two runs)
            ui.page.locator('[data-testid="stPlotlyChart"] .main-svg').first.wait_for(timeout=300_000)
        ui.idle(600_000)
        ui.charts_drawn(timeout=120_000)   # plotly draws after the run is over
        ui.settle()
        found, text = _problems(ui, title, reference="Female")
        problems += found
        grid = ui.page.locator('[data-testid="stMain"] [data-testid="stDataFrame"]')
        cells = "\n".join(grid.nth(i).inner_text() for i in range(grid.count()))
        problems += [f"{title} (table): {w}" for w in code_words(cells)]
        if "Non-" in text + cells:
            problems.append(f"{title}: 'Non-' on the page")
        shown = text.replace("Female", "")
        if "Female" not in text or "Male" not in shown:
            problems.append(f"{title}: the groups are not both named ('Male' and 'Female')")
        legend = ui.page.locator('[data-testid="stPlotlyChart"] .legendtext')
        names = {legend.nth(i).text_content() or "" for i in range(legend.count())}
        if not any(n.startswith("Female") for n in names) or not any(n.startswith("Male") for n in names):
            problems.append(f"{title}: the chart's legend does not name both groups: {sorted(names)}")
        _every_page_in_the_sidebar(ui)
    assert not problems, "\n".join(problems)
