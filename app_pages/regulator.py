"""Regulator page: the NYC Local Law 144 tables and the EEOC Uniform Guidelines table.

Thin: the choices (sex and race/ethnicity columns, values read as unknown, the 2% exclusion) are
gathered here; one tab per entry of :data:`luskin_core.analyses.regulator_tables.REGULATOR_TABLES`, whose
outputs give the numbers, words and files. The page opens with what the data could show (data sufficiency), as
every audit view does. The columns are guessed only where the data support it; a file with no sex or
race/ethnicity column gets the tables that can be made and says why the others cannot.
"""

from __future__ import annotations

import io
import json
from typing import Any

import streamlit as st

from luskin_app import auth, dataset, evidence_view, record, trail, ui
from luskin_core.analyses.regulator import guess_ll144_columns
from luskin_core.analyses.regulator_ll144 import CSV_VALUE_WORDS
from luskin_core.analyses.regulator_tables import REGULATOR_TABLES, RegulatorChoices
from luskin_core.counting.memory import cut_into_ranges
from luskin_core.export import csv_bytes, plain_headings
from luskin_core.spec.guess import score_columns

NONE = "(no such column)"

st.title("Regulator tables")
st.caption("NYC Local Law 144 bias audit (DCWP rules, 6 RCNY §5-301) and the EEOC Uniform Guidelines "
           "(four-fifths beside significance, shortfall, flip test), for the outcome chosen on the Data page.")


def show_output(output: Any, name: str, evidence: Any = None) -> None:
    """A regulator table's output (any entry of REGULATOR_TABLES): notes, metrics, tables, words, downloads (and
    ``evidence``, a function making its evidence file, where there is one)."""
    for note in output.notes():
        st.info(ui.md(note), icon=ui.ICONS["info"])
    if output.intro():
        st.markdown(ui.bullet_list(output.intro()))
    metrics = output.metrics()
    for column, (label, value) in zip(st.columns(len(metrics)) if metrics else [], metrics):
        column.metric(label, value)
    for table in output.tables():
        st.header(ui.md(table.title, 120))
        if table.intro:
            st.markdown(ui.bullet_list(table.intro))
        if table.reason:
            st.info(ui.md(f"No impact ratios: {table.reason}"), icon=ui.ICONS["info"])
        if table.rows:
            st.caption(ui.md(table.note))
            # in words: headers, one precision, separators; a wide table in parts that each fit the window
            ui.grid_fitting(table.words(), hide_index=True)
    st.markdown(ui.bullet_list(output.sentences()))
    one, two = st.columns(2)
    words = CSV_VALUE_WORDS if name == "ll144" else None   # headings and codes in words (the CLI keeps the names)
    ui.download_button("Download the tables (CSV)", csv_bytes(plain_headings(output.csv_frame(), words)), f"{name}.csv",
                       "text/csv", where=one,
                       icon=ui.ICONS["download"], key=f"regulator_{name}_csv")
    ui.download_button("Download the tables (JSON)", json.dumps(output.document(), indent=2, default=str),
                       f"{name}.json", "application/json", where=two, icon=ui.ICONS["download"],
                       key=f"regulator_{name}_json")
    if evidence is not None:
        ui.download_button("Download the evidence", evidence, f"{name}.evidence", "application/zip",
                           icon=ui.ICONS["download"], key=f"regulator_{name}_evidence", evidence=True)
        st.caption("One file anyone can check (the Verify page, or `luskin verify FILE`): every number recomputed from "
                   "its counts; once verified, it gives the public summary to publish and its CSV.")


def _published(raw: bytes, exclude: bool, unknown: tuple[str, ...]) -> Any:
    return REGULATOR_TABLES["ll144"].from_summary(io.BytesIO(raw), RegulatorChoices(exclude_small=exclude,
                                                                                     unknown=unknown))


if st.toggle("I have the published table, not the rows", key="regulator_published",
             help="A Local Law 144 summary of results as a CSV: columns table (sex, race_ethnicity or intersectional), "
                  "category, applicants, and selected (or scoring_rate); each table's unknowns as category Unknown."):
    upload = st.file_uploader("The published table (CSV)", type=["csv"], key="regulator_summary")
    published_exclude = st.checkbox("Leave categories under 2% out of the impact ratios",
                                    key="regulator_summary_exclude")
    published_unknown = st.text_input("Other categories to read as unknown (comma-separated)",
                                      key="regulator_summary_unknown")
    if upload is None:
        st.stop()
    published_unknown_ = tuple(v.strip() for v in published_unknown.split(",") if v.strip())
    published = ui.guarded(_published, upload.getvalue(), published_exclude, published_unknown_, where="regulator")
    if published is not None:
        trail.note("regulator tables", settings={"table": "ll144", "published": True,
                                                 "exclude_small": published_exclude, "unknown": list(published_unknown_)},
                   produced=trail.result_text(published),
                   data={"name": upload.name, "rows": None, "hash": record.digest(upload.getvalue())})
        show_output(published, "ll144", evidence_view.published_evidence(
            upload.getvalue(), upload.name, RegulatorChoices(exclude_small=published_exclude, unknown=published_unknown_),
            auth.current()))
    st.stop()

spec = ui.require_spec("regulator")
data = dataset.dataset()
columns = [str(c) for c in data.frame.columns if str(c).lower() != spec.outcome.lower()]
guess_sex, guess_race = guess_ll144_columns(data.frame, skip=(spec.outcome,))
options = [NONE, *columns]

left, middle, right = st.columns(3)
sex_choice = left.selectbox("Sex column", options, index=options.index(guess_sex) if guess_sex else 0,
                            key="regulator_sex", format_func=ui.option_text)
race_choice = middle.selectbox("Race/ethnicity column", options, index=options.index(guess_race) if guess_race else 0,
                               key="regulator_race", format_func=ui.option_text)
exclude = right.checkbox("Leave categories under 2% out of the impact ratios", key="regulator_exclude",
                         help="6 RCNY §5-301(d): the category's n and rate are still shown, with the justification. "
                              "The 2% is of the table's known individuals.")
extra_unknown = st.text_input(
    "Other values to read as unknown (comma-separated)", key="regulator_unknown",
    help="'Decline to self-identify', 'Prefer not to say', 'Not disclosed', 'Unknown' and empty cells are read as "
         "unknown already; name any other spelling your file uses.")
unknown = tuple(v.strip() for v in extra_unknown.split(",") if v.strip())
sex = None if sex_choice == NONE else sex_choice
race = None if race_choice == NONE else race_choice
missing = [what for what, column in (("sex", sex), ("race/ethnicity", race)) if column is None]
if missing:
    st.info(ui.md(f"No {' or '.join(missing)} column was found in this file (none is named like one or holds "
                  "values like its categories), so its tables cannot be made. Choose the column above if it has "
                  "another name."), icon=ui.ICONS["info"])
if sex is None and race is None:
    st.stop()
if sex is not None and sex == race:
    ui.show_error("Choose different columns for sex and race/ethnicity.")
    st.stop()

choices = RegulatorChoices(sex=sex, race=race, exclude_small=exclude, unknown=unknown)


def ll144_rate_spec(spec: Any) -> Any:
    """The specification the LL144 tables count with: the selection rate of the outcome, or the scoring rate
    (strictly above the median of the whole sample, the law's definition) of a score column chosen here."""
    if spec.outcome_type == "score":
        if spec.score_cutoff is not None:
            st.caption(ui.md(f"Local Law 144's scoring rate counts {spec.outcome} strictly above its median: the "
                             f"tables use it, not the cut-off of {spec.score_cutoff:g} chosen for the other pages."))
        return spec.with_changes(score_cutoff=None)
    offered = score_columns(data.frame, outcome=spec.outcome, protected=[c for c in (sex, race) if c])
    # a score is named like one or is a measurement; integer codes (edu_level 0..5) are categories, as every
    # analysis reads them (cut_into_ranges), and have no median a scoring rate could mean anything above
    found = [c for c in offered.columns if c in offered.named or cut_into_ranges(data.frame[c])]
    if not found:
        return spec
    rates = {"": f"Selection rate ({spec.outcome_text})",
             **{c: f"Scoring rate of {c} (strictly above its median)" for c in found}}
    column = st.radio("What the Local Law 144 tables count", list(rates), key="regulator_ll144_rate",
                      format_func=lambda c: ui.md(rates[c], 120), horizontal=True,
                      help="An automated tool that scores rather than selects is audited by its scoring rate: the "
                           "share of each category scoring above the median of the whole sample (6 RCNY §5-300).")
    if not column:
        return spec
    return spec.with_changes(outcome=column, outcome_type="score", positive=None, score_cutoff=None,
                             outcome_is="favourable")
source: Any = data.engine if data.engine is not None else data.frame
for tab, entry in zip(st.tabs([t.title for t in REGULATOR_TABLES.values()]), REGULATOR_TABLES.values()):
    with tab:
        spec_used = ll144_rate_spec(spec) if entry.name == "ll144" else spec
        output = ui.guarded(entry.build, source, spec_used, choices, where="regulator")
        if output is not None:
            trail.note("regulator tables", settings={"spec": trail.spec_settings(spec_used), "table": entry.name,
                                                     "sex": sex, "race": race, "exclude_small": exclude,
                                                     "unknown": list(unknown)},
                       produced=trail.result_text(output))
            show_output(output, entry.name, evidence_view.ll144_evidence(source, spec_used, choices, data, auth.current())
                        if entry.name == "ll144" else None)
