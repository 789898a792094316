"""Adding an option of a model tool touches its declaration and its use in the estimator, nothing else (issue 26).

The command line's flags of the model commands and the model pages' inputs are made from the declarations
(``OPTIONS`` in luskin_core/spec/options.py). The proof: in a copy of the project, three options of each kind
(a whole number in a range, a choice, a flag) are added to the retraining tool by editing
luskin_core/spec/options.py alone (a field in ``RetrainOptions`` and a line in ``OPTIONS`` each); the copy's
command line then parses each flag and refuses a bad value in the option's plain words, its Retrain page shows
each input with the declared label, help and bounds (AppTest), the page's value is saved with its settings
and a saved configuration's check refuses an out-of-range value. A file count over the copy says one file
changed. (The estimator's use of the option is the second file: the page and the command line hand every
declared option to the tool's options class, which ``retrain`` reads.)

A second test checks the same generation on the real declarations: every declared option has its flag with
its default on its command, and every option a page offers has its widget, keyed as before.
"""

from __future__ import annotations

import filecmp
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from code_words import code_words
from test_app import goto, open_app

from luskin_app.option_inputs import widget_key
from luskin_cli.main import build_parser
from luskin_core.spec.options import OPTIONS, option_default

ROOT = Path(__file__).resolve().parent.parent
COPIED = ("app.py", "pyproject.toml", "app_pages", "luskin_app", "luskin_cli", "luskin_core", "sample_data", ".streamlit")

FIELDS = '''    max_rounds: int = 200
    network_size: str = "small"
    balance_outcomes: bool = False
'''
DECLARATIONS = '''        Option("max_rounds", whole("the number of training rounds", 10, 5000), "Training rounds",
               "How many rounds each model may learn for before it stops."),
        Option("network_size", one_of("the network size", "small", "large", case="lower"), "Size of the neural network",
               "A larger network can learn more patterns but takes longer.",
               choice_words=(("small", "Small (faster)"), ("large", "Large (slower)"))),
        Option("balance_outcomes", FLAG, "Weigh both outcomes equally while training",
               "Useful when one outcome is rare."),
'''

# Run in the copy (its own luskin_core, luskin_cli and luskin_app); prints one JSON document.
SCRIPT = '''
import json, sys
import luskin_core
assert luskin_core.__file__.startswith(sys.argv[1]), luskin_core.__file__
from streamlit.testing.v1 import AppTest
from luskin_app.option_inputs import widget_key
from luskin_cli.main import build_parser
from luskin_cli.common import option_values
from luskin_cli.options import options_from
from luskin_core.errors import LuskinError

out = {}
args = build_parser().parse_args(["retrain", "--preset", "adult", "--max-rounds", "300", "--network-size", "LARGE",
                                  "--balance-outcomes"])
out["parsed"] = option_values(options_from(args), "retrain")
default = build_parser().parse_args(["retrain", "--preset", "adult"])
out["defaults"] = [default.max_rounds, default.network_size, default.balance_outcomes]
refused = {}
for flag, value in (("--max-rounds", "3"), ("--max-rounds", "many"), ("--network-size", "huge")):
    try:
        build_parser().parse_args(["retrain", "--preset", "adult", flag, value])
        refused[flag + " " + value] = None
    except LuskinError as err:
        refused[flag + " " + value] = str(err)
out["refused"] = refused
out["help"] = build_parser()._subparsers._group_actions[0].choices["retrain"].format_help()

at = AppTest.from_file("app.py", default_timeout=60).run()
at.switch_page("app_pages/retrain.py").run()
assert not at.exception, at.exception
rounds = at.number_input(key="retrain_max_rounds")
size = at.selectbox(key="retrain_network_size")
balance = at.checkbox(key="retrain_balance_outcomes")
out["inputs"] = {
    "rounds": [rounds.label, rounds.help, rounds.min, rounds.max, rounds.value],
    "size": [size.label, size.help, list(size.options), size.value],
    "balance": [balance.label, balance.help, balance.value],
}
rounds.set_value(400).run()
size.set_value("large").run()
at.checkbox(key="retrain_balance_outcomes").check().run()
assert not at.exception, at.exception
out["saved"] = {k: at.session_state["choices"]["retrain"][k] for k in ("max_rounds", "network_size", "balance_outcomes")}
out["errors"] = [e.value for e in at.error]

from luskin_app.config import OPTION_CHECKS
for value in (300, 5001):
    try:
        OPTION_CHECKS["retrain"]["max_rounds"]("The Retrain page's setting 'max_rounds'", value)
        out[f"config {value}"] = "accepted"
    except LuskinError as err:
        out[f"config {value}"] = str(err)
print("RESULT" + json.dumps(out))
'''


def _copy_project(to: Path) -> None:
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, to / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(source, to / name)


def _changed_files(copy: Path) -> list[str]:
    """The files of the copy that differ from the project's own (added ones included)."""
    changed = []
    for name in COPIED:
        theirs = ROOT / name
        if theirs.is_file():
            changed += [] if filecmp.cmp(theirs, copy / name, shallow=False) else [name]
            continue
        for path in (copy / name).rglob("*"):
            if path.is_file() and "__pycache__" not in path.parts:
                mine = ROOT / path.relative_to(copy)
                if not mine.is_file() or not filecmp.cmp(mine, path, shallow=False):
                    changed.append(str(path.relative_to(copy)))
    return changed


def test_a_new_option_is_one_edit_of_its_declarations_and_is_a_flag_and_an_input(tmp_path):
    copy = tmp_path / "project"
    copy.mkdir()
    _copy_project(copy)
    options = copy / "luskin_core" / "spec" / "options.py"
    text = options.read_text()
    field_anchor = "    threshold: float = 0.5\n    features: tuple[str, ...] | None = None\n"
    line_anchor = '''               flag_help="score at or above which a model decides positive (default {default})", on_page=False),
'''
    assert text.count(field_anchor) == 1 and text.count(line_anchor) == 1, "the example's anchors moved"
    text = text.replace(field_anchor, field_anchor.replace("    features", FIELDS + "    features"))
    text = text.replace(line_anchor, line_anchor + DECLARATIONS)
    options.write_text(text)
    assert _changed_files(copy) == ["luskin_core/spec/options.py"]

    env = {**os.environ, "PYTHONPATH": str(copy)}
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(copy)], cwd=copy, env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.split("RESULT", 1)[1])

    # the command line: each flag parsed into the option's canonical type, its default the class's
    assert {k: result["parsed"][k] for k in ("max_rounds", "network_size", "balance_outcomes")} == {
        "max_rounds": 300, "network_size": "large", "balance_outcomes": True}
    assert result["defaults"] == [200, "small", False]
    refused = result["refused"]
    assert refused["--max-rounds 3"] == ("argument --max-rounds: The number of training rounds must be a whole number "
                                          "from 10 to 5,000, not '3'. Run 'luskin retrain --help' for the options.")
    assert "The number of training rounds must be a whole number from 10 to 5,000: 'many' is not a number" \
        in refused["--max-rounds many"]
    assert "invalid choice: 'huge' (choose from 'small', 'large')" in refused["--network-size huge"]
    assert "--max-rounds MAX_ROUNDS" in result["help"] and "(default 200)" in result["help"]
    assert "--balance-outcomes" in result["help"] and "--network-size {small,large}" in result["help"]

    # the page: an input per option, of its kind, with the declared words and bounds
    inputs = result["inputs"]
    assert inputs["rounds"] == ["Training rounds", "How many rounds each model may learn for before it stops.", 10,
                                5000, 200]
    assert inputs["size"][:2] == ["Size of the neural network",
                                  "A larger network can learn more patterns but takes longer."]
    assert inputs["size"][2:] == [["Small (faster)", "Large (slower)"], "small"]
    assert inputs["balance"] == ["Weigh both outcomes equally while training", "Useful when one outcome is rare.", False]
    for words in (inputs["rounds"][:2], inputs["size"][:3], inputs["balance"][:2]):
        assert not code_words(" ".join(map(str, words)))
    # what is entered is kept with the page's settings (saved in a configuration) and checked like the flag
    assert result["saved"] == {"max_rounds": 400, "network_size": "large", "balance_outcomes": True}
    assert not result["errors"]
    assert result["config 300"] == "accepted"
    assert result["config 5001"] == ("The Retrain page's setting 'max_rounds' must be a whole number from 10 to 5,000, "
                                     "not '5001'.")


# The widget keys the pages had before their inputs were generated (saved settings and browser tests use them).
KEYS = {"retrain": {"algorithm": "retrain_algorithm", "direction": "retrain_direction", "all_cells": "retrain_all_cells",
                    "first": "retrain_pair", "second": "retrain_pair", "seed": "retrain_seed"},
        "thresholds": {"model": "thr_model", "solver": "thr_solver", "lam": "thr_lambda", "seed": "thr_seed",
                       "tuning": "thr_tuning"},
        "equalize": {"alphas": "eq_alphas", "seed": "eq_seed"}}


def test_every_declared_option_is_a_flag_and_every_page_option_an_input_under_its_old_key():
    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    for command, tool, placed in (("retrain", "retrain", ()), ("thresholds", "thresholds", ("model",)),
                                  ("equalize", "equalize", ()), ("audit", "proxy", ())):
        flags = commands[command]._option_string_actions
        for option in OPTIONS[tool]:
            if option.name in placed:  # in a group of alternatives (--model | --score-column)
                continue
            for flag in option.cli_flags:  # --alphas and its other name --alpha
                action = flags[flag]
                assert action.dest == option.name
                assert action.default == option_default(tool, option.name), (tool, option.name)
    # --model, beside --score-column, and luskin report's options of each tool: from their declarations, unset
    # until given (the command takes the declared default then; an option of a tool not asked for is refused)
    for command, tool, names in (("thresholds", "thresholds", ("model",)),
                                 ("report", "retrain", ("algorithm", "first", "second", "direction", "all_cells")),
                                 ("report", "thresholds", ("model", "lam", "solver")),
                                 ("report", "equalize", ("alphas",))):
        flags = commands[command]._option_string_actions
        for name in names:
            option = next(o for o in OPTIONS[tool] if o.name == name)
            action = flags[option.cli_flag]
            assert action.default is None, (command, name)
            assert action.help.startswith(option.command_help(option_default(tool, name))), (command, name)
            if option.constraint.kind == "choice":
                assert tuple(action.choices) == option.constraint.choices, (command, name)
    at = open_app()
    for tool, page in (("retrain", "retrain"), ("thresholds", "thresholds"), ("equalize", "equalized")):
        goto(at, page)
        shown = {w.key for kind in ("number_input", "selectbox", "radio", "checkbox", "multiselect")
                 for w in at.get(kind)}
        offered = {option.name for option in OPTIONS[tool] if option.on_page}
        assert offered == set(KEYS[tool])
        for name in offered:
            assert KEYS[tool][name] in shown, (tool, name, sorted(shown))
            if KEYS[tool][name] != "retrain_pair":
                assert widget_key(tool, next(o for o in OPTIONS[tool] if o.name == name)) == KEYS[tool][name]
        for option in OPTIONS[tool]:
            assert not code_words(f"{option.label} {option.help} {' '.join(w for _, w in option.choice_words)}")
