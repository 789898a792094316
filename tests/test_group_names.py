"""The specification passed in is the one in the result: names resolved from the data ride on the result.

A two-valued protected column names the rest by its other value ("Male", not "Non-Female"); that
name is resolved from the values the executor lists and carried on the plan, the count table and
the result, while the caller's specification object comes back unchanged and identical, in memory
and in DuckDB alike, for the audit and for the adjusted gaps.
"""

from __future__ import annotations

import copy
import inspect

import numpy as np
import pandas as pd
import pytest

from luskin_core.analyses.adjust import adjust
from luskin_core.analyses.audit import audit
from luskin_core.counting.sources import open_source
from luskin_core.spec import names
from luskin_core.spec.audit_spec import AuditSpec


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    n = 4000
    sex = rng.choice(["Female", "Male"], n)
    age = rng.integers(18, 70, n)
    hired = (rng.random(n) < np.where(sex == "Male", 0.5, 0.4)).astype(int)
    return pd.DataFrame({"sex": sex, "age": age, "hired": hired})


def _spec(**changes: object) -> AuditSpec:
    return AuditSpec("hired", 1, protected="sex == Female", **changes)  # type: ignore[arg-type]


def test_audit_keeps_the_callers_spec_and_names_the_rest_from_the_data(frame: pd.DataFrame) -> None:
    spec = _spec()
    before = copy.deepcopy(spec)
    result = audit(frame, spec)
    assert result.spec is spec and spec == before
    assert spec.other_name == "Non-Female"                     # the spec says what it was given
    assert result.class_names.other == "Male" and result.groups == ("Female", "Male")
    assert result.reference == "Male" and "Female vs Male" in result.groups_text
    assert result.to_dict()["spec"] == before.to_dict()


def test_the_reference_given_by_the_default_name_is_the_rest(frame: pd.DataFrame) -> None:
    spec = _spec(reference="Non-Female")
    result = audit(frame, spec)
    assert result.spec is spec and result.reference == "Male"


def test_predictions_and_a_typed_name_alike(frame: pd.DataFrame) -> None:
    spec = _spec()
    result = audit(frame, spec, predictions=frame["hired"].to_numpy())
    assert result.spec is spec and result.groups == ("Female", "Male")
    typed = _spec(other_label="Men")
    assert audit(frame, typed).groups == ("Female", "Men")


def test_duckdb_names_the_rest_as_memory_does(frame: pd.DataFrame, tmp_path: object) -> None:
    path = f"{tmp_path}/people.parquet"
    frame.to_parquet(path)
    spec = _spec()
    result = audit(open_source(path), spec)
    assert result.spec is spec and result.groups == ("Female", "Male")
    assert result.counts is not None and result.counts.n.sum() == len(frame)


def test_adjust_keeps_the_callers_spec(frame: pd.DataFrame) -> None:
    spec = _spec()
    before = copy.deepcopy(spec)
    result = adjust(frame, spec, ["age"])
    assert result.spec is spec and spec == before
    assert result.reference == "Male" and [g.group for g in result.gaps] == ["Female"]


def test_the_spec_layer_names_from_values_it_is_given() -> None:
    spec = _spec()
    assert names.other_group_name(spec, ["Female", "Male"]) == "Male"
    assert names.other_group_name(spec, ["Female", "Male", "Other"]) == "everyone else"
    assert names.other_group_name(spec, ["Female", "Male"], complete=False) == "everyone else"
    assert names.other_group_name(spec, ["Female"]) is None
    # It never asks an engine: no duck typing on the data, no swallowed errors.
    source = inspect.getsource(names)
    assert "value_counts" not in source and "hasattr" not in source and "except" not in source
