"""Every page at projector width (1024×768) and on a wide screen (1920×1080), on COMPAS and Adult.

Each test opens a fresh session on one sample, visits every page as a user does (the sidebar
navigation; Retrain, Thresholds and Equalized distribution with their results on screen), then
every slide of the presentation mode with the arrow keys, and on each screen, at each window size
in turn, from the size the window has (the window resized: the page is not run again):

* takes a screenshot into LUSKIN_SCREENSHOT_DIR/layout (``<sample>-<width>-<page>.png``);
* fails when the page scrolls sideways (the document or Streamlit's main area is wider than
  the window);
* fails when a chart's title or subtitle is cut or runs into the labels above the plot, an axis title
  or the plot;
* fails when a visible button, link, label, heading, tab, metric or expander title has its text
  cut (its text is wider than its box, and the box hides the rest or draws an ellipsis);
* fails when a chart's title or subtitle runs past the chart's right edge (plotly cuts it);
* fails when a table the page means to show whole needs sideways scrolling (the Audit page's
  tables are checked in the paper's view and with every group within strata). Unavoidable
  exceptions, said here: the Data page's preview of the raw rows and its column summary (the
  data has as many columns as it has), and the Audit page's "Every number" expander (closed
  unless asked for; it holds every bound and raw p-value for analysts).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from conftest import SCREENSHOTS, UI
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

pytestmark = pytest.mark.browser

SIZES = {"1024": {"width": 1024, "height": 768}, "1920": {"width": 1920, "height": 1080}}
CHART = '[data-testid="stPlotlyChart"] .main-svg'

# Measured in the page: sideways scrolling, cut text, cut chart titles, tables that scroll sideways.
MEASURE = """
(checkTables) => {
  const visible = (el) => {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) return false;
    for (let p = el; p; p = p.parentElement) {
      const s = getComputedStyle(p);
      if (s.display === "none" || s.visibility === "hidden") return false;
      if (p.tagName === "DETAILS" && !p.open && !el.closest("summary")) return false;
    }
    return true;
  };
  const out = {innerWidth: window.innerWidth, docScroll: document.documentElement.scrollWidth,
               mainScroll: 0, mainClient: 0, cut: [], charts: [], tables: []};
  const main = document.querySelector('[data-testid="stMain"]');
  if (main) { out.mainScroll = main.scrollWidth; out.mainClient = main.clientWidth; }
  const selector = [
    "button", "button *", '[data-testid="stPageLink"] *', '[data-testid="stSidebarNav"] a *',
    '[data-testid="stWidgetLabel"] *', '[data-testid="stMetricLabel"] *', '[data-testid="stMetricValue"] *',
    '[data-testid="stExpander"] summary *', "h1", "h2", "h3", '[data-testid="stCaptionContainer"] *',
    '[data-baseweb="select"] *', '[data-baseweb="tag"] *'].join(", ");
  for (const el of document.querySelectorAll(selector)) {
    if (el.closest('[data-testid="stPlotlyChart"], [data-testid="stDataFrame"], svg')) continue;
    if (el.closest('[data-baseweb="select"]') && el.closest('input')) continue;
    if (!visible(el)) continue;
    const s = getComputedStyle(el);
    const hides = s.overflowX === "hidden" || s.overflowX === "clip" || s.textOverflow === "ellipsis";
    if (hides && el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0 && (el.textContent || "").trim()) {
      out.cut.push({tag: el.tagName, testid: (el.closest("[data-testid]") || el).getAttribute("data-testid"),
                    text: el.textContent.trim().slice(0, 80), scroll: el.scrollWidth, client: el.clientWidth});
    }
  }
  for (const svg of document.querySelectorAll('[data-testid="stPlotlyChart"] .main-svg')) {
    const box = svg.getBoundingClientRect();
    if (box.width === 0) continue;
    const titles = [...svg.querySelectorAll(".g-gtitle text, .gtitle, .gtitle-subtitle")];
    for (const t of titles) {
      const r = t.getBoundingClientRect();
      if (r.width > 0 && (r.right > box.right + 2 || r.left < box.left - 2 || r.top < box.top - 2)) {
        out.charts.push({text: (t.textContent || "").slice(0, 80), why: "cut at the chart's edge"});
      }
    }
    // a title or subtitle running into the labels above the plot, an axis title or the plot itself
    const chart = svg.closest('[data-testid="stPlotlyChart"]');
    const others = [...chart.querySelectorAll(".annotation-text, .g-ytitle text, .g-xtitle text")];
    const plot = chart.querySelector(".bglayer rect, .draglayer .nsewdrag");
    if (plot) others.push(plot);
    for (const t of titles) {
      const r = t.getBoundingClientRect();
      if (r.width === 0) continue;
      for (const o of others) {
        const q = o.getBoundingClientRect();
        if (q.width === 0 || q.height === 0) continue;
        const overlap = Math.min(r.bottom, q.bottom) - Math.max(r.top, q.top);
        const across = Math.min(r.right, q.right) - Math.max(r.left, q.left);
        if (overlap > 2 && across > 2) {
          out.charts.push({text: (t.textContent || "").slice(0, 60),
                           why: "overlaps " + ((o.textContent || "").trim().slice(0, 40) || "the plot")});
          break;
        }
      }
    }
  }
  for (const grid of document.querySelectorAll('[data-testid="stDataFrame"]')) {
    if (!checkTables || !visible(grid)) continue;
    const scroller = grid.querySelector(".dvn-scroller");
    if (scroller && scroller.scrollWidth > scroller.clientWidth + 1) {
      const header = [...grid.querySelectorAll('[role="columnheader"]')].map((h) => h.textContent).slice(0, 4);
      out.tables.push({key: header.join(" | "), scroll: scroller.scrollWidth, client: scroller.clientWidth});
    }
  }
  for (const table of document.querySelectorAll('[data-testid="stTable"]')) {
    if (!checkTables || !visible(table)) continue;
    for (const el of [table, ...table.querySelectorAll("*")]) {
      const s = getComputedStyle(el);
      if ((s.overflowX === "auto" || s.overflowX === "scroll") && el.scrollWidth > el.clientWidth + 1) {
        out.tables.push({key: "st.table: " + (table.textContent || "").slice(0, 40), scroll: el.scrollWidth,
                         client: el.clientWidth});
        break;
      }
    }
  }
  return out;
}
"""


def check_layout(ui: UI, where: str, *, wide_tables: bool = False) -> dict[str, Any]:
    """Fail with what is wrong when the page scrolls sideways or cuts text, a chart title or a table.

    ``wide_tables``: this page's tables may scroll sideways (the raw data; see the module docstring).
    """
    ui.settle(400)  # plotly and the data grid lay themselves out after the script run
    found = ui.page.evaluate(MEASURE, not wide_tables)
    problems = []
    if found["docScroll"] > found["innerWidth"]:
        problems.append(f"the page scrolls sideways ({found['docScroll']} px wide in a {found['innerWidth']} px "
                        "window)")
    if found["mainScroll"] > found["mainClient"] + 1:
        problems.append(f"the main area scrolls sideways ({found['mainScroll']} > {found['mainClient']} px)")
    problems += [f"text cut: {c['text']!r} ({c['testid']}, {c['scroll']} px in {c['client']} px)"
                 for c in found["cut"]]
    problems += [f"chart title {c['text']!r}: {c['why']}" for c in found["charts"]]
    problems += [f"table '{t['key']}' scrolls sideways ({t['scroll']} px in {t['client']} px)"
                 for t in found["tables"]]
    assert not problems, f"{where}:\n  " + "\n  ".join(problems)
    return found


def shot(ui: UI, name: str, *, scroll_to: str | None = None) -> None:
    """A PNG of the window (what the audience sees), scrolled to ``scroll_to`` (e.g. the first chart)."""
    (SCREENSHOTS / "layout").mkdir(parents=True, exist_ok=True)
    if scroll_to is not None:
        ui.page.locator(scroll_to).first.scroll_into_view_if_needed()
    ui.page.mouse.move(0, 0)
    ui.settle(0)   # check_layout has just waited for the page to lay itself out: only the scroll may move it
    ui.page.screenshot(path=str(SCREENSHOTS / "layout" / f"{name}.png"))


def open_sample(ui: UI, sample: str) -> None:
    """A fresh session on the sample (Adult loads by itself; COMPAS with its button)."""
    ui.open("")
    ui.wait_text("Ready: comparing")
    ui.idle()
    if sample == "compas":
        ui.page.get_by_role("button", name=re.compile("Use sample: COMPAS")).click()
        ui.wait_text("Ready: comparing African-American with Caucasian")
        ui.idle()


def visit(ui: UI, title: str, heading: str) -> None:
    """Open a page from the sidebar and wait for its own run (heard from the server: rerun_by), then its heading."""
    ui.rerun_by(lambda: ui.goto_page(title))
    ui.wait_text(heading)
    ui.idle()


def next_slide(ui: UI, number: int, total: int) -> None:
    """Press the right arrow key (focus on the page, not in a widget) and wait for slide ``number``."""
    ui.page.keyboard.press("ArrowRight")
    ui.page.get_by_text(f"Slide {number} of {total}", exact=True).first.wait_for(timeout=120_000)
    ui.idle()


STRATA_BOX = "Control columns (each value, or each combination, is a stratum)"


def _radio(ui: UI, label: str) -> Any:
    return ui.page.get_by_role("radio", name=re.compile(re.escape(label))).first


def stratify(ui: UI, column: str) -> None:
    """Every group formed by columns, within strata of ``column``: each radio clicked once (unless checked) and its
    run waited for, the column chosen, then the 'Overall vs within' tab; a failure says what the page showed."""
    for label in ("Every group formed by one to three columns", "Strata: every value of control columns"):
        radio = _radio(ui, label)
        radio.wait_for(state="attached")
        ui.idle()
        if not radio.is_checked():
            ui.rerun_by(lambda label=label: ui.page.get_by_text(label, exact=False).first.click())
        assert radio.is_checked(), f"the radio {label!r} is not checked after its click"
    ui.choose(STRATA_BOX, column)
    ui.idle()
    try:
        ui.wait_text("Overall vs within", timeout=120_000)
    except PlaywrightTimeoutError:
        alerts = " / ".join(ui.page.locator('[data-testid="stAlert"]:visible').all_inner_texts())
        raise AssertionError(f"'Overall vs within' never appeared after stratifying by {column}: chosen "
                             f"{ui.chosen(STRATA_BOX)}; alerts: {alerts[:800]!r}") from None


def check_sizes(ui: UI, sample: str, screen: str, *, picture: str | None = None, scroll_to: str | None = None,
                wide_tables: bool = False) -> None:
    """Check the screen at every window size in turn (the window resized, as a user does: the page is not run
    again), from the size the window has, with a screenshot at each when ``picture`` names it."""
    for size, _ in ui.each_size(SIZES):
        check_layout(ui, f"{sample}-{size} {screen}", wide_tables=wide_tables)
        if picture is not None:
            where = scroll_to if scroll_to is None or ui.page.locator(scroll_to).count() else None
            shot(ui, f"{sample}-{size}-{picture}", scroll_to=where)


@pytest.mark.parametrize("sample", ["compas", "adult"])
def test_every_page_fits_the_window(ui: UI, sample: str) -> None:
    """Each screen is checked at 1024x768 and at 1920x1080: the page is run once and the window resized (a run at
    each size checked the same screens twice over and took twice the time)."""
    ui.page.set_viewport_size(SIZES["1024"])
    open_sample(ui, sample)
    check_sizes(ui, sample, "data", picture="data", wide_tables=True)

    visit(ui, "Audit", "Audit")
    ui.page.locator(CHART).first.wait_for()
    check_sizes(ui, sample, "audit", picture="audit", scroll_to=CHART)

    visit(ui, "Retrain", "Retrain: a model that is fair")
    run = ui.page.get_by_role("button", name="Retrain", exact=True)
    if run.count():
        run.click()
    ui.wait_text(re.compile(r"AUC of C2"), timeout=180_000)
    ui.page.locator(CHART).first.wait_for()
    ui.idle(180_000)
    check_sizes(ui, sample, "retrain", picture="retrain", scroll_to=CHART)

    visit(ui, "Thresholds", "Thresholds: equal error rates")
    ui.page.locator(CHART).first.wait_for(timeout=180_000)
    ui.idle(180_000)
    check_sizes(ui, sample, "thresholds", picture="thresholds", scroll_to=CHART)

    visit(ui, "Equalized distribution", "Equalized distribution: fair scores")
    if sample == "compas":  # Adult's sweep (11 models on 39,000 rows) is left to test_browser.py's timing
        train = ui.page.get_by_role("button", name="Train the models")
        if train.count():
            train.click()
        ui.page.get_by_role("slider").first.wait_for(timeout=180_000)
        ui.page.locator(CHART).first.wait_for(timeout=60_000)
        ui.idle(180_000)
    check_sizes(ui, sample, "equalized", picture="equalized", scroll_to=CHART)

    visit(ui, "Report", "Report: take the results to the committee")
    check_sizes(ui, sample, "report", picture="report")

    # the presentation mode, every slide with the arrow keys (Adult: no sweep, so fewer slides)
    visit(ui, "Present", "The question")
    counter = ui.page.get_by_text(re.compile(r"^Slide 1 of \d+$")).first
    total = int(counter.inner_text().rsplit(" ", 1)[1])
    check_sizes(ui, sample, "present 1")
    for number in range(2, total + 1):
        next_slide(ui, number, total)
        picture = f"present-{number}" if number in (3, 5) else "present-last" if number == total else None
        check_sizes(ui, sample, f"present {number}", picture=picture)

    # The Audit page's tables: the paper's view, then every group within strata (comparisons, pooled tests).
    # Last, because the model pages compare one group with the rest and say so in group mode.
    visit(ui, "Audit", "Audit")
    ui.page.get_by_role("tab", name="Table", exact=True).first.click()
    ui.idle()
    check_sizes(ui, sample, "audit table", picture="audit-table", scroll_to='[data-testid="stDataFrame"]:visible')
    stratify(ui, "sex")
    for tab in ("Table", "Overall vs within"):
        ui.page.get_by_role("tab", name=tab, exact=True).first.click()
        ui.idle()
        check_sizes(ui, sample, f"audit groups, {tab}", picture=f"audit-groups-{tab.split()[0].lower()}",
                    scroll_to='[data-testid="stDataFrame"]:visible')
