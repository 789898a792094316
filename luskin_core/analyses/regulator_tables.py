"""The regulator tables, one entry each: the one list the command line, the report and the page read.

A new regulator table is its own module (a ``build(data, spec, choices)`` returning an output with
``document``, ``csv_frame``, ``text``, ``metrics``, ``notes``, ``tables`` and ``sentences``: see
:class:`luskin_core.analyses.regulator_ll144.LL144Output`) and one line here. ``luskin audit --template NAME``
and ``luskin report --template NAME`` offer it, the report gets its section and the Regulator page its
tab, with no other file touched. This module imports nothing heavy: the command line builds its parser
from it on every start.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import Any

from luskin_core.spec.options import RegulatorChoices  # declared with the other options (light to import)


@dataclass(frozen=True)
class RegulatorTable:
    """One regulator table: its template name, its title (the page's tab, the report's section) and builder."""

    name: str
    title: str
    help: str
    builder: str  # "module:function", imported when the table is built
    needs_both: bool = False  # sex and race/ethnicity columns both needed (else one, or --groups, is enough)
    summary: str | None = None  # "module:function" reading a published table (path, choices), if the table has one

    def build(self, data: Any, spec: Any, choices: RegulatorChoices) -> Any:
        """The table's output for this data and specification."""
        return _load(self.builder)(data, spec, choices)

    def from_summary(self, path: Any, choices: RegulatorChoices) -> Any:
        """The table's output from a published summary (a file or a binary buffer)."""
        if self.summary is None:
            raise ValueError(f"{self.name} reads no published table")
        return _load(self.summary)(path, choices)


def _load(dotted: str) -> Any:
    module, function = dotted.split(":")
    return getattr(import_module(module), function)


REGULATOR_TABLES: dict[str, RegulatorTable] = {t.name: t for t in (
    RegulatorTable("ll144", "Local Law 144", "the NYC Local Law 144 bias-audit tables (sex, race/ethnicity and "
                   "intersectional selection or scoring rates and impact ratios, bounded over the unknowns)",
                   "luskin_core.analyses.regulator_ll144:build_ll144",
                   summary="luskin_core.analyses.regulator_ll144:ll144_summary_output"),
    RegulatorTable("eeoc", "EEOC Uniform Guidelines", "the EEOC Uniform Guidelines table (four-fifths, two standard "
                   "deviations, Fisher, shortfall, flip test)", "luskin_core.analyses.regulator_eeoc:build_eeoc"),
    RegulatorTable("eu-pay", "EU pay transparency", "the EU Pay Transparency Directive's Article 9 table (mean and "
                   "median pay gaps, a bonus's gaps and who receives it, quartile pay bands, categories at 5 percent or "
                   "more; the pay is the amount audited, the categories of workers its strata)",
                   "luskin_core.analyses.regulator_eu_pay:build_eu_pay"),
)}


__all__ = ["REGULATOR_TABLES", "RegulatorChoices", "RegulatorTable"]
