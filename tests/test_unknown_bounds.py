"""Bounds over the unknowns beyond the plain audit: a protected condition's missing values, and the series.

The counts of unknown rows per cell and per period are compared with pandas; the bounds with every
placement of those rows in the protected group or the rest (rows with the same outcome are alike, so
placing a of the positives and b of the others in the group covers every person-by-person placement).
"""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from luskin_cli.main import main
from luskin_core.analyses.audit import audit
from luskin_core.analyses.series import audit_series
from luskin_core.analyses.unknown_bounds import audit_bounds, series_bounds
from luskin_core.errors import LuskinError
from luskin_core.spec.audit_spec import AuditSpec


def _extremes(k: int, n: int, rk: int, rn: int, u: int, t: int, adverse: bool) -> tuple[list[Fraction], list[Fraction]]:
    """Every gap (group minus reference) and impact ratio (favourable shares) over every split of the unknown rows
    between the group and the reference."""
    gaps, ratios = [], []
    for a in range(t + 1):
        for b in range(u - t + 1):
            gn, gk, r_n, r_k = n + a + b, k + a, rn + (u - a - b), rk + (t - a)
            if not gn or not r_n:
                continue
            gaps.append(Fraction(gk, gn) - Fraction(r_k, r_n))
            fav, ref = (Fraction(gn - gk, gn), Fraction(r_n - r_k, r_n)) if adverse else (Fraction(gk, gn),
                                                                                      Fraction(r_k, r_n))
            if ref:
                ratios.append(fav / ref)
    return gaps, ratios


def _check(bound, counts, adverse):
    k, n, rk, rn, u, t = counts
    assert (bound.unknown_n, bound.unknown_positives) == (u, t)
    gaps, ratios = _extremes(k, n, rk, rn, u, t, adverse)
    assert bound.difference_low == pytest.approx(float(min(gaps)), abs=1e-12)
    assert bound.difference_high == pytest.approx(float(max(gaps)), abs=1e-12)
    # A ratio whose extreme placement leaves the reference no favourable row is undefined there (None), as in
    # the plain audit's test; otherwise it is the extreme of every placement.
    if ratios and bound.impact_ratio_low is not None:
        assert bound.impact_ratio_low == pytest.approx(float(min(ratios)), abs=1e-12)
    if ratios and bound.impact_ratio_high is not None:
        assert bound.impact_ratio_high == pytest.approx(float(max(ratios)), abs=1e-12)


def _counts(frame: pd.DataFrame, cell: pd.Series, group_value: str, positive: int = 1):
    """(k, n, rk, rn, u, t) of one cell by pandas: the protected group (g == value), the rest, the missing g."""
    part = frame[cell]
    group, rest, unknown = part[part["g"] == group_value], part[part["g"].notna() & (part["g"] != group_value)], \
        part[part["g"].isna()]
    return (int((group["y"] == positive).sum()), len(group), int((rest["y"] == positive).sum()), len(rest),
            len(unknown), int((unknown["y"] == positive).sum()))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c", None]), st.integers(0, 1), st.sampled_from(["x", "y"])),
                min_size=6, max_size=40), st.booleans(), st.booleans())
def test_protected_condition_bounds_count_the_missing_values_per_cell_and_are_the_extremes(rows, strata, adverse):
    frame = pd.DataFrame(rows, columns=["g", "y", "s"])
    spec = AuditSpec.from_dict({"outcome": "y", "positive": 1, "protected": "g == b", "min_group_size": 1,
                                "strata": ["s"] if strata else [], "outcome_is": "adverse" if adverse else "favourable"})
    try:
        result = audit(frame, spec)
    except LuskinError:
        assume(False)
    bounds = audit_bounds(frame, result)
    judged = [c for c in result.comparisons if not c.is_reference]
    assert len(bounds) == len(judged)
    for b in bounds:
        cell = frame["s"] == b.cell.split(" = ")[1] if b.cell else pd.Series(True, index=frame.index)
        k, n, rk, rn, u, t = _counts(frame, cell, "b")
        if b.group != "b":  # the reference is the protected group: the comparison is the rest against it
            k, n, rk, rn = rk, rn, k, n
        if n and rn:  # a cell where one side has no row has no gap to bound
            _check(b, (k, n, rk, rn, u, t), adverse)


def test_protected_condition_bounds_on_the_command_line_and_a_missing_filter_value(tmp_path, capsys) -> None:
    rng = np.random.default_rng(8)
    n = 900
    frame = pd.DataFrame({"g": rng.choice(["a", "b", None], n, p=[.5, .4, .1]), "y": rng.integers(0, 2, n),
                          "s": rng.choice(["x", "y", None], n, p=[.5, .45, .05])})
    path = tmp_path / "p.csv"
    frame.to_csv(path, index=False)
    status = main(["audit", "--data", str(path), "--outcome", "y", "--positive", "1", "--protected", "g=b",
                   "--filter", "s=x", "--bounds", "--json"])
    out, err = capsys.readouterr()
    assert status == 0, err
    bounds = json.loads(out)["bounds"]
    known_s = frame["s"].notna()  # a row with no protected value and no filter value has no cell: in no bound
    for b in bounds:
        holds = frame["s"] == "x" if b["cell"] == "s == x" else known_s & (frame["s"] != "x")
        missing = frame[holds & frame["g"].isna()]
        assert (b["unknown_n"], b["unknown_positives"]) == (len(missing), int(missing["y"].sum()))
    assert sum(b["unknown_n"] for b in bounds) == int((frame["g"].isna() & known_s).sum())
    status = main(["audit", "--data", str(path), "--outcome", "y", "--positive", "1", "--protected", "g=b",
                   "--bounds"])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert "Over the rows with no known value of 'g' (best and worst case):" in out
    assert f"if the {int(frame['g'].isna().sum()):,} rows with no known value of 'g' belonged to either" in out


@pytest.fixture(scope="module")
def dated() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    n = 1200
    days = pd.to_datetime("2021-01-01") + pd.to_timedelta(rng.integers(0, 365, n), unit="D")
    return pd.DataFrame({"g": rng.choice(["a", "b", "c", None], n, p=[.4, .3, .2, .1]), "y": rng.integers(0, 2, n),
                         "d": days.strftime("%Y-%m-%d")})


@pytest.mark.parametrize("adverse", [False, True])
def test_series_bounds_per_period_equal_every_placement_of_that_periods_missing_values(dated, adverse) -> None:
    spec = AuditSpec.from_dict({"outcome": "y", "positive": 1, "protected": "g == b",
                                "outcome_is": "adverse" if adverse else "favourable"})
    series = audit_series(dated, spec, "d", "quarter")
    missing = int(dated["g"].isna().sum())
    assert series.n_without_group == missing and series.to_dict()["rows_without_group"] == missing
    assert any(f"{missing:,} rows have no value of 'g'" in s for s in series.sentences())
    quarter = pd.PeriodIndex(pd.to_datetime(dated["d"]), freq="Q")
    per_period = series_bounds(dated, series)
    assert [p.period for p in per_period] == list(series.periods)
    for p in per_period:
        year, q = p.period.split(" Q")
        cell = (quarter.year == int(year)) & (quarter.quarter == int(q))
        (b,) = p.bounds
        k, n, rk, rn, u, t = _counts(dated, pd.Series(cell, index=dated.index), "b")
        if b.group != "b":
            k, n, rk, rn = rk, rn, k, n
        _check(b, (k, n, rk, rn, u, t), adverse)
    assert sum(p.bounds[0].unknown_n for p in per_period) == missing


def test_series_by_columns_keeps_unknown_as_a_group_and_bounds_each_period(dated, tmp_path, capsys) -> None:
    """By the values of a column the rows with no value are the group Unknown in every period (none dropped);
    --bounds places them per period, as the audit of that period alone would."""
    spec = AuditSpec.from_dict({"outcome": "y", "positive": 1, "group_by": ["g"], "reference": "a"})
    series = audit_series(dated, spec, "d", "quarter")
    assert series.n_without_group == 0
    quarter = pd.PeriodIndex(pd.to_datetime(dated["d"]), freq="Q").astype(str).str.replace("Q", " Q")
    for p in series_bounds(dated, series):
        part = dated[quarter == p.period]
        unknown = part[part["g"].isna()]
        for b in p.bounds:
            k, n = int(part.loc[part["g"] == b.group, "y"].sum()), int((part["g"] == b.group).sum())
            rk, rn = int(part.loc[part["g"] == "a", "y"].sum()), int((part["g"] == "a").sum())
            _check(b, (k, n, rk, rn, len(unknown), int(unknown["y"].sum())), False)
    path = tmp_path / "dated.csv"
    dated.to_csv(path, index=False)
    status = main(["audit", "--data", str(path), "--outcome", "y", "--positive", "1", "--protected", "g=b",
                   "--period", "d", "--every", "quarter", "--bounds", "--json"])
    out, err = capsys.readouterr()
    assert status == 0, err
    document = json.loads(out)
    assert document["rows_without_group"] == int(dated["g"].isna().sum())
    assert {b["period"] for b in document["bounds"]} == set(document["periods"])
    status = main(["audit", "--data", str(path), "--outcome", "y", "--positive", "1", "--protected", "g=b",
                   "--period", "d", "--every", "quarter", "--bounds"])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert "Over the rows with no known value of 'g', per quarter (best and worst case):" in out
    assert "in neither group: left out of the whole audit and of every period" in out


def test_protected_condition_bounds_counted_by_duckdb_equal_in_memory(dated, tmp_path, capsys) -> None:
    """A Parquet file is counted by DuckDB: the missing protected values per stratum and per period, and so the
    bounds, equal the in-memory count of the same rows."""
    frame = dated.assign(s=np.where(np.arange(len(dated)) % 3 == 0, "x", "y"), d=pd.to_datetime(dated["d"]))
    csv, parquet = tmp_path / "rows.csv", tmp_path / "rows.parquet"
    frame.to_csv(csv, index=False)
    frame.to_parquet(parquet)
    documents = {}
    for path in (csv, parquet):
        for extra in (("--stratify", "s"), ("--period", "d", "--every", "quarter")):
            status = main(["audit", "--data", str(path), "--outcome", "y", "--positive", "1", "--protected", "g=b",
                           *extra, "--bounds", "--json"])
            out, err = capsys.readouterr()
            assert status == 0, err
            documents[(path.suffix, extra[0])] = json.loads(out)["bounds"]
    for option in ("--stratify", "--period"):
        memory, engine = documents[(".csv", option)], documents[(".parquet", option)]
        assert [(b["cell"], b.get("period"), b["unknown_n"], b["unknown_positives"]) for b in memory] == \
            [(b["cell"], b.get("period"), b["unknown_n"], b["unknown_positives"]) for b in engine]
        for a, b in zip(memory, engine):
            for key in ("difference_low", "difference_high", "impact_ratio_low", "impact_ratio_high"):
                assert a[key] == pytest.approx(b[key], abs=1e-12)
        assert sum(b["unknown_n"] for b in memory) == int(frame["g"].isna().sum())
