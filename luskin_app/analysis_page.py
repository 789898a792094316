"""The page made from an analysis' line of the table (``page`` set in ``luskin_core.present.report_parts``).

Nothing here is written for one analysis: the page takes the audit's specification (chosen on the Data and Audit
pages), draws the inputs of the analysis' declared options (``OPTIONS[line.options]``, as the model pages do),
runs ``run(data, spec, options)`` when asked (on the rows in memory, or inside the engine of a configured source),
cached per owner on the data, the specification and the options, keeps the result for the Report and Present
pages (``remember``) and draws its report section (:func:`luskin_app.section_view.render_section`), with its JSON
to download. A new line of the table is a new page.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import streamlit as st

from luskin_core.present.report_parts import Analysis, PartContext, analysis
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.spec.options import OPTIONS

from . import dataset as _dataset
from . import keys, ui
from .cache import options_key, remember, shared
from .option_inputs import OptionInputs
from .section_view import render_section


def run_entry(name: str, data: Any, spec: AuditSpec, options: Any, **more: Any) -> Any:
    """One analysis of the table through its line's ``run(data, spec, options)`` (the one way every page runs an
    analysis): on the rows in memory, or inside the engine of a configured source, under its lock. ``more``: the
    keywords an analysis' run takes besides (the scan's ``progress``)."""
    entry = analysis(name)
    if data.engine is not None:   # a configured source: counted inside its engine
        return data.engine.run(entry.runner(), data.engine.source, spec, options, **more)
    return entry.runner()(data.frame, spec, options, **more)


@shared(show_spinner=False, max_entries=32)
def _run_cached(name: str, fingerprint: str, spec_json: str, options_json: str, _data: Any, _options: Any) -> Any:
    """One analysis of the table, cached on its name, the data, the specification and the options."""
    return run_entry(name, _data, AuditSpec.from_json(spec_json), _options)


def _options(entry: Analysis) -> tuple[Any, dict[str, Any]] | None:
    """The analysis' options from its declared inputs (None, said on the page, when one is refused)."""
    if entry.options is None:
        return None, {}
    values = st.session_state.setdefault(keys.analysis_options(entry.name), {})
    inputs = OptionInputs(entry.options, values)
    needed = [o for o in OPTIONS[entry.options] if o.flag_requires and o.on_page]   # what it cannot run without
    for option in needed:
        inputs.show(option.name)
    with st.expander("Settings", expanded=False):
        inputs.rest()
    blank = [o for o in needed if values.get(o.name) in (None, "", ())]
    if blank:
        st.info(ui.md(f"{blank[0].label}: {blank[0].help}"))
        return None
    made = inputs.checked(entry.name)
    if made is None:
        return None
    return made, inputs.chosen()


def render(name: str) -> None:
    """Draw the page of one analysis of the table."""
    entry = analysis(name)
    st.title(entry.title)
    if entry.help:
        st.markdown(ui.md(entry.help[0].upper() + entry.help[1:] + "."))
    spec = ui.require_spec(entry.name)
    chosen = _options(entry)
    if chosen is None:
        return
    options, values = chosen
    data = _dataset.dataset()
    with st.spinner(f"{entry.title}: counting and computing…"):
        result = ui.guarded(_run_cached, entry.name, data.fingerprint, spec.to_json(), options_key(values), data,
                            options, where=entry.name)
    if result is None:
        return
    remember(entry.name, spec, result)   # the Report and Present pages add it
    render_section(entry.builder(result, PartContext(data_label=data.title)), key=f"analysis_{entry.name}")
    ui.download_button("Download the numbers (JSON)", json.dumps(result.to_dict(), indent=2, default=str),
                       file_name=f"luskin-{entry.name}.json", mime="application/json", key=f"analysis_{entry.name}_json",
                       icon=ui.ICONS["download"])


def kept_results(spec: AuditSpec) -> list[Any]:
    """The results this session's table-made pages hold for the current data and specification (the Report and
    Present pages add them: each brings its section and slides)."""
    from luskin_core.present.report_parts import made_from_table

    from .cache import recall

    return [r for r in (recall(e.name, spec) for e in made_from_table("page")) if r is not None]


def page(name: str) -> Callable[[], None]:
    """The page function ``st.Page`` runs for one analysis of the table."""
    def draw() -> None:
        render(name)

    draw.__name__ = f"analysis_{name.replace('-', '_')}"
    return draw


__all__ = ["kept_results", "page", "render", "run_entry"]
