"""Cached computations and the results kept for the report.

Computations are keyed on the data's fingerprint and the specification's JSON (and a page's
options), so that revisiting a page or going back to an earlier choice is instant. The caches
are shared by every session of the server, and hold only what is derived from those keys: two
sessions on different data never see each other's results. A shared result is never handed out
itself: :func:`shared` and :func:`cached_run` give every caller its own copy, so that a page (or
a later change to one) that alters a result in one session cannot alter what another session sees.
"""

from __future__ import annotations

import copy
import functools
import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

import streamlit as st

from luskin_core.errors import LuskinError
from luskin_core.spec.audit_spec import AuditSpec

from . import dataset as _dataset
from . import keys, trail

F = TypeVar("F", bound=Callable[..., Any])


def private(value: Any) -> Any:
    """A caller's own copy of a shared cached value (frames copy on write; the rest deep-copied)."""
    return copy.deepcopy(value)


def shared(**options: Any) -> Callable[[F], F]:
    """``st.cache_resource`` for results: computed once per server, but every call gets its own copy.

    ``st.cache_resource`` hands the very same object to every session, so one session changing a
    result (a frame's column, a dict) would change it for all; ``st.cache_data`` copies too, but
    by pickling, which some results (fitted models, open sources) do not survive and which costs
    more than a deep copy (4.7 ms vs 0.5 ms for the Adult audit).
    """
    def wrap(func: F) -> F:
        cached = st.cache_resource(**options)(func)

        @functools.wraps(func)
        def call(*args: Any, **kwargs: Any) -> Any:
            return private(cached(*args, **kwargs))

        call.clear = cached.clear  # type: ignore[attr-defined]
        return call  # type: ignore[return-value]
    return wrap


@st.cache_resource(show_spinner=False)
def _result_store() -> tuple[OrderedDict[str, Any], threading.Lock]:
    """Results of long computations, shared by all sessions of this server (most recent last)."""
    return OrderedDict(), threading.Lock()


def cached_run(kind: str, key: str, compute: Callable[[], Any], limit: int = 16) -> Any:
    """``compute()`` once per key, remembered across reruns, pages and sessions.

    Unlike st.cache_resource this lets ``compute`` drive a progress bar created on the page
    (Streamlit cannot replay elements drawn inside a cached function into another layout).
    A failure (e.g. a LuskinError) is not remembered.
    """
    store, lock = _result_store()
    full = f"{kind}|{key}"
    with lock:
        if full in store:
            store.move_to_end(full)
            return private(store[full])
    value = compute()
    _keep(store, lock, full, value, limit)
    return private(value)


def _keep(store: OrderedDict[str, Any], lock: threading.Lock, full: str, value: Any, limit: int) -> None:
    """Remember a result, forgetting the least recently used past ``limit``."""
    with lock:
        store[full] = value
        while len(store) > limit:
            store.popitem(last=False)


Progress = Callable[[float, str], None]


class _Job:
    """A long computation on a thread of its own, started by a click.

    A page's script run stops when the user touches any widget while it runs (Streamlit reruns it);
    a retraining done in the script itself was lost then, and the page showed its button again as if
    nothing had been asked. On its own thread the work goes on: the next run finds it, shows its
    progress and its result (:func:`background_run`, :func:`is_running`).
    """

    def __init__(self) -> None:
        self.done = threading.Event()
        self.fraction = 0.0
        self.message = "Starting…"
        self.value: Any = None
        self.error: BaseException | None = None

    def report(self, fraction: float, message: str) -> None:
        """The computation's progress, read by whichever script run waits for it."""
        self.fraction, self.message = fraction, message


# Long computations under way at once on one server (each holds a core and its data's memory): a click past
# this is refused in plain words rather than slowing every analyst's session.
MAX_JOBS = 4


@st.cache_resource(show_spinner=False)
def _jobs() -> tuple[dict[str, _Job], threading.Lock]:
    """Computations under way, shared by all sessions (two sessions asking the same thing share one)."""
    return {}, threading.Lock()


def background_run(kind: str, key: str, compute: Callable[[Progress], Any], show: Progress | None = None,
                   limit: int = 16, poll: float = 0.2) -> Any:
    """``compute(report)`` once per key, on its own thread, remembered like :func:`cached_run`.

    The calling script run waits, passing the latest ``report(fraction, message)`` to ``show`` (a
    progress bar on the page). When the run is stopped by a rerun, the computation goes on and a
    later call with the same key waits for it rather than starting it again. A failure is raised
    to every caller waiting and is not remembered.
    """
    store, lock = _result_store()
    jobs, jobs_lock = _jobs()
    full = f"{kind}|{key}"
    with jobs_lock:
        job = jobs.get(full)
        if job is None:
            with lock:
                if full in store:
                    store.move_to_end(full)
                    return private(store[full])
            if len(jobs) >= MAX_JOBS:
                raise LuskinError(f"The server is already running {len(jobs)} long computations (retraining or "
                                  "training models) for its analysts. Press the button again in a minute, when "
                                  "one has finished; your data and choices are kept.")
            job = jobs[full] = _Job()
            # the stores are passed: no Streamlit call off the script's thread
            threading.Thread(target=_work, args=(job, full, compute, limit, ((store, lock), (jobs, jobs_lock))),
                             name=f"luskin-{kind}", daemon=True).start()
    while not job.done.wait(poll):
        if show is not None:
            show(job.fraction, job.message)   # a rerun requested meanwhile stops this run here, not the work
    if job.error is not None:
        raise job.error
    return private(job.value)


def _work(job: _Job, full: str, compute: Callable[[Progress], Any], limit: int,
          stores: tuple[tuple[OrderedDict[str, Any], threading.Lock], tuple[dict[str, _Job], threading.Lock]]) -> None:
    """Run one job; keep its result before it leaves the list of jobs under way (no gap for a caller)."""
    (store, lock), (jobs, jobs_lock) = stores
    try:
        job.value = compute(job.report)
        _keep(store, lock, full, job.value, limit)
    except BaseException as err:  # noqa: BLE001 - handed to the waiting script run, which shows it
        job.error = err
    finally:
        with jobs_lock:
            jobs.pop(full, None)
        job.done.set()


def is_running(kind: str, key: str) -> bool:
    """Whether a :func:`background_run` with this key is under way (the page then waits for it, no click)."""
    jobs, jobs_lock = _jobs()
    with jobs_lock:
        return f"{kind}|{key}" in jobs


def is_cached(kind: str, key: str) -> bool:
    """Whether ``cached_run`` already holds this result (then the page shows it without a click)."""
    store, lock = _result_store()
    with lock:
        return f"{kind}|{key}" in store


def options_key(options: dict[str, Any]) -> str:
    """A stable cache key for a page's options."""
    return json.dumps(options, sort_keys=True, default=str)


def remember(kind: str, spec: AuditSpec, result: Any) -> None:
    """Keep a page's latest result (retrain, thresholds, equalized) for the report."""
    st.session_state.setdefault(keys.RESULTS, {})[kind] = (_dataset.dataset().fingerprint, spec.to_json(), result)
    # the record: one line per analysis (a rerun that shows it again writes nothing)
    trail.note(kind, settings={"spec": trail.spec_settings(spec), "options": _options_of(result)},
               produced=trail.result_text(result))


def _options_of(result: Any) -> Any:
    """A result's own settings where it keeps them (a correction's options), as plain JSON."""
    for name in ("options", "settings", "params"):
        value = getattr(result, name, None)
        if value is not None:
            try:
                return json.loads(json.dumps(value, default=str))
            except (TypeError, ValueError):
                return str(value)[:500]
    return None


def keep_result(kind: str, result: Any) -> None:
    """Keep the latest result of a page that depends on the data and its own settings only (the scan, the proxy
    audit), for the report and the deck; the page records its run itself."""
    st.session_state.setdefault(keys.RESULTS, {})[kind] = (_dataset.dataset().fingerprint, "", result)


def recall(kind: str, spec: AuditSpec | None = None) -> Any:
    """A page's latest result if it was made from the current data and specification (``spec`` None: a result
    kept by :func:`keep_result`, tied to the data only), else None."""
    saved = st.session_state.get(keys.RESULTS, {}).get(kind)
    wanted = spec.to_json() if spec is not None else ""
    if saved and saved[0] == _dataset.dataset().fingerprint and saved[1] == wanted:
        return saved[2]
    return None
