"""Ready before the first visitor: what every analyst's first page needs, loaded once when the server starts.

On a fresh server, analysts arriving together all waited for the same first imports (pandas' and plotly's
modules, the audit's statistics) and for the default sample to load: the script threads queued on Python's
import lock (half of the cold batch's samples in benchmarks/bench_first_visits.py). ``serve.py``'s start
(:func:`luskin_app.guard.lifespan`) runs :func:`warm_up` in a thread of its own: the server answers at once, and
the first visitors find the modules imported and the sample in the server's cache. Nothing of any session is
made here (no result is cached for anyone: the audit run here only brings in the modules it uses).
"""

from __future__ import annotations

import importlib
import logging
import threading
import time

log = logging.getLogger("luskin.app")

# The modules the first page (the Data page, with its first verdict) runs, imported once at the start
# (tests/test_warmup.py: after them the first page imports no library of its own; luskin_core.corrections.models
# brings scikit-learn, 0.1-0.3 s the first visitor waited for before the page's heading).
FIRST_PAGE = ("plotly.graph_objects", "luskin_app.analysis_page", "luskin_app.audit_view", "luskin_app.auditing",
              "luskin_app.choices", "luskin_app.config", "luskin_app.pages", "luskin_app.section_view",
              "luskin_app.session", "luskin_app.ui", "luskin_core.corrections.models")


def warm_up() -> None:
    """Import what the first page uses and load the default sample into the server's shared cache."""
    start = time.monotonic()
    try:
        from luskin_core import audit
        from luskin_core.counting.data import PRESETS

        # By name: this module sits below the pages' modules (the guard starts it), never importing them itself.
        for name in FIRST_PAGE:
            importlib.import_module(name)
        dataset = importlib.import_module("luskin_app.dataset")
        data = dataset._sample_dataset(dataset.DEFAULT_SAMPLE)   # the server's cache, shared by every session
        audit(data.frame, PRESETS[dataset.DEFAULT_SAMPLE].spec)   # the modules an audit uses, nothing kept
        _streamlit_first_element_check()
    except Exception as err:  # noqa: BLE001 - a warm-up never stops the server: the first visitor loads them
        log.warning("the server could not prepare for its first visitors (%s); they will wait a little longer",
                    type(err).__name__)
        return
    log.info("ready for the first visitors in %.1f s", time.monotonic() - start)


def _streamlit_first_element_check() -> None:
    """Streamlit's once-a-process check on its first element (whether it runs in a REPL: ``inspect.stack()``, which
    resolves the path of every imported module, 0.2 s with 2,000 modules at a load of 7), made here so that the first
    visitor's first element does not wait for it. It decides nothing here: a served app is no REPL and has its
    runtime, so it prints nothing, as on the visitor's thread. Skipped if Streamlit no longer has it."""
    from streamlit import delta_generator

    check = getattr(delta_generator, "_maybe_print_use_warning", None)
    if callable(check):
        check()


def start() -> threading.Thread:
    """:func:`warm_up` in a thread of its own (the server answers meanwhile)."""
    thread = threading.Thread(target=warm_up, name="luskin-warm-up", daemon=True)
    thread.start()
    return thread
