"""Every key of ``st.session_state`` that the app reads or writes by name, declared in one place.

Pages and modules use these names instead of string literals, so that a typo is an AttributeError
rather than a silently empty slot, and one list says what a session holds (tests/test_app_keys.py
checks that no literal key is used elsewhere). Widget keys given as ``key=`` to a widget are
the widgets' own; the ones read back by name are listed here too.
"""

from __future__ import annotations

SPEC_MEMO = "_spec_memo"  # the typed specification of the current choices (a choices.SpecState)
AUDIT_CUTOFF = "audit_cutoff"  # app_pages/audit.py
AUDIT_CUTOFF_MEDIAN = "audit_cutoff_median"  # app_pages/audit.py, app_pages/data.py
AUDIT_METRIC = "audit_metric"  # app_pages/audit.py
AUDIT_OUTCOME_TYPE = "audit_outcome_type"  # luskin_app/choices.py
AUDIT_REFERENCE = "audit_reference"  # app_pages/audit.py
AUDIT_SCORE_COLUMN = "audit_score_column"  # app_pages/audit.py
AUDIT_UNKNOWN_VALUES = "audit_unknown_values"  # app_pages/audit.py, luskin_app/choices.py
AUDIT_UNKNOWN_DROPPED = "_audit_unknown_dropped"  # luskin_app/choices.py: named unknown values the columns lack
CHOICES = "choices"  # luskin_app/choices.py
CONFIG_ERROR = "config_error"  # app_pages/data.py, app_pages/report.py, luskin_app/config.py
CONFIG_MESSAGE = "config_message"  # app_pages/report.py, luskin_app/config.py
CONFIG_WAITING = "config_waiting"  # app_pages/report.py
CONFIRMED = "confirmed"  # luskin_app/choices.py
DATASET = "dataset"  # luskin_app/config.py, luskin_app/dataset.py, luskin_app/source_view.py
EQ_ALPHA = "eq_alpha"  # app_pages/equalized.py
FILTER_COLUMN = "filter_column"  # app_pages/audit.py
FILTER_COLUMN_SEEN = "filter_column_seen"  # app_pages/audit.py
FILTER_ERROR = "filter_error"  # app_pages/audit.py, luskin_app/choices.py
FILTER_OP = "filter_op"  # app_pages/audit.py
FILTER_VALUE_MULTI = "filter_value_multi"  # app_pages/audit.py
FILTER_VALUE_NUMBER = "filter_value_number"  # app_pages/audit.py
FILTER_VALUE_PICK = "filter_value_pick"  # app_pages/audit.py
GROUP_LABEL = "group_label"  # app_pages/data.py
GUESSES = "guesses"  # luskin_app/choices.py
MODEL_FEATURES = "model_features"  # app_pages/data.py, luskin_app/choices.py
OTHER_LABEL = "other_label"  # app_pages/data.py
OPENING_SEEN = "_opening_seen"  # luskin_app/opening.py: the first run has drawn its page
OUTCOME_IS = "outcome_is"  # app_pages/data.py
OUTCOME_CUTOFF = "outcome_cutoff"  # app_pages/data.py: a score outcome's cut-off
OUTCOME_SCORE_RULE = "outcome_score_rule"  # app_pages/data.py: a score outcome read above its median or a cut-off
OUTCOME_IS_SEEN = "outcome_is_seen"  # app_pages/data.py
OUTCOME_IS_ANSWERS = "outcome_is_answers"  # app_pages/data.py: the directions the user gave, per outcome and value
PENDING_CONFIG = "pending_config"  # luskin_app/config.py
POSITIVE = "positive"  # app_pages/data.py
PROTECTED_NUMBER = "protected_number"  # app_pages/data.py
PROTECTED_OP = "protected_op"  # app_pages/data.py
PROTECTED_VALUES = "protected_values"  # app_pages/data.py
REPORT_PDF = "report_pdf"  # app_pages/report.py
REPORT_PDF_ERROR = "report_pdf_error"  # app_pages/report.py
RESULTS = "results"  # luskin_app/cache.py
SOURCE_ERROR = "source_error"  # luskin_app/source_view.py
SOURCE_NOTE = "source_note"  # luskin_app/source_view.py
SOURCE_PICK = "source_pick"  # luskin_app/source_view.py
SOURCE_SAMPLE = "source_sample"  # luskin_app/source_view.py
THR_SCORE_COLUMN = "thr_score_column"  # app_pages/thresholds.py
THR_SOURCE = "thr_source"  # app_pages/thresholds.py
UPLOAD_ERROR = "upload_error"  # app_pages/data.py
UPLOAD_NOTE = "upload_note"  # app_pages/data.py

# Declared here, named in their modules for short (app_pages/present.py, luskin_app/dataset.py)
PRESENT_INDEX = "present_index"          # the position in the visible deck (0-based)
PRESENT_URL_SEEN = "present_url_seen"    # the ?slide= value this session last wrote or read
PRESENT_HIDDEN = "present_hidden"        # keys of the slides the presenter hid
PRESENT_HANDOUT = "present_handout_pdf"  # (slide keys, PDF bytes) of the last handout made
PRESENT_DECK = "present_deck"            # (what the deck was built from, its slides): rebuilt when that changes
KEPT_KEY = "kept_key"                    # the session's kept upload's key
KEPT_LOST = "kept_lost"                  # True when the address named an upload that is no longer kept
KEPT_MINE = "kept_mine"                  # True when this session made the kept upload (so it may replace it)
FORGET_ON_SIGN_OUT = "forget_on_sign_out"  # the sidebar's checkbox: delete my uploads when I sign out
CURRENT_PAGE = "current_page"            # the page this run draws (the record's lines say it)
RECORDED = "recorded"                    # what this session already wrote to the record (one line per action)
ADMIN_SOURCE_NOTE = "admin_source_note"  # app_pages/admin.py: what the last add or remove did
ADMIN_SOURCE_ERROR = "admin_source_error"  # app_pages/admin.py: why the last source was refused
ADMIN_SOURCE_NAME = "admin_source_name"  # app_pages/admin.py: the "Add a source" form's fields
ADMIN_SOURCE_LOCATION = "admin_source_location"
ADMIN_SOURCE_TABLE = "admin_source_table"
ADMIN_SOURCE_GROUPS = "admin_source_groups"
ADMIN_SOURCE_DESCRIPTION = "admin_source_description"
ADMIN_SOURCE_PASSWORD = "admin_source_password"
ADMIN_SOURCE_PASSWORD_WHERE = "admin_source_password_where"
ADMIN_SOURCE_PASSWORD_TYPED = "admin_source_password_typed"
SIGN_IN_REFUSED = "sign_in_refused"      # True when the provider refused this browser's sign-in a moment ago

# The newer pages' own settings (widgets whose values live nowhere else): kept across the sidebar's
# navigation (Streamlit drops a widget's value on a page that does not draw it) and with a kept upload,
# so that a refresh or a bookmark brings them back (luskin_app/session.py).
PAGE_SETTINGS = ("adj_as_numbers", "adj_binned", "adj_categorical", "adj_cluster", "adj_controls", "adj_curved", "adj_n_bins",
                 "adj_n_knots", "series_any_column", "series_column", "series_every", "series_format",
                 "series_keep_flagged", "series_cell", "series_bounds", "regulator_unknown",
                 "regulator_exclude", "regulator_race", "regulator_sex", "proxy_fallbacks", "proxy_first",
                 "proxy_level", "proxy_metric", "proxy_outcome", "proxy_place", "proxy_positive", "proxy_surname",
                 "proxy_threshold", "proxy_tolerance")


def audit_widget(choice: str) -> str:
    """The Audit page's widget for one of the audit's choices (``audit_metric`` for ``metric``)."""
    return "audit_" + choice


def slide_shown(slide_key: str) -> str:
    """The Present page's checkbox that shows or hides one slide."""
    return f"present_show_{slide_key}"


def analysis_options(name: str) -> str:
    """The options chosen on the page of one analysis of the analyses' table (its widgets' values by option)."""
    return f"analysis_{name}_options"
