"""``luskin audit`` with groups, references, strata, metrics and scores (issue 8's command line)."""

from __future__ import annotations

import json

import pytest

from luskin_cli.main import main
from luskin_core.analyses.audit import audit
from luskin_core.counting.data import PRESETS, load_sample
from luskin_core.spec.audit_spec import AuditSpec

COMPARISON_KEYS = {"group", "cell", "n", "positives", "rate", "ci_low", "ci_high", "reference", "difference",
                   "difference_ci_low", "difference_ci_high", "impact_ratio", "p_value", "p_adjusted", "verdict",
                   "four_fifths"}
POOLED_KEYS = {"group", "marginal_difference", "marginal_impact_ratio", "weighted_difference", "mh_odds_ratio",
               "mh_ci_low", "mh_ci_high", "cmh_p_value", "breslow_day_p_value", "simpson"}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def test_groups_json_has_every_comparison_and_pooled_field(capsys) -> None:
    status, out, err = run(capsys, "audit", "--preset", "adult", "--groups", "race", "--groups", "sex",
                           "--stratify", "education", "--json")
    assert status == 0, err
    document = json.loads(out)
    comparisons, pooled = document["comparisons"], document["pooled"]
    assert comparisons and all(COMPARISON_KEYS <= set(c) for c in comparisons)
    assert pooled and all(POOLED_KEYS <= set(p) for p in pooled)
    reference = comparisons[0]["reference"]
    assert any(c["group"] == reference for c in comparisons)                 # the reference is listed too
    assert all(" × " in c["group"] for c in comparisons if c["group"] != "Unknown")
    assert {p["group"] for p in pooled} == {c["group"] for c in comparisons} - {reference}
    # the same numbers as the library
    spec = PRESETS["adult"].spec.with_changes(protected=None, group_label=None, other_label=None,
                                              group_by=("race", "sex"), strata=("education",), filters=(),
                                              filter_label=None, not_filter_label=None)
    expected = audit(load_sample("adult"), spec).to_dict()
    assert document["comparisons"] == json.loads(json.dumps(expected["comparisons"]))


def test_reference_metric_and_correction_are_applied(capsys) -> None:
    status, out, err = run(capsys, "audit", "--data", "sample:compas", "--outcome", "two_year_recid",
                           "--positive", "1", "--groups", "race", "--reference", "Caucasian", "--metric", "ratio",
                           "--correction", "bh", "--min-group-size", "50", "--json")
    assert status == 0, err
    document = json.loads(out)
    assert {c["reference"] for c in document["comparisons"]} == {"Caucasian"}
    spec = document["spec"]
    assert (spec["metric"], spec["correction"], spec["min_group_size"]) == ("ratio", "bh", 50)
    small = [c for c in document["comparisons"] if c["n"] < 50]
    assert small and all(c["verdict"] == "too few rows" for c in small)


def test_score_outcome_counts_the_share_at_or_above_the_cutoff(capsys) -> None:
    status, out, err = run(capsys, "audit", "--data", "sample:compas", "--outcome", "decile_score", "--groups",
                           "race", "--score-cutoff", "5")
    assert status == 0, err
    assert "decile_score at or above 5" in out
    frame = load_sample("compas")
    result = audit(frame, AuditSpec(outcome="decile_score", group_by=("race",), outcome_type="score",
                                    score_cutoff=5.0))
    first = result.comparisons[0]
    share = (frame.loc[frame["race"] == first.group, "decile_score"] >= 5).mean()
    assert first.rate == pytest.approx(share)


def test_text_output_sets_the_overall_gap_beside_the_gap_within_strata(capsys) -> None:
    status, out, _ = run(capsys, "audit", "--preset", "compas", "--groups", "race", "--stratify", "priors_count",
                         "--bins", "priors_count=1,3,10")
    assert status == 0
    assert "Overall vs within the cells" in out and "CMH p" in out
    assert "priors_count" in out


@pytest.mark.parametrize("argv, words", [
    (["--preset", "adult", "--groups", "race", "--protected", "sex == Male"], "Choose one way to form groups"),
    (["--preset", "adult", "--stratify", "sex", "--filter", "age > 30"], "Choose one way to compare like with like"),
    (["--preset", "adult", "--stratify", "age", "--bins", "age=young"], "must be numbers"),
    (["--preset", "adult", "--stratify", "age", "--bins", "25,40"], "COLUMN=CUT"),
    (["--preset", "adult", "--groups", "colour"], "colour"),
    (["--preset", "adult", "--metric", "odds"], "invalid choice"),
    (["--preset", "adult", "--groups", "race", "--reference", "Martian"], "Martian"),
    (["--preset", "adult", "--groups", "race", "--groups", "race"], "race"),
    (["--data", "sample:adult", "--outcome", "income", "--positive", ">50K"], "or group by the values of a column"),
    (["--preset", "adult", "--score", "--positive", ">50K"], "A score outcome has no positive value"),
])
def test_mistakes_are_one_plain_sentence(capsys, argv: list[str], words: str) -> None:
    status, out, err = run(capsys, "audit", *argv)
    assert status == 2, out
    assert words in err and "Traceback" not in err and err.count("\n") == 1


def test_predictions_are_audited_with_error_rates(capsys) -> None:
    status, out, err = run(capsys, "audit", "--data", "sample:compas", "--outcome", "two_year_recid",
                           "--positive", "1", "--groups", "race", "--predictions", "is_recid", "--json")
    assert status == 0, err
    document = json.loads(out)
    rates = document["comparisons"][0]["error_rates"]
    assert {"tpr", "fpr", "fnr", "precision"} <= set(rates)
    status, out, _ = run(capsys, "audit", "--data", "sample:compas", "--outcome", "two_year_recid",
                         "--positive", "1", "--groups", "race", "--predictions", "is_recid")
    assert "'is_recid' predicts two_year_recid is 1" in out


def test_an_unknown_column_names_the_closest_and_lists_every_column(capsys) -> None:
    status, _, err = run(capsys, "audit", "--data", "sample:compas", "--outcome", "two_year_recid", "--positive",
                         "1", "--protected", "rac == x")
    assert status == 2 and "Did you mean 'race'?" in err
    status, _, err = run(capsys, "audit", "--data", "sample:compas", "--outcome", "two_year_recid", "--positive",
                         "1", "--protected", "zzzz == x")
    assert status == 2
    for column in load_sample("compas").columns:          # all 53, not the first 12
        assert str(column) in err


def test_the_heading_ratio_names_only_the_impact_ratio(capsys) -> None:
    """A protected condition's table heads the share positive "share (%)", as the groups' table does, where the impact
    ratio is "impact ratio": one word never means two numbers (issue 45)."""
    status, out, err = run(capsys, "audit", "--preset", "adult")
    assert status == 0, err
    head = next(line for line in out.splitlines() if line.lstrip().startswith("cell") and "95% CI" in line)
    assert head.split()[:7] == ["cell", "group", "n", "positive", "share", "(%)", "[95%"], head
    status, out, err = run(capsys, "audit", "--data", "sample:compas", "--outcome", "two_year_recid",
                           "--positive", "0", "--groups", "race", "--min-group-size", "50")
    assert status == 0, err
    head = next(line for line in out.splitlines() if line.lstrip().startswith("cell") and "share" in line)
    assert "impact ratio" in head and "ratio" not in head.replace("impact ratio", "")  # beside the gap


def test_a_protected_condition_gives_the_gap_once_on_the_groups_row(capsys) -> None:
    """COMPAS, African-American against Caucasian: the table repeated the gap, its p-values and 'NOT fair beyond
    tolerance' on the reference's own row, as if Caucasian were judged against itself."""
    assert main(["audit", "--preset", "compas"]) == 0
    rows = {line.split("  ")[1].strip(): line for line in capsys.readouterr().out.splitlines()
            if line.startswith("All rows  ")}
    assert "+12.1" in rows["African-American"] and "beyond tolerance" in rows["African-American"]
    reference = rows["Caucasian (ref)"]
    assert reference.rstrip().endswith("39.4 [37.4, 41.3]") and "tolerance" not in reference
