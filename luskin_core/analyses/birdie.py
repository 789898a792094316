"""BIRDiE: the outcome's rate by race estimated from BISG probabilities *and the outcome* (McCartan, Fisher, Goldin,
Ho and Imai 2024; the R package ``birdie``), written here from the model, not ported.

Why: the probability-weighted rate sum(p_a y) / sum(p_a) is unbiased only when the outcome is independent of race
given surname and place, which is exactly what an audit suspects is false: it shrinks every gap toward zero.
BIRDiE assumes instead that **the outcome is independent of the surname once race and place are known** (a
surname says nothing about the decision beyond the race it signals). Then, for a row with BISG probabilities
pi = P(R | surname, place) and outcome y,

    P(Y = y | surname, place) = sum_r pi_r * theta_r(place)^y * (1 - theta_r(place))^(1 - y)

with theta_r(place) = P(Y = 1 | R = r, place), a mixture whose weights are known: its likelihood identifies theta.

Two forms:

- **pooled** (:func:`fit_pooled`): theta_r(place) = theta_r, one rate per race. The log-likelihood
  sum_i c_i [y_i log(pi_i . theta) + (1 - y_i) log(1 - pi_i . theta)] is concave in theta (a log of a linear
  function), so its maximum is found by Newton's method with EM steps as a safeguard (each EM step raises the
  likelihood: E-step q_ir proportional to pi_ir P(y_i | r), M-step theta_r = sum c q_ir y_i / sum c q_ir).
  Its 95% intervals come from the sandwich (robust) covariance of the maximum-likelihood estimate.
- **by place** (:func:`fit_by_place`): one rate per race and place, shrunk toward the pooled rates by a Beta
  prior worth ``prior_rows`` rows per race and place (the package's "saturated" Categorical-Dirichlet model with
  an empirical-Bayes prior); the rate by race is the average of the places' rates weighted by each place's
  estimated members of that race. It is the one to read when the outcome may depend on the place beyond race.
  Its intervals come from a bootstrap over the table with multinomial (Poisson) weights.

Sufficient statistics (:class:`BirdieTable`): rows with the same probability vector, place and outcome are one
row with a count, so every iteration is one pass over a small table; an engine produces it with a GROUP BY
(:mod:`luskin_core.analyses.proxy_engine`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import norm

from luskin_core.errors import LuskinError
from luskin_core.formatting import format_percent

Z95 = float(norm.ppf(0.975))
EPS = 1e-10
ASSUMPTION = ("The outcome-aware (BIRDiE) estimate assumes that, among people of the same race living in the "
              "same place, the surname says nothing more about the outcome: two Black applicants from the same "
              "ZIP code have the same chance of approval whatever their surnames. It does not assume, as the "
              "weighted estimate does, that race has no effect on the outcome beyond surname and place.")


@dataclass(frozen=True)
class BirdieTable:
    """The sufficient statistics: distinct (probabilities, place, outcome) rows with their counts.

    ``p`` is (m, k) with rows summing to one, ``y`` 0/1, ``count`` the rows each line stands for, ``place`` an
    integer code per line (or None when no place is kept: the pooled form needs none).
    """

    p: np.ndarray
    y: np.ndarray
    count: np.ndarray
    place: np.ndarray | None = None

    @property
    def n(self) -> float:
        return float(self.count.sum())

    def members(self) -> np.ndarray:
        """Each group's estimated members: the sum of its probabilities."""
        return np.asarray(self.count @ self.p, dtype=float)


def make_table(p: np.ndarray, y: np.ndarray, place: Any = None, count: np.ndarray | None = None) -> BirdieTable:
    """The table from row-level probabilities (n x k), 0/1 outcomes and optional places; rows with a missing
    probability or outcome are left out, identical lines merged."""
    p = np.asarray(p, dtype=float)
    y = np.asarray(y, dtype=float)
    if p.ndim != 2 or len(p) != len(y):
        raise LuskinError("The probabilities and the outcome must have the same number of rows.")
    keep = np.isfinite(p).all(axis=1) & np.isfinite(y)
    c = np.ones(len(y)) if count is None else np.asarray(count, dtype=float)
    codes = None
    if place is not None:
        codes, _ = pd.factorize(pd.Series(place).astype("string").fillna("(missing)"), sort=False)
        codes = codes[keep]
    p, y, c = p[keep], y[keep], c[keep]
    if not np.isin(y, (0.0, 1.0)).all():
        raise LuskinError("The outcome for BIRDiE must be 0/1 (positive or not).")
    return compress(BirdieTable(p=p, y=y, count=c, place=codes))


def compress(table: BirdieTable) -> BirdieTable:
    """Merge lines with the same probabilities, place and outcome (a hash of each line; exact equality)."""
    if len(table.y) == 0:
        return table
    parts = [pd.Series(table.y)] + [pd.Series(table.p[:, j]) for j in range(table.p.shape[1])]
    if table.place is not None:
        parts.append(pd.Series(table.place))
    key = pd.util.hash_pandas_object(pd.concat(parts, axis=1), index=False).to_numpy()
    codes, uniques = pd.factorize(key)
    if len(uniques) == len(key):
        return table
    first = np.full(len(uniques), -1, dtype=np.int64)
    first[codes[::-1]] = np.arange(len(codes))[::-1]
    counts = np.bincount(codes, weights=table.count, minlength=len(uniques))
    return BirdieTable(p=table.p[first], y=table.y[first], count=counts,
                       place=None if table.place is None else table.place[first])


# ------------------------------------------------------------------------------------------
# Pooled form: one rate per race
# ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class BirdieFit:
    """Rates by race (NaN for a group with no estimated member), their covariance and how the fit went."""

    rates: np.ndarray
    cov: np.ndarray
    members: np.ndarray
    n: float
    iterations: int
    converged: bool
    model: str = "pooled"

    def se(self) -> np.ndarray:
        return np.sqrt(np.clip(np.diag(self.cov), 0, None))

    def rate_interval(self, a: int) -> tuple[float, float]:
        """95% interval of group a's rate (normal, clipped to [0, 1])."""
        half = Z95 * self.se()[a]
        return max(0.0, float(self.rates[a] - half)), min(1.0, float(self.rates[a] + half))

    def difference(self, a: int, r: int) -> tuple[float, float, float, float]:
        """rate_a - rate_r, its 95% interval and two-sided p-value (delta method with the covariance)."""
        d = float(self.rates[a] - self.rates[r])
        var = self.cov[a, a] + self.cov[r, r] - 2 * self.cov[a, r]
        se = math.sqrt(max(var, 0.0)) if np.isfinite(var) else math.nan
        if not se > 0:
            return d, math.nan, math.nan, (1.0 if d == 0 else math.nan)
        return d, d - Z95 * se, d + Z95 * se, float(2 * norm.sf(abs(d) / se))

    def impact_ratio(self, a: int, r: int, adverse: bool = False) -> tuple[float, float, float]:
        """Favourable share of a over r's (shares without the outcome when it is adverse), with Fieller's 95%
        interval.

        Why Fieller: the two rates' estimates are close to normal (their spread over 1,000 simulated data sets
        equals the sandwich standard error), so the set of ratios rho with |f_a - rho f_r| within 1.96 of its
        standard error is the interval that follows from them, with no further approximation. The log-ratio
        (delta-method) interval assumes the ratio is log-normal instead: for a small group (Multiracial, about 900
        estimated members in 50,000 rows) it sat too high, missing above the truth 3.7% of the time and below
        0.8% (1,000 data sets; Fieller: see benchmarks/results/bench_proxy_birdie.md). An upper end of infinity
        means the reference's own share is not clearly above zero.
        """
        fa = float(1 - self.rates[a]) if adverse else float(self.rates[a])
        fr = float(1 - self.rates[r]) if adverse else float(self.rates[r])
        if not (np.isfinite(fa) and np.isfinite(fr)) or fr <= 0:
            return math.nan, math.nan, math.nan
        ratio = fa / fr
        return (ratio, *fieller(fa, fr, float(self.cov[a, a]), float(self.cov[r, r]), float(self.cov[a, r])))


def fieller(fa: float, fr: float, var_a: float, var_r: float, cov_ar: float,
            z: float = Z95) -> tuple[float, float]:
    """Fieller's interval for fa / fr from two (jointly) normal estimates: every rho >= 0 with
    (fa - rho fr)^2 <= z^2 (var_a - 2 rho cov_ar + rho^2 var_r). (NaN, NaN) when a variance is unknown; (low, inf)
    when fr is not clearly above zero (the set is then unbounded; its hull above zero)."""
    if not all(np.isfinite(v) for v in (fa, fr, var_a, var_r, cov_ar)):
        return math.nan, math.nan
    z2 = z * z
    a_ = fr * fr - z2 * var_r
    b_ = fa * fr - z2 * cov_ar
    c_ = fa * fa - z2 * var_a
    disc = b_ * b_ - a_ * c_
    if a_ > 0:
        root = math.sqrt(max(disc, 0.0))
        return max(0.0, (b_ - root) / a_), (b_ + root) / a_
    if a_ < 0 and disc > 0:   # the set is (-inf, r1] and [r2, inf): above zero, [r2, inf) when r1 < 0
        r1, r2 = sorted(((b_ - math.sqrt(disc)) / a_, (b_ + math.sqrt(disc)) / a_))
        if r1 < 0:
            return max(0.0, r2), math.inf
    return 0.0, math.inf


def _active(table: BirdieTable) -> np.ndarray:
    return table.members() > 1e-9


CHUNK = 1_000_000  # lines per pass of the big-table loops (bounds the temporaries: a table of 10M lines is fine)


def _chunks(n: int) -> list[slice]:
    return [slice(i, min(i + CHUNK, n)) for i in range(0, max(n, 1), CHUNK)]


def _em_step(theta: np.ndarray, p: np.ndarray, y: np.ndarray, c: np.ndarray) -> np.ndarray:
    up = np.zeros_like(theta)
    down = np.zeros_like(theta)
    for part in _chunks(len(y)):
        pp = p[part]
        m = np.clip(pp @ theta, EPS, 1 - EPS)
        up += pp.T @ (c[part] * y[part] / m)
        down += pp.T @ (c[part] * (1 - y[part]) / (1 - m))
    num = theta * up
    den = num + (1 - theta) * down
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / den, theta)


def _loglik(theta: np.ndarray, p: np.ndarray, y: np.ndarray, c: np.ndarray) -> float:
    total = 0.0
    for part in _chunks(len(y)):
        m = np.clip(p[part] @ theta, EPS, 1 - EPS)
        yy = y[part]
        total += float(c[part] @ (yy * np.log(m) + (1 - yy) * np.log1p(-m)))
    return total


def _derivatives(theta: np.ndarray, p: np.ndarray, y: np.ndarray,
                 c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gradient, Hessian and the score's outer product (the sandwich's meat) of the pooled log-likelihood."""
    k = len(theta)
    grad, hess, meat = np.zeros(k), np.zeros((k, k)), np.zeros((k, k))
    for part in _chunks(len(y)):
        pp, yy, cc = p[part], y[part], c[part]
        m = np.clip(pp @ theta, EPS, 1 - EPS)
        d = yy / m - (1 - yy) / (1 - m)
        curv = yy / m ** 2 + (1 - yy) / (1 - m) ** 2
        grad += pp.T @ (cc * d)
        hess -= pp.T @ (pp * (cc * curv)[:, None])
        meat += pp.T @ (pp * (cc * d * d)[:, None])
    return grad, hess, meat


def fit_pooled(table: BirdieTable, *, max_iter: int = 500, tol: float = 1e-10,
               start: np.ndarray | None = None) -> BirdieFit:
    """The pooled BIRDiE rates by maximum likelihood (Newton's method, EM steps where Newton would not climb),
    with the sandwich covariance."""
    k = table.p.shape[1]
    active = _active(table)
    if table.n == 0 or not active.any():
        raise LuskinError("No row has both an estimate and an outcome to audit.")
    p = table.p if active.all() else table.p[:, active]
    y, c = table.y, table.count
    theta = (np.full(p.shape[1], float(c @ y) / float(c.sum())) if start is None
             else np.clip(np.asarray(start, float)[active], 0.01, 0.99))
    theta = np.clip(np.where(np.isfinite(theta), theta, 0.5), 0.01, 0.99)
    for _ in range(3):
        theta = _em_step(theta, p, y, c)
    ll = _loglik(theta, p, y, c)
    converged, it = False, 0
    for it in range(1, max_iter + 1):
        grad, hess, _ = _derivatives(theta, p, y, c)
        try:
            step = -np.linalg.solve(hess, grad)
        except np.linalg.LinAlgError:
            step = np.full_like(theta, np.nan)
        new = np.clip(theta + step, EPS, 1 - EPS) if np.isfinite(step).all() else theta
        new_ll = _loglik(new, p, y, c) if np.isfinite(step).all() else -np.inf
        if not new_ll >= ll - 1e-12 * abs(ll):
            new = _em_step(theta, p, y, c)
            new_ll = _loglik(new, p, y, c)
        change = float(np.max(np.abs(new - theta)))
        theta, ll_old, ll = new, ll, new_ll
        if change < tol or (abs(ll - ll_old) < 1e-13 * max(abs(ll), 1.0) and change < 1e-7):
            converged = True
            break
    _, hess, meat = _derivatives(theta, p, y, c)
    try:
        bread = np.linalg.inv(-hess)
        cov_a = bread @ meat @ bread
    except np.linalg.LinAlgError:
        cov_a = np.full((p.shape[1], p.shape[1]), np.nan)
    rates = np.full(k, np.nan)
    rates[active] = theta
    cov = np.full((k, k), np.nan)
    cov[np.ix_(active, active)] = cov_a
    return BirdieFit(rates=rates, cov=cov, members=table.members(), n=table.n, iterations=it,
                     converged=converged, model="pooled")


# ------------------------------------------------------------------------------------------
# By place: one rate per race and place, shrunk toward the pooled rates
# ------------------------------------------------------------------------------------------
def _by_place_point(table: BirdieTable, prior: np.ndarray, prior_rows: float, max_iter: int,
                    tol: float) -> tuple[np.ndarray, int, bool]:
    """The by-place EM: rates by race (the places' rates averaged with each place's estimated members)."""
    assert table.place is not None
    p, y, c, g = table.p, table.y, table.count, table.place
    n_places = int(g.max()) + 1 if len(g) else 0
    k = p.shape[1]
    theta = np.tile(np.clip(prior, EPS, 1 - EPS), (n_places, 1))
    a1, a0 = prior_rows * prior, prior_rows * (1 - prior)
    converged, it = False, 0
    q_sum = np.zeros((n_places, k))
    for it in range(1, max_iter + 1):
        t = theta[g]
        lik = np.where(y[:, None] == 1, t, 1 - t)
        q = p * lik
        q /= np.clip(q.sum(axis=1, keepdims=True), EPS, None)
        q *= c[:, None]
        q_sum = np.column_stack([np.bincount(g, q[:, j], n_places) for j in range(k)])
        q_pos = np.column_stack([np.bincount(g, q[:, j] * y, n_places) for j in range(k)])
        new = (q_pos + a1) / (q_sum + a1 + a0)
        change = float(np.max(np.abs(new - theta))) if new.size else 0.0
        theta = new
        if change < tol:
            converged = True
            break
    weight = q_sum.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        rates = np.where(weight > 0, (q_sum * theta).sum(axis=0) / weight, np.nan)
    return rates, it, converged


def fit_by_place(table: BirdieTable, *, prior_rows: float = 5.0, n_boot: int = 100, seed: int = 0,
                 max_iter: int = 300, tol: float = 1e-6, pooled: BirdieFit | None = None) -> BirdieFit:
    """BIRDiE by place (needs ``table.place``): each place's rates shrunk toward the pooled ones by a prior worth
    ``prior_rows`` rows per race; the covariance from ``n_boot`` bootstrap replicates (Poisson weights on the
    table's lines, seeded), each refitting the pooled prior too."""
    if table.place is None:
        raise LuskinError("The by-place model needs a place for every row.")
    pooled = pooled or fit_pooled(table)
    prior = np.nan_to_num(pooled.rates, nan=0.5)
    rates, it, converged = _by_place_point(table, prior, prior_rows, max_iter, tol)
    k = table.p.shape[1]
    cov = np.full((k, k), np.nan)
    if n_boot > 1:
        rng = np.random.default_rng(seed)
        draws = []
        for _ in range(n_boot):
            w = rng.poisson(table.count).astype(float)
            keep = w > 0
            boot = BirdieTable(p=table.p[keep], y=table.y[keep], count=w[keep], place=table.place[keep])
            try:
                b_prior = np.nan_to_num(fit_pooled(boot, start=pooled.rates).rates, nan=0.5)
            except LuskinError:
                continue
            draws.append(_by_place_point(boot, b_prior, prior_rows, max_iter, tol)[0])
        if len(draws) > 1:
            cov = np.cov(np.array(draws), rowvar=False)
    return BirdieFit(rates=rates, cov=cov, members=table.members(), n=table.n, iterations=it,
                     converged=converged, model="by place")


def bootstrap_pooled(table: BirdieTable, *, n_boot: int = 200, seed: int = 0,
                     fit: BirdieFit | None = None) -> np.ndarray:
    """The pooled fit's bootstrap covariance (Poisson(count) weights on the table's lines): a check of the sandwich."""
    fit = fit or fit_pooled(table)
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(n_boot):
        w = rng.poisson(table.count).astype(float)
        keep = w > 0
        boot = BirdieTable(p=table.p[keep], y=table.y[keep], count=w[keep])
        draws.append(fit_pooled(boot, start=fit.rates).rates)
    return np.cov(np.array(draws), rowvar=False)




@dataclass(frozen=True)
class RecordedCheck:
    """The outcome-aware estimate against the truth on the rows whose race was recorded (self-reported)."""

    group: str
    rows: int
    recorded_rate: float
    estimate: float
    ci_low: float
    ci_high: float
    weighted: float

    @property
    def covered(self) -> bool:
        return self.ci_low <= self.recorded_rate <= self.ci_high

    def sentence(self) -> str:
        verdict = ("inside its 95% interval: no sign the assumption fails" if self.covered else
                   "outside its 95% interval: the assumption may not hold for these data")
        return (f"{self.group}: on {self.rows:,} rows with recorded race, the recorded rate is "
                f"{format_percent(self.recorded_rate)}; the outcome-aware estimate from surnames and places alone is "
                f"{format_percent(self.estimate)} ({format_percent(self.ci_low)} to {format_percent(self.ci_high)}), "
                f"{verdict} (weighted: {format_percent(self.weighted)}).")


def check_against_recorded(p: np.ndarray, y: np.ndarray, recorded: Any, labels: tuple[str, ...],
                           min_rows: int = 30) -> list[RecordedCheck]:
    """Fit BIRDiE on the rows whose race was recorded, ignoring the record, and compare with the recorded rates.

    ``recorded`` holds, per row, a group's index into ``labels`` (the probability columns' order) or a label
    (matched without case), missing or anything else for rows without a record. Groups with fewer than
    ``min_rows`` recorded rows are left out.
    """
    values = pd.Series(recorded)
    lookup = {str(label).lower(): i for i, label in enumerate(labels)}
    codes = values.map(lambda v: v if isinstance(v, (int, np.integer)) and 0 <= v < len(labels)
                       else lookup.get(str(v).strip().lower(), -1) if pd.notna(v) else -1).to_numpy(int)
    p = np.asarray(p, float)
    y = np.asarray(y, float)
    keep = (codes >= 0) & np.isfinite(p).all(axis=1) & np.isfinite(y)
    if keep.sum() < min_rows:
        return []
    fit = fit_pooled(make_table(p[keep], y[keep]))
    weighted = (p[keep] * y[keep, None]).sum(axis=0) / p[keep].sum(axis=0)
    out = []
    for a, label in enumerate(labels):
        mine = keep & (codes == a)
        if mine.sum() < min_rows or not np.isfinite(fit.rates[a]):
            continue
        low, high = fit.rate_interval(a)
        out.append(RecordedCheck(group=str(label), rows=int(mine.sum()), recorded_rate=float(y[mine].mean()),
                                 estimate=float(fit.rates[a]), ci_low=low, ci_high=high, weighted=float(weighted[a])))
    return out


__all__ = ["ASSUMPTION", "BirdieFit", "BirdieTable", "RecordedCheck", "bootstrap_pooled", "check_against_recorded",
           "compress", "fieller", "fit_by_place", "fit_pooled", "make_table"]
