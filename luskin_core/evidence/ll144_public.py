"""The public summary of a Local Law 144 bias audit, made from verified evidence: an HTML page (and its tagged PDF)
and the CSV.

The DCWP rules (6 RCNY §5-303) ask an employer to publish, before using the tool: the date of the most recent
bias audit, a summary of its results including the source and an explanation of the data used, the number of
individuals assessed, the number in an unknown category, the selection or scoring rates and the impact ratios of
every category, and the distribution date of the tool. The page says each of them (what the operator did not give
is said to be not given), every text escaped; at its foot, the command that checks it against the evidence file.
The CSV is the one ``luskin audit --template ll144 --counts FILE`` reads back into the same tables.
"""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from typing import Any

from luskin_core.formatting import format_number, format_percent

_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; color: #1a1a1a;
       line-height: 1.45; }
table { border-collapse: collapse; margin: 0.5rem 0 1.5rem; }
th, td { border: 1px solid #888; padding: 0.25rem 0.6rem; text-align: right; }
th:first-child, td:first-child { text-align: left; }
caption { text-align: left; font-weight: 600; padding-bottom: 0.3rem; }
dt { font-weight: 600; } dd { margin: 0 0 0.5rem 0; }
footer { border-top: 1px solid #888; margin-top: 2rem; padding-top: 0.5rem; font-size: 0.95rem; }
code { background: #f0f0f0; padding: 0.1rem 0.3rem; }
"""


def _given(value: Any) -> str:
    text = str(value).strip() if value is not None else ""
    return escape(text) if text else "not given"


def summary_html(result: Any, *, about: Mapping[str, Any], made: Mapping[str, Any], evidence_name: str = "",
                 evidence_sha256: str = "", key_id: str | None = None) -> str:
    """The page to publish, from an :class:`~luskin_core.analyses.regulator_ll144.LL144Result` recomputed from the
    evidence (``about``: what the operator said of the data; ``made``: when the audit was made)."""
    from luskin_core.analyses.regulator_ll144 import KIND_TITLES, UNKNOWN_WHAT

    rate = result.rate_name
    selected = "Scored above the median" if result.scoring else "Selected"
    date = str(made.get("at", ""))[:10]
    facts = [("Date of the bias audit", escape(date) if date else "not given"),
             ("Source of the data", _given(about.get("data_source"))),
             ("Explanation of the data", _given(about.get("data_explanation"))),
             ("Individuals assessed", f"{result.assessed:,}"),
             *((escape(what), f"{n:,}") for what, n in result.unknown_counts()),
             ("Distribution date of the tool (given by the employer)", _given(about.get("distribution_date")))]
    if result.scoring and result.median is not None:
        facts.append(("Scoring rate", escape(f"the share scoring strictly above the median score ({result.median:g})")))
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>{escape(str(about.get('title') or 'Summary of the results of a bias audit'))}</title>",
             f"<style>{_STYLE}</style></head><body>",
             f"<h1>{escape(str(about.get('title') or 'Summary of the results of a bias audit'))}</h1>",
             ("<p>NYC Local Law 144 of 2021 (6 RCNY §5-300 to §5-304): selection or scoring rates and impact ratios "
             "for sex, race/ethnicity and their intersection. The impact ratio is a category's "
             f"{escape(rate)} divided by the {escape(rate)} of the most selected category.</p>"), "<dl>"]
    parts += [f"<dt>{name}</dt><dd>{value}</dd>" for name, value in facts]
    parts.append("</dl>")
    for table in result.tables:
        title = escape(KIND_TITLES[table.kind])
        if not table.rows:
            parts.append(f"<h2>{title}</h2><p>{escape(table.reason or 'No categories.')}</p>")
            continue
        parts.append(f"<h2>{title}</h2>")
        parts.append(f"<table><caption>{title} categories (unknown {escape(UNKNOWN_WHAT[table.kind])}: "
                     f"{table.unknown_count:,} individuals, not in this table)</caption>")
        parts.append(f"<thead><tr><th scope=\"col\">Category</th><th scope=\"col\">Applicants</th>"
                     f"<th scope=\"col\">{selected}</th><th scope=\"col\">{escape(rate.capitalize())}</th>"
                     "<th scope=\"col\">Impact ratio</th></tr></thead><tbody>")
        for row in table.rows:
            ratio = "excluded (under 2%)" if row.excluded else format_number(row.impact_ratio, 3)
            parts.append(f"<tr><th scope=\"row\">{escape(row.category)}</th><td>{row.n:,}</td><td>{row.selected:,}</td>"
                         f"<td>{escape(format_percent(row.rate))}</td><td>{escape(ratio)}</td></tr>")
        parts.append("</tbody></table>")
        if table.reason:
            parts.append(f"<p>No impact ratios: {escape(table.reason)}</p>")
    if result.justification:
        parts.append(f"<p>{escape(result.justification)}</p>")
    if result.notes:
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{escape(n)}</li>" for n in result.notes) + "</ul>")
    parts.append("<footer>")
    if evidence_name:
        key = f" --key {escape(key_id[:16])}.pub" if key_id else ""
        parts.append(f"<p>Every number on this page is recomputed from the evidence file "
                     f"<code>{escape(evidence_name)}</code>"
                     + (f" (SHA-256 <code>{escape(evidence_sha256)}</code>)" if evidence_sha256 else "")
                     + (f", signed with the Ed25519 key <code>{escape(key_id[:16])}</code>" if key_id else "")
                     + ". Anyone can check it with Luskin:</p>"
                     f"<p><code>luskin verify {escape(evidence_name)}{key}</code></p>")
    else:
        parts.append("<p>Made by Luskin from the counts of the audit.</p>")
    parts.append("</footer></body></html>")
    return "\n".join(parts)


def summary_pdf(page: str) -> bytes:
    """The summary page (:func:`summary_html`) as a PDF, tagged as the report is: PDF/UA-1 (WeasyPrint's variant), so
    a screen reader finds its heading, its list of facts and each table with its header cells, in reading order
    (Section 508). Nothing is fetched from outside."""
    from luskin_core.errors import LuskinError

    try:
        import weasyprint
    except ImportError:
        raise LuskinError("The PDF of the report needs WeasyPrint (pip install weasyprint); leave the PDF out of the "
                          "evidence to write it without.") from None
    fetcher = weasyprint.URLFetcher(allowed_protocols={"data"})
    return bytes(weasyprint.HTML(string=page, url_fetcher=fetcher).write_pdf(pdf_variant="pdf/ua-1"))


def summary_csv(result: Any) -> str:
    """The tables as the CSV ``--counts`` reads back (formula cells neutralised)."""
    return str(result.to_csv())


__all__ = ["summary_csv", "summary_html", "summary_pdf"]
