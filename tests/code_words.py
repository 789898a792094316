"""The code-like words a committee must not meet on a page, a slide or a report page (issue 27, "Words"),
and the files that brought them out: shared by the AppTest scan (tests/test_app_words.py) and the
browser walk (tests/browser/test_newer_pages_walk.py).

Each pattern is one entry of the issue's list; :func:`code_words` says which of them a text holds.
The files are small, made here with a known truth: an adverse outcome (credit default) with coded sex and a
follow-up that ends with every group at 100%, Berkeley 1973 (a Simpson's paradox, and no race, surname or
date column), and a law-school file whose outcome is written 1.0/0.0 and whose race column holds words that
are also surnames (White, Black).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

FIXTURES = Path(__file__).parent / "fixtures"

# name -> pattern; every one of them was seen on a page, a slide or a report page
CODE_WORDS: dict[str, re.Pattern[str]] = {
    "the other group as a negation ('1 with Non-1', 'Female with Non-Female')": re.compile(r"\bNon-\w"),
    "a condition shown as code ('pass_bar = 1.0')": re.compile(r"\b\w+ = -?\d+\.0\b"),
    "the paper's cell codes '(E)/(UE)'": re.compile(r"\((?:U?E)\)"),
    "'pts' for points ('1 pts')": re.compile(r"\b\d+(?:\.\d+)? pts?\b"),
    "'1 points'": re.compile(r"(?<![\d.])1 points\b"),
    "a plural in brackets ('1 group(s)')": re.compile(r"\w\(s\)"),
    "a command-line flag ('--period-format')": re.compile(r"(?<![\w-])--[a-z][a-z-]{2,}"),
    "a raw column name of a result ('adjusted_p_corrected')": re.compile(
        r"\b(?:adjusted_p|impact_ratio|selection_rate|scoring_rate|p_corrected|raw_difference)\w*"),
    "a p-value written out ('0.0000000')": re.compile(r"0\.0{6,}"),
}


def code_words(text: str) -> list[str]:
    """The entries of :data:`CODE_WORDS` that ``text`` holds, each with what matched."""
    return [f"{name}: {m.group(0)!r} in ...{text[max(0, m.start() - 60):m.end() + 60]!r}..."
            for name, pattern in CODE_WORDS.items() for m in [pattern.search(text)] if m]


SNAKE = re.compile(r"^[a-z0-9]+(?:_[a-z0-9]+)+$")
PERCENT = re.compile(r"^[<>]?\d+(?:\.(\d+))?%$")
INTEGER_TEXT = re.compile(r"^\d{4,}$")


def table_problems(frame: pd.DataFrame, where: str, data_columns: set[str] = frozenset()) -> list[str]:  # type: ignore[assignment]
    """What a shown table gets wrong: snake_case headers (other than the data's own column names), a
    column of percentages at more than one precision (87.79% beside 89.9%), counts without separators."""
    out = []
    for column in frame.columns:
        name = str(column)
        if SNAKE.match(name) and name not in data_columns:
            out.append(f"{where}: a snake_case header {name!r}")
        values = [v for v in frame[column].tolist() if isinstance(v, str)]
        places = {len(m.group(1) or "") for v in values for m in [PERCENT.match(v.strip())]
                  if m and not v.startswith(("<", ">")) and v.strip() not in ("0.0%", "100.0%")}
        if len(places) > 1:
            out.append(f"{where}: column {name!r} has percentages at {sorted(places)} decimals: {values[:6]}")
        if any(INTEGER_TEXT.match(v.strip()) for v in values):
            out.append(f"{where}: column {name!r} has a count without thousands separators: {values[:6]}")
    return out


def credit(n: int = 2400, seed: int = 27) -> pd.DataFrame:
    """Credit default (adverse), sex coded 1/2, a monthly application date; from 2021-10 on the follow-up has
    ended and every application in the file defaulted (both groups at 100%: an artefact, not a finding)."""
    rng = np.random.default_rng(seed)
    sex = rng.choice([1, 2], n, p=[0.4, 0.6])
    education = rng.choice([1, 2, 3, 4], n)
    day = rng.integers(0, 700, n)
    dates = pd.Timestamp("2020-01-01") + pd.to_timedelta(day, unit="D")
    default = rng.random(n) < np.where(sex == 1, 0.30, 0.18) + 0.02 * (education - 2)
    default = np.where(dates >= pd.Timestamp("2021-10-01"), True, default)
    return pd.DataFrame({"LIMIT_BAL": rng.integers(1, 50, n) * 10_000, "SEX": sex, "EDUCATION": education,
                         "application_date": dates.strftime("%Y-%m-%d"), "default": default.astype(int)})


def berkeley() -> pd.DataFrame:
    """Berkeley 1973 graduate admissions, one row per applicant: men admitted more overall, not within departments."""
    counts = pd.read_csv(FIXTURES / "ucb_admissions.csv")
    rows: list[tuple[str, str, str]] = []
    for r in counts.itertuples():
        rows += [(r.department, r.sex, "Admitted")] * r.admitted + [(r.department, r.sex, "Rejected")] * r.rejected
    return pd.DataFrame(rows, columns=["department", "sex", "decision"])


def bar_passage(n: int = 1500, seed: int = 3) -> pd.DataFrame:
    """Law-school bar passage: pass_bar written 1.0/0.0, race in words (White and Black are also surnames),
    a decile column first (once taken for surname, place and outcome)."""
    rng = np.random.default_rng(seed)
    race = rng.choice(["White", "Black", "Hisp", "Asian"], n, p=[0.7, 0.1, 0.1, 0.1])
    lsat = rng.normal(36, 5, n).round(1)
    p = 1 / (1 + np.exp(-(0.3 * (lsat - 33) + (race == "White") * 0.8)))
    return pd.DataFrame({"decile1b": rng.integers(1, 11, n), "lsat": lsat, "fulltime": rng.choice([1, 2], n),
                         "race": race, "male": rng.choice([0, 1], n),
                         "pass_bar": (rng.random(n) < p).astype(float)})
