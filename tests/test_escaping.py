"""User text never reaches Markdown or HTML unescaped: the app's helper, the charts, and the pages.

A CSV whose values hold Markdown (``![x](https://attacker/beacon.png)``) or HTML made the Data
and Audit pages load an outside image and show live links. Here: the Markdown escaper
(luskin_app.ui.md) on hostile strings and as a property over any text, the dropdown shortener,
the chart escaper (luskin_core.present.plots.label) on every builder, and the pages (AppTest) on a file
whose column names and values are hostile: every Markdown body carries them escaped, every
chart string without a tag. tests/browser/test_hostile_browser.py checks the same in Chromium.
"""

from __future__ import annotations

import json
import re
import string
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from luskin_app.ui import md, option_text, unescape
from luskin_core.analyses.audit import audit
from luskin_core.present import plots
from luskin_core.spec.audit_spec import AuditSpec

APP = str(Path(__file__).resolve().parent.parent / "app.py")
EVIL_IMAGE = "![x](https://attacker.example/beacon.png)"
EVIL_LINK = "[click](https://attacker.example/x)"
EVIL_HTML = '<img src="https://attacker.example/i.png">'
EVIL_ANCHOR = '<a href="https://attacker.example/a">a</a>'
EVIL_MISC = "$x^2$ :smile: :red[red] www.attacker.example a@attacker.example **b** `c` # h"
EVIL_COLUMN = "[n](https://attacker.example/n)"
HOSTILE = [EVIL_IMAGE, EVIL_LINK, EVIL_HTML, EVIL_ANCHOR, EVIL_MISC, "&lt;b&gt; &amp;", "- item", "1. one",
           "back\\slash", "> quote", "a|b|c", "~~s~~", "=== ---", "<script>alert(1)</script>"]
PUNCTUATION = set(string.punctuation)
# What would be live markup in a Markdown body: a tag, a link or image, a URL or address GFM links,
# LaTeX or an emoji shortcode (each escaped form breaks the pattern).
# a link into the page itself (the Data page's "Skip to the verdict", issue 46) is the app's own, not the data's
LIVE = [re.compile(p) for p in (r"(?<!\\)<(?:img|a\b|script)", r"(?<!\\)\]\((?!#luskin-)", r"https?://", r"www\.attacker",
                                r"\w@attacker", r"\$x\^2\$", r":smile:", r":red\[")]


def _live(text: str) -> list[str]:
    return [p.pattern for p in LIVE if p.search(text)]


def _unescaped_punctuation(text: str) -> list[str]:
    """ASCII punctuation in ``text`` not preceded by the escaping backslash."""
    found, i = [], 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            i += 2
            continue
        if text[i] in PUNCTUATION:
            found.append(text[i])
        i += 1
    return found


# ------------------------------------------------------------------------------------------
# The Markdown escaper
# ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", HOSTILE)
def test_md_shows_the_text_exactly_and_leaves_no_markup(text: str) -> None:
    out = md(text)
    assert unescape(out) == text
    assert not _unescaped_punctuation(out)
    assert not _live(out), out
    assert _live(text) or text in ("&lt;b&gt; &amp;", "- item", "1. one", "back\\slash", "> quote", "a|b|c",
                                   "~~s~~", "=== ---")   # the check itself sees the raw markup


def test_md_breaks_autolinks_and_line_structure() -> None:
    out = md("see https://attacker.example/p and www.attacker.example or mail a@attacker.example")
    assert "https" not in out and "www" not in out and "a@" not in out   # split by an invisible word joiner
    assert md("first line\n\n# second\r\n- third") == "first line \\# second \\- third"
    assert unescape(md("x" * 500, limit=100)) == "x" * 100 + "… (500 characters)"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(exclude_characters="\u2060\r\n\u2028\u2029\x0b\x0c\x85")))
def test_md_round_trips_any_text(text: str) -> None:
    out = md(text)
    assert unescape(out) == text
    assert not _unescaped_punctuation(out)


def test_option_text_shortens_long_values_uniquely() -> None:
    assert option_text("White") == "White" and option_text(42) == "42"
    a, b = "Z" * 5_000, "Z" * 4_999 + "Y"
    assert len(option_text(a)) < 120 and "5,000 characters" in option_text(a)
    assert option_text(a) != option_text(b)


# ------------------------------------------------------------------------------------------
# Charts
# ------------------------------------------------------------------------------------------
def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return []


def _assert_no_tags(figure: Any) -> None:
    allowed = ("<br>", "<b>", "</b>", "<extra>", "</extra>")
    for text in _strings(figure.to_plotly_json()):
        rest = text
        for tag in allowed:
            rest = rest.replace(tag, "")
        assert "<" not in rest, text


@pytest.fixture(scope="module")
def hostile_frame() -> pd.DataFrame:
    rng = np.random.default_rng(11)
    n = 900
    race = rng.choice(["White", EVIL_IMAGE, EVIL_LINK], n, p=[0.5, 0.3, 0.2])
    branch = rng.choice([EVIL_MISC, "plain"], n)
    p = 0.3 + 0.2 * (race == "White") + 0.1 * (branch == "plain")
    return pd.DataFrame({
        "decision": np.where(rng.random(n) < p, "yes", "no"), "race": race, EVIL_HTML: rng.choice(["p", "q"], n),
        "branch": branch, EVIL_COLUMN: rng.integers(0, 100, n), "score": rng.random(n),
    })


def test_every_chart_escapes_user_text(hostile_frame: pd.DataFrame) -> None:
    from luskin_core.corrections.thresholds import tune_thresholds

    spec = AuditSpec("decision", "yes", protected={"column": "race", "op": "==", "value": EVIL_IMAGE},
                     filters=({"column": "branch", "op": "==", "value": EVIL_MISC},), other_label=EVIL_ANCHOR)
    result = audit(hostile_frame, spec)
    bars = plots.audit_bars(result)
    _assert_no_tags(bars)
    # legend names are shortened (plots.shorten) and escaped; the hover carries the whole escaped label
    assert bars.data[0].name == plots.short_label(EVIL_IMAGE) and bars.data[1].name == plots.short_label(EVIL_ANCHOR)
    assert plots.label(EVIL_IMAGE) in bars.data[0].hovertemplate
    assert "&lt;a href=\"https://attacker.example/a\">a&lt;/a>" in bars.data[1].hovertemplate
    assert any("&lt;" in t for t in _strings(bars.to_plotly_json()))
    _assert_no_tags(plots.gap_comparison({EVIL_HTML: result, "after": result}))
    report = tune_thresholds(hostile_frame, spec.with_changes(filters=()), model=None, score_column="score")
    _assert_no_tags(plots.threshold_roc(report, spec, "test"))
    hist = {(EVIL_IMAGE, 1): [0.5, 0.5], (EVIL_ANCHOR, 1): [0.2, 0.8]}
    _assert_no_tags(plots.score_histograms(hist, [0, 0.5, 1], EVIL_IMAGE, EVIL_ANCHOR, alpha=0.5))


def test_label_escapes_only_what_can_open_a_tag() -> None:
    assert plots.label("<a href='x'>&amp;") == "&lt;a href='x'>&amp;amp;"
    assert plots.label(">50K") == ">50K"


# ------------------------------------------------------------------------------------------
# The pages (AppTest) on a hostile file
# ------------------------------------------------------------------------------------------
MARKDOWN_KINDS = ("markdown", "caption", "error", "warning", "info", "success", "title", "subheader", "header")
WIDGETS = ("selectbox", "multiselect", "number_input", "text_input", "button", "radio", "checkbox", "slider",
           "expander", "tabs")


def _bodies(at: AppTest) -> list[str]:
    """Every string Streamlit renders as Markdown: element bodies, metric labels, widget labels."""
    out = [str(e.value) for kind in MARKDOWN_KINDS for e in getattr(at, kind)]
    out += [str(m.label) for m in at.metric]
    for kind in WIDGETS:
        out += [str(getattr(w, "label", "")) for w in getattr(at, kind, [])]
    return out


def _assert_safe(at: AppTest) -> list[str]:
    bodies = _bodies(at)
    for body in bodies:
        assert not _live(body), (_live(body), body[:300])
    return bodies


def test_pages_escape_hostile_column_names_and_values(hostile_frame: pd.DataFrame) -> None:
    at = AppTest.from_file(APP, default_timeout=300).run()
    at.file_uploader(key="upload_csv").set_value((f"{EVIL_IMAGE}.csv", hostile_frame.to_csv(index=False).encode(),
                                                  "text/csv")).run()
    assert not at.exception
    assert at.multiselect(key="protected_values").value == [EVIL_IMAGE]   # the guess: the second largest group
    bodies = _assert_safe(at)
    assert any(md(EVIL_IMAGE) in b for b in bodies)                       # shown, as text
    if at.radio(key="outcome_is").value is None:   # the names do not say which way is good: the page asks (issue 46)
        at.radio(key="outcome_is").set_value("favourable").run()
    at.button(key="data_confirm").click().run()
    bodies = _assert_safe(at)
    # three values in the column: the rest is "everyone else", named as on every page (issue 27)
    assert any(f"comparing **{md(EVIL_IMAGE)}** with **everyone else**" in b for b in bodies)
    at.selectbox(key="protected_column").set_value(EVIL_COLUMN).run()    # a number: "Value of <name>" label
    assert at.number_input(key="protected_number").label == f"Value of {md(EVIL_COLUMN)}"
    _assert_safe(at)
    at.selectbox(key="protected_column").set_value("race").run()
    at.multiselect(key="protected_values").set_value([EVIL_IMAGE]).run()
    at.text_input(key="other_label").input(EVIL_ANCHOR).run()
    _assert_safe(at)

    at.switch_page("app_pages/audit.py").run()
    at.selectbox(key="filter_column").set_value("branch").run()
    at.selectbox(key="filter_value_pick").set_value(EVIL_MISC).run()
    at.button(key="filter_add").click().run()
    assert not at.exception
    bodies = _assert_safe(at)
    assert any(md(f"branch is {EVIL_MISC}") in b for b in bodies)
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    figure_text = json.dumps(spec)
    assert "<img" not in figure_text and "<a " not in figure_text and "<a href" not in figure_text

    at.switch_page("app_pages/report.py").run()
    assert not at.exception
    _assert_safe(at)
    sidebar = " ".join(str(m.value) for m in at.sidebar.markdown)
    assert md(EVIL_IMAGE, 80) in sidebar and "https://" not in sidebar
