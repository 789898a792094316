"""The model tools' sample of a large source: a function of the rows and the seed alone.

The same seed draws the same rows on DuckDB (a Parquet file and an in-memory frame), PostgreSQL
and Spark, run after run, and each group x outcome stratum holds exactly its proportional share.
Real engines (tests/engine_servers.py).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest
from engine_servers import load_postgres
from test_engines import generated

from luskin_core import AuditSpec
from luskin_core.counting.sources import Source, open_source
from luskin_core.spec.conditions import parse_condition

N = 30_000
CAP = 3_001
SPECS = [
    AuditSpec("outcome", "yes", group_by=("group-name", "sex")),
    AuditSpec("outcome", "yes", protected=parse_condition("group-name == A")),
]


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    data = generated(N, seed=11)
    data.loc[data.index % 97 == 0, "income level"] = np.nan  # missing floats take part too
    return data


def rows(sample: pd.DataFrame) -> list[tuple[Any, ...]]:
    """The sample's rows as plain values (engines spell dtypes differently), in the order drawn."""
    out = []
    for row in sample.itertuples(index=False):
        out.append(tuple(None if (not isinstance(v, str) and pd.isna(v)) else
                         (float(v) if isinstance(v, (int, float, np.integer, np.floating)) else str(v)) for v in row))
    return out


def expected_shares(frame: pd.DataFrame, spec: AuditSpec) -> dict[tuple[Any, Any], int]:
    """Largest-remainder shares of CAP over group x outcome strata, computed here from the frame itself."""
    if spec.protected is not None:
        group = (frame["group-name"] == "A").fillna(False).astype(bool).astype(str)
    else:
        group = frame["group-name"].astype(object).fillna("<NA>").astype(str) + "/" + frame["sex"].astype(str)
    keys = list(zip(group, frame["outcome"].astype(object).fillna("<NA>").astype(str)))
    sizes = pd.Series(keys).value_counts()
    exact = sizes * CAP / len(frame)
    base = exact.apply(math.floor)
    left = CAP - int(base.sum())
    extra = (exact - base).sort_values(ascending=False, kind="stable").index[:left]
    base[extra] += 1
    return {k: max(int(v), 1) for k, v in base.items()}


def strata_of(sample: pd.DataFrame, spec: AuditSpec) -> dict[tuple[Any, Any], int]:
    if spec.protected is not None:
        group = (sample["group-name"] == "A").fillna(False).astype(bool).astype(str)
    else:
        group = sample["group-name"].astype(object).fillna("<NA>").astype(str) + "/" + sample["sex"].astype(str)
    keys = list(zip(group, sample["outcome"].astype(object).fillna("<NA>").astype(str)))
    return {k: int(v) for k, v in pd.Series(keys).value_counts().items()}


@pytest.fixture(scope="module")
def duckdb_samples(frame, tmp_path_factory) -> dict[tuple[int, int], list[tuple[Any, ...]]]:
    path = tmp_path_factory.mktemp("sample") / "gen.parquet"
    frame.to_parquet(path)
    out = {}
    for i, spec in enumerate(SPECS):
        for seed in (0, 1):
            sample, info = open_source(str(path)).sample(spec, cap=CAP, seed=seed)
            assert info.sampled and info.n_table == N and info.n_sample == len(sample) and info.seed == seed
            assert strata_of(sample, spec) == expected_shares(frame, spec)  # exactly proportional
            again, _ = Source.from_frame(frame).sample(spec, cap=CAP, seed=seed)
            assert rows(again) == rows(sample)
            out[i, seed] = rows(sample)
    assert out[0, 0] != out[0, 1]  # the seed matters
    return out


def test_duckdb_sample_is_exactly_stratified_and_the_same_in_memory(duckdb_samples):
    assert len(duckdb_samples) == 4


def test_postgres_draws_duckdbs_sample_every_time(postgres_url, frame, duckdb_samples):
    load_postgres(postgres_url, "sample_gen", frame)
    table = open_source(postgres_url, "sample_gen")
    query = open_source(postgres_url, "SELECT * FROM sample_gen")  # a SELECT source samples too
    for (i, seed), want in duckdb_samples.items():
        assert rows(table.sample(SPECS[i], cap=CAP, seed=seed)[0]) == want
        assert rows(table.sample(SPECS[i], cap=CAP, seed=seed)[0]) == want  # run after run
        assert rows(query.sample(SPECS[i], cap=CAP, seed=seed)[0]) == want


def test_spark_draws_duckdbs_sample(spark_session, frame, duckdb_samples, tmp_path):
    path = tmp_path / "gen.parquet"
    frame.to_parquet(path)
    spark_session.read.parquet(str(path)).createOrReplaceTempView("sample_gen")  # type: ignore[attr-defined]
    source = open_source("spark:", "sample_gen")
    for i, seed in ((0, 0), (1, 1)):
        assert rows(source.sample(SPECS[i], cap=CAP, seed=seed)[0]) == duckdb_samples[i, seed]


def test_duplicated_rows_are_drawn_like_any_others(tmp_path):
    """A table of only a few distinct rows (no id, no float): within each stratum the sample mirrors the table."""
    rng = np.random.default_rng(2)
    n = 100_000
    data = pd.DataFrame({"group": pd.array(rng.choice(list("ABC"), n), dtype="string"),
                         "code": rng.integers(0, 10, n),
                         "outcome": pd.array(rng.choice(["yes", "no"], n), dtype="string")})
    path = tmp_path / "dup.parquet"
    data.to_parquet(path)
    sample, info = open_source(str(path)).sample(AuditSpec("outcome", "yes", group_by=("group",)), cap=6_000, seed=0)
    assert info.n_sample == len(sample) == 6_000
    for key, part in sample.groupby(["group", "outcome"]):
        full = data[(data["group"] == key[0]) & (data["outcome"] == key[1])]["code"].value_counts(normalize=True)
        drawn = part["code"].value_counts(normalize=True).reindex(full.index, fill_value=0.0)
        assert (drawn - full).abs().max() < 0.05, key  # every code present in its share, not a few whole codes
