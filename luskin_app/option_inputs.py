"""A model tool's inputs on its page, made from its options' declarations (``OPTIONS`` in luskin_core/spec/options.py).

One widget per declared option, by the kind of its constraint: a selectbox for choices (a radio where the
declaration asks for one), a number input within the declared bounds for a number (a slider across the declared
values, or among them, where the declaration asks for one), a checkbox for a flag.
The label, the help and the choices' words are the declaration's (written for a policy analyst). The
widget's key is the page's prefix and the option's flag (``thr_lambda`` for ``--lambda``), so the keys that
saved settings and the tests know stay the same.

A page lays out the options it places itself with :meth:`OptionInputs.show`, names those it draws its own way
with :meth:`OptionInputs.drawn` (the Retrain page's pair of models, the Equalized page's list of alphas), and
:meth:`OptionInputs.rest` draws every other declared option: a new option appears on its page without an edit
of the page. :meth:`OptionInputs.checked` builds the tool's options class from the values, so what is entered
on a page is checked by the same constraints as the command line's flags.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from luskin_core.spec.options import OPTION_CLASSES, OPTIONS, Option, option_default

from . import choices as _choices
from . import ui

# Each tool's widget-key prefix (its page's): retrain_seed, thr_seed, eq_seed, proxy_model.
PREFIXES = {"retrain": "retrain", "thresholds": "thr", "equalize": "eq", "proxy": "proxy"}


def widget_key(tool: str, option: Option) -> str:
    """The key of an option's widget: the page's prefix and the option's flag (``--all-cells``: retrain_all_cells;
    a flag that starts with the prefix keeps it once: ``--proxy-model``, proxy_model)."""
    flag = option.key or option.cli_flag.lstrip("-").replace("-", "_")
    prefix = PREFIXES.get(tool, tool.replace("-", "_"))   # an analysis of the table: its name
    return flag if flag.startswith(prefix + "_") else f"{prefix}_{flag}"


def _slider(option: Option, key: str, value: Any, high: float | None) -> Any:
    """A slider from the first declared value to the last ("slider") or among them ("steps"), up to ``high``. The
    value kept is brought inside (it is set again each run: the widget is a new one when its ends move); with one
    value left there is nothing to choose: no widget, that value."""
    first, last = option.offered[0], option.offered[-1]
    last = last if high is None else max(first, min(last, high))
    kept = st.session_state.get(key, value)
    hint = option.help or None
    if option.widget == "slider":
        if first == last:
            return first
        st.session_state[key] = min(max(kept, first), last)
        return st.slider(option.label, first, last, key=key, help=hint)
    offered = [v for v in option.offered if v <= last]
    if len(offered) == 1:
        return offered[0]
    st.session_state[key] = kept if kept in offered else max([v for v in offered if v <= kept], default=first)
    return st.select_slider(option.label, offered, key=key, format_func=option.words_of, help=hint)


class OptionInputs:
    """The inputs of one model tool's declared options on its page, kept in ``values`` (the page's saved settings)."""

    def __init__(self, tool: str, values: dict[str, Any], *, high: dict[str, float] | None = None) -> None:
        self.tool = tool
        self.values = values
        self.high = dict(high or {})   # a slider's top as the data allow it (the scan's depth: the columns chosen)
        self.declared = {option.name: option for option in OPTIONS[tool]}
        self._done: set[str] = set()

    def key(self, name: str) -> str:
        """The widget key of a declared option."""
        return widget_key(self.tool, self.declared[name])

    def drawn(self, *names: str) -> None:
        """Options the page draws its own way (or not at all for now): :meth:`rest` leaves them out."""
        self._done.update(names)

    def show(self, name: str) -> Any:
        """Draw one declared option's widget where the page is writing; its value (also kept in ``values``). A
        slider's top is the declared one or, lower, the page's ``high``; with one value left it draws nothing."""
        option = self.declared[name]
        self._done.add(name)
        constraint, key = option.constraint, self.key(name)
        default = option_default(self.tool, name) if option.page_default is None else option.page_default
        value = self.values.get(name, default)
        hint = option.help or None
        if option.widget in ("slider", "steps"):
            chosen: Any = _slider(option, key, value, self.high.get(name))
        elif constraint.kind == "flag":
            _choices.seed(key, bool(value))
            chosen = st.checkbox(option.label, key=key, help=hint)
        elif constraint.kind == "choice":
            offered = list(constraint.choices)
            _choices.seed(key, value if value in offered else default if default in offered else offered[0])
            if option.widget in ("radio", "row"):
                chosen = st.radio(option.label, offered, key=key, format_func=option.words_of, help=hint,
                                  horizontal=option.widget == "row")
            else:
                chosen = st.selectbox(option.label, offered, key=key, format_func=option.words_of, help=hint)
        elif constraint.kind in ("text", "column"):
            _choices.seed(key, "" if value is None else str(value))
            chosen = st.text_input(option.label, key=key, help=hint, placeholder=option.metavar or "")
        else:
            whole = constraint.kind == "whole"
            cast = int if whole else float
            step = cast(option.step if option.step is not None else 1 if whole else 0.01)
            _choices.seed(key, cast(value if value is not None else default))
            chosen = st.number_input(option.label, **constraint.widget_bounds(), step=step, key=key, help=hint)
        self.values[name] = chosen
        return chosen

    def row(self, *names: str) -> None:
        """Draw the named options side by side, in that order."""
        for column, name in zip(st.columns(len(names)), names, strict=True):
            with column:
                self.show(name)

    def rest(self) -> None:
        """Draw every declared option the page offers and has not drawn yet (a new option lands here)."""
        for name, option in self.declared.items():
            if option.on_page and name not in self._done:
                self.show(name)

    def chosen(self, *skip: str) -> dict[str, Any]:
        """The declared options' values on the page (keyword arguments of the tool's estimator), but ``skip``."""
        return {name: self.values[name] for name in self.declared if name in self.values and name not in skip}

    def checked(self, where: str, **more: Any) -> Any:
        """The tool's options class built from the page's values (and ``more``): the checks the command line
        runs. None, with the refusal shown in plain words, when a value is refused."""
        return ui.guarded(OPTION_CLASSES[self.tool], **self.chosen(), **more, where=where)
