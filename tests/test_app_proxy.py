"""AppTest of the Proxy audit page: columns guessed only from what their values support, the Data page's outcome,
fallback counts, the outcome-aware table with the other estimates for comparison, bounds and caveats as notes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from streamlit.testing.v1 import AppTest

from luskin_app.ui import unescape

APP = str(Path(__file__).resolve().parent.parent / "app.py")


def _loans(n: int = 800) -> bytes:
    rng = np.random.default_rng(1)
    sur = rng.choice(["Garcia", "Smith", "Washington", "Nguyen", "Jackson", "Zzqxv", "*bold* [x](http://e.x)"], n)
    approved = np.where(np.isin(sur, ["Washington", "Jackson"]), rng.random(n) < 0.2, rng.random(n) < 0.7)
    return pd.DataFrame({"last_name": sur, "zip": rng.choice(["10001", "60601", "94110", "30303", "99999"], n),
                         "approved": np.where(approved, "yes", "no")}).to_csv(index=False).encode()


def _text(at: AppTest) -> str:
    return "\n".join(unescape(str(e.value)) for kind in ("markdown", "info", "warning", "caption")
                     for e in getattr(at, kind))


def test_proxy_page_uses_the_data_pages_outcome_and_leads_with_the_outcome_aware_estimate():
    at = AppTest.from_file(APP, default_timeout=300).run()
    at.file_uploader(key="upload_csv").set_value(("loans.csv", _loans(), "text/csv")).run()
    assert not at.exception, at.exception
    at.switch_page("app_pages/proxy.py").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="proxy_surname").value == "last_name"
    assert at.selectbox(key="proxy_place").value == "zip"
    text = _text(at)
    assert "Outcome (chosen on the Data page): **approved** is **yes**" in text
    assert not at.error, [e.value for e in at.error]
    fallbacks = at.dataframe[0].value  # the counts come first, then the table
    counts = dict(zip(fallbacks["how the row was estimated"], fallbacks["rows"]))
    assert counts["place only (surname not found)"] > 0 and counts["surname only (place not found)"] > 0
    table = at.dataframe[1].value
    assert "(reference)" in " ".join(table["estimated group"])
    assert "By the outcome-aware estimate (BIRDiE)" in text and "For comparison only" in text
    assert "Bounds, Black against" in text and "understate" in text and "surname says nothing more" in text
    # the reference has no verdict sentence, and caveats are notes, not warnings
    assert not any(s.startswith("By the") and "estimated White (" in s and "against the reference White" in s
                   for s in text.splitlines())
    assert not at.warning
    # a surname written as Markdown is shown as written, never as a link or bold
    assert not any("](http" in str(e.value) and "\\]" not in str(e.value) for e in at.markdown)
    assert "as narrow as the data allow" in text and "cannot be narrower without a further assumption" in text
    at.slider(key="proxy_threshold").set_value(0.95).run()
    assert not at.exception, at.exception
    # the by-place outcome-aware model is a choice of the page
    at.radio(key="proxy_model").set_value("by-place").run()
    assert not at.exception, at.exception
    assert "By the outcome-aware estimate (BIRDiE, by place)" in _text(at)


def test_a_file_without_surnames_or_places_says_so_plainly():
    rng = np.random.default_rng(2)
    n = 300
    credit = pd.DataFrame({"decile1b": rng.integers(1, 11, n), "limit_bal": rng.integers(1, 50, n) * 10_000,
                           "sex": rng.choice(["M", "F"], n), "default": rng.integers(0, 2, n)})
    at = AppTest.from_file(APP, default_timeout=300).run()
    at.file_uploader(key="upload_csv").set_value(("credit.csv", credit.to_csv(index=False).encode(),
                                                  "text/csv")).run()
    at.switch_page("app_pages/proxy.py").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="proxy_surname").value == "(none)"
    assert at.selectbox(key="proxy_place").value == "(none)"
    text = _text(at)
    assert "No column of this file looks like surnames" in text and "looks like ZIP codes" in text
    assert not at.error, [e.value for e in at.error]


def test_the_page_runs_the_analyses_tables_entry_with_its_judgement():
    """The page's verdicts are the table entry's (``analysis("proxy").runner()``) for the specification of its
    choices: the outcome of the Data page, the tolerance chosen here (10 points) as the one judgement's."""
    import io

    from luskin_core.analyses.proxy_run import proxy_spec
    from luskin_core.present.report_parts import analysis
    from luskin_core.spec.options import ProxyOptions

    raw = _loans()
    at = AppTest.from_file(APP, default_timeout=300).run()
    at.file_uploader(key="upload_csv").set_value(("loans.csv", raw, "text/csv")).run()
    at.switch_page("app_pages/proxy.py").run()
    at.slider(key="proxy_tolerance").set_value(10).run()
    assert not at.exception, at.exception
    frame = pd.read_csv(io.BytesIO(raw), dtype=str)
    expected = analysis("proxy").runner()(frame, proxy_spec("approved", "yes", tolerance=0.1),
                                          ProxyOptions(surname="last_name", place="zip"))
    shown = [unescape(str(e.value)) for e in at.markdown]
    assert "- " + expected.sentences()[0] in shown and "10-point tolerance" in expected.sentences()[0]
    assert all("- " + s in shown for s in expected.sentences())
    table = at.dataframe[1].value
    assert list(table["verdict"]) == ["" if c.is_reference else str(c.verdict)
                                      for c in expected.comparisons if c.method == "birdie"]
