"""A chart's text alternative, from the figure's own data: a short description of what it shows and its numbers as a
table (WCAG 2.1 1.1.1; as Datawrapper's and Highcharts' accessible charts do), for the page, the slides and the
report alike. No Streamlit here: luskin_app/ui.py's ``chart`` draws it beside each chart on a page and a slide,
the report puts it beside each chart image (its ``alt`` and a table), so a screen reader reaches the same words.

The table is read from the traces a reader sees (those with hover text; a text-only label layer or a shaded band
with ``hoverinfo="skip"`` adds nothing): one row per point, the panel (a subplot's title) and the series (a trace's
name) when there are several, the category, the value and its interval when the chart draws one.
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass
from typing import Any

import pandas as pd

from luskin_core.formatting import format_percent

_TAGS = re.compile(r"<[^>]+>")
_BREAKS = re.compile(r"(?i)<br\s*/?>")
KINDS = {"bar": "Bar chart", "scatter": "Chart", "heatmap": "Heat map", "histogram": "Histogram", "box": "Box plot"}
MAX_ROWS = 400   # a chart of more points than this is described, and its first rows listed (saying how many)


@dataclass(frozen=True)
class ChartText:
    """What a chart shows, in words (``description``) and numbers (``table``); ``shown`` of ``points`` rows."""

    description: str
    table: pd.DataFrame
    points: int

    @property
    def cut(self) -> bool:
        """Whether the table holds only the first rows (the chart has more than MAX_ROWS points)."""
        return self.points > len(self.table)


def plain(text: Any) -> str:
    """Plotly's label markup as a sentence's words: line breaks as spaces, tags removed."""
    words = html.unescape(_TAGS.sub("", _BREAKS.sub(" ", str(text or ""))))
    return re.sub(r"\s+", " ", words).strip()


def _title(part: Any) -> str:
    if part is None:
        return ""
    return plain(getattr(part, "text", part) or "")


def _values(values: Any) -> list[Any]:
    if values is None:
        return []
    if isinstance(values, dict) and "bdata" in values:   # plotly's typed array: base64 of the numbers, its dtype
        import base64

        import numpy as np

        array = np.frombuffer(base64.b64decode(values["bdata"]), dtype=np.dtype(values.get("dtype", "f8")))
        shape = values.get("shape")
        if shape:
            array = array.reshape([int(n) for n in str(shape).split(",")])
        return list(array.tolist())
    return list(values.tolist() if hasattr(values, "tolist") else values)


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else number


def _shown(value: Any, percent: bool) -> str:
    number = _number(value)
    if number is None:
        return plain(value)
    if percent:
        return format_percent(number)
    return f"{number:,.0f}" if number == int(number) and abs(number) >= 100 else f"{number:,.3g}" \
        if abs(number) < 1 else f"{number:,.2f}".rstrip("0").rstrip(".")


def _axis(layout: Any, name: str) -> Any:
    """The layout's axis called ``x``, ``x2``... (``xaxis``, ``xaxis2``...)."""
    return layout[f"{name[0]}axis{name[1:]}"]


def _panels(fig: Any) -> dict[tuple[str, str], str]:
    """The subplot titles, by the (x, y) axes of their panel (make_subplots' annotations above each panel)."""
    layout = fig.layout
    titles = [a for a in (layout.annotations or ()) if a.xref == "paper" and a.yref == "paper" and a.text]
    found: dict[tuple[str, str], str] = {}
    for trace in fig.data:
        xname, yname = getattr(trace, "xaxis", None) or "x", getattr(trace, "yaxis", None) or "y"
        try:
            xdom, ydom = _axis(layout, xname).domain, _axis(layout, yname).domain
        except (KeyError, AttributeError):
            continue
        if not xdom or not ydom or (tuple(xdom), tuple(ydom)) == ((0, 1), (0, 1)):
            continue
        for note in titles:
            if xdom[0] - 0.01 <= note.x <= xdom[1] + 0.01 and abs(note.y - ydom[1]) < 0.08:
                found[(xname, yname)] = plain(note.text)
                break
    return found


def _percent(axis: Any) -> bool:
    return bool(axis is not None and axis.tickformat and "%" in axis.tickformat)


def _seen(trace: Any) -> bool:
    """A trace a reader reads (not a label layer, a band or a guide drawn without hover)."""
    return getattr(trace, "hoverinfo", None) != "skip" and getattr(trace, "visible", True) not in (False,)


def chart_text(fig: Any) -> ChartText:
    """The description and the numbers of a plotly figure (see the module's docstring)."""
    layout = fig.layout
    title = _title(layout.title)
    subtitle = _title(layout.title.subtitle) if layout.title is not None and layout.title.subtitle else ""
    panels = _panels(fig)
    traces = [t for t in fig.data if _seen(t)]
    named = len({t.name for t in traces if t.name}) > 1
    rows: list[dict[str, str]] = []
    kinds: list[str] = []
    category_title = value_title = ""
    for trace in traces:
        kinds.append(KINDS.get(trace.type, "Chart"))
        xname, yname = getattr(trace, "xaxis", None) or "x", getattr(trace, "yaxis", None) or "y"
        panel = panels.get((xname, yname), "")
        base = {**({"Panel": panel} if panels else {}), **({"Series": plain(trace.name)} if named else {})}
        if trace.type == "heatmap":
            rows += _heatmap_rows(trace, base)
            continue
        xaxis, yaxis = (_axis(layout, xname), _axis(layout, yname)) if hasattr(trace, "xaxis") else (None, None)
        horizontal = getattr(trace, "orientation", None) == "h"
        cat_axis, val_axis = (yaxis, xaxis) if horizontal else (xaxis, yaxis)
        category_title = category_title or (_title(cat_axis.title) if cat_axis is not None else "")
        value_title = value_title or (_title(val_axis.title) if val_axis is not None else "")
        rows += _series_rows(trace, base, horizontal, _percent(val_axis))
    table = pd.DataFrame(rows, dtype=object).fillna("")
    if "Category" in table.columns and category_title:
        table = table.rename(columns={"Category": category_title})
    if "Value" in table.columns and value_title and value_title not in table.columns:
        table = table.rename(columns={"Value": value_title})
    words = _description(kinds, title, subtitle, [plain(t.name) for t in traces if t.name] if named else [],
                         panels, len(rows))
    return ChartText(" ".join(words), table.head(MAX_ROWS), len(rows))


def _heatmap_rows(trace: Any, base: dict[str, str]) -> list[dict[str, str]]:
    """A heat map's cells with a number: row, column and the value (the number written in it, when there is one)."""
    rows = []
    zs = _values(trace.z)
    labels = _values(trace.text)   # the numbers written in the cells, when the colour is a transform of them
    xs, ys = _values(trace.x), _values(trace.y)
    for i, row in enumerate(zs):
        written = _values(labels[i]) if i < len(labels) else []
        for j, z in enumerate(_values(row)):
            if _number(z) is None:
                continue
            shown = plain(written[j]) if j < len(written) and plain(written[j]) else _shown(z, False)
            rows.append({**base, "Row": plain(ys[i] if i < len(ys) else i),
                         "Column": plain(xs[j] if j < len(xs) else j), "Value": shown})
    return rows


def _series_rows(trace: Any, base: dict[str, str], horizontal: bool, percent: bool) -> list[dict[str, str]]:
    """A bar or scatter trace's categories and values, with the interval its error bars draw."""
    cats, vals = (_values(trace.y), _values(trace.x)) if horizontal else (_values(trace.x), _values(trace.y))
    error = (trace.error_x if horizontal else trace.error_y) if hasattr(trace, "error_x") else None
    plus = _values(error.array) if error is not None and error.visible and error.array is not None else []
    minus = _values(error.arrayminus) if error is not None and error.arrayminus is not None else plus
    rows = []
    for i, value in enumerate(vals):
        if i >= len(cats):
            break
        row = {**base, "Category": plain(cats[i]), "Value": _shown(value, percent)}
        number = _number(value)
        if plus and number is not None and i < len(plus) and _number(plus[i]) is not None:
            low = number - (_number(minus[i]) or 0.0) if i < len(minus) else number
            row["Interval"] = f"{_shown(low, percent)} to {_shown(number + (_number(plus[i]) or 0.0), percent)}"
        rows.append(row)
    return rows


def _description(kinds: list[str], title: str, subtitle: str, series: list[str], panels: dict[Any, str],
                 n_rows: int) -> list[str]:
    """The chart in words: its kind and title, the subtitle, its series and panels, how many values it lists."""
    kind = kinds[0] if kinds and len(set(kinds)) == 1 else "Chart"
    words = [f"{kind}: {title}." if title else f"{kind}."]
    if subtitle:
        words.append(subtitle if subtitle.endswith(".") else subtitle + ".")
    if series:
        words.append(f"{len(series)} series: {', '.join(dict.fromkeys(series))}.")
    if panels:
        words.append(f"{len(set(panels.values()))} panels: {', '.join(dict.fromkeys(panels.values()))}.")
    words.append(f"{n_rows:,} values, listed in the table." if n_rows else "No values are drawn.")
    return words
