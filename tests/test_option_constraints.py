"""Each option's constraint is declared once (luskin_core/spec/options.py) and every surface reads it.

For each option and value, the command line (argparse), the dashboard's saved-configuration check
(luskin_app.config, after the JSON-type check of luskin_core.spec.configfile), the option class and
the estimator must all accept it or all refuse it. Before the constraints were declared once they
disagreed: a seed of 1,000,001 passed the command line and the estimators but not a saved
configuration (its check said 0 to 1,000,000), a lambda of 50 passed the command line and the
estimator but not the page; the cases below include those values, so this test fails on such a split.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from luskin_cli.main import build_parser
from luskin_core.analyses.proxy import PROB_COLUMNS
from luskin_core.analyses.proxy_audit import proxy_audit
from luskin_core.analyses.scan import ScanSpec
from luskin_core.analyses.series import audit_series
from luskin_core.corrections.equalize import EqualizedDistributionClassifier, alpha_sweep
from luskin_core.corrections.thresholds import GroupThresholdOptimizer, _random_state
from luskin_core.errors import LuskinError
from luskin_core.spec import configfile
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.spec.options import (
    OPTION_CONSTRAINTS,
    SEED,
    EqualizeOptions,
    ProxyOptions,
    RetrainOptions,
    ScanOptions,
    SeriesOptions,
    ThresholdOptions,
    check_algorithm,
    check_direction,
    check_kind,
)

# tool, option -> (command, flag) on the command line
FLAGS = {
    ("retrain", "algorithm"): ("retrain", "--algorithm"), ("retrain", "first"): ("retrain", "--first"),
    ("retrain", "second"): ("retrain", "--second"), ("retrain", "direction"): ("retrain", "--direction"),
    ("retrain", "seed"): ("retrain", "--seed"), ("retrain", "threshold"): ("retrain", "--threshold"),
    ("thresholds", "model"): ("thresholds", "--model"), ("thresholds", "solver"): ("thresholds", "--solver"),
    ("thresholds", "lam"): ("thresholds", "--lambda"), ("thresholds", "seed"): ("thresholds", "--seed"),
    ("thresholds", "tuning"): ("thresholds", "--tuning"), ("equalize", "alphas"): ("equalize", "--alpha"),
    ("equalize", "bandwidth"): ("equalize", "--bandwidth"), ("equalize", "solver"): ("equalize", "--solver"),
    ("equalize", "seed"): ("equalize", "--seed"), ("equalize", "start"): ("equalize", "--start"),
    ("proxy", "model"): ("audit", "--proxy-model"),
    ("scan", "depth"): ("scan", "--depth"), ("scan", "min_size"): ("scan", "--min-size"),
    ("scan", "level"): ("scan", "--level"), ("scan", "replicates"): ("scan", "--replicates"),
    ("scan", "seed"): ("scan", "--seed"), ("scan", "measure"): ("scan", "--measure"),
    ("scan", "calibration"): ("scan", "--calibration"), ("series", "every"): ("audit", "--every"),
    ("representation", "among"): ("representation", "--among"),
}

pytestmark = pytest.mark.filterwarnings("ignore:The fit at alpha")

CASES = [
    ("retrain", "seed", 0, True), ("retrain", "seed", 2**32 - 1, True), ("retrain", "seed", 1_000_001, True),
    ("retrain", "seed", -1, False), ("retrain", "seed", 2**32, False), ("retrain", "seed", "x", False),
    ("thresholds", "seed", 1_000_001, True), ("thresholds", "seed", -3, False),
    ("equalize", "seed", 123_456_789, True), ("equalize", "seed", 2**32, False),
    ("retrain", "algorithm", 1, True), ("retrain", "algorithm", 2, True), ("retrain", "algorithm", 3, False),
    ("retrain", "algorithm", 0, False),
    ("retrain", "first", "MLP", True), ("retrain", "first", "lr", True), ("retrain", "first", "SVM", False),
    ("retrain", "second", "tree", False),
    ("retrain", "direction", "up", True), ("retrain", "direction", "left", False),
    ("retrain", "threshold", 0.5, True), ("retrain", "threshold", 0, False), ("retrain", "threshold", 1, False),
    ("retrain", "threshold", 1.5, False),
    ("thresholds", "solver", "exact", True), ("thresholds", "solver", "PSO", True), ("thresholds", "solver", "grid", False),
    ("thresholds", "lam", 0, True), ("thresholds", "lam", 20, True), ("thresholds", "lam", 50, False),
    ("thresholds", "lam", -1, False), ("thresholds", "lam", "x", False),
    ("thresholds", "tuning", "crossfit", True), ("thresholds", "tuning", "cv", False),
    ("thresholds", "model", "SVM", True), ("thresholds", "model", "mlp", True), ("thresholds", "model", "forest", False),
    ("equalize", "alphas", 0, True), ("equalize", "alphas", 1, True), ("equalize", "alphas", 1.5, False),
    ("equalize", "alphas", -0.1, False),
    ("equalize", "bandwidth", 0.02, True), ("equalize", "bandwidth", 0, False), ("equalize", "bandwidth", -1, False),
    ("equalize", "solver", "momentum", True), ("equalize", "solver", "adam", False),
    ("equalize", "start", "path", True), ("equalize", "start", "PATH", True), ("equalize", "start", "zero", False),
    ("proxy", "model", "pooled", True), ("proxy", "model", "By-Place", True), ("proxy", "model", "by place", False),
    ("proxy", "model", "hierarchical", False),
    ("scan", "depth", 0, True), ("scan", "depth", 2, True), ("scan", "depth", -1, False), ("scan", "depth", "x", False),
    ("scan", "min_size", 30, True), ("scan", "min_size", 0, False), ("scan", "min_size", 2.5, False),
    ("scan", "level", 0.05, True), ("scan", "level", 0, False), ("scan", "level", 1, False),
    ("scan", "replicates", 99, True), ("scan", "replicates", 0, False),
    ("scan", "seed", 2**32 - 1, True), ("scan", "seed", -1, False), ("scan", "seed", 2**32, False),
    ("scan", "measure", "fpr", True), ("scan", "measure", "FNR", True), ("scan", "measure", "auc", False),
    ("scan", "calibration", "bound", True), ("scan", "calibration", "exact", False),
    ("series", "every", "quarter", True), ("series", "every", "week", False),
    ("representation", "among", "all", True), ("representation", "among", "Outcome", True),
    ("representation", "among", "everyone", False),
]


def _accepts(check) -> bool:
    try:
        check()
    except LuskinError:
        return False
    return True


def _cli_accepts(tool: str, option: str, value) -> bool:
    command, flag = FLAGS[(tool, option)]
    data = [] if command == "scan" else ["--preset", "compas"]   # the scan names its data when it runs
    try:
        build_parser().parse_args([command, *data, flag, str(value)])
    except LuskinError as err:  # luskin's parser says a refused value in plain words (exit status 2 in main)
        assert flag in str(err)
        return False
    return True


def _config_accepts(tool: str, option: str, value) -> bool | None:
    """The dashboard's check of a saved configuration (None: the page does not save this option)."""
    from luskin_app.config import OPTION_CHECKS

    if option not in OPTION_CHECKS.get(tool, {}):  # the proxy page saves no configuration
        return None
    if option == "alphas":  # the page saves its list of alphas (its widget offers the default ones)
        value = [value]
    document = {"kind": "luskin-configuration", "options": {tool: {option: value}}}
    try:
        configfile.check_entries(document)  # the JSON type, from the same constraint
    except LuskinError:
        return False
    return _accepts(lambda: OPTION_CHECKS[tool][option](f"The page's setting '{option}'", value))


def _small_scores() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    g = np.where(rng.random(300) < 0.5, "A", "B")
    y = (rng.random(300) < 0.4).astype(int)
    return rng.random(300), y, g


def _estimator_accepts(tool: str, option: str, value) -> bool:
    """The option class and the estimator that uses the option; both must agree."""
    if tool == "proxy":  # its option class, through the proxy audit: 40 rows with probabilities and places
        rng = np.random.default_rng(2)
        p = pd.DataFrame(rng.dirichlet(np.ones(6), 40), columns=list(PROB_COLUMNS))
        y, places = (rng.random(40) < 0.5).astype(float), rng.choice(["10001", "10002"], 40)
        return _accepts(lambda: proxy_audit(p, y, places=places, options=ProxyOptions(model=value)))
    if tool == "retrain":
        return _accepts(lambda: RetrainOptions(**{option: value}))
    if tool == "scan":   # the options class and the scan's own specification (both read the one declaration)
        holder = _accepts(lambda: ScanOptions(**{option: value}))
        scanned = _accepts(lambda: ScanSpec("y", 1, ("a", "b", "c"), prediction="p", probability="q",
                                            **{option: value}))
        assert scanned == holder, "the option class and the scan disagree"
        return holder
    if tool == "series":   # the options class and the series itself, on ten months of dates
        holder = _accepts(lambda: SeriesOptions(**{option: value}))
        frame = pd.DataFrame({"y": [1, 0] * 20, "g": ["A"] * 20 + ["B"] * 20,
                              "d": [f"2024-{m:02d}-01" for m in range(1, 11)] * 4})
        counted = _accepts(lambda: audit_series(frame, AuditSpec("y", 1, group_by=("g",)), "d", **{option: value}))
        assert counted == holder, "the option class and the series disagree"
        return holder
    if tool == "representation":   # the options class made from its line's declarations, and the analysis itself
        from luskin_core.present.report_parts import analysis

        entry = analysis("representation")
        made = entry.options_class()
        assert made is not None
        holder = _accepts(lambda: made(**{option: value}))
        frame = pd.DataFrame({"y": [1, 0] * 40, "g": ["A", "A", "B", "B"] * 20})
        ran = _accepts(lambda: entry.runner()(frame, AuditSpec("y", 1, group_by=("g",)),
                                              made(benchmark="A=0.5,B=0.5", **{option: value})))
        assert ran == holder, "the option class and the analysis disagree"
        return holder
    if tool == "thresholds":
        holder = _accepts(lambda: ThresholdOptions(**{option: value}))
        s, y, g = _small_scores()
        estimator = {
            "solver": lambda: GroupThresholdOptimizer(solver=value).fit(s, y, groups=g),
            "lam": lambda: GroupThresholdOptimizer(lam=value).fit(s, y, groups=g),
            "seed": lambda: _random_state(value),
            "model": lambda: check_kind(value),
            "tuning": lambda: ThresholdOptions(tuning=value),
        }[option]
        assert _accepts(estimator) == holder, "the option class and the estimator disagree"
        return holder
    holder = _accepts(lambda: EqualizeOptions(**{option: (value,) if option == "alphas" else value}))
    if option in ("alphas", "bandwidth", "solver"):
        rng = np.random.default_rng(1)
        X, y, g = rng.normal(size=(80, 2)), (rng.random(80) < 0.5).astype(int), np.repeat(["A", "B"], 40)
        name = "alpha" if option == "alphas" else option
        fitted = _accepts(lambda: EqualizedDistributionClassifier(**{name: value}, max_iter=3).fit(X, y, groups=g))
        assert fitted == holder, "the option class and the estimator disagree"
        if option == "alphas":
            swept = _accepts(lambda: alpha_sweep(X, y, g, X, y, g, alphas=[value], max_iter=3))
            assert swept == holder
    return holder


@pytest.mark.parametrize("tool, option, value, accepted", CASES)
def test_command_line_configuration_check_and_estimator_agree(tool, option, value, accepted):
    assert _cli_accepts(tool, option, value) is accepted
    assert _estimator_accepts(tool, option, value) is accepted
    assert _config_accepts(tool, option, value) in (accepted, None)


def test_every_declared_option_is_tested_on_every_surface_that_has_it():
    declared = {(tool, option) for tool, options in OPTION_CONSTRAINTS.items() for option in options}
    on_cli = set(FLAGS)
    tested = {(tool, option) for tool, option, _, _ in CASES}
    assert on_cli <= declared and tested == on_cli
    # what the command line does not offer a value for: the flags without a value (retraining's all_cells, the
    # series' keep_flagged, the adjusted gaps' log, the regulator tables' exclude_small), and the scan's error rate (--fdr Q sets it, with its level)
    assert declared - on_cli == {("retrain", "all_cells"), ("series", "keep_flagged"), ("adjusted", "log"),
                                 ("regulator", "exclude_small"), ("scan", "error")}
    # every option a page saves is one of its tool's declared options or a page-only setting
    from luskin_app.config import _PAGE_ONLY, OPTION_CHECKS

    for tool, checks in OPTION_CHECKS.items():
        assert set(checks) <= set(OPTION_CONSTRAINTS[tool]) | set(_PAGE_ONLY[tool])


def test_defaults_meet_their_constraints_and_the_words_say_the_range():
    for options in (RetrainOptions(), ThresholdOptions(), EqualizeOptions()):
        assert options == type(options)()
    assert SEED.describe() == "a whole number from 0 to 4,294,967,295"
    assert check_algorithm("2") == 2 and check_direction(" UP ") == "up" and check_kind("svm") == "SVM"
    with pytest.raises(LuskinError, match="The seed must be a whole number from 0 to 4,294,967,295, not '-1'"):
        RetrainOptions(seed=-1)
    with pytest.raises(LuskinError, match="must be true or false"):
        RetrainOptions(all_cells="yes")
    assert ThresholdOptions(solver="PSO").solver == "pso"  # one canonical spelling, whatever the case typed


def test_a_list_option_is_read_the_same_from_commas_a_list_and_every_command():
    """The alphas are one declared list option: ``luskin equalize --alphas``/``--alpha``, ``luskin report --alphas``
    and the options class read "0.5, 0.1" alike, and refuse an empty list and a bad member in the same words."""
    parser = build_parser()
    base = ["--data", "x.csv", "--outcome", "y", "--positive", "1", "--protected", "g == a"]
    for argv in (["equalize", *base, "--alphas", "0.5, 0.1"], ["equalize", *base, "--alpha", "0.5,0.1"],
                 ["report", *base, "--html", "r.html", "--equalize", "--alphas", "0.5,0.1"]):
        assert parser.parse_args(argv).alphas == (0.5, 0.1), argv
    assert EqualizeOptions(alphas="0.5, 0.1").alphas == EqualizeOptions(alphas=[0.5, 0.1]).alphas == (0.5, 0.1)
    assert EqualizeOptions(alphas=0.3).alphas == (0.3,)
    assert parser.parse_args(["report", *base, "--html", "r.html"]).alphas is None  # unset: refused without --equalize
    constraint = OPTION_CONSTRAINTS["equalize"]["alphas"]
    for bad, words in ((",", "Give at least one value for the alphas"),
                       ("0.2,1.5", "(here '1.5') must be a number between 0 and 1")):
        with pytest.raises(LuskinError, match=words.replace("(", r"\(").replace(")", r"\)")):
            EqualizeOptions(alphas=bad)
        with pytest.raises(LuskinError, match=words.replace("(", r"\(").replace(")", r"\)")):
            constraint.check(bad)
    assert configfile.OPTION_ENTRIES["equalize"]["alphas"][1] == "a list of numbers"


def test_the_proxy_model_is_a_declared_option_of_the_audit_command():
    parser = build_parser()
    args = parser.parse_args(["audit", "--data", "x.csv", "--proxy-model", "BY-PLACE"])
    assert args.model == "by-place"
    assert parser.parse_args(["audit", "--data", "x.csv"]).model == "pooled"
    with pytest.raises(LuskinError, match="The outcome-aware model must be .pooled. \\(one rate per race\\)"):
        OPTION_CONSTRAINTS["proxy"]["model"].check("nearest")
