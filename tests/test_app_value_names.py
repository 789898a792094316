"""Names for coded values on the Data page (issue 16: "1" -> "Female"), used by the audit and saved.

The CLI has ``--name COL:VALUE=NAME`` and the specification ``value_names``; the page asks for a
name beside each code of the outcome and protected columns, the audit's words and groups use it,
and the saved configuration carries it back.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from streamlit.testing.v1 import AppTest
from test_app import all_text, goto, open_app, upload

from luskin_app.ui import unescape


def coded_csv(n: int = 800, seed: int = 3) -> bytes:
    """Sex coded A92/A93 (as in the German credit data), hired coded 0/1: a committee reads Female/Male."""
    rng = np.random.default_rng(seed)
    sex = rng.choice(["A92", "A93"], n)
    hired = (rng.random(n) < np.where(sex == "A92", 0.30, 0.45)).astype(int)
    return pd.DataFrame({"sex": sex, "age": rng.integers(20, 60, n), "hired": hired}).to_csv(index=False).encode()


def _name_box(at: AppTest, column: str, code: str) -> object:
    for box in at.text_input:
        if unescape(str(box.label)) == f"{column} = {code}":
            return box
    raise AssertionError(f"no box for {column} = {code}: {[unescape(str(b.label)) for b in at.text_input]}")


def _set_choices(at: AppTest) -> None:
    at.selectbox(key="outcome").set_value("hired").run()
    at.selectbox(key="protected_column").set_value("sex").run()
    at.multiselect(key="protected_values").set_value(["A92"]).run()
    assert not at.exception, at.exception


def test_a_name_typed_for_a_code_reaches_the_audit_and_the_saved_configuration() -> None:
    at = open_app()
    upload(at, coded_csv(), name="coded.csv")
    _set_choices(at)
    _name_box(at, "sex", "A92").input("Female").run()     # type: ignore[attr-defined]
    _name_box(at, "sex", "A93").input("Male").run()       # type: ignore[attr-defined]
    assert not at.exception, at.exception
    assert at.session_state["choices"]["value_names"] == {"sex": {"A92": "Female", "A93": "Male"}}
    goto(at, "audit")
    text = all_text(at)
    assert "Female" in text and "Male" in text
    assert "Non-A92" not in text and "A93" not in text
    goto(at, "report")
    shown = [json.loads(c.value) for c in at.code if '"spec"' in str(c.value)]   # "See the configuration"
    assert shown, "the Report page shows no configuration"
    assert shown[0]["spec"]["value_names"] == {"sex": {"A92": "Female", "A93": "Male"}}


def test_an_emptied_box_takes_the_name_back() -> None:
    at = open_app()
    upload(at, coded_csv(), name="coded.csv")
    _set_choices(at)
    _name_box(at, "sex", "A92").input("Female").run()     # type: ignore[attr-defined]
    _name_box(at, "sex", "A92").input("").run()           # type: ignore[attr-defined]
    assert not at.exception, at.exception
    assert not at.session_state["choices"].get("value_names")
