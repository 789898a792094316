"""The charts' colours, in one place: every chart, slide and report reads them from here (and
``.streamlit/config.toml``'s ``chartCategoricalColors`` lists :data:`COLORS`' blue, orange, green, purple, sky,
vermillion, olive and black in that order; tests/test_docker.py checks it).

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

BACKGROUND = "#FFFFFF"   # every chart's plot and paper (plotly_white; drawn the same in the dark theme)
COLORS = {
    "blue": "#0072B2", "orange": "#B86E00", "green": "#009E73", "vermillion": "#D55E00",
    "sky": "#3B88C4", "purple": "#B8629A", "olive": "#8C7A00", "black": "#000000",
}
GREY = "#767676"         # a group set apart (unknown category), every other group, a guide line
HEAT_SCALE = ((0.0, COLORS["vermillion"]), (0.5, BACKGROUND), (1.0, COLORS["sky"]))
HEAT_TEXT = "#000000"    # every value written in a heat map's cell
HEAT_EMPTY = "#DDDDDD"   # a cell with too few rows to judge
