"""Issue 46: one rule for what is a category. A number code with few values (an education level 0-5) is a control
of categories in the adjusted gaps by default, as the Audit and the Scan read it; a number with many values stays a
straight line; the choice is said in the result, on the command line and in its JSON, with how to change it."""

from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf

from luskin_core.analyses.adjust import adjust
from luskin_core.counting.memory import cut_into_ranges
from luskin_core.spec.audit_spec import AuditSpec

SPEC = AuditSpec(outcome="approved", positive=1, group_by=("group",), reference="a")


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    """An education code 0-5 whose effect is far from a straight line, and a debt ratio with thousands of values."""
    rng = np.random.default_rng(46)
    n = 6_000
    group = rng.choice(["a", "b", "c"], n)
    code = np.where(group == "b", rng.integers(0, 4, n), rng.integers(0, 6, n))   # b's codes lower, as in life
    dti = rng.normal(30, 8, n).round(2)
    effect = np.array([0.0, 1.6, 0.1, 2.1, -0.6, 1.1])[code]
    p = 1 / (1 + np.exp(-(-0.4 + effect - 0.5 * (group == "b") - 0.2 * (group == "c") - 0.02 * dti)))
    return pd.DataFrame({"group": group, "edu_level": code, "dti": dti,
                         "approved": (rng.random(n) < p).astype(int)})


def _statsmodels_gaps(frame: pd.DataFrame, formula: str) -> dict[str, float]:
    """Each group's average marginal effect against 'a' from a statsmodels fit: the mean predicted approval with
    every row set to the group minus with every row set to 'a' (Stata's margins for a factor)."""
    fitted = smf.logit(formula, frame).fit(disp=False, method="newton", tol=1e-12, maxiter=100)
    base = fitted.predict(frame.assign(group="a")).mean()
    return {g: float(fitted.predict(frame.assign(group=g)).mean() - base) for g in ("b", "c")}


def test_a_code_with_few_values_is_categories_by_default_and_equals_statsmodels_with_C(frame):
    assert not cut_into_ranges(frame["edu_level"]) and cut_into_ranges(frame["dti"])   # the audit's own reading
    result = adjust(frame, SPEC, ["edu_level", "dti"])
    assert result.codes == ("edu_level",) and "edu_level" in result.categorical and result.numbers == ("dti",)
    expected = _statsmodels_gaps(frame, "approved ~ C(group) + C(edu_level) + dti")
    for gap in result.gaps:
        assert gap.adjusted_difference == pytest.approx(expected[gap.group], abs=1e-6)
    # the straight line through the codes is a different, wrong model here: asked for by name, it is that fit
    line = adjust(frame, SPEC, ["edu_level", "dti"], as_numbers=["edu_level"])
    assert line.codes == () and line.numbers == ("edu_level", "dti")
    straight = _statsmodels_gaps(frame, "approved ~ C(group) + edu_level + dti")
    for gap in line.gaps:
        assert gap.adjusted_difference == pytest.approx(straight[gap.group], abs=1e-6)
    assert abs(line.gaps[0].adjusted_difference - result.gaps[0].adjusted_difference) > 0.01
    # said in words: which were read as categories, which as numbers
    assert "Read as categories, each value its own effect: edu_level (a number code with few values" in result.reading
    assert "Read as numbers, each a straight line (or a curve where asked): dti." in result.reading


def test_a_number_with_many_values_stays_a_straight_line(frame):
    result = adjust(frame, SPEC, ["dti"])
    assert result.codes == () and result.categorical == () and result.numbers == ("dti",)
    fitted = _statsmodels_gaps(frame, "approved ~ C(group) + dti")
    assert result.gaps[0].adjusted_difference == pytest.approx(fitted[result.gaps[0].group], abs=1e-6)


def test_an_engine_reads_the_code_alike(frame):
    from luskin_core.counting.sources import Source

    memory = adjust(frame, SPEC, ["edu_level", "dti"])
    engine = adjust(Source.from_frame(frame), SPEC, ["edu_level", "dti"])
    assert engine.codes == memory.codes == ("edu_level",)
    assert [g.adjusted_difference for g in engine.gaps] == pytest.approx([g.adjusted_difference for g in memory.gaps],
                                                                         abs=1e-9)


def test_a_code_asked_for_both_ways_or_text_as_a_number_is_refused_in_words(frame):
    from luskin_core.errors import LuskinError

    with pytest.raises(LuskinError, match="both as categories and as a number"):
        adjust(frame, SPEC, ["dti"], categorical=["edu_level"], as_numbers=["edu_level"])
    with pytest.raises(LuskinError, match="holds text, so it cannot be fitted as a straight line"):
        adjust(frame.assign(branch="x"), SPEC, ["dti"], as_numbers=["branch"])


def test_the_command_line_says_how_each_control_was_read_and_how_to_change_it(frame, tmp_path):
    from luskin_cli.main import main

    path = tmp_path / "loans.csv"
    frame.to_csv(path, index=False)
    base = ["adjust", "--data", str(path), "--outcome", "approved", "--positive", "1", "--groups", "group",
            "--reference", "a", "--controls", "edu_level,dti"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(base) == 0
    text = " ".join(out.getvalue().split())
    assert "Read as categories, each value its own effect: edu_level" in text
    assert "Read as numbers, each a straight line (or a curve where asked): dti." in text
    assert ("To change it: --as-numbers COLUMN fits a number code as a straight line; --categorical COLUMN reads a "
            "number as categories.") in text
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main([*base, "--as-numbers", "edu_level", "--json"]) == 0
    payload = json.loads(out.getvalue())
    assert payload["codes"] == [] and payload["numbers"] == ["edu_level", "dti"]
    assert "Read as numbers" in payload["reading"]
