"""The subgroup scan: it finds a planted gap, reports the group that carries it (not its parents or
refinements), stays silent on noise at the promised rate, and says every number right.

Numbers are checked against independent computations: pandas group counts, statsmodels' two-proportion
z-test, a brute-force permutation of the rows, and simulations where the truth is known.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from luskin_core import LuskinError, ScanResult, scan
from luskin_core.analyses.scan import ScanSpec
from luskin_core.stats import subgroups as sg

CARDS = (5, 2, 6, 4, 5, 3, 4, 5)
COLUMNS = tuple(f"c{j}" for j in range(len(CARDS)))


def _frame(n: int, seed: int, slices: tuple[tuple[dict[str, int], float], ...] = (), base: float = 0.3,
           cards: tuple[int, ...] = CARDS) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({f"c{j}": rng.integers(0, c, n) for j, c in enumerate(cards)})
    p = np.full(n, base)
    for conditions, lift in slices:
        inside = np.ones(n, dtype=bool)
        for column, value in conditions.items():
            inside &= frame[column].to_numpy() == value
        p[inside] += lift
    frame["y"] = (rng.random(n) < p).astype(int)
    return frame


PLANTED = {"c0": 1, "c1": 0, "c2": 3}


def test_a_planted_gap_is_found_as_itself_not_its_parents_or_refinements():
    frame = _frame(60_000, 1, ((PLANTED, 0.2),))
    result = scan(frame, ScanSpec("y", 1, COLUMNS[:6], depth=4, min_size=30, replicates=299, seed=2))
    assert [f.conditions for f in result.findings] == [PLANTED]
    assert result.significant > 1   # parents and refinements were beyond the bar too, and were set aside
    finding = result.findings[0]
    inside = (frame.c0 == 1) & (frame.c1 == 0) & (frame.c2 == 3)
    assert finding.n == int(inside.sum())
    assert finding.rate == pytest.approx(frame.y[inside].mean())
    assert finding.rest_rate == pytest.approx(frame.y[~inside].mean())
    assert finding.ci_low < 0.2 < finding.ci_high or finding.ci_low < finding.difference < finding.ci_high
    assert finding.p_adjusted == pytest.approx(1 / 300)
    assert "c0 = 1 and c1 = 0 and c2 = 3" in finding.sentence
    assert "% where y is 1 against" in finding.sentence   # the outcome in words, not "with y = 1"
    assert f"{result.groups_scanned:,} groups scanned" in finding.sentence


def test_a_gap_in_a_whole_parent_is_reported_as_the_parent():
    frame = _frame(40_000, 3, (({"c0": 2}, 0.1),))
    result = scan(frame, ScanSpec("y", 1, COLUMNS[:5], depth=3, replicates=199, seed=1))
    assert [f.conditions for f in result.findings] == [{"c0": 2}]


def test_two_planted_gaps_in_opposite_directions_are_both_found():
    frame = _frame(60_000, 4, (({"c2": 1, "c3": 0}, 0.15), ({"c0": 4, "c4": 2}, -0.2)))
    result = scan(frame, ScanSpec("y", 1, COLUMNS, depth=3, replicates=199, seed=1))
    found = sorted(tuple(sorted(f.conditions.items())) for f in result.findings)
    assert found == [(("c0", 4), ("c4", 2)), (("c2", 1), ("c3", 0))]
    assert {f.difference > 0 for f in result.findings} == {True, False}


def test_noise_finds_nothing_and_says_what_could_have_been_seen():
    frame = _frame(20_000, 5)
    result = scan(frame, ScanSpec("y", 1, COLUMNS[:5], depth=3, replicates=199))
    assert result.findings == ()
    text = result.headline()
    assert text.startswith("No group differs from the rest by more than chance would explain")
    assert "80% chance" in text and result.detectable_median is not None
    # the smallest detectable gap at the median size: a gap that size is found in most simulated runs
    assert 0 < result.detectable_median < result.detectable_smallest < 1  # type: ignore[operator]


def test_groups_counts_and_statistics_against_pandas_and_statsmodels():
    from statsmodels.stats.proportion import proportions_ztest

    frame = _frame(5_000, 6, cards=(3, 2, 4))
    frame.loc[frame.index[:40], "c1"] = np.nan   # missing values: an explicit Unknown value
    cells = _cells_of(frame, ("c0", "c1", "c2"))
    groups = sg.groups_of(cells, 2, 1)
    assert len(groups.n) == sg.group_count(cells.cards, 2) == 3 + 3 + 4 + 9 + 12 + 12
    total_k = frame.y.sum()
    rng = np.random.default_rng(0)
    for g in rng.choice(len(groups.n), 12, replace=False):
        inside = np.ones(len(frame), dtype=bool)
        for j in np.flatnonzero(groups.codes[g] >= 0):
            column = frame[f"c{j}"]
            code = groups.codes[g][j]
            values = sorted(column.dropna().unique())
            inside &= column.isna().to_numpy() if code == len(values) else (column == values[code]).to_numpy()
        assert groups.n[g] == inside.sum()
        assert groups.k[g] == frame.y[inside].sum()
        z, _ = proportions_ztest([frame.y[inside].sum(), total_k - frame.y[inside].sum()],
                                 [inside.sum(), (~inside).sum()])
        assert groups.z[g] == pytest.approx(z, rel=1e-9)


def _cells_of(frame: pd.DataFrame, columns: tuple[str, ...]) -> sg.Cells:
    codes = []
    cards = []
    for c in columns:
        values = sorted(frame[c].dropna().unique())
        code = frame[c].map({v: i for i, v in enumerate(values)}).fillna(len(values)).astype(int).to_numpy()
        codes.append(code)
        cards.append(len(values) + int(frame[c].isna().any()))
    flat = np.ravel_multi_index(tuple(codes), tuple(cards))
    unique, inverse = np.unique(flat, return_inverse=True)
    n = np.bincount(inverse).astype(float)
    k = np.bincount(inverse, weights=frame.y.to_numpy()).astype(float)
    return sg.Cells(np.stack(np.unravel_index(unique, tuple(cards)), axis=1), tuple(cards), n, k)


def test_the_replicates_are_the_permutation_distribution():
    """The largest |z| over groups: exact draws, the normal limit and shuffled rows agree (brute force)."""
    frame = _frame(3_000, 7, cards=(3, 2, 4))
    cells = _cells_of(frame, ("c0", "c1", "c2"))
    groups = sg.groups_of(cells, 2, 20)
    exact = sg.calibrate(cells, groups, 1999, 0.05, 1)
    assert exact.method == sg.EXACT
    rng = np.random.default_rng(2)
    codes = [frame[c].to_numpy() for c in ("c0", "c1", "c2")]
    flat = np.ravel_multi_index(tuple(codes), cells.cards)
    order = np.searchsorted(np.ravel_multi_index(tuple(cells.codes.T), cells.cards), flat)
    shuffled = []
    y = frame.y.to_numpy().astype(float)
    for _ in range(600):
        k = np.bincount(order, weights=rng.permutation(y), minlength=len(cells.n))
        g = sg.groups_of(sg.Cells(cells.codes, cells.cards, cells.n, k), 2, 20)
        shuffled.append(np.abs(g.z[g.valid]).max())
    for q in (0.5, 0.9):
        assert np.quantile(exact.maxima, q) == pytest.approx(np.quantile(shuffled, q), abs=0.08)
    normal = _forced(cells, groups, sg.NORMAL)
    assert normal.critical == pytest.approx(exact.critical, abs=0.12)


def _forced(cells: sg.Cells, groups: sg.Groups, method: str) -> sg.Calibration:
    original = sg.replicate_method
    try:
        sg.replicate_method = lambda *args: method  # type: ignore[assignment]
        return sg.calibrate(cells, groups, 1999, 0.05, 1)
    finally:
        sg.replicate_method = original  # type: ignore[assignment]


@pytest.mark.parametrize("method", [sg.EXACT, sg.NORMAL, sg.CALIBRATED])
@pytest.mark.parametrize(("cards", "rows"), [((4, 3, 5, 6), 3_000), ((60, 50, 40, 35), 20_000), ((2, 2, 3, 2), 400)],
                         ids=["dense", "sparse cross", "more groups than cells"])
def test_replicates_summed_over_scanned_groups_only_give_the_full_cross_maxima(monkeypatch, method, cards, rows):
    """The sparse product over the scanned groups (the fast path) against the marginals of the whole cross: the
    same largest |z| in every replicate (exact draws are whole numbers: equal to the bit), and so the same
    critical value and adjusted p-values, on a full cross held dense, on one past DENSE_CELLS, and on one with more
    scanned groups than cells (summed in blocks)."""
    rng = np.random.default_rng(5)
    cells = _simulated_cells(rng, rows, cards, 0.3)
    if method == sg.CALIBRATED:
        expected = cells.n * 0.3
        cells = sg.Cells(cells.codes, cells.cards, cells.n, cells.k, expected, expected * 0.7)
    groups = sg.groups_of(cells, 3, 30)
    assert 0 < groups.valid.sum() < len(groups.valid)   # some groups are too small: the fast path leaves them out
    # Small batches (about 20 replicates, and the scanned groups in blocks): the draws must not depend on the path.
    full = math.prod(cards)
    monkeypatch.setattr(sg, "BATCH_BYTES", 8 * 20 * (full if full <= sg.DENSE_CELLS else len(cells.n)))
    runs = {}
    for path, entries, work in (("cross", 0, sg.SPARSE_WORK), ("scanned", sg.SPARSE_ENTRIES, 0)):
        monkeypatch.setattr(sg, "SPARSE_ENTRIES", entries)
        monkeypatch.setattr(sg, "SPARSE_WORK", work)
        monkeypatch.setattr(sg, "replicate_method", lambda *args: method)
        scale, _ = sg._null_linear(cells, groups, method)
        assert (sg._scanned_indicator(cells, groups, scale, 99) is None) == (path == "cross")
        runs[path] = sg.calibrate(cells, groups, 99, 0.05, 3)
    cross, scanned = runs["cross"], runs["scanned"]
    assert scanned.method == cross.method == method
    if method == sg.EXACT:
        np.testing.assert_array_equal(scanned.maxima, cross.maxima)
    else:   # float sums of the same cells, in another order for the dense cross
        np.testing.assert_allclose(scanned.maxima, cross.maxima, rtol=1e-5)
    assert scanned.critical == pytest.approx(cross.critical, rel=1e-5)
    np.testing.assert_array_equal(scanned.p_adjusted(groups.z), cross.p_adjusted(groups.z))


def _simulated_cells(rng: np.random.Generator, n: int, cards: tuple[int, ...], p: np.ndarray | float) -> sg.Cells:
    """A count table drawn directly: cell sizes multinomial, positives binomial (exactly as drawing rows)."""
    sizes = rng.multinomial(n, np.full(math.prod(cards), 1 / math.prod(cards)))
    positives = rng.binomial(sizes, p)
    keep = sizes > 0
    codes = np.stack(np.unravel_index(np.flatnonzero(keep), cards), axis=1)
    return sg.Cells(codes, cards, sizes[keep].astype(float), positives[keep].astype(float))


def test_under_the_null_the_scan_rarely_reports_anything():
    """A small version of benchmarks/bench_scan.py: 150 noise tables, the share reporting anything."""
    rng = np.random.default_rng(11)
    cards = (3, 2, 3, 2, 2)
    reported = 0
    runs = 150
    for run in range(runs):
        cells = _simulated_cells(rng, 4_000, cards, 0.2)
        groups = sg.groups_of(cells, 3, 30)
        calibration = sg.calibrate(cells, groups, 99, 0.05, run)
        reported += bool((groups.valid & sg.significant_p(calibration.p_adjusted(groups.z), 0.05)).any())
    # at most 5% expected; 150 runs: reject only beyond what chance allows (binomial upper 99.9%: 16)
    assert reported <= 16, reported


def test_planted_slices_are_recovered_exactly_with_few_false_findings():
    """A small version of benchmarks/bench_scan.py's planted scenario: 1-3 disjoint slices of 2-3 columns holding
    1-5% of 20,000 rows, each lifted so that its expected z against the rest is 6.5 (an oracle testing only the
    slice finds it with power about 1); the scan's findings must be exactly the slices in most runs."""
    rng = np.random.default_rng(17)
    cards = (3, 2, 4, 3, 2, 5)
    rows, base, runs = 20_000, 0.3, 60
    codes = np.stack(np.unravel_index(np.arange(math.prod(cards)), cards), axis=1)
    exact, fdp = 0, 0.0
    for run in range(runs):
        slices: list[dict[int, int]] = []
        while len(slices) < int(rng.integers(1, 4)):
            columns = sorted(rng.choice(len(cards), int(rng.integers(2, 4)), replace=False).tolist())
            if not 0.01 <= 1 / math.prod(cards[j] for j in columns) <= 0.05:
                continue
            candidate = {j: int(rng.integers(0, cards[j])) for j in columns}
            if all(any(j in other and other[j] != v for j, v in candidate.items()) for other in slices):
                slices.append(candidate)
        rate = np.full(len(codes), base)
        for slice_ in slices:
            inside = np.all([codes[:, j] == v for j, v in slice_.items()], axis=0)
            n = rows / math.prod(cards[j] for j in slice_)
            rate[inside] += 6.5 * math.sqrt(base * (1 - base) * (1 / n + 1 / (rows - n)))
        sizes = rng.multinomial(rows, np.full(len(codes), 1 / len(codes)))
        cells = sg.Cells(codes[sizes > 0], cards, sizes[sizes > 0].astype(float),
                         rng.binomial(sizes, rate)[sizes > 0].astype(float))
        groups = sg.groups_of(cells, 3, 30)
        calibration = sg.calibrate(cells, groups, 99, 0.05, run)
        chosen = sg.carriers(cells, groups, groups.valid & sg.significant_p(calibration.p_adjusted(groups.z), 0.05),
                             calibration.critical)
        found = [{int(j): int(groups.codes[g][j]) for j in np.flatnonzero(groups.codes[g] >= 0)} for g in chosen]
        exact += sorted(map(sorted, map(dict.items, found))) == sorted(map(sorted, map(dict.items, slices)))
        fdp += sum(f not in slices for f in found) / max(1, len(found))
    # the benchmark measures about 96% exact recovery and under 1% FDP; 60 runs: fail only far beyond chance
    assert exact >= 0.85 * runs, exact
    assert fdp / runs <= 0.06, fdp / runs


def test_error_rates_find_a_model_that_errs_more_in_one_group():
    rng = np.random.default_rng(8)
    frame = _frame(30_000, 8, cards=(4, 3, 5))
    truth = frame.y.to_numpy()
    wrong = rng.random(len(frame)) < np.where((frame.c0 == 2) & (frame.c2 == 1) & (truth == 0), 0.35, 0.1)
    frame["pred"] = np.where(wrong, 1 - truth, truth)
    result = scan(frame, ScanSpec("y", 1, ("c0", "c1", "c2"), measure="fpr", prediction="pred", replicates=199))
    assert [f.conditions for f in result.findings] == [{"c0": 2, "c2": 1}]
    finding = result.findings[0]
    negatives = (truth == 0) & (frame.c0 == 2).to_numpy() & (frame.c2 == 1).to_numpy()
    assert finding.n == negatives.sum()
    assert finding.rate == pytest.approx(frame.pred[negatives].mean())
    assert finding.sentence.split(": ")[1].startswith("false positive rate")
    fnr = scan(frame, ScanSpec("y", 1, ("c0", "c1", "c2"), measure="fnr", prediction="pred", replicates=199))
    assert fnr.findings == ()


def test_the_compas_calibration_example_as_published():
    """AIF360's bias scan on COMPAS (ProPublica's two-year file, 6,172 rows after the usual filters), a logistic
    regression on decile_score alone: with AIF360's favourable label (no recidivism), the model over-predicts it
    for people with more than 5 priors and under-predicts it for people with none."""
    from sklearn.linear_model import LogisticRegression

    from luskin_core.counting.data import load_sample

    d = load_sample("compas")
    d = d[(d.days_b_screening_arrest <= 30) & (d.days_b_screening_arrest >= -30) & (d.is_recid != -1)
          & (d.c_charge_degree != "O") & (d.score_text != "N/A")].copy()
    assert len(d) == 6172
    no_recid = (d.two_year_recid == 0).astype(int)
    model = LogisticRegression().fit(d[["decile_score"]], no_recid)
    d["p"] = model.predict_proba(d[["decile_score"]])[:, 1]
    d["no_recid"] = no_recid
    spec = ScanSpec("no_recid", 1, ("sex", "race", "age_cat", "c_charge_degree", "priors_count"), depth=3,
                    measure="calibration", probability="p", bins=(("priors_count", (1, 6)),), seed=3)
    result = scan(d, spec)
    by_group = {tuple(f.conditions.items()): f for f in result.findings}
    over = by_group[(("priors_count", "priors_count 6 or over"),)]
    under = by_group[(("priors_count", "priors_count under 1"),)]
    assert over.difference < 0 and "over-predicted" in over.sentence
    assert under.difference > 0 and "under-predicted" in under.sentence
    assert over.rate == pytest.approx(1 - d.two_year_recid[d.priors_count > 5].mean())
    assert over.rest_rate == pytest.approx(d.p[d.priors_count > 5].mean())
    assert result.findings[0] in (over, under)


def test_the_json_has_every_field_a_user_relies_on():
    frame = _frame(20_000, 9, ((PLANTED, 0.25),), cards=CARDS[:4])
    frame["c1"] = frame["c1"].map({0: "Female", 1: "Male"})
    result = scan(frame, ScanSpec("y", 1, COLUMNS[:4], replicates=199))
    document = json.loads(json.dumps(result.to_dict()))
    assert document["groups_scanned"] == result.groups_scanned > 0
    assert document["replicates"] == 199
    assert "family-wise error rate" in document["error_control"]
    finding = document["findings"][0]
    assert finding["conditions"] == {"c0": 1, "c1": "Female", "c2": 3}
    for key in ("n", "rate", "rest_rate", "difference", "ci_low", "ci_high", "p_adjusted", "sentence"):
        assert key in finding
    assert finding["ci_low"] < finding["difference"] < finding["ci_high"]


def test_numeric_columns_with_many_values_are_binned_with_readable_labels():
    rng = np.random.default_rng(10)
    frame = _frame(20_000, 10, cards=(3, 2))
    frame["age"] = rng.integers(18, 80, len(frame))
    frame["income"] = rng.gamma(2.0, 20_000.0, len(frame))
    frame.loc[frame.age >= 65, "y"] = (rng.random(int((frame.age >= 65).sum())) < 0.6).astype(int)
    result = scan(frame, ScanSpec("y", 1, ("c0", "c1", "age", "income"), replicates=199))
    labels = dict(result.columns)
    # whole numbers: ranges of whole numbers at round cut points, each row in exactly the range its label names
    ages = labels["age"]
    assert len(ages) == 4 and ages[0].startswith("age under ") and ages[-1].endswith(" or over")
    bounds = []
    for label in ages[1:-1]:
        low, high = (int(x) for x in label.removeprefix("age ").split("-"))
        bounds.append((low, high))
    assert bounds[0][0] == int(ages[0].removeprefix("age under ")) and \
        bounds[-1][1] + 1 == int(ages[-1].removeprefix("age ").removesuffix(" or over"))
    # decimals: "from ... to under ...", cut at two significant digits
    assert labels["income"][1].startswith("income ") and " to under " in labels["income"][1]
    assert all(c == float(f"{c:.2g}") for c in dict(result.spec.bins)["income"])
    finding = next(f for f in result.findings if "age" in f.conditions)
    assert finding.conditions == {"age": ages[-1]} and finding.sentence.startswith(ages[-1])
    first, last = int(ages[0].removeprefix("age under ")), bounds[-1][1]
    top = int(ages[-1].removeprefix("age ").removesuffix(" or over"))
    assert finding.n == int((frame.age >= top).sum())
    document = json.loads(json.dumps(result.to_dict()))
    assert {"age": ages[-1]} in [f["conditions"] for f in document["findings"]]
    in_middle = int(((frame.age >= first) & (frame.age <= last)).sum())
    assert in_middle == len(frame) - int((frame.age < first).sum()) - finding.n


def test_the_page_offers_readable_columns_by_default():
    from luskin_core.analyses.scan import default_columns

    rng = np.random.default_rng(16)
    n = 2_000
    frame = pd.DataFrame({"id": np.arange(n), "age": rng.integers(18, 90, n), "sex": rng.choice(["F", "M"], n),
                          "zip": rng.integers(10_000, 10_060, n), "city": [f"city {i % 40}" for i in range(n)],
                          "score": rng.random(n)})
    assert default_columns(frame, list(frame.columns)) == ["age", "sex", "score"]


def test_the_default_columns_leave_out_weights_and_identifiers_on_real_files(tmp_path):
    """Adult's fnlwgt (a survey weight: 37.5% of rows hold a value no other row holds) and COMPAS's id are not
    offered; every attribute that is (age, hours, counts, the few-valued columns) is; the corpus's files offer
    their columns with values, none with one value or none."""
    import sys
    from pathlib import Path

    from luskin_core.analyses.scan import default_columns, per_row_name, per_row_values
    from luskin_core.counting.data import load_data, load_sample

    adult = load_sample("adult")
    chosen = default_columns(adult, [c for c in adult.columns if c != "income"])
    assert "fnlwgt" not in chosen and chosen[:2] == ["age", "workclass"] and {"race", "sex"} <= set(chosen)
    assert per_row_values(adult["fnlwgt"]) and not any(per_row_values(adult[c]) for c in
                                                       ("age", "hours-per-week", "capital-gain", "education-num"))
    compas = load_sample("compas")
    chosen = default_columns(compas, [c for c in compas.columns if c != "two_year_recid"])
    assert "id" not in chosen and {"sex", "age", "race", "decile_score"} <= set(chosen)
    numbers = [c for c in compas.columns if pd.api.types.is_numeric_dtype(compas[c]) and compas[c].nunique() > 12]
    assert [c for c in numbers if per_row_values(compas[c])] == ["id"]
    # by name: identifiers and weights, but not a person's weight
    assert all(map(per_row_name, ["fnlwgt", "PERWT", "person_id", "PersonID", "sampling weight", "final_weight", "ID"]))
    assert not any(map(per_row_name, ["weight", "Weight (kg)", "age", "paid", "hours-per-week", "idle_days"]))
    # a weight in decimals is left out by its name; the same numbers named "score" are an attribute
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"perwt": rng.random(500) * 100, "score": rng.random(500), "empty": np.nan,
                          "same": "x", "sex": rng.choice(["F", "M"], 500)})
    assert default_columns(frame, list(frame.columns)) == ["score", "sex"]

    sys.path.insert(0, str(Path(__file__).parent))
    from corpus_files import DATA_KINDS, OK

    seen = 0
    for kind in DATA_KINDS:
        if kind.expect != OK or kind.path or kind.name in ("field_50mb", "columns_5000"):
            continue
        path = tmp_path / f"{kind.name}{kind.suffix}"
        path.write_bytes(kind.build())
        frame = load_data(str(path))
        candidates = [c for c in frame.columns if str(c).strip() != "y"]
        chosen = default_columns(frame, candidates)
        assert chosen[:1] == ["race"] and len(chosen) >= 4, kind.name
        for column in chosen:
            series = frame[column]
            assert series.nunique() + series.isna().any() >= 2, (kind.name, column)
            assert not per_row_values(series) or not pd.api.types.is_numeric_dtype(series), (kind.name, column)
        seen += 1
    assert seen >= 25


def test_missing_values_are_an_explicit_unknown_group():
    frame = _frame(20_000, 12, cards=(3, 2, 3))
    frame["c2"] = frame["c2"].map({0: "a", 1: "b", 2: None})
    frame.loc[frame.c2.isna(), "y"] = 1
    result = scan(frame, ScanSpec("y", 1, ("c0", "c1", "c2"), replicates=199))
    # of unknown category: shown with its numbers, set apart from the findings (as the audit sets them apart)
    assert result.findings == ()
    assert [f.conditions for f in result.set_apart] == [{"c2": None}]
    assert result.set_apart[0].labels == ("c2 = Unknown",)


@pytest.mark.parametrize(("change", "message"), [
    (lambda f, s: (f.assign(zip=np.arange(len(f)).astype(str)), ScanSpec("y", 1, ("c0", "zip"))),
     "distinct values, too many to scan"),
    (lambda f, s: (f, ScanSpec("y", 7, ("c0", "c1"))), "never occurs in the outcome column"),
    (lambda f, s: (f, ScanSpec("y", 1, ("c0", "c1"), depth=3)), "only 2 are scanned"),
    (lambda f, s: (f, ScanSpec("y", 1, ("c0", "nope"))), "nope"),
    (lambda f, s: (f, ScanSpec("y", 1, ("c0",), replicates=9)), "replicates cannot calibrate"),
    (lambda f, s: (f, ScanSpec("y", 1, ("c0", "y"))), "also among the columns"),
])
def test_bad_input_gets_a_plain_message(change, message):
    frame = _frame(2_000, 13, cards=(3, 2))
    with pytest.raises(LuskinError, match=message):
        data, spec = change(frame, None)
        scan(data, spec)


def test_a_scan_too_large_says_how_large_and_what_to_drop():
    rng = np.random.default_rng(14)
    frame = pd.DataFrame({f"w{j}": rng.integers(0, 45, 3_000).astype(str) for j in range(6)})
    frame["y"] = rng.integers(0, 2, len(frame))
    with pytest.raises(LuskinError, match=r"too large for the machine: about [\d,.]+ GB of memory for [\d,]+ groups"):
        scan(frame, ScanSpec("y", 1, tuple(f"w{j}" for j in range(6)), depth=6))


def test_the_size_check_is_an_estimate_of_memory_against_the_machine():
    """The same scan fits a large machine and is refused on a small one, with what would fit."""
    from luskin_core.analyses import scan as scan_module

    rng = np.random.default_rng(14)
    frame = pd.DataFrame({f"w{j}": rng.integers(0, 45, 3_000).astype(str) for j in range(6)})
    frame["y"] = rng.integers(0, 2, len(frame))
    spec = ScanSpec("y", 1, tuple(f"w{j}" for j in range(6)), depth=3)
    plan, raw = scan_module._count(frame, spec.audit_spec())
    table = scan_module._cells(plan, raw, "rate")
    need = sg.memory_estimate(len(table.cells.n), table.cells.cards, 3)
    groups = sg.group_count(table.cells.cards, 3)
    assert need == sg.MEMORY_FIXED + sg.MEMORY_PER_CELL * len(table.cells.n) + sg.MEMORY_PER_GROUP * groups
    scan_module._check_size(table, spec, machine=4 * need + 4)        # fits: no refusal
    with pytest.raises(LuskinError) as refused:
        scan_module._check_size(table, spec, machine=2 * need)
    text = str(refused.value)
    assert f"{groups:,} groups over {len(table.cells.n):,} combinations" in text
    assert "Lower the depth to 2 (about" in text and "'w0' (45 values: without it about" in text


def test_same_seed_same_findings_and_a_result_type():
    frame = _frame(20_000, 15, ((PLANTED, 0.2),), cards=CARDS[:4])
    one = scan(frame, ScanSpec("y", 1, COLUMNS[:4], replicates=199, seed=4))
    two = scan(frame, ScanSpec("y", 1, COLUMNS[:4], replicates=199, seed=4))
    assert isinstance(one, ScanResult)
    assert one.to_dict() == two.to_dict()


def _window(frame: pd.DataFrame, spec: ScanSpec) -> int:
    """Bytes between what the scan needs over its groups alone and over its full count table."""
    from luskin_core.analyses import scan as scan_module

    plan, raw = scan_module._count(frame, spec.audit_spec())
    table = scan_module._cells(plan, raw, spec.measure)
    full = sg.memory_estimate(len(table.cells.n), table.cells.cards, spec.depth)
    alone = scan_module.grouping_sets_memory(table.cells.cards, spec.depth)
    assert alone < full
    return (alone + full) // 2


def test_grouping_sets_count_every_group_as_pandas_does():
    """One GROUPING SETS query gives every group's rows and events: pandas' groupby over the same bins, with
    missing values as their own group and rows without an outcome left out."""
    from luskin_core.counting.grouping import grouping_set_counts, membership_counts
    from luskin_core.counting.memory import plan_for_frame

    rng = np.random.default_rng(31)
    n = 8_000
    frame = pd.DataFrame({"city": rng.choice(["Queens", "O'Hare", "Bronx"], n).astype(object),
                          "band": rng.integers(1, 4, n), "age": rng.integers(18, 90, n)})
    frame.loc[rng.random(n) < 0.05, "city"] = None
    frame["y"] = rng.integers(0, 2, n).astype(float)
    frame.loc[rng.random(n) < 0.02, "y"] = np.nan
    spec = ScanSpec("y", 1, ("city", "band", "age"), depth=2)
    plan = plan_for_frame(frame, spec.audit_spec())
    cuts = plan.cell_parts[1].cuts
    kept = frame.dropna(subset=["y"]).assign(age=lambda f: np.searchsorted(cuts, f.age, side="right"))
    keys = {"city": "g0", "band": "c0", "age": "c1"}
    sets = [("city",), ("band",), ("age",), ("city", "band"), ("city", "age"), ("band", "age")]
    found = grouping_set_counts(frame, plan, [tuple(keys[c] for c in s) for s in sets])
    flags = {c: np.asarray(found[f"q_{k}"], dtype=int) for c, k in keys.items()}
    for columns in sets:
        rows = np.all([flags[c] == (0 if c in columns else 1) for c in keys], axis=0)
        got = {tuple(None if v is None else (float(v) if c != "city" else v) for v, c in
                     zip((found[keys[c]][i] for c in columns), columns)): (int(found["n"][i]), int(found["positives"][i]))
               for i in np.flatnonzero(rows)}
        expected = kept.groupby(list(columns), dropna=False)["y"].agg(["size", "sum"])
        want = {tuple(None if pd.isna(v) else (float(v) if c != "city" else v) for v, c in
                      zip(key if isinstance(key, tuple) else (key,), columns)): (int(r["size"]), int(r["sum"]))
                for key, r in expected.iterrows()}
        assert got == want, columns
    grand = np.all([flags[c] == 1 for c in keys], axis=0)
    assert int(found["n"][grand][0]) == len(kept) and int(found["positives"][grand][0]) == int(kept.y.sum())
    # the rows of two overlapping groups, counted by which of them they belong to
    member, counts = membership_counts(frame, plan, [{"g0": "O'Hare"}, {"g0": None, "c0": 2.0}, {"c0": 2.0}])
    both = member[:, 0] & member[:, 2]
    assert int(counts["n"][both].sum()) == int(((kept.city == "O'Hare") & (kept.band == 2)).sum())
    unknown = member[:, 1]
    assert int(counts["n"][unknown].sum()) == int((kept.city.isna() & (kept.band == 2)).sum())
    assert int(counts["n"].sum()) == int(((kept.city == "O'Hare") | (kept.band == 2)).sum())


def test_a_scan_too_large_for_its_full_table_counts_its_groups_instead():
    """Over the memory limit for the full count table but not for its groups, the scan counts the groups
    with GROUPING SETS and calibrates with a union bound: the same findings as the full-table scan, said in
    the JSON; the bound at the critical value is the level (each group's exact hypergeometric tail, scipy)."""
    from scipy.stats import hypergeom

    frame = _frame(60_000, 1, slices=((PLANTED, 0.15), ({"c3": 2, "c5": 1}, -0.12)))
    spec = ScanSpec("y", 1, COLUMNS, replicates=199, calibration="replicates")
    full = scan(frame, spec)
    limit = _window(frame, spec)
    counted = scan(frame, spec, memory=limit)
    assert full.method == sg.EXACT and counted.method == sg.UNION and counted.replicates == 0
    assert [f.conditions for f in counted.findings] == [f.conditions for f in full.findings] == [
        {"c3": 2, "c5": 1}, PLANTED]
    for a, b in zip(full.findings, counted.findings):
        assert (a.n, a.events, a.rate, a.rest_rate, a.difference) == (b.n, b.events, b.rate, b.rest_rate, b.difference)
        assert b.p_adjusted < 1e-5   # (a floor of about 1e-10 a group: the rounding of the exact laws, counted)
    assert (counted.groups_scanned, counted.groups_too_small) == (full.groups_scanned, full.groups_too_small)
    document = json.loads(json.dumps(counted.to_dict()))
    assert document["replicate_method"] == sg.UNION and document["replicates"] == 0
    assert document["null_report_rate"] == spec.level
    assert "union bound" in document["error_control"] and "GROUPING SETS" in document["error_control"]
    # the bar: the sum over groups of each group's chance of reaching it is the level
    total, positives = len(frame), int(frame.y.sum())
    counts = [frame.groupby(list(s)).size().to_numpy() for s in
              [tuple(COLUMNS[j] for j in c) for c in sg.subsets_of(len(COLUMNS), 3)]]
    sizes = np.concatenate(counts).astype(float)
    sizes = sizes[(sizes >= spec.min_size) & (total - sizes >= spec.min_size)]
    p = positives / total

    def bound(t: float) -> float:
        scale = math.sqrt(total) / np.sqrt(p * (1 - p) * sizes * (total - sizes))
        high, low = np.ceil(sizes * p + t / scale - 1e-9), np.floor(sizes * p - t / scale + 1e-9)
        return float(hypergeom.sf(high - 1, total, positives, sizes).sum()
                     + hypergeom.cdf(low, total, positives, sizes).sum())

    assert len(sizes) == counted.groups_scanned
    c = counted.critical_value
    assert bound(c * (1 + 1e-6)) <= spec.level <= bound(c * (1 - 1e-3))
    assert abs(c - full.critical_value) < 0.2


def test_a_table_behind_ibis_too_large_for_its_full_table_is_refused_in_plain_words():
    """GROUPING SETS are written for frames and files only: a table behind Ibis over the memory limit gets the
    scan's plain refusal (it raised "TypeError: 'Source' object is not subscriptable": the check asked the
    source for a ``counts`` method no executor has, so every Ibis source passed it)."""
    from luskin_core.counting.grouping import supports
    from luskin_core.counting.sources import Source

    frame = _frame(60_000, 1, slices=((PLANTED, 0.15),))
    spec = ScanSpec("y", 1, COLUMNS, replicates=199, calibration="replicates")
    source = Source.from_frame(frame)
    assert supports(frame) and not supports(source)
    with pytest.raises(LuskinError, match=r"too large for the machine: about [\d,.]+ [KMG]B of memory"):
        scan(source, spec, memory=_window(frame, spec))


def test_a_scan_too_large_for_its_groups_too_is_refused():
    frame = _frame(20_000, 3, cards=CARDS[:5])
    spec = ScanSpec("y", 1, COLUMNS[:5], replicates=199)
    with pytest.raises(LuskinError, match=r"too large for the machine: .* where a scan may use 1 MB here\. "):
        scan(frame, spec, memory=1_000_000)


def test_the_result_says_the_chance_of_reporting_anything_under_the_null():
    """With R replicates the max-T test rejects when the observed maximum's rank r among R + 1 exchangeable
    values has r / (R + 1) strictly below the level (the project's p < alpha): 49 / 1,000 at 999 replicates,
    9 / 200 at 199 (checked against a count of ranks)."""
    frame = _frame(4_000, 2, cards=(3, 2, 3))
    for replicates, size in ((199, 9 / 200), (999, 49 / 1000), (1018, 50 / 1019), (39, 1 / 40), (58, 2 / 59)):
        result = scan(frame, ScanSpec("y", 1, ("c0", "c1", "c2"), replicates=replicates))
        ranks = np.arange(1, replicates + 2)   # the observed maximum's rank among R + 1 exchangeable values
        assert result.null_rate == pytest.approx(size) == pytest.approx(np.mean((ranks / (replicates + 1)) < 0.05))
        document = result.to_dict()
        assert document["null_report_rate"] == pytest.approx(size) and "ranks" in document["null_report_rate_is"]


def test_error_rates_and_a_true_false_column_on_the_grouping_sets_path():
    """A model's false positive and false negative rates, with a column of True/False among those scanned: the
    groups counted one grouping at a time give the full table's findings, sizes and events."""
    frame = _frame(60_000, 4)
    rng = np.random.default_rng(5)
    inside = (frame.c0 == 1) & (frame.c2 == 3)
    frame["pred"] = np.where(rng.random(len(frame)) < np.where(inside, 0.5, 0.2), 1, 0)
    frame["flag"] = rng.random(len(frame)) < 0.5
    for measure in ("fpr", "fnr"):
        spec = ScanSpec("y", 1, (*COLUMNS[:7], "flag"), replicates=199, measure=measure, prediction="pred")
        full, counted = scan(frame, spec), scan(frame, spec, memory=_window(frame, spec))
        assert counted.method == sg.UNION and [f.conditions for f in full.findings] == [{"c0": 1, "c2": 3}]
        assert [(f.conditions, f.n, f.events) for f in counted.findings] == [
            (f.conditions, f.n, f.events) for f in full.findings]
        assert (counted.n_judged, counted.groups_scanned) == (full.n_judged, full.groups_scanned)
