"""The Scan page: it runs on the sample, shows the findings (or the nothing-found sentence) and its chart."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from luskin_core.analyses.scan import ScanResult, ScanSpec, scan
from luskin_core.counting.data import load_sample
from luskin_core.present.scan_plots import scan_figure, scan_report_section

APP = str(Path(__file__).resolve().parent.parent / "app.py")


def test_the_scan_page_shows_findings_and_a_chart():
    at = AppTest.from_file(APP, default_timeout=240).run()
    assert not at.exception
    at.switch_page("app_pages/scan.py").run()
    assert not at.exception, at.exception
    assert at.title[0].value.startswith("Scan")
    said = [w.value for w in at.warning] + [s.value for s in at.success]
    assert said, "neither findings nor the nothing-found sentence"
    assert at.get("plotly_chart")


def test_the_chart_and_report_section_from_a_result():
    adult = load_sample("adult")
    result: ScanResult = scan(adult, ScanSpec("income", ">50K", ("sex", "race", "relationship"), replicates=199))
    figure = scan_figure(result)
    assert len(figure.data) >= 3
    finding_trace = [t for t in figure.data if t.name.startswith("A finding")]
    assert finding_trace and len(finding_trace[0].x) == len(result.findings) > 0
    section = scan_report_section(result)
    kinds = [b["kind"] for b in section.blocks]
    assert "chart" in kinds and "table" in kinds and section.blocks[0]["text"] == result.headline()


def test_the_scan_goes_into_the_report_and_the_deck():
    """Findings go into the report and the slides (issue 31): the Scan page keeps its result for both."""
    at = AppTest.from_file(APP, default_timeout=240).run()
    at.session_state["scan_columns"] = ["sex", "race"]   # a quick scan: 2 columns of Adult
    at.switch_page("app_pages/scan.py").run()
    assert not at.exception, at.exception
    at.switch_page("app_pages/report.py").run()
    assert not at.exception, at.exception
    said = " ".join(str(m.value) for m in at.markdown)
    assert "the subgroup scan's findings" in said
    at.switch_page("app_pages/present.py").run()
    assert not at.exception, at.exception
    slides = [str(box.label) for box in at.checkbox]   # the deck's slides, each with its show/hide box
    assert any("Subgroup scan" in title for title in slides), slides
