"""Every analysis is one line of one table (:data:`ANALYSES`): its result, its report section and slides, and for an
analysis made from its line, how it runs, its options, its command and its page.

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
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from luskin_core.errors import LuskinError
from luskin_core.spec.options import Constraint, Option  # light: no heavy import

if TYPE_CHECKING:   # the table is read at the command line's start: no numpy or plotly for it
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


def _later(dotted: str) -> Callable[..., Any]:
    """A function named "module:function", imported on its first call (the table stays light to import)."""
    def call(*args: Any) -> Any:
        return _load_any(dotted)(*args)

    call.__qualname__ = call.__name__ = dotted
    return call


def _load_any(dotted: str) -> Any:
    module, name = dotted.split(":")
    return getattr(import_module(module), name)


@dataclass(frozen=True)
class Analysis:
    """One analysis: an entry of the one table every surface reads (:data:`ANALYSES`).

    ``result`` is its result's class ("module:Class", imported only when a result is looked up), ``builder`` its
    report section (the result's one view: the report renders it to HTML and PDF, the page made from this line to
    Streamlit, the command made from it to text), ``rank`` its place in the report and the deck, ``slides`` its
    slides (None: shown in the report only).

    An analysis made entirely from its line also names: ``name`` (the command ``luskin <name>`` and the page's
    address), ``title`` and ``help`` (the page's title and the command's help), ``run`` ("module:function",
    ``run(data, spec, options) -> result``: ``data`` a frame or an engine's
    :class:`~luskin_core.counting.ibis_source.Source`, counted through the one counting path), ``options`` (its key in
    :data:`luskin_core.spec.options.OPTIONS`: the command's flags and the page's inputs are made from those
    declarations), ``command`` (a command is made from this line) and ``page`` (the page's icon: a page is made
    from this line). Every line names its ``run`` and, where it has any, its ``options`` (the proxy audit's groups are declared in its
    specification as estimated: race from surname and place), and the commands and pages run an analysis through
    :meth:`runner`; the analyses that came before the table keep their own commands and
    pages (``command``/``page`` left unset): the scan's page (its columns and measures), the series' ``luskin audit
    --period`` and the regulator tables' tabs are not made from a line."""

    result: str
    builder: Callable[[Any, PartContext], Section]   # or "module:function", imported when a section is built
    rank: int
    slides: Callable[[Any, PartContext], list[Any]] | None = None   # or "module:function"
    name: str = ""
    title: str = ""
    help: str = ""
    run: str | None = None
    options: str | None = None
    command: bool = False
    page: str | None = None
    # The command made from the line: its help in ``luskin --help`` (``command_help``) and its description
    # (``command_description``; default: from ``title`` and ``help``); ``data``, the data options it takes: "audit"
    # (the data and specification options every audit takes, its groups, cells and judgement) or "outcome" (where
    # the data is, its outcome and positive value, the data counted as given: its groups are the analysis' own
    # options); ``text`` ("module:function", result -> text) its text (default: its report section as text);
    # ``labelled``: its run takes the data's name (``source=``).
    command_help: str = ""
    command_description: str = ""
    data: str = "audit"
    text: str | None = None
    labelled: bool = False
    # ``declares``: the analysis' options declared here, on its own line (:class:`luskin_core.spec.options.Option`,
    # each with its ``default``): they join ``OPTIONS`` under ``options`` (default: the name) and their options class
    # is made from them (:func:`luskin_core.spec.options.declare`), so a new analysis needs no edit of spec/options.py.
    declares: tuple[Any, ...] = ()

    def __post_init__(self) -> None:
        for name in ("builder", "slides"):
            value = getattr(self, name)
            if isinstance(value, str):
                object.__setattr__(self, name, _later(value))
        if self.declares:
            from luskin_core.spec.options import declare  # light: no heavy import

            object.__setattr__(self, "options", self.options or self.name)
            declare(self.options or self.name, self.declares)

    def runner(self) -> Callable[..., Any]:
        """Its ``run(data, spec, options)`` function."""
        if self.run is None:
            raise LuskinError(f"The analysis '{self.name}' cannot be run from its line of the table.")
        return _load_any(self.run)

    def command_text(self, result: Any) -> str | None:
        """The result as its command prints it (the line's ``text``), or None: its report section as text."""
        return None if self.text is None else str(_load_any(self.text)(result))

    def options_class(self) -> type | None:
        """Its options' class (built from the declared values, checked by their constraints), or None."""
        if self.options is None:
            return None
        from luskin_core.spec.options import OPTION_CLASSES

        return OPTION_CLASSES[self.options]


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


ANALYSES: tuple[Analysis, ...] = (
    Analysis("luskin_core.analyses.adjust_model:AdjustResult", _adjusted, 10, _adjusted_slides, name="adjusted",
             title="Adjusted gaps", help="each group's gap with controls held equal (regression)",
             run="luskin_core.analyses.adjust:run", options="adjusted"),
    Analysis("luskin_core.analyses.regulator_ll144:LL144Result", _ll144, 20, name="ll144",
             title="NYC Local Law 144", help="selection or scoring rates and impact ratios by category",
             run="luskin_core.analyses.regulator_ll144:run", options="regulator"),
    Analysis("luskin_core.analyses.regulator_ll144:LL144Output", _regulator, 20, name="ll144-output",
             title="NYC Local Law 144", run="luskin_core.analyses.regulator_ll144:build_ll144", options="regulator"),
    Analysis("luskin_core.analyses.regulator_eeoc:EEOCOutput", _regulator, 20, name="eeoc",
             title="EEOC Uniform Guidelines", help="four-fifths beside significance",
             run="luskin_core.analyses.regulator_eeoc:build_eeoc", options="regulator"),
    Analysis("luskin_core.analyses.series:SeriesResult", _series, 30, _series_slides, name="series",
             title="Over time", help="the audit in every period, with trends and alerts",
             run="luskin_core.analyses.series:run", options="series"),
    Analysis("luskin_core.analyses.proxy_audit:ProxyAudit", _proxy, 40, _proxy_slides, name="proxy",
             title="Proxy audit", help="race and ethnicity estimated from names and places",
             run="luskin_core.analyses.proxy_run:run", options="proxy"),
    Analysis("luskin_core.analyses.scan:ScanResult", _scan, 45, _scan_slides, name="scan", title="Scan",
             help="the groups whose outcome differs beyond chance", run="luskin_core.analyses.scan:run",
             options="scan", command=True, data="outcome", text="luskin_core.present.scan_text:scan_text",
             labelled=True, command_help="find the groups whose outcome or error rate differs beyond chance",
             command_description=(
                 "Scan every combination of 1 to 3 columns and their values for a group whose rate differs from "
                 "everyone else's by more than chance would explain, with the family-wise error rate over all "
                 "groups scanned controlled (single-step max-T on null replicates drawn from the count table), or "
                 "with --fdr the false discovery rate (Benjamini-Hochberg). Reports the group that carries each "
                 "gap, not its parents or refinements, with simultaneous intervals and adjusted p-values; when "
                 "nothing is found, the smallest gap the scan could have seen.")),
    Analysis("luskin_core.analyses.amounts:AmountAudit", _later("luskin_core.present.amounts_report:section"), 25,
             _later("luskin_core.present.amounts_report:slides"), name="amounts", title="Amounts",
             help="an amount (pay, a bonus, a price) per group: means, medians, their gaps as shares, and verdicts",
             run="luskin_core.analyses.amounts:run", command=True, page="payments"),
    Analysis("luskin_core.analyses.representation:RepresentationResult",
             _later("luskin_core.present.representation_report:section"), 27,
             _later("luskin_core.present.representation_report:slides"), name="representation",
             title="Representation", help="each group's share of the outcome, or of every row, against its share of "
                                          "a population you name (a census table, the labour market)",
             run="luskin_core.analyses.representation:run", command=True, page="groups",
             declares=(
                 Option("benchmark", Constraint("the benchmark", "text"), "Each group's share of the population",
                        "Each group's share of the population its rows are compared with, as the data labels the "
                        "groups: Black=24%, White=32% (or 0.24), separated by commas.",
                        metavar="GROUP=SHARE,...", flag_help="each group's share of the population the rows are "
                        "compared with, e.g. 'Black=24%%,White=32%%' (or 0.24)",
                        flag_requires="--benchmark is needed: each group's share of the population, e.g. "
                                      "--benchmark 'Black=24%,White=32%'."),
                 Option("among", Constraint("the rows compared", "choice", choices=("outcome", "all"), case="lower"),
                        "Shares of", "Each group's share of the rows with the outcome (those stopped, hired, "
                        "approved), or of every row (the pool itself).",
                        choice_words=(("outcome", "the rows with the outcome"), ("all", "every row")),
                        widget="row", default="outcome",
                        flag_help="the shares are of the rows with the outcome's positive value (outcome) or of "
                                  "every row (all); default {default}"),
             )),
)
_OWN_RANK = 50  # results offering their own section (ReportPart), and regulator outputs not listed above
_REGULATOR_RANK = 20


def _load(dotted: str) -> type:
    cls = _load_any(dotted)
    assert isinstance(cls, type)
    return cls


def analysis(name: str) -> Analysis:
    """The table's line of one analysis, by name, or a plain refusal naming the others."""
    for entry in ANALYSES:
        if entry.name == name:
            return entry
    raise LuskinError(f"There is no analysis called '{name}'; there are: "
                      + ", ".join(e.name for e in ANALYSES if e.name) + ".")


def made_from_table(kind: str) -> tuple[Analysis, ...]:
    """The analyses whose command (``kind="command"``) or page (``kind="page"``) is made from their line."""
    if kind == "command":
        return tuple(e for e in ANALYSES if e.command)
    return tuple(e for e in ANALYSES if e.page)


def _own_slides(result: Any, context: PartContext) -> list[Any]:
    return list(result.report_slides(context)) if isinstance(result, SlidePart) else []


def kind_of(result: Any) -> Analysis:
    """The registered kind of one result (its section, rank and slides), or a LuskinError saying what the report takes."""
    for kind in ANALYSES:
        if isinstance(result, _load(kind.result)):
            return kind
    if isinstance(result, ReportPart):
        return Analysis(type(result).__name__, lambda r, c: r.report_section(c), _OWN_RANK, _own_slides)
    if isinstance(result, RegulatorOutput):
        return Analysis(type(result).__name__, _regulator, _REGULATOR_RANK, _own_slides)
    names = ", ".join(kind.result.split(":")[1] for kind in ANALYSES)
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


__all__ = ["ANALYSES", "Analysis", "PartContext", "RegulatorOutput", "ReportPart",
           "SlidePart", "analysis", "kind_of", "made_from_table", "part_kind", "part_sections", "part_slides"]
