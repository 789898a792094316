"""The one count table every audit is computed from, and the single aggregation that makes it.

An audit only needs counts: for each group and each cell, how many rows (``n``), how many with
the audited decision positive (``positives``), and for a model audited against the truth the
four confusion counts; for a score outcome also the sum and sum of squares of the score. Every
statistic (rates, intervals, tests, impact ratios, pooled odds ratios) is computed from this
table in :mod:`luskin_core.stats.comparisons`, so the rows never need to travel: a query engine can
make the table where the data lives (:mod:`luskin_core.counting.sources` does it for DuckDB, PostgreSQL and
Spark) and produce exactly the same numbers as the in-memory path (:mod:`~luskin_core.counting.memory`).

Three steps, each with one job:

1. :func:`~luskin_core.counting.plan.build_plan` reads the specification and a few facts about the columns (numeric or
   text, how many distinct values, quantiles) and decides how each row is keyed: the group key
   (a protected condition, or the values of one to three columns, numeric ones with many values
   cut into bins), the cell key (all rows, filter holds / does not, or strata), the outcome
   indicator, and why a row is left out.
2. One aggregation groups the rows by (raw group parts, raw cell parts, reason) and returns a
   small *raw* table. Its rules are written once (:func:`~luskin_core.counting.rules.count_rules`: expression trees for the
   keys, the checks that leave a row out, the outcome and the decision) and every executor reads
   the same trees: :func:`~luskin_core.counting.memory.aggregate_frame` runs them as one DuckDB query over a pandas frame
   (no copy of the rows), :class:`~luskin_core.counting.files.FileSource` as DuckDB SQL over a CSV or
   Parquet file, and :mod:`luskin_core.counting.sources` as Ibis expressions on PostgreSQL, Spark and
   DuckDB tables; :func:`~luskin_core.counting.count_table.finish_raw` shapes every result alike. The model tools' rows
   (:func:`~luskin_core.counting.memory.row_reasons`, :func:`~luskin_core.counting.memory.row_group_labels`) come from the same rules. Raw keys are the
   column values themselves (or a bin index, or a boolean).
3. :meth:`~luskin_core.counting.count_table.CountTable.from_raw` turns raw keys into labels ("White", "White × Female",
   "age < 28", "Unknown") and a complete group x cell grid.

Conventions (shared by every engine):

* Missing values of a group or strata column form the group "Unknown" (counted and shown).
  In the paper's condition mode a row whose protected value is missing is left out and counted,
  as are rows missing the outcome, the prediction or a filter value.
* A numeric group or strata column with at most ``MAX_VALUES`` (20) distinct values is taken
  value by value (codes such as EDUCATION 1-6), and so is a column of whole numbers with at most
  ``MAX_CODES`` (100) whose name does not say it measures an amount (codes such as 51 state codes:
  a committee means the states, not four ranges of their codes; ``age`` is still cut); one with more is cut at the user's cut points, or at quantiles (linear
  interpolation, rounded to 4 significant digits, duplicates and cuts at the minimum dropped), and
  the result says so (:func:`~luskin_core.counting.plan.binned_parts`). Bin i holds ``cut[i-1] <= x < cut[i]``.
* A score outcome without a cut-off counts a row as positive when its score is strictly above the median of
  the audited rows' scores (Local Law 144's scoring rate, one rule for every analysis:
  :class:`~luskin_core.stats.judgement.ScoreRule`); with a cut-off, at or above it.

Each job has its module: :mod:`~luskin_core.counting.plan` (step 1), :mod:`~luskin_core.counting.rules` (the rule
IR), :mod:`~luskin_core.counting.sql_rules` (its DuckDB SQL compiler, beside :mod:`~luskin_core.counting.ibis_rules`
and the numpy reader :mod:`~luskin_core.counting.arrays`), :mod:`~luskin_core.counting.memory` (the in-memory
executor, step 2) and :mod:`~luskin_core.counting.count_table` (step 3). Import a name from the module that defines
it; this package re-exports nothing, so importing it stays free.
"""
