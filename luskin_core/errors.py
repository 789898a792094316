"""The one exception type for mistakes a user can make.

Pages show its message with ``st.error``; the command line prints it and exits with status 2.
Messages are written for a policy analyst, not a programmer: say what is wrong in the user's
terms and what to do about it.
"""

from __future__ import annotations


class LuskinError(ValueError):
    """A problem with the user's data or choices, explained in plain words."""
