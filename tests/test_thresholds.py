"""Per-group thresholds: exactness, PSO reproducibility, error messages, the report."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from luskin_core.corrections.thresholds import (
    GroupThresholdOptimizer,
    group_rates,
    objective,
    roc_curves,
    tune_thresholds,
)
from luskin_core.errors import LuskinError


def _brute_force(s, y, g, lam):
    """Best objective over every combination of candidate thresholds (observed scores + inf)."""
    labels = list(np.unique(g))
    cands = [list(np.unique(s[g == lab])) + [np.inf] for lab in labels]
    return max(
        objective(s, y, g, dict(zip(labels, combo)), lam) for combo in itertools.product(*cands)
    )


@st.composite
def scored_groups(draw, max_groups=2, max_rows=24):
    """Small random data where every group has a positive and a negative row."""
    k = draw(st.integers(2, max_groups))
    n_extra = draw(st.integers(0, max_rows - 2 * k))
    ints = draw(st.booleans())  # ties (integer scores) or continuous scores
    score = st.integers(0, 5).map(float) if ints else st.floats(0, 1, allow_nan=False)
    s, y, g = [], [], []
    for grp in range(k):
        for lab in (0, 1):
            s.append(draw(score))
            y.append(lab)
            g.append(grp)
    for _ in range(n_extra):
        s.append(draw(score))
        y.append(draw(st.integers(0, 1)))
        g.append(draw(st.integers(0, k - 1)))
    lam = draw(st.sampled_from([0.0, 0.25, 1.0, 4.0]))
    return np.array(s), np.array(y), np.array(g), lam


@settings(max_examples=150, deadline=None)
@given(scored_groups(max_groups=2))
def test_exact_two_groups_matches_brute_force(data):
    s, y, g, lam = data
    opt = GroupThresholdOptimizer(lam=lam).fit(s, y, groups=g)
    best = _brute_force(s, y, g, lam)
    assert opt.objective_ == pytest.approx(best, abs=1e-12)
    # the reported thresholds really achieve that objective on these rows
    assert objective(s, y, g, opt.thresholds_, lam) == pytest.approx(best, abs=1e-12)


@settings(max_examples=40, deadline=None)
@given(scored_groups(max_groups=3, max_rows=14))
def test_exact_three_groups_matches_brute_force(data):
    s, y, g, lam = data
    opt = GroupThresholdOptimizer(lam=lam).fit(s, y, groups=g)
    assert opt.objective_ == pytest.approx(_brute_force(s, y, g, lam), abs=1e-12)


def _synthetic(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    g = np.where(rng.random(n) < 0.6, "A", "B")
    y = (rng.random(n) < np.where(g == "A", 0.35, 0.5)).astype(int)
    s = 1 / (1 + np.exp(-(1.5 * y - 0.7 + 0.4 * (g == "B") + rng.normal(0, 1, n))))
    return s, y, g


def test_predict_uses_score_at_least_threshold():
    s, y, g = _synthetic()
    opt = GroupThresholdOptimizer().fit(s, y, groups=g)
    pred = opt.predict(s, groups=g)
    for lab, t in opt.thresholds_.items():
        m = g == lab
        assert np.array_equal(pred[m], (s[m] >= t).astype(int))
    # accuracy of the tuned predictions is the accuracy inside the objective
    rates = group_rates(s, y, g, opt.thresholds_)
    ef = abs(rates["A"].tpr - rates["B"].tpr) + abs(rates["A"].fpr - rates["B"].fpr)
    assert np.mean(pred == y) - ef == pytest.approx(opt.objective_)
    assert opt.reference_ == "A"  # the largest group


def test_tuning_shrinks_gaps_and_lambda_zero_maximises_accuracy():
    s, y, g = _synthetic()
    before = group_rates(s, y, g, 0.5)
    gap_before = abs(before["A"].tpr - before["B"].tpr) + abs(before["A"].fpr - before["B"].fpr)
    after = group_rates(s, y, g, GroupThresholdOptimizer(lam=1.0).fit(s, y, groups=g).thresholds_)
    gap_after = abs(after["A"].tpr - after["B"].tpr) + abs(after["A"].fpr - after["B"].fpr)
    assert gap_after < gap_before / 2
    acc_only = GroupThresholdOptimizer(lam=0.0).fit(s, y, groups=g)
    assert acc_only.objective_ >= np.mean((s >= 0.5) == y)


def test_pso_reproducible_and_never_above_exact(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    s, y, g = _synthetic(1500, seed=3)
    a = GroupThresholdOptimizer(solver="pso", random_state=7, iters=60).fit(s, y, groups=g)
    b = GroupThresholdOptimizer(solver="pso", random_state=7, iters=60).fit(s, y, groups=g)
    assert a.thresholds_ == b.thresholds_
    assert a.objective_ == b.objective_
    exact = GroupThresholdOptimizer().fit(s, y, groups=g)
    assert a.objective_ <= exact.objective_ + 1e-12
    # the objective reported for PSO is the true objective of its thresholds
    assert objective(s, y, g, a.thresholds_) == pytest.approx(a.objective_)
    # pyswarms must not leave a log file behind, nor touch numpy's global generator
    assert not (tmp_path / "report.log").exists()
    np.random.seed(123)
    expected = np.random.random()
    np.random.seed(123)
    GroupThresholdOptimizer(solver="pso", random_state=1, iters=5).fit(s, y, groups=g)
    assert np.random.random() == expected


def test_get_params_round_trip():
    opt = GroupThresholdOptimizer(lam=0.5, solver="pso", random_state=3)
    assert opt.get_params()["lam"] == 0.5
    assert GroupThresholdOptimizer(**opt.get_params()).get_params() == opt.get_params()


@pytest.mark.parametrize(
    "scores, y, groups, words",
    [
        ([0.1, np.nan, 0.3, 0.4], [0, 1, 0, 1], ["a", "a", "b", "b"], "no score"),
        ([0.1, 0.2, 0.3, 0.4], [1, 1, 1, 1], ["a", "a", "b", "b"], "positive outcome"),
        ([0.1, 0.2, 0.3, 0.4], [0, 0, 0, 0], ["a", "a", "b", "b"], "negative outcome"),
        ([0.1, 0.2, 0.3, 0.4], [0, 1, 0, 0], ["a", "a", "b", "b"], "'b' has no rows with a positive"),
        ([0.1, 0.2, 0.3, 0.4], [0, 1, 1, 1], ["a", "a", "b", "b"], "'b' has no rows with a negative"),
        ([0.1, 0.2, 0.3, 0.4], [0, 1, 0, 1], ["a", "a", "a", "a"], "at least two groups"),
        ([], [], [], "no rows"),
        ([0.1, 0.2], [0, 1, 1], ["a", "b"], "same number of rows"),
        (["x", "y", "z", "w"], [0, 1, 0, 1], ["a", "a", "b", "b"], "numbers only"),
    ],
)
def test_user_mistakes_raise_plain_luskin_error(scores, y, groups, words):
    with pytest.raises(LuskinError, match=words):
        GroupThresholdOptimizer().fit(scores, y, groups=groups)


def test_bad_settings_raise_luskin_error():
    s, y, g = _synthetic(200)
    with pytest.raises(LuskinError, match="solver"):
        GroupThresholdOptimizer(solver="grid").fit(s, y, groups=g)
    with pytest.raises(LuskinError, match="lambda"):
        GroupThresholdOptimizer(lam=-1).fit(s, y, groups=g)
    with pytest.raises(LuskinError, match="fit"):
        GroupThresholdOptimizer().predict(s, groups=g)
    opt = GroupThresholdOptimizer().fit(s, y, groups=g)
    with pytest.raises(LuskinError, match="not tuned for"):
        opt.predict(s, groups=np.where(g == "A", "A", "C"))


def test_roc_curves_run_from_origin_to_corner():
    s, y, g = _synthetic(800)
    curves = roc_curves(s, y, g, max_points=100)
    for curve in curves.values():
        assert curve.fpr[0] == 0 and curve.tpr[0] == 0
        assert curve.fpr[-1] == 1 and curve.tpr[-1] == 1
        assert np.all(np.diff(curve.fpr) >= 0) and np.all(np.diff(curve.tpr) >= 0)
        assert len(curve.fpr) <= 100


# -- the report on real data (COMPAS) -------------------------------------------------------


@pytest.fixture(scope="module")
def compas():
    from luskin_core.counting import data

    return data.load_sample("compas"), data.PRESETS["compas"]


def test_report_with_score_column(compas):
    frame, preset = compas
    rep = tune_thresholds(frame, preset.spec, model=None, score_column="decile_score", seed=1)
    assert rep.n_tune + rep.n_test == 6150
    assert set(rep.thresholds) == {"African-American", "Caucasian"}
    # A 1-10 risk score has no default threshold: "before" is the best single cut-off on the tuning rows.
    assert rep.before is not None and len({r.threshold for r in rep.before.groups.values()}) == 1
    gaps = rep.after.groups
    assert abs(gaps["African-American"].fpr - gaps["Caucasian"].fpr) < 0.1
    d = json.loads(json.dumps(rep.to_dict()))
    assert set(d["after"]["groups"]["Caucasian"]) >= {"tpr", "fpr"}
    # same seed, same answer
    again = tune_thresholds(frame, preset.spec, model=None, score_column="decile_score", seed=1)
    a, b = again.to_dict(), rep.to_dict()
    a.pop("fit_seconds"), b.pop("fit_seconds")
    assert a == b


def test_report_with_trained_model_reduces_test_gaps(compas):
    frame, preset = compas
    rep = tune_thresholds(frame, preset.spec, model="LR", features=preset.features, seed=0)
    assert rep.default_threshold == 0.5
    assert (rep.n_train, rep.n_tune, rep.n_test) == (3690, 1230, 1230)
    assert rep.before is not None
    assert rep.after.tpr_gap + rep.after.fpr_gap < rep.before.tpr_gap + rep.before.fpr_gap
    assert rep.after.accuracy > 0.6
    for r in (rep.before_tune, rep.after_tune):
        assert set(r.groups) == set(rep.roc_tune)


def test_cross_fitted_tuning_uses_train_and_validation_rows(compas):
    frame, preset = compas
    rep = tune_thresholds(frame, preset.spec, model="LR", features=preset.features, seed=0,
                          tuning="crossfit")
    assert (rep.n_train, rep.n_tune, rep.n_test) == (4920, 4920, 1230)
    assert rep.tuning_method == "crossfit" and rep.to_dict()["tuning_method"] == "crossfit"
    assert rep.after.tpr_gap < rep.before.tpr_gap
    with pytest.raises(LuskinError, match="model to retrain"):
        tune_thresholds(frame, preset.spec, model=None, score_column="decile_score",
                        tuning="crossfit")


def test_report_errors_are_plain(compas):
    frame, preset = compas
    with pytest.raises(LuskinError, match="not both"):
        tune_thresholds(frame, preset.spec, model="LR", score_column="decile_score")
    with pytest.raises(LuskinError):
        tune_thresholds(frame, preset.spec, model=None, score_column="no_such_column")
    with pytest.raises(LuskinError, match="model type must be one of LR, MLP, SVM, not 'forest'"):
        tune_thresholds(frame, preset.spec, model="forest")


def test_best_common_threshold_is_the_most_accurate_single_cut():
    from luskin_core.corrections.thresholds import best_common_threshold

    rng = np.random.default_rng(3)
    for _ in range(20):
        s = rng.integers(0, 12, 60).astype(float)
        y = (rng.random(60) < (s + 1) / 14).astype(int)
        t = best_common_threshold(s, y)
        def acc(th: float, s: np.ndarray = s, y: np.ndarray = y) -> float:
            return float(np.mean((s >= th) == y))

        best = max(acc(c) for c in np.append(np.unique(s), np.inf))
        assert acc(t) == pytest.approx(best)
        assert np.isfinite(t)


def test_a_score_column_is_compared_with_a_single_threshold():
    """An agency's own score (COMPAS decile_score) gets a 'before': its own or the best common cut-off."""
    from luskin_core.corrections.thresholds import tune_thresholds
    from luskin_core.counting.data import PRESETS, load_sample

    compas = load_sample("compas")
    spec = PRESETS["compas"].spec
    best = tune_thresholds(compas, spec, model=None, score_column="decile_score")
    assert best.before is not None and best.default_threshold is not None
    assert len({r.threshold for r in best.before.groups.values()}) == 1
    agency = tune_thresholds(compas, spec, model=None, score_column="decile_score", default_threshold=5)
    assert agency.default_threshold == 5.0
    assert {r.threshold for r in agency.before.groups.values()} == {5.0}
    # The tuned thresholds narrow the TPR gap that one shared cut-off leaves.
    assert agency.after.tpr_gap < agency.before.tpr_gap


def test_sensitive_features_is_fairlearns_name_for_groups() -> None:
    rng = np.random.default_rng(3)
    s, y, g = rng.random(300), (rng.random(300) < 0.4).astype(int), rng.choice(["a", "b", "c"], 300)
    by_groups = GroupThresholdOptimizer(lam=0.5).fit(s, y, groups=g)
    by_name = GroupThresholdOptimizer(lam=0.5).fit(s, y, sensitive_features=g)
    assert by_name.thresholds_ == by_groups.thresholds_
    np.testing.assert_array_equal(by_name.predict(s, sensitive_features=g), by_groups.predict(s, groups=g))
    with pytest.raises(LuskinError, match="once"):
        GroupThresholdOptimizer().fit(s, y, groups=g, sensitive_features=g)
    with pytest.raises(LuskinError, match="sensitive_features"):
        GroupThresholdOptimizer().fit(s, y)


# ------------------------------------------------------------------------------------------
# scikit-learn habits: NotFittedError, NaN alike in fit and predict, classes_, a wrapped estimator
# ------------------------------------------------------------------------------------------
def test_predict_before_fit_is_sklearns_not_fitted_error_and_a_plain_message():
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    s, _, g = _synthetic(200)
    opt = GroupThresholdOptimizer()
    with pytest.raises(NotFittedError):
        check_is_fitted(opt)
    with pytest.raises(NotFittedError, match="before predicting") as caught:
        opt.predict(s, groups=g)
    assert isinstance(caught.value, LuskinError)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_missing_or_infinite_score_is_refused_at_fit_and_at_predict_alike(bad):
    s, y, g = _synthetic(400)
    holed = s.copy()
    holed[[3, 7]] = bad
    with pytest.raises(LuskinError) as at_fit:
        GroupThresholdOptimizer().fit(holed, y, groups=g)
    opt = GroupThresholdOptimizer().fit(s, y, groups=g)
    with pytest.raises(LuskinError) as at_predict:
        opt.predict(holed, groups=g)            # before: NaN >= t was a silent "no"
    assert str(at_fit.value) == str(at_predict.value)


def test_learned_attributes_follow_scikit_learn():
    s, y, g = _synthetic(400)
    opt = GroupThresholdOptimizer().fit(s, y, groups=g)
    assert opt.classes_.tolist() == [0, 1] and opt.n_features_in_ == 1
    column = GroupThresholdOptimizer().fit(s.reshape(-1, 1), y, groups=g)     # one column works as well
    assert column.thresholds_ == opt.thresholds_
    np.testing.assert_array_equal(column.predict(s.reshape(-1, 1), groups=g), opt.predict(s, groups=g))


def _features(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    g = rng.choice(np.array(["A", "B"]), n, p=[0.6, 0.4])
    X = np.column_stack([rng.normal(size=n), rng.normal(size=n), (g == "A").astype(float)])
    p = 1 / (1 + np.exp(-(X[:, 0] + 0.5 * X[:, 1] + 0.8 * X[:, 2] - 0.5)))
    return X, (rng.random(n) < p).astype(int), g


def test_a_fitted_estimator_is_wrapped_with_prefit_and_ends_a_pipeline():
    from sklearn.base import clone
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline, make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y, g = _features()
    model = make_pipeline(StandardScaler(), LogisticRegression()).fit(X, y)
    wrapped = GroupThresholdOptimizer(estimator=model, prefit=True).fit(X, y, groups=g)
    on_scores = GroupThresholdOptimizer().fit(model.predict_proba(X)[:, 1], y, groups=g)
    assert wrapped.thresholds_ == on_scores.thresholds_
    assert wrapped.estimator_ is model and wrapped.n_features_in_ == 3
    np.testing.assert_array_equal(wrapped.predict(X, groups=g), on_scores.predict(model.predict_proba(X)[:, 1],
                                                                                   groups=g))
    # in a Pipeline after the (fitted) model's own preprocessing; groups reach the last step
    scaler = StandardScaler().fit(X)
    lr = LogisticRegression().fit(scaler.transform(X), y)
    pipe = Pipeline([("scale", scaler), ("thr", GroupThresholdOptimizer(estimator=lr, prefit=True))])
    pipe.fit(X, y, thr__groups=g)
    np.testing.assert_array_equal(pipe.predict(X, groups=g), wrapped.predict(X, groups=g))
    assert clone(pipe).get_params()["thr__prefit"] is True
    # without prefit a clone of the estimator is fitted on the rows; the given one stays unfitted
    fresh = LogisticRegression()
    fitted = GroupThresholdOptimizer(estimator=make_pipeline(StandardScaler(), fresh)).fit(X, y, groups=g)
    assert not hasattr(fresh, "coef_") and hasattr(fitted.estimator_[-1], "coef_")
    assert fitted.thresholds_ == wrapped.thresholds_
    with pytest.raises(LuskinError, match="already fitted"):
        GroupThresholdOptimizer(estimator=LogisticRegression(), prefit=True).fit(X, y, groups=g)


def _coded_scores(n: int = 1200, seed: int = 27) -> pd.DataFrame:
    """A score column, sex coded 1/2 (1 is more often positive) and a three-valued region."""
    rng = np.random.default_rng(seed)
    sex = rng.choice([1, 2], n, p=[0.4, 0.6])
    score = rng.random(n) + 0.25 * (sex == 1)
    y = (rng.random(n) < np.clip(score, 0, 1)).astype(int)
    return pd.DataFrame({"SEX": sex, "region": rng.choice(["north", "south", "east"], n), "score": score, "y": y})


def test_the_rest_is_named_by_its_value_and_keeps_its_own_numbers() -> None:
    """Issue 27: the other group of a two-valued column is named by its value (under the name the user gave the
    code: SEX 2 = Female), never 'Non-Male'; the report, its JSON and the curves are keyed by that name, each name
    holds its own group's numbers (checked by hand on the same test rows), and the protected group keeps blue."""
    from luskin_core.corrections.pipeline import prepare_split
    from luskin_core.present import plots
    from luskin_core.spec.audit_spec import AuditSpec

    frame = _coded_scores()
    spec = AuditSpec("y", 1, "SEX == 1", value_names={"SEX": {"1": "Male", "2": "Female"}})
    report = tune_thresholds(frame, spec, model=None, score_column="score")
    assert set(report.thresholds) == set(report.after.groups) == set(report.roc_test) == {"Male", "Female"}
    assert report.reference in ("Male", "Female") and (report.names.group, report.names.other) == ("Male", "Female")
    assert "Non-" not in json.dumps(report.to_dict())
    split = prepare_split(frame, spec, shape="50/50", seed=report.seed, min_rows=10, choose=False, purpose="")
    test = split.part("test")
    s, y, sex = frame["score"].to_numpy()[test], frame["y"].to_numpy()[test], frame["SEX"].to_numpy()[test]
    for name, code in (("Male", 1), ("Female", 2)):
        m = sex == code
        flagged = s >= report.thresholds[name]
        assert report.after.groups[name].n == int(m.sum())
        assert report.after.groups[name].tpr == pytest.approx(flagged[m & (y == 1)].mean())
        assert report.after.groups[name].fpr == pytest.approx(flagged[m & (y == 0)].mean())
    colours = {t.name.split(":")[0]: t.line.color for t in plots.threshold_roc(report, spec, "test").data
               if t.mode == "lines" and t.name != "chance"}
    assert colours == {"Male": plots.GROUP_COLOR, "Female": plots.OTHER_COLOR}
    # three values: the rest is everyone else
    three = tune_thresholds(frame, AuditSpec("y", 1, "region == north"), model=None, score_column="score")
    assert set(three.thresholds) == {"north", "everyone else"}
