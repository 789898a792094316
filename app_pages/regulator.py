"""Regulator page: the NYC Local Law 144 tables and the EEOC Uniform Guidelines table.

Thin: the choices (sex and race/ethnicity columns, values read as unknown, the 2% exclusion) are
gathered here; the numbers, words and files come from :mod:`luskin_core.analyses.regulator` and
:mod:`luskin_core.stats.power`. The page opens with what the data could show (data sufficiency), as
every audit view does. The columns are guessed only where the data support it; a file with no sex or
race/ethnicity column gets the tables that can be made and says why the others cannot.
"""

from __future__ import annotations

import io
import json
from typing import Any

import streamlit as st

from luskin_app import dataset, ui
from luskin_app.auditing import run_audit
from luskin_core.analyses.regulator import (
    KIND_TITLES,
    STATUS_WORDS,
    UNKNOWN_WHAT,
    eeoc_frame,
    eeoc_meaning,
    eeoc_rows,
    guess_ll144_columns,
    ll144_audit,
    ll144_from_summary,
    read_summary,
)
from luskin_core.export import csv_bytes
from luskin_core.stats.power import sufficiency, sufficiency_lines

NONE = "(no such column)"

st.title("Regulator tables")
st.caption("NYC Local Law 144 bias audit (DCWP rules, 6 RCNY §5-301) and the EEOC Uniform Guidelines "
           "(four-fifths beside significance, shortfall, flip test), for the outcome chosen on the Data page.")


def show_ll144(ll144: Any) -> None:
    """The three tables, their words and downloads (from the rows or from a published table)."""
    if ll144.selected_means:
        st.info(ui.md(ll144.selected_means), icon=ui.ICONS["info"])
    a, b, c = st.columns(3)
    a.metric("Individuals assessed", f"{ll144.assessed:,}")
    b.metric("Unknown sex or race/ethnicity", f"{ll144.unknown_count:,}")
    if ll144.scoring and ll144.median is not None:
        c.metric("Median score (scoring rate: strictly above)", f"{ll144.median:g}")
    elif ll144.no_outcome_count:
        c.metric("Rows with no outcome (not assessed)", f"{ll144.no_outcome_count:,}")
    frame = ll144.to_frame()
    rate_column = frame.columns[4]
    for table in ll144.tables:
        st.subheader(KIND_TITLES[table.kind] + " categories")
        st.caption(ui.md(f"Unknown {UNKNOWN_WHAT[table.kind]}: {table.unknown_count:,} (not in this table)."))
        if table.reason:
            st.info(ui.md(f"No impact ratios: {table.reason}"), icon=ui.ICONS["info"])
        part = frame[(frame["table"] == table.kind) & (frame["category"] != "Unknown")].drop(columns="table")
        if part.empty:
            continue
        part = part.assign(status=[STATUS_WORDS.get(s, "") if isinstance(s, str) else "" for s in part["status"]])
        if not table.unknown_count:
            part = part.drop(columns=["impact_ratio_low", "impact_ratio_high", "status"])
        ui.grid(part, hide_index=True,
                column_config={rate_column: st.column_config.NumberColumn(format="percent"),
                               "impact_ratio": st.column_config.NumberColumn(format="%.2f"),
                               "impact_ratio_low": st.column_config.NumberColumn("lowest over the unknowns",
                                                                                 format="%.2f"),
                               "impact_ratio_high": st.column_config.NumberColumn("highest over the unknowns",
                                                                                  format="%.2f")})
    st.markdown(ui.bullet_list(ll144.sentences()))
    one, two = st.columns(2)
    one.download_button("Download the tables (CSV)", csv_bytes(frame), "ll144.csv", "text/csv",
                        icon=ui.ICONS["download"])
    two.download_button("Download the tables (JSON)", json.dumps(ll144.to_dict(), indent=2), "ll144.json",
                        "application/json", icon=ui.ICONS["download"])


def _published(raw: bytes, exclude: bool, unknown: tuple[str, ...]) -> Any:
    return ll144_from_summary(read_summary(io.BytesIO(raw)), exclude_small=exclude, unknown=unknown)


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
    published = ui.guarded(_published, upload.getvalue(), published_exclude,
                           tuple(v.strip() for v in published_unknown.split(",") if v.strip()), where="regulator")
    if published is not None:
        show_ll144(published)
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

ll144_tab, eeoc_tab = st.tabs(["Local Law 144", "EEOC Uniform Guidelines"])
with ll144_tab:
    source: Any = data.engine if data.engine is not None else data.frame
    ll144 = ui.guarded(ll144_audit, source, spec, sex, race, exclude_small=exclude, unknown=unknown,
                       where="regulator")
    if ll144 is not None:
        if sex is not None and race is not None and all(t.reason is None for t in ll144.tables[:2]):
            crossed = ui.guarded(run_audit, spec.with_changes(group_by=(sex, race), protected=None, group_label=None,
                                                              other_label=None), where="regulator")
            if crossed is not None:
                st.markdown(ui.bullet_list(line.strip(" -") for line in
                                           sufficiency_lines(sufficiency(crossed.comparisons, crossed.spec))))
        show_ll144(ll144)

with eeoc_tab:
    meaning = eeoc_meaning(spec)
    if meaning:
        st.info(ui.md(meaning), icon=ui.ICONS["info"])
    for column in (c for c in (sex, race) if c is not None):
        result = ui.guarded(run_audit, spec.with_changes(group_by=(column,), protected=None, group_label=None,
                                                         other_label=None), where="regulator")
        if result is None:
            continue
        st.subheader(f"{ui.md(column, 80)}: every group against {ui.md(result.reference, 80)}")
        st.markdown(ui.bullet_list(line.strip(" -") for line in sufficiency_lines(sufficiency(result.comparisons,
                                                                                                result.spec))))
        rows = eeoc_rows(result.comparisons, adverse=spec.adverse)
        ui.grid(eeoc_frame(rows), hide_index=True)
        st.markdown(ui.bullet_list(r.sentence for r in rows))
