"""The Scan page: it runs on the sample, shows the findings (or the nothing-found sentence) and its chart; its
settings are the scan's declared options (``OPTIONS["scan"]``), drawn from their declarations, and what is chosen
there is what the scan runs with."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from luskin_app import analysis_page, keys
from luskin_app.option_inputs import widget_key
from luskin_core.analyses.scan import ScanResult, ScanSpec, scan
from luskin_core.counting.data import load_sample
from luskin_core.present.scan_plots import scan_figure, scan_report_section
from luskin_core.spec.options import OPTIONS, Option, option_default

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


# The page's own inputs (the outcome and the model's columns, shared with the other pages' way of choosing them):
# no declared option may take one of their keys ("scan_error" is the error column's, the error rate's is another).
PAGE_KEYS = {"scan_measure", "scan_outcome", "scan_positive", "scan_prediction", "scan_error", "scan_cutoff",
             "scan_probability", "scan_columns"}
KINDS = ("slider", "select_slider", "number_input", "radio", "selectbox", "checkbox")


def _first(option: Option, high: int) -> Any:
    """The value the page starts an option at: its declared default (or the page's, within the slider's top)."""
    if option.page_default is None:
        return option_default("scan", option.name)
    return min(option.page_default, high) if option.widget == "slider" else option.page_default


def _other(option: Option, value: Any) -> Any:
    """A value of the option's widget other than ``value`` (another of its choices or steps, one more)."""
    if option.widget == "slider":
        return option.offered[0] if value != option.offered[0] else option.offered[-1]
    if option.widget == "steps":
        return next(v for v in option.offered if v != value)
    if option.constraint.kind == "choice":
        return next(c for c in option.constraint.choices if c != value)
    if option.constraint.kind == "flag":
        return not value
    return value + 1


def test_the_scan_pages_settings_are_its_declared_options_and_reach_the_scan(monkeypatch: pytest.MonkeyPatch):
    """Every scan option the declarations put on the page is drawn with its declared label, help, choices and first
    value, under a key of its own; each value changed on the page is the value the scan runs with."""
    received: list[Any] = []
    real = analysis_page.run_entry

    def spy(name: str, data: Any, spec: Any, options: Any, **more: Any) -> Any:
        received.append(options)
        return real(name, data, spec, options, **more)

    monkeypatch.setattr(analysis_page, "run_entry", spy)   # what the page hands the scan's line of the table
    columns = ["sex", "race", "relationship"]
    at = AppTest.from_file(APP, default_timeout=240).run()
    at.session_state["scan_columns"] = columns
    at.switch_page("app_pages/scan.py").run()
    assert not at.exception, at.exception
    on_page = [option for option in OPTIONS["scan"] if option.on_page]
    assert {"depth", "min_size", "level", "error", "replicates", "seed", "calibration"} <= {o.name for o in on_page}
    shown: dict[str, Any] = {str(w.key): w for kind in KINDS for w in at.get(kind)}
    declared_keys = [widget_key("scan", option) for option in on_page]
    assert len(set(declared_keys)) == len(declared_keys) and not set(declared_keys) & PAGE_KEYS
    assert received and received[-1].columns == tuple(columns)
    for option, key in zip(on_page, declared_keys, strict=True):
        widget = shown.get(key)
        assert widget is not None, (option.name, key, sorted(shown))
        assert widget.label == option.label and (widget.help or "") == option.help, option.name
        first = _first(option, len(columns))
        assert widget.value == first, (option.name, widget.value, first)
        assert getattr(received[-1], option.name) == first, option.name
        if option.constraint.kind == "choice":
            assert list(widget.options) == [option.words_of(c) for c in option.constraint.choices], option.name
        if option.widget == "steps":
            assert list(widget.options) == [option.words_of(v) for v in option.offered], option.name
    changed = {option.name: _other(option, shown[key].value) for option, key in zip(on_page, declared_keys)}
    for key, value in zip(declared_keys, changed.values(), strict=True):
        shown[key].set_value(value)
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    ran = received[-1]
    assert {name: getattr(ran, name) for name in changed} == changed
    result: ScanResult = at.session_state[keys.RESULTS]["scan"][2]   # the result the page shows and keeps
    assert {name: getattr(result.spec, name) for name in changed if hasattr(result.spec, name)} == \
        {name: value for name, value in changed.items() if hasattr(result.spec, name)}
    assert result.spec.error == changed["error"] == "fdr" and result.spec.depth == changed["depth"] == 1


def test_the_depth_is_at_most_the_columns_chosen():
    """The depth's slider ends at the number of columns chosen (a depth beyond them is refused by the scan): with
    one column it is not drawn and the scan combines none; a depth chosen is brought down when columns go."""
    at = AppTest.from_file(APP, default_timeout=240).run()
    at.session_state["scan_columns"] = ["sex", "race", "relationship"]
    at.switch_page("app_pages/scan.py").run()
    assert (at.slider(key="scan_depth").value, at.slider(key="scan_depth").max) == (3, 3)
    at.multiselect(key="scan_columns").set_value(["sex", "race"]).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert (at.slider(key="scan_depth").value, at.slider(key="scan_depth").max) == (2, 2)
    at.multiselect(key="scan_columns").set_value(["sex"]).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert not [w for w in at.slider if w.key == "scan_depth"]
    assert at.session_state[keys.RESULTS]["scan"][2].spec.depth == 1


def test_a_scan_setting_declared_later_is_run_again_when_changed_not_served_from_the_cache(
        monkeypatch: pytest.MonkeyPatch):
    """A throwaway scan option (declared in this test only: its declaration, its options field, its ScanSpec field)
    is drawn on the page; changing it runs the scan again with the new value, rather than handing back the result
    cached for the old one (the page's key is what the scan is handed, not a list written for today's options)."""
    from dataclasses import make_dataclass

    import luskin_core.analyses.scan as scan_module
    from luskin_core.spec import options as declared

    shrunk = make_dataclass("ShrunkScanOptions", [("shrink", int, 0)], bases=(declared.ScanOptions,), frozen=True)
    shrunk_spec = make_dataclass("ShrunkScanSpec", [("shrink", int, 0)], bases=(ScanSpec,), frozen=True)
    option = Option("shrink", declared.whole("the shrink", 0, 9), "Shrink", "A test option.",
                    flag_help="a test option (default {default})", metavar="S")
    monkeypatch.setitem(declared.OPTIONS, "scan", (*declared.OPTIONS["scan"], option))
    monkeypatch.setitem(declared.OPTION_CLASSES, "scan", shrunk)
    monkeypatch.setattr(scan_module, "ScanSpec", shrunk_spec)
    received: list[Any] = []
    real = analysis_page.run_entry

    def spy(name: str, data: Any, spec: Any, options: Any, **more: Any) -> Any:
        received.append(options)
        return real(name, data, spec, options, **more)

    monkeypatch.setattr(analysis_page, "run_entry", spy)
    at = AppTest.from_file(APP, default_timeout=240).run()
    at.session_state["scan_columns"] = ["sex", "race"]
    at.switch_page("app_pages/scan.py").run()
    assert not at.exception, at.exception
    assert at.number_input(key="scan_shrink").value == 0   # drawn from its declaration, under "More settings"
    runs = len(received)
    assert runs and received[-1].shrink == 0
    at.number_input(key="scan_shrink").set_value(4).run()
    assert not at.exception, at.exception
    assert len(received) == runs + 1 and received[-1].shrink == 4, "the old setting's scan was served from the cache"
    result: Any = at.session_state[keys.RESULTS]["scan"][2]   # its spec: a ShrunkScanSpec
    assert result.spec.shrink == 4 and result.to_dict()["spec"]["shrink"] == 4
