"""A printable handout of the deck: the slides as a PDF, one slide per landscape page, the same charts.

Built from :func:`luskin_core.present.slides.build_slides`'s slides with the report's PDF machinery
(:mod:`luskin_core.present.report`): charts drawn as SVG by the report's one headless Chromium
(kaleido), the page laid out by WeasyPrint, which may fetch nothing but ``data:`` addresses.
Every slide string is escaped; the charts are already escaped by the slide builders.
"""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Sequence

from luskin_core.errors import LuskinError
from luskin_core.present.slide_blocks import Slide

_CSS = """
@page { size: A4 landscape; margin: 1.2cm 1.5cm; }
body { font-family: Arial, Helvetica, sans-serif; color: #222; }
section { page-break-after: always; }
section:last-child { page-break-after: auto; }
.number { color: #666; font-size: 10pt; }
h1 { font-size: 22pt; margin: 0.1cm 0 0.3cm 0; }
p { font-size: 13pt; line-height: 1.35; margin: 0 0 0.25cm 0; }
img { display: block; margin: 0.2cm auto 0 auto; max-height: 11.5cm; max-width: 100%; }
"""


def handout_html(slides: Sequence[Slide], images: Sequence[bytes | None], title: str) -> str:
    """The handout's page: one section per slide (title, sentences, chart image), every string escaped."""
    from luskin_core.present.chart_text import chart_text

    head = (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{_CSS}</style></head><body>")
    parts = [head]
    for number, (slide, svg) in enumerate(zip(slides, images), 1):
        parts.append("<section>")
        parts.append(f"<div class='number'>{html.escape(title)}: slide {number} of {len(slides)}</div>")
        parts.append(f"<h1>{html.escape(slide.title)}</h1>")
        parts += [f"<p>{html.escape(s)}</p>" for s in slide.sentences]
        if svg is not None:
            src = "data:image/svg+xml;base64," + base64.b64encode(svg).decode("ascii")
            alt = chart_text(slide.figure).description if slide.figure is not None else "chart"
            parts.append(f"<img src='{src}' alt='{html.escape(alt, quote=True)}'>")   # the page's and report's words
        parts.append("</section>")
    parts.append("</body></html>")
    return "".join(parts)


def handout_pdf(slides: Sequence[Slide], *, title: str = "Fairness audit", browser_path: str | None = None) -> bytes:
    """The slides as a PDF, one per page, with the same charts (needs WeasyPrint and kaleido, as the report)."""
    if not slides:
        raise LuskinError("There is no slide to print: every slide is hidden.")
    try:
        import weasyprint
    except ImportError:
        raise LuskinError("The handout needs WeasyPrint: pip install weasyprint.") from None
    from luskin_core.present.report_render import CHART_RENDERER

    figures = [json.loads(s.figure.to_json()) for s in slides if s.figure is not None]
    drawn = iter(CHART_RENDERER.svgs(figures, browser_path=browser_path))
    images = [next(drawn) if s.figure is not None else None for s in slides]
    page = handout_html(slides, images, title)
    fetcher = weasyprint.URLFetcher(allowed_protocols={"data"})   # nothing is fetched from outside
    # PDF/UA-1, as the report: tagged headings and paragraphs, each chart a Figure with its description
    return bytes(weasyprint.HTML(string=page, url_fetcher=fetcher).write_pdf(pdf_variant="pdf/ua-1"))


__all__ = ["handout_html", "handout_pdf"]
