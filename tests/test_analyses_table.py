"""Adding an analysis is its module, its report module and one line of the analyses' table (issue 45).

In a copy of the project, a small real analysis (each group's rows and positive outcomes, counted through the one
counting path) is added as ``luskin_core/analyses/group_counts.py`` (run and result), ``luskin_core/present/
group_counts_report.py`` (its words: the report section and a slide) and one line in ``ANALYSES`` (declaring its one option, the smallest group shown)
(luskin_core/present/report_parts.py). The copy then has, with no other file touched: the command ``luskin
group-counts`` (text and ``--json``, a mistake in plain words), a dashboard page (AppTest: the section drawn, no
error), its option as a flag and an input, the report's section and the deck's slide from ``results=[...]``. A file count over the copy says three.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from test_option_declarations import _changed_files, _copy_project

from luskin_core.present.report_parts import ANALYSES, analysis, made_from_table

ANALYSIS = '''"""Each group's rows and positive outcomes: an analysis added through the table (a test's example)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from luskin_core.counting.executor import counted_table


@dataclass(frozen=True)
class GroupCounts:
    """Rows and positive outcomes per group, over every cell."""

    groups: tuple[str, ...]
    rows: tuple[int, ...]
    positives: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"groups": list(self.groups), "rows": list(self.rows), "positives": list(self.positives)}


def run(data: Any, spec: Any, options: Any) -> GroupCounts:
    table, _ = counted_table(data, spec)
    rows = [int(v) for v in table.n.sum(axis=1)]
    kept = [i for i, n in enumerate(rows) if n >= options.smallest]   # its one option, declared on its line
    return GroupCounts(tuple(table.groups[i] for i in kept), tuple(rows[i] for i in kept),
                       tuple(int(table.positives.sum(axis=1)[i]) for i in kept))
'''

REPORT = '''"""The words, section and slide of the group counts (a test's example)."""

from __future__ import annotations

from typing import Any

from luskin_core.present.report_blocks import Section, Table
from luskin_core.present.slide_blocks import FINDING, Slide


def section(result: Any, context: Any) -> Section:
    out = Section("group-counts", "Rows per group")
    out.add("paragraph", text=f"{len(result.groups)} groups, {sum(result.rows):,} rows in all.")
    out.table(Table("Rows and positive outcomes per group", ("Group", "Rows", "Positive"),
                    tuple((g, f"{n:,}", f"{k:,}") for g, n, k in zip(result.groups, result.rows, result.positives))))
    return out


def slides(result: Any, context: Any) -> list[Slide]:
    return [Slide("Rows per group", (f"{len(result.groups)} groups, {sum(result.rows):,} rows in all.",), None,
                  FINDING, "group-counts")]
'''

LINE = '''    Analysis("luskin_core.analyses.group_counts:GroupCounts", "luskin_core.present.group_counts_report:section", 60,
             "luskin_core.present.group_counts_report:slides", name="group-counts", title="Group counts",
             help="each group's rows and positive outcomes", run="luskin_core.analyses.group_counts:run",
             command=True, page="tag",
             declares=(Option("smallest", Constraint("the smallest group", "whole", low=0), "Smallest group shown",
                              "Groups with fewer rows are left out.", default=0),)),
'''

SCRIPT = '''
import json, sys
import luskin_core
assert luskin_core.__file__.startswith(sys.argv[1]), luskin_core.__file__
from luskin_cli.main import main
import contextlib, io
out = {}
for name, argv in (("text", ["group-counts", "--data", "sample:adult", "--outcome", "income", "--positive", ">50K",
                             "--groups", "sex"]),
                   ("json", ["group-counts", "--data", "sample:adult", "--outcome", "income", "--positive", ">50K",
                             "--groups", "sex", "--json"]),
                   ("mistake", ["group-counts", "--data", "sample:adult", "--outcome", "income", "--positive", ">50K",
                                "--groups", "no_such_column"]),
                   ("option", ["group-counts", "--data", "sample:adult", "--outcome", "income", "--positive", ">50K",
                               "--groups", "race", "--smallest", "1000", "--json"]),
                   ("refused", ["group-counts", "--data", "sample:adult", "--outcome", "income", "--positive", ">50K",
                                "--groups", "race", "--smallest", "-1"])):
    text, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(text), contextlib.redirect_stderr(err):
        status = main(argv)
    out[name] = [status, text.getvalue(), err.getvalue()]

from luskin_core import AuditSpec, audit, load_sample
from luskin_core.present.report import build_html_report
from luskin_core.present.report_parts import analysis
from luskin_core.present.slides import build_slides
frame = load_sample("adult")
spec = AuditSpec("income", ">50K", group_by=("sex",))
entry = analysis("group-counts")
result = entry.runner()(frame, spec, entry.options_class()())
page = build_html_report(results=[audit(frame, spec), result])
out["report"] = "Rows and positive outcomes per group" in page and 'id="group-counts"' in page
out["slides"] = [s.title for s in build_slides(results=[audit(frame, spec), result])]

from streamlit.navigation.page import calc_hash
from streamlit.testing.v1 import AppTest
at = AppTest.from_file("app.py", default_timeout=120).run()
at._page_hash = calc_hash("group-counts")   # the page made from the line has no file: its address's hash
at.run()
out["page_exception"] = [str(e.message) for e in at.exception]
out["page_title"] = [t.value for t in at.title]
out["page_tables"] = [list(d.value.columns) for d in at.dataframe]
out["page_input"] = [n.label for n in at.number_input]
at.number_input(key="group_counts_smallest").set_value(20000).run()   # the page's groups: the sex preset's
out["page_rows"] = [len(d.value) for d in at.dataframe]
print("RESULT" + json.dumps(out))
'''


def test_an_analysis_added_through_the_table_is_on_the_command_line_the_page_the_report_and_the_slides(tmp_path):
    copy = tmp_path / "project"
    copy.mkdir()
    _copy_project(copy)
    (copy / "luskin_core" / "analyses" / "group_counts.py").write_text(ANALYSIS)
    (copy / "luskin_core" / "present" / "group_counts_report.py").write_text(REPORT)
    table = copy / "luskin_core" / "present" / "report_parts.py"
    text = table.read_text()
    anchor = "ANALYSES: tuple[Analysis, ...] = (\n"
    assert text.count(anchor) == 1, "the table's anchor moved"
    table.write_text(text.replace(anchor, anchor + LINE))
    assert sorted(_changed_files(copy)) == ["luskin_core/analyses/group_counts.py",
                                            "luskin_core/present/group_counts_report.py",
                                            "luskin_core/present/report_parts.py"]

    env = {**os.environ, "PYTHONPATH": str(copy)}
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(copy)], cwd=copy, env=env, capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.split("RESULT", 1)[1])
    status, text, err = got["text"]
    assert status == 0, err
    assert text.startswith("Rows per group\n") and "2 groups, 48,842 rows in all." in text
    assert "Male" in text and "Female" in text and "32,650" in text
    status, text, err = got["json"]
    assert status == 0 and sorted(json.loads(text)["rows"]) == [16192, 32650]
    status, text, err = got["mistake"]
    assert status == 2 and "no_such_column" in err and "Traceback" not in err
    assert got["report"] is True
    assert "Rows per group" in got["slides"]
    assert got["page_exception"] == [] and got["page_title"] == ["Group counts"]
    assert ["Group", "Rows", "Positive"] in got["page_tables"]
    # its option, declared on its line: a flag, checked by its constraint, and an input on its page
    status, text, err = got["option"]
    assert status == 0 and sorted(json.loads(text)["groups"]) == ["Asian-Pac-Islander", "Black", "White"], err
    status, text, err = got["refused"]
    assert status == 2 and "--smallest" in err and "Traceback" not in err
    assert "Smallest group shown" in got["page_input"] and got["page_rows"][-1] == 1


def test_every_line_of_the_table_has_a_name_a_title_and_a_result_class_that_exists() -> None:
    from importlib import import_module

    names = [e.name for e in ANALYSES]
    assert all(names) and len(set(names)) == len(names)
    for entry in ANALYSES:
        module, cls = entry.result.split(":")
        assert isinstance(getattr(import_module(module), cls), type)
        assert entry.title and analysis(entry.name) is entry
    for entry in made_from_table("command") + made_from_table("page"):
        assert entry.run is not None and callable(entry.runner())


# The lines that are not yet entries of the table (their own entry signatures, their own commands and pages):
# a line leaves this set when it gains its run and options (issue 45). The proxy audit, the last, left it when its
# specification could declare its groups as estimated (race from surname and place, not a column).
NOT_YET_RUN: set[str] = set()


def _small_frame():
    """400 decisions over a year: a group, a stratum, a date, a control, an amount, a surname and a ZIP code; group
    B is approved less."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(7)
    n = 400
    group = rng.choice(["A", "B"], n)
    sex, race = rng.choice(["Female", "Male"], n), rng.choice(["Black", "White", "Asian"], n)
    region = rng.choice(["north", "south"], n)
    score = rng.normal(size=n)
    approved = (rng.random(n) < np.where(group == "A", 0.6, 0.35) + 0.05 * score).astype(int)
    dates = pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.integers(0, 365, n), unit="D")
    return pd.DataFrame({"approved": approved, "group": group, "sex": sex, "race": race, "region": region, "score": score,
                         "decided": dates.strftime("%Y-%m-%d"), "pay": np.round(30000 + 5000 * score
                                                                                + 2000 * (group == "A"), 2),
                         "surname": rng.choice(["Garcia", "Smith", "Washington", "Nguyen"], n),
                         "zip": rng.choice(["10001", "60601", "94110", "30303"], n)})


def test_every_line_of_the_table_runs_through_its_runner_with_its_declared_options() -> None:
    """Every analysis is one entry: ``runner()(data, spec, options)`` with the options class its line names,
    built from its declarations, gives its line's result class (the scan, the series and the adjusted gaps
    each had an entry of their own before: scan(data, ScanSpec), audit_series(data, spec, period, every),
    adjust(data, spec, controls, ...))."""
    from importlib import import_module

    from luskin_core.spec.audit_spec import ESTIMATED_RACE, AuditSpec
    from luskin_core.spec.options import OPTION_CLASSES, OPTIONS

    frame = _small_frame()
    spec = AuditSpec("approved", 1, group_by=("group",))
    # each analysis' options as a caller gives them: the data's columns, the rest at their declared defaults
    given = {"scan": {"columns": ("group", "region"), "replicates": 99},
             "series": {"period": "decided", "every": "quarter"},
             "adjusted": {"controls": ("score", "region")}, "ll144": {"sex": "sex", "race": "race"},
             "ll144-output": {"sex": "sex", "race": "race"}, "eeoc": {"sex": "sex", "race": "race"},
             "proxy": {"surname": "surname", "place": "zip"}, "representation": {"benchmark": "A=0.5,B=0.5"}}
    specs = {"amounts": spec.with_changes(outcome="pay", outcome_type="amount", positive=None),
             "proxy": AuditSpec("approved", 1, estimated=ESTIMATED_RACE)}
    assert {e.name for e in ANALYSES if e.run is None} == NOT_YET_RUN
    ran = set()
    for entry in ANALYSES:
        if entry.run is None:
            continue
        made = entry.options_class()
        if entry.name in given:
            assert entry.options is not None and made is OPTION_CLASSES[entry.options], entry.name
            assert OPTIONS[entry.options], f"{entry.name} declares no option"
        options = None if made is None else made(**given.get(entry.name, {}))
        module, cls = entry.result.split(":")
        result = entry.runner()(frame, specs.get(entry.name, spec), options)
        assert isinstance(result, getattr(import_module(module), cls)), entry.name
        # its numbers as JSON: a result's to_dict, a regulator output's document (luskin audit --template --json)
        assert isinstance(result.to_dict() if hasattr(result, "to_dict") else result.document(), dict)
        ran.add(entry.name)
    assert ran == {e.name for e in ANALYSES} - NOT_YET_RUN


def test_an_analysis_options_refuse_what_their_declarations_refuse() -> None:
    """The options class of each entry checks its declared constraints, in plain words."""
    import pytest

    from luskin_core.errors import LuskinError

    scan, series, adjusted = (analysis(name).options_class() for name in ("scan", "series", "adjusted"))
    assert scan is not None and series is not None and adjusted is not None
    for made, values, words in ((scan, {"level": 1.5}, "The error level must be a share between 0 and 1"),
                                (scan, {"min_size": 0}, "The smallest group size must be a whole number of 1"),
                                (scan, {"error": "fwe"}, "The error rate must be fwer"),
                                (series, {"every": "week"}, "The period length must be 'month', 'quarter' or 'year'"),
                                (adjusted, {"log": "yes"}, "must be true or false")):
        with pytest.raises(LuskinError, match=words):
            made(**values)
    assert scan(error="FDR", measure="Rate").error == "fdr"
    assert adjusted(controls="age, hours", bins={"age": 5}).controls == ("age", "hours")
    assert adjusted(controls=["pay, in dollars"]).controls == ("pay, in dollars",)   # a name in a list kept whole


def test_the_scan_and_the_amounts_commands_are_made_from_their_lines() -> None:
    """``luskin scan`` is made from the scan's line (its flags from its declared options, issue 45), as
    ``luskin amounts`` is: no module of the command line is written for it."""
    from importlib.util import find_spec

    from luskin_cli import analysis as made
    from luskin_cli.main import build_parser
    from luskin_core.present.report_parts import made_from_table

    assert [e.name for e in made_from_table("command")] == ["scan", "amounts", "representation"]
    assert find_spec("luskin_cli.scan") is None
    commands = next(a for a in build_parser()._actions if a.dest == "command").choices
    assert commands["scan"].get_default("run") is made.run and commands["scan"].get_default("analysis") == "scan"
