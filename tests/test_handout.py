"""The printable handout (issue 16): the deck as a PDF, one slide per page, the same charts, the story first."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from test_report import _need_pdf_tools, _pdf_text

from luskin_core.analyses.audit import audit
from luskin_core.analyses.findings import findings
from luskin_core.present.handout import handout_html, handout_pdf
from luskin_core.present.slides import build_slides
from luskin_core.spec.audit_spec import AuditSpec

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="module")
def berkeley_deck():
    counts = pd.read_csv(FIXTURES / "ucb_admissions.csv")
    rows = []
    for r in counts.itertuples():
        rows += [(r.department, r.sex, "admitted")] * r.admitted + [(r.department, r.sex, "rejected")] * r.rejected
    frame = pd.DataFrame(rows, columns=["department", "sex", "decision"]).astype("string")
    result = audit(frame, AuditSpec("decision", "admitted", group_by=("sex",), strata=("department",)))
    return result, build_slides([result], dataset="berkeley.csv")


def test_handout_html_escapes_every_slide_string(berkeley_deck):
    from luskin_core.present.slides import Slide

    evil = Slide("<script>alert(1)</script>", ("<img src=x onerror=alert(1)>",), None, "question", "q")
    page = handout_html([evil], [None], "Audit <b>")
    assert "<script>alert" not in page and "<img src=x" not in page and "&lt;script&gt;" in page


def test_handout_pdf_has_one_page_per_slide_and_the_findings_first(berkeley_deck, tmp_path):
    _need_pdf_tools()
    result, slides = berkeley_deck
    data = handout_pdf(slides, title="Berkeley 1973")
    path = tmp_path / "handout.pdf"
    path.write_bytes(data)
    info = subprocess.run(["pdfinfo", str(path)], check=True, capture_output=True, text=True).stdout
    pages = int(re.search(r"^Pages:\s+(\d+)", info, flags=re.MULTILINE).group(1))
    assert pages == len(slides) == 8   # two long-text slides have their chart on the next slide
    verdict = next(i for i, s in enumerate(slides, 1) if s.kind == "verdict")
    text = _pdf_text(data, tmp_path, verdict, verdict)
    assert findings(result).sentences()[0].split(":")[0] in text
    assert "slide 3 of" in text or f"slide {verdict} of" in text


def test_handout_pdf_is_tagged_with_each_chart_described(berkeley_deck):
    """PDF/UA-1 as the report (issue 46): one Figure per slide chart, its /Alt the chart's description."""
    import io

    import pypdf

    from luskin_core.present.chart_text import chart_text

    _need_pdf_tools()
    _, slides = berkeley_deck
    reader = pypdf.PdfReader(io.BytesIO(handout_pdf(slides, title="Berkeley 1973")))
    root = reader.trailer["/Root"]
    assert bool(root["/MarkInfo"]["/Marked"]) and root["/Lang"] == "en"
    alts: list[str] = []
    heads = 0

    def walk(node) -> None:
        nonlocal heads
        node = node.get_object()
        if not isinstance(node, pypdf.generic.DictionaryObject):
            return
        heads += node.get("/S") == "/H1"
        if node.get("/S") == "/Figure":
            alts.append(str(node.get("/Alt", "")))
        kids = node.get("/K")
        for kid in kids if isinstance(kids, pypdf.generic.ArrayObject) else [kids] if kids is not None else []:
            walk(kid)

    walk(root["/StructTreeRoot"])
    assert heads == len(slides)
    assert alts == [chart_text(s.figure).description for s in slides if s.figure is not None] and alts
