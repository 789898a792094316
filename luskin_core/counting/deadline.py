"""The per-query deadline the operator sets, and how each engine is held to it.

One number of seconds (``--query-timeout`` on the command line; a source's ``statement_timeout`` or the server's
``LUSKIN_QUERY_TIMEOUT`` on the dashboard; :data:`DEFAULT_DEADLINE` otherwise) bounds every query Luskin sends:

* PostgreSQL stops the query itself (``statement_timeout``), and a table another session holds locked is waited
  for at most :data:`LOCK_WAIT` seconds (``lock_timeout``, never past the deadline);
* DuckDB (files, DuckDB tables, uploads) is interrupted from a timer thread (``interrupt()``);
* Spark's jobs run in a job group of their own, cancelled at the deadline (``cancelJobGroup``); a query Spark is
  still planning (before its first job) cannot be interrupted, and the deadline is said once it ends.

What is over the deadline is said in plain words naming the deadline and how to raise it.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from luskin_core.errors import LuskinError

DEFAULT_DEADLINE = 300.0   # seconds any one query may run
LOCK_WAIT = 20.0           # seconds a locked table is waited for (at most the deadline)
MAX_DEADLINE = 86_400.0    # a day
# The command line writes its option for the first phrase (luskin_cli.main.CLI_WORDS); the library names no flag.
COMMAND_LINE_DEADLINE = "the command line's query timeout"
HOW_TO_RAISE = (f"raise the deadline: {COMMAND_LINE_DEADLINE}; on the dashboard, the source's "
                "statement_timeout setting (or LUSKIN_QUERY_TIMEOUT for every source), set by the administrator")


def checked_deadline(value: Any, what: str = "The query deadline") -> float:
    """``value`` as a deadline in seconds (None: the default), or LuskinError in plain words."""
    if value is None or value == "":
        return DEFAULT_DEADLINE
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = float("nan")
    if isinstance(value, bool) or not 0 < seconds <= MAX_DEADLINE:
        raise LuskinError(f"{what} must be a number of seconds, more than 0 and at most {MAX_DEADLINE:g} (a day), "
                          f"not '{value}'.")
    return seconds


def lock_wait(deadline: float) -> float:
    """Seconds a locked table is waited for under ``deadline`` (a little less than a short deadline: the lock is
    then what is said, not the deadline)."""
    return min(LOCK_WAIT, round(deadline * 0.9, 1))


def over_deadline(what: str, name: str, seconds: float) -> str:
    """The plain sentence for a query stopped at its deadline."""
    return (f"{what[:1].upper() + what[1:]} on {name} ran longer than the {seconds:g}-second deadline, so it was "
            f"stopped. Make the table or query faster (an index, a smaller query or view), or {HOW_TO_RAISE}.")


def locked(name: str, seconds: float) -> str:
    """The plain sentence for a table another session kept locked past the lock wait."""
    return (f"A table of {name} is locked by another session (a change to the table, a VACUUM FULL or a long "
            f"transaction), and it was not free within {seconds:g} seconds, so Luskin stopped waiting. Try again "
            "later, or ask the database's administrator what holds the lock.")


class Timer:
    """Whether the deadline fired (read after the query)."""

    fired = False


@contextmanager
def interrupt_after(seconds: float | None, stop: Callable[[], Any]) -> Iterator[Timer]:
    """Call ``stop()`` from a timer thread if the block is still running after ``seconds``."""
    state = Timer()
    if not seconds:
        yield state
        return

    def fire() -> None:
        state.fired = True
        try:
            stop()
        except Exception:  # noqa: BLE001, S110 - an engine that cannot be stopped finishes its query
            pass

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()
    try:
        yield state
    finally:
        timer.cancel()


@contextmanager
def spark_deadline(session: Any, seconds: float | None) -> Iterator[Timer]:
    """Run the block's Spark jobs in a job group of their own, cancelled after ``seconds``."""
    context = session.sparkContext
    group = f"luskin-{uuid.uuid4().hex}"
    context.setJobGroup(group, "a Luskin query", interruptOnCancel=True)
    try:
        with interrupt_after(seconds, lambda: context.cancelJobGroup(group)) as state:
            yield state
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)
