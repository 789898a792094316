"""One counting rule whichever path counts: rows outside ``--population`` are said alike in memory and in an engine."""

from __future__ import annotations

import json

import pytest

from luskin_cli.main import main
from luskin_core import AuditSpec, audit
from luskin_core.counting.data import load_sample
from luskin_core.counting.sources import open_source
from luskin_core.spec.conditions import parse_condition


@pytest.mark.parametrize("population", ["workclass != Private", "age >= 30"])
def test_population_left_out_is_the_same_in_memory_and_in_the_engine(population, tmp_path, capsys):
    adult = load_sample("adult")
    csv, parquet = tmp_path / "adult.csv", tmp_path / "adult.parquet"
    adult.to_csv(csv, index=False)
    adult.to_parquet(parquet)
    condition = parse_condition(population)
    outside = int((~condition.mask(adult)).sum())
    assert outside > 0
    args = ["--outcome", "income", "--positive", ">50K", "--groups", "race", "--population", population, "--json"]
    said = {}
    for path in (csv, parquet):  # a small CSV is counted in memory, a Parquet file by DuckDB
        assert main(["audit", "--data", str(path), *args]) == 0
        said[path.suffix] = json.loads(capsys.readouterr().out)
    assert said[".csv"]["n_excluded"] == said[".parquet"]["n_excluded"]
    assert said[".csv"]["n_rows"] == said[".parquet"]["n_rows"] == len(adult) - said[".csv"]["n_excluded"]
    assert said[".csv"]["n_excluded"] >= outside
    spec = AuditSpec("income", ">50K", group_by=("race",), population=(condition,))
    library, engine = audit(adult, spec), audit(open_source(str(parquet)), spec)
    assert library.n_excluded == engine.n_excluded == said[".csv"]["n_excluded"]
    assert library.excluded_reasons == engine.excluded_reasons


def test_population_left_out_reads_the_same_in_text(tmp_path, capsys):
    adult = load_sample("adult")
    csv, parquet = tmp_path / "adult.csv", tmp_path / "adult.parquet"
    adult.to_csv(csv, index=False)
    adult.to_parquet(parquet)
    args = ["--outcome", "income", "--positive", ">50K", "--groups", "race", "--population", "workclass != Private"]
    heads = []
    for path in (csv, parquet):
        assert main(["audit", "--data", str(path), *args]) == 0
        heads.append(capsys.readouterr().out.splitlines()[0].split("(", 1)[1])
    assert heads[0] == heads[1] and "outside the population" in heads[0]
