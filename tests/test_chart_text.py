"""A chart's text alternative (luskin_core.present.chart_text): the description and the numbers a screen reader
reaches, read from the figure's own data and compared with the result the chart draws."""

from __future__ import annotations

import plotly.graph_objects as go

from luskin_core import AuditSpec, audit
from luskin_core.formatting import format_percent
from luskin_core.present import plots
from luskin_core.present.audit_plots import comparison_bars, impact_heatmap
from luskin_core.present.chart_text import MAX_ROWS, chart_text


def test_the_paper_chart_lists_every_bar_with_its_interval(adult):
    result = audit(adult, AuditSpec("income", ">50K", protected="race == White", filters=("sex == Male",)))
    words = chart_text(plots.audit_bars(result))
    assert words.description.startswith("Bar chart: Share of people where income is >50K")
    assert "2 series: White, everyone else." in words.description and "4 values" in words.description
    table = words.table
    assert len(table) == 4 and list(table.columns)[:2] == ["Series", "Category"]
    for c in result.comparisons:   # each drawn share and its 95% interval, as the result has them
        shown = table[(table["Series"] == ("White" if c.group == "White" else "everyone else"))]
        assert format_percent(c.rate, 1) in set(shown.iloc[:, 2]), (c.group, c.cell)


def test_panels_and_written_cells(adult):
    result = audit(adult, AuditSpec("income", ">50K", group_by=("race",), strata=("sex",)))
    bars = chart_text(comparison_bars(result))
    assert "2 panels: sex = Female, sex = Male." in bars.description
    assert set(bars.table["Panel"]) == {"sex = Female", "sex = Male"} and len(bars.table) == 10
    black = bars.table[(bars.table["Panel"] == "sex = Male") & (bars.table["Category"] == "Black")].iloc[0]
    male_black = result.comparison("Black", "sex = Male")
    assert black["Value"] == f"{male_black.rate * 100:.1f}%"
    assert black["Interval"] == f"{male_black.ci_low * 100:.1f}% to {male_black.ci_high * 100:.1f}%"
    heat = chart_text(impact_heatmap(result))
    assert heat.description.startswith("Heat map: Impact ratio against")
    # the cells' written ratios with their marks (not the colour scale's log ratio): verdicts in words and signs
    cell = heat.table[(heat.table["Row"] == "Black") & (heat.table["Column"] == "sex = Male")].iloc[0]
    assert cell["Value"].startswith(f"{male_black.impact_ratio:.2f}") and cell["Value"].endswith("*")


def test_user_text_is_plain_and_long_charts_are_cut_saying_so():
    fig = go.Figure(go.Bar(x=[f"<b>g{i}</b> &amp; co" for i in range(MAX_ROWS + 5)], y=list(range(MAX_ROWS + 5))))
    fig.update_layout(title={"text": "Counts<br>by <i>group</i>"})
    words = chart_text(fig)
    assert words.description.startswith("Bar chart: Counts by group.")
    assert words.table.iloc[0, 0] == "g0 & co" and words.cut and words.points == MAX_ROWS + 5
    assert len(words.table) == MAX_ROWS
    # a figure kept as JSON holds its numbers as typed arrays (base64): read as numbers
    typed = go.Figure(go.Scatter(x=[1.5, 2.5], y=[0.25, 0.75], name="a")).to_plotly_json()
    typed["data"][0]["y"] = {"dtype": "f8", "bdata": "AAAAAAAA0D8AAAAAAADoPw=="}
    assert list(chart_text(go.Figure(typed)).table["Value"]) == ["0.25", "0.75"]
    empty = chart_text(go.Figure())
    assert empty.table.empty and empty.description == "Chart. No values are drawn."
