"""One rule for percentages (CLI, sentences, charts, report): never 0% or 100% unless exactly so."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from luskin_core.analyses.narrative import share as pct
from luskin_core.formatting import format_percent


@pytest.mark.parametrize("share, digits, text", [
    (0.996, 0, "99.6%"), (0.996, 1, "99.6%"), (0.9999, 0, "99.99%"), (0.99996, 1, "99.996%"),
    (0.004, 0, "0.4%"), (0.00001, 1, "0.001%"), (1.0, 0, "100%"), (0.0, 1, "0.0%"), (0.443, 0, "44%"),
    (0.443, 1, "44.3%"), (None, 1, "n/a"), (float("nan"), 0, "n/a"), (1 - 1e-9, 1, ">99.999%"),
    (1e-9, 1, "<0.001%"), (-0.0, 0, "0%"),
])
def test_format_percent(share, digits, text) -> None:
    assert format_percent(share, digits) == text


@given(st.floats(min_value=0.0, max_value=1.0, allow_nan=False))
def test_a_share_strictly_between_0_and_1_never_reads_as_0_or_100_percent(share: float) -> None:
    text = pct(share)
    if 0.0 < share < 1.0:
        assert text not in ("0%", "100%", "0.0%", "100.0%")
    assert text.endswith("%")


@given(st.floats(0, 1), st.floats(0, 1))
def test_two_different_shares_never_read_alike(a: float, b: float) -> None:
    from luskin_core.formatting import format_percent_pair

    first, second = format_percent_pair(a, b)
    if abs(a - b) >= 1e-7:  # four extra decimals of a percentage tell apart any two shares this far apart
        assert first != second
    assert format_percent_pair(0.7148, 0.7150) == ("71.48%", "71.50%")
