"""Presentation mode: the slide builder (luskin_core.present.slides) and the Present page (AppTest).

The deck must say what the report says (the same sentences), in the order a committee hears it,
with one finding per slide and its chart; follow the session's results (a correction computed on
another page adds its slides); reopen at the slide in the URL; move with Previous/Next; hide a
slide; and never let a user's string become markup.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from luskin_app.ui import unescape
from luskin_core import PRESETS, audit, load_sample
from luskin_core.analyses.findings import findings as ranked
from luskin_core.corrections.cost import cost_points
from luskin_core.corrections.thresholds import tune_thresholds
from luskin_core.present.report import caveat_sentences, cost_sentences
from luskin_core.present.slides import KINDS, MAX_FINDINGS, Slide, build_slides, visible
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.spec.conditions import Condition

APP = str(Path(__file__).resolve().parent.parent / "app.py")
TIMEOUT = 300  # seconds for one script run: generous, a loaded 2-core machine is slow (a wait, not a speed check)


@pytest.fixture(scope="module")
def adult() -> tuple[pd.DataFrame, AuditSpec]:
    return load_sample("adult"), PRESETS["adult"].spec


@pytest.fixture(scope="module")
def compas_thresholds() -> tuple[pd.DataFrame, AuditSpec, object]:
    frame, spec = load_sample("compas"), PRESETS["compas"].spec
    report = tune_thresholds(frame, spec, model=None, score_column="decile_score", solver="exact", lam=1.0, seed=0)
    return frame, spec, report


def _kinds(slides: list[Slide]) -> list[str]:
    return [s.kind for s in slides]


def _figure_json(slide: Slide) -> dict:
    return json.loads(slide.figure.to_json())


def test_adult_deck_follows_the_committee_order_with_one_finding_per_slide(adult: tuple) -> None:
    frame, spec = adult
    result = audit(frame, spec)
    slides = build_slides([result], dataset="sample:adult")
    kinds = _kinds(slides)
    assert kinds[:3] == ["question", "data", "verdict"] and kinds[-1] == "caveats"
    assert kinds == sorted(kinds, key=KINDS.index)  # question, data, verdict, findings, ..., caveats
    assert len({s.key for s in slides}) == len(slides)
    findings = [s for s in slides if s.kind == "finding" and s.key.startswith("finding-")]
    # one slide per filter cell, each with the core's sentence and a chart of that cell's two groups
    assert [s.sentences[0] for s in findings] == [g.sentence for g in result.gaps]
    for slide, gap in zip(findings, result.gaps):
        fig = _figure_json(slide)
        assert {t["name"] for t in fig["data"]} == {"White", "Non-White"}
        assert all(t["x"] == [gap.cell] for t in fig["data"])
        assert fig["layout"]["yaxis"]["range"][0] == 0  # shares from zero
    # the findings, most important first, as many of the first three as the slide holds (the four-fifths words made
    # the overall sentence longer: two fit); each finding has its own slide below (checked above)
    said = ranked(result).sentences()
    assert 2 <= len(slides[2].sentences) <= 3 and slides[2].sentences == tuple(said[:len(slides[2].sentences)])
    assert "White and Non-White" in slides[0].sentences[0] and "education" in slides[0].sentences[0]
    assert "48,842 rows audited" in " ".join(slides[1].sentences)
    assert list(slides[-1].sentences) == caveat_sentences(result)
    assert not any(s.kind in ("correction", "cost") for s in slides)  # nothing was corrected


def test_a_chart_never_shares_a_slide_with_more_text_than_a_narrow_window_holds(adult: tuple) -> None:
    """Three findings and a chart do not fit 1024x768 with the sidebar open: the chart moves, nothing is lost."""
    from luskin_core.present.slide_blocks import (
        MAX_CAPTION_CHARS,
        MAX_LINES_WITH_CHART,
        MAX_TEXT_LINES,
        fit_for_projector,
        text_lines,
    )

    frame, spec = adult
    slides = build_slides([audit(frame, spec)], dataset="sample:adult")
    assert all(text_lines(s) <= MAX_LINES_WITH_CHART for s in slides if s.figure is not None)
    verdict = [s for s in slides if s.kind == "verdict"]
    assert [s.key for s in verdict] == ["verdict", "verdict-chart"]
    assert verdict[0].figure is None and len(verdict[0].sentences) >= 2 and text_lines(verdict[0]) <= MAX_TEXT_LINES
    assert verdict[1].figure is not None and verdict[1].title == "What we found, in a chart"
    first = verdict[0].sentences[0]   # the overall answer, repeated under the chart when short enough
    assert verdict[1].sentences == ((first,) if len(first) <= MAX_CAPTION_CHARS else ())
    # a slide that fits is left alone, and splitting twice changes nothing
    assert fit_for_projector(slides) == slides
    short = Slide("T", ("One line.",), verdict[1].figure, "finding", "f")
    assert fit_for_projector([short]) == [short]


def test_a_chart_of_many_groups_keeps_no_more_than_a_caption_beside_it() -> None:
    """Twelve groups' bars under 7.5 lines of text piled their names up at 1024x768 (Chromium,
    tests/browser/test_present_fit.py); under a caption they fit, and so do five groups under the 7.5 lines."""
    import plotly.graph_objects as go

    from luskin_core.present.slide_blocks import MAX_LINES_WITH_TALL_CHART, bar_rows, fit_for_projector, text_lines

    def chart(groups: int) -> go.Figure:
        return go.Figure(go.Bar(x=[0.3] * groups, y=[f"group {i}" for i in range(groups)], orientation="h"))

    words = ("x" * 454,)   # 7.5 lines of a narrow window
    tall, low = Slide("T", words, chart(12), "verdict", "v"), Slide("T", words, chart(5), "verdict", "v")
    assert bar_rows(tall.figure) == 12 and text_lines(tall) == 7.5
    moved = fit_for_projector([tall])
    assert [s.key for s in moved] == ["v", "v-chart"] and moved[0].figure is None and moved[1].figure is not None
    assert fit_for_projector([low]) == [low]
    caption = Slide("T", ("x" * 120,), chart(12), "verdict", "v")
    assert text_lines(caption) <= MAX_LINES_WITH_TALL_CHART and fit_for_projector([caption]) == [caption]


def test_a_correction_adds_its_slide_and_the_cost_chart(compas_thresholds: tuple) -> None:
    frame, spec, report = compas_thresholds
    result = audit(frame, spec)
    slides = build_slides([result, report], dataset="sample:compas")
    kinds = _kinds(slides)
    assert kinds.index("correction") < kinds.index("cost") < kinds.index("caveats")
    correction = slides[kinds.index("correction")]
    cost = slides[kinds.index("cost")]
    sentences = cost_sentences(cost_points(None, report, None))
    assert correction.sentences[0] == sentences[0] and "points of accuracy" in sentences[0]
    assert list(cost.sentences) == sentences
    assert correction.figure is not None and cost.figure is not None
    # the slide's chart carries no title of its own (the slide's title says it, large)
    assert not _figure_json(cost)["layout"].get("title", {}).get("text")
    # COMPAS with no filter: the caveat that nothing is held equal
    assert any("Nothing is held equal" in s for s in slides[-1].sentences)


def test_many_findings_are_capped_and_hidden_slides_leave_the_deck() -> None:
    rng = np.random.default_rng(3)
    n = 4000
    frame = pd.DataFrame({"grp": rng.choice(list("ABCDEFGHIJKL"), n), "y": rng.choice(["yes", "no"], n)})
    spec = AuditSpec(outcome="y", positive="yes", group_by=("grp",))
    result = audit(frame, spec)
    slides = build_slides([result])
    findings = [s for s in slides if s.key.startswith("finding-")]
    assert len(findings) == MAX_FINDINGS
    assert "more findings in the report" in findings[-1].sentences[-1]
    kept = visible(slides, {"data", "finding-2"})
    assert [s.key for s in kept] == [s.key for s in slides if s.key not in ("data", "finding-2")]


def test_user_strings_never_become_markup_in_slide_charts() -> None:
    rng = np.random.default_rng(0)
    n = 600
    evil = '<a href="https://evil.example/x">click</a>'
    frame = pd.DataFrame({"group": rng.choice([evil, "plain"], n), "y": rng.choice(["yes", "no"], n),
                          "edu": rng.integers(1, 10, n)})
    spec = AuditSpec(outcome="y", positive="yes", protected=Condition("group", "==", evil),
                     filters=(Condition("edu", ">", 5),))
    slides = build_slides([audit(frame, spec)], dataset="upload:<img src=x>.csv")
    assert any(evil in s for s in slides[1].sentences)  # plain text: the page escapes it (tested below)
    for slide in slides:
        if slide.figure is not None:
            text = slide.figure.to_json()
            assert "<a href" not in text and "<img" not in text


# ------------------------------------------------------------------------------------------
# The Present page (AppTest)
# ------------------------------------------------------------------------------------------
def _open_present(slide: int | None = None, via_page_param: bool = False) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    if via_page_param:
        at.query_params["page"] = "present"
    if slide is not None:
        at.query_params["slide"] = str(slide)
    at.run()
    if not via_page_param:
        at.switch_page("app_pages/present.py").run()
    assert not at.exception, at.exception
    return at


def _title(at: AppTest) -> str:
    return unescape(at.title[-1].value)


def _slide_number(at: AppTest) -> str:
    return next(unescape(c.value) for c in at.caption if unescape(c.value).startswith("Slide "))


def test_present_page_opens_at_the_bookmarked_slide_and_moves(adult: tuple) -> None:
    at = _open_present(slide=3, via_page_param=True)
    assert _title(at) == "What we found"
    assert _slide_number(at).startswith("Slide 3 of ")
    assert at.query_params["slide"] == ["3"] or at.query_params["slide"] == "3"
    at.button(key="present_next").click().run()
    assert _slide_number(at).startswith("Slide 4 of ")
    assert _title(at) == "What we found, in a chart"   # three findings leave no room for the chart
    assert str(at.query_params["slide"]).strip("[]'") == "4"
    at.button(key="present_prev").click().run()
    at.button(key="present_prev").click().run()
    assert _title(at) == "The data and who is compared"
    # the first slide has no Previous
    at.button(key="present_prev").click().run()
    assert at.button(key="present_prev").disabled
    assert _title(at) == "The question"


def test_hiding_a_slide_removes_it_and_the_deck_follows_new_results(adult: tuple) -> None:
    at = _open_present(slide=2)
    count = int(_slide_number(at).split(" of ")[1])
    assert _title(at) == "The data and who is compared"
    at.checkbox(key="present_show_data").uncheck().run()
    assert int(_slide_number(at).split(" of ")[1]) == count - 1
    assert _title(at) == "What we found"  # slide 2 is now the next one
    at.checkbox(key="present_show_data").check().run()
    assert int(_slide_number(at).split(" of ")[1]) == count
    # a correction computed on another page for the current choices adds its slide and the cost slide
    assert "present_show_cost" not in [c.key for c in at.checkbox]
    at.switch_page("app_pages/thresholds.py").run()
    assert not at.exception, at.exception
    at.switch_page("app_pages/present.py").run()
    assert not at.exception, at.exception
    keys = [c.key for c in at.checkbox]
    assert "present_show_correction-thresholds-1" in keys and "present_show_cost" in keys
    assert int(_slide_number(at).split(" of ")[1]) == count + 2
    assert "present_show_data" in keys and at.checkbox(key="present_show_data").value


def test_present_page_escapes_user_text() -> None:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    rng = np.random.default_rng(1)
    n = 400
    evil = "**bold** [link](https://evil.example) $x$"
    frame = pd.DataFrame({"who": rng.choice([evil, "other"], n), "y": rng.choice(["yes", "no"], n)})
    at.file_uploader(key="upload_csv").set_value(("evil.csv", frame.to_csv(index=False).encode(), "text/csv")).run()
    if at.radio(key="outcome_is").value is None:   # 'y is yes': the page asks which way is good (issue 46)
        at.radio(key="outcome_is").set_value("favourable").run()
    confirm = [b for b in at.button if b.key and b.key.endswith("_confirm")]
    if confirm:
        confirm[0].click().run()
    at.switch_page("app_pages/present.py").run()
    assert not at.exception, at.exception
    at.query_params["slide"] = "2"
    at.run()
    raw = " ".join(m.value for m in at.markdown)
    assert "\\*\\*bold\\*\\*" in raw and "[link](" not in raw and "https://" not in raw


def test_retrain_and_equalized_corrections_get_their_slides_with_cost_and_warnings() -> None:
    """COMPAS, filter priors_count > 2 (as the CLI test of the warning): a retrain that backfires (its warning is on its slide and among the
    caveats) and an equalized sweep whose slide marks the alpha on screen, in points from 0."""
    from luskin_core.corrections.equalize import equalize_frame
    from luskin_core.corrections.retrain import RetrainOptions, retrain

    frame, preset = load_sample("compas"), PRESETS["compas"]
    spec = preset.spec.with_changes(filters=(Condition("priors_count", ">", 2),), filter_label=None,
                                    not_filter_label=None)
    result = audit(frame, spec)
    fixed = retrain(frame, spec, RetrainOptions(algorithm=1, first="LR", second="MLP", seed=0,
                                                features=preset.features))
    sweep = equalize_frame(frame, spec, alphas=(0.2, 1.0), features=preset.features, seed=0)
    slides = build_slides([result, fixed, sweep.shown_at(0.2)], dataset="sample:compas")
    keys = [s.key for s in slides]
    assert keys.index("correction-retrain-1") < keys.index("correction-equalized-1") < keys.index("cost")
    retrain_slide = slides[keys.index("correction-retrain-1")]
    points = cost_points(fixed, None, sweep)
    assert retrain_slide.sentences[:1] == tuple(cost_sentences([p for p in points if p.series == "retrain-1"]))[:1]
    assert fixed.warnings and f"Warning: {fixed.warnings[0]}" in retrain_slide.sentences
    assert f"Warning: {fixed.warnings[0]}" in slides[-1].sentences            # and among the caveats
    equalized = _figure_json(slides[keys.index("correction-equalized-1")])
    assert [s["x0"] for s in equalized["layout"]["shapes"]] == [0.2]           # the alpha on screen
    assert equalized["layout"]["yaxis"]["range"][0] == 0
    tpr = [100 * p.tpr_gap for p in sweep.points]
    assert np.allclose(equalized["data"][0]["y"], tpr)                         # points, as the pages say


def test_long_group_names_are_cut_on_slides_and_whole_in_the_report_and_hover() -> None:
    """Twelve groups of 150-character names: slides name them by their first words, distinctly;
    the data slide gives the range of rows per group and says that names were cut."""
    from luskin_core.present.slides import SLIDE_NAME_CHARS

    rng = np.random.default_rng(16)
    first = ["Hispanic or Latino of any race, including Central and South American origin",
             "Black or African American, not Hispanic or Latino, born in the United States",
             "White, not Hispanic or Latino, including Middle Eastern and North African origin"]
    second = ["Northeast census region (New England and Middle Atlantic divisions)",
              "Midwest census region (East North Central and West North Central divisions)",
              "South census region (South Atlantic, East South Central, West South Central)",
              "West census region (Mountain and Pacific divisions, Alaska and Hawaii included)"]
    n = 6000
    frame = pd.DataFrame({"a": rng.choice(first, n), "b": rng.choice(second, n),
                          "y": rng.choice(["yes", "no"], n)}).astype("string")
    result = audit(frame, AuditSpec("y", "yes", group_by=("a", "b")))
    slides = build_slides([result], dataset="long.csv")
    words = " ".join(s.title + " " + " ".join(s.sentences) for s in slides)
    assert not any(group in words for group in result.groups)          # no whole 150-character name
    assert "Black or African… × Midwest census region…" in words          # first words of each part
    data = next(s for s in slides if s.kind == "data")
    assert any(s.startswith("Rows per group: 12 groups, from ") for s in data.sentences)
    assert any("shortened on the slides" in s for s in data.sentences)
    finding_titles = [s.title for s in slides if s.key.startswith("finding-") and not s.key.endswith("-chart")]
    assert len(set(finding_titles)) == len(finding_titles)               # still told apart
    parts = [p for t in finding_titles for name in t.split(" against ") for p in name.split(" × ")]
    assert all(len(p) <= SLIDE_NAME_CHARS // 2 for p in parts), parts   # each column's value cut alike
    # the charts keep the whole names for the hover
    held = json.dumps([json.loads(s.figure.to_json())["data"] for s in slides if s.figure is not None])
    assert all(group.split(" × ")[0] in held for group in result.groups)
