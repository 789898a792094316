"""The EU Pay Transparency Directive's Article 9 table (issue 50): one line of the regulator tables, every number
against pandas on the same rows (wage1, and a payroll with a bonus and categories of workers)."""

from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pandas as pd
import pytest

from luskin_core import AuditSpec
from luskin_core.analyses.regulator_tables import REGULATOR_TABLES, RegulatorChoices


def payroll(n: int = 3000, seed: int = 4) -> pd.DataFrame:
    """Pay by sex in three grades (women more often in the lowest), a bonus half the men and a third of the women
    receive, a few rows without a sex."""
    rng = np.random.default_rng(seed)
    sex = rng.choice(np.array(["Female", "Male"], dtype=object), n)
    grade = np.where(sex == "Female", rng.choice(["A", "B", "C"], n, p=[.5, .3, .2]),
                     rng.choice(["A", "B", "C"], n, p=[.2, .3, .5]))
    base = pd.Series(grade).map({"A": 18.0, "B": 25.0, "C": 40.0}).to_numpy()
    pay = np.round(base * rng.lognormal(0, 0.15, n) * np.where((sex == "Female") & (grade == "C"), 0.9, 1.0), 2)
    bonus = np.where(rng.random(n) < np.where(sex == "Male", 0.5, 1 / 3), np.round(rng.lognormal(6, 0.6, n), 2), 0.0)
    sex[:15] = None
    return pd.DataFrame({"sex": sex, "grade": grade, "pay": pay, "bonus": bonus})


def ranked_bands(frame: pd.DataFrame) -> list[dict[str, float]]:
    """The UK's quartile pay bands by pandas: every worker ranked by pay, four sections of equal size (a section ends
    at round(share x workers)), the workers of a run of equal pay ordered at random (each counted in a section by
    the expected share of it: the run's ranks inside the section over its length)."""
    sexes = frame.sex.fillna("Unknown")
    ranked = pd.DataFrame({"pay": frame.pay, "sex": sexes}).sort_values("pay", kind="stable").reset_index(drop=True)
    n = len(ranked)
    ends = [0, *(int(np.floor(n * q + 0.5)) for q in (0.25, 0.5, 0.75)), n]
    out = [dict.fromkeys(sorted(set(sexes)), 0.0) for _ in range(4)]
    for _, run in ranked.groupby("pay", sort=True):
        first, last = int(run.index.min()), int(run.index.max()) + 1
        for b in range(4):
            inside = max(0, min(last, ends[b + 1]) - max(first, ends[b]))
            for sex, count in run.sex.value_counts().items():
                out[b][str(sex)] += count * inside / (last - first)
    return out


def _build(frame, **spec):
    entry = REGULATOR_TABLES["eu-pay"]
    return entry.build(frame, AuditSpec("pay", outcome_type="amount", group_by=("sex",), **spec),
                       RegulatorChoices(sex="sex", bonus="bonus"))


def test_article_9_numbers_equal_pandas_on_the_same_rows():
    frame = payroll()
    out = _build(frame, strata=("grade",))
    known = frame[frame.sex.notna()]
    assert out.pay.reference == "Male"          # the men's label, not the judgement's most favoured by chance
    women, men = known[known.sex == "Female"], known[known.sex == "Male"]
    first = out.women[0].comparison
    assert first.mean_gap_share == pytest.approx((men.pay.mean() - women.pay.mean()) / men.pay.mean())
    assert first.median_gap_share == pytest.approx((men.pay.median() - women.pay.median()) / men.pay.median())
    # (b), (d): the bonus among those receiving it; (e): the share of each sex receiving it
    got = out.bonus.overall
    wb, mb = women.bonus[women.bonus > 0], men.bonus[men.bonus > 0]
    bonus_women = next(r for r in got if r.group == "Female").comparison
    assert bonus_women.mean == pytest.approx(wb.mean()) and bonus_women.reference_median == pytest.approx(mb.median())
    unknown = frame[frame.sex.isna()]   # shown as a group of unknown sex, set apart from the sentences
    assert out.receiving == {"Female": (len(women), int((women.bonus > 0).sum())),
                             "Male": (len(men), int((men.bonus > 0).sum())),
                             "Unknown": (len(unknown), int((unknown.bonus > 0).sum()))}
    assert [r.group for r in out.women] == ["Female"]
    # (f): quartile bands of equal size, the workers ranked by pay (those of unknown sex too)
    cuts = np.quantile(frame.pay, [0.25, 0.5, 0.75])
    assert list(out.cuts) == pytest.approx(list(cuts))
    for shown, want in zip(out.bands, ranked_bands(frame), strict=True):
        assert shown.counts == pytest.approx(want)
    # (g): by category, and the categories at 5% or more (grade C: women paid 10% less there)
    for r in out.categories():
        cell = known[known.grade == r.cell.split(" = ")[1]]
        m = cell[cell.sex == "Male"].pay.mean()
        assert r.comparison.mean_gap_share == pytest.approx((m - cell[cell.sex == "Female"].pay.mean()) / m)
    assert [r.cell for r in out.at_threshold()] == ["grade = C"]
    said = " ".join(out.sentences())
    assert "In 1 category of 3 the mean pay gap is 5% or more: grade = C" in said and "joint pay assessment" in said
    document = out.document()
    assert document["categories_at_or_above_5_percent"][0]["category"] == "grade = C"
    assert {t.title.split(" (")[0] for t in out.tables()} >= {"Pay gaps", "Quartile pay bands",
                                                              "Pay gaps by category of workers"}


def test_the_command_line_template_and_a_parquet_file_give_the_same_table(tmp_path):
    from luskin_cli.main import main

    frame = payroll()
    path = tmp_path / "payroll.parquet"
    frame.to_parquet(path)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["audit", "--template", "eu-pay", "--data", str(path), "--amount", "pay", "--sex", "sex",
                       "--bonus", "bonus", "--stratify", "grade", "--json"])
    assert status == 0, err.getvalue()
    document = json.loads(out.getvalue())
    memory = _build(frame, strata=("grade",)).document()
    assert document["quartile_bands"] == json.loads(json.dumps(memory["quartile_bands"]))
    assert document["receiving"] == json.loads(json.dumps(memory["receiving"]))
    assert json.dumps(document["pay"], sort_keys=True) == json.dumps(json.loads(json.dumps(memory["pay"])),
                                                                      sort_keys=True)


def test_a_label_outcome_gets_words_and_no_group_reading_as_men_is_said():
    from luskin_core import load_sample

    out = REGULATOR_TABLES["eu-pay"].build(load_sample("adult"), AuditSpec("income", ">50K", group_by=("sex",)),
                                           RegulatorChoices(sex="sex"))
    assert out.pay is None and "is not an amount" in out.notes()[0] and out.tables() == []
    frame = payroll().assign(sex=lambda f: f.sex.map({"Female": "w", "Male": "x"}))
    named = _build(frame)
    assert "No group reads as men" in " ".join(named.notes())
    assert named.pay.reference == "x"   # the highest mean pay, said


def test_each_line_of_the_pay_gaps_table_has_its_own_gaps_verdict():
    """The table gives the mean's and the median's gap a line each, and both lines carried the comparison's verdict:
    Adult's weekly hours by sex read "Pay: median  40.00  40.00  0.0% ... 1.000  beyond tolerance" (the mean's gap,
    14.2%, made it). Each line now says what its own gap and p-value give, by the same judgement."""
    from luskin_core import load_sample
    from luskin_core.stats.verdict import Verdict

    frame = load_sample("adult")
    out = REGULATOR_TABLES["eu-pay"].build(frame, AuditSpec("hours-per-week", outcome_type="amount",
                                                            group_by=("sex",)), RegulatorChoices(sex="sex"))
    women = out.women[0]
    assert women.verdict is Verdict.BEYOND   # the comparison: a mean gap of 14% that is not chance
    assert women.comparison.median_gap_share == 0 and women.comparison.median_p_adjusted == 1
    pay = next(t for t in out.tables() if t.title.startswith("Pay gaps (Article 9"))
    lines = {row[0]: row for row in pay.rows}
    assert lines["Pay: mean"][-1] == "beyond tolerance" and lines["Pay: median"][-1] == "within tolerance"
    assert women.measure_verdict("mean") is Verdict.BEYOND and women.measure_verdict("median") is Verdict.WITHIN


@pytest.mark.parametrize("who,said", [
    ("nobody", "No worker receives 'bonus' (every amount of it is 0 or below), so it has no gap"),
    ("one woman", "No Male worker receives 'bonus', so it has no gap against Male."),
    ("men only", "No Female worker receives 'bonus': no gap of it for them"),
])
def test_a_bonus_few_or_none_receive_leaves_the_table_standing(who, said):
    """A bonus column nobody received stopped the whole table ("Every row was left out, so nothing can be audited
    ."), and one received by a single woman too ("There is no group called 'Male' to compare with"): the pay gaps,
    the share receiving and the bands stand, and a note says why the bonus has no gap."""
    frame = payroll()
    frame["bonus"] = {"nobody": 0.0, "one woman": np.where(frame.index == frame.index[frame.sex == "Female"][0],
                                                            80.0, 0.0),
                      "men only": np.where(frame.sex == "Male", 80.0, 0.0)}[who]
    out = _build(frame)
    assert out.pay is not None and out.women[0].comparison.mean_gap_share is not None
    assert any(said in note for note in out.notes()), out.notes()
    assert out.bonus is None or all(r.comparison.is_reference for r in out.bonus.overall if not r.unknown)
    receiving = {g: k for g, (_, k) in out.receiving.items()}
    assert receiving["Female"] == int(((frame.sex == "Female") & (frame.bonus > 0)).sum())
    assert len(out.bands) == 4 and "Receiving 'bonus'" in out.text()


@pytest.mark.parametrize("n,step", [(3000, 5.0), (2999, 5.0), (600, 500.0)])
def test_quartile_bands_hold_a_quarter_of_the_workers_on_a_pay_scale(tmp_path, n, step):
    """Pay on a scale (a step holds many workers): cut at the quartile's value, every worker paid exactly a cut
    went to the band above it, so a scale of three steps gave bands of 0, 288, 50 and 262 of 600 workers and "F
    are n/a of the lowest quartile pay band". As the UK's regulations count them, each band holds a quarter of the
    workers, those on the step at a boundary split between the two bands, each sex in proportion; DuckDB on a
    Parquet file gives the same bands as memory."""
    from luskin_core.counting.files import open_file

    frame = payroll(n, seed=n)
    frame["pay"] = np.round(frame.pay / step) * step if step < 100 else \
        np.where(frame.grade == "A", 2000.0, np.where(frame.grade == "B", 2500.0, 3000.0))
    want = ranked_bands(frame)
    path = tmp_path / "pay.parquet"
    frame.to_parquet(path)
    for data in (frame, open_file(str(path))):
        out = _build(data)
        for shown, expected in zip(out.bands, want, strict=True):
            assert shown.counts == pytest.approx(expected)
            assert abs(shown.total - n / 4) <= 1
    said = " ".join(out.sentences())
    assert "n/a of the lowest" not in said
    shown_bands = next(t for t in out.tables() if t.title.startswith("Quartile pay bands"))
    assert [row[2] for row in shown_bands.rows] == [f"{round(sum(w.values())):,}" for w in want]


def test_postgresql_gives_the_bands_of_memory_on_a_pay_scale(postgres_url):
    """The bands count the workers paid more than each cut through the engine (a cut-off just above it): PostgreSQL
    reads that literal as the same double, so its bands are memory's."""
    from engine_servers import load_postgres

    from luskin_core.counting.sources import open_source

    frame = payroll(1200, seed=12)
    frame["pay"] = np.round(frame.pay / 5) * 5
    load_postgres(postgres_url, "eu_pay_scale", frame)
    memory, server = _build(frame), _build(open_source(postgres_url, "eu_pay_scale"))
    for here, there in zip(memory.bands, server.bands, strict=True):
        assert there.counts == pytest.approx(here.counts)
    for here, want in zip(memory.bands, ranked_bands(frame), strict=True):
        assert here.counts == pytest.approx(want)


def test_spark_gives_the_bands_of_memory_on_a_pay_scale(spark_session, tmp_path):
    """The same on Spark (its literal of the cut-off one double above a cut reads back as that double)."""
    from luskin_core.counting.sources import open_source

    frame = payroll(1200, seed=12)
    frame["pay"] = np.round(frame.pay / 5) * 5
    frame.to_parquet(tmp_path / "pay.parquet")
    spark_session.read.parquet(str(tmp_path / "pay.parquet")).createOrReplaceTempView("eu_pay_scale")
    memory, server = _build(frame), _build(open_source("spark:", "eu_pay_scale"))
    for here, there in zip(memory.bands, server.bands, strict=True):
        assert there.counts == pytest.approx(here.counts)
