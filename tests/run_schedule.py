"""Which unit of work a worker of a parallel run takes next (tests/conftest.py's scheduler).

Apart from conftest.py so that a test can import it: ``conftest`` names the browser folder's conftest in a whole run.
"""

from __future__ import annotations

# At most this many workers hold browser tests at a time. A browser test spends much of its time waiting for the shared
# served app (one Python process) and for pages to settle: with every worker in one, the machine idled 30% of the
# time, with two 14%, with one 1% (a run's tests and `vmstat 5`, benchmarks/results/test_speed_issue26.md).
MAX_BROWSER_WORKERS = 2


def browser_unit(unit: str) -> bool:
    """Whether a unit of work (conftest.py's ``work_unit``) is a browser test's."""
    return unit.startswith("tests/browser/")


def next_unit(queue: list[str], busy_elsewhere: int, here_in_browser: bool) -> str:
    """The unit a worker takes next from ``queue`` (longest first): the first one, unless it is a browser test's and
    ``MAX_BROWSER_WORKERS`` other workers already hold browser tests, then the first that is not (when there is one)."""
    if here_in_browser or busy_elsewhere < MAX_BROWSER_WORKERS or not browser_unit(queue[0]):
        return queue[0]
    return next((unit for unit in queue if not browser_unit(unit)), queue[0])


# A file the durations file does not list yet (new since it was measured) is not thereby the shortest: its tests are
# given these seconds each, else it went out last (the accessibility walk, 124 s and measured nowhere, started 489 s
# into a 624 s run on 2 cores and ended it alone).
UNMEASURED_TEST_SECONDS = {"browser": 20.0, "other": 1.0}


def unmeasured_seconds(file: str, tests: int) -> float:
    """The seconds a parallel run expects of a test file the durations file does not list, with ``tests`` tests."""
    return UNMEASURED_TEST_SECONDS["browser" if browser_unit(file) else "other"] * tests
