"""The session's audit, wherever it is counted: in memory for a sample or an upload, inside the engine for
a source the administrator set up (:mod:`luskin_app.source_view`); cached on the data's fingerprint and
the specification's JSON, every caller getting its own copy (:func:`luskin_app.cache.shared`)."""

from __future__ import annotations

import pandas as pd

from luskin_core.analyses.audit import AuditResult, audit
from luskin_core.spec.audit_spec import AuditSpec

from . import dataset as _dataset
from . import source_view, trail
from .cache import shared


@shared(show_spinner=False, max_entries=256)
def _audit_cached(fingerprint: str, spec_json: str, _frame: pd.DataFrame) -> AuditResult:
    return audit(_frame, AuditSpec.from_json(spec_json))


def run_audit(spec: AuditSpec) -> AuditResult:
    """The audit of the current dataset under ``spec`` (cached on fingerprint + spec JSON)."""
    data = _dataset.dataset()
    if data.engine is not None:  # a configured source: counted inside its engine
        result = source_view.run_audit(data, spec)
    else:
        result = _audit_cached(data.fingerprint, spec.to_json(), data.frame)
    trail.note("audit", settings=trail.spec_settings(spec), produced=trail.result_text(result))   # once per session
    return result
