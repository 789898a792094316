"""A statistic every audit table shows is declared once (luskin_core/stats/shown.py) and read by every table.

The four-fifths flag says "below" on the frame, the page's table, the command line's table and the
report's table exactly for the groups whose share is under 0.8 of the reference's (recomputed with
pandas); and one line added to the declaration reaches the four tables with no other file touched.
"""

from __future__ import annotations

import pandas as pd
import pytest

from luskin_app.audit_view import comparison_table
from luskin_cli.audit import format_audit
from luskin_core.analyses.audit import AuditResult, audit
from luskin_core.present.report import _comparison_rows
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.stats import shown


@pytest.fixture(scope="module")
def result(adult: pd.DataFrame) -> AuditResult:
    return audit(adult, AuditSpec("income", ">50K", group_by=("race",)))


def _below(adult: pd.DataFrame, reference: str) -> set[str]:
    share = (adult["income"] == ">50K").groupby(adult["race"]).mean()
    return {g for g, s in share.items() if g != reference and s / share[reference] < 0.8}


def test_the_four_fifths_flag_is_the_same_on_every_table(adult: pd.DataFrame, result: AuditResult) -> None:
    below = _below(adult, result.reference)
    assert below and len(below) < len(result.groups) - 1   # some groups below, some not: the test can fail
    frame = result.comparisons_frame()
    assert {g for g, flag in zip(frame["Group"], frame["Below four-fifths"]) if flag is True} == below
    page = comparison_table(result)
    assert set(page.loc[page["4/5"] == "below", "Group"]) == below
    table = _comparison_rows(result)
    at = table.header.index("Below four-fifths")
    assert {row[1] for row in table.rows if row[at] == "below"} == below
    rows = [line.split() for line in format_audit(result).splitlines() if line.startswith("all rows ")]
    assert {row[2] for row in rows if row[-1] == "below"} == below   # cell "all rows", then the group


def test_one_line_reaches_every_table(result: AuditResult, monkeypatch: pytest.MonkeyPatch) -> None:
    extra = shown.Shown("Rows short of the reference", "short", "rows fewer than the reference has",
                        lambda c: None if c.is_reference else c.reference_n - c.n, lambda v: f"{v:,}")
    monkeypatch.setattr(shown, "SHOWN", (*shown.SHOWN, extra))
    judged = [c for c in result.comparisons if not c.is_reference]
    frame = result.comparisons_frame()
    assert list(frame["Rows short of the reference"].dropna()) == [c.reference_n - c.n for c in judged]
    page = comparison_table(result)
    assert [v for v in page["short"] if v] == [f"{c.reference_n - c.n:,}" for c in judged]
    table = _comparison_rows(result)
    at = table.header.index("Rows short of the reference")
    assert [row[at] for row in table.rows if row[at]] == [f"{c.reference_n - c.n:,}" for c in judged]
    lines = format_audit(result).splitlines()
    assert any(line.startswith("cell ") and line.rstrip().endswith(" short") for line in lines)
    assert [line.split()[-1] for line in lines if line.startswith("all rows ") and "(ref)" not in line] == \
        [f"{c.reference_n - c.n:,}" for c in judged]


def test_the_gap_says_its_unit_in_every_heading(adult: pd.DataFrame, result: AuditResult) -> None:
    """The gap's unit (points) is in the page's headings as the share's is ('Share % [CI]'), read from the one
    declaration (shown.GAP), and in the report's; the numbers under it are points (100 x the difference)."""
    from luskin_app.audit_view import paper_table
    from luskin_core.counting.data import PRESETS
    from luskin_core.present.report import _paper_rows

    assert shown.GAP.unit == "points" and shown.GAP.header(ci=True) == "Gap (points) [CI]"
    page = comparison_table(result)
    assert "Gap (points) [CI]" in page.columns and not [c for c in page.columns if c.startswith("Gap [")]
    judged = [c for c in result.comparisons if not c.is_reference]
    values = [v.split(" [")[0] for v in page["Gap (points) [CI]"] if v]
    assert len(values) == len(judged)
    assert [float(v.replace("−", "-")) for v in values] == pytest.approx([100 * c.difference for c in judged], abs=0.06)
    assert "(points)" in _comparison_rows(result).header[5]
    paper = audit(adult, PRESETS["adult"].spec)
    assert list(paper_table(paper).columns)[4] == "Gap (points)"
    assert _paper_rows(paper).header[5].startswith("Gap (points, group − ")
