"""The HTML report passes axe-core as the pages do (issue 46, Section 508): every rule axe runs by default, every
impact, in Chromium at 1024x768 and 1280x800, with every "The chart in words and numbers" opened so that the
charts' tables are checked too. The report is the Adult audit's and the COMPAS audit's with a correction (more
sections: the costs, a retrain's charts). The violations are printed (``pytest -s``).
"""

from __future__ import annotations

from typing import Any

import pytest
from axe_core import violations

from luskin_core import PRESETS, audit
from luskin_core.present.report import report_content

pytestmark = pytest.mark.browser
SIZES = {"1024": {"width": 1024, "height": 768}, "1280": {"width": 1280, "height": 800}}


@pytest.fixture(scope="module")
def reports(adult: Any, compas: Any) -> dict[str, str]:
    from luskin_core.corrections.thresholds import tune_thresholds

    preset = PRESETS["compas"]
    thresholds = tune_thresholds(compas, preset.spec, model="LR", features=preset.features)
    return {
        "adult": report_content([audit(adult, PRESETS["adult"].spec)], frame=adult, dataset="sample:adult").html(),
        "compas": report_content([audit(compas, preset.spec), thresholds], frame=compas, dataset="sample:compas").html(),
    }


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("name", ["adult", "compas"])
def test_the_html_report_has_no_axe_violation(page: Any, reports: dict[str, str], name: str, size: str) -> None:
    page.set_viewport_size(SIZES[size])
    page.set_content(reports[name], wait_until="load")
    charts = page.locator("div.plot")
    page.wait_for_function("() => [...document.querySelectorAll('[id^=\"luskin-chart-\"]')].every("
                           "(c) => c.querySelector('.main-svg'))")
    page.evaluate("() => document.querySelectorAll('details').forEach((d) => { d.open = true; })")
    found = violations(page)
    for v in found:
        print(f"[axe report] {name} at {size}: {v['id']} ({v['impact']}) x{len(v['nodes'])}: "
              + "; ".join(n["target"] + " " + n["summary"][:120] for n in v["nodes"][:3]), flush=True)
    print(f"[axe report] {name} at {size}: {len(found)} violations, {charts.count()} charts")
    assert charts.count() >= 2
    # each chart's drawing is an image named by its description (the words beside it)
    names = page.evaluate("""() => [...document.querySelectorAll('div.plot')].map((p) => [
        p.getAttribute('data-chart-label'), p.querySelector('svg.main-svg[role="img"]')?.getAttribute('aria-label')])""")
    assert names and all(label and label == named for label, named in names), names
    assert not found, [(v["id"], len(v["nodes"])) for v in found]
