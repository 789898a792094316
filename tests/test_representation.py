"""Representation (issue 45's analysis added through the table): each group's share against a benchmark.

Its numbers against an independent computation (pandas counts, scipy's exact binomial test, statsmodels' Wilson
interval and Holm), on a favourable and an adverse outcome, with a group of unknown category, a benchmark group
no row holds, too few rows, an amount, every engine path in memory and on DuckDB; its command, its report flags,
its page, its report section and slide.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from luskin_core.errors import LuskinError
from luskin_core.present.report_parts import analysis
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.stats.verdict import Verdict

ENTRY = analysis("representation")
BENCHMARK = "White=0.76,Black=13.4%,Asian-Pac-Islander=6%,Amer-Indian-Eskimo=1.3%"


def _run(data, spec, **options):
    made = ENTRY.options_class()
    assert made is not None
    return ENTRY.runner()(data, spec, made(**options))


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    from luskin_core import load_sample

    return load_sample("adult")


def test_the_benchmark_is_read_as_written_and_refused_in_plain_words() -> None:
    from luskin_core.analyses.representation import benchmark_shares

    assert benchmark_shares("Black=24%, White = 0.32; Asian=5%") == (("Black", 0.24), ("White", 0.32),
                                                                     ("Asian", 0.05))
    assert benchmark_shares("a=b=10%") == (("a=b", 0.1),)   # a label may hold '=': the share is after the last
    for text, words in (("", "Name each group's share"), ("Black", "is not GROUP=SHARE"),
                        ("=0.2", "is not GROUP=SHARE"), ("Black=0", "must be above 0 and below 1"),
                        ("Black=100%", "must be above 0 and below 1"), ("Black=24", "must be above 0 and below 1"),
                        ("Black=x", "not 'x'"), ("Black=0.2,Black=0.3", "two shares"),
                        ("A=0.6,B=0.5", "add to 1.1")):
        with pytest.raises(LuskinError, match=words):
            benchmark_shares(text)


def test_every_number_is_the_independent_computation_on_adult(adult: pd.DataFrame) -> None:
    spec = AuditSpec("income", ">50K", group_by=("race",))
    result = _run(adult, spec, benchmark=BENCHMARK)
    top = adult[adult["income"] == ">50K"]
    counts = top["race"].value_counts()
    n = int(counts.sum())
    assert result.compared == n == 11687 and result.total_rows == len(adult)
    shares = {"White": 0.76, "Black": 0.134, "Asian-Pac-Islander": 0.06, "Amer-Indian-Eskimo": 0.013}
    p = {g: binomtest(int(counts[g]), n, s).pvalue for g, s in shares.items()}
    order = sorted(p)
    holm = dict(zip(order, multipletests([p[g] for g in order], method="holm")[1]))
    rows = {r.group: r for r in result.rows}
    for g, s in shares.items():
        r = rows[g]
        assert r.count == counts[g] and r.rows == int((adult["race"] == g).sum())
        assert r.share == pytest.approx(counts[g] / n, abs=1e-15)
        low, high = proportion_confint(int(counts[g]), n, method="wilson")
        assert r.interval == pytest.approx((low, high), abs=1e-12)
        assert r.p == pytest.approx(p[g], rel=1e-9, abs=1e-300)
        assert r.p_adjusted == pytest.approx(holm[g], rel=1e-9, abs=1e-300)
        assert r.deviations == pytest.approx((counts[g] - n * s) / math.sqrt(n * s * (1 - s)), rel=1e-12)
        assert r.pool_share == pytest.approx((adult["race"] == g).mean(), rel=1e-12)
        assert r.harmful is (counts[g] / n < s)   # fewer of a favourable outcome harms
    # the bar: 5 points either way; Black 4.8% against 13.4% and White 90.8% against 76% are beyond it
    assert {g for g, r in rows.items() if r.verdict is Verdict.BEYOND} == {"Black", "White"}
    assert rows["Asian-Pac-Islander"].verdict is Verdict.WITHIN
    assert rows["Other"].verdict is None and rows["Other"].p is None   # no benchmark: shown, not judged
    doc = result.to_dict()
    assert json.loads(json.dumps(doc))["groups"][0]["rule"]
    assert {g["group"]: g["rule"] for g in doc["groups"]}["Black"].startswith("beyond: not (|share minus benchmark|")


def test_an_adverse_outcome_reads_more_as_the_way_that_harms() -> None:
    # 1,000 stops: group B is 20% of the population and 40% of those frisked
    frame = pd.DataFrame({"race": ["A"] * 600 + ["B"] * 400,
                          "frisked": ["Y"] * 240 + ["N"] * 360 + ["Y"] * 160 + ["N"] * 240})
    spec = AuditSpec("frisked", "Y", group_by=("race",), outcome_is="adverse")
    result = _run(frame, spec, benchmark="A=80%,B=20%")
    rows = {r.group: r for r in result.rows}
    assert result.compared == 400 and rows["B"].share == pytest.approx(0.4)
    assert rows["B"].harmful is True and rows["A"].harmful is False
    assert rows["B"].verdict is Verdict.BEYOND
    from luskin_core.present.representation_report import headline

    assert "B, 40.0% of the rows where frisked is Y against 20.0%, 20.0 points above it, the way that harms as " \
           "the outcome is adverse" in headline(result)
    every = _run(frame, spec, benchmark="A=80%,B=20%", among="all")
    assert every.compared == 1000 and {r.group: r.harmful for r in every.rows} == {"A": None, "B": None}


def test_unknown_categories_are_set_apart_with_the_range_the_shares_could_take() -> None:
    frame = pd.DataFrame({"race": ["A"] * 500 + ["B"] * 300 + ["Unknown"] * 200, "hired": [1] * 1000})
    result = _run(frame, AuditSpec("hired", 1, group_by=("race",)), benchmark="A=0.6,B=0.4")
    rows = {r.group: r for r in result.rows}
    assert result.compared == 800 and result.unknown_count == 200
    assert rows["Unknown"].unknown and rows["Unknown"].verdict is None and rows["Unknown"].share is None
    assert rows["B"].share == pytest.approx(300 / 800)
    assert rows["B"].bounds == pytest.approx((300 / 1000, 500 / 1000))
    from luskin_core.present.representation_report import notes

    assert any("200 rows" in note and "B 30.0% to 50.0%" in note for note in notes(result))


def test_a_benchmark_group_no_row_holds_is_counted_as_absent_and_said() -> None:
    frame = pd.DataFrame({"race": ["A"] * 90 + ["B"] * 10, "hired": [1] * 100})
    result = _run(frame, AuditSpec("hired", 1, group_by=("race",)), benchmark="A=0.7,B=0.2,Blak=0.1")
    rows = {r.group: r for r in result.rows}
    assert result.not_in_data == ("Blak",) and rows["Blak"].count == 0 and rows["Blak"].share == 0
    assert rows["Blak"].p == pytest.approx(binomtest(0, 100, 0.1).pvalue)
    from luskin_core.present.representation_report import notes

    assert any("No row is labelled 'Blak'" in note for note in notes(result))


def test_too_few_rows_are_not_judged_and_an_amount_is_refused_among_the_outcome() -> None:
    frame = pd.DataFrame({"race": ["A"] * 15 + ["B"] * 5, "hired": [1] * 20, "pay": np.arange(20.0)})
    result = _run(frame, AuditSpec("hired", 1, group_by=("race",)), benchmark="A=0.5,B=0.5")
    assert {r.verdict for r in result.rows} == {Verdict.TOO_FEW}
    assert all(r.p_adjusted is None for r in result.rows)
    amount = AuditSpec("pay", None, group_by=("race",), outcome_type="amount")
    with pytest.raises(LuskinError, match="is an amount"):
        _run(frame, amount, benchmark="A=0.5,B=0.5")
    assert _run(frame, amount, benchmark="A=0.5,B=0.5", among="all").compared == 20


def test_duckdb_counts_give_the_frames_numbers(adult: pd.DataFrame, tmp_path) -> None:
    from luskin_core.counting.files import open_file

    path = tmp_path / "adult.parquet"
    adult.to_parquet(path)
    spec = AuditSpec("income", ">50K", group_by=("race",))
    memory = _run(adult, spec, benchmark=BENCHMARK).to_dict()
    on_file = _run(open_file(str(path)), spec, benchmark=BENCHMARK).to_dict()
    assert on_file == memory


ADULT = ("--data", "sample:adult", "--outcome", "income", "--positive", ">50K", "--groups", "race")


def _cli(*argv: str) -> tuple[int, str, str]:
    import contextlib
    import io

    from luskin_cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


def test_the_command_prints_the_librarys_numbers_and_words_and_refuses_in_plain_words(adult: pd.DataFrame) -> None:
    from luskin_core.present.representation_report import headline

    expected = _run(adult, AuditSpec("income", ">50K", group_by=("race",)), benchmark=BENCHMARK)
    status, text, err = _cli("representation", *ADULT, "--benchmark", BENCHMARK)
    assert status == 0, err
    assert text.startswith("Representation: each group's share of the rows where income is >50K\n")
    assert headline(expected) in text and "Ratio to benchmark" in text
    status, text, err = _cli("representation", *ADULT, "--benchmark", BENCHMARK, "--json")
    assert status == 0, err
    assert json.loads(text)["groups"] == json.loads(json.dumps(expected.to_dict()))["groups"]
    for argv, words in ((("--benchmark", "Black=24"), "The share of 'Black' must be above 0 and below 1"),
                        ((), "Name each group's share of the population"),
                        (("--benchmark", BENCHMARK, "--among", "everyone"), "invalid choice")):
        status, text, err = _cli("representation", *ADULT, *argv)
        assert status == 2 and words in err and "Traceback" not in err, err


def test_the_report_and_the_deck_take_it_from_its_flag_and_from_results(adult: pd.DataFrame, tmp_path) -> None:
    from luskin_core import audit
    from luskin_core.present.report import build_html_report
    from luskin_core.present.representation_report import headline
    from luskin_core.present.slides import build_slides

    path = tmp_path / "r.html"
    status, _, err = _cli("report", *ADULT, "--html", str(path), "--representation", BENCHMARK,
                          "--representation-among", "all")
    assert status == 0, err
    spec = AuditSpec("income", ">50K", group_by=("race",))
    every = _run(adult, spec, benchmark=BENCHMARK, among="all")
    page = path.read_text()
    assert 'id="representation"' in page and "Representation: each group&#39;s share of every row" in page
    assert f"Representation: {every.headline()}" in err
    status, _, err = _cli("report", *ADULT, "--html", str(path), "--representation-among", "all")
    assert status == 2 and "add --representation GROUP=SHARE" in err
    result = _run(adult, spec, benchmark=BENCHMARK)
    html = build_html_report(results=[audit(adult, spec), result])
    assert "Each group&#39;s share of the rows where income is &gt;50K against its benchmark" in html
    deck = build_slides(results=[audit(adult, spec), result])
    slide = next(s for s in deck if s.key == "representation")
    assert slide.sentences[0] == headline(result)


def test_its_page_asks_for_the_benchmark_then_shows_the_librarys_numbers(adult: pd.DataFrame) -> None:
    from streamlit.navigation.page import calc_hash
    from test_app import open_app
    from test_app_audit import by_columns

    from luskin_app.ui import unescape
    from luskin_core.counting.data import PRESETS
    from luskin_core.present.representation_report import headline

    at = open_app()
    from test_app import goto

    goto(at, "audit")
    by_columns(at, "race")
    at._page_hash = calc_hash("representation")   # the page made from the table's line: its address's hash
    at.run()
    assert not at.exception, at.exception
    assert [t.value for t in at.title] == ["Representation"]
    assert any("Each group's share of the population" in unescape(i.value) for i in at.info)   # asked, not failed
    assert not at.dataframe
    at.text_input(key="representation_benchmark").set_value("White=0.76, Black=13.4%").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    expected = _run(adult, PRESETS["adult"].spec.with_changes(protected=None, group_label=None, other_label=None,
                                                             group_by=("race",)), benchmark="White=0.76, Black=13.4%")
    assert headline(expected) in [unescape(str(h.value)) for h in at.header]
    assert any("Ratio to benchmark" in list(d.value.columns) for d in at.dataframe)
    at.text_input(key="representation_benchmark").set_value("White=76").run()
    assert not at.exception
    assert any("must be above 0 and below 1" in unescape(e.value) for e in at.error)


def test_a_simulation_where_the_truth_is_known_gives_the_intervals_coverage_and_the_tests_size() -> None:
    """Shares drawn from a known benchmark (small, middling and large groups; 30 to 3,000 rows compared): the
    Wilson interval covers the true share about 95% of the time and the exact test refuses the true benchmark at
    most 5% of the time; with the share a third below the benchmark at 1,000 rows the test finds it."""
    from luskin_core.analyses.representation import _binomial_p
    from luskin_core.stats.inference import wilson_interval

    rng = np.random.default_rng(20261205)   # a generator of its own: the process's is left alone
    draws = 400
    coverage, size = [], []
    for share in (0.013, 0.134, 0.5):
        for n in (30, 300, 3000):
            x = rng.binomial(n, share, draws)
            low, high = wilson_interval(x, np.full(draws, n))
            coverage.append(float(np.mean((low <= share) & (share <= high))))
            size.append(float(np.mean([_binomial_p(int(k), n, share) < 0.05 for k in x])))
    # measured with this seed: coverage 0.93-0.97 in each of the 9 settings, the test's size 0.005-0.06 (400 draws)
    assert 0.93 <= float(np.mean(coverage)) <= 0.97 and min(coverage) >= 0.85, coverage
    assert max(size) <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / draws) and float(np.mean(size)) <= 0.05, size
    found = np.mean([_binomial_p(int(k), 1000, 0.134) < 0.05 for k in rng.binomial(1000, 0.134 * 2 / 3, draws)])
    assert found > 0.95


def test_its_chart_has_the_numbers_of_the_result_in_words_and_a_slide_of_its_own_when_the_words_are_long(
        adult: pd.DataFrame) -> None:
    from luskin_core.present.chart_text import chart_text
    from luskin_core.present.representation_report import share_chart, slides
    from luskin_core.present.slide_blocks import fit_for_projector

    result = _run(adult, AuditSpec("income", ">50K", group_by=("race",)), benchmark="White=76%,Black=13.4%")
    words = chart_text(share_chart(result))
    rows = {(r["Series"], r["Category"]): r for r in words.table.to_dict("records")}
    black = next(r for r in result.rows if r.group == "Black")
    assert rows[("share (95% interval)", "Black")]["Interval"] == f"{100 * black.interval[0]:.3g} to " \
                                                                  f"{100 * black.interval[1]:.3g}"
    assert rows[("benchmark", "Black")]["share of the rows where income is >50K, in %"] == "13.4"
    assert ("benchmark", "Other") not in rows   # no benchmark, no diamond
    deck = fit_for_projector(slides(result))
    assert [s.title for s in deck] == ["Representation against the benchmark",
                                       "Representation against the benchmark, in a chart"]
    assert deck[0].figure is None and deck[1].figure is not None
