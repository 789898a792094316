"""AppTest of the "Adjusted gaps" page: controls from dropdowns, the charts from zero, sentences, and the
report section and slide it feeds."""

from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from luskin_app.ui import unescape

APP = str(Path(__file__).resolve().parent.parent / "app.py")


def test_adjusted_page_on_adult():
    at = AppTest.from_file(APP, default_timeout=300).run()
    assert not at.exception
    at.switch_page("app_pages/adjusted.py").run()
    assert not at.exception, at.exception
    assert any("Choose the controls" in unescape(i.value) for i in at.info)
    at.multiselect(key="adj_controls").set_value(["age", "education-num", "hours-per-week", "occupation",
                                                   "marital-status", "relationship"]).run()
    assert not at.exception, at.exception
    text = " ".join(unescape(m.value) for m in at.markdown)
    # education-num's 16 codes are categories, as the Audit reads them (issue 46), said under the table with the
    # widget that changes it; age and hours-per-week are straight lines
    assert "holding age, hours-per-week, education-num, occupation, marital-status, relationship equal" in text
    captions = " ".join(unescape(c.value) for c in at.caption)
    assert "Read as categories, each value its own effect: education-num (a number code with few values" in captions
    assert "Read as numbers, each a straight line (or a curve where asked): age, hours-per-week." in captions
    assert "'Number codes to fit as straight lines' fits a code as a line" in captions
    assert at.multiselect(key="adj_as_numbers").options == ["education-num"]
    at.multiselect(key="adj_as_numbers").set_value(["education-num"]).run()
    assert not at.exception, at.exception
    assert at.session_state["results"]["adjusted"][2].numbers == ("age", "education-num", "hours-per-week")
    at.multiselect(key="adj_as_numbers").set_value([]).run()
    charts = {e.key: json.loads(e.proto.spec) for e in at.get("plotly_chart")}
    gaps = charts["adj_gaps_chart"]
    names = [trace["name"] for trace in gaps["data"]]
    assert names == ["raw gap", "adjusted gap (95% interval)"]
    adjusted = gaps["data"][1]
    assert len(adjusted["error_x"]["array"]) == len(adjusted["x"])  # whiskers per group
    result = at.session_state["results"]["adjusted"][2]
    assert [100 * g.adjusted_difference for g in result.gaps] == adjusted["x"]
    explained = charts["adj_explained_chart"]["data"]
    for bar_e, bar_u, raw in zip(explained[0]["x"], explained[1]["x"], explained[2]["x"]):
        assert abs(bar_e + bar_u - raw) < 1e-9
    # the report and the slides now carry the adjusted gaps
    from luskin_core import load_sample
    from luskin_core.analyses.audit import audit
    from luskin_core.present.report import report_content
    from luskin_core.present.slides import build_slides

    base = audit(load_sample("adult"), result.spec)
    titles = [s.title for s in report_content([base, result]).sections]
    assert "Gaps adjusted for the controls (regression)" in titles
    assert "finding-adjusted" in [s.key for s in build_slides([base, result])]
    # a cluster column from the dropdown
    at.selectbox(key="adj_cluster").set_value("native-country").run()
    assert not at.exception, at.exception
    assert at.session_state["results"]["adjusted"][2].n_clusters is not None
    # a numeric control cut into bins (each bin its own effect): 5 bins, 4 coefficients
    at.multiselect(key="adj_binned").set_value(["age"]).run()
    assert not at.exception, at.exception
    binned = at.session_state["results"]["adjusted"][2]
    assert "age" in binned.categorical and sum("age" in c.name and "≤" in c.name or c.name.startswith("age <") or c.name.startswith("age ≥")
                                          for c in binned.coefficients) == 4
    # a numeric control fitted as a curve instead: hours-per-week with 4 knots, two curve terms, said under the table
    at.multiselect(key="adj_binned").set_value([]).run()
    at.multiselect(key="adj_curved").set_value(["hours-per-week"]).run()
    assert not at.exception, at.exception
    curved = at.session_state["results"]["adjusted"][2]
    names = [c.name for c in curved.coefficients]
    assert "hours-per-week (curve 1)" in names and "hours-per-week" in curved.controls
    assert any("Fitted as curves" in unescape(c.value) for c in at.caption)
    # only curves and bins, no straight control: still fitted (not "Choose the controls")
    at.multiselect(key="adj_controls").set_value(["hours-per-week"]).run()
    assert not at.exception, at.exception
    assert not any("Choose the controls" in unescape(i.value) for i in at.info)
    assert at.session_state["results"]["adjusted"][2].controls == ("hours-per-week",)


def test_kept_settings_come_back_without_a_warning_in_the_servers_log():
    """A kept page setting (luskin_app/keys.py PAGE_SETTINGS: restored into the session state by a bookmark or the
    sidebar) comes back in its widget; given a value as well, Streamlit logged 'The widget with key "adj_n_bins"
    was created with a default value but also had its value set via the Session State API' on every such run (a
    line in every fresh-clone server log). The Proxy page's sliders were given both too."""
    import logging

    class Lines(logging.Handler):
        def __init__(self) -> None:
            super().__init__()
            self.lines: list[str] = []

        def emit(self, record: logging.LogRecord) -> None:
            self.lines.append(record.getMessage())

    logger = logging.getLogger("streamlit.elements.lib.policies")
    caught = Lines()
    logger.addHandler(caught)
    try:
        at = AppTest.from_file(APP, default_timeout=300).run()
        for key, value in (("adj_n_bins", 7), ("adj_n_knots", 5), ("proxy_threshold", 0.8), ("proxy_tolerance", 3)):
            at.session_state[key] = value
        at.switch_page("app_pages/adjusted.py").run()
        assert not at.exception, at.exception
        assert at.number_input(key="adj_n_bins").value == 7 and at.number_input(key="adj_n_knots").value == 5
        at.switch_page("app_pages/proxy.py").run()
        assert not at.exception, at.exception
        assert at.slider(key="proxy_threshold").value == 0.8 and at.slider(key="proxy_tolerance").value == 3
    finally:
        logger.removeHandler(caught)
    assert not [line for line in caught.lines if "Session State API" in line], caught.lines
