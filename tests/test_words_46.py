"""Issue 46's words: a gap carries its own sign (never only its interval), each EEOC stratum's sentence names its
stratum and whom it is compared with, and a dashboard download heads its added columns in words."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from luskin_core import scan
from luskin_core.analyses.scan import ScanSpec
from luskin_core.formatting import format_points


def _low_group_frame() -> pd.DataFrame:
    """A group whose rate is 20 points below everyone else's: its gap is negative."""
    rng = np.random.default_rng(46)
    n = 20_000
    frame = pd.DataFrame({"a": rng.integers(0, 4, n), "b": rng.integers(0, 3, n)})
    p = np.where((frame.a == 2) & (frame.b == 1), 0.2, 0.4)
    frame["y"] = (rng.random(n) < p).astype(int)
    return frame


def test_a_scan_findings_gap_is_written_with_its_sign_beside_its_interval():
    result = scan(_low_group_frame(), ScanSpec("y", 1, ("a", "b"), depth=2, min_size=30, replicates=99, seed=1))
    finding = next(f for f in result.findings if f.conditions == {"a": 2, "b": 1})
    assert finding.difference < 0
    gap = format_points(finding.difference, 1, signed=True)
    assert gap.startswith("-")
    assert f"a gap of {gap} points (" in finding.sentence, finding.sentence
    low, high = format_points(finding.ci_low, 1, signed=True), format_points(finding.ci_high, 1, signed=True)
    assert f"CI {low} to {high} points" in finding.sentence
    # no bare unsigned number of points before an interval anywhere in the sentence
    assert not re.search(r"gap of \d", finding.sentence)


def test_each_eeoc_stratums_sentence_names_its_stratum_and_its_reference():
    from luskin_core import load_sample
    from luskin_core.analyses.audit import audit
    from luskin_core.analyses.regulator_eeoc import eeoc_output
    from luskin_core.spec.audit_spec import AuditSpec

    result = audit(load_sample("adult"), AuditSpec(outcome="income", positive=">50K", group_by=("race",),
                                                   strata=("sex",)))
    output = eeoc_output(result)
    rows = [r for p in output.parts for r in p.rows]
    assert {r.cell for r in rows} == {"sex = Female", "sex = Male"}
    for r in rows:   # read alone in the page's list of every stratum's sentences, each says where and against whom
        assert r.sentence.startswith(f"In {r.cell}, {r.group} against {r.reference}: "), r.sentence
    sentences = output.sentences()
    assert all(s.startswith("In sex = ") for s in sentences[:len(rows)])


def test_an_eeoc_sentence_without_strata_names_its_reference():
    from luskin_core import load_sample
    from luskin_core.analyses.audit import audit
    from luskin_core.analyses.regulator_eeoc import eeoc_output
    from luskin_core.spec.audit_spec import AuditSpec

    result = audit(load_sample("adult"), AuditSpec(outcome="income", positive=">50K", group_by=("sex",)))
    (row,) = eeoc_output(result).parts[0].rows
    assert row.sentence.startswith("Female against Male: below four-fifths"), row.sentence


def test_the_proxy_download_heads_its_probabilities_in_words_and_keeps_the_users_columns():
    from luskin_core.analyses.proxy import PROB_COLUMNS, probabilities_in_words

    frame = pd.DataFrame({"last_name": ["GARCIA"], "zip_code": ["10001"],
                          **{c: [1 / len(PROB_COLUMNS)] for c in PROB_COLUMNS}})
    shown = probabilities_in_words(frame)
    assert list(shown.columns[:2]) == ["last_name", "zip_code"]   # the user's own names, untouched
    assert list(shown.columns[2:]) == ["Probability Hispanic", "Probability White", "Probability Black",
                                       "Probability Asian/Pacific Islander",
                                       "Probability American Indian/Alaska Native", "Probability Multiracial"]
    assert not [c for c in shown.columns[2:] if "_" in c]
    assert shown.iloc[0, 2:].tolist() == frame.iloc[0, 2:].tolist()
