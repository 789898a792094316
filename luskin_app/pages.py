"""The dashboard's pages, declared once: one line per page, read by ``app.py`` and ``ui.py``.

A new page is its file in ``app_pages/`` and one :class:`PageEntry` line in :data:`PAGES`: the
navigation (title, icon, address), ``ui.PAGE_FILES`` (for ``st.page_link``) and ``ui.ICONS`` all
come from this table. The order of the table is the order of the sidebar. No Streamlit import
here, so the table can be read (and checked by tests) without a running app.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PageEntry:
    """One dashboard page: its key, the title in the sidebar, its file, its icon and its address.

    ``url_path`` is the address after the host (``/series``); the default page has none (it is
    served at ``/``). ``icon`` is a Material Symbols name (shipped with Streamlit, no emoji font).
    """

    name: str
    title: str
    file: str
    icon: str
    url_path: str | None
    admin_only: bool = False  # shown only to a signed-in administrator (the record, the sources' settings)
    analysis: str | None = None  # a page made from an analysis' line of the table (no file of its own)

    @property
    def default(self) -> bool:
        """The page served at ``/`` (the one without an address of its own)."""
        return self.url_path is None


def _page(name: str, title: str, icon: str, *, default: bool = False, admin_only: bool = False) -> PageEntry:
    """A page whose file is ``app_pages/<name>.py`` and whose address is ``/<name>``."""
    return PageEntry(name, title, f"app_pages/{name}.py", f":material/{icon}:", None if default else name,
                     admin_only)


PAGES: tuple[PageEntry, ...] = (
    _page("data", "Data", "table_view", default=True),
    _page("audit", "Audit", "balance"),
    _page("series", "Over time", "timeline"),
    _page("adjusted", "Adjusted gaps", "functions"),
    _page("regulator", "Regulator tables", "gavel"),
    _page("proxy", "Proxy audit", "diversity_3"),
    _page("scan", "Scan", "travel_explore"),
    _page("retrain", "Retrain", "model_training"),
    _page("thresholds", "Thresholds", "tune"),
    _page("equalized", "Equalized distribution", "stacked_line_chart"),
    _page("report", "Report", "description"),
    _page("present", "Present", "slideshow"),
    _page("verify", "Verify", "verified"),
    _page("admin", "Administration", "admin_panel_settings", admin_only=True),
)


def _with_analyses(pages: tuple[PageEntry, ...]) -> tuple[PageEntry, ...]:
    """The pages, with one page per analysis whose page is made from its line of the analyses' table
    (``luskin_core.present.report_parts.ANALYSES``), placed before the model tools (Retrain)."""
    from luskin_core.present.report_parts import made_from_table

    made = tuple(PageEntry(e.name, e.title, "", f":material/{e.page}:", e.name, analysis=e.name)
                 for e in made_from_table("page"))
    at = next(i for i, p in enumerate(pages) if p.name == "retrain")
    return pages[:at] + made + pages[at:]


PAGES = _with_analyses(PAGES)
