"""Report page: the self-contained HTML report, and the configuration saved and loaded as JSON."""

from __future__ import annotations

from typing import Callable

import streamlit as st

from luskin_app import state
from luskin_core.errors import LuskinError
from luskin_core.report import build_html_report, report_filename
from luskin_core.spec import AuditSpec


def _report_maker(spec: AuditSpec) -> tuple[Callable[[], str], list[str]]:
    """A function that builds the report when the button is clicked, and what it will contain."""
    data = state.dataset()
    result = state.run_audit(spec)
    retrain = state.recall("retrain", spec)
    thresholds = state.recall("thresholds", spec)
    equalized = state.recall("equalized", spec)
    alpha = state.choices()["equalize"].get("alpha")
    ref = state.dataset_ref()
    options = state.page_options()
    parts = ["the settings, the data summary, the audit chart, table and verdicts"]
    parts += [name for name, value in (("the retraining results", retrain), ("the per-group thresholds", thresholds),
                                       ("the equalized-distribution sweep", equalized)) if value is not None]

    def make() -> str:
        return build_html_report(result, frame=data.frame, dataset=ref, retrain=retrain, thresholds=thresholds,
                                 equalized=equalized, equalized_alpha=alpha, options=options)

    return make, parts


def render_report(spec: AuditSpec) -> None:
    """One click: the HTML report of the current view, for offline reading."""
    st.subheader("Download the report")
    try:
        make, parts = _report_maker(spec)
    except LuskinError as err:
        state.show_error(err)
        return
    st.markdown("The report is one HTML file that opens in any browser, without a network. It holds "
                + ", ".join(parts) + ", with the date and the software versions.")
    st.caption("Results from the Retrain, Thresholds and Equalized distribution pages are included once "
               "they have been computed for the current choices.")
    st.download_button("Download the HTML report", make, file_name=report_filename(state.dataset_ref()),
                       mime="text/html", key="report_download", type="primary", icon="📥")


def render_save() -> None:
    """Save every choice (data reference, audit settings, page options) as JSON."""
    st.subheader("Save or load the configuration")
    try:
        text = state.configuration_json()
    except LuskinError as err:
        state.show_error(err)
        return
    st.download_button("Save the configuration (JSON)", text, file_name="luskin-configuration.json",
                       mime="application/json", key="config_download",
                       help="A small text file with the data's name and fingerprint, the outcome, the groups, "
                            "the filter, the tolerance and each page's options.")
    with st.expander("See the configuration"):
        st.code(text, language="json")


def render_load() -> None:
    """Load a saved configuration and reproduce its view; a bad file changes nothing."""
    upload = st.file_uploader("Load a saved configuration (JSON)", key="config_upload",
                              help="A file saved with the button above. For an uploaded dataset, upload the "
                                   "same data file on the Data page first.")
    if upload is None:
        st.session_state.pop("config_message", None)
        st.session_state.pop("config_error", None)
        st.session_state.pop("config_token", None)
    else:
        if state.is_new_upload(upload, "config_token"):
            st.session_state.pop("config_error", None)
            try:
                note = state.apply_configuration(upload.getvalue())
                st.session_state["config_message"] = (
                    f"Loaded '{upload.name}': every page now shows the saved view. " + note).strip()
                st.rerun()
            except LuskinError as err:
                st.session_state["config_error"] = f"'{upload.name}' could not be loaded: {err}"
    if st.session_state.get("config_error"):
        st.error(st.session_state["config_error"] + " Nothing was changed.", icon="⚠️")
    if st.session_state.get("config_message"):
        st.success(st.session_state["config_message"], icon="✅")


st.title("Report: take the results to the committee")
spec_, problem_ = state.current_spec()
if spec_ is None:
    st.error(f"{problem_}\n\nFix the choices on the **Data** page, or load a saved configuration below.", icon="⚠️")
else:
    render_report(spec_)
    render_save()
render_load()
