"""Audits over time: every comparison per month, quarter or year, a test of trend and alerts on changes.

A date (or period) column turns the audit into a series. The period is one more key of the one
aggregation that makes the count table (``Plan.period``: in memory, and on DuckDB, PostgreSQL
and Spark through :mod:`luskin_core.counting.sources`, where the period is computed by the engine from
the column); the table is then split by period and each period audited as usual. The reference
group is the whole data's (the same in every period), and p-values are adjusted within each
period.

Dates. A column of dates or timestamps is used as it is. Otherwise a format is needed: given
(``period_format``, strptime codes such as ``%m%d%Y``) or recognised from the column's values.
Values made of digits only (numbers such as NYPD's MDDYYYY ``1012014``, text such as
``" 1012014"``) are read by position after padding with zeros on the left to the format's width
(%Y four digits; %m, %d, %y, %H, %M, %S two). On an engine such a column is counted per distinct
value (a few hundred days) and each value read once in pandas, by the same code as in memory:
arithmetic on every row in SQL cost more than the whole count. A DATE column is counted the same way. Recognised digit formats, the first that reads every value: %Y%m%d, %m%d%Y, %d%m%Y,
%Y%m, %Y. Other text is read by pandas (ISO dates, or %m/%d/%Y, %d/%m/%Y, %Y/%m/%d, %d.%m.%Y);
on an engine, only dates, timestamps and digit formats are read. A value that is not a date of
the format (a month 13, a day 32, text) has no period: it is counted in the whole audit but in
no period, and the result says how many.

Trend (per group and cell): weighted least squares of the per-period difference (group minus
reference) on time in periods, each period weighted by the inverse of its difference's
binomial variance (with one success and one failure added to each side, Agresti-Caffo, so that
a share of 0 or 1 keeps a finite weight); the variances are taken as known, so the slope's
standard error is ``1 / sqrt(sum w (t - mean t)^2)`` and the test a z test (statsmodels' WLS
with ``cov_type="fixed scale"`` gives the same). At least three periods are needed.

Periods set aside. Two kinds of period say more about the data than about the decisions, and they
are flagged, said in words and left out of the trends and alerts (``keep_flagged=True`` keeps
them): a period where every group's share is 0%, or every group's is 100% (in a cell; the gap is
0 by construction and, with Agresti-Caffo's variance, weighs more than any real period: the
end of a follow-up, as in COMPAS from 2014-05, where only the people who re-offended are left),
and a period with fewer than ``FEW_ROWS_SHARE`` (a third of) the rows of the median period (a month
still being collected, a change of recording). Their comparisons stay in the table and the chart.

Alerts: a two-sided self-starting CUSUM (Hawkins 1987) on the standardized differences. Each
period's difference is compared with the weighted mean of the earlier periods since the last
alert (the gap's level so far): ``z = (d_t - mean) / sqrt(var d_t + var mean)``, and
``S+ = max(0, S+ + z - k)``, ``S- = max(0, S- - z - k)`` with ``k = 0.5`` (tuned to a shift of
one standard error per period); an alert is raised when either passes ``h = 6`` and the
CUSUM restarts from that period. Why CUSUM: it accumulates evidence, so a lasting shift that a
single period cannot prove is still found within a few periods, while one noisy period alone
rarely passes ``h``; why these constants: in ``benchmarks/bench_series.py`` a series of 24
periods with no change raises an alert in at most 5% of simulated series, and a 3-point shift
(with 50,000 rows per group per period) is found within 2 periods.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import norm

from luskin_core.counting.count_table import CountTable, RawCounts
from luskin_core.counting.executor import count_plan
from luskin_core.counting.memory import aggregate_frame, plan_for_frame
from luskin_core.counting.plan import COUNT_COLUMNS, KEPT, KeyPart
from luskin_core.errors import LuskinError
from luskin_core.formatting import format_p, format_percent, format_points
from luskin_core.spec.audit_spec import AuditSpec, resolve_column
from luskin_core.spec.options import PERIOD, PERIODS, SeriesOptions
from luskin_core.stats.verdict import ALPHA

EVERY = PERIODS   # declared once with the option (luskin_core/spec/options.py)
PERIOD_KEY = "__luskin_period__"
CUSUM_K = 0.5
CUSUM_H = 6.0
MIN_TREND_PERIODS = 3
FEW_ROWS_SHARE = 1 / 3  # a period with fewer rows than this share of the median period's is flagged
DATE_SHARE = 0.9  # a column is taken for dates when at least this share of its non-missing values reads as dates
YEARS = (1900, 2100)  # the plausible range of a date's year
_WIDTHS = {"%Y": 4, "%m": 2, "%d": 2, "%y": 2, "%H": 2, "%M": 2, "%S": 2}
_DIGIT_FORMATS = ("%Y%m%d", "%m%d%Y", "%d%m%Y", "%Y%m", "%Y")
_TEXT_FORMATS = ("ISO8601", "%m/%d/%Y", "%d/%m/%Y", "%Y/%m/%d", "%d.%m.%Y")
_LOOK = 50_000


# ------------------------------------------------------------------------------------------
# Reading dates
# ------------------------------------------------------------------------------------------
def digit_layout(fmt: str) -> dict[str, tuple[int, int]] | None:
    """Offset and width of each field of a digits-only format ("%m%d%Y" -> m at 0, d at 2, Y at 4), or None."""
    tokens = re.findall(r"%.|.", fmt)
    if not tokens or any(t not in _WIDTHS for t in tokens):
        return None
    out, offset = {}, 0
    for token in tokens:
        out[token[1]] = (offset, _WIDTHS[token])
        offset += _WIDTHS[token]
    out["width"] = (offset, 0)
    return out


def _check_format(fmt: str, every: str) -> None:
    layout = digit_layout(fmt)
    fields = set(layout) if layout is not None else set(re.findall(r"%(.)", fmt))
    if fmt == "ISO8601":
        return
    if not ({"Y", "y"} & fields):
        raise LuskinError(f"The date format '{fmt}' has no year (%Y or %y).")
    if every != "year" and "m" not in fields:
        raise LuskinError(f"The date format '{fmt}' has no month (%m), so it cannot make {every}s.")


def _digit_fields(numbers: np.ndarray, layout: dict[str, tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """Year and month (NaN where the value is not a date of the layout) from zero-padded digit numbers."""
    width = layout["width"][0]

    def take(name: str) -> np.ndarray:
        offset, size = layout[name]
        return np.floor(numbers / 10.0 ** (width - offset - size)) % 10 ** size

    with np.errstate(invalid="ignore"):
        ok = np.isfinite(numbers) & (numbers >= 0) & (numbers < 10.0 ** width) & (numbers == np.floor(numbers))
        if "Y" in layout:
            year = take("Y")
        else:
            short = take("y")
            year = np.where(short >= 69, 1900 + short, 2000 + short)
        month = take("m") if "m" in layout else np.ones_like(numbers)
        ok &= (month >= 1) & (month <= 12) & (year >= 1)
        if "d" in layout:
            day = take("d")
            ok &= (day >= 1) & (day <= 31)
    return np.where(ok, year, np.nan), np.where(ok, month, np.nan)


def _as_digits(series: pd.Series) -> np.ndarray:
    """Numbers of a column of digit values (numbers, or text of digits with spaces around); NaN otherwise."""
    if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
        return series.to_numpy(dtype=float, na_value=np.nan)
    text = series.astype("string").str.strip()
    text = text.where(text.str.fullmatch(r"\d{1,18}").fillna(False))
    return pd.to_numeric(text, errors="coerce").to_numpy(dtype=float, na_value=np.nan)


def _best_format(present: pd.Series) -> tuple[str | None, float]:
    """The format that reads the most of these non-missing values as dates of a plausible year, and that share.

    Digit values (numbers, or text of digits) are tried against :data:`_DIGIT_FORMATS` read by position,
    other text against :data:`_TEXT_FORMATS`; ties go to the earlier format. Small integers (an age, a
    0/1 flag, a count) read as no date: a digit date has at least the format's width less two digits.
    """
    if len(present) == 0:
        return None, 0.0
    numbers = _as_digits(present)
    digits = np.isfinite(numbers)
    best: tuple[str | None, float] = (None, 0.0)
    if digits.mean() >= DATE_SHARE:
        for fmt in _DIGIT_FORMATS:
            layout = digit_layout(fmt)
            assert layout is not None
            width = layout["width"][0]
            year, _ = _digit_fields(numbers, layout)
            with np.errstate(invalid="ignore"):
                ok = (year >= YEARS[0]) & (year <= YEARS[1]) & (numbers < 10.0 ** width) & \
                    (numbers >= 10.0 ** (width - 2))
            share = float(ok.mean())
            if share > best[1]:
                best = (fmt, share)
        return best
    if pd.api.types.is_numeric_dtype(present) or pd.api.types.is_bool_dtype(present):
        return best  # numbers that are not whole digits (0.5, -3, True) are no dates
    text = present.astype("string").str.strip()
    for fmt in _TEXT_FORMATS:
        parsed = pd.to_datetime(text, format=fmt, errors="coerce")
        share = float(parsed.dt.year.between(*YEARS).fillna(False).mean())
        if share > best[1]:
            best = (fmt, share)
    return best


def holds_dates(values: pd.Series) -> bool:
    """Whether a column can give the periods: it holds dates or timestamps, or at least :data:`DATE_SHARE` of its
    non-missing values (looked at: the first 2,000) read as dates of a recognised format with a year in
    :data:`YEARS`. An age, a 0/1 flag, a count or a name does not; ``20140131``, ``01312014``, ``2014-01-31``,
    ``31/01/2014`` and a year such as ``2014`` do.
    """
    present = values.dropna()
    if len(present) == 0:
        return False
    if pd.api.types.is_datetime64_any_dtype(values):
        return True
    return _best_format(present.iloc[:2_000])[1] >= DATE_SHARE


def date_columns(frame: pd.DataFrame, exclude: Sequence[str] = ()) -> list[str]:
    """The columns of ``frame`` that hold dates (:func:`holds_dates`), in the frame's order, minus ``exclude``.

    What the dashboard offers as a period column: a column is guessed only from what its values support
    (a name such as ``fulltime`` or ``age`` is no date), and an empty list means the file has no date column.
    """
    skip = {c.lower() for c in exclude}
    return [str(c) for c in frame.columns if str(c).lower() not in skip and holds_dates(frame[c])]


def detect_format(values: pd.Series) -> str | None:
    """The date format of a column's values (None: the column holds dates already), or a LuskinError.

    The format that reads the most values wins (the first in order on a tie); it must read at least
    :data:`DATE_SHARE` of the non-missing values (among the first 50,000): the others get no period.
    """
    if pd.api.types.is_datetime64_any_dtype(values):
        return None
    present = values.dropna()
    if len(present) == 0:
        raise LuskinError(f"The period column '{values.name}' has no values.")
    fmt, share = _best_format(present.iloc[:_LOOK])
    if fmt is not None and share >= DATE_SHARE:
        return fmt
    shown = ", ".join(repr(str(v)) for v in present.iloc[:3])
    part = (f"only {format_percent(share, 0)} of its values read as dates" if fmt is not None and share > 0
            else "its values are not dates")
    raise LuskinError(f"'{values.name}' does not hold dates in a format Luskin recognises: {part} (e.g. {shown}). "
                      "Dates look like 2014-01-31, 31/01/2014, 01312014, 201401 or 2014. If these are dates, give "
                      "their date format in strptime codes, e.g. %m%d%Y for 01312014 or %d/%m/%Y for 31/01/2014.")


def period_keys(series: pd.Series, fmt: str | None, every: str) -> np.ndarray:
    """Each row's period as a number (201401 for January 2014, 20141 for its first quarter, 2014), NaN if none."""
    if fmt is None:
        dates = pd.to_datetime(series, errors="coerce")
        year = dates.dt.year.to_numpy(dtype=float, na_value=np.nan)
        month = dates.dt.month.to_numpy(dtype=float, na_value=np.nan)
    else:
        layout = digit_layout(fmt)
        if layout is not None:
            year, month = _digit_fields(_as_digits(series), layout)
        else:
            dates = pd.to_datetime(series.astype("string").str.strip(), format=fmt, errors="coerce")
            year = dates.dt.year.to_numpy(dtype=float, na_value=np.nan)
            month = dates.dt.month.to_numpy(dtype=float, na_value=np.nan)
    return _combine(year, month, every)


def _combine(year: Any, month: Any, every: str) -> Any:
    if every == "month":
        return year * 100 + month
    if every == "quarter":
        return year * 10 + (month + 2) // 3
    return year


def period_label(key: float, every: str) -> str:
    """The words of a period key: 2014-01, 2014 Q1, 2014."""
    k = int(key)
    if every == "month":
        return f"{k // 100}-{k % 100:02d}"
    if every == "quarter":
        return f"{k // 10} Q{k % 10}"
    return str(k)


def period_index(key: float, every: str) -> int:
    """The period's position on a line of time (months, quarters or years since year 0)."""
    k = int(key)
    if every == "month":
        return (k // 100) * 12 + k % 100 - 1
    if every == "quarter":
        return (k // 10) * 4 + k % 10 - 1
    return k


def period_parts(t: Any, column: str, fmt: str | None) -> dict[str, Any]:
    """Year, month and whether the value is a date, as Ibis expressions (the engine computes them once)."""
    import ibis  # type: ignore[import-untyped]

    col = t[column]
    dtype = t.schema()[column]
    if dtype.is_date() or dtype.is_timestamp():
        return {"year": col.year().cast("int64"), "month": col.month().cast("int64"), "ok": col.notnull()}
    layout = digit_layout(fmt) if fmt else None
    if layout is None:
        raise LuskinError(f"On a database, the period column '{column}' must hold dates, or digits such as "
                          "01312014 (with the date format %m%d%Y): convert it, or audit a file.")
    width = layout["width"][0]
    if dtype.is_integer():
        number = col.cast("int64")
    elif dtype.is_floating():
        number = ibis.ifelse(col == col.floor(), col, ibis.null()).cast("int64")
    else:
        text = col.cast("string").strip()
        number = ibis.ifelse(text.re_search(r"^[0-9]{1,18}$"), text, ibis.null()).try_cast("int64")

    def take(name: str) -> Any:
        offset, size = layout[name]
        return (number // (10 ** (width - offset - size))) % (10 ** size)

    year = take("Y") if "Y" in layout else ibis.ifelse(take("y") >= 69, 1900 + take("y"), 2000 + take("y"))
    month = take("m") if "m" in layout else ibis.literal(1, "int64")
    ok = (number >= 0) & (number < 10 ** width) & (month >= 1) & (month <= 12) & (year >= 1)
    if "d" in layout:
        day = take("d")
        ok = ok & (day >= 1) & (day <= 31)
    return {"year": year, "month": month, "ok": ok.fill_null(False)}


def derive_period(source: Any, column: str, fmt: str | None, every: str) -> Any:
    """The source with the period key computed by its engine (year, month and validity first, then the key)."""
    import ibis

    parts = period_parts(source.table, column, fmt)
    names = {name: f"__luskin_{name}__" for name in parts}
    staged = source.derive(**{names[name]: (lambda t, e=expr: e) for name, expr in parts.items()})

    def key(t: Any) -> Any:
        value = _combine(t[names["year"]], t[names["month"]], every)
        return ibis.ifelse(t[names["ok"]], value, ibis.null()).cast("int64")

    return staged.derive(**{PERIOD_KEY: key})


# ------------------------------------------------------------------------------------------
# Results
# ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Trend:
    """The straight-line drift of one group's gap over the periods (weighted least squares, z test)."""

    group: str
    reference: str
    cell: str | None
    periods: int
    slope: float | None
    slope_ci_low: float | None
    slope_ci_high: float | None
    p_value: float | None
    sentence: str

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Alert:
    """A change of one group's gap beyond chance (self-starting two-sided CUSUM)."""

    group: str
    reference: str
    cell: str | None
    period: str
    since: str
    direction: str
    before: float
    after: float
    statistic: float
    threshold: float
    sentence: str

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class FlaggedPeriod:
    """A period that says more about the data than about the decisions (see the module doc).

    ``reason``: ``"all_positive"`` (every group's share is 100% in ``cell``), ``"all_negative"`` (every
    group's is 0%) or ``"few_rows"`` (the whole period has ``rows`` rows, fewer than
    :data:`FEW_ROWS_SHARE` of ``typical_rows``, the median period's). ``cell`` is None for the
    whole period (and for an audit without cells).
    """

    period: str
    cell: str | None
    reason: str
    rows: int
    typical_rows: float

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class SeriesResult:
    """An audit over time: the whole data's audit, one audit per period, trends and alerts."""

    overall: Any
    column: str
    every: str
    period_format: str | None
    periods: tuple[str, ...]
    results: tuple[Any, ...]
    trends: tuple[Trend, ...]
    alerts: tuple[Alert, ...]
    n_without_period: int
    skipped: tuple[str, ...] = field(default_factory=tuple)
    flagged: tuple[FlaggedPeriod, ...] = field(default_factory=tuple)
    kept_flagged: bool = False  # True: the flagged periods count in the trends and alerts (the user asked)

    @property
    def reference(self) -> str:
        return str(self.overall.reference)

    @property
    def n_without_group(self) -> int:
        """Rows left out of the whole audit and every period because their protected value is missing (an audit
        of a protected condition; an audit by columns keeps them as the group "Unknown")."""
        return int(self.overall.excluded_reasons.get("protected value missing or unknown", 0))

    def series_rows(self) -> list[dict[str, Any]]:
        """One entry per period and comparison: the audit's comparison keys (its sentences made on demand) plus
        ``period``."""
        from luskin_core.analyses import narrative

        return [{**c.to_dict(), "sentence": result.sentence(c), "power_sentence": narrative.power_words(c, result.spec),
                 "period": label}
                for label, result in zip(self.periods, self.results) for c in result.comparisons]

    def to_frame(self) -> pd.DataFrame:
        rows = []
        for label, result in zip(self.periods, self.results):
            frame = result.comparisons_frame()
            frame.insert(0, "Period", label)
            rows.append(frame)
        return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()

    def to_dict(self) -> dict[str, Any]:
        out = self.overall.to_dict()
        out.update({
            "period_column": self.column, "every": self.every, "period_format": self.period_format,
            "periods": list(self.periods), "rows_without_period": self.n_without_period,
            "rows_without_group": self.n_without_group,
            "periods_without_reference": list(self.skipped),
            "flagged_periods": [f.to_dict() for f in self.flagged], "flagged_periods_kept": self.kept_flagged,
            "series": self.series_rows(), "trends": [t.to_dict() for t in self.trends],
            "alerts": [a.to_dict() for a in self.alerts],
        })
        return out

    def is_flagged(self, period: str, cell: str | None) -> bool:
        """Whether this period (in this cell) is flagged: every group at 0% or 100% there, or few rows."""
        return any(f.period == period and (f.reason == "few_rows" or f.cell == cell) for f in self.flagged)

    def headline(self) -> str:
        span = f"{self.periods[0]} to {self.periods[-1]}" if self.periods else "no period"
        n = len(self.alerts)
        alerts = ("no gap changed beyond chance between periods" if n == 0 else
                  f"{n} change{'s' if n > 1 else ''} of a gap beyond chance ({', '.join(sorted({a.group for a in self.alerts}))})")
        aside = ""
        flagged = len(dict.fromkeys(f.period for f in self.flagged))
        if flagged and not self.kept_flagged:
            aside = (f"; {flagged:,} of them set aside from the trends and alerts (every group at 0% or 100%, "
                     "or too few rows)")
        return f"{len(self.periods):,} {_plural(self.every, len(self.periods))} ({span}), reference {self.reference}{aside}: {alerts}."

    def flag_sentences(self) -> list[str]:
        """The flagged periods in words: which, why, and whether they were left out of the trends and alerts."""
        out = []
        lead = ("Kept in the trends and alerts, as asked, though flagged" if self.kept_flagged
                else "Set aside from the trends and alerts (shown in the chart and the table)")
        by_reason: dict[tuple[str, str | None], list[FlaggedPeriod]] = {}
        for f in self.flagged:
            by_reason.setdefault((f.reason, f.cell), []).append(f)
        for (reason, cell), flags in by_reason.items():
            spans = _spans([f.period for f in flags], list(self.periods))
            if reason == "few_rows":
                rows = sorted(f.rows for f in flags)
                counted = f"{rows[0]:,} rows" if rows[0] == rows[-1] else f"{rows[0]:,} to {rows[-1]:,} rows"
                out.append(f"{lead}: {spans}, with fewer than a third of the rows of a typical {self.every} ({counted} "
                           f"against a median of {flags[0].typical_rows:,.0f}): a {self.every} still being collected, or "
                           "recorded differently, is no evidence of a change in the decisions.")
            else:
                where = "" if cell is None else f" where {cell}"
                share = "100%" if reason == "all_positive" else "0%"
                out.append(f"{lead}: {spans}, where every group's share is {share}{where}. The gap there is 0 by "
                           "construction and says nothing of the decisions: often the end of a follow-up (only the "
                           "people with the outcome are left), or a column filled in later.")
        return out

    def sentences(self) -> list[str]:
        out = [self.headline()]
        out += self.flag_sentences()
        out += [t.sentence for t in self.trends]
        out += [a.sentence for a in self.alerts]
        if self.n_without_period:
            out.append(f"{self.n_without_period:,} rows have no readable date in '{self.column}': they count in the "
                       "whole audit but in no period.")
        if self.n_without_group:
            column = self.overall.spec.protected.column
            out.append(f"{self.n_without_group:,} row{'s have' if self.n_without_group != 1 else ' has'} no value of "
                       f"'{column}', so {'they are' if self.n_without_group != 1 else 'it is'} in neither group: left "
                       "out of the whole audit and of every period. The best and worst case over them say how far "
                       "each gap could move if they were counted.")
        if self.skipped:
            out.append(f"The reference group {self.reference} has no rows in {', '.join(self.skipped)}: no comparison "
                       "there.")
        return out


# ------------------------------------------------------------------------------------------
# The series
# ------------------------------------------------------------------------------------------
def audit_series(data: Any, spec: AuditSpec, period: str, every: str = "month", period_format: str | None = None,
                 *, source: str | None = None, keep_flagged: bool = False) -> SeriesResult:
    """Audit ``data`` (a DataFrame or a :class:`~luskin_core.counting.sources.Source`) per period of the column ``period``.

    ``keep_flagged``: keep the flagged periods (every group at 0% or 100%, or few rows: see the module
    doc) in the trends and alerts; by default they are set aside and the result says so.
    """
    every = PERIOD.check(every)
    raw, plan, column, fmt, name = series_counts(data, spec, period, every, period_format, source=source)
    return series_from_raw(raw, plan, spec, column=column, every=every, period_format=fmt, source=name,
                           keep_flagged=keep_flagged)


def run(data: Any, spec: AuditSpec, options: SeriesOptions | None = None, *,
        source: str | None = None) -> SeriesResult:
    """The audit over time as an entry of the analyses' table (``run(data, spec, options)``): :func:`audit_series`
    per ``options.every`` of the date column ``options.period``. ``source`` names the data in the result's words."""
    if options is None or options.period is None:
        raise LuskinError("Say which column holds the dates that make the periods (e.g. a decision date).")
    return audit_series(data, spec, options.period, options.every, options.period_format, source=source,
                        keep_flagged=options.keep_flagged)


def series_counts(data: Any, spec: AuditSpec, period: str, every: str = "month", period_format: str | None = None,
                  *, source: str | None = None) -> tuple[RawCounts, Any, str, str | None, str]:
    """The raw count table with a period key (and its plan, the period column, the date format read and the
    source's name): what :func:`audit_series` audits, and what the bounds over the unknowns count per period."""
    from luskin_core.counting.sources import Source

    every = PERIOD.check(every)   # declared once (luskin_core/spec/options.py), as SeriesOptions checks it
    fmt = (period_format or "").strip() or None
    part = KeyPart(PERIOD_KEY, "value", True)
    if isinstance(data, Source):
        column = data._resolve(period, "period")
        _check_role(spec, column)
        if fmt is None:
            dtype = data.table.schema()[column]
            if not (dtype.is_date() or dtype.is_timestamp()):
                look = data._run(data.table.select(column).limit(_LOOK), fetch=True)[column]
                fmt = detect_format(look.rename(column))
        else:
            _check_format(fmt, every)
        if (fmt is not None and digit_layout(fmt) is not None) or (fmt is None and data.table.schema()[column].is_date()):
            plan, raw = _value_counts(data, spec, column, fmt, every)
        else:
            plan, raw = count_plan(derive_period(data, column, fmt, every), spec, period=part)
        name = source or data.name
    else:
        if data is None or len(data) == 0:
            raise LuskinError("The data has no rows.")
        column = resolve_column(data, period, "period")
        _check_role(spec, column)
        if fmt is None:
            try:
                fmt = detect_format(data[column])
            except LuskinError as err:
                raise LuskinError(f"{err} {_other_date_columns(data, spec, column)}") from None
        else:
            _check_format(fmt, every)
        work = data.assign(**{PERIOD_KEY: period_keys(data[column], fmt, every)})
        plan = replace(plan_for_frame(work, spec), period=part)
        raw = aggregate_frame(work, plan)
        name = source or ("recorded outcome" if spec.prediction is None else f"decisions in '{spec.prediction}'")
    if plan.protected is not None:   # "Male", not "Non-Female", when the column has two values (as the audit)
        from luskin_core.counting.executor import executor_for, group_names

        plan = replace(plan, names=group_names(executor_for(data), spec, plan.protected.column))
    return raw, plan, column, fmt, name


def _other_date_columns(frame: pd.DataFrame, spec: AuditSpec, column: str) -> str:
    """The sentence that names the file's date columns (or says it has none), for a column that is no date."""
    others = date_columns(frame, exclude=(column, *audit_columns(spec)))
    if not others:
        return "This file has no other column that holds dates, so it cannot be audited over time as it is."
    return "Columns of this file that hold dates: " + ", ".join(f"'{c}'" for c in others[:6]) + \
        (f" and {len(others) - 6:,} more." if len(others) > 6 else ".")


def audit_columns(spec: AuditSpec) -> set[str]:
    """The columns that already play a part in the audit (outcome, groups, strata, protected column), lower-cased."""
    used = {spec.outcome.lower(), *(c.lower() for c in spec.group_by), *(c.lower() for c in spec.strata)}
    if spec.protected is not None:
        used.add(spec.protected.column.lower())
    return used


def _value_counts(data: Any, spec: AuditSpec, column: str, fmt: str | None, every: str) -> tuple[Any, RawCounts]:
    """Counts per period of a DATE column or of dates written as digits: the engine counts per distinct value of
    the column (a few hundred days), and the values are read here, once each, by the in-memory reader
    (:func:`period_keys`). Not for timestamps or free text, whose distinct values can be as many as the rows.

    Reading the digits in the engine cost several divisions per row (5.8 s for 10 million rows, 4.3 s for a
    DATE column's year and month, in ``benchmarks/bench_series.py``); grouping by the raw value costs less.
    """
    dtype = data.table.schema()[column]
    numeric = bool(dtype.is_integer() or dtype.is_floating() or dtype.is_decimal())
    plan, counted = count_plan(data, spec, period=KeyPart(column, "value", numeric))
    raw = counted.to_frame()
    values = raw["period"]
    if numeric:   # the count table gives numeric keys as floats: 1012006.0 is the date 1012006 (MDDYYYY)
        number = pd.to_numeric(values, errors="coerce")
        if bool((number.dropna() % 1 == 0).all()):
            values = number.astype("Int64")
    raw = raw.assign(period=period_keys(values, fmt, every))
    keys = [c for c in raw.columns if c not in COUNT_COLUMNS]
    counts = [c for c in raw.columns if c in COUNT_COLUMNS]
    merged = raw.groupby(keys, dropna=False, sort=False, as_index=False)[counts].sum()  # one row per period again
    return replace(plan, period=KeyPart(PERIOD_KEY, "value", True)), RawCounts.from_frame(merged[raw.columns])


def _check_role(spec: AuditSpec, column: str) -> None:
    if column.lower() in audit_columns(spec):
        raise LuskinError(f"'{column}' already plays a part in the audit: choose a date column of its own for the periods.")


def series_from_raw(raw: RawCounts, plan: Any, spec: AuditSpec, *, column: str, every: str,
                    period_format: str | None, source: str, keep_flagged: bool = False) -> SeriesResult:
    """The series from one raw count table with a ``period`` key (see :func:`luskin_core.counting.memory.aggregate_frame`)."""
    from luskin_core.analyses.audit import result_from_counts

    keys = pd.to_numeric(pd.Series(raw["period"], dtype=object), errors="coerce")
    whole = raw.without("period")
    overall_table = CountTable.from_raw(whole, replace(plan, period=None))
    if overall_table.n_rows == 0:
        raise LuskinError("Every row lacks a value the audit needs, so nothing can be audited.")
    overall = result_from_counts(overall_table, spec, source=source)
    reference = overall.reference
    # every period against the same reference, given to the spec by the spec's own name for it (the data
    # names the rest "Male" where the spec says "Non-Male"; the audit maps it back, see names.reference_for)
    names = getattr(plan, "names", None)
    spelled = spec.other_name if spec.protected is not None and names is not None and reference == names.other \
        and reference != spec.group_name else reference
    per_spec = spec.with_changes(reference=spelled)
    kept = raw["reason"] == KEPT
    n_without = int(raw["n"][kept & keys.isna().to_numpy()].sum())
    labels, results, skipped, sizes = [], [], [], []
    for label, table in period_tables(raw, plan, every):
        if reference not in table.groups:
            skipped.append(label)
            continue
        labels.append(label)
        sizes.append(int(table.n_rows))
        results.append(result_from_counts(table, per_spec, source=f"{source}, {label}"))
    if not results:
        raise LuskinError(f"No row has a readable date in '{column}', so there is no period to audit.")
    flagged = flag_periods(labels, sizes, results)
    index = [period_index(_key_of(label, every), every) for label in labels]
    aside = set() if keep_flagged else {(f.period, None if f.reason == "few_rows" else f.cell) for f in flagged}
    trends, alerts = _trends_and_alerts(labels, index, results, every, aside)
    return SeriesResult(overall, column, every, period_format, tuple(labels), tuple(results), tuple(trends),
                        tuple(alerts), n_without, tuple(skipped), tuple(flagged), bool(keep_flagged and flagged))


def period_tables(raw: RawCounts, plan: Any, every: str) -> list[tuple[str, CountTable]]:
    """Per period (in time order, rows with no readable date left out), its label and its count table."""
    keys = pd.to_numeric(pd.Series(raw["period"], dtype=object), errors="coerce")
    whole = raw.without("period")
    kept = raw["reason"] == KEPT
    return [(period_label(key, every), CountTable.from_raw(whole.take(kept & (keys == key).to_numpy()),
                                                           replace(plan, period=None)))
            for key in sorted(keys[kept].dropna().unique())]


def flag_periods(labels: Sequence[str], sizes: Sequence[int], results: Sequence[Any]) -> list[FlaggedPeriod]:
    """The periods that are artefacts of the data rather than evidence about the decisions (see the module doc).

    Few rows: a period with fewer than :data:`FEW_ROWS_SHARE` of the median period's rows (with at least
    three periods; a median of two says nothing). Every group at 0% or 100%: per cell, among the groups
    with rows there (the reference included); a cell with one group only is not judged.
    """
    flagged: list[FlaggedPeriod] = []
    typical = float(np.median(sizes)) if len(sizes) >= MIN_TREND_PERIODS else 0.0
    for label, size, result in zip(labels, sizes, results):
        if size < FEW_ROWS_SHARE * typical:
            flagged.append(FlaggedPeriod(label, None, "few_rows", size, typical))
        cells: dict[str | None, list[Any]] = {}
        for c in result.comparisons:
            if c.n > 0:
                cells.setdefault(c.cell, []).append(c)
        for cell, rows in cells.items():
            if len(rows) < 2:
                continue
            if all(c.positives == c.n for c in rows):
                flagged.append(FlaggedPeriod(label, cell, "all_positive", sum(c.n for c in rows), typical))
            elif all(c.positives == 0 for c in rows):
                flagged.append(FlaggedPeriod(label, cell, "all_negative", sum(c.n for c in rows), typical))
    return flagged


def _plural(unit: str, n: int) -> str:
    return unit if n == 1 else unit + "s"


def _spans(chosen: Sequence[str], every: Sequence[str]) -> str:
    """Periods in words, consecutive ones as a span: "2013-06, 2013-07 and 2014-04 to 2014-12"."""
    position = {label: i for i, label in enumerate(every)}
    runs: list[list[str]] = []
    for label in sorted(dict.fromkeys(chosen), key=lambda x: position.get(x, -1)):
        if runs and position.get(label, -10) == position.get(runs[-1][-1], -10) + 1:
            runs[-1].append(label)
        else:
            runs.append([label])
    parts = [run[0] if len(run) == 1 else (f"{run[0]}, {run[1]}" if len(run) == 2 else f"{run[0]} to {run[-1]}")
             for run in runs]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _key_of(label: str, every: str) -> float:
    if every == "month":
        year, month = label.split("-")
        return int(year) * 100 + int(month)
    if every == "quarter":
        year, quarter = label.split(" Q")
        return int(year) * 10 + int(quarter)
    return int(label)


# ------------------------------------------------------------------------------------------
# Trend and alerts
# ------------------------------------------------------------------------------------------
def difference_variance(k1: Any, n1: Any, k2: Any, n2: Any) -> np.ndarray:
    """Variance of a difference of two shares, with one success and one failure added to each (Agresti-Caffo)."""
    k1, n1, k2, n2 = (np.asarray(v, dtype=float) for v in (k1, n1, k2, n2))
    p1, p2 = (k1 + 1) / (n1 + 2), (k2 + 1) / (n2 + 2)
    return p1 * (1 - p1) / (n1 + 2) + p2 * (1 - p2) / (n2 + 2)


def weighted_trend(t: Any, d: Any, v: Any) -> tuple[float, float, float]:
    """Slope of d on t by weighted least squares with known variances v: (slope, standard error, two-sided p)."""
    time, diff, w = np.asarray(t, float), np.asarray(d, float), 1.0 / np.asarray(v, float)
    tbar = np.sum(w * time) / np.sum(w)
    sxx = np.sum(w * (time - tbar) ** 2)
    slope = float(np.sum(w * (time - tbar) * diff) / sxx)
    se = float(1.0 / math.sqrt(sxx))
    return slope, se, float(2 * norm.sf(abs(slope / se)))


def cusum(d: Sequence[float], v: Sequence[float], k: float = CUSUM_K, h: float = CUSUM_H) -> list[dict[str, Any]]:
    """Self-starting two-sided CUSUM of differences ``d`` with variances ``v``: one dict per alert.

    Each alert: ``at`` (index of the period where the sum passed ``h``), ``since`` (first period
    of the run that passed it), ``direction`` (+1 up, -1 down), ``before`` (the level before),
    ``statistic``. After an alert the level is learnt again from that period on.
    """
    alerts = []
    start = 0
    up = down = 0.0
    up_from = down_from = 0
    for i in range(len(d)):
        if i == start:
            up = down = 0.0
            continue
        w = 1.0 / np.asarray(v[start:i], float)
        level = float(np.sum(w * np.asarray(d[start:i], float)) / np.sum(w))
        z = (d[i] - level) / math.sqrt(v[i] + 1.0 / np.sum(w))
        if up == 0.0:
            up_from = i
        if down == 0.0:
            down_from = i
        up = max(0.0, up + z - k)
        down = max(0.0, down - z - k)
        if up > h or down > h:
            direction = 1 if up > h else -1
            alerts.append({"at": i, "since": up_from if direction > 0 else down_from, "direction": direction,
                           "before": level, "statistic": up if direction > 0 else down})
            start = i
            up = down = 0.0
    return alerts


def _trends_and_alerts(labels: list[str], index: list[int], results: list[Any], every: str,
                       aside: set[tuple[str, str | None]] = frozenset()  # type: ignore[assignment]
                       ) -> tuple[list[Trend], list[Alert]]:
    """Trend and alerts per group of known category and cell, over the periods not set aside (``aside``: (period,
    cell), a cell of None for a whole period). A group of unknown category ("Decline to self-identify") is drawn
    but has neither, as the audit counts it in no verdict (:attr:`AuditResult.unknown_groups`)."""
    trends: list[Trend] = []
    alerts: list[Alert] = []
    keys = list(dict.fromkeys((c.group, c.cell) for r in results for c in r.counted))
    unit = {"month": "a month", "quarter": "a quarter", "year": "a year"}[every]
    for group, cell in keys:
        points = []
        for label, t, result in zip(labels, index, results):
            if (label, None) in aside or (label, cell) in aside:
                continue
            c = next((c for c in result.counted if c.group == group and c.cell == cell), None)
            if c is not None and c.n > 0 and c.reference_n > 0 and c.difference is not None:
                points.append((label, t, c))
        if not points:
            continue
        reference = points[0][2].reference
        where = "" if cell is None else f" where {cell}"
        d = [c.difference for _, _, c in points]
        v = difference_variance([c.positives for _, _, c in points], [c.n for _, _, c in points],
                                [c.reference_positives for _, _, c in points], [c.reference_n for _, _, c in points])
        if len(points) >= MIN_TREND_PERIODS:
            slope, se, p = weighted_trend([t for _, t, _ in points], d, v)
            low, high = slope - 1.959963984540054 * se, slope + 1.959963984540054 * se
            move = "widened" if slope * np.sign(np.average(d, weights=1 / v)) > 0 else "narrowed"
            # a direction is said only for a trend beyond chance: "narrowed, which could be chance" reads as a finding
            verdict = f"the gap {move}, a trend beyond chance" if p < ALPHA else "no trend beyond chance"
            sentence = (f"{group} vs {reference}{where}: over {len(points)} {every}s the difference moved by "
                        f"{format_points(slope, signed=True)} points {unit} (95% CI {format_points(low, signed=True)} "
                        f"to {format_points(high, signed=True)}): {verdict} ({format_p(p)}).")
            trends.append(Trend(group, reference, cell, len(points), slope, low, high, p, sentence))
        else:
            trends.append(Trend(group, reference, cell, len(points), None, None, None, None,
                                f"{group} vs {reference}{where}: fewer than {MIN_TREND_PERIODS} periods, no trend test."))
        for a in cusum(d, list(v)):
            label, since = points[a["at"]][0], points[a["since"]][0]
            after = float(d[a["at"]])
            verb = "rose" if a["direction"] > 0 else "fell"
            sentence = (f"Alert: the difference between {group} and {reference}{where} {verb} from about "
                        f"{format_points(a['before'], signed=True)} points to {format_points(after, signed=True)} "
                        f"in {label} (a change beyond "
                        f"chance since {since}: CUSUM {a['statistic']:.1f} > {CUSUM_H:g}).")
            alerts.append(Alert(group, reference, cell, label, since, "up" if a["direction"] > 0 else "down",
                                float(a["before"]), after, float(a["statistic"]), CUSUM_H, sentence))
    return trends, alerts


__all__ = [
    "EVERY",
    "Alert",
    "FlaggedPeriod",
    "SeriesOptions",
    "SeriesResult",
    "Trend",
    "audit_columns",
    "audit_series",
    "cusum",
    "date_columns",
    "derive_period",
    "detect_format",
    "difference_variance",
    "flag_periods",
    "holds_dates",
    "period_keys",
    "period_label",
    "period_parts",
    "run",
    "weighted_trend",
]
