"""The address keeps the analysis (issue 16): an upload, its settings and the slide come back on a refresh.

Upload Berkeley 1973 (one row per applicant), confirm the guesses, open the Present page, go to
slide 3 with the keyboard, reload: the same file, settings and slide are on screen. An address whose
upload is no longer kept says so, and offers to upload again, instead of showing a sample silently.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import UI

pytestmark = pytest.mark.browser

def _upload(ui: UI, csv: Path) -> None:
    """Open the app at 1280x900, upload the file and confirm Luskin's guesses, as a user does."""
    ui.page.set_viewport_size({"width": 1280, "height": 900})
    ui.open()
    ui.wait_text("Ready: comparing", timeout=120_000)
    ui.idle()
    ui.page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(csv))
    ui.wait_text("Luskin's first guesses for this file")
    ui.page.get_by_role("button", name="Use these choices").first.click()
    ui.wait_text("Ready: comparing")
    ui.idle()


def _sidebar(ui: UI) -> str:
    return ui.page.locator('section[data-testid="stSidebar"]').first.inner_text()


def test_a_refresh_brings_back_the_upload_its_settings_and_the_slide(ui: UI, berkeley_csv: Path) -> None:
    _upload(ui, berkeley_csv)
    assert "berkeley_1973.csv" in _sidebar(ui)
    key = re.search(r"[?&]data=([A-Za-z0-9_-]+)", ui.page.url)
    assert key and len(key.group(1)) >= 40, ui.page.url
    ui.page.get_by_text("Forget this file now").first.wait_for()

    ui.goto_page("Present")
    ui.wait_text(re.compile(r"^Slide 1 of \d+$"))
    ui.idle()
    ui.page.wait_for_function("() => !!window.__luskinDeckKeys", timeout=120_000)
    for number in (2, 3):
        ui.page.keyboard.press("PageDown")
        ui.page.get_by_text(re.compile(rf"^Slide {number} of \d+$")).first.wait_for(timeout=120_000)
        ui.idle()
    title = ui.page.locator(".st-key-present_deck h1").first.inner_text().strip()
    words = '.st-key-present_deck [data-testid="stMarkdownContainer"]'   # the slide's text, not its chart's
    sentences = ui.page.locator(words).all_inner_texts()
    assert re.search(r"slide=3", ui.page.url) and f"data={key.group(1)}" in ui.page.url, ui.page.url

    ui.page.reload()
    ui.wait_text(re.compile(r"^Slide 3 of \d+$"), timeout=60_000)
    ui.idle()
    assert "berkeley_1973.csv" in _sidebar(ui)
    assert ui.page.locator(".st-key-present_deck h1").first.inner_text().strip() == title
    assert ui.page.locator(words).all_inner_texts() == sentences
    assert "was not found on the server" not in ui.page.get_by_test_id("stMain").inner_text()


def test_an_address_whose_upload_is_gone_says_so(ui: UI) -> None:
    ui.open("?page=present&slide=3&data=" + "x" * 43)
    ui.wait_text(re.compile("was not found on the server"), timeout=120_000)
    ui.idle()
    text = ui.page.get_by_test_id("stMain").inner_text()
    assert "upload your file again" in text and "not your data" in text


def test_the_downloaded_report_describes_the_uploaded_file(ui: UI, berkeley_csv: Path, tmp_path: Path) -> None:
    """The HTML report is built when its button is clicked, outside the page's run: it must still describe the
    upload (4,526 applicants), not fall back to the Adult sample's 48,842 rows."""
    _upload(ui, berkeley_csv)
    ui.goto_page("Report")
    ui.wait_text("Download the report")
    ui.idle()
    with ui.page.expect_download(timeout=60_000) as info:
        ui.page.get_by_role("button", name=re.compile("Download the HTML report")).click()
    target = tmp_path / info.value.suggested_filename
    info.value.save_as(str(target))
    html = target.read_text(encoding="utf-8")
    assert "berkeley_1973.csv" in html
    assert "4,526" in html and "48,842" not in html
