"""The raw gap split into the part the controls explain and the part they do not.

Numbers: Oaxaca-Blinder, twofold, with the pooled model's coefficients (every group in one
linear model with the group as a factor; Fortin 2008, Jann 2008's ``pooled`` option):

    mean_g - mean_r = (xbar_g - xbar_r) beta  [explained]  +  delta_g  [unexplained]

(the identity is exact for least squares with an intercept and the group factor). Per control
the explained part is the sum of (xbar_g - xbar_r) beta over the control's columns; a
categorical control's total does not depend on its base level.

Yes/no: Yun's (2004) non-linear decomposition with the same pooled logistic model, evaluated
on the group's own rows:

    explained   = mean_g F(x beta) - mean_r F(x beta)          (characteristics, at the reference's effect)
    unexplained = mean_g F(x beta + delta_g) - mean_g F(x beta)

Chosen over Fairlie's because it is deterministic (Fairlie's detailed split depends on a random
matching and on the order of the controls) and its parts add up to the raw gap exactly (a
logistic model with an intercept and the group factor reproduces each group's share). The
detailed split weights the explained part by each control's share of (xbar_g - xbar_r) beta.

Intervals: the delta method over the model's coefficients (model-based or cluster-robust),
holding the groups' control means fixed; the per-control split is given without intervals.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy import special

from luskin_core.analyses.adjust_model import dot, xtv, zero_column
from luskin_core.stats.inference import critical_value

if TYPE_CHECKING:
    from luskin_core.analyses.adjust_model import Design, Fit


@dataclass(frozen=True)
class Decomposition:
    """One group against the reference: the unexplained part and intervals, and the split per control."""

    explained: float
    unexplained: float
    explained_ci: tuple[float, float]
    unexplained_ci: tuple[float, float]
    by_control: tuple[tuple[str, float], ...]


def decompose(design: Design, fit: Fit, n: np.ndarray, k: np.ndarray, *, linear: bool) -> list[Decomposition]:
    """The twofold decomposition of each non-reference group's raw gap (design.group_cols order)."""
    X, beta, eta = design.X, fit.beta, fit.eta
    crit = critical_value(fit.df_resid if fit.use_t else None)
    ref = design.group_code == 0
    gcols = list(design.group_cols)
    other = np.ones(X.shape[1], dtype=bool)
    other[gcols] = False
    other[0] = False  # the intercept cancels between groups
    n_r = float(n[ref].sum())
    xbar_r = xtv(X[ref], n[ref]) / n_r
    out = []
    for i, c in enumerate(gcols):
        mine = design.group_code == i + 1
        n_g = float(n[mine].sum())
        raw = float(k[mine].sum() / n_g - k[ref].sum() / n_r)
        xbar_g = xtv(X[mine], n[mine]) / n_g
        delta_x = np.where(other, xbar_g - xbar_r, 0.0)
        contrib = delta_x * beta
        if linear:
            unexplained = float(beta[c])
            g_unexp = np.zeros_like(beta)
            g_unexp[c] = 1.0
            g_expl = delta_x
            scale = 1.0
        else:
            x_g = X[mine]
            eta_g = eta[mine]
            cf = eta_g - beta[c]  # the group's rows with the reference's effect
            mu_g, mu_cf, mu_r = special.expit(eta_g), special.expit(cf), special.expit(eta[ref])
            d_g, d_cf, d_r = mu_g * (1 - mu_g), mu_cf * (1 - mu_cf), mu_r * (1 - mu_r)
            unexplained = dot(n[mine], mu_g - mu_cf) / n_g
            x_cf = zero_column(x_g, c)
            g_unexp = (xtv(x_g, n[mine] * d_g) - xtv(x_cf, n[mine] * d_cf)) / n_g
            g_expl = xtv(x_cf, n[mine] * d_cf) / n_g - xtv(X[ref], n[ref] * d_r) / n_r
            total = float(contrib.sum())
            scale = (raw - unexplained) / total if total != 0 else 0.0
        by_control = [(name, float(contrib[list(cols)].sum() * scale)) for name, cols in design.control_cols.items()]
        out.append(decomposition(raw, unexplained, g_expl, g_unexp, fit.cov, crit, by_control))
    return out


def decomposition(raw: float, unexplained: float, g_expl: np.ndarray, g_unexp: np.ndarray, cov: np.ndarray,
                  crit: float, by_control: list[tuple[str, float]]) -> Decomposition:
    """The two parts of a raw gap with their delta-method intervals (``g_*``: each part's gradient in the
    coefficients), whether the sums came from the rows or from the engine."""
    explained = raw - unexplained
    se_e = float(np.sqrt(max(g_expl @ cov @ g_expl, 0.0)))
    se_u = float(np.sqrt(max(g_unexp @ cov @ g_unexp, 0.0)))
    return Decomposition(explained, unexplained, (explained - crit * se_e, explained + crit * se_e),
                         (unexplained - crit * se_u, unexplained + crit * se_u), tuple(by_control))
