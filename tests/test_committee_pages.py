"""What a committee reads (issue 16): the report PDF's first pages have no overlapping text, and the
slides and the report's first page use no internal words.

The PDF is made by ``build_pdf_report`` (WeasyPrint, charts as vector images from kaleido) for the
paper's Adult audit and for Berkeley 1973 stratified by department (the textbook Simpson's
paradox); poppler's ``pdftotext -bbox`` gives each word's box with the font's real widths, and no
two words of any page (the charts' labels included: they are text in the PDF) may cover each other
(labels printed over labels, a legend over an axis title).
"""

from __future__ import annotations

import html
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from code_words import code_words

from luskin_core.analyses.audit import audit
from luskin_core.counting.data import PRESETS, load_sample
from luskin_core.present.report import build_pdf_report
from luskin_core.present.slides import build_slides
from luskin_core.spec.audit_spec import AuditSpec

FIXTURES = Path(__file__).parent / "fixtures"
WORD = re.compile(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">(.*?)</word>')
PAGE = re.compile(r"<page [^>]*>(.*?)</page>", re.DOTALL)
# Words of the code, the command line or the paper's internals that a committee should not meet.
INTERNAL = [re.compile(p, re.IGNORECASE) for p in (r"\bcells?\b", r"the paper's view", r"\bfilter cell\b", r"--[a-z]{3,}",
                                          r"\bluskin (audit|report)\b", r"\bnon-non-", r"\bspec\b", r"pass_bar")]


def _code_words(case: str, text: str) -> list[str]:
    """The issue's code-like words (tests/code_words.py) in ``text``; Adult's preset names its other group
    "Non-White" as the paper does (race has five values), so there the negation is the preset's own name."""
    found = code_words(text)
    return [w for w in found if not (case == "adult" and w.startswith("the other group as a negation")
                                     and "Non-White" in w)]


def _berkeley() -> pd.DataFrame:
    counts = pd.read_csv(FIXTURES / "ucb_admissions.csv")
    rows = []
    for r in counts.itertuples():
        rows += [(r.department, r.sex, "admitted")] * r.admitted + [(r.department, r.sex, "rejected")] * r.rejected
    return pd.DataFrame(rows, columns=["department", "sex", "decision"])


def _cases() -> dict[str, tuple[pd.DataFrame, AuditSpec]]:
    berkeley = AuditSpec.from_dict({"outcome": "decision", "positive": "admitted",
                                    "protected": {"column": "sex", "op": "==", "value": "Female"},
                                    "strata": ["department"]})
    return {"adult": (load_sample("adult"), PRESETS["adult"].spec), "berkeley": (_berkeley(), berkeley)}


def _need_pdf_tools() -> None:
    missing = [name for name in ("chromium", "pdftotext") if shutil.which(name) is None]
    if missing:
        pytest.skip(f"the PDF check needs {' and '.join(missing)} (apt-get install chromium poppler-utils)")


def words_by_page(pdf: Path) -> list[list[tuple[float, float, float, float, str]]]:
    """Each page's words with their boxes (points), from poppler."""
    out = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], check=True,
                         capture_output=True, text=True, timeout=120).stdout
    return [[(float(a), float(b), float(c), float(d), html.unescape(t)) for a, b, c, d, t in WORD.findall(page)]
            for page in PAGE.findall(out)]


def overlaps(words: list[tuple[float, float, float, float, str]], slack: float = 1.0) -> list[str]:
    """Pairs of words whose boxes cover each other by more than ``slack`` points both ways."""
    found = []
    for i, (l1, t1, r1, b1, w1) in enumerate(words):
        for l2, t2, r2, b2, w2 in words[i + 1:]:
            width = min(r1, r2) - max(l1, l2)
            height = min(b1, b2) - max(t1, t2)
            if width > slack and height > slack:
                found.append(f"{w1!r} at ({l1:.0f}, {t1:.0f}) and {w2!r} at ({l2:.0f}, {t2:.0f}): "
                             f"{width:.1f} x {height:.1f} pt")
    return found


def test_the_overlap_check_finds_words_printed_over_each_other() -> None:
    """The check itself: two boxes on top of each other are found, side-by-side words are not."""
    words = [(10.0, 10.0, 40.0, 20.0, "Female"), (30.0, 12.0, 60.0, 22.0, "Male"), (70.0, 10.0, 90.0, 20.0, "ok")]
    assert len(overlaps(words)) == 1 and "Female" in overlaps(words)[0]


@pytest.mark.parametrize("case", ["adult", "berkeley"])
def test_report_pdf_pages_have_no_overlapping_text(case: str, tmp_path: Path) -> None:
    _need_pdf_tools()
    frame, spec = _cases()[case]
    result = audit(frame, spec)
    path = tmp_path / f"{case}.pdf"
    path.write_bytes(build_pdf_report([result], frame=frame, dataset=f"{case}.csv"))
    pages = words_by_page(path)
    assert len(pages) >= 3 and all(len(p) > 20 for p in pages[:1])
    every = " ".join(w[4] for page in pages for w in page)
    assert "percentage points" in every   # the charts' words are text in the PDF, so the check sees them
    problems = [f"page {n}: {hit}" for n, words in enumerate(pages, 1) for hit in overlaps(words)]
    assert not problems, "\n".join(problems[:30])
    first = " ".join(w[4] for w in pages[0])
    internal = [p.pattern for p in INTERNAL if p.search(first)] + _code_words(case, first)
    assert not internal, f"the report's first page uses internal words {internal}: {first[:1500]}"


@pytest.mark.parametrize("case", ["adult", "berkeley"])
def test_slides_use_no_internal_words(case: str) -> None:
    frame, spec = _cases()[case]
    slides = build_slides([audit(frame, spec)])
    assert len(slides) >= 4
    found = []
    for slide in slides:
        for text in (slide.title, *slide.sentences):
            found += [f"{slide.key}: {p.pattern} in {text[:160]!r}" for p in INTERNAL if p.search(text)]
            found += [f"{slide.key}: {w}" for w in _code_words(case, text)]
    assert not found, "\n".join(found)
