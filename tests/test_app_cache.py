"""Cached results are shared by the server but never handed out as one object (issue 15 §3).

Two AppTest sessions of one process share Streamlit's caches, as two browsers on one server do.
The first session alters everything mutable in what the caches gave it (the audit's count arrays
and dicts, a long computation's result, the sample's frame); the second must still see the
originals. With ``st.cache_resource`` handing out its one object, each of these checks fails.
"""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

TIMEOUT = 300  # seconds for one script run: generous, a loaded 2-core machine is slow (a wait, not a speed check)


def _tamper() -> None:
    import streamlit as st

    from luskin_app import choices, dataset, session
    from luskin_app.auditing import run_audit
    from luskin_app.cache import cached_run

    session.start()
    spec, problem = choices.current_spec()
    assert spec is not None, problem
    result = run_audit(spec)
    result.counts.n[0, 0] += 1_000_000          # numpy arrays inside a frozen dataclass are writable
    result.excluded_reasons["tampered"] = 1
    result.counts.extra["tampered"] = True
    dataset.dataset().frame["tampered"] = 1      # a new column in the session's frame
    dataset.dataset().frame.iloc[0, 0] = -7
    held = cached_run("cache-test", "one", lambda: {"rows": [1, 2, 3]})
    held["rows"].append(4)
    st.write("tampered")


def _look() -> None:
    import streamlit as st

    from luskin_app import choices, dataset, session
    from luskin_app.auditing import run_audit
    from luskin_app.cache import cached_run

    session.start()
    spec, problem = choices.current_spec()
    assert spec is not None, problem
    result = run_audit(spec)
    frame = dataset.dataset().frame
    held = cached_run("cache-test", "one", lambda: {"rows": ["computed again"]})
    st.session_state["seen"] = {
        "n00": int(result.counts.n[0, 0]),
        "reasons": sorted(result.excluded_reasons),
        "extra": "tampered" in result.counts.extra,
        "column": "tampered" in frame.columns,
        "first": str(frame.iloc[0, 0]),
        "held": held["rows"],
    }


def _run(script: object) -> AppTest:
    at = AppTest.from_function(script, default_timeout=TIMEOUT).run()   # type: ignore[arg-type]
    assert not at.exception, at.exception
    return at


def test_one_session_changing_a_cached_result_does_not_change_another_sessions() -> None:
    before = _run(_look).session_state["seen"]
    assert before["held"] == [1, 2, 3] or before["held"] == ["computed again"]
    _run(_tamper)
    after = _run(_look).session_state["seen"]
    assert after["n00"] == before["n00"]
    assert "tampered" not in after["reasons"]
    assert not after["extra"]
    assert not after["column"]
    assert after["first"] == before["first"] != "-7"
    assert after["held"] == before["held"]


def test_a_session_changing_its_copy_keeps_it_for_itself() -> None:
    """The copy is the session's: what it changed stays changed for it within the run."""
    def script() -> None:
        import streamlit as st

        from luskin_app import dataset, session

        session.start()
        dataset.dataset().frame["mine"] = 1
        st.session_state["has"] = "mine" in dataset.dataset().frame.columns

    assert _run(script).session_state["has"]
