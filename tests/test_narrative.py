"""One narrative: every number written by luskin_core.formatting, every sentence by luskin_core.analyses.narrative.

Two promises a user relies on: a p-value, a share and a gap read the same on every surface (no
"< 0.001" in one place and "<0.001" or "p n/a" in another, no "100.0%" for a share below one),
and one comparison reads word for word the same on the command line, in its JSON and in the
report.
"""

from __future__ import annotations

import ast
import html
import json
import re
from pathlib import Path

import pytest

from luskin_cli.main import main
from luskin_core.formatting import format_p, format_percent, format_points, points

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("luskin_core", "luskin_cli", "luskin_app", "app_pages")
ALLOWED = {ROOT / "luskin_core" / "formatting.py", ROOT / "luskin_core" / "narrative.py"}
FIXED = re.compile(r"^[+\- ]?,?\.\d+f$")          # a fixed-decimal format spec: ".1f", "+.1f"
HUNDRED = re.compile(r"(?<![\w.])100(?:\.0)?\s*\*|\*\s*100(?:\.0)?(?![\w.])")
P_TEXT = re.compile(r"<\s?0\.001|p n/a")
D3_PERCENT = re.compile(r"%\{[^{}]*:[^{}]*%\}")   # plotly's own "%{y:.1%}": 99.96% would read 100.0%


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring constants (words about formats may quote them)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _spec_text(spec: ast.JoinedStr) -> str:
    return "".join(v.value for v in spec.values if isinstance(v, ast.Constant) and isinstance(v.value, str))


def local_formats(source: str) -> list[tuple[int, str]]:
    """Where a module formats a percentage, a gap in points or a p-value by hand: (line, what)."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    # an option's help on the command line (flag_help=) is the command line's text, where flags are the words
    skip |= {id(part) for node in ast.walk(tree) if isinstance(node, ast.keyword) and node.arg == "flag_help"
             for part in ast.walk(node.value)}
    found: list[tuple[int, str]] = []
    scaled = _scaled_names(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            if P_TEXT.search(node.value):
                found.append((node.lineno, f"a p-value spelled by hand: {node.value[:60]!r}"))
            if D3_PERCENT.search(node.value):
                found.append((node.lineno, f"a percentage formatted by plotly: {node.value[:60]!r}"))
        if not isinstance(node, ast.JoinedStr):
            continue
        parts = node.values
        for i, part in enumerate(parts):
            if not isinstance(part, ast.FormattedValue) or not isinstance(part.format_spec, ast.JoinedStr):
                continue
            spec = _spec_text(part.format_spec)
            expression = ast.unparse(part.value)
            following = parts[i + 1] if i + 1 < len(parts) else None
            percent_sign = (isinstance(following, ast.Constant) and isinstance(following.value, str)
                            and following.value.startswith("%"))
            if spec.endswith("%"):
                found.append((node.lineno, f"a '%' format spec: {{{expression}:{spec}}}"))
            elif FIXED.match(spec) and (HUNDRED.search(expression) or percent_sign
                                        or any(re.search(rf"\b{name}\b", expression) for name in scaled)):
                found.append((node.lineno, f"a share or gap times 100 by hand: {{{expression}:{spec}}}"))
    return found


def _scaled_names(tree: ast.AST) -> set[str]:
    """Names given a value times 100 ("value = 100 * abs(x)"), whose fixed-decimal format is a percent by hand."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and HUNDRED.search(ast.unparse(node.value)):
            out.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return out


def _scanned_files() -> list[Path]:
    files = [p for folder in SCANNED for p in sorted((ROOT / folder).rglob("*.py"))]
    return [p for p in files if p not in ALLOWED]


def test_the_scan_finds_what_it_looks_for() -> None:
    """The scan can fail: each way of formatting by hand that the project had is caught."""
    caught = [
        'x = f"{100 * share:.1f}%"',
        'x = f"{share:.1%}"',
        'x = f"{100 * gap:+.1f} points"',
        'x = f"{gap * 100:.0f}"',
        'x = f"{rate:.1f}% of rows"',
        'value = 100 * abs(gap)\nx = f"{value:.0f} points"',
        'x = "< 0.001" if p < 0.001 else "p"',
        'x = "<0.001"',
        'x = "p n/a"',
        'x = "share %{y:.1%}"',
        'x = f"<b>{name}</b> %{{y:.1%}}"',
    ]
    for line in caught:
        assert local_formats(line), line
    allowed = [
        'def f():\n    """Prints \'p < 0.001\' like the rest."""\n    return 1',
        'x = f"{ratio:.2f}"',
        'x = f"{100 * tolerance:g}-point tolerance"',
        'x = f"{n:,} rows"',
        'x = f"{format_percent(share)} of rows"',
        'x = "%{y:.2f}"',
    ]
    for line in allowed:
        assert not local_formats(line), line


def test_no_surface_formats_a_percentage_or_a_p_value_by_hand() -> None:
    """Outside formatting.py and narrative.py, no module writes its own percent, points or p-value format."""
    offenders = []
    for path in _scanned_files():
        for line, what in local_formats(path.read_text(encoding="utf-8")):
            offenders.append(f"{path.relative_to(ROOT)}:{line}: {what}")
    assert not offenders, "\n".join(offenders)


@pytest.mark.parametrize("p, sentence, table", [
    (0.0004, "p < 0.001", "<0.001"), (0.001, "p = 0.001", "0.001"), (0.0342, "p = 0.034", "0.034"),
    (None, "p not computable", "n/a"), (float("nan"), "p not computable", "n/a"),
])
def test_one_spelling_of_a_p_value(p, sentence, table) -> None:
    assert format_p(p) == sentence and format_p(p, short=True) == table


@pytest.mark.parametrize("gap, text, signed, words", [
    (0.1404, "14.0", "+14.0", "14 points"), (-0.021, "-2.1", "-2.1", "2 points"), (0.0, "0.0", "0.0", "0 points"),
    (-0.0, "0.0", "0.0", "0 points"), (0.0096, "1.0", "+1.0", "1 point"), (0.004, "0.4", "+0.4", "0.4 points"),
    (0.00004, "0.004", "+0.004", "<0.01 points"), (-1e-9, ">-0.001", ">-0.001", "<0.01 points"),
    (None, "n/a", "n/a", "an unknown number of points"),
])
def test_a_gap_in_points_never_reads_as_zero_unless_it_is(gap, text, signed, words) -> None:
    assert format_points(gap) == text and format_points(gap, signed=True) == signed and points(gap) == words


def test_pandas_missing_values_read_as_n_a() -> None:
    import pandas as pd
    assert format_percent(pd.NA) == format_points(pd.NA) == format_p(pd.NA, short=True) == "n/a"


# ------------------------------------------------------------------------------------------
# The same comparison on every surface
# ------------------------------------------------------------------------------------------
def _flat(text: str) -> str:
    return " ".join(text.split())


def _page_text(page: str) -> str:
    """The report's visible words: scripts and tags dropped, entities decoded, spaces collapsed."""
    page = re.sub(r"<(script|style)\b.*?</\1>", " ", page, flags=re.DOTALL)
    return _flat(html.unescape(re.sub(r"<[^>]+>", " ", page)))


CASES = {
    "paper": ["--preset", "adult"],  # two classes in two filter cells: gap sentences, pooled view, a note
    "groups": ["--data", "sample:adult", "--outcome", "income", "--positive", ">50K", "--groups", "race",
               "--stratify", "sex"],  # every race against the reference within each sex
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_comparison_reads_the_same_on_the_command_line_in_json_and_in_the_report(case, capsys, tmp_path) -> None:
    argv = CASES[case]
    assert main(["audit", *argv]) == 0
    text = capsys.readouterr().out
    assert main(["audit", *argv, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    target = tmp_path / "report.html"
    assert main(["report", *argv, "--html", str(target)]) == 0
    capsys.readouterr()
    page = _page_text(target.read_text(encoding="utf-8"))

    sentences = doc["sentences"]
    assert sentences, "the JSON holds the audit's sentences"
    lines = text.splitlines()
    for sentence in sentences:
        assert f"- {sentence}" in lines, sentence             # the command line prints it as it is
        assert _flat(sentence) in page, sentence               # the report says it word for word
    # each comparison's own sentence is the one the JSON's list quotes (cells of the paper, or groups alone)
    judged = {c["sentence"] for c in doc["comparisons"] if not c["is_reference"]}
    assert judged & set(sentences) or doc["pooled"], "the sentences come from the comparisons"
    for finding in doc["findings"]:
        assert any(line.endswith(f". {finding['sentence']}") for line in lines), finding["sentence"]
    assert f"Verdicts: {doc['headline']}" in lines
    assert _flat(doc["headline"]) in page
    # one spelling of a p-value in the words of every surface
    for surface in (text, page, " ".join(sentences)):
        assert "< 0.001" not in surface.replace("p < 0.001", "")
        assert "p n/a" not in surface
    assert any("p < 0.001" in s or "p = " in s for s in sentences)


@pytest.mark.parametrize("groups", [False, True])
def test_the_audit_page_says_the_same_sentences(groups: bool) -> None:
    """The dashboard's Audit page says the audit's sentences word for word (escaped for Markdown, read back)."""
    from test_app import goto, open_app

    from luskin_app.ui import unescape
    from luskin_core.analyses.audit import audit
    from luskin_core.counting.data import PRESETS, load_sample

    spec = PRESETS["adult"].spec
    at = goto(open_app(), "audit")
    if groups:  # each race against the reference, in the preset's two filter cells
        spec = spec.with_changes(protected=None, group_label=None, other_label=None, group_by=("race",))
        at.radio(key="audit_group_mode").set_value("columns").run()
        at.multiselect(key="audit_group_by").set_value(["race"]).run()
    assert not at.exception and not at.error
    result = audit(load_sample("adult"), spec)
    # the paper's view says each sentence in a box coloured by its verdict, the general view as a list
    shown = [unescape(str(e.value)) for kind in ("info", "success", "warning") for e in getattr(at, kind)]
    shown += [line.removeprefix("- ") for m in at.markdown for line in unescape(m.value).splitlines()]
    assert result.sentences()
    for sentence in result.sentences():
        assert sentence in shown, sentence
    assert any("p < 0.001" in s for s in result.sentences())


# Words a committee met on the pages (issue 27): a plural in brackets, "pts", a command-line flag. The
# command line (luskin_cli) may name its own flags; the library and the dashboard write in words.
WORDS_IN_CODE = {"a plural in brackets": re.compile(r"[a-z]\(s\)"), "'pts' for points": re.compile(r"\bpts?\b"),
                 "a command-line flag": re.compile(r"(?<![\w-])--[a-z][a-z-]{2,}")}
SKIP_WORDS = {ROOT / "luskin_app" / "housekeeping.py", ROOT / "luskin_app" / "keep.py",   # server log lines
              # the published LL144 summary prints, at its foot, the command a reader types to verify it
              ROOT / "luskin_core" / "evidence" / "ll144_public.py"}


_SQL = re.compile(r"\b(SELECT|FROM|GROUP BY|ORDER BY)\b|\b[a-z_]+\([a-z_*]+\) AS \w")   # a query, not words for people


def words_in_code(source: str) -> list[tuple[int, str]]:
    """Where a module's text for people (a string, not a docstring or a log format) holds one of WORDS_IN_CODE."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    # an option's help and refusal on the command line (flag_help=, flag_requires=) and a command's description
    # (command_description=) are the command line's text, where flags are the words
    skip |= {id(part) for node in ast.walk(tree) if isinstance(node, ast.keyword)
             and node.arg in ("flag_help", "flag_requires", "command_description") for part in ast.walk(node.value)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip \
                and not _SQL.search(node.value):
            found += [(node.lineno, f"{name}: {node.value[:70]!r}") for name, pattern in WORDS_IN_CODE.items()
                      if pattern.search(node.value)]
    return found


def test_the_word_scan_finds_what_it_looks_for() -> None:
    for line in ('x = f"{n} row(s) have no score"', 'x = "a gap of " + g + " pts"', 'x = "(give one with --default-threshold)"'):
        assert words_in_code(line), line
    for line in ('def f():\n    """Like ``luskin audit --json``."""\n    return 1', 'x = "1 row"', 'x = f"{g} points"',
                 'x = ["count(*) AS n", "avg(s) AS mean"]', 'o = Option("log", flag_help="with --amount: its log")',
                 'o = Option("c", flag_requires="Say which: --columns a")', 'a = Analysis(command_description="--fdr Q")'):
        assert not words_in_code(line), line


def test_no_page_or_library_text_uses_the_words_of_the_code() -> None:
    offenders = [f"{path.relative_to(ROOT)}:{line}: {what}" for path in _scanned_files()
                 if path not in SKIP_WORDS and "luskin_cli" not in path.parts
                 for line, what in words_in_code(path.read_text(encoding="utf-8"))]
    assert not offenders, "\n".join(offenders)
