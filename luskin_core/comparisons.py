"""Every group against a reference, in every cell and pooled across cells, from one count table.

Per group and cell: n, positives, the rate with its Wilson 95% interval; against the reference
group in the same cell: the difference with Newcombe's interval, the impact ratio with the
Miettinen-Nurminen score interval, the four-fifths flag, the p-value (z-test; Fisher's exact test
for small counts) and the p-value adjusted over the comparisons that can be judged (Holm by
default, Benjamini-Hochberg on request; too-few-rows comparisons are left out of the family).
For a model's decisions the verdict judges the rates ``spec.criterion`` names (see
:data:`CRITERION_RATES`), and their p-values form the family. Per group across cells: the marginal (unstratified) difference
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

from .counts import CROSS, UNKNOWN, CountTable
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
# The rates each criterion judges (AuditSpec.criterion): what equal treatment means for a model.
CRITERION_RATES = {"selection": ("selection",), "opportunity": ("tpr",), "odds": ("tpr", "fpr"),
                   "precision": ("precision",)}
CRITERION_NAMES = {"selection": "the share predicted positive", "opportunity": "the true positive rate",
                   "odds": "the true and false positive rates", "precision": "precision"}


def _num(x: Any) -> float | None:
    if x is None:
        return None
    value = float(x)
    return value if math.isfinite(value) else None


@dataclass(frozen=True)
class JudgedRate:
    """One rate the verdict judges, for a group against the reference in one cell.

    ``name``: "selection" (the share with a positive decision) or an error rate ("tpr", "fpr",
    "precision"); ``n``/``positives``: its denominator and numerator; ``within``: inside the
    tolerance (or the impact-ratio threshold); ``p_adjusted``: adjusted over the audit's family.
    """

    name: str
    rate: float | None
    reference_rate: float | None
    difference: float | None
    impact_ratio: float | None
    n: int
    positives: int
    reference_n: int
    reference_positives: int
    p_value: float | None
    p_adjusted: float | None
    test: str
    within: bool | None


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
    criterion: str = "selection"
    judged_rates: tuple[JudgedRate, ...] = ()
    # Partially pooled share and its 95% interval (luskin_core.shrinkage), set by the audit.
    pooled_rate: float | None = None
    pooled_ci_low: float | None = None
    pooled_ci_high: float | None = None
    extras: dict[str, Any] | None = None  # shortfall, flip test, detectable difference (luskin_core.regulator)

    @property
    def deciding(self) -> JudgedRate | None:
        """The judged rate the verdict rests on: beyond the tolerance (the surest first), else the largest gap.

        None for the reference's own row.
        """
        rates = [j for j in self.judged_rates if j.difference is not None]
        if not rates:
            return self.judged_rates[0] if self.judged_rates else None
        beyond = [j for j in rates if not j.within]
        if beyond:
            return min(beyond, key=lambda j: (1.0 if j.p_adjusted is None else j.p_adjusted, -abs(j.difference or 0)))
        return max(rates, key=lambda j: abs(j.difference or 0))

    @property
    def fair(self) -> bool | None:
        """The verdict as a flag: True within tolerance, False beyond it (by chance or not), None unjudged."""
        return {WITHIN: True, BEYOND: False, CHANCE: False}.get(self.verdict)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["judged_rates"] = [asdict(j) for j in self.judged_rates]
        out["fair"] = None if self.is_reference else self.fair
        out.pop("cell_key")
        out.update(out.pop("extras") or {})
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
    With several cells the reference must also have enough rows inside them: only groups with
    at least ``min_group_size`` rows in at least half as many cells as the best-covered group
    are eligible (a group that is large overall but thin in every stratum would leave every
    comparison "too few rows").
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
    if len(table.cell_keys) > 1 and eligible:
        covered = {i: int((table.n[i] >= spec.min_group_size).sum()) for i in eligible}
        most = max(covered.values())
        eligible = [i for i in eligible if 2 * covered[i] >= most and (covered[i] > 0 or most == 0)]
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


def _rate_counts(table: CountTable, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Numerator and denominator of one rate per group and cell ("selection": positives of n)."""
    if name == "selection":
        return table.positives.astype(float), table.n.astype(float)
    hit, miss = ERROR_RATES[name]
    num = getattr(table, hit).astype(float)
    return num, num + getattr(table, miss).astype(float)


def compare(table: CountTable, spec: AuditSpec) -> tuple[tuple[Comparison, ...], tuple[PooledComparison, ...], str]:
    """Every comparison against the reference, the pooled view per group, and the reference.

    The verdict judges the rates the criterion names (the share with a positive decision by
    default; a model's true positive rate, both TPR and FPR, or precision on request); their
    p-values, over every comparison that can be judged, form the family that is adjusted.
    """
    reference = choose_reference(table, spec)
    r = table.group_index(reference)
    G, C = table.n.shape
    n, k = table.n.astype(float), table.positives.astype(float)
    low, high = wilson_interval(k, n)
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = k / n
    ref_n, ref_k = np.broadcast_to(n[r], n.shape), np.broadcast_to(k[r], k.shape)
    d_low, d_high = newcombe_interval(k, n, ref_k, ref_n)
    if spec.outcome_is == "adverse":  # impact ratios compare the shares without the adverse outcome
        ratio_low, ratio_high = ratio_interval(n - k, n, ref_n - ref_k, ref_n)
    else:
        ratio_low, ratio_high = ratio_interval(k, n, ref_k, ref_n)
    total = max(float(n.sum()), 1.0)
    group_share = n.sum(axis=1) / total
    rates = judged_rates(spec) if table.tp is not None else ("selection",)
    not_ref = np.arange(G)[:, None] != r
    too_few = group_share[:, None] < spec.min_group_share
    per_rate: dict[str, dict[str, Any]] = {}
    for name in rates:
        num, den = _rate_counts(table, name)
        rn, rd = np.broadcast_to(num[r], num.shape), np.broadcast_to(den[r], den.shape)
        p, tests = two_proportion_tests(num.ravel(), den.ravel(), rn.ravel(), rd.ravel())
        with np.errstate(divide="ignore", invalid="ignore"):
            value = num / den
        per_rate[name] = {"num": num, "den": den, "rn": rn, "rd": rd, "p": p.reshape(G, C), "tests": tests,
                          "value": value, "ref": np.broadcast_to(value[r], value.shape)}
        too_few = too_few | (den < spec.min_group_size) | (rd < spec.min_group_size)
    # One family: every judged rate of every comparison that can be judged.
    family = np.stack([np.where(~too_few & not_ref, per_rate[name]["p"], np.nan) for name in rates])
    adjusted = adjust_p(family.ravel(), spec.correction).reshape(family.shape)
    for i, name in enumerate(rates):
        per_rate[name]["p_adj"] = adjusted[i]
    if "selection" in per_rate:  # the same test: Fisher's exact test on small cells is run once
        selection_p, selection_tests = per_rate["selection"]["p"], per_rate["selection"]["tests"]
    else:
        selection_p, selection_tests = two_proportion_tests(k.ravel(), n.ravel(), ref_k.ravel(), ref_n.ravel())
        selection_p = selection_p.reshape(G, C)
    score_stats = _score_stats(table, r) if table.score_sum is not None else None
    error_stats = _error_stats(table, r) if table.tp is not None else None
    comparisons: list[Comparison] = []
    for gi, group in enumerate(table.groups):
        for ci, (key, label) in enumerate(zip(table.cell_keys, table.cell_labels)):
            cell = None if key is None else label
            is_ref = gi == r
            rate_i, ref_rate = _num(rate[gi, ci]), _num(rate[r, ci])
            ratio = None
            # The impact ratio (and the four-fifths rule) compare favourable shares, as the EEOC and LL144 do:
            # for an adverse outcome, the shares without it.
            fav_i, fav_ref = _favourable(spec, rate_i), _favourable(spec, ref_rate)
            if fav_i is not None and fav_ref is not None and fav_ref > 0:
                ratio = fav_i / fav_ref
            difference = None if rate_i is None or ref_rate is None else rate_i - ref_rate
            judged: list[JudgedRate] = []
            for name in rates:
                d = per_rate[name]
                value, ref_value = _num(d["value"][gi, ci]), _num(d["ref"][gi, ci])
                diff = None if value is None or ref_value is None else value - ref_value
                fav, fav_r = (_favourable(spec, value), _favourable(spec, ref_value)) if name == "selection" \
                    else (value, ref_value)
                j_ratio = None if diff is None or not fav_r else fav / fav_r  # type: ignore[operator]
                within = None if diff is None else _within(spec, diff, j_ratio, fav, fav_r)  # type: ignore[arg-type]
                judged.append(JudgedRate(
                    name=name, rate=value, reference_rate=ref_value, difference=diff, impact_ratio=j_ratio,
                    n=int(d["den"][gi, ci]), positives=int(d["num"][gi, ci]), reference_n=int(d["rd"][gi, ci]),
                    reference_positives=int(d["rn"][gi, ci]), p_value=_num(d["p"][gi, ci]),
                    p_adjusted=_num(d["p_adj"][gi, ci]), test=d["tests"][gi * C + ci], within=within))
            if is_ref:
                verdict = REFERENCE
            elif too_few[gi, ci] or any(j.difference is None for j in judged):
                verdict = TOO_FEW
            elif all(j.within for j in judged):
                verdict = WITHIN
            elif any(not j.within and j.p_adjusted is not None and j.p_adjusted < ALPHA for j in judged):
                verdict = BEYOND
            else:
                verdict = CHANCE
            four_fifths = None if ratio is None or is_ref else bool(ratio < 0.8)
            selection = spec.criterion == "selection" or table.tp is None
            sel_adj = judged[0].p_adjusted if selection else None
            item = Comparison(
                group=group, cell=cell, cell_key=key, n=int(n[gi, ci]), positives=int(k[gi, ci]),
                rate=rate_i, ci_low=_num(low[gi, ci]), ci_high=_num(high[gi, ci]), reference=reference,
                is_reference=is_ref, reference_n=int(ref_n[gi, ci]), reference_positives=int(ref_k[gi, ci]),
                reference_rate=ref_rate,
                difference=0.0 if is_ref and difference is not None else difference,
                difference_ci_low=None if is_ref else _num(d_low[gi, ci]),
                difference_ci_high=None if is_ref else _num(d_high[gi, ci]),
                impact_ratio=1.0 if is_ref and ratio is not None else ratio,
                impact_ratio_ci_low=None if is_ref or ratio is None else _num(ratio_low[gi, ci]),
                impact_ratio_ci_high=None if is_ref or ratio is None else _num(ratio_high[gi, ci]),
                p_value=None if is_ref else _num(selection_p[gi, ci]),
                test="" if is_ref else selection_tests[gi * C + ci],
                p_adjusted=None if is_ref else sel_adj,
                verdict=verdict, four_fifths=four_fifths, sentence="",
                score=None if score_stats is None else score_stats[gi][ci],
                error_rates=None if error_stats is None else _with_adjusted(error_stats[gi][ci], judged, is_ref),
                criterion=spec.criterion if table.tp is not None else "selection",
                judged_rates=() if is_ref else tuple(judged),
            )
            comparisons.append(_with_sentence(item, spec, table))
    from .regulator import attach_extras

    comparisons = attach_extras(comparisons, spec)
    pooled = tuple(_pooled(table, spec, gi, r, comparisons) for gi in range(G) if gi != r)
    return tuple(comparisons), pooled, reference


def judged_rates(spec: AuditSpec) -> tuple[str, ...]:
    """The rates the verdict judges for a model's decisions (see :data:`CRITERION_RATES`)."""
    return CRITERION_RATES[spec.criterion]


def _with_adjusted(rates: dict[str, dict[str, float | None]], judged: list[JudgedRate], is_ref: bool
                   ) -> dict[str, dict[str, float | None]]:
    """The error rates with the adjusted p-value of each judged one (None for those not judged)."""
    adjusted = {j.name: j.p_adjusted for j in judged}
    return {name: {**values, "p_adjusted": None if is_ref else adjusted.get(name)} for name, values in rates.items()}


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
        notes.append(f"The gap between {group_words(group, spec)} and {group_words(reference, spec)} differs from "
                     f"stratum to stratum (Breslow-Day "
                     f"{format_p(mh.breslow_day_p_value)}): read the strata one by one rather than the pooled "
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


def group_words(label: str, spec: AuditSpec) -> str:
    """A group's label in a sentence: a number gets its column ("age = 0", "sex = 1 × race = 2")."""
    if not spec.group_by:
        return label
    parts = label.split(CROSS)
    if len(parts) != len(spec.group_by):
        return label
    return CROSS.join(f"{column} = {part}" if _is_number(part) else part for column, part in zip(spec.group_by, parts))


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _rows_of(count: int, who: str) -> str:
    """"7 Female rows", or "7 rows of age = 0" when the group's words hold a column and its value."""
    return f"{count:,} rows of {who}" if " = " in who else f"{count:,} {who} rows"


def _where(c: Comparison, spec: AuditSpec) -> str:
    if c.cell_key is not None:
        return f"Where {c.cell}"
    if spec.population:
        return "Among all rows where " + " and ".join(str(cond) for cond in spec.population)
    return "Among all rows"


def tolerance_words(spec: AuditSpec) -> str:
    """The bar a gap is judged against: "the 5-point tolerance" or "the 0.8 impact-ratio threshold"."""
    return _tolerance_words(spec)


def _tolerance_words(spec: AuditSpec) -> str:
    if spec.metric == "ratio":
        return f"the {spec.ratio_threshold:g} impact-ratio threshold"
    return "the " + points(spec.tolerance).replace(" points", "-point").replace(" point", "-point") + " tolerance"


RATE_WORDS = {"tpr": ("true positive rate", "of the rows where {outcome}, the share predicted positive"),
              "fpr": ("false positive rate", "of the rows where not {outcome}, the share predicted positive"),
              "precision": ("precision", "of the rows predicted positive, the share where {outcome}")}
RATE_ON = {"tpr": "on the true positive rate", "fpr": "on the false positive rate", "precision": "on precision"}


def _judged_text(c: Comparison, spec: AuditSpec, group: str, ref: str) -> str:
    """The judged error rates of a comparison in words (the criterion is not "selection")."""
    out = []
    for j in c.judged_rates:
        name, meaning = RATE_WORDS[j.name]
        gap = "" if j.difference is None else f" (a gap of {points(j.difference)})"
        out.append(f"the {name} ({meaning.format(outcome=spec.outcome_text)}) is {pct(j.rate)} for {group} "
                   f"({j.positives:,} of {j.n:,}) and {pct(j.reference_rate)} for {ref} "
                   f"({j.reference_positives:,} of {j.reference_n:,}){gap}")
    return " and ".join(out)


def _with_sentence(c: Comparison, spec: AuditSpec, table: CountTable) -> Comparison:
    where = _where(c, spec)
    outcome = spec.decision_text
    group, ref = group_words(c.group, spec), group_words(c.reference, spec)
    if c.is_reference:
        text = (f"{where}, {outcome} for {pct(c.rate)} of {group} ({c.positives:,} of {c.n:,}), the reference "
                "group.")
        return _replace(c, sentence=text)
    if c.difference is None:
        empty = group if c.n == 0 else ref
        return _replace(c, sentence=f"{where}, there are no {empty} rows, so {group} cannot be compared with "
                                    f"{ref} here (not computable).")
    error_criterion = c.criterion != "selection"
    ratio = "" if c.impact_ratio is None else f", an impact ratio of {c.impact_ratio:.2f}"
    shares = (f"{outcome} for {pct(c.rate)} of {group} ({c.positives:,} of {c.n:,}) and "
              f"{pct(c.reference_rate)} of {ref} ({c.reference_positives:,} of {c.reference_n:,})")
    if error_criterion:
        text = (f"{where}, {shares} (a gap of {points(c.difference)} in the share predicted positive); judged on "
                f"{CRITERION_NAMES[c.criterion]}, {_judged_text(c, spec, group, ref)}")
    else:
        text = f"{where}, {shares}: a gap of {points(c.difference)}{ratio}"
    deciding = c.deciding
    p_value = c.p_value if deciding is None else deciding.p_value
    p_adjusted = c.p_adjusted if deciding is None else deciding.p_adjusted
    size = "within" if c.verdict == WITHIN else ("larger than" if spec.metric == "difference" else "beyond")
    adjusted = ""
    if p_adjusted is not None and p_value is not None and spec.correction != "none" and \
            abs(p_adjusted - p_value) > 1e-12:
        adjusted = f"; {format_p(p_adjusted)} after adjusting for the number of comparisons"
    if c.verdict == TOO_FEW:
        # No word on the tolerance: the comparison is kept out of the verdict (chance is still said).
        if deciding is not None and error_criterion:
            mine, theirs = deciding.n, deciding.reference_n
        else:
            mine, theirs = c.n, c.reference_n
        small = min(mine, theirs)
        who = group if mine <= theirs else ref
        rows = _rows_of(small, who)
        if error_criterion and deciding is not None:
            rows += f" for the {RATE_WORDS[deciding.name][0]}"
        chance = ", and it could be due to chance" if p_value is not None and p_value >= 0.05 else ""
        if small >= spec.min_group_size:  # set aside by the smallest share, not by the rows in this cell
            text += (f"{chance} ({format_p(p_value)}). {group} is under {format_percent(spec.min_group_share)} of "
                     "all rows, so it is set aside: too few rows to judge.")
        else:
            text += (f"{chance} ({format_p(p_value)}). With {rows} here (fewer than {spec.min_group_size:,}), "
                     "there are too few rows to judge.")
        return _replace(c, sentence=text)
    gap_word = "" if not error_criterion or deciding is None else f" {RATE_ON[deciding.name]}"
    if c.verdict == BEYOND:
        text += f", {size} {_tolerance_words(spec)}{gap_word} and not due to chance ({format_p(p_value)}{adjusted})."
    elif c.verdict == WITHIN:
        text += f", within {_tolerance_words(spec)} ({format_p(p_value)})."
    else:
        text += (f", {size} {_tolerance_words(spec)}{gap_word}, and it could be due to chance "
                 f"({format_p(p_value)}{adjusted}).")
    if not error_criterion and c.four_fifths is not None and spec.metric == "difference":
        if c.four_fifths and c.verdict == WITHIN:
            text += (f" Its impact ratio of {c.impact_ratio:.2f} is below four-fifths (the EEOC rule of thumb), "
                     "but the gap in points is within the tolerance: with shares this small, a ratio magnifies "
                     "a small difference. The verdict follows the tolerance.")
        elif not c.four_fifths and c.verdict in (BEYOND, CHANCE):
            text += (f" Its impact ratio of {c.impact_ratio:.2f} passes the four-fifths rule, but the gap in points "
                     "is beyond the tolerance. The verdict follows the tolerance.")
    return _replace(c, sentence=text)


def _with_pooled_sentence(pc: PooledComparison, spec: AuditSpec, several: bool) -> PooledComparison:
    outcome = spec.decision_text
    group, ref = group_words(pc.group, spec), group_words(pc.reference, spec)
    if pc.marginal_difference is None:
        return _replace(pc, sentence=f"{group} has no rows to compare with {ref}.")
    overall = (f"Overall, {outcome} for {pct(pc.marginal_rate)} of {group} and {pct(pc.reference_marginal_rate)} "
               f"of {ref} (a gap of {points(pc.marginal_difference)}, {format_p(pc.marginal_p_value)})")
    if not several:
        return _replace(pc, sentence=overall + ".")
    if pc.mh_odds_ratio is None and pc.strata_used > 0:
        return _replace(pc, sentence=overall + f"; the strata cannot be pooled into an odds ratio: in every stratum that "
                                               f"holds both groups, {group} always has the outcome or {ref} never "
                                               "has it, so the odds cannot be compared (the pooled odds ratio is "
                                               "infinite by arithmetic). Read the strata one by one.")
    if pc.mh_odds_ratio is None or pc.cmh_p_value is None:
        return _replace(pc, sentence=overall + "; the strata cannot be pooled (no stratum holds both groups with both "
                                               "outcomes).")
    if pc.mh_odds_ratio == 0:
        # Degenerate: in every cell that can be pooled one side has the outcome in every row (or none of
        # its rows), so there are no odds to compare and the pooled odds ratio is 0 by arithmetic only.
        return _replace(pc, sentence=overall + f"; the strata cannot be pooled into an odds ratio: in every stratum "
                                               f"that holds both groups, {group} never has the outcome or {ref} "
                                               "always has it, so the odds cannot be compared (the pooled odds "
                                               "ratio is 0 by arithmetic, not an estimate). Read the strata one "
                                               "by one.")
    ci = ""
    if pc.mh_ci_low is not None and pc.mh_ci_high is not None:
        ci = f", 95% CI {pc.mh_ci_low:.2f} to {pc.mh_ci_high:.2f}"
    pooled = f"pooled odds ratio {pc.mh_odds_ratio:.2f}{ci}, {format_p(pc.cmh_p_value)}"
    uneven = pc.breslow_day_p_value is not None and pc.breslow_day_p_value < ALPHA
    cells_note = ""
    if pc.cells_beyond:
        cells_note = (f" and in {pc.cells_beyond} {'strata' if pc.cells_beyond > 1 else 'stratum'} the gap exceeds the "
                      "tolerance beyond chance")
    if pc.simpson:
        if pc.cmh_p_value < ALPHA:
            within = "within the strata the gap points the other way"
        elif uneven or pc.cells_beyond:
            # Not "alike": the pooled effect is small, but the gap differs between cells (Berkeley's department A).
            within = ("the pooled gap within the strata could be chance, though the gap differs from stratum to stratum"
                      + cells_note)
        else:
            within = "within each stratum the rates are alike"
        return _replace(pc, sentence=(f"{overall}, but {within} ({pooled}): the overall gap comes from which strata "
                                      "each group falls in, not from different treatment inside them"
                                      + (" on the whole; read the strata one by one." if uneven or pc.cells_beyond
                                         else ".")))
    if pc.cmh_p_value < ALPHA:
        return _replace(pc, sentence=f"{overall}; the gap holds within the strata ({pooled}).")
    if uneven or pc.cells_beyond:
        return _replace(pc, sentence=f"{overall}; pooled over the strata the difference could be chance ({pooled}), "
                                     f"but the gap differs from stratum to stratum{cells_note}: read the strata one by one.")
    return _replace(pc, sentence=f"{overall}; within the strata the difference could be chance ({pooled}).")


def _replace(obj: Any, **changes: Any) -> Any:
    from dataclasses import replace

    return replace(obj, **changes)
