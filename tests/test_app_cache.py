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


def test_a_long_computation_survives_the_rerun_that_stops_its_page() -> None:
    """A click elsewhere while a retraining runs stops the page's script run (Streamlit raises StopException
    from the next element drawn, here the progress bar): the work goes on, the next run waits for the same
    computation (no second start, no second click) and gets its result, which is then kept."""
    import threading

    from streamlit.runtime.scriptrunner_utils.exceptions import StopException

    from luskin_app.cache import background_run, is_cached, is_running

    go, calls, seen = threading.Event(), [], []

    def compute(report: object) -> dict[str, int]:
        calls.append(1)
        report(0.5, "half way")   # type: ignore[operator]
        assert go.wait(60)
        return {"auc": 7}

    def interrupted(fraction: float, message: str) -> None:
        seen.append((fraction, message))
        if message == "half way":
            raise StopException()

    try:
        background_run("bg-test", "survives", compute, interrupted, poll=0.01)
        raise AssertionError("the page's run was not stopped")
    except StopException:
        pass
    assert is_running("bg-test", "survives") and not is_cached("bg-test", "survives")
    go.set()
    again = background_run("bg-test", "survives", lambda report: {"auc": -1}, poll=0.01)
    assert again == {"auc": 7} and len(calls) == 1
    assert is_cached("bg-test", "survives") and not is_running("bg-test", "survives")
    again["auc"] = 0   # the caller's own copy
    assert background_run("bg-test", "survives", lambda report: {"auc": -1}) == {"auc": 7}
    assert (0.5, "half way") in seen


def test_a_failed_long_computation_is_said_to_every_waiter_and_not_kept() -> None:
    """Two sessions waiting for the same computation both get its error; asking again computes again."""
    import threading

    from luskin_app.cache import background_run, is_cached, is_running
    from luskin_core.errors import LuskinError

    go, calls = threading.Event(), []

    def failing(report: object) -> None:
        calls.append(1)
        assert go.wait(60)
        raise LuskinError("The outcome column has one value only.")

    errors: list[str] = []
    waiting: set[int] = set()

    def wait() -> None:
        try:
            background_run("bg-test", "fails", failing, lambda f, m: waiting.add(threading.get_ident()), poll=0.01)
        except LuskinError as err:
            errors.append(str(err))

    waiters = [threading.Thread(target=wait) for _ in range(2)]
    for thread in waiters:
        thread.start()
    for _ in range(6000):
        if len(waiting) == 2:   # both are waiting for the computation (their progress is being drawn)
            break
        threading.Event().wait(0.01)
    go.set()
    for thread in waiters:
        thread.join(60)
    assert errors == ["The outcome column has one value only."] * 2 and len(calls) == 1
    assert not is_cached("bg-test", "fails") and not is_running("bg-test", "fails")
    assert background_run("bg-test", "fails", lambda report: "second try") == "second try"


def test_the_server_refuses_more_long_computations_than_it_can_run_and_says_so() -> None:
    """Four computations under way at once: a fifth click is refused in words (not queued behind the others
    to slow every session); when one finishes, the next is accepted."""
    import threading

    import pytest

    from luskin_app.cache import MAX_JOBS, background_run, is_running
    from luskin_core.errors import LuskinError

    go = threading.Event()
    waiters = [threading.Thread(target=background_run, args=("bg-test", f"busy-{i}", lambda report: go.wait(60)),
                                kwargs={"poll": 0.01}) for i in range(MAX_JOBS)]
    for thread in waiters:
        thread.start()
    for _ in range(6000):
        if all(is_running("bg-test", f"busy-{i}") for i in range(MAX_JOBS)):
            break
        threading.Event().wait(0.01)
    with pytest.raises(LuskinError, match="already running 4 long computations"):
        background_run("bg-test", "one too many", lambda report: "never")
    assert not is_running("bg-test", "one too many")
    go.set()
    for thread in waiters:
        thread.join(60)
    assert background_run("bg-test", "one too many", lambda report: "now") == "now"
