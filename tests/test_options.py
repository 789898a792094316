"""Each model tool's defaults live in one place (luskin_core.spec.options): the pages and the command line start there.

Before, the Retrain page defaulted to Algorithm 1 while ``luskin retrain`` and ``RetrainOptions`` used
Algorithm 2; the same run on the two surfaces gave different results.
"""

from __future__ import annotations

import inspect

from test_app import goto, open_app

from luskin_cli.main import build_parser
from luskin_core.corrections.equalize import equalize_frame
from luskin_core.corrections.thresholds import tune_thresholds
from luskin_core.spec.options import EqualizeOptions, RetrainOptions, ThresholdOptions


def test_the_pages_start_from_the_tools_defaults():
    retrain, thresholds, equalize = RetrainOptions(), ThresholdOptions(), EqualizeOptions()
    at = goto(open_app(), "retrain")
    assert at.radio(key="retrain_algorithm").value == retrain.algorithm == 2
    assert at.selectbox(key="retrain_pair").value == f"{retrain.first}/{retrain.second}"
    assert at.radio(key="retrain_direction").value == retrain.direction
    assert at.number_input(key="retrain_seed").value == retrain.seed
    assert at.checkbox(key="retrain_all_cells").value == retrain.all_cells
    goto(at, "thresholds")
    assert at.selectbox(key="thr_model").value == thresholds.model
    assert at.radio(key="thr_solver").value == thresholds.solver
    assert at.number_input(key="thr_lambda").value == thresholds.lam
    assert at.number_input(key="thr_seed").value == thresholds.seed
    assert at.radio(key="thr_tuning").value == thresholds.tuning
    goto(at, "equalized")
    assert at.multiselect(key="eq_alphas").value == list(equalize.alphas)
    assert at.number_input(key="eq_seed").value == equalize.seed


def test_the_command_line_and_the_functions_start_from_the_tools_defaults():
    parser = build_parser()
    args = parser.parse_args(["retrain", "--data", "sample:adult"])
    retrain = RetrainOptions()
    assert (int(args.algorithm), args.first, args.second, args.direction, args.all_cells, args.threshold) == (
        retrain.algorithm, retrain.first, retrain.second, retrain.direction, retrain.all_cells, retrain.threshold)
    assert args.seed == retrain.seed
    args = parser.parse_args(["thresholds", "--data", "sample:adult"])
    thresholds = ThresholdOptions()
    assert (args.solver, args.lam, args.tuning, args.default_threshold, args.seed) == (
        thresholds.solver, thresholds.lam, thresholds.tuning, thresholds.default_threshold, thresholds.seed)
    args = parser.parse_args(["equalize", "--data", "sample:adult"])
    equalize = EqualizeOptions()
    assert (args.bandwidth, args.solver, args.seed) == (equalize.bandwidth, equalize.solver, equalize.seed)
    signature = inspect.signature(tune_thresholds).parameters
    for name in ("model", "solver", "lam", "seed", "tuning", "default_threshold"):
        assert signature[name].default == getattr(thresholds, name), name
    signature = inspect.signature(equalize_frame).parameters
    for name in ("alphas", "seed", "bandwidth", "solver", "start"):
        assert signature[name].default == getattr(equalize, name), name
