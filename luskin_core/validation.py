"""Every check of a user's input in one place, as scikit-learn keeps ``utils/validation.py``.

The specification, the pages, the command line and the estimators call these functions, so a
mistake gets the same plain sentence wherever it is made. Each check raises
:class:`luskin_core.errors.LuskinError` with words a policy analyst understands.
"""

from __future__ import annotations

# ------------------------------------------------------------------------------------------
# Columns and specifications
# ------------------------------------------------------------------------------------------


# ------------------------------------------------------------------------------------------
# Arrays handed to estimators (scores, 0/1 labels, group labels)
# ------------------------------------------------------------------------------------------
