"""Adjusted gaps on a score read through the one score rule (issue 45/46): the model is the logistic one on "past
the cut" (strictly above the median, or at or above a cut-off: the rows the audit counts as positive), its gaps are
points of that share and its verdict the audit's tolerance in points; the score as a number is the amount's path."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import special

from luskin_cli.main import main
from luskin_core.analyses.adjust import adjust
from luskin_core.analyses.audit import audit
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.stats.comparisons import BEYOND, WITHIN


def ai_scores() -> pd.DataFrame:
    """The browser walk's score file (tests/browser/test_outcome_walks.py's ``ai_scores``): an automated tool's score
    0-100 with one decimal (ties at the median: 57.4 is held by several rows), White applicants scoring higher."""
    rng = np.random.default_rng(464)
    n = 1500
    race = rng.choice(["White", "Black", "Hispanic", "Asian"], n, p=[0.4, 0.25, 0.2, 0.15])
    sex = rng.choice(["Female", "Male"], n)
    score = np.clip(rng.normal(55, 15, n) + 8 * (race == "White"), 0, 100).round(1)
    return pd.DataFrame({"race": race, "sex": sex, "ai_score": score})


@pytest.fixture(scope="module")
def scores() -> pd.DataFrame:
    return ai_scores()


def _logit(frame: pd.DataFrame, y: np.ndarray, groups: list[str]) -> tuple[object, pd.DataFrame]:
    """statsmodels' logistic fit with the group as a factor (reference groups[0]) and sex held equal."""
    cols = {"intercept": np.ones(len(frame))}
    for g in groups[1:]:
        cols[f"group = {g}"] = (frame["race"] == g).astype(float).to_numpy()
    male_first = frame["sex"].value_counts().idxmax() == "Male"
    cols["sex"] = (frame["sex"] == ("Female" if male_first else "Male")).astype(float).to_numpy()
    X = pd.DataFrame(cols)
    return sm.Logit(y.astype(float), X).fit(method="newton", tol=1e-12, maxiter=100, disp=False), X


def _ames(fitted: object, X: pd.DataFrame, groups: list[str]) -> dict[str, float]:
    """Each group's average marginal effect from statsmodels' coefficients: the mean over every row of the predicted
    share with the group set to it minus set to the reference."""
    params = fitted.params.to_numpy()  # type: ignore[attr-defined]
    base = X.copy()
    gcols = [f"group = {g}" for g in groups[1:]]
    base[gcols] = 0.0
    out = {}
    for g, col in zip(groups[1:], gcols):
        moved = base.copy()
        moved[col] = 1.0
        out[g] = float(np.mean(special.expit(moved.to_numpy() @ params) - special.expit(base.to_numpy() @ params)))
    return out


@pytest.mark.parametrize("cutoff", [None, 60.0])
def test_the_adjusted_gap_on_a_score_is_statsmodels_logit_on_the_rows_past_the_cut(scores, cutoff):
    """Strictly above the median (57.4, held by several rows, which do not count), or at or above 60 (rows at 60.0
    count): the same rule as the audit, fitted as statsmodels' logistic model; the gaps in points of that share."""
    spec = AuditSpec("ai_score", None, outcome_type="score", score_cutoff=cutoff, group_by=("race",))
    result = adjust(scores, spec, ["sex"])
    median = float(scores["ai_score"].median())
    assert median == 57.4 and int((scores["ai_score"] == median).sum()) > 1   # ties at the median
    assert int((scores["ai_score"] == 60.0).sum()) > 1                         # ties at the cut-off
    past = (scores["ai_score"] > median) if cutoff is None else (scores["ai_score"] >= cutoff)
    groups = [result.reference] + [g.group for g in result.gaps]
    fitted, X = _logit(scores, past.to_numpy(), groups)
    expected = _ames(fitted, X, groups)
    assert result.model == "logistic"
    for gap in result.gaps:
        assert gap.adjusted_difference == pytest.approx(expected[gap.group], abs=1e-9)
        assert gap.odds_ratio == pytest.approx(np.exp(fitted.params[f"group = {gap.group}"]), rel=1e-7)
        share = past[scores["race"] == gap.group].mean() - past[scores["race"] == result.reference].mean()
        assert gap.raw_difference == pytest.approx(share, abs=1e-12)
    # about 22 to 31 points fewer past the cut than White (the old model: the mean, 8 to 10 score points fewer)
    assert all(-0.32 < g.adjusted_difference < -0.2 for g in result.gaps)


@pytest.mark.parametrize("outcome_is", ["favourable", "adverse"])
@pytest.mark.parametrize("cutoff", [None, 60.0])
def test_the_rows_counted_past_the_cut_and_the_reference_are_the_audits(scores, cutoff, outcome_is):
    """The positives per group are the audit's own count for the same specification (ties at the median not counted,
    ties at a cut-off counted), and so is the reference: the most favoured share, the lowest for an adverse score."""
    spec = AuditSpec("ai_score", None, outcome_type="score", score_cutoff=cutoff, group_by=("race",),
                     outcome_is=outcome_is)
    result = adjust(scores, spec, ["sex"])
    audited = audit(scores, spec)
    table = audited.counts
    positives = dict(zip(table.groups, table.positives.sum(axis=1).tolist()))
    sizes = dict(zip(table.groups, table.n.sum(axis=1).tolist()))
    assert result.reference == audited.reference
    assert (result.reference == "White") == (outcome_is == "favourable")   # White scores highest
    for gap in result.gaps:
        assert round(gap.rate * gap.n) == positives[gap.group] and gap.n == sizes[gap.group]
        assert round(gap.reference_rate * gap.reference_n) == positives[gap.reference]
    assert result.score_cutoff == table.score_cutoff == (57.4 if cutoff is None else cutoff)


def test_the_verdict_reads_the_audits_tolerance_in_points_of_the_share(scores):
    """Black against everyone else: about 10 points fewer past the median. Beyond the 5-point tolerance; within a
    12-point one (the old model's 3.5 score points were 'larger than the tolerance of 0.12')."""
    spec = AuditSpec("ai_score", None, outcome_type="score", protected="race == Black")
    gap = adjust(scores, spec, ["sex"]).gaps[0]
    assert -0.11 < gap.adjusted_difference < -0.09 and gap.verdict == BEYOND
    assert "larger than the 5-point tolerance" in gap.sentence and "tolerance of 0.05" not in gap.sentence
    assert "ai_score above the median (57.4) for 42.4% of Black" in gap.sentence
    wide = adjust(scores, spec.with_changes(tolerance=0.12), ["sex"]).gaps[0]
    assert wide.verdict == WITHIN and "within the 12-point tolerance" in wide.sentence


def test_a_score_spread_far_above_the_cut_is_no_gap_in_the_share(scores):
    """Group B's scores past the cut are ten times A's, but the same share of each is past it: no gap (the mean
    score's gap of hundreds of points was flagged against a tolerance of 0.05)."""
    n = 400
    frame = pd.DataFrame({"g": np.repeat(["A", "B"], n), "x": np.tile(["p", "q"], n),
                          "s": np.tile(np.repeat([10.0, 90.0], n // 2), 2)})
    frame.loc[(frame.g == "B") & (frame.s == 90.0), "s"] = 900.0
    result = adjust(frame, AuditSpec("s", None, outcome_type="score", score_cutoff=50, group_by=("g",)), ["x"])
    gap = result.gaps[0]
    assert gap.raw_difference == 0 and abs(gap.adjusted_difference) < 1e-9 and gap.verdict == WITHIN
    assert result.model == "logistic" and not result.flagged


def test_the_engine_counts_and_fits_the_same_score(scores):
    """DuckDB makes the cells with the median it computes (the audit's engine path): the same rows past it and the
    same estimates, from the cell table and from sums per key."""
    from luskin_core.counting.sources import Source

    rows = scores.assign(age=np.random.default_rng(3).integers(20, 65, len(scores)) + 0.5)
    spec = AuditSpec("ai_score", None, outcome_type="score", group_by=("race",))
    in_memory = adjust(rows, spec, ["sex", "age"])
    for cap in (None, 10):
        engine = adjust(Source.from_frame(rows), spec, ["sex", "age"], max_cells=cap)
        assert engine.model == "logistic" and engine.score_rule == in_memory.score_rule
        for a, b in zip(in_memory.gaps, engine.gaps):
            assert (a.group, a.n, a.rate, a.verdict) == (b.group, b.n, b.rate, b.verdict)
            assert b.adjusted_difference == pytest.approx(a.adjusted_difference, abs=1e-9)


def test_the_command_line_says_which_rule_made_the_outcome(scores, tmp_path, capsys):
    """``luskin adjust`` on a number without --positive reads it by the score rule and says so, in the text and the
    JSON; --amount models the number itself (the amounts' path, untouched)."""
    path = tmp_path / "score.csv"
    scores.to_csv(path, index=False)
    args = ["adjust", "--data", str(path), "--outcome", "ai_score", "--protected", "race == Black", "--controls", "sex"]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "logistic model of ai_score above the median (57.4)" in text
    assert "counted as positive by the audit's rule for this score" in text
    assert "larger than the 5-point tolerance" in text and "tolerance of 0.05" not in text
    assert main([*args, "--score-cutoff", "60", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["model"] == "logistic" and document["score_cutoff"] == 60
    assert document["score_rule"] == "ai_score at or above 60" and document["outcome"] == "ai_score at or above 60"
    assert main(["adjust", "--data", str(path), "--amount", "ai_score", "--protected", "race == Black", "--controls",
                 "sex", "--json"]) == 0
    amount = json.loads(capsys.readouterr().out)
    assert amount["model"] == "linear" and amount["score_rule"] is None
    assert -3.6 < amount["adjusted"][0]["adjusted_difference"] < -3.4   # the mean score, in score points


def test_the_report_section_names_the_rule(scores):
    from luskin_core.present.adjust_report import adjusted_section

    result = adjust(scores, AuditSpec("ai_score", None, outcome_type="score", protected="race == Black"), ["sex"])
    settings = dict(adjusted_section(result).blocks[0]["items"])
    assert settings["Outcome modelled"].startswith("ai_score above the median (57.4)")
