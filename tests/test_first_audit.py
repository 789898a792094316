"""The first audit right by default (issue 46): a direction the names do not say is asked, never stated as
recognised; the page and the command line read the one rule (``luskin_core.spec.guess.outcome_direction``)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from cli_inproc import run_in_process
from test_app import _config_text, goto, messages, open_app, upload

from luskin_app.ui import unescape
from luskin_core.spec.guess import first_choices, outcome_direction


def florida() -> pd.DataFrame:
    """Radelet's Florida death-penalty cases (Agresti, Categorical Data Analysis, table 2.10): 326 defendants."""
    cells = [("White", "White", 19, 132), ("White", "Black", 0, 9), ("Black", "White", 11, 52),
             ("Black", "Black", 6, 97)]
    rows = []
    for defendant, victim, yes, no in cells:
        rows += [(defendant, victim, "Yes")] * yes + [(defendant, victim, "No")] * no
    return pd.DataFrame(rows, columns=["defendant_race", "victim_race", "death_penalty"])


@pytest.mark.parametrize("outcome, positive", [
    ("death_penalty", "Yes"), ("outcome", 1), ("y", "yes"), ("label", "positive"), ("result", "high"),
    ("ai_score", None), ("final_result", ("Pass", "Fail")),
])
def test_a_direction_the_names_do_not_say_is_not_recognised(outcome, positive):
    guess = outcome_direction(outcome, positive)
    assert guess.value is None and not guess.sure and "recognised" not in guess.reason.replace("not recognised", "")


@pytest.mark.parametrize("outcome, positive, meaning", [
    ("default", 1, "adverse"), ("two_year_recid", 1, "adverse"), ("decision", "denied", "adverse"),
    ("hired", 1, "favourable"), ("hired", 0, "adverse"), ("income", ">50K", "favourable"),
    ("final_result", ("Fail", "Withdrawn"), "adverse"), ("final_result", ("Pass", "Distinction"), "favourable"),
])
def test_a_direction_the_names_say_is_recognised(outcome, positive, meaning):
    guess = outcome_direction(outcome, positive)
    assert guess.value == meaning and guess.sure and "recognised" in guess.reason


def test_the_data_page_asks_before_any_verdict_when_the_names_do_not_say():
    at = upload(open_app(), florida().to_csv(index=False).encode(), "florida.csv", confirm=False)
    assert at.selectbox(key="outcome").value == "death_penalty"
    assert at.radio(key="outcome_is").value is None                       # nothing chosen for the user
    text = " ".join(messages(at, "info") + messages(at, "caption"))
    assert "recognised: a yes counted is good" not in text and "favourable (recognised" not in text
    assert any("cannot tell from the names" in w for w in messages(at, "warning"))
    if [b for b in at.button if b.key == "data_confirm"]:
        at.button(key="data_confirm").click().run()
    assert not messages(at, "success")                                     # no "Ready", no verdict
    assert not [m for m in messages(at, "markdown") if "At a glance" in m]
    assert any("good or bad for the person" in e for e in messages(at, "error"))
    goto(at, "audit")
    assert not at.get("plotly_chart") and not [m for m in messages(at, "markdown") if "favoured" in m]
    goto(at, "data")
    at.radio(key="outcome_is").set_value("adverse").run()
    assert any("Ready: comparing" in s for s in messages(at, "success"))
    assert any("adverse (your choice)" in c for c in messages(at, "caption"))


def test_the_guesses_say_the_direction_was_not_recognised():
    sentences = first_choices(florida()).sentences()
    assert "not recognised" in sentences[-1] and "good for the person: favourable" not in sentences[-1]


def test_the_command_line_says_which_direction_it_took_and_how_to_change_it(tmp_path: Path):
    path = tmp_path / "florida.csv"
    florida().to_csv(path, index=False)
    base = ["audit", "--data", str(path), "--outcome", "death_penalty", "--positive", "Yes",
            "--protected", "defendant_race == Black", "--json"]
    status, out, err = run_in_process(base)
    assert status == 0, err
    assert "Counted 'death_penalty = Yes' as favourable" in err and "not recognised" in err and "--adverse" in err
    assert json.loads(out)["outcome_is"] == "favourable" and "--adverse" in json.loads(out)["outcome_is_rule"]
    status, out, err = run_in_process(base + ["--adverse"])
    assert status == 0 and json.loads(out)["outcome_is"] == "adverse" and err == ""      # asked for: nothing to say
    assert "as given" in json.loads(out)["outcome_is_rule"]
    status, out, err = run_in_process(base + ["--adverse", "--favourable"])
    assert status == 2 and "not allowed with" in err + out
    # a name that says it: recognised, and said so
    frame = florida().assign(arrested=lambda f: f["death_penalty"])
    frame.to_csv(path, index=False)
    status, out, err = run_in_process(["audit", "--data", str(path), "--outcome", "arrested", "--positive", "Yes",
                                       "--protected", "defendant_race == Black", "--json"])
    assert status == 0 and json.loads(out)["outcome_is"] == "adverse"
    assert "recognised from the name 'arrested'" in err and "--favourable" in err


# ------------------------------------------------------------------------------------------
# Several positive values: "Fail or Withdrawn"
# ------------------------------------------------------------------------------------------
def students(n: int = 3000, seed: int = 4) -> pd.DataFrame:
    """An Open University-like table: final_result of four values, a disability flag, an age band."""
    import numpy as np

    rng = np.random.default_rng(seed)
    disability = rng.choice(["Y", "N"], n, p=[0.1, 0.9])
    weights = np.where(disability[:, None] == "Y", [0.30, 0.05, 0.30, 0.35], [0.40, 0.10, 0.25, 0.25])
    result = [rng.choice(["Pass", "Distinction", "Fail", "Withdrawn"], p=w) for w in weights]
    return pd.DataFrame({"disability": disability, "age_band": rng.choice(["0-35", "35-55", "55<="], n),
                         "final_result": result})


def test_several_positive_values_are_counted_together_as_pandas_counts():
    from luskin_core import AuditSpec, audit

    frame = students()
    result = audit(frame, AuditSpec("final_result", ["Fail", "Withdrawn"], protected="disability == Y",
                                    outcome_is="adverse"))
    bad = frame["final_result"].isin(["Fail", "Withdrawn"])
    want = frame.assign(bad=bad).groupby("disability")["bad"].agg(["size", "sum"])
    got = {c.label: (c.n, c.positives) for c in result.cells}
    assert got == {"Y": tuple(want.loc["Y"]), "N": tuple(want.loc["N"])}
    assert result.spec.outcome_text == "final_result is Fail or Withdrawn"
    with pytest.raises(Exception, match="'Failed' never occurs"):
        audit(frame, AuditSpec("final_result", ["Fail", "Failed"], protected="disability == Y"))


def test_the_command_line_takes_positive_more_than_once(tmp_path: Path):
    path = tmp_path / "students.csv"
    students().to_csv(path, index=False)
    status, out, err = run_in_process(["audit", "--data", str(path), "--outcome", "final_result",
                                       "--positive", "Fail", "--positive", "Withdrawn",
                                       "--protected", "disability == Y", "--json"])
    assert status == 0, err
    document = json.loads(out)
    assert document["spec"]["positive"] == ["Fail", "Withdrawn"] and document["outcome_is"] == "adverse"
    frame = students()
    bad = frame["final_result"].isin(["Fail", "Withdrawn"])
    assert sum(c["positives"] for c in document["cells"]) == int(bad.sum())


def test_the_page_offers_several_values_and_the_saved_configuration_keeps_the_list():
    from luskin_core.spec.audit_spec import AuditSpec

    at = upload(open_app(), students().to_csv(index=False).encode(), "students.csv", confirm=False)
    at.selectbox(key="outcome").set_value("final_result").run()
    at.multiselect(key="positive").set_value(["Fail", "Withdrawn"]).run()
    assert at.radio(key="outcome_is").value == "adverse"          # Fail is bad; Withdrawn unknown: they agree
    if [b for b in at.button if b.key == "data_confirm"]:
        at.button(key="data_confirm").click().run()
    assert not at.exception
    assert any("final_result is Fail or Withdrawn" in s for s in messages(at, "success"))
    saved = json.loads(_config_text(at))
    assert saved["spec"]["positive"] == ["Fail", "Withdrawn"]
    assert AuditSpec.from_dict(saved["spec"]).positive == ("Fail", "Withdrawn")


def test_the_guesses_box_says_what_the_user_changed_on_the_same_run():
    at = upload(open_app(), florida().to_csv(index=False).encode(), "florida.csv", confirm=False)
    box = next(m for m in messages(at, "info") if "first guesses" in m)
    assert "Protected column: 'defendant_race'" in box or "Protected column: 'victim_race'" in box
    at.radio(key="outcome_is").set_value("adverse").run()
    box = next(m for m in messages(at, "info") if "first guesses" in m)
    assert "Good or bad for the person: now 'adverse', your choice" in box
    column = at.selectbox(key="protected_column").value
    other = "victim_race" if column == "defendant_race" else "defendant_race"
    at.selectbox(key="protected_column").set_value(other).run()
    box = next(m for m in messages(at, "info") if "first guesses" in m)
    assert f"Protected column: now '{other}', your choice" in box
    assert f"Protected group: now '{other} is" in box


def applicants(n: int = 800, seed: int = 7) -> pd.DataFrame:
    """An LL144-like applicant pool: sex, race, an AI screen's score (many values) and the decision (0/1)."""
    import numpy as np
    rng = np.random.default_rng(seed)
    sex = rng.choice(["Female", "Male"], n)
    race = rng.choice(["Black", "White", "Asian", "Hispanic"], n)
    score = np.round(rng.normal(60, 12, n) + np.where(sex == "Male", 4, 0), 1)
    return pd.DataFrame({"sex": sex, "race": race, "ai_score": score, "selected": (score > 66).astype(int)})


def _ready(at) -> str:
    return " ".join(messages(at, "success") + messages(at, "info"))


def test_a_score_outcome_offers_the_median_or_a_cut_off_at_once_never_an_exact_value():
    frame = applicants()
    at = upload(open_app(), frame.to_csv(index=False).encode(), "applicants.csv")
    at.selectbox(key="outcome").set_value("ai_score").run()
    assert not at.exception, at.exception
    assert not [m for m in at.multiselect if m.key == "positive"]          # no "ai_score is exactly 67.8"
    assert at.radio(key="outcome_score_rule").value == "median"
    text = " ".join(messages(at, "warning") + messages(at, "caption") + _ready(at).split())
    assert "exactly" not in text and "ai_score is " not in _ready(at)
    assert f"The median of ai_score is {frame.ai_score.median():g}." in messages(at, "caption")
    assert any("Amounts page" in c for c in messages(at, "caption"))      # the amounts analysis has its page
    if at.radio(key="outcome_is").value is None:
        at.radio(key="outcome_is").set_value("favourable").run()
    if [b for b in at.button if b.key == "data_confirm"]:
        at.button(key="data_confirm").click().run()
    assert "the share where ai_score above the median" in " ".join(messages(at, "success")).replace("**", "")
    choices = at.session_state["choices"]
    assert (choices["outcome_type"], choices["score_column"], choices["score_cutoff"]) == ("score", "ai_score", None)
    at.radio(key="outcome_score_rule").set_value("cutoff").run()
    at.number_input(key="outcome_cutoff").set_value(70.0).run()
    assert "the share where ai_score at or above 70" in " ".join(messages(at, "success")).replace("**", "")
    assert at.radio(key="outcome_is").value == "favourable"                 # not asked again for each cut-off
    goto(at, "audit")
    assert at.radio(key="audit_outcome_type").value == "score"               # the Audit page shows the same choice
    assert at.number_input(key="audit_cutoff").value == 70.0
    goto(at, "data")
    at.selectbox(key="outcome").set_value("selected").run()                 # back to a two-valued column
    assert at.session_state["choices"]["outcome_type"] == "label"
    assert not [r for r in at.radio if r.key == "outcome_score_rule"]
    assert at.multiselect(key="positive").value == [1]
    goto(at, "audit")
    assert at.radio(key="audit_outcome_type").value == "label"


def test_hours_per_week_is_read_as_a_number_on_the_adult_sample():
    at = open_app()
    at.selectbox(key="outcome").set_value("hours-per-week").run()
    assert not at.exception, at.exception
    assert at.radio(key="outcome_score_rule").value == "median"
    assert not [w for w in messages(at, "warning") if "exactly" in w]


def test_the_ll144_sufficiency_describes_the_ll144_tables_not_the_audit_pages_strata():
    import numpy as np

    from luskin_core.analyses.regulator_tables import REGULATOR_TABLES, RegulatorChoices
    from luskin_core.spec.audit_spec import AuditSpec
    frame = applicants()
    frame["site"] = np.random.default_rng(1).choice(["Queens", "Bronx", "Brooklyn"], len(frame))
    spec = AuditSpec("selected", positive=1, group_by=("sex",), strata=("site",))   # the Audit page's strata
    out = REGULATOR_TABLES["ll144"].build(frame, spec, RegulatorChoices(sex="sex", race="race"))
    items = [s.to_dict() for s in out.sufficiency]
    assert items and all(item["cell"] is None for item in items)             # the tables have one cell
    assert "site" not in " ".join(out.intro())
    counts = frame.groupby(["sex", "race"]).size()                            # an independent count of each row
    for item in items:
        sex, race = item["group"].split(" × ")
        assert item["n"] == counts[(sex, race)]


def test_retrain_speaks_of_the_data_loaded_not_of_adult():
    at = upload(open_app(), applicants().to_csv(index=False).encode(), "applicants.csv")
    goto(at, "retrain")
    text = " ".join(messages(at, "info"))
    assert "Adult" not in text and "a few seconds" not in text
    assert "of this data's 800" in text and "320 rows each" in text


def test_the_regulator_page_offers_the_ll144_scoring_rate_of_a_score_column():
    frame = applicants()
    at = upload(open_app(), frame.to_csv(index=False).encode(), "applicants.csv")
    assert at.selectbox(key="outcome").value == "selected"
    goto(at, "regulator")
    rate = at.radio(key="regulator_ll144_rate")
    assert rate.value == "" and any("ai\\_score" in o or "ai_score" in o for o in rate.options)
    rate.set_value("ai_score").run()
    assert not at.exception, at.exception
    median = frame.ai_score.median()
    shown = {m.label: m.value for m in at.metric}
    assert shown["Median score (scoring rate: strictly above)"] == f"{median:g}"
    # an independent count: each sex's share strictly above the median of the whole sample
    above = (frame.ai_score > median).groupby(frame.sex).mean()
    text = " ".join(str(t.value.to_numpy().ravel().tolist()) for t in at.dataframe)
    for share in above:
        assert f"{share:.1%}" in text or f"{share:.3f}" in text or f"{100 * share:.1f}" in text, (share, text[:500])


def test_the_dashboards_ll144_csv_has_plain_headings_and_statuses_in_words():
    from luskin_core.analyses.regulator_ll144 import CSV_VALUE_WORDS
    from luskin_core.analyses.regulator_tables import REGULATOR_TABLES, RegulatorChoices
    from luskin_core.export import plain_headings
    from luskin_core.spec.audit_spec import AuditSpec
    frame = applicants()
    frame.loc[frame.index[:60], "race"] = "Decline to self-identify"    # unknowns: each ratio gets a status
    frame.loc[frame.index[60:200], "race"] = "two_or_more_races"         # a user's category in snake case
    out = REGULATOR_TABLES["ll144"].build(frame, AuditSpec("selected", positive=1, group_by=("sex",)),
                                          RegulatorChoices(sex="sex", race="race"))
    machine = out.csv_frame()
    codes = set(machine["status"].dropna())
    assert codes and codes <= {"passes", "could_fail", "fails"} and "impact_ratio" in machine.columns
    plain = plain_headings(machine, CSV_VALUE_WORDS)
    assert not [c for c in plain.columns if "_" in c]
    assert {"Category", "Number", "Impact ratio", "Status", "Table"} <= set(plain.columns)
    statuses = set(plain["Status"].dropna())
    assert statuses and not statuses & {"passes", "could_fail", "fails"}
    assert "two_or_more_races" in set(plain["Category"])                   # the user's values untouched
    assert set(plain["Table"]) <= {"Sex", "Race/ethnicity", "Intersectional (sex × race/ethnicity)"}
    assert plain["Impact ratio"].equals(machine["impact_ratio"])            # the numbers as they were
    assert list(machine.columns) == list(out.csv_frame().columns)           # the command line keeps its names


def test_groups_by_columns_are_said_on_the_data_page_without_an_empty_name():
    """Groups by columns (chosen on the Audit page) have no rest: the Data page said "comparing **sex** with ****"
    (an empty bold, shown as four stars), where the sidebar says "each sex group"."""
    from test_app_audit import by_columns

    at = upload(open_app(), applicants().to_csv(index=False).encode(), "applicants.csv")
    goto(at, "audit")
    by_columns(at, "sex")
    goto(at, "data")
    ready = [str(e.value) for e in at.success if "Ready: comparing" in str(e.value)]
    assert ready, messages(at, "success")
    assert "****" not in ready[0] and " with " not in ready[0].split(" on the share")[0], ready[0]
    assert "Ready: comparing each sex group on the share where" in unescape(ready[0]).replace("**", ""), ready[0]
