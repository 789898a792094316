"""Cached computations and the results kept for the report.

Computations are keyed on the data's fingerprint and the specification's JSON (and a page's
options), so that revisiting a page or going back to an earlier choice is instant. The caches
are shared by the server's sessions of one owner (the signed-in user; the one local user without
sign-in), never across owners: a result one analyst computed is not shown to another who uploads the
same bytes and makes the same choices (bob was shown alice's retraining without pressing Retrain, after
she had signed out with "delete my uploads", and the record said bob ran it); the other computes it
again. "Forget everything of mine" drops an owner's results with their uploads (:func:`forget_owner`),
"Forget this file" those of that file. A shared result is never handed out
itself: :func:`shared` and :func:`cached_run` give every caller its own copy, so that a page (or
a later change to one) that alters a result in one session cannot alter what another session sees.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import inspect
import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

import streamlit as st

from luskin_core.errors import LuskinError
from luskin_core.spec.audit_spec import AuditSpec

from . import auth, keys, trail
from . import dataset as _dataset

F = TypeVar("F", bound=Callable[..., Any])


def private(value: Any) -> Any:
    """A caller's own copy of a shared cached value (frames copy on write; the rest deep-copied)."""
    return copy.deepcopy(value)


def owner_tag(owner: str | None = None) -> str:
    """The owner part of every cache key: a hash of the signed-in user's id (this session's when None)."""
    who = auth.user_id() if owner is None else owner
    return hashlib.sha256(f"luskin-cache-owner\x00{who}".encode()).hexdigest()[:20]


class _Store:
    """Results remembered across reruns, pages and sessions of one owner, most recent last, at most ``limit``.

    Keys are ``owner tag|kind|key``; a value is computed once per key even when sessions ask at once (a lock
    per key). Each owner's "Forget"s are listed (what each asked to forget: everything, or the keys holding a data
    fingerprint); a computation notes how many there were when it started (its generation), and its result is not
    kept if a later one covers its key. "Forget this file" no longer throws away a computation on another file.
    """

    def __init__(self) -> None:
        self.values: OrderedDict[str, Any] = OrderedDict()
        self.lock = threading.Lock()
        self.computing: dict[str, threading.Lock] = {}
        self.forgets: dict[str, list[str | None]] = {}

    def get(self, full: str) -> tuple[bool, Any]:
        with self.lock:
            if full in self.values:
                self.values.move_to_end(full)
                return True, self.values[full]
        return False, None

    def has(self, full: str) -> bool:
        with self.lock:
            return full in self.values

    def keep(self, full: str, value: Any, limit: int, generation: int) -> None:
        with self.lock:
            if self.forgotten_since(full, generation):
                return   # its owner pressed Forget (of everything, or of this data) while it was computed
            self.values[full] = value
            while len(self.values) > limit:
                self.values.popitem(last=False)

    def forgotten_since(self, full: str, generation: int) -> bool:
        """Whether a Forget of its owner after ``generation`` covers this key (the caller holds the lock)."""
        later = self.forgets.get(full.split("|", 1)[0], [])[generation:]
        return any(containing is None or containing in full for containing in later)

    def generation_of(self, tag: str) -> int:
        with self.lock:
            return len(self.forgets.get(tag, []))

    def key_lock(self, full: str) -> threading.Lock:
        with self.lock:
            return self.computing.setdefault(full, threading.Lock())

    def release(self, full: str) -> None:
        """Let go of a key's lock once nobody holds it (a caller waiting on it keeps its own reference)."""
        with self.lock:
            held = self.computing.get(full)
            if held is not None and not held.locked():
                del self.computing[full]

    def forget(self, tag: str, containing: str | None = None) -> int:
        with self.lock:
            gone = [k for k in self.values if k.startswith(tag + "|") and (containing is None or containing in k)]
            for full in gone:
                del self.values[full]
            for full in [k for k in self.computing if k.startswith(tag + "|")]:
                if not self.computing[full].locked():
                    del self.computing[full]
            self.forgets.setdefault(tag, []).append(containing)
            return len(gone)


@st.cache_resource(show_spinner=False)
def _stores() -> tuple[dict[str, _Store], threading.Lock]:
    """Every store of this server by name: the long computations' and one per :func:`shared` function."""
    return {}, threading.Lock()


def _store(name: str) -> _Store:
    stores, lock = _stores()
    with lock:
        return stores.setdefault(name, _Store())


def forget_owner(owner: str | None = None, containing: str | None = None) -> int:
    """Drop the owner's remembered results (this session's owner when None), or only those whose key holds
    ``containing`` (a data fingerprint); the number dropped. A computation of theirs under way is not kept."""
    tag = owner_tag(owner)
    stores, lock = _stores()
    with lock:
        every = list(stores.values())
    dropped = sum(store.forget(tag, containing) for store in every)
    jobs, jobs_lock = _jobs()
    with jobs_lock:   # their jobs: a finished one is not shown afterwards, one under way is dropped when it ends
        for full, job in list(jobs.items()):
            if full.startswith(tag + "|") and (containing is None or containing in full):
                job.forgotten = True
                if job.done.is_set():
                    del jobs[full]
    return dropped


def _plain_key(func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """The key of a call: its arguments but those named with a leading underscore (as st.cache_* do), as JSON."""
    bound = inspect.signature(func).bind(*args, **kwargs)
    bound.apply_defaults()
    kept = {name: value for name, value in bound.arguments.items() if not name.startswith("_")}
    return json.dumps(kept, sort_keys=True, default=repr)


def shared(max_entries: int = 64, **_ignored: Any) -> Callable[[F], F]:
    """A function's results computed once per owner and arguments, but every call gets its own copy.

    Keyed like ``st.cache_resource`` (arguments whose names start with ``_`` are not part of the key) and by the
    owner (:func:`owner_tag`); ``max_entries`` results are kept per function, least recently used first out.
    ``st.cache_resource`` hands the very same object to every session, so one session changing a result (a
    frame's column, a dict) would change it for all; ``st.cache_data`` copies too, but by pickling, which some
    results (fitted models, open sources) do not survive and which costs more than a deep copy (4.7 ms vs 0.5 ms
    for the Adult audit).
    """
    def wrap(func: F) -> F:
        name = f"shared:{func.__module__}.{func.__qualname__}"

        @functools.wraps(func)
        def call(*args: Any, **kwargs: Any) -> Any:
            store = _store(name)
            tag = owner_tag()
            full = f"{tag}|{_plain_key(func, args, kwargs)}"
            found, value = store.get(full)
            if found:
                return private(value)
            generation = store.generation_of(tag)
            try:
                with store.key_lock(full):   # two sessions of one owner asking at once: one computes, one waits
                    found, value = store.get(full)
                    if not found:
                        value = func(*args, **kwargs)
                        store.keep(full, value, max_entries, generation)
            finally:
                store.release(full)
            return private(value)

        def clear() -> None:
            stores, lock = _stores()
            with lock:
                stores.pop(name, None)

        call.clear = clear  # type: ignore[attr-defined]
        return call  # type: ignore[return-value]
    return wrap


def _result_store() -> _Store:
    """Results of long computations (cached_run, background_run)."""
    return _store("results")


def _full(kind: str, key: str, tag: str | None = None) -> str:
    return f"{tag or owner_tag()}|{kind}|{key}"


def cached_run(kind: str, key: str, compute: Callable[[], Any], limit: int = 16) -> Any:
    """``compute()`` once per key and owner, remembered across reruns, pages and the owner's sessions.

    Unlike st.cache_resource this lets ``compute`` drive a progress bar created on the page
    (Streamlit cannot replay elements drawn inside a cached function into another layout).
    A failure (e.g. a LuskinError) is not remembered.
    """
    store = _result_store()
    full = _full(kind, key)
    found, value = store.get(full)
    if found:
        return private(value)
    generation = store.generation_of(full.split("|", 1)[0])
    value = compute()
    store.keep(full, value, limit, generation)
    return private(value)


Progress = Callable[[float, str], None]


class _Job:
    """A long computation on a thread of its own, started by a click.

    A page's script run stops when the user touches any widget while it runs (Streamlit reruns it; a
    reconnection of the browser does too);
    a retraining done in the script itself was lost then, and the page showed its button again as if
    nothing had been asked. On its own thread the work goes on: the next run finds it, shows its
    progress and its result (:func:`background_run`, :func:`is_asked`).

    A job that ends while no run waits for it stays in the table of jobs, done, until a run of its owner
    collects its outcome (its result, or its error, said once). Before, it left the table as it ended: its result
    was then only in the store of results, which every owner's results share and which had pushed it out before
    the page ran again, and an error was said to nobody. The page showed its button again, no result and no error
    (CI saw it in the Retrain browser test).
    """

    def __init__(self) -> None:
        self.done = threading.Event()
        self.fraction = 0.0
        self.message = "Starting…"
        self.value: Any = None
        self.error: BaseException | None = None
        self.forgotten = False   # its owner pressed Forget (of everything, or of its data) while it ran

    def report(self, fraction: float, message: str) -> None:
        """The computation's progress, read by whichever script run waits for it."""
        self.fraction, self.message = fraction, message


# Long computations under way at once on one server (each holds a core and its data's memory): a click past
# this is refused in plain words rather than slowing every analyst's session.
MAX_JOBS = 4
# Jobs that ended while no run waited for them, kept for their owner's next run (the oldest go first beyond this:
# the pages of jobs nobody comes back to were closed, and each holds its result's memory).
MAX_UNSEEN = 8


@st.cache_resource(show_spinner=False)
def _jobs() -> tuple[dict[str, _Job], threading.Lock]:
    """Computations under way, and those ended that no run has collected, shared by all sessions (two sessions
    asking the same thing share one), oldest first."""
    return {}, threading.Lock()


def _outcome(job: _Job) -> Any:
    """A finished job's result (the caller's own copy), or its error raised."""
    if job.error is not None:
        raise job.error
    return private(job.value)


def background_run(kind: str, key: str, compute: Callable[[Progress], Any], show: Progress | None = None,
                   limit: int = 16, poll: float = 0.2) -> Any:
    """``compute(report)`` once per key and owner, on its own thread, remembered like :func:`cached_run`.

    The calling script run waits, passing the latest ``report(fraction, message)`` to ``show`` (a
    progress bar on the page). When the run is stopped by a rerun, the computation goes on and a
    later call with the same key waits for it rather than starting it again. A failure is raised
    to every caller waiting and is not remembered.
    """
    store = _result_store()
    jobs, jobs_lock = _jobs()
    full = _full(kind, key)
    with jobs_lock:
        job = jobs.get(full)
        if job is not None and job.done.is_set():
            del jobs[full]   # ended while no run waited: this run collects it
            return _outcome(job)
        if job is None:
            found, value = store.get(full)
            if found:
                return private(value)
            under_way = sum(not other.done.is_set() for other in jobs.values())
            if under_way >= MAX_JOBS:
                raise LuskinError(f"The server is already running {under_way} long computations (retraining or "
                                  "training models) for its analysts. Press the button again in a minute, when "
                                  "one has finished; your data and choices are kept.")
            job = jobs[full] = _Job()
            generation = store.generation_of(full.split("|", 1)[0])
            # the stores are passed: no Streamlit call off the script's thread
            threading.Thread(target=_work, args=(job, full, compute, limit, generation, store, (jobs, jobs_lock)),
                             name=f"luskin-{kind}", daemon=True).start()
    while not job.done.wait(poll):
        if show is not None:
            show(job.fraction, job.message)   # a rerun requested meanwhile stops this run here, not the work
    with jobs_lock:
        if jobs.get(full) is job:
            del jobs[full]   # this run waited and collects it (others waiting hold the job itself)
    return _outcome(job)


def _work(job: _Job, full: str, compute: Callable[[Progress], Any], limit: int, generation: int, store: _Store,
          jobs: tuple[dict[str, _Job], threading.Lock]) -> None:
    """Run one job; keep its result, then mark it done where it is in the table (a run collects it there)."""
    table, jobs_lock = jobs
    try:
        job.value = compute(job.report)
        store.keep(full, job.value, limit, generation)
    except BaseException as err:  # noqa: BLE001 - handed to the script run that waits or comes next, which shows it
        job.error = err
    finally:
        with jobs_lock:
            job.done.set()
            if job.forgotten and table.get(full) is job:
                del table[full]
            unseen = [name for name, other in table.items() if other.done.is_set()]
            for name in unseen[:max(len(unseen) - MAX_UNSEEN, 0)]:
                del table[name]


def is_asked(kind: str, key: str) -> bool:
    """Whether this owner's computation was asked for and its outcome is there to show without a click: under way
    (the page waits for it), ended and not yet collected (its result or its error), or its result kept. One look,
    under the jobs' lock: a job ending between two looks (kept, then out of the table) cannot be missed."""
    jobs, jobs_lock = _jobs()
    full = _full(kind, key)
    with jobs_lock:
        return full in jobs or _result_store().has(full)


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
