"""Every analysis result in one list: ``report_content(results=[...])``, ``build_html_report`` and
``build_pdf_report`` take the audit, adjusted gaps, a proxy audit (and the other registered results) in any
order, each as its section with its numbers; the order does not matter; an unknown result is
said in words."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any

import numpy as np
import pandas as pd
import pytest

from luskin_core import PRESETS, AuditSpec, LuskinError, audit
from luskin_core.analyses import proxy_audit as pa
from luskin_core.analyses.adjust import adjust
from luskin_core.analyses.proxy import PROB_COLUMNS
from luskin_core.formatting import format_percent, format_points
from luskin_core.present.report import build_html_report, build_pdf_report, report_content
from luskin_core.present.report_blocks import Section
from luskin_core.present.report_parts import PartContext, ReportPart
from luskin_core.present.slides import build_slides

WHEN = dt.datetime(2026, 11, 27, 12, 0, tzinfo=dt.UTC)


class _Page(HTMLParser):
    """The page's h2 headings and its visible text (scripts left out)."""

    def __init__(self) -> None:
        super().__init__()
        self.headings: list[str] = []
        self.text: list[str] = []
        self._h2 = self._script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._script = self._script or tag in ("script", "style")
        if tag == "h2":
            self._h2 = True
            self.headings.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self._script = False
        if tag == "h2":
            self._h2 = False

    def handle_data(self, data: str) -> None:
        if not self._script:
            self.text.append(data)
        if self._h2:
            self.headings[-1] += data


def _page(html: str) -> tuple[list[str], str]:
    parser = _Page()
    parser.feed(html)
    parser.close()
    return [" ".join(h.split()) for h in parser.headings], " ".join(" ".join(parser.text).split())


def _proxy_frame(n: int = 3000, seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    p = rng.dirichlet([2.0, 6.0, 1.5, 1.0, 0.3, 0.3], size=n)
    race = (p.cumsum(axis=1) > rng.random(n)[:, None]).argmax(axis=1)
    frame = pd.DataFrame(p, columns=list(PROB_COLUMNS))
    frame["y"] = (rng.random(n) < np.array([0.35, 0.55, 0.30, 0.60, 0.40, 0.45])[race]).astype(float)
    return frame


@pytest.fixture(scope="module")
def three(adult):
    spec = PRESETS["adult"].spec
    frame = _proxy_frame()
    return (audit(adult, spec), adjust(adult, spec, ["age", "hours-per-week"]),
            pa.proxy_audit(frame, frame["y"], decision="approved"), frame)


def test_html_report_takes_an_audit_adjusted_gaps_and_a_proxy_audit(adult, three) -> None:
    result, adjusted, proxy, frame = three
    html = build_html_report([proxy, adjusted, result], generated_at=WHEN)  # any order
    headings, text = _page(html)
    audit_at = headings.index(next(h for h in headings if h.startswith("The audit:")))
    adjusted_at = headings.index("Gaps adjusted for the controls (regression)")
    proxy_at = headings.index(next(h for h in headings if h.startswith("Estimated race and ethnicity")))
    assert audit_at < adjusted_at < proxy_at  # the report's order, not the order given
    # the audit's numbers: each group's share, recomputed with pandas
    rich = adult["income"] == ">50K"
    assert len(result.comparisons) == 4
    for c in result.comparisons:
        cell = adult["education-num"] > 10 if str(c.cell).startswith("more than") else adult["education-num"] <= 10
        group = (adult["race"] == "White") if c.group == "White" else (adult["race"] != "White")
        assert c.rate == pytest.approx(rich[cell & group].mean())
        assert format_percent(c.rate) in text
    # the adjusted gaps' numbers (their computation is tested in the adjust tests)
    for g in adjusted.gaps:
        assert format_points(g.adjusted_difference, signed=True) in text
        assert format_points(g.raw_difference, signed=True) in text
    # the proxy audit's weighted shares, recomputed with numpy (sum of p*y over sum of p)
    weighted = [c for c in proxy.comparisons if c.method == "weighted" and c.cell is None]
    names = ("Hispanic", "White", "Black", "Asian/Pacific Islander", "American Indian/Alaska Native", "Multiracial")
    assert [c.group for c in weighted] == list(names)
    for c, column in zip(weighted, PROB_COLUMNS):
        p = frame[column].to_numpy()
        assert c.rate == pytest.approx(float(np.sum(p * frame["y"]) / np.sum(p)))
        assert format_percent(c.rate) in text


def test_the_order_of_the_results_does_not_change_the_report(three) -> None:
    result, adjusted, proxy, _ = three
    by_list = report_content([proxy, result, adjusted], generated_at=WHEN)
    in_order = report_content([result, adjusted, proxy], generated_at=WHEN)
    with_gaps = report_content([None, adjusted, None, result, proxy], generated_at=WHEN)   # None: a tool not run
    titles = [s.title for s in in_order.sections]
    assert [s.title for s in by_list.sections] == titles == [s.title for s in with_gaps.sections]
    assert "Gaps adjusted for the controls (regression)" in titles


def test_the_report_takes_results_and_nothing_else(three) -> None:
    """The results in one list and the context around them: no keyword per kind of result (there were 18
    parameters, 11 typed Any); an old keyword is refused, and a single result not in a list is said in words."""
    import inspect

    result, adjusted, _, _ = three
    assert list(inspect.signature(report_content).parameters) == [
        "results", "frame", "dataset", "options", "title", "generated_at", "sample_note"]
    assert list(inspect.signature(build_slides).parameters) == ["results", "dataset"]
    for kind in ("retrain", "thresholds", "equalized", "equalized_alpha", "adjusted", "ll144", "eeoc", "series",
                 "proxy", "regulator"):
        with pytest.raises(TypeError, match=kind):
            build_html_report([result], **{kind: adjusted})
        with pytest.raises(TypeError, match=kind):
            build_pdf_report([result], **{kind: adjusted})
        with pytest.raises(TypeError, match=kind):
            build_slides([result], **{kind: adjusted})
    with pytest.raises(LuskinError, match="one list"):
        report_content(result)


def test_an_unknown_result_is_said_in_words(three) -> None:
    result, adjusted, _, _ = three
    with pytest.raises(LuskinError, match="cannot show a DataFrame"):
        build_html_report([result, adjusted, pd.DataFrame({"a": [1]})])
    with pytest.raises(LuskinError, match="no audit result"):
        report_content([adjusted])
    other = audit(pd.DataFrame({"g": ["a", "b"] * 20, "y": [0, 1] * 20}),
                  AuditSpec(outcome="y", positive=1, protected="g == 'a'"))
    with pytest.raises(LuskinError, match="one audit"):
        report_content([result, other])


@dataclass(frozen=True)
class _Scan:
    """A result defined outside the registry that offers its own section (the ReportPart protocol)."""

    found: int

    def report_section(self, context: PartContext) -> Section:
        section = Section("scan", "Subgroup scan")
        section.add("paragraph", text=f"{self.found} subgroups found beside {context.audit.reference}.")
        return section


def test_a_result_offering_its_section_plugs_in(three) -> None:
    result = three[0]
    assert isinstance(_Scan(3), ReportPart)
    headings, text = _page(build_html_report([result, _Scan(3)], generated_at=WHEN))
    assert "Subgroup scan" in headings
    assert f"3 subgroups found beside {result.reference}." in text


def test_a_subgroup_scan_gets_its_section_with_its_findings(adult, three) -> None:
    from luskin_core import ScanSpec, scan

    result = three[0]
    found = scan(adult, ScanSpec("income", ">50K", ("sex", "race"), depth=2, replicates=199, seed=3))
    assert found.findings  # Adult's income gap by sex is far beyond chance
    headings, text = _page(build_html_report([result, found], generated_at=WHEN))
    assert "Subgroup scan: where the gaps are" in headings
    for f in found.findings:
        assert " ".join(f.sentence.split()) in text


# -- slides: the same table names each result's slides -------------------------------------------------
def test_slides_take_results_as_the_report_does(adult, three) -> None:
    from luskin_core import ScanSpec, scan
    from luskin_core.present.slides import build_slides

    result, adjusted, proxy, _ = three
    found = scan(adult, ScanSpec("income", ">50K", ("sex", "race"), depth=2, replicates=99, seed=3))
    without_scan = build_slides([result, adjusted, proxy])
    by_list = build_slides([found, proxy, result, adjusted])   # any order: placed by the table's rank
    keys = [s.key for s in by_list]
    assert [s.key for s in without_scan] == [k for k in keys if not k.startswith("finding-scan")]
    assert keys.index("finding-adjusted") < keys.index("finding-scan") < keys.index("caveats")
    scan_slides = [s for s in by_list if s.key.startswith("finding-scan")]   # the projector may split one in two
    words = [w for s in scan_slides for w in s.sentences]
    assert any(s.figure is not None for s in scan_slides) and found.headline() in words
    assert found.findings and found.findings[0].sentence in words
    with pytest.raises(LuskinError, match="nothing to present"):
        build_slides([adjusted])
    with pytest.raises(LuskinError, match="cannot show a DataFrame"):
        build_slides([result, pd.DataFrame({"a": [1]})])


@dataclass(frozen=True)
class _WithSlides(_Scan):
    """A result outside the table offering its section and its slides (the SlidePart protocol)."""

    def report_slides(self, context: PartContext) -> list[Any]:
        from luskin_core.present.slide_blocks import FINDING, Slide

        return [Slide("Found", (f"{self.found} beside {context.audit.reference}.",), None, FINDING, "finding-own")]


def test_a_result_offering_its_slides_plugs_in(three) -> None:
    from luskin_core.present.report_parts import SlidePart
    from luskin_core.present.slides import build_slides

    result = three[0]
    assert isinstance(_WithSlides(2), SlidePart) and not isinstance(_Scan(2), SlidePart)
    deck = build_slides([result, _WithSlides(2)])
    assert deck[[s.key for s in deck].index("finding-own")].sentences == (f"2 beside {result.reference}.",)
    assert "finding-own" not in [s.key for s in build_slides([result, _Scan(2)])]   # a section only
