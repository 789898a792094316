"""Luskin: audit a classifier or a record of decisions for bias, and correct it.

The public API is re-exported here; the modules behind it are private in spirit. The names are
loaded on first use (PEP 562), so ``import luskin_core`` and the command line start in a few
milliseconds instead of importing pandas, scipy and scikit-learn for a ``--help``.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# Public name -> the module that defines it.
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("AuditResult", "Cell", "Gap", "audit", "audit_arrays"), "audit"),
    **dict.fromkeys(("OPERATORS", "Condition", "parse_condition"), "conditions"),
    **dict.fromkeys(("PRESETS", "Preset", "download_sqf", "get_preset", "load_csv", "load_data", "load_sample",
                     "load_sqf"), "data"),
    **dict.fromkeys(("AlphaSweep", "EqualizedDistributionClassifier", "alpha_sweep", "equalize_frame"), "equalize"),
    "LuskinError": "errors",
    **dict.fromkeys(("RelabelResult", "relabel", "risk_based_flipping", "selective_risk_adjustment"), "relabel"),
    **dict.fromkeys(("RetrainOptions", "RetrainResult", "load_model", "model_bytes", "paper_table", "retrain",
                     "save_model"), "retrain"),
    **dict.fromkeys(("AuditSpec", "CellSpec", "GroupSpec", "Judgement", "OutcomeSpec", "prepare"), "spec"),
    **dict.fromkeys(("GroupThresholdOptimizer", "ThresholdReport", "tune_thresholds"), "thresholds"),
    **dict.fromkeys(("Source", "open_source"), "sources"),
    **dict.fromkeys(("build_html_report", "build_pdf_report"), "report"),
    **dict.fromkeys(("LL144Result", "eeoc_rows", "ll144_audit", "ll144_from_counts"), "regulator"),
    **dict.fromkeys(("minimum_detectable_difference", "sufficiency"), "power"),
}

__all__ = [
    "OPERATORS", "PRESETS", "AlphaSweep", "AuditResult", "AuditSpec", "Cell", "CellSpec", "Condition",
    "EqualizedDistributionClassifier", "Gap", "GroupSpec", "GroupThresholdOptimizer", "Judgement", "LL144Result",
    "LuskinError", "OutcomeSpec", "Preset",
    "RelabelResult", "RetrainOptions", "RetrainResult", "Source", "ThresholdReport", "__version__",
    "alpha_sweep", "audit", "audit_arrays", "build_html_report", "build_pdf_report", "download_sqf", "eeoc_rows",
    "equalize_frame", "get_preset", "ll144_audit", "ll144_from_counts", "load_csv", "load_data", "load_model",
    "load_sample", "load_sqf", "minimum_detectable_difference", "model_bytes", "open_source", "paper_table",
    "parse_condition", "prepare", "relabel", "retrain", "risk_based_flipping", "save_model",
    "selective_risk_adjustment", "sufficiency", "tune_thresholds",
]

if TYPE_CHECKING:  # what a type checker and an IDE see: the same names, imported eagerly
    from .audit import AuditResult, Cell, Gap, audit, audit_arrays
    from .conditions import OPERATORS, Condition, parse_condition
    from .data import PRESETS, Preset, download_sqf, get_preset, load_csv, load_data, load_sample, load_sqf
    from .equalize import AlphaSweep, EqualizedDistributionClassifier, alpha_sweep, equalize_frame
    from .errors import LuskinError
    from .power import minimum_detectable_difference, sufficiency
    from .regulator import LL144Result, eeoc_rows, ll144_audit, ll144_from_counts
    from .relabel import RelabelResult, relabel, risk_based_flipping, selective_risk_adjustment
    from .report import build_html_report, build_pdf_report
    from .retrain import RetrainOptions, RetrainResult, load_model, model_bytes, paper_table, retrain, save_model
    from .sources import Source, open_source
    from .spec import AuditSpec, CellSpec, GroupSpec, Judgement, OutcomeSpec, prepare
    from .thresholds import GroupThresholdOptimizer, ThresholdReport, tune_thresholds


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


class _Package(types.ModuleType):
    """Keeps ``luskin_core.audit``, ``.relabel`` and ``.retrain`` the functions, as before.

    Importing a submodule binds it on its package under its own name; three public functions
    share their module's name, so without this, ``from luskin_core import audit`` would give the
    module or the function depending on what had been imported before.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if (isinstance(value, types.ModuleType) and _EXPORTS.get(name) == name
                and value.__name__ == f"{__name__}.{name}" and hasattr(value, name)):
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
