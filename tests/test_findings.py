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

from luskin_core.analyses.audit import audit
from luskin_core.analyses.findings import BEYOND_PART, OVERALL, REST, WITHIN_PARTS, Finding, Findings, findings
from luskin_core.spec.audit_spec import AuditSpec

FIXTURES = Path(__file__).parent / "fixtures"
BERKELEY_SPEC = AuditSpec("decision", "admitted", group_by=("sex",), strata=("department",))


def of_kind(found: Findings, kind: str) -> list[Finding]:
    """The findings of one kind, in their order."""
    return [f for f in found.items if f.kind == kind]


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


def test_berkeley_story_within_first_then_overall_then_department_a(berkeley, berkeley_result):
    """Issue 27: the within-department result contradicts the overall one, so it is said first, with its lean."""
    found = findings(berkeley_result)
    kinds = [f.kind for f in found]
    assert kinds[:3] == [WITHIN_PARTS, OVERALL, BEYOND_PART] and set(kinds[3:]) == {REST}
    within, first, dept_a = found.items[:3]
    assert found.headline == within.sentence
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
    assert within.sentence.startswith("Within departments, decision is admitted slightly more often for Female than "
                                      "for Male (pooled odds ratio 1.11")
    assert "could be chance" in within.sentence and "Simpson's paradox" in within.sentence
    assert "the overall gap of 14 points favouring Male comes from which departments" in within.sentence
    assert within.favoured == "Female"
    assert dept_a.part == "department = A" and dept_a.favoured == "Female"
    assert dept_a.sentence.startswith("In department A, Female favoured") and "82% of Female and 62% of Male" in \
        dept_a.sentence
    rest = [f.sentence for f in of_kind(found, REST)]
    assert "In the other 4 departments (C, D, E, F), the gap is under 5 points." in rest
    assert any(s.startswith("In department B, too few rows") for s in rest)


def test_beyond_findings_run_largest_gap_first_and_say_who_is_favoured(adult):
    result = audit(adult, AuditSpec("income", ">50K", group_by=("race", "sex"), strata=("relationship",)))
    beyond = of_kind(findings(result), BEYOND_PART)
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
    assert not of_kind(found, WITHIN_PARTS)
    said = {f.group for f in found if f.group}
    assert said | {r for f in of_kind(found, REST) for r in result.groups if r in f.sentence} >= \
        set(result.groups) - {result.reference}


def test_cli_text_and_json_carry_the_findings_in_order(berkeley, tmp_path, capsys):
    from luskin_cli.main import main

    path = tmp_path / "berkeley.csv"
    berkeley.to_csv(path, index=False)
    args = ["audit", "--data", str(path), "--outcome", "decision", "--positive", "admitted", "--groups", "sex",
            "--stratify", "department"]
    assert main(args) == 0
    text = capsys.readouterr().out
    numbered = re.findall(r"^(\d)\. (.*)$", text, flags=re.MULTILINE)
    assert [n for n, _ in numbered][:3] == ["1", "2", "3"]
    assert "1.11" in numbered[0][1] and "30% of Female and 45% of Male" in numbered[1][1]
    assert numbered[2][1].startswith("In department A, Female favoured")
    assert main(args + ["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [f["kind"] for f in out["findings"]][:3] == ["within", "overall", "beyond"]


def test_report_first_page_and_verdict_slide_tell_the_story(berkeley, berkeley_result):
    from luskin_core.present.report import build_html_report
    from luskin_core.present.slides import build_slides

    page = build_html_report([berkeley_result], frame=berkeley, dataset="ucb_admissions.csv")
    summary = unescape(re.sub(r"<[^>]+>", " ", page.split('<section id="audit"')[0]))
    summary = " ".join(summary.split())
    found = findings(berkeley_result).sentences()
    positions = [summary.find(s) for s in found[:3]]
    assert -1 not in positions and positions == sorted(positions)
    slides = build_slides([berkeley_result], dataset="ucb_admissions.csv")
    verdict = next(s for s in slides if s.kind == "verdict")
    assert len(verdict.sentences) >= 2 and verdict.sentences == tuple(found[:len(verdict.sentences)])


# ------------------------------------------------------------------------------------------
# Favourable or adverse; names people use
# ------------------------------------------------------------------------------------------
def test_an_adverse_outcome_favours_the_lower_share_and_the_four_fifths_rule_uses_favourable_shares(berkeley):
    spec = AuditSpec("decision", "rejected", group_by=("sex",), strata=("department",), outcome_is="adverse")
    result = audit(berkeley, spec)
    assert result.reference == "Male"   # the most favoured group: the fewest rejections
    found = findings(result)
    overall = of_kind(found, OVERALL)[0]
    assert overall.favoured == "Male" and "70% of Female and 55% of Male" in overall.sentence
    # within departments women are rejected slightly less often: the lead says so, and favours them
    lead = found.items[0]
    assert lead.kind == WITHIN_PARTS and lead.favoured == "Female"
    assert "slightly more often for Male than for Female" in lead.sentence
    dept_a = of_kind(found, BEYOND_PART)[0]
    assert dept_a.favoured == "Female" and dept_a.sentence.startswith("In department A, Female favoured")
    c = result.comparison("Female", "department = A")
    assert c.impact_ratio == pytest.approx((1 - c.rate) / (1 - c.reference_rate))
    assert c.four_fifths is False   # admitted 82% vs 62%: no adverse impact on women in A
    overall = result.pooled[0]
    assert overall.marginal_impact_ratio == pytest.approx((1 - overall.marginal_rate) /
                                                         (1 - overall.reference_marginal_rate))
    # the same audit counted the favourable way gives the same impact ratios
    same = audit(berkeley, AuditSpec("decision", "admitted", group_by=("sex",), strata=("department",)))
    assert same.comparison("Female", "department = A").impact_ratio == pytest.approx(c.impact_ratio)
    assert same.pooled[0].marginal_impact_ratio == pytest.approx(overall.marginal_impact_ratio)


def test_outcome_meaning_and_value_names_are_saved_and_old_files_load():
    spec = AuditSpec("default", 1, protected="sex == 1", outcome_is="adverse", value_names={"sex": {1: "male",
                                                                                                    "2": "female"}})
    again = AuditSpec.from_json(spec.to_json())
    assert again == spec and again.outcome_is == "adverse" and again.group_name == "male"
    old = json.loads(spec.to_json())
    del old["outcome_is"], old["value_names"]
    assert AuditSpec.from_dict(old).outcome_is == "favourable"
    from luskin_core.errors import LuskinError

    with pytest.raises(LuskinError, match="favourable"):
        AuditSpec("default", 1, protected="sex == 1", outcome_is="bad")


@pytest.mark.parametrize("outcome, positive, meaning", [
    ("default", 1, "adverse"), ("decision", "denied", "adverse"), ("two_year_recid", 1, "adverse"),
    ("frisked", "Y", "adverse"), ("arrested", "yes", "adverse"), ("credit_risk", "bad", "adverse"),
    ("decision", "rejected", "adverse"), ("income", ">50K", "favourable"), ("pass_bar", 1, "favourable"),
    ("decision", "admitted", "favourable"), ("hired", 1, "favourable"), ("default", 0, "favourable"),
])
def test_adverse_outcomes_are_guessed_from_names_and_values(outcome, positive, meaning):
    from luskin_core.spec.guess import guess_outcome_is

    assert guess_outcome_is(outcome, positive).value == meaning


def test_the_other_group_is_named_by_its_value_or_everyone_else(berkeley, adult):
    result = audit(berkeley, AuditSpec("decision", "admitted", protected="sex == Female"))
    assert result.groups == ("Female", "Male")
    assert "Non-Female" not in " ".join(findings(result).sentences())
    assert AuditSpec("income", ">50K", protected="race == Non-White").other_name == "everyone else"
    assert audit(adult, AuditSpec("income", ">50K", protected="race == Black")).groups == ("Black", "everyone else")
    two = pd.DataFrame({"race": ["White", "Non-White"] * 40, "y": [1, 0, 0, 1] * 20})
    assert audit(two, AuditSpec("y", 1, protected="race == Non-White")).groups == ("Non-White", "White")
    # a name the user typed wins
    assert audit(two, AuditSpec("y", 1, protected="race == Non-White", other_label="Whites")).groups[1] == "Whites"


def test_value_names_replace_codes_on_every_group_and_part(berkeley):
    coded = berkeley.assign(sex=berkeley["sex"].map({"Female": "2", "Male": "1"}))
    names = {"sex": {"1": "men", "2": "women"}, "department": {"A": "Engineering"}}
    result = audit(coded, AuditSpec("decision", "admitted", group_by=("sex",), strata=("department",),
                                    value_names=names))
    assert set(result.groups) == {"men", "women"}
    assert "department = Engineering" in result.cell_names
    first = findings(result).items
    assert "30% of women and 45% of men" in first[1].sentence and "for women than for men" in first[0].sentence
    assert any(f.sentence.startswith("In department Engineering, women favoured") for f in first)
