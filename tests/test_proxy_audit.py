"""The proxy audit: weighted rates (pandas), their standard errors (statsmodels), the bounds (an LP)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy.optimize import linprog

from luskin_core.analyses import proxy_audit as pa
from luskin_core.analyses.proxy import PROB_COLUMNS, RACES
from luskin_core.spec.audit_spec import Direction
from luskin_core.stats.judgement import Judgement


def _simulated(n: int = 4000, seed: int = 3) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    p = rng.dirichlet([2.0, 6.0, 1.5, 1.0, 0.3, 0.3], size=n)
    sharp = rng.random(n) < 0.5  # half the rows nearly certain, as surnames often make them
    p[sharp] = rng.dirichlet([0.2] * 6, size=sharp.sum())
    race = (p.cumsum(axis=1) > rng.random(n)[:, None]).argmax(axis=1)
    y = (rng.random(n) < np.array([0.35, 0.55, 0.30, 0.60, 0.40, 0.45])[race]).astype(float)
    frame = pd.DataFrame(p, columns=list(PROB_COLUMNS))
    frame["y"] = y
    frame["region"] = rng.choice(["north", "south"], n)
    return frame, race


def test_weighted_rates_equal_pandas_and_threshold_counts():
    frame, _ = _simulated()
    result = pa.proxy_audit(frame, frame["y"], cells=frame["region"], judgement=Judgement(min_group_size=5))
    for c in result.comparisons:
        rows = frame if c.cell is None else frame[frame["region"] == c.cell]
        column = f"p_{RACES[pa.LABELS.index(c.group)]}"
        if c.method == "birdie":
            continue  # tests/test_proxy_birdie.py checks the outcome-aware estimate
        if c.method == "weighted":
            expected = (rows[column] * rows["y"]).sum() / rows[column].sum()
        else:
            probs = rows[list(PROB_COLUMNS)]
            assigned = rows[(probs.max(axis=1) >= 0.8) & (probs.idxmax(axis=1) == column)]
            expected = assigned["y"].mean()
            assert c.n == len(assigned)
        assert c.rate == pytest.approx(expected, abs=1e-12)
    assert {c.method for c in result.comparisons} == {"birdie", "weighted", "threshold"}


def test_weighted_rate_standard_error_is_statsmodels_wls_hc0():
    frame, _ = _simulated(1500)
    s = pa.sufficient_statistics(frame[list(PROB_COLUMNS)].to_numpy(), frame["y"].to_numpy())
    _, cov = pa.weighted_rates(s)
    for a, column in enumerate(PROB_COLUMNS):
        fit = sm.WLS(frame["y"], np.ones(len(frame)), weights=frame[column]).fit(cov_type="HC0")
        assert np.sqrt(cov[a, a]) == pytest.approx(fit.bse.iloc[0], rel=1e-9)


def test_gap_standard_error_agrees_with_a_seeded_bootstrap():
    frame, _ = _simulated(3000)
    p, y = frame[list(PROB_COLUMNS)].to_numpy(), frame["y"].to_numpy()
    _, cov = pa.weighted_rates(pa.sufficient_statistics(p, y))
    se = np.sqrt(cov[2, 2] + cov[1, 1] - 2 * cov[2, 1])
    rng = np.random.default_rng(11)
    gaps = []
    for _ in range(400):
        i = rng.integers(0, len(p), len(p))
        w = p[i]
        mu = (w * y[i, None]).sum(0) / w.sum(0)
        gaps.append(mu[2] - mu[1])
    assert se == pytest.approx(np.std(gaps), rel=0.12)


def _lp_bounds(bins: pd.DataFrame, a: int, r: int) -> tuple[float, float]:
    """The same bounds by brute force: a linear programme over every bin's split of its positives."""
    n = bins["n"].to_numpy(float)
    b = bins[[f"b_{x}" for x in RACES]].to_numpy(float) / n[:, None]
    eta = bins["y"].to_numpy(float) / n
    J, G = b.shape
    wa, wr = (b[:, a] * n).sum(), (b[:, r] * n).sum()
    c = np.zeros(J * G)
    c[a::G], c[r::G] = n / wa, -n / wr
    A_eq = np.zeros((J, J * G))
    for j in range(J):
        A_eq[j, j * G:(j + 1) * G] = 1
    bounds = [(0, b[j, g]) for j in range(J) for g in range(G)]
    low = linprog(c, A_eq=A_eq, b_eq=eta, bounds=bounds).fun
    high = -linprog(-c, A_eq=A_eq, b_eq=eta, bounds=bounds).fun
    return low, high


def test_bounds_equal_a_linear_programme():
    frame, _ = _simulated(3000)
    s = pa.sufficient_statistics(frame[list(PROB_COLUMNS)].to_numpy(), frame["y"].to_numpy())
    merged = pa._merge_small_bins(s.bins)
    for a, r in [(2, 1), (0, 1), (3, 2), (5, 0)]:
        ours = pa.gap_bounds(s.bins, a, r)
        assert ours == pytest.approx(_lp_bounds(merged, a, r), abs=1e-7)


def test_bounds_hold_the_truth_and_are_attained():
    """Rows whose races match their probabilities exactly bin by bin: any outcome rule by race lies inside,
    and the rule that gives every positive to the group first (the reference last) reaches the upper bound."""
    rng = np.random.default_rng(5)
    blocks, races = [], []
    for shares in ([0.1, 0.6, 0.2, 0.1, 0.0, 0.0], [0.05, 0.05, 0.85, 0.05, 0.0, 0.0],
                   [0.8, 0.1, 0.1, 0.0, 0.0, 0.0], [0.0, 0.9, 0.1, 0.0, 0.0, 0.0]):
        counts = (np.array(shares) * 100).astype(int)
        blocks.append(np.tile(shares, (100, 1)))
        races.append(np.repeat(np.arange(6), counts))
    p, race = np.vstack(blocks), np.concatenate(races)
    for _ in range(5):
        base = rng.random(6)
        y = (rng.random(len(race)) < base[race]).astype(float)
        s = pa.sufficient_statistics(p, y)
        true_gap = y[race == 2].mean() - y[race == 1].mean()
        low, high = pa.gap_bounds(s.bins, 2, 1)
        assert low - 1e-12 <= true_gap <= high + 1e-12
    # attained: in each block Black rows positive first, then others, White last, with each block's count
    y = np.zeros(len(race))
    start = 0
    for block in blocks:
        idx = np.arange(start, start + len(block))
        order = sorted(idx, key=lambda i: {2: 0, 1: 2}.get(race[i], 1))
        y[order[:37]] = 1  # 37 positives per block
        start += len(block)
    s = pa.sufficient_statistics(p, y)
    assert pa.gap_bounds(s.bins, 2, 1)[1] == pytest.approx(y[race == 2].mean() - y[race == 1].mean(), abs=1e-12)


def test_a_large_gap_is_stated_as_at_least_and_caveats_are_words():
    rng = np.random.default_rng(2)
    n = 6000
    certain = np.eye(6)[rng.choice([1, 2], n, p=[0.6, 0.4])] * 0.95 + 0.05 / 6
    y = np.where(certain[:, 1] > 0.5, rng.random(n) < 0.7, rng.random(n) < 0.2).astype(float)
    frame = pd.DataFrame(certain, columns=list(PROB_COLUMNS))
    result = pa.proxy_audit(frame, y, decision="approved")
    black = next(c for c in result.comparisons if c.method == "weighted" and c.group == "Black")
    assert result.reference == "White"
    assert black.bound_high < 0 and black.verdict == pa.BEYOND
    assert any("the gap is at least" in s for s in result.bounds_sentences())
    assert black.bound_low <= black.difference <= black.bound_high
    assert any("understate" in c for c in result.caveats)
    document = result.to_dict()
    assert {c["method"] for c in document["comparisons"]} == {"birdie", "weighted", "threshold"}
    assert document["estimator"] == "birdie" and "surname says nothing more" in document["assumption"]


def test_duckdb_sums_equal_the_in_memory_audit(tmp_path):
    from luskin_core.analyses.proxy import add_probabilities
    from luskin_core.analyses.proxy_engine import source_proxy_sums
    from luskin_core.counting.sources import open_source

    rng = np.random.default_rng(4)
    n = 5000
    frame = pd.DataFrame({"surname": rng.choice(["Garcia", "Smith", "Washington", "Nguyen", "Jackson-Lee",
                                                 "O'Brien", "Zzqxv", None], n),
                          "zip": rng.choice(["10001", "60601", "94110", "30303", "601", "99999", None], n),
                          "approved": rng.integers(0, 2, n), "region": rng.choice(["a", "b"], n)})
    path = tmp_path / "loans.parquet"
    frame.to_parquet(path)
    sums, counts = source_proxy_sums(open_source(str(path)), surname="surname", geography="zip",
                                     outcome="approved", positive=1, cells=["region"])
    engine = pa.audit_sums(sums, decision="approved")
    with_p, result = add_probabilities(frame, surname="surname", geography="zip")
    memory = pa.proxy_audit(with_p, frame["approved"], decision="approved",
                            cells="region = " + frame["region"])
    assert counts == result.fallback_counts()
    from luskin_core.analyses.proxy_engine import parquet_proxy_sums

    arrow_sums, arrow_counts = parquet_proxy_sums(str(path), surname="surname", geography="zip", outcome="approved",
                                                  positive=1, batch_rows=700)  # several batches, new names in each
    assert arrow_counts == counts
    streamed = pa.audit_sums(arrow_sums, decision="approved")
    overall = [c for c in memory.comparisons if c.cell is None]
    for a, b in zip(streamed.comparisons, overall, strict=True):
        tol = 1e-6 if a.method == "birdie" else 1e-9  # a maximum found by iterations
        for field in ("n", "rate", "difference", "difference_ci_high", "bound_low", "bound_high", "p_value"):
            x, y = getattr(a, field), getattr(b, field)
            assert (x is None and y is None) or x == pytest.approx(y, rel=tol, abs=tol), (field, a.group, a.method)
    for a, b in zip(engine.comparisons, memory.comparisons):
        assert (a.method, a.group, a.cell) == (b.method, b.group, b.cell)
        tol = 1e-6 if a.method == "birdie" else 1e-9
        for field in ("n", "rate", "ci_low", "difference", "difference_ci_high", "bound_low", "bound_high", "p_value"):
            x, y = getattr(a, field), getattr(b, field)
            assert (x is None and y is None) or x == pytest.approx(y, rel=tol, abs=tol), (field, a.group, a.method)
        assert a.verdict == b.verdict


def test_report_section_and_slides_carry_the_proxy_audit(adult):
    from luskin_core.analyses.audit import audit
    from luskin_core.counting.data import PRESETS
    from luskin_core.present.report import report_content
    from luskin_core.present.slides import build_slides

    frame, _ = _simulated(3000)
    proxy_result = pa.proxy_audit(frame, frame["y"], decision="approved")
    result = audit(adult, PRESETS["adult"].spec)
    content = report_content([result, proxy_result])
    section = next(s for s in content.sections if s.anchor == "proxy")
    kinds = [b["kind"] for b in section.blocks]
    assert kinds == ["sentences", "table", "warnings"]
    assert any("understate" in item for item in section.blocks[2]["items"])
    table = section.blocks[1]["table"]
    assert {row[0] for row in table.rows} == {"outcome-aware (BIRDiE)", "weighted", "threshold"}
    assert table.rows[0][0] == "outcome-aware (BIRDiE)"
    assert "Estimated race and ethnicity" in content.html()
    deck = build_slides([result, proxy_result])
    keys = [s.key for s in deck]
    assert "proxy-gaps" in keys and "proxy-caveats" in keys
    gaps = next(s for s in deck if s.key == "proxy-gaps")
    assert any("outcome-aware" in line and "weighted" in line for line in gaps.sentences)
    assert report_content([result]).sections[-1].anchor != "proxy" and "proxy" not in [
        s.anchor for s in report_content([result]).sections]


@pytest.mark.parametrize("adverse", [False, True])
def test_threshold_ratio_equals_the_main_audit_on_the_assigned_rows(adverse):
    """The threshold method with metric="ratio" is the ordinary audit of the rows it assigns: the same impact
    ratio (favourable shares), the same Miettinen-Nurminen interval and the same verdict against 0.8."""
    from luskin_core.analyses.audit import audit
    from luskin_core.spec.audit_spec import AuditSpec

    frame, _ = _simulated(6000, seed=8)
    result = pa.proxy_audit(frame, frame["y"], judgement=Judgement(
        metric="ratio", named_reference="White", direction=Direction.ADVERSE if adverse else Direction.FAVOURABLE,
        min_group_size=30))
    p = frame[list(PROB_COLUMNS)].to_numpy()
    assigned = frame[p.max(axis=1) >= 0.8].copy()
    assigned["group"] = [pa.LABELS[i] for i in p[p.max(axis=1) >= 0.8].argmax(axis=1)]
    spec = AuditSpec(outcome="y", positive=1.0, group_by=("group",), reference="White", metric="ratio",
                     min_group_size=30, outcome_is="adverse" if adverse else "favourable")
    main = {c.group: c for c in audit(assigned, spec).comparisons if c.cell is None}
    checked = 0
    for c in result.comparisons:
        if c.method != "threshold" or c.is_reference or c.group not in main:
            continue
        m = main[c.group]
        assert c.impact_ratio == pytest.approx(m.impact_ratio, abs=1e-12)
        assert c.impact_ratio_ci_low == pytest.approx(m.impact_ratio_ci_low, abs=1e-9)
        assert c.impact_ratio_ci_high == pytest.approx(m.impact_ratio_ci_high, abs=1e-9)
        if m.verdict != "too few rows":
            assert c.verdict == m.verdict
            checked += 1
    assert checked >= 2
    assert result.to_dict()["metric"] == "ratio"


def test_ratio_metric_changes_the_verdict_where_shares_are_small():
    """Shares of 10% and 14%: 4 points is within the 5-point tolerance, an impact ratio of 0.71 is not."""
    rng = np.random.default_rng(12)
    n = 40000
    race = rng.choice([1, 2], n, p=[0.5, 0.5])
    p = np.eye(6)[race] * 0.94 + 0.01
    y = (rng.random(n) < np.where(race == 1, 0.14, 0.10)).astype(float)
    frame = pd.DataFrame(p, columns=list(PROB_COLUMNS))
    by_difference = pa.proxy_audit(frame, y, decision="approved")
    by_ratio = pa.proxy_audit(frame, y, decision="approved", judgement=Judgement(metric="ratio"))
    for method in ("weighted", "threshold"):
        d = next(c for c in by_difference.comparisons if c.method == method and c.group == "Black")
        r = next(c for c in by_ratio.comparisons if c.method == method and c.group == "Black")
        assert d.verdict == pa.WITHIN and r.verdict == pa.BEYOND
        assert r.impact_ratio < 0.8 and r.impact_ratio_ci_high < 0.8
        assert "impact-ratio threshold" in by_ratio.sentence(r)
    weighted = next(c for c in by_ratio.comparisons if c.method == "weighted" and c.group == "Black")
    expected = ((p[:, 2] * y).sum() / p[:, 2].sum()) / ((p[:, 1] * y).sum() / p[:, 1].sum())
    assert weighted.impact_ratio == pytest.approx(expected, rel=1e-12)
    assert weighted.ratio_bound_low <= weighted.impact_ratio <= weighted.ratio_bound_high
    assert any("impact ratio is between" in s for s in by_ratio.bounds_sentences())
    text = pa.format_proxy_audit(by_ratio)
    assert "impact ratio" in text and "bounds on the ratio" in text


def test_weighted_ratio_interval_agrees_with_a_seeded_bootstrap():
    frame, _ = _simulated(3000)
    p, y = frame[list(PROB_COLUMNS)].to_numpy(), frame["y"].to_numpy()
    result = pa.proxy_audit(frame, y, judgement=Judgement(metric="ratio", named_reference="White"))
    black = next(c for c in result.comparisons if c.method == "weighted" and c.group == "Black")
    se_log = (np.log(black.impact_ratio_ci_high) - np.log(black.impact_ratio_ci_low)) / (2 * pa.Z95)
    rng = np.random.default_rng(13)
    logs = []
    for _ in range(400):
        i = rng.integers(0, len(p), len(p))
        w = p[i]
        mu = (w * y[i, None]).sum(0) / w.sum(0)
        logs.append(np.log(mu[2] / mu[1]))
    assert se_log == pytest.approx(np.std(logs), rel=0.12)


@pytest.mark.parametrize("adverse", [False, True])
def test_ratio_bounds_are_sharp_by_a_linear_programme(adverse):
    """t is the largest (smallest) impact ratio over every split of the bins' positives exactly when the
    largest (smallest) of fav_a - t fav_r over those splits is zero (Dinkelbach): checked with scipy's LP."""
    frame, _ = _simulated(3000)
    s = pa.sufficient_statistics(frame[list(PROB_COLUMNS)].to_numpy(), frame["y"].to_numpy())
    bins = pa._merge_small_bins(s.bins)
    n = bins["n"].to_numpy(float)
    b = bins[[f"b_{x}" for x in RACES]].to_numpy(float) / n[:, None]
    eta = bins["y"].to_numpy(float) / n
    J, G = b.shape
    A_eq = np.zeros((J, J * G))
    for j in range(J):
        A_eq[j, j * G:(j + 1) * G] = 1
    box = [(0, b[j, g]) for j in range(J) for g in range(G)]
    for a, r in [(2, 1), (0, 1), (3, 2)]:
        low, high = pa.ratio_bounds(s.bins, a, r, adverse)
        wa, wr = (b[:, a] * n).sum(), (b[:, r] * n).sum()
        sign = -1.0 if adverse else 1.0  # favourable share: rate, or 1 - rate
        for t, sense in ((high, -1.0), (low, 1.0)):
            # fav_a - t fav_r = const + sign * (rate_a - t rate_r); rate_g = sum_j n_j q_jg / w_g
            c = np.zeros(J * G)
            c[a::G] += sign * n / wa
            c[r::G] -= sign * t * n / wr
            const = (1 - t) if adverse else 0.0
            value = sense * linprog(sense * c, A_eq=A_eq, b_eq=eta, bounds=box).fun + const
            assert value == pytest.approx(0.0, abs=1e-7), (a, r, t)


def _lp_ratio_bounds(bins: pd.DataFrame, a: int, r: int, adverse: bool) -> tuple[float, float]:
    """Brute force: the impact ratio's extremes over every coupling of each bin's positives with race (a linear
    program after the Charnes-Cooper transform of the ratio), with scipy's linprog."""
    from scipy.optimize import linprog

    b = bins[[f"b_{x}" for x in RACES]].to_numpy(float)
    k = bins["y"].to_numpy(float)
    m, g = b.shape
    nv = m * g + 1                      # y_ij = t * Q_ij, then t
    wa, wr = b[:, a].sum(), b[:, r].sum()
    num, den = np.zeros(nv), np.zeros(nv)
    for i in range(m):
        num[i * g + a] = (-1 if adverse else 1) / wa
        den[i * g + r] = (-1 if adverse else 1) / wr
    if adverse:
        num[-1] = den[-1] = 1.0
    a_eq, b_eq = [den], [1.0]
    for i in range(m):
        row = np.zeros(nv)
        row[i * g:(i + 1) * g] = 1
        row[-1] = -k[i]
        a_eq.append(row)
        b_eq.append(0.0)
    a_ub = []
    for i in range(m):
        for j in range(g):
            row = np.zeros(nv)
            row[i * g + j] = 1
            row[-1] = -b[i, j]
            a_ub.append(row)
    out = []
    for sign in (1, -1):
        res = linprog(sign * num, A_ub=np.array(a_ub), b_ub=np.zeros(len(a_ub)), A_eq=np.array(a_eq), b_eq=b_eq,
                      bounds=[(0, None)] * nv, method="highs")
        if res.status == 3 and sign == -1:  # the reference's favourable share can be zero: no upper bound
            out.append(float("inf"))
            continue
        assert res.status == 0
        out.append(sign * res.fun)
    return out[0], out[1]


@pytest.mark.parametrize("seed", range(6))
def test_ratio_bounds_are_the_linear_programs_optimum(seed):
    """The bounds are sharp given the bins: the greedy couplings (a first and the reference last, or the other way
    round) reach the extremes a linear program over every coupling finds (Kallus, Mao and Zhou's set)."""
    rng = np.random.default_rng(seed)
    m = 5
    p = rng.dirichlet(np.full(6, 0.6), m)
    n = rng.integers(40, 200, m).astype(float)
    bins = pd.DataFrame({f"b_{x}": p[:, j] * n for j, x in enumerate(RACES)})
    bins["n"] = n
    bins["y"] = np.round(rng.uniform(0.1, 0.9, m) * n)
    a, r = rng.choice(6, 2, replace=False)
    for adverse in (False, True):
        low, high = pa.ratio_bounds(bins, int(a), int(r), adverse)
        lp_low, lp_high = _lp_ratio_bounds(bins, int(a), int(r), adverse)
        assert low == pytest.approx(lp_low, rel=1e-7, abs=1e-9)
        assert high == pytest.approx(lp_high, rel=1e-7, abs=1e-9) if np.isfinite(lp_high) else high == np.inf
