"""A file whose names and values are Markdown and HTML, in a real Chromium: nothing calls home.

Before, such a CSV made the Data and Audit pages load an outside image (the page called home
with the agency's data in view) and show live links. Here the file is uploaded as a user would,
the guesses confirmed, a filter added on a hostile value, and the Data, Audit and Thresholds
pages visited: no request leaves 127.0.0.1, no link or image from the data is in the page (not
in Streamlit's Markdown, not in plotly's SVG), and the hostile text is shown as text.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

pytestmark = pytest.mark.browser

EVIL_IMAGE = "![x](https://attacker.example/beacon.png)"
EVIL_LINK = "[click](https://attacker.example/x)"
EVIL_HTML = '<img src="https://attacker.example/i.png">'
EVIL_ANCHOR = '<a href="https://attacker.example/a">a</a>'
EVIL_AUTOLINK = "see www.attacker.example or https://attacker.example/auto"
CHART = '[data-testid="stPlotlyChart"] .main-svg'


def hostile_csv(path: Path) -> Path:
    rng = np.random.default_rng(3)
    n = 600
    race = rng.choice(["White", EVIL_IMAGE, EVIL_LINK], n, p=[0.5, 0.3, 0.2])
    branch = rng.choice([EVIL_AUTOLINK, EVIL_ANCHOR, "plain"], n)
    p = 0.3 + 0.2 * (race == "White")
    pd.DataFrame({
        "decision": np.where(rng.random(n) < p, "yes", "no"), "race": race, EVIL_HTML: rng.choice(["p", "q"], n),
        "branch": branch, "income": rng.integers(10, 200, n),
    }).to_csv(path, index=False)
    return path


def _check_page(ui: Any) -> None:
    """No link or image whose address comes from the data; every link stays on this server."""
    page = ui.page
    assert page.locator('img[src*="attacker"], image[href*="attacker"]').count() == 0
    assert page.locator('a[href*="attacker"], [href*="attacker"], [src*="attacker"]').count() == 0
    for href in page.locator("a[href]").evaluate_all("els => els.map(e => e.href)"):
        assert href.startswith((ui.base_url, "#")), href
    for src in page.locator("img[src]").evaluate_all("els => els.map(e => e.src)"):
        assert src.startswith((ui.base_url, "data:", "blob:")), src


def _text(ui: Any) -> str:
    return ui.page.get_by_test_id("stMain").inner_text().replace("\u2060", "")


def test_hostile_file_calls_nowhere_and_shows_its_text_as_text(ui: Any, tmp_path: Path) -> None:
    requests: list[str] = []
    listen: Callable[[Any], None] = lambda request: requests.append(request.url)
    ui.page.on("request", listen)
    try:
        _walk(ui, tmp_path)
    finally:
        ui.page.remove_listener("request", listen)   # the tab goes on to the next test
    outside = [url for url in requests if not url.startswith((ui.base_url, "data:", "blob:"))]
    assert not outside, outside[:5]


def _walk(ui: Any, tmp_path: Path) -> None:
    data = hostile_csv(tmp_path / "[file](https___attacker.example).csv")

    ui.open("")
    ui.wait_text("Ready: comparing")
    ui.idle()
    ui.page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(data))
    ui.wait_text("Luskin's first guesses for this file")
    ui.idle()
    _check_page(ui)
    # 'decision is yes' does not say which way is good: the page asks before any verdict (issue 46)
    ui.rerun_by(lambda: ui.page.get_by_text("Good for the person", exact=False).first.click())
    ui.page.get_by_role("button", name="Use these choices").first.click()
    ui.wait_text(re.compile("Ready: comparing"))
    ui.idle()
    _check_page(ui)
    shown = _text(ui)
    assert f"Ready: comparing {EVIL_IMAGE} with everyone else" in shown      # the text itself, as text (race has 3 values)
    assert "[file](https___attacker.example).csv" in shown

    ui.goto_page("Audit")
    ui.page.locator(CHART).first.wait_for()
    ui.idle()
    ui.select("Column", "branch")
    ui.idle()
    ui.select("Value", EVIL_ANCHOR)
    ui.idle()
    ui.page.get_by_role("button", name="Add condition").click()
    ui.wait_text(re.compile("AND|branch is"))
    ui.idle()
    ui.page.locator(CHART).first.wait_for()
    ui.settle(500)   # plotly draws its labels after the element appears
    _check_page(ui)
    shown = _text(ui)
    assert f"branch is {EVIL_ANCHOR}" in shown
    chart = ui.page.locator('[data-testid="stPlotlyChart"]').first.text_content() or ""
    # plotly shows it as text (long labels shortened in the middle on the chart, whole in the hover)
    assert EVIL_IMAGE[:12] in chart and EVIL_IMAGE[-6:] in chart and "branch == <a href=" in chart

    ui.goto_page("Thresholds")
    ui.wait_text("Thresholds: equal error rates")   # the Audit page's chart stays on screen until this page's run
    ui.page.locator(CHART).first.wait_for(timeout=90_000)
    ui.idle(timeout=90_000)
    ui.settle(500)
    _check_page(ui)
