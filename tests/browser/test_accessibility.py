"""Section 508 (WCAG 2.1 AA) in Chromium: axe-core on every page with data loaded (issue 46, "Accessible to
everyone").

One session on the Adult sample (it loads by itself with the paper's settings) walks every page from the sidebar
(Retrain with its result on screen) and every slide of the Present page, in the light theme and, in a second test,
in the dark one (the reader's system asks for dark: ``prefers-color-scheme``). Each screen is checked at 1024x768
and 1280x800 (the window resized: the page is not run again) by axe-core's default rules, every impact: WCAG 2.0,
2.1 and 2.2 A and AA (colour contrast, names, labels) and its best practices (heading order, empty table headers,
landmarks). The violations found, per screen, are printed (``pytest -s``) and the test fails listing them.
"""

from __future__ import annotations

import re
from typing import Any

import axe_core
import pytest
from conftest import UI

from luskin_core.present.report_parts import made_from_table
from luskin_core.spec.options import OPTIONS

pytestmark = pytest.mark.browser

SIZES = {"1024": {"width": 1024, "height": 768}, "1280": {"width": 1280, "height": 800}}
# The pages in the sidebar's order, each with the start of its heading (waited for before it is checked).
PAGES = {"Data": "Luskin: is the decision fair", "Audit": "Audit: is the outcome shared fairly",
         "Over time": "Over time: do the gaps move?", "Adjusted gaps": "Adjusted gaps: what remains",
         "Regulator tables": "Regulator tables", "Proxy audit": "Proxy audit",
         "Scan": "Scan: where are the gaps", "Retrain": "Retrain: a model that is fair",
         "Thresholds": "Thresholds: equal error rates", "Equalized distribution": "Equalized distribution: fair",
         "Report": "Report: take the results", "Present": "The question", "Verify": "Verify an audit's evidence"}
# and every page made from a line of the analyses' table (its heading is its title): a new line is walked too
TABLE_PAGES = {entry.title: entry for entry in made_from_table("page")}
PAGES.update({title: title for title in TABLE_PAGES})
# a page made from the table that asks for a setting before it runs (its required option) is checked with an
# answer on screen: the text typed, then the words of the section it draws
ANSWERS = {"representation": ("Male=49%, Female=51%", "Each group against its benchmark")}
COUNTER = re.compile(r"^Slide (\d+) of (\d+)$")
BACKGROUND = """() => getComputedStyle(document.querySelector('[data-testid="stApp"]')).backgroundColor"""


def _luminance(css: str) -> float:
    r, g, b = (int(v) / 255 for v in re.findall(r"\d+", css)[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _ready(ui: UI, heading: str) -> None:
    ui.wait_text(re.compile(rf"^{re.escape(heading)}"))
    ui.idle(180_000)
    ui.charts_drawn()
    ui.settle()


def _check(ui: UI, screen: str, found: dict[str, list[dict[str, Any]]]) -> None:
    """axe on the screen at each window size (its own first)."""
    for size, _ in ui.each_size(SIZES):
        if _:
            ui.settle()
        where = f"{screen} at {size}"
        found[where] = axe_core.violations(ui.page)
        counts = ", ".join(f"{v['id']} x{len(v['nodes'])}" for v in found[where]) or "none"
        print(f"[axe] {where}: {sum(len(v['nodes']) for v in found[where])} ({counts})", flush=True)
        if found[where]:
            print("  " + axe_core.summary(found[where]).replace("\n", "\n  "), flush=True)


def _walk(ui: UI, theme: str) -> dict[str, list[dict[str, Any]]]:
    ui.page.emulate_media(color_scheme=theme)
    ui.page.set_viewport_size(SIZES["1024"])
    ui.open()
    found: dict[str, list[dict[str, Any]]] = {}
    for title, heading in PAGES.items():
        if title != "Data":
            ui.goto_page(title)
        _ready(ui, heading)
        entry = TABLE_PAGES.get(title)
        if entry is not None and entry.name in ANSWERS:
            answer, shown = ANSWERS[entry.name]
            needed = next(o for o in OPTIONS[entry.options or ""] if o.flag_requires)
            box = ui.page.get_by_label(needed.label, exact=True)
            box.fill(answer)
            box.press("Enter")
            ui.wait_text(shown, timeout=60_000)
            _ready(ui, heading)
        if title == "Retrain":   # its result on screen (Adult's logistic regressions: a few seconds)
            run = ui.page.get_by_role("button", name="Retrain", exact=True)
            if run.count():
                run.click()
            ui.wait_text(re.compile(r"AUC of C2"), timeout=180_000)
            _ready(ui, heading)
        if title == "Data":
            background = ui.page.evaluate(BACKGROUND)
            dark = _luminance(background) < 0.5
            assert dark == (theme == "dark"), f"the {theme} theme was asked for; the page's background is {background}"
        if title == "Present":
            counter = ui.page.get_by_text(COUNTER).first
            total = int(COUNTER.match(counter.inner_text().strip()).group(2))   # type: ignore[union-attr]
            for number in range(1, total + 1):
                if number > 1:
                    ui.page.keyboard.press("ArrowRight")
                    ui.page.get_by_text(f"Slide {number} of {total}", exact=True).first.wait_for(timeout=120_000)
                    _ready(ui, "")
                _check(ui, f"{theme}: Present, slide {number}", found)
            continue
        _check(ui, f"{theme}: {title}", found)
    return found


@pytest.mark.timeout(1500)
@pytest.mark.parametrize("theme", ["light", "dark"])
def test_no_axe_violation_on_any_page(ui: UI, theme: str) -> None:
    found = _walk(ui, theme)
    bad = {where: v for where, v in found.items() if v}
    assert not bad, (f"axe-core found violations on {len(bad)} of {len(found)} screens:\n"
                     + "\n".join(f"{where}:\n  " + axe_core.summary(v).replace("\n", "\n  ") for where, v in bad.items()))
