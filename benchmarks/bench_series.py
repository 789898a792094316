"""Audits over time: speed on 24 months x 10,000,000 rows in Parquet, and the alerts' detection and false alarms.

1. Speed: a Parquet file of 10,000,000 rows (a date over 24 months, 6 groups, a yes/no
   outcome), audited per month through DuckDB (``luskin_core.analyses.series.audit_series`` on
   ``open_source``): one aggregation with the month as one more key. Beside it, peers on the
   same file: the audit without periods, and a bare DuckDB GROUP BY month, group, outcome. Then
   the same with the date stored as MDDYYYY numbers (as NYPD stores it).
2. Alerts (self-starting CUSUM, k = 0.5, h = 6): series of 24 periods of a group (share 25%)
   against a reference (30%), ``n`` rows each per period. With no change: the share of series
   with any alert (false alarms). With the group's share falling 3 points from period 13 on:
   the share found within 2 periods (an alert in period 13 or 14), the median delay, and alerts
   before the change.

    python benchmarks/bench_series.py [--rows 10000000] [--series 2000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from luskin_core.analyses.series import cusum, difference_variance


def make_parquet(path: Path, rows: int) -> None:
    import duckdb

    con = duckdb.connect()
    con.execute(f"""
        COPY (SELECT DATE '2023-01-01' + CAST(floor(random() * 730) AS INTEGER) AS day,
                     ['A','B','C','D','E','F'][1 + CAST(floor(random() * 6) AS INTEGER)] AS grp,
                     CASE WHEN random() < 0.3 THEN 'yes' ELSE 'no' END AS outcome
              FROM range({int(rows)})) TO '{path}' (FORMAT parquet)""")
    con.execute(f"""
        COPY (SELECT CAST(strftime(day, '%m%d%Y') AS BIGINT) AS datestop, grp, outcome FROM '{path}')
        TO '{path.with_name('mddyyyy.parquet')}' (FORMAT parquet)""")


def timed(fn, repeat: int = 3) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def speed(rows: int) -> None:
    import duckdb

    from luskin_core import AuditSpec, audit
    from luskin_core.analyses.series import audit_series
    from luskin_core.counting.sources import open_source

    spec = AuditSpec(outcome="outcome", positive="yes", group_by=("grp",))
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "days.parquet"
        start = time.perf_counter()
        make_parquet(path, rows)
        print(f"made {rows:,} rows in {time.perf_counter() - start:.1f} s")
        t_series, result = timed(lambda: audit_series(open_source(str(path)), spec, "day", "month"))
        t_audit, _ = timed(lambda: audit(open_source(str(path)), spec))
        con = duckdb.connect()
        t_sql, _ = timed(lambda: con.execute(
            f"SELECT year(day) * 100 + month(day) AS m, grp, count(*), sum(CAST(outcome = 'yes' AS INT)) "
            f"FROM '{path}' GROUP BY ALL").fetchall())
        digits = path.with_name("mddyyyy.parquet")
        t_digits, result2 = timed(lambda: audit_series(open_source(str(digits)), spec, "datestop", "month"))
        print(f"{'':48} {'seconds':>8}")
        print(f"{'luskin series, DATE column (24 months)':48} {t_series:8.2f}   periods: {len(result.periods)}")
        print(f"{'luskin series, MDDYYYY numbers (recognised)':48} {t_digits:8.2f}   periods: {len(result2.periods)}, "
              f"format {result2.period_format}")
        print(f"{'peer: luskin audit without periods':48} {t_audit:8.2f}")
        print(f"{'peer: bare DuckDB GROUP BY month, group':48} {t_sql:8.2f}")
        print(f"goal: under 5 s -> {'met' if max(t_series, t_digits) < 5 else 'NOT met'}")


def alerts(series: int, seed: int) -> None:
    print(f"\n{'rows per group per period':>26} | {'false alarms':>12} | {'found within 2':>14} {'median delay':>12} "
          f"{'alerts before':>13}")
    periods, shift_at = 24, 12
    for n in (5_000, 10_000, 20_000, 50_000):
        rng = np.random.default_rng(seed)
        false_series = found = before = 0
        delays = []
        for _ in range(series):
            for shifted in (False, True):
                share = np.full(periods, 0.25)
                if shifted:
                    share[shift_at:] -= 0.03
                k1 = rng.binomial(n, share)
                k2 = rng.binomial(n, 0.30, periods)
                d = k1 / n - k2 / n
                v = difference_variance(k1, n, k2, n)
                found_at = [a["at"] for a in cusum(list(d), list(v))]
                if not shifted:
                    false_series += bool(found_at)
                    continue
                before += any(a < shift_at for a in found_at)
                after = [a for a in found_at if a >= shift_at]
                if after:
                    delays.append(after[0] - shift_at)
                    found += after[0] - shift_at <= 1
        median = f"{np.median(delays):.0f}" if delays else "n/a"
        print(f"{n:>26,} | {100 * false_series / series:11.1f}% | {100 * found / series:13.1f}% {median:>12} "
              f"{100 * before / series:12.1f}%")
    print("(delay 0: the alert comes in the first period of the change; found within 2: delay 0 or 1)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--series", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--skip-speed", action="store_true")
    args = parser.parse_args()
    if not args.skip_speed:
        speed(args.rows)
    alerts(args.series, args.seed)


if __name__ == "__main__":
    main()
