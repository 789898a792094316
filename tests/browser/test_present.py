"""Presentation mode in a real browser: a bookmark opens a slide, arrow keys move, a hidden slide leaves the deck.

The presenter's bookmark names the page and the slide in the query string; the arrow keys are
caught by the page's small same-origin script, which presses the on-screen Previous/Next buttons;
the address follows the slide on screen; unticking a slide in the "Slides" list removes it.
Screenshots (``present-bookmark-<width>.png``) go to LUSKIN_SCREENSHOT_DIR/layout.
"""

from __future__ import annotations

import re

import pytest
from conftest import SCREENSHOTS, UI
from playwright.sync_api import expect
from test_layout import SIZES, check_layout

pytestmark = pytest.mark.browser

COUNTER = re.compile(r"^Slide (\d+) of (\d+)$")


def _counter(ui: UI) -> tuple[int, int]:
    text = ui.page.get_by_text(COUNTER).first.inner_text()
    match = COUNTER.match(text.strip())
    assert match, text
    return int(match.group(1)), int(match.group(2))


def _slide_title(ui: UI) -> str:
    return ui.page.locator(".st-key-present_deck h1").first.inner_text().strip()


def _wait_slide(ui: UI, number: int, total: int) -> None:
    ui.page.get_by_text(f"Slide {number} of {total}", exact=True).first.wait_for(timeout=120_000)
    ui.idle()


@pytest.mark.parametrize("size", list(SIZES))
def test_bookmark_opens_slide_3_and_arrow_keys_move(ui: UI, size: str) -> None:
    ui.page.set_viewport_size(SIZES[size])
    ui.open("?page=present&slide=3")  # Adult with the paper's settings loads by itself
    ui.wait_text(re.compile(r"^Slide 3 of \d+$"))
    ui.idle()
    number, total = _counter(ui)
    assert number == 3 and total >= 5
    assert _slide_title(ui) == "What we found"
    assert re.search(r"/present\?slide=3$", ui.page.url), ui.page.url
    check_layout(ui, f"present {size} slide 3")
    (SCREENSHOTS / "layout").mkdir(parents=True, exist_ok=True)
    ui.page.mouse.move(0, 0)
    ui.page.screenshot(path=str(SCREENSHOTS / "layout" / f"present-bookmark-{size}.png"))

    ui.page.keyboard.press("ArrowRight")
    _wait_slide(ui, 4, total)
    assert _slide_title(ui) == "What we found, in a chart"   # three findings leave no room for the chart
    ui.page.locator('[data-testid="stPlotlyChart"] .main-svg').first.wait_for()
    check_layout(ui, f"present {size} slide 4")
    expect(ui.page).to_have_url(re.compile(r"slide=4$"))
    ui.page.keyboard.press("ArrowLeft")
    _wait_slide(ui, 3, total)
    ui.page.keyboard.press("ArrowLeft")
    _wait_slide(ui, 2, total)
    assert _slide_title(ui) == "The data and who is compared"
    check_layout(ui, f"present {size} slide 2")
    # the on-screen buttons do the same
    ui.page.locator(".st-key-present_next button").first.click()
    _wait_slide(ui, 3, total)
    # an arrow key pressed in a widget is the widget's, not the deck's: the slide stays
    ui.page.get_by_text("Slides: choose which to show").click()
    ui.page.get_by_role("checkbox").first.focus()
    ui.idle()
    runs = ui.runs()
    # the key's whole dispatch seen (a listener on the window runs after the deck's, which listens on the document
    # as the event goes down): the deck let it pass (it prevents the default of every key it acts on) and no run began
    ui.page.evaluate("""() => { window.__luskinKeySeen = null; window.addEventListener("keydown", (e) => {
        window.__luskinKeySeen = {key: e.key, taken: e.defaultPrevented}; }, {once: true}); }""")
    ui.page.keyboard.press("ArrowRight")
    ui.page.wait_for_function("() => window.__luskinKeySeen !== null")
    assert ui.page.evaluate("() => window.__luskinKeySeen") == {"key": "ArrowRight", "taken": False}
    ui.idle()
    assert ui.runs() == runs, "the arrow key in the slide list reran the page"
    assert _counter(ui) == (3, total)


def test_hiding_a_slide_removes_it_from_the_deck(ui: UI) -> None:
    ui.page.set_viewport_size(SIZES["1024"])
    ui.open("present?slide=2")
    ui.wait_text(re.compile(r"^Slide 2 of \d+$"))
    ui.idle()
    _, total = _counter(ui)
    assert _slide_title(ui) == "The data and who is compared"
    ui.page.get_by_text("Slides: choose which to show").click()
    box = ui.page.get_by_role("checkbox", name=re.compile(r"^2\. The data and who is compared"))
    box.uncheck(force=True)
    _wait_slide(ui, 2, total - 1)
    assert _slide_title(ui) == "What we found"  # the hidden slide's place is taken by the next one
    # walk the whole deck with the keyboard: the hidden slide never shows
    seen = []
    for number in range(1, total):
        if number > 1:
            ui.page.keyboard.press("ArrowRight")
        else:
            ui.page.locator(".st-key-present_prev button").first.click()
        _wait_slide(ui, number, total - 1)
        seen.append(_slide_title(ui))
    assert "The data and who is compared" not in seen and len(seen) == total - 1
    # ticking it again brings it back
    ui.page.get_by_role("checkbox", name=re.compile(r"^2\. The data and who is compared")).check(force=True)
    ui.page.get_by_text(f"of {total}", exact=False).first.wait_for(timeout=120_000)
    ui.idle()
    assert _counter(ui)[1] == total
