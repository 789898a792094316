"""Page furniture shared by every page: escaping user text, errors with their way out, the sidebar.

Streamlit renders Markdown in st.markdown, st.error/warning/info/success, st.caption, st.metric,
st.table cells and every widget label; GitHub-flavoured Markdown also turns bare URLs and e-mail
addresses into live links. A column name or a value from an uploaded file is the user's (or an
attacker's) text: it reaches the screen only through :func:`md`, so ``![x](https://…)`` shows as
those characters instead of loading an outside image. Widget *options* are plain text in
Streamlit and are only shortened (:func:`option_text`).
"""

from __future__ import annotations

import html
import logging
import re
import string
import zlib
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import streamlit as st

from luskin_core import __version__
from luskin_core.errors import LuskinError
from luskin_core.present.plots import title_pad

from . import choices as _choices
from . import dataset as _dataset
from . import pages as _pages

log = logging.getLogger("luskin.app")

PAGE_FILES = {p.name: p.file for p in _pages.PAGES if p.file}  # from the one table of pages (luskin_app/pages.py)

# Emoji-free icons (Material Symbols ship with Streamlit, so they render without an emoji font).
# The pages' own icons come from the table of pages; these are the icons of messages and buttons.
ICONS = {p.name: p.icon for p in _pages.PAGES} | {
    "error": ":material/error:", "fix": ":material/build:", "ok": ":material/check_circle:",
    "info": ":material/info:", "guess": ":material/search:", "wait": ":material/hourglass_top:",
    "download": ":material/download:", "beyond": ":material/warning:"}
# CommonMark lets every ASCII punctuation character be escaped with a backslash; escaping them all
# also covers Streamlit's extensions ($ for LaTeX, :emoji: and :material/icons:, :red[colour]).
_PUNCTUATION = frozenset(string.punctuation)
_WORD_JOINER = "\u2060"  # invisible; breaks the words GFM turns into links without changing what is read
_LINK_WORDS = re.compile(r"(?i)(https?|ftp|www|mailto)")
_NEWLINES = re.compile(r"[\r\n\u2028\u2029\x0b\x0c\x85]+")
OPTION_CHARS = 80  # a value longer than this is shortened in dropdowns (the full value is kept)


def md(value: Any, limit: int | None = None) -> str:
    """User text made safe to embed in Streamlit Markdown: shown exactly as written, never as markup.

    Every ASCII punctuation character is backslash-escaped (links, images, emphasis, code, HTML,
    entities, LaTeX ``$``, ``:emoji:`` shortcodes, headings and lists); line breaks become spaces;
    an invisible word joiner splits ``http``, ``www``, ``mailto`` and ``@`` so that GFM's
    autolinks find no URL or e-mail address. ``limit`` shortens long text (with its length).
    """
    text = str(value)
    if limit is not None and len(text) > limit:
        text = f"{text[:limit]}… ({len(text):,} characters)"
    text = _NEWLINES.sub(" ", text)
    escaped = "".join("\\" + ch if ch in _PUNCTUATION else ch for ch in text)
    escaped = _LINK_WORDS.sub(lambda m: m.group(1)[0] + _WORD_JOINER + m.group(1)[1:], escaped)
    return escaped.replace("\\@", _WORD_JOINER + "\\@")


def unescape(text: str) -> str:
    """What a reader sees of :func:`md`'s output (for tests and for plain-text copies)."""
    return re.sub(r"\\(.)", r"\1", text).replace(_WORD_JOINER, "")


def option_text(value: Any) -> str:
    """A dropdown's text for a value: the value itself, shortened when long (unique by a short hash).

    Streamlit sends a widget's options (as these texts) to the browser and back; a 50 MB cell
    must not travel, so the full value stays on the server and the dropdown shows its start.
    """
    text = str(value)
    if len(text) <= OPTION_CHARS:
        return text
    digest = zlib.crc32(text.encode("utf-8", "surrogatepass")) & 0xFFFF
    return f"{text[:OPTION_CHARS]}… ({len(text):,} characters, #{digest:04x})"


# --------------------------------------------------------------------------------------------
# Data grids
# --------------------------------------------------------------------------------------------
def grid_frame(frame: Any) -> Any:
    """What a data grid shows: text cells, column names and a text index that a spreadsheet would run as a
    formula (``=1+1``, ``=HYPERLINK(...)``, ``@SUM``...) get a leading ``'``, as the CSV downloads do.

    The grid's own toolbar ("Download as CSV", copy to clipboard) exports exactly what the grid shows, so
    what it shows must be safe to open in a spreadsheet. Numbers stay numbers (-3.5 is untouched).
    """
    import pandas as pd

    from luskin_core.export import neutralise_cell, safe_frame

    if not isinstance(frame, pd.DataFrame):
        return frame
    out = safe_frame(frame, cell=_grid_cell)
    index = out.index
    if not isinstance(index, pd.MultiIndex) and not pd.api.types.is_numeric_dtype(index) \
            and not pd.api.types.is_bool_dtype(index):
        out.index = index.map(neutralise_cell)
    return out


# A number as the app writes it ("+22.8", "-0.25", "+22.8 [+20, +25]", "12%", a bound ">-0.01" or "<0.001%" of
# luskin_core.formatting): no spreadsheet can run it as a formula (a bound sign, digits, signs, separators and
# one interval: bracketed, "a to b" or "a–b"), so it is shown as it is written (an "'" before "-15.7 to +16.2"
# read as a stray mark).
_NUMBER = r"[<>]?[+\-−]?\d[\d,]*(?:\.\d+)?%?"
_WRITTEN_NUMBER = re.compile(rf"{_NUMBER}(?: \[{_NUMBER}, {_NUMBER}\]| to {_NUMBER}|–{_NUMBER})?")


def _grid_cell(value: Any) -> Any:
    from luskin_core.export import neutralise_cell

    if isinstance(value, str) and _WRITTEN_NUMBER.fullmatch(value):
        return value
    return neutralise_cell(value)


def grid(frame: Any, *, raw: bool = False, **kwargs: Any) -> Any:
    """``st.dataframe`` of :func:`grid_frame` (every data grid of the app goes through here).

    ``column_config`` and ``column_order`` name the caller's columns; they are renamed as the columns are.
    Whole-number columns are counts and read with thousands separators (1,835, not 1835), unless the caller
    configures them or shows the user's own data as it is (``raw``: a year or an ID is not a count).
    """
    import pandas as pd

    from luskin_core.export import neutralise_cell

    config = kwargs.get("column_config")
    if not raw and isinstance(frame, pd.DataFrame):
        counts = {str(c): st.column_config.NumberColumn(format="localized") for c in frame.columns
                  if pd.api.types.is_integer_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])}
        config = {**counts, **(config if isinstance(config, dict) else {})} if counts else config
    if isinstance(config, dict):
        kwargs["column_config"] = {neutralise_cell(str(k)): v for k, v in config.items()}
    if kwargs.get("column_order") is not None:
        kwargs["column_order"] = [neutralise_cell(str(c)) for c in kwargs["column_order"]]
    return st.dataframe(grid_frame(frame), **kwargs)


# The main area's width at 1280 px with the sidebar open (its data grids measure 818 px there), and what a grid
# column takes: its widest text at about 7.5 px a character (Streamlit's 14 px sans-serif) and its padding.
GRID_WIDTH = 800
_CHAR_PX, _PAD_PX, _MAX_COLUMN_PX = 7.5, 24, 400


def _column_px(frame: Any, column: Any) -> float:
    """About how wide a data grid draws ``column`` (it sizes a column to its widest text, up to a limit)."""
    texts = [str(column), *(str(v) for v in frame[column].tolist())]
    return min(_MAX_COLUMN_PX, _PAD_PX + _CHAR_PX * max(len(t) for t in texts))


def grid_parts(frame: Any, *, width: float = GRID_WIDTH, keep: int = 1) -> list[Any]:
    """A wide table as grids that each fit ``width`` (issue 46: the last columns were cut off at the right at
    1280 px, behind the grid's own scroll bar): the columns in order, the first ``keep`` (the group) repeated in
    each part so that every row is still named. A table that fits is one part."""
    columns = list(frame.columns)
    head, rest = columns[:keep], columns[keep:]
    used = sum(_column_px(frame, c) for c in head)
    parts: list[list[Any]] = [[]]
    total = used
    for column in rest:
        px = _column_px(frame, column)
        if parts[-1] and total + px > width:
            parts.append([])
            total = used
        parts[-1].append(column)
        total += px
    return [frame[head + part] for part in parts if part] or [frame]


def grid_fitting(frame: Any, *, width: float = GRID_WIDTH, keep: int = 1, **kwargs: Any) -> None:
    """:func:`grid` of each part of :func:`grid_parts`: every column of a wide table in view, none cut off."""
    for part in grid_parts(frame, width=width, keep=keep):
        grid(part, **kwargs)


def download_button(label: str, data: Any, file_name: str | None = None, mime: str | None = None, *,
                    where: Any = None, evidence: bool = False, **kwargs: Any) -> Any:
    """``st.download_button`` that writes the download to the record (who took which file of which data) and notes
    whom the file was made for, so that its address opens for that signed-in user only (luskin_app.guard).

    The file's name, size and a hash are recorded when it is taken, never its content. ``where`` is the
    container to draw it in (a column), the page's main area by default.

    Every file is made on the click (``data`` may be a function that makes it: a report takes seconds; bytes or
    text are handed over as they are): the record's line is written then, before the file leaves the server, so a
    line that cannot be written stops the download. Such a click does not rerun the page: a rerun starts by letting
    go of the page's files, and any session's run that ends before the file is asked for would drop the function,
    so the click would fail on a server shared by several analysts. An ``evidence`` file's line also points at it
    by its whole SHA-256 (the record's ``evidence`` field), so that an evidence file handed on is found in the record.
    """
    import hashlib

    from . import auth, downloads, record, trail

    produced: dict[str, Any] = {"file": file_name or "", "mime": mime or ""}
    place = where if where is not None else st
    make = data if callable(data) else (lambda: data)
    try:
        write = trail.later("download", produced=produced)
    except record.RecordError as err:
        trail.stop_unrecorded(err)
    owner = auth.user_id()

    def made() -> Any:
        out = make()
        if isinstance(out, str | bytes):
            downloads.made_for(out.encode("utf-8") if isinstance(out, str) else out, owner)
        raw = (out.encode("utf-8") if isinstance(out, str) else out) if isinstance(out, str | bytes) else None
        pointer = ({"evidence": [{"name": file_name or "", "sha256": hashlib.sha256(raw).hexdigest()}]}
                   if evidence and raw is not None else None)
        write(record.measure(out) if raw is not None else {}, pointer)
        return out

    return place.download_button(label, made, file_name=file_name, mime=mime, on_click="ignore", **kwargs)


# --------------------------------------------------------------------------------------------
# Errors and their way out
# --------------------------------------------------------------------------------------------
def show_error(err: Exception | str) -> None:
    """A user's mistake as a plain message (never a traceback); the text is escaped."""
    st.error(md(err), icon=ICONS["error"])


def show_fixes(fixes: Sequence[_choices.Fix], where: str) -> None:
    """One button per way out of an error (e.g. "Remove the filter on age"), right beside it."""
    if not fixes:
        return
    row = st.container(horizontal=True)
    for fix in fixes:
        row.button(md(fix.label), key=f"{where}_{fix.key}", on_click=fix.apply, icon=ICONS["fix"])


def show_problem(problem: str, where: str, *, fixes: Sequence[_choices.Fix] | None = None,
                 data_link: bool = True, extra: str = "") -> None:
    """An error with every way out: fix buttons, and a link to the Data page where choices are made.

    ``fixes`` default to the ways out of the choices' own problems (a filter on the protected
    column, ...); ``extra`` is more Markdown after the message (already safe).
    """
    if fixes is None:
        fixes = _choices.fixes(_choices.choices(), _dataset.dataset().frame)
    st.error(md(problem) + (f"\n\n{extra}" if extra else ""), icon=ICONS["error"])
    show_fixes(fixes, where)
    if data_link:
        st.page_link(PAGE_FILES["data"], label="Change the choices on the Data page", icon=ICONS["data"])


def guarded(func: Callable[..., Any], *args: Any, where: str = "page", **kwargs: Any) -> Any:
    """Call the core; show a LuskinError plainly with its way out and return None.

    Any other exception is a bug in Luskin, not the user's mistake: it is logged with its
    traceback and the page says so in plain words, keeping the data and choices (a traceback
    box would tell the analyst nothing and hide the rest of the page).
    """
    try:
        return func(*args, **kwargs)
    except LuskinError as err:
        show_problem(str(err), where)
    except Exception as err:
        log.exception("unexpected error in %s", getattr(func, "__name__", func))
        st.error(md(f"Luskin could not finish this step because of an internal error ({type(err).__name__}: "
                    f"{err}). The data and the choices are kept; try other options, and please report this.",
                    limit=600), icon=ICONS["error"])
    return None


def require_model_inputs(spec: Any, where: str, leave_out: Sequence[str] = ()) -> None:
    """Stop a model page with the way out when a model column holds infinite numbers (or none is left)."""
    ch = _choices.choices()
    frame = _dataset.dataset().frame
    try:
        _choices.check_model_inputs(ch, frame, spec.outcome, leave_out)
    except LuskinError as err:
        show_problem(str(err), where, fixes=_choices.model_fixes(ch, frame, spec.outcome, leave_out))
        st.stop()


def show_warnings(*results: Any) -> None:
    """A correction that backfires says so in words: the results' ``warnings`` sentences, prominent."""
    seen: set[str] = set()
    for result in results:
        for sentence in getattr(result, "warnings", ()) or ():
            if str(sentence) not in seen:
                seen.add(str(sentence))
                st.warning(md(sentence), icon=ICONS["error"])


# --------------------------------------------------------------------------------------------
# The guesses for a new file, and their confirmation
# --------------------------------------------------------------------------------------------
def render_guesses() -> None:
    """Say which first choices are guesses for a newly uploaded file (shown until confirmed)."""
    guesses = _choices.guesses()
    if guesses is None or not _choices.needs_confirmation():
        return
    ch = _choices.choices()
    group = ch.get("protected_condition")
    first_group = guesses.group.value.to_dict() if guesses.group.value is not None else None
    now = (("Outcome", ch.get("outcome"), guesses.outcome.value),
           ("Counted as positive", ch.get("positive"), guesses.positive.value),
           ("Protected column", ch.get("protected_column"), guesses.protected.value),
           ("Protected group", group, first_group),
           ("Good or bad for the person", ch.get("outcome_is"), guesses.outcome_is.value))
    lines = []
    for guess, sentence, (label, current, first) in zip(
            (guesses.outcome, guesses.positive, guesses.protected, guesses.group, guesses.outcome_is),
            guesses.sentences(), now, strict=True):
        if current is not None and str(current) != str(first):   # the user changed it: the guess no longer stands
            shown = _condition_text(current) if label == "Protected group" else current
            lines.append(":material/edit: " + md(f"{label}: now '{_value_text(shown)}', your choice (Luskin's first "
                                                 f"guess: {sentence[len(label) + 2:].rstrip('.')})."))
        else:
            lines.append((":material/check: " if guess.sure else ":material/help: ") + md(sentence))
    st.info("**Luskin's first guesses for this file. Check them, change any below, then press "
            "Use these choices.**\n\n" + "\n".join(f"- {line}" for line in lines), icon=ICONS["guess"])


def _value_text(value: Any) -> str:
    return " or ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)


def _condition_text(condition: Any) -> str:
    from luskin_core.spec.conditions import Condition

    try:
        return Condition.from_dict(condition).describe()
    except (LuskinError, TypeError, ValueError, KeyError, AttributeError):   # one this version cannot read: as saved
        return str(condition)


def render_confirm(where: str) -> None:
    """The button that turns the guesses into the user's choices (the first verdict comes after it)."""
    st.button("Use these choices", key=f"{where}_confirm", type="primary", on_click=_choices.confirm,
              help="The audit is drawn once you have checked the outcome, its 'yes' value and the group.")


def require_spec(where: str = "page") -> Any:
    """The AuditSpec, or the problem with its way out (and a stop of this page's run).

    Before the guesses for an uploaded file are confirmed, no verdict is drawn: the page shows
    the guesses and the button to confirm them.
    """
    spec, problem = _choices.current_spec()
    if spec is None:
        show_problem(str(problem), where)
        st.stop()
    if _choices.needs_confirmation():
        render_guesses()
        st.caption(f"The choices for '{md(_dataset.dataset().title, 80)}' have not been confirmed yet.")
        left, right = st.columns([1, 2], vertical_alignment="center")
        with left:
            render_confirm(where)
        right.page_link(PAGE_FILES["data"], label="Check them on the Data page", icon=ICONS["data"])
        st.stop()
    return spec


# --------------------------------------------------------------------------------------------
# Sidebar
# --------------------------------------------------------------------------------------------
def bullet_list(sentences: Iterable[Any], prefix: str = "") -> str:
    """Sentences as a Markdown list, each escaped."""
    return "\n".join(f"- {prefix}{md(s)}" for s in sentences)


def sidebar_summary(where: Any = None) -> None:
    """What is loaded and audited, on every page, so a presenter never loses the thread."""
    data = _dataset.dataset()
    spec, _ = _choices.current_spec()
    with where if where is not None else st.sidebar:
        st.markdown(f"**Data:** {md(data.title, 80)}  \n{data.n_rows:,} rows × {data.frame.shape[1]} columns")
        if spec is not None and not _choices.needs_confirmation():
            outcome = md(spec.outcome_text, 120)
            names = _choices.class_names(spec)   # as the audit names them ("Male", never "Non-Female")
            groups = (md(spec.groups_text, 120) if spec.group_by
                      else f"{md(names.group, 60)} vs {md(names.other, 60)}")
            lines = [f"**Outcome:** {outcome}", f"**Groups:** {groups}"]
            if spec.filters:
                lines.append(f"**Filter:** {md(spec.filter_text, 200)}")
            if spec.strata:
                lines.append(f"**Within:** each {md(' × '.join(spec.strata), 200)}")
            st.markdown("  \n".join(lines))
        elif spec is not None:
            st.markdown("**Choices not confirmed yet:** see the Data page.")
        else:
            st.markdown("**Choices incomplete:** see the Data page.")
        st.caption(f"Luskin {__version__}")


# --------------------------------------------------------------------------------------------
# Layout: readable at projector width (1024 px) as on a wide screen
# --------------------------------------------------------------------------------------------
# - the sidebar takes at most about a fifth of a 1024-px screen (Streamlit's default is 336 px);
# - button and link labels wrap instead of being cut to "Rem…";
# - widget labels and tab names wrap;
# - the presentation deck (app_pages/present.py) uses large type.
PAGE_CSS = """
<style>
@media (max-width: 1279px) {
  section[data-testid="stSidebar"] { width: 220px !important; min-width: 220px !important;
                                     max-width: 220px !important; }
  section[data-testid="stSidebar"][aria-expanded="false"] { width: 0 !important; min-width: 0 !important; }
  [data-testid="stMainBlockContainer"] { padding: 3rem 1.5rem 4rem 1.5rem; }
  [data-testid="stMain"] h1 { font-size: 2.1rem; }
  [data-testid="stMain"] h2 { font-size: 1.6rem; }
}
@media (min-width: 1280px) {
  section[data-testid="stSidebar"] { width: 280px !important; min-width: 240px !important;
                                     max-width: 300px !important; }
}
section[data-testid="stSidebar"][data-collapsed="true"] { width: 0 !important; min-width: 0 !important; }
[data-testid="stBaseButton-primary"], [data-testid="stBaseButton-secondary"],
[data-testid="stBaseButton-tertiary"], [data-testid="stDownloadButton"] button,
[data-testid="stPageLink"] a { height: auto; min-height: 2.5rem; }
[data-testid^="stBaseButton"] p, [data-testid^="stBaseButton"] div,
[data-testid="stPageLink"] p, [data-testid="stPageLink"] span {
  white-space: normal !important; overflow: visible !important; text-overflow: clip !important;
  overflow-wrap: anywhere;
}
[data-testid="stSidebarNavLink"] span, [data-testid="stSidebarNavLink"] p,
[data-testid="stWidgetLabel"] p, [data-testid="stWidgetLabel"] div,
[data-testid="stMetricLabel"] p, [data-testid="stMetricLabel"] div,
button[role="tab"] p {
  white-space: normal !important; overflow: visible !important; text-overflow: clip !important;
}
/* A chart's name held beside it (ui.chart's words_in): read as the drawing's label, drawn nowhere, no gap */
[data-testid="stElementContainer"]:has(.luskin-chart-name) { position: absolute !important; width: 1px !important;
  height: 1px !important; overflow: hidden !important; clip-path: inset(50%) !important; }
/* Section headings are h2 under the page's h1 (WCAG 1.3.1, axe's heading-order), drawn at the size of a subheader */
@media (min-width: 1280px) { [data-testid="stMain"] h2 { font-size: 1.75rem; } }
/* A disabled widget's label: fainter than the others, still 4.5:1 or better in either theme (Streamlit's 40% of the
   text colour is 2.52:1 on white; 70% is 6.3:1) */
label[data-testid="stWidgetLabel"][disabled] { color: inherit !important; opacity: 0.7; }
label[data-testid="stWidgetLabel"][disabled] * { color: inherit !important; }
/* A visible focus indicator on every control (WCAG 2.4.7), 3:1 or better against the page and the sidebar in either
   theme (#1C7FBF: 4.34:1 on white, 3.94 on the light sidebar, 4.35 on the dark page, 3.42 on the dark sidebar), and
   unlike the current page's grey fill in the sidebar */
:focus-visible, [data-testid="stSidebarNavLink"]:focus-visible, button:focus-visible, a:focus-visible,
[role="tab"]:focus-visible, input:focus-visible, [tabindex]:focus-visible {
  outline: 3px solid #1C7FBF !important; outline-offset: 2px !important; }
/* A radio option's or checkbox's input is visually hidden (react-aria): the ring goes on its label, which says it */
label[data-focus-visible="true"] { outline: 3px solid #1C7FBF !important; outline-offset: 2px !important; }
/* A slider's value in the text colour (the theme's primary as text was 3.39:1 on the dark page) */
[data-testid="stSliderThumbValue"], [data-testid="stSliderThumbValue"] p { color: inherit !important; }
/* Code in a caption: the caption's own colour (the theme's code colour faded with the caption was 2.59:1) */
[data-testid="stCaptionContainer"] code { color: inherit !important; background: transparent !important; }
[data-testid="stMain"] .st-key-present_deck h1 { font-size: 2.6rem; line-height: 1.2; padding-top: 0.2rem; }
.st-key-present_deck [data-testid="stMarkdownContainer"] p { font-size: 1.55rem; line-height: 1.45; }
.st-key-present_deck [data-testid="stCaptionContainer"] p { font-size: 1rem; }
</style>
"""


_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)


def _wrap(text: str, chars: int) -> list[str]:
    """Lines of at most ``chars`` characters, broken at spaces (plotly's own line breaks kept)."""
    import textwrap

    lines: list[str] = []
    for part in _BREAK.split(text or ""):
        lines += textwrap.wrap(part, chars, break_long_words=False, break_on_hyphens=False) or [""]
    return lines


def fit_chart(fig: Any, width: int = 720) -> Any:
    """A chart whose title and subtitle fit ``width`` pixels: long lines wrapped, the top margin grown to match.

    plotly never wraps a title: at projector width (a 1024-px screen leaves about 760 px for the
    page) a long one is cut at the chart's edge ("...vs not (EDUCATION >"). Pass the width the
    chart gets (half of it in two columns). The figure is changed in place and returned.
    """
    title = fig.layout.title
    text = title.text or ""
    subtitle = (title.subtitle.text or "") if title.subtitle is not None else ""
    title_size = (title.font.size if title.font and title.font.size else 24)
    sub_size = (title.subtitle.font.size if title.subtitle and title.subtitle.font and title.subtitle.font.size
                else 15)
    title_lines = _wrap(text, max(int(width / (0.56 * title_size)), 12)) if text else []
    sub_lines = _wrap(subtitle, max(int(width / (0.5 * sub_size)), 16)) if subtitle else []
    old = len(_BREAK.split(text)) * title_size * 1.3 + len(_BREAK.split(subtitle)) * sub_size * 1.3 if text else 0
    new = len(title_lines) * title_size * 1.3 + len(sub_lines) * sub_size * 1.3
    if title_lines:
        fig.update_layout(title_text="<br>".join(title_lines))
        if fig.layout.title.yanchor == "top":   # anchored by its first line: room for the others above it
            fig.update_layout(title_pad_t=title_pad(fig.layout.title.text, title_size))
    if sub_lines:
        fig.update_layout(title_subtitle_text="<br>".join(sub_lines))
    if new > old:
        top = fig.layout.margin.t if fig.layout.margin and fig.layout.margin.t is not None else 100
        grow = int(new - old)
        fig.update_layout(margin_t=top + grow)
        if fig.layout.height:
            fig.update_layout(height=fig.layout.height + grow)
    _fit_axis_title(fig)
    return fig


CHART_WORDS = "The chart in words and numbers"


def chart(figure: Any, *, key: str, fit: bool | int = True, words_in: Any = None, **kwargs: Any) -> None:
    """Every chart of the app (pages and slides): the plotly chart, drawn on white in either theme (its colours are
    3:1 or better on white), and its text alternative from the figure's data (luskin_core.present.chart_text):
    the description is the chart's accessible name (A11Y_SCRIPT gives the drawing role="img" and that label), and an
    expander under it holds the description and the chart's numbers as a table, for every reader.

    ``fit``: wrap the title to the chart's width (:func:`fit_chart`; a number is the width in pixels).
    ``words_in``: a container for the text alternative instead of the expander under the chart (a slide's, which
    has no height to spare, goes in a popover beside the deck's buttons).
    """
    import plotly.graph_objects as go

    from luskin_core.present.chart_text import chart_text

    if isinstance(figure, dict):   # a cached figure kept as its JSON
        figure = go.Figure(figure)
    if fit:
        figure = fit_chart(figure) if fit is True else fit_chart(figure, int(fit))
    words = chart_text(figure)
    with st.container(key=f"chart_{key}"):
        st.plotly_chart(figure, key=key, theme=None, **kwargs)
        if words_in is not None:   # the drawing's name (A11Y_SCRIPT), held beside it: the words are elsewhere
            st.html(f'<span class="luskin-chart-name" aria-hidden="true">{html.escape(words.description)}</span>')
        with words_in if words_in is not None else st.expander(CHART_WORDS):
            st.markdown(md(words.description))
            if not words.table.empty:
                table = words.table.map(lambda v: md(v, 300))
                table.columns = [md(c) for c in table.columns]
                st.table(table, hide_index=True)
            if words.cut:
                st.caption(f"The first {len(words.table):,} of {words.points:,} values.")


def _fit_axis_title(fig: Any) -> None:
    """Grow the chart when its vertical axis title is longer than the plot is high (it would run into the subtitle)."""
    axis = fig.layout.yaxis
    if not fig.layout.height or axis is None or axis.title is None or not axis.title.text:
        return
    size = (axis.title.font.size if axis.title.font and axis.title.font.size else None) \
        or (fig.layout.font.size if fig.layout.font and fig.layout.font.size else 18)
    longest = max(len(line) for line in _BREAK.split(axis.title.text))
    margin = fig.layout.margin
    plot = fig.layout.height - (margin.t or 100) - (margin.b or 80)
    needed = int(longest * 0.55 * size / 0.9) - plot
    if needed > 0:
        fig.update_layout(height=fig.layout.height + needed)


# What Streamlit's own markup gets wrong for assistive technology, mended in the page as it is drawn (a
# MutationObserver on the app's document, installed once): a file uploader's drop zone is a
# role="presentation" section that carries a label (axe's presentation-role-conflict: read as a group instead);
# a chart's drawing (plotly's SVG layers, read as scattered tick labels) becomes one image named by its description.
# And the Tab order (WCAG 2.1.1, 2.4.3; issue 46: the Data page's verdict took 49 presses of Tab, now 20): a group
# of controls is one stop and the arrow keys move within it (the ARIA composite-widget pattern): the sidebar's page
# links, a row of buttons keyed in the script's TOOLBARS, a multiselect's chosen values (the left arrow from its box);
# a control's extras are no stop on the way forward: a grid's toolbar (Shift+Tab from the grid reaches it), a
# multiselect's "Clear all" (Backspace in its box does the same, a value at a time); the main area is no stop.
A11Y_SCRIPT = """
<script>
(function () {
  if (window.__luskinA11y) { return; }
  window.__luskinA11y = true;
  const NAV = '[data-testid="stSidebarNav"] a[data-testid="stSidebarNavLink"]';
  const TOOLBARS = {"sample_buttons": "Samples"};   // a container's key: the toolbar's name (the app's words)
  // an element in the Tab order (tabindex 0) or out of it (-1), touched only when it changes
  function stop(el, on) {
    const want = on ? "0" : "-1";
    if (el.getAttribute("tabindex") !== want) { el.setAttribute("tabindex", want); }
  }
  // a toolbar's buttons as drawn (Streamlit keeps a hidden copy of each button, to measure it)
  function buttonsOf(bar) {
    return [...bar.querySelectorAll("button")].filter((b) => b.checkVisibility({visibilityProperty: true}));
  }
  // a composite widget: only ``current`` of ``items`` is in the Tab order
  function rove(items, current) {
    for (const item of items) { stop(item, item === current); }
  }
  // an arrow key within a composite: the next or the previous item (Home and End: the first and the last)
  function moveIn(items, from, key) {
    const at = items.indexOf(from);
    const to = key === "Home" ? 0 : key === "End" ? items.length - 1
      : ["ArrowDown", "ArrowRight"].includes(key) ? Math.min(at + 1, items.length - 1) : Math.max(at - 1, 0);
    rove(items, items[to]);
    items[to].focus();
  }
  function mend() {
    for (const zone of document.querySelectorAll('[data-testid="stFileUploaderDropzone"][role="presentation"]')) {
      zone.setAttribute("role", "group");
    }
    // a grid's scroll box is no stop of its own (its canvas is the one stop; the arrow keys scroll it)
    for (const scroller of document.querySelectorAll('[data-testid="stDataFrame"] .dvn-scroller:not([tabindex])')) {
      scroller.setAttribute("tabindex", "-1");
    }
    // the main area is no stop of its own ("Skip to main content" still moves the focus there)
    const main = document.getElementById("stMain");
    if (main) { stop(main, false); }
    // the sidebar's page links: one stop, the current page's (or the one the arrow keys moved to)
    const links = [...document.querySelectorAll(NAV)];
    rove(links, links.find((a) => a === document.activeElement)
      || links.find((a) => a.getAttribute("aria-current") === "page") || links[0]);
    // a keyed row of buttons: a toolbar, one stop
    for (const [key, name] of Object.entries(TOOLBARS)) {
      for (const bar of document.querySelectorAll(".st-key-" + key)) {
        if (bar.getAttribute("role") !== "toolbar") { bar.setAttribute("role", "toolbar"); bar.setAttribute("aria-label", name); }
        const buttons = buttonsOf(bar);
        rove(buttons, buttons.find((b) => b === document.activeElement) || buttons[0]);
      }
    }
    // a grid's toolbar: a stop only while the focus is in the grid (Shift+Tab from the grid reaches it)
    for (const grid of document.querySelectorAll('[data-testid="stDataFrame"]')) {
      const box = grid.closest('[data-testid="stElementContainer"]') || grid.parentElement;
      const inside = !!box && box.contains(document.activeElement);
      for (const button of (box || grid).querySelectorAll('[data-testid="stElementToolbar"] button')) { stop(button, inside); }
    }
    // a multiselect: its box is the stop; its chosen values are reached with the left arrow from the empty box, and
    // "Clear all" is none (Backspace in the box removes the values)
    for (const select of document.querySelectorAll('[data-testid="stMultiSelect"]')) {
      const inTags = !!document.activeElement && !!document.activeElement.closest && !!document.activeElement.closest("[data-tag]")
        && select.contains(document.activeElement);
      for (const tag of select.querySelectorAll("[data-tag]")) { stop(tag, inTags && tag === document.activeElement); }
      for (const clear of select.querySelectorAll('button[aria-label="Clear all"]')) { stop(clear, false); }
    }
    // a chart (ui.chart): its drawing is one image named by its description; plotly's other layers are hidden
    for (const box of document.querySelectorAll('[class*="st-key-chart_"]')) {
      const words = box.querySelector('[data-testid="stExpander"] [data-testid="stMarkdownContainer"], .luskin-chart-name');
      const svgs = box.querySelectorAll('[data-testid="stPlotlyChart"] svg.main-svg');
      if (!words || !svgs.length) { continue; }
      const label = (words.textContent || "").trim();
      if (svgs[0].getAttribute("aria-label") !== label) {
        svgs[0].setAttribute("role", "img");
        svgs[0].setAttribute("aria-label", label);
      }
      for (const other of [...svgs].slice(1)) {
        if (other.getAttribute("aria-hidden") !== "true") { other.setAttribute("aria-hidden", "true"); }
      }
    }
  }
  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey || !(event.target instanceof Element)) { return; }
    const target = event.target;
    // a data grid is one stop of the Tab order (the ARIA grid pattern): the arrow keys move among its cells, Tab
    // leaves it (glide's grid would move one cell per Tab: 15 presses to cross the Data page's preview)
    if (event.key === "Tab") {
      if (target.matches('[data-testid="stDataFrame"] canvas')) {
        event.stopImmediatePropagation();   // not to the grid: the browser moves the focus on, as for any control
      }
      return;
    }
    const keys = ["ArrowDown", "ArrowUp", "ArrowLeft", "ArrowRight", "Home", "End"];
    if (target.matches(NAV) && keys.includes(event.key)) {
      event.preventDefault();
      moveIn([...document.querySelectorAll(NAV)], target, event.key);
      return;
    }
    const bar = target.closest(Object.keys(TOOLBARS).map((key) => ".st-key-" + key).join(", "));
    if (bar && target.matches("button") && keys.includes(event.key)) {
      event.preventDefault();
      moveIn(buttonsOf(bar), target, event.key);
      return;
    }
    // the left arrow in a multiselect's empty box: to its last chosen value (its own keys move among the values)
    const select = target.closest('[data-testid="stMultiSelect"]');
    if (select && event.key === "ArrowLeft" && target.matches("input") && !target.value) {
      const tags = [...select.querySelectorAll("[data-tag]")];
      if (tags.length) {
        event.preventDefault();
        rove(tags, tags[tags.length - 1]);
        tags[tags.length - 1].focus();
      }
    }
  }, true);
  // the stops that depend on where the focus is (a grid's toolbar, a multiselect's values)
  document.addEventListener("focusin", () => mend());
  document.addEventListener("focusout", () => requestAnimationFrame(mend));
  let queued = false;
  new MutationObserver(() => {
    if (!queued) { queued = true; requestAnimationFrame(() => { queued = false; mend(); }); }
  }).observe(document.body, {childList: true, subtree: true, attributes: true,
                             attributeFilter: ["role", "tabindex", "aria-current"]});
  mend();
})();
</script>
"""


def page_style() -> None:
    """The layout rules above and the accessibility mends, on every page (called once per run by app.py)."""
    st.html(PAGE_CSS)
    st.html(A11Y_SCRIPT, unsafe_allow_javascript=True)   # the app's own constant script, no user text
