"""Each model tool's options, typed, with their defaults and their constraints in one place.

:class:`RetrainOptions` (``luskin retrain``, the Retrain page, :func:`luskin_core.corrections.retrain.retrain`),
:class:`ThresholdOptions` (``luskin thresholds``, the Thresholds page, :func:`~luskin_core.corrections.thresholds.tune_thresholds`)
and :class:`EqualizeOptions` (``luskin equalize``, the Equalized distribution page,
:func:`~luskin_core.corrections.equalize.equalize_frame`): the command line's argument defaults, the pages' first
choices and the functions' keyword defaults are all read from these classes, so the three surfaces
start from the same settings (tests/test_options.py checks the pages and the command line).

Declarations (in the spirit of scikit-learn's ``_parameter_constraints``): each option is declared once,
as an :class:`Option` in :data:`OPTIONS` (its :class:`Constraint`, its label and help in plain words, its
flag), and read by every surface: the command line generates its flags from them
(``luskin_cli.common.add_option_flags``: name, help, type and choices, default), the pages their inputs
(``luskin_app.option_inputs``), the saved configuration's checks read the constraints
(:mod:`luskin_core.spec.configfile` for the JSON type, ``luskin_app.config`` for the value), as do the
option classes below and the estimators in :mod:`luskin_core.corrections`. A new option is its field in its
class and one line in :data:`OPTIONS` here, and its use in the estimator (tests/test_option_declarations.py
adds one and finds its flag and its input); tests/test_option_constraints.py checks that the command line,
the configuration check and the estimator accept and refuse the same values.

This module imports nothing heavy (the checks import their modules when an object is built), so the
command line can read the defaults while it builds its parser without slowing ``luskin --help``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, fields, make_dataclass, replace
from dataclasses import field as dataclass_field
from typing import Any

from luskin_core.errors import LuskinError

RETRAIN_KINDS = ("LR", "MLP")
MODEL_KINDS = ("LR", "MLP", "SVM")
MODEL_NAMES = {"LR": "logistic regression", "MLP": "multi-layer perceptron (neural network)",
               "SVM": "linear support vector machine"}
DIRECTIONS: tuple[str, ...] = ("down", "up")
ALGORITHMS: tuple[int, ...] = (1, 2)
ALGORITHM_NAMES = {1: "selective risk adjustment (Algorithm 1)", 2: "risk-based flipping (Algorithm 2)"}
# The alphas of the equalized-distribution sweep (weight on accuracy; 1 = plain logistic regression).
DEFAULT_ALPHAS = (0.0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.7, 0.9, 1.0)


# ------------------------------------------------------------------------------------------
# Constraints, declared once
# ------------------------------------------------------------------------------------------
def _shown(value: Any, limit: int = 40) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True)
class Constraint:
    """The values one option accepts: a whole number or a number in a range, one of a few choices, or a flag.

    ``what`` names the option in a sentence ("the seed"); ``words`` says what it accepts ("a whole
    number from 0 to 4,294,967,295"), made from the bounds or choices unless given. ``case``
    ("upper", "lower") is applied to a text choice before it is compared, so "lr" is LR everywhere.
    ``optional``: None is accepted (and kept). :meth:`check` returns the value in its canonical type
    (an int, a float, the choice as declared, a bool) or raises a LuskinError in plain words.
    """

    what: str
    kind: str  # "whole", "number", "choice" or "flag"; or the data's: "column", "columns", "text" or "cuts"
    low: float | None = None
    high: float | None = None
    open_low: bool = False
    open_high: bool = False
    choices: tuple[Any, ...] = ()
    case: str | None = None
    optional: bool = False
    note: str = ""  # added to the refusal (why the range is what it is)
    words: str = ""
    many: bool = False  # a list of such values (at least one); on the command line, separated by commas
    plain: bool = False  # a number the command line reads with argparse's own int or float (and its words)

    def describe(self) -> str:
        """What the option accepts, in words."""
        if self.many:
            return f"one or more of: {replace(self, many=False).describe()}, separated by commas"
        if self.words:
            return self.words
        if self.kind == "flag":
            return "true or false"
        if self.kind == "choice":
            names = [str(c) for c in self.choices]
            return " or ".join(names) if len(names) <= 2 else "one of " + ", ".join(names)
        noun = "a whole number" if self.kind == "whole" else "a number"

        def bound(x: float) -> str:
            return f"{int(x):,}" if float(x).is_integer() else f"{x:g}"

        if self.low is not None and self.high is not None:
            if self.open_low and self.open_high:
                return f"between {bound(self.low)} and {bound(self.high)}"
            return f"{noun} from {bound(self.low)} to {bound(self.high)}"
        if self.low is not None:
            return f"a positive {noun[2:]}" if self.open_low and self.low == 0 else f"{noun} of {bound(self.low)} or more"
        if self.high is not None:
            return f"{noun} of {bound(self.high)} or less"
        return noun

    def refuse(self, value: Any, label: str | None = None, *, not_a_number: bool = False) -> LuskinError:
        """The plain-words refusal of ``value`` (``label`` names the option where it was given)."""
        name = label or self.what[:1].upper() + self.what[1:]
        note = f" {self.note}" if self.note else ""
        said = f": '{_shown(value)}' is not a number" if not_a_number else f", not '{_shown(value)}'"
        return LuskinError(f"{name} must be {self.describe()}{said}.{note}")

    def check(self, value: Any, label: str | None = None) -> Any:
        """``value`` in the option's canonical type, or a LuskinError that says what is accepted."""
        if value is None and self.optional:
            return None
        if self.many:
            return self._check_list(value, label)
        if self.kind in DATA_KINDS:
            return self._check_data(value)
        if self.kind == "flag":
            if not isinstance(value, bool):
                raise self.refuse(value, label)
            return value
        if isinstance(value, bool) or value is None:
            raise self.refuse(value, label)
        if self.kind == "choice":
            return self._choice(value, label)
        number = self._number(value)
        if number is None:
            raise self.refuse(value, label, not_a_number=replace(self, kind="number")._number(value) is None)
        if self.low is not None and (number < self.low or (self.open_low and number == self.low)):
            raise self.refuse(value, label)
        if self.high is not None and (number > self.high or (self.open_high and number == self.high)):
            raise self.refuse(value, label)
        return int(number) if self.kind == "whole" else float(number)

    def _check_data(self, value: Any) -> Any:
        """What names the data's columns and values: a column's name (as given), column names (from a list or
        text separated by commas), a value (as given) or a column's cut points (COLUMN=CUT,CUT, each)."""
        if self.kind == "columns":
            return _names(value)
        if self.kind == "cuts":
            return cut_points([value] if isinstance(value, str) else list(value or ()))
        if isinstance(value, (list, tuple)):   # a repeated value
            return tuple(self._check_data(one) for one in value)
        if value is not None and not isinstance(value, str):
            raise self.refuse(value)
        return value

    def _check_list(self, value: Any, label: str | None) -> tuple[Any, ...]:
        """Each value of a list (or of text separated by commas) checked; at least one."""
        one = replace(self, many=False)
        if isinstance(value, str):
            parts: tuple[Any, ...] = tuple(part.strip() for part in value.split(",") if part.strip())
        elif isinstance(value, (list, tuple)):
            parts = tuple(value)
        else:
            parts = (value,)
        if not parts:
            raise LuskinError(f"Give at least one value for {self.what}: {one.describe()}.")
        return tuple(one.check(part, label=f"Each of {self.what} (here '{_shown(part)}')") for part in parts)

    def _choice(self, value: Any, label: str | None) -> Any:
        for choice in self.choices:
            if isinstance(choice, int):
                number = self._whole(value)
                if number is not None and number == choice:
                    return choice
            elif isinstance(value, str):
                text = value.strip()
                text = text.upper() if self.case == "upper" else text.lower() if self.case == "lower" else text
                if text == choice:
                    return choice
        raise self.refuse(value, label)

    def _number(self, value: Any) -> float | None:
        if self.kind == "whole":
            whole = self._whole(value)
            return None if whole is None else float(whole)
        try:
            number = float(value.strip() if isinstance(value, str) else value)
        except (TypeError, ValueError, OverflowError):
            return None
        return number if math.isfinite(number) else None

    @staticmethod
    def _whole(value: Any) -> int | None:
        """An integer from an int, an integral float or the text of one; None otherwise."""
        if isinstance(value, bool):
            return None
        if isinstance(value, int):
            return value
        if isinstance(value, float):
            return int(value) if math.isfinite(value) and value.is_integer() else None
        if isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d{1,30}\s*", value):
            return int(value)
        return None

    def argparse(self, option: str = "") -> dict[str, Any]:
        """``type`` (and ``choices``) for ``parser.add_argument``: argparse refuses what :meth:`check` refuses.

        A choice keeps argparse's own "invalid choice" message (its type only puts the text in the
        option's case); a number or a whole number is checked by its type, with this module's words.
        """
        import argparse

        if self.kind in DATA_KINDS:
            return {}   # a column's name or a value, taken as given (the data says whether it is there)
        if self.plain:
            return {"type": int if self.kind == "whole" else float}
        if self.kind == "choice" and not self.many:
            def normalise(text: str) -> Any:
                try:
                    return self.check(text)
                except LuskinError:
                    return text  # argparse then says "invalid choice" and lists the choices
            normalise.__name__ = "choice"
            return {"type": normalise, "choices": self.choices}

        def parse(text: str) -> Any:
            try:
                return self.check(text, label=option or None)
            except LuskinError as err:
                raise argparse.ArgumentTypeError(str(err).rstrip(".")) from None
        parse.__name__ = self.kind
        return {"type": parse}

    def widget_bounds(self) -> dict[str, Any]:
        """``min_value`` and ``max_value`` for a page's number input (ints for a whole number; None: no bound).

        An open bound is not a widget's (its bounds are included): a page asks such an option otherwise.
        """
        cast = int if self.kind == "whole" else float
        return {"min_value": None if self.low is None else cast(self.low),
                "max_value": None if self.high is None else cast(self.high)}

    def json_shape(self) -> tuple[str, str]:
        """The JSON type a saved configuration holds ("number", "text", "flag" or "numbers") and its words."""
        if self.many:
            return "numbers", "a list of numbers"
        if self.kind == "flag":
            return "flag", "true or false"
        if self.kind == "choice":
            text = all(isinstance(c, str) for c in self.choices)
            return ("text" if text else "number"), ("a word" if text else "a number")
        return "number", "a whole number" if self.kind == "whole" else "a number"


# The kinds that name the data's columns and values: checked against the data where it is read, not here.
DATA_KINDS = ("column", "columns", "text", "cuts")


def cut_points(items: list[str]) -> dict[str, list[float]]:
    """COLUMN=CUT,CUT texts as {column: cuts} (the cut points of a numeric column), or a plain refusal."""
    out: dict[str, list[float]] = {}
    for item in items:
        name, sep, cuts = item.rpartition("=")
        if not sep or not name.strip():
            raise LuskinError(f"Write cut points as COLUMN=CUT,CUT (e.g. age=25,40,60), not '{item}'.")
        try:
            out[name.strip()] = [float(c) for c in cuts.split(",") if c.strip()]
        except ValueError:
            raise LuskinError(f"The cut points in '{item}' must be numbers, e.g. age=25,40,60.") from None
    return out


def whole(what: str, low: int | None = None, high: int | None = None, **more: Any) -> Constraint:
    """A whole number from ``low`` to ``high`` (both included)."""
    return Constraint(what, "whole", low, high, **more)


def number(what: str, low: float | None = None, high: float | None = None, **more: Any) -> Constraint:
    """A finite number from ``low`` to ``high`` (included unless ``open_low`` / ``open_high``)."""
    return Constraint(what, "number", low, high, **more)


def one_of(what: str, *choices: Any, **more: Any) -> Constraint:
    """One of ``choices`` (text compared in ``case`` if given)."""
    return Constraint(what, "choice", choices=tuple(choices), **more)


# numpy's RandomState and scikit-learn's random_state take 0 .. 2**32 - 1.
SEED = whole("the seed", 0, 2**32 - 1)
ALGORITHM = one_of("the algorithm", *ALGORITHMS,
                   words="1 (selective risk adjustment) or 2 (risk-based flipping)")
RETRAIN_MODEL = one_of("the model", *RETRAIN_KINDS, case="upper",
                       words="LR (logistic regression) or MLP (neural network) for retraining",
                       note="The algorithms need a risk score between 0 and 1.")
MODEL = one_of("the model type", *MODEL_KINDS, case="upper")
DIRECTION = one_of("the direction", *DIRECTIONS, case="lower",
                   words="'down' (bring the higher group down) or 'up' (bring the lower group up)")
THRESHOLD = number("the threshold", 0, 1, open_low=True, open_high=True, note="The paper uses 0.5.")
THRESHOLD_SOLVER = one_of("the solver", "exact", "pso", case="lower")
LAMBDA = number("the fairness weight lambda", 0, 20,
                note="At 20 a 5-point gap already weighs as much as every correct decision.")
TUNING = one_of("the tuning", "validation", "crossfit", case="lower")
ALPHA = number("alpha", 0, 1, words="a number between 0 and 1 (both included)")
ALPHAS = replace(ALPHA, what="the alphas", many=True)
BANDWIDTH = number("the histogram bandwidth", 0, None, open_low=True, words="a positive number, e.g. 0.02")
EQUALIZE_SOLVER = one_of("the solver", "lbfgs", "momentum", case="lower")
START = one_of("the start", "lr", "path", case="lower")
FLAG = Constraint("the setting", "flag")
# The proxy audit's outcome-aware (BIRDiE) model: one rate per race, or one per race and place.
PROXY_MODELS: tuple[str, ...] = ("pooled", "by-place")
PROXY_MODEL = one_of("the outcome-aware model", *PROXY_MODELS, case="lower",
                     words="'pooled' (one rate per race) or 'by-place' (one rate per race and place)")
# The subgroup scan's settings (luskin_core.analyses.scan: ScanSpec reads these same constraints).
SCAN_MEASURES: tuple[str, ...] = ("rate", "fpr", "fnr", "error", "calibration")
SCAN_DEPTH = whole("the depth", 0, None, words="a whole number of 0 or more (0: up to 3 columns)")
SCAN_MIN_SIZE = whole("the smallest group size", 1)
SCAN_LEVEL = number("the error level", 0, 1, open_low=True, open_high=True,
                    words="a share between 0 and 1 (e.g. 0.05)")
SCAN_ERROR = one_of("the error rate", "fwer", "fdr", case="lower",
                    words="fwer (the family-wise error rate) or fdr (the false discovery rate)")
SCAN_REPLICATES = whole("the number of replicates", 1)
SCAN_MEASURE = one_of("the measure", *SCAN_MEASURES, case="lower", optional=True)
SCAN_CALIBRATION = one_of("the calibration", "auto", "replicates", "bound", case="lower")
# The audit over time: the length of a period.
PERIODS: tuple[str, ...] = ("month", "quarter", "year")
PERIOD = one_of("the period length", *PERIODS, case="lower", words="'month', 'quarter' or 'year'")

@dataclass(frozen=True)
class Option:
    """One option of a model tool, declared once: its field, what it accepts and its words on every surface.

    ``name`` is the field of the tool's options class (:data:`OPTION_CLASSES`, which holds its default) and the
    estimator's keyword. The command line makes its flag from this declaration
    (``luskin_cli.common.add_option_flags``: ``flag``, ``flag_help``, the constraint's type and choices, the
    class's default) and the page its input (``luskin_app.option_inputs``: a selectbox for choices, a number
    input within the bounds for a number, or a slider where ``widget`` asks for one, a checkbox for a flag;
    ``label``, ``help``, ``choice_words``).
    ``label``, ``help`` and ``choice_words`` are read by a policy analyst: plain words, no flags or code.
    ``flag_help`` is the command line's own (default: ``help``); "{default}" in it is replaced by the default.
    ``on_page``: the page offers it (False: the page keeps the default, e.g. the paper's solver).
    """

    name: str
    constraint: Constraint
    label: str
    help: str = ""
    flag: str = ""       # the flag's name without its dashes (default: the name, hyphenated)
    flag_help: str = ""
    metavar: str | None = None
    choice_words: tuple[tuple[Any, str], ...] = ()   # (choice, its words on the page)
    widget: str = ""     # "radio" (or "row": a radio in one line) to show the choices as a radio; by kind otherwise
    step: float | None = None
    on_page: bool = True
    # A number's input on its page: ``widget`` "slider" (from the first of ``offered`` to the last) or "steps" (a
    # slider among ``offered``); ``page_default``: the page's first value when the class's default is not one the
    # widget shows (the scan's depth 0, "up to three", is 3); ``key``: the widget's key without the page's prefix
    # when it is not the flag's (the keys saved settings and tests know).
    offered: tuple[Any, ...] = ()
    page_default: Any = None
    key: str = ""
    aliases: tuple[str, ...] = ()  # other names of the flag, without their dashes (--alpha for --alphas)
    # How a command made from its analysis' line (luskin_cli/analysis.py) offers it. ``group``: the title of the
    # flags' group it is in ("": the analysis' own); ``repeat``: the flag may be given several times (its values a
    # list); ``on_command``: it has a flag (False: another option's flag sets it, as --fdr sets the scan's error rate).
    group: str = ""
    repeat: bool = False
    on_command: bool = True
    # ``spec``: the value is this field of the audit's specification, not of the options class (a prediction
    # column, the cuts of a numeric column); ``spec_groups``: the first of the columns named is the specification's
    # groups too (a specification compares groups; the analysis reads its columns from its options).
    spec: str = ""
    spec_groups: bool = False
    # ``instead_of``: the alternative of that option (one flag or the other): given, its value is that option's and
    # ``sets`` (an option, its value) says which of the two it is (--fdr Q: the level Q, the error rate "fdr").
    instead_of: str = ""
    sets: tuple[str, Any] | None = None
    # ``flag_requires``: the refusal when a command is given none (the page and the library have their defaults);
    # ``default_when``: (option, value) pairs, the value taken when the flag is not given and that option is.
    flag_requires: str = ""
    default_when: tuple[tuple[str, Any], ...] = ()
    # ``default``: the value when none is given, for an option declared on its analysis' line of the table (its
    # options class is made from the declarations: :func:`declare`); an option of a class written here has its
    # default in the class.
    default: Any = None

    @property
    def checked(self) -> bool:
        """Whether the option is its options class's field, checked by its constraint (:data:`OPTION_CONSTRAINTS`):
        not a field of the specification, an alternative's flag or a name of the data's columns."""
        return not self.spec and not self.instead_of and self.constraint.kind not in DATA_KINDS

    @property
    def cli_flag(self) -> str:
        """The command-line flag (``--all-cells`` for ``all_cells``)."""
        return "--" + (self.flag or self.name.replace("_", "-"))

    @property
    def cli_flags(self) -> tuple[str, ...]:
        """The flag and its aliases."""
        return (self.cli_flag, *("--" + alias for alias in self.aliases))

    def words_of(self, choice: Any) -> str:
        """A choice in the page's words (the choice itself when none are declared)."""
        return dict(self.choice_words).get(choice, str(choice))

    def command_help(self, default: Any) -> str:
        """The flag's help, with its default said."""
        text = self.flag_help or self.help
        if isinstance(default, tuple):
            shown = ",".join(f"{v:g}" if isinstance(v, float) else str(v) for v in default)
        else:
            shown = f"{default:g}" if isinstance(default, float) else str(default)
        if "{default}" in text:
            return text.replace("{default}", shown)
        said = self.constraint.kind == "flag" or default is None or "default" in text
        return text if said else f"{text} (default {shown})"


# The titles of the scan command's groups of flags (made from the declarations below).
_SCAN = "the scan"
_MODEL = "a model's decisions (error rates) or probabilities (calibration)"

# Every model tool's seed (its flag is one of the data options every command shares: luskin_cli.common).
SEED_OPTION = Option("seed", SEED, "Seed",
                     "A number that fixes the random split and training, so the same choices give the same result.",
                     flag_help="random seed for splits and models (0 to 4,294,967,295)")

# Each model tool's options, in the order the page shows them (the option classes below hold the fields and
# defaults). The command line's flags, the pages' inputs, the saved configuration's checks, the option classes
# and the estimators read them from here: a new option is its field in the class and one line here.
OPTIONS: dict[str, tuple[Option, ...]] = {
    "retrain": (
        Option("algorithm", ALGORITHM, "Algorithm", "How the synthetic training labels are made fair in the filter cell.",
               flag_help="1: selective risk adjustment; 2: risk-based flipping (default {default})", widget="radio",
               choice_words=((1, "Algorithm 1: selective risk adjustment (relabel with the first model's decisions)"),
                             (2, "Algorithm 2: risk-based flipping (keep the true labels, flip the fewest)"))),
        Option("first", replace(RETRAIN_MODEL, what="the first model"), "First model (A1)",
               "The model whose risk scores make the training labels fair.",
               flag_help="type of the first model A1 (default {default})",
               choice_words=(("LR", "logistic regression"), ("MLP", "a small neural network"))),
        Option("second", replace(RETRAIN_MODEL, what="the second model"), "Retrained model (C2)",
               "The model trained on the fair labels and judged on rows neither model has seen.",
               flag_help="type of the second model C2 (default {default})",
               choice_words=(("LR", "logistic regression"), ("MLP", "a small neural network"))),
        Option("direction", DIRECTION, "Direction", "Which group's share moves to meet the other's.",
               flag_help="down: bring the higher class down (the paper); up: bring the lower class up", widget="radio",
               choice_words=(("down", "Bring the higher group down (the paper's way)"),
                             ("up", "Bring the lower group up (for benefits such as loans)"))),
        Option("all_cells", FLAG, "Adjust every filter cell (the paper adjusts only the cell where the filter holds)",
               flag_help="relabel every filter cell, not only the cell where the filter holds"),
        SEED_OPTION,
        Option("threshold", THRESHOLD, "Decision threshold", "The score at or above which a model decides yes.",
               flag_help="score at or above which a model decides positive (default {default})", on_page=False),
    ),
    "thresholds": (
        Option("model", replace(MODEL, optional=True), "Model",
               "LR: logistic regression; MLP: a small neural network; SVM: linear support vector machine.",
               flag_help="train this model and tune its thresholds (default {default})",
               choice_words=tuple((k, f"{k}: {name}") for k, name in MODEL_NAMES.items())),
        Option("solver", THRESHOLD_SOLVER, "Solver",
               "Exact finds the best thresholds for sure; particle swarm is the paper's search heuristic.",
               flag_help="exact: the true optimum (default); pso: the paper's particle swarm", widget="radio",
               choice_words=(("exact", "Exact (best possible)"), ("pso", "Particle swarm (the paper's method)"))),
        Option("lam", LAMBDA, "Fairness weight (lambda)",
               "lambda: how much fairness weighs against accuracy. 0 = accuracy only; larger values push the "
               "groups' TPR and FPR together at some cost in accuracy.",
               flag="lambda", metavar="L", step=0.5,
               flag_help="weight of the fairness gaps against accuracy (default {default})"),
        SEED_OPTION,
        Option("tuning", TUNING, "Tune the thresholds on",
               "Paper: a separate 20% validation split. Cross-fitted: the model's out-of-fold scores on all 80% "
               "training rows (5 folds), which gave smaller test gaps at a smaller accuracy cost on COMPAS over 10 "
               "seeds (benchmarks/results/parity.md).",
               flag_help="validation: tune on the 20%% validation rows (the paper, default); crossfit: tune on "
                         "out-of-fold scores of the 80%% train + validation rows and refit the model on them "
                         "(more tuning data, 5 extra fits)", widget="radio",
               choice_words=(("validation", "a 20% validation split (the paper)"),
                             ("crossfit", "all training rows, cross-fitted (smaller test gaps)"))),
    ),
    "equalize": (
        Option("alphas", ALPHAS, "Alphas to train (one model each)",
               "alpha: the weight on accuracy in the training objective (1 = accuracy only). Smaller alpha puts "
               "more weight on making the groups' score distributions alike.", aliases=("alpha",), metavar="A[,A...]",
               flag_help="the alphas to train, between 0 and 1, separated by commas (default {default})"),
        SEED_OPTION,
        Option("bandwidth", BANDWIDTH, "Histogram bandwidth", "How smooth the groups' score histograms are while "
               "training: the width of each score's spread.",
               flag_help="width of the Gaussian kernel of the soft histograms (default {default})", on_page=False),
        Option("solver", EQUALIZE_SOLVER, "Solver", "How each model is fitted: a fast standard method or the "
               "paper's 2,000 small steps.", flag_help="lbfgs (default, fast) or momentum (the paper's 2,000 steps)",
               choice_words=(("lbfgs", "Fast (standard)"), ("momentum", "The paper's 2,000 steps")), on_page=False),
        Option("start", START, "Start of each fit", "Where each alpha's fit starts: from the plain model, or from "
               "the neighbouring alpha's result.",
               flag_help="lr: start each alpha's fit from plain logistic regression (default); path: from the "
                         "neighbouring alpha's solution",
               choice_words=(("lr", "The plain model"), ("path", "The neighbouring alpha's result")), on_page=False),
    ),
    # The proxy audit (luskin audit --proxy-model, the Proxy audit page, proxy_audit(model=)).
    "proxy": (
        Option("model", PROXY_MODEL, "Outcome-aware model",
               "Pooled assumes each race's rate is the same everywhere; by place lets it differ between places, "
               "pulled toward the pooled rate where a place has few rows.", flag="proxy-model", metavar="MODEL",
               flag_help="the outcome-aware (BIRDiE) estimate behind the verdicts: 'pooled' (one rate per race, the "
                         "default) or 'by-place' (one rate per race and place, shrunk toward the pooled rates; "
                         "intervals from a bootstrap, slower)", widget="row",
               choice_words=(("pooled", "Pooled: one rate per race"),
                             ("by-place", "By place: one rate per race and place (slower)"))),
    ),
    # The subgroup scan (luskin scan, made from its line of the analyses' table; the Scan page; report --scan;
    # luskin_core.analyses.scan.run). Its columns and a model's probability column are the data's (fields of
    # ScanOptions checked where the data is read); the values read as unknown, the cuts and bins of a numeric
    # column and a model's prediction column are the specification's (``spec``). In the command's order.
    "scan": (
        Option("columns", Constraint("the columns to scan", "columns"), "Columns to scan",
               "The columns whose values, alone and combined, form the groups scanned.", group=_SCAN,
               flag_help="comma-separated columns to scan, e.g. sex,race,age,borough (repeatable)", metavar="COLS",
               repeat=True, spec_groups=True, flag_requires="Say which columns to scan: --columns a,b,c.", on_page=False),
        Option("depth", SCAN_DEPTH, "Columns combined at most",
               "How many columns a scanned group combines at most.",
               flag_help="how many columns a group combines at most (1-3 usual; default 3)", metavar="D",
               group=_SCAN, widget="slider", offered=(1, 3), page_default=3),
        Option("min_size", SCAN_MIN_SIZE, "Smallest group (rows)", "Rows a group needs, inside it and outside it.",
               flag_help="rows a group needs, inside it and outside it (default {default})", metavar="N",
               group=_SCAN),
        Option("level", SCAN_LEVEL, "Error level",
               "The level of the error rate chosen below: family-wise, the chance that the scan reports any group "
               "when none truly differs; it bounds the share of false findings too.",
               flag_help="control the family-wise error rate over all groups at A: the chance that any group is "
                         "reported by chance (default {default})", metavar="A", group=_SCAN, widget="steps",
               offered=(0.01, 0.05, 0.1)),
        Option("fdr", SCAN_LEVEL, "False discovery rate",
               "Control the false discovery rate at this level instead of the family-wise error rate.",
               flag_help="control the false discovery rate at Q instead (Benjamini-Hochberg on each group's "
                         "exact permutation p-value): finds more when many groups differ, and expects a share "
                         "Q of what it reports to be chance", metavar="Q", on_page=False, group=_SCAN,
               instead_of="level", sets=("error", "fdr")),
        Option("error", SCAN_ERROR, "Control", "Family-wise: the chance of reporting any group by chance is at most "
               "the level. False discovery rate: of the groups reported, the expected share found by chance is at "
               "most the level; it finds more when many groups differ.", on_command=False, widget="row",
               choice_words=(("fwer", "The family-wise error rate"), ("fdr", "The false discovery rate")),
               key="error_rate"),
        Option("replicates", SCAN_REPLICATES, "Shuffles of the outcome",
               "How many times the outcome is shuffled among the rows to set the bar a gap must pass: more give a "
               "steadier bar and take longer.",
               flag_help="null replicates that calibrate the search (default {default})", metavar="R", group=_SCAN),
        Option("seed", SEED, "Seed", "A number that fixes the shuffles, so the same choices give the same findings.",
               flag_help="random seed of the replicates (default {default})", group="data"),
        Option("calibration", SCAN_CALIBRATION, "How the family-wise bar is set",
               "By shuffling the outcome, by a bound that needs no shuffles (at least as strict), or whichever costs "
               "about what counting the rows does.",
               choice_words=(("auto", "Whichever is quicker for these data"), ("replicates", "Shuffles of the outcome"),
                             ("bound", "An exact bound, without shuffles")),
               flag_help="the family-wise bar: replicates (max-T), bound (a union bound over each group's exact "
                         "law: no replicates), or auto (replicates where they cost about what counting the rows "
                         "does, else the bound; default)", group=_SCAN),
        Option("unknown", Constraint("a value read as unknown", "text"), "Values read as unknown",
               "A value of a scanned column read as unknown category: a group with it is shown apart.",
               flag_help="read this value of a scanned column as unknown category, as common spellings such as "
                         "'Unknown' and 'Prefer not to say' already are: a group with it is shown apart, never a "
                         "finding (repeatable; e.g. --unknown U)", metavar="VALUE", repeat=True,
               spec="unknown_values", on_page=False, group=_SCAN),
        Option("bins", Constraint("the cut points", "cuts"), "Cut points",
               "Where a numeric column is cut into ranges.",
               flag_help="cut a numeric column at these points, e.g. age=25,35,45,55 (repeatable)", metavar="COL=CUTS",
               repeat=True, spec="bins", on_page=False, group=_SCAN),
        Option("n_bins", whole("the number of ranges", plain=True), "Ranges",
               "Ranges of equal shares for a numeric column with many values.",
               flag_help="ranges of equal shares for a numeric column with many values (default 4)", metavar="K",
               spec="n_bins", on_page=False, group=_SCAN),
        Option("predictions", Constraint("the prediction column", "column"), "Prediction column",
               "A model's decisions, whose error rates are scanned against the outcome.",
               flag_help="a prediction column (0/1, true/false, yes/no, or a score with --prediction-cutoff): "
                         "scan its error rates against the outcome (see --measure)", metavar="COL",
               spec="prediction", on_page=False, group=_MODEL),
        Option("prediction_cutoff", number("the prediction cut-off", plain=True), "Prediction cut-off",
               "The prediction column is a score: a row is predicted positive at or above it.",
               flag_help="the prediction column is a score: a row is predicted positive at or above X", metavar="X",
               spec="prediction_cutoff", on_page=False, group=_MODEL),
        Option("measure", SCAN_MEASURE, "Compare", "What is compared: the share with the positive outcome, a model's "
               "error rates, or its calibration.",
               flag_help="what is compared: rate (the share with the positive outcome; with --predictions, the "
                         "share predicted positive), fpr / fnr / error (with --predictions; default error), "
                         "calibration (the outcome against --probability)", on_page=False, group=_MODEL,
               default_when=(("probability", "calibration"), ("predictions", "error"))),
        Option("probability", Constraint("the probability column", "column"), "Probability column",
               "A column of a model's predicted probabilities of the positive outcome.",
               flag_help="a column of a model's predicted probabilities of the positive outcome: scan where "
                         "the model over- or under-predicts (calibration)", metavar="COL", on_page=False,
               group=_MODEL),
    ),
    # The audit over time (luskin audit --period, the Over time page, luskin_core.analyses.series.run). Its date
    # column and the dates' format are the data's: fields of SeriesOptions without a declaration.
    "series": (
        Option("every", PERIOD, "Every", "The length of a period.",
               flag_help="the length of a period (default {default})", on_page=False),
        Option("keep_flagged", FLAG, "Keep the flagged periods in the trends and alerts",
               "Periods where every group's share is 0% or 100%, or with fewer than a third of the rows of a "
               "typical period, are set aside unless kept.", flag="keep-flagged-periods",
               flag_help="keep in the trends and alerts the periods where every group's share is 0%% or 100%%, "
                         "or with fewer than a third of the rows of the median period (set aside by default)",
               on_page=False),
    ),
    # The regulator tables (luskin audit --template, the Regulator tables page, build(data, spec, choices)). The sex
    # and race/ethnicity columns and the values read as unknown are the data's: fields of RegulatorChoices.
    "regulator": (
        Option("exclude_small", FLAG, "Leave out categories under 2% of the data",
               "Local Law 144 lets an auditor leave a category of fewer than 2% of the data out of the impact ratios, "
               "saying so in the summary.", flag_help="leave categories under 2%% of the data out of the impact "
               "ratios (Local Law 144's exclusion, said in the summary)", on_page=False),
    ),
    # The adjusted gaps (luskin adjust, the Adjusted gaps page, luskin_core.analyses.adjust.run). The controls,
    # their bins and curves and the cluster are the data's columns: fields of AdjustOptions without a declaration
    # (the number of bins and of knots is checked where the controls are read, adjust_model).
    "adjusted": (
        Option("log", FLAG, "Model the logarithm of the amount",
               "For an amount: its gaps read back as shares of the reference's amount (every amount above 0).",
               flag_help="with --amount: model the logarithm of the amount (every amount above 0); its gaps read "
                         "back as shares of the reference's amount", on_page=False),
    ),
}


class _Constraints(Mapping[str, Mapping[str, Constraint]]):
    """Each tool's options and their constraints, read from :data:`OPTIONS` when asked (a live view)."""

    def __getitem__(self, tool: str) -> Mapping[str, Constraint]:
        return {option.name: option.constraint for option in OPTIONS[tool] if option.checked}

    def __iter__(self) -> Iterator[str]:
        return iter(OPTIONS)

    def __len__(self) -> int:
        return len(OPTIONS)


# tool -> option name -> Constraint: what the checks read (the estimators, the saved configuration's check).
OPTION_CONSTRAINTS: Mapping[str, Mapping[str, Constraint]] = _Constraints()


def _check_fields(options: Any, tool: str) -> None:
    """Each constrained field of a frozen options object checked and put in its canonical type."""
    for name, constraint in OPTION_CONSTRAINTS[tool].items():
        object.__setattr__(options, name, constraint.check(getattr(options, name)))


def check_kind(kind: str) -> str:
    """A model type (LR, MLP, SVM, in any case), or a plain error."""
    return str(MODEL.check(kind))


def check_direction(direction: str) -> str:
    """'down' or 'up', or a plain error."""
    return str(DIRECTION.check(direction))


def check_algorithm(algorithm: Any) -> int:
    """1 or 2, or a plain error."""
    return int(ALGORITHM.check(algorithm))


@dataclass(frozen=True)
class RetrainOptions:
    """How to retrain: which algorithm, the two model types, direction, cells, seed, threshold.

    ``features`` None means every column but the outcome (identifier-like text is left out);
    ``exclude`` removes columns from either choice.
    """

    algorithm: int = 2
    first: str = "LR"
    second: str = "MLP"
    direction: str = "down"
    all_cells: bool = False
    seed: int = 0
    threshold: float = 0.5
    features: tuple[str, ...] | None = None
    exclude: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _check_fields(self, "retrain")
        if self.features is not None:
            names = (self.features,) if isinstance(self.features, str) else self.features
            object.__setattr__(self, "features", tuple(str(c) for c in names) or None)
        names = (self.exclude,) if isinstance(self.exclude, str) else (self.exclude or ())
        object.__setattr__(self, "exclude", tuple(str(c) for c in names))

    def describe(self) -> str:
        return (f"{ALGORITHM_NAMES[self.algorithm]}, A1 = {self.first}, C2 = {self.second}, direction "
                f"{self.direction}, {'every filter cell' if self.all_cells else 'the filter cell only'}, "
                f"seed {self.seed}")

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["features"] = None if self.features is None else list(self.features)
        data["exclude"] = list(self.exclude)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RetrainOptions:
        if not isinstance(data, Mapping):
            raise LuskinError("The saved retraining options are not a JSON object.")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise LuskinError(f"Unknown retraining {'option' if len(unknown) == 1 else 'options'}: {', '.join(unknown)}.")
        values = dict(data)
        if values.get("features") is not None:
            values["features"] = tuple(values["features"])
        values["exclude"] = tuple(values.get("exclude") or ())
        return cls(**values)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    @classmethod
    def from_json(cls, text: str) -> RetrainOptions:
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, TypeError, ValueError) as err:  # ValueError: an integer of 4,300+ digits
            raise LuskinError(f"The retraining options are not valid JSON ({str(err)[:200]}).") from None
        return cls.from_dict(data)


@dataclass(frozen=True)
class ThresholdOptions:
    """The thresholds tool's settings (see the module doc): the model to train (None: a score column), ..."""

    model: str | None = "LR"
    solver: str = "exact"
    lam: float = 1.0
    seed: int = 0
    tuning: str = "validation"
    default_threshold: float | None = None

    def __post_init__(self) -> None:
        _check_fields(self, "thresholds")


@dataclass(frozen=True)
class EqualizeOptions:
    """The equalized-distribution tool's settings (see the module doc): the alphas swept, the seed, ..."""

    alphas: tuple[float, ...] = DEFAULT_ALPHAS
    seed: int = 0
    bandwidth: float = 0.02
    solver: str = "lbfgs"
    start: str = "lr"

    def __post_init__(self) -> None:
        _check_fields(self, "equalize")


# The census tables a place is looked up in (luskin_core.analyses.proxy: ZIP code tabulation areas or tracts).
PROXY_LEVELS: tuple[str, ...] = ("zcta", "tract")
PROXY_LEVEL = one_of("the place's census tables", *PROXY_LEVELS, case="lower",
                     words="'zcta' (ZIP codes) or 'tract' (census tracts, 11-digit FIPS)")
PROXY_THRESHOLD = number("the threshold method's probability", 0, 1, open_low=True,
                         words="a probability above 0 and at most 1, e.g. 0.8")


@dataclass(frozen=True)
class ProxyOptions:
    """The proxy audit's settings (:func:`luskin_core.analyses.proxy_run.run`): how race and ethnicity are estimated
    (the surname and place columns, the census tables the place is looked up in, a first-name column for BIFSG),
    the threshold method's probability, the outcome-aware model behind the verdicts, and a column of race recorded
    for some rows to check the estimate against. What is audited and how it is judged is the specification's
    (its groups: :data:`~luskin_core.spec.audit_spec.ESTIMATED_RACE`).

    The columns are the data's (fields without a declaration); ``threshold`` and ``level`` are checked here."""

    model: str = "pooled"
    surname: str | None = None
    place: str | None = None
    level: str = "zcta"
    first_name: str | None = None
    threshold: float = 0.8
    recorded: str | None = None

    def __post_init__(self) -> None:
        _check_fields(self, "proxy")
        for name, what in (("surname", "the surname column"), ("place", "the place column"),
                           ("first_name", "the first-name column"), ("recorded", "the recorded race column")):
            object.__setattr__(self, name, _column(getattr(self, name), what))
        object.__setattr__(self, "level", PROXY_LEVEL.check(self.level))
        object.__setattr__(self, "threshold", PROXY_THRESHOLD.check(self.threshold))


def _names(value: Any) -> tuple[str, ...]:
    """Column names from a list of them, or from text separated by commas (blanks dropped; a name in a list is
    kept whole, commas and all)."""
    items = value.split(",") if isinstance(value, str) else list(value or ())
    return tuple(str(item).strip() for item in items if str(item).strip())


def _column(value: Any, what: str) -> str | None:
    """One optional column name (None or blank: not given)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise LuskinError(f"{what[:1].upper()}{what[1:]} must be a column's name, not '{_shown(value)}'.")
    return value.strip() or None


def _counts(value: Any, what: str) -> tuple[tuple[str, int], ...]:
    """{column: number} (or its pairs) as pairs, in the order given; the numbers are checked where they are used."""
    if not value:
        return ()
    pairs = value.items() if isinstance(value, Mapping) else value
    try:
        return tuple((str(k).strip(), v) for k, v in pairs)
    except (TypeError, ValueError):
        raise LuskinError(f"{what[:1].upper()}{what[1:]} must map each column to a number (e.g. age=5).") from None


@dataclass(frozen=True)
class ScanOptions:
    """The subgroup scan's settings (:func:`luskin_core.analyses.scan.run`): the columns scanned (none: the
    audit's groups and strata), how hard to look, and for calibration the column of a model's probabilities.

    ``measure`` None: the specification's rate (the share with the positive outcome, or with a prediction column
    the share the model decides positive), or calibration when ``probability`` is given."""

    columns: tuple[str, ...] = ()
    depth: int = 0
    min_size: int = 30
    level: float = 0.05
    error: str = "fwer"
    replicates: int = 999
    seed: int = 0
    measure: str | None = None
    calibration: str = "auto"
    probability: str | None = None

    def __post_init__(self) -> None:
        _check_fields(self, "scan")
        object.__setattr__(self, "columns", _names(self.columns))
        object.__setattr__(self, "probability", _column(self.probability, "the probability column"))


@dataclass(frozen=True)
class SeriesOptions:
    """The audit over time's settings (:func:`luskin_core.analyses.series.run`): the date column, the length of
    a period, the dates' format (None: recognised) and whether the flagged periods stay in the trends."""

    period: str | None = None
    every: str = "month"
    period_format: str | None = None
    keep_flagged: bool = False

    def __post_init__(self) -> None:
        _check_fields(self, "series")
        object.__setattr__(self, "period", _column(self.period, "the date column"))
        object.__setattr__(self, "period_format", _column(self.period_format, "the date format"))


@dataclass(frozen=True)
class AdjustOptions:
    """The adjusted gaps' settings (:func:`luskin_core.analyses.adjust.run`): the controls held equal (numbers
    with many values linear; text, and number codes with few values, categorical, as the audit reads them), numeric
    columns read as categories, number codes fitted as straight lines (``as_numbers``), controls cut into bins or
    fitted as curves ({column: bins}, {column: knots}), the column the standard errors are clustered by, and for an amount its
    logarithm. ``max_cells``: past this many cells an engine fits from per-key sums (None: the default)."""

    controls: tuple[str, ...] = ()
    categorical: tuple[str, ...] = ()
    as_numbers: tuple[str, ...] = ()   # number codes fitted as straight lines (else read as categories, issue 46)
    bins: tuple[tuple[str, int], ...] = ()
    splines: tuple[tuple[str, int], ...] = ()
    cluster: str | None = None
    log: bool = False
    max_cells: int | None = None

    def __post_init__(self) -> None:
        _check_fields(self, "adjusted")
        object.__setattr__(self, "controls", _names(self.controls))
        object.__setattr__(self, "categorical", _names(self.categorical))
        object.__setattr__(self, "as_numbers", _names(self.as_numbers))
        object.__setattr__(self, "bins", _counts(self.bins, "the bins of the controls"))
        object.__setattr__(self, "splines", _counts(self.splines, "the curves of the controls"))
        object.__setattr__(self, "cluster", _column(self.cluster, "the cluster column"))
        if self.max_cells is not None:
            object.__setattr__(self, "max_cells", whole("the most cells", 1).check(self.max_cells))

    @property
    def any_control(self) -> bool:
        """Whether any column is held equal."""
        return bool(self.controls or self.categorical or self.as_numbers or self.bins or self.splines)


@dataclass(frozen=True)
class RegulatorChoices:
    """What every regulator table is built from besides the data and the specification: the options of the
    regulator tables' entries of the analyses' table (LL144, EEOC: ``run(data, spec, choices)``). The columns and
    the values read as unknown are the data's (fields without a declaration)."""

    sex: str | None = None
    race: str | None = None
    exclude_small: bool = False
    unknown: tuple[str, ...] = ()
    groups: bool = False  # the specification's own groups (``--groups``) in place of sex and race/ethnicity
    bonus: str | None = None  # a column of complementary or variable pay (the EU pay table's bonus)

    def __post_init__(self) -> None:
        _check_fields(self, "regulator")
        unknown = (self.unknown,) if isinstance(self.unknown, str) else (self.unknown or ())
        object.__setattr__(self, "unknown", tuple(str(v) for v in unknown))



# Each tool's options class: it holds the fields and their defaults (the estimator's keyword defaults too).
OPTION_CLASSES: dict[str, type] = {"retrain": RetrainOptions, "thresholds": ThresholdOptions,
                                   "equalize": EqualizeOptions, "proxy": ProxyOptions, "scan": ScanOptions,
                                   "series": SeriesOptions, "adjusted": AdjustOptions,
                                   "regulator": RegulatorChoices}


def declare(tool: str, declarations: tuple[Option, ...]) -> type:
    """Declare an analysis' options where its line of the table names them (``Analysis(options=..., declares=...)``
    in :mod:`luskin_core.present.report_parts`): they join :data:`OPTIONS` under ``tool`` and their options class is
    made from them (a frozen dataclass, one field per option that is not the specification's or an alternative's,
    its ``default`` the declared one, every value checked by its constraint when an object is built). So a new
    analysis declares its options in its own line, and the command's flags, the page's inputs and the report's
    flags come from there. Declaring the same options again gives the same class; other options under a tool
    already declared is a programming error."""
    if tool in OPTIONS:
        if OPTIONS[tool] != declarations:
            raise ValueError(f"the options of {tool!r} are declared twice, differently")
        return OPTION_CLASSES[tool]
    own = tuple(option for option in declarations if not option.spec and not option.instead_of)

    def __post_init__(self: Any) -> None:
        for option in own:
            object.__setattr__(self, option.name, option.constraint.check(getattr(self, option.name)))

    name = "".join(part.capitalize() for part in re.split(r"[^A-Za-z0-9]+", tool)) + "Options"
    made = make_dataclass(name, [(option.name, Any, dataclass_field(default=option.default)) for option in own], frozen=True,
                          namespace={"__post_init__": __post_init__, "__module__": __name__,
                                     "__doc__": f"The options of {tool}, made from their declarations."})
    globals()[name] = made   # found by its name, as pickle (the page's cache) looks a class up
    OPTIONS[tool] = declarations
    OPTION_CLASSES[tool] = made
    return made


def option_default(tool: str, name: str) -> Any:
    """The default of one declared option: its options class's field default."""
    for field in fields(OPTION_CLASSES[tool]):
        if field.name == name:
            return field.default
    raise KeyError(f"{tool} has no option {name!r}")


__all__ = ["DEFAULT_ALPHAS", "OPTIONS", "OPTION_CLASSES", "OPTION_CONSTRAINTS", "RETRAIN_KINDS", "SEED", "SEED_OPTION",
           "AdjustOptions", "Constraint", "EqualizeOptions", "Option", "ProxyOptions", "RegulatorChoices", "RetrainOptions",
           "ScanOptions",
           "SeriesOptions", "ThresholdOptions", "declare", "option_default"]
