"""The parallel run's schedule (tests/run_schedule.py): browser tests go to at most two workers at a time."""

from __future__ import annotations

from run_schedule import MAX_BROWSER_WORKERS, browser_unit, next_unit, unmeasured_seconds

BROWSER = ["tests/browser/test_layout.py::test_every_page_fits_the_window[chromium-adult]",
           "tests/browser/test_present.py"]
OTHER = ["app pages and PDFs", "engine: spark", "tests/test_adjust.py"]


def test_browser_units_are_the_browser_folders_tests() -> None:
    assert all(browser_unit(u) for u in BROWSER)
    assert not any(browser_unit(u) for u in OTHER)


def test_a_worker_takes_a_browser_test_only_while_fewer_than_the_limit_hold_one() -> None:
    queue = [*BROWSER, *OTHER]
    assert MAX_BROWSER_WORKERS == 2
    for elsewhere in range(4):
        for here in (False, True):
            taken = next_unit(queue, elsewhere, here)
            if here or elsewhere < MAX_BROWSER_WORKERS:
                assert taken == queue[0]                  # the longest first, as before
            else:
                assert taken == OTHER[0]                  # the first unit that is not a browser test's
    assert next_unit(OTHER, 3, False) == OTHER[0]
    assert next_unit(BROWSER, 3, False) == BROWSER[0]     # nothing else left: the browser tests still run


def test_a_file_not_measured_yet_is_not_handed_out_last() -> None:
    """Two unmeasured browser tests weigh as much as a 40 s file: ahead of the many short files, not behind them."""
    assert unmeasured_seconds("tests/browser/test_new.py", 2) == 40.0
    assert unmeasured_seconds("tests/test_new.py", 3) == 3.0
    assert unmeasured_seconds("tests/test_new.py", 0) == 0.0
