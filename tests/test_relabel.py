"""Property tests of the two relabelling algorithms (paper sections 3.1 and 3.2).

The expected counts are computed here independently (fractions, half-up rounding) rather
than with the module's own helpers, so that a wrong formula in the module fails the test.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from luskin_core.corrections.relabel import (
    ADJUSTED,
    EMPTY_CLASS,
    EQUAL,
    NOT_SELECTED,
    WITHIN_TOLERANCE,
    relabel,
    risk_based_flipping,
    round_half_up_ratio,
    selective_risk_adjustment,
)
from luskin_core.errors import LuskinError


def half_up(x: Fraction) -> int:
    return math.floor(x + Fraction(1, 2))


@st.composite
def datasets(draw, with_filter: bool | None = None):
    """Rows with a risk (coarse grid, so ties are common), a class, a filter mark and a label."""
    n = draw(st.integers(min_value=2, max_value=60))
    risk = np.array(draw(st.lists(st.integers(0, 10), min_size=n, max_size=n)), dtype=float) / 10
    group = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    y = np.array(draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)), dtype=np.int8)
    use_filter = draw(st.booleans()) if with_filter is None else with_filter
    filt = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n))) if use_filter else None
    return risk, group, filt, y


def cell_masks(filt, n, all_cells):
    """(cell key, rows, relabelled?) the way the paper and DESIGN.md define the cells."""
    if filt is None:
        return [(None, np.ones(n, bool), True)]
    return [(True, filt, True), (False, ~filt, all_cells)]


def expected_adjustment(labels, group, rows, direction):
    """Which class is adjusted and its target count, or None when nothing should change."""
    g, o = rows & group, rows & ~group
    if g.sum() == 0 or o.sum() == 0:
        return None
    rg = Fraction(int(labels[g].sum()), int(g.sum()))
    ro = Fraction(int(labels[o].sum()), int(o.sum()))
    if rg == ro:
        return None
    higher_is_group = rg > ro
    adjusted_group = higher_is_group if direction == "down" else not higher_is_group
    adj, ref = (g, o) if adjusted_group else (o, g)
    ratio_ref = Fraction(int(labels[ref].sum()), int(ref.sum()))
    return adjusted_group, adj, half_up(int(adj.sum()) * ratio_ref)


@settings(max_examples=300, deadline=None)
@given(datasets(), st.sampled_from(["down", "up"]), st.booleans(), st.sampled_from([0.5, 0.3, 0.7]))
def test_algorithm1_exact_count_highest_risk_and_rest_unchanged(data, direction, all_cells, threshold):
    risk, group, filt, _ = data
    result = selective_risk_adjustment(risk, group, filt, threshold=threshold, direction=direction,
                                       all_cells=all_cells)
    before = (risk >= threshold).astype(np.int8)
    np.testing.assert_array_equal(result.labels_before, before)
    touched = np.zeros(len(risk), bool)
    for key, rows, selected in cell_masks(filt, len(risk), all_cells):
        record = result.cell(key)
        exp = expected_adjustment(before, group, rows, direction) if selected else None
        if exp is None:
            assert record.status != ADJUSTED
            assert record.changed == 0
            continue
        adjusted_group, adj, target = exp
        assert record.status == ADJUSTED
        assert record.adjusted_in_group == adjusted_group
        assert record.target == target
        # Exactly round(alpha) positives in the adjusted class ...
        assert int(result.labels[adj].sum()) == target
        # ... and they are the highest-risk rows: every positive has risk >= every negative.
        pos, neg = risk[adj & (result.labels == 1)], risk[adj & (result.labels == 0)]
        if len(pos) and len(neg):
            assert pos.min() >= neg.max()
        # The paper's threshold shift: th' is the lowest risk kept positive.
        if target > 0:
            assert record.threshold_new == pytest.approx(pos.min())
            assert record.delta == pytest.approx(pos.min() - threshold)
        assert record.changed == int((result.labels[adj] != before[adj]).sum())
        touched |= adj
    # Everything outside the adjusted classes keeps the first model's label.
    np.testing.assert_array_equal(result.labels[~touched], before[~touched])
    assert result.n_changed == sum(c.changed for c in result.cells)


@settings(max_examples=300, deadline=None)
@given(datasets(), st.booleans())
def test_algorithm2_flips_only_positives_of_adjusted_class_lowest_risk_first(data, all_cells):
    risk, group, filt, y = data
    result = risk_based_flipping(y, risk, group, filt, direction="down", all_cells=all_cells)
    np.testing.assert_array_equal(result.labels_before, y)
    changed = result.labels != y
    # Only 1 -> 0 flips.
    assert (y[changed] == 1).all() and (result.labels[changed] == 0).all()
    allowed = np.zeros(len(y), bool)
    for key, rows, selected in cell_masks(filt, len(y), all_cells):
        record = result.cell(key)
        exp = expected_adjustment(y, group, rows, "down") if selected else None
        if exp is None:
            assert record.changed == 0 and record.beta is None
            continue
        adjusted_group, adj, target = exp
        beta = int(y[adj].sum()) - target
        assert beta >= 0
        assert record.adjusted_in_group == adjusted_group
        assert record.beta == beta == int(changed[adj].sum()) == record.changed
        assert int(result.labels[adj].sum()) == target
        # Lowest risk first: each flipped row is no riskier than each positive that stayed.
        flipped, kept = risk[adj & changed], risk[adj & (result.labels == 1)]
        if len(flipped) and len(kept):
            assert flipped.max() <= kept.min()
        allowed |= adj
    assert not changed[~allowed].any()


@settings(max_examples=300, deadline=None)
@given(datasets(), st.booleans())
def test_algorithm2_up_mirrors_down(data, all_cells):
    risk, group, filt, y = data
    result = risk_based_flipping(y, risk, group, filt, direction="up", all_cells=all_cells)
    changed = result.labels != y
    # Only 0 -> 1 flips, in the lower class, highest risk first.
    assert (y[changed] == 0).all() and (result.labels[changed] == 1).all()
    allowed = np.zeros(len(y), bool)
    for key, rows, selected in cell_masks(filt, len(y), all_cells):
        exp = expected_adjustment(y, group, rows, "up") if selected else None
        if exp is None:
            assert result.cell(key).changed == 0
            continue
        adjusted_group, adj, target = exp
        # The adjusted class is the lower one.
        other = rows & (group != adjusted_group)
        assert Fraction(int(y[adj].sum()), int(adj.sum())) < Fraction(int(y[other].sum()), int(other.sum()))
        assert int(result.labels[adj].sum()) == target
        assert result.cell(key).beta == target - int(y[adj].sum()) == int(changed[adj].sum())
        flipped, stayed = risk[adj & changed], risk[adj & (result.labels == 0)]
        if len(flipped) and len(stayed):
            assert flipped.min() >= stayed.max()
        allowed |= adj
    assert not changed[~allowed].any()


@settings(max_examples=200, deadline=None)
@given(datasets(with_filter=True), st.sampled_from([1, 2]), st.sampled_from(["down", "up"]))
def test_all_cells_only_changes_what_the_single_cell_run_leaves(data, algorithm, direction):
    risk, group, filt, y = data
    one = relabel(algorithm, y, risk, group, filt, direction=direction)
    every = relabel(algorithm, y, risk, group, filt, direction=direction, all_cells=True)
    # Where the filter holds, both runs agree; where it does not, only the all-cells run may change labels.
    np.testing.assert_array_equal(one.labels[filt], every.labels[filt])
    np.testing.assert_array_equal(one.labels[~filt], one.labels_before[~filt])
    assert one.cell(False).status == NOT_SELECTED
    assert every.cell(False).status != NOT_SELECTED


def test_ties_are_broken_by_row_order():
    risk = np.array([0.5, 0.5, 0.5, 0.5, 0.1, 0.1])
    group = np.array([True, True, True, True, False, False])
    y = np.array([1, 1, 1, 1, 1, 0])
    # Group ratio 1.0, other 0.5: alpha = 4 * 0.5 = 2, beta = 2; the first two tied positives flip.
    result = risk_based_flipping(y, risk, group)
    np.testing.assert_array_equal(result.labels, [0, 0, 1, 1, 1, 0])
    # Algorithm 1: the group's four score 0.5 >= 0.5 (ratio 1), the other class has one of two
    # above the threshold (ratio 0.5): alpha = 2, and the first two tied rows stay positive.
    risk1 = np.array([0.5, 0.5, 0.5, 0.5, 0.6, 0.1])
    result1 = selective_risk_adjustment(risk1, group)
    np.testing.assert_array_equal(result1.labels, [1, 1, 0, 0, 1, 0])
    assert result1.cell(None).delta == 0.0


def test_worked_example_matches_the_paper_formulas():
    # Filter cell: group 10 rows with 6 positives (0.6), other 10 rows with 3 positives (0.3).
    risk = np.linspace(0.05, 0.95, 20)
    group = np.array([True] * 10 + [False] * 10)
    y = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1, 1] + [1, 1, 1, 0, 0, 0, 0, 0, 0, 0])
    result = risk_based_flipping(y, risk, group, np.ones(20, bool))
    record = result.cell(True)
    assert record.alpha == pytest.approx(3.0) and record.target == 3 and record.beta == 3
    # The three lowest-risk positives of the group (rows 4, 5, 6) are flipped.
    np.testing.assert_array_equal(np.flatnonzero(result.changed), [4, 5, 6])
    assert record.filter_holds is True and record.status == ADJUSTED


def test_round_half_up_is_exact():
    assert round_half_up_ratio(5, 1, 2) == 3  # 2.5 -> 3 (Python's round gives 2)
    assert round_half_up_ratio(3, 1, 2) == 2  # 1.5 -> 2
    assert round_half_up_ratio(7, 1, 3) == 2  # 2.33 -> 2
    assert round_half_up_ratio(0, 5, 7) == 0


def test_already_equal_cell_is_left_alone_and_said_so():
    risk = np.array([0.9, 0.2, 0.8, 0.1])
    group = np.array([True, True, False, False])
    y = np.array([1, 0, 1, 0])
    for result in (risk_based_flipping(y, risk, group), selective_risk_adjustment(risk, group)):
        assert result.n_changed == 0
        assert result.cell(None).status == EQUAL
        assert "same ratio" in result.cell(None).message


def test_empty_class_is_left_alone_without_division_by_zero():
    risk = np.array([0.9, 0.2, 0.8, 0.1])
    group = np.array([True, True, True, True])
    y = np.array([1, 0, 1, 1])
    for result in (risk_based_flipping(y, risk, group), selective_risk_adjustment(risk, group)):
        assert result.n_changed == 0
        record = result.cell(None)
        assert record.status == EMPTY_CLASS and record.alpha is None
        assert record.ratio_other_before is None
    # Empty class only in the filter cell: the other cell is untouched too (not selected).
    filt = np.array([True, True, False, False])
    group2 = np.array([True, True, True, False])
    result = risk_based_flipping(y, risk, group2, filt)
    assert result.cell(True).status == EMPTY_CLASS and result.n_changed == 0


def test_within_tolerance_is_left_alone():
    risk = np.arange(40) / 40
    group = np.arange(40) < 20
    y = np.r_[np.ones(11), np.zeros(9), np.ones(10), np.zeros(10)].astype(int)  # 0.55 vs 0.50
    assert risk_based_flipping(y, risk, group, tolerance=0.1).cell(None).status == WITHIN_TOLERANCE
    assert risk_based_flipping(y, risk, group, tolerance=0.0).cell(None).status == ADJUSTED


@pytest.mark.parametrize("call, words", [
    (lambda: risk_based_flipping([1, 0], [0.1, np.nan], [True, False]), "missing"),
    (lambda: risk_based_flipping([1, 2], [0.1, 0.2], [True, False]), "must be coded 0"),
    (lambda: risk_based_flipping([1], [0.1, 0.2], [True, False]), "labels"),
    (lambda: selective_risk_adjustment([0.1, 0.2], [True], None), "one entry per row"),
    (lambda: selective_risk_adjustment([0.1, 0.2], [True, False], direction="sideways"), "direction"),
    (lambda: relabel(3, [1, 0], [0.1, 0.2], [True, False]), "algorithm"),
])
def test_bad_input_is_a_plain_error(call, words):
    with pytest.raises(LuskinError, match=words):
        call()
