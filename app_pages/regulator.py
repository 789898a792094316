"""Regulator page: the NYC Local Law 144 tables and the EEOC Uniform Guidelines table.

Thin: the choices (sex and race/ethnicity columns, the 2% exclusion) are gathered here; the
numbers, words and files come from :mod:`luskin_core.analyses.regulator` and :mod:`luskin_core.stats.power`.
The page opens with what the data could show (data sufficiency), as every audit view does.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from luskin_app import dataset, ui
from luskin_app.auditing import run_audit
from luskin_core.analyses.regulator import KIND_TITLES, eeoc_frame, eeoc_rows, ll144_audit
from luskin_core.stats.power import sufficiency, sufficiency_lines

st.title("Regulator tables")
st.caption("NYC Local Law 144 bias audit (DCWP rules, 6 RCNY §5-301) and the EEOC Uniform Guidelines "
           "(four-fifths beside significance, shortfall, flip test), for the outcome chosen on the Data page.")
spec = ui.require_spec("regulator")
data = dataset.dataset()
columns = [str(c) for c in data.frame.columns if str(c).lower() != spec.outcome.lower()]


def _guess(words: tuple[str, ...]) -> int:
    for i, c in enumerate(columns):
        if any(w in c.lower() for w in words):
            return i
    return 0


left, middle, right = st.columns(3)
sex = left.selectbox("Sex column", columns, index=_guess(("sex", "gender")), key="regulator_sex",
                     format_func=ui.option_text)
race = middle.selectbox("Race/ethnicity column", columns, index=_guess(("race", "ethnic")), key="regulator_race",
                        format_func=ui.option_text)
exclude = right.checkbox("Leave categories under 2% out of the impact ratios", key="regulator_exclude",
                         help="6 RCNY §5-301(d): the category's n and rate are still shown, with the justification.")
if sex == race:
    ui.show_error("Choose different columns for sex and race/ethnicity.")
    st.stop()

ll144_tab, eeoc_tab = st.tabs(["Local Law 144", "EEOC Uniform Guidelines"])
with ll144_tab:
    source: Any = data.engine if data.engine is not None else data.frame
    ll144 = ui.guarded(ll144_audit, source, spec, sex, race, exclude_small=exclude, where="regulator")
    crossed = ui.guarded(run_audit, spec.with_changes(group_by=(sex, race), protected=None, group_label=None,
                                                      other_label=None), where="regulator")
    if ll144 is not None:
        if crossed is not None:
            st.markdown(ui.bullet_list(line.strip(" -") for line in sufficiency_lines(sufficiency(crossed.comparisons,
                                                                                                 crossed.spec))))
        a, b, c = st.columns(3)
        a.metric("Individuals assessed", f"{ll144.total + ll144.unknown_count:,}")
        b.metric("Unknown category (not in the tables)", f"{ll144.unknown_count:,}")
        if ll144.scoring and ll144.median is not None:
            c.metric("Median score (scoring rate: strictly above)", f"{ll144.median:g}")
        frame = ll144.to_frame()
        for kind in ("sex", "race_ethnicity", "intersectional"):
            st.subheader(KIND_TITLES[kind] + " categories")
            ui.grid(frame[frame["table"] == kind].drop(columns="table"), hide_index=True,
                         column_config={frame.columns[4]: st.column_config.NumberColumn(format="percent"),
                                        "impact_ratio": st.column_config.NumberColumn(format="%.2f")})
        st.markdown(ui.bullet_list(ll144.sentences()))
        import json

        one, two = st.columns(2)
        one.download_button("Download the tables (CSV)", ll144.to_csv(), "ll144.csv", "text/csv",
                            icon=ui.ICONS["download"])
        two.download_button("Download the tables (JSON)", json.dumps(ll144.to_dict(), indent=2), "ll144.json",
                            "application/json", icon=ui.ICONS["download"])

with eeoc_tab:
    for column in (sex, race):
        result = ui.guarded(run_audit, spec.with_changes(group_by=(column,), protected=None, group_label=None,
                                                         other_label=None), where="regulator")
        if result is None:
            continue
        st.subheader(f"{ui.md(column, 80)}: every group against {ui.md(result.reference, 80)}")
        st.markdown(ui.bullet_list(line.strip(" -") for line in sufficiency_lines(sufficiency(result.comparisons,
                                                                                                result.spec))))
        rows = eeoc_rows(result.comparisons)
        ui.grid(eeoc_frame(rows), hide_index=True)
        st.markdown(ui.bullet_list(r.sentence for r in rows))
