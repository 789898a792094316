"""One judge, one set of verdict words (issue 26): the rule is :func:`judge`, the words are :class:`Verdict`'s.

A scan of the code finds verdict words typed outside ``luskin_core/stats/verdict.py``; it is shown to
catch a literal on a synthetic snippet first, so a scanner that finds nothing cannot pass by accident.
"""

from __future__ import annotations

import ast
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from luskin_core import AuditSpec, audit
from luskin_core.stats.judgement import Judgement
from luskin_core.stats.verdict import ALPHA, Verdict, fair_flag

judge = Judgement().verdict

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("luskin_core", "luskin_cli", "luskin_app", "app_pages")
HOME = ROOT / "luskin_core" / "stats" / "verdict.py"

# Every label a member gives (case as written), and phrases that only a verdict says.
# Single words that mean other things elsewhere (a CSS class, a part's kind, a spec's key) are left out.
EXACT = ({label for v in Verdict for label in (v.words, v.short, v.mark, v.flag)}
         | {v.heading for v in Verdict if v is not Verdict.REFERENCE}) - {"within", "beyond", "reference"}
# "Reference group" (a title) also heads a column of group names, so only its lower-case words count.
PHRASES = ("within tolerance", "beyond tolerance", "over tolerance", "not fair", "but could be chance",
           "too few rows to judge")


def verdict_literals(source: str) -> list[tuple[int, str]]:
    """(line, text) of every string literal that spells a verdict: docstrings, dict keys and subscripts excepted."""
    tree = ast.parse(source)
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                skip.add(id(first.value))
        if isinstance(node, ast.Dict):
            skip.update(id(k) for k in node.keys if k is not None)
        if isinstance(node, ast.Subscript):
            skip.add(id(node.slice))
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            text = node.value.strip()
            if text in EXACT or any(p in text.lower() for p in PHRASES):
                hits.append((node.lineno, node.value))
    return hits


def test_the_scanner_finds_a_verdict_literal() -> None:
    """The scan can fail: it finds typed verdict words, and leaves JSON keys and docstrings alone."""
    snippet = '''
"""A module that mentions 'within tolerance' in its docstring only."""
LABELS = {"fair": 1}
def f(c):
    """Nor here: beyond tolerance."""
    if c.verdict == "beyond tolerance but could be chance":
        return "over tolerance"
    return {True: "fair", False: "NOT fair"}[c.fair] + f"{c.n} too few rows to judge"
'''
    found = {text for _, text in verdict_literals(snippet)}
    assert {"beyond tolerance but could be chance", "over tolerance", "fair", "NOT fair"} <= found
    assert any("too few rows to judge" in t for t in found)
    assert not any("docstring" in t or "Nor here" in t for t in found)


def test_no_verdict_words_outside_the_enum() -> None:
    hits = []
    for package in SCANNED:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path == HOME:
                continue
            hits += [f"{path.relative_to(ROOT)}:{line}: {text!r}" for line, text in verdict_literals(path.read_text())]
    assert hits == [], "verdict words typed outside luskin_core/stats/verdict.py:\n" + "\n".join(hits)


# ------------------------------------------------------------------------------------------
# The rule
# ------------------------------------------------------------------------------------------
def test_judge_follows_the_rule_in_order() -> None:
    assert judge(True, 0.001, reference=True) is Verdict.REFERENCE
    assert judge(False, 0.001, too_few=True) is Verdict.TOO_FEW
    assert judge(None, 0.001) is Verdict.TOO_FEW
    assert judge(True, 0.001) is Verdict.WITHIN
    assert judge(False, ALPHA / 2) is Verdict.BEYOND
    assert judge(False, ALPHA) is Verdict.CHANCE           # 0.05 is not below 0.05
    assert judge(False, None) is Verdict.CHANCE
    assert judge(False, math.nan) is Verdict.CHANCE
    # several judged rates (equalized odds): one beyond and sure is enough; all must be within for WITHIN
    assert judge([True, False], [0.9, 0.01]) is Verdict.BEYOND
    assert judge([True, False], [0.01, 0.2]) is Verdict.CHANCE
    assert judge([True, True], [0.01, 0.01]) is Verdict.WITHIN


def test_a_gap_exactly_at_the_tolerance_is_within_and_not_flagged() -> None:
    """Issue 26: the adjusted analysis said 'within' and 'flagged' at once for a gap exactly at the tolerance."""
    bar = Judgement()
    assert bar.within_estimate(0.05) and bar.within_estimate(-0.05) and not bar.within_estimate(0.0501)
    assert bar.within(15, 100, 20, 100) and bar.within(20, 100, 15, 100)   # exactly 5 points on counts
    assert not bar.within(149, 1000, 200, 1000)
    assert judge(bar.within_estimate(0.05), 1e-9) is Verdict.WITHIN
    # the ratio: both directions, and a reference with no favourable outcome
    ratio = Judgement(metric="ratio")
    assert ratio.within_estimate(0.3, 0.4, 0.5)                     # 0.8 exactly
    assert ratio.within(20, 60, 100, 240)                          # 4/5 exactly, on counts
    assert not ratio.within_estimate(0.3, 0.65, 0.5)                # 1.3
    assert ratio.within_estimate(0.0, 0.0, 0.0)


def test_members_know_fairness_and_read_back_from_json() -> None:
    assert [v.fair for v in Verdict] == [None, None, True, False, False]
    assert fair_flag(True) == "fair" and fair_flag(False) == "NOT fair" and fair_flag(None) == "not judged"
    for v in Verdict:
        assert Verdict.of(v.words) is v and json.loads(json.dumps(v)) == v.words
    assert Verdict.of("reference") is Verdict.REFERENCE


def test_every_analysis_gives_the_same_verdict_on_the_same_gap() -> None:
    """The audit, the adjusted gap (no controls) and the proxy audit (certain race) judge one gap alike."""
    from luskin_core.analyses.adjust import adjust
    from luskin_core.analyses.proxy import PROB_COLUMNS
    from luskin_core.analyses.proxy_audit import proxy_audit

    rng = np.random.default_rng(3)
    n = 4000
    race = rng.choice([1, 2], n)
    y = (rng.random(n) < np.where(race == 1, 0.50, 0.35)).astype(int)
    frame = pd.DataFrame({"g": np.where(race == 1, "White", "Black"), "y": y, "c": rng.integers(0, 3, n)})
    for metric in ("difference", "ratio"):
        spec = AuditSpec("y", 1, group_by=("g",), metric=metric)
        expected = next(c.verdict for c in audit(frame, spec).judged)
        assert expected == Verdict.BEYOND
        adjusted = adjust(frame, spec, controls=("c",), categorical=("c",))
        assert adjusted.gaps[0].verdict is expected and adjusted.gaps[0].flagged
        probs = pd.DataFrame(np.eye(6)[race], columns=list(PROB_COLUMNS))
        proxy = proxy_audit(probs, y, judgement=Judgement(metric=metric))
        got = {c.verdict for c in proxy.comparisons if c.group == "Black" and not c.is_reference}
        assert got == {expected}
        assert {c.verdict for c in proxy.comparisons if c.is_reference} == {Verdict.REFERENCE}


@pytest.mark.parametrize("outcome_is", ["favourable", "adverse"])
def test_the_adjusted_gap_honours_the_ratio_metric(outcome_is: str) -> None:
    """Shares of about 14% and 10%: 4 points is within a 5-point tolerance, an impact ratio of 0.71 is not.

    With the outcome adverse the favourable shares are about 86% and 90%: a ratio of 0.96, within 0.8. The
    adjusted ratio is checked against statsmodels: predicted shares with every row set to each group.
    """
    import statsmodels.formula.api as smf

    from luskin_core.analyses.adjust import adjust

    rng = np.random.default_rng(12)
    n = 40000
    white = rng.random(n) < 0.5
    c = rng.integers(0, 3, n)
    y = (rng.random(n) < np.where(white, 0.14, 0.10) + 0.01 * c).astype(int)
    frame = pd.DataFrame({"g": np.where(white, "White", "Black"), "y": y, "c": c})
    base: dict = {"group_by": ("g",), "reference": "White", "outcome_is": outcome_is}
    controls: dict = {"controls": ("c",), "categorical": ("c",)}
    by_difference = adjust(frame, AuditSpec("y", 1, **base), **controls).gaps[0]
    by_ratio = adjust(frame, AuditSpec("y", 1, metric="ratio", **base), **controls).gaps[0]
    assert by_difference.verdict is Verdict.WITHIN
    model = smf.logit("y ~ C(g) + C(c)", data=frame.astype({"c": str})).fit(disp=0)
    share_g = model.predict(frame.assign(g="Black", c=frame["c"].astype(str))).mean()
    share_r = model.predict(frame.assign(g="White", c=frame["c"].astype(str))).mean()
    if outcome_is == "favourable":
        assert by_ratio.adjusted_impact_ratio == pytest.approx(share_g / share_r, rel=1e-5)
        assert by_ratio.verdict is Verdict.BEYOND and by_ratio.flagged
    else:
        assert by_ratio.adjusted_impact_ratio == pytest.approx((1 - share_g) / (1 - share_r), rel=1e-5)
        assert by_ratio.verdict is Verdict.WITHIN and not by_ratio.flagged
