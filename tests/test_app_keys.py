"""Session-state keys are declared in one place, luskin_app/keys.py (issue 15 §3).

Reads the dashboard's source (app.py, app_pages/, luskin_app/) and fails on any string literal
used as a key of ``st.session_state`` outside keys.py: a key typed twice can be typed two ways.
"""

from __future__ import annotations

import re
from pathlib import Path

from luskin_app import keys

ROOT = Path(__file__).resolve().parent.parent
LITERAL_KEY = [
    re.compile(r'session_state\[\s*f?["\']'),                                  # st.session_state["x"]
    re.compile(r'session_state\.(?:get|pop|setdefault|__contains__)\(\s*f?["\']'),   # .get("x"), .pop("x")
    re.compile(r'["\'][\w.-]+["\']\s+(?:not\s+)?in\s+st\.session_state'),     # "x" in st.session_state
    # An alias (ss = st.session_state; ss["x"]) would hide its keys from the patterns above: none is allowed.
    re.compile(r'(?:=|:=|\bas)\s*(?:st\.)?session_state\s*(?:#.*)?$'),
]


def _sources() -> list[Path]:
    files = [ROOT / "app.py", *sorted((ROOT / "app_pages").glob("*.py")), *sorted((ROOT / "luskin_app").glob("*.py"))]
    return [f for f in files if f.name != "keys.py"]


def literal_keys(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if any(p.search(line) for p in LITERAL_KEY)]


def test_the_check_finds_a_literal_key() -> None:
    assert literal_keys('x = st.session_state["dataset"]\nif "a" in st.session_state:\n')
    assert literal_keys("st.session_state.pop('x', None)")
    assert not literal_keys("st.session_state[keys.DATASET] = data")
    assert literal_keys("    ss = st.session_state\n    ss.get('filter_op')")   # an alias is refused itself
    assert literal_keys("state: Any = st.session_state  # shorter")
    assert not literal_keys("st.session_state[keys.RESULTS] = results")


def test_no_session_state_key_is_a_literal_outside_keys_py() -> None:
    found = [f"{path.relative_to(ROOT)}: {line}" for path in _sources() for line in literal_keys(path.read_text())]
    assert not found, "use a name from luskin_app/keys.py:\n" + "\n".join(found)


def test_keys_are_distinct_names_for_distinct_keys() -> None:
    values = {name: value for name, value in vars(keys).items() if name.isupper()}
    assert len(values) >= 40
    assert len(set(values.values())) == len(values), "two names for one key"
