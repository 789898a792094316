"""Presentation page: the current analysis as slides, for a committee on a projector.

The deck is built on every run from the session's current results (the audit, and whatever
the Retrain, Thresholds and Equalized distribution pages computed for the current choices), so
it follows the analysis live. The slide on screen is in the URL (``/present?slide=3``, or
``/?page=present&slide=3``) so that a presenter can bookmark it. Previous/Next buttons and the
arrow keys (a small script in a same-origin frame clicks those buttons) move between slides; the
"Slides" expander below the deck hides slides. The slide itself holds no widget.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from luskin_app import analysis_page, config, keys, ui
from luskin_app import choices as ch_
from luskin_app import dataset as data_
from luskin_app.auditing import run_audit
from luskin_app.cache import recall
from luskin_core.present.slide_blocks import text_lines
from luskin_core.present.slides import Slide, build_slides, visible
from luskin_core.spec.audit_spec import AuditSpec

FULL = "full"  # ?full=1 in the address: full-screen mode (kept on a refresh)
# A projector is 1024x768 or 1280x720: a slide's chart gets what its text leaves of 720 px.
SCREEN_HEIGHT = 720
CHROME = 225          # px: the counter, the title, the buttons and the margins in full-screen mode
LINE = 32             # px: one line of slide text (19 px type)
GAP = 18              # px: between two sentences
CHARS_PER_LINE = 95   # characters of slide text on one line at 1024 px
MIN_CHART, MAX_CHART = 240, 440
# Windowed at 1024x768 (measured in Chromium): the slide box is 603 px high; its caption, the title's
# first line and the margins take 135 px, a line of slide text 28 px (text_lines counts the rest).
WINDOW_CHART_ROOM = 603 - 135 - 24   # 24 px to spare: a line estimate can be short by half a line
WINDOW_LINE = 28
MIN_WINDOW_CHART = 200
# Full-screen mode: no header, toolbar, sidebar or slide list; the slide takes the whole window.
FULL_CSS = """
<style>
header[data-testid="stHeader"], [data-testid="stToolbar"], [data-testid="stDecoration"],
section[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"], .st-key-present_extras,
[data-testid="stMain"] div:has(> .st-key-present_extras),
[data-testid="stSidebarNav"] { display: none !important; }
[data-testid="stMainBlockContainer"] { padding: 0.6rem 1.2rem 0.4rem 1.2rem !important; max-width: 100% !important; }
[data-testid="stMain"] .st-key-present_deck h1 { font-size: 2rem !important; padding: 0 !important; }
.st-key-present_deck [data-testid="stMarkdownContainer"] p { font-size: 1.2rem !important; line-height: 1.5 !important; }
</style>
"""
# Windowed mode (the app's menus shown, the sidebar open or not): the slide box is as high as the
# window leaves below the buttons, whatever the window (a 1024x768 or 1280x800 projector, a laptop),
# and the chart is as high as the text leaves of that box at 768 px (window_chart_height). The box's
# height in Python is a stand-in: the style below sets the real one from the window's height.
WINDOW_TOP = 164      # px the slide box leaves of the window: the top margin, the buttons, the gaps, the bottom
WINDOW_CSS = f"""
<style>
[data-testid="stMainBlockContainer"] {{ padding: 3.5rem 1.5rem 0 1.5rem !important; max-width: 100% !important; }}
[data-testid="stMain"] div:has(> .st-key-present_deck) {{ height: calc(100vh - {WINDOW_TOP}px) !important;
  flex: 0 0 calc(100vh - {WINDOW_TOP}px) !important; max-height: none !important; }}
[data-testid="stMain"] .st-key-present_deck h1 {{ font-size: 2rem !important; padding: 0 !important; }}
.st-key-present_deck [data-testid="stMarkdownContainer"] p {{ font-size: 1.2rem !important;
  line-height: 1.45 !important; }}
.st-key-present_deck [data-testid="stPlotlyChart"] {{ min-height: 200px !important; }}
</style>
"""
INDEX = keys.PRESENT_INDEX
URL_SEEN = keys.PRESENT_URL_SEEN
HIDDEN = keys.PRESENT_HIDDEN
HANDOUT = keys.PRESENT_HANDOUT

# Arrow keys (and Page Up/Down, as sent by presentation clickers) press the on-screen buttons.
# The listener lives on the app's document (this frame is same-origin); a new run replaces it.
KEYS_SCRIPT = """
<script>
(function () {
  const doc = window.parent.document;
  const win = window.parent;
  if (win.__luskinDeckKeys) { doc.removeEventListener("keydown", win.__luskinDeckKeys, true); }
  win.__luskinDeckKeys = function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) { return; }
    const target = event.target;
    const tag = target && target.tagName ? target.tagName.toLowerCase() : "";
    if (tag === "input" || tag === "textarea" || tag === "select" || (target && target.isContentEditable)) {
      return;
    }
    if (target && target.closest && target.closest('[role="slider"], [role="listbox"], [role="combobox"]')) {
      return;
    }
    let which = null;
    if (event.key === "ArrowRight" || event.key === "PageDown") { which = "next"; }
    if (event.key === "ArrowLeft" || event.key === "PageUp") { which = "prev"; }
    if (event.key === "f" || event.key === "F") { which = "full"; }
    if (event.key === "Escape" && doc.querySelector(".st-key-present_full_on")) { which = "full"; }
    if (which === null) { return; }
    const button = which === "full"
      ? doc.querySelector(".st-key-present_full button, .st-key-present_full_on button")
      : doc.querySelector(".st-key-present_" + which + " button");
    if (!button) { return; }
    event.preventDefault();
    if (!button.disabled) { button.click(); }
  };
  doc.addEventListener("keydown", win.__luskinDeckKeys, true);
})();
</script>
"""


def _slides(spec: AuditSpec) -> list[Slide]:
    """The deck from this session's current results (the same inputs as the report).

    Built once for the same inputs and kept in the session: each key press on the deck reruns the page, and
    building every slide's chart again took 0.1-0.3 s of the server's time per press (render_slide copies a
    figure before sizing it, so the kept slides are never changed).
    """
    # each brings its slides (report_parts): the adjusted gaps and the series for this specification, the scan
    # and the proxy audit for this data
    ran = [recall(name, spec) for name in ("adjusted", "series")] + [recall(name) for name in ("proxy", "scan")]
    ran += analysis_page.kept_results(spec)   # every page made from the analyses' table
    retrain, thresholds, equalized = (recall(name, spec) for name in ("retrain", "thresholds", "equalized"))
    dataset = config.dataset_ref()
    alpha = ch_.choices()["equalize"].get("alpha")
    made_from = (data_.dataset().fingerprint, spec.to_json(), repr(dataset), alpha)
    results = (*ran, retrain, thresholds, equalized)   # the same seven each time: compared one by one, by identity
    kept = st.session_state.get(keys.PRESENT_DECK)
    if kept is not None and kept[0] == made_from and all(old is new for old, new in zip(kept[1], results)):
        return list(kept[2])
    shown = equalized.shown_at(alpha) if equalized is not None else None   # its chart marks the slider's alpha
    slides = build_slides([run_audit(spec), *ran, retrain, thresholds, shown], dataset=dataset)
    st.session_state[keys.PRESENT_DECK] = (made_from, results, tuple(slides))
    return slides


def _url_slide() -> int | None:
    """The 1-based slide number in the URL, if it is a number."""
    raw = st.query_params.get("slide")
    try:
        return int(str(raw)) if raw is not None else None
    except ValueError:
        return None


def _step(delta: int, count: int) -> None:
    st.session_state[INDEX] = min(max(int(st.session_state.get(INDEX, 0)) + delta, 0), max(count - 1, 0))


def _current(count: int) -> int:
    """The slide to show: the URL's when it changed (a bookmark, a typed address), else the session's."""
    raw = st.query_params.get("slide")
    if raw != st.session_state.get(URL_SEEN):
        number = _url_slide()
        if number is not None:
            st.session_state[INDEX] = number - 1
    index = min(max(int(st.session_state.get(INDEX, 0)), 0), max(count - 1, 0))
    st.session_state[INDEX] = index
    st.query_params["slide"] = str(index + 1)
    st.session_state[URL_SEEN] = str(index + 1)
    return index


def chart_height(slide: Slide) -> int:
    """The chart's height so that the slide fits a 720-px-high projector: what the text leaves."""
    lines = sum(-(-max(len(s), 1) // CHARS_PER_LINE) for s in slide.sentences)
    return max(MIN_CHART, min(MAX_CHART, SCREEN_HEIGHT - CHROME - LINE * lines - GAP * len(slide.sentences)))


def window_chart_height(slide: Slide) -> int:
    """The chart's height in the window's slide box (768 px high, the sidebar open): what the text leaves.

    A fixed height, not the box's leftover: plotly measured a stretched chart before the text had wrapped
    and drew it too tall or squashed (the legend outside the chart, labels piled up), once in a few runs.
    """
    return max(MIN_WINDOW_CHART, WINDOW_CHART_ROOM - int(WINDOW_LINE * text_lines(slide)))


def full_screen() -> bool:
    return st.query_params.get(FULL) == "1"


def _toggle_full() -> None:
    if full_screen():
        del st.query_params[FULL]
    else:
        st.query_params[FULL] = "1"


def render_slide(slide: Slide, number: int, count: int, controls: Any = None) -> None:
    """One slide in large type: title, sentences, chart sized to fit the screen. Text is escaped; no widgets."""
    full = full_screen()
    box = st.container(key="present_deck", border=not full, height="content" if full else 600)
    with box:
        st.caption(f"Slide {number} of {count}")
        st.title(ui.md(slide.title), anchor=False)
        for sentence in slide.sentences:
            st.markdown(ui.md(sentence))
        if slide.figure is not None:
            figure = slide.figure
            height = chart_height(slide) if full else window_chart_height(slide)
            if full and figure.layout.height and figure.layout.height < height:
                height = figure.layout.height
            figure = type(figure)(figure).update_layout(height=height, autosize=True)
            words = None if controls is None else controls.popover(
                "Chart in words", icon=":material/table:", help=f"{ui.CHART_WORDS}: what it shows, and its numbers "
                "as a table.")
            ui.chart(figure, key=f"present_chart_{slide.key}", fit=False, height="content", words_in=words,
                     config={"displayModeBar": False, "responsive": True})


def render_controls(index: int, count: int) -> Any:
    """Previous / Next (the arrow keys press them) and where the deck is; returns the row, where a slide's chart
    puts its text alternative (a popover: the slide box has no height to spare for an expander)."""
    row = st.container(horizontal=True, key="present_controls", vertical_alignment="center")
    row.button("Previous", key="present_prev", icon=":material/arrow_back:", on_click=_step, args=(-1, count),
               disabled=index <= 0, help="Or press the left arrow key.")
    row.button("Next", key="present_next", icon=":material/arrow_forward:", on_click=_step, args=(1, count),
               disabled=index >= count - 1, type="primary", help="Or press the right arrow key.")
    on = full_screen()
    row.button("Leave full screen" if on else "Full screen", key="present_full_on" if on else "present_full",
               icon=":material/fullscreen_exit:" if on else ":material/fullscreen:", on_click=_toggle_full,
               help="Or press F (Esc leaves): hides the menus and the sidebar so that the slide fills the screen.")

    # the arrow and F keys: a script in a frame of one pixel at the row's end (st.iframe, the successor of
    # st.components.v1.html, has no frame of no height; in the row it costs the slide no line of its own)
    row.iframe(KEYS_SCRIPT, width=1, height=1, tab_index=-1)
    return row


def _toggle(key: str) -> None:
    hidden = set(st.session_state.get(HIDDEN, ()))
    if st.session_state.get(keys.slide_shown(key), True):
        hidden.discard(key)
    else:
        hidden.add(key)
    st.session_state[HIDDEN] = sorted(hidden)


def render_slide_list(slides: list[Slide]) -> None:
    """One checkbox per slide: untick to hide it from the deck (kept while the numbers change)."""
    hidden = set(st.session_state.get(HIDDEN, ()))
    with st.expander("Slides: choose which to show", icon=":material/checklist:"):
        for number, slide in enumerate(slides, 1):
            key = keys.slide_shown(slide.key)
            st.session_state[key] = slide.key not in hidden
            st.checkbox(f"{number}. {ui.md(slide.title, 120)}", key=key, on_change=_toggle, args=(slide.key,))


def _make_handout(shown: list[Slide]) -> None:
    from luskin_core.present.handout import handout_pdf

    st.session_state[HANDOUT] = (tuple(s.key for s in shown), handout_pdf(shown, title=config.dataset_ref().label))


def render_handout(shown: list[Slide]) -> None:
    """A printable handout: the shown slides as a PDF, one per page, with the same charts."""
    if not shown:
        return
    row = st.container(horizontal=True, vertical_alignment="center")
    made = st.session_state.get(HANDOUT)
    if made is not None and made[0] == tuple(s.key for s in shown):
        ui.download_button("Download the handout (PDF)", made[1], where=row, file_name="luskin-slides.pdf",
                            mime="application/pdf", key="present_handout_download", icon=":material/download:")
    else:
        row.button("Make a printable handout (PDF)", key="present_handout", icon=":material/print:",
                   on_click=lambda: ui.guarded(_make_handout, shown, where="present"),
                   help="The slides shown, one per page, with the same charts.")


def render_deck(spec: AuditSpec) -> None:
    st.html(FULL_CSS if full_screen() else WINDOW_CSS)
    slides: Any = ui.guarded(_slides, spec, where="present")
    if not slides:
        return
    shown = visible(slides, st.session_state.get(HIDDEN, ()))
    if not shown:
        st.info("Every slide is hidden: tick at least one in the list below.", icon=":material/visibility_off:")
    else:
        index = _current(len(shown))
        controls = render_controls(index, len(shown))
        render_slide(shown[index], index + 1, len(shown), controls)
    # Windowed, the handout and the slide list sit in the sidebar, so that the slide alone fills the page.
    with st.container(key="present_extras") if full_screen() else st.sidebar:
        render_handout(shown)
        render_slide_list(slides)
        st.caption("The deck follows the analysis: results computed on the Retrain, Thresholds and Equalized "
                   "distribution pages for the current choices appear here as slides. Bookmark this address to "
                   "come back to this slide.")


spec_, problem_ = ch_.current_spec()
if spec_ is None:
    ui.show_problem(str(problem_), "present")
elif ch_.needs_confirmation():
    ui.render_guesses()
    ui.render_confirm("present")
else:
    render_deck(spec_)
