"""The dashboard by keyboard (issue 46, WCAG 2.1.1, 2.1.2, 2.4.1, 2.4.3, 2.4.7), at 1024x768 on the Adult sample.

- Tab alone crosses the Data page to the verdict (its "At a glance" sentences) in at most 20 presses from the first
  screen (it took 49: 14 on the sidebar's page links, 4 on the preview's toolbar, 4 on the multiselects' values and
  "Clear all", the names and the models' columns before the verdict; now 20), with the data preview one stop of the
  Tab order (the arrow keys move among its cells), its scroll box no stop, and every control Tab lands on showing a
  focus indicator of 3:1 or better against the page (a radio option's ring drawn on its hidden input, invisible).
- The Audit page's verdict by the sidebar, as a keyboard user goes there: Tab to the page links, the down arrow to
  "Audit", Enter, then Tab: at most 20 presses from the first screen (6).
- A group of controls is one stop and the arrow keys move within it: the sidebar's page links, the sample buttons, a
  multiselect's chosen values (the left arrow from its box; Backspace there removes the last); the preview's toolbar
  is reached by Shift+Tab from the grid, each with its focus ring.
- With the page's skip links ("Skip to main content", "Skip to the verdict") the verdict is at most 20 presses from
  the first screen (Tab and Enter each count).
- Present: Tab reaches the deck's Next button (its ring 3:1), Enter and the arrow keys move the slides.

The presses and what each one focused are printed (``pytest -s``).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from conftest import UI
from test_present_fit import KEYS_READY, SHOWS_SLIDE

pytestmark = pytest.mark.browser

MOST = 20
# The verdicts: the Data page's "At a glance" sentences, the Audit page's headline (its icon's name, then its words).
DATA_VERDICT = """[...document.querySelectorAll('[data-testid="stMarkdownContainer"]')]
    .find((m) => (m.textContent || "").startsWith("At a glance:"))"""
AUDIT_VERDICT = """[...document.querySelectorAll('[data-testid="stMain"] h2')]
    .find((h) => /^(check_circle|warning|help)\\s*(Within|The gap exceeds|No cell)/.test((h.textContent || "").trim()))"""
# The focused element: what it is, whether the verdict comes before it in the page, and its focus indicator.
FOCUSED_ON = """() => {
  const el = document.activeElement;
  const verdict = __VERDICT__;
  if (!el || el === document.body) { return {name: "(the page)", past: false, inGrid: false}; }
  // what the reader sees focused: a visually hidden input (a radio option's, react-aria's clipped span) shows its
  // focus on its label
  let shown = el;
  for (let p = el.parentElement, up = 0; p && up < 3; p = p.parentElement, up++) {
    const ps = getComputedStyle(p);
    if (ps.clipPath === "inset(50%)" || ps.clip === "rect(0px, 0px, 0px, 0px)") { shown = el.closest("label") || p.parentElement; break; }
  }
  const s = getComputedStyle(shown);
  const back = (node) => {
    for (let p = node; p; p = p.parentElement) {
      const c = getComputedStyle(p).backgroundColor;
      if (c && c !== "rgba(0, 0, 0, 0)" && c !== "transparent") { return c; }
    }
    return "rgb(255, 255, 255)";
  };
  const box = el.closest('[data-testid]');
  return {
    name: (el.tagName + " " + (box ? box.getAttribute("data-testid") : "") + " "
           + (el.getAttribute("aria-label") || el.innerText || "").trim().slice(0, 50)).replace(/\\s+/g, " "),
    past: !!verdict && !!(verdict.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING),
    inGrid: !!el.closest('[data-testid="stDataFrame"]'),
    outline: [s.outlineStyle, parseFloat(s.outlineWidth) || 0, s.outlineColor],
    background: back(shown.parentElement || shown),
  };
}"""
FOCUSED = FOCUSED_ON.replace("__VERDICT__", DATA_VERDICT)
ON_AUDIT = FOCUSED_ON.replace("__VERDICT__", AUDIT_VERDICT)


def _rgb(css: str) -> tuple[float, float, float]:
    r, g, b = (int(v) for v in re.findall(r"\d+", css)[:3])
    return r, g, b


def _contrast(first: str, second: str) -> float:
    def lum(css: str) -> float:
        channels = [c / 255 for c in _rgb(css)]
        r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b
    high, low = sorted((lum(first), lum(second)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def _walk(ui: UI, *, follow: bool, limit: int = 120) -> list[dict[str, Any]]:
    """Press Tab from the top of the first screen until the focus is past the verdict; what each press focused.

    ``follow``: press Enter on the page's skip links ("Skip to main content", "Skip to the verdict"), as a keyboard
    user does (each Enter counts as a press)."""
    ui.page.evaluate("() => { if (document.activeElement) document.activeElement.blur(); window.scrollTo(0, 0); }")
    seen: list[dict[str, Any]] = []
    for _ in range(limit):
        key = "Enter" if follow and seen and seen[-1]["name"].startswith("A ") and " Skip to " in seen[-1]["name"] \
            else "Tab"
        ui.page.keyboard.press(key)
        seen.append({**ui.page.evaluate(FOCUSED), "key": key})
        if seen[-1]["past"]:
            break
    return seen


def _first_screen(ui: UI, theme: str) -> None:
    ui.page.emulate_media(color_scheme=theme)
    ui.page.set_viewport_size({"width": 1024, "height": 768})
    ui.open()
    ui.wait_text("Ready: comparing")
    ui.wait_text(re.compile(r"^At a glance:"))
    ui.idle()
    ui.settle()


def _printed(seen: list[dict[str, Any]], label: str) -> None:
    for number, focus in enumerate(seen, 1):
        print(f"[{label}] {number} {focus['key']}: {focus['name']}" + (" (grid)" if focus["inGrid"] else ""),
              flush=True)
    cells = sum(f["name"].startswith("CANVAS") for f in seen)
    print(f"[{label}] past the verdict after {len(seen)} presses ({sum(f['inGrid'] for f in seen)} inside the "
          f"grid, {cells} on its cells)")


def _faint(seen: list[dict[str, Any]]) -> list[str]:
    """The focused controls whose focus indicator is thinner than 2 px or under 3:1 against the page."""
    faint = []
    for focus in seen:
        style, width, color = focus.get("outline") or ("none", 0, "")
        ratio = _contrast(color, focus["background"]) if style != "none" and width else 0.0
        if width < 2 or ratio < 3:
            faint.append(f"{focus['name']}: outline {style} {width}px {color} on {focus['background']} ({ratio:.2f}:1)")
    return faint


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_tab_crosses_the_page_the_preview_one_stop_each_with_a_visible_focus(ui: UI, theme: str) -> None:
    _first_screen(ui, theme)
    seen = _walk(ui, follow=False)
    _printed(seen, f"tab {theme}")
    assert seen[-1]["past"], f"Tab never passed the verdict in {len(seen)} presses"
    cells = [f["name"] for f in seen if f["name"].startswith("CANVAS")]
    assert len(cells) <= 1, f"the data preview holds the Tab key: {len(cells)} presses on its cells"
    assert not [f for f in seen if f["inGrid"] and f["name"].startswith("DIV")], "the grid's scroll box is a stop"
    faint = _faint(seen)
    assert not faint, "controls without a visible focus indicator (3:1):\n  " + "\n  ".join(faint)
    assert len(seen) <= MOST, f"Tab alone takes {len(seen)} presses to the verdict (at most {MOST}): " + \
        "; ".join(f["name"] for f in seen)


def test_the_audit_verdict_by_the_sidebar_within_20_presses(ui: UI) -> None:
    """From the first screen: Tab to the sidebar's page links, the down arrow to "Audit", Enter, then Tab until the
    focus is past the Audit page's verdict (its headline)."""
    _first_screen(ui, "light")
    ui.page.evaluate("() => { if (document.activeElement) document.activeElement.blur(); window.scrollTo(0, 0); }")
    seen: list[dict[str, Any]] = []

    def press(key: str) -> dict[str, Any]:
        ui.page.keyboard.press(key)
        seen.append({**ui.page.evaluate(ON_AUDIT), "key": key})
        return seen[-1]

    for _ in range(MOST):
        if press("Tab")["name"].startswith("A stSidebarNavLink"):
            break
    for _ in range(MOST):
        if press("ArrowDown")["name"].endswith(" Audit"):
            break
    assert seen[-1]["name"].endswith(" Audit"), f"the arrow keys never reached the Audit link: {seen}"
    ui.rerun_by(lambda: ui.page.keyboard.press("Enter"))
    seen.append({"key": "Enter", "name": "(the Audit page)", "past": False, "inGrid": False})
    ui.wait_text(re.compile(r"^(Within|The gap exceeds)"))
    ui.idle()
    ui.settle()
    for _ in range(MOST):
        if press("Tab")["past"]:
            break
    _printed(seen, "audit")
    assert seen[-1]["past"], f"Tab never passed the Audit page's verdict in {len(seen)} presses"
    faint = _faint([f for f in seen if "outline" in f])
    assert not faint, "controls without a visible focus indicator (3:1):\n  " + "\n  ".join(faint)
    assert len(seen) <= MOST, f"the Audit page's verdict takes {len(seen)} presses (at most {MOST}): " + \
        "; ".join(f"{f['key']} {f['name']}" for f in seen)


def _focus(ui: UI) -> dict[str, Any]:
    return {**ui.page.evaluate(FOCUSED), "key": ""}


def test_a_group_of_controls_is_one_stop_the_arrow_keys_move_within_it(ui: UI) -> None:
    """The sidebar's page links and the sample buttons: the arrow keys move the focus (Tab leaves the group); the
    preview's toolbar: Shift+Tab from the grid, shown and ringed; a multiselect's chosen value: the left arrow from its
    empty box, and Backspace there removes the last one."""
    _first_screen(ui, "light")
    nav = ui.page.get_by_test_id("stSidebarNav")
    nav.get_by_role("link", name="Data", exact=True).focus()
    names = []
    for key in ("ArrowDown", "ArrowDown", "ArrowUp", "End", "Home"):
        ui.page.keyboard.press(key)
        names.append(_focus(ui)["name"].rsplit(" ", 1)[-1])
    assert names == ["Audit", "time", "Audit", "Verify", "Data"], names
    ui.page.keyboard.press("Tab")
    assert not _focus(ui)["name"].startswith("A stSidebarNavLink"), "Tab stays among the page links"

    ui.page.get_by_role("button", name="Use sample: Adult (census income)", exact=True).focus()
    names = []
    for key in ("ArrowRight", "ArrowRight", "ArrowLeft", "Home", "End"):
        ui.page.keyboard.press(key)
        names.append(_focus(ui)["name"].split("Use sample: ", 1)[-1].split(" ", 1)[0])
    assert names == ["COMPAS", "NYPD", "COMPAS", "Adult", "NYPD"], names
    ui.page.keyboard.press("Tab")
    assert "Use sample" not in _focus(ui)["name"], "Tab stays among the sample buttons"

    ui.page.locator('[data-testid="stDataFrame"] canvas').first.focus()
    toolbar = []
    for _ in range(4):
        ui.page.keyboard.press("Shift+Tab")
        toolbar.append(_focus(ui))
    names = [f["name"].split(" ", 2)[-1] for f in toolbar]
    assert names == ["Fullscreen", "Search", "Download as CSV", "Show/hide columns"], names
    faint = _faint(toolbar)
    assert not faint, "the grid's toolbar without a visible focus indicator (3:1):\n  " + "\n  ".join(faint)
    shown = ui.page.evaluate("""() => { let op = 1;
      for (let p = document.activeElement; p; p = p.parentElement) { op *= parseFloat(getComputedStyle(p).opacity); }
      return op; }""")
    assert shown > 0.9, f"the grid's toolbar is focused but faded out (opacity {shown})"

    label = "Protected group: the values that form it"
    box = ui.page.get_by_role("combobox", name=label, exact=True).locator("visible=true").first
    box.focus()
    ui.page.keyboard.press("ArrowLeft")
    assert _focus(ui)["name"].startswith("SPAN") and _focus(ui)["name"].endswith(" White"), _focus(ui)["name"]
    ui.page.keyboard.press("ArrowRight")
    assert _focus(ui)["name"].startswith("INPUT"), _focus(ui)["name"]
    ui.rerun_by(lambda: ui.page.keyboard.press("Backspace"))
    assert ui.chosen(label) == [], f"Backspace in the empty box left {ui.chosen(label)}"


def test_the_verdict_within_20_presses_from_the_first_screen(ui: UI) -> None:
    _first_screen(ui, "light")
    seen = _walk(ui, follow=True)
    _printed(seen, "keys")
    assert seen[-1]["past"], f"the keys never passed the verdict in {len(seen)} presses"
    assert len(seen) <= MOST, f"the verdict takes {len(seen)} presses (at most {MOST}): " + \
        "; ".join(f"{f['key']} {f['name']}" for f in seen)


def test_the_deck_by_keyboard_its_buttons_in_the_tab_order(ui: UI) -> None:
    """Present: the slide's buttons are reached by Tab (each with its focus ring) and act on Enter; the arrow keys
    move the deck when no widget has the focus."""
    ui.page.set_viewport_size({"width": 1024, "height": 768})
    ui.open("?page=present&slide=2")
    ui.wait_text(re.compile(r"^Slide 2 of \d+$"))
    ui.page.wait_for_function(KEYS_READY, timeout=120_000)   # the deck's frame drawn: the page is complete
    ui.idle()
    ui.settle()
    total = re.search(r"of (\d+)", ui.page.get_by_text(re.compile(r"^Slide 2 of \d+$")).first.inner_text())
    assert total is not None
    ui.page.evaluate("() => { if (document.activeElement) document.activeElement.blur(); window.scrollTo(0, 0); }")
    names = []
    for _ in range(60):
        ui.page.keyboard.press("Tab")
        focus = ui.page.evaluate(FOCUSED)
        names.append(focus["name"])
        if focus["name"].startswith("BUTTON") and focus["name"].endswith("Next"):
            break
    print(f"[deck] Next after {len(names)} presses: " + "; ".join(names))
    assert names[-1].endswith("Next"), "Tab never reached the deck's Next button"
    style, width, color = focus["outline"]
    assert style != "none" and width >= 2 and _contrast(color, focus["background"]) >= 3, focus

    def enter() -> None:
        now = ui.page.evaluate(FOCUSED)["name"]
        assert now.endswith("Next"), f"the focus left the Next button before Enter was pressed: it is on {now}"
        ui.page.keyboard.press("Enter")

    ui.rerun_by(enter, changed=SHOWS_SLIDE.format(f"Slide 3 of {total.group(1)}"))
    ui.wait_text(f"Slide 3 of {total.group(1)}")
    ui.page.evaluate("() => { if (document.activeElement) document.activeElement.blur(); }")
    ui.rerun_by(lambda: ui.page.keyboard.press("ArrowRight"), changed=SHOWS_SLIDE.format(f"Slide 4 of {total.group(1)}"))
    ui.wait_text(f"Slide 4 of {total.group(1)}")
