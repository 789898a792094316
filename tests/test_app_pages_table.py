"""The table of pages (luskin_app/pages.py) is the one place a page is declared.

A new page is its file and one line in the table: these tests fail when a page file is not in the
table, when a line names a file that does not exist, and when the served navigation differs from
the table (titles, order, addresses).
"""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from luskin_app import pages, ui

ROOT = Path(__file__).resolve().parents[1]


def test_every_page_file_is_in_the_table_and_every_line_has_its_file() -> None:
    files = {f"app_pages/{p.name}" for p in (ROOT / "app_pages").glob("*.py")}
    assert files == {p.file for p in pages.PAGES if p.analysis is None}
    # a page made from an analysis' line of the analyses' table has no file of its own
    assert all(p.file == "" for p in pages.PAGES if p.analysis is not None)
    assert len({p.name for p in pages.PAGES}) == len(pages.PAGES)
    assert len({p.url_path for p in pages.PAGES}) == len(pages.PAGES)
    assert [p.name for p in pages.PAGES if p.default] == ["data"]


def test_ui_reads_the_table() -> None:
    for p in pages.PAGES:
        if p.analysis is None:
            assert ui.PAGE_FILES[p.name] == p.file
        assert ui.ICONS[p.name] == p.icon
        assert p.icon.startswith(":material/") and p.icon.endswith(":")


def test_the_served_navigation_is_the_table() -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    assert not at.exception
    # AppTest keeps what st.navigation registered (title, icon, file and address of each page).
    shown = [(p["page_name"], p["icon"], p["url_pathname"]) for p in at._registered_pages.values()]
    files = [Path(p["script_path"]).relative_to(ROOT).as_posix() for p in at._registered_pages.values()
             if Path(p["script_path"]).is_relative_to(ROOT) and Path(p["script_path"]).suffix == ".py"]
    # without [auth] nobody is a signed-in administrator: the administrators' pages are not served
    assert shown == [(p.title, p.icon, p.url_path or "") for p in pages.PAGES if not p.admin_only]
    assert [f for f in files if f != "app.py"] == [p.file for p in pages.PAGES if not p.admin_only and p.file]
    assert [p.name for p in pages.PAGES if p.admin_only] == ["admin"]
