"""The dashboard's shared helpers under their old names (kept so that older imports keep working).

Each job has its own module; pages import those directly:

* :mod:`luskin_app.dataset`: the samples and uploaded files (a bad upload never replaces data),
* :mod:`luskin_app.choices`: the user's choices, the AuditSpec built from them, first guesses
  for a new file and their confirmation, the ways out of a problem,
* :mod:`luskin_app.cache`: cached computations and the results kept for the report,
* :mod:`luskin_app.config`: saving and loading the whole view as a configuration file,
* :mod:`luskin_app.ui`: escaping user text, errors with their way out, the sidebar,
* :mod:`luskin_app.help`: the help texts for jargon.
"""

from __future__ import annotations

from .cache import cached_run, is_cached, options_key, recall, remember, run_audit
from .choices import (
    DEFAULT_OPTIONS,
    MAX_CHOICES,
    WIDGET_KEYS,
    choices,
    choices_from_spec,
    confirm,
    current_spec,
    fixes,
    forget_widgets,
    guess_choices,
    guesses,
    is_numeric,
    needs_confirmation,
    protected_condition,
    seed,
    set_filters,
    spec_from_choices,
    value_options,
)
from .config import apply_configuration, configuration_json, dataset_ref, page_options
from .dataset import (
    DEFAULT_SAMPLE,
    SAMPLE_TITLES,
    Dataset,
    available_samples,
    dataset,
    is_new_upload,
    use_sample,
    use_upload,
)
from .help import HELP
from .ui import PAGE_FILES, guarded, md, require_spec, show_error, sidebar_summary

__all__ = [
    "DEFAULT_OPTIONS",
    "DEFAULT_SAMPLE",
    "HELP",
    "MAX_CHOICES",
    "PAGE_FILES",
    "SAMPLE_TITLES",
    "WIDGET_KEYS",
    "Dataset",
    "apply_configuration",
    "available_samples",
    "cached_run",
    "choices",
    "choices_from_spec",
    "configuration_json",
    "confirm",
    "current_spec",
    "dataset",
    "dataset_ref",
    "fixes",
    "forget_widgets",
    "guarded",
    "guess_choices",
    "guesses",
    "is_cached",
    "is_new_upload",
    "is_numeric",
    "md",
    "needs_confirmation",
    "options_key",
    "page_options",
    "protected_condition",
    "recall",
    "remember",
    "require_spec",
    "run_audit",
    "seed",
    "set_filters",
    "show_error",
    "sidebar_summary",
    "spec_from_choices",
    "use_sample",
    "use_upload",
    "value_options",
]
