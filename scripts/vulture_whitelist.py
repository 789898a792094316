"""Names vulture reads as unused that a framework or a protocol calls by name (issue 45, the house).

Measure with: ``vulture luskin_core luskin_cli luskin_app app_pages scripts/vulture_whitelist.py --min-confidence 60``.
Read by vulture, not run. Each line says what calls the names; nothing else belongs here: code that no one calls
is deleted, not listed.
"""

import zipfile

import plotly.graph_objects as go

from luskin_app import opening, session, signin, trail, ui
from luskin_cli import common
from luskin_core import __dir__ as luskin_core_dir
from luskin_core import __getattr__ as luskin_core_getattr
from luskin_core.corrections.equalize import EqualizedDistributionClassifier
from luskin_core.corrections.thresholds import GroupThresholdOptimizer
from luskin_core.counting import csvread, files, spark
from luskin_core.present.report_blocks import Chart, Table

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

# Attribute and parameter names vulture matches by name (set where it cannot see a read).
_ = (_.multi_class, _.option_string)
