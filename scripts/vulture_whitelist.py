"""Names vulture reads as unused that are called or read where it cannot see (issue 45, the house).

Measure with: ``vulture luskin_core luskin_cli luskin_app app_pages scripts/vulture_whitelist.py --min-confidence 60``.
Read by vulture, not run. Each line says what calls the names; nothing else belongs here: code that no one calls
is deleted, not listed. Besides names a framework or a protocol calls, four kinds are read without vulture seeing
it: a result's fields written to JSON by ``dataclasses.asdict`` or ``__dict__`` (its ``to_dict``), the keys of a
typed dict read by subscript, the fields of what the library returns to its callers, and functions called only
from outside the measured folders (benchmarks/). Anything else only tests read is not listed: it is deleted, and
the test measures what the code does use.
"""

import zipfile

import plotly.graph_objects as go

from luskin_app import opening, session, signin, trail, ui
from luskin_app.choices import Choices
from luskin_cli import common
from luskin_core import __dir__ as luskin_core_dir
from luskin_core import __getattr__ as luskin_core_getattr
from luskin_core.analyses.adjust_model import AdjustedGap
from luskin_core.analyses.proxy_simulation import Simulated
from luskin_core.analyses.regulator_eeoc import EEOCRow
from luskin_core.analyses.series import Trend
from luskin_core.analyses.unknown_bounds import GapBound
from luskin_core.corrections.equalize import EqualizedDistributionClassifier
from luskin_core.corrections.relabel import CellAdjustment
from luskin_core.corrections.thresholds import GroupThresholdOptimizer
from luskin_core.counting import csvread, files, spark
from luskin_core.counting.memory import count_frame
from luskin_core.present.report_blocks import Chart, Table
from luskin_core.present.report_config import LuskinConfig
from luskin_core.stats.shrinkage import PooledEstimates

# Streamlit runs app.py (outside the four folders measured), which calls these on every page.
_ = (opening.show, opening.done, ui.page_style, ui.sidebar_summary, signin.gate, session.keep_address, session.forget_everything,
     session.render_lost, trail.set_page)

# argparse calls an Action as action(parser, namespace, values, option_string).
_ = common._StoreOnce.__call__.__code__.co_varnames  # option_string

# Python's module protocol (PEP 562): attribute look-up and dir() of the lazy package.
_ = (luskin_core_getattr, luskin_core_dir)

# io.BufferedReader calls readinto on the raw stream it wraps.
_ = csvread._Inflating.readinto

# scikit-learn reads an estimator's tags and calls predict; groups_ and log_loss_ are learned attributes it shows.
_ = (EqualizedDistributionClassifier.predict, EqualizedDistributionClassifier.groups_,
     EqualizedDistributionClassifier.log_loss_, GroupThresholdOptimizer.predict, GroupThresholdOptimizer.groups_)
_ = EqualizedDistributionClassifier.__sklearn_tags__  # sets classifier_tags.multi_class

# zipfile reads a ZipInfo's compress_type and external_attr when it writes the member.
_ = (zipfile.ZipInfo.compress_type, zipfile.ZipInfo.external_attr)

# The report's Jinja template reads a chart's width_pct and alt and a table's row_header; plotly draws an annotation's
# yshift.
_ = (Chart.width_pct, Chart.alt, Table.row_header, go.layout.Annotation.yshift)

# counting.engines names each engine's opener as "module:function" and imports it by that name.
_ = (files.open_duckdb, spark.open_spark)

# Each result's to_dict (dataclasses.asdict, or its __dict__) writes these fields to the JSON of `luskin adjust`,
# `luskin regulator`, `luskin series`, the audit's unknown-value bounds and the relabelling's cells.
_ = (AdjustedGap.adjusted_se, AdjustedGap.explained_ci_low, AdjustedGap.explained_ci_high,
     AdjustedGap.unexplained_ci_low, AdjustedGap.unexplained_ci_high, AdjustedGap.adjusted_impact_ratio)
_ = (EEOCRow.reference_selected, Trend.slope_ci_low, Trend.slope_ci_high, GapBound.unknown_positives)
_ = (CellAdjustment.adjusted_in_group, CellAdjustment.n_other, CellAdjustment.positives_group_before,
     CellAdjustment.positives_other_before, CellAdjustment.ratio_group_before, CellAdjustment.ratio_other_before,
     CellAdjustment.threshold_new)

# The session's choices (a TypedDict): the pages read and write each key by subscript, ch["protected_column"].
_ = (Choices.protected_column, Choices.protected_values, Choices.protected_op, Choices.protected_number,
     Choices.unknown_columns)

# What the library returns to its callers: config_from_json's saved version and date, and the pooled estimates'
# prior (pooled_estimates, in luskin_core.stats.shrinkage's __all__).
_ = (LuskinConfig.luskin_version, LuskinConfig.saved_at, PooledEstimates.prior_mean, PooledEstimates.prior_weight)

# benchmarks/ (outside the measured folders): bench_counting.py and bench_engines.py time count_frame,
# bench_proxy_birdie.py compares a simulated data set's sample_rates.
_ = (count_frame, Simulated.sample_rates)

# Attribute and parameter names vulture matches by name (set where it cannot see a read).
_ = (_.multi_class, _.option_string)
