"""``luskin audit --template ll144|eeoc``: text tables, --json and --csv, checked against pandas and brute force."""

from __future__ import annotations

import json
from fractions import Fraction

import pandas as pd
import pytest

from luskin_cli.main import main
from luskin_core import load_sample


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture(scope="module")
def hiring(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A small hiring file with the DCWP example's race rows, a sex column, unknowns and a score."""
    rows = []
    published = [("Hispanic or Latino", 408, 204), ("White (Not Hispanic or Latino)", 797, 412),
                 ("Black or African American (Not Hispanic or Latino)", 390, 170)]
    for name, n, s in published:
        for j in range(n):
            rows.append({"race": name, "sex": "Female" if j % 3 else "Male", "hired": "yes" if j < s else "no",
                         "score": float(j % 7)})
    rows += [{"race": "", "sex": "Male", "hired": "no", "score": 3.0}] * 9
    path = tmp_path_factory.mktemp("ll144") / "hiring.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return str(path)


def test_ll144_json_object_as_the_issue_specifies(capsys, hiring) -> None:
    status, out, err = run(capsys, "audit", "--data", hiring, "--outcome", "hired", "--positive", "yes",
                           "--template", "ll144", "--sex", "sex", "--race", "race", "--json")
    assert status == 0, err
    doc = json.loads(out)
    ll = doc["ll144"]
    assert ll["unknown_count"] == 9
    assert [t["kind"] for t in ll["tables"]] == ["sex", "race_ethnicity", "intersectional"]
    race = {r["category"]: r for r in ll["tables"][1]["rows"]}
    assert (race["Hispanic or Latino"]["n"], race["Hispanic or Latino"]["selected"]) == (408, 204)
    assert f"{race['Hispanic or Latino']['impact_ratio']:.2f}" == "0.97"  # DCWP's published 0.97
    assert f"{race['Black or African American (Not Hispanic or Latino)']['impact_ratio']:.2f}" == "0.84"
    inter = [r["category"] for r in ll["tables"][2]["rows"]]
    assert "Female × White (Not Hispanic or Latino)" in inter
    for row in ll["tables"][2]["rows"]:
        assert set(row) == {"category", "n", "selected", "rate", "impact_ratio", "excluded", "impact_ratio_low",
                            "impact_ratio_high", "status"}
    # Each table from the rows that know its characteristic: the 9 with no race are in the sex table.
    assert [t["unknown_count"] for t in ll["tables"]] == [0, 9, 9]
    assert sum(r["n"] for r in ll["tables"][0]["rows"]) == 408 + 797 + 390 + 9
    for c in doc["comparisons"]:
        for key in ("shortfall_four_fifths", "shortfall_parity", "flip", "minimum_detectable_difference"):
            assert key in c
    assert doc["template"] == "ll144" and isinstance(doc["sufficiency"], list)


def test_ll144_text_table_csv_and_scoring_rate(capsys, hiring, tmp_path) -> None:
    target = tmp_path / "ll144.csv"
    status, out, err = run(capsys, "audit", "--data", hiring, "--outcome", "score", "--score", "--template",
                           "ll144", "--sex", "sex", "--race", "race", "--csv", str(target))
    assert status == 0, err
    assert out.startswith("Data sufficiency")
    assert "Sex categories" in out and "Race/ethnicity categories" in out and "Intersectional" in out
    assert "unknown category (missing sex or race/ethnicity, not included in the intersectional table): 9" in out
    frame = pd.read_csv(hiring)
    median = float(frame["score"].median())
    assert f"Median score of the full sample: {median:g}" in out
    written = pd.read_csv(target)
    known = frame  # the sex table counts everyone whose sex is known, race/ethnicity known or not
    sex = written[written["table"] == "sex"].set_index("category")
    for name, part in known.groupby("sex"):
        assert sex.loc[name, "n"] == len(part)
        assert sex.loc[name, "scored_above_median"] == int((part["score"] > median).sum())


def test_ll144_exclude_small_shows_the_justification(capsys, tmp_path) -> None:
    df = load_sample("compas")
    path = tmp_path / "compas.csv"
    df[["sex", "race", "two_year_recid"]].to_csv(path, index=False)
    status, out, err = run(capsys, "audit", "--data", str(path), "--outcome", "two_year_recid", "--positive", "0",
                           "--template", "ll144", "--sex", "sex", "--race", "race", "--exclude-small", "--json")
    assert status == 0, err
    race = {r["category"]: r for r in json.loads(out)["ll144"]["tables"][1]["rows"]}
    assert race["Asian"]["excluded"] and race["Asian"]["impact_ratio"] is None and race["Asian"]["n"] == 32
    assert not race["Caucasian"]["excluded"]
    assert "2%" in json.loads(out)["ll144"]["exclusion_justification"]


def test_eeoc_template_text_and_json(capsys) -> None:
    status, out, err = run(capsys, "audit", "--data", "sample:adult", "--outcome", "income", "--positive", ">50K",
                           "--template", "eeoc", "--sex", "sex", "--race", "race", "--json")
    assert status == 0, err
    doc = json.loads(out)
    assert [a["group_mode"] for a in doc["audits"]] == ["columns", "columns"]
    female = next(r for r in doc["audits"][0]["eeoc"] if r["group"] == "Female")
    k, n, rk, rn = female["selected"], female["n"], female["reference_selected"], female["reference_n"]
    s = 0
    while Fraction(k + s, n) < Fraction(4, 5) * Fraction(rk, rn):
        s += 1
    assert female["shortfall_four_fifths"] == s and female["below_four_fifths"] is True
    status, out, err = run(capsys, "audit", "--data", "sample:adult", "--outcome", "income", "--positive", ">50K",
                           "--template", "eeoc", "--race", "race")
    assert status == 0, err
    assert "two standard deviations" in out and "shortfall 4/5" in out and "flip" in out
    assert "Data sufficiency" in out


def test_template_mistakes_are_plain_sentences(capsys, hiring) -> None:
    status, _, err = run(capsys, "audit", "--data", hiring, "--outcome", "hired", "--positive", "yes",
                         "--template", "ll144")
    assert status == 2 and "--sex COLUMN, --race COLUMN" in err and "Traceback" not in err
    status, _, err = run(capsys, "audit", "--data", hiring, "--outcome", "hired", "--positive", "yes",
                         "--groups", "race", "--sex", "sex")
    assert status == 2 and "--template" in err


def test_plain_audit_opens_with_sufficiency_and_says_absence_of_evidence(capsys, tmp_path) -> None:
    path = tmp_path / "small.csv"
    pd.DataFrame({"g": ["a"] * 42 + ["b"] * 2000,
                  "y": [1] * 20 + [0] * 22 + [1] * 1000 + [0] * 1000}).to_csv(path, index=False)
    status, out, err = run(capsys, "audit", "--data", str(path), "--outcome", "y", "--positive", "1",
                           "--groups", "g")
    assert status == 0, err
    lines = out.splitlines()  # the heading, whether the outcome is good or bad for the person, then sufficiency
    assert lines[2].startswith("Data sufficiency: 1 of 1 comparisons could not have detected a gap")
    assert "absence of evidence, not evidence of fairness" in out


def test_report_with_the_ll144_template(capsys, hiring, tmp_path) -> None:
    target = tmp_path / "report.html"
    status, _, err = run(capsys, "report", "--data", hiring, "--outcome", "hired", "--positive", "yes",
                         "--template", "ll144", "--sex", "sex", "--race", "race", "--html", str(target))
    assert status == 0, err
    html = target.read_text(encoding="utf-8")
    assert "NYC Local Law 144 bias audit: summary of results" in html
    assert "Black or African American (Not Hispanic or Latino)" in html and "0.84" in html
    assert "What the data could show" in html


def test_ll144_on_parquet_counted_by_the_engine_matches_in_memory(capsys, tmp_path) -> None:
    df = load_sample("compas")[["sex", "race", "decile_score"]]
    path = tmp_path / "compas.parquet"
    df.to_parquet(path)
    documents = []
    for data in (str(path), "sample:compas"):
        status, out, err = run(capsys, "audit", "--data", data, "--outcome", "decile_score", "--score",
                               "--template", "ll144", "--sex", "sex", "--race", "race", "--json")
        assert status == 0, err
        documents.append(json.loads(out)["ll144"])
    assert documents[0]["tables"] == documents[1]["tables"]
    assert documents[0]["median_score"] == float(df["decile_score"].median())


@pytest.fixture(scope="module")
def credit(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A credit file: an adverse outcome (default), sex coded as words, no race column worth the name."""
    rows = []
    for sex, n, defaults in (("Female", 300, 30), ("Male", 300, 120)):
        for j in range(n):
            rows.append({"sex": sex, "race": ["White", "Black", "Declined to state"][j % 3],
                         "default": 1 if j < defaults else 0, "limit": 1000 * (j % 9)})
    path = tmp_path_factory.mktemp("credit") / "credit.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return str(path)


def test_adverse_outcome_end_to_end_in_both_templates(capsys, credit) -> None:
    base = ("audit", "--data", credit, "--outcome", "default", "--positive", "1", "--adverse")
    status, out, err = run(capsys, *base, "--template", "eeoc", "--sex", "sex", "--json")
    assert status == 0, err
    (male,) = json.loads(out)["audits"][0]["eeoc"]
    assert (male["group"], male["reference"], male["selected"], male["reference_selected"]) == ("Male", "Female",
                                                                                              180, 270)
    assert male["below_four_fifths"] is True and male["impact_ratio"] == pytest.approx(180 / 270)
    assert male["shortfall_four_fifths"] == 36 and male["outcome_is"] == "adverse"  # 216/300 = 0.8 * 270/300
    status, out, err = run(capsys, *base, "--template", "eeoc", "--sex", "sex")
    assert status == 0, err
    assert "BELOW" in out and "passes" not in out.split("- Male")[0].split("shortfall parity")[1]
    assert "36 more favourable decisions would reach four-fifths" in out and "is adverse" in out
    status, out, err = run(capsys, *base, "--template", "ll144", "--sex", "sex", "--race", "race", "--json")
    assert status == 0, err
    ll = json.loads(out)["ll144"]
    sex = {r["category"]: r for r in ll["tables"][0]["rows"]}
    assert (sex["Female"]["selected"], sex["Male"]["selected"]) == (270, 180)
    assert ll["tables"][0]["most_selected"] == ["Female"] and ll["outcome_is"] == "adverse"
    assert ll["tables"][1]["unknown_count"] == 200  # "Declined to state" read as unknown
    status, out, err = run(capsys, *base, "--template", "ll144", "--sex", "sex", "--race", "race")
    assert status == 0, err
    assert "the most selected category is Female; under four-fifths: Male (0.67)" in out
    assert "counts the favourable decision" in out


def test_unknown_option_single_sex_pool_and_csv_formulas(capsys, tmp_path) -> None:
    path = tmp_path / "pool.csv"
    pd.DataFrame({"sex": ["Female"] * 60, "race": ["=HYPERLINK(\"http://x\",\"A\")", "B", "Elf"] * 20,
                  "hired": ["yes", "no", "no", "yes"] * 15}).to_csv(path, index=False)
    target = tmp_path / "out.csv"
    status, out, err = run(capsys, "audit", "--data", str(path), "--outcome", "hired", "--positive", "yes",
                           "--template", "ll144", "--sex", "sex", "--race", "race", "--unknown", "elf",
                           "--unknown", "Nobody", "--csv", str(target))
    assert status == 0, err
    assert "every individual with a known sex is Female" in out and "Read as unknown: race/ethnicity 'Elf' (20)" in out
    assert "Race/ethnicity categories (unknown race/ethnicity: 20)" in out
    text = target.read_text(encoding="utf-8")
    assert "'=HYPERLINK" in text and "\n=HYPERLINK" not in text and ",=HYPERLINK" not in text


def test_published_summary_gives_the_same_tables_json_and_text_as_the_rows(capsys, hiring, tmp_path) -> None:
    """Person rows, then the summary table they make (the --csv export, as an auditor would publish it)."""
    summary = tmp_path / "published.csv"
    base = ("audit", "--data", hiring, "--outcome", "hired", "--positive", "yes", "--template", "ll144",
            "--sex", "sex", "--race", "race")
    status, rows_out, err = run(capsys, *base, "--json", "--csv", str(summary))
    assert status == 0, err
    from_rows = json.loads(rows_out)["ll144"]
    status, out, err = run(capsys, "audit", "--template", "ll144", "--counts", str(summary), "--json")
    assert status == 0, err
    from_summary = json.loads(out)["ll144"]
    assert from_summary["tables"] == from_rows["tables"]
    for key in ("unknown_count", "n_assessed", "rate", "sentences", "outcome_is"):
        assert from_summary[key] == from_rows[key], key
    assert from_summary["source"] == "summary"
    status, text_rows, _ = run(capsys, *base)
    status, text_summary, err = run(capsys, "audit", "--template", "ll144", "--counts", str(summary))
    assert status == 0, err
    assert text_summary == text_rows.split("\n\n", 1)[1]  # the same, less the rows' sufficiency
    # As published: the columns the issue names, rates instead of counts, unknown selected not given
    published = pd.DataFrame({"table": ["sex", "sex", "sex", "race_ethnicity", "race_ethnicity", "race_ethnicity"],
                              "category": ["Male", "Female", "Unknown", "A", "B", "Prefer not to say"],
                              "applicants": [92, 76, 15, 100, 68, 15],
                              "scoring_rate": ["54.3%", "44.7%", "", "0.5", "0.40", ""]})
    path = tmp_path / "scoring.csv"
    published.to_csv(path, index=False)
    status, out, err = run(capsys, "audit", "--template", "ll144", "--counts", str(path), "--json")
    assert status == 0, err
    ll = json.loads(out)["ll144"]
    sex = {r["category"]: r for r in ll["tables"][0]["rows"]}
    assert (sex["Male"]["selected"], sex["Female"]["selected"]) == (50, 34)  # 54.3% of 92, 44.7% of 76
    assert ll["tables"][0]["unknown_count"] == 15 and ll["tables"][0]["unknown_selected"] is None
    assert ll["rate"] == "scoring rate" and ll["tables"][2]["reason"]
    assert f"{sex['Female']['impact_ratio']:.2f}" == "0.82"  # the DCWP scoring example's printed ratio


def test_published_tables_that_do_not_add_up_are_said_in_words(capsys, tmp_path) -> None:
    """Issue 47: a published summary whose tables count different totals, whose intersectional categories hold more
    than their sex's, or whose printed impact ratio is not what its counts give, is computed from each table's
    counts and said to be wrong, in the text and the JSON; a consistent one says nothing of the kind."""
    rows = [("sex", "Female", 100, 40, "0.4", "0.8"), ("sex", "Male", 100, 50, "0.5", "1"),
            ("sex", "Unknown", 10, "", "", ""),
            ("race_ethnicity", "A", 120, 50, "0.417", "1"), ("race_ethnicity", "B", 80, 40, "0.5", "1.2"),
            ("race_ethnicity", "Unknown", 5, "", "", ""),
            ("intersectional", "Female × A", 70, 30, "", ""), ("intersectional", "Female × B", 40, 15, "", ""),
            ("intersectional", "Male × A", 50, 20, "", ""), ("intersectional", "Male × B", 40, 25, "", ""),
            ("intersectional", "Unknown", 10, "", "", "")]
    path = tmp_path / "published.csv"
    pd.DataFrame(rows, columns=["table", "category", "applicants", "selected", "selection_rate",
                                "impact_ratio"]).to_csv(path, index=False)
    status, out, err = run(capsys, "audit", "--template", "ll144", "--counts", str(path))
    assert status == 0, err
    assert ("The published tables do not add up: with its unknown category each should count every individual "
            "assessed, but the sex table counts 210 individuals, the race/ethnicity table 205 and the "
            "intersectional table 210.") in out
    assert "'Female' has 110 individuals in the intersectional table but 100 in the sex table" in out
    assert "line 3 ('A'): the published rate is 0.417, its counts give 0.4167" not in out  # within its rounding
    assert "line 6 ('B'): the published impact ratio is 1.2, its counts give 1.000" in out.replace("\n", " ")
    assert "line 2 ('Female')" not in out  # 0.4 and 0.8 are what 40 of 100 gives
    status, document, err = run(capsys, "audit", "--template", "ll144", "--counts", str(path), "--json")
    assert status == 0, err
    assert any("do not add up" in s for s in json.loads(document)["ll144"]["sentences"])
    consistent = [r for r in rows if r[0] != "intersectional"]
    consistent[3:5] = [("race_ethnicity", "A", 120, 50, "0.417", "0.787"), ("race_ethnicity", "B", 85, 45, "", "")]
    pd.DataFrame(consistent, columns=["table", "category", "applicants", "selected", "selection_rate",
                                      "impact_ratio"]).to_csv(path, index=False)
    status, out, err = run(capsys, "audit", "--template", "ll144", "--counts", str(path))
    assert status == 0, err
    assert "do not add up" not in out and "contradict" not in out and "do not follow" not in out, out


@pytest.mark.parametrize("rows,words", [
    ({"table": ["sex"], "category": ["F"], "applicants": [10]}, "lacks selected (or scoring_rate)"),
    ({"table": ["sex", "sex"], "category": ["F", "M"], "applicants": [10, 5], "selected": [11, 1]},
     "more selected than assessed"),
    ({"table": ["sex", "sex"], "category": ["F", "M"], "applicants": [10, -5], "selected": [1, 1]}, "negative"),
    ({"table": ["sex", "sex"], "category": ["F", "M"], "applicants": [10, 5.5], "selected": [1, 1]}, "whole numbers"),
    ({"table": ["age", "sex"], "category": ["F", "M"], "applicants": [10, 5], "selected": [1, 1]},
     "use sex, race_ethnicity or intersectional"),
])
def test_published_summary_mistakes_are_plain_sentences(capsys, tmp_path, rows, words) -> None:
    path = tmp_path / "bad.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    status, _, err = run(capsys, "audit", "--template", "ll144", "--counts", str(path))
    assert status == 2 and words in err and "Traceback" not in err, err


class _ToyOutput:
    """A regulator table written outside the project: the shape every output has, nothing else."""

    anchor, section_title, sentences_title = "toy", "Toy regulator table", "In words"

    def __init__(self, n: int) -> None:
        self.n = n

    def intro(self) -> list[str]:
        return []

    def document(self) -> dict:
        return {"template": "toy", "rows": self.n}

    def csv_frame(self) -> pd.DataFrame:
        return pd.DataFrame({"what": ["=rows"], "n": [self.n]})

    def text(self) -> str:
        return f"Toy table: {self.n} rows"

    def metrics(self) -> list:
        return [("Rows", f"{self.n:,}")]

    def notes(self) -> list:
        return []

    def settings(self, data_label: str = "") -> list:
        return [("Rows", str(self.n))]

    def tables(self) -> list:
        from luskin_core.analyses.regulator import ShownTable

        return [ShownTable("Toy counts", ("What", "Rows"), (("rows", str(self.n)),), (False,),
                           frame=pd.DataFrame({"what": ["rows"], "n": [self.n]}))]

    def sentences(self) -> list[str]:
        return [f"The toy table counted {self.n} rows."]


def build_toy(data, spec, choices) -> _ToyOutput:
    return _ToyOutput(len(data))


@pytest.fixture
def toy_table(monkeypatch: pytest.MonkeyPatch):
    """One line in the registry is all a new regulator table needs (besides its own module)."""
    from luskin_core.analyses import regulator_tables

    entry = regulator_tables.RegulatorTable("toy", "Toy table", "a toy table (toy)", f"{__name__}:build_toy")
    monkeypatch.setitem(regulator_tables.REGULATOR_TABLES, "toy", entry)
    return entry


def test_a_registered_table_is_a_template_a_report_section_and_a_csv(capsys, toy_table, tmp_path) -> None:
    target = tmp_path / "toy.csv"
    status, out, err = run(capsys, "audit", "--data", "sample:compas", "--outcome", "two_year_recid", "--positive",
                           "1", "--template", "toy", "--sex", "sex", "--csv", str(target))
    assert status == 0, err
    rows = len(load_sample("compas"))
    assert out.strip() == f"Toy table: {rows} rows"
    assert "'=rows" in target.read_text(encoding="utf-8")
    report = tmp_path / "report.html"
    status, _, err = run(capsys, "report", "--data", "sample:compas", "--outcome", "two_year_recid", "--positive",
                         "1", "--groups", "race", "--template", "toy", "--sex", "sex", "--html", str(report))
    assert status == 0, err
    html = report.read_text(encoding="utf-8")
    assert "Toy regulator table" in html and f"The toy table counted {rows} rows." in html


def test_audit_bounds_over_the_rows_of_unknown_group(capsys, tmp_path) -> None:
    path = tmp_path / "g.csv"
    pd.DataFrame({"g": ["a"] * 100 + ["b"] * 100 + [""] * 20,
                  "y": [1] * 60 + [0] * 40 + [1] * 45 + [0] * 55 + [1] * 5 + [0] * 15}).to_csv(path, index=False)
    base = ("audit", "--data", str(path), "--outcome", "y", "--positive", "1", "--groups", "g", "--bounds")
    status, out, err = run(capsys, *base, "--json")
    assert status == 0, err
    (b,) = [b for b in json.loads(out)["bounds"] if b["group"] == "b"]
    assert (b["unknown_n"], b["unknown_positives"], b["reference"]) == (20, 5, "a")
    assert b["difference_low"] == pytest.approx(45 / 115 - 65 / 105)  # b gets the 15 without, a the 5 with
    assert b["difference_high"] == pytest.approx(50 / 105 - 60 / 115)
    assert b["impact_ratio_low"] == pytest.approx((45 / 115) / (65 / 105))
    status, out, err = run(capsys, *base)
    assert status == 0, err
    assert "b against a: if the 20 rows of unknown group belonged to either, the gap would lie between" in out


@pytest.mark.parametrize("given,absent", [("sex", "race_ethnicity"), ("race", "sex")])
def test_ll144_with_one_characteristic_from_rows_and_from_its_published_table(capsys, tmp_path, given,
                                                                              absent) -> None:
    """A pool that collects only sex (or only race/ethnicity): that table, from the rows and from the published
    counts, equal to pandas; the others say plainly why they cannot be made."""
    rng = __import__("numpy").random.default_rng(5)
    n = 600
    frame = pd.DataFrame({"sex": rng.choice(["Female", "Male", "Decline to self-identify"], n, p=[.45, .45, .1]),
                          "race": rng.choice(["A", "B", "C", ""], n, p=[.3, .3, .3, .1]),
                          "hired": rng.choice(["yes", "no"], n)})
    path, exported = tmp_path / "pool.csv", tmp_path / "published.csv"
    frame.to_csv(path, index=False)
    status, out, err = run(capsys, "audit", "--data", str(path), "--outcome", "hired", "--positive", "yes",
                           "--template", "ll144", f"--{given}", given, "--json", "--csv", str(exported))
    assert status == 0, err
    doc = json.loads(out)["ll144"]
    made = "sex" if given == "sex" else "race_ethnicity"
    tables = {t["kind"]: t for t in doc["tables"]}
    column = frame[given].replace({"Decline to self-identify": None, "": None})
    known = frame[column.notna()]
    expected = known.groupby(given)["hired"].agg(n="size", selected=lambda s: int((s == "yes").sum()))
    got = {r["category"]: (r["n"], r["selected"]) for r in tables[made]["rows"]}
    assert got == {k: (int(v.n), int(v.selected)) for k, v in expected.iterrows()}
    assert tables[made]["unknown_count"] == int(column.isna().sum()) and tables[made]["reason"] is None
    assert not tables[absent]["rows"] and "column" in tables[absent]["reason"]
    assert not tables["intersectional"]["rows"] and "no sex × race/ethnicity categories" in tables["intersectional"]["reason"]
    status, text, err = run(capsys, "audit", "--data", str(path), "--outcome", "hired", "--positive", "yes",
                            "--template", "ll144", f"--{given}", given)
    assert status == 0, err
    what = "sex" if given == "sex" else "race/ethnicity"
    assert f"Individuals assessed: {n:,}; unknown {what} (not in the {what} table): {int(column.isna().sum()):,}" in text
    other = "race/ethnicity" if given == "sex" else "sex"
    assert f"the data has no {other} column (none was given" in text and "Traceback" not in err
    # the exported table read back as a published one: the same table and bounds
    status, out, err = run(capsys, "audit", "--template", "ll144", "--counts", str(exported), "--json")
    assert status == 0, err
    back = {t["kind"]: t for t in json.loads(out)["ll144"]["tables"]}
    assert back[made]["rows"] == tables[made]["rows"] and back[made]["unknown_count"] == tables[made]["unknown_count"]
    assert not back[absent]["rows"] and f"published table has no {other} rows" in back[absent]["reason"]


def test_sufficiency_beside_the_tables_counts_unknown_spellings_with_the_missing_values(capsys, tmp_path) -> None:
    """'Decline to self-identify' (and a value named by --unknown) is no category in the comparisons whose data
    sufficiency opens the LL144 output: those individuals are counted with the missing values, as in the tables."""
    rng = __import__("numpy").random.default_rng(11)
    n = 800
    frame = pd.DataFrame({"sex": rng.choice(["Female", "Male", "Decline to self-identify", ""], n),
                          "race": rng.choice(["A", "B", "Elf", ""], n), "hired": rng.choice(["yes", "no"], n)})
    path = tmp_path / "pool.csv"
    frame.to_csv(path, index=False)
    status, out, err = run(capsys, "audit", "--data", str(path), "--outcome", "hired", "--positive", "yes",
                           "--template", "ll144", "--sex", "sex", "--race", "race", "--unknown", "Elf", "--json")
    assert status == 0, err
    doc = json.loads(out)
    groups = {c["group"]: c["n"] for c in doc["comparisons"]}
    assert not any("Decline" in g or "Elf" in g for g in groups)
    sex = frame["sex"].replace({"Decline to self-identify": "Unknown", "": "Unknown"})
    race = frame["race"].replace({"Elf": "Unknown", "": "Unknown"})
    expected = (sex + " × " + race).value_counts()
    assert groups == {k: int(v) for k, v in expected.items()}
    assert not any("Decline" in s["group"] for s in doc["sufficiency"])


def test_eeoc_template_with_bounds_equals_the_plain_audits_bounds(capsys, hiring) -> None:
    """--template eeoc --bounds: each column's audit gets the bounds a plain audit by that column gives (one
    formula); the LL144 tables carry theirs already, so --bounds changes nothing there."""
    base = ("audit", "--data", hiring, "--outcome", "hired", "--positive", "yes")
    status, out, err = run(capsys, *base, "--template", "eeoc", "--sex", "sex", "--race", "race", "--bounds", "--json")
    assert status == 0, err
    race = json.loads(out)["audits"][1]["bounds"]
    status, out, err = run(capsys, *base, "--groups", "race", "--bounds", "--json")
    assert status == 0, err
    assert race == json.loads(out)["bounds"] and race and all(b["unknown_n"] == 9 for b in race)
    status, text, err = run(capsys, *base, "--template", "eeoc", "--sex", "sex", "--race", "race", "--bounds")
    assert status == 0, err
    assert "race: over the rows of unknown group (best and worst case):" in text
    plain = run(capsys, *base, "--template", "ll144", "--sex", "sex", "--race", "race")[1]
    assert run(capsys, *base, "--template", "ll144", "--sex", "sex", "--race", "race", "--bounds")[1] == plain


def test_eeoc_template_reads_unknown_spellings_as_unknown(capsys, tmp_path) -> None:
    """'Decline to self-identify' (and an --unknown value) is no group of the EEOC table, nor its reference: those
    rows join the column's missing values in the group Unknown, set apart with its sizes and rates (equal to
    pandas') and no four-fifths verdict."""
    rng = __import__("numpy").random.default_rng(12)
    n = 900
    frame = pd.DataFrame({"sex": rng.choice(["Female", "Male", "Decline to self-identify", "Elf"], n),
                          "race": rng.choice(["A", "B"], n), "hired": rng.choice(["yes", "no"], n, p=[.3, .7])})
    frame.loc[frame["sex"] == "Decline to self-identify", "hired"] = "yes"  # the most selected, were it a group
    path = tmp_path / "pool.csv"
    frame.to_csv(path, index=False)
    status, out, err = run(capsys, "audit", "--data", str(path), "--outcome", "hired", "--positive", "yes",
                           "--template", "eeoc", "--sex", "sex", "--race", "race", "--unknown", "elf", "--json")
    assert status == 0, err
    sex = json.loads(out)["audits"][0]
    rows = {r["group"]: r for r in sex["eeoc"]}
    assert not any("Decline" in g or "Elf" in g for g in rows) and "Decline" not in sex["reference"]
    unknown = frame["sex"].isin(["Decline to self-identify", "Elf"])
    # issue 45: the unknown get no four-fifths verdict of their own; they are set apart with their counts
    assert "Unknown" not in rows
    apart = {u["group"]: u for u in sex["unknown_groups"]}
    assert apart["Unknown"]["n"] == int(unknown.sum())
    assert apart["Unknown"]["selected"] == int((frame.loc[unknown, "hired"] == "yes").sum())
