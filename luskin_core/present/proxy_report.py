"""A proxy audit (estimated race and ethnicity, BISG/BIFSG) in the report and the deck."""

from __future__ import annotations

from typing import Any

from luskin_core.analyses.proxy_audit import ProxyAudit, ratio_columns
from luskin_core.formatting import RATIO, format_number, format_p, format_percent, points
from luskin_core.present.report_blocks import Section, Table
from luskin_core.present.slide_blocks import CAVEATS as CAVEAT_KIND
from luskin_core.present.slide_blocks import FINDING, Slide

METHOD_WORDS = {"birdie": "outcome-aware (BIRDiE)", "weighted": "weighted", "threshold": "threshold"}


def report_section(audit: ProxyAudit) -> Any:
    """The report's section for a proxy audit (:func:`luskin_core.present.report.report_content` ``proxy=``)."""
    section = Section("proxy", "Estimated race and ethnicity (BISG): the outcome-aware estimate, with the "
                               "weighted and threshold ones for comparison, and bounds")
    section.add("sentences", items=[*(audit.proxy.get("sentences") or []), *audit.sentences()], title="Findings")
    ratio = audit.metric == "ratio"
    order = {m: i for i, m in enumerate(("birdie", "weighted", "threshold"))}
    ordered = sorted(audit.comparisons, key=lambda c: order.get(c.method, 9))
    rows = tuple((METHOD_WORDS.get(c.method, c.method), c.cell or "all rows",
                  c.group + (" (reference)" if c.is_reference else ""), f"{c.n:,.0f}",
                  format_percent(c.rate), "" if c.is_reference else format_number(c.difference),
                  *(ratio_columns(c) if ratio else
                    ["" if c.bound_low is None else f"{format_number(c.bound_low)} to {format_number(c.bound_high)}"]),
                  "" if c.is_reference else format_p(c.p_adjusted, short=True), "" if c.is_reference else c.verdict)
                 for c in ordered)
    middle = ("impact ratio", "95% CI (ratio)", "bounds on the ratio") if ratio else ("bounds on the gap",)
    section.table(Table("Each estimated group against the reference: the outcome-aware estimate (the verdict), then "
                        "the weighted one and the threshold method (probability at least "
                        f"{audit.threshold:g}) for comparison",
                        ("method", "cell", "estimated group", "rows", "share", "gap", *middle,
                         "p adj.", "verdict"), rows, wide=True))
    section.warnings(list(audit.caveats), "Read with care")
    return section


def slides(audit: ProxyAudit) -> list[Any]:
    """Two slides for the deck: the outcome-aware gaps with the other estimates and the bounds, then the caveats."""
    head = audit.headline_method
    words = METHOD_WORDS.get(head, head)
    lines = []
    for c in audit.comparisons:
        if c.method != head or c.is_reference or c.cell is not None or c.difference is None:
            continue
        others = {m: next((t for t in audit.comparisons if t.method == m and t.group == c.group and t.cell is None),
                          None) for m in ("weighted", "threshold") if m != head}
        line = _ratio_line if audit.metric == "ratio" else _gap_line
        lines.append(line(audit, c, others, words))
    return [Slide("Estimated race and ethnicity: the gaps", tuple(lines[:6]), None, FINDING, "proxy-gaps"),
            Slide("Estimated race: read with care", audit.caveats, None, CAVEAT_KIND, "proxy-caveats")]


def _ratio_line(audit: ProxyAudit, c: Any, others: dict[str, Any], words: str) -> str:
    """A group's impact ratio by the headline method, the other methods' and where the bounds put it."""
    extra = [f"{RATIO.text(o.impact_ratio)} {m}" for m, o in others.items() if o is not None and o.impact_ratio is not None]
    high, low = c.ratio_bound_high, c.ratio_bound_low
    bound = ""
    if high is not None and high < audit.ratio_threshold:
        bound = f"; below {audit.ratio_threshold:g} whatever the proxy's errors"
    elif low is not None and high is not None and low < audit.ratio_threshold <= high:
        bound = f"; the bounds could be either side of {audit.ratio_threshold:g}"
    value = "not computable" if c.impact_ratio is None else RATIO.text(c.impact_ratio)
    return (f"{c.group} against {c.reference}: impact ratio {value} {words}"
            + (f" ({', '.join(extra)})" if extra else "") + f"{bound}.")


def _gap_line(audit: ProxyAudit, c: Any, others: dict[str, Any], words: str) -> str:
    """A group's gap by the headline method, the other methods' and the gap whatever the proxy's errors."""
    extra = [f"{points(o.difference)} {m}" for m, o in others.items() if o is not None and o.difference is not None]
    bound = ""
    if c.bound_low is not None and c.bound_high is not None and (c.bound_low > 0 or c.bound_high < 0):
        bound = f"; at least {points(c.bound_low if c.bound_low > 0 else c.bound_high)} whatever the proxy's errors"
    return (f"{c.group} against {c.reference}: {points(c.difference)} {words}"
            + (f" ({', '.join(extra)})" if extra else "") + f"{bound}.")
