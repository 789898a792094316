"""What the subgroup scan says is what it found (issue 49): one standard error for the test and the interval, a
rare value named as itself, groups of unknown category set apart, intersections that differ from what their
parts predict, and the headline, the JSON and the chart telling the same count."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from luskin_core.analyses.scan import ScanSpec, scan
from luskin_core.stats import subgroups as sg


def _rare_outcome_frame(seed: int = 1) -> pd.DataFrame:
    """50,000 rows, a positive rate of 2%, and a slice of 45 rows at 30%: the pooled z of the slice is far beyond
    the bar, while the interval the scan gave (from the unpooled standard error) held 0 (-1.6 to 37.6 points)."""
    rng = np.random.default_rng(seed)
    n = 50_000
    frame = pd.DataFrame({"a": rng.integers(0, 4, n), "b": rng.integers(0, 5, n)})
    frame["tiny"] = rng.choice(["no", "maybe"], n)
    frame.loc[rng.choice(n, 45, replace=False), "tiny"] = "yes"
    frame["y"] = (rng.random(n) < np.where(frame.tiny == "yes", 0.3, 0.02)).astype(int)
    return frame


def test_every_interval_holds_zero_exactly_when_its_group_is_within_the_bar():
    frame = _rare_outcome_frame()
    result = scan(frame, ScanSpec("y", 1, ("a", "b", "tiny"), depth=2, replicates=199, seed=1))
    assert [f.conditions for f in result.findings] == [{"tiny": "yes"}]
    tiny = result.findings[0]
    assert tiny.ci_low > 0, (tiny.ci_low, tiny.ci_high)   # beyond the bar after correction: the interval says so
    assert tiny.ci_low < tiny.difference < tiny.ci_high
    # the interval is the test inverted: at its ends the score statistic is the bar; at 0 it is the scan's z
    rest_n, rest_k = result.n_judged - tiny.n, round(result.overall_rate * result.n_judged) - tiny.events
    for end, sign in ((tiny.ci_low, 1), (tiny.ci_high, -1)):
        t = sg.score_statistic(tiny.events, tiny.n, rest_k, rest_n, end)
        assert float(t) == pytest.approx(sign * result.critical_value, rel=1e-6)
    assert float(sg.score_statistic(tiny.events, tiny.n, rest_k, rest_n, 0.0)) == pytest.approx(tiny.z, rel=1e-9)


def test_over_every_scanned_group_the_interval_and_the_test_agree():
    """For every group scanned (not only the findings): its simultaneous interval excludes 0 exactly when its
    adjusted p-value is below the level (strictly), on tables with rare and common outcomes."""
    for base, seed in ((0.02, 4), (0.3, 5)):
        rng = np.random.default_rng(seed)
        cards = (3, 4, 2, 5)
        frame = pd.DataFrame({f"c{j}": rng.integers(0, c, 20_000) for j, c in enumerate(cards)})
        lift = np.where((frame.c0 == 1) & (frame.c1 == 2), 3 * base, 0.0)
        frame["y"] = (rng.random(len(frame)) < base + lift).astype(int)
        spec = ScanSpec("y", 1, tuple(frame.columns[:4]), depth=2, replicates=199)
        from luskin_core.analyses import scan as scan_module

        plan, raw = scan_module._count(frame, spec.audit_spec())
        cells = scan_module._cells(plan, raw, "rate").cells
        groups = sg.groups_of(cells, 2, 30)
        calibration = sg.calibrate(cells, groups, 199, 0.05, 0)
        significant = sg.significant_p(calibration.p_adjusted(groups.z), 0.05)
        valid = np.flatnonzero(groups.valid)
        low, high = sg.score_interval(groups.k[valid], groups.n[valid], cells.positives - groups.k[valid],
                                      cells.total - groups.n[valid], calibration.critical)
        excludes = (low > 0) | (high < 0)
        np.testing.assert_array_equal(excludes, significant[valid])
        assert significant.any() and not significant[valid].all()


def test_the_restricted_rates_are_the_likelihood_maximum():
    """The score interval's rates under p1 - p2 = d against a numerical maximum of the likelihood (scipy)."""
    from scipy.optimize import minimize_scalar

    for k1, n1, k2, n2 in ((90, 300, 4_000, 49_700), (9, 30, 1_000, 50_000), (0, 40, 300, 1_000), (40, 40, 10, 1_000)):
        for d in (-0.2, -0.05, 0.0, 0.1, 0.3):
            p1, _ = sg._restricted(*(np.float64(x) for x in (k1, n1, k2, n2)), np.float64(d))
            low, high = max(d, 0.0) + 1e-12, min(1.0, 1.0 + d) - 1e-12
            if low >= high:
                continue

            def minus_loglik(q: float, d: float = d, k1: int = k1, n1: int = n1, k2: int = k2, n2: int = n2) -> float:
                terms = [(k1, q), (n1 - k1, 1 - q), (k2, q - d), (n2 - k2, 1 - q + d)]
                return -sum(c * math.log(max(v, 1e-300)) for c, v in terms if c)

            best = minimize_scalar(minus_loglik, bounds=(low, high), method="bounded", options={"xatol": 1e-12})
            assert minus_loglik(float(p1)) <= best.fun + 1e-6, (k1, n1, k2, n2, d)


def test_a_rare_value_of_a_two_valued_column_is_named_as_itself():
    """A slice of 301 rows of 50,000 in a column of two values is reported as itself, not as the other value (its
    complement, with the same |z| but for rounding): on 12 tables (4 of them named 'c1 = v0 (49,699 rows)')."""
    for seed in range(12):
        rng = np.random.default_rng(seed)
        n = 50_000
        frame = pd.DataFrame({"c0": rng.integers(0, 4, n), "c2": rng.integers(0, 3, n)})
        frame["c1"] = "v0"
        frame.loc[rng.choice(n, 301, replace=False), "c1"] = "v1"
        frame["y"] = (rng.random(n) < np.where(frame.c1 == "v1", 0.5, 0.3)).astype(int)
        result = scan(frame, ScanSpec("y", 1, ("c0", "c1", "c2"), depth=2, replicates=99))
        named = [(f.conditions, f.n) for f in result.findings if "c1" in f.conditions]
        assert named == [({"c1": "v1"}, 301)], (seed, named)


def test_groups_of_unknown_category_are_set_apart_with_their_numbers():
    """20% of rows 'Decline to self-identify' with a lower rate, every known group equal: no finding; the declined
    are set apart, said so in the headline and the JSON (the audit's one rule, is_unknown_group)."""
    rng = np.random.default_rng(9)
    n = 30_000
    race = rng.choice(["White", "Black", "Asian", "Decline to self-identify"], n, p=[0.4, 0.25, 0.15, 0.2])
    frame = pd.DataFrame({"race": race, "sex": rng.choice(["Female", "Male"], n), "band": rng.integers(0, 3, n)})
    frame["y"] = (rng.random(n) < np.where(race == "Decline to self-identify", 0.2, 0.3)).astype(int)
    result = scan(frame, ScanSpec("y", 1, ("race", "sex", "band"), replicates=199))
    assert result.findings == ()
    assert [f.conditions for f in result.set_apart] == [{"race": "Decline to self-identify"}]
    assert result.set_apart[0].unknown and "unknown category" in result.set_apart[0].sentence
    assert "unknown category" in result.headline() and "Decline to self-identify" in result.headline()
    document = json.loads(json.dumps(result.to_dict()))
    assert document["findings"] == [] and document["set_apart_of_unknown_category"] == 1
    assert document["set_apart"][0]["unknown_category"] is True


def _coded_unknown_frame() -> pd.DataFrame:
    """Race coded as the Stop, Question and Frisk file codes it ("U": not known), the "U" rows with a lower rate,
    every known group equal."""
    rng = np.random.default_rng(45)
    n = 30_000
    race = rng.choice(["W", "B", "Q", "U"], n, p=[0.4, 0.25, 0.15, 0.2])
    frame = pd.DataFrame({"race": race, "sex": rng.choice(["F", "M"], n)})
    frame["y"] = (rng.random(n) < np.where(race == "U", 0.2, 0.3)).astype(int)
    return frame


def test_a_value_the_user_names_unknown_is_set_apart_as_the_spellings_are(tmp_path):
    """Issue 45: the scan read only the common spellings of "unknown", so the SQF file's race code "U", named
    unknown for the audit, came back as the scan's finding. Named (the audit's unknown_values, through scan_spec),
    its group is set apart with its numbers, in memory and in DuckDB over a Parquet file alike; not named, it is a
    finding, as any value is."""
    from luskin_core import AuditSpec
    from luskin_core.analyses.scan import run
    from luskin_core.counting.files import open_file
    from luskin_core.spec.options import ScanOptions

    frame = _coded_unknown_frame()
    plain = scan(frame, ScanSpec("y", 1, ("race", "sex"), replicates=199))
    assert [f.conditions for f in plain.findings] == [{"race": "U"}] and plain.set_apart == ()
    path = tmp_path / "coded.parquet"
    frame.to_parquet(path)
    options = ScanOptions(columns=("race", "sex"), replicates=199)
    for data in (frame, open_file(str(path))):
        named = run(data, AuditSpec("y", 1, group_by=("race",), unknown_values=("U",)), options)
        assert named.findings == (), data
        assert [f.conditions for f in named.set_apart] == [{"race": "U"}]
        assert named.set_apart[0].n == plain.findings[0].n and "unknown category" in named.set_apart[0].sentence
        assert named.to_dict()["spec"]["unknown_values"] == ["U"]
    assert "unknown_values" not in plain.to_dict()["spec"]   # the JSON of a scan naming none is as before


def test_intersections_that_are_their_parts_seen_again_are_not_findings():
    """On Adult, race x sex: 'White and Male' (31.5% against 13.0%) is the sex gap seen again, since everyone
    else holds the women: no intersection is reported, each finding says it is a main effect."""
    from luskin_core.counting.data import load_sample

    adult = load_sample("adult")
    result = scan(adult, ScanSpec("income", ">50K", ("race", "sex"), depth=2, replicates=199))
    assert result.findings and all(f.kind == "main effect" and len(f.conditions) == 1 for f in result.findings)
    assert {"sex": "Female"} in [f.conditions for f in result.findings]
    assert result.not_reported.get(sg.PARTS, 0) >= 6


def test_a_real_intersection_is_reported_as_one_with_what_its_parts_predict():
    rng = np.random.default_rng(12)
    n = 60_000
    frame = pd.DataFrame({"sex": rng.choice(["F", "M"], n), "region": rng.choice(["N", "S", "E", "W"], n),
                          "band": rng.integers(0, 3, n)})
    p = 0.3 + 0.05 * (frame.sex == "F") + 0.15 * ((frame.sex == "F") & (frame.region == "S"))
    frame["y"] = (rng.random(n) < p).astype(int)
    result = scan(frame, ScanSpec("y", 1, ("sex", "region", "band"), depth=2, replicates=199))
    kinds = {tuple(sorted(f.conditions.items())): f for f in result.findings}
    both = kinds[(("region", "S"), ("sex", "F"))]
    assert both.kind == "intersection" and both.parts_rate is not None and both.parts_rate < both.rate
    assert "acting alone would predict" in both.sentence
    assert abs(both.parts_z) > result.critical_value   # type: ignore[arg-type]


def test_the_parts_test_is_the_score_test_of_a_logistic_model():
    """The interaction's z against statsmodels: a binomial GLM of main effects on the membership table and its
    score test of the all-in cell's own effect."""
    import statsmodels.api as sm

    from luskin_core.analyses import scan as scan_module
    from luskin_core.counting.data import load_sample

    adult = load_sample("adult")
    spec = ScanSpec("income", ">50K", ("race", "sex", "relationship"), depth=3, replicates=99)
    plan, raw = scan_module._count(adult, spec.audit_spec())
    cells = scan_module._cells(plan, raw, "rate").cells
    groups = sg.groups_of(cells, 3, 30)
    parts = sg.Parts(groups)
    checked = 0
    for g in np.flatnonzero(groups.valid & ((groups.codes >= 0).sum(axis=1) >= 2))[::7][:12]:
        bits, (n, k, *_) = parts.table(g)
        use = n > 0
        x = np.column_stack([np.ones(bits.shape[1]), bits.T])[use]
        fit = sm.GLM(np.column_stack([k[use], n[use] - k[use]]), x, family=sm.families.Binomial()).fit()
        extra = (np.arange(bits.shape[1]) == bits.shape[1] - 1).astype(float)[use][:, None]
        if not use[-1] or n[use].min() < 5:
            continue
        statistic = fit.score_test(exog_extra=extra)[0]
        z, _ = parts.test(g)
        assert z * z == pytest.approx(float(np.asarray(statistic).ravel()[0]), rel=1e-4, abs=1e-6)
        checked += 1
    assert checked >= 5


def test_the_headline_the_json_and_the_chart_tell_the_same_count():
    from luskin_core.counting.data import load_sample
    from luskin_core.present.scan_plots import scan_figure

    adult = load_sample("adult")
    result = scan(adult, ScanSpec("income", ">50K", ("race", "sex", "relationship", "workclass"), depth=2,
                                  replicates=199))
    document = json.loads(json.dumps(result.to_dict()))
    assert document["groups_beyond_the_bar"] == result.significant > document["reported"] == len(result.findings)
    assert document["reported"] + document["set_apart_of_unknown_category"] + sum(
        document["not_reported"].values()) == result.significant
    assert f"{result.significant:,} cleared the bar" in result.headline()
    assert f"{result.significant:,} of the {result.groups_scanned:,} groups scanned cleared the bar" in document["bar"]
    figure = scan_figure(result)
    beyond = {t.name: len(t.x) for t in figure.data if t.name and not t.name.startswith(("Within", "The bar"))}
    assert sum(beyond.values()) == result.significant
    assert f"{result.significant:,} beyond the dashed lines" in figure.layout.title.text
    # and what is drawn beyond the dashed lines is what the scan calls beyond the bar
    sizes, gaps = np.asarray(result.sizes), np.asarray(result.differences)
    rate = result.overall_rate
    bar = result.critical_value * np.sqrt(rate * (1 - rate) * (1 / sizes + 1 / (result.n_judged - sizes)))
    assert int((np.abs(gaps) > bar).sum()) == result.significant


def test_the_default_columns_stop_at_eight_and_say_so():
    from luskin_core.analyses.scan import DEFAULT_MAX_COLUMNS, default_columns, default_columns_note

    rng = np.random.default_rng(2)
    frame = pd.DataFrame({f"col{j}": rng.integers(0, 3, 500) for j in range(11)})
    chosen = default_columns(frame, list(frame.columns))
    assert len(chosen) == DEFAULT_MAX_COLUMNS == 8
    note = default_columns_note(frame, list(frame.columns))
    assert "first 8 of the 11 columns" in note and "'col8', 'col9', 'col10'" in note
    assert default_columns_note(frame.iloc[:, :5], list(frame.columns[:5])) == ""


def _many_slices(seed: int, n: int = 40_000, lift: float = 0.06) -> tuple[pd.DataFrame, list[dict[str, int]]]:
    """Six slices of two columns, each lifted by ``lift`` over a base rate of 0.3: many groups differ."""
    rng = np.random.default_rng(seed)
    cards = (4, 3, 5, 2, 3)
    frame = pd.DataFrame({f"c{j}": rng.integers(0, c, n) for j, c in enumerate(cards)})
    slices = [{"c0": 0, "c1": 1}, {"c2": 3, "c4": 0}, {"c0": 2, "c2": 1}, {"c1": 2, "c4": 2}, {"c0": 3, "c2": 4},
              {"c2": 0, "c3": 1}]
    p = np.full(n, 0.3)
    for slice_ in slices:
        p[np.all([frame[c] == v for c, v in slice_.items()], axis=0)] += lift
    frame["y"] = (rng.random(n) < p).astype(int)
    return frame, slices


def test_fdr_is_a_false_discovery_procedure_not_the_family_wise_one(tmp_path, capsys):
    """`--fdr Q` was byte-identical to `--level Q`; now it is Benjamini-Hochberg and finds more where many differ."""
    from luskin_cli.main import main

    frame, _ = _many_slices(1)
    path = tmp_path / "slices.csv"
    frame.to_csv(path, index=False)
    out = {}
    for flag in ("--level", "--fdr"):
        assert main(["scan", "--data", str(path), "--outcome", "y", "--positive", "1", "--columns", "c0,c1,c2,c3,c4",
                     "--depth", "2", "--replicates", "199", flag, "0.05", "--json"]) == 0
        out[flag] = json.loads(capsys.readouterr().out)
    fwer, fdr = out["--level"], out["--fdr"]
    assert fwer["error_rate"] == "fwer" and fdr["error_rate"] == "fdr"
    assert "Benjamini-Hochberg" in fdr["error_control"] and "false discovery rate at 0.05" in fdr["error_control"]
    assert fdr["groups_beyond_the_bar"] > fwer["groups_beyond_the_bar"]
    assert len(fdr["findings"]) > len(fwer["findings"])
    assert fdr["fdr_threshold"] > 0.05 / fdr["groups_scanned"]   # BH's threshold, past Bonferroni's


def test_fdr_p_values_are_each_groups_exact_law_and_bh_is_statsmodels():
    from scipy.stats import hypergeom
    from statsmodels.stats.multitest import multipletests

    from luskin_core.analyses import scan as scan_module

    frame, _ = _many_slices(2, n=8_000)
    spec = ScanSpec("y", 1, ("c0", "c1", "c2", "c3", "c4"), depth=2, error="fdr")
    plan, raw = scan_module._count(frame, spec.audit_spec())
    cells = scan_module._cells(plan, raw, "rate").cells
    groups = sg.groups_of(cells, 2, 30)
    found = sg.false_discovery(groups, cells, 0.05)
    total, positives = cells.total, cells.positives
    valid = np.flatnonzero(groups.valid)
    for g in valid[::9]:
        n, k = groups.n[g], groups.k[g]
        mean = n * positives / total
        d = abs(k - mean)
        want = hypergeom.sf(math.ceil(mean + d - 1e-9) - 1, total, positives, n) + \
            hypergeom.cdf(math.floor(mean - d + 1e-9), total, positives, n)
        assert found.p[g] == pytest.approx(min(1.0, want), rel=1e-6, abs=1e-12)
    np.testing.assert_allclose(found.q[valid], multipletests(found.p[valid], method="fdr_bh")[1], rtol=1e-12)
    # a discovery's interval (inverted at its own bar) holds 0 exactly when its q-value is not below the level
    near = valid[np.argsort(np.abs(found.q[valid] - 0.05))[:25]]   # the groups nearest the line, and a few more
    for g in np.unique(np.concatenate([near, valid[::10]])):
        scale, _ = sg._linear(groups.n[g:g + 1], None, None, total, positives, np.array([True]))
        bar = found.group_bar(float(groups.n[g]), float(scale[0]))
        low, high = sg.score_interval(groups.k[g], groups.n[g], positives - groups.k[g], total - groups.n[g], bar)
        assert bool(low[0] > 0 or high[0] < 0) == bool(found.q[g] < 0.05), g


def test_fdr_finds_more_slices_than_the_family_wise_control_and_few_false_ones():
    """A small calibrated version of benchmarks/bench_scan.py's FDR scenario: 20 tables of six weak slices;
    the false discovery rate finds more of them, with a mean false discovery proportion near or below 0.05."""
    found = {"fwer": 0, "fdr": 0}
    fdp = {"fwer": 0.0, "fdr": 0.0}
    runs = 20
    for run in range(runs):
        frame, slices = _many_slices(100 + run, n=30_000, lift=0.05)
        for error in found:
            result = scan(frame, ScanSpec("y", 1, ("c0", "c1", "c2", "c3", "c4"), depth=2, replicates=99,
                                          seed=run, error=error))
            reported = [f.conditions for f in result.findings]
            found[error] += sum(s in reported for s in slices)
            # a finding is false when it is no slice and holds no slice's rows (disjoint from every slice)
            false = [c for c in reported if c not in slices and
                     all(any(c.get(k, v) != v for k, v in s.items()) for s in slices)]
            fdp[error] += len(false) / max(1, len(reported))
    assert found["fdr"] > found["fwer"], found
    assert fdp["fdr"] / runs <= 0.12, fdp


def test_the_scans_own_normal_and_detectable_gap_are_scipys_and_the_power_rules():
    """The scan's path imports no scipy.special (a third of a small scan): its normal's lower tail against
    scipy.special.ndtr, and its detectable gap against luskin_core.stats.power's rule."""
    from scipy.special import ndtr

    from luskin_core.stats.power import minimum_detectable_difference

    x = np.linspace(-12, 0, 6_001)
    np.testing.assert_allclose(sg.ndtr(x), ndtr(x), rtol=2e-7)
    np.testing.assert_allclose(sg.ndtr(-x), 1 - sg.ndtr(x), rtol=0, atol=5e-8)   # its upper tail, by symmetry
    for n, big, rate, critical in ((300, 100_000, 0.3, 4.4), (50_000, 100_000, 0.5, 4.6), (30, 5_000, 0.6, 3.9)):
        want = float(minimum_detectable_difference(n, big - n, rate, alpha=math.erfc(critical / math.sqrt(2))))
        assert sg.detectable_gap(n, big, rate, critical) == pytest.approx(want, rel=1e-12)
