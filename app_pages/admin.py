"""Administration (administrators only, when sign-in is on): the record of who ran what, the sources set up on
this server and who may use them (add and remove sources here; luskin_app.sources keeps them on the server),
and where the server keeps its state. No connection detail is shown here either: the location is typed into a
masked field, cleared once the source is added, and never drawn again; a password is named (an environment
variable, a file) or typed into a masked field and kept encrypted by the server (luskin_app.sources)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from luskin_app import auth, keep, keys, record, source_view, sources, trail, ui
from luskin_core.errors import LuskinError

st.title("Administration")
if not auth.is_admin():   # the page is registered for administrators only; a stale link finds nothing
    st.error("This page is for Luskin's administrators.", icon=ui.ICONS["error"])
    st.stop()

st.header("Record of who ran what")
where_ = record.where()
kept_files_ = f"{where_.files} older files kept" if where_.files else "every older file kept"
st.caption(ui.md(f"Each audit, analysis, download, sign-in, sign-out, refusal, upload and deletion adds one numbered "
                 f"line to {where_.path} (JSON lines, each chained to the one before with a keyed hash whose key is "
                 f"{record.key_path(where_)}; rotated at {where_.max_bytes / 1e6:,.0f} MB, {kept_files_}). No data "
                 "value is written: the data is named by its kind, row count and a hash, and the values in the "
                 "settings by keyed hashes."))
if st.button("Check the record", key="admin_record_check", icon=":material/verified:",
             help="Reads every line in order: numbered without a gap, each one's keyed hash right, none cut off the end."):
    try:
        verdict_ = record.verify()
    except (LuskinError, OSError) as err_:
        ui.show_error(f"The record could not be checked: {err_}")
    else:
        if verdict_.holds:
            st.success(f"The record holds: {verdict_.lines:,} lines, none edited, removed or reordered.",
                       icon=ui.ICONS["ok"])
        else:
            st.error(ui.md(f"The record does not hold after {verdict_.lines:,} good lines: {verdict_.problem}"),
                     icon=ui.ICONS["error"])
lines_ = record.read(500)
if lines_:
    table_ = pd.DataFrame([{"line": e.get("n"), "time": e.get("time"), "user": (e.get("user") or {}).get("name"),
                            "e-mail": (e.get("user") or {}).get("email"), "page": e.get("page"),
                            "action": e.get("action"), "data": (e.get("data") or {}).get("name"),
                            "rows": (e.get("data") or {}).get("rows"),
                            "produced": ", ".join(f"{k}: {v}" for k, v in (e.get("produced") or {}).items())}
                           for e in reversed(lines_)])
    ui.grid(table_, hide_index=True)
else:
    st.info("Nothing has been recorded yet.", icon=ui.ICONS["info"])
ui.download_button("Download the record (JSON lines)", record.file_bytes, "luskin-record.jsonl",
                   "application/json", icon=ui.ICONS["download"])

st.header("Sources set up on this server")
found_ = source_view.settings()
if found_.path is None:
    st.caption("No sources settings file (LUSKIN_SOURCES, .streamlit/luskin_sources.toml or "
               "~/.config/luskin/sources.toml); the sources added below are kept by the server.")
else:
    st.caption(ui.md(f"From {found_.path}, and those added below. Edit that file on the server to change or remove "
                     "its sources; 'groups' lists who may use a source (empty: every analyst). Addresses and "
                     "passwords stay on the server."))
for problem_ in found_.problems:
    st.warning(ui.md(problem_, 600), icon=ui.ICONS["error"])
if found_.sources:
    st.markdown(ui.bullet_list(f"{s.name} ({'a database' if s.is_url else 'a file'}; "
                               f"used by {', '.join(s.groups) or 'every analyst'}; "
                               f"{'added here' if s.name in found_.added else 'from the settings file'})"
                               for s in found_.sources))


def _remove(name: str) -> None:
    """Button callback: the added source is removed for every analyst at once (written to the record first: a
    removal the record cannot hold is not made)."""
    if name not in source_view.settings().added:
        return
    try:
        record.append({"user": trail.user_line(), "page": "Administration", "action": "source removed",
                       "settings": {"name": name}, "data": None, "produced": {}})
    except record.RecordError as err:
        st.session_state[keys.ADMIN_SOURCE_ERROR] = str(err)
        return
    if sources.remove_source(name):
        st.session_state[keys.ADMIN_SOURCE_NOTE] = f"Removed the source '{name}'."


for number_, name_ in enumerate(found_.added):
    st.button(f"Remove '{name_}'", key=f"admin_remove_source_{number_}", on_click=_remove, args=(name_,),
              icon=":material/delete:")

PASSWORD_ = {"none": "No password (a file, DuckDB, or a database that needs none)",
             "typed": "Type it here (the server keeps it encrypted)",
             "env": "An environment variable of the server holds it", "file": "A file on the server holds it"}
FIELDS_ = (keys.ADMIN_SOURCE_NAME, keys.ADMIN_SOURCE_LOCATION, keys.ADMIN_SOURCE_TABLE, keys.ADMIN_SOURCE_GROUPS,
           keys.ADMIN_SOURCE_DESCRIPTION, keys.ADMIN_SOURCE_PASSWORD_WHERE)


def _add() -> None:
    """Form callback: check and keep the source; the fields are emptied once it is kept (the location is never
    drawn again), and kept as typed when it is refused (to correct them)."""
    typed = {field: str(st.session_state.get(field) or "") for field in FIELDS_}
    entry: dict[str, object] = {
        "name": typed[keys.ADMIN_SOURCE_NAME], "location": typed[keys.ADMIN_SOURCE_LOCATION],
        "table": typed[keys.ADMIN_SOURCE_TABLE], "description": typed[keys.ADMIN_SOURCE_DESCRIPTION],
        "groups": [g.strip() for g in typed[keys.ADMIN_SOURCE_GROUPS].split(",") if g.strip()]}
    how = st.session_state.get(keys.ADMIN_SOURCE_PASSWORD, "none")
    if how == "typed":
        entry["password"] = str(st.session_state.get(keys.ADMIN_SOURCE_PASSWORD_TYPED) or "")
        if not entry["password"]:
            st.session_state[keys.ADMIN_SOURCE_ERROR] = "Type the password, or choose where the server keeps it."
            return
    elif how != "none":
        entry["password_" + str(how)] = typed[keys.ADMIN_SOURCE_PASSWORD_WHERE]
    st.session_state[keys.ADMIN_SOURCE_PASSWORD_TYPED] = ""   # the typed password is not kept in the session
    try:
        setting = sources.add_source(entry, secrets_files=source_view.secrets_files())
    except LuskinError as err:
        st.session_state[keys.ADMIN_SOURCE_ERROR] = str(err)
        return
    try:
        record.append({"user": trail.user_line(), "page": "Administration", "action": "source added",
                       "settings": {"name": setting.name, "kind": "database" if setting.is_url else "file",
                                    "groups": list(setting.groups)}, "data": None, "produced": {}})
    except record.RecordError as err:   # an addition the record cannot hold is undone
        sources.remove_source(setting.name)
        st.session_state[keys.ADMIN_SOURCE_ERROR] = str(err)
        return
    for field in FIELDS_:
        st.session_state[field] = ""
    st.session_state[keys.ADMIN_SOURCE_PASSWORD] = "none"
    st.session_state[keys.ADMIN_SOURCE_NOTE] = (f"Added the source '{setting.name}'. Open it on the Data page to "
                                                "check that it answers.")


with st.form("admin_add_source"):
    st.markdown("**Add a source**: analysts see its name and description, never its location or password.")
    left_, right_ = st.columns(2)
    left_.text_input("Name", key=keys.ADMIN_SOURCE_NAME, max_chars=200)
    right_.text_input("Location", key=keys.ADMIN_SOURCE_LOCATION, type="password",
                      help="A file or folder's full path on the server, inside a folder the operator allows "
                           "(LUSKIN_SOURCE_FOLDERS), a DuckDB file, postgresql://user@host/database (no password in "
                           "it) or spark:.")
    left_.text_input("Table (or a SELECT query for PostgreSQL)", key=keys.ADMIN_SOURCE_TABLE)
    right_.text_input("Who may use it (groups, comma-separated; empty: every analyst)", key=keys.ADMIN_SOURCE_GROUPS)
    st.text_input("Description (shown to analysts)", key=keys.ADMIN_SOURCE_DESCRIPTION, max_chars=500)
    st.radio("Password", list(PASSWORD_), format_func=PASSWORD_.get, key=keys.ADMIN_SOURCE_PASSWORD, horizontal=True)
    left_, right_ = st.columns(2)
    left_.text_input("The password (when typed here)", key=keys.ADMIN_SOURCE_PASSWORD_TYPED, type="password",
                     help="Kept encrypted with the server's key, never shown again (not even here).")
    right_.text_input("Or the environment variable's name, or the password file's full path",
                      key=keys.ADMIN_SOURCE_PASSWORD_WHERE)
    st.form_submit_button("Add the source", icon=":material/add:", key="admin_source_add", on_click=_add)
if st.session_state.get(keys.ADMIN_SOURCE_ERROR):
    ui.show_error(st.session_state.pop(keys.ADMIN_SOURCE_ERROR))
if st.session_state.get(keys.ADMIN_SOURCE_NOTE):
    st.success(ui.md(st.session_state.pop(keys.ADMIN_SOURCE_NOTE)), icon=ui.ICONS["ok"])

st.header("Uploads and sign-in")
roles_ = auth.roles()
st.markdown(ui.bullet_list([
    (f"Uploads are kept encrypted for {keep.hours_text()} in the server's state folder, then deleted; each opens "
     "for its uploader only."),
    (f"Roles come from the '{roles_.claim}' claim: administrators "
     f"{', '.join(roles_.admin_groups + roles_.admin_domains) or '(none set)'}; analysts "
     f"{', '.join(roles_.analyst_groups + roles_.analyst_domains) or 'every signed-in user'}."),
]))
