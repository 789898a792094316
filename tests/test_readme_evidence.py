"""The README's worked example of the evidence (issue 48) prints what the README shows.

A reader follows "Evidence anyone can verify" command by command: the example's shell lines are read from the
README itself and run here (the command line in this process, the Python snippet as written), in a folder of
their own. Each line the README quotes as output must be printed, in the same order, once the parts that differ
from run to run are set aside (times, who ran it, keys' and files' hashes). The quoted output had gone stale (it
said 320 values where 342 are checked, and a gap of -0.123 recomputed where the gap is +0.123).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from cli_inproc import run_in_process

README = Path(__file__).resolve().parents[1] / "README.md"
SECTION = "## Evidence anyone can verify"


def _blocks() -> list[tuple[str, str]]:
    """The fenced blocks of the README's evidence section, in order: (language, body)."""
    text = README.read_text(encoding="utf-8")
    start = text.index(SECTION)
    end = text.index("\n## ", start + len(SECTION))
    return [(m.group(1), m.group(2)) for m in re.finditer(r"```(\w*)\n(.*?)```", text[start:end], re.DOTALL)]


def _normal(line: str) -> str:
    """A printed line without what differs between runs: times, the user, hashes and key ids."""
    line = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "TIME", line)
    line = re.sub(r" by [^ )]+\)", " by USER)", line)
    return re.sub(r"\b[0-9a-f]{12,}\b…?", "HEX", line).rstrip()


def _run(body: str) -> str:
    """Each command of a bash block: ``luskin ...`` in this process, a ``python3 - <<'PY'`` snippet by exec."""
    printed = []
    snippet = re.search(r"python3 - <<'PY'\n(.*?)\nPY\n", body, re.DOTALL)
    if snippet:
        exec(compile(snippet.group(1), "README snippet", "exec"), {})   # noqa: S102 - the README's own code
        body = body.replace(snippet.group(0), "")
    for line in body.replace("\\\n", " ").splitlines():   # a command continued with a backslash is one line
        words = shlex.split(line, comments=True)
        if not words:
            continue
        assert words[0] == "luskin", line
        status, out, err = run_in_process(words[1:])
        assert "Traceback" not in out + err, out + err
        expected = int(m.group(1)) if (m := re.search(r"# exit (\d)", line)) else 0
        assert status == expected, (line, out, err)
        printed += out.splitlines()
    return "\n".join(printed)


def test_the_worked_example_prints_what_the_readme_shows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)   # the example's files (operator.key, adult.evidence, ...) are the reader's
    blocks = _blocks()
    assert [lang for lang, _ in blocks][:4] == ["bash", "", "bash", ""], blocks
    for (_, commands), (_, shown) in zip(blocks[0:4:2], blocks[1:4:2], strict=True):
        printed = [_normal(line) for line in _run(commands).splitlines()]
        at = 0
        for line in (_normal(s) for s in shown.splitlines()):
            assert line in printed[at:], f"the README shows {line!r}; the example printed:\n" + "\n".join(printed)
            at = printed.index(line, at) + 1
    _run(blocks[4][1])   # the Local Law 144 example: every command runs (the summary page and CSV are written)
    assert (tmp_path / "summary.html").is_file() and (tmp_path / "summary.csv").is_file()
