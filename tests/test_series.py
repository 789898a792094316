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
    audit_series,
    cusum,
    detect_format,
    difference_variance,
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
    result = audit_series(planted, spec, "compas_screening_date", "month")
    assert result.period_format == "ISO8601" and len(result.periods) == 12
    alerts = [a for a in result.alerts if a.group == "Caucasian"]
    # about 150 Caucasian rows a month: the run that passes the threshold starts in July, found by September
    assert alerts and alerts[0].since == "2013-07" and alerts[0].period <= "2013-09" and alerts[0].direction == "down"
    assert "Alert" in alerts[0].sentence
    untouched = audit_series(frame, spec, "compas_screening_date", "month")
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
    with pytest.raises(LuskinError, match="format Luskin does not recognise"):
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
    html = build_html_report(series.overall, series=series)
    assert "Over time: per quarter of &#x27;compas_screening_date&#x27;" in html or \
        "Over time: per quarter of &#39;compas_screening_date&#39;" in html
    assert "Alerts: a gap changed beyond chance" in html  # COMPAS's 2014 follow-up gap
    assert "Every comparison per quarter" in html
    assert "Small groups: raw and partially pooled shares" in html
    plain = build_html_report(audit(compas, AuditSpec("two_year_recid", 1, group_by=("sex",))))
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
    assert "Every comparison per quarter" in html and "Alerts: a gap changed beyond chance" in html
    for label in expected.periods:
        assert label in html
    code = main(["report", "--preset", "compas", "--html", str(tmp_path / "plain.html")])
    assert code == 0 and "Every comparison per" not in (tmp_path / "plain.html").read_text(encoding="utf-8")
    assert main(["report", "--preset", "compas", "--period", "race", "--html", str(target)]) == 2


def test_presentation_has_a_slide_for_the_trend(compas):
    from luskin_core.present.slides import build_slides

    spec = AuditSpec("two_year_recid", 1, group_by=("race",))
    series = audit_series(compas, spec, "compas_screening_date", "quarter")
    plain = build_slides(series.overall)
    slides = build_slides(series.overall, series=series)
    assert len(slides) == len(plain) + 1
    slide = next(s for s in slides if s.key == "finding-series")
    assert slide.sentences[0] == series.headline()
    assert slide.sentences[1] == (series.alerts[0].sentence if series.alerts else series.trends[0].sentence)
    drawn = {trace.name for trace in slide.figure.data}
    assert {c.group for r in series.results for c in r.judged} <= drawn
    # after the findings, before the caveats
    kinds = [s.kind for s in slides]
    assert kinds.index("caveats") > slides.index(slide) > max(i for i, s in enumerate(plain) if s.kind == "finding")
