"""Verify page: check an evidence file (the Report page's download, or `luskin audit --evidence`), as `luskin verify`.

Thin: the file, the operator's public key and whether to count the data on screen again are gathered here;
:func:`luskin_core.evidence.verify.verify` answers, and every sentence it says is shown as text. For Local Law
144 evidence that checks out, the public summary (HTML) and its CSV are offered.
"""

from __future__ import annotations

import streamlit as st

from luskin_app import dataset, evidence_view, ui
from luskin_core.errors import LuskinError
from luskin_core.evidence.bundle import MAX_UNPACKED

st.title("Verify an audit's evidence")
st.caption("Upload an evidence file: its manifest of hashes and its signature are checked, and every number is "
           "recomputed from the count table it holds. The same check as `luskin verify FILE` on the command line.")

upload = st.file_uploader("The evidence file", key="verify_upload", type=None,
                          help="A file written by the Report page's 'Download the evidence', or by the command "
                               "line's audit asked for its evidence.")
public = st.file_uploader("The operator's public key (optional, PEM)", key="verify_key", type=None,
                          help="With it, the evidence must be signed by that key; without it, a signature is checked "
                               "against the key it carries.")
again = st.checkbox("Count the data on screen again and compare it with the evidence", key="verify_recount",
                    help=f"The data now loaded ({ui.md(dataset.dataset().title, 80)}) is counted with the evidence's "
                         "specification; its counts and its bytes must be those audited.")

if upload is not None:
    data = upload.getvalue()
    try:
        if len(data) > MAX_UNPACKED:
            raise LuskinError("The file is far larger than an evidence file: it is not one Luskin wrote.")
        key = None
        if public is not None:
            from luskin_core.evidence.signing import key_id

            key = public.getvalue()
            key_id(key)  # a file that is not a public key is said now, in words
        recount = evidence_view.recount_of(dataset.dataset()) if again else None
        from luskin_core.evidence.verify import verify

        with st.spinner("Recomputing every number from the counts…"):
            answer = verify(data, public_key=key, recount=recount)
    except LuskinError as err:
        ui.show_error(err)
        st.stop()
    name = upload.name
    if answer.ok:
        st.success(ui.md(answer.text(name).splitlines()[0]), icon=ui.ICONS["ok"])
    else:
        st.error(ui.md(answer.text(name).splitlines()[0]), icon=ui.ICONS["error"])
        st.markdown("**What is wrong**\n\n" + ui.bullet_list(answer.problems))
    if answer.checked:
        st.markdown("**What was checked and holds**\n\n" + ui.bullet_list(answer.checked))
    if answer.ok and answer.kind in ("ll144", "ll144_published") and answer.result is not None:
        from luskin_core.evidence.ll144_public import summary_csv, summary_html

        st.header("The public summary (Local Law 144)")
        st.caption("Made from the tables recomputed from the evidence's counts, with the verification command at "
                   "its foot; the CSV is the published table the command line's Local Law 144 audit reads back.")
        stem = name.rsplit(".", 1)[0] or "audit"
        page = summary_html(answer.result.result, about=answer.about, made=answer.made, evidence_name=name,
                            evidence_sha256=answer.sha256, key_id=answer.key_id)
        row = st.container(horizontal=True)
        ui.download_button("Download the summary page (HTML)", page, file_name=f"{stem}-summary.html",
                           mime="text/html", key="verify_summary_html", where=row, icon=ui.ICONS["download"])
        ui.download_button("Download the summary's CSV", summary_csv(answer.result.result),
                           file_name=f"{stem}-summary.csv", mime="text/csv", key="verify_summary_csv", where=row,
                           icon=ui.ICONS["download"])
