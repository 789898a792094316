"""An amount counted per group and cell (luskin_core.counting.order) against pandas on the same rows.

The count table's sizes and sums, and the order statistics (medians, the median's interval) read by DuckDB's
``quantile_disc`` at ``(r - 1/2) / n``, are checked against each group's own sorted values in pandas: with ties,
missing amounts and groups, a population, a filter's cells, strata cut into ranges, a protected condition. Every
engine gives the same numbers: tests/test_engines.py.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from luskin_core import AuditSpec, LuskinError
from luskin_core.counting.executor import counted_amounts, counted_table
from luskin_core.counting.memory import plan_for_frame, row_group_labels, row_reasons
from luskin_core.counting.order import OrderRequest, frame_order
from luskin_core.spec.conditions import conjunction_mask, parse_condition
from luskin_core.stats.amounts import needed_ranks


def pay_frame(n: int, seed: int = 11) -> pd.DataFrame:
    """Pay of 4 groups (some missing) in 5 grades, on a pay scale (ties) with a tail, some amounts missing,
    zeros and negatives (a correction), and a region that a population keeps half of."""
    rng = np.random.default_rng(seed)
    group = rng.choice(np.array(["A", "B", "C", "D"], dtype=object), n, p=[.45, .35, .15, .05])
    group[rng.random(n) < 0.02] = None
    grade = rng.integers(1, 6, n)
    pay = np.round(rng.lognormal(7.5 + 0.1 * grade, 0.5, n), 2)
    scale = rng.random(n) < 0.4
    pay[scale] = 1500.0 + 250.0 * grade[scale]                      # a pay scale: many equal amounts
    pay[rng.random(n) < 0.01] = 0.0
    pay[rng.random(n) < 0.003] = -120.0
    pay[rng.random(n) < 0.01] = np.nan
    return pd.DataFrame({"group": pd.array(group, dtype="string"), "grade": grade, "pay": pay,
                         "region": np.where(rng.random(n) < 0.5, "north", "south"),
                         "tenure": rng.exponential(6, n).round(1)})


def expected_order(frame: pd.DataFrame, spec: AuditSpec) -> dict[tuple[str, str], np.ndarray]:
    """Each (group, cell)'s sorted amounts, by pandas, over the rows the audit's rules keep."""
    table, plan = counted_table(frame, spec)   # the classes named as the data names them ("everyone else")
    kept = row_reasons(frame, plan) == 0
    groups = row_group_labels(frame, plan)[kept]
    values = frame[plan.outcome].to_numpy(dtype=float)[kept]
    if spec.filters:
        holds = np.asarray(conjunction_mask(spec.filters, frame))
        cells = np.where(holds[kept], table.cell_labels[0], table.cell_labels[1])
    else:
        cells = np.full(int(kept.sum()), table.cell_labels[0], dtype=object)
    out = {}
    for g in table.groups:
        for c in table.cell_labels:
            out[(g, c)] = np.sort(values[(groups == g) & (cells == c)])
    return out


def check(frame: pd.DataFrame, spec: AuditSpec, expected: dict[tuple[str, str], np.ndarray]) -> None:
    amounts = counted_amounts(frame, spec, needed_ranks)
    for gi, g in enumerate(amounts.groups):
        for ci, c in enumerate(amounts.counts.cell_labels):
            x = expected[(g, c)]
            assert amounts.n[gi, ci] == len(x), (g, c)
            if len(x) == 0:
                assert amounts.order[gi][ci] == {}
                continue
            assert amounts.mean[gi, ci] == pytest.approx(x.mean(), rel=1e-12)
            if len(x) > 1:
                assert amounts.var[gi, ci] == pytest.approx(np.var(x, ddof=1), rel=1e-9, abs=1e-9)
            assert (amounts.minimum[gi, ci], amounts.maximum[gi, ci]) == (x[0], x[-1])
            ranks = needed_ranks(len(x))
            assert amounts.order[gi][ci] == {r: x[r - 1] for r in ranks}
            assert amounts.counts.positives[gi, ci] == int((x > 0).sum())   # those receiving it


def test_groups_filter_and_population_match_pandas():
    frame = pay_frame(20_000)
    c = parse_condition
    for spec in (AuditSpec("pay", outcome_type="amount", group_by=("group",)),
                 AuditSpec("pay", outcome_type="amount", group_by=("group",), filters=(c("grade >= 3"),)),
                 AuditSpec("pay", outcome_type="amount", group_by=("group",), population=(c("region == north"),)),
                 AuditSpec("pay", outcome_type="amount", protected=c("group == B"))):
        check(frame, spec, expected_order(frame, spec))


def test_strata_cut_into_ranges_match_pandas():
    frame = pay_frame(30_000, seed=4)
    spec = AuditSpec("pay", outcome_type="amount", group_by=("group",), strata=("grade", "tenure"), n_bins=3)
    amounts = counted_amounts(frame, spec, needed_ranks)
    plan = plan_for_frame(frame, spec)
    kept = row_reasons(frame, plan) == 0
    groups = row_group_labels(frame, plan)[kept]
    rows = frame.loc[kept]
    cuts = dict(amounts.counts.binned)["tenure"]
    band = np.searchsorted(np.asarray(cuts), rows["tenure"].to_numpy(), side="right")
    for gi, g in enumerate(amounts.groups):
        for ci, label in enumerate(amounts.counts.cell_labels):
            grade = int(label.split(" × ")[0].split(" = ")[1])
            index = next(i for i in range(len(cuts) + 1)
                     if label.endswith(_band_label(cuts, i)))
            x = np.sort(rows["pay"].to_numpy()[(groups == g) & (rows["grade"].to_numpy() == grade) & (band == index)])
            x = x[~np.isnan(x)]
            assert amounts.n[gi, ci] == len(x)
            if len(x):
                assert amounts.order[gi][ci] == {r: x[r - 1] for r in needed_ranks(len(x))}


def _band_label(cuts: tuple[float, ...], i: int) -> str:
    from luskin_core.counting.plan import plain_number

    if i == 0:
        return f"tenure < {plain_number(cuts[0])}"
    if i == len(cuts):
        return f"tenure ≥ {plain_number(cuts[-1])}"
    return f"{plain_number(cuts[i - 1])} ≤ tenure < {plain_number(cuts[i])}"


@pytest.mark.parametrize("seed", range(3))
def test_duckdb_reads_every_rank_exactly(seed):
    """DuckDB's quantile_disc at (r - 1/2) / n is the value of rank r, for sizes from 1 to a million."""
    rng = np.random.default_rng(seed)
    sizes = [1, 2, 3, 7, 64, 999, 1000, 1001, int(rng.integers(2, 5000)), 1_000_000]
    parts = []
    for i, n in enumerate(sizes):
        parts.append(pd.DataFrame({"g": f"g{i:02d}", "x": rng.permutation(rng.normal(0, 1, n))}))
    frame = pd.concat(parts, ignore_index=True)
    spec = AuditSpec("x", outcome_type="amount", group_by=("g",))
    table, plan = counted_table(frame, spec)

    def wanted(n: int) -> list[int]:
        return sorted({1, n, (n + 1) // 2, n // 2 + 1, *rng.integers(1, n + 1, 5).tolist()})

    request = OrderRequest.of([int(n) for n in table.n[:, 0]], wanted)
    raw = frame_order(frame, plan, request)
    for row, g in enumerate(raw.columns["g0"]):
        x = np.sort(frame.loc[frame["g"] == g, "x"].to_numpy())
        assert raw.order[row] == {r: x[r - 1] for r in request.ranks[len(x)]}


def test_an_amount_of_text_is_refused_in_words():
    frame = pd.DataFrame({"group": ["A", "B"] * 20, "salary": ["$1,234.50", "$2,000.00"] * 20})
    with pytest.raises(LuskinError, match=r"holds text that spells amounts \(e\.g\. '\$1,234\.50'\)"):
        counted_amounts(frame, AuditSpec("salary", outcome_type="amount", group_by=("group",)), needed_ranks)
    with pytest.raises(LuskinError, match="An amount has no positive value"):
        AuditSpec("salary", 1, outcome_type="amount", group_by=("group",))
