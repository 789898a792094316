"""One cell of the data cannot make the report as large as itself (issue 47: ``luskin report --pdf`` on a file with
one 50 MB field ran past 240 s at 5.6 GB; the data summary's examples carried the whole cell into a table the
PDF's layout then measured). A table's cell holds at most MAX_CELL_CHARS, any other text MAX_TEXT_CHARS, a chart's
string MAX_FIGURE_TEXT, each saying how long it was. The PDF is made from the same content (a PDF of the long
field, timed beside the short one: benchmarks/bench_report_bounds.py)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from luskin_core.analyses.audit import audit
from luskin_core.present.report import build_html_report
from luskin_core.present.report_blocks import MAX_CELL_CHARS, MAX_TEXT_CHARS
from luskin_core.present.report_figures import MAX_FIGURE_TEXT
from luskin_core.spec.audit_spec import AuditSpec


def _frame(long_note: int = 0, long_group: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(47)
    frame = pd.DataFrame({"team": rng.choice(["a", "b"], 400), "hired": rng.choice(["yes", "no"], 400),
                          "notes": ["short"] * 400})
    if long_note:
        frame.loc[7, "notes"] = "x" * long_note
    if long_group:
        frame["team"] = frame["team"].where(frame["team"] == "a", "y" * long_group)
    return frame


def _report(frame: pd.DataFrame) -> str:
    spec = AuditSpec(outcome="hired", positive="yes", protected="team == 'a'")
    return build_html_report([audit(frame, spec)], frame=frame)


def _longest(text: str, letter: str) -> int:
    return max((len(m) for m in re.findall(f"{letter}+", text)), default=0)


def test_a_five_megabyte_cell_adds_a_few_hundred_characters_to_the_report() -> None:
    short = _report(_frame())
    long = _report(_frame(long_note=5_000_000))
    assert _longest(long, "x") <= MAX_CELL_CHARS
    assert len(long) - len(short) < 2_000, len(long) - len(short)   # on main: 5,000,000 more
    assert "(shortened here: 5,000,000 characters)" in long or "(5,000,000 characters)" in long


def test_a_group_named_by_a_huge_value_is_shortened_in_every_sentence_table_and_chart() -> None:
    long = _report(_frame(long_group=2_000_000))
    assert _longest(long, "y") <= max(MAX_TEXT_CHARS, MAX_FIGURE_TEXT, MAX_CELL_CHARS)
    assert len(long) < 6_000_000   # the plotly library (~4.8 MB) and the report; not the value's copies
