"""Four kinds of outcome walked through every page of the sidebar, at 1024x768 and 1280x800 (issue 46).

A new user's files, made here: an adverse outcome whose name does not say which way is good (``death_penalty``
Yes/No, with a date column: the Data page asks and the user answers "Bad for the person"), an outcome of several
positive values (``result``: Pass or Distinction of Pass/Distinction/Fail/Withdrawn), integer codes (``edu_level``
0..5, a stratum on the Audit page and a control of the adjusted gaps) and a score (``ai_score`` 0-100, read above
its median). Each file is uploaded on the Data page, its questions answered, and each page of the sidebar that
applies (Audit, Over time with a date column, Adjusted gaps, Regulator tables, Scan, Amounts for a number, Report,
Present) opened once: checked at the window's size, then with the window resized to the other size (the page is not
run again). On each: no exception box, the page's main answer drawn (its heading and its chart, table or slide), and
the words right for the case.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import UI

pytestmark = pytest.mark.browser

SIZES = {"1024x768": {"width": 1024, "height": 768}, "1280x800": {"width": 1280, "height": 800}}
POSITIVE = "Positive values (what counts as a 'yes'; several are counted together)"
CHART = '[data-testid="stPlotlyChart"] .main-svg'
GRID = '[data-testid="stMain"] [data-testid="stDataFrame"]'
# Each page: its heading, and the selector of its main answer (drawn once the page's own run has made it).
PAGES: dict[str, tuple[str | re.Pattern[str], str]] = {
    "Audit": ("Audit: is the outcome shared fairly between the groups?", ".st-key-audit_result :is(h2, h3)"),
    "Over time": ("Over time: do the gaps move?", CHART),
    "Adjusted gaps": ("Adjusted gaps: what remains once the controls are held equal", ".st-key-adj_gaps_chart .main-svg"),
    "Regulator tables": ("Regulator tables", GRID),
    "Scan": ("Scan: where are the gaps nobody asked about?", ".st-key-scan_chart .main-svg"),
    "Amounts": ("Amounts", GRID),
    "Report": ("Report: take the results to the committee", '[data-testid="stDownloadButton"]'),
    "Present": (re.compile(r"^Slide 1 of \d+$"), ".st-key-present_deck"),
}
# What a reader sees of the page: the main area's words and the charts' text.
PAGE_TEXT = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const svg = [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stPlotlyChart"] .main-svg text')]
    .map((t) => t.textContent || "");
  return (main ? main.innerText : "") + "\\n" + svg.join("\\n");
}"""


@dataclass
class Case:
    """One file and what its walk checks."""

    name: str
    frame: pd.DataFrame
    pages: list[str]
    answer: Callable[[UI], None]            # the Data page's questions, answered as the user would
    ready: str                             # the Data page's "Ready: comparing ..." once answered
    audit: Callable[[UI], None] | None = None   # settings chosen on the Audit page before its check
    adjusted: list[str] = field(default_factory=list)   # controls held equal on the Adjusted gaps page


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def death_penalty() -> pd.DataFrame:
    """An adverse outcome named so that nothing says which way is good: Black defendants sentenced to death more
    often (24% against 12%), over 36 months."""
    rng = _rng(461)
    n = 1500
    race = rng.choice(["Black", "White"], n, p=[0.4, 0.6])
    rate = np.where(race == "Black", 0.24, 0.12)
    return pd.DataFrame({
        "sentence_date": pd.Timestamp("2019-01-01") + pd.to_timedelta(rng.integers(0, 36 * 30, n), unit="D"),
        "defendant_race": race, "sex": rng.choice(["Male", "Female"], n, p=[0.85, 0.15]),
        "county": rng.choice(["Dade", "Duval", "Orange", "Pinellas"], n),
        "death_penalty": np.where(rng.random(n) < rate, "Yes", "No")})


def results() -> pd.DataFrame:
    """Four values of a result, two of them good: women pass (or pass with distinction) more often."""
    rng = _rng(462)
    n = 1600
    gender = rng.choice(["F", "M"], n)
    good = np.where(gender == "F", 0.62, 0.50)
    u = rng.random(n)
    result = np.select([u < good * 0.3, u < good, u < good + (1 - good) * 0.6], ["Distinction", "Pass", "Fail"],
                       "Withdrawn")
    return pd.DataFrame({"gender": gender, "region": rng.choice(["North", "South", "East"], n),
                         "result": result})


def education_codes() -> pd.DataFrame:
    """Integer codes 0..5 of an education level beside a hiring decision: men hired more often at every level."""
    rng = _rng(463)
    n = 1800
    sex = rng.choice(["Female", "Male"], n)
    edu = rng.integers(0, 6, n)
    rate = 0.15 + 0.06 * edu + 0.08 * (sex == "Male")
    return pd.DataFrame({"sex": sex, "edu_level": edu, "hired": np.where(rng.random(n) < rate, "yes", "no")})


def ai_scores() -> pd.DataFrame:
    """An automated tool's score 0-100 (one decimal) for an applicant pool: White applicants score higher."""
    rng = _rng(464)
    n = 1500
    race = rng.choice(["White", "Black", "Hispanic", "Asian"], n, p=[0.4, 0.25, 0.2, 0.15])
    sex = rng.choice(["Female", "Male"], n)
    score = np.clip(rng.normal(55, 15, n) + 8 * (race == "White"), 0, 100).round(1)
    return pd.DataFrame({"race": race, "sex": sex, "ai_score": score})


def _answer_direction(meaning: str) -> Callable[[UI], None]:
    def answer(ui: UI) -> None:
        label = ui.page.get_by_text(re.compile(rf"^{meaning} \(")).locator("visible=true").first
        label.wait_for()
        ui.rerun_by(label.click)
        assert ui.page.get_by_role("radio", name=re.compile(rf"^{meaning} \(")).first.is_checked(), meaning
    return answer


def _answer_several(ui: UI) -> None:
    """Pass (Luskin's guess) and Distinction: the second typed into the focused box, as a keyboard user does (a
    click on the box's middle can land on the first value's tag and its remove button)."""
    box = ui.page.get_by_role("combobox", name=POSITIVE, exact=True).locator("visible=true").first

    def add() -> None:
        box.focus()
        ui.page.keyboard.type("Distinction")
        ui.page.get_by_role("option", name="Distinction", exact=True).locator("visible=true").first.wait_for()
        ui.page.keyboard.press("Enter")

    if "Distinction" not in ui.chosen(POSITIVE):
        ui.rerun_by(add)
        ui.page.keyboard.press("Escape")
    assert sorted(ui.chosen(POSITIVE)) == ["Distinction", "Pass"], ui.chosen(POSITIVE)


def _strata_edu(ui: UI) -> None:
    ui.rerun_by(lambda: ui.page.get_by_text("Strata: every value of control columns").first.click())
    label = "Control columns (each value, or each combination, is a stratum)"
    ui.page.get_by_role("combobox", name=label, exact=True).first.wait_for()
    ui.choose(label, "edu_level")


CASES = {
    "adverse": Case("adverse", death_penalty(),
                    ["Audit", "Over time", "Adjusted gaps", "Regulator tables", "Scan", "Report", "Present"],
                    _answer_direction("Bad for the person"), "Ready: comparing", adjusted=["county"]),
    "several": Case("several", results(), ["Audit", "Adjusted gaps", "Regulator tables", "Scan", "Report", "Present"],
                    _answer_several, "Ready: comparing", adjusted=["region"]),
    "codes": Case("codes", education_codes(),
                  ["Audit", "Adjusted gaps", "Regulator tables", "Scan", "Report", "Present"],
                  lambda ui: None, "Ready: comparing", audit=_strata_edu, adjusted=["edu_level"]),
    "score": Case("score", ai_scores(),
                  ["Audit", "Adjusted gaps", "Regulator tables", "Scan", "Amounts", "Report", "Present"],
                  _answer_direction("Good for the person"), "Ready: comparing", adjusted=["sex"]),
}


def _upload(ui: UI, case: Case, path: Path) -> None:
    """The file uploaded at 1024x768, the Data page's questions answered, Luskin's guesses taken."""
    ui.page.set_viewport_size(SIZES["1024x768"])
    ui.open()
    ui.wait_text("Ready: comparing")
    ui.idle()
    ui.page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(path))
    # this file's page, not the one a previous walk left in this browser (the server keeps an upload for the tab):
    # its name in the sidebar, then its guesses
    ui.page.locator('section[data-testid="stSidebar"]').get_by_text(re.compile(re.escape(path.name))).first.wait_for()
    ui.wait_text("Luskin's first guesses for this file")
    ui.idle()
    case.answer(ui)
    ui.page.get_by_role("button", name="Use these choices").first.click()
    ui.wait_text(case.ready)
    ui.idle()


def _visit(ui: UI, title: str, ask: Callable[[UI], None] | None = None) -> str:
    """Open ``title`` from the sidebar, wait for its heading, answer what it asks (``ask``), wait for its main
    answer; the page's text."""
    heading, answer = PAGES[title]
    # the move's own run, heard from the server (rerun_by): a heading or a grid can be found at once on the page
    # before (the sidebar names every page), and the page was then read before its own run had drawn it
    ui.rerun_by(lambda: ui.goto_page(title), timeout=240_000)
    ui.wait_text(heading, timeout=240_000)
    if ask is not None:
        ui.idle()
        ask(ui)
    ui.page.locator(answer).first.wait_for(timeout=240_000)
    ui.idle(240_000)
    # and again once the run is over: what matched first can be the page before's grid, still on screen while this
    # page ran, and this page's own grid is laid out after its run ends (a loaded machine showed the gap once)
    ui.page.locator(answer).first.wait_for(timeout=240_000)
    if ui.page.locator(CHART).count():
        ui.charts_drawn()
    return str(ui.page.evaluate(PAGE_TEXT))


def _check_sizes(ui: UI, title: str) -> list[str]:
    """The page on screen at each size in turn (resized, not run again): no exception, its answer still shown."""
    problems = []
    for size, resized in ui.each_size(SIZES):
        if resized:
            ui.settle(400)
        ui.assert_no_exception()
        if not ui.page.locator(PAGES[title][1]).first.is_visible():
            problems.append(f"{title} at {size}: its main answer is not shown")
    return problems


def _walk(ui: UI, case: Case, tmp_path: Path) -> dict[str, str]:
    path = tmp_path / f"{case.name}.csv"
    case.frame.to_csv(path, index=False)
    _upload(ui, case, path)
    texts = {"Data": str(ui.page.evaluate(PAGE_TEXT))}
    problems: list[str] = []
    for title in case.pages:
        ask = {"Audit": case.audit,
               "Adjusted gaps": lambda ui: ui.choose("Controls held equal", *case.adjusted)}.get(title)
        texts[title] = _visit(ui, title, ask)
        if title == "Regulator tables":
            tabs = ui.page.get_by_role("tab")
            texts[title] += "\n" + "\n".join(tabs.nth(i).inner_text() for i in range(tabs.count()))
        problems += _check_sizes(ui, title)
    assert not problems, "\n".join(problems)
    return texts


def _has(texts: dict[str, str], page: str, pattern: str) -> list[str]:
    """Nothing, when the page's text matches ``pattern``; else what is missing, in words."""
    return [] if re.search(pattern, texts[page]) else [f"{page}: no {pattern!r} on the page"]


def _lacks(texts: dict[str, str], page: str, pattern: str) -> list[str]:
    found = re.search(pattern, texts[page])
    return [f"{page}: {found.group(0)!r} on the page"] if found else []


def test_an_adverse_outcome_names_the_group_it_harms(ui: UI, tmp_path: Path) -> None:
    """death_penalty = Yes, answered "Bad for the person": Black defendants, sentenced to death twice as often, are
    the disfavoured group on every page; the favourable share (spared) is what four-fifths reads."""
    texts = _walk(ui, CASES["adverse"], tmp_path)
    problems = _has(texts, "Data", r"Counted: death_penalty is Yes, adverse \(your choice\)")
    problems += _has(texts, "Audit", r"Yes for 2\d% of Black and 1\d% of White: White favoured by \d+ points")
    problems += [p for page in texts for p in _lacks(texts, page, r"Black favoured")]
    problems += _has(texts, "Over time", r"share without death_penalty is Yes")
    problems += _has(texts, "Adjusted gaps", r"holding county equal, the gap is \+\d")
    problems += _has(texts, "Regulator tables", r"'death_penalty is Yes' is adverse \(bad for the person\), so "
                                                r"\"selected\" counts the favourable decision")
    problems += _has(texts, "Regulator tables", r"Race/ethnicity: the most selected category is White")
    problems += _has(texts, "Scan", r"defendant_race = Black \(\d+ rows\): [\d.]+% where death_penalty is Yes")
    problems += _has(texts, "Present", r"'death_penalty is Yes' is adverse \(bad for the person\): the group with "
                                       r"the lower share is favoured")
    assert not problems, "\n".join(problems)


def test_several_positive_values_are_counted_together_on_every_page(ui: UI, tmp_path: Path) -> None:
    """Pass and Distinction chosen of four results: every page counts and says 'Pass or Distinction' (the Scan
    counted Pass alone: 24.7% against 42.0%, where the audit's shares are 51% and 63%)."""
    texts = _walk(ui, CASES["several"], tmp_path)
    problems = _has(texts, "Data", r"Ready: comparing F with M on the share where result is Pass or Distinction")
    problems += _has(texts, "Audit", r"result is Pass or Distinction for 6\d% of F and 5\d% of M: F favoured")
    for page in ("Adjusted gaps", "Scan", "Present"):
        problems += _has(texts, page, r"result is Pass or Distinction")
    problems += _lacks(texts, "Scan", r"where result is (Pass|Distinction) against")
    problems += _has(texts, "Scan", r"gender = M \(794 rows\): 50\.8% where result is Pass or Distinction")
    problems += _has(texts, "Regulator tables", r"Sex: the most selected category is F")
    assert not problems, "\n".join(problems)


def test_integer_codes_are_categories_on_every_page(ui: UI, tmp_path: Path) -> None:
    """edu_level 0..5 as the Audit's strata and the adjusted gaps' control: its values as categories ('edu_level 1',
    'edu_level = 5'), never a decimal nor a straight line; not offered as a score for Local Law 144."""
    texts = _walk(ui, CASES["codes"], tmp_path)
    problems = [p for page in texts for p in _lacks(texts, page, r"edu_level (is exactly|=|==)? ?\d\.\d")]
    problems += _has(texts, "Audit", r"In the 5 strata of edu_level \(1, 2, 3, 4, 5\)")
    problems += _has(texts, "Audit", r"In edu_level 0, the gap is")
    problems += _has(texts, "Adjusted gaps", r"Read as categories, each value its own effect: edu_level")
    problems += _has(texts, "Scan", r"edu_level = [05] \(\d+ rows\)")
    problems += _has(texts, "Present", r"within each value of edu_level \(6 strata\)")
    problems += _lacks(texts, "Regulator tables", r"Scoring rate of edu_level")
    problems += _has(texts, "Regulator tables", r"Sex: the most selected category is Male; under four-fifths: Female")
    assert not problems, "\n".join(problems)


def test_a_score_is_audited_above_its_median_on_every_page(ui: UI, tmp_path: Path) -> None:
    """ai_score 0-100, read above its median on the Data page: 'above the median' on every page that counts a share,
    the Scan too (it counted one value of the score); the Regulator page's Local Law 144 tables by the scoring rate;
    the Amounts page its means and medians; the Adjusted gaps the share above the median, in points."""
    texts = _walk(ui, CASES["score"], tmp_path)
    problems = [p for page in texts for p in _lacks(texts, page, r"ai_score is exactly|ai_score = \d")]
    problems += _has(texts, "Data", r"Above its median \(strictly above, as NYC Local Law 144's scoring rate\)")
    problems += _has(texts, "Audit", r"ai_score above the median for \d+% of Black and \d+% of everyone else: "
                                     r"everyone else favoured")
    problems += _has(texts, "Scan", r"Counted: ai_score above the median, as chosen on the Data page")
    problems += _has(texts, "Scan", r"race = White \(\d+ rows\): [\d.]+% where ai_score is above the median")
    problems += _has(texts, "Present", r"ai_score above the median")
    problems += _has(texts, "Regulator tables", r"The scoring rate is the share scoring strictly above the median "
                                                r"score of all 1,500 individuals")
    problems += _has(texts, "Regulator tables", r"Race/ethnicity: the most selected category is White; under "
                                                r"four-fifths")
    problems += _has(texts, "Amounts", r"Black: mean [\d.]+ against [\d.]+ for everyone else")
    # the adjusted gaps model the same rows past the median, in points against the 5-point tolerance (issue 45/46:
    # they fitted the mean score, "-3.50 ... larger than the tolerance of 0.05")
    problems += _has(texts, "Adjusted gaps", r"The outcome modelled is ai_score above the median \(57\.4\)")
    problems += _has(texts, "Adjusted gaps", r"holding sex equal, the gap is -\d+\.\d points .* larger than the "
                                             r"5-point tolerance")
    problems += _lacks(texts, "Adjusted gaps", r"tolerance of 0\.05|mean ai_score")
    assert not problems, "\n".join(problems)
