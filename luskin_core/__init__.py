"""Luskin: audit a classifier or a record of decisions for bias, and correct it.

The public API is re-exported here; the modules behind it are private in spirit.
"""

from .audit import AuditResult, Cell, Gap, audit, audit_arrays
from .conditions import OPERATORS, Condition, parse_condition
from .data import PRESETS, Preset, download_sqf, get_preset, load_csv, load_data, load_sample, load_sqf
from .equalize import AlphaSweep, EqualizedDistributionClassifier, alpha_sweep, equalize_frame
from .errors import LuskinError
from .relabel import RelabelResult, relabel, risk_based_flipping, selective_risk_adjustment
from .retrain import RetrainOptions, RetrainResult, load_model, model_bytes, paper_table, retrain, save_model
from .spec import AuditSpec, prepare
from .thresholds import GroupThresholdOptimizer, ThresholdReport, tune_thresholds

__version__ = "0.1.0"

__all__ = [
    "OPERATORS", "PRESETS", "AlphaSweep", "AuditResult", "AuditSpec", "Cell", "Condition",
    "EqualizedDistributionClassifier", "Gap", "GroupThresholdOptimizer", "LuskinError", "Preset",
    "RelabelResult", "RetrainOptions", "RetrainResult", "ThresholdReport", "__version__",
    "alpha_sweep", "audit", "audit_arrays", "download_sqf", "equalize_frame", "get_preset",
    "load_csv", "load_data", "load_model", "load_sample", "load_sqf", "model_bytes", "paper_table",
    "parse_condition", "prepare", "relabel", "retrain", "risk_based_flipping", "save_model",
    "selective_risk_adjustment", "tune_thresholds",
]
