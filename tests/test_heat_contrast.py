"""Issue 46: the heat map's cells meet WCAG 2.1 contrast. Each cell's value is written in the cell, so every fill
the colour scale can give (and the grey of a cell with too few rows) must take the written text at 4.5:1 or more
(1.4.3, beyond 1.4.11's 3:1); a cell with too few rows says so in words, not by its grey alone."""

from __future__ import annotations

import re
from itertools import pairwise

import numpy as np
import pytest
from wcag import contrast

from luskin_core import AuditSpec, audit
from luskin_core.present.audit_plots import impact_heatmap


def _rgb(color: str) -> tuple[float, ...]:
    """'#D55E00' or 'rgb(213, 94, 0)' as three channels 0-255."""
    if color.startswith("#"):
        return tuple(float(int(color[i:i + 2], 16)) for i in (1, 3, 5))
    return tuple(float(v) for v in re.findall(r"[\d.]+", color)[:3])


def _hex(channels: tuple[float, ...]) -> str:
    return "#" + "".join(f"{round(c):02X}" for c in channels)


def _fill(scale: tuple, at: float) -> str:
    """The colour plotly.js draws at ``at`` of a colour scale: linear in RGB between the stops."""
    stops = [(float(s), _rgb(c)) for s, c in scale]
    for (low, a), (high, b) in pairwise(stops):
        if low <= at <= high:
            share = 0.0 if high == low else (at - low) / (high - low)
            return _hex(tuple(x + (y - x) * share for x, y in zip(a, b)))
    return _hex(stops[-1][1])


@pytest.fixture(scope="module")
def heat(adult):
    result = audit(adult, AuditSpec("income", ">50K", group_by=("race", "sex"), strata=("education",)))
    return result, impact_heatmap(result)


def test_every_colour_the_heat_map_can_use_takes_its_text_at_4_5_to_1(heat):
    _, fig = heat
    under, main = fig.data[0], fig.data[1]
    text = main.textfont.color
    assert text, "the cells' text colour is left to plotly's automatic choice: no contrast promised"
    low = min(contrast(_fill(main.colorscale, at), _hex(_rgb(text))) for at in np.linspace(0, 1, 501))
    assert low >= 4.5, f"a fill takes its text at {low:.2f}:1 only"
    # the values actually drawn, each at its place on the scale
    zmin, zmax = main.zmin, main.zmax
    for row in main.z:
        for z in row:
            if z is not None:
                fill = _fill(main.colorscale, (z - zmin) / (zmax - zmin))
                assert contrast(fill, _hex(_rgb(text))) >= 4.5, (z, fill)
    # the grey underneath (cells with too few rows) and its written verdict
    grey = _fill(under.colorscale, 0.0)
    assert under.textfont.color and contrast(grey, _hex(_rgb(under.textfont.color))) >= 4.5


def test_a_cell_with_too_few_rows_says_so_in_words(heat):
    _, fig = heat
    under, main = fig.data[0], fig.data[1]
    small = 0
    for i, row in enumerate(main.z):
        for j, z in enumerate(row):
            if z is None:   # not judged: grey shows through, with the verdict written in it
                small += 1
                assert under.text[i][j] == "too few", (i, j, under.text[i][j])
            else:
                assert under.text[i][j] == ""
    assert small > 0
