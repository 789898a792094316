"""``luskin audit``: every group against a reference, in every cell, with the pooled view.

Registered by :func:`luskin_cli.main.build_parser` through :func:`add_parsers`. The paper's
setup (a protected condition, one filter) prints the paper's two-class table; groups formed by
columns (``--groups race --groups sex``) and strata (``--stratify education``) print one row per
group per cell against the reference, then the overall and within-cell comparison per group.
``--json`` prints :meth:`luskin_core.analyses.audit.AuditResult.to_dict`.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from luskin_core.errors import LuskinError

if TYPE_CHECKING:  # the CLI's --help must not import pandas
    from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.formatting import format_number, format_p

AUDIT_DESCRIPTION = (
    "Compare the share with a positive outcome between groups inside each cell, with 95% confidence "
    "intervals, the difference and the impact ratio against a reference group, a significance test of each "
    "gap adjusted for the number of comparisons, and a verdict: too few rows, within the tolerance, beyond "
    "it, or beyond it but possibly chance. With strata, each group's overall gap is set beside the gap "
    "within the strata (Mantel-Haenszel, Cochran-Mantel-Haenszel, Breslow-Day, Simpson's paradox)."
)


def add_audit_options(parser: argparse.ArgumentParser) -> None:
    """Who is compared, within what, and how a gap is judged (issue 8's options)."""
    group = parser.add_argument_group("groups, cells and verdicts")
    group.add_argument("--groups", action="append", default=None, metavar="COL",
                       help="compare every value of this column (instead of --protected); repeat to cross "
                            "columns, e.g. --groups race --groups sex")
    group.add_argument("--reference", metavar="GROUP",
                       help="the group every other group is compared with (default: the highest share among "
                            "groups big enough, as the four-fifths rule does)")
    group.add_argument("--stratify", action="append", default=None, metavar="COL",
                       help="compare within every value of this control column (instead of --filter); repeat "
                            "to cross")
    group.add_argument("--bins", action="append", default=None, metavar="COL=CUTS",
                       help="cut a numeric column at these points, e.g. age=25,40,60 (default: quartiles for "
                            "a column with more than 20 values)")
    group.add_argument("--metric", choices=["difference", "ratio"], default=None,
                       help="judge a gap by the difference in shares (with --tolerance) or by the impact ratio "
                            "(with --ratio-threshold, default 0.8: the four-fifths rule)")
    group.add_argument("--ratio-threshold", type=float, default=None, metavar="R",
                       help="smallest impact ratio counted as fair with --metric ratio (default 0.8)")
    group.add_argument("--correction", choices=["holm", "bh", "none"], default=None,
                       help="adjust p-values for the number of comparisons: holm (default), bh "
                            "(Benjamini-Hochberg) or none")
    group.add_argument("--min-group-size", type=int, default=None, metavar="N",
                       help="groups with fewer rows in a cell are shown but not judged (default 30)")
    group.add_argument("--min-group-share", type=float, default=None, metavar="S",
                       help="groups under this share of all rows are set aside (e.g. 0.02; default 0)")
    group.add_argument("--adverse", action="store_true", default=None,
                       help="the counted outcome is bad for the person (a denial, a default, an arrest): the group "
                            "with the lower share is favoured and the four-fifths rule uses 1 - share (default: "
                            "the counted outcome is favourable)")
    group.add_argument("--name", action="append", default=None, metavar="COL:VALUE=NAME",
                       help="a name for a coded value, shown instead of the code, e.g. --name sex:1=male; repeat")
    group.add_argument("--score", action="store_true",
                       help="the outcome is a numeric score: compare the share at or above --score-cutoff "
                            "(default: the median), and the mean")
    group.add_argument("--score-cutoff", type=float, default=None, metavar="X",
                       help="the score at or above which a row counts as positive (implies --score)")


def add_prediction_options(parser: argparse.ArgumentParser) -> None:
    """How a prediction column is read and judged (``luskin audit --predictions COL``)."""
    group = parser.add_argument_group("a model's decisions (with --predictions)")
    group.add_argument("--prediction-cutoff", type=float, default=None, metavar="X",
                       help="the prediction column is a score: a row is predicted positive at or above X (e.g. 0.5, "
                            "or 5 for a decile score)")
    group.add_argument("--criterion", choices=["selection", "opportunity", "odds", "precision"], default=None,
                       help="what equal treatment means for the model: selection (default; equal shares predicted "
                            "positive), opportunity (equal true positive rates), odds (equal true and false "
                            "positive rates) or precision (equal precision)")


def _bins(items: list[str]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for item in items:
        name, sep, cuts = item.rpartition("=")
        if not sep or not name.strip():
            raise LuskinError(f"Write cut points as COLUMN=CUT,CUT (e.g. age=25,40,60), not '{item}'.")
        try:
            out[name.strip()] = [float(c) for c in cuts.split(",") if c.strip()]
        except ValueError:
            raise LuskinError(f"The cut points in '{item}' must be numbers, e.g. age=25,40,60.") from None
    return out


def _value_names(items: list[str], start: Any) -> dict[str, dict[str, str]]:
    """--name COL:VALUE=NAME options folded into {column: {value: name}} (over a saved configuration's)."""
    out: dict[str, dict[str, str]] = {}
    for column, pairs in (start.items() if isinstance(start, dict) else start or ()):
        out[str(column)] = dict(pairs.items() if isinstance(pairs, dict) else pairs)
    for item in items:
        left, sep, name = item.partition("=")
        column, colon, value = left.rpartition(":")
        if not sep or not colon or not column.strip() or not name.strip():
            raise LuskinError(f"Write a value's name as COLUMN:VALUE=NAME (e.g. sex:1=male), not '{item}'.")
        out.setdefault(column.strip(), {})[value.strip()] = name.strip()
    return out


def spec_from_args(args: argparse.Namespace, base: AuditSpec | None = None) -> AuditSpec:
    """The one parser from the command line's options to the specification.

    Starts from ``base`` (a preset's or a saved configuration's specification) and lays the options
    over it; an option that forms the groups or the cells another way replaces the base's way
    (``--groups`` over a preset's protected group, ``--filter`` over saved strata). Whether the result
    makes sense is the specification's own rules (:mod:`luskin_core.spec.validation`), so a mistake
    reads here as it does on the page and in the library.
    """
    from luskin_core.spec.audit_spec import AuditSpec
    from luskin_core.spec.conditions import parse_condition

    fields: dict[str, Any] = base.to_dict() if base else {}
    if getattr(args, "outcome", None):
        fields["outcome"] = args.outcome
    if getattr(args, "positive", None) is not None:
        fields["positive"] = args.positive
    protected = getattr(args, "protected", None)
    if protected:
        fields["protected"] = parse_condition(protected).to_dict()
        if base is None or protected != str(base.protected):
            fields["group_label"], fields["other_label"] = None, None
        if not getattr(args, "groups", None):
            fields["group_by"] = []
    if getattr(args, "group_label", None):
        fields["group_label"] = args.group_label
    if getattr(args, "other_label", None):
        fields["other_label"] = args.other_label
    if getattr(args, "filter", None) is not None or getattr(args, "no_filter", False):
        fields["filters"] = [parse_condition(c).to_dict() for c in (args.filter or [])]
        fields["filter_label"], fields["not_filter_label"] = None, None
        if not getattr(args, "stratify", None):
            fields["strata"] = []
    if getattr(args, "population", None) is not None:
        fields["population"] = [parse_condition(c).to_dict() for c in args.population]
    if getattr(args, "tolerance", None) is not None:
        fields["tolerance"] = args.tolerance
    _audit_options(args, fields)
    _prediction_options(args, fields)
    return AuditSpec(**{k: v for k, v in fields.items() if v is not None or k in ("positive", "protected")})


def _audit_options(args: argparse.Namespace, fields: dict[str, Any]) -> None:
    """Fold ``luskin audit``'s own options (groups, strata, judgement, score) into the fields."""
    groups = getattr(args, "groups", None)
    if groups:
        fields["group_by"] = [g.strip() for g in groups]
        if not getattr(args, "protected", None):  # given both: the specification says to choose one way
            fields["protected"] = None
            fields["group_label"] = fields["other_label"] = None
    strata = getattr(args, "stratify", None)
    if strata:
        fields["strata"] = [s.strip() for s in strata]
        if getattr(args, "filter", None) is None:  # given both: the specification says to choose one way
            fields["filters"] = []
            fields["filter_label"] = fields["not_filter_label"] = None
    if getattr(args, "bins", None):
        fields["bins"] = _bins(args.bins)
    if getattr(args, "adverse", None):
        fields["outcome_is"] = "adverse"
    if getattr(args, "name", None):
        fields["value_names"] = _value_names(args.name, fields.get("value_names"))
    for option, key in (("reference", "reference"), ("metric", "metric"), ("ratio_threshold", "ratio_threshold"),
                        ("correction", "correction"), ("min_group_size", "min_group_size"),
                        ("min_group_share", "min_group_share"), ("score_cutoff", "score_cutoff")):
        value = getattr(args, option, None)
        if value is not None:
            fields[key] = value
    if getattr(args, "score", False) or getattr(args, "score_cutoff", None) is not None:
        fields["outcome_type"] = "score"
        # a preset's positive value gives way; one given here with --score is refused by the specification
        fields["positive"] = getattr(args, "positive", None)
    from luskin_cli.regulator import apply_template

    apply_template(args, fields)  # --template ll144|eeoc: the groups come from --sex/--race


def _prediction_options(args: argparse.Namespace, fields: dict[str, Any]) -> None:
    """The prediction column, its cut-off and the criterion (without a column, the specification refuses the rest)."""
    for option, key in (("predictions", "prediction"), ("prediction_cutoff", "prediction_cutoff"),
                        ("criterion", "criterion")):
        value = getattr(args, option, None)
        if value is not None:
            fields[key] = value


# ------------------------------------------------------------------------------------------
# Printing
# ------------------------------------------------------------------------------------------
def _f(x: float | None, digits: int = 3) -> str:
    return format_number(x, digits)


def _p(x: float | None) -> str:
    return format_p(x, short=True)


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
            cell = _f(e["rate"])
            if not c.is_reference and e["difference"] is not None:
                adjusted = e.get("p_adjusted")
                cell += f" ({e['difference']:+.3f}, p {_p(e['p_value'])}"
                cell += f", adj. {_p(adjusted)})" if adjusted is not None else ")"
            row.append(cell)
        rows.append(row)
    return rows, ["cell", "group", "TPR (gap, p)", "FPR (gap, p)", "FNR (gap, p)", "precision (gap, p)"]


def format_audit(result: Any) -> str:
    """The audit as plain text: the headline, the table(s), and one sentence per finding."""
    from luskin_core.formatting import format_table

    spec = result.spec
    head = (f"Audit of {result.source}: {spec.outcome_text}; {spec.groups_text}"
            + (f", reference {result.reference}" if spec.group_mode == "columns" else "")
            + f"; tolerance {spec.tolerance:g}" + (f", impact-ratio threshold {spec.ratio_threshold:g}"
                                                     if spec.metric == "ratio" else "")
            + f"; p-values adjusted by {({'holm': 'Holm', 'bh': 'Benjamini-Hochberg', 'none': 'nothing'})[spec.correction]}"
            + f" ({result.n_rows:,} rows")
    if result.n_excluded:
        reasons = ", ".join(f"{k} {v:,}" for k, v in result.excluded_reasons.items())
        outside = result.n_excluded - sum(result.excluded_reasons.values())
        if outside:
            reasons = (reasons + ", " if reasons else "") + f"outside the population {outside:,}"
        head += f"; {result.n_excluded:,} left out: {reasons})"
    else:
        head += ")"
    if result.counts is not None and result.counts.score_cutoff is not None:
        head += f"\nA row counts as positive when {spec.outcome} is at least {result.counts.score_cutoff:g}."
    if spec.prediction is not None and spec.prediction_cutoff is not None:
        head += f"\nA row is predicted positive when {spec.prediction} is at least {spec.prediction_cutoff:g}."
    from luskin_core.analyses.findings import findings
    from luskin_core.stats.power import sufficiency, sufficiency_lines

    found = findings(result)
    lines = [head, spec.meaning_text, *sufficiency_lines(sufficiency(result.comparisons, spec)), "",
             "What was found, most important first:"]
    lines += [f"{i}. {s}" for i, s in enumerate(found.sentences(), 1)]
    lines += ["", f"Verdicts: {result.headline()}", ""]
    if result.gaps:
        rows = []
        for c in result.cells:
            g = result.gap(c.filter_holds)
            rows.append([c.cell, c.label, f"{c.n:,}", f"{c.positives:,}", _f(c.ratio),
                         f"[{_f(c.ci_low)}, {_f(c.ci_high)}]", _f(g.gap), _p(g.p_value), _p(g.p_adjusted),
                         {True: "fair", False: "NOT fair", None: "not judged"}[g.fair], g.verdict])
        measure = result.gaps[0].measure if result.gaps else "selection"
        gap_head = f"gap vs {result.reference}" + ("" if measure == "selection" else f" ({_RATE_HEAD[measure]})")
        lines.append(format_table(rows, ["cell", "group", "n", "positive", "ratio", "95% CI", gap_head, "p",
                                         "p adj.", "tolerance", "verdict"]))
    else:
        rows = []
        for c in result.comparisons:
            rows.append([c.cell or "all rows", c.group + (" (ref)" if c.is_reference else ""), f"{c.n:,}",
                         _f(c.rate), f"[{_f(c.ci_low)}, {_f(c.ci_high)}]",
                         "" if c.is_reference else f"{_f(c.difference)} [{_f(c.difference_ci_low)}, "
                                                   f"{_f(c.difference_ci_high)}]",
                         "" if c.is_reference else _f(c.impact_ratio, 2), "" if c.is_reference else _p(c.p_value),
                         "" if c.is_reference else _p(c.p_adjusted), "" if c.is_reference else c.verdict,
                         "" if c.four_fifths is None else ("below 0.8" if c.four_fifths else "")])
        verdict_head = "verdict" if spec.criterion == "selection" else f"verdict ({spec.criterion})"
        lines.append(format_table(rows, ["cell", "group", "n", "share", "95% CI", "difference [95% CI]",
                                         "ratio", "p", "p adj.", verdict_head, "4/5 rule"]))
    if any(c.error_rates for c in result.comparisons):
        lines += ["", _error_rate_title(result), format_table(*_error_rate_rows(result))]
    if len(result.cell_names) > 1 and result.pooled:
        rows = []
        for p in result.pooled:
            ci = "" if p.mh_ci_low is None else f" [{_f(p.mh_ci_low, 2)}, {_f(p.mh_ci_high, 2)}]"
            odds = "0 (degenerate)" if p.mh_odds_ratio == 0 else f"{_f(p.mh_odds_ratio, 2)}{ci}"
            rows.append([p.group, _f(p.marginal_difference), _f(p.marginal_impact_ratio, 2),
                         _f(p.weighted_difference), odds, _p(p.cmh_p_value),
                         _p(p.breslow_day_p_value), "YES" if p.simpson else "no"])
        lines += ["", f"Overall vs within the cells (against {result.reference}):",
                  format_table(rows, ["group", "overall diff.", "overall ratio", "within diff. (weighted)",
                                      "pooled odds ratio (MH)", "CMH p", "Breslow-Day p", "Simpson"])]
    lines.append("")
    lines += [f"- {s}" for s in result.sentences()]
    seen = [text for c in result.comparisons if (text := (c.extras or {}).get("power_sentence"))]
    lines += [f"- {s}" for s in seen[:12]] + ([f"- ... and {len(seen) - 12} more such sentences in --json."]
                                             if len(seen) > 12 else [])
    return "\n".join(lines)


def run_audit(args: argparse.Namespace) -> int:
    """Audit the outcome (or a prediction column against it) and print the result."""
    from luskin_cli.main import print_json, resolve

    if getattr(args, "proxy", None):  # estimated race groups (luskin_cli.proxy)
        from luskin_cli.proxy import run_proxy_audit

        return run_proxy_audit(args)
    if getattr(args, "template", None):
        from luskin_cli.regulator import run_template

        return run_template(args)
    # The rows outside --population stay: the count table says how many (as every engine's does).
    frame, spec, _ = resolve(args, engine=True, restrict=False)  # a broken --config is refused first
    from luskin_core.analyses.audit import audit

    source = None
    if getattr(args, "predictions", None):
        source = f"predictions in '{args.predictions}'"

    if getattr(args, "period", None):
        from luskin_cli.series import run_series

        return run_series(args, frame, spec, source)
    result = audit(frame, spec, source=source)
    if args.json:
        from luskin_core.analyses.findings import findings

        out = result.to_dict()
        out["outcome_is"] = result.spec.outcome_is
        out["findings"] = findings(result).to_dict()
        print_json(out)
    else:
        print(format_audit(result))
    return 0
