"""``luskin audit``: every group against a reference, in every cell, with the pooled view.

Registered by :func:`luskin_cli.main.build_parser` through :func:`add_parsers`. The paper's
setup (a protected condition, one filter) prints the paper's two-class table; groups formed by
columns (``--groups race --groups sex``) and strata (``--stratify education``) print one row per
group per cell against the reference, then the overall and within-cell comparison per group.
``--json`` prints :meth:`luskin_core.analyses.audit.AuditResult.to_dict`.
"""

from __future__ import annotations

from typing import Any

from luskin_cli.options import CommandOptions
from luskin_core import formatting as cells
from luskin_core.errors import LuskinError

AUDIT_DESCRIPTION = (
    "Compare the share with a positive outcome between groups inside each cell, with 95% confidence "
    "intervals, the difference and the impact ratio against a reference group, a significance test of each "
    "gap adjusted for the number of comparisons, and a verdict: too few rows, within the tolerance, beyond "
    "it, or beyond it but possibly chance. With strata, each group's overall gap is set beside the gap "
    "within the strata (Mantel-Haenszel, Cochran-Mantel-Haenszel, Breslow-Day-Tarone, Simpson's paradox)."
)


# ------------------------------------------------------------------------------------------
# Printing
# ------------------------------------------------------------------------------------------
_RATE_HEAD = {"selection": "share", "tpr": "TPR", "fpr": "FPR", "fnr": "FNR", "precision": "precision"}


def _error_rate_title(result: Any) -> str:
    from luskin_core.stats.comparisons import CRITERION_NAMES

    criterion = result.spec.criterion
    judged = ("judged on the share predicted positive (--criterion to judge an error rate)" if criterion == "selection"
              else f"judged on {CRITERION_NAMES[criterion]}")
    return (f"Error rates of '{result.spec.prediction}' against {result.spec.outcome_text}, each group minus "
            f"{result.reference} ({judged}):")


def _error_rate_rows(result: Any) -> tuple[list[list[str]], list[str]]:
    """TPR, FPR, FNR and precision per group and cell, with the gap to the reference and its p-values."""
    rows = []
    names = ("tpr", "fpr", "fnr", "precision")
    for c in result.comparisons:
        if not c.error_rates:
            continue
        row = [c.cell or "all rows", c.group + (" (ref)" if c.is_reference else "")]
        for name in names:
            e = c.error_rates[name]
            cell = cells.SHARE.text(e["rate"])
            if not c.is_reference and e["difference"] is not None:
                adjusted = e.get("p_adjusted")
                cell += f" ({cells.GAP.text(e['difference'])}, p {cells.P_VALUE.text(e['p_value'])}"
                cell += f", adj. {cells.P_VALUE.text(adjusted)})" if adjusted is not None else ")"
            row.append(cell)
        rows.append(row)
    return rows, ["cell", "group", *(f"{head} (%; gap in points, p)" for head in ("TPR", "FPR", "FNR", "precision"))]


_CORRECTION_WORDS = {"holm": "Holm", "bh": "Benjamini-Hochberg", "none": "nothing"}


def _rows_left_out(result: Any) -> str:
    """The count of rows and those left out (by reason, and outside the population), closing the head's bracket."""
    if not result.n_excluded:
        return ")"
    reasons = ", ".join(f"{k} {v:,}" for k, v in result.excluded_reasons.items())
    outside = result.n_excluded - sum(result.excluded_reasons.values())
    if outside:
        reasons = (reasons + ", " if reasons else "") + f"outside the population {outside:,}"
    return f"; {result.n_excluded:,} left out: {reasons})"


def _audit_head(result: Any) -> str:
    """What was audited, how it was judged, the rows counted; the score rule, the binned columns, the cut-off."""
    from luskin_core.analyses.narrative import tolerance_points
    from luskin_core.counting.plan import MAX_CODES, MAX_VALUES

    spec = result.spec
    head = (f"Audit of {result.source}: {spec.outcome_text}; {result.groups_text}"
            + (f", reference {result.reference}" if spec.group_mode == "columns" else "")
            + f"; tolerance {spec.tolerance:g} ({tolerance_points(spec)} points)"
            + (f", impact-ratio threshold {spec.ratio_threshold:g}" if spec.metric == "ratio" else "")
            + f"; p-values adjusted by {_CORRECTION_WORDS[spec.correction]}"
            + f" ({result.n_rows:,} rows")
    head += _rows_left_out(result)
    counts = result.counts
    if counts is not None and counts.score_rule_words is not None:
        head += f"\nA row counts as positive when {spec.outcome} is {counts.score_rule_words}."
    for column, cuts in getattr(counts, "binned", ()) if counts is not None else ():
        head += (f"\n'{column}' has too many values to compare one by one (more than {MAX_VALUES} numbers, or more "
                 f"than {MAX_CODES} whole-number codes), so its rows are put in {len(cuts) + 1} ranges cut at its "
                 f"quantiles ({', '.join(f'{c:g}' for c in cuts)}); to choose the ranges, give --bins "
                 f"{column}=CUT,CUT,...; to compare its values one by one, give them as text.")
    if spec.prediction is not None and spec.prediction_cutoff is not None:
        head += f"\nA row is predicted positive when {spec.prediction} is at least {spec.prediction_cutoff:g}."
    return head


def _gap_table(result: Any) -> str:
    """A protected condition: each cell's two classes, the gap against the reference and its verdict."""
    from luskin_core.formatting import format_table
    from luskin_core.stats.verdict import fair_flag

    rows = []
    for c in result.cells:
        g = result.gap(c.filter_holds)
        compared = ["", "", "", "", ""] if c.label == result.reference else [   # the gap is the group's, said once
            cells.GAP.text(g.gap), cells.P_VALUE.text(g.p_value), cells.P_VALUE.text(g.p_adjusted), fair_flag(g.fair),
            g.verdict]
        rows.append([c.cell, c.label + (" (ref)" if c.label == result.reference else ""), cells.COUNT.text(c.n),
                     cells.COUNT.text(c.positives), cells.SHARE.ci(c.ratio, c.ci_low, c.ci_high), *compared])
    measure = result.gaps[0].measure if result.gaps else "selection"
    gap_head = cells.GAP.heading(f"gap vs {result.reference}" + ("" if measure == "selection"
                                                                  else f" ({_RATE_HEAD[measure]})"))
    return format_table(rows, ["cell", "group", "n", "positive", cells.SHARE.heading("share", ci="95% CI"), gap_head,
                               "p", "p adj.", "tolerance", "verdict"])


def _comparison_row(c: Any, apart: bool) -> list[str]:
    """One group in a cell; the reference's comparison columns are blank, a group of unknown category (``apart``)
    has no verdict of its own."""
    from luskin_core.stats import shown as shown_statistics
    from luskin_core.stats.verdict import SET_APART

    compared = ["", "", "", "", ""] if c.is_reference else [
        cells.GAP.ci(c.difference, c.difference_ci_low, c.difference_ci_high),
        cells.RATIO.text(c.impact_ratio), cells.P_VALUE.text(c.p_value), cells.P_VALUE.text(c.p_adjusted),
        SET_APART if apart else c.verdict]
    return [c.cell or "all rows", c.group + (" (ref)" if c.is_reference else ""), cells.COUNT.text(c.n),
            cells.SHARE.ci(c.rate, c.ci_low, c.ci_high), *compared,
            *(s.text(c) for s in shown_statistics.SHOWN)]


def _comparison_table(result: Any) -> str:
    """Groups of columns: every group against the reference, in every cell."""
    from luskin_core.formatting import format_table
    from luskin_core.stats import shown as shown_statistics

    spec = result.spec
    rows = [_comparison_row(c, result.set_apart(c)) for c in result.comparisons]
    verdict_head = "verdict" if spec.criterion == "selection" else f"verdict ({spec.criterion})"
    return format_table(rows, ["cell", "group", "n", cells.SHARE.heading("share", ci="95% CI"),
                               cells.GAP.heading("gap", ci="95% CI"), "impact ratio", "p", "p adj.", verdict_head,
                               *(s.short for s in shown_statistics.SHOWN)])


def _pooled_lines(result: Any) -> list[str]:
    """Overall against within the cells (Mantel-Haenszel, CMH, Breslow-Day-Tarone, Simpson); none for one cell."""
    from luskin_core.formatting import format_table

    if len(result.cell_names) <= 1 or not result.pooled:
        return []
    rows = []
    for p in result.pooled:
        odds = ("0 (degenerate)" if p.mh_odds_ratio == 0
                else cells.RATIO.ci(p.mh_odds_ratio, p.mh_ci_low, p.mh_ci_high))
        rows.append([p.group, cells.GAP.text(p.marginal_difference), cells.RATIO.text(p.marginal_impact_ratio),
                     cells.GAP.text(p.weighted_difference), odds, cells.P_VALUE.text(p.cmh_p_value),
                     cells.P_VALUE.text(p.breslow_day_p_value), result.simpson_words(p)])
    return ["", f"Overall vs within the cells (against {result.reference}):",
            format_table(rows, ["group", cells.GAP.heading("overall gap"), "overall impact ratio",
                                f"within gap ({cells.GAP.unit}, weighted)", "pooled odds ratio (MH)", "CMH p",
                                "Breslow-Day-Tarone p", "Simpson"])]


def format_audit(result: Any) -> str:
    """The audit as plain text: the headline, the table(s), and one sentence per finding."""
    from luskin_core.analyses.findings import findings
    from luskin_core.formatting import format_table

    found = findings(result)
    lines = [_audit_head(result), result.spec.meaning_text, *result.sufficiency_lines(), "",
             "What was found, most important first:"]
    lines += [f"{i}. {s}" for i, s in enumerate(found.sentences(), 1)]
    lines += ["", f"Verdicts: {result.headline()}", ""]
    lines.append(_gap_table(result) if result.gaps else _comparison_table(result))
    if any(c.error_rates for c in result.comparisons):
        lines += ["", _error_rate_title(result), format_table(*_error_rate_rows(result))]
    lines += _pooled_lines(result)
    lines.append("")
    lines += [f"- {s}" for s in result.sentences()]
    seen = result.power_sentences()
    lines += [f"- {s}" for s in seen[:12]] + ([f"- ... and {len(seen) - 12} more such sentences in --json."]
                                             if len(seen) > 12 else [])
    return "\n".join(lines)


def _import_meanwhile(module: str) -> None:
    """Import ``module`` on a thread of its own. The audit's statistics need scipy.special only once the count is
    made, and its import (about 0.2 s) then runs while DuckDB counts a file: the count releases Python's lock."""
    import importlib
    import threading

    threading.Thread(target=importlib.import_module, args=(module,), daemon=True, name="luskin-import").start()


def run_audit(args: CommandOptions) -> int:
    """Audit the outcome (or a prediction column against it) and print the result."""
    from luskin_cli import evidence
    from luskin_cli.common import print_json, resolve

    key = evidence.check_options(args)  # the file's folder and the signing key, before any counting
    wanted = bool(args.evidence)
    if args.proxy:  # estimated race groups (luskin_cli.proxy)
        if wanted:
            evidence.refuse("--proxy")
        from luskin_cli.proxy import run_proxy_audit

        return run_proxy_audit(args)
    if args.template:
        from luskin_cli.regulator import run_template

        return run_template(args, key)
    if wanted and (args.period or args.bounds):
        evidence.refuse("--period" if args.period else "--bounds")
    # The rows outside --population stay: the count table says how many (as every engine's does).
    # A CSV is counted by DuckDB as a Parquet file is, when DuckDB reads it as the upload reader does (the
    # series and the unknown-group bounds still read it in memory).
    plain = not args.period and not args.bounds
    frame, spec, _ = resolve(args, engine=True, restrict=False,  # a broken --config is refused first
                             csv_engine=plain)
    if spec.outcome_type == "amount":   # an amount's audit is the analyses' table's line (luskin amounts)
        if wanted:
            evidence.refuse("--amount")
        if not plain:
            raise LuskinError("An amount's audit has no --period or --bounds yet: audit it without them.")
        from luskin_cli.analysis import run as run_analysis

        args.analysis = "amounts"
        return run_analysis(args)
    from luskin_core.analyses.audit import audit

    source = None
    if args.predictions:
        source = f"predictions in '{args.predictions}'"

    if args.period:
        from luskin_cli.series import run_series

        return run_series(args, frame, spec, source)
    _import_meanwhile("scipy.special")   # while the count is made
    try:
        result = audit(frame, spec, source=source)
    except LuskinError:
        if not getattr(frame, "as_uploaded", False):
            raise
        # A refusal found while counting a CSV in DuckDB is said as the in-memory audit says it (a list of values
        # in the upload's order): the file is read and audited in memory again.
        frame, spec, _ = resolve(args, engine=True, restrict=False)
        result = audit(frame, spec, source=source)
    if wanted:
        from luskin_core.evidence.canonical import count_table_dict

        assert result.counts is not None  # every audit of data keeps its count table
        evidence.write_for(args, key, "audit", {"spec": result.spec.to_dict(), "source": result.source},
                           {"audit": count_table_dict(result.counts)}, evidence.data_facts(args, frame))
    if args.json:
        from luskin_core.analyses.findings import findings

        out = result.to_dict()
        out["outcome_is"] = result.spec.outcome_is
        out["outcome_is_rule"] = args.direction_note   # which way was taken, why, how to change it
        out["findings"] = findings(result).to_dict()
        if args.bounds:  # over the rows of unknown group (luskin_core.analyses.unknown_bounds)
            from luskin_core.analyses.unknown_bounds import audit_bounds

            out["bounds"] = [b.to_dict() for b in audit_bounds(frame, result)]
        print_json(out)
    else:
        print(format_audit(result))
        if args.bounds:
            from luskin_core.analyses.unknown_bounds import audit_bounds, bound_sentences, unknown_words

            what = unknown_words(result.spec)
            print(f"\nOver the {what} (best and worst case):")
            print("\n".join(f"- {s}" for s in bound_sentences(audit_bounds(frame, result), what)))
    return 0
