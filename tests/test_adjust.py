"""Adjusted gaps against statsmodels on real data (Adult, COMPAS, Berkeley), and the decomposition
against its textbook formulas computed independently here."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import special
from statsmodels.tools.numdiff import approx_fprime_cs

from luskin_core.analyses.adjust import adjust, adjust_cells, cells_from_frame
from luskin_core.errors import LuskinError
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.stats.comparisons import BEYOND, CHANCE, TOO_FEW, WITHIN

ADULT_CONTROLS = ["age", "education-num", "hours-per-week", "occupation", "marital-status"]
NUMBERS = ("age", "fnlwgt", "hours-per-week")   # many values: straight lines; education-num's 16 codes are categories


def parts(controls: list[str]) -> tuple[list[str], list[str]]:
    """The controls a textbook fits as numbers, and those it fits as categories (as the audit reads them)."""
    return [c for c in controls if c in NUMBERS], [c for c in controls if c not in NUMBERS]


def design(frame: pd.DataFrame, group: str, groups: list[str], numeric: list[str], categorical: list[str]):
    """The design a textbook builds: intercept, group dummies (reference = groups[0]), numbers, dummies
    for every level but the most frequent. Named as luskin names its coefficients."""
    cols = {"intercept": np.ones(len(frame))}
    for g in groups[1:]:
        cols[f"group = {g}"] = (frame[group].astype(str) == g).astype(float).to_numpy()
    for name in numeric:
        cols[name] = frame[name].astype(float).to_numpy()
    for name in categorical:
        values = frame[name].astype(str)
        levels = values.value_counts(sort=True).index.tolist()
        counts = values.value_counts()
        levels = sorted(levels, key=lambda v: (-counts[v], v))
        for level in levels[1:]:
            cols[f"{name} = {level}"] = (values == level).astype(float).to_numpy()
    return pd.DataFrame(cols)


def by_name(result):
    return {c.name: c for c in result.coefficients}


@pytest.fixture(scope="module")
def adult_rows(adult):
    return adult.dropna(subset=ADULT_CONTROLS).reset_index(drop=True)


def test_two_groups_match_statsmodels_logit_and_get_margeff(adult_rows):
    spec = AuditSpec(outcome="income", positive=">50K", group_by=("sex",))
    result = adjust(adult_rows, spec, ADULT_CONTROLS)
    assert result.model == "logistic" and result.reference == "Male"
    X = design(adult_rows, "sex", ["Male", "Female"], *parts(ADULT_CONTROLS))
    y = (adult_rows["income"] == ">50K").astype(float)
    fitted = sm.Logit(y, X).fit(method="newton", tol=1e-12, maxiter=100, disp=False)
    mine = by_name(result)
    assert set(mine) == set(X.columns)
    for name in X.columns:
        assert mine[name].estimate == pytest.approx(fitted.params[name], abs=1e-6)
        assert mine[name].se == pytest.approx(fitted.bse[name], abs=1e-6)
    margeff = fitted.get_margeff(at="overall", method="dydx", dummy=True)
    i = list(X.columns[1:]).index("group = Female")
    gap = result.gaps[0]
    assert gap.adjusted_difference == pytest.approx(margeff.margeff[i], abs=1e-6)
    assert gap.adjusted_se == pytest.approx(margeff.margeff_se[i], abs=1e-6)
    low, high = margeff.conf_int()[i]
    assert (gap.adjusted_ci_low, gap.adjusted_ci_high) == pytest.approx((low, high), abs=1e-6)
    assert gap.odds_ratio == pytest.approx(np.exp(fitted.params["group = Female"]), rel=1e-6)
    ci = np.exp(fitted.conf_int().loc["group = Female"])
    assert (gap.odds_ratio_ci_low, gap.odds_ratio_ci_high) == pytest.approx(tuple(ci), rel=1e-6)
    # A 20-point raw gap; with marital status (husbands) and occupation held equal, about 2 points remain.
    assert gap.raw_difference < -0.19 and -0.05 < gap.adjusted_difference < -0.01
    assert gap.verdict == WITHIN and not gap.flagged


def reference_ames(fitted, X: pd.DataFrame, groups: list[str]):
    """statsmodels' own discrete-change AME per group (mean of F(set to g) - F(set to reference)) and
    its delta-method covariance, by complex-step derivatives of the function of statsmodels' params."""
    gcols = [f"group = {g}" for g in groups[1:]]
    base = X.copy()
    base[gcols] = 0.0
    xr = base.to_numpy()

    def ames(params):
        out = []
        for col in gcols:
            xg = base.copy()
            xg[col] = 1.0
            out.append(np.mean(fitted.model.cdf(xg.to_numpy() @ params) - fitted.model.cdf(xr @ params)))
        return np.array(out)

    params = fitted.params.to_numpy()
    J = approx_fprime_cs(params, ames)
    return ames(params), J @ fitted.cov_params().to_numpy() @ J.T


def test_many_groups_match_statsmodels_discrete_change(adult_rows):
    spec = AuditSpec(outcome="income", positive=">50K", group_by=("race",), reference="White")
    result = adjust(adult_rows, spec, ADULT_CONTROLS)
    groups = ["White"] + [g.group for g in result.gaps]
    X = design(adult_rows, "race", groups, *parts(ADULT_CONTROLS))
    y = (adult_rows["income"] == ">50K").astype(float)
    fitted = sm.Logit(y, X).fit(method="newton", tol=1e-12, maxiter=100, disp=False)
    ame, cov = reference_ames(fitted, X, groups)
    for i, gap in enumerate(result.gaps):
        assert gap.adjusted_difference == pytest.approx(ame[i], abs=1e-6)
        assert gap.adjusted_se == pytest.approx(np.sqrt(cov[i, i]), abs=1e-6)
        assert gap.adjusted_ci_low == pytest.approx(ame[i] - 1.959963984540054 * np.sqrt(cov[i, i]), abs=1e-6)
    # Holm over the four comparisons
    from statsmodels.stats.multitest import multipletests

    p = [g.adjusted_p_value for g in result.gaps]
    assert [g.adjusted_p_corrected for g in result.gaps] == pytest.approx(list(multipletests(p, method="holm")[1]))
    assert all(g.verdict in (TOO_FEW, WITHIN, BEYOND, CHANCE) for g in result.gaps)


def test_cluster_robust_matches_statsmodels(adult_rows):
    spec = AuditSpec(outcome="income", positive=">50K", group_by=("sex",))
    controls = ["age", "education-num", "hours-per-week", "marital-status"]
    result = adjust(adult_rows, spec, controls, cluster="occupation")
    X = design(adult_rows, "sex", ["Male", "Female"], *parts(controls))
    y = (adult_rows["income"] == ">50K").astype(float)
    clusters = pd.factorize(adult_rows["occupation"].astype(str))[0]
    fitted = sm.Logit(y, X).fit(method="newton", tol=1e-12, maxiter=100, disp=False, cov_type="cluster",
                                cov_kwds={"groups": clusters})
    mine = by_name(result)
    for name in X.columns:
        assert mine[name].se == pytest.approx(fitted.bse[name], abs=1e-6)
    _, cov = reference_ames(fitted, X, ["Male", "Female"])
    assert result.gaps[0].adjusted_se == pytest.approx(np.sqrt(cov[0, 0]), abs=1e-6)
    assert result.n_clusters == adult_rows["occupation"].nunique()
    assert any("clustered by occupation, which has 14 clusters" in d and "far too narrow" in d
               for d in result.diagnostics)


def test_linear_outcome_matches_ols_and_cluster(adult_rows):
    spec = AuditSpec(outcome="hours-per-week", outcome_type="amount", group_by=("sex",))   # a number: an amount
    controls = ["age", "education-num", "occupation"]
    result = adjust(adult_rows, spec, controls)
    assert result.model == "linear"
    X = design(adult_rows, "sex", ["Male", "Female"], *parts(controls))
    y = adult_rows["hours-per-week"].astype(float)
    fitted = sm.OLS(y, X).fit()
    mine = by_name(result)
    for name in X.columns:
        assert mine[name].estimate == pytest.approx(fitted.params[name], abs=1e-6)
        assert mine[name].se == pytest.approx(fitted.bse[name], abs=1e-6)
    gap = result.gaps[0]
    assert gap.adjusted_difference == pytest.approx(fitted.params["group = Female"], abs=1e-6)
    low, high = fitted.conf_int().loc["group = Female"]
    assert (gap.adjusted_ci_low, gap.adjusted_ci_high) == pytest.approx((low, high), abs=1e-6)
    assert gap.adjusted_p_value == pytest.approx(fitted.pvalues["group = Female"], abs=1e-9)
    assert gap.odds_ratio is None
    clustered = adjust(adult_rows, spec, controls, cluster="marital-status")
    robust = sm.OLS(y, X).fit(cov_type="cluster",
                              cov_kwds={"groups": pd.factorize(adult_rows["marital-status"])[0]})
    assert by_name(clustered)["group = Female"].se == pytest.approx(robust.bse["group = Female"], abs=1e-6)
    assert clustered.gaps[0].adjusted_se == pytest.approx(robust.bse["group = Female"], abs=1e-6)


def test_compas_condition_groups_match_statsmodels(compas):
    from luskin_core.counting.data import get_preset

    spec = get_preset("compas").spec
    controls = ["priors_count", "age", "c_charge_degree", "sex"]
    result = adjust(compas, spec, controls)
    rows = compas[compas["race"].isin(["African-American", "Caucasian"])].dropna(subset=controls)
    rows = rows.assign(group=np.where(rows["race"] == "African-American", "African-American", "Caucasian"))
    rows = rows.reset_index(drop=True)
    groups = [result.reference] + [g.group for g in result.gaps]
    X = design(rows, "group", groups, ["priors_count", "age"], ["c_charge_degree", "sex"])
    y = (rows["two_year_recid"] == 1).astype(float)
    fitted = sm.Logit(y, X).fit(method="newton", tol=1e-12, maxiter=100, disp=False)
    ame, cov = reference_ames(fitted, X, groups)
    assert result.gaps[0].adjusted_difference == pytest.approx(ame[0], abs=1e-6)
    assert result.gaps[0].adjusted_se == pytest.approx(np.sqrt(cov[0, 0]), abs=1e-6)
    assert result.n_rows == len(rows)


def test_aggregated_cells_equal_row_level_fit(adult_rows):
    """Cells (distinct rows with counts) and one cell per row give the same estimates."""
    spec = AuditSpec(outcome="income", positive=">50K", group_by=("race",))
    controls = ["occupation", "marital-status", "sex"]
    cells = cells_from_frame(adult_rows, spec, controls)
    assert len(cells.frame) < 1000  # all-categorical: a few hundred cells for 48,842 rows
    collapsed = adjust_cells(cells, spec)
    y = (adult_rows["income"] == ">50K").astype(float).to_numpy()
    per_row = pd.DataFrame({"group": adult_rows["race"].astype(str).to_numpy(),
                            **{c: adult_rows[c].astype(str).to_numpy() for c in controls},
                            "n": 1, "k": y, "y2": y})
    rows = adjust_cells(type(cells)(per_row, (), tuple(controls), None, False), spec)
    assert len(per_row) == len(adult_rows)
    for a, b in zip(collapsed.coefficients, rows.coefficients):
        assert a.name == b.name
        assert a.estimate == pytest.approx(b.estimate, abs=1e-9)
        assert a.se == pytest.approx(b.se, abs=1e-9)
    for a, b in zip(collapsed.gaps, rows.gaps):
        assert a.adjusted_difference == pytest.approx(b.adjusted_difference, abs=1e-12)
        assert a.adjusted_ci_low == pytest.approx(b.adjusted_ci_low, abs=1e-9)


def berkeley_rows() -> pd.DataFrame:
    table = pd.read_csv("tests/fixtures/ucb_admissions.csv")
    rows = []
    for r in table.itertuples():
        rows += [(r.department, r.sex, "yes")] * r.admitted + [(r.department, r.sex, "no")] * r.rejected
    return pd.DataFrame(rows, columns=["department", "sex", "admitted"])


def test_berkeley_department_turns_the_gap_around():
    spec = AuditSpec(outcome="admitted", positive="yes", group_by=("sex",))
    result = adjust(berkeley_rows(), spec, ["department"])
    gap = result.gaps[0]
    assert (gap.group, gap.reference) == ("Female", "Male")
    assert gap.raw_difference == pytest.approx(-0.1416, abs=5e-4)
    assert 0.01 < gap.adjusted_difference < 0.03
    assert gap.adjusted_ci_low < 0 < gap.adjusted_ci_high
    assert gap.verdict == WITHIN and not gap.flagged
    assert "a raw gap of -14.2 points" in gap.sentence
    assert "the gap is +1.9 points" in gap.sentence
    assert "The interval includes zero" in gap.sentence
    # The department explains all of the raw gap and more.
    assert gap.explained == pytest.approx(gap.raw_difference - gap.unexplained, abs=0)
    assert dict(gap.explained_by)["department"] == pytest.approx(gap.explained, abs=1e-12)


# ------------------------------------------------------------------------------------------
# The decomposition, against the textbook formulas computed here
# ------------------------------------------------------------------------------------------
def test_oaxaca_blinder_matches_textbook(adult_rows):
    spec = AuditSpec(outcome="hours-per-week", outcome_type="amount", group_by=("sex",))
    controls = ["age", "education-num", "occupation"]
    result = adjust(adult_rows, spec, controls)
    gap = result.gaps[0]
    X = design(adult_rows, "sex", ["Male", "Female"], *parts(controls))
    y = adult_rows["hours-per-week"].astype(float).to_numpy()
    beta, *_ = np.linalg.lstsq(X.to_numpy(), y, rcond=None)
    beta = pd.Series(beta, index=X.columns)
    female = (adult_rows["sex"] == "Female").to_numpy()
    diff = X[female].mean() - X[~female].mean()
    terms = (diff * beta).drop(["intercept", "group = Female"])
    raw = y[female].mean() - y[~female].mean()
    assert gap.raw_difference == pytest.approx(raw, abs=1e-9)
    assert gap.explained == pytest.approx(terms.sum(), abs=1e-8)
    assert gap.unexplained == pytest.approx(beta["group = Female"], abs=1e-8)
    assert gap.explained + gap.unexplained == gap.raw_difference
    split = dict(gap.explained_by)
    assert split["age"] == pytest.approx(terms["age"], abs=1e-9)
    assert split["occupation"] == pytest.approx(terms[[c for c in terms.index if c.startswith("occupation")]].sum(),
                                                abs=1e-9)
    assert sum(split.values()) == pytest.approx(gap.explained, abs=1e-9)


def test_yun_decomposition_matches_textbook(adult_rows):
    spec = AuditSpec(outcome="income", positive=">50K", group_by=("sex",))
    result = adjust(adult_rows, spec, ADULT_CONTROLS)
    gap = result.gaps[0]
    X = design(adult_rows, "sex", ["Male", "Female"], *parts(ADULT_CONTROLS))
    y = (adult_rows["income"] == ">50K").astype(float).to_numpy()
    b = sm.Logit(y, X).fit(method="newton", tol=1e-12, disp=False).params
    female = (adult_rows["sex"] == "Female").to_numpy()
    xf = X[female].to_numpy()
    xf_as_male = X[female].assign(**{"group = Female": 0.0}).to_numpy()
    xm = X[~female].to_numpy()
    bb = b.to_numpy()
    explained = special.expit(xf_as_male @ bb).mean() - special.expit(xm @ bb).mean()
    unexplained = special.expit(xf @ bb).mean() - special.expit(xf_as_male @ bb).mean()
    assert gap.unexplained == pytest.approx(unexplained, abs=1e-8)
    assert gap.explained == pytest.approx(explained, abs=1e-8)
    assert gap.explained + gap.unexplained == gap.raw_difference
    # Yun's weights: each control's share of (xbar_f - xbar_m) beta
    d = (X[female].mean() - X[~female].mean()) * b
    d = d.drop(["intercept", "group = Female"])
    weights = {c: d[[k for k in d.index if k == c or k.startswith(f"{c} = ")]].sum() / d.sum() for c in ADULT_CONTROLS}
    for name, value in gap.explained_by:
        assert value == pytest.approx(weights[name] * explained, abs=1e-8)
    assert gap.explained_ci_low < gap.explained < gap.explained_ci_high
    largest = max(gap.explained_by, key=lambda item: abs(item[1]))[0]
    assert f"(the largest parts: {largest} " in gap.sentence


# ------------------------------------------------------------------------------------------
# Diagnostics in words
# ------------------------------------------------------------------------------------------
def test_diagnostics_name_proxies_single_values_and_perfect_prediction(adult_rows):
    rng = np.random.default_rng(3)
    office = adult_rows["workclass"].astype(str).to_numpy(copy=True)
    rich = np.flatnonzero((adult_rows["income"] == ">50K").to_numpy())[:60]
    office[rich] = "HQ"  # every row at HQ earns >50K
    frame = adult_rows.assign(
        office=office,
        code=np.where(adult_rows["sex"] == "Male", "A", "B"),
        constant=7.0,
        region=np.where(rng.random(len(adult_rows)) < 0.05,
                        np.where(adult_rows["sex"] == "Male", "B", "A"), np.where(adult_rows["sex"] == "Male", "A", "B")),
    )
    spec = AuditSpec(outcome="income", positive=">50K", group_by=("sex",))
    with pytest.raises(LuskinError, match="determine the group exactly"):
        adjust(frame, spec, ["age", "code"])
    result = adjust(frame, spec, ["age", "constant", "region", "office"])
    text = " ".join(result.sentences())
    assert "'constant' holds a single value" in text
    assert "'region' alone tells the group of 95% of rows" in text
    assert "Perfect prediction" in text and "office = HQ (60 rows, all positive)" in text


def test_a_numeric_proxy_is_named_alike_in_memory_in_the_cells_and_in_the_fit_from_sums(adult_rows):
    """One rule bins a numeric control for the proxy check, whichever path fits: a pay grade that tracks sex
    (thousands of values) and a two-valued code are named by all three; age, which does not, by none."""
    from luskin_core.counting.sources import Source

    male = (adult_rows["sex"] == "Male").to_numpy()
    rng = np.random.default_rng(5)
    frame = adult_rows.assign(
        grade=adult_rows["age"].to_numpy() * 0.3 + np.where(male, 40.0, 0.0) + rng.normal(0, 3, len(male)).round(2),
        code=np.where(rng.random(len(male)) < 0.03, np.where(male, 1.0, 2.0), np.where(male, 2.0, 1.0)),
    )
    spec = AuditSpec(outcome="income", positive=">50K", group_by=("sex",))
    for controls, proxy in ((["grade", "education-num"], "'grade' alone tells the group of 98% of rows"),
                            (["age", "code"], "'code' alone tells the group of 97% of rows")):
        results = [adjust(frame, spec, controls), adjust(Source.from_frame(frame), spec, controls),
                   adjust(Source.from_frame(frame), spec, controls, max_cells=100)]
        assert "fitted from sums" in results[2].rows_note
        for result in results:
            named = [d for d in result.diagnostics if "alone tells the group" in d]
            assert len(named) == 1 and named[0].startswith(proxy), result.diagnostics
        assert results[0].diagnostics == results[1].diagnostics == results[2].diagnostics


def test_proxy_levels_keep_ties_together_and_weigh_about_a_twentieth(adult_rows):
    """The proxy check's bins against brute force: few occupied bins are each a level (a crosstab of value and
    group); many are merged into 20 levels of about equal weight, equal values always in one level."""
    from luskin_core.analyses.adjust_diagnostics import fine_bins, proxy_levels

    rng = np.random.default_rng(11)
    group = rng.integers(0, 3, 5_000)
    few = rng.integers(0, 12, 5_000).astype(float) * 2.5
    fine = np.zeros((1000, 3))
    np.add.at(fine, (fine_bins(few, few.min(), few.max()), group), 1.0)
    assert np.array_equal(proxy_levels(fine), pd.crosstab(few, group).to_numpy())
    for x in (adult_rows["fnlwgt"].to_numpy(dtype=float), adult_rows["age"].to_numpy(dtype=float),
              np.round(rng.lognormal(10, 1, 20_000), 0)):
        g = rng.integers(0, 2, len(x))
        bins = fine_bins(x, x.min(), x.max())
        fine = np.zeros((1000, 2))
        np.add.at(fine, (bins, g), 1.0)
        levels = proxy_levels(fine)
        assert levels.sum() == len(x)
        occupied = np.bincount(bins, minlength=1000)
        if (occupied > 0).sum() <= 50:
            assert len(levels) == (occupied > 0).sum()
            continue
        weights = levels.sum(axis=1) / len(x)
        assert len(levels) == 20 and weights.max() <= 1 / 20 + occupied.max() / len(x) + 1e-12
        order = np.argsort(x, kind="stable")  # levels follow the values: ties share a level
        level_of_bin = np.searchsorted(np.cumsum(levels.sum(axis=1)), np.cumsum(occupied), side="left")
        assert np.all(np.diff(level_of_bin[bins[order]]) >= 0)


def test_too_few_rows_and_user_mistakes(adult_rows):
    spec = AuditSpec(outcome="income", positive=">50K", group_by=("race",))
    small = adult_rows.sample(400, random_state=1)
    result = adjust(small, spec, ["age", "occupation", "marital-status"])
    text = " ".join(result.sentences())
    assert "rows of the rarer outcome per coefficient" in text
    assert any(g.verdict == TOO_FEW for g in result.gaps)
    with pytest.raises(LuskinError, match="forms the groups"):
        adjust(adult_rows, spec, ["race"])
    with pytest.raises(LuskinError, match="at least one control"):
        adjust(adult_rows, spec, [])
    with pytest.raises(LuskinError):
        adjust(adult_rows, spec, ["no_such_column"])


def test_result_views_agree(adult_rows):
    spec = AuditSpec(outcome="income", positive=">50K", group_by=("sex",))
    result = adjust(adult_rows, spec, ["age", "occupation"], tolerance=0.02)
    document = result.to_dict()
    assert set(document["adjusted"][0]) == {
        "group", "reference", "raw_difference", "adjusted_difference", "adjusted_ci_low", "adjusted_ci_high",
        "adjusted_p_value", "odds_ratio", "odds_ratio_ci_low", "odds_ratio_ci_high", "explained", "unexplained",
        "verdict"}
    frame = result.to_frame()
    assert frame.loc[0, "adjusted_difference"] == document["adjusted"][0]["adjusted_difference"]
    assert result.tolerance == 0.02
    assert document["sentences"] == result.sentences()


# ------------------------------------------------------------------------------------------
# In the engine: the same cells from a GROUP BY, the same estimates
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("spec", "controls"), [
    (AuditSpec(outcome="income", positive=">50K", group_by=("race",)), ["occupation", "marital-status", "sex"]),
    (AuditSpec(outcome="income", positive=">50K", group_by=("race", "sex")), ["age", "education-num", "occupation"]),
    (AuditSpec(outcome="hours-per-week", outcome_type="score", protected="sex == Female"), ["age", "occupation"]),
])
def test_engine_cells_give_the_in_memory_estimates(adult, spec, controls):
    from luskin_core.counting.sources import Source

    in_memory = adjust(adult, spec, controls, cluster="native-country")
    engine = adjust(Source.from_frame(adult), spec, controls, cluster="native-country")
    assert engine.n_cells == in_memory.n_cells and engine.n_rows == in_memory.n_rows
    for a, b in zip(in_memory.coefficients, engine.coefficients):
        assert a.name == b.name
        assert a.estimate == pytest.approx(b.estimate, abs=1e-9)
        assert a.se == pytest.approx(b.se, abs=1e-9)
    for a, b in zip(in_memory.gaps, engine.gaps):
        assert (a.group, a.reference, a.verdict) == (b.group, b.reference, b.verdict)
        for key in ("raw_difference", "adjusted_difference", "adjusted_ci_low", "adjusted_ci_high", "explained"):
            assert getattr(a, key) == pytest.approx(getattr(b, key), abs=1e-9)


# ------------------------------------------------------------------------------------------
# In the engine, numeric controls with many values: sums per key, one query per Newton step
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("spec", "controls", "cluster"), [
    (AuditSpec(outcome="income", positive=">50K", group_by=("race",)),
     ["age", "education-num", "hours-per-week", "occupation", "marital-status", "relationship"], None),
    (AuditSpec(outcome="income", positive=">50K", group_by=("race", "sex")), ["age", "fnlwgt", "occupation"],
     "native-country"),
    (AuditSpec(outcome="hours-per-week", outcome_type="score", protected="sex == Female"),
     ["age", "fnlwgt", "occupation"], "native-country"),
])
def test_engine_sums_give_the_in_memory_estimates(adult, spec, controls, cluster):
    """Past the cell cap the engine fits from per-key sums: every row, the in-memory numbers to 1e-9."""
    from luskin_core.counting.sources import Source

    in_memory = adjust(adult, spec, controls, cluster=cluster)
    engine = adjust(Source.from_frame(adult), spec, controls, cluster=cluster, max_cells=100)
    assert "fitted from sums the engine computed" in engine.rows_note and "not from a sample" in engine.rows_note
    assert engine.n_rows == in_memory.n_rows and engine.converged
    assert [c.name for c in engine.coefficients] == [c.name for c in in_memory.coefficients]
    for a, b in zip(in_memory.coefficients, engine.coefficients):
        assert b.estimate == pytest.approx(a.estimate, abs=1e-9)
        assert b.se == pytest.approx(a.se, abs=1e-9)
    for a, b in zip(in_memory.gaps, engine.gaps):
        assert (a.group, a.reference, a.verdict, a.flagged) == (b.group, b.reference, b.verdict, b.flagged)
        for key in ("raw_difference", "adjusted_difference", "adjusted_ci_low", "adjusted_ci_high", "adjusted_p_value",
                    "explained", "explained_ci_low", "unexplained_ci_high"):
            assert getattr(b, key) == pytest.approx(getattr(a, key), abs=1e-9)
        assert [name for name, _ in a.explained_by] == [name for name, _ in b.explained_by]
        assert [v for _, v in b.explained_by] == pytest.approx([v for _, v in a.explained_by], abs=1e-9)
    assert engine.diagnostics == in_memory.diagnostics


@pytest.mark.parametrize("kind", ["parquet", "duckdb"])
def test_engine_sums_on_a_file_leave_the_engine_as_they_found_it(adult, tmp_path, monkeypatch, kind):
    """A file's rows are kept once, in key order, for Newton's passes: the numbers are the in-memory ones, the
    table is dropped and DuckDB's memory limit restored after, nothing spills into the working folder; a
    database opened read-only keeps them the same way (a temporary table is allowed there)."""
    import duckdb

    from luskin_core.counting.sources import open_source

    monkeypatch.chdir(tmp_path)
    spec = AuditSpec(outcome="income", positive=">50K", group_by=("race",))
    controls = ["age", "fnlwgt", "hours-per-week", "occupation"]
    frame = adult.assign(occupation=adult["occupation"].astype("string"))
    if kind == "parquet":
        frame.to_parquet(tmp_path / "adult.parquet")
        source = open_source(str(tmp_path / "adult.parquet"))
    else:
        with duckdb.connect(str(tmp_path / "adult.duckdb")) as con:
            con.register("frame", frame)
            con.execute("CREATE TABLE adult AS SELECT * FROM frame")
        source = open_source(str(tmp_path / "adult.duckdb"), "adult")
    limit = source.backend.con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
    engine = adjust(source, spec, controls, max_cells=100)
    in_memory = adjust(adult, spec, controls)
    assert "fitted from sums the engine computed" in engine.rows_note
    for a, b in zip(in_memory.gaps, engine.gaps):
        assert b.adjusted_difference == pytest.approx(a.adjusted_difference, abs=1e-9)
        assert b.adjusted_ci_high == pytest.approx(a.adjusted_ci_high, abs=1e-9)
        assert b.explained == pytest.approx(a.explained, abs=1e-9)
    assert engine.diagnostics == in_memory.diagnostics
    con = source.backend.con
    tables = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables() WHERE temporary").fetchall()]
    assert not [t for t in tables if t.startswith("_luskin_fit_")]
    assert con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0] == limit
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"adult.{kind}"]


def test_engine_sums_match_statsmodels_logit(adult):
    """The engine's logistic fit from sums against statsmodels Logit on the rows and its discrete-change AME."""
    from luskin_core.counting.sources import Source

    controls = ["age", "fnlwgt", "hours-per-week", "occupation", "marital-status"]
    spec = AuditSpec(outcome="income", positive=">50K", group_by=("sex",))
    result = adjust(Source.from_frame(adult), spec, controls, max_cells=1_000)
    assert "not from a sample" in result.rows_note
    rows = adult.assign(occupation=adult["occupation"].astype("string").fillna("Unknown"))
    X = design(rows, "sex", ["Male", "Female"], *parts(controls))
    y = (rows["income"] == ">50K").astype(float)
    fitted = sm.Logit(y, X).fit(method="newton", tol=1e-12, maxiter=100, disp=False)
    mine = by_name(result)
    assert set(mine) == set(X.columns)
    for name in X.columns:
        assert mine[name].estimate == pytest.approx(fitted.params[name], abs=1e-6, rel=1e-6)
        assert mine[name].se == pytest.approx(fitted.bse[name], abs=1e-6, rel=1e-6)
    margeff = fitted.get_margeff(at="overall", method="dydx", dummy=True)
    i = list(X.columns[1:]).index("group = Female")
    gap = result.gaps[0]
    assert gap.adjusted_difference == pytest.approx(margeff.margeff[i], abs=1e-6)
    assert gap.adjusted_se == pytest.approx(margeff.margeff_se[i], abs=1e-6)


# ------------------------------------------------------------------------------------------
# Numeric controls fitted as curves (restricted cubic splines)
# ------------------------------------------------------------------------------------------
def natural_spline_columns(x: np.ndarray, knots) -> np.ndarray:
    """A basis of the natural cubic splines with these knots, built from their definition rather than Harrell's
    closed form: sum_i c_i (x - t_i)^3_+ with sum c_i = 0 and sum c_i t_i = 0 (no square or cube beyond the
    outer knots), one column per vector of the constraints' null space."""
    from scipy.linalg import null_space

    t = np.asarray(knots, dtype=float)
    C = null_space(np.vstack([np.ones(len(t)), t]))
    return np.maximum(x[:, None] - t[None, :], 0.0) ** 3 @ C / 1e6


def test_knots_sit_where_hmisc_puts_them():
    """Harrell's rule (Hmisc rcspline.eval): 3 knots at 10/50/90%, 4-6 from 5% to 95%, 7 from 2.5% to 97.5%."""
    from luskin_core.analyses.adjust_model import spline_probs

    assert spline_probs(3) == pytest.approx([0.10, 0.5, 0.90])
    assert spline_probs(4) == pytest.approx([0.05, 0.35, 0.65, 0.95])
    assert spline_probs(5) == pytest.approx([0.05, 0.275, 0.5, 0.725, 0.95])
    assert spline_probs(6) == pytest.approx([0.05, 0.23, 0.41, 0.59, 0.77, 0.95])
    assert spline_probs(7) == pytest.approx([0.025, 0.18333, 0.34167, 0.5, 0.65833, 0.81667, 0.975], abs=1e-5)


def test_curves_match_statsmodels_on_the_natural_spline_space(adult_rows):
    """age (4 knots) and hours-per-week (5 knots) as curves: the groups' coefficients, their AMEs and the
    log-likelihood equal statsmodels Logit on an independent basis of the same natural splines."""
    from luskin_core.analyses.adjust_model import spline_knots, spline_probs

    spec = AuditSpec(outcome="income", positive=">50K", group_by=("sex",))
    controls = ["education-num", "occupation"]
    curves = {"age": 4, "hours-per-week": 5}
    result = adjust(adult_rows, spec, controls, splines=curves)
    X = design(adult_rows, "sex", ["Male", "Female"], ["age", "hours-per-week"], ["education-num", "occupation"])
    for name, count in curves.items():
        x = adult_rows[name].to_numpy(dtype=float)
        knots = spline_knots(name, list(np.quantile(x, spline_probs(count))))
        assert f"{name} (knots at {', '.join(f'{k:g}' for k in knots)})" in result.rows_note
        extra = natural_spline_columns(x, knots)
        for j in range(extra.shape[1]):
            X[f"{name} spline {j}"] = extra[:, j]
    y = (adult_rows["income"] == ">50K").astype(float)
    fitted = sm.Logit(y, X).fit(method="newton", tol=1e-12, maxiter=100, disp=False)
    mine = by_name(result)
    assert len(mine) == X.shape[1] and "age (curve 2)" in mine and "hours-per-week (curve 2)" in mine  # 5 knots, two alike (40)
    assert mine["group = Female"].estimate == pytest.approx(fitted.params["group = Female"], abs=1e-6)
    assert mine["group = Female"].se == pytest.approx(fitted.bse["group = Female"], abs=1e-6)
    margeff = fitted.get_margeff(at="overall", method="dydx", dummy=True)
    i = list(X.columns[1:]).index("group = Female")
    assert result.gaps[0].adjusted_difference == pytest.approx(margeff.margeff[i], abs=1e-6)
    assert result.gaps[0].adjusted_se == pytest.approx(margeff.margeff_se[i], abs=1e-6)
    straight = adjust(adult_rows, spec, ["age", "hours-per-week", *controls])
    assert result.gaps[0].adjusted_difference != pytest.approx(straight.gaps[0].adjusted_difference, abs=1e-4)
    # the decomposition credits a curve's terms to its control
    names = [name for name, _ in result.gaps[0].explained_by]
    assert sorted(names) == sorted(["education-num", "occupation", "age", "hours-per-week"])


def test_curves_in_the_engine_equal_in_memory(adult):
    """The engine's cells (terms computed from each cell's value) and its fit from sums (terms computed in the
    engine) give the in-memory numbers."""
    from luskin_core.counting.sources import Source

    spec = AuditSpec(outcome="income", positive=">50K", group_by=("race",))
    in_memory = adjust(adult, spec, ["fnlwgt", "occupation"], splines={"age": 5})
    for max_cells in (None, 100):
        engine = adjust(Source.from_frame(adult), spec, ["fnlwgt", "occupation"], splines={"age": 5},
                        max_cells=max_cells)
        assert ("fitted from sums" in engine.rows_note) == (max_cells is not None)
        assert "Fitted as curves" in engine.rows_note
        assert [c.name for c in engine.coefficients] == [c.name for c in in_memory.coefficients]
        for a, b in zip(in_memory.coefficients, engine.coefficients):
            assert b.estimate == pytest.approx(a.estimate, abs=1e-8, rel=1e-8)
        for a, b in zip(in_memory.gaps, engine.gaps):
            for key in ("adjusted_difference", "adjusted_ci_high", "explained"):
                assert getattr(b, key) == pytest.approx(getattr(a, key), abs=1e-9)
            assert [n for n, _ in a.explained_by] == [n for n, _ in b.explained_by]
            assert [v for _, v in b.explained_by] == pytest.approx([v for _, v in a.explained_by], abs=1e-9)
        assert engine.diagnostics == in_memory.diagnostics


@pytest.mark.parametrize(("splines", "categorical", "bins", "message"), [
    ({"occupation": 4}, [], {}, "holds categories, so it cannot be fitted as a curve"),
    ({"age": 4}, ["age"], {}, "holds categories, so it cannot be fitted as a curve"),
    ({"age": 4}, [], {"age": 3}, "both cut into bins and fitted as a curve"),
    ({"age": 9}, [], {}, "3 to 7 knots"),
])
def test_a_curve_that_cannot_be_fitted_is_said_in_words(adult, splines, categorical, bins, message):
    spec = AuditSpec(outcome="income", positive=">50K", group_by=("sex",))
    with pytest.raises(LuskinError, match=message):
        adjust(adult, spec, ["hours-per-week"], categorical=categorical, bins=bins or None, splines=splines)


# ------------------------------------------------------------------------------------------
# Numeric controls cut into bins
# ------------------------------------------------------------------------------------------
def test_bins_equal_a_hand_binned_category_and_the_engine(adult):
    """``bins={"age": 4}``: the quartile cuts (rounded as the audit's group bins), each bin a category; the
    same fit as a column binned by hand, and the same in the engine's fit from sums."""
    from luskin_core.counting.plan import round_significant
    from luskin_core.counting.sources import Source

    spec = AuditSpec(outcome="income", positive=">50K", group_by=("sex",))
    result = adjust(adult, spec, ["hours-per-week", "fnlwgt"], bins={"age": 4})
    cuts = sorted({round_significant(q) for q in np.quantile(adult["age"], [0.25, 0.5, 0.75])})
    assert len(cuts) == 3
    by_hand = adult.assign(age=pd.cut(adult["age"], [-np.inf, *cuts, np.inf], right=False,
                                      labels=["a", "b", "c", "d"]).astype(str))
    expected = adjust(by_hand, spec, ["hours-per-week", "fnlwgt", "age"])
    assert "age" in result.categorical
    # a bin's coefficient is named by its words alone ("28 ≤ age < 37", not "age = 28 ≤ age < 37")
    words = {f"age < {cuts[0]:g}", f"{cuts[0]:g} ≤ age < {cuts[1]:g}", f"{cuts[1]:g} ≤ age < {cuts[2]:g}",
             f"age ≥ {cuts[2]:g}"}
    named = {c.name for c in result.coefficients} & words
    assert len(named) == 3 and not any(c.name.startswith("age = ") for c in result.coefficients)
    # the same model (fnlwgt's scale makes Newton stop a few 1e-9 apart on differently ordered cells)
    assert sorted(c.estimate for c in result.coefficients) == pytest.approx(
        sorted(c.estimate for c in expected.coefficients), abs=1e-7)
    assert result.gaps[0].adjusted_difference == pytest.approx(expected.gaps[0].adjusted_difference, abs=1e-9)
    engine = adjust(Source.from_frame(adult), spec, ["hours-per-week", "fnlwgt"], bins={"age": 4}, max_cells=100)
    assert "not from a sample" in engine.rows_note
    assert [c.name for c in engine.coefficients] == [c.name for c in result.coefficients]
    for a, b in zip(result.coefficients, engine.coefficients):
        assert b.estimate == pytest.approx(a.estimate, abs=1e-9) and b.se == pytest.approx(a.se, abs=1e-9)
    with pytest.raises(LuskinError, match="2 to 50 bins"):
        adjust(adult, spec, ["hours-per-week"], bins={"age": 1})
    with pytest.raises(LuskinError, match="holds text"):
        adjust(adult, spec, ["hours-per-week"], bins={"occupation": 3})


def test_cli_control_bins(capsys):
    import json

    from luskin_cli.main import main

    args = ["adjust", "--preset", "adult", "--groups", "sex", "--controls", "hours-per-week", "--control-bins",
            "age=4", "--json"]
    assert main(args) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["categorical"] == ["age"]
    assert sum("age" in c["name"] and c["name"] != "hours-per-week" for c in document["coefficients"]) == 3
    assert not any(c["name"].startswith("age = ") for c in document["coefficients"])
    assert main(["adjust", "--preset", "adult", "--groups", "sex", "--control-bins", "age"]) == 2
    assert "COLUMN=NUMBER" in capsys.readouterr().err


def test_cli_control_curves(capsys):
    """``--control-curves age=4``: age fitted as a restricted cubic spline, said in the note; mistakes in words."""
    import json

    from luskin_cli.main import main

    args = ["adjust", "--preset", "adult", "--groups", "sex", "--controls", "hours-per-week", "--control-curves",
            "age=4", "--json"]
    assert main(args) == 0
    document = json.loads(capsys.readouterr().out)
    assert "age" in document["controls"] and "age" not in document["categorical"]
    names = [c["name"] for c in document["coefficients"]]
    assert "age" in names and "age (curve 1)" in names and "age (curve 2)" in names
    assert "Fitted as curves" in json.dumps(document)
    assert main(["adjust", "--preset", "adult", "--groups", "sex", "--control-curves", "age"]) == 2
    assert "--control-curves takes COLUMN=NUMBER" in capsys.readouterr().err
    assert main(["adjust", "--preset", "adult", "--groups", "sex", "--control-curves", "occupation=4"]) == 2
    assert "cannot be fitted as a curve" in capsys.readouterr().err
