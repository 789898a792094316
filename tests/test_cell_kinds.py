"""One comparison reads the same in every table (issue 45): its share, gap, impact ratio and p-value.

The command line's audit table, the page's table frame (luskin_app's view function) and the HTML report
write a cell of each kind with the one formatter of luskin_core.formatting (share "12.4" under a heading
that says "%", gap "-14.6" under one that says "points", impact ratio "0.46" under "impact ratio", p
"<0.001"); before, the command line wrote fractions (0.124, -0.146) and the report "-14.6 points".
"""

from __future__ import annotations

import html
from html.parser import HTMLParser

import pandas as pd
import pytest

from luskin_app.audit_view import comparison_table
from luskin_cli.audit import format_audit
from luskin_core import formatting
from luskin_core.analyses.audit import AuditResult, audit
from luskin_core.present.report import build_html_report
from luskin_core.spec.audit_spec import AuditSpec

KINDS = ("share", "gap", "impact ratio", "p adj.")


@pytest.fixture(scope="module")
def result(adult: pd.DataFrame) -> AuditResult:
    return audit(adult, AuditSpec("income", ">50K", group_by=("race",)))


def _expected(c) -> dict[str, str]:
    return {"share": formatting.SHARE.text(c.rate), "gap": formatting.GAP.text(c.difference),
            "impact ratio": formatting.RATIO.text(c.impact_ratio), "p adj.": formatting.P_VALUE.text(c.p_adjusted)}


def _value(cell: str) -> str:
    """A cell's number without its interval."""
    return cell.split(" [")[0].strip()


def _column(header: list[str], *words: str) -> int:
    """The one column whose heading has all ``words`` (case-insensitive)."""
    found = [i for i, h in enumerate(header) if all(w in h.lower() for w in words)]
    assert len(found) == 1, (words, header)
    return found[0]


def _picks(header: list[str]) -> dict[str, int]:
    """Where each kind is: the share's heading says %, the gap's points, the ratio's 'impact ratio'."""
    return {"share": _column(header, "share", "%"), "gap": _column(header, "points"),
            "impact ratio": _column(header, "impact ratio"),
            "p adj.": _column(header, "adj")}


def _cli_table(text: str) -> tuple[list[str], list[list[str]]]:
    """The first aligned table of the audit's text: its heading and rows, cut at the dashes' columns."""
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("cell ") and set(lines[i + 1]) <= {"-", " "})
    spans, start = [], 0
    for dashes in lines[at + 1].split("  "):
        spans.append((start, start + len(dashes)))
        start += len(dashes) + 2
    rows = []
    for line in lines[at:]:
        if not line.strip():
            break
        rows.append([line[a:b].strip() for a, b in spans])
    return rows[0], rows[2:]


class _Tables(HTMLParser):
    """Every table of an HTML page as lists of cell texts (the heading row first)."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self.tables and self.tables[-1]:
            self.tables[-1][-1].append(html.unescape("".join(self._cell)).strip())
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def test_every_surface_writes_a_comparison_the_same_way(result: AuditResult) -> None:
    judged = [c for c in result.comparisons if not c.is_reference and c.impact_ratio is not None]
    assert len(judged) >= 3
    expected = {c.group: _expected(c) for c in judged}
    assert any(e["p adj."] == "<0.001" for e in expected.values()) and any(
        e["p adj."] != "<0.001" for e in expected.values())   # both spellings of a p-value are compared

    header, rows = _cli_table(format_audit(result))
    picks = _picks(header)
    cli = {row[1]: {k: _value(row[i]) for k, i in picks.items()} for row in rows if "(ref)" not in row[1]}

    page = comparison_table(result)
    columns = list(page.columns)
    page_picks = _picks(columns)
    shown = {row["Group"]: {k: _value(str(row[columns[i]])) for k, i in page_picks.items()}
             for _, row in page.iterrows()}

    parser = _Tables()
    parser.feed(build_html_report([result], dataset="adult"))
    table = next(t for t in parser.tables if t and any(h.lower().startswith("impact ratio") for h in t[0]))
    report_picks = _picks(table[0])
    report = {row[1]: {k: _value(row[i]) for k, i in report_picks.items()} for row in table[1:] if len(row) > 1}

    for group, want in expected.items():
        assert cli[group] == want, ("command line", group)
        assert shown[group] == want, ("page", group)
        assert report[group] == want, ("report", group)


def test_a_heading_says_what_ratio_it_is(result: AuditResult) -> None:
    """'ratio' alone meant the share in one table and the impact ratio in another: no heading says it alone."""
    header, _ = _cli_table(format_audit(result))
    page = list(comparison_table(result).columns)
    for heading in [*header, *page]:
        assert heading.lower().strip() != "ratio", heading


@pytest.mark.parametrize("kind, value, text, hover", [
    (formatting.SHARE, 0.12345, "12.3", "%{y:.1f}"), (formatting.GAP, -0.021, "-2.1", "%{y:+.1f}"),
    (formatting.GAP, 0.021, "+2.1", "%{y:+.1f}"), (formatting.RATIO, 0.456, "0.46", "%{y:.2f}"),
    (formatting.P_VALUE, 0.0004, "<0.001", "%{y:.3f}"), (formatting.COUNT, 12345, "12,345", "%{y:,d}"),
    (formatting.AMOUNT, 101000.5, "101,000.50", "%{y:,.2f}"),
])
def test_each_kind_is_one_formatter_and_one_plotly_format(kind, value, text, hover) -> None:
    assert kind.text(value) == text and kind.hover("y") == hover and kind.text(None) == "n/a"
    assert kind in formatting.CELL_KINDS


def test_an_interval_reads_in_the_kind_and_whole_where_columns_are_narrow() -> None:
    assert formatting.SHARE.ci(0.4432, 0.4345, 0.4519) == "44.3 [43.5, 45.2]"
    assert formatting.SHARE.ci(0.4432, 0.4345, 0.4519, whole=True) == "44.3 [43, 45]"
    assert formatting.GAP.ci(-0.052, -0.097, 0.003) == "-5.2 [-9.7, +0.3]"
    assert formatting.GAP.ci(-0.052, None, 0.003) == "-5.2"
    assert formatting.SHARE.heading("Share", ci="95% CI") == "Share (%) [95% CI]"
    assert formatting.GAP.heading("Gap") == "Gap (points)" and formatting.RATIO.heading("Impact ratio") == "Impact ratio"
