"""BISG and the proxy audit where the data lives: the join with the Census tables runs in the engine.

Why: ten million rows do not fit comfortably in pandas with six probabilities each. Only the distinct
surnames and places leave the engine; they are normalised and looked up by :mod:`luskin_core.analyses.proxy` (one
normalisation, whichever engine), sent back as two small lookup tables, and the engine (DuckDB, PostgreSQL or
Spark, through Ibis: :func:`source_proxy_sums`) joins, computes each row's probabilities with the same fallbacks
and returns the sums the audit needs (:class:`luskin_core.analyses.proxy_audit.ProxySums`) per cell and probability bin.
A Parquet file without cells is also streamed with Arrow (:func:`parquet_proxy_sums`), the fastest path on two
cores. The Census tables are read once per process (:func:`luskin_core.analyses.proxy.load_tables`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from luskin_core.analyses.birdie import BirdieTable, make_table
from luskin_core.analyses.proxy import RACES, geo_probabilities, load_tables, name_probabilities
from luskin_core.analyses.proxy_audit import DEFAULT_THRESHOLD, N_BINS, ProxySums
from luskin_core.errors import LuskinError

if TYPE_CHECKING:
    from luskin_core.counting.ibis_source import Source

G = len(RACES)
PAIRS = [(a, b) for a in range(G) for b in range(a, G)]


def _literal(value: Any) -> str:
    return "'" + str(value).replace("'", "''") + "'"


def _to_sums(frame: pd.DataFrame) -> ProxySums:
    """Add the per-bin sums up into one :class:`ProxySums` (sums are additive over bins)."""
    if frame.empty:
        raise LuskinError("No row has both an estimate and an outcome to audit.")
    total = frame.drop(columns=[c for c in frame.columns if c.startswith("c") and c[1:].isdigit()]).sum()
    q, qy = np.zeros((G, G)), np.zeros((G, G))
    for a, b in PAIRS:
        q[a, b] = q[b, a] = total[f"q_{a}_{b}"]
        qy[a, b] = qy[b, a] = total[f"qy_{a}_{b}"]
    bins = frame.groupby("bin")[["n", "y", *[f"w_{i}" for i in range(G)]]].sum()
    bins = bins.rename(columns={f"w_{i}": f"b_{r}" for i, r in enumerate(RACES)})
    bins["n"] = bins["n"].astype(float)
    return ProxySums(n=int(total["n"]), w=np.array([total[f"w_{i}"] for i in range(G)], float),
                     wy=np.array([total[f"wy_{i}"] for i in range(G)], float), q=q, qy=qy,
                     thr_n=np.array([total[f"tn_{i}"] for i in range(G)], float),
                     thr_k=np.array([total[f"tk_{i}"] for i in range(G)], float),
                     bins=bins[["n", "y", *[f"b_{r}" for r in RACES]]])


def _collect(grouped: pd.DataFrame, cells: list[str]) -> tuple[dict[str | None, ProxySums], dict[str, int]]:
    """Per-method counts and per-cell :class:`ProxySums` from the engine's grouped sums (one row per cell,
    probability bin, method and whether the outcome is missing)."""
    from luskin_core.analyses.proxy import BISG, NAME_ONLY, NONE, PLACE_ONLY

    names = {0: BISG, 1: NAME_ONLY, 2: PLACE_ONLY, 3: NONE}
    grouped = grouped.copy()
    grouped["method"] = grouped["method"].astype(int)
    per_method = grouped.groupby("method")["n"].sum()
    counts = {names[int(m)]: int(c) for m, c in zip(per_method.index.to_numpy(), per_method.to_numpy()) if c > 0}
    frame = grouped[(grouped["method"] < 3) & ~grouped["y_missing"].astype(bool)].drop(columns=["method",
                                                                                                "y_missing"])
    frame = frame.fillna({c: 0 for c in frame.columns if c not in [f"c{i}" for i in range(len(cells))]})
    out: dict[str | None, ProxySums] = {None: _to_sums(frame)}
    if cells:
        cell_keys = [f"c{i}" for i in range(len(cells))]
        labels = frame[cell_keys].astype("string").fillna("(missing)").agg(", ".join, axis=1)
        prefix = ", ".join(cells) + " = "
        for value in sorted(set(labels)):
            out[prefix + value] = _to_sums(frame[labels == value])
    return out, counts


def _engine_table(source: Source, frame: pd.DataFrame) -> Any:
    """A small lookup frame as a table of the source's engine, for the join.

    DuckDB and Spark take an Ibis memtable. An engine whose sessions are read-only (``read_only_session`` in
    :mod:`luskin_core.counting.engines`: PostgreSQL) gets the frame copied into a temporary table (the session's
    own, dropped with it) inside one read-write transaction, as :mod:`luskin_core.counting.postgres` creates its
    temporary view.
    """
    import ibis  # type: ignore[import-untyped]

    if not source.engine.read_only_session:
        return ibis.memtable(frame)
    import uuid

    name = f"luskin_proxy_{uuid.uuid4().hex}"
    types = {c: "boolean" if pd.api.types.is_bool_dtype(frame[c]) else "double precision"
             if pd.api.types.is_numeric_dtype(frame[c]) else "text" for c in frame.columns}
    columns = ", ".join(f'"{c}" {types[c]}' for c in frame.columns)
    con = source.backend.con
    try:
        with con.transaction(), con.cursor() as cursor:
            cursor.execute("SET TRANSACTION READ WRITE")
            cursor.execute(f'CREATE TEMPORARY TABLE "{name}" ({columns})')
            with cursor.copy(f'COPY "{name}" FROM STDIN') as copy:
                for row in frame.itertuples(index=False, name=None):
                    copy.write_row(row)
        return source.backend.table(name)
    except Exception as error:  # noqa: BLE001 - an engine failure is one plain sentence
        from luskin_core.counting.sources import engine_message

        raise LuskinError(engine_message(error, source.name, source.kind, "the proxy's lookup tables")) from None


def source_proxy_sums(source: Any, *, surname: str, geography: str, outcome: str, positive: Any,
                      level: str = "zcta", cells: list[str] | None = None,
                      threshold: float = DEFAULT_THRESHOLD) -> tuple[dict[str | None, ProxySums], dict[str, int]]:
    """The audit's sums per cell (None: all rows) and the rows per fallback, computed by the source's engine.

    ``source`` is a :class:`luskin_core.counting.sources.Source` (DuckDB, PostgreSQL or Spark, through Ibis). Only the
    distinct surnames and places leave the engine; their probabilities (:mod:`luskin_core.analyses.proxy`, one
    normalisation for every engine) go back as two small tables, joined where the rows are. The engine computes
    each row's BISG probabilities with the fallbacks of :func:`luskin_core.analyses.proxy.bisg_rows` and returns sums per
    cell, probability bin and method; the Census tables are read once per process.
    """
    cells = list(cells or [])
    t = source.table
    columns = list(t.columns)
    for column in [surname, geography, outcome, *cells]:
        if column not in columns:
            raise LuskinError(f"There is no column '{column}' in the data.")
    names_t, geos_t = _probability_tables(source, t, surname, geography, level)
    k = _row_probabilities(source, t, names_t, geos_t, surname=surname, geography=geography, outcome=outcome,
                           positive=positive, cells=cells)
    aggs = _proxy_aggregates(k, threshold)
    keys = [*[f"c{i}" for i in range(len(cells))], "bin", "method", "y_missing"]
    grouped = source._run(k.group_by(keys).aggregate(**aggs), fetch=True, what="the proxy audit's sums")
    out, counts = _collect(grouped, cells)
    # BIRDiE's table: one line per distinct probability vector, place and outcome, with its count
    line_keys = [*[f"c{i}" for i in range(len(cells))], *[f"p_{r}" for r in RACES], "pl", "y"]
    lines = source._run(k.filter((k.method < 3) & k.y.notnull()).group_by(line_keys)
                        .aggregate(count=k.method.count()), fetch=True, what="the outcome-aware estimate's table")
    return _attach_tables(out, lines, cells), counts


def _probability_tables(source: Any, t: Any, surname: str, geography: str, level: str) -> tuple[Any, Any]:
    """The distinct surnames' and places' probabilities (normalised here, one way for every engine), as two small
    tables in the source's engine."""
    tables = load_tables()
    raw_names = source._run(t.select(raw=t[surname].cast("string")).distinct(), fetch=True,
                            what="the distinct surnames")["raw"]
    raw_places = source._run(t.select(raw=t[geography].cast("string")).distinct(), fetch=True,
                             what="the distinct places")["raw"]
    raw_names = raw_names[raw_names.notna()].astype(object).reset_index(drop=True)
    raw_places = raw_places[raw_places.notna()].astype(object).reset_index(drop=True)
    s, has_s = name_probabilities(raw_names, tables.surname)
    name_frame = pd.DataFrame(np.nan_to_num(s), columns=[f"s_{r}" for r in RACES])
    name_frame.insert(0, "n_raw", raw_names.astype(str).to_numpy())
    name_frame["has_s"] = has_s.astype(bool)
    g, gr, has_g = geo_probabilities(raw_places, tables, level)
    geo_frame = pd.concat([pd.DataFrame(np.nan_to_num(g), columns=[f"g_{r}" for r in RACES]),
                           pd.DataFrame(np.nan_to_num(gr), columns=[f"r_{r}" for r in RACES])], axis=1)
    geo_frame.insert(0, "g_raw", raw_places.astype(str).to_numpy())
    geo_frame["has_g"] = has_g.astype(bool)
    return _engine_table(source, name_frame), _engine_table(source, geo_frame)


def _row_probabilities(source: Any, t: Any, names_t: Any, geos_t: Any, *, surname: str, geography: str,
                       outcome: str, positive: Any, cells: list[str]) -> Any:
    """Each row's BISG probabilities (with bisg_rows' fallbacks), its most likely group and its bin, in the engine."""
    import ibis  # type: ignore[import-untyped]

    from luskin_core.counting.rules import label_rule
    from luskin_core.counting.sources import table_kind, to_ibis

    label = to_ibis(label_rule(outcome, positive, table_kind(t)), t)   # the audit's own rule for the outcome
    d = t.select(sn=t[surname].cast("string"), gg=t[geography].cast("string"),
                 y=ibis.cases((label, 1.0), (~label, 0.0), else_=ibis.null("float64")),
                 **{f"c{i}": t[c].cast("string") for i, c in enumerate(cells)})
    j = d.left_join(names_t, d.sn == names_t.n_raw).left_join(geos_t, d.gg == geos_t.g_raw)
    has_s_e, has_g_e = j.has_s.fill_null(False), j.has_g.fill_null(False)
    sv = {r: j[f"s_{r}"].fill_null(0.0) for r in RACES}
    gv = {r: j[f"g_{r}"].fill_null(0.0) for r in RACES}
    rv = {r: j[f"r_{r}"].fill_null(0.0) for r in RACES}
    bisg_total = sum((sv[r] * gv[r] for r in RACES[1:]), sv[RACES[0]] * gv[RACES[0]])
    both_ok = has_s_e & has_g_e & (bisg_total > 0)
    method = ibis.cases((both_ok, 0), (has_s_e, 1), (has_g_e, 2), else_=3)
    u = {r: ibis.cases((both_ok, sv[r] * gv[r]), (has_s_e, sv[r]), else_=rv[r]) for r in RACES}
    # An engine that inlines subqueries (PostgreSQL: engines.Engine.inlines_subqueries) flattens nested SELECTs
    # into one and copies each column's expression wherever it is used: the maximum and the most likely group
    # would repeat every probability's CASE thousands of times (minutes and gigabytes for a few thousand rows).
    # A volatile column keeps each SELECT a subquery computed once per row.
    fence = {"fence": ibis.random()} if source.engine.inlines_subqueries else {}
    m = j.select(y=j.y, method=method, pl=j.gg, **{f"c{i}": j[f"c{i}"] for i in range(len(cells))},
                 **{f"u_{r}": u[r] for r in RACES}, **fence)
    total = sum((m[f"u_{r}"] for r in RACES[1:]), m[f"u_{RACES[0]}"])
    p = m.select(y=m.y, method=m.method, pl=m.pl, **{f"c{i}": m[f"c{i}"] for i in range(len(cells))},
                 **{f"p_{r}": ibis.ifelse(m.method < 3, m[f"u_{r}"] / total, ibis.null("float64"))
                    for r in RACES}, **fence)
    mx = ibis.greatest(*[p[f"p_{r}"] for r in RACES])
    k = p.mutate(mx=mx, **({"fence": ibis.random()} if fence else {}))
    top = ibis.cases(*[(k[f"p_{r}"] == k.mx, i) for i, r in enumerate(RACES)], else_=-1)
    k = k.mutate(top=top, **({"fence": ibis.random()} if fence else {}))
    tenth = ibis.least((k.mx * N_BINS).floor().cast("int64"), N_BINS - 1)
    k = k.mutate(bin=ibis.ifelse(k.method < 3, k.top * N_BINS + tenth, -1), y_missing=k.y.isnull())
    return k


def _proxy_aggregates(k: Any, threshold: float) -> dict[str, Any]:
    """The sums the audit reads per cell, bin and method: weights, outcomes, their products, the assigned counts."""
    pr = {r: k[f"p_{r}"] for r in RACES}
    assigned = {i: (k.mx >= threshold) & (k.top == i) for i in range(G)}
    aggs: dict[str, Any] = {"n": k.method.count(), "y": k.y.sum()}
    aggs.update({f"w_{i}": pr[r].sum() for i, r in enumerate(RACES)})
    aggs.update({f"wy_{i}": (pr[r] * k.y).sum() for i, r in enumerate(RACES)})
    aggs.update({f"q_{a}_{b}": (pr[RACES[a]] * pr[RACES[b]]).sum() for a, b in PAIRS})
    aggs.update({f"qy_{a}_{b}": (pr[RACES[a]] * pr[RACES[b]] * k.y).sum() for a, b in PAIRS})
    aggs.update({f"tn_{i}": k.method.count(where=assigned[i]) for i in range(G)})
    aggs.update({f"tk_{i}": k.y.sum(where=assigned[i]) for i in range(G)})
    return aggs


def _birdie_table(lines: pd.DataFrame) -> BirdieTable:
    p = lines[[f"p_{r}" for r in RACES]].to_numpy(float)
    place = lines["pl"].astype("string").fillna("").to_numpy(dtype=object)
    table = make_table(p, lines["y"].to_numpy(float), place=place, count=lines["count"].to_numpy(float))
    return table


def _attach_tables(out: dict[str | None, ProxySums], lines: pd.DataFrame,
                   cells: list[str]) -> dict[str | None, ProxySums]:
    """Each cell's :class:`ProxySums` with its BIRDiE table (the cell's lines; all lines for None)."""
    from dataclasses import replace

    result: dict[str | None, ProxySums] = {None: replace(out[None], table=_birdie_table(lines))}
    if cells:
        cell_keys = [f"c{i}" for i in range(len(cells))]
        labels = lines[cell_keys].astype("string").fillna("(missing)").agg(", ".join, axis=1)
        prefix = ", ".join(cells) + " = "
        for value in sorted(set(labels)):
            if prefix + value in out:
                result[prefix + value] = replace(out[prefix + value], table=_birdie_table(lines[labels == value]))
    return {key: result.get(key, sums) for key, sums in out.items()}


class _Rows:
    """Rows of a lookup table for some rows of a batch, taken only when indexed (``rows[i] = table[at[i]]``)."""

    def __init__(self, table: np.ndarray, at: np.ndarray) -> None:
        self.table, self.at = table, at

    def __getitem__(self, index: np.ndarray) -> np.ndarray:
        return self.table[self.at[index]]


class _GrowingLookup:
    """Raw values seen so far and their looked-up rows: each distinct raw value is normalised once."""

    def __init__(self, lookup: Any) -> None:
        import pyarrow as pa

        self.lookup = lookup
        self.seen = pa.array([], type=pa.string())
        self.rows: list[np.ndarray] = []

    def positions(self, dictionary: Any) -> np.ndarray:
        """Each dictionary entry's row in :meth:`table` (Arrow's hash lookup, no per-value Python)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        values = dictionary.cast(pa.string())
        where = pc.index_in(values, value_set=self.seen)
        new = pc.unique(pc.filter(values, pc.is_null(where)))
        if len(new):
            self.rows.append(self.lookup(pd.Series(new.to_pylist(), dtype=object)))
            self.seen = pa.concat_arrays([self.seen, new])
            where = pc.index_in(values, value_set=self.seen)
        return where.to_numpy(zero_copy_only=False).astype(np.int64)

    def table(self) -> np.ndarray:
        return np.concatenate(self.rows) if self.rows else np.zeros((0, 1))


def parquet_proxy_sums(path: str, *, surname: str, geography: str, outcome: str, positive: Any,
                       level: str = "zcta", threshold: float = DEFAULT_THRESHOLD,
                       batch_rows: int = 1_000_000) -> tuple[dict[str | None, ProxySums], dict[str, int]]:
    """The audit's sums for a Parquet file, streamed with Arrow in batches (memory bounded by the batch).

    Surnames and places are read dictionary-encoded: each batch's distinct values are looked up once
    (:class:`_GrowingLookup`) and rows take their probabilities by integer index, so no string is hashed
    per row. The probabilities come from :func:`luskin_core.analyses.proxy.bisg_rows`, the sums from
    :func:`luskin_core.analyses.proxy_audit.sufficient_statistics`, as in memory.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from luskin_core.analyses.proxy import METHOD_CODES, bisg_rows
    from luskin_core.analyses.proxy_audit import sufficient_statistics

    tables = load_tables()

    def names(values: pd.Series) -> np.ndarray:
        probs, found = name_probabilities(values, tables.surname)
        return np.column_stack([np.nan_to_num(probs), found])

    def places(values: pd.Series) -> np.ndarray:
        given, race_given, found = geo_probabilities(values, tables, level)
        return np.column_stack([np.nan_to_num(given), np.nan_to_num(race_given), found])

    name_lookup, geo_lookup = _GrowingLookup(names), _GrowingLookup(places)
    try:
        file = pq.ParquetFile(path, read_dictionary=[surname, geography])
    except (OSError, pa.ArrowInvalid) as err:
        raise LuskinError(f"The Parquet file '{path}' could not be read ({err}).") from None
    missing = [c for c in (surname, geography, outcome) if c not in file.schema_arrow.names]
    if missing:
        raise LuskinError(f"There is no column '{missing[0]}' in the data.")
    parts: list[ProxySums] = []
    counts = np.zeros(len(METHOD_CODES), dtype=np.int64)
    lines: list[np.ndarray] = []   # BIRDiE's table: each audited row's (surname, place, outcome) as one integer

    def codes(column: Any, lookup: _GrowingLookup) -> np.ndarray:
        column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
        if not pa.types.is_dictionary(column.type):
            column = pc.dictionary_encode(pc.cast(column, pa.string()))
        elif not pa.types.is_string(column.type.value_type):
            column = pc.dictionary_encode(pc.cast(column.dictionary_decode(), pa.string()))
        where = lookup.positions(column.dictionary)
        index = column.indices.to_numpy(zero_copy_only=False)
        if column.null_count == 0:
            return where[index]
        valid = np.asarray(column.is_valid())
        return np.where(valid, where[np.where(valid, index, 0).astype(np.int64)], -1)

    for batch in file.iter_batches(batch_size=batch_rows, columns=[surname, geography, outcome]):
        name_at = codes(batch.column(surname), name_lookup)
        geo_at = codes(batch.column(geography), geo_lookup)
        # a row of zeros last: a missing value (-1) takes it, with "not found"
        s_table = np.vstack([name_lookup.table().reshape(-1, G + 1), np.zeros((1, G + 1))])
        g_table = np.vstack([geo_lookup.table().reshape(-1, 2 * G + 1), np.zeros((1, 2 * G + 1))])
        # Gather only what every row needs (P(race | name), P(place | race), found); P(race | place) is taken
        # for the few rows that fall back to the place alone.
        s_rows = np.ascontiguousarray(s_table[:, :G])[name_at]
        g_rows = np.ascontiguousarray(g_table[:, :G])[geo_at]
        post, code = bisg_rows(s_rows, s_table[:, G][name_at] > 0, g_rows, _Rows(g_table[:, G:2 * G], geo_at),
                               g_table[:, 2 * G][geo_at] > 0)
        counts += np.bincount(code, minlength=len(METHOD_CODES))
        y = _outcome_array(batch.column(outcome), positive)
        keep = (code < 3) & np.isfinite(y)
        if keep.all():
            parts.append(sufficient_statistics(post, y, threshold, with_table=False))
            lines.append(_line_keys(name_at, geo_at, y))
        else:
            parts.append(sufficient_statistics(post[keep], y[keep], threshold, with_table=False))
            lines.append(_line_keys(name_at[keep], geo_at[keep], y[keep]))
    if not parts:
        raise LuskinError("The Parquet file has no rows.")
    def add(name: str) -> np.ndarray:
        return np.sum([getattr(p, name) for p in parts], axis=0)

    s_table = np.vstack([name_lookup.table().reshape(-1, G + 1), np.zeros((1, G + 1))])
    g_table = np.vstack([geo_lookup.table().reshape(-1, 2 * G + 1), np.zeros((1, 2 * G + 1))])
    total = ProxySums(n=sum(p.n for p in parts), w=add("w"), wy=add("wy"), q=add("q"), qy=add("qy"),
                      thr_n=add("thr_n"), thr_k=add("thr_k"),
                      bins=pd.concat([p.bins for p in parts]).groupby(level=0).sum(),
                      table=_lines_table(np.concatenate(lines), s_table, g_table))
    return {None: total}, {METHOD_CODES[i]: int(c) for i, c in enumerate(counts) if c > 0}


_GEO_BITS = 25


def _line_keys(name_at: np.ndarray, geo_at: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(surname code, place code, outcome) as one int64 per row (codes shifted by one: -1, missing, is 0)."""
    return (((name_at.astype(np.int64) + 1) << _GEO_BITS | (geo_at.astype(np.int64) + 1)) << 1) | y.astype(np.int64)


def _lines_table(keys: np.ndarray, s_table: np.ndarray, g_table: np.ndarray) -> BirdieTable:
    """BIRDiE's table from the rows' line keys: distinct (surname, place, outcome) lines with their counts and
    BISG probabilities (computed once per line, by :func:`luskin_core.analyses.proxy.bisg_rows`)."""
    from luskin_core.analyses.proxy import bisg_rows

    uniq, count = np.unique(keys, return_counts=True)
    y = (uniq & 1).astype(float)
    geo_at = ((uniq >> 1) & ((1 << _GEO_BITS) - 1)) - 1
    name_at = (uniq >> (_GEO_BITS + 1)) - 1
    s_probs, g_probs = np.ascontiguousarray(s_table[:, :G]), np.ascontiguousarray(g_table[:, :G])
    post = np.empty((len(uniq), G))
    for start in range(0, len(uniq), 1_000_000):  # in slices: ten million lines stay within memory
        part = slice(start, start + 1_000_000)
        n_at, g_at = name_at[part], geo_at[part]
        post[part] = bisg_rows(s_probs[n_at], s_table[:, G][n_at] > 0, g_probs[g_at],
                               _Rows(g_table[:, G:2 * G], g_at), g_table[:, 2 * G][g_at] > 0)[0]
    return BirdieTable(p=post, y=y, count=count.astype(float), place=np.where(geo_at < 0, len(g_table) - 1, geo_at))


def _outcome_array(column: Any, positive: Any) -> np.ndarray:
    """1.0 where the outcome is the positive value, 0.0 elsewhere, NaN where it is missing."""
    from luskin_core.spec.validation import outcome_mask

    series = column.to_pandas()
    y = outcome_mask(series, positive).astype(float)
    y[series.isna().to_numpy()] = np.nan
    return y


__all__ = ["parquet_proxy_sums", "source_proxy_sums"]
