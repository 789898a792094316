"""Charts of the audit with many groups: what a committee member must be able to read off them."""

from __future__ import annotations

import json

import pandas as pd

from luskin_core import AuditSpec, audit
from luskin_core.audit_plots import audit_figures, comparison_bars, impact_heatmap, overall_vs_within


def test_small_multiples_one_panel_per_cell_reference_marked(adult):
    result = audit(adult, AuditSpec("income", ">50K", group_by=("race",), strata=("sex",)))
    fig = comparison_bars(result)
    bars = [t for t in fig.data if t.type == "bar"]
    assert len(bars) == 2 and [a.text for a in fig.layout.annotations] == ["sex = Female", "sex = Male"]
    female = bars[0]
    reference = [y for y in female.y if y.endswith("(reference)")]
    assert reference == [f"{result.reference} (reference)"]
    width = list(female.marker.line.width)
    assert width[list(female.y).index(reference[0])] == 4 and sorted(width)[:-1] == [0, 0, 0, 0]
    shares = {y.replace(" (reference)", ""): x for x, y in zip(female.x, female.y)}
    assert shares["Black"] == result.comparison("Black", "sex = Female").rate
    assert fig.layout.xaxis.range == (0, 1.3)  # shares start at zero


def test_heatmap_holds_every_group_and_cell_and_greys_small_ones(adult):
    result = audit(adult, AuditSpec("income", ">50K", group_by=("race", "sex"), strata=("education",)))
    fig = impact_heatmap(result)
    main = fig.data[1]
    assert len(main.y) == len(result.groups) - 1 and len(main.x) == 16
    small = [(g, c) for g in result.groups for c in result.cell_names
             if g != result.reference and result.comparison(g, c).verdict == "too few rows"]
    flat = [(y, x, z) for y, row in zip(main.y, main.z) for x, z in zip(main.x, row)]
    assert sum(z is None for _, _, z in flat) == len(small)
    assert next(t for t, _ in audit_figures(result)).startswith("Impact ratio")


def test_overall_vs_within_names_simpsons_paradox():
    counts = pd.read_csv("tests/fixtures/ucb_admissions.csv")
    rows = []
    for r in counts.itertuples():
        rows += [(r.department, r.sex, 1)] * r.admitted + [(r.department, r.sex, 0)] * r.rejected
    frame = pd.DataFrame(rows, columns=["department", "sex", "admitted"])
    result = audit(frame, AuditSpec("admitted", 1, group_by=("sex",), strata=("department",)))
    fig = overall_vs_within(result)
    assert list(fig.data[0].y) == ["Female (Simpson's paradox)"]
    assert fig.data[0].x[0] < 0 < fig.data[1].x[0]


def test_user_text_is_escaped_in_every_chart():
    hostile = '<a href="https://attacker.example/x">click</a>'
    frame = pd.DataFrame({"g": [hostile] * 60 + ["plain"] * 60, "s": ["<img src=x>"] * 120,
                          "y": [1, 0] * 60})
    result = audit(frame, AuditSpec("y", 1, group_by=("g",), strata=("s",)))
    for fig in (comparison_bars(result), impact_heatmap(result), overall_vs_within(result)):
        text = json.dumps(fig.to_plotly_json(), default=str)
        assert "<a href" not in text and "<img" not in text
        assert "&lt;a href" in text
