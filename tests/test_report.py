"""The HTML report and the configuration document: content, self-containment, escaping, round trip."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

import luskin_core
from luskin_core import PRESETS, AuditSpec, LuskinError, audit
from luskin_core.data import frame_fingerprint
from luskin_core.equalize import AlphaPoint, AlphaSweep
from luskin_core.report import (
    DatasetRef,
    build_html_report,
    config_from_json,
    config_to_json,
    report_filename,
)

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class _Checker(HTMLParser):
    """Collects scripts and checks that every non-void element is closed in order."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.scripts: list[dict[str, str | None]] = []
        self.links: list[dict[str, str | None]] = []
        self.text: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self.scripts.append(dict(attrs))
            self._in_script = True
        if tag == "link":
            self.links.append(dict(attrs))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()

    def handle_data(self, data: str) -> None:
        if not self._in_script:
            self.text.append(data)


def _parse(page: str) -> _Checker:
    checker = _Checker()
    checker.feed(page)
    checker.close()
    assert not checker.errors, checker.errors[:5]
    assert not checker.stack, f"unclosed elements: {checker.stack}"
    return checker


@pytest.fixture(scope="module")
def adult_result(adult):
    return audit(adult, PRESETS["adult"].spec)


@pytest.fixture(scope="module")
def adult_page(adult, adult_result) -> str:
    return build_html_report(adult_result, frame=adult, dataset=DatasetRef.for_frame("adult", adult, sample=True))


def test_report_holds_the_findings_and_numbers(adult_page, adult_result) -> None:
    checker = _parse(adult_page)
    text = " ".join(" ".join(checker.text).split())
    for sentence in adult_result.sentences():
        assert sentence in text
    # the paper's Adult numbers: 13,827 White people with more than 10 years of education
    assert "13,827" in text and "6,132" in text and "48,842" in text
    assert "44.3%" in text  # White share in the filter cell, in the table
    assert f"luskin {luskin_core.__version__}" in text
    assert re.search(r"pandas \d+\.\d+", text) and re.search(r"scikit-learn \d+\.\d+", text)
    assert "education-num is above 10" in text  # the spec in words
    assert '"outcome": "income"' in text  # and as JSON
    assert "At least one comparison shows a gap larger than the tolerance." in text


def test_report_is_self_contained(adult_page) -> None:
    checker = _parse(adult_page)
    assert not [s for s in checker.scripts if s.get("src")], "no external (or any) script src"
    assert not checker.links, "no external stylesheets"
    assert not re.search(r"""<script[^>]+src\s*=\s*["']?https?:""", adult_page, re.I)
    outside_scripts = re.sub(r"<script.*?</script>", "", adult_page, flags=re.S)
    assert not re.search(r"""(?:href|src)\s*=\s*["']?(?:https?:)?//""", outside_scripts, re.I)
    # plotly.js embedded exactly once, and the audit chart drawn with it
    from plotly.offline import get_plotlyjs

    assert adult_page.count(get_plotlyjs()[:300]) == 1
    assert adult_page.count("Plotly.newPlot(") == 1
    assert 'id="luskin-chart-1"' in adult_page


def test_report_escapes_user_text() -> None:
    evil = "<script>alert('x')</script>"
    frame = pd.DataFrame({
        "outcome<b>": ["yes", "no"] * 30,
        "grp": ["A&B", "C"] * 15 + ["C", "A&B"] * 15,
        evil: [1, 2, 3] * 20,
    })
    spec = AuditSpec(outcome="outcome<b>", positive="yes", protected={"column": "grp", "op": "==", "value": "A&B"},
                     group_label=evil)
    result = audit(frame, spec)
    page = build_html_report(result, frame=frame, dataset=f"{evil}.csv", title=evil)
    _parse(page)
    outside_scripts = re.sub(r"<script.*?</script>", "", page, flags=re.S)
    assert "<script>alert" not in outside_scripts and "<b>" not in outside_scripts
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in outside_scripts
    assert "A&amp;B" in outside_scripts
    # user text inside the embedded figure JSON cannot close the script element either
    assert page.count("</script>") == page.count("<script")


def test_report_with_thresholds_and_equalized_sections(compas) -> None:
    from luskin_core.thresholds import tune_thresholds

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
    page = build_html_report(result, frame=compas, dataset="sample:compas", thresholds=thresholds,
                             equalized=sweep, equalized_alpha=0.12, options={"page": "Thresholds", "lambda": 1.0})
    checker = _parse(page)
    text = " ".join(" ".join(checker.text).split())
    assert "Per-group thresholds (classification parity)" in text
    after = thresholds.after.groups["Caucasian"]
    assert f"{100 * after.tpr:.1f}%" in text
    for group, value in thresholds.thresholds.items():
        assert f"{group}: {float(value):.4g}" in text
    assert "Equalized score distributions" in text and "Alpha shown 0.1" in text
    assert "64.1%" in text and "+15.0 pts" in text  # accuracy at alpha 0.1, TPR gap at alpha 1
    assert "(alpha = 0.1)" in page  # the histogram title of the chosen point
    assert page.count("Plotly.newPlot(") == 5  # audit, ROC, histograms, accuracy, gaps
    assert page.count("* plotly.js v") == 1
    assert '"page": "Thresholds"' in text


def test_report_accepts_a_duck_typed_retrain_result(adult, adult_result) -> None:
    class FakeRetrain:
        algorithm_name = "risk-based flipping (Algorithm 2)"
        direction = "down"
        seed = 7
        original = first = second = adult_result

        def paper_table(self) -> pd.DataFrame:
            return pd.DataFrame({"Labels": ["Original", "A1", "C2"], "AUC": [1.0, 0.9123, 0.8877]})

    page = build_html_report(adult_result, dataset="sample:adult", retrain=FakeRetrain())
    text = " ".join(" ".join(_parse(page).text).split())
    assert "Retraining to controlled fairness" in text
    assert "risk-based flipping (Algorithm 2)" in text and "0.912" in text
    assert "Verdicts for the retrained model (C2)" in text
    assert page.count("Plotly.newPlot(") == 2


@pytest.mark.slow
def test_report_with_a_real_retrain(adult, adult_result) -> None:
    from luskin_core.retrain import RetrainOptions, retrain

    preset = PRESETS["adult"]
    result = retrain(adult, preset.spec, RetrainOptions(algorithm=1, first="LR", second="LR", features=preset.features))
    page = build_html_report(adult_result, frame=adult, dataset="sample:adult", retrain=result)
    text = " ".join(" ".join(_parse(page).text).split())
    assert result.options.describe() in text
    assert f"{result.auc_second:.3f}" in text
    for sentence in result.second.sentences() + result.relabelling.sentences():
        assert " ".join(sentence.split()) in text
    assert "Gap" in text and page.count("Plotly.newPlot(") == 2


def test_report_refuses_a_missing_result() -> None:
    with pytest.raises(LuskinError, match="run the audit first"):
        build_html_report(None)  # type: ignore[arg-type]


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
    """luskin_app.state.configuration() writes kind/data.source/spec/features/options: same format."""
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
    ('{"kind": "luskin-configuration", "data": {"source": "sample:adult"},'
     ' "spec": {"outcome": "income"}}', "lacks its 'positive'"),
    ('{"kind": "luskin-configuration", "data": {"file": "x"},'
     ' "spec": {"outcome": "y", "positive": 1, "protected": "race == W"}}', "lacks 'source'"),
    ('{"kind": "luskin-configuration", "data": {"source": "sample:adult", "rows": "many"},'
     ' "spec": {"outcome": "y", "positive": 1, "protected": "race == W"}}', "not a whole number"),
    ('{"kind": "luskin-configuration", "data": {"source": "sample:adult"},'
     ' "spec": {"outcome": "y", "positive": 1, "protected": "race == W", "tolerance": 5}}', "tolerance"),
    ('{"kind": "luskin-configuration", "data": {"source": "sample:adult"},'
     ' "spec": {"outcome": "y", "positive": 1, "protected": "race W"}}', "not usable"),
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
