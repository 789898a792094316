"""The paper's Table 5 with intervals (issue 49): the test-set TPR/FPR gaps with 95% intervals, and the spread of
the same run over seeds 0-9, on the command line, in its JSON and in the report."""

from __future__ import annotations

import json

import pytest
from statsmodels.stats.proportion import confint_proportions_2indep

from luskin_cli.main import main


def _json(capsys, *argv: str) -> dict:
    assert main(["thresholds", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_test_set_gaps_have_newcombe_intervals(capsys):
    document = _json(capsys, "--preset", "compas", "--score-column", "decile_score")
    after = document["after"]
    groups = list(after["groups"].values())
    for rate, count in (("tpr", "positives"), ("fpr", None)):
        ranked = sorted(groups, key=lambda g: g[rate])
        high, low = ranked[-1], ranked[0]

        def counts(g: dict, rate: str = rate, count: str | None = count) -> tuple[int, int]:
            n = g["positives"] if count else g["n"] - g["positives"]
            return round(g[rate] * n), n

        want = confint_proportions_2indep(*counts(high), *counts(low), method="newcomb", compare="diff")
        assert after[f"{rate}_gap_ci95"] == pytest.approx(list(want), abs=1e-9)
        assert after[f"{rate}_gap"] == pytest.approx(high[rate] - low[rate])
        assert after[f"{rate}_gap_ci95"][0] < after[f"{rate}_gap"] < after[f"{rate}_gap_ci95"][1]


def test_the_spread_over_seeds_0_to_9_on_the_command_line(capsys):
    assert main(["thresholds", "--preset", "compas", "--score-column", "decile_score", "--spread"]) == 0
    out = capsys.readouterr().out
    assert "Test rows, after: TPR gap" in out and "(95% CI" in out
    assert "Over seeds 0-9 (10 splits" in out and "both gaps at most 5.0 points in" in out
    document = _json(capsys, "--preset", "compas", "--score-column", "decile_score", "--spread")
    spread = document["seed_spread"]
    assert spread["seeds"] == list(range(10)) and len(spread["tpr_gaps"]) == 10
    assert spread["within_target"] == sum(t <= 0.05 and f <= 0.05 for t, f in zip(spread["tpr_gaps"],
                                                                                    spread["fpr_gaps"]))
    assert len(set(spread["tpr_gaps"])) > 1   # ten different splits


def test_the_report_gives_the_intervals_the_spread_and_a_scan(tmp_path):
    path = tmp_path / "report.html"
    assert main(["report", "--preset", "compas", "--html", str(path), "--thresholds", "--score-column",
                 "decile_score", "--spread", "--scan", "sex,age_cat,c_charge_degree"]) == 0
    text = path.read_text()
    assert "The gaps on the test rows, with their 95% intervals, and over seeds 0-9" in text
    assert "Over seeds 0-9 (10 splits" in text and "95% CI" in text
    assert "Subgroup scan: where the gaps are" in text and "cleared the bar" in text


def test_a_scan_option_without_the_scan_is_refused_in_words(tmp_path, capsys):
    status = main(["report", "--preset", "compas", "--html", str(tmp_path / "r.html"), "--scan-depth", "2"])
    err = capsys.readouterr().err
    assert status == 2 and "add --scan COLS" in err and "Traceback" not in err


def test_the_thresholds_page_gives_the_intervals_and_offers_the_spread():
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    app = str(Path(__file__).resolve().parent.parent / "app.py")
    at = AppTest.from_file(app, default_timeout=240).run()
    at.switch_page("app_pages/thresholds.py").run()
    assert not at.exception, at.exception
    captions = " ".join(str(c.value) for c in at.caption).replace("\\", "")   # the page escapes Markdown
    assert "Test rows, after: TPR gap" in captions and "95% CI" in captions
    assert "thr_spread" in [c.key for c in at.checkbox]   # ten more runs only when asked for
