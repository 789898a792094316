"""Luskin: audit a classifier or a record of decisions for bias, and correct it.

The public API is re-exported here; the modules behind it are private in spirit.
"""

from .audit import AuditResult, Cell, Gap, audit, audit_arrays
from .conditions import OPERATORS, Condition, parse_condition
from .data import PRESETS, Preset, get_preset, load_csv, load_data, load_sample, load_sqf
from .errors import LuskinError
from .spec import AuditSpec, prepare

__version__ = "0.1.0"

__all__ = [
    "OPERATORS", "PRESETS", "AuditResult", "AuditSpec", "Cell", "Condition", "Gap", "LuskinError",
    "Preset", "__version__", "audit", "audit_arrays", "get_preset", "load_csv", "load_data",
    "load_sample", "load_sqf", "parse_condition", "prepare",
]
