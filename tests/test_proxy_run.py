"""The proxy audit as an entry of the analyses' table (issue 45): ``analysis("proxy").runner()(data, spec, options)``.

Its specification declares its groups as estimated (race from surname and place, in no column) and says the rest as
any audit's does; the one Judgement made from it decides the verdicts, and ProxyOptions say how race is estimated.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from proxy_loans import loans_file

from luskin_cli.main import main
from luskin_core.analyses.proxy import add_probabilities
from luskin_core.analyses.proxy_audit import proxy_audit
from luskin_core.analyses.proxy_run import proxy_spec
from luskin_core.errors import LuskinError
from luskin_core.present.report_parts import analysis
from luskin_core.spec.audit_spec import ESTIMATED_RACE, AuditSpec
from luskin_core.spec.options import ProxyOptions
from luskin_core.stats.judgement import Judgement
from luskin_core.stats.verdict import Verdict

OPTIONS = ProxyOptions(surname="surname", place="zip")


@pytest.fixture()
def loans(tmp_path):
    """The command line's test file (tests/test_cli_proxy.py), with a region to stratify by."""
    return loans_file(tmp_path, region=True)


def _run(data, spec, options=OPTIONS):
    return analysis("proxy").runner()(data, spec, options)


def _verdicts(result) -> list[tuple[str, str, str]]:
    return [(c.method, c.group, str(c.verdict)) for c in result.comparisons if not c.is_reference]


# What `luskin audit --proxy surname=surname,zcta=zip --adverse --tolerance 0.1 --reference Black --correction bh
# --min-group-size 10 --json` printed on this file before the proxy audit was an entry of the table (b06f429).
OLD_VERDICTS = [
    ("birdie", "Hispanic", "beyond tolerance"), ("birdie", "White", "beyond tolerance"),
    ("birdie", "Asian/Pacific Islander", "beyond tolerance"), ("birdie", "American Indian/Alaska Native", "too few rows"),
    ("birdie", "Multiracial", "beyond tolerance but could be chance"), ("weighted", "Hispanic", "beyond tolerance"),
    ("weighted", "White", "beyond tolerance"), ("weighted", "Asian/Pacific Islander", "beyond tolerance"),
    ("weighted", "American Indian/Alaska Native", "too few rows"), ("weighted", "Multiracial", "within tolerance"),
    ("threshold", "Hispanic", "beyond tolerance"), ("threshold", "White", "too few rows"),
    ("threshold", "Asian/Pacific Islander", "beyond tolerance"),
    ("threshold", "American Indian/Alaska Native", "too few rows"), ("threshold", "Multiracial", "too few rows")]


def test_the_table_entry_gives_the_result_of_the_old_call_and_of_the_command(loans, capsys):
    """The entry's result is the old call's (the verdicts and numbers the command printed before), the low-level
    proxy_audit's given the Judgement of the specification, and the command's JSON, which runs the entry."""
    path, frame = loans
    spec = proxy_spec("approved", "yes", outcome_is="adverse", tolerance=0.1, reference="Black", correction="bh",
                      min_group_size=10)
    result = _run(frame, spec)
    assert (result.reference, result.outcome_is, result.tolerance) == ("Black", "adverse", 0.1)
    assert (result.n_rows, result.n_audited, result.n_unassigned) == (1200, 1133, 563)
    assert _verdicts(result) == OLD_VERDICTS
    white = {c.method: c for c in result.comparisons if c.group == "White"}
    assert white["weighted"].difference == pytest.approx(0.12352709458130395, abs=1e-15)
    assert white["weighted"].p_adjusted == pytest.approx(4.714264359972366e-06, rel=1e-9)
    assert white["birdie"].difference == pytest.approx(0.3009915660701525, abs=1e-9)
    assert result.sentences()[0].startswith("By the outcome-aware estimate (BIRDiE), among all rows: approved is yes "
                                            "for 56% of estimated Hispanic (about 363 rows) against the reference "
                                            "Black: a gap of 18 points")

    with_p, estimate = add_probabilities(frame, surname="surname", geography="zip")
    y = (frame["approved"] == "yes").to_numpy(float)
    direct = proxy_audit(with_p, y, judgement=Judgement.of(spec), options=OPTIONS, decision="approved is yes",
                         places=frame["zip"], proxy=estimate.to_dict())
    assert direct.to_dict() == result.to_dict()

    assert main(["audit", "--data", str(path), "--outcome", "approved", "--positive", "yes", "--proxy",
                 "surname=surname,zcta=zip", "--adverse", "--tolerance", "0.1", "--reference", "Black",
                 "--correction", "bh", "--min-group-size", "10", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(result.to_dict()))


def test_the_judgement_the_specification_gives_decides_the_proxy_audits_verdicts(loans):
    """The direction, the tolerance, the metric and its threshold, and the reference given in the specification
    reach the verdicts through the entry; the Judgement's alpha reaches them too (before, the proxy audit built its
    own Judgement from thirteen keywords: its alpha could not be set)."""
    _, frame = loans
    base = proxy_spec("approved", "yes")
    favourable = _run(frame, base)
    adverse = _run(frame, base.with_changes(outcome_is="adverse"))
    assert favourable.reference == "White" and favourable.outcome_is == "favourable"
    # an adverse outcome: the most favoured group is the one with the lowest share of the counted outcome
    lowest = min((c for c in favourable.comparisons if c.method == "birdie" and c.n >= 30), key=lambda c: c.rate)
    assert adverse.reference == lowest.group != "White" and adverse.outcome_is == "adverse"

    strict, lenient = (_run(frame, base.with_changes(tolerance=t)) for t in (0.0, 0.99))
    judged = [c for c in lenient.comparisons if not c.is_reference and c.verdict != Verdict.TOO_FEW]
    assert judged and all(c.verdict == Verdict.WITHIN for c in judged)
    assert any(c.verdict == Verdict.BEYOND for c in strict.comparisons)
    assert "the 99-point tolerance" in " ".join(lenient.sentences())

    ratio = _run(frame, base.with_changes(metric="ratio", ratio_threshold=0.9))
    for c in ratio.comparisons:
        if not c.is_reference and c.verdict != Verdict.TOO_FEW and c.method != "threshold":
            assert (c.verdict == Verdict.WITHIN) == (min(c.impact_ratio, 1 / c.impact_ratio) >= 0.9)
    assert _run(frame, base.with_changes(reference="Hispanic")).reference == "Hispanic"

    with_p, _ = add_probabilities(frame, surname="surname", geography="zip")
    y = (frame["approved"] == "yes").to_numpy(float)
    judgement = Judgement.of(base)
    usual = proxy_audit(with_p, y, judgement=judgement)
    beyond = [(c.method, c.group) for c in usual.comparisons if c.verdict == Verdict.BEYOND]
    assert beyond
    none_significant = proxy_audit(with_p, y, judgement=replace(judgement, alpha=1e-300))
    for c in none_significant.comparisons:
        if (c.method, c.group) in beyond:
            assert c.verdict == Verdict.CHANCE


def test_where_the_data_lives_the_entry_gives_the_in_memory_verdicts(loans, tmp_path):
    """A Parquet file's path (streamed with Arrow; with strata, opened with DuckDB) gives the rows' verdicts."""
    _, frame = loans
    parquet = tmp_path / "loans.parquet"
    frame.to_parquet(parquet)
    for spec in (proxy_spec("approved", "yes"), proxy_spec("approved", "yes", strata=("region",), metric="ratio")):
        memory, engine = _run(frame, spec), _run(str(parquet), spec)
        assert engine.proxy["engine"] == ("parquet" if spec.strata else "arrow")   # DuckDB reads the file
        assert _verdicts(engine) == _verdicts(memory)
        assert engine.proxy["methods"] == memory.proxy["methods"]
    assert any(c.cell == "region = north" for c in engine.comparisons)


def test_what_the_proxy_audit_cannot_honour_is_refused_in_words(loans):
    _, frame = loans
    with pytest.raises(LuskinError, match="compares groups of race estimated from surname and place"):
        _run(frame, AuditSpec("approved", "yes", group_by=("zip",)))
    with pytest.raises(LuskinError, match="does not take a filter"):
        _run(frame, proxy_spec("approved", "yes", filters=("region == north",)))
    with pytest.raises(LuskinError, match="needs the surname column and the place column"):
        _run(frame, proxy_spec("approved", "yes"), ProxyOptions(place="zip"))
    with pytest.raises(LuskinError, match="no recorded race|recorded race to check against"):
        _run(frame, proxy_spec("approved", "yes"), replace(OPTIONS, recorded="nope"))
    with pytest.raises(LuskinError, match="The threshold method's probability must be a probability above 0"):
        ProxyOptions(threshold=0)
    with pytest.raises(LuskinError, match="'zcta' \\(ZIP codes\\) or 'tract'"):
        ProxyOptions(level="county")
    with pytest.raises(LuskinError, match="The estimated groups must be 'race estimated from surname and place'"):
        AuditSpec("approved", "yes", estimated="race from the moon")
    with pytest.raises(LuskinError, match="Choose one way to form groups"):
        AuditSpec("approved", "yes", estimated=ESTIMATED_RACE, group_by=("zip",))


def test_estimated_groups_are_refused_by_the_analyses_that_count_columns(loans, tmp_path, capsys):
    """A specification of estimated groups round-trips through its JSON, but an audit of columns (the library's
    audit, a command given it as --config) says in words that only the proxy audit estimates them."""
    from luskin_core import audit

    path, frame = loans
    spec = proxy_spec("approved", "yes", outcome_is="adverse")
    assert AuditSpec.from_json(spec.to_json()) == spec and json.loads(spec.to_json())["estimated"] == ESTIMATED_RACE
    with pytest.raises(LuskinError, match="only the proxy audit can estimate"):
        audit(frame, spec)
    saved = tmp_path / "proxy.json"
    saved.write_text(spec.to_json(), encoding="utf-8")
    assert main(["audit", "--data", str(path), "--config", str(saved)]) == 2
    err = capsys.readouterr().err
    assert "only the proxy audit can estimate" in err and "Traceback" not in err
