"""Charts of the audit with many groups: what a committee member must be able to read off them."""

from __future__ import annotations

import json

import pandas as pd

from luskin_core import AuditSpec, audit
from luskin_core.present.audit_plots import audit_figures, comparison_bars, impact_heatmap, overall_vs_within


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


def _long_cross() -> tuple[pd.DataFrame, list[str], list[str]]:
    """A 3 x 4 cross whose group labels are 80 characters long (hostile or real: agency names, job titles)."""
    import numpy as np

    firsts = [f"Department of {w} and Regional Planning Affairs"[:38].ljust(38, ".") for w in ("Housing", "Health",
                                                                                                 "Transport")]
    seconds = [f"Senior {w} officer, grade {i}, fixed term".ljust(39, ".")[:39] for i, w in
               enumerate(("policy", "legal", "finance", "records"))]
    rng = np.random.default_rng(3)
    n = 4800
    frame = pd.DataFrame({"a": rng.choice(firsts, n), "b": rng.choice(seconds, n), "site": rng.choice(["x", "y"], n),
                          "y": rng.integers(0, 2, n)})
    return frame, firsts, seconds


def test_long_labels_are_shortened_on_the_charts_and_whole_in_the_hover():
    from luskin_core.present.plots import CHART_LABEL_CHARS

    frame, _, _ = _long_cross()
    result = audit(frame, AuditSpec("y", 1, group_by=("a", "b"), strata=("site",)))
    assert len(result.groups) == 12 and all(len(g) == 80 for g in result.groups)
    for fig, axis in ((comparison_bars(result), "yaxis"), (impact_heatmap(result), "yaxis"),
                      (overall_vs_within(result), "yaxis")):
        layout = fig.layout[axis]
        ticks, values = list(layout.ticktext), list(layout.tickvals)
        assert ticks and len(ticks) == len(values)
        for tick, value in zip(ticks, values):
            bare = tick.replace(" (reference)", "").replace(" (Simpson's paradox)", "")
            assert len(bare) <= CHART_LABEL_CHARS and "…" in bare, tick
            whole = value.replace(" (reference)", "").replace(" (Simpson's paradox)", "")
            assert whole in result.groups            # the category itself stays the whole label
        assert len(set(ticks)) == len(ticks)         # shortened ticks still tell the groups apart
        # the hover shows the category (%{y}) or carries the whole label in its data
        hovered = json.dumps(fig.to_plotly_json(), default=str, ensure_ascii=False)
        for trace in fig.data:
            template = trace.hovertemplate or ""
            if "%{y}" in template:
                assert all(str(y).replace(" (reference)", "").replace(" (Simpson's paradox)", "") in result.groups
                           for y in trace.y)
        assert all(g in hovered for g in result.groups if g != result.reference)  # the reference has no row
    heat = impact_heatmap(result)
    hover = [h for row in heat.data[1].customdata for h in row]
    assert all(any(h.startswith(g + " in ") for h in hover) for g in result.groups if g != result.reference)
    bars = comparison_bars(result)
    assert all(len(a.text) <= CHART_LABEL_CHARS for a in bars.layout.annotations)


def test_shorten_keeps_short_labels_and_both_ends_of_long_ones():
    from luskin_core.present.plots import category_ticks, short_label, shorten

    assert shorten("White") == "White" and short_label("a<b") == "a&lt;b"
    long = "Department of Housing and Regional Planning × Senior policy officer, grade 0"
    out = shorten(long, 32)
    assert len(out) == 32 and out.startswith("Department of") and out.endswith("grade 0") and "…" in out
    ticks = category_ticks(["x" * 40 + "1", "x" * 40 + "1 "])
    assert ticks["ticktext"][0] != ticks["ticktext"][1]


def test_long_names_are_shortened_on_the_paper_charts_and_whole_in_the_hover():
    from luskin_core.present.plots import CHART_LABEL_CHARS, audit_bars

    frame, firsts, _ = _long_cross()
    frame["pass"] = frame["a"] == firsts[0]
    result = audit(frame, AuditSpec("y", 1, protected=f"a == {firsts[0]}", group_label=firsts[0] * 2,
                                    filters=("site == x",)))
    fig = audit_bars(result)
    assert all(len(t) <= CHART_LABEL_CHARS for t in fig.layout.xaxis.ticktext)
    assert all(len(t.name) <= CHART_LABEL_CHARS and "…" in t.name for t in fig.data[:1])
    assert firsts[0] * 2 in fig.data[0].hovertemplate
