"""An amount on the dashboard (issue 50): offered on the Audit page for a numeric column with many values (never
assumed), audited on the Amounts page made from the analyses' table, with the library's numbers."""

from __future__ import annotations

from test_app import goto, open_app
from test_app_audit import by_columns

from luskin_app.ui import unescape
from luskin_core import load_sample
from luskin_core.analyses.amounts import run
from luskin_core.counting.data import PRESETS
from luskin_core.present.amounts_report import headline


def test_an_amount_chosen_on_the_audit_page_is_audited_on_the_amounts_page():
    from streamlit.navigation.page import calc_hash

    at = open_app()
    goto(at, "audit")
    assert at.radio(key="audit_outcome_type").value == "label"        # never assumed
    by_columns(at, "sex")
    at.radio(key="audit_outcome_type").set_value("amount").run()
    assert not at.exception, at.exception
    offered = at.selectbox(key="audit_score_column").options
    assert "hours-per-week" in offered and "education-num" not in offered   # 16 values: not an amount
    at.selectbox(key="audit_score_column").set_value("hours-per-week").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("is audited as an amount" in unescape(i.value) for i in at.info)
    at._page_hash = calc_hash("amounts")   # the page made from the table's line has no file: its address's hash
    at.run()
    assert not at.exception, at.exception
    assert [t.value for t in at.title] == ["Amounts"]
    preset = PRESETS["adult"].spec   # the sample's preset keeps its filter (the paper's cells) and population
    expected = run(load_sample("adult"), preset.with_changes(
        outcome="hours-per-week", outcome_type="amount", positive=None, protected=None, group_label=None,
        other_label=None, group_by=("sex",)))
    assert headline(expected) in [unescape(str(h.value)) for h in at.header]   # the section's lead
    assert any("Mean gap share" in list(d.value.columns) for d in at.dataframe)
