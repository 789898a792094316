"""Cached results are shared by the server but never handed out as one object (issue 15 §3).

Two AppTest sessions of one process share Streamlit's caches, as two browsers on one server do.
The first session alters everything mutable in what the caches gave it (the audit's count arrays
and dicts, a long computation's result, the sample's frame); the second must still see the
originals. With ``st.cache_resource`` handing out its one object, each of these checks fails.
"""

from __future__ import annotations

from collections.abc import Callable

from streamlit.testing.v1 import AppTest

TIMEOUT = 300  # seconds for one script run: generous, a loaded 2-core machine is slow (a wait, not a speed check)


def is_running(kind: str, key: str) -> bool:
    """Whether a background run with this key is under way for this owner (read from the jobs' table)."""
    from luskin_app import cache

    jobs, lock = cache._jobs()
    with lock:
        job = jobs.get(cache._full(kind, key))
        return job is not None and not job.done.is_set()


def is_cached(kind: str, key: str) -> bool:
    """Whether this owner's result is kept (read from the results' store)."""
    from luskin_app import cache

    return cache._result_store().has(cache._full(kind, key))


def _until(condition: Callable[[], bool], what: str, seconds: float = 60) -> None:
    """Wait until ``condition()`` holds (what the action must change); fail saying ``what`` did not happen."""
    import threading
    import time

    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"{what} within {seconds:g} s"
        threading.Event().wait(0.01)


def _tamper() -> None:
    import streamlit as st

    from luskin_app import choices, dataset, session
    from luskin_app.auditing import run_audit
    from luskin_app.cache import cached_run

    session.start()
    spec, problem = choices.current_spec()
    assert spec is not None, problem
    result = run_audit(spec)
    assert result.counts is not None
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
    assert result.counts is not None
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

    from luskin_app.cache import background_run

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

    from luskin_app.cache import background_run
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
    # both are waiting for the computation (their progress is being drawn)
    _until(lambda: len(waiting) == 2, "the two waiters did not both wait for the computation")
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

    from luskin_app.cache import MAX_JOBS, background_run
    from luskin_core.errors import LuskinError

    go = threading.Event()
    waiters = [threading.Thread(target=background_run, args=("bg-test", f"busy-{i}", lambda report: go.wait(60)),
                                kwargs={"poll": 0.01}) for i in range(MAX_JOBS)]
    for thread in waiters:
        thread.start()
    _until(lambda: all(is_running("bg-test", f"busy-{i}") for i in range(MAX_JOBS)),
           f"the {MAX_JOBS} computations were not all under way")
    with pytest.raises(LuskinError, match="already running 4 long computations"):
        background_run("bg-test", "one too many", lambda report: "never")
    assert not is_running("bg-test", "one too many")
    go.set()
    for thread in waiters:
        thread.join(60)
    assert background_run("bg-test", "one too many", lambda report: "now") == "now"


def test_results_are_shared_within_an_owner_only_and_go_with_forget(monkeypatch) -> None:
    """Issue 47: the result store was keyed on the data alone, so bob, uploading the bytes alice had and making her
    choices, was shown her retraining without pressing Retrain. Now an owner's results are theirs; another owner
    computes them again, and "Forget" drops the owner's results (a computation of theirs finishing later is not kept)."""
    import threading

    from luskin_app import auth, cache

    who = {"id": "https://idp|alice"}
    monkeypatch.setattr(auth, "user_id", lambda: who["id"])
    calls: list[str] = []

    @cache.shared(max_entries=8)
    def tuned(fingerprint: str, _frame: object) -> dict[str, str]:
        calls.append(who["id"])
        return {"by": who["id"]}

    assert cache.cached_run("owner-test", "same-bytes", lambda: {"by": "alice"}) == {"by": "alice"}
    assert tuned("fp-1", None) == {"by": "https://idp|alice"}
    assert cache.background_run("owner-test", "job", lambda report: "alice's model") == "alice's model"
    assert is_cached("owner-test", "same-bytes") and is_cached("owner-test", "job")
    who["id"] = "https://idp|bob"
    assert not is_cached("owner-test", "same-bytes") and not is_cached("owner-test", "job")
    assert cache.cached_run("owner-test", "same-bytes", lambda: {"by": "bob"}) == {"by": "bob"}
    assert tuned("fp-1", None) == {"by": "https://idp|bob"} and len(calls) == 2
    assert cache.background_run("owner-test", "job", lambda report: "bob's model") == "bob's model"
    # Alice forgets everything of hers: her results go, bob's stay.
    who["id"] = "https://idp|alice"
    assert cache.forget_owner() >= 3
    assert not is_cached("owner-test", "same-bytes") and not is_cached("owner-test", "job")
    assert tuned("fp-1", None) == {"by": "https://idp|alice"} and len(calls) == 3   # computed again
    who["id"] = "https://idp|bob"
    assert is_cached("owner-test", "same-bytes") and tuned("fp-1", None) == {"by": "https://idp|bob"}
    # A computation under way when its owner forgets is not kept afterwards.
    go = threading.Event()
    started = threading.Thread(target=cache.background_run, args=("owner-test", "slow", lambda r: go.wait(60)),
                               kwargs={"poll": 0.01})
    started.start()
    _until(lambda: is_running("owner-test", "slow"), "the slow computation was not under way")
    cache.forget_owner()
    go.set()
    started.join(60)
    assert not is_cached("owner-test", "slow")


def _job_ended(kind: str) -> None:
    """Wait until the job threads of ``kind`` have ended (their result kept, their place in the table settled)."""
    import threading

    for thread in [t for t in threading.enumerate() if t.name == f"luskin-{kind}"]:
        thread.join(60)
        assert not thread.is_alive(), f"{thread.name} did not end"


def _asked_then_interrupted(kind: str, key: str, compute: object) -> None:
    """Press the page's button, then have its script run stopped by a rerun (a click elsewhere, another page, a
    reconnect) while the job is under way: nobody waits for the job any more."""
    from streamlit.runtime.scriptrunner_utils.exceptions import StopException

    from luskin_app.cache import background_run

    def interrupted(fraction: float, message: str) -> None:
        raise StopException()

    try:
        background_run(kind, key, compute, interrupted, poll=0.01)   # type: ignore[arg-type]
        raise AssertionError("the page's run was not stopped")
    except StopException:
        pass


def test_a_result_finished_while_nobody_waited_is_shown_when_the_page_comes_back(monkeypatch) -> None:
    """CI saw the Retrain page back at its button, no result and no error, minutes after the click had shown the
    progress bar. A job that ended while no run waited for it (the run had been stopped by a rerun) left the table
    of jobs under way; its result was only in the server's store of 16 results, which every owner's results share,
    and other analysts' results had pushed it out before the page ran again: the page asked for a click again and
    the next click computed it all again. Now a finished job stays in the table until a run of its owner has
    collected it."""
    import threading

    from luskin_app import auth, cache

    go, calls = threading.Event(), []

    def compute(report: object) -> dict[str, int]:
        calls.append(1)
        assert go.wait(60)
        return {"auc": 7}

    _asked_then_interrupted("bg-lost", "evicted", compute)
    go.set()
    _job_ended("bg-lost")
    mine = auth.user_id()
    monkeypatch.setattr(auth, "user_id", lambda: "https://idp|someone-else")
    for i in range(40):   # another analyst's page runs meanwhile, each keeping a result
        def finding(i: int = i) -> dict[str, int]:
            return {"finding": i}

        cache.cached_run("their-scan", str(i), finding)
    monkeypatch.setattr(auth, "user_id", lambda: mine)
    assert cache.is_asked("bg-lost", "evicted"), "the job was lost: the page shows its button again"
    assert cache.background_run("bg-lost", "evicted", lambda report: {"auc": -1}) == {"auc": 7}
    assert len(calls) == 1


def test_a_failure_while_nobody_waited_is_shown_to_the_next_run_then_forgotten() -> None:
    """A job that fails while no run waits for it: the next run of the page says why (before, the error went
    with the job and the page showed its button again, no result and no error); the run after that may ask again."""
    import threading

    import pytest

    from luskin_app import cache
    from luskin_core.errors import LuskinError

    go = threading.Event()

    def failing(report: object) -> None:
        assert go.wait(60)
        raise LuskinError("The outcome column has one value only.")

    _asked_then_interrupted("bg-lost", "fails unseen", failing)
    go.set()
    _job_ended("bg-lost")
    assert cache.is_asked("bg-lost", "fails unseen"), "the failure was lost: the page shows its button, no error"
    with pytest.raises(LuskinError, match="one value only"):
        cache.background_run("bg-lost", "fails unseen", lambda report: "computed again")
    assert not cache.is_asked("bg-lost", "fails unseen")   # said once, not remembered: the button comes back
    assert cache.background_run("bg-lost", "fails unseen", lambda report: "computed again") == "computed again"


def test_forgetting_one_file_keeps_the_jobs_of_the_others(monkeypatch) -> None:
    """"Forget this file" drops that file's results; a retraining of another file under way then is kept (it was
    thrown away, and shown lost, when any file of the same owner was forgotten while it ran)."""
    import threading

    from luskin_app import cache

    go = threading.Event()
    _asked_then_interrupted("bg-lost", "fp-other|spec|LR/LR", lambda report: go.wait(60) and "model of the other")
    cache.forget_owner(containing="fp-forgotten")
    go.set()
    _job_ended("bg-lost")
    assert cache.background_run("bg-lost", "fp-other|spec|LR/LR", lambda report: "again") == "model of the other"
    assert is_cached("bg-lost", "fp-other|spec|LR/LR")
    # while a job of the forgotten file itself is neither kept nor shown afterwards
    go.clear()
    _asked_then_interrupted("bg-lost", "fp-forgotten|spec|LR/LR", lambda report: go.wait(60) and "forgotten model")
    cache.forget_owner(containing="fp-forgotten")
    go.set()
    _job_ended("bg-lost")
    assert not cache.is_asked("bg-lost", "fp-forgotten|spec|LR/LR")
    assert cache.background_run("bg-lost", "fp-forgotten|spec|LR/LR", lambda report: "again") == "again"


def test_finished_jobs_nobody_collects_do_not_pile_up_or_block_new_ones() -> None:
    """Jobs whose pages were closed before they ended are kept for their owner a while, a bounded number of them,
    and do not count among the computations under way (MAX_JOBS)."""
    import threading

    from luskin_app import cache

    for i in range(cache.MAX_JOBS + cache.MAX_UNSEEN + 3):
        go = threading.Event()
        _asked_then_interrupted("bg-unseen", f"closed-{i}", lambda report, i=i, go=go: go.wait(60) and f"result {i}")
        go.set()
        _job_ended("bg-unseen")
    jobs, lock = cache._jobs()
    with lock:
        unseen = [full for full in jobs if "|bg-unseen|" in full]
    assert len(unseen) == cache.MAX_UNSEEN
    last = cache.MAX_JOBS + cache.MAX_UNSEEN + 2
    assert cache.is_asked("bg-unseen", f"closed-{last}")
    assert cache.background_run("bg-unseen", "new", lambda report: "accepted") == "accepted"
