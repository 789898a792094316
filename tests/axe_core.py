"""axe-core (Deque's accessibility engine, the one the US and UK governments' design systems test with) for the
browser tests: the npm package ``axe-core`` (4.x), installed once with npm into ``~/.cache/luskin-tests/axe``
(``LUSKIN_AXE_DIR`` overrides), never into the repository, and injected into the page under test.

Without node or npm the tests that need it are skipped, saying why, or fail when ``LUSKIN_REQUIRE_BROWSER`` is set
(as in CI), as tests/oidc_server.py does for the sign-in provider.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import pytest

PACKAGE = "axe-core@4"

# Every rule axe runs by default (WCAG 2.0/2.1/2.2 A and AA, and its best practices: heading order, empty table
# headers, landmarks), reported whatever its impact. Only the page's own content is read: axe.run(document).
RUN = """async () => {
  const result = await axe.run(document, {resultTypes: ["violations"]});
  return result.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map((n) => ({target: n.target.join(" "), html: n.html.slice(0, 200),
                                summary: (n.failureSummary || "").slice(0, 300)}))}));
}"""


def _missing(why: str) -> None:
    if os.environ.get("LUSKIN_REQUIRE_BROWSER"):
        pytest.fail(why)
    pytest.skip(why)


@cache
def source() -> str:
    """axe.min.js, installed with npm on first use."""
    folder = Path(os.environ.get("LUSKIN_AXE_DIR", "~/.cache/luskin-tests/axe")).expanduser()
    script = folder / "node_modules" / "axe-core" / "axe.min.js"
    if not script.exists():
        if not shutil.which("npm"):
            _missing("npm is needed for the accessibility tests (apt-get install -y nodejs npm)")
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "package.json").write_text('{"name": "luskin-axe-tests", "private": true}\n')
        done = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", PACKAGE],
                              cwd=folder, capture_output=True, text=True, timeout=600, check=False)
        if done.returncode != 0 or not script.exists():
            _missing(f"npm install {PACKAGE} failed: {done.stderr[-800:]}")
    return script.read_text(encoding="utf-8")


def violations(page: Any) -> list[dict[str, Any]]:
    """axe's violations on the page as it is now (each: rule id, impact, help, the elements at fault)."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.add_script_tag(content=source())
    return list(page.evaluate(RUN))


def summary(found: list[dict[str, Any]]) -> str:
    """The violations in a few lines each: the rule, its impact and the first elements at fault."""
    lines = []
    for v in found:
        lines.append(f"{v['id']} ({v['impact']}, {len(v['nodes'])} elements): {v['help']}")
        lines += [f"    {n['target']}: {n['html'][:120]!r} {n['summary'][:200]!r}" for n in v["nodes"][:3]]
    return "\n".join(lines)
