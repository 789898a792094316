"""One judgement on every surface (issue 45): awkward tables judged alike by the audit's JSON, the command line's
text, the EEOC and Local Law 144 tables, the page's tables, the report and the slides.

Each awkward table sits at an edge a regulator reads: a ratio of exactly 4/5 and one step either side of it, an
adverse outcome with strata that reverse the overall gap (Florida's death-penalty cases, as the Radelet tables
have them), a zero cell, groups of unknown category, and a score column against its median. For each, the
surfaces must agree on the numbers and verdicts of the same comparison, and be right (the four-fifths rule in
exact arithmetic, UGESP 1607.4D; power on the favourable share, against statsmodels).
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_inproc import run_in_process

from luskin_core.analyses.audit import AuditResult, audit, result_from_counts
from luskin_core.analyses.findings import findings
from luskin_core.analyses.regulator_eeoc import eeoc_part
from luskin_core.analyses.regulator_ll144 import ll144_audit, ll144_from_count_table
from luskin_core.counting.count_table import CountTable
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.stats.judgement import FOUR_FIFTHS, Judgement, ReferenceRule
from luskin_core.stats.verdict import Verdict


def _rows(*groups: tuple[str, int, int], column: str = "group", outcome: str = "hired",
          extra: dict[str, str] | None = None) -> pd.DataFrame:
    """A frame with ``n`` rows per group of which ``k`` have the outcome 1."""
    parts = []
    for name, n, k in groups:
        part = pd.DataFrame({column: [name] * n, outcome: [1] * k + [0] * (n - k)})
        for key, value in (extra or {}).items():
            part[key] = value
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def _table(groups: list[str], n: list[int], k: list[int]) -> CountTable:
    """A one-cell count table with exactly these counts (for counts no CSV could hold)."""
    return CountTable(groups=tuple(groups), cell_keys=(None,), cell_labels=("All rows",),
                      n=np.array(n, dtype=np.int64)[:, None], positives=np.array(k, dtype=np.int64)[:, None],
                      excluded={}, n_excluded=0)


def _exact_below(k: int, n: int, rk: int, rn: int) -> bool:
    """The Uniform Guidelines' 'less than four-fifths', in fractions (the oracle: no float anywhere)."""
    return Fraction(k, n) < FOUR_FIFTHS * Fraction(rk, rn)


# ------------------------------------------------------------------------------------------
# Four-fifths at exactly 4/5 and one step either side
# ------------------------------------------------------------------------------------------
EDGES = {  # group (k of n) against the reference (k of n): the ratio exactly, and as close to 4/5 as counts go
    "exactly 4/5": ((20, 60), (100, 240)),          # float: 0.7999999999999999
    "just below": ((4 * 10**16 - 1, 10**17), (5 * 10**16, 10**17)),   # float: 0.8
    "just above": ((4 * 10**16 + 1, 10**17), (5 * 10**16, 10**17)),
}


# Counts of 10**17 are the only way to put a ratio one float step from 4/5; at them scipy's fisher_exact multiplies
# int64 counts and overflows (its p-value column is not what this test reads). No table of people reaches 3e9 rows.
@pytest.mark.filterwarnings("ignore:overflow encountered in scalar multiply:RuntimeWarning",
                            "ignore:invalid value encountered in scalar divide:RuntimeWarning")
@pytest.mark.parametrize("edge", sorted(EDGES))
def test_four_fifths_is_exact_and_the_same_in_the_audit_eeoc_and_ll144(edge: str) -> None:
    (k, n), (rk, rn) = EDGES[edge]
    expected = _exact_below(k, n, rk, rn)
    spec = AuditSpec("hired", 1, group_by=("group",), reference="B")
    result = result_from_counts(_table(["A", "B"], [n, rn], [k, rk]), spec, source="counts")
    compared = result.comparison("A")
    assert compared.four_fifths is expected
    assert result.to_dict()["comparisons"][0]["four_fifths"] is expected
    eeoc = eeoc_part(result).rows
    assert [(r.group, r.reference, r.below_four_fifths) for r in eeoc] == [("A", "B", expected)]
    ll144 = ll144_from_count_table(result.counts, sex_column="group", race_column="", outcome="hired",
                                   absent=("race_ethnicity",))
    row = next(r for t in ll144.tables for r in t.rows if r.category == "A")
    assert row.below_four_fifths is expected
    # the ratio metric's bar is the same arithmetic: exactly 4/5 is within the 0.8 threshold
    ratio = result_from_counts(result.counts, spec.with_changes(metric="ratio"), source="counts")
    assert (ratio.comparison("A").judged_rates[0].within is False) is expected
    words = " ".join(findings(result).sentences())
    assert ("below four-fifths" in words) is expected, words


def test_exactly_four_fifths_reads_the_same_in_the_text_json_and_eeoc_of_the_command_line(tmp_path: Path) -> None:
    """20 of 60 against 100 of 240: the table said 'below' and the EEOC table 'passes' (issue 45)."""
    path = tmp_path / "edge.csv"
    _rows(("A", 60, 20), ("B", 240, 100)).to_csv(path, index=False)
    args = ["audit", "--data", str(path), "--outcome", "hired", "--positive", "1", "--groups", "group"]
    status, text, err = run_in_process(args)
    assert status == 0, err
    header, row = next((lines[0], lines[2]) for lines in [text.splitlines()[i:i + 3]
                                                         for i in range(len(text.splitlines()))]
                       if lines and lines[0].startswith("cell ") and "4/5" in lines[0])
    assert row.startswith("all rows  A")
    assert row[header.index("4/5"):].strip() == ""        # not "below"
    status, out, _ = run_in_process([*args, "--json"])
    document = json.loads(out)
    assert document["comparisons"][0]["four_fifths"] is False
    assert document["judgement"]["rules"]["four_fifths"].startswith("below when 5 * favourable")
    assert all(c["rule"] for c in document["comparisons"])
    status, out, _ = run_in_process([*args, "--template", "eeoc"])
    assert status == 0 and "- A against B: passes four-fifths (impact ratio 0.80)" in out


# ------------------------------------------------------------------------------------------
# An adverse outcome with strata: Florida's death-penalty cases
# ------------------------------------------------------------------------------------------
def florida() -> pd.DataFrame:
    """Death sentences by the defendant's and the victim's race (white victims: 17 of 151 white defendants and 11
    of 48 black ones; black victims: 0 of 16 and 6 of 143): the overall gap reverses within the strata."""
    cells = [("White", "White", 151, 17), ("Black", "White", 48, 11), ("White", "Black", 16, 0),
             ("Black", "Black", 143, 6)]
    parts = [pd.DataFrame({"defendant_race": [d] * n, "victim_race": [v] * n,
                           "death_penalty": ["Yes"] * k + ["No"] * (n - k)}) for d, v, n, k in cells]
    return pd.concat(parts, ignore_index=True)


FLORIDA = AuditSpec("death_penalty", "Yes", protected="defendant_race == Black", strata=("victim_race",),
                    outcome_is="adverse")


def test_an_adverse_outcome_keeps_the_protected_group_compared_with_the_rest() -> None:
    """Marking the outcome adverse made the protected group the reference (issue 45): the protected class is
    compared with the rest whichever fares better, and the header, the table and the verdict say so alike."""
    result = audit(florida(), FLORIDA)
    assert result.reference == "White" and result.judgement.reference_rule is ReferenceRule.REST
    assert result.groups_text == "Black vs White"
    assert {c.group for c in result.judged} == {"Black"}
    favourable = audit(florida(), FLORIDA.with_changes(outcome_is="favourable"))
    assert favourable.reference == "White"       # the direction does not move the reference
    assert result.to_dict()["judgement"]["reference_rule"] == "the rest"


def test_an_adverse_outcome_measures_power_on_the_favourable_share() -> None:
    """'16 rows, no drop is detectable' was computed on the harmful share (issue 45): the detectable gap is a
    drop below the reference's share spared, as statsmodels' NormalIndPower gives it."""
    from statsmodels.stats.power import NormalIndPower

    result = audit(florida(), FLORIDA.with_changes(protected="defendant_race == White"))
    small = next(c for c in result.judged if c.cell == "victim_race = Black")
    assert (small.group, small.n, small.reference, small.reference_n) == ("White", 16, "Black", 143)
    spared = 137 / 143
    h = NormalIndPower().solve_power(effect_size=None, nobs1=16, alpha=0.05, power=0.8, ratio=143 / 16)
    drop = spared - np.sin(np.arcsin(np.sqrt(spared)) - h / 2) ** 2
    assert small.uniform is not None
    assert small.uniform.minimum_detectable_difference == pytest.approx(drop, abs=1e-6)
    line = next(x for x in result.sufficiency_lines() if "White where victim_race = Black" in x)
    assert "no drop is detectable" not in line and f"detectable gap {round(100 * drop)} points" in line


def test_each_stratum_of_the_eeoc_table_is_judged_against_its_own_highest_rate() -> None:
    """Every stratum was judged against the overall most favoured group, so Black defendants where the victim was
    white (77.1% spared against 88.7%, ratio 0.87) were never assessed (issue 45)."""
    result = audit(florida(), FLORIDA.with_changes(protected=None, group_by=("defendant_race",)))
    rows = {(r.group, r.cell): r for r in eeoc_part(result).rows}
    white_victims = rows[("Black", "victim_race = White")]
    assert white_victims.reference == "White"
    assert white_victims.rate == pytest.approx(37 / 48) and white_victims.reference_rate == pytest.approx(134 / 151)
    assert white_victims.impact_ratio == pytest.approx((37 / 48) / (134 / 151))
    assert white_victims.below_four_fifths is False and white_victims.shortfall_parity == 6
    assert white_victims.sentence.startswith("In victim_race = White, Black against White: ")


def test_a_significant_gap_within_the_strata_is_never_called_no_different_treatment() -> None:
    """The Simpson sentence said the overall gap comes 'not from different treatment within them' right after a
    within-stratum gap that is significant (CMH p = 0.029 here): headline, findings, sentences and slides."""
    from luskin_core.present.slides import build_slides

    result = audit(florida(), FLORIDA)
    pooled = result.pooled[0]
    assert pooled.simpson and result.judgement.significant(pooled.cmh_p_value)
    texts = [result.headline(), *result.sentences(), *findings(result).sentences()]
    texts += [s for slide in build_slides([result]) for s in (slide.title, *slide.sentences)]
    assert not [t for t in texts if "not from different treatment" in t]
    assert any("White is favoured inside them" in t for t in findings(result).sentences())


# ------------------------------------------------------------------------------------------
# Unknown categories, a zero cell, a score against its median
# ------------------------------------------------------------------------------------------
def test_unknown_categories_get_no_four_fifths_verdict_and_no_sufficiency_line() -> None:
    frame = _rows(("Female", 400, 160), ("Male", 400, 164), ("Decline to self-identify", 200, 60), column="sex")
    frame.loc[frame.index[:30], "sex"] = None
    result = audit(frame, AuditSpec("hired", 1, group_by=("sex",)))
    part = eeoc_part(result)
    assert {r.group for r in part.rows} == {"Female"}
    assert any("Decline to self-identify" in line and "not judged" in line for line in part.unknown_lines)
    assert not [s for s in result.sufficiency_lines() if "Unknown" in s or "Decline" in s]


def test_a_group_of_unknown_category_gets_no_verdict_on_any_surface() -> None:
    """Headline and findings set 'Unknown' apart, but its rows still read 'beyond tolerance but could be chance'
    in the command line's, the page's and the report's tables, the pooled tables marked its Simpson 'YES', and the
    detail sentences said 'the overall gap comes from which strata each group falls in' and what 60 Unknown rows
    could detect. Every surface now shows its numbers and says it is set apart."""
    from luskin_app.audit_view import comparison_table, pooled_table
    from luskin_cli.audit import format_audit
    from luskin_core.present.report import build_html_report

    parts = []
    for site, groups in (("x", (("A", 200, 40), ("B", 200, 80), ("C", 50, 20), ("Unknown", 60, 30))),
                         ("y", (("A", 150, 60), ("B", 150, 45), ("C", 40, 10)))):
        parts.append(_rows(*groups, outcome="denied", extra={"site": site}))
    frame = pd.concat(parts, ignore_index=True)
    spec = AuditSpec("denied", 1, group_by=("group",), reference="B", strata=("site",), outcome_is="adverse")
    result = audit(frame, spec)
    assert result.unknown_groups == ("Unknown",)
    unknown = [c for c in result.comparisons if c.group == "Unknown"]
    assert any(c.verdict == Verdict.CHANCE for c in unknown)   # what it would be, were it counted
    text = format_audit(result)
    rows = [line for line in text.splitlines() if line.startswith("site = ") and " Unknown " in line]
    assert rows and all("set apart: unknown category" in r and "could be chance" not in r for r in rows), rows
    pooled_row = next(line for line in text.splitlines() if line.startswith("Unknown "))
    assert pooled_row.rstrip().endswith("apart"), pooled_row
    page = comparison_table(result)
    assert set(page.loc[page["Group"] == "Unknown", "Verdict"]) == {"apart"}
    assert set(pooled_table(result).set_index("Group")["Simpson"][["Unknown"]]) == {"apart"}
    words = result.sentences() + result.power_sentences()
    about = [w for w in words if "Unknown" in w]
    assert len(about) == 1 and "set apart, with no verdict of its own" in about[0], about
    assert not [p for p in result.simpson if p.group == "Unknown"]
    html = build_html_report([result])
    assert "set apart: unknown category" in html and "Simpson's paradox: Overall, denied is 1 for 50% of Unknown" \
        not in html


def test_the_ll144_sufficiency_list_counts_no_cell_of_unknown_category() -> None:
    from luskin_core.analyses.regulator_ll144 import build_ll144
    from luskin_core.analyses.regulator_tables import RegulatorChoices

    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"sex": rng.choice(["Male", "Female", "Unknown"], 900, p=[0.45, 0.45, 0.1]),
                          "race": rng.choice(["White", "Black", "Decline to self-identify"], 900, p=[0.6, 0.3, 0.1]),
                          "hired": rng.integers(0, 2, 900)})
    frame.loc[frame["sex"] == "Unknown", "sex"] = None
    output = build_ll144(frame, AuditSpec("hired", 1, group_by=("sex",)),
                         RegulatorChoices(sex="sex", race="race"))
    lines = [str(s.group) for s in output.sufficiency]
    assert lines and not [g for g in lines if "Unknown" in g or "Decline" in g], lines


def test_a_zero_cell_is_not_computable_on_every_surface() -> None:
    frame = pd.concat([_rows(("A", 40, 10), ("B", 50, 25), extra={"site": "x"}),
                       _rows(("B", 45, 20), extra={"site": "y"})], ignore_index=True)
    result = audit(frame, AuditSpec("hired", 1, group_by=("group",), reference="B", strata=("site",)))
    empty = result.comparison("A", "site = y")
    assert empty.n == 0 and empty.verdict is Verdict.TOO_FEW and empty.four_fifths is None
    assert "not computable" in result.sentence(empty)
    assert ("A", "site = y") not in {(r.group, r.cell) for r in eeoc_part(result).rows if r.below_four_fifths}


def test_a_score_counts_the_same_rows_in_the_audit_and_the_ll144_scoring_rate() -> None:
    """The audit counted at or above the median (365 of 814), the LL144 rate strictly above it (361)."""
    rng = np.random.default_rng(11)
    scores = np.round(rng.normal(60, 12, 814)).clip(0, 100)
    frame = pd.DataFrame({"ai_score": scores, "sex": rng.choice(["Female", "Male"], 814),
                          "race": rng.choice(["White", "Black", "Asian"], 814)})
    median = float(np.median(scores))
    above = int((scores > median).sum())
    assert above < int((scores >= median).sum())     # ties at the median: the two rules differ here
    result = audit(frame, AuditSpec("ai_score", outcome_type="score", group_by=("sex",)))
    assert int(result.counts.positives.sum()) == above
    assert result.counts.score_rule_words == f"above the median ({median:g})"
    ll144 = ll144_audit(frame, AuditSpec("ai_score", outcome_type="score", group_by=("sex",)), "sex", "race")
    assert sum(r.selected for r in ll144.table("sex").rows) == above
    assert Judgement.of(result.spec).to_dict()["score_rule"] == "above the median"


# ------------------------------------------------------------------------------------------
# The page, the report and the slides read the same judgement
# ------------------------------------------------------------------------------------------
def test_the_report_and_slides_say_below_four_fifths_where_the_audit_does() -> None:
    """Ricci v. DeStefano's lieutenant exam: no sentence said 'below four-fifths' (issue 46's committee question);
    the finding, the slide and the report's first page now do, with the shortfall and what could be detected."""
    from luskin_core.present.report import build_html_report
    from luskin_core.present.slides import build_slides

    frame = _rows(("White", 43, 25), ("Black", 19, 6), ("Hispanic", 15, 3), column="race", outcome="passed")
    result = audit(frame, AuditSpec("passed", 1, group_by=("race",), min_group_size=10))
    below = {c.group for c in result.judged if c.four_fifths}
    assert below == {"Black", "Hispanic"}
    said = " ".join(findings(result).sentences())
    assert all(f"{g}'s impact ratio" in said for g in below), said
    deck = " ".join(s for slide in build_slides([result]) for s in (slide.title, *slide.sentences))
    assert "below four-fifths" in deck
    page = build_html_report([result])
    summary = re.search(r'<section id="summary".*?</section>', page, flags=re.DOTALL)
    assert summary is not None and "below four-fifths" in summary.group(0)
    hispanic = result.comparison("Hispanic")
    if hispanic.verdict in (Verdict.CHANCE, Verdict.WITHIN):
        assert "could be detected" in said


def test_one_significance_level_and_no_literal_bar_in_the_core() -> None:
    """A second ALPHA in stats/power.py and literal 0.05 comparisons in three files (issue 45): the level is
    ALPHA, read through the judgement."""
    root = Path(__file__).resolve().parent.parent / "luskin_core"
    found = []
    for path in root.rglob("*.py"):
        text = path.read_text()
        for number, line in enumerate(text.splitlines(), 1):
            code = line.split("#", 1)[0]
            if re.search(r"\bp\w*\s*(<|<=|>|>=)\s*0\.05\b", code) or re.search(r"^ALPHA\s*=\s*0\.", code):
                found.append(f"{path.relative_to(root)}:{number}: {line.strip()}")
    assert [f.split(":")[0] for f in found] == ["stats/verdict.py"], found


def test_the_page_table_shows_the_judgements_four_fifths(tmp_path: Path) -> None:
    """The Audit page's table marks 'below' exactly where the JSON does (the 4/5 edge included)."""
    from luskin_app.audit_view import comparison_table

    result = audit(_rows(("A", 60, 20), ("B", 240, 100), ("C", 100, 30)), AuditSpec("hired", 1, group_by=("group",)))
    shown = comparison_table(result)
    column = next(c for c in shown.columns if "4/5" in str(c))
    marks = dict(zip(shown["Group"], shown[column]))
    for c in result.judged:
        assert (marks[c.group] == "below") is bool(c.four_fifths), (c.group, marks)


def test_an_audit_result_carries_its_resolved_judgement() -> None:
    result = audit(_rows(("A", 60, 20), ("B", 240, 100), ("Unknown", 30, 3)), AuditSpec("hired", 1,
                                                                                       group_by=("group",)))
    assert isinstance(result, AuditResult)
    judgement = result.judgement
    assert judgement.reference == result.reference == "B"
    assert judgement.unknown == ("Unknown",) == result.unknown_groups
    assert judgement.reference_rule is ReferenceRule.MOST_FAVOURED
    document = result.to_dict()
    assert document["judgement"]["unknown_groups"] == ["Unknown"]
    rules = {c["group"]: c["rule"] for c in document["comparisons"]}
    assert rules["B"].startswith("the reference") and rules["A"].startswith("could be chance")


def test_a_reference_below_four_fifths_is_never_said_to_pass() -> None:
    """Adult by years of education, White compared with the rest: the finding said 'Non-White's impact ratio of
    0.72 is below four-fifths of White's' and the detail 'Non-White's favourable share, 0.72 of White's, passes the
    four-fifths rule', and the table's 4/5 column was blank. The rule reads the less favoured side of the pair,
    here the reference; every surface now says so."""
    from luskin_app.audit_view import comparison_table
    from luskin_core.analyses.narrative import sentences
    from luskin_core.present.report import build_html_report

    frame = _rows(("White", 1_000, 440), ("Non-White", 1_000, 316))   # 316/440 = 0.718
    result = audit(frame, AuditSpec("hired", 1, protected="group == White", tolerance=0.05))
    (c,) = result.judged
    assert c.group == "White" and c.four_fifths is False and c.four_fifths_lower == "reference"
    words = " ".join(sentences(result))
    assert "passes the four-fifths rule" not in words
    lead = " ".join(findings(result).sentences())
    assert "Non-White's impact ratio of 0.72 is below four-fifths of White's" in lead
    shown = comparison_table(result)
    column = next(col for col in shown.columns if "4/5" in str(col))
    assert dict(zip(shown["Group"], shown[column]))["White"] == "reference below"
    page = build_html_report([result])
    assert "reference below" in page and "passes the four-fifths rule" not in page


# ------------------------------------------------------------------------------------------
# A data set's own code for "unknown" (held-out data: NYPD Stop, Question and Frisk, 2014)
# ------------------------------------------------------------------------------------------
def _sqf_2014() -> pd.DataFrame:
    from luskin_core.counting.data import sqf_shared_path

    path = sqf_shared_path()
    if path is None:
        pytest.skip("the NYPD SQF 2014 file is not beside the project (../shared/data/sqf_2014.csv.gz)")
    frame = pd.read_csv(path, usecols=["race", "sex", "city", "arstmade"], dtype=str)
    return frame


def _favourable(frame: pd.DataFrame) -> pd.DataFrame:
    """Per city and race: rows, and rows not arrested (an arrest is adverse: the favourable share is the rest)."""
    counted = frame.assign(spared=(frame["arstmade"] != "Y").astype(int))
    return counted.groupby(["city", "race"])["spared"].agg(n="size", k="sum").reset_index()


def test_a_value_the_user_names_unknown_is_set_apart_by_the_eeoc_table_and_the_audit_alike(tmp_path: Path) -> None:
    """SQF 2014 codes race 'U' for unknown. With ``--unknown U`` the EEOC table (groups by race, within each borough)
    took U as a stratum's most favoured group and judged Z against it ('In city = BROOKLYN, Z against U: passes
    four-fifths'), and the audit put U's test in the Holm family of the others (B's adjusted p 0.060 for 6 verdicts:
    a family of 7). Now U is set apart everywhere: never a reference, no verdict, not in the family; each stratum's
    reference and each four-fifths flag are recomputed here from the rows (pandas, exact fractions) and the adjusted
    p-values with statsmodels."""
    from statsmodels.stats.multitest import multipletests

    frame = _sqf_2014()
    path = tmp_path / "sqf_2014.csv"
    frame.to_csv(path, index=False)
    common = ["--data", str(path), "--outcome", "arstmade", "--positive", "Y", "--adverse", "--groups", "race",
              "--unknown", "U", "--json"]
    code, out, err = run_in_process(["audit", *common, "--stratify", "city", "--template", "eeoc"])
    assert code == 0, err
    (part,) = json.loads(out)["audits"]
    assert part["judgement"]["unknown_groups"] == ["U"] and part["judgement"]["unknown_values"] == ["U"]
    assert [u["group"] for u in part["unknown_groups"]] == ["U"]
    rows = part["eeoc"]
    assert rows and all("U" not in (r["group"], r["reference"]) for r in rows), "U judged or a reference"
    counts = _favourable(frame)
    for city, table in counts.groupby("city"):
        known = table[(table["race"] != "U") & (table["n"] > 0)]
        large = known[known["n"] >= 30]
        pool = large if len(large) else known
        best = max(pool.itertuples(), key=lambda r: (Fraction(int(r.k), int(r.n)), int(r.n)))
        mine = [r for r in rows if r["cell"] == f"city = {city}"]
        assert {r["reference"] for r in mine} == {best.race}, city
        for r in mine:
            g = known[known["race"] == r["group"]].iloc[0]
            assert (r["n"], r["selected"]) == (int(g.n), int(g.k))
            assert r["below_four_fifths"] == _exact_below(int(g.k), int(g.n), int(best.k), int(best.n)), r
    # the audit by race overall, reference W: U shown, set apart, its test outside the Holm family
    code, out, err = run_in_process(["audit", *common, "--reference", "W"])
    assert code == 0, err
    document = json.loads(out)
    by_group = {c["group"]: c for c in document["comparisons"]}
    assert by_group["U"]["rule"].startswith("set apart") or document["judgement"]["unknown_groups"] == ["U"]
    judged = [g for g, c in by_group.items() if g not in ("U", "W") and c["p_value"] is not None
              and c["verdict"] != "too few rows"]
    expected = multipletests([by_group[g]["p_value"] for g in judged], method="holm")[1]
    assert [by_group[g]["p_adjusted"] for g in judged] == pytest.approx(list(expected), rel=1e-12, abs=1e-300)
    assert len(judged) == 6 and by_group["U"]["p_adjusted"] == pytest.approx(by_group["U"]["p_value"])


def test_a_value_named_unknown_leaves_a_protected_condition_as_a_missing_value_does() -> None:
    """With ``race == B`` against the rest, the rows coded U are in neither class (as 'Unknown' and missing values
    are): the rest counts every other race, and the LL144 table reads U as its unknown category too."""
    frame = _sqf_2014()
    spec = AuditSpec("arstmade", "Y", protected="race == B", outcome_is="adverse", unknown_values=("U",))
    result = audit(frame, spec)
    (c,) = result.judged
    rest = frame[~frame["race"].isin(["B", "U"])]
    assert c.reference_n == len(rest) and c.reference_positives == int((rest["arstmade"] == "Y").sum())
    plain = audit(frame, spec.with_changes(unknown_values=()))
    assert plain.judged[0].reference_n == len(rest) + int((frame["race"] == "U").sum())
    ll144 = ll144_audit(frame, AuditSpec("arstmade", "Y", group_by=("race",), unknown_values=("U",),
                                         outcome_is="adverse"), None, "race").to_dict()
    (race,) = [t for t in ll144["tables"] if t["kind"] == "race_ethnicity"]
    assert "U" not in [r["category"] for r in race["rows"]]
    assert race["unknown_count"] == int((frame["race"] == "U").sum()) == 300
