"""How each control of the adjusted gaps is read: as categories or as a number, by the one rule of every analysis.

A numeric control with few values (an education code 0-5, age bands 4-15, a branch number) is read as the
audit and the scan read such a column, value by value
(:func:`luskin_core.counting.plan.read_as_categories`): each value its own effect, never a straight line
through the codes. A number with many values (age, hours) is fitted as a straight line. The user may still
fit a code as a straight line (``as_numbers``) or read a number as categories (``categorical``); the result
says which controls were read which way (:func:`reading_sentence`), so the choice is never silent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from luskin_core.errors import LuskinError
from luskin_core.spec.audit_spec import AuditSpec


def code_controls(data: Any, spec: AuditSpec, controls: Sequence[str], *, categorical: Sequence[str] = (),
                  as_numbers: Sequence[str] = (), bins: Mapping[str, int] | None = None,
                  splines: Mapping[str, int] | None = None) -> tuple[str, ...]:
    """The numeric controls the one rule reads as categories (the data's own spelling), in the order given.

    Left out: controls the user already reads as categories (``categorical``), asked to fit as straight lines
    (``as_numbers``), cut into bins or fitted as curves (their own numeric choices). ``data`` is a pandas frame or
    a source; its distinct counts are read over the audited population, as the audit reads them.
    """
    from luskin_core.counting.executor import executor_for
    from luskin_core.counting.plan import read_as_categories

    facts = executor_for(data).facts(spec)
    given = [facts.resolve(name, "control") for name in (*controls, *as_numbers)]
    numbers = {facts.resolve(name, "control") for name in as_numbers}
    chosen = {facts.resolve(name, "control") for name in (*categorical, *(bins or {}), *(splines or {}))}
    for name in numbers:
        if name in {facts.resolve(c, "control") for c in categorical}:
            raise LuskinError(f"'{name}' is asked for both as categories and as a number: choose one.")
        if not facts.is_numeric(name):
            raise LuskinError(f"'{name}' holds text, so it cannot be fitted as a straight line; its values are used "
                              "as categories.")
    candidates = [name for name in dict.fromkeys(given)
                  if name not in numbers and name not in chosen and facts.is_numeric(name)]
    if not candidates:
        return ()
    facts.settle(candidates)   # an engine counts their distinct values in one query
    return tuple(name for name in candidates if read_as_categories(facts, name))


def reading_sentence(controls: Sequence[str], categorical: Sequence[str], codes: Sequence[str]) -> str:
    """Which controls were read as categories and which as numbers, in words (no option named: the page and the
    command line each say how to change it in their own terms)."""
    cats = [c for c in controls if c in categorical]
    numbers = [c for c in controls if c not in categorical]
    parts = []
    if cats:
        shown = [f"{c} (a number code with few values, read as the Audit and the Scan read it)" if c in codes else c
                 for c in cats]
        parts.append(f"Read as categories, each value its own effect: {', '.join(shown)}.")
    if numbers:
        parts.append(f"Read as numbers, each a straight line (or a curve where asked): {', '.join(numbers)}.")
    return " ".join(parts)


__all__ = ["code_controls", "reading_sentence"]
