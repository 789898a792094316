"""Administration (administrators only, when sign-in is on): the record of who ran what, the sources set up on
this server and who may use them, and where the server keeps its state. No connection detail is shown here
either: the settings file holds them, on the server."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from luskin_app import auth, keep, record, source_view, ui

st.title("Administration")
if not auth.is_admin():   # the page is registered for administrators only; a stale link finds nothing
    st.error("This page is for Luskin's administrators.", icon=ui.ICONS["error"])
    st.stop()

st.subheader("Record of who ran what")
where_ = record.where()
st.caption(ui.md(f"Each audit, correction, report and download adds one line to {where_.path} (JSON lines; rotated "
                 f"at {where_.max_bytes / 1e6:,.0f} MB, {where_.files} older files kept). No data value is written: "
                 "the data is named by its file name, row count and a hash."))
lines_ = record.read(500)
if lines_:
    table_ = pd.DataFrame([{"time": e.get("time"), "user": (e.get("user") or {}).get("name"),
                            "e-mail": (e.get("user") or {}).get("email"), "page": e.get("page"),
                            "action": e.get("action"), "data": (e.get("data") or {}).get("name"),
                            "rows": (e.get("data") or {}).get("rows"),
                            "produced": ", ".join(f"{k}: {v}" for k, v in (e.get("produced") or {}).items())}
                           for e in reversed(lines_)])
    ui.grid(table_, hide_index=True)
else:
    st.info("Nothing has been recorded yet.", icon=ui.ICONS["info"])
ui.download_button("Download the record (JSON lines)", record.file_bytes(), "luskin-record.jsonl",
                   "application/json", icon=ui.ICONS["download"])

st.subheader("Sources set up on this server")
found_ = source_view.settings()
if found_.path is None:
    st.caption("No sources settings file (LUSKIN_SOURCES, .streamlit/luskin_sources.toml or "
               "~/.config/luskin/sources.toml).")
else:
    st.caption(ui.md(f"From {found_.path}. Edit that file on the server to add, change or remove a source; "
                     "'groups' lists who may use a source (empty: every analyst). Addresses and passwords stay "
                     "in the file."))
    for problem_ in found_.problems:
        st.warning(ui.md(problem_, 600), icon=ui.ICONS["error"])
    st.markdown(ui.bullet_list(f"{s.name} ({'a database' if s.is_url else 'a file'}; "
                               f"used by {', '.join(s.groups) or 'every analyst'})" for s in found_.sources))

st.subheader("Uploads and sign-in")
roles_ = auth.roles()
st.markdown(ui.bullet_list([
    (f"Uploads are kept encrypted for {keep.hours_text()} in the server's state folder, then deleted; each opens "
     "for its uploader only."),
    (f"Roles come from the '{roles_.claim}' claim: administrators "
     f"{', '.join(roles_.admin_groups + roles_.admin_domains) or '(none set)'}; analysts "
     f"{', '.join(roles_.analyst_groups + roles_.analyst_domains) or 'every signed-in user'}."),
]))
