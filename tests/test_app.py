"""AppTest tests of every dashboard page: widgets, results, and plain messages for bad input.

Widget keys and visible labels (for the browser tests)
------------------------------------------------------
Navigation (st.navigation, sidebar): "Data" (/), "Audit" (/audit), "Retrain" (/retrain),
"Thresholds" (/thresholds), "Equalized distribution" (/equalized), "Report" (/report).
Page files: app_pages/data.py, audit.py, retrain.py, thresholds.py, equalized.py, report.py.

Data   sample_adult / sample_compas / sample_sqf  buttons "Use sample: Adult (census income)",
                                                  "Use sample: COMPAS (re-offending)", "Use sample: NYPD stop-and-frisk 2014"
       upload_csv          file uploader "Upload a CSV file (drag and drop it here)"
       data_preview, data_columns  dataframes; metrics "Rows", "Columns", "Missing values"
       outcome             selectbox "Outcome column (the decision or label to audit)"
       positive            selectbox "Positive value (what counts as a 'yes')"
       protected_column    selectbox "Protected column (e.g. race or sex)"
       protected_values    multiselect "Protected group: the values that form it"     (text column)
       protected_op, protected_number  selectbox "Comparison", number_input "Value of <column>" (numeric column)
       group_label, other_label  text inputs in the expander "Names shown on charts (optional)"
       model_features      multiselect "Model input columns" (expander "Columns the models may use ...")
       for an uploaded file: info box "Luskin's first guesses for this file ..." and data_confirm button
       "Use these choices" (no verdict before it; <page>_confirm on every other page)
       success box "Ready: comparing ..." / error box with the reason, then its ways out:
       <page>_fix_filter_<i> "Remove the filter on <column>", <page>_fix_inf_<i> "Leave <column> out of the
       model inputs", page link "Change the choices on the Data page"
       pending_apply "Apply it to the data loaded now", pending_discard "Forget this configuration"
       (a configuration waiting for its file)
Audit  filter_column, filter_op, filter_value_pick | filter_value_multi | filter_value_number
       ("Column", "Comparison", then "Value" or, for in / not in, "Values"), filter_add button "Add condition",
       filter_remove_<i> buttons "Remove", filter_clear "Remove all conditions"
       tolerance_points    slider "Tolerance (percentage points)"
       tabs "Chart" (plotly key audit_chart) / "Table" (dataframe key audit_table)
       one box per cell with the core's sentence (success = within tolerance, info = over,
       warning = not computable)
Retrain retrain_algorithm radio "Algorithm", retrain_direction radio "Direction",
       retrain_pair selectbox "Models: first (A1) / retrained (C2)" (LR/LR, LR/MLP, MLP/LR, MLP/MLP),
       retrain_all_cells checkbox "Adjust every filter cell (...)",
       retrain_seed "Seed", retrain_run button "Retrain" (absent once the result is cached),
       progress bar while training, metrics "AUC of A1 (..)", "AUC of C2 (..)", "Time",
       retrain_chart, the paper's table (st.table, two header rows), retrain_download_data "Download the synthetic training data (CSV)",
       retrain_download_model "Download the retrained model C2 (skops)"
Thresholds thr_source radio "Scores", thr_model selectbox "Model", thr_score_column "Score column" (plausible
       score columns only; none: warning and thr_train_instead "Train a model instead"),
       thr_tuning radio "Tune the thresholds on" (validation / crossfit),
       thr_solver radio "Solver", thr_lambda number "Fairness weight (lambda)", thr_seed "Seed",
       metrics "Accuracy (test rows)", "TPR gap", "FPR gap", thr_split radio "Rows shown in the chart"
       (tune / test), thr_chart, thr_table
Equalized eq_alphas multiselect "Alphas to train (one model each)", eq_seed "Seed",
       eq_run button "Train the models" (absent once cached), eq_alpha select_slider
       "alpha (weight on accuracy)", eq_hist, eq_accuracy, eq_gaps charts, eq_table
Report report_download "Download the HTML report", report_pdf_make "Make the PDF report" then
       report_pdf_download "Download the PDF report", config_download "Save the configuration (JSON)",
       config_upload file uploader "Load a saved configuration (JSON)"; a configuration of another file waits:
       info box naming the file, report_pending_apply / report_pending_discard buttons
User text is escaped for Markdown (luskin_app.ui.md); ``messages`` unescapes what a reader sees.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from luskin_app.ui import unescape

APP = str(Path(__file__).resolve().parent.parent / "app.py")
TIMEOUT = 300  # seconds for one script run: generous, a loaded 2-core machine is slow (a wait, not a speed check)


def open_app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception
    return at


def goto(at: AppTest, page: str) -> AppTest:
    at.switch_page(f"app_pages/{page}.py").run()
    assert not at.exception, at.exception
    return at


def messages(at: AppTest, kind: str) -> list[str]:
    """The texts of one kind of element as a reader sees them (the app escapes user text for Markdown)."""
    return [unescape(str(e.value)) for e in getattr(at, kind)]


def page_links(at: AppTest) -> list[str]:
    return [link.label for link in at.get("page_link")]


def sidebar_text(at: AppTest) -> str:
    return " ".join(unescape(m.value) for m in at.sidebar.markdown)


def all_text(at: AppTest) -> str:
    parts = []
    for kind in ("error", "warning", "info", "success", "markdown", "caption", "title", "subheader", "header"):
        parts += messages(at, kind)
    return "\n".join(parts)


def metric(at: AppTest, label_start: str) -> str:
    for m in at.metric:
        if m.label.startswith(label_start):
            return m.value
    raise AssertionError(f"no metric {label_start!r}: {[m.label for m in at.metric]}")


def chart(at: AppTest, key: str) -> dict:
    for element in at.get("plotly_chart"):
        if getattr(element, "key", None) == key:
            return json.loads(element.proto.spec)
    keys = [getattr(e, "key", None) for e in at.get("plotly_chart")]
    raise AssertionError(f"no chart {key!r} among {keys}")


def small_csv(n: int = 600, seed: int = 0, **extra: object) -> bytes:
    """A small table with a gap between groups A and B, quick to train on."""
    rng = np.random.default_rng(seed)
    race = rng.choice(["A", "B"], n, p=[0.6, 0.4])
    edu = rng.integers(5, 16, n)
    x = rng.normal(size=n)
    p = 1 / (1 + np.exp(-(0.3 * (edu - 10) + x + (race == "A") * 0.7 - 1)))
    frame = pd.DataFrame({"race": race, "edu": edu, "x": x, "job": rng.choice(["p", "q", "r"], n),
                          "y": np.where(rng.random(n) < p, "yes", "no")})
    for name, value in extra.items():
        frame[name] = value
    return frame.to_csv(index=False).encode()


def upload(at: AppTest, data: bytes, name: str = "small.csv", confirm: bool = True) -> AppTest:
    """Upload a file on the Data page; by default also confirm Luskin's first guesses for it."""
    at.file_uploader(key="upload_csv").set_value((name, data, "text/csv")).run()
    assert not at.exception, at.exception
    if confirm and [r for r in at.radio if r.key == "outcome_is"] and at.radio(key="outcome_is").value is None:
        at.radio(key="outcome_is").set_value("favourable").run()   # the page asks when the names do not say
    if confirm and [b for b in at.button if b.key == "data_confirm"]:
        at.button(key="data_confirm").click().run()
        assert not at.exception, at.exception
    return at


# ------------------------------------------------------------------------------------------
# Data page
# ------------------------------------------------------------------------------------------
def test_opens_on_adult_with_the_papers_settings():
    at = open_app()
    assert at.selectbox(key="outcome").value == "income"
    assert at.multiselect(key="positive").value == [">50K"]
    assert at.selectbox(key="protected_column").value == "race"
    assert at.multiselect(key="protected_values").value == ["White"]
    assert metric(at, "Rows") == "48,842" and metric(at, "Columns") == "15"
    assert int(metric(at, "Missing values").replace(",", "")) > 0
    assert any("White" in s and "Non-White" in s for s in messages(at, "success"))
    glance = [m for m in messages(at, "markdown") if m.startswith("**At a glance:**")]
    assert glance and "44% of White" in glance[0] and "32% of Non-White" in glance[0]
    assert not at.error


def test_sample_button_switches_to_compas_and_its_preset():
    at = open_app()
    at.button(key="sample_compas").click().run()
    assert not at.exception
    assert at.selectbox(key="outcome").value == "two_year_recid"
    assert at.multiselect(key="positive").value == [1]
    assert at.multiselect(key="protected_values").value == ["African-American"]
    assert any("restricted to" in c for c in messages(at, "caption"))
    sidebar = sidebar_text(at)
    assert "7,214 rows" in sidebar and "two_year_recid is 1" in sidebar   # fresh after the click, not one run late
    at.button(key="sample_adult").click().run()
    assert at.selectbox(key="outcome").value == "income"
    at.multiselect(key="protected_values").set_value(["Black"]).run()
    assert "Groups:** Black vs everyone else" in sidebar_text(at)   # race has five values


def test_model_columns_can_be_chosen_and_default_to_the_preset():
    """A column that restates the outcome (COMPAS's decile_score) must be removable by the analyst."""
    at = open_app()
    at.button(key="sample_compas").click().run()
    from luskin_core.counting.data import PRESETS

    features = at.multiselect(key="model_features")
    assert features.value == list(PRESETS["compas"].features)
    features.set_value(["age", "priors_count"]).run()
    assert not at.exception
    assert at.session_state["choices"]["features"] == ["age", "priors_count"]
    goto(at, "retrain")
    goto(at, "data")
    assert at.multiselect(key="model_features").value == ["age", "priors_count"]   # kept across pages


@pytest.mark.parametrize("data, words", [
    (b"", "empty"),
    (b"\x00\x01\x02\x03binary\x00", "not text"),
    (b"justone\n1\n2\n3\n", "one column"),
])
def test_bad_uploads_show_a_plain_message_and_keep_the_data(data, words):
    at = upload(open_app(), data, "bad.csv")
    errors = messages(at, "error")
    assert any(words in e.lower() and "still in use" in e for e in errors), errors
    assert metric(at, "Rows") == "48,842"          # the Adult sample is still loaded
    assert at.selectbox(key="outcome").value == "income"
    goto(at, "audit")
    assert any("44% of White" in s for s in messages(at, "info"))


def test_upload_a_csv_and_choose_columns_from_its_values():
    at = upload(open_app(), small_csv())
    assert metric(at, "Rows") == "600"
    assert at.selectbox(key="outcome").value == "y"
    assert set(at.multiselect(key="positive").options) == {"yes", "no"}
    assert at.selectbox(key="protected_column").value == "race"
    at.multiselect(key="protected_values").set_value(["B"]).run()
    assert any("comparing **B** with **A**" in s for s in messages(at, "success"))   # the other value, by name
    at.text_input(key="group_label").input("Group B").run()
    at.text_input(key="other_label").input("Everyone else").run()
    assert any("comparing **Group B** with **Everyone else**" in s for s in messages(at, "success"))
    goto(at, "audit")
    assert [t["name"] for t in chart(at, "audit_chart")["data"]] == ["Group B", "Everyone else"]
    goto(at, "data")
    at.multiselect(key="protected_values").set_value(["A"]).run()   # another group: the names reset
    assert any("comparing **A** with **B**" in s for s in messages(at, "success"))


def test_all_missing_outcome_is_a_plain_error_and_other_pages_say_so():
    at = upload(open_app(), small_csv(empty=""))
    at.selectbox(key="outcome").set_value("empty").run()
    assert not at.exception
    assert any("no values at all" in e for e in messages(at, "error"))
    goto(at, "audit")
    assert any("no values at all" in e for e in messages(at, "error"))
    assert "Change the choices on the Data page" in page_links(at)   # the way out, beside the error
    goto(at, "data")
    at.selectbox(key="outcome").set_value("y").run()
    assert not at.error


def test_an_outcome_with_many_values_gets_a_plain_note():
    at = upload(open_app(), small_csv())
    at.selectbox(key="outcome").set_value("x").run()
    assert not at.exception
    assert "600 different values" in at.radio(key="outcome_score_rule").label   # read as a score (issue 46)
    at.radio(key="outcome_is").set_value("favourable").run()      # 'x': the names do not say which way is good
    assert messages(at, "success")       # still usable: the share above its median


def test_protected_column_with_one_value_is_a_plain_error():
    at = upload(open_app(), small_csv(const="X"))
    at.selectbox(key="protected_column").set_value("const").run()
    assert not at.exception
    assert any("only one value" in e for e in messages(at, "error"))
    goto(at, "thresholds")
    assert any("only one value" in e for e in messages(at, "error"))


def test_numeric_protected_column_takes_a_comparison():
    at = open_app()
    at.selectbox(key="protected_column").set_value("age").run()
    assert at.selectbox(key="protected_op") is not None
    at.selectbox(key="protected_op").set_value(">=").run()
    at.number_input(key="protected_number").set_value(40.0).run()
    assert not at.exception
    assert any("age >= 40" in s for s in messages(at, "success"))
    goto(at, "audit")
    assert any("age >= 40" in s for s in messages(at, "info") + messages(at, "success"))


def test_choices_persist_across_pages():
    at = open_app()
    at.multiselect(key="protected_values").set_value(["Black"]).run()
    goto(at, "audit")
    assert all("Black" in s for s in messages(at, "info") + messages(at, "success"))
    goto(at, "report")
    goto(at, "data")
    assert at.multiselect(key="protected_values").value == ["Black"]
    assert at.selectbox(key="outcome").value == "income"


# ------------------------------------------------------------------------------------------
# Audit page
# ------------------------------------------------------------------------------------------
def test_audit_shows_the_papers_adult_numbers():
    start = time.perf_counter()
    at = open_app()
    goto(at, "audit")
    elapsed = time.perf_counter() - start
    info = messages(at, "info")
    e_cell = [s for s in info if "more than 10 years of education" in s]
    assert e_cell and "44% of White" in e_cell[0] and "32% of Non-White" in e_cell[0]
    assert "p < 0.001" in e_cell[0]
    spec = chart(at, "audit_chart")
    assert [t["name"] for t in spec["data"]] == ["White", "Non-White"]
    assert spec["data"][0]["marker"]["color"] == "#0072B2"
    assert len(at.dataframe) >= 1
    assert "exceeds the 5-point tolerance in 2 of 2 cells" in all_text(at)
    print(f"\nopen app -> audit chart (AppTest, warm caches unless first test): {elapsed:.2f} s")  # speed: benchmarks/


def test_add_and_remove_filter_conditions():
    at = goto(open_app(), "audit")
    at.button(key="filter_clear").click().run()
    assert any(s.startswith("Among all rows") for s in messages(at, "info"))
    at.selectbox(key="filter_column").set_value("education-num").run()
    at.selectbox(key="filter_op").set_value(">").run()
    at.number_input(key="filter_value_number").set_value(12).run()
    start = time.perf_counter()
    at.button(key="filter_add").click().run()
    redraw = time.perf_counter() - start
    assert not at.exception
    assert any("Where education-num > 12" in s for s in messages(at, "info"))
    at.selectbox(key="filter_column").set_value("sex").run()
    assert at.selectbox(key="filter_op").value == "=="
    at.selectbox(key="filter_value_pick").set_value("Female").run()
    at.button(key="filter_add").click().run()
    text = all_text(at)
    assert "education-num is above 12" in text and "AND **sex is Female**" in text
    assert any("education-num > 12 and sex == Female" in s for s in messages(at, "info") + messages(at, "success"))
    at.button(key="filter_remove_0").click().run()
    assert "education-num is above 12" not in all_text(at)
    assert any("Where sex == Female" in s for s in messages(at, "info") + messages(at, "success"))
    print(f"\nfilter change -> bars redrawn (AppTest): {redraw:.2f} s")
    assert redraw < 5


def test_filter_that_leaves_a_cell_empty_warns_plainly():
    at = goto(open_app(), "audit")
    at.button(key="filter_clear").click().run()
    at.selectbox(key="filter_column").set_value("education-num").run()
    at.selectbox(key="filter_op").set_value(">").run()
    at.number_input(key="filter_value_number").set_value(100).run()
    at.button(key="filter_add").click().run()
    assert not at.exception
    warnings = messages(at, "warning")
    assert any("not computable" in w for w in warnings), warnings
    assert chart(at, "audit_chart")["data"]  # the chart still draws


def test_a_condition_without_values_is_refused_plainly():
    at = goto(open_app(), "audit")
    at.selectbox(key="filter_column").set_value("sex").run()
    at.selectbox(key="filter_op").set_value("in").run()
    at.button(key="filter_add").click().run()
    assert not at.exception
    assert any("at least one value" in e for e in messages(at, "error"))
    assert len([b for b in at.button if b.key and b.key.startswith("filter_remove_")]) == 1


def test_tolerance_changes_the_verdict():
    at = goto(open_app(), "audit")
    at.slider(key="tolerance_points").set_value(15).run()
    assert not at.exception
    success = messages(at, "success")
    assert len(success) == 2 and all("within the 15-point tolerance" in s for s in success)
    assert "Within the 15-point tolerance in every cell" in all_text(at)


# ------------------------------------------------------------------------------------------
# Retrain page
# ------------------------------------------------------------------------------------------
def _small_with_filter() -> AppTest:
    at = upload(open_app(), small_csv())
    goto(at, "audit")
    at.selectbox(key="filter_column").set_value("edu").run()
    at.selectbox(key="filter_op").set_value(">").run()
    at.number_input(key="filter_value_number").set_value(10).run()
    at.button(key="filter_add").click().run()
    assert not at.exception
    return at


def test_retrain_page_runs_shows_table_chart_and_is_cached():
    at = goto(_small_with_filter(), "retrain")
    assert {r.key for r in at.radio} >= {"retrain_algorithm", "retrain_direction"}
    assert at.selectbox(key="retrain_pair").options == ["LR/LR", "LR/MLP", "MLP/LR", "MLP/MLP"]
    at.selectbox(key="retrain_pair").set_value("LR/LR").run()
    at.radio(key="retrain_algorithm").set_value(2).run()
    at.checkbox(key="retrain_all_cells").check().run()
    at.button(key="retrain_run").click().run()
    assert not at.exception and not at.error
    assert 0.5 < float(metric(at, "AUC of A1")) <= 1
    spec = chart(at, "retrain_chart")
    assert [t["name"] for t in spec["data"]] == ["Original labels", "A1 (risk model)", "C2 (retrained)"]
    assert len(at.table) == 2   # the chart's numbers (its text alternative), then the paper's table
    paper = at.table[1].value
    # the guessed group is the smaller one (B), never silently the majority; st.table cells are escaped
    assert [unescape(name) for name in paper["Measure"]] == ["AUC", "Share, B (%)", "Share, A (%)", "Gap (points)"]
    assert {unescape(c).split(",")[0] for c in paper.columns[1:]} == {"Original", "A1 (LR)", "C2 (LR)"}
    assert {d.key for d in at.get("download_button")} == {"retrain_download_data", "retrain_download_model"}
    goto(at, "audit")
    goto(at, "retrain")
    assert not [b for b in at.button if b.key == "retrain_run"]   # shown from the cache at once
    assert chart(at, "retrain_chart")


def test_retrain_adult_lr_mlp_closes_the_gap():
    at = goto(open_app(), "retrain")
    at.selectbox(key="retrain_pair").set_value("LR/MLP").run()
    at.radio(key="retrain_algorithm").set_value(1).run()
    start = time.perf_counter()
    if [b for b in at.button if b.key == "retrain_run"]:
        at.button(key="retrain_run").click().run()
    elapsed = time.perf_counter() - start
    assert not at.exception and not at.error
    spec = chart(at, "retrain_chart")
    original, c2 = spec["data"][0], spec["data"][2]
    e = original["x"].index("more than 10 years of education")
    assert abs(c2["y"][e]) < abs(original["y"][e]) and abs(c2["y"][e]) < 5
    print(f"\nretrain LR/MLP on Adult (AppTest, incl. rerun): {elapsed:.1f} s")


# ------------------------------------------------------------------------------------------
# Thresholds page
# ------------------------------------------------------------------------------------------
def _count_calls(monkeypatch, module, name: str) -> list[int]:
    """Count the calls of ``module.name`` from now on (the real function still runs): a cached page makes none."""
    calls: list[int] = []
    real = getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_thresholds_page_on_compas(monkeypatch):
    at = open_app()
    at.button(key="sample_compas").click().run()
    goto(at, "thresholds")
    assert not at.error
    assert metric(at, "Accuracy (test rows)").endswith("%")
    spec = chart(at, "thr_chart")
    symbols = {t.get("marker", {}).get("symbol") for t in spec["data"] if t.get("mode") == "markers"}
    assert symbols == {"x", "circle"}
    table = at.dataframe[0].value
    assert set(table["When"]) == {"Before", "After"}
    assert "African-American" in set(table["Group"])
    circle = next(t for t in spec["data"] if t.get("marker", {}).get("symbol") == "circle")
    from luskin_core.corrections import thresholds as tuning

    tuned = _count_calls(monkeypatch, tuning, "tune_thresholds")
    at.radio(key="thr_split").set_value("test").run()
    assert not tuned          # the same tuned result, only redrawn
    moved = next(t for t in chart(at, "thr_chart")["data"] if t.get("marker", {}).get("symbol") == "circle")
    assert moved["x"] != circle["x"] or moved["y"] != circle["y"]
    at.radio(key="thr_tuning").set_value("crossfit").run()
    assert not at.exception and not at.error
    assert tuned              # another tuning does call it: the count above sees calls
    assert at.session_state["results"]["thresholds"][2].tuning_method == "crossfit"
    at.radio(key="thr_tuning").set_value("validation").run()
    at.radio(key="thr_solver").set_value("pso").run()
    assert not at.exception and not at.error
    at.radio(key="thr_source").set_value("column").run()
    at.selectbox(key="thr_score_column").set_value("decile_score").run()
    assert not at.exception and not at.error
    table = at.dataframe[0].value      # an agency's score is compared with one shared cut-off
    assert set(table["When"]) == {"Before", "After"}


# ------------------------------------------------------------------------------------------
# Equalized distribution page
# ------------------------------------------------------------------------------------------
def test_equalized_page_sweep_and_slider(monkeypatch):
    at = goto(upload(open_app(), small_csv()), "equalized")
    at.multiselect(key="eq_alphas").set_value([0.0, 0.1, 1.0]).run()
    at.button(key="eq_run").click().run()
    assert not at.exception and not at.error
    slider = at.select_slider(key="eq_alpha")
    assert slider.value == 1.0
    hist = chart(at, "eq_hist")
    assert len(hist["data"]) == 4 and "alpha = 1" in hist["layout"]["title"]["text"]
    from luskin_core.corrections import equalize

    fitted = _count_calls(monkeypatch, equalize, "equalize_frame")
    start = time.perf_counter()
    at.select_slider(key="eq_alpha").set_value(0.0).run()
    step = time.perf_counter() - start
    assert not fitted         # a slider step shows a kept sweep, it trains nothing
    assert not at.exception
    assert "alpha = 0" in chart(at, "eq_hist")["layout"]["title"]["text"]
    accuracy = chart(at, "eq_accuracy")
    assert [s["x0"] for s in accuracy["layout"]["shapes"]] == [0.0]
    print(f"\nalpha slider step (AppTest): {step:.3f} s")
    at.multiselect(key="eq_alphas").set_value([0.0, 1.0]).run()
    at.button(key="eq_run").click().run()
    assert fitted and not at.exception   # another sweep does train: the count above sees fits


# ------------------------------------------------------------------------------------------
# Report page
# ------------------------------------------------------------------------------------------
def _config_text(at: AppTest) -> str:
    goto(at, "report")
    return at.code[0].value


@pytest.mark.slow
def test_report_page_makes_the_pdf_on_request_and_drops_it_when_the_choices_change():
    at = goto(open_app(), "report")
    assert "report_pdf_download" not in {d.key for d in at.get("download_button")}
    at.button(key="report_pdf_make").click().run(timeout=300)
    assert not at.exception and not at.error
    _, pdf = at.session_state["report_pdf"]
    assert pdf.startswith(b"%PDF-") and len(pdf) > 10_000
    assert "report_pdf_download" in {d.key for d in at.get("download_button")}
    goto(at, "audit")
    at.slider(key="tolerance_points").set_value(10).run()
    goto(at, "report")                      # another tolerance, another report: the old PDF is not offered
    assert "report_pdf_download" not in {d.key for d in at.get("download_button")}
    assert any(b.key == "report_pdf_make" for b in at.button)


def test_report_page_buttons_and_config_round_trip():
    at = goto(open_app(), "audit")
    at.slider(key="tolerance_points").set_value(10).run()
    goto(at, "retrain")
    at.selectbox(key="retrain_pair").set_value("MLP/LR").run()
    text = _config_text(at)
    assert {d.key for d in at.get("download_button")} == {"report_download", "report_evidence_download", "config_download"}
    assert json.loads(text)["spec"]["tolerance"] == 0.1
    assert json.loads(text)["options"]["retrain"]["first"] == "MLP"
    goto(at, "audit")
    at.slider(key="tolerance_points").set_value(3).run()
    goto(at, "retrain")
    at.selectbox(key="retrain_pair").set_value("LR/LR").run()
    goto(at, "report")
    at.file_uploader(key="config_upload").set_value(("saved.json", text.encode(), "application/json")).run()
    assert not at.exception
    assert any("Loaded 'saved.json'" in s for s in messages(at, "success"))
    goto(at, "audit")
    assert at.slider(key="tolerance_points").value == 10
    goto(at, "retrain")
    assert at.selectbox(key="retrain_pair").value == "MLP/LR"


def test_configuration_of_an_uploaded_file_round_trips_and_needs_that_file():
    at = upload(open_app(), small_csv())
    at.multiselect(key="protected_values").set_value(["B"]).run()
    text = _config_text(at)
    saved = json.loads(text)
    assert saved["data"]["source"] == "upload:small.csv"
    assert set(saved["options"]) == {"retrain", "thresholds", "equalize"}
    goto(at, "data")
    at.multiselect(key="protected_values").set_value(["A"]).run()
    goto(at, "report")
    at.file_uploader(key="config_upload").set_value(("saved.json", text.encode(), "application/json")).run()
    assert any("Loaded 'saved.json'" in s for s in messages(at, "success"))
    goto(at, "data")
    assert at.multiselect(key="protected_values").value == ["B"]
    # with other data loaded the configuration waits for its file, saying which one; nothing changes
    at.button(key="sample_adult").click().run()
    goto(at, "report")
    at.file_uploader(key="config_upload").set_value(("again.json", text.encode(), "application/json")).run()
    assert not at.exception and not at.error
    waiting = " ".join(messages(at, "info"))
    assert "'small.csv' (600 rows, 5 columns)" in waiting and "Upload that file on the Data page" in waiting
    assert "Upload the file on the Data page" in page_links(at)
    assert not [b for b in at.button if b.key == "report_pending_apply"]   # Adult lacks its columns
    goto(at, "data")
    assert at.selectbox(key="outcome").value == "income"
    assert any("'small.csv' (600 rows, 5 columns)" in s for s in messages(at, "info"))
    # the file arrives: the configuration is applied at once, with no guesses to confirm
    upload(at, small_csv(), confirm=False)
    assert any("'again.json' was applied" in s for s in messages(at, "success"))
    assert at.selectbox(key="outcome").value == "y" and at.multiselect(key="protected_values").value == ["B"]
    assert not [b for b in at.button if b.key == "data_confirm"]
    assert any("comparing **B** with **A**" in s for s in messages(at, "success"))


def test_configuration_waiting_for_its_file_can_be_applied_to_data_whose_columns_fit():
    at = upload(open_app(), small_csv())
    at.multiselect(key="protected_values").set_value(["B"]).run()
    text = _config_text(at)
    goto(at, "data")
    upload(at, small_csv(seed=5), name="other.csv")     # same columns, other rows
    goto(at, "report")
    at.file_uploader(key="config_upload").set_value(("saved.json", text.encode(), "application/json")).run()
    assert any("'small.csv' (600 rows, 5 columns)" in s for s in messages(at, "info"))
    at.button(key="report_pending_apply").click().run()
    assert not at.exception
    assert any("Applied 'saved.json' to the data loaded now" in s for s in messages(at, "success"))
    goto(at, "data")
    assert at.multiselect(key="protected_values").value == ["B"] and metric(at, "Rows") == "600"
    assert not any("waiting" in s for s in messages(at, "info"))


@pytest.mark.parametrize("content, words", [
    (b"this is not json", "not valid JSON"),
    (b'{"hello": 1}', "not a Luskin configuration"),
])
def test_bad_configuration_changes_nothing(content, words):
    at = goto(open_app(), "report")
    at.file_uploader(key="config_upload").set_value(("bad.json", content, "application/json")).run()
    assert not at.exception
    assert any(words in e and "Nothing was changed" in e for e in messages(at, "error"))
    goto(at, "audit")
    assert any("44% of White" in s for s in messages(at, "info"))


def test_report_includes_the_results_computed_on_the_other_pages():
    from luskin_core.present.report import build_html_report

    at = goto(_small_with_filter(), "retrain")
    at.selectbox(key="retrain_pair").set_value("LR/LR").run()
    if [b for b in at.button if b.key == "retrain_run"]:
        at.button(key="retrain_run").click().run()
    goto(at, "thresholds")
    goto(at, "equalized")
    at.multiselect(key="eq_alphas").set_value([0.0, 1.0]).run()
    if [b for b in at.button if b.key == "eq_run"]:
        at.button(key="eq_run").click().run()
    goto(at, "report")
    text = all_text(at)
    for part in ("the retraining results", "the per-group thresholds", "the equalized-distribution sweep"):
        assert part in text
    # the same objects the page hands to the report builder make a complete report
    results = {kind: value[2] for kind, value in at.session_state["results"].items()}
    spec = results["retrain"].spec
    from luskin_core.analyses.audit import audit
    frame = pd.read_csv(__import__("io").BytesIO(small_csv()))
    html = build_html_report([audit(frame, spec), results["retrain"], results["thresholds"], results["equalized"].shown_at(0.0)], frame=frame, dataset="small.csv")
    assert html.count('class="plotly-graph-div"') >= 5 or html.count("Plotly.newPlot") >= 5


def test_configuration_with_a_positive_value_absent_from_the_data():
    at = open_app()
    config = json.loads(_config_text(at))
    config["spec"]["positive"] = "maybe"
    at.file_uploader(key="config_upload").set_value(
        ("absent.json", json.dumps(config).encode(), "application/json")).run()
    assert not at.exception
    assert any("'maybe' never occurs" in e for e in messages(at, "error"))
    goto(at, "data")
    assert at.multiselect(key="positive").value == [">50K"]


# ------------------------------------------------------------------------------------------
# A newcomer's first audit: guesses said on screen, confirmed before the first verdict
# ------------------------------------------------------------------------------------------
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def test_guesses_for_german_credit_are_shown_and_confirmed_before_any_verdict():
    at = upload(open_app(), (FIXTURES / "german_credit.csv").read_bytes(), "german.csv", confirm=False)
    assert at.selectbox(key="outcome").value == "credit"          # not sex, the last column
    assert at.multiselect(key="positive").value == [1]
    assert at.selectbox(key="protected_column").value == "sex"
    assert at.multiselect(key="protected_values").value == ["female"]
    guesses = " ".join(messages(at, "info"))
    assert "Luskin's first guesses for this file" in guesses
    assert "Outcome: 'credit' (recognised from its name)" in guesses
    assert "Counted as positive: '1' (a guess: in a 1/2 coding 1 usually means yes)" in guesses
    assert not messages(at, "success") and not [m for m in messages(at, "markdown") if "At a glance" in m]
    assert at.radio(key="outcome_is").value is None                # 'credit' = 1: the names do not say: asked
    at.radio(key="outcome_is").set_value("favourable").run()
    assert "Choices not confirmed yet" in sidebar_text(at)
    goto(at, "audit")                                             # no verdict on other pages either
    assert not at.get("plotly_chart") and [b for b in at.button if b.key == "audit_confirm"]
    assert any("Protected group: sex is female" in s for s in messages(at, "info"))
    at.button(key="audit_confirm").click().run()                  # confirmed right there
    assert not at.exception
    assert chart(at, "audit_chart")["data"][0]["name"] == "female"
    goto(at, "data")
    assert not [b for b in at.button if b.key == "data_confirm"]
    assert any("Ready: comparing **female** with **male**" in s for s in messages(at, "success"))   # by its value


def test_law_school_counts_passing_as_positive_and_samples_need_no_confirmation():
    at = upload(open_app(), (FIXTURES / "law_school.csv").read_bytes(), "law.csv", confirm=False)
    assert at.selectbox(key="outcome").value == "pass_bar" and at.multiselect(key="positive").value == [1]
    assert at.multiselect(key="protected_values").value == ["Black"]
    at.selectbox(key="outcome").set_value("fulltime").run()       # another outcome: its value is guessed too
    assert at.multiselect(key="positive").value == [1]
    at.button(key="sample_compas").click().run()
    assert not [b for b in at.button if b.key == "data_confirm"] and messages(at, "success")


# ------------------------------------------------------------------------------------------
# No dead ends: every error offers its way out where it is shown
# ------------------------------------------------------------------------------------------
def test_a_filter_on_the_new_protected_column_has_a_way_out_on_both_pages():
    at = goto(open_app(), "audit")
    at.selectbox(key="filter_column").set_value("age").run()
    at.selectbox(key="filter_op").set_value(">").run()
    at.number_input(key="filter_value_number").set_value(40).run()
    at.button(key="filter_add").click().run()
    goto(at, "data")
    at.selectbox(key="protected_column").set_value("age").run()
    assert not at.exception
    assert any("The filter uses the protected column 'age'" in e for e in messages(at, "error"))
    assert [b.label for b in at.button if b.key == "data_fix_filter_1"] == ["Remove the filter on age"]
    goto(at, "audit")                                             # the Audit page keeps the filter editable
    assert any("The filter uses the protected column 'age'" in e for e in messages(at, "error"))
    assert [b for b in at.button if b.key == "audit_fix_filter_1"] and at.button(key="filter_remove_1")
    assert "Change the choices on the Data page" in page_links(at)
    at.button(key="audit_fix_filter_1").click().run()
    assert not at.exception and not at.error
    assert chart(at, "audit_chart")                               # the audit is back, on age >= its median
    assert any("education-num > 10" in s for s in messages(at, "info") + messages(at, "success"))


def test_thresholds_offer_only_plausible_score_columns():
    at = open_app()
    at.button(key="sample_compas").click().run()
    goto(at, "thresholds")
    at.radio(key="thr_source").set_value("column").run()
    options = at.selectbox(key="thr_score_column").options
    assert options[:3] == ["decile_score", "decile_score.1", "v_decile_score"]
    assert "id" not in options and "two_year_recid" not in options
    assert at.selectbox(key="thr_score_column").value == "decile_score"
    assert not at.exception and not at.error


def test_no_plausible_score_column_says_so_with_the_way_out():
    rng = np.random.default_rng(2)
    n = 400
    frame = pd.DataFrame({"case_id": np.arange(n) + 1000, "race": rng.choice(["A", "B"], n),
                          "zip": rng.integers(10_000, 99_999, n), "job": rng.choice(["p", "q"], n),
                          "approved": rng.choice(["yes", "no"], n)})
    at = goto(upload(open_app(), frame.to_csv(index=False).encode()), "thresholds")
    at.radio(key="thr_source").set_value("column").run()
    assert any("No column can serve as a score" in w for w in messages(at, "warning"))
    at.button(key="thr_train_instead").click().run()
    assert not at.exception and at.radio(key="thr_source").value == "model"


def test_corrections_warnings_are_shown_prominently_and_escaped():
    from dataclasses import dataclass

    def page() -> None:
        from dataclasses import dataclass as dc

        from luskin_app.ui import show_warnings

        @dc(frozen=True)
        class Result:
            warnings: tuple[str, ...]

        show_warnings(Result(("C2's AUC fell from 0.82 to 0.71 for [x](https://attacker.example).",)), object())

    at = AppTest.from_function(page).run()
    assert not at.exception and len(at.warning) == 1
    body = at.warning[0].value
    assert "\\[x\\]\\(h\u2060ttps" in body and unescape(body).startswith("C2's AUC fell from 0.82 to 0.71")
    assert dataclass  # the page above defines its own


# ------------------------------------------------------------------------------------------
# Bad input on the app side: a plain message with the way out, the data kept
# ------------------------------------------------------------------------------------------
def _with_data(frame: pd.DataFrame, name: str = "data.csv") -> AppTest:
    """A fresh session on a frame put in place as an upload would (for data no reader produces)."""
    from luskin_app.choices import guess_choices
    from luskin_app.dataset import Dataset
    from luskin_core.counting.data import frame_fingerprint

    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["dataset"] = Dataset(f"upload:{name}", name, frame, frame_fingerprint(frame))
    choices = guess_choices(frame)[0]
    choices["outcome_is"] = choices["outcome_is"] or "favourable"   # the user's answer where the names do not say
    at.session_state["choices"] = choices
    at.session_state["confirmed"] = True
    at.run()
    assert not at.exception
    return at


def test_infinite_numbers_in_a_model_column_have_a_way_out_on_each_model_page():
    from luskin_core.counting.data import load_csv

    frame = load_csv(small_csv())
    frame["x"] = frame["x"].astype(float)
    frame.loc[[3, 9], "x"] = [np.inf, -np.inf]      # the readers make 'inf' missing; other sources may not
    at = _with_data(frame)
    for page, key in (("retrain", "retrain_fix_inf_0"), ("thresholds", "thresholds_fix_inf_0"),
                      ("equalized", "equalized_fix_inf_0")):
        goto(at, page)
        assert any("infinite numbers" in e and "'x' in 2 rows" in e for e in messages(at, "error")), page
        assert [b.label for b in at.button if b.key == key] == ["Leave x out of the model inputs"], page
    at.button(key="equalized_fix_inf_0").click().run()
    assert not at.exception and not at.error
    assert at.session_state["choices"]["features"] == ["race", "edu", "job"]
    goto(at, "thresholds")
    assert not at.exception and not at.error and chart(at, "thr_chart")


@pytest.mark.parametrize("data, words", [
    (b"\x1f\x8b\x08\x00\x00\x00\x00\x00damaged", "could not be"),
    (b"Race,y,race\nA,1,B\nB,0,A\n", "two columns named 'Race' and 'race'"),
])
def test_unreadable_uploads_keep_the_data(data, words):
    at = upload(open_app(), data, "bad.csv")
    errors = messages(at, "error")
    assert any(words in e and "still in use" in e for e in errors), errors
    assert metric(at, "Rows") == "48,842"


def test_a_50_mb_cell_is_never_offered_in_a_dropdown_and_add_condition_works():
    rng = np.random.default_rng(0)
    n = 300
    frame = pd.DataFrame({"race": rng.choice(["A", "B"], n), "note": rng.choice(["p", "q"], n),
                          "edu": rng.integers(5, 16, n), "y": rng.choice(["yes", "no"], n)})
    frame.loc[3, "note"] = "Z" * 50_000_000
    at = goto(upload(open_app(), frame.to_csv(index=False).encode(), "big.csv"), "audit")
    at.selectbox(key="filter_column").set_value("note").run()
    assert at.selectbox(key="filter_value_pick").options == ["q", "p"]
    assert any("1 value of this column is longer than 1,000 characters" in c for c in messages(at, "caption"))
    at.button(key="filter_add").click().run()
    assert not at.exception and any("Where note == q" in s for s in messages(at, "info") + messages(at, "success"))
    goto(at, "data")
    preview = at.dataframe[0].value
    assert preview["note"].map(len).max() < 1_100                 # shortened on screen, whole in the data


@pytest.mark.parametrize("change, words", [
    (lambda c: c.update(features=5), "not a list of column names"),
    (lambda c: c["options"]["thresholds"].update(lam=50), "from 0 to 20"),
    (lambda c: c["options"]["retrain"].update(seed="x"), "whole number"),
    (lambda c: c["options"]["equalize"].update(alphas=[0.33]), "must be one of"),
    (lambda c: c["options"]["retrain"].update(speed=3), "settings this version does not know: speed"),
    (lambda c: c.update(features=["age", "no such column"]), "no model input column named 'no such column'"),
])
def test_configuration_entries_are_checked_before_use(change, words):
    at = open_app()
    saved = json.loads(_config_text(at))
    change(saved)
    at.file_uploader(key="config_upload").set_value(("edited.json", json.dumps(saved).encode(), "application/json")).run()
    assert not at.exception
    assert any(words in e and "Nothing was changed" in e for e in messages(at, "error")), messages(at, "error")
    goto(at, "audit")
    assert any("44% of White" in s for s in messages(at, "info"))


def test_deeply_nested_configuration_is_refused_plainly():
    at = goto(open_app(), "report")
    deep = b"[" * 100_000 + b"]" * 100_000
    at.file_uploader(key="config_upload").set_value(("deep.json", deep, "application/json")).run()
    assert not at.exception
    assert any("could not be loaded" in e and "Nothing was changed" in e for e in messages(at, "error"))
