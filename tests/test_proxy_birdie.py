"""BIRDiE (luskin_core.analyses.birdie): the maximum-likelihood rates against scipy's optimiser, the sufficient
statistics, and a small version of the simulation where the truth is known (benchmarks/bench_proxy_birdie.py
runs the full one)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize

from luskin_core.analyses import birdie
from luskin_core.analyses.proxy_simulation import TRUE_RATES, population_rates, simulate
from luskin_core.errors import LuskinError


def _small(seed: int, n: int = 3000) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(3, 0.4), n)
    race = (p.cumsum(axis=1) < rng.random(n)[:, None]).sum(axis=1)
    theta = np.array([0.3, 0.6, 0.45])
    y = (rng.random(n) < theta[race]).astype(float)
    return p, y, theta


def test_pooled_fit_is_the_maximum_likelihood_scipy_finds() -> None:
    p, y, _ = _small(0)
    fit = birdie.fit_pooled(birdie.make_table(p, y))

    def negll(t: np.ndarray) -> float:
        m = p @ t
        return -float(np.sum(y * np.log(m) + (1 - y) * np.log1p(-m)))

    ref = minimize(negll, np.full(3, 0.5), method="L-BFGS-B", bounds=[(1e-6, 1 - 1e-6)] * 3,
                   options={"ftol": 1e-15, "gtol": 1e-10})
    assert fit.converged
    np.testing.assert_allclose(fit.rates, ref.x, atol=2e-5)
    assert negll(fit.rates) <= ref.fun + 1e-8


def test_sandwich_matches_a_row_bootstrap_and_merged_rows_change_nothing() -> None:
    p, y, _ = _small(1)
    p = np.round(p, 1)  # many identical lines, merged by the table
    p = p / p.sum(axis=1, keepdims=True)
    table = birdie.make_table(p, y)
    assert len(table.y) < len(y) and table.n == len(y)
    merged = birdie.fit_pooled(table)
    raw = birdie.fit_pooled(birdie.BirdieTable(p=p, y=y, count=np.ones(len(y))))
    np.testing.assert_allclose(merged.rates, raw.rates, atol=1e-9)
    np.testing.assert_allclose(merged.cov, raw.cov, rtol=1e-6, atol=1e-12)
    boot = birdie.bootstrap_pooled(table, n_boot=150, seed=3, fit=merged)
    np.testing.assert_allclose(np.sqrt(np.diag(boot)), merged.se(), rtol=0.3)


def test_em_steps_climb() -> None:
    p, y, _ = _small(2)
    c = np.ones(len(y))
    theta = np.full(3, 0.5)
    last = birdie._loglik(theta, p, y, c)
    for _ in range(20):
        theta = birdie._em_step(theta, p, y, c)
        now = birdie._loglik(theta, p, y, c)
        assert now >= last - 1e-9
        last = now


def test_a_group_with_no_member_has_no_rate() -> None:
    p, y, _ = _small(3, 500)
    p = np.column_stack([p, np.zeros(len(p))])
    fit = birdie.fit_pooled(birdie.make_table(p, y))
    assert np.isnan(fit.rates[3]) and np.isfinite(fit.rates[:3]).all()
    with pytest.raises(LuskinError):
        birdie.make_table(p, y * 2)
    with pytest.raises(LuskinError):
        birdie.fit_pooled(birdie.make_table(p[:0], y[:0]))


def test_simulation_birdie_is_unbiased_and_covers_where_weighted_does_not() -> None:
    """Thirty data sets of 20,000 people drawn from the Census tables (outcome by true race only)."""
    rng = np.random.default_rng(20261127)
    black, white = 2, 1
    truth = TRUE_RATES[black] / TRUE_RATES[white]
    est, weighted, covered = [], [], 0
    for _ in range(30):
        s = simulate(20_000, rng)
        fit = birdie.fit_pooled(birdie.make_table(s.p, s.y))
        ratio, low, high = fit.impact_ratio(black, white)
        est.append(ratio)
        covered += low <= truth <= high
        w = (s.p * s.y[:, None]).sum(axis=0) / s.p.sum(axis=0)
        weighted.append(w[black] / w[white])
    assert abs(np.mean(est) - truth) < 0.015
    assert np.mean(weighted) - truth > 0.05     # the weighted estimate understates the gap
    assert covered >= 25


def test_by_place_follows_the_place_when_the_outcome_depends_on_it() -> None:
    """Few, large places and an outcome that depends on the place beyond race: the pooled form is biased, the
    by-place form is not; where the outcome does not depend on the place both agree."""
    rng = np.random.default_rng(5)
    n, k, places = 40_000, 3, 20
    mix = rng.dirichlet(np.full(k, 0.7), places)          # each place's race mix
    place = rng.integers(0, places, n)
    race = (mix[place].cumsum(axis=1) < rng.random(n)[:, None]).sum(axis=1)
    name_signal = rng.dirichlet(np.full(k, 0.5), n)        # P(R | surname) noise, then Bayes with the place mix
    post = name_signal * mix[place]
    # draw race from the calibrated posterior so that BISG is exact
    post /= post.sum(axis=1, keepdims=True)
    race = (post.cumsum(axis=1) < rng.random(n)[:, None]).sum(axis=1)
    shift = np.linspace(-1.2, 1.2, places)[np.argsort(mix[:, 0])]  # places with more of group 0 approve more
    base = np.array([0.0, -0.4, 0.3])
    chance = 1 / (1 + np.exp(-(base[race] + shift[place])))
    y = (rng.random(n) < chance).astype(float)
    truth = np.array([chance[race == r].mean() for r in range(k)])
    table = birdie.make_table(post, y, place=place)
    pooled = birdie.fit_pooled(table)
    by_place = birdie.fit_by_place(table, prior_rows=1.0, n_boot=0)
    assert np.max(np.abs(by_place.rates - truth)) < 0.02
    assert np.max(np.abs(pooled.rates - truth)) > 2 * np.max(np.abs(by_place.rates - truth))


def test_population_rates_equal_the_simulated_ones() -> None:
    rng = np.random.default_rng(7)
    s = simulate(200_000, rng, place_effect=0.5)
    np.testing.assert_allclose(s.sample_rates()[:4], population_rates(TRUE_RATES, 0.5)[:4], atol=0.01)


def test_engines_give_the_in_memory_table(tmp_path) -> None:
    """The streamed Parquet path and DuckDB (through Ibis) build BIRDiE's table where the rows are; the fit equals
    the one from the probabilities computed in memory."""
    from luskin_core.analyses.proxy import compute_probabilities
    from luskin_core.analyses.proxy_engine import parquet_proxy_sums, source_proxy_sums
    from luskin_core.analyses.proxy_simulation import world
    from luskin_core.counting.sources import open_source

    rng = np.random.default_rng(11)
    s = simulate(6000, rng)
    w = world()
    names = w.names[s.name].astype(object)
    names[::97] = None                     # place-only rows
    zips = w.places[s.place].astype(object)
    zips[::89] = "99999"                   # surname-only rows
    frame = pd.DataFrame({"surname": names, "zip": zips, "ok": np.where(s.y == 1, "yes", "no")})
    frame.loc[::101, "ok"] = None
    path = tmp_path / "people.parquet"
    frame.to_parquet(path)
    probs = compute_probabilities(frame["surname"], frame["zip"]).probabilities.to_numpy()
    y = np.where(frame["ok"].isna(), np.nan, (frame["ok"] == "yes").astype(float))
    expected = birdie.fit_pooled(birdie.make_table(probs, y)).rates
    streamed, _ = parquet_proxy_sums(str(path), surname="surname", geography="zip", outcome="ok", positive="yes",
                                     batch_rows=2500)
    engine, _ = source_proxy_sums(open_source(str(path)), surname="surname", geography="zip", outcome="ok",
                                  positive="yes")
    for sums in (streamed, engine):
        table = sums[None].table
        assert table is not None and table.n == np.isfinite(y).sum() - np.isnan(probs).any(axis=1)[
            np.isfinite(y)].sum()
        np.testing.assert_allclose(birdie.fit_pooled(table).rates, expected, rtol=1e-9, atol=1e-12)


def test_check_against_recorded_race_agrees_when_the_assumption_holds_and_flags_it_when_broken() -> None:
    """On a subset whose race was recorded (here the simulated truth), the estimate covers the recorded rates
    when the outcome depends on race only, and misses them when it also depends strongly on the place."""
    from luskin_core.analyses.proxy import RACES

    rng = np.random.default_rng(8)
    s = simulate(30_000, rng)
    recorded = np.where(rng.random(len(s.y)) < 0.5, s.race, -1)
    checks = birdie.check_against_recorded(s.p, s.y, recorded, RACES, min_rows=500)
    assert {c.group for c in checks} >= {"white", "black", "hispanic"}
    assert sum(c.covered for c in checks) >= len(checks) - 1
    assert "recorded rate" in checks[0].sentence()
    broken = simulate(30_000, rng, place_effect=1.5)
    checks = birdie.check_against_recorded(broken.p, broken.y, broken.race, RACES, min_rows=500)
    assert not all(c.covered for c in checks)
    assert any("may not hold" in c.sentence() for c in checks)


def test_fieller_interval_is_the_set_of_ratios_a_grid_search_keeps() -> None:
    """Fieller's interval for fa / fr: every ratio whose |fa - rho fr| is within 1.96 standard errors, and none
    else (a fine grid); unbounded when fr is not clearly above zero."""
    rng = np.random.default_rng(3)
    grid = np.linspace(0, 6, 600_001)
    for _ in range(20):
        fa, fr = rng.uniform(0.05, 0.9, 2)
        sa, sr = rng.uniform(0.002, 0.08, 2)
        cov = rng.uniform(-0.5, 0.5) * sa * sr
        low, high = birdie.fieller(fa, fr, sa ** 2, sr ** 2, cov)
        kept = grid[(fa - grid * fr) ** 2 <= birdie.Z95 ** 2 * (sa ** 2 - 2 * grid * cov + grid ** 2 * sr ** 2)]
        assert abs(kept.min() - low) < 2e-5
        if np.isfinite(high):
            assert abs(kept.max() - high) < 2e-5 and low < fa / fr < high
        else:   # fr not clearly above zero: the set reaches past any bound
            assert kept.max() == grid[-1] and (fr / sr) ** 2 <= birdie.Z95 ** 2
    low, high = birdie.fieller(0.4, 0.05, 0.01 ** 2, 0.03 ** 2, 0.0)
    assert high == np.inf and 0 < low < 0.4 / 0.05


def test_proxy_audit_by_place_model_is_an_option() -> None:
    """proxy_audit(model="by-place"): the by-place fit behind the outcome-aware comparisons, said in the JSON and
    the sentences; refused in words without places or with an unknown model."""
    from luskin_core.analyses.proxy import PROB_COLUMNS
    from luskin_core.analyses.proxy_audit import proxy_audit
    from luskin_core.spec.options import ProxyOptions
    from luskin_core.stats.judgement import Judgement

    s = simulate(4_000, np.random.default_rng(11), place_effect=0.6)
    frame = pd.DataFrame(s.p, columns=list(PROB_COLUMNS))
    audit = proxy_audit(frame, s.y, places=s.place, options=ProxyOptions(model="By-Place"),
                        judgement=Judgement(metric="ratio"))
    table = birdie.make_table(s.p, s.y, place=s.place)
    direct = birdie.fit_by_place(table, n_boot=0)
    data = audit.to_dict()
    assert data["birdie_model"] == "by-place" and data["estimator"] == "birdie"
    rows = [c for c in data["comparisons"] if c["method"] == "birdie"]
    for c, expected in zip(rows, direct.rates):
        assert c["rate"] == pytest.approx(expected, abs=1e-9)
    compared = [c for c in rows if not c["is_reference"] and c["n"] >= 200]
    assert compared and all(c["impact_ratio_ci_low"] is not None and c["impact_ratio_ci_high"] is not None
                            for c in compared)
    assert any("BIRDiE, by place" in sentence for sentence in data["sentences"])
    assert proxy_audit(frame, s.y).to_dict()["birdie_model"] == "pooled"
    with pytest.raises(LuskinError, match="needs each row's place"):
        proxy_audit(frame, s.y, options=ProxyOptions(model="by-place"))
    with pytest.raises(LuskinError, match="'pooled' \\(one rate per race\\) or 'by-place'"):
        proxy_audit(frame, s.y, places=s.place, options=ProxyOptions(model="hierarchical"))
