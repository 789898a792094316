"""Every group against a reference, in every cell and pooled across cells, from one count table.

Per group and cell: n, positives, the rate with its Wilson 95% interval; against the reference
group in the same cell: the difference with Newcombe's interval, the impact ratio with the
Miettinen-Nurminen score interval, the four-fifths flag, the p-value (z-test; Fisher's exact test
for small counts) and the p-value adjusted over the comparisons that can be judged (Holm by
default, Benjamini-Hochberg on request; too-few-rows comparisons are left out of the family).
For a model's decisions the verdict judges the rates ``spec.criterion`` names (see
:data:`CRITERION_RATES`), and their p-values form the family. Per group across cells: the marginal (unstratified) difference
and impact ratio, the size-weighted average of the per-cell differences, the Mantel-Haenszel
common odds ratio with its interval, the Cochran-Mantel-Haenszel test, the Breslow-Day-Tarone
test of whether pooling is allowed, and a Simpson's-paradox flag.

Verdict of a comparison: :func:`luskin_core.stats.verdict.judge` (the one rule of every analysis). Too few
rows here means the group or the reference has fewer than ``min_group_size`` rows in the cell (or the group
is under ``min_group_share`` of all rows): shown, not judged.

Simpson's flag (only with more than one cell): the gap "reverses or vanishes" inside the cells.
Precisely: the marginal gap is significant (p below the judgement's level) and the pooled within-cell effect (the
Mantel-Haenszel odds ratio, CMH test) is not significant or points the other way; or the pooled
effect is significant and points against the marginal gap. Two non-significant gaps pointing in
different directions are noise, not a paradox, and are not flagged.

The records hold numbers and verdicts; their sentences are written on demand by
:mod:`luskin_core.analyses.narrative` (``narrative.sentence(comparison, spec)``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, is_dataclass
from typing import Any

import numpy as np

from luskin_core.counting.count_table import CountTable
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.stats.inference import (
    adjust_p,
    mantel_haenszel,
    mean_interval,
    newcombe_interval,
    ratio_interval,
    standardized_mean_difference,
    two_proportion_tests,
    wilson_interval,
)
from luskin_core.stats.judgement import Judgement
from luskin_core.stats.uniform import UniformStats, attach_uniform
from luskin_core.stats.verdict import Verdict

# Kept importable for callers that have not switched to the enum (the regulator tables): the members themselves.
REFERENCE = Verdict.REFERENCE
TOO_FEW = Verdict.TOO_FEW
WITHIN = Verdict.WITHIN
BEYOND = Verdict.BEYOND
CHANCE = Verdict.CHANCE
ERROR_RATES = {"tpr": ("tp", "fn"), "fpr": ("fp", "tn"), "fnr": ("fn", "tp"), "precision": ("tp", "fp")}
ERROR_RATE_NAMES = {"tpr": "true positive rate", "fpr": "false positive rate", "fnr": "false negative rate",
                    "precision": "precision"}
# The rates each criterion judges (AuditSpec.criterion): what equal treatment means for a model.
CRITERION_RATES = {"selection": ("selection",), "opportunity": ("tpr",), "odds": ("tpr", "fpr"),
                   "precision": ("precision",)}
CRITERION_NAMES = {"selection": "the share predicted positive", "opportunity": "the true positive rate",
                   "odds": "the true and false positive rates", "precision": "precision"}


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in fields(cls))
    return names


_SCALARS = (str, float, int, bool, type(None))


def _plain(value: Any) -> Any:
    if isinstance(value, _SCALARS):  # the most of a record, an enum among them (a verdict is a str)
        return value
    if is_dataclass(value) and not isinstance(value, type):
        return record_dict(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def record_dict(record: Any) -> dict[str, Any]:
    """A result record's fields as a dict, nested records and containers as dicts and lists.

    What ``dataclasses.asdict`` gives for these records (their values are numbers, text, enums and containers
    of them), without its deep copies: an audit of hundreds of comparisons spent most of its ``to_dict`` there.
    """
    return {name: _plain(getattr(record, name)) for name in _field_names(type(record))}


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


@dataclass(frozen=True, kw_only=True)
class GroupComparison:
    """One group in one cell against the reference: the record every audit shares (numbers and a verdict).

    The audit's :class:`Comparison` and the proxy audit's
    :class:`~luskin_core.analyses.proxy_audit.ProxyComparison` extend it with their own fields. ``n`` and
    ``positives`` are counts, or sums of probabilities for an estimated group. Words are not held here:
    :mod:`luskin_core.analyses.narrative` writes them from these numbers.
    """

    group: str
    cell: str | None
    n: float
    positives: float
    rate: float | None
    ci_low: float | None
    ci_high: float | None
    reference: str
    is_reference: bool
    difference: float | None
    difference_ci_low: float | None
    difference_ci_high: float | None
    impact_ratio: float | None = None
    impact_ratio_ci_low: float | None = None
    impact_ratio_ci_high: float | None = None
    p_value: float | None
    p_adjusted: float | None
    verdict: Verdict

    @property
    def fair(self) -> bool | None:
        """The verdict as a flag: True within tolerance, False beyond it (by chance or not), None unjudged."""
        return self.verdict.fair


@dataclass(frozen=True, kw_only=True)
class Comparison(GroupComparison):
    """One group in one cell, against the reference group in the same cell (counted rows)."""

    n: int
    positives: int
    cell_key: Any
    reference_n: int
    reference_positives: int
    reference_rate: float | None
    test: str
    four_fifths: bool | None
    # Which side of the pair is below four-fifths of the other ("group", "reference", None): the rule reads the less
    # favoured side, which may be the reference the user chose; the tables say so (not in the JSON: four_fifths is).
    four_fifths_lower: str | None = None
    score: dict[str, float | None] | None = None
    error_rates: dict[str, dict[str, float | None]] | None = None
    criterion: str = "selection"
    judged_rates: tuple[JudgedRate, ...] = ()
    # Partially pooled share and its 95% interval (luskin_core.stats.shrinkage), set by the audit.
    pooled_rate: float | None = None
    pooled_ci_low: float | None = None
    pooled_ci_high: float | None = None
    pooled_parent: str | None = None    # toward what the pooled share is pulled ("the rest of Native American")
    # The Uniform Guidelines' numbers: shortfalls, the flip test, the detectable difference (set by the audit).
    uniform: UniformStats | None = None
    rule: str = ""    # the judgement's rule that decided the verdict (Judgement.rule), for the JSON

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

    def to_dict(self) -> dict[str, Any]:
        out = record_dict(self)
        out["fair"] = None if self.is_reference else self.fair
        out.pop("cell_key")
        out.pop("pooled_parent")
        out.pop("four_fifths_lower")
        out.update(out.pop("uniform") or {})
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

    def to_dict(self) -> dict[str, Any]:
        return record_dict(self)


# ------------------------------------------------------------------------------------------
# Reference group
# ------------------------------------------------------------------------------------------
def choose_reference(table: CountTable, spec: AuditSpec) -> str:
    """The audit's reference for ``spec`` on ``table``: :meth:`Judgement.resolved`'s (the one rule)."""
    reference = Judgement.of(spec).resolved(table).reference
    assert reference is not None
    return reference


# ------------------------------------------------------------------------------------------
# Comparisons
# ------------------------------------------------------------------------------------------
def _rate_counts(table: CountTable, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Numerator and denominator of one rate per group and cell ("selection": positives of n), as whole counts."""
    if name == "selection":
        return table.positives, table.n
    hit, miss = ERROR_RATES[name]
    num = getattr(table, hit)
    return num, num + getattr(table, miss)


@dataclass(frozen=True)
class _RateArrays:
    """One judged rate for every group and cell, against the reference in the same cell."""

    name: str
    num: np.ndarray
    den: np.ndarray
    ref_num: np.ndarray
    ref_den: np.ndarray
    p: np.ndarray
    tests: list[str]
    p_adjusted: np.ndarray

    def judged(self, gi: int, ci: int, judgement: Judgement) -> JudgedRate:
        """This rate of one group in one cell, judged."""
        k, n, rk, rn = (int(a[gi, ci]) for a in (self.num, self.den, self.ref_num, self.ref_den))
        value, ref_value = (k / n if n else None), (rk / rn if rn else None)
        diff = None if value is None or ref_value is None else value - ref_value
        counted = self.name == "selection"
        fav, fav_r = (judgement.favourable_share(value), judgement.favourable_share(ref_value)) if counted \
            else (value, ref_value)
        ratio = None if diff is None or not fav_r else fav / fav_r  # type: ignore[operator]
        within = None if diff is None else judgement.within(k, n, rk, rn, counted=counted)
        C = self.num.shape[1]
        return JudgedRate(name=self.name, rate=value, reference_rate=ref_value, difference=diff, impact_ratio=ratio,
                          n=n, positives=k, reference_n=rn, reference_positives=rk, p_value=_num(self.p[gi, ci]),
                          p_adjusted=_num(self.p_adjusted[gi, ci]), test=self.tests[gi * C + ci], within=within)


def _rates(table: CountTable, judgement: Judgement, r: int) -> tuple[list[_RateArrays], np.ndarray]:
    """Every judged rate's arrays, and which comparisons have too few rows; the p-values of every judged rate of
    every comparison that can be judged (not the reference's, not a group's of unknown category) form one family,
    adjusted together."""
    G, C = table.n.shape
    names = CRITERION_RATES[judgement.criterion] if table.tp is not None else ("selection",)
    total = max(float(table.n.sum()), 1.0)
    share = table.n.sum(axis=1) / total
    too_few = np.broadcast_to((share < judgement.min_group_share)[:, None], (G, C)).copy()
    drafts = []
    for name in names:
        num, den = _rate_counts(table, name)
        rn, rd = np.broadcast_to(num[r], num.shape), np.broadcast_to(den[r], den.shape)
        p, tests = two_proportion_tests(num.ravel(), den.ravel(), rn.ravel(), rd.ravel())
        drafts.append((name, num, den, rn, rd, p.reshape(G, C), tests))
        too_few |= (den < judgement.min_group_size) | (rd < judgement.min_group_size)
    not_ref = np.arange(G)[:, None] != r
    # a group of unknown category is shown with its test but judged by none: its test is not one of the family
    # (in it, SQF 2014's race "U" raised every other race's Holm-adjusted p by a rank: 7 tests for 6 verdicts)
    known = np.array([not judgement.is_unknown(g) for g in table.groups], dtype=bool)[:, None]
    family = np.stack([np.where(~too_few & not_ref & known, d[5], np.nan) for d in drafts])
    adjusted = adjust_p(family.ravel(), judgement.correction).reshape(family.shape)
    apart = ~too_few & not_ref & ~known   # each a test of its own (its p as it is), for its numbers shown apart
    adjusted = np.stack([np.where(apart, d[5], a) for d, a in zip(drafts, adjusted)])
    return [_RateArrays(*d, p_adjusted=adjusted[i]) for i, d in enumerate(drafts)], too_few


def compare(table: CountTable, judgement: Judgement) -> tuple[tuple[Comparison, ...], tuple[PooledComparison, ...], str]:
    """Every comparison against the judgement's reference, the pooled view per group, and the reference.

    ``judgement`` is resolved on ``table`` (:meth:`Judgement.resolved`): it names the reference and decides every
    verdict. The verdict judges the rates the criterion names (the share with a positive decision by default; a
    model's true positive rate, both TPR and FPR, or precision on request); their p-values, over every comparison
    that can be judged, form the family that is adjusted. The records hold numbers only:
    :mod:`luskin_core.analyses.narrative` writes their sentences on demand.
    """
    reference = judgement.reference
    if reference is None:
        raise ValueError("compare() needs a judgement resolved on the table (Judgement.resolved).")
    r = table.group_index(reference)
    G, C = table.n.shape
    arrays = _compared_arrays(table, judgement, r)
    comparisons = [_comparison(table, judgement, arrays, gi, ci) for gi in range(G) for ci in range(C)]
    comparisons = attach_uniform(comparisons, judgement)
    pooled = tuple(_pooled(table, judgement, gi, r, comparisons) for gi in range(G) if gi != r)
    return tuple(comparisons), pooled, reference


@dataclass(frozen=True)
class _Compared:
    """Every group × cell's numbers against the reference, computed at once over the table's arrays."""

    r: int
    reference: str
    rate: Any
    low: Any
    high: Any
    d_low: Any
    d_high: Any
    ratio_low: Any
    ratio_high: Any
    rates: list[Any]
    too_few: Any
    selection_p: Any
    selection_tests: Any
    score_stats: Any
    error_stats: Any
    criterion: str


def _compared_arrays(table: CountTable, judgement: Judgement, r: int) -> _Compared:
    G, C = table.n.shape
    n, k = table.n.astype(float), table.positives.astype(float)
    low, high = wilson_interval(k, n)
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = k / n
    ref_n, ref_k = np.broadcast_to(n[r], n.shape), np.broadcast_to(k[r], k.shape)
    d_low, d_high = newcombe_interval(k, n, ref_k, ref_n)
    # impact ratios compare the favourable shares (for an adverse outcome, the shares without it)
    ratio_low, ratio_high = ratio_interval(judgement.favourable(k, n), n, judgement.favourable(ref_k, ref_n), ref_n)
    rates, too_few = _rates(table, judgement, r)
    selection = next((a for a in rates if a.name == "selection"), None)
    if selection is not None:  # the same test: Fisher's exact test on small cells is run once
        selection_p, selection_tests = selection.p, selection.tests
    else:
        p, selection_tests = two_proportion_tests(k.ravel(), n.ravel(), ref_k.ravel(), ref_n.ravel())
        selection_p = p.reshape(G, C)
    return _Compared(
        r=r, reference=table.groups[r], rate=rate, low=low, high=high, d_low=d_low, d_high=d_high, ratio_low=ratio_low, ratio_high=ratio_high,
        rates=rates, too_few=too_few, selection_p=selection_p, selection_tests=selection_tests,
        score_stats=_score_stats(table, r) if table.score_sum is not None else None,
        error_stats=_error_stats(table, r) if table.tp is not None else None,
        criterion=judgement.criterion if table.tp is not None else "selection")


def _comparison(table: CountTable, judgement: Judgement, a: _Compared, gi: int, ci: int) -> Comparison:
    """One group in one cell against the reference, with its one verdict."""
    r = a.r
    key, label = table.cell_keys[ci], table.cell_labels[ci]
    is_ref = gi == r
    judged = [rate.judged(gi, ci, judgement) for rate in a.rates]
    rate_i, ref_rate = _num(a.rate[gi, ci]), _num(a.rate[r, ci])
    fav_i, fav_ref = judgement.favourable_share(rate_i), judgement.favourable_share(ref_rate)
    ratio = fav_i / fav_ref if fav_i is not None and fav_ref else None
    difference = None if rate_i is None or ref_rate is None else rate_i - ref_rate
    verdict = judgement.verdict([j.within for j in judged], [j.p_adjusted for j in judged],
                                reference=is_ref, too_few=bool(a.too_few[gi, ci]))
    # whole counts from the integer table (floats lose counts past 2**53, and the exact tests need them)
    counts = (int(table.positives[gi, ci]), int(table.n[gi, ci]), int(table.positives[r, ci]), int(table.n[r, ci]))
    compared = _against_reference(a, gi, ci, judgement, counts, ratio, judged) if not is_ref else {
        "difference_ci_low": None, "difference_ci_high": None, "impact_ratio_ci_low": None,
        "impact_ratio_ci_high": None, "p_value": None, "test": "", "p_adjusted": None, "four_fifths": None,
        "judged_rates": ()}
    return Comparison(
        group=table.groups[gi], cell=None if key is None else label, cell_key=key, n=counts[1], positives=counts[0],
        rate=rate_i, ci_low=_num(a.low[gi, ci]), ci_high=_num(a.high[gi, ci]), reference=a.reference,
        is_reference=is_ref, reference_n=counts[3], reference_positives=counts[2], reference_rate=ref_rate,
        difference=0.0 if is_ref and difference is not None else difference,
        impact_ratio=1.0 if is_ref and ratio is not None else ratio,
        verdict=verdict,
        score=None if a.score_stats is None else a.score_stats[gi][ci],
        error_rates=None if a.error_stats is None else _with_adjusted(a.error_stats[gi][ci], judged, is_ref),
        criterion=a.criterion, rule=judgement.rule(verdict), **compared)


def _against_reference(a: _Compared, gi: int, ci: int, judgement: Judgement, counts: tuple[int, int, int, int],
                       ratio: float | None, judged: list[Any]) -> dict[str, Any]:
    """A group's numbers that only a comparison with another group has (the reference's are blank)."""
    C = a.rate.shape[1]
    return {
        "difference_ci_low": _num(a.d_low[gi, ci]), "difference_ci_high": _num(a.d_high[gi, ci]),
        "impact_ratio_ci_low": None if ratio is None else _num(a.ratio_low[gi, ci]),
        "impact_ratio_ci_high": None if ratio is None else _num(a.ratio_high[gi, ci]),
        "p_value": _num(a.selection_p[gi, ci]), "test": a.selection_tests[gi * C + ci],
        "p_adjusted": None if a.criterion != "selection" else judged[0].p_adjusted,
        "four_fifths": judgement.below_four_fifths(*counts), "four_fifths_lower": judgement.four_fifths_lower(*counts),
        "judged_rates": tuple(judged)}


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
def _pooled(table: CountTable, judgement: Judgement, gi: int, r: int, comparisons: list[Comparison]
            ) -> PooledComparison:
    n1, k1 = table.n[gi].astype(float), table.positives[gi].astype(float)
    n2, k2 = table.n[r].astype(float), table.positives[r].astype(float)
    N1, K1, N2, K2 = n1.sum(), k1.sum(), n2.sum(), k2.sum()
    rate1 = K1 / N1 if N1 else None
    rate2 = K2 / N2 if N2 else None
    diff = None if rate1 is None or rate2 is None else rate1 - rate2
    d_low, d_high = newcombe_interval(K1, N1, K2, N2)
    fav1, fav2 = judgement.favourable_share(rate1), judgement.favourable_share(rate2)
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
    cells_beyond = sum(c.verdict == Verdict.BEYOND for c in mine)
    several = len(table.cell_keys) > 1
    simpson = False
    if several and diff is not None and mh.odds_ratio is not None and mh.cmh_p_value is not None:
        marginal_sig = bool(judgement.significant(_num(marginal_p)))
        pooled_sig = bool(judgement.significant(mh.cmh_p_value))
        pooled_dir = np.sign(math.log(mh.odds_ratio)) if mh.odds_ratio > 0 else -1.0
        opposite = pooled_dir != 0 and np.sign(diff) != 0 and pooled_dir != np.sign(diff)
        simpson = bool((marginal_sig and (not pooled_sig or opposite)) or (pooled_sig and opposite))
    pooled = PooledComparison(
        group=group, reference=reference, n=int(N1), reference_n=int(N2), marginal_rate=_num(rate1),
        reference_marginal_rate=_num(rate2), marginal_difference=_num(diff),
        marginal_difference_ci_low=_num(d_low), marginal_difference_ci_high=_num(d_high),
        marginal_impact_ratio=_num(ratio), marginal_p_value=_num(marginal_p), weighted_difference=weighted,
        mh_odds_ratio=mh.odds_ratio, mh_ci_low=mh.ci_low, mh_ci_high=mh.ci_high, cmh_p_value=mh.cmh_p_value,
        breslow_day_p_value=mh.breslow_day_p_value, strata_used=mh.strata_used, cells=len(table.cell_keys),
        cells_beyond=cells_beyond, simpson=simpson,
    )
    return pooled
