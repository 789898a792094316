"""A scan option reaches the scan with no line of its own in scan_spec() or ScanSpec.to_dict() (issue 45): each
option is the ScanSpec field of its name, passed through and written into the scan's JSON; an option the spec has
no field for is refused at once rather than dropped."""

from __future__ import annotations

from dataclasses import fields, make_dataclass
from typing import Any

import pytest

import luskin_core.analyses.scan as scan_module
from luskin_core.analyses.scan import ScanSpec, scan_spec
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.spec.options import ScanOptions

AUDIT = AuditSpec("income", ">50K", group_by=("sex",), unknown_values=("Other",), bins=(("age", (30.0, 50.0)),))


def _shrunk_options() -> type:
    """The scan's options with a throwaway setting (declared in these tests only)."""
    return make_dataclass("ShrunkScanOptions", [("shrink", int, 0)], bases=(ScanOptions,), frozen=True)


def test_every_scan_option_reaches_the_spec():
    """Each option set away from its default is the spec's value (the columns and the measure as scan_spec reads
    them)."""
    chosen = {"depth": 2, "min_size": 50, "level": 0.1, "error": "fdr", "replicates": 199, "seed": 7,
              "calibration": "bound", "probability": "p"}
    assert set(chosen) | {"columns", "measure"} == {f.name for f in fields(ScanOptions)}
    for name, value in chosen.items():
        assert value != getattr(ScanOptions(), name), name
    spec = scan_spec(AUDIT, ScanOptions(columns=("sex", "race"), **chosen))
    assert {name: getattr(spec, name) for name in chosen} == chosen
    assert (spec.columns, spec.measure, spec.unknown_values, spec.bins) == \
        (("sex", "race"), "calibration", ("Other",), (("age", (30.0, 50.0)),))


def test_a_scan_option_added_later_reaches_the_spec_and_its_json(monkeypatch: pytest.MonkeyPatch):
    """A throwaway option with its ScanSpec field and nothing else: scan_spec() hands it over and the scan's JSON
    writes it (after the spec's own fields, which keep their order)."""
    shrunk_spec: Any = make_dataclass("ShrunkScanSpec", [("shrink", int, 0)], bases=(ScanSpec,), frozen=True)
    monkeypatch.setattr(scan_module, "ScanSpec", shrunk_spec)
    spec: Any = scan_spec(AUDIT, _shrunk_options()(columns=("sex", "race"), shrink=4))
    assert isinstance(spec, shrunk_spec) and spec.shrink == 4
    written = spec.to_dict()
    assert written["shrink"] == 4 and list(written)[-1] == "shrink"
    assert list(written)[:3] == ["outcome", "positive", "columns"] and written["unknown_values"] == ["Other"]


def test_a_scan_option_the_spec_has_no_field_for_is_refused():
    with pytest.raises(TypeError, match="shrink have no field of ScanSpec"):
        scan_spec(AUDIT, _shrunk_options()(columns=("sex", "race"), shrink=4))


def test_the_specs_json_is_every_field_in_order():
    """Tuples as lists, the cuts as {column: cuts}, the values read as unknown only when there are some."""
    spec = scan_spec(AUDIT, ScanOptions(columns=("sex", "race")))
    written = spec.to_dict()
    assert list(written) == [f.name for f in fields(ScanSpec)]
    assert (written["columns"], written["bins"], written["unknown_values"]) == \
        (["sex", "race"], {"age": [30.0, 50.0]}, ["Other"])
    plain = scan_spec(AuditSpec("income", ">50K", group_by=("sex",)), ScanOptions()).to_dict()
    assert "unknown_values" not in plain and plain["bins"] == {} and plain["columns"] == ["sex"]
