"""An amount on the dashboard (issue 50): offered on the Audit page and on the Data page for a numeric column with
many values (never assumed), audited on the Amounts page made from the analyses' table, with the library's numbers."""

from __future__ import annotations

from test_app import goto, messages, open_app
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
    assert any("Mean gap share (%)" in list(d.value.columns) for d in at.dataframe)   # the unit in the heading


def test_an_amount_chosen_on_the_data_page_is_the_audit_pages_choice_and_the_amounts_pages():
    """Issue 50: a numeric outcome of many values offers, on the Data page, a third reading beside the median and
    a cut-off: an amount (never the default). It makes the Audit page's "An amount" choice, so both pages and the
    Amounts page agree; a column of a few values puts the label back."""
    from streamlit.navigation.page import calc_hash

    at = open_app()
    at.selectbox(key="outcome").set_value("hours-per-week").run()
    assert not at.exception, at.exception
    rule = at.radio(key="outcome_score_rule")
    assert rule.value == "median" and rule.options[-1].startswith("An amount")   # offered, never assumed
    rule.set_value("amount").run()
    assert not at.exception, at.exception
    if at.radio(key="outcome_is").value is None:
        at.radio(key="outcome_is").set_value("favourable").run()
    assert "Is 'hours-per-week is higher' good or bad for the person?" == unescape(at.radio(key="outcome_is").label)
    choices = at.session_state["choices"]
    assert (choices["outcome_type"], choices["score_column"], choices["score_cutoff"]) == ("amount",
                                                                                            "hours-per-week", None)
    assert any("mean and median of **hours-per-week**" in unescape(s) for s in messages(at, "success"))
    goto(at, "audit")
    assert not at.exception, at.exception
    assert at.radio(key="audit_outcome_type").value == "amount"          # the Audit page shows the same choice
    assert at.selectbox(key="audit_score_column").value == "hours-per-week"
    assert any("is audited as an amount" in unescape(i.value) for i in at.info)
    at._page_hash = calc_hash("amounts")
    at.run()
    assert not at.exception, at.exception
    preset = PRESETS["adult"].spec
    expected = run(load_sample("adult"), preset.with_changes(
        outcome="hours-per-week", outcome_type="amount", positive=None, outcome_is="favourable"))
    assert headline(expected) in [unescape(str(h.value)) for h in at.header]
    goto(at, "data")
    assert at.radio(key="outcome_score_rule").value == "amount"          # kept on coming back
    at.selectbox(key="outcome").set_value("income").run()                # a column of a few values: its label
    assert at.session_state["choices"]["outcome_type"] == "label"
    goto(at, "audit")
    assert at.radio(key="audit_outcome_type").value == "label"
