"""Figure sanitising for the report, the slides and the handout: no string of a chart can become a live tag.

Moved out of :mod:`luskin_core.present.report`, which re-exports these names.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import numpy as np

_ALLOWED_TAG = re.compile(r"<(?=/?(?:br|b|i|em|sup|sub|extra)\s*/?>)", re.IGNORECASE)


MAX_FIGURE_TEXT = 1_000   # a chart's label, title or hover text: a group named by a 50 MB cell is cut here


def _neutralise(text: str) -> str:
    """Escape every '<' that does not open one of the plain formatting tags Luskin's charts use.

    plotly renders a subset of HTML in labels (``<a href>`` becomes a live link), so user text
    must reach it escaped. The chart builders escape what they take from the data; this is a
    second line of defence for every string of every figure in the report. '&' is left alone,
    so text the builders already escaped (``&lt;``) shows as intended.
    """
    if "<" not in text:
        return text
    marked = _ALLOWED_TAG.sub("\x00", text)
    return marked.replace("<", "&lt;").replace("\x00", "<")


def _bounded(text: str) -> str:
    """A chart's text at most ``MAX_FIGURE_TEXT`` characters, saying how long it was."""
    return text if len(text) <= MAX_FIGURE_TEXT else f"{text[:MAX_FIGURE_TEXT]}… ({len(text):,} characters)"


def _neutralise_all(value: Any) -> Any:
    if isinstance(value, str):
        return _neutralise(_bounded(value))
    if isinstance(value, dict):
        if "bdata" in value:   # plotly's typed array (base64 numbers): data, not text
            return value
        return {k: _neutralise_all(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_neutralise_all(v) for v in value]
    if isinstance(value, np.ndarray) and value.dtype.kind in "OUS":
        return np.array([_neutralise_all(v) for v in value.tolist()], dtype=object)
    return value


def safe_figure_dict(figure: Any) -> dict[str, Any]:
    """A plotly figure as a JSON-ready dict in which no string can become a tag other than br/b/i/em/sup/sub.

    The figure's own data is read, not copied or validated again (the builders made it valid).
    """
    return dict(_neutralise_all(figure.to_plotly_json()))


def safe_figure(figure: Any) -> Any:
    """:func:`safe_figure_dict` as a plotly Figure."""
    import plotly.graph_objects as go

    return go.Figure(safe_figure_dict(figure))


def figure_height(figure: Mapping[str, Any]) -> int:
    return int(figure.get("layout", {}).get("height") or 520)
