"""Which report section and which slides each analysis result gets: one registry, so a new analysis adds one line here.

The analyses layer cannot import the present layer (``tests/test_layers.py``), so a result cannot build
its own section; the mapping from a result's type to its section builder lives here instead.
:func:`luskin_core.present.report.report_content` (and so ``build_html_report`` and ``build_pdf_report``)
takes ``results=[...]``: any mix of the registered results, each becoming its section in a fixed order
(by ``rank``, the order the report always had), whatever order they are passed in.

The same line names the result's slides (``slides``: a builder returning the deck's
:class:`~luskin_core.present.slide_blocks.Slide` objects, or None for a result shown in the report only):
:func:`luskin_core.present.slides.build_slides` takes ``results=[...]`` as the report does and places each
result's slides by the same rank, after the findings and before the corrections.

A result may also offer its section itself (the :class:`ReportPart` protocol: a ``report_section(context)``
method returning a :class:`~luskin_core.present.report_blocks.Section`), which is how a result defined in
the present layer or outside the core plugs in without touching this file. Any regulator output (the shape
of :class:`luskin_core.analyses.regulator_ll144.LL144Output`) gets the regulator section, so a new regulator table
touches no report file. Anything else is a plain :class:`~luskin_core.errors.LuskinError`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import import_module
from typing import Any, Protocol, runtime_checkable

from luskin_core.errors import LuskinError
from luskin_core.present.report_blocks import Section


@dataclass(frozen=True)
class PartContext:
    """What a section builder may need besides its result: the audit's result and the data's label."""

    audit: Any = None
    data_label: str = ""


@runtime_checkable
class ReportPart(Protocol):
    """A result that offers its own report section."""

    def report_section(self, context: PartContext) -> Section:
        """The section this result adds to the report."""


@runtime_checkable
class SlidePart(Protocol):
    """A result that offers its own slides (beside its report section)."""

    def report_slides(self, context: PartContext) -> list[Any]:
        """The slides this result adds to the deck (:class:`~luskin_core.present.slide_blocks.Slide`)."""


@runtime_checkable
class RegulatorOutput(Protocol):
    """The shape every regulator table's output has (see :mod:`luskin_core.analyses.regulator_tables`)."""

    anchor: str
    section_title: str
    sentences_title: str

    def settings(self, data_label: str = "") -> list[tuple[str, str]]: ...
    def notes(self) -> list[str]: ...
    def intro(self) -> list[str]: ...
    def tables(self) -> list[Any]: ...
    def sentences(self) -> list[str]: ...


@dataclass(frozen=True)
class PartKind:
    """One registered result type: its class ("module:Class"), its section builder, its place and its slides."""

    result: str  # "module:Class", imported only when a result is looked up
    builder: Callable[[Any, PartContext], Section]
    rank: int  # sections (and slides) are placed by rank after the audit's (then in the order given)
    slides: Callable[[Any, PartContext], list[Any]] | None = None   # None: shown in the report only


def _adjusted(result: Any, context: PartContext) -> Section:
    from luskin_core.present.adjust_report import adjusted_section

    return adjusted_section(result)


def _regulator(output: Any, context: PartContext) -> Section:
    from luskin_core.present.regulator_report import regulator_section

    return regulator_section(output, context.data_label)


def _ll144(result: Any, context: PartContext) -> Section:
    from luskin_core.analyses.regulator import LL144Output

    return _regulator(LL144Output(result), context)


def _series(result: Any, context: PartContext) -> Section:
    from luskin_core.present.series_report import series_section

    return series_section(result)


def _proxy(result: Any, context: PartContext) -> Section:
    from luskin_core.present.proxy_report import report_section

    return report_section(result)


def _scan_slides(result: Any, context: PartContext) -> list[Any]:
    from luskin_core.present.scan_plots import scan_slides

    return scan_slides(result)


def _adjusted_slides(result: Any, context: PartContext) -> list[Any]:
    from luskin_core.present.adjust_report import adjusted_slide

    return [adjusted_slide(result)]


def _series_slides(result: Any, context: PartContext) -> list[Any]:
    from luskin_core.present.series_report import series_slide

    return [series_slide(result)]


def _proxy_slides(result: Any, context: PartContext) -> list[Any]:
    from luskin_core.present.proxy_report import slides

    return slides(result)


def _scan(result: Any, context: PartContext) -> Section:
    from luskin_core.present.scan_plots import scan_report_section

    return scan_report_section(result)


REPORT_PARTS: tuple[PartKind, ...] = (
    PartKind("luskin_core.analyses.adjust_model:AdjustResult", _adjusted, 10, _adjusted_slides),
    PartKind("luskin_core.analyses.regulator_ll144:LL144Result", _ll144, 20),
    PartKind("luskin_core.analyses.regulator_ll144:LL144Output", _regulator, 20),
    PartKind("luskin_core.analyses.regulator_eeoc:EEOCOutput", _regulator, 20),
    PartKind("luskin_core.analyses.series:SeriesResult", _series, 30, _series_slides),
    PartKind("luskin_core.analyses.proxy_audit:ProxyAudit", _proxy, 40, _proxy_slides),
    PartKind("luskin_core.analyses.scan:ScanResult", _scan, 45, _scan_slides),
)
_OWN_RANK = 50  # results offering their own section (ReportPart), and regulator outputs not listed above
_REGULATOR_RANK = 20


def _load(dotted: str) -> type:
    module, name = dotted.split(":")
    cls = getattr(import_module(module), name)
    assert isinstance(cls, type)
    return cls


def _own_slides(result: Any, context: PartContext) -> list[Any]:
    return list(result.report_slides(context)) if isinstance(result, SlidePart) else []


def kind_of(result: Any) -> PartKind:
    """The registered kind of one result (its section, rank and slides), or a LuskinError saying what the report takes."""
    for kind in REPORT_PARTS:
        if isinstance(result, _load(kind.result)):
            return kind
    if isinstance(result, ReportPart):
        return PartKind(type(result).__name__, lambda r, c: r.report_section(c), _OWN_RANK, _own_slides)
    if isinstance(result, RegulatorOutput):
        return PartKind(type(result).__name__, _regulator, _REGULATOR_RANK, _own_slides)
    names = ", ".join(kind.result.split(":")[1] for kind in REPORT_PARTS)
    raise LuskinError(f"The report cannot show a {type(result).__name__}: it takes an audit result, the "
                      f"corrections (retraining, thresholds, equalized distribution), a regulator table or one "
                      f"of: {names}.")


def part_kind(result: Any) -> tuple[Callable[[Any, PartContext], Section], int]:
    """The section builder and rank of one result, or a LuskinError saying what the report takes."""
    kind = kind_of(result)
    return kind.builder, kind.rank


def part_slides(results: Iterable[Any], context: PartContext) -> list[Any]:
    """The slides of ``results``, in the deck's order (by rank, then as given); a result without slides adds none.
    Checks every result first, as :func:`part_sections` does."""
    kinds = [(result, kind_of(result)) for result in results]
    ordered = sorted(enumerate(kinds), key=lambda item: (item[1][1].rank, item[0]))
    return [slide for _, (result, kind) in ordered if kind.slides is not None for slide in kind.slides(result, context)]


def part_sections(results: Iterable[Any], context: PartContext) -> list[Section]:
    """The sections of ``results``, in the report's order (by rank, then as given). Checks every result first,
    so a result the report cannot show is said before any section is built."""
    kinds = [(result, *part_kind(result)) for result in results]
    ordered = sorted(enumerate(kinds), key=lambda item: (item[1][2], item[0]))
    return [builder(result, context) for _, (result, builder, _) in ordered]


__all__ = ["REPORT_PARTS", "PartContext", "PartKind", "RegulatorOutput", "ReportPart", "SlidePart", "kind_of",
           "part_kind", "part_sections", "part_slides"]
