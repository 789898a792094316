"""Every group against a reference, in every cell and pooled across cells, from one count table.

Per group and cell: n, positives, the rate with its Wilson 95% interval; against the reference
group in the same cell: the difference with Newcombe's interval, the impact ratio with Koopman's
score interval, the four-fifths flag, the p-value (z-test; Fisher's exact test for small
counts) and the p-value adjusted over every comparison on the page (Holm by default,
Benjamini-Hochberg on request). Per group across cells: the marginal (unstratified) difference
and impact ratio, the size-weighted average of the per-cell differences, the Mantel-Haenszel
common odds ratio with its interval, the Cochran-Mantel-Haenszel test, the Breslow-Day (Tarone)
test of whether pooling is allowed, and a Simpson's-paradox flag.

Verdict of a comparison, the first that applies:

1. "too few rows": the group or the reference has fewer than ``min_group_size`` rows in the
   cell (or the group is under ``min_group_share`` of all rows): shown, not judged;
2. "within tolerance": |difference| <= tolerance (with ``metric="ratio"``: the impact ratio,
   or its inverse when the group does better than the reference, is at least the threshold);
3. "beyond tolerance": the adjusted p-value is below 0.05;
4. "beyond tolerance but could be chance": otherwise.

Simpson's flag (only with more than one cell): the gap "reverses or vanishes" inside the cells.
Precisely: the marginal gap is significant (p < 0.05) and the pooled within-cell effect (the
Mantel-Haenszel odds ratio, CMH test) is not significant or points the other way; or the pooled
effect is significant and points against the marginal gap. Two non-significant gaps pointing in
different directions are noise, not a paradox, and are not flagged.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from .counts import UNKNOWN, CountTable
from .errors import LuskinError
from .formatting import format_percent
from .spec import AuditSpec
from .stats import (
    adjust_p,
    format_p,
    mantel_haenszel,
    mean_interval,
    newcombe_interval,
    ratio_interval,
    standardized_mean_difference,
    two_proportion_tests,
    wilson_interval,
)

REFERENCE = "reference group"
TOO_FEW = "too few rows"
WITHIN = "within tolerance"
BEYOND = "beyond tolerance"
CHANCE = "beyond tolerance but could be chance"
VERDICTS = (TOO_FEW, WITHIN, BEYOND, CHANCE)
ALPHA = 0.05
ERROR_RATES = {"tpr": ("tp", "fn"), "fpr": ("fp", "tn"), "fnr": ("fn", "tp"), "precision": ("tp", "fp")}
ERROR_RATE_NAMES = {"tpr": "true positive rate", "fpr": "false positive rate", "fnr": "false negative rate",
                    "precision": "precision"}


def _num(x: Any) -> float | None:
    if x is None:
        return None
    value = float(x)
    return value if math.isfinite(value) else None


@dataclass(frozen=True)
class Comparison:
    """One group in one cell, against the reference group in the same cell."""

    group: str
    cell: str | None
    cell_key: Any
    n: int
    positives: int
    rate: float | None
    ci_low: float | None
    ci_high: float | None
    reference: str
    is_reference: bool
    reference_n: int
    reference_positives: int
    reference_rate: float | None
    difference: float | None
    difference_ci_low: float | None
    difference_ci_high: float | None
    impact_ratio: float | None
    impact_ratio_ci_low: float | None
    impact_ratio_ci_high: float | None
    p_value: float | None
    test: str
    p_adjusted: float | None
    verdict: str
    four_fifths: bool | None
    sentence: str
    score: dict[str, float | None] | None = None
    error_rates: dict[str, dict[str, float | None]] | None = None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("cell_key")
        if self.score is None:
            out.pop("score")
        if self.error_rates is None:
            out.pop("error_rates")
        return out


@dataclass(frozen=True)
class PooledComparison:
    """One group against the reference across every cell: overall, averaged and pooled."""

    group: str
    reference: str
    n: int
    reference_n: int
    marginal_rate: float | None
    reference_marginal_rate: float | None
    marginal_difference: float | None
    marginal_difference_ci_low: float | None
    marginal_difference_ci_high: float | None
    marginal_impact_ratio: float | None
    marginal_p_value: float | None
    weighted_difference: float | None
    mh_odds_ratio: float | None
    mh_ci_low: float | None
    mh_ci_high: float | None
    cmh_p_value: float | None
    breslow_day_p_value: float | None
    strata_used: int
    cells: int
    cells_beyond: int
    simpson: bool
    sentence: str
    notes: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["notes"] = list(self.notes)
        return out


# ------------------------------------------------------------------------------------------
# Reference group
# ------------------------------------------------------------------------------------------
def choose_reference(table: CountTable, spec: AuditSpec) -> str:
    """The named reference, or the group with the highest overall rate among those big enough.

    Groups under the minimum size or share and the "Unknown" group are not chosen unless no
    other group has rows (the four-fifths rule compares with the most favoured real group).
    """
    n = table.n.sum(axis=1)
    k = table.positives.sum(axis=1)
    if spec.reference is not None:
        if spec.reference in table.groups:
            return spec.reference
        shown = ", ".join(table.groups[:30]) + (" ..." if len(table.groups) > 30 else "")
        raise LuskinError(f"There is no group called '{spec.reference}' to compare with. Groups are: {shown}.")
    total = max(int(n.sum()), 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        # the most favoured group: the highest share of a favourable outcome, the lowest of an adverse one
        rate = np.where(n > 0, (n - k) / n if spec.outcome_is == "adverse" else k / n, -1.0)
    eligible = [i for i, g in enumerate(table.groups)
                if n[i] >= spec.min_group_size and n[i] / total >= spec.min_group_share
                and UNKNOWN not in g.split(" × ")]
    pool = eligible or [i for i in range(len(table.groups)) if n[i] > 0]
    best = max(pool, key=lambda i: (rate[i], n[i], -i))
    return table.groups[best]


# ------------------------------------------------------------------------------------------
# Comparisons
# ------------------------------------------------------------------------------------------
def _favourable(spec: AuditSpec, rate: float | None) -> float | None:
    """The share with the favourable outcome: the rate itself, or 1 - rate for an adverse outcome."""
    if rate is None:
        return None
    return 1.0 - rate if spec.outcome_is == "adverse" else rate


def _within(spec: AuditSpec, difference: float, ratio: float | None, rate: float, ref_rate: float) -> bool:
    if spec.metric == "ratio":
        if ref_rate == 0:
            return rate == 0
        if ratio is None:
            return False
        if ratio == 0:
            return False
        return min(ratio, 1 / ratio) >= spec.ratio_threshold - 1e-12
    return abs(difference) <= spec.tolerance + 1e-12


def compare(table: CountTable, spec: AuditSpec) -> tuple[tuple[Comparison, ...], tuple[PooledComparison, ...], str]:
    """Every comparison against the reference, the pooled view per group, and the reference."""
    reference = choose_reference(table, spec)
    r = table.group_index(reference)
    G, C = table.n.shape
    n, k = table.n.astype(float), table.positives.astype(float)
    low, high = wilson_interval(k, n)
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = k / n
    ref_n, ref_k = np.broadcast_to(n[r], n.shape), np.broadcast_to(k[r], k.shape)
    d_low, d_high = newcombe_interval(k, n, ref_k, ref_n)
    p, tests = two_proportion_tests(k.ravel(), n.ravel(), ref_k.ravel(), ref_n.ravel())
    p = p.reshape(G, C)
    total = max(float(n.sum()), 1.0)
    group_share = n.sum(axis=1) / total
    too_few = (n < spec.min_group_size) | (ref_n < spec.min_group_size) | (group_share[:, None] < spec.min_group_share)
    family = np.where(~too_few & (np.arange(G)[:, None] != r), p, np.nan)
    p_adj = adjust_p(family.ravel(), spec.correction).reshape(G, C)
    score_stats = _score_stats(table, r) if table.score_sum is not None else None
    error_stats = _error_stats(table, r) if table.tp is not None else None
    comparisons: list[Comparison] = []
    for gi, group in enumerate(table.groups):
        for ci, (key, label) in enumerate(zip(table.cell_keys, table.cell_labels)):
            cell = None if key is None else label
            is_ref = gi == r
            rate_i, ref_rate = _num(rate[gi, ci]), _num(rate[r, ci])
            ratio, r_low, r_high = None, None, None
            # The impact ratio (and the four-fifths rule) compare favourable shares, as the EEOC and LL144 do:
            # for an adverse outcome, the shares without it.
            fav_i, fav_ref = _favourable(spec, rate_i), _favourable(spec, ref_rate)
            if fav_i is not None and fav_ref is not None and fav_ref > 0:
                ratio = fav_i / fav_ref
                fk, fref = (n - k, ref_n - ref_k) if spec.outcome_is == "adverse" else (k, ref_k)
                r_low, r_high = (_num(v) for v in ratio_interval(int(fk[gi, ci]), int(n[gi, ci]),
                                                                   int(fref[gi, ci]), int(ref_n[gi, ci])))
            difference = None if rate_i is None or ref_rate is None else rate_i - ref_rate
            if is_ref:
                verdict = REFERENCE
            elif too_few[gi, ci] or difference is None:
                verdict = TOO_FEW
            elif _within(spec, difference, ratio, fav_i, fav_ref):  # type: ignore[arg-type]
                verdict = WITHIN
            elif _num(p_adj[gi, ci]) is not None and p_adj[gi, ci] < ALPHA:
                verdict = BEYOND
            else:
                verdict = CHANCE
            four_fifths = None if ratio is None or is_ref else bool(ratio < 0.8)
            item = Comparison(
                group=group, cell=cell, cell_key=key, n=int(n[gi, ci]), positives=int(k[gi, ci]),
                rate=rate_i, ci_low=_num(low[gi, ci]), ci_high=_num(high[gi, ci]), reference=reference,
                is_reference=is_ref, reference_n=int(ref_n[gi, ci]), reference_positives=int(ref_k[gi, ci]),
                reference_rate=ref_rate,
                difference=0.0 if is_ref and difference is not None else difference,
                difference_ci_low=None if is_ref else _num(d_low[gi, ci]),
                difference_ci_high=None if is_ref else _num(d_high[gi, ci]),
                impact_ratio=1.0 if is_ref and ratio is not None else ratio,
                impact_ratio_ci_low=None if is_ref else r_low, impact_ratio_ci_high=None if is_ref else r_high,
                p_value=None if is_ref else _num(p[gi, ci]),
                test="" if is_ref else tests[gi * C + ci],
                p_adjusted=None if is_ref else _num(p_adj[gi, ci]),
                verdict=verdict, four_fifths=four_fifths, sentence="",
                score=None if score_stats is None else score_stats[gi][ci],
                error_rates=None if error_stats is None else error_stats[gi][ci],
            )
            comparisons.append(_with_sentence(item, spec, table))
    pooled = tuple(_pooled(table, spec, gi, r, comparisons) for gi in range(G) if gi != r)
    return tuple(comparisons), pooled, reference


def _score_stats(table: CountTable, r: int) -> list[list[dict[str, float | None]]]:
    """Mean score with its interval, and the standardised mean difference against the reference."""
    mean, sd, low, high = mean_interval(table.score_sum, table.score_sumsq, table.n)
    ref = (mean[r][None, :], sd[r][None, :], table.n[r][None, :])
    smd, smd_low, smd_high = standardized_mean_difference(mean, sd, table.n, *ref)
    out = []
    for gi in range(table.n.shape[0]):
        row = []
        for ci in range(table.n.shape[1]):
            row.append({"mean": _num(mean[gi, ci]), "mean_ci_low": _num(low[gi, ci]),
                        "mean_ci_high": _num(high[gi, ci]), "sd": _num(sd[gi, ci]),
                        "smd": None if gi == r else _num(smd[gi, ci]),
                        "smd_ci_low": None if gi == r else _num(smd_low[gi, ci]),
                        "smd_ci_high": None if gi == r else _num(smd_high[gi, ci])})
        out.append(row)
    return out


def _error_stats(table: CountTable, r: int) -> list[list[dict[str, dict[str, float | None]]]]:
    """TPR, FPR, FNR and precision with Wilson intervals, and their differences to the reference."""
    per: dict[str, tuple[np.ndarray, ...]] = {}
    for name, (hit, miss) in ERROR_RATES.items():
        num = getattr(table, hit).astype(float)
        den = num + getattr(table, miss).astype(float)
        low, high = wilson_interval(num, den)
        rn, rd = np.broadcast_to(num[r], num.shape), np.broadcast_to(den[r], den.shape)
        d_low, d_high = newcombe_interval(num, den, rn, rd)
        pv, _ = two_proportion_tests(num.ravel(), den.ravel(), rn.ravel(), rd.ravel())
        with np.errstate(divide="ignore", invalid="ignore"):
            value = num / den
            diff = value - value[r][None, :]
        per[name] = (value, low, high, diff, d_low, d_high, pv.reshape(num.shape), den)
    out = []
    for gi in range(table.n.shape[0]):
        row = []
        for ci in range(table.n.shape[1]):
            rates = {}
            for name, (value, low, high, diff, d_low, d_high, pv, den) in per.items():
                ref = gi == r
                rates[name] = {"rate": _num(value[gi, ci]), "ci_low": _num(low[gi, ci]), "ci_high": _num(high[gi, ci]),
                               "n": int(den[gi, ci]),
                               "difference": None if ref else _num(diff[gi, ci]),
                               "difference_ci_low": None if ref else _num(d_low[gi, ci]),
                               "difference_ci_high": None if ref else _num(d_high[gi, ci]),
                               "p_value": None if ref else _num(pv[gi, ci])}
            row.append(rates)
        out.append(row)
    return out


# ------------------------------------------------------------------------------------------
# Pooled across cells
# ------------------------------------------------------------------------------------------
def _pooled(table: CountTable, spec: AuditSpec, gi: int, r: int, comparisons: list[Comparison]) -> PooledComparison:
    n1, k1 = table.n[gi].astype(float), table.positives[gi].astype(float)
    n2, k2 = table.n[r].astype(float), table.positives[r].astype(float)
    N1, K1, N2, K2 = n1.sum(), k1.sum(), n2.sum(), k2.sum()
    rate1 = K1 / N1 if N1 else None
    rate2 = K2 / N2 if N2 else None
    diff = None if rate1 is None or rate2 is None else rate1 - rate2
    d_low, d_high = newcombe_interval(K1, N1, K2, N2)
    fav1, fav2 = _favourable(spec, rate1), _favourable(spec, rate2)
    ratio = fav1 / fav2 if fav1 is not None and fav2 else None
    marginal_p = two_proportion_tests(K1, N1, K2, N2)[0][0] if N1 and N2 else math.nan
    both = (n1 > 0) & (n2 > 0)
    weights = (n1 + n2)[both]
    with np.errstate(divide="ignore", invalid="ignore"):
        per_cell = (k1 / n1 - k2 / n2)[both]
    weighted = float(np.sum(weights * per_cell) / np.sum(weights)) if weights.sum() else None
    mh = mantel_haenszel(k1, n1, k2, n2)
    group, reference = table.groups[gi], table.groups[r]
    mine = [c for c in comparisons if c.group == group]
    cells_beyond = sum(c.verdict == BEYOND for c in mine)
    several = len(table.cell_keys) > 1
    simpson = False
    notes: list[str] = []
    if several and diff is not None and mh.odds_ratio is not None and mh.cmh_p_value is not None:
        marginal_sig = _num(marginal_p) is not None and marginal_p < ALPHA
        pooled_sig = mh.cmh_p_value < ALPHA
        pooled_dir = np.sign(math.log(mh.odds_ratio)) if mh.odds_ratio > 0 else -1.0
        opposite = pooled_dir != 0 and np.sign(diff) != 0 and pooled_dir != np.sign(diff)
        simpson = bool((marginal_sig and (not pooled_sig or opposite)) or (pooled_sig and opposite))
    if several and mh.breslow_day_p_value is not None and mh.breslow_day_p_value < ALPHA:
        notes.append(f"The gap between {group} and {reference} differs from cell to cell (Breslow-Day "
                     f"{format_p(mh.breslow_day_p_value)}): read the cells one by one rather than the pooled "
                     "odds ratio.")
    pooled = PooledComparison(
        group=group, reference=reference, n=int(N1), reference_n=int(N2), marginal_rate=_num(rate1),
        reference_marginal_rate=_num(rate2), marginal_difference=_num(diff),
        marginal_difference_ci_low=_num(d_low), marginal_difference_ci_high=_num(d_high),
        marginal_impact_ratio=_num(ratio), marginal_p_value=_num(marginal_p), weighted_difference=weighted,
        mh_odds_ratio=mh.odds_ratio, mh_ci_low=mh.ci_low, mh_ci_high=mh.ci_high, cmh_p_value=mh.cmh_p_value,
        breslow_day_p_value=mh.breslow_day_p_value, strata_used=mh.strata_used, cells=len(table.cell_keys),
        cells_beyond=cells_beyond, simpson=simpson, sentence="", notes=tuple(notes),
    )
    return _with_pooled_sentence(pooled, spec, several)


# ------------------------------------------------------------------------------------------
# Words
# ------------------------------------------------------------------------------------------
def pct(x: float | None) -> str:
    """A share as a whole percentage; never 0% or 100% unless exactly so (99.6% stays 99.6%)."""
    return format_percent(x, 0)


def points(x: float) -> str:
    value = 100 * abs(x)
    text = f"{value:.0f}" if value >= 1 or value == 0 else f"{value:.1f}"
    return f"{text} point" + ("" if text == "1" else "s")


def _tolerance_words(spec: AuditSpec) -> str:
    if spec.metric == "ratio":
        return f"the {spec.ratio_threshold:g} impact-ratio threshold"
    return "the " + points(spec.tolerance).replace(" points", "-point").replace(" point", "-point") + " tolerance"


def _with_sentence(c: Comparison, spec: AuditSpec, table: CountTable) -> Comparison:
    where = "Among all rows" if c.cell_key is None else f"Where {c.cell}"
    outcome = spec.decision_text
    if c.is_reference:
        text = (f"{where}, {outcome} for {pct(c.rate)} of {c.group} ({c.positives:,} of {c.n:,}), the reference "
                "group.")
        return _replace(c, sentence=text)
    if c.difference is None:
        empty = c.group if c.n == 0 else c.reference
        return _replace(c, sentence=f"{where}, there are no {empty} rows, so {c.group} cannot be compared with "
                                    f"{c.reference} here (not computable).")
    ratio = "" if c.impact_ratio is None else f", an impact ratio of {c.impact_ratio:.2f}"
    text = (f"{where}, {outcome} for {pct(c.rate)} of {c.group} ({c.positives:,} of {c.n:,}) and "
            f"{pct(c.reference_rate)} of {c.reference} ({c.reference_positives:,} of {c.reference_n:,}): a gap of "
            f"{points(c.difference)}{ratio}")
    size = "within" if c.verdict == WITHIN else ("larger than" if spec.metric == "difference" else "beyond")
    adjusted = ""
    if c.p_adjusted is not None and c.p_value is not None and spec.correction != "none" and \
            abs(c.p_adjusted - c.p_value) > 1e-12:
        adjusted = f"; {format_p(c.p_adjusted)} after adjusting for the number of comparisons"
    if c.verdict == TOO_FEW:
        # No word on the tolerance: the comparison is kept out of the verdict (chance is still said).
        small = min(c.n, c.reference_n)
        who = c.group if c.n <= c.reference_n else c.reference
        chance = ", and it could be due to chance" if c.p_value is not None and c.p_value >= 0.05 else ""
        text += (f"{chance} ({format_p(c.p_value)}). With only {small:,} rows of {who} here (fewer than "
                 f"{spec.min_group_size:,}), there are too few rows to judge.")
        return _replace(c, sentence=text)
    if c.verdict == BEYOND:
        chance = f"and not due to chance ({format_p(c.p_value)}{adjusted})"
    elif c.verdict == WITHIN:
        chance = f"({format_p(c.p_value)})"
    else:
        chance = f"and it could be due to chance ({format_p(c.p_value)}{adjusted})"
    text += f", {size} {_tolerance_words(spec)}, {chance}."
    return _replace(c, sentence=text)


def _with_pooled_sentence(pc: PooledComparison, spec: AuditSpec, several: bool) -> PooledComparison:
    outcome = spec.decision_text
    if pc.marginal_difference is None:
        return _replace(pc, sentence=f"{pc.group} has no rows to compare with {pc.reference}.")
    overall = (f"Overall, {outcome} for {pct(pc.marginal_rate)} of {pc.group} and {pct(pc.reference_marginal_rate)} "
               f"of {pc.reference} (a gap of {points(pc.marginal_difference)}, {format_p(pc.marginal_p_value)})")
    if not several:
        return _replace(pc, sentence=overall + ".")
    if pc.mh_odds_ratio is None or pc.cmh_p_value is None:
        return _replace(pc, sentence=overall + "; the cells cannot be pooled (no cell holds both groups with both "
                                               "outcomes).")
    ci = ""
    if pc.mh_ci_low is not None and pc.mh_ci_high is not None:
        ci = f", 95% CI {pc.mh_ci_low:.2f} to {pc.mh_ci_high:.2f}"
    pooled = f"pooled odds ratio {pc.mh_odds_ratio:.2f}{ci}, {format_p(pc.cmh_p_value)}"
    if pc.simpson:
        if pc.cmh_p_value < ALPHA:
            within = "within the cells the gap points the other way"
        else:
            within = "within each cell the rates are alike"
        return _replace(pc, sentence=(f"{overall}, but {within} ({pooled}): the overall gap comes from which cells "
                                      "each group falls in, not from different treatment inside them."))
    if pc.cmh_p_value < ALPHA:
        return _replace(pc, sentence=f"{overall}; the gap holds within the cells ({pooled}).")
    return _replace(pc, sentence=f"{overall}; within the cells the difference could be chance ({pooled}).")


def _replace(obj: Any, **changes: Any) -> Any:
    from dataclasses import replace

    return replace(obj, **changes)
