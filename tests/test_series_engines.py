"""Audits over time inside PostgreSQL and Spark: the same periods and counts as in memory.

The period is one more key of the engine's one aggregation (luskin_core.analyses.series.derive_period);
these tests run it on real servers (tests/engine_servers.py) on the NYPD stop-question-frisk file,
with the date as MDDYYYY numbers, as text with a leading space, and as a DATE column.
"""

from __future__ import annotations

import pandas as pd
import pytest
from engine_servers import load_postgres

from luskin_core import AuditSpec
from luskin_core.analyses.series import audit_series
from luskin_core.counting.data import load_data
from luskin_core.counting.sources import open_source

SQF = "/work/shared/data/sqf_2014.csv.gz"
SPEC = AuditSpec("frisked", "Y", group_by=("race",), strata=("sex",))
COLUMNS = ("datestop", "text_date", "day")


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    raw = load_data(SQF)[["datestop", "race", "frisked", "sex"]].copy()
    raw["text_date"] = " " + raw["datestop"].astype("string")  # as some rows of the file are written
    raw["day"] = pd.to_datetime(raw["datestop"].astype("string").str.zfill(8), format="%m%d%Y").dt.date
    return raw


def _rows(result) -> list[tuple]:
    return [(r["period"], r["group"], r["cell"], r["n"], r["positives"]) for r in result.series_rows()]


def _check(source, frame: pd.DataFrame) -> None:
    memory = audit_series(frame, SPEC, "datestop", "month")
    assert len(memory.periods) == 12
    for column in COLUMNS:
        engine = audit_series(source, SPEC, column, "month")
        assert engine.periods == memory.periods, column
        assert engine.period_format == (None if column == "day" else "%m%d%Y"), column
        assert _rows(engine) == _rows(memory), column
        assert engine.n_without_period == memory.n_without_period == 0
        assert [a.to_dict() for a in engine.alerts] == [a.to_dict() for a in memory.alerts]
        assert [t.p_value for t in engine.trends] == pytest.approx([t.p_value for t in memory.trends], rel=1e-9)
    quarters = audit_series(source, SPEC, "datestop", "quarter")
    assert _rows(quarters) == _rows(audit_series(frame, SPEC, "datestop", "quarter"))


def test_postgres_series_counts_equal_in_memory(postgres_url, frame):
    from urllib.parse import parse_qs, urlsplit

    import ibis  # type: ignore[import-untyped]

    load_postgres(postgres_url, "sqf_series", frame)
    host = parse_qs(urlsplit(postgres_url).query)["host"][0]
    con = ibis.postgres.connect(user="luskin", password=urlsplit(postgres_url).password, host=host,
                                database="postgres")
    assert con.table("sqf_series").schema()["day"].is_date()
    con.disconnect()
    _check(open_source(postgres_url, "sqf_series"), frame)


def test_spark_series_counts_equal_in_memory(spark_session, frame, tmp_path):
    path = tmp_path / "sqf.parquet"
    frame.to_parquet(path)
    spark_session.read.parquet(str(path)).createOrReplaceTempView("sqf_series")  # type: ignore[attr-defined]
    source = open_source("spark:", "sqf_series")
    assert source.table.schema()["day"].is_date()
    _check(source, frame)
