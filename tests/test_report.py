"""The report (HTML and PDF) and the configuration document: content, self-containment, escaping, round trip.

PDF tests draw the charts with Debian's Chromium and read the PDF's text with pdftotext (poppler-utils); they
are skipped when either is missing, unless LUSKIN_REQUIRE_BROWSER is set (as scripts/test.sh does), when they
fail instead.
"""

from __future__ import annotations

import dataclasses
import html
import itertools
import json
import os
import re
import shutil
import subprocess
import threading
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

import luskin_core
from luskin_core import PRESETS, AuditSpec, LuskinError, audit
from luskin_core.corrections.equalize import AlphaPoint, AlphaSweep
from luskin_core.corrections.thresholds import ThresholdReport
from luskin_core.counting.data import frame_fingerprint
from luskin_core.formatting import format_points
from luskin_core.present.report import (
    DatasetRef,
    build_html_report,
    build_pdf_report,
    config_from_json,
    config_to_json,
    report_content,
    report_filename,
    safe_figure,
)

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
EVIL_SCRIPT = "<script>alert('x')</script>"
EVIL_LINK = '<a href="https://attacker.example/x">click</a>'
EVIL_IMAGE = '<img src="https://attacker.example/beacon.png">'


class _Checker(HTMLParser):
    """Collects scripts, links, images, section ids and text; checks that every element is closed in order."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.scripts: list[dict[str, str | None]] = []
        self.links: list[dict[str, str | None]] = []
        self.anchors: list[dict[str, str | None]] = []
        self.images: list[dict[str, str | None]] = []
        self.sections: list[str] = []
        self.headings: list[str] = []
        self.text: list[str] = []
        self._in_script = False
        self._in_h2 = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style"):
            if tag == "script":
                self.scripts.append(dict(attrs))
            self._in_script = True
        if tag == "link":
            self.links.append(dict(attrs))
        if tag == "a":
            self.anchors.append(dict(attrs))
        if tag == "img":
            self.images.append(dict(attrs))
        if tag == "section":
            self.sections.append(str(dict(attrs).get("id")))
        if tag == "h2":
            self._in_h2 = True
            self.headings.append("")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self._in_script = False
        if tag == "h2":
            self._in_h2 = False
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        if not self._in_script:
            self.text.append(data)
        if self._in_h2:
            self.headings[-1] += data


def _parse(page: str) -> _Checker:
    checker = _Checker()
    checker.feed(page)
    checker.close()
    assert not checker.errors, checker.errors[:5]
    assert not checker.stack, f"unclosed elements: {checker.stack}"
    return checker


def _text(page: str) -> str:
    return " ".join(" ".join(_parse(page).text).split())


def _figure_json(page: str) -> str:
    """Every chart's data as plotly.js will read it (JSON escapes decoded), without the plotly.js library."""
    scripts = re.findall(r"<script[^>]*>(.*?)</script>", page, flags=re.DOTALL)
    data = [s for s in scripts if "Plotly.newPlot(" in s and "plotly.js v" not in s[:2000]]
    return "".join(data).replace("\\u003c", "<").replace("\\u003e", ">").replace("\\u002f", "/")


def _assert_no_live_markup(page: str) -> None:
    """No tag a user string could have injected: in the page, or in the strings plotly.js will render."""
    outside = re.sub(r"<script.*?</script>", "", page, flags=re.DOTALL)
    for bad in ("<script>alert", '<a href="https://attacker', "<img", "<b>", "<i>x"):
        assert bad not in outside, bad
    assert not re.search(r"""(?:href|src)\s*=\s*["']?https?:""", outside)
    figures = _figure_json(page)
    for bad in ("<script", "<a href", "<a ", "<img", "attacker.example/beacon.png\\\">"):
        assert bad not in figures, bad
    assert page.count("</script>") == page.count("<script")


# ------------------------------------------------------------------------------------------
# The HTML report
# ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def adult_result(adult):
    return audit(adult, PRESETS["adult"].spec)


@pytest.fixture(scope="module")
def adult_page(adult, adult_result) -> str:
    return build_html_report([adult_result], frame=adult, dataset=DatasetRef.for_frame("adult", adult, sample=True), options={"page": "Audit", "tolerance": 0.05})


def test_report_holds_the_findings_and_numbers(adult_page, adult_result) -> None:
    text = _text(adult_page)
    for sentence in adult_result.sentences():
        assert sentence in text
    assert adult_result.headline() in text
    # the paper's Adult numbers: 13,827 White people with more than 10 years of education
    assert "13,827" in text and "6,132" in text and "48,842" in text
    assert "44.3%" in text  # White share in the filter cell, in the table
    assert f"luskin {luskin_core.__version__}" in text
    assert re.search(r"pandas \d+\.\d+", text) and re.search(r"scikit-learn \d+\.\d+", text)
    assert "education-num is above 10" in text  # the spec in words
    assert '"outcome": "income"' in text  # and as JSON, in the appendix


def test_first_page_then_every_section_and_json_only_in_the_appendix(adult_page, adult_result) -> None:
    checker = _parse(adult_page)
    assert checker.sections == ["summary", "audit", "data", "appendix"]
    assert checker.headings[0] == "The findings in one page"
    summary = re.search(r'<section id="summary".*?</section>', adult_page, flags=re.DOTALL).group(0)
    summary_text = " ".join(" ".join(_parse(summary).text).split())
    for words in ("Who is compared", "White against Non-White", "On what outcome", "income is >50K",
                  "separately where more than 10 years of education", "sample 'adult': 48,842 rows audited",
                  adult_result.headline(), "Read with care", "Many comparisons", "No correction was run"):
        assert words in summary_text, words
    # raw JSON appears in the appendix only (the settings elsewhere are in words)
    before_appendix = adult_page.split('<section id="appendix"')[0]
    assert '"outcome"' not in re.sub(r"<script.*?</script>", "", before_appendix, flags=re.DOTALL)
    appendix = adult_page.split('<section id="appendix"')[1]
    assert "&#34;outcome&#34;: &#34;income&#34;" in appendix and "&#34;page&#34;: &#34;Audit&#34;" in appendix
    # the audit section: the paper's table, every comparison and the pooled view
    text = _text(adult_page)
    for caption in ("The protected group and the other class on each side of the filter",
                    "Every group in every cell against the reference group",
                    "Overall against within the strata, per group (reference: Non-White)"):
        assert caption in text
    # a protected condition compares the protected class (White) with the rest (issue 45)
    white = adult_result.comparison("White", "more than 10 years of education")
    assert f"{white.impact_ratio:.2f} [{white.impact_ratio_ci_low:.2f}, {white.impact_ratio_ci_high:.2f}]" in text


def test_report_is_self_contained(adult_page) -> None:
    checker = _parse(adult_page)
    assert not [s for s in checker.scripts if s.get("src")], "no external (or any) script src"
    assert not checker.links, "no external stylesheets"
    assert all(str(a.get("href", "")).startswith("#") for a in checker.anchors), "only links inside the page"
    outside_scripts = re.sub(r"<script.*?</script>", "", adult_page, flags=re.DOTALL)
    assert not re.search(r"""(?:href|src)\s*=\s*["']?(?:https?:)?//""", outside_scripts, re.IGNORECASE)
    # plotly.js embedded exactly once; the paper's bar chart and the overall-vs-within chart drawn with it
    from plotly.offline import get_plotlyjs

    assert adult_page.count(get_plotlyjs()[:300]) == 1
    assert adult_page.count("Plotly.newPlot(") == 2
    assert 'id="luskin-chart-1"' in adult_page and 'id="luskin-chart-2"' in adult_page


def test_report_escapes_user_text() -> None:
    frame = pd.DataFrame({
        "outcome<b>": ["yes", "no"] * 30,
        "grp": ["A&B", "C"] * 15 + ["C", "A&B"] * 15,
        EVIL_SCRIPT: [1, 2, 3] * 20,
    })
    spec = AuditSpec(outcome="outcome<b>", positive="yes", protected={"column": "grp", "op": "==", "value": "A&B"},
                     group_label=EVIL_SCRIPT, other_label=EVIL_LINK)
    result = audit(frame, spec)
    page = build_html_report([result], frame=frame, dataset=f"{EVIL_IMAGE}.csv", title=EVIL_SCRIPT, options={"note": EVIL_LINK})
    _parse(page)
    _assert_no_live_markup(page)
    outside_scripts = re.sub(r"<script.*?</script>", "", page, flags=re.DOTALL)
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in outside_scripts
    assert "A&amp;B" in outside_scripts
    assert "&lt;a href=&#34;https://attacker.example/x&#34;&gt;click&lt;/a&gt;" in outside_scripts


@pytest.fixture(scope="module")
def hostile_groups() -> tuple[pd.DataFrame, AuditSpec]:
    """Groups and strata whose names and values are markup, with enough rows to be judged and pooled."""
    rng = np.random.default_rng(7)
    n = 1200
    groups = rng.choice([EVIL_LINK, EVIL_IMAGE, "plain"], n)
    strata = rng.choice(["<i>x</i>", "y & z"], n)
    rate = np.where(groups == "plain", 0.6, 0.4) + np.where(strata == "y & z", 0.1, 0.0)
    frame = pd.DataFrame({"decision": np.where(rng.random(n) < rate, "yes", "no"), EVIL_SCRIPT: groups,
                          "strata<b>": strata})
    return frame, AuditSpec("decision", "yes", group_by=(EVIL_SCRIPT,), strata=("strata<b>",))


def test_report_escapes_hostile_groups_and_strata(hostile_groups) -> None:
    frame, spec = hostile_groups
    result = audit(frame, spec)
    assert len(result.pooled) == 2 and len(result.cell_names) == 2
    page = build_html_report([result], frame=frame, dataset=f"{EVIL_IMAGE}.csv")
    _assert_no_live_markup(page)
    text = _text(page)
    assert EVIL_LINK in text and EVIL_IMAGE in text  # shown as text, never as markup
    assert "Every group in every cell against the reference group" in text
    assert "Overall against within the strata, per group (reference: plain)" in text
    assert page.count("Plotly.newPlot(") == 2


def test_simpsons_paradox_is_a_caveat_on_the_first_page_and_flagged_in_the_pooled_table() -> None:
    from pathlib import Path

    counts = pd.read_csv(Path(__file__).parent / "fixtures" / "ucb_admissions.csv")
    rows = []
    for r in counts.itertuples():
        rows += [(r.department, r.sex, "admitted")] * r.admitted + [(r.department, r.sex, "rejected")] * r.rejected
    berkeley = pd.DataFrame(rows, columns=["department", "sex", "decision"]).astype("string")
    result = audit(berkeley, AuditSpec("decision", "admitted", group_by=("sex",), strata=("department",)))
    page = build_html_report([result], frame=berkeley, dataset="ucb_admissions.csv")
    summary = _text(page.split('<section id="audit"')[0] + "</main></body></html>")
    assert "Who is compared each sex group, against Male (the reference group)" in summary
    assert "Where within each value of department (6 strata)" in summary
    assert "Simpson's paradox for Female: the overall gap and the gap within the departments disagree" in summary
    assert "Breslow-Day-Tarone p = 0.002" in summary   # Tarone's adjusted version, named so (issue 49)
    audit_section = page.split('<section id="audit"')[1].split("</section>")[0]
    assert '<tr class="warn"><td>Female</td>' in audit_section  # the pooled row, flagged
    assert "The overall gap misleads" in audit_section
    assert "department = A" in audit_section


def test_model_audits_and_score_outcomes_get_their_own_tables(compas) -> None:
    spec = AuditSpec("two_year_recid", 1, group_by=("race",), prediction="is_recid", min_group_share=0.02)
    result = audit(compas, spec)
    text = _text(build_html_report([result], frame=compas, dataset="sample:compas"))
    assert "The model's errors per group" in text
    caucasian = result.comparison("Caucasian")
    rates = caucasian.error_rates["tpr"]
    assert f"{100 * rates['rate']:.1f} [{100 * rates['ci_low']:.1f}, {100 * rates['ci_high']:.1f}]" in text
    assert "the decisions in 'is_recid', checked against the true outcome two_year_recid" in text
    scores = audit(compas, AuditSpec("decile_score", None, group_by=("race",), outcome_type="score",
                                     min_group_share=0.02))
    text = _text(build_html_report([scores], frame=compas, dataset="sample:compas"))
    assert "The score itself: mean per group and the standardised difference to the reference" in text
    assert "decile_score is a score: a row counts as positive when it is strictly above the median score" in text


def test_safe_figure_keeps_formatting_and_neutralises_tags() -> None:
    import plotly.graph_objects as go

    figure = go.Figure(go.Bar(x=[EVIL_LINK, "a"], y=[1, 2], name=EVIL_IMAGE,
                              hovertemplate="%{x}<br><b>share</b> %{y}<extra></extra>"))
    figure.update_layout(title={"text": "Title<br><sub>sub</sub> &lt;kept&gt;"})
    safe = safe_figure(figure)
    assert list(safe.data[0].x) == ['&lt;a href="https://attacker.example/x">click&lt;/a>', "a"]
    assert safe.data[0].name == '&lt;img src="https://attacker.example/beacon.png">'
    assert safe.data[0].hovertemplate == "%{x}<br><b>share</b> %{y}<extra></extra>"
    assert safe.layout.title.text == "Title<br><sub>sub</sub> &lt;kept&gt;"


def test_report_with_thresholds_and_equalized_sections(compas) -> None:
    from luskin_core.corrections.thresholds import tune_thresholds

    preset = PRESETS["compas"]
    result = audit(compas, preset.spec)
    thresholds = tune_thresholds(compas, preset.spec, model="LR", features=preset.features)
    edges = tuple(np.linspace(0, 1, 51))
    counts = {"positive": [1] * 50, "negative": [2] * 50}

    def point(alpha: float, acc: float, gap: float) -> AlphaPoint:
        groups = {"African-American": {"tpr": 0.6 + gap, "fpr": 0.3 + gap},
                  "Caucasian": {"tpr": 0.6, "fpr": 0.3}}
        hists = {"African-American": counts, "Caucasian": counts}
        return AlphaPoint(alpha, acc, groups, hists, 0.6, 0.01, 0.1)

    sweep = AlphaSweep((point(0.1, 0.641, 0.02), point(1.0, 0.672, 0.15)), edges,
                       ("African-American", "Caucasian"), "African-American", 3690, 1230)
    page = build_html_report([result, thresholds, sweep.shown_at(0.12)], frame=compas, dataset="sample:compas", options={"page": "Thresholds", "lambda": 1.0})
    checker = _parse(page)
    assert checker.sections == ["summary", "cost", "audit", "thresholds", "equalized", "data", "appendix"]
    text = _text(page)
    assert "Correction 2: one decision threshold per group (classification parity)" in text
    after = thresholds.after.groups["Caucasian"]
    assert f"{100 * after.tpr:.1f}%" in text
    for group, value in thresholds.thresholds.items():
        assert f"{group}: {float(value):.4g}" in text
    assert "Correction 3: equalized score distributions" in text and "Alpha shown 0.1" in text
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(round(0.641 * 1230), 1230, method="wilson")
    assert "Accuracy (%) [95% CI]" in text and "TPR gap (points)" in text   # the units in the headings
    assert f"64.1 [{100 * low:.1f}, {100 * high:.1f}]" in text  # accuracy at alpha 0.1 with its Wilson interval
    assert "75.0 60.0 45.0 30.0 15.0 15.0" in text  # alpha 1: the groups' TPR and FPR in %, the gaps in points
    assert "(alpha = 0.1)" in page  # the histogram title of the chosen point
    # audit bars + ROC + histograms + accuracy + gaps + the cost chart
    assert page.count("Plotly.newPlot(") == 6 and "What each correction costs" in text
    assert page.count("* plotly.js v") == 1
    assert '"page": "Thresholds"' in text
    assert "Not run for this report: retraining." in text
    summary = _text(page.split('<section id="cost"')[0] + "</main></body></html>")
    assert "Per-group thresholds, lambda 1 (model LR) (the paper's default)" in summary
    assert f"accuracy {100 * thresholds.before.accuracy:.1f}% → {100 * thresholds.after.accuracy:.1f}%" in summary


@dataclasses.dataclass(frozen=True)
class _WarnedThresholds(ThresholdReport):
    """A ThresholdReport carrying warnings, as the corrections carry them (``warnings``: plain sentences)."""

    warnings: tuple[str, ...] = ()


def test_warnings_of_a_correction_are_on_the_first_page_and_in_its_section(compas) -> None:
    from luskin_core.corrections.thresholds import tune_thresholds

    preset = PRESETS["compas"]
    report = tune_thresholds(compas, preset.spec, model="LR", features=preset.features, lam=2.0)
    fields = {f.name: getattr(report, f.name) for f in dataclasses.fields(report) if f.name != "warnings"}
    warned = _WarnedThresholds(**fields, warnings=(f"The thresholds widened the test gap {EVIL_LINK}.",))
    page = build_html_report([audit(compas, preset.spec), warned], dataset="sample:compas")
    _assert_no_live_markup(page)
    summary = page.split('<section id="cost"')[0]
    assert 'class="warnings" role="alert"' in summary
    assert "Thresholds: The thresholds widened the test gap &lt;a href" in summary
    section = page.split('<section id="thresholds"')[1].split("</section>")[0]
    assert "Warnings about this correction" in section and "widened the test gap" in section
    assert "(see the warnings below)" in _text(summary + "</main></body></html>")


def test_a_correction_that_widens_the_gap_is_flagged_on_the_first_page(compas) -> None:
    preset = PRESETS["compas"]
    counts = {"positive": [2] * 50, "negative": [3] * 50}

    def point(alpha: float, accuracy: float, gap: float) -> AlphaPoint:
        groups = {"African-American": {"tpr": 0.6 + gap, "fpr": 0.3}, "Caucasian": {"tpr": 0.6, "fpr": 0.3}}
        return AlphaPoint(alpha, accuracy, groups, {"African-American": counts, "Caucasian": counts}, 0.6, 0.01, 0.1)

    sweep = AlphaSweep((point(0.1, 0.64, 0.25), point(1.0, 0.67, 0.15)), tuple(np.linspace(0, 1, 51)),
                       ("African-American", "Caucasian"), "Caucasian", 3690, 1230)
    page = build_html_report([audit(compas, preset.spec), sweep], dataset="sample:compas")
    summary = _text(page.split('<section id="cost"')[0] + "</main></body></html>")
    assert "Equalized distribution at α = 0.1 (the paper's default) accuracy 67.0% → 64.0% 15.0 → 25.0 points (WIDER)" \
        in summary
    assert ("Equalized distribution at α = 0.1: WIDENED the larger of the true-positive-rate and false-positive-rate "
            "gaps from 15.0 to 25.0 points, at a cost of 3.0 points of accuracy (67.0% → 64.0%).") in _text(page)


def test_a_real_backfire_is_warned_on_the_first_page(compas) -> None:
    """COMPAS within 'priors_count > 2': Algorithm 1 with seed 0 widens that cell's gap (RetrainResult.warnings)."""
    from luskin_core.corrections.retrain import RetrainOptions, retrain
    from luskin_core.spec.conditions import parse_condition

    preset = PRESETS["compas"]
    spec = preset.spec.with_changes(filters=(parse_condition("priors_count > 2"),))
    result = retrain(compas, spec, RetrainOptions(algorithm=1, first="LR", second="MLP", seed=0,
                                                  features=preset.features))
    assert result.warnings, "the case this test relies on no longer backfires"
    page = build_html_report([audit(compas, spec), result], frame=compas, dataset="sample:compas")
    summary = _text(page.split('<section id="cost"')[0] + "</main></body></html>")
    assert "Warnings: corrections that backfired or need care" in summary
    for warning in result.warnings:
        assert f"Retraining: {warning}" in summary
    assert "(WIDER)" in summary and "(see the warnings below)" in summary
    section = page.split('<section id="retrain"')[1].split("</section>")[0]
    assert "Warnings about this correction" in section


def test_report_with_real_retrains(adult, adult_result) -> None:
    from luskin_core.corrections.retrain import RetrainOptions, retrain

    preset = PRESETS["adult"]
    results = [retrain(adult, preset.spec, RetrainOptions(algorithm=a, first="LR", second="LR",
                                                          features=preset.features)) for a in (1, 2)]
    page = build_html_report([adult_result, *results], frame=adult, dataset="sample:adult")
    text = _text(page)
    assert "Correction 1: relabel and retrain (controlled fairness)" in text
    for result in results:
        assert result.options.describe() in text
        assert f"{result.auc_second:.3f}" in text
        for sentence in result.second.sentences() + result.relabelling.sentences():
            assert " ".join(sentence.split()) in text
        gap = result.second.gap(True)
        assert f"{format_points(gap.gap, signed=True)} ({gap.group} − {gap.reference}; p " in text
    # audit bars, overall vs within, two retrain gap charts, the cost chart
    assert page.count("Plotly.newPlot(") == 5


def test_missing_parts_are_said_in_words(adult_result) -> None:
    text = _text(build_html_report([adult_result]))
    assert "The report was given the counts, not the rows" in text
    assert "No correction was run." in text


def test_report_refuses_a_missing_result() -> None:
    with pytest.raises(LuskinError, match="run the audit first"):
        build_html_report([None])
    with pytest.raises(LuskinError, match="run the audit first"):
        build_html_report([])


# ------------------------------------------------------------------------------------------
# The PDF report (Chromium draws the charts; pdftotext reads the PDF back)
# ------------------------------------------------------------------------------------------
def _need_pdf_tools() -> None:
    missing = [name for name in ("chromium", "pdftotext") if shutil.which(name) is None]
    if missing:
        message = f"the PDF tests need {' and '.join(missing)} (apt-get install chromium poppler-utils)"
        if os.environ.get("LUSKIN_REQUIRE_BROWSER"):
            pytest.fail(message)
        pytest.skip(message)


def _pdf_text(data: bytes, tmp_path, first: int | None = None, last: int | None = None) -> str:
    assert data.startswith(b"%PDF-")
    path = tmp_path / f"report-{len(data)}-{first}-{last}.pdf"
    path.write_bytes(data)
    pages = ([] if first is None else ["-f", str(first)]) + ([] if last is None else ["-l", str(last)])
    out = subprocess.run(["pdftotext", *pages, str(path), "-"], check=True, capture_output=True, text=True)
    return " ".join(out.stdout.split())


def _pages(data: bytes, tmp_path) -> int:
    path = tmp_path / "count.pdf"
    path.write_bytes(data)
    info = subprocess.run(["pdfinfo", str(path)], check=True, capture_output=True, text=True).stdout
    return int(re.search(r"Pages:\s+(\d+)", info).group(1))


@pytest.mark.slow
def test_pdf_has_the_same_findings_with_vector_charts(compas, tmp_path) -> None:
    _need_pdf_tools()
    from luskin_core.corrections.equalize import equalize_frame
    from luskin_core.corrections.retrain import RetrainOptions, retrain
    from luskin_core.corrections.thresholds import tune_thresholds

    preset = PRESETS["compas"]
    spec = preset.spec
    result = audit(compas, spec)
    retrained = retrain(compas, spec, RetrainOptions(first="LR", second="LR", features=preset.features))
    thresholds = tune_thresholds(compas, spec, model="LR", features=preset.features)
    sweep = equalize_frame(compas, spec, alphas=(0.1, 1.0), features=preset.features)
    import logging

    environment, folder, handlers = dict(os.environ), os.getcwd(), list(logging.getLogger().handlers)
    content = report_content([result, retrained, thresholds, sweep.shown_at(0.1)], frame=compas, dataset="sample:compas")
    data = content.pdf()
    # nothing process-wide changed: the browser is named by path, not through the environment
    assert dict(os.environ) == environment and os.getcwd() == folder and logging.getLogger().handlers == handlers
    text = _pdf_text(data, tmp_path)
    first_page = _pdf_text(data, tmp_path, 1, 1)
    for words in ("The findings in one page", "The question", "Who is compared", result.headline(),
                  "What was tried to correct it, and what it cost", "Retraining, Algorithm 2, A1 LR then C2 LR",
                  "Per-group thresholds, lambda 1 (model LR) (the paper's default)",
                  "Equalized distribution at α = 0.1 (the paper's default)"):
        assert " ".join(words.split()) in first_page, words
    unhyphenated = text.replace("-", "")  # pdftotext joins a word hyphenated at a line end ("four-|fifths")
    for sentence in result.sentences():
        assert " ".join(sentence.split()).replace("-", "") in unhyphenated
    for title in ("What each correction costs", "The audit: African-American vs Caucasian",
                  "Correction 1: relabel and retrain (controlled fairness)",
                  "Correction 2: one decision threshold per group (classification parity)",
                  "Correction 3: equalized score distributions", "The data",
                  "Appendix: settings as JSON, how the numbers are made, software"):
        assert title in text, title
    assert ("Accuracy (or AUC) against the remaining gap for every correction computed; arrows lead from before to "
            "after the correction") in text
    # the charts are vector images: their own words are text in the PDF
    assert "remaining gap (percentage points)" in text and "accuracy (axis from 0)" in text
    assert "Right and wrong flags per group, before and after" in text
    # HTML and PDF say the same: every sentence of the HTML's findings is in the PDF
    html_text = _text(content.html())
    assert result.headline() in html_text
    assert _pages(data, tmp_path) >= 8


@pytest.mark.slow
def test_pdf_escapes_user_text_and_reports_run_side_by_side(hostile_groups, tmp_path) -> None:
    _need_pdf_tools()
    frame, spec = hostile_groups
    result = audit(frame, spec)
    outputs: dict[int, bytes] = {}
    errors: list[BaseException] = []

    def build(index: int) -> None:
        try:
            outputs[index] = build_pdf_report([result], frame=frame, dataset=f"{EVIL_IMAGE}.csv", title=EVIL_SCRIPT)
        except BaseException as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=build, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    texts = [_pdf_text(outputs[i], tmp_path) for i in range(2)]
    texts = [re.sub(r"Generated .*? by Luskin", "", t) for t in texts]
    assert texts[0] == texts[1]
    assert EVIL_SCRIPT in texts[0] and EVIL_LINK in texts[0] and EVIL_IMAGE in texts[0]  # literal text
    assert b"/URI" not in outputs[0]  # no link annotation to the outside in the PDF


@pytest.mark.slow
def test_a_browser_that_dies_is_a_plain_error_and_the_next_pdf_works(adult_result, tmp_path) -> None:
    _need_pdf_tools()
    from luskin_core.present import report_render

    content = report_content([adult_result], dataset="sample:adult")
    assert content.pdf().startswith(b"%PDF-")
    browser = report_render.CHART_RENDERER._kaleido.subprocess  # the Chromium this process started for the charts
    browser.kill()
    browser.wait()
    with pytest.raises(LuskinError, match="Chromium stopped while drawing the PDF's charts"):
        content.pdf()
    assert adult_result.headline() in _pdf_text(content.pdf(), tmp_path)


# ------------------------------------------------------------------------------------------
# luskin report
# ------------------------------------------------------------------------------------------
def test_cli_writes_the_html_report(tmp_path, capsys) -> None:
    from luskin_cli.main import main

    target = tmp_path / "adult.html"
    assert main(["report", "--preset", "adult", "--html", str(target), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["written"] == {"html": str(target)} and out["headline"].startswith("2 of 2 comparisons with Non-White")
    page = target.read_text(encoding="utf-8")
    checker = _parse(page)
    assert checker.sections == ["summary", "audit", "data", "appendix"]
    assert "sample 'adult': 48,842 rows audited" in _text(page)


@pytest.mark.parametrize("argv, message", [
    (["report", "--preset", "adult"], "Say where to write the report"),
    (["report", "--preset", "adult", "--html", "/no/such/folder/r.html"], "the folder '/no/such/folder' does not exist"),
    (["report", "--preset", "adult", "--equalize", "--alphas", "0.1,x", "--html", "r.html"], "'x' is not a number"),
    (["report", "--preset", "adult", "--lambda", "2", "--html", "r.html"],
     "--lambda sets an option of --thresholds, which was not asked for: add --thresholds."),
    (["report", "--preset", "adult", "--first", "MLP", "--direction", "up", "--html", "r.html"],
     "--first, --direction set an option of --retrain, which was not asked for: add --retrain."),
    (["report", "--preset", "adult", "--solver", "pso", "--html", "r.html"],
     "--solver sets an option of --thresholds, which was not asked for: add --thresholds."),
    (["report", "--preset", "adult", "--retrain", "--second", "SVM", "--html", "r.html"], "--second"),
])
def test_cli_report_mistakes_are_plain_sentences(argv, message, capsys) -> None:
    from luskin_cli.main import main

    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


@pytest.mark.slow
def test_cli_runs_every_tool_and_writes_both_files(tmp_path) -> None:
    _need_pdf_tools()
    import sys

    html_path, pdf_path = tmp_path / "compas.html", tmp_path / "compas.pdf"
    done = subprocess.run(
        [sys.executable, "-m", "luskin_cli", "report", "--preset", "compas", "--retrain", "--thresholds",
         "--equalize", "--alphas", "0.1,1", "--html", str(html_path), "--pdf", str(pdf_path)],
        capture_output=True, text=True, timeout=600, cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr
    assert f"Wrote {html_path}" in done.stderr and f"Wrote {pdf_path}" in done.stderr
    page = html_path.read_text(encoding="utf-8")
    assert _parse(page).sections == ["summary", "cost", "audit", "retrain", "thresholds", "equalized", "data",
                                     "appendix"]
    text = _pdf_text(pdf_path.read_bytes(), tmp_path)
    headline = re.search(r'<p class="lead">(.*?)</p>', page).group(1)
    assert " ".join(html.unescape(headline).split(":")[0].split()) in text   # the overall answer, first words
    for title in ("What each correction costs", "Correction 1: relabel and retrain (controlled fairness)",
                  "Correction 3: equalized score distributions"):
        assert title in text


def test_config_round_trip(adult) -> None:
    spec = PRESETS["adult"].spec.with_changes(tolerance=0.03)
    ref = DatasetRef.for_frame("adult", adult, sample=True)
    options = {"retrain": {"algorithm": 2, "first": "LR", "second": "MLP", "seed": np.int64(3)},
               "equalize": {"alpha": 0.2}}
    text = config_to_json(ref, spec, {"features": list(PRESETS["adult"].features), "options": options})
    loaded = config_from_json(text)
    assert loaded.spec == spec
    assert loaded.dataset == ref and loaded.dataset.matches(adult)
    assert loaded.dataset.fingerprint == frame_fingerprint(adult)
    assert loaded.extra == {"features": list(PRESETS["adult"].features),
                            "options": {"retrain": {"algorithm": 2, "first": "LR", "second": "MLP", "seed": 3},
                                        "equalize": {"alpha": 0.2}}}
    assert loaded.luskin_version == luskin_core.__version__
    assert config_from_json(text.encode("utf-8")) == loaded
    assert not loaded.dataset.matches(adult.head(100))


def test_config_round_trip_upload_and_string_refs() -> None:
    spec = PRESETS["compas"].spec
    loaded = config_from_json(config_to_json("my data (2024).csv", spec, {}))
    assert loaded.dataset.kind == "upload" and loaded.dataset.name == "my data (2024).csv"
    assert loaded.spec == spec and loaded.spec.population == spec.population
    assert config_from_json(config_to_json("sample:compas", spec)).dataset == DatasetRef("sample", "compas")
    assert config_from_json(config_to_json("upload:x.csv", spec)).dataset == DatasetRef("upload", "x.csv")


def test_reads_the_dashboards_own_configuration_layout() -> None:
    """luskin_app.config.configuration_json() writes kind/data.source/spec/features/options: same format."""
    spec = PRESETS["adult"].spec
    document = {"kind": "luskin-configuration", "luskin_version": "0.1.0",
                "data": {"source": "upload:stops.csv", "title": "stops.csv", "fingerprint": "10x3-abc",
                         "rows": 10, "columns": 3},
                "spec": spec.to_dict(), "features": None, "options": {"thresholds": {"lam": 2.0}}}
    loaded = config_from_json(json.dumps(document))
    assert loaded.dataset == DatasetRef("upload", "stops.csv", "10x3-abc", 10, 3)
    assert loaded.spec == spec and loaded.extra == {"features": None, "options": {"thresholds": {"lam": 2.0}}}


@pytest.mark.parametrize("text, message", [
    ("", "empty"),
    ("{not json", "not valid JSON"),
    ("[1, 2]", "not a Luskin configuration"),
    ('{"kind": "something-else"}', "not a Luskin configuration"),
    ('{"kind": "luskin-configuration", "version": 99, "data": {}, "spec": {}}', "cannot read"),
    ('{"kind": "luskin-configuration", "data": {"source": "sample:adult"}}', "lacks its 'spec'"),
    ('{"kind": "luskin-configuration", "spec": {"outcome": "y"}}', "lacks its 'data'"),
    (('{"kind": "luskin-configuration", "data": {"source": "sample:adult"},'
     ' "spec": {"outcome": "income"}}'), "lacks its 'positive'"),
    (('{"kind": "luskin-configuration", "data": {"file": "x"},'
     ' "spec": {"outcome": "y", "positive": 1, "protected": "race == W"}}'), "lacks 'source'"),
    (('{"kind": "luskin-configuration", "data": {"source": "sample:adult", "rows": "many"},'
     ' "spec": {"outcome": "y", "positive": 1, "protected": "race == W"}}'), "not a whole number"),
    (('{"kind": "luskin-configuration", "data": {"source": "sample:adult"},'
     ' "spec": {"outcome": "y", "positive": 1, "protected": "race == W", "tolerance": 5}}'), "tolerance"),
    (('{"kind": "luskin-configuration", "data": {"source": "sample:adult"},'
     ' "spec": {"outcome": "y", "positive": 1, "protected": "race W"}}'), "not usable"),
])
def test_bad_config_is_a_plain_error(text: str, message: str) -> None:
    with pytest.raises(LuskinError, match=re.escape(message)):
        config_from_json(text)


def test_bad_config_bytes_and_unsaveable_options() -> None:
    with pytest.raises(LuskinError, match="not a text file"):
        config_from_json(b"\xff\xfe\x00\x81garbage")
    with pytest.raises(LuskinError, match="cannot be saved"):
        config_to_json("sample:adult", PRESETS["adult"].spec, {"model": object()})
    with pytest.raises(LuskinError, match="cannot be saved"):
        config_to_json("sample:adult", PRESETS["adult"].spec, {"alpha": float("nan")})
    with pytest.raises(LuskinError, match="reserved"):
        config_to_json("sample:adult", PRESETS["adult"].spec, {"spec": {}})
    with pytest.raises(LuskinError, match="no audit specification"):
        config_to_json("sample:adult", None, {})  # type: ignore[arg-type]


def test_config_is_readable_json() -> None:
    data = json.loads(config_to_json("sample:adult", PRESETS["adult"].spec, {"page": "Audit"}))
    assert data["kind"] == "luskin-configuration" and data["spec"]["outcome"] == "income"
    assert data["data"] == {"source": "sample:adult", "fingerprint": None, "rows": None, "columns": None}
    assert data["page"] == "Audit"


def test_report_filename_is_safe() -> None:
    import datetime as dt

    name = report_filename("../../etc/passwd; rm -rf.csv", dt.datetime(2026, 1, 2))
    assert name == "luskin-report-etc-passwd-rm-rf-2026-01-02.html"
    assert report_filename("sample:adult", dt.datetime(2026, 1, 2)) == "luskin-report-adult-2026-01-02.html"


def test_cli_report_on_a_large_source_audits_every_row_and_says_which_rows_the_models_used(tmp_path, adult) -> None:
    """A Parquet file is audited in the engine over all its rows; the retrain runs on a sample, and the report says so."""
    import sys

    adult.to_parquet(tmp_path / "adult.parquet")
    html_path = tmp_path / "report.html"
    done = subprocess.run(
        [sys.executable, "-m", "luskin_cli", "report", "--data", str(tmp_path / "adult.parquet"), "--outcome",
         "income", "--positive", ">50K", "--protected", "race == White", "--retrain", "--sample-cap", "5000",
         "--html", str(html_path)], capture_output=True, text=True, timeout=600, cwd=tmp_path, check=False)
    assert done.returncode == 0, done.stderr
    assert "Sample: 5,000 of 48,842 rows" in done.stderr
    text = " ".join(re.sub(r"<[^>]+>", " ", html_path.read_text(encoding="utf-8")).split())
    assert f"Rows audited {len(adult):,}" in text  # the audit counted every row, not the sample
    assert "Rows the models used A seeded sample of 5,000" in text and f"(of {len(adult):,})" in text
    assert "The report was given the counts, not the rows" in text


def test_cli_report_of_every_group_within_strata(tmp_path, adult) -> None:
    """luskin report takes luskin audit's group options; the model tools say plainly they compare one group."""
    import sys

    from luskin_cli.main import main

    html_path = tmp_path / "groups.html"
    assert main(["report", "--preset", "adult", "--groups", "race", "--stratify", "sex", "--html",
                 str(html_path)]) == 0
    result = audit(adult, AuditSpec("income", ">50K", group_by=("race",), strata=("sex",)))
    text = _text(html_path.read_text(encoding="utf-8"))
    assert result.headline() in text and "Breslow-Day" in text
    done = subprocess.run([sys.executable, "-m", "luskin_cli", "retrain", "--preset", "adult", "--groups", "race"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path, check=False)
    assert done.returncode == 2 and "--groups is an option of 'luskin audit' and 'luskin report' only" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_model_tools_sections_and_slides_name_the_rest_by_its_value() -> None:
    """Issue 27: on a two-valued column named by its codes (SEX 1 = Male, 2 = Female) the report's Thresholds and
    Equalized sections, their charts and their slides say 'Male' and 'Female', never 'Non-Male'; the protected
    group keeps blue and the rest orange in every chart."""
    from luskin_core.corrections.equalize import equalize_frame
    from luskin_core.corrections.thresholds import tune_thresholds
    from luskin_core.present import plots
    from luskin_core.present.slides import build_slides

    rng = np.random.default_rng(27)
    n = 1200
    sex = rng.choice([1, 2], n, p=[0.4, 0.6])
    x = rng.normal(size=n)
    score = 1 / (1 + np.exp(-(x + 0.6 * (sex == 1))))
    frame = pd.DataFrame({"SEX": sex, "x": x, "z": rng.normal(size=n), "score": score,
                          "y": (rng.random(n) < score).astype(int)})
    spec = AuditSpec("y", 1, "SEX == 1", value_names={"SEX": {"1": "Male", "2": "Female"}})
    thresholds = tune_thresholds(frame, spec, model=None, score_column="score")
    sweep = equalize_frame(frame, spec, alphas=(0.5, 1.0), features=["x", "z"])
    result = audit(frame, spec)
    page = build_html_report([result, thresholds, sweep], frame=frame, dataset="coded.csv")
    text = _text(page)
    assert "Non-Male" not in page and "Non-Female" not in page and "Non-" not in text   # (plotly.js says "Non-coercible")
    assert "Female" in text and "Male" in text
    assert "TPR Male" in text and "TPR Female" in text          # the equalized table's columns
    for group, value in thresholds.thresholds.items():
        assert f"{group}: {float(value):.4g}" in text
    slides = build_slides([result, thresholds, sweep])
    for slide in slides:
        words = " ".join((slide.title, *slide.sentences)) + ("" if slide.figure is None else slide.figure.to_json())
        assert "Non-" not in words, slide.title
    charts = [plots.threshold_roc(thresholds, spec, "test"), plots.sweep_histograms(sweep, 0.5)]
    for figure in charts:
        colours = {str(t.name).split(":")[0]: (t.line.color if getattr(t, "mode", "") == "lines"
                                                           else t.marker.color)
                   for t in figure.data if t.name != "chance"}
        assert colours == {"Male": plots.GROUP_COLOR, "Female": plots.OTHER_COLOR}


# ------------------------------------------------------------------------------------------
# Accessible report (issue 46, Section 508): every chart's text alternative, headings in order, a tagged PDF
# ------------------------------------------------------------------------------------------
def _chart_descriptions(content) -> list[str]:
    import plotly.graph_objects as go

    from luskin_core.present.chart_text import chart_text

    return [chart_text(go.Figure(c.figure)).description for c in content.charts()]


def test_html_report_charts_have_their_description_and_numbers_and_headings_skip_no_level(adult, adult_result) -> None:
    content = report_content([adult_result], frame=adult, dataset="sample:adult")
    descriptions = _chart_descriptions(content)
    assert len(descriptions) >= 2 and all(d.startswith(("Bar chart:", "Chart:")) for d in descriptions)
    page = content.html()
    outside = re.sub(r"<script.*?</script>", "", page, flags=re.DOTALL)
    labels = [html.unescape(v) for v in re.findall(r'<div class="plot" data-chart-label="([^"]*)"', outside)]
    assert labels == descriptions
    words = re.findall(r'<details class="chart-words"><summary>The chart in words and numbers</summary><p>(.*?)</p>'
                       r'<div class="table"><table><caption>(.*?)</caption>', outside)
    assert [html.unescape(d) for d, _ in words] == descriptions
    # each chart's numbers: the table chart_text reads from its figure, cell for cell
    import plotly.graph_objects as go

    from luskin_core.present.chart_text import chart_text

    for chart, part in zip(content.charts(), outside.split('<details class="chart-words">')[1:]):
        table = chart_text(go.Figure(chart.figure)).table
        cells = re.findall(r"<td>(.*?)</td>", part.split("</details>", 1)[0])
        assert [html.unescape(c) for c in cells] == [str(v) for row in table.itertuples(index=False) for v in row]
    assert "White" in outside.split('<details class="chart-words">', 2)[1]
    levels = [int(h) for h in re.findall(r"<h([1-6])[ >]", outside)]
    assert levels[0] == 1
    skipped = [(a, b) for a, b in itertools.pairwise(levels) if b > a + 1]
    assert not skipped, f"heading levels skipped: {skipped} in {levels}"


@pytest.mark.slow
def test_pdf_is_tagged_pdf_ua_with_each_chart_described(adult, adult_result) -> None:
    """PDF/UA-1 (WeasyPrint's variant): a structure tree with the headings, the tables (header cells) and one Figure
    per chart whose alternative text is the chart's description; the document says it is PDF/UA."""
    import io

    import pdf_structure
    import pypdf

    _need_pdf_tools()
    content = report_content([adult_result], frame=adult, dataset="sample:adult")
    descriptions = _chart_descriptions(content)
    reader = pypdf.PdfReader(io.BytesIO(content.pdf()))
    root = reader.trailer["/Root"]
    assert bool(root["/MarkInfo"]["/Marked"]) and root["/Lang"] == "en"
    assert re.search(rb"pdfuaid:part(>|=\")1", root["/Metadata"].get_object().get_data())
    tags = pdf_structure.tags(root)
    alts = [str(node.get("/Alt", "")) for node in pdf_structure.structure(root) if node["/S"] == "/Figure"]
    assert tags.count("/H1") == 1 and tags.count("/H2") >= 3 and "/H3" in tags
    assert tags.count("/Table") >= len(descriptions) + 2 and "/TH" in tags and "/TD" in tags
    assert alts == descriptions, alts
