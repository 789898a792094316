"""AppTest of the Proxy audit page: columns from dropdowns, fallback counts, the table, bounds and caveats."""

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


def test_proxy_page_counts_fallbacks_and_shows_both_methods_bounds_and_caveats():
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.file_uploader(key="upload_csv").set_value(("loans.csv", _loans(), "text/csv")).run()
    assert not at.exception, at.exception
    at.switch_page("app_pages/proxy.py").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="proxy_surname").value == "last_name"
    assert at.selectbox(key="proxy_place").value == "zip"
    at.selectbox(key="proxy_outcome").set_value("approved").run()
    at.selectbox(key="proxy_positive").set_value("yes").run()
    assert not at.exception, at.exception
    fallbacks = at.dataframe[0].value  # the counts come first, then the table
    counts = dict(zip(fallbacks["how the row was estimated"], fallbacks["rows"]))
    assert counts["place only (surname not found)"] > 0 and counts["surname only (place not found)"] > 0
    table = at.dataframe[1].value
    assert set(table["method"]) == {"weighted", "threshold"}
    text = "\n".join(unescape(str(e.value)) for kind in ("markdown", "info", "warning") for e in getattr(at, kind))
    assert "Bounds, Black against" in text and "understate" in text and "overstate" in text
    # a surname written as Markdown is shown as written, never as a link or bold
    assert not any("](http" in str(e.value) and "\\]" not in str(e.value) for e in at.markdown)
    at.slider(key="proxy_threshold").set_value(0.95).run()
    assert not at.exception, at.exception
    again = at.dataframe[1].value
    assert (again["rows"] != table["rows"]).any()
