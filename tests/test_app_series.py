"""AppTest of the "Over time" page: the period column and length from dropdowns, the chart, trend and alerts.

Widget keys: series_column (selectbox, the date column), series_every (month | quarter | year),
series_format (text input, strptime codes, empty: recognised), series_cell (with several cells),
chart series_chart.
"""

from __future__ import annotations

import json

from test_app import goto, messages, open_app

from luskin_app.ui import unescape
from luskin_core.analyses.series import audit_series
from luskin_core.counting.data import PRESETS, load_sample


def test_over_time_page_on_compas_shows_the_cores_series():
    at = open_app()
    at.button(key="sample_compas").click().run()
    goto(at, "series")
    assert not at.error
    assert at.selectbox(key="series_column").value == "compas_screening_date"
    # only columns whose values read as dates are offered (not age, not the decile scores)
    offered = at.selectbox(key="series_column").options
    assert "compas_screening_date" in offered and "age" not in offered and "decile_score" not in offered
    expected = audit_series(load_sample("compas"), PRESETS["compas"].spec, "compas_screening_date", "month")
    shown = " ".join(unescape(m.value) for m in at.markdown)
    assert expected.headline() in shown
    for trend in expected.trends:
        assert trend.sentence in shown
    # the follow-up's end (every group at 100% from 2014-05) is said as a caveat, not reported as a finding
    assert messages(at, "info")[:len(expected.flag_sentences())] == expected.flag_sentences()
    assert "every group's share is 100%" in " ".join(messages(at, "info"))
    assert not messages(at, "warning") and "narrowed" not in shown
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert spec["data"][0]["x"] == list(expected.periods)
    table = at.dataframe[0].value
    assert "Note" in table.columns and not any("_" in c for c in table.columns)
    late = table[table["Period"] == "2014-06"].iloc[0]
    assert late["Share (%)"] == "100.0" and "set aside" in late["Note"]
    # kept at the user's request: the artefact's alert comes back, and the page says the periods are flagged
    at.checkbox(key="series_keep_flagged").check().run()
    kept = audit_series(load_sample("compas"), PRESETS["compas"].spec, "compas_screening_date", "month",
                        keep_flagged=True)
    assert [a.sentence for a in kept.alerts] == messages(at, "warning")
    assert any(m.startswith("Kept in the trends and alerts") for m in messages(at, "info"))
    at.checkbox(key="series_keep_flagged").uncheck().run()
    # the bounds over the rows with no protected value (COMPAS has none: said once, not per period)
    at.checkbox(key="series_bounds").check().run()
    assert not at.exception
    said = [m for m in messages(at, "info") if "no known value of 'race'" in m]
    assert said == [("There are no rows with no known value of 'race' in any cell, so the gaps and impact ratios stand as "
                     "measured.")]
    at.checkbox(key="series_bounds").uncheck().run()
    # quarters
    at.selectbox(key="series_every").set_value("quarter").run()
    assert not at.exception and not at.error
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert spec["data"][0]["x"][0] == "2013 Q1"
    # a format that cannot make months: a plain sentence
    at.selectbox(key="series_every").set_value("month").run()
    at.text_input(key="series_format").input("%Y").run()
    assert not at.exception
    assert any("has no month" in e for e in messages(at, "error"))


def test_over_time_page_says_when_the_file_has_no_date_column():
    at = open_app()  # the Adult sample: no column holds dates (age, hours-per-week and fnlwgt are numbers)
    goto(at, "series")
    assert not at.exception and not at.error
    assert any("This file has no column of dates" in m for m in messages(at, "info"))
    assert not at.selectbox and not at.get("plotly_chart")
    # the user may still choose a column, and is told plainly that it holds no dates, in the page's words
    at.checkbox(key="series_any_column").check().run()
    at.selectbox(key="series_column").set_value("age").run()
    errors = messages(at, "error")
    assert any("'age' does not hold dates" in e for e in errors)
    assert not any("--" in e for e in errors)  # no command-line option on a page


def test_audit_page_draws_raw_and_pooled_shares_when_a_group_is_small():
    from test_app_audit import by_columns

    from luskin_core import AuditSpec, audit

    at = open_app()
    at.button(key="sample_compas").click().run()
    at = by_columns(goto(at, "audit"), "race", "sex", "age_cat")  # the preset keeps two races
    at.radio(key="audit_cell_mode").set_value("none").run()
    assert not at.exception and not at.error
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    pooled = next(c for c in charts if "Small groups" in c["layout"]["title"]["text"])
    preset = PRESETS["compas"].spec
    expected = audit(load_sample("compas"), AuditSpec(preset.outcome, preset.positive, group_by=("race", "sex", "age_cat"),
                                                      population=preset.population, outcome_is=preset.outcome_is))
    rows = [c for c in expected.comparisons if c.rate is not None]
    assert pooled["data"][1]["x"] == [100 * c.pooled_rate for c in rows]
    assert pooled["data"][0]["x"] == [100 * c.rate for c in rows]
    small = next(c for c in rows if c.n < 100 and not c.is_reference)
    assert expected.sentence(small).split(" With only")[1] in " ".join(unescape(m.value) for m in at.markdown)


def test_report_page_adds_the_series_once_the_over_time_page_has_run():
    at = open_app()
    at.button(key="sample_compas").click().run()
    goto(at, "report")
    before = " ".join(unescape(m.value) for m in at.markdown)
    assert "the audit over time" not in before
    goto(at, "series")
    at.selectbox(key="series_every").set_value("quarter").run()
    goto(at, "report")
    assert not at.error
    shown = " ".join(unescape(m.value) for m in at.markdown)
    assert "the audit over time" in shown
