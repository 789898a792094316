"""Adjusted gaps refuse in plain words what a model cannot hold (issue 30), on the page, the CLI and the library.

Before: a control holding 1e300 ended in a LinAlgError traceback, an outcome near 1e308 in a ValueError, and
a categorical control of 10,000 values ran for minutes at 3.3 GB.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from luskin_core import AuditSpec, LuskinError
from luskin_core.analyses.adjust import adjust
from luskin_core.analyses.adjust_model import MAX_CONTROL_LEVELS


def _frame(n: int = 600) -> pd.DataFrame:
    rng = np.random.default_rng(4)
    return pd.DataFrame({"g": rng.choice(["a", "b"], n), "y": rng.integers(0, 2, n), "x": rng.normal(size=n),
                         "s": rng.normal(size=n)})


def test_a_control_with_a_huge_number_is_refused_in_words() -> None:
    frame = _frame()
    frame.loc[3, "x"] = 1e300
    with pytest.raises(LuskinError, match="'x' holds numbers as large as 1e\\+300"):
        adjust(frame, AuditSpec("y", 1, group_by=("g",)), controls=("x",))


def test_an_amount_outcome_near_the_largest_float_is_refused_in_words() -> None:
    """The number itself enters the model only as an amount (a score enters as past its cut, a yes/no)."""
    frame = _frame().assign(s=lambda f: f["s"] * 1e307)
    with pytest.raises(LuskinError, match="outcome 's' holds numbers as large as"):
        adjust(frame, AuditSpec("s", None, outcome_type="amount", group_by=("g",)), controls=("x",))


def test_a_control_with_too_many_values_is_refused_before_the_fit() -> None:
    n = MAX_CONTROL_LEVELS + 400
    frame = _frame(n).assign(z=[f"v{i % (MAX_CONTROL_LEVELS + 1)}" for i in range(n)])
    with pytest.raises(LuskinError, match=f"'z' has {MAX_CONTROL_LEVELS + 1:,} distinct values"):
        adjust(frame, AuditSpec("y", 1, group_by=("g",)), controls=("z",))


def test_the_command_line_prints_the_message_not_a_traceback(tmp_path, capsys) -> None:
    from luskin_cli.main import main

    frame = _frame()
    frame.loc[3, "x"] = 1e300
    path = tmp_path / "big.csv"
    frame.to_csv(path, index=False)
    code = main(["adjust", "--data", str(path), "--outcome", "y", "--positive", "1", "--groups", "g",
                 "--controls", "x"])
    captured = capsys.readouterr()
    assert code != 0
    assert "holds numbers as large as" in captured.err + captured.out
    assert "Traceback" not in captured.err + captured.out
