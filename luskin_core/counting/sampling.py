"""The model tools' rows from a large source: a seeded sample, stratified by group x outcome, drawn inside the engine.

The same rows on every engine and every run (see :func:`draw_sample`): each row's rank is an MD5
of the seed and its values, spelled alike by DuckDB, PostgreSQL and Spark.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from luskin_core.counting.executor import exact_plan
from luskin_core.counting.ibis_rules import load_ibis, mask_expr, outcome_expr, part_expr, plain_value
from luskin_core.counting.plan import Plan
from luskin_core.errors import LuskinError

if TYPE_CHECKING:
    import pandas as pd

    from luskin_core.counting.ibis_source import Source
    from luskin_core.spec.audit_spec import AuditSpec
else:  # imported on first use: a file's audit on the command line never needs it
    from luskin_core._lazy import pandas as pd

DEFAULT_SAMPLE_CAP = 500_000


@dataclass(frozen=True)
class SampleInfo:
    """How a sample for the model tools was drawn: its size, the table's size, the seed."""

    n_sample: int
    n_table: int
    seed: int
    sampled: bool

    def to_dict(self) -> dict[str, Any]:
        return {"n_sample": self.n_sample, "n_table": self.n_table, "seed": self.seed, "sampled": self.sampled}

    def sentence(self) -> str:
        if not self.sampled:
            return f"All {self.n_table:,} rows of the source are used (no sample was needed)."
        return (f"A seeded sample of {self.n_sample:,} rows (of {self.n_table:,}), stratified by group and "
                f"outcome, is used (seed {self.seed}).")



def draw_sample(source: Source, spec: AuditSpec, cap: int = DEFAULT_SAMPLE_CAP,
                seed: int = 0) -> tuple[pd.DataFrame, SampleInfo]:
    """A seeded sample of ``cap`` rows, stratified by group x outcome, drawn inside the engine.

    The sample is a function of the rows and the seed alone, the same on every engine and every
    run: each row gets the MD5 of the seed and its values (text as is, integers in decimal,
    booleans as T/F, floats floored to millionths; see :func:`_row_hash`) and of its copy number
    among rows identical to it (so duplicated rows are drawn like any others), and each group x
    outcome stratum keeps its rows with the lowest hashes, as many as its proportional share of
    ``cap`` (largest remainders, so the shares add up to ``cap``; a stratum whose share rounds
    to nothing keeps one row, so the sample may pass ``cap`` by the number of such strata).
    Rows missing their group or outcome form strata of their own. A table with at most ``cap``
    rows is returned whole. The rows come ordered by their hash.
    """
    if cap < 1:
        raise LuskinError("The sample size must be at least 1 row.")
    if not source.engine.can_sample:   # no MD5 spelled alike, or no window functions (engines.Engine)
        raise LuskinError(f"A {source.engine.title} source cannot draw the model tools' seeded sample: audit it "
                          "(the counts are made in the engine), or export the rows to a Parquet file for the models.")
    what = "the sample's query"
    total = source.n_rows()
    if total == 0:
        raise LuskinError(f"The source {source.name} has no rows.")
    if total <= cap:
        return source._run(source._raw, fetch=True, what=what), SampleInfo(total, total, seed, False)
    plan = exact_plan(source, spec)
    t = source._table
    keys = _stratum_keys(t, plan)
    sizes = source._run(t.group_by(**keys).aggregate(n=t.count()), fetch=True, what=what)
    labels = ["\x1f".join(_key_text(v) for v in row[:-1]) for row in sizes.itertuples(index=False)]
    quotas = _allocate(sizes["n"].astype(np.int64).to_numpy(), cap, labels)
    ibis = load_ibis()
    names = [f"_luskin_k{i}" for i in range(len(keys))]
    # Identical rows get the same hash of their values: the hash that ranks them adds the copy's number
    # among them (which copy is which cannot matter, they are alike), so duplicates spread like other rows.
    floats = [c for c in t.columns if t.schema()[c].is_floating()]
    based = t.mutate(_luskin_b=_row_hash(t, seed))
    copies = based.mutate(_luskin_c=ibis.row_number().over(
        group_by=based._luskin_b, order_by=[based[c] for c in floats] or [based._luskin_b]))
    hashed = copies.mutate(**dict(zip(names, keys.values())),
                           _luskin_h=_md5(copies._luskin_b + ":" + copies._luskin_c.cast("string")))
    matches = []
    for row in sizes.itertuples(index=False):
        same = ibis.literal(True)
        for name, value in zip(names, row[: len(names)]):
            col = hashed[name]
            same = same & (col.isnull() if value is None or pd.isna(value) else col == plain_value(value))
        matches.append(same)
    n_strata = sizes["n"].astype(np.int64).to_numpy()
    # The hashes are uniform: a stratum's lowest ``quota`` lie, almost surely, below a cut-off a little above
    # quota / size. Rows below it travel; the exact cut is made here (a stratum short of rows asks again).
    share = np.minimum(1.0, quotas / n_strata * 1.1 + 64 / n_strata)
    while True:
        cutoffs = [_hex_cutoff(p) for p in share]
        below = ibis.cases(*zip(matches, cutoffs), else_="") if matches else ibis.literal("")
        rows = source._run(hashed.filter(hashed._luskin_h.substr(0, _CUT_DIGITS) < below), fetch=True, what=what)
        labels_of = ["\x1f".join(_key_text(v) for v in r) for r in rows[names].itertuples(index=False)]
        found = pd.Series(labels_of).value_counts()
        have = np.array([int(found.get(label, 0)) for label in labels])
        short = (have < np.minimum(quotas, n_strata)) & (share < 1.0)
        if not short.any():
            break
        share = np.where(short, np.minimum(1.0, share * 2), share)
    quota_of = dict(zip(labels, quotas))
    rows["_luskin_s"] = labels_of
    rows = rows.sort_values(["_luskin_h", *floats], kind="mergesort", na_position="last")
    rank = rows.groupby("_luskin_s", sort=False).cumcount().to_numpy()
    keep = rank < rows["_luskin_s"].map(quota_of).to_numpy()
    frame = rows.loc[keep].drop(columns=[*names, "_luskin_b", "_luskin_c", "_luskin_h", "_luskin_s"])
    return frame.reset_index(drop=True), SampleInfo(len(frame), total, seed, True)


def _stratum_keys(t: Any, plan: Plan) -> dict[str, Any]:
    """The group keys (as the counting query makes them) and the outcome: the sample's strata."""
    keys: dict[str, Any] = {}
    if plan.protected is not None:
        keys["g0"] = mask_expr(t, plan.protected)
    else:
        for i, part in enumerate(plan.group_parts):
            keys[f"g{i}"] = part_expr(t, part)
    keys["y"] = outcome_expr(t, plan)
    return keys


def _allocate(sizes: np.ndarray, cap: int, names: Sequence[str]) -> np.ndarray:
    """Each stratum's share of ``cap``, proportional to its size (largest remainders; at least one row each).

    Equal remainders go first to the larger stratum, then by the strata's names, so the shares do
    not depend on the order the engine lists the strata in.
    """
    total = int(sizes.sum())
    exact = sizes.astype(np.float64) * cap / total
    base = np.floor(exact).astype(np.int64)
    left = int(cap - base.sum())
    if left > 0:
        order = sorted(range(len(sizes)), key=lambda i: (-(exact[i] - base[i]), -int(sizes[i]), names[i]))
        base[order[:left]] += 1
    return np.maximum(base, np.minimum(sizes, 1))


def _key_text(value: Any) -> str:
    """A stratum key as text that every engine's spelling of it gives (1, 1.0 and True alike)."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return "\x00"
    if isinstance(value, (bool, np.bool_)):
        return str(float(bool(value)))
    if isinstance(value, (int, float, np.integer, np.floating)):
        return repr(float(value))
    return str(value)


# Hex digits of the row hash compared with a stratum's cut-off (8: cut-offs in steps of 2^-32).
_CUT_DIGITS = 8


def _hex_cutoff(share: float) -> str:
    """The text below which a row hash's first hex digits fall with probability ``share`` ('g' passes all)."""
    if share >= 1.0:
        return "g"
    return format(min(16**_CUT_DIGITS - 1, math.ceil(share * 16**_CUT_DIGITS)), f"0{_CUT_DIGITS}x")


def _md5(value: Any) -> Any:
    ibis = load_ibis()

    @ibis.udf.scalar.builtin(name="md5")
    def md5(text: str) -> str:  # type: ignore[empty-body]
        """MD5 as a hex string: DuckDB, PostgreSQL and Spark compute it alike (UTF-8 bytes of the text)."""

    return md5(value)


def _row_hash(t: Any, seed: int) -> Any:
    """MD5 of the seed and the row's values, spelled the same way on every engine.

    Text as is, integers in decimal, booleans as T/F, floats floored to millionths (below 1e12;
    to units above): the engines agree on these digits, not on a float's own text. A missing value
    is N, a present one V followed by its text. Columns of other types (dates, decimals) are left
    out. Rows with the same text tie; the sample breaks ties by the float columns themselves.
    """
    ibis = load_ibis()
    schema = t.schema()
    text: Any = ibis.literal(f"luskin-sample:{int(seed)}")
    for name in t.columns:
        dtype, col = schema[name], t[name]
        if dtype.is_string():
            part = col
        elif dtype.is_boolean():
            part = ibis.ifelse(col, "T", "F")
        elif dtype.is_integer():
            part = col.cast("int64").cast("string")
        elif dtype.is_floating():
            x = col.cast("float64")
            whole = ibis.ifelse(x.abs() < 1e12, (x * 1e6).floor(), ibis.ifelse(x.abs() < 9e18, x.floor(),
                                                                                   x.sign() * 9e18))
            part = whole.cast("int64").cast("string")
        else:
            continue
        text = text + "|" + ibis.ifelse(col.isnull(), "N", "V" + part.fill_null(""))
    return _md5(text)
