"""Audits over time (luskin_core.analyses.series): periods, per-period comparisons, trend and alerts, on real data."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

from luskin_cli.main import main
from luskin_core import AuditSpec, LuskinError, audit
from luskin_core.analyses.series import (
    FEW_ROWS_SHARE,
    audit_series,
    cusum,
    date_columns,
    detect_format,
    difference_variance,
    holds_dates,
    period_keys,
    weighted_trend,
)
from luskin_core.counting.data import load_data
from luskin_core.counting.sources import open_source

SQF = "/work/shared/data/sqf_2014.csv.gz"
SPEC = AuditSpec("frisked", "Y", group_by=("race",))


@pytest.fixture(scope="module")
def sqf_raw():
    return load_data(SQF)


def _months_by_hand(values: pd.Series) -> pd.Series:
    """MDDYYYY read independently: the text, zero-padded to 8 characters, through pandas' own strptime."""
    text = values.astype("string").str.strip().str.zfill(8)
    return pd.to_datetime(text, format="%m%d%Y", errors="coerce").dt.strftime("%Y-%m")


def test_sqf_monthly_series_recognises_mddyyyy_and_matches_a_groupby(sqf_raw):
    result = audit_series(sqf_raw, SPEC, "datestop", "month")
    assert result.period_format == "%m%d%Y"
    assert result.periods == tuple(f"2014-{m:02d}" for m in range(1, 13))
    month = _months_by_hand(sqf_raw["datestop"])
    expected = sqf_raw.assign(month=month, y=(sqf_raw["frisked"] == "Y")).groupby(["month", "race"])["y"].agg(
        ["size", "sum"])
    rows = result.series_rows()
    assert len(rows) == len(expected)
    for row in rows:
        size, positives = expected.loc[(row["period"], row["group"])]
        assert (row["n"], row["positives"]) == (size, positives)
    assert result.n_without_period == int(month.isna().sum())
    # the same with the format given, and as text with a leading space (as in NYPD's file)
    spaced = sqf_raw.assign(datestop=" " + sqf_raw["datestop"].astype("string"))
    given = audit_series(spaced, SPEC, "datestop", "month", "%m%d%Y")
    assert [(r["period"], r["group"], r["n"]) for r in given.series_rows()] == \
        [(r["period"], r["group"], r["n"]) for r in rows]


def test_each_period_is_the_audit_of_its_rows_with_the_whole_datas_reference(sqf_raw):
    result = audit_series(sqf_raw, SPEC, "datestop", "quarter")
    quarter = pd.to_datetime(sqf_raw["datestop"].astype("string").str.zfill(8), format="%m%d%Y").dt.quarter
    assert result.periods == ("2014 Q1", "2014 Q2", "2014 Q3", "2014 Q4")
    for q, label in zip(range(1, 5), result.periods):
        alone = audit(sqf_raw.loc[(quarter == q).to_numpy()], SPEC.with_changes(reference=result.reference))
        got = result.results[result.periods.index(label)]
        for a, b in zip(alone.comparisons, got.comparisons):
            assert (a.group, a.n, a.positives, a.verdict) == (b.group, b.n, b.positives, b.verdict)
            for name in ("difference", "difference_ci_low", "p_adjusted", "impact_ratio", "pooled_rate"):
                assert getattr(a, name) == pytest.approx(getattr(b, name), abs=1e-12) if getattr(a, name) is not None \
                    else getattr(b, name) is None


def test_duckdb_gives_the_in_memory_series(sqf_raw, tmp_path):
    frame = sqf_raw[["datestop", "race", "frisked", "sex"]].copy()
    frame["text_date"] = " " + frame["datestop"].astype("string")
    frame["day"] = pd.to_datetime(frame["datestop"].astype("string").str.zfill(8), format="%m%d%Y")
    path = tmp_path / "sqf.parquet"
    frame.to_parquet(path)
    spec = AuditSpec("frisked", "Y", group_by=("race",), strata=("sex",))
    memory = audit_series(frame, spec, "datestop", "month")
    for column in ("datestop", "text_date", "day"):
        engine = audit_series(open_source(str(path)), spec, column, "month")
        assert engine.periods == memory.periods
        assert engine.period_format == (None if column == "day" else "%m%d%Y")
        a = [(r["period"], r["group"], r["cell"], r["n"], r["positives"]) for r in engine.series_rows()]
        b = [(r["period"], r["group"], r["cell"], r["n"], r["positives"]) for r in memory.series_rows()]
        assert a == b
        assert [t.p_value for t in engine.trends] == pytest.approx([t.p_value for t in memory.trends], rel=1e-9)


def test_trend_is_statsmodels_wls_with_known_variances(sqf_raw):
    result = audit_series(sqf_raw, SPEC, "datestop", "month")
    trend = next(t for t in result.trends if t.group == "W")
    rows = [r for r in result.series_rows() if r["group"] == "W"]
    d = np.array([r["difference"] for r in rows])
    v = difference_variance([r["positives"] for r in rows], [r["n"] for r in rows],
                            [r["reference_positives"] for r in rows], [r["reference_n"] for r in rows])
    t = np.arange(len(rows), dtype=float)
    fit = sm.WLS(d, sm.add_constant(t), weights=1 / v).fit(cov_type="fixed scale")
    assert trend.slope == pytest.approx(fit.params[1], rel=1e-9)
    assert trend.p_value == pytest.approx(fit.pvalues[1], rel=1e-6)
    low, high = fit.conf_int()[1]
    assert (trend.slope_ci_low, trend.slope_ci_high) == pytest.approx((low, high), rel=1e-6)
    assert weighted_trend(t, d, v)[0] == pytest.approx(fit.params[1], rel=1e-9)


def test_cusum_finds_a_planted_shift_and_not_noise():
    rng = np.random.default_rng(5)
    n = 20_000
    share = np.full(24, 0.25)
    share[12:] -= 0.03
    k1, k2 = rng.binomial(n, share), rng.binomial(n, 0.30, 24)
    d, v = k1 / n - k2 / n, difference_variance(k1, n, k2, n)
    found = cusum(list(d), list(v))
    assert found and found[0]["at"] in (12, 13) and found[0]["direction"] == -1
    assert found[0]["before"] == pytest.approx(-0.05, abs=0.01)
    flat = rng.binomial(n, 0.25, 24)
    assert cusum(list(flat / n - k2 / n), list(difference_variance(flat, n, k2, n))) == []


def test_a_planted_shift_on_real_rows_raises_an_alert(compas):
    # COMPAS screenings of 2013 (later ones have too short a follow-up for two-year recidivism: their
    # rates fall to 0 and the alerts rightly fire); from July on a third of Caucasians' flags are cleared
    dates = pd.to_datetime(compas["compas_screening_date"])
    frame = compas.loc[(dates < "2014-01-01").to_numpy()].reset_index(drop=True)
    dates = pd.to_datetime(frame["compas_screening_date"])
    rng = np.random.default_rng(0)
    late = (dates >= "2013-07-01").to_numpy() & (frame["race"] == "Caucasian").to_numpy()
    flip = late & (frame["two_year_recid"] == 1).to_numpy() & (rng.random(len(frame)) < 0.6)
    planted = frame.copy()
    planted.loc[flip, "two_year_recid"] = 0
    spec = AuditSpec("two_year_recid", 1, group_by=("race",), reference="African-American")
    # June and July 2013 hold a fifth of a usual month's screenings: flagged, and kept here (the shift starts in July)
    assert [f.period for f in audit_series(planted, spec, "compas_screening_date", "month").flagged] == \
        ["2013-06", "2013-07"]
    result = audit_series(planted, spec, "compas_screening_date", "month", keep_flagged=True)
    assert result.period_format == "ISO8601" and len(result.periods) == 12
    alerts = [a for a in result.alerts if a.group == "Caucasian"]
    # about 150 Caucasian rows a month: the run that passes the threshold starts in July, found by September
    assert alerts and alerts[0].since == "2013-07" and alerts[0].period <= "2013-09" and alerts[0].direction == "down"
    assert "Alert" in alerts[0].sentence
    untouched = audit_series(frame, spec, "compas_screening_date", "month", keep_flagged=True)
    assert not [a for a in untouched.alerts if a.group == "Caucasian"]


@pytest.mark.parametrize("values, fmt", [
    (["20140131", "20141201"], "%Y%m%d"), ([1312014, 12012014], "%m%d%Y"), ([" 1312014", "12012014 "], "%m%d%Y"),
    (["31012014", "13122014"], "%d%m%Y"), (["2014-01-31", "2014-12-01"], "ISO8601"),
    (["31/01/2014", "13/12/2014"], "%d/%m/%Y"), ([2013, 2014], "%Y"),
])
def test_date_formats_are_recognised(values, fmt):
    assert detect_format(pd.Series(values, name="d")) == fmt


def test_period_keys_match_pandas_dates(sqf_raw):
    keys = period_keys(sqf_raw["datestop"], "%m%d%Y", "quarter")
    dates = pd.to_datetime(sqf_raw["datestop"].astype("string").str.zfill(8), format="%m%d%Y")
    assert (keys == dates.dt.year * 10 + dates.dt.quarter).all()
    bad = period_keys(pd.Series([1322014, 2302014, 13012014]), "%m%d%Y", "month")
    assert np.isnan(bad[0]) and bad[1] == 201402 and np.isnan(bad[2])  # day 32 and month 13 have no period


def test_plain_errors():
    with pytest.raises(LuskinError, match="'when' does not hold dates in a format Luskin recognises"):
        detect_format(pd.Series(["soon", "later"], name="when"))
    frame = pd.DataFrame({"d": ["2014-01-02"] * 4, "y": [1, 0, 1, 0], "g": list("abab")})
    with pytest.raises(LuskinError, match="month, 'quarter' or 'year'|'month', 'quarter'"):
        audit_series(frame, AuditSpec("y", 1, group_by=("g",)), "d", "week")
    with pytest.raises(LuskinError, match="already plays a part"):
        audit_series(frame, AuditSpec("y", 1, group_by=("g",)), "g")
    with pytest.raises(LuskinError, match="no month"):
        audit_series(frame, AuditSpec("y", 1, group_by=("g",)), "d", "month", "%Y")


def test_cli_json_has_series_and_alerts(capsys):
    code = main(["audit", "--data", SQF, "--outcome", "frisked", "--positive", "Y", "--groups", "race",
                 "--period", "datestop", "--every", "month", "--period-format", "%m%d%Y", "--json"])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["periods"][0] == "2014-01" and len(doc["periods"]) == 12
    assert len(doc["series"]) == 12 * 8
    assert set(doc["series"][0]) == set(doc["comparisons"][0]) | {"period"}
    assert isinstance(doc["alerts"], list) and len(doc["trends"]) == 7
    code = main(["audit", "--data", SQF, "--outcome", "frisked", "--positive", "Y", "--groups", "race",
                 "--period", "datestop", "--every", "week"])
    assert code == 2


def test_report_has_the_over_time_section_and_the_small_groups_chart(compas):
    from luskin_core.present.report import build_html_report

    spec = AuditSpec("two_year_recid", 1, group_by=("race", "sex"))
    series = audit_series(compas, spec, "compas_screening_date", "quarter")
    html = build_html_report([series.overall, series])
    assert "Over time: per quarter of &#x27;compas_screening_date&#x27;" in html or \
        "Over time: per quarter of &#39;compas_screening_date&#39;" in html
    # COMPAS's 2014 follow-up (every group at 100%, few rows) is a caveat, not an alert
    assert "Periods flagged: artefacts of the data" in html and "Alerts: a gap changed beyond chance" not in html
    kept = audit_series(compas, spec, "compas_screening_date", "quarter", keep_flagged=True)
    assert kept.alerts and "Alerts: a gap changed beyond chance" in build_html_report([kept.overall, kept])
    assert "Every comparison per quarter" in html
    assert "Small groups: raw and partially pooled shares" in html
    plain = build_html_report([audit(compas, AuditSpec("two_year_recid", 1, group_by=("sex",)))])
    assert "Over time" not in plain and "partially pooled shares" not in plain  # no small group, no series


def test_cli_report_has_the_over_time_section(tmp_path, capsys):
    from luskin_core import load_sample

    target = tmp_path / "report.html"
    code = main(["report", "--preset", "compas", "--period", "compas_screening_date", "--every", "quarter",
                 "--html", str(target), "--json"])
    assert code == 0
    said = json.loads(capsys.readouterr().out)
    assert said["written"] == {"html": str(target)} and "series" in said["seconds"]
    html = target.read_text(encoding="utf-8")
    from luskin_core.counting.data import PRESETS

    expected = audit_series(load_sample("compas"), PRESETS["compas"].spec, "compas_screening_date", "quarter")
    assert "Every comparison per quarter" in html and "Periods flagged: artefacts of the data" in html
    for label in expected.periods:
        assert label in html
    code = main(["report", "--preset", "compas", "--html", str(tmp_path / "plain.html")])
    assert code == 0 and "Every comparison per" not in (tmp_path / "plain.html").read_text(encoding="utf-8")
    assert main(["report", "--preset", "compas", "--period", "race", "--html", str(target)]) == 2


def test_presentation_has_a_slide_for_the_trend(compas):
    from luskin_core.present.slides import build_slides

    spec = AuditSpec("two_year_recid", 1, group_by=("race",))
    series = audit_series(compas, spec, "compas_screening_date", "quarter")
    plain = build_slides([series.overall])
    slides = build_slides([series.overall, series])
    assert len(slides) == len(plain) + 1
    slide = next(s for s in slides if s.key == "finding-series")
    assert slide.sentences[0] == series.headline()
    assert slide.sentences[1] == (series.alerts[0].sentence if series.alerts else series.trends[0].sentence)
    drawn = {trace.name for trace in slide.figure.data}
    assert {c.group for r in series.results for c in r.judged} <= drawn
    # after the findings, before the caveats
    kinds = [s.kind for s in slides]
    assert kinds.index("caveats") > slides.index(slide) > max(i for i, s in enumerate(plain) if s.kind == "finding")


# ------------------------------------------------------------------------------------------------
# Artefacts are not findings: periods where every group is at 0% or 100%, or with few rows
# ------------------------------------------------------------------------------------------------
def _compas_months(compas: pd.DataFrame) -> pd.DataFrame:
    """COMPAS's preset rows per month, counted by pandas: rows and each race's share of two_year_recid = 1."""
    rows = compas[compas["race"].isin(["African-American", "Caucasian"])]
    month = pd.to_datetime(rows["compas_screening_date"]).dt.strftime("%Y-%m")
    return rows.assign(month=month).groupby(["month", "race"])["two_year_recid"].agg(["size", "mean"]).unstack()


def test_compas_follow_up_end_is_flagged_not_reported_as_a_narrowing(compas):
    from luskin_core.counting.data import PRESETS

    spec = PRESETS["compas"].spec
    result = audit_series(compas, spec, "compas_screening_date", "month")
    by_hand = _compas_months(compas)
    saturated = [m for m in by_hand.index if (by_hand["mean"].loc[m] == 1).all()]
    sizes = by_hand["size"].sum(axis=1)
    few = [m for m in by_hand.index if sizes[m] < FEW_ROWS_SHARE * sizes.median()]
    assert saturated == [f"2014-{m:02d}" for m in range(5, 13)]  # the follow-up ends: only re-offenders are left
    assert [f.period for f in result.flagged if f.reason == "all_positive"] == saturated
    assert [f.period for f in result.flagged if f.reason == "few_rows"] == few
    assert "2014-04" in few  # 98% and 97%: the month the follow-up runs out, with a third of the usual rows
    said = " ".join(result.sentences())
    assert "narrowed" not in said and "beyond chance since" not in said and not result.alerts
    assert "every group's share is 100%" in said and "2014-05 to 2014-12" in said
    trend = result.trends[0]
    assert trend.periods == len(result.periods) - len({f.period for f in result.flagged}) and trend.p_value > 0.05
    # the same trend by hand over the months kept: statsmodels' WLS with the known variances
    kept = [(label, c) for label, r in zip(result.periods, result.results) for c in r.judged
            if label not in {f.period for f in result.flagged}]
    d = np.array([c.difference for _, c in kept])
    v = difference_variance([c.positives for _, c in kept], [c.n for _, c in kept],
                            [c.reference_positives for _, c in kept], [c.reference_n for _, c in kept])
    t = np.array([int(label[:4]) * 12 + int(label[5:]) for label, _ in kept], dtype=float)
    fit = sm.WLS(d, sm.add_constant(t), weights=1 / v).fit(cov_type="fixed scale")
    assert trend.slope == pytest.approx(fit.params[1], rel=1e-9) and trend.p_value == pytest.approx(fit.pvalues[1])
    # kept at the user's request: the artefact's "narrowing" and alert are back, and said to be flagged
    asked = audit_series(compas, spec, "compas_screening_date", "month", keep_flagged=True)
    assert asked.kept_flagged and asked.alerts and "narrowed" in asked.trends[0].sentence
    assert asked.flag_sentences()[0].startswith("Kept in the trends and alerts")
    doc = result.to_dict()
    assert doc["flagged_periods_kept"] is False and {f["period"] for f in doc["flagged_periods"]} >= set(saturated)


def test_a_saturated_tail_would_fake_a_trend_and_is_set_aside():
    """Simulated: a constant 10-point gap for 18 months, then 6 months where everyone has the outcome (a follow-up
    that ended). Kept, the tail makes a narrowing beyond chance; set aside, the trend test sees the truth."""
    rng = np.random.default_rng(3)
    parts = []
    for month in range(24):
        for group, share in (("a", 0.40), ("b", 0.30)):
            n = 400
            y = np.ones(n, dtype=int) if month >= 18 else (rng.random(n) < share).astype(int)
            parts.append(pd.DataFrame({"g": group, "y": y, "d": f"{2020 + month // 12}-{month % 12 + 1:02d}-15"}))
    frame = pd.concat(parts, ignore_index=True)
    spec = AuditSpec("y", 1, group_by=("g",), reference="b")
    kept = audit_series(frame, spec, "d", "month", keep_flagged=True)
    assert kept.trends[0].p_value < 0.001 and "narrowed" in kept.trends[0].sentence
    honest = audit_series(frame, spec, "d", "month")
    assert [f.period for f in honest.flagged] == list(honest.periods[18:])
    assert {f.reason for f in honest.flagged} == {"all_positive"}  # as many rows as usual: no few-rows flag
    assert honest.trends[0].periods == 18 and honest.trends[0].p_value > 0.01 and not honest.alerts


def test_a_declining_series_is_not_flagged_for_few_rows(sqf_raw):
    # NYPD's stops fell through 2014 (December has 37% of the median month): a real decline, not an artefact
    result = audit_series(sqf_raw, SPEC, "datestop", "month")
    assert result.flagged == ()


@pytest.mark.parametrize("values, dates", [
    ([2014, 2015, 2016, None], True), (["2014-01-31", "2014-02-01", "not known", "2014-03-02"] * 10, False),
    (["2014-01-31"] * 19 + ["n/a"], True), ([20140131, 20150228], True), ([1312014, 12012014], True),
    ([17, 34, 69, 90], False), ([0, 1, 1, 0], False), (["yes", "no"], False), ([0.5, 1.5], False),
    ([True, False], False), (["Male", "Female"], False), ([77516, 83311, 215646], False), ([None, None], False),
])
def test_holds_dates_reads_values_not_names(values, dates):
    assert holds_dates(pd.Series(values, name="x")) is dates


def test_date_columns_of_real_files(compas):
    found = date_columns(compas)
    assert "compas_screening_date" in found and "dob" in found
    assert not {"age", "decile_score", "priors_count", "two_year_recid", "id"} & set(found)
    adult = pd.DataFrame({"age": [39, 50, 38], "fulltime": ["yes", "no", "yes"], "hours": [40, 13, 40],
                          "fnlwgt": [77516, 83311, 215646]})
    assert date_columns(adult) == []
    with pytest.raises(LuskinError, match="'age' does not hold dates.*no other column that holds dates"):
        audit_series(adult.assign(y=[1, 0, 1], g=["a", "b", "a"]), AuditSpec("y", 1, group_by=("g",)), "age")


def test_cli_says_a_column_holds_no_dates_and_keeps_flagged_periods_when_asked(capsys):
    assert main(["audit", "--preset", "compas", "--period", "age"]) == 2
    err = capsys.readouterr().err
    assert "'age' does not hold dates" in err and "--period-format" in err and "compas_screening_date" in err
    assert main(["audit", "--preset", "compas", "--period", "compas_screening_date"]) == 0
    out = capsys.readouterr().out
    assert "narrowed" not in out and "set aside: few rows, every group at 100%" in out
    assert "Set aside from the trends and alerts" in out
    assert main(["audit", "--preset", "compas", "--period", "compas_screening_date", "--keep-flagged-periods",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["flagged_periods_kept"] is True and doc["alerts"]
