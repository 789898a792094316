"""The counting rules read by numpy (small frames) give DuckDB's raw count table, rule by rule.

The in-memory path counts a frame of at most ``SMALL_ROWS`` rows with numpy
(luskin_core.counting.arrays) and a larger one with DuckDB, from the same expression trees. Both
executors run here on the same frames and specifications, including missing values, NaN, booleans,
nullable columns, numbers in text columns, yes/no words and a population; a rule numpy does not read
as DuckDB does must fall back to DuckDB, never count differently.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from test_engines import _compas, _with_nan, generated, specs_for

from luskin_core import AuditSpec, audit
from luskin_core.counting import memory
from luskin_core.counting.arrays import Unsupported, count_rows
from luskin_core.counting.count_table import finish_raw
from luskin_core.counting.data import PRESETS, load_sample
from luskin_core.counting.memory import frame_kind, plan_for_frame, run_frame_query
from luskin_core.counting.plan import COUNT_COLUMNS
from luskin_core.counting.rules import count_rules, metric_rules, rule_columns
from luskin_core.counting.sql_rules import count_sql
from luskin_core.spec.conditions import parse_condition


def both(frame: pd.DataFrame, spec: AuditSpec) -> tuple[pd.DataFrame | None, pd.DataFrame]:
    """The raw count table by numpy (None where it defers to DuckDB) and by DuckDB, rows in one order."""
    plan = plan_for_frame(frame, spec)
    rules = count_rules(plan, frame_kind(frame))
    columns = rule_columns(*rules.keys.values(), *(e for _, e in rules.checks), *rules.values.values())
    duck = finish_raw(run_frame_query(frame, columns, lambda column, view: count_sql(plan, rules, view, column)),
                      plan, rules).to_frame()
    try:
        mine: pd.DataFrame | None = finish_raw(count_rows(frame, rules.keys, rules.checks, rules.values,
                                                          metric_rules(plan)), plan, rules).to_frame()
    except Unsupported:
        mine = None

    def ordered(raw: pd.DataFrame) -> pd.DataFrame:
        keys = [c for c in raw.columns if c not in COUNT_COLUMNS]
        text = ["|".join(repr(None if pd.isna(v) else v) for v in row) for row in zip(*(raw[k].tolist() for k in keys))]
        return raw.iloc[np.argsort(np.array(text, dtype=object), kind="stable")].reset_index(drop=True)

    return (None if mine is None else ordered(mine)), ordered(duck)


def assert_equal_raw(mine: pd.DataFrame, duck: pd.DataFrame, what: str) -> None:
    assert list(mine.columns) == list(duck.columns), what
    for column in mine.columns:
        a, b = mine[column].tolist(), duck[column].tolist()
        if column.startswith("score"):
            assert np.allclose(a, b, rtol=1e-12, atol=1e-9), (what, column)
        else:
            assert [None if pd.isna(x) else x for x in a] == [None if pd.isna(x) else x for x in b], (what, column)
            assert [type(x) for x in a if not pd.isna(x)] == [type(x) for x in b if not pd.isna(x)], (what, column)


def odd_frame(n: int = 6000, seed: int = 4) -> pd.DataFrame:
    """Columns as uploads hold them: text with spaces and missing values, booleans (plain and nullable), numbers in
    an object column, nullable integers, NaN and infinity, a category, yes/no words."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "team": rng.choice(np.array([" a", "b ", "c", None, "d'e"], dtype=object), n),
        "flag": rng.choice(np.array([True, False]), n),
        "maybe": pd.array(rng.choice(np.array([True, False, None], dtype=object), n), dtype="boolean"),
        "code": rng.choice(np.array([1, "x", 2.5, None, True], dtype=object), n),
        "count": pd.array(rng.choice(np.array([1, 2, 3, None], dtype=object), n), dtype="Int64"),
        "x": np.where(rng.random(n) < 0.05, np.nan, np.where(rng.random(n) < 0.01, np.inf, rng.normal(0, 1, n))),
        "kind": pd.Categorical(rng.choice(["p", "q", "r"], n)),
        "said": pd.array(rng.choice(["Yes", " no", "TRUE", "0", None], n), dtype="string"),
        "y": rng.choice(np.array(["yes", "no", None], dtype=object), n, p=[.4, .55, .05]),
        "yn": rng.integers(0, 2, n),
    })
    return frame


def odd_specs() -> list[AuditSpec]:
    c = parse_condition
    return [
        AuditSpec("y", "yes", group_by=("team",)),
        AuditSpec("y", "yes", group_by=("flag", "kind"), strata=("team",)),
        AuditSpec("y", "yes", protected=c("team in [' a', 'c']"), filters=(c("x > 0"),)),
        AuditSpec("y", "yes", protected=c("flag == True"), filters=(c("count >= 2"), c("team != c"))),
        AuditSpec("y", "yes", group_by=("maybe",), strata=("count",)),
        AuditSpec("y", "yes", group_by=("code",)),
        AuditSpec("y", "yes", group_by=("team",), strata=("x",), population=(c("kind != r"),)),
        AuditSpec("yn", 1, group_by=("kind",), prediction="said"),
        AuditSpec("yn", 1, group_by=("kind",), prediction="flag"),
        AuditSpec("x", outcome_type="score", group_by=("team",), strata=("flag",)),
        AuditSpec("yn", 1, protected=c("x >= 0.5"), filters=(c("kind in [p, q]"),)),
    ]


CASES = ([("adult", s) for s in specs_for("adult")] + [("compas", s) for s in specs_for("compas")]
         + [("generated", s) for s in specs_for("generated")] + [("odd", s) for s in odd_specs()])


@pytest.fixture(scope="module")
def frames() -> dict[str, pd.DataFrame]:
    return {"adult": load_sample("adult"), "compas": _compas(), "generated": generated(50_000, seed=5),
            "odd": odd_frame(), "nan": _with_nan()[0]}


@pytest.mark.parametrize(("name", "spec"), CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_numpy_counts_what_duckdb_counts(frames, name, spec):
    mine, duck = both(frames[name], spec)
    if mine is None:  # deferred to DuckDB: only where the rules read a number as text or yes/no words
        assert name in ("odd", "compas"), repr(spec)
        return
    assert_equal_raw(mine, duck, repr(spec))


def test_numpy_reads_the_common_audits_itself(frames):
    """Presets and the usual specifications do not fall back (or small audits would lose the speed)."""
    read = 0
    for name, spec in CASES:
        read += both(frames[name], spec)[0] is not None
    assert read >= len(CASES) - 4
    for name in ("adult", "compas"):
        sample = load_sample(name)
        assert both(sample, PRESETS[name].spec)[0] is not None, name


def test_a_floating_nan_is_missing_to_both(frames):
    c = parse_condition
    for spec in (AuditSpec("y", 1, group_by=("g",)), AuditSpec("y", 1, group_by=("g",), strata=("age",)),
                 AuditSpec("y", 1, protected=c("g == 1"), filters=(c("age > 40"),))):
        mine, duck = both(frames["nan"], spec)
        assert mine is not None
        assert_equal_raw(mine, duck, repr(spec))


def test_the_audit_is_the_same_by_either_executor(frames, monkeypatch):
    """The whole audit (labels, verdicts, numbers) by numpy and, with the threshold at zero, by DuckDB."""
    runs = [(name, spec) for name, spec in CASES[::3]]
    small = [audit(frames[name], spec).to_dict() for name, spec in runs]
    monkeypatch.setattr(memory, "SMALL_ROWS", 0)  # the in-memory executor reads it
    large = [audit(frames[name], spec).to_dict() for name, spec in runs]
    assert small == large
