"""Findings ranked by what a committee must know (issue 16): the same story on every surface."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.contingency_tables import StratifiedTable

from luskin_core.audit import audit
from luskin_core.findings import BEYOND_PART, OVERALL, REST, WITHIN_PARTS, findings
from luskin_core.spec import AuditSpec

FIXTURES = Path(__file__).parent / "fixtures"
BERKELEY_SPEC = AuditSpec("decision", "admitted", group_by=("sex",), strata=("department",))


@pytest.fixture(scope="module")
def berkeley() -> pd.DataFrame:
    counts = pd.read_csv(FIXTURES / "ucb_admissions.csv")
    rows = []
    for r in counts.itertuples():
        rows += [(r.department, r.sex, "admitted")] * r.admitted + [(r.department, r.sex, "rejected")] * r.rejected
    return pd.DataFrame(rows, columns=["department", "sex", "decision"]).astype("string")


@pytest.fixture(scope="module")
def berkeley_result(berkeley):
    return audit(berkeley, BERKELEY_SPEC)


def test_berkeley_story_overall_then_within_then_department_a(berkeley, berkeley_result):
    found = findings(berkeley_result)
    kinds = [f.kind for f in found]
    assert kinds[:3] == [OVERALL, WITHIN_PARTS, BEYOND_PART] and set(kinds[3:]) == {REST}
    first, within, dept_a = found.items[:3]
    assert "30% of Female and 45% of Male" in first.sentence and first.favoured == "Male"
    assert "Male favoured by 14 points" in first.sentence
    # the pooled odds ratio is statsmodels' Mantel-Haenszel estimate on the same tables
    tables = []
    for _, part in berkeley.groupby("department"):
        t = pd.crosstab(part["sex"] == "Female", part["decision"] == "admitted").reindex(
            index=[True, False], columns=[True, False]).to_numpy()
        tables.append(t)
    st = StratifiedTable(np.dstack(tables).astype(float))
    low, high = st.oddsratio_pooled_confint()
    assert f"pooled odds ratio {st.oddsratio_pooled:.2f}, 95% CI {low:.2f} to {high:.2f}" in within.sentence
    assert "pooled odds ratio 1.11, 95% CI 0.94 to 1.30" in within.sentence
    assert within.sentence.startswith("Within departments, no gap") and "Simpson's paradox" in within.sentence
    assert dept_a.part == "department = A" and dept_a.favoured == "Female"
    assert dept_a.sentence.startswith("In department A, Female favoured") and "82% of Female and 62% of Male" in \
        dept_a.sentence
    rest = [f.sentence for f in found.of_kind(REST)]
    assert "In the other 4 departments (C, D, E, F), the gap is under 5 points." in rest
    assert any(s.startswith("In department B, too few rows") for s in rest)


def test_beyond_findings_run_largest_gap_first_and_say_who_is_favoured(adult):
    result = audit(adult, AuditSpec("income", ">50K", group_by=("race", "sex"), strata=("relationship",)))
    beyond = findings(result).of_kind(BEYOND_PART)
    sizes = [abs(f.difference) for f in beyond]
    assert len(beyond) >= 3 and sizes == sorted(sizes, reverse=True)
    for f in beyond:
        c = result.comparison(f.group, f.part)
        assert c.verdict == "beyond tolerance"
        assert f.favoured == (c.group if c.rate > c.reference_rate else c.reference)
        assert f.sentence.split(",")[1].strip().startswith(f"{f.favoured} favoured")


def test_without_strata_the_overall_answer_is_the_largest_group_gap_and_the_rest_is_grouped(adult):
    result = audit(adult, AuditSpec("income", ">50K", group_by=("race",)))
    found = findings(result)
    largest = max(result.pooled, key=lambda p: abs(p.marginal_difference))
    assert found.items[0].kind == OVERALL and found.items[0].group == largest.group
    assert not found.of_kind(WITHIN_PARTS)
    said = {f.group for f in found if f.group}
    assert said | {r for f in found.of_kind(REST) for r in result.groups if r in f.sentence} >= \
        set(result.groups) - {result.reference}


def test_cli_text_and_json_carry_the_findings_in_order(berkeley, tmp_path, capsys):
    from luskin_core.cli import main

    path = tmp_path / "berkeley.csv"
    berkeley.to_csv(path, index=False)
    args = ["audit", "--data", str(path), "--outcome", "decision", "--positive", "admitted", "--groups", "sex",
            "--stratify", "department"]
    assert main(args) == 0
    text = capsys.readouterr().out
    numbered = re.findall(r"^(\d)\. (.*)$", text, flags=re.MULTILINE)
    assert [n for n, _ in numbered][:3] == ["1", "2", "3"]
    assert "30% of Female and 45% of Male" in numbered[0][1] and "1.11" in numbered[1][1]
    assert numbered[2][1].startswith("In department A, Female favoured")
    assert main(args + ["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [f["kind"] for f in out["findings"]][:3] == ["overall", "within", "beyond"]


def test_report_first_page_and_verdict_slide_tell_the_story(berkeley, berkeley_result):
    from luskin_core.report import build_html_report
    from luskin_core.slides import build_slides

    page = build_html_report(berkeley_result, frame=berkeley, dataset="ucb_admissions.csv")
    summary = unescape(re.sub(r"<[^>]+>", " ", page.split('<section id="audit"')[0]))
    summary = " ".join(summary.split())
    found = findings(berkeley_result).sentences()
    positions = [summary.find(s) for s in found[:3]]
    assert -1 not in positions and positions == sorted(positions)
    slides = build_slides(berkeley_result, dataset="ucb_admissions.csv")
    verdict = next(s for s in slides if s.kind == "verdict")
    assert verdict.sentences == tuple(found[:3])
