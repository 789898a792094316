"""The charts' colours, in one place: every chart, slide and report reads them from here (and
``.streamlit/config.toml``'s ``chartCategoricalColors`` lists :data:`SERIES` in the same order).

Okabe & Ito (2008), "Color Universal Design", told apart by readers with the common colour-vision deficiencies,
with the four colours that were below 3:1 on the charts' white background darkened in the same hue (WCAG 2.1
1.4.11 asks 3:1 for every graphical object a reader needs): orange #E69F00 (2.25:1) -> #B86E00 (3.99:1),
sky blue #56B4E9 (2.31:1) -> #3B88C4 (3.81:1), reddish purple #CC79A7 (3.06:1) -> #B8629A (4.00:1), yellow
#F0E442 (1.32:1) -> olive #8C7A00 (4.29:1). Greys are 3:1 or darker (#767676, 4.54:1). tests/test_plots.py
measures every colour here against white.

The heat map (the audit's impact ratios, every group in every cell) writes each cell's value in black on a fill of
the diverging scale :data:`HEAT_SCALE` (vermillion below 1, white at 1, blue above), every colour of which is light
enough for black text at 4.5:1 or more (WCAG 1.4.3, and so 1.4.11's 3:1): the cells' 2-pixel white gaps need no
contrast, as the values are written. The blue end is the palette's sky blue (#0072B2 gave black text 4.04:1 only).
Cells with too few rows to judge are :data:`HEAT_EMPTY` grey, their verdict written in them too.
tests/test_heat_contrast.py measures every colour the heat map can use.
"""

from __future__ import annotations

from itertools import pairwise

BACKGROUND = "#FFFFFF"   # every chart's plot and paper (plotly_white; drawn the same in the dark theme)
COLORS = {
    "blue": "#0072B2", "orange": "#B86E00", "green": "#009E73", "vermillion": "#D55E00",
    "sky": "#3B88C4", "purple": "#B8629A", "olive": "#8C7A00", "black": "#000000",
}
GREY = "#767676"         # a group set apart (unknown category), every other group, a guide line
# The categorical series, in order (the Streamlit theme's chartCategoricalColors).
SERIES = (COLORS["blue"], COLORS["orange"], COLORS["green"], COLORS["purple"], COLORS["sky"], COLORS["vermillion"],
          COLORS["olive"], COLORS["black"])


def contrast(first: str, second: str = BACKGROUND) -> float:
    """The WCAG 2.1 contrast ratio of two ``#RRGGBB`` colours (1 to 21)."""
    def luminance(color: str) -> float:
        channels = [int(color.lstrip("#")[i:i + 2], 16) / 255 for i in (0, 2, 4)]
        r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b
    high, low = sorted((luminance(first), luminance(second)), reverse=True)
    return (high + 0.05) / (low + 0.05)


HEAT_SCALE = ((0.0, COLORS["vermillion"]), (0.5, BACKGROUND), (1.0, COLORS["sky"]))
HEAT_TEXT = "#000000"    # every value written in a heat map's cell
HEAT_EMPTY = "#DDDDDD"   # a cell with too few rows to judge


def scale_color(scale: tuple[tuple[float, str], ...], at: float) -> str:
    """The colour a plotly colour scale gives at ``at`` (0 to 1): linear in RGB between its stops, as plotly.js
    draws a heat map (so a test can measure every colour a cell can take)."""
    at = min(max(float(at), 0.0), 1.0)
    for (low, first), (high, second) in pairwise(scale):
        if low <= at <= high:
            share = 0.0 if high == low else (at - low) / (high - low)
            a = [int(first.lstrip("#")[i:i + 2], 16) for i in (0, 2, 4)]
            b = [int(second.lstrip("#")[i:i + 2], 16) for i in (0, 2, 4)]
            return "#" + "".join(f"{round(x + (y - x) * share):02X}" for x, y in zip(a, b))
    return scale[-1][1]
