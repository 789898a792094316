"""Adjusted gaps in PostgreSQL and Spark: the engine's cells, and its fit from per-key sums, give the in-memory numbers.

Real servers (tests/engine_servers.py); run this file alone. Floats to 1e-9.
"""

from __future__ import annotations

import numpy as np
import pytest
from engine_servers import load_postgres

from luskin_core.analyses.adjust import AdjustResult, adjust
from luskin_core.counting.data import load_sample
from luskin_core.counting.sources import open_source
from luskin_core.spec.audit_spec import AuditSpec

ROWS = 6_000  # Spark local[1] on two shared cores runs a query in seconds: a slice of Adult keeps it short

CASES = [
    # categorical and few-valued numeric controls: the engine's cell table
    (AuditSpec(outcome="income", positive=">50K", group_by=("race",)), ["education-num", "occupation", "sex"], None,
     None),
    # a numeric control with thousands of values: the fit from per-key sums (one query per Newton step)
    (AuditSpec(outcome="income", positive=">50K", group_by=("sex",)), ["age", "fnlwgt", "relationship"],
     "workclass", 100),
    (AuditSpec(outcome="hours-per-week", outcome_type="score", protected="sex == Female"), ["age", "fnlwgt", "race"],
     "workclass", 100),
    # a numeric control that stands in for the group: the engine counts its bins for the proxy warning
    # (hours-per-week beside it: education-num's codes, categories since issue 46, predict perfectly in this slice)
    (AuditSpec(outcome="income", positive=">50K", group_by=("sex",)), ["grade", "hours-per-week"], None, 100),
]


@pytest.fixture(scope="module")
def rows():
    adult = load_sample("adult").iloc[:ROWS].reset_index(drop=True)
    male = (adult["sex"] == "Male").to_numpy()
    # a pay grade that tracks sex, with thousands of values
    return adult.assign(grade=adult["age"].to_numpy() * 0.3 + (adult["fnlwgt"].to_numpy() % 997) / 100.0
                        + np.where(male, 15.0, 0.0))


def assert_same(engine: AdjustResult, in_memory: AdjustResult, sums: bool) -> None:
    assert ("fitted from sums the engine computed" in engine.rows_note) == sums
    if sums:  # no level predicts perfectly, so the estimates are finite and the fits can agree
        assert in_memory.converged and not any("Perfect prediction" in d for d in in_memory.diagnostics)
    assert engine.n_rows == in_memory.n_rows
    assert [c.name for c in engine.coefficients] == [c.name for c in in_memory.coefficients]
    for a, b in zip(in_memory.coefficients, engine.coefficients):
        # relative too: a level that predicts perfectly has an estimate and SE in the thousands
        assert b.estimate == pytest.approx(a.estimate, abs=1e-9, rel=1e-9)
        assert b.se == pytest.approx(a.se, abs=1e-9, rel=1e-9)
    assert [g.group for g in engine.gaps] == [g.group for g in in_memory.gaps]
    for a, b in zip(in_memory.gaps, engine.gaps):
        assert (a.reference, a.verdict, a.flagged) == (b.reference, b.verdict, b.flagged)
        for key in ("raw_difference", "adjusted_difference", "adjusted_ci_low", "adjusted_ci_high", "adjusted_p_value",
                    "explained", "unexplained", "unexplained_ci_low"):
            assert getattr(b, key) == pytest.approx(getattr(a, key), abs=1e-9)
    assert engine.diagnostics == in_memory.diagnostics
    if "grade" in [c.name for c in in_memory.coefficients]:
        assert any(d.startswith("'grade' alone tells the group of") for d in engine.diagnostics)


@pytest.fixture(scope="module")
def postgres_adult(postgres_url, rows):
    load_postgres(postgres_url, "adult_adjust", rows)
    return open_source(postgres_url, "adult_adjust")


@pytest.mark.parametrize(("spec", "controls", "cluster", "max_cells"), CASES)
def test_postgres_adjusted_gaps_equal_in_memory(postgres_adult, rows, spec, controls, cluster, max_cells):
    in_memory = adjust(rows, spec, controls, cluster=cluster)
    engine = adjust(postgres_adult, spec, controls, cluster=cluster, max_cells=max_cells)
    assert_same(engine, in_memory, sums=max_cells is not None)


@pytest.mark.parametrize(("spec", "controls", "cluster", "max_cells"), CASES)
def test_spark_adjusted_gaps_equal_in_memory(spark_session, rows, tmp_path, spec, controls, cluster,
                                             max_cells):
    path = tmp_path / "adult.parquet"
    rows.to_parquet(path)
    spark_session.read.parquet(str(path)).createOrReplaceTempView("adult_adjust")  # type: ignore[attr-defined]
    in_memory = adjust(rows, spec, controls, cluster=cluster)
    engine = adjust(open_source("spark:", "adult_adjust"), spec, controls, cluster=cluster, max_cells=max_cells)
    assert_same(engine, in_memory, sums=max_cells is not None)


CURVE = (AuditSpec(outcome="income", positive=">50K", group_by=("sex",)), ["fnlwgt", "relationship"], {"age": 4})
BINS = {"hours-per-week": 3}  # a bin's coefficient is named by its words: the server's CASE finds it the same way


def test_postgres_curves_equal_in_memory(postgres_adult, rows):
    """A control fitted as a curve and one cut into bins: the knots and cuts from PostgreSQL's quantiles, the
    spline's terms computed by the server in each Newton pass, the in-memory numbers."""
    spec, controls, splines = CURVE
    in_memory = adjust(rows, spec, controls, splines=splines, bins=BINS)
    engine = adjust(postgres_adult, spec, controls, splines=splines, bins=BINS, max_cells=100)
    assert "age (curve 2)" in [c.name for c in engine.coefficients]
    assert_same(engine, in_memory, sums=True)


def test_spark_curves_equal_in_memory(spark_session, rows, tmp_path):
    spec, controls, splines = CURVE
    path = tmp_path / "adult.parquet"
    rows.to_parquet(path)
    spark_session.read.parquet(str(path)).createOrReplaceTempView("adult_curve")  # type: ignore[attr-defined]
    in_memory = adjust(rows, spec, controls, splines=splines, bins=BINS)
    engine = adjust(open_source("spark:", "adult_curve"), spec, controls, splines=splines, bins=BINS, max_cells=100)
    assert_same(engine, in_memory, sums=True)


AMOUNT = AuditSpec(outcome="hours-per-week", outcome_type="amount", protected="sex == Female")


@pytest.mark.parametrize("max_cells", [None, 100])
def test_postgres_amount_on_its_log_equals_in_memory(postgres_adult, rows, max_cells):
    """Issue 50: an amount's model on its logarithm, the server taking each hour's ln (cells and per-key sums),
    its gap read back as a share of the reference's: the in-memory numbers."""
    in_memory = adjust(rows, AMOUNT, ["age", "occupation"], log=True)
    engine = adjust(postgres_adult, AMOUNT, ["age", "occupation"], log=True, max_cells=max_cells)
    assert_same(engine, in_memory, sums=max_cells is not None)
    assert engine.scale == "log"
    assert engine.gaps[0].adjusted_gap_share == pytest.approx(in_memory.gaps[0].adjusted_gap_share, abs=1e-9)
