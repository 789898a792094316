"""Issue 46 (Section 508): the LL144 public summary's PDF, the report of a published table's evidence, is tagged as
the main report is: PDF/UA-1, its language said, a structure tree with the page's heading, its sections and each
table with its header cells, in reading order."""

from __future__ import annotations

import io
import re

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("weasyprint")
pypdf = pytest.importorskip("pypdf")
import pdf_structure  # after the skip: it reads pypdf


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(46)
    n = 600
    frame = pd.DataFrame({"sex": rng.choice(["Female", "Male"], n), "race": rng.choice(["Asian", "Black", "White"], n)})
    frame["hired"] = np.where(rng.random(n) < np.where(frame.sex == "Female", 0.3, 0.45), "yes", "no")
    return frame


def test_a_published_tables_evidence_holds_its_summary_as_a_tagged_pdf(tmp_path):
    from cli_inproc import run_in_process

    from luskin_core.analyses.regulator_tables import REGULATOR_TABLES, RegulatorChoices
    from luskin_core.evidence import bundle
    from luskin_core.evidence.ll144_public import summary_csv
    from luskin_core.spec.audit_spec import AuditSpec

    output = REGULATOR_TABLES["ll144"].build(_frame(), AuditSpec("hired", positive="yes", group_by=("sex",)),
                                             RegulatorChoices(sex="sex", race="race"))
    table = tmp_path / "published.csv"
    table.write_text(summary_csv(output.result), encoding="utf-8")
    target = tmp_path / "published.evidence"
    status, out, err = run_in_process(["audit", "--template", "ll144", "--counts", str(table), "--evidence",
                                       str(target)])
    assert status == 0, out + err
    pdf = bundle.read(target.read_bytes()).parts["report.pdf"]
    root = pypdf.PdfReader(io.BytesIO(pdf)).trailer["/Root"]
    assert "/StructTreeRoot" in root, "the summary's PDF is untagged"
    assert bool(root["/MarkInfo"]["/Marked"]) and root["/Lang"] == "en"
    assert re.search(rb"pdfuaid:part(>|=\")1", root["/Metadata"].get_object().get_data())
    tags = pdf_structure.tags(root)
    assert tags.count("/H1") == 1 and tags.count("/H2") >= 3   # the title, then sex, race/ethnicity, intersection
    assert tags.count("/Table") >= 3 and "/TH" in tags and "/TD" in tags and "/Caption" in tags
