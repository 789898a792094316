"""Every command's options, typed: one :class:`CommandOptions` per run, built from argparse's namespace in one place.

The commands share functions (the data and specification options, the engine's, the templates', the evidence's)
that read flags some commands do not have; each flag is a field here with the value a command without it reads
(None, or False for a switch), so nothing asks the namespace whether it has a flag. :func:`options_from` is the one
place a namespace becomes options; ``tests/test_cli_options.py`` checks every flag of every command is a field.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

from luskin_core.errors import LuskinError

T = TypeVar("T")


@dataclass
class CommandOptions:
    """The parsed command line (the commands that have each flag after it)."""

    command: str | None = None
    run: Callable[[CommandOptions], int | None] | None = None   # the command's own function
    analysis: str | None = None   # amounts (an analysis of the table, luskin_cli/analysis.py)
    sample_info: Any = None   # set when the model tools read a sample of a source (the report says which rows)
    direction_note: str | None = None   # set when the core's rule chose the outcome's direction: said once on stderr
    direction_told: bool = False
    address: str = "127.0.0.1"   # app
    adverse: bool | None = None   # audit, report, adjust, amounts
    algorithm: int | list[int] | None = None   # retrain, report
    all_cells: bool | None = None   # retrain, report
    alpha_shown: float = 0.1   # report
    alphas: tuple[float, ...] | None = None   # equalize, report
    amount: str | None = None   # audit, report, adjust, amounts
    bandwidth: float = 0.02   # equalize
    bins: list[str] | None = None   # audit, report, adjust, scan, amounts
    bonus: str | None = None   # audit, report
    bounds: bool = False   # audit
    browser: str | None = None   # report
    by: str | None = None   # audit
    calibration: str = "auto"   # scan
    categorical: list[str] | None = None   # report, adjust
    as_numbers: list[str] | None = None   # report, adjust
    cluster: str | None = None   # report, adjust
    columns: list[str] | None = None   # scan
    config: str | None = None   # audit, retrain, thresholds, equalize, report, adjust, amounts
    control_bins: list[str] | None = None   # report, adjust
    control_curves: list[str] | None = None   # report, adjust
    controls: list[str] | None = None   # report, adjust
    correction: str | None = None   # audit, report, adjust, amounts
    counts: str | None = None   # audit
    criterion: str | None = None   # audit
    csv: str | None = None   # audit
    data: str | None = None   # audit, retrain, thresholds, equalize, report, adjust, proxy, scan, verify, amounts
    data_explanation: str | None = None   # audit
    default_threshold: float | None = None   # thresholds, report
    depth: int = 0   # scan
    direction: str | None = None   # retrain, report
    distribution_date: str | None = None   # audit
    equalize: bool = False   # report
    every: str = "month"   # audit, report
    evidence: str | None = None   # audit
    evidence_browser: str | None = None   # audit
    evidence_without_pdf: bool = False   # audit
    exclude: str | None = None   # audit, retrain, thresholds, equalize, report, adjust, amounts
    exclude_small: bool = False   # audit, report
    favourable: bool | None = None   # audit, report, adjust, amounts
    fdr: float | None = None   # scan
    features: str | None = None   # audit, retrain, thresholds, equalize, report, adjust, amounts
    file: str | None = None   # verify, keygen
    filter: list[str] | None = None   # audit, retrain, thresholds, equalize, report, adjust, amounts
    first: str | None = None   # retrain, report
    first_name: str | None = None   # proxy
    group_label: str | None = None   # audit, retrain, thresholds, equalize, report, adjust, amounts
    groups: list[str] | None = None   # audit, report, adjust, amounts
    headless: bool = False   # app
    histograms: bool = False   # equalize
    html: str | None = None   # report
    json: bool = False   # audit, retrain, thresholds, equalize, report, adjust, proxy, scan, verify, amounts
    keep_flagged_periods: bool = False   # audit, report
    key: str | None = None   # verify
    lam: float = 1.0   # thresholds
    lams: list[float] | None = None   # report
    log: bool = False   # report, adjust
    level: float | None = None   # scan
    measure: str | None = None   # scan
    metric: str | None = None   # audit, report, adjust, amounts
    min_group_share: float | None = None   # audit, report, adjust, amounts
    min_group_size: int | None = None   # audit, report, adjust, amounts
    min_size: int = 30   # scan
    model: str | None = None   # audit, thresholds, report
    n_bins: int | None = None   # scan
    name: list[str] | None = None   # audit, report, adjust, amounts
    no_filter: bool = False   # audit, retrain, thresholds, equalize, report, adjust, amounts
    other_label: str | None = None   # audit, retrain, thresholds, equalize, report, adjust, amounts
    out: str | None = None   # proxy
    outcome: str | None = None   # audit, retrain, thresholds, equalize, report, adjust, scan, amounts
    pdf: str | None = None   # report
    period: str | None = None   # audit, report
    period_format: str | None = None   # audit, report
    population: list[str] | None = None   # audit, retrain, thresholds, equalize, report, adjust, amounts
    port: int = 8501   # app
    positive: str | None = None   # audit, retrain, thresholds, equalize, report, adjust, scan, amounts
    prediction_cutoff: float | None = None   # audit, scan
    predictions: str | None = None   # audit, scan
    preset: str | None = None   # audit, retrain, thresholds, equalize, report, adjust, amounts
    probability: str | None = None   # scan
    protected: str | None = None   # audit, retrain, thresholds, equalize, report, adjust, amounts
    proxy: str | None = None   # audit
    proxy_check: str | None = None   # audit
    proxy_threshold: float | None = None   # audit
    query_timeout: str | None = None   # audit, retrain, thresholds, equalize, report, adjust, scan, amounts
    race: str | None = None   # audit, report
    ratio_threshold: float | None = None   # audit, report, adjust, amounts
    reference: str | None = None   # audit, report, adjust, amounts
    replicates: int = 999   # scan
    retrain: bool = False   # report
    sample_cap: int | None = None   # audit, retrain, thresholds, equalize, report, adjust, scan, amounts
    save_model: str | None = None   # retrain
    score: bool = False   # audit, report, adjust, amounts
    score_column: str | None = None   # thresholds, report
    score_cutoff: float | None = None   # audit, report, adjust, amounts
    second: list[str] | str | None = None   # retrain, report
    seed: int = 0   # audit, retrain, thresholds, equalize, report, adjust, scan, amounts
    sex: str | None = None   # audit, report
    sign_key: str | None = None   # audit
    solver: str | None = None   # thresholds, equalize, report
    spread: bool = False   # thresholds, report
    start: str = "lr"   # equalize
    stratify: list[str] | None = None   # audit, report, adjust, amounts
    summary_csv: str | None = None   # verify
    summary_html: str | None = None   # verify
    surname: str | None = None   # proxy
    synthetic_out: str | None = None   # retrain
    table: str | None = None   # audit, retrain, thresholds, equalize, report, adjust, scan, verify, amounts
    template: str | None = None   # audit, report
    threshold: float | None = None   # retrain
    thresholds: bool = False   # report
    title: str = "Fairness audit report"   # report
    tolerance: float | None = None   # audit, retrain, thresholds, equalize, report, adjust, amounts
    tract: str | None = None   # proxy
    tuning: str = "validation"   # thresholds
    unknown: list[str] | None = None   # audit, report
    watch_files: bool = False   # app
    zcta: str | None = None   # proxy

    # A model tool's declared options without a field of their own (``OPTIONS`` in luskin_core/spec/options.py: a
    # new option is one declaration, its flag made from it), by name (behind an analysis' name for the report's
    # flags of the analyses made from their line: ``scan_depth``); and the flags this command has.
    declared: dict[str, Any] = field(default_factory=dict)
    given_by_parser: frozenset[str] = frozenset()

    def value(self, name: str) -> Any:
        """A flag's value by its name (a declared option's flag lands under the option's name)."""
        return self.declared[name] if name in self.declared else getattr(self, name)

    def has(self, name: str) -> bool:
        """Whether this command has the flag ``name`` (a declared option's flags differ by command)."""
        return name in self.given_by_parser


def given(value: T | None, flag: str) -> T:
    """A flag the command requires (argparse has checked it is there); None is said in words, never a traceback."""
    if value is None:
        raise LuskinError(f"{flag} is needed here.")
    return value


_FIELDS = frozenset(f.name for f in fields(CommandOptions))


def options_from(namespace: argparse.Namespace) -> CommandOptions:
    """The one place argparse's namespace becomes typed options; a flag without its field is a programming error."""
    from luskin_core.present.report_parts import made_from_table  # light: the table imports nothing heavy
    from luskin_core.spec.options import OPTIONS  # light: no heavy import

    values = {k: v for k, v in vars(namespace).items() if not k.startswith("_")}
    names = {option.name for options in OPTIONS.values() for option in options}
    # luskin report's flags of an analysis made from its line land behind its name (scan_depth for --scan-depth),
    # and its switch under its name when none of its options is the one its command needs
    for entry in made_from_table("command"):
        if entry.options is not None:
            names |= {entry.name.replace("-", "_"), *(f"{entry.name.replace('-', '_')}_{option.name}"
                                                       for option in OPTIONS[entry.options])}
    declared = {k: v for k, v in values.items() if k not in _FIELDS and k in names}
    unknown = sorted(set(values) - _FIELDS - set(declared))
    if unknown:
        raise TypeError(f"flags without a field of CommandOptions: {', '.join(unknown)}")
    return CommandOptions(**{k: v for k, v in values.items() if k in _FIELDS}, declared=declared,
                          given_by_parser=frozenset(values))
