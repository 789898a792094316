"""Rendering the report: Jinja for the HTML page, WeasyPrint for the PDF, and the one headless Chromium
(through kaleido) that draws every chart as SVG for the PDFs (the report's and the handout's).

Moved out of :mod:`luskin_core.present.report`, which re-exports these names.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from luskin_core.errors import LuskinError
from luskin_core.present.report_blocks import Chart, Section
from luskin_core.present.report_figures import figure_height

# ------------------------------------------------------------------------------------------
# Rendering: the HTML (interactive charts) and the PDF (vector charts)
# ------------------------------------------------------------------------------------------
_ENVIRONMENT: Any = None
_ENVIRONMENT_LOCK = threading.Lock()


def _bounded(value: Any) -> Any:
    """Every text the template prints, at most ``MAX_TEXT_CHARS`` (chart markup, marked safe, is the report's own)."""
    from markupsafe import Markup

    from luskin_core.present.report_blocks import MAX_TEXT_CHARS, shorten

    if isinstance(value, str) and not isinstance(value, Markup) and len(value) > MAX_TEXT_CHARS:
        return shorten(value, MAX_TEXT_CHARS)
    return value


def _template() -> Any:
    """The report template, loaded once, with autoescaping on for every variable."""
    global _ENVIRONMENT
    with _ENVIRONMENT_LOCK:
        if _ENVIRONMENT is None:
            import jinja2

            _ENVIRONMENT = jinja2.Environment(loader=jinja2.PackageLoader("luskin_core", "templates"),
                                              autoescape=True, undefined=jinja2.StrictUndefined,
                                              trim_blocks=False, lstrip_blocks=False, finalize=_bounded)
        return _ENVIRONMENT.get_template("report.html.j2")


CHART_WORDS = "The chart in words and numbers"


def _with_words(chart: Chart, **drawn: Any) -> Chart:
    """The chart as drawn (``drawn``: its HTML, or its image for the PDF) with its text alternative: the description
    (an image's ``alt``, the HTML chart's accessible name) and its numbers as a table (WCAG 1.1.1; chart_text, the
    same words as the page's and the slides')."""
    import plotly.graph_objects as go

    from luskin_core.present.chart_text import chart_text
    from luskin_core.present.report_blocks import Table

    words = chart_text(go.Figure(chart.figure))
    numbers = None
    if not words.table.empty:
        note = f"The first {len(words.table):,} of {words.points:,} values." if words.cut else ""
        numbers = Table(caption=f"The numbers of the chart: {chart.caption}" if chart.caption else "The chart's numbers",
                        header=tuple(str(c) for c in words.table.columns),
                        rows=tuple(tuple(str(v) for v in row) for row in words.table.itertuples(index=False)),
                        note=note)
    return Chart(chart.caption, chart.figure, alt=words.description, numbers=numbers, **drawn)


@dataclass(frozen=True)
class ReportContent:
    """Everything the report says, built once; :meth:`html` and :meth:`pdf` render the same content."""

    title: str
    byline: str
    footer: str
    version: str
    sections: tuple[Section, ...]

    def charts(self) -> list[Chart]:
        return [b["chart"] for s in self.sections for b in s.blocks if b["kind"] == "chart"]

    def _render(self, *, pdf: bool, charts: Mapping[int, Chart], plotly_js: str = "") -> str:
        from markupsafe import Markup

        sections = []
        for s in self.sections:
            blocks = []
            for b in s.blocks:
                if b["kind"] == "chart":
                    b = {**b, "chart": charts[id(b["chart"])]}
                blocks.append(b)
            sections.append(Section(s.anchor, s.title, blocks, s.css))
        return str(_template().render(
            title=self.title, byline=self.byline, footer=self.footer, version=self.version, sections=sections,
            pdf=pdf, plotly_js=Markup(plotly_js), chart_words=CHART_WORDS,
        ))

    def html(self) -> str:
        """A self-contained page: plotly.js written once in the head, each chart drawn from its figure."""
        import plotly.io
        from markupsafe import Markup

        charts: dict[int, Chart] = {}
        for number, chart in enumerate(self.charts(), 1):
            div = plotly.io.to_html(chart.figure, validate=False, full_html=False, include_plotlyjs=False,
                                    div_id=f"luskin-chart-{number}", default_width="100%",
                                    default_height=f"{figure_height(chart.figure)}px",
                                    config={"displaylogo": False, "responsive": True})
            charts[id(chart)] = _with_words(chart, html=Markup(div))
        plotly_js = ""
        if charts:
            from plotly.offline import get_plotlyjs

            plotly_js = get_plotlyjs()
        return self._render(pdf=False, charts=charts, plotly_js=plotly_js)

    def pdf(self, *, browser_path: str | None = None) -> bytes:
        """The same content as a PDF: charts as vector images (SVG drawn by Chromium), laid out by WeasyPrint."""
        try:
            import weasyprint
        except ImportError:
            raise LuskinError("The PDF report needs WeasyPrint: pip install weasyprint (the HTML report does "
                              "not).") from None
        import base64

        from markupsafe import Markup

        charts: dict[int, Chart] = {}
        all_charts = self.charts()
        images = CHART_RENDERER.svgs([c.figure for c in all_charts], browser_path=browser_path)
        for chart, svg in zip(all_charts, images):
            # the report's own image (base64 of the chart's SVG): marked safe, so the text bound does not cut it
            src = Markup("data:image/svg+xml;base64," + base64.b64encode(svg).decode("ascii"))
            # a tall chart is drawn narrower so that it fits on a page with its section's text
            width = min(100, int(100 * _PDF_MAX_HEIGHT_RATIO * _PDF_WIDTH / figure_height(chart.figure)))
            charts[id(chart)] = _with_words(chart, src=src, width_pct=width)
        page = self._render(pdf=True, charts=charts)
        fetcher = weasyprint.URLFetcher(allowed_protocols={"data"})  # nothing is fetched from outside
        # PDF/UA-1: a tagged PDF (headings, tables, figures with their alternative text, the reading order) that a
        # screen reader reads as the HTML (issue 46, Section 508)
        return bytes(weasyprint.HTML(string=page, url_fetcher=fetcher).write_pdf(pdf_variant="pdf/ua-1"))


_PDF_WIDTH = 820  # px: charts are drawn this wide and scaled to the page (about 18 cm)
_PDF_MAX_HEIGHT_RATIO = 0.85  # a chart on the page is at most 0.85 times as tall as the page is wide (15 cm)


class _ChartRenderer:
    """One headless Chromium (through kaleido) for the whole process, drawing charts as SVG.

    Started on first use, under a lock, in its own thread with its own event loop, so no
    request thread owns it and kaleido's process-wide server is never used. Nothing
    process-wide is changed: the browser is named by path (kaleido's ``path``), not through
    ``BROWSER_PATH``, and MathJax is off so the page asks nothing of the network. Concurrent
    reports share the browser (two tabs; kaleido queues the rest). Closed at exit.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: Any = None
        self._thread: threading.Thread | None = None
        self._kaleido: Any = None
        self._path: str | None = None
        self._registered = False

    def _find(self, browser_path: str | None) -> str:
        import shutil

        if browser_path:
            return browser_path
        for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"):
            found = shutil.which(name)
            if found:
                return found
        raise LuskinError("The PDF report draws its charts with Chromium, which is not installed here (on Debian: "
                          "apt-get install chromium). The HTML report needs no browser.")

    def _start(self, path: str) -> None:
        import asyncio

        try:
            import kaleido
        except ImportError:
            raise LuskinError("The PDF report needs kaleido to draw its charts: pip install kaleido.") from None
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name="luskin-chart-renderer", daemon=True)
        thread.start()

        async def open_browser() -> Any:
            browser = kaleido.Kaleido(n=2, timeout=90, mathjax=False, path=path)
            await browser.open()
            return browser

        try:
            self._kaleido = asyncio.run_coroutine_threadsafe(open_browser(), loop).result(timeout=120)
        except Exception as err:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=10)
            raise LuskinError(f"Chromium at '{path}' could not be started to draw the PDF's charts ({err}).") from err
        self._loop, self._thread, self._path = loop, thread, path
        if not self._registered:
            atexit.register(self.close)
            self._registered = True

    def svgs(self, figures: Sequence[Mapping[str, Any]], *, browser_path: str | None = None) -> list[bytes]:
        """Each figure (a plotly figure dict) as SVG bytes, drawn at the report's width and its own height."""
        import asyncio

        if not figures:
            return []
        path = self._find(browser_path)
        with self._lock:
            if self._kaleido is None or self._path != path:
                self._close_locked()
                self._start(path)
            loop, browser = self._loop, self._kaleido
        futures = []
        for figure in figures:
            opts = {"format": "svg", "width": _PDF_WIDTH, "height": figure_height(figure)}
            futures.append(asyncio.run_coroutine_threadsafe(browser.calc_fig(figure, opts=opts), loop))
        try:
            return [bytes(f.result(timeout=180)) for f in futures]
        except Exception as err:
            self._discard(browser)
            raise LuskinError(f"Chromium stopped while drawing the PDF's charts ({type(err).__name__}: {err}). Try "
                              "again: a new browser will be started. The HTML report needs no browser.") from err

    def _discard(self, browser: Any) -> None:
        """Forget a browser that failed (the next PDF starts a new one); close it without waiting for it."""
        import asyncio

        with self._lock:
            if self._kaleido is not browser:
                return  # another thread already replaced it
            loop = self._loop
            self._loop = self._kaleido = self._thread = self._path = None

        async def close_then_stop() -> None:
            try:
                await browser.close()
            finally:
                loop.stop()

        asyncio.run_coroutine_threadsafe(close_then_stop(), loop)

    def _close_locked(self) -> None:
        import asyncio

        if self._kaleido is None:
            return
        loop, browser, thread = self._loop, self._kaleido, self._thread
        self._loop = self._kaleido = self._thread = self._path = None
        asyncio.run_coroutine_threadsafe(browser.close(), loop).result(timeout=60)
        loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join(timeout=10)

    def close(self) -> None:
        """Close the browser (the next PDF starts a new one)."""
        with self._lock:
            self._close_locked()


CHART_RENDERER = _ChartRenderer()


def close_chart_renderer() -> None:
    """Close the Chromium that draws the PDF's charts (it is also closed when the process exits)."""
    CHART_RENDERER.close()
