"""Report page: the self-contained HTML report and its PDF, and the configuration saved and loaded as JSON.

A configuration saved from an uploaded file, loaded while other data is on screen, waits for
its file: the page says which file to upload (name, rows, columns), or applies it to the data
on screen when the user asks and its columns fit.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from luskin_app import analysis_page, config, dataset, keys, source_view, ui
from luskin_app import choices as ch_
from luskin_app.auditing import run_audit
from luskin_app.cache import options_key, recall
from luskin_core.errors import LuskinError
from luskin_core.present.report import ReportContent, report_content, report_filename
from luskin_core.spec.audit_spec import AuditSpec


def _report_maker(spec: AuditSpec) -> tuple[Callable[[], ReportContent], list[str], str]:
    """A function that builds the report's content when asked, what it will contain, and a token that
    changes whenever that content would (data, choices, the results included)."""
    result = run_audit(spec)
    retrain = recall("retrain", spec)
    thresholds = recall("thresholds", spec)
    adjusted = recall("adjusted", spec)
    equalized = recall("equalized", spec)
    series = recall("series", spec)  # set on the Over time page
    kept = [r for r in (recall("proxy"), recall("scan")) if r is not None]   # set on the Proxy audit and Scan pages
    kept += analysis_page.kept_results(spec)   # and on every page made from the analyses' table
    alpha = ch_.choices()["equalize"].get("alpha")
    ref = config.dataset_ref()
    options = config.page_options()
    if result.cells:
        parts = ["the settings, the data summary, the audit chart, table and verdicts"]
    else:
        parts = [(f"the settings, the data summary, the audit charts, the table of every group against "
                 f"{ui.md(result.reference, 120)} and the verdicts")]
    if len(result.cell_names) > 1 and result.pooled:
        parts.append("the table of overall against within the cells (pooled odds ratios, CMH and Breslow-Day-Tarone tests)")
    parts += [name for name, value in (("the retraining results", retrain), ("the per-group thresholds", thresholds),
                                       ("the equalized-distribution sweep", equalized),
                                       ("the audit over time", series),
                                       ("the proxy audit", recall("proxy")),
                                       ("the subgroup scan's findings", recall("scan"))) if value is not None]

    # Read from the session now: ``make`` also runs when the download is clicked, outside this run, where
    # the session's state is not at hand (it once fell back to the Adult sample there, whatever the data).
    frame, sample_note = source_view.report_frame(), source_view.report_sample_note(spec)

    def make() -> ReportContent:
        shown = equalized.shown_at(alpha) if equalized is not None else None   # its histograms at the slider's alpha
        return report_content([result, adjusted, series, *kept, retrain, thresholds, shown], frame=frame, dataset=ref,
                              options=options, sample_note=sample_note)

    token = "|".join([dataset.dataset().fingerprint, spec.to_json(), options_key(options), str(alpha),
                      *(str(id(value)) for value in (retrain, thresholds, equalized, adjusted, series, *kept))])
    return make, parts, token


def _make_pdf(make: Callable[[], ReportContent], token: str) -> None:
    """Button callback's work: the PDF of the same content, kept for the download button (or why not)."""
    st.session_state.pop(keys.REPORT_PDF_ERROR, None)
    with st.spinner("Drawing the charts and laying out the pages (a few seconds; up to 20 s the first time)…"):
        try:
            st.session_state[keys.REPORT_PDF] = (token, make().pdf())
        except LuskinError as err:
            st.session_state[keys.REPORT_PDF_ERROR] = str(err)
            st.session_state.pop(keys.REPORT_PDF, None)


def render_pdf(make: Callable[[], ReportContent], token: str) -> None:
    """The same report as a PDF to print or hand out: made on request (it takes seconds), then downloaded."""
    held = st.session_state.get(keys.REPORT_PDF)
    if held is not None and held[0] == token:
        ui.download_button("Download the PDF report", held[1], key="report_pdf_download", mime="application/pdf",
                           file_name=report_filename(config.dataset_ref(), extension="pdf"),
                           icon=ui.ICONS["download"])
    elif st.button("Make the PDF report", key="report_pdf_make", icon=ui.ICONS["report"],
                   help="The same content as the HTML report, with the charts as vector images, for print."):
        _make_pdf(make, token)
        st.rerun()
    if st.session_state.get(keys.REPORT_PDF_ERROR):
        st.error(ui.md(st.session_state[keys.REPORT_PDF_ERROR], 800) + " The HTML report above has the same content.",
                 icon=ui.ICONS["error"])


def render_report(spec: AuditSpec) -> None:
    """One click: the HTML report of the current view, for offline reading."""
    st.header("Download the report")
    made = ui.guarded(_report_maker, spec, where="report")
    if made is None:
        return
    make, parts, token = made
    st.markdown("The report opens with a one-page summary for the committee, then a section for each tool. The "
                "HTML file opens in any browser, without a network; the PDF has the same content for print. It "
                "holds " + ", ".join(parts) + ", with the date and the software versions.")
    st.caption("Results from the Retrain, Thresholds, Equalized distribution and Over time pages are included once "
               "they have been computed for the current choices.")
    row = st.container(horizontal=True)
    with row:
        ui.download_button("Download the HTML report", lambda: make().html(),
                           file_name=report_filename(config.dataset_ref()), mime="text/html", key="report_download",
                           type="primary", icon=ui.ICONS["download"])
        render_pdf(make, token)


def render_evidence(spec: AuditSpec) -> None:
    """The audit's evidence: one file anyone can check (`luskin verify`, or the Verify page)."""
    from luskin_app import auth, evidence_view

    st.header("Download the evidence")
    st.markdown("One file a regulator, a court or the public can check without the data: the specification, the "
                "count table every number was computed from, every result, this report, the data's fingerprint, "
                "the software versions, when and by whom, and a manifest of the hashes of every part. "
                "`luskin verify FILE` (or the Verify page) recomputes every number from the counts; given the "
                "data too, it counts it again.")
    pdf = st.toggle("Include the PDF report (a few seconds more)", value=True, key="report_evidence_pdf")
    try:
        make = evidence_view.audit_evidence(run_audit(spec), dataset.dataset(), auth.current(), pdf=pdf)
    except LuskinError as err:
        ui.show_error(err)
        return
    ui.download_button("Download the evidence", make, key="report_evidence_download", icon=ui.ICONS["download"],
                       file_name=report_filename(config.dataset_ref(), extension="evidence").replace("-report-", "-evidence-", 1),
                       mime="application/zip", evidence=True)
    if evidence_view.key_path():
        st.caption("Signed with the operator's key: publish its public key beside the audit, so that anyone can "
                   "check the evidence came from here.")
    else:
        st.caption("Not signed: the operator has set no signing key (LUSKIN_EVIDENCE_KEY). It still holds together "
                   "and every number can be recomputed, but only a signature shows it came from here.")


def render_save() -> None:
    """Save every choice (data reference, audit settings, page options) as JSON."""
    st.header("Save or load the configuration")
    try:
        text = config.configuration_json()
    except LuskinError as err:
        ui.show_error(err)
        return
    ui.download_button("Save the configuration (JSON)", text, file_name="luskin-configuration.json",
                       mime="application/json", key="config_download",
                       help="A small text file with the data's name and fingerprint, the outcome, the groups, "
                            "the filter, the tolerance and each page's options.")
    with st.expander("See the configuration"):
        st.code(text, language="json")


def _load(upload: object) -> None:
    """Read a newly uploaded configuration: apply it, keep it waiting for its file, or say why not."""
    for key in ("config_error", "config_message", "config_waiting"):
        st.session_state.pop(key, None)
    try:
        applied, message = config.apply_configuration(upload.getvalue(), upload.name)  # type: ignore[attr-defined]
    except LuskinError as err:
        st.session_state[keys.CONFIG_ERROR] = f"'{upload.name}' could not be loaded: {err}"  # type: ignore[attr-defined]
        return
    if applied:
        st.session_state[keys.CONFIG_MESSAGE] = message
        st.rerun()
    st.session_state[keys.CONFIG_WAITING] = message


def render_pending() -> None:
    """The configuration waiting for its file: which file, and the ways on."""
    waiting = config.pending()
    if waiting is None:
        return
    st.info(ui.md(st.session_state.get(keys.CONFIG_WAITING) or
                  f"'{waiting.name}' is waiting for the file it was saved with: {waiting.wanted}. Upload it on the "
                  "Data page."), icon=ui.ICONS["wait"])
    row = st.container(horizontal=True)
    row.page_link(ui.PAGE_FILES["data"], label="Upload the file on the Data page", icon=ui.ICONS["data"])
    why_not = config.fits_current()
    if why_not is None:
        row.button("Apply it to the data loaded now", key="report_pending_apply", on_click=config.apply_pending_here)
    row.button("Forget this configuration", key="report_pending_discard", on_click=config.discard_pending)
    if why_not is not None:
        st.caption(f"It cannot be applied to the data loaded now: {ui.md(why_not, 300)}")


def render_load() -> None:
    """Load a saved configuration and reproduce its view; a bad file changes nothing."""
    upload = st.file_uploader("Load a saved configuration (JSON)", key="config_upload", type=None,
                              help="A file saved with the button above. A configuration of an uploaded file waits "
                                   "for that file if other data is loaded.")
    if upload is None:
        for key in ("config_message", "config_error", "config_token", "config_waiting"):
            st.session_state.pop(key, None)
    elif dataset.is_new_upload(upload, "config_token"):
        _load(upload)
    if st.session_state.get(keys.CONFIG_ERROR):
        st.error(ui.md(st.session_state[keys.CONFIG_ERROR], 1000) + " Nothing was changed.", icon=ui.ICONS["error"])
    if st.session_state.get(keys.CONFIG_MESSAGE):
        st.success(ui.md(st.session_state[keys.CONFIG_MESSAGE]), icon=ui.ICONS["ok"])
    render_pending()


st.title("Report: take the results to the committee")
spec_, problem_ = ch_.current_spec()
if spec_ is None:
    ui.show_problem(str(problem_), "report", extra="Or load a saved configuration below.")
elif ch_.needs_confirmation():
    ui.render_guesses()
    ui.render_confirm("report")
else:
    render_report(spec_)
    render_evidence(spec_)
    render_save()
render_load()
