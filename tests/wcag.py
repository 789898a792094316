"""The WCAG 2.1 contrast ratio the colour tests measure with (tests/test_plots.py, tests/test_heat_contrast.py)."""

from __future__ import annotations

from luskin_core.present.palette import BACKGROUND


def contrast(first: str, second: str = BACKGROUND) -> float:
    """The WCAG 2.1 contrast ratio of two ``#RRGGBB`` colours (1 to 21)."""
    def luminance(color: str) -> float:
        channels = [int(color.lstrip("#")[i:i + 2], 16) / 255 for i in (0, 2, 4)]
        r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b
    high, low = sorted((luminance(first), luminance(second)), reverse=True)
    return (high + 0.05) / (low + 0.05)
