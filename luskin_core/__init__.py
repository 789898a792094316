"""Luskin: audit a classifier or a record of decisions for bias, and correct it.

The public API is re-exported here; the modules behind it are private in spirit. The names are
loaded on first use (PEP 562), so ``import luskin_core`` and the command line start in a few
milliseconds instead of importing pandas, scipy and scikit-learn for a ``--help``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# Public name -> the module that defines it.
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("AuditResult", "Cell", "Gap", "audit", "audit_arrays"), "analyses.audit"),
    **dict.fromkeys(("OPERATORS", "Condition", "parse_condition"), "spec.conditions"),
    **dict.fromkeys(("PRESETS", "Preset", "download_sqf", "get_preset", "load_csv", "load_data", "load_sample",
                     "load_sqf"), "counting.data"),
    **dict.fromkeys(("AlphaSweep", "EqualizedDistributionClassifier", "alpha_sweep", "equalize_frame"), "corrections.equalize"),
    "LuskinError": "errors",
    **dict.fromkeys(("RelabelResult", "relabel", "risk_based_flipping", "selective_risk_adjustment"), "corrections.relabel"),
    **dict.fromkeys(("RetrainOptions", "RetrainResult", "load_model", "model_bytes", "paper_table", "retrain",
                     "save_model"), "corrections.retrain"),
    **dict.fromkeys(("AuditSpec", "CellSpec", "GroupSpec", "Judgement", "OutcomeSpec"), "spec.audit_spec"),
    "prepare": "counting.prepared",
    **dict.fromkeys(("GroupThresholdOptimizer", "ThresholdReport", "tune_thresholds"), "corrections.thresholds"),
    **dict.fromkeys(("Source", "open_source"), "counting.sources"),
    **dict.fromkeys(("build_html_report", "build_pdf_report"), "present.report"),
    **dict.fromkeys(("LL144Result", "eeoc_rows", "ll144_audit", "ll144_from_counts"), "analyses.regulator"),
    **dict.fromkeys(("minimum_detectable_difference", "sufficiency"), "stats.power"),
    **dict.fromkeys(("ScanResult", "ScanSpec", "scan"), "analyses.scan"),
}

__all__ = [
    "OPERATORS", "PRESETS", "AlphaSweep", "AuditResult", "AuditSpec", "Cell", "CellSpec", "Condition",
    "EqualizedDistributionClassifier", "Gap", "GroupSpec", "GroupThresholdOptimizer", "Judgement", "LL144Result",
    "LuskinError", "OutcomeSpec", "Preset",
    "RelabelResult", "RetrainOptions", "RetrainResult", "ScanResult", "ScanSpec", "Source", "ThresholdReport", "__version__",
    "alpha_sweep", "audit", "audit_arrays", "build_html_report", "build_pdf_report", "download_sqf", "eeoc_rows",
    "equalize_frame", "get_preset", "ll144_audit", "ll144_from_counts", "load_csv", "load_data", "load_model",
    "load_sample", "load_sqf", "minimum_detectable_difference", "model_bytes", "open_source", "paper_table",
    "parse_condition", "prepare", "relabel", "retrain", "risk_based_flipping", "save_model", "scan",
    "selective_risk_adjustment", "sufficiency", "tune_thresholds",
]

if TYPE_CHECKING:  # what a type checker and an IDE see: the same names, imported eagerly
    from luskin_core.analyses.audit import AuditResult, Cell, Gap, audit, audit_arrays
    from luskin_core.analyses.regulator import LL144Result, eeoc_rows, ll144_audit, ll144_from_counts
    from luskin_core.analyses.scan import ScanResult, ScanSpec, scan
    from luskin_core.corrections.equalize import (
        AlphaSweep,
        EqualizedDistributionClassifier,
        alpha_sweep,
        equalize_frame,
    )
    from luskin_core.corrections.relabel import RelabelResult, relabel, risk_based_flipping, selective_risk_adjustment
    from luskin_core.corrections.retrain import (
        RetrainOptions,
        RetrainResult,
        load_model,
        model_bytes,
        paper_table,
        retrain,
        save_model,
    )
    from luskin_core.corrections.thresholds import GroupThresholdOptimizer, ThresholdReport, tune_thresholds
    from luskin_core.counting.data import (
        PRESETS,
        Preset,
        download_sqf,
        get_preset,
        load_csv,
        load_data,
        load_sample,
        load_sqf,
    )
    from luskin_core.counting.prepared import prepare
    from luskin_core.counting.sources import Source, open_source
    from luskin_core.errors import LuskinError
    from luskin_core.present.report import build_html_report, build_pdf_report
    from luskin_core.spec.audit_spec import AuditSpec, CellSpec, GroupSpec, Judgement, OutcomeSpec
    from luskin_core.spec.conditions import OPERATORS, Condition, parse_condition
    from luskin_core.stats.power import minimum_detectable_difference, sufficiency


def __getattr__(name: str) -> Any:
    """Import the module behind a public name on first use and keep the name (PEP 562)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
