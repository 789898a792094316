"""``luskin report``'s flags of the analyses made from their line (issue 45): each is made from the analysis'
declarations (``OPTIONS[line.options]``) behind the analysis' name (``--scan-depth`` for the scan's ``--depth``), and
read typed; the old flags (``--scan COLS``, ``--scan-depth``, ``--scan-fdr``) still work."""

from __future__ import annotations

import argparse
import json
from dataclasses import make_dataclass

import pytest

from luskin_cli.main import build_parser, main
from luskin_cli.options import options_from

ADULT = ("--data", "sample:adult", "--outcome", "income", "--positive", ">50K")


def _report_parser() -> argparse.ArgumentParser:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices["report"]


def _flags() -> set[str]:
    return {flag for action in _report_parser()._actions for flag in action.option_strings}


def test_the_report_has_a_flag_for_every_declaration_of_every_analysis_made_from_its_line():
    from luskin_cli.common import option_flags
    from luskin_core.present.report_parts import made_from_table
    from luskin_core.spec.options import OPTIONS

    flags = _flags()
    entries = [e for e in made_from_table("command") if e.options is not None]
    # the amounts line declares no options: no report flag; the representation's are declared on its own line
    assert [e.name for e in entries] == ["scan", "representation"]
    wanted = {flag for e in entries for o in OPTIONS[e.options] if o.on_command for flag in option_flags(o, e.name)}
    assert wanted and wanted <= flags
    assert {"--scan", "--scan-columns", "--scan-depth", "--scan-min-size", "--scan-level", "--scan-fdr",
            "--scan-replicates", "--scan-seed", "--scan-calibration", "--scan-unknown", "--scan-bins",
            "--scan-measure", "--scan-predictions", "--scan-probability"} <= flags
    assert {"--representation", "--representation-benchmark", "--representation-among"} <= flags
    assert not any(flag.startswith("--amounts") for flag in flags)


def test_the_old_flags_parse_as_before():
    args = options_from(_report_parser().parse_args(["--preset", "compas", "--html", "r.html", "--scan",
                                                     "sex,race", "--scan-depth", "2", "--scan-fdr", "0.1"]))
    assert args.value("scan_columns") == ["sex,race"]
    assert args.value("scan_depth") == 2 and args.value("scan_fdr") == 0.1
    from luskin_cli.common import declared_values

    values, fields = declared_values(args, "scan", prefix="scan")
    assert values == {"columns": ("sex", "race"), "depth": 2, "level": 0.1, "error": "fdr"}
    assert fields == {"group_by": ("sex",)}


def test_an_option_of_the_scan_without_the_scan_is_refused_before_any_work(tmp_path, capsys):
    status = main(["report", "--preset", "compas", "--html", str(tmp_path / "r.html"), "--scan-min-size", "5"])
    err = capsys.readouterr().err
    assert status == 2 and "--scan-min-size sets an option of --scan" in err and "add --scan COLS" in err
    assert "Audit:" not in err and not (tmp_path / "r.html").exists()


def _scanned(monkeypatch) -> list:
    """The scan's results as the report's run of the scan returns them (the real run, called through)."""
    import luskin_core.analyses.scan as scan_module

    seen: list = []
    real = scan_module.run

    def spy(data, spec, options=None, **keywords):
        seen.append((spec, options))
        result = real(data, spec, options, **keywords)
        seen[-1] = (*seen[-1], result)
        return result

    monkeypatch.setattr(scan_module, "run", spy)
    return seen


def test_the_reports_scan_depth_gives_the_scan_commands_findings_on_adult(tmp_path, capsys, monkeypatch):
    assert main(["scan", *ADULT, "--columns", "sex,race,relationship", "--depth", "1", "--json"]) == 0
    command = json.loads(capsys.readouterr().out)
    seen = _scanned(monkeypatch)
    path = tmp_path / "r.html"
    assert main(["report", *ADULT, "--groups", "sex", "--html", str(path), "--scan", "sex,race,relationship",
                 "--scan-depth", "1"]) == 0
    err = capsys.readouterr().err
    (_, options, result), = seen
    assert options.depth == 1 and options.columns == ("sex", "race", "relationship")
    report = result.to_dict()
    assert command["findings"] and [f["conditions"] for f in report["findings"]] == \
        [f["conditions"] for f in command["findings"]]
    assert all(len(f["conditions"]) == 1 for f in report["findings"])   # depth 1: one column each
    assert report["findings"] == command["findings"] and report["groups_scanned"] == command["groups_scanned"]
    assert f"Scan: {result.headline()}" in err and "Subgroup scan: where the gaps are" in path.read_text()


def test_every_scan_flag_reaches_the_scan_in_the_report(tmp_path, capsys, monkeypatch):
    seen = _scanned(monkeypatch)
    assert main(["report", *ADULT, "--groups", "sex", "--unknown", "Other", "--html", str(tmp_path / "r.html"),
                 "--scan", "sex,race", "--scan-min-size", "50", "--scan-replicates", "99", "--scan-seed", "7",
                 "--scan-fdr", "0.1", "--scan-unknown", "Amer-Indian-Eskimo", "--scan-calibration", "replicates"]) == 0
    (spec, options, _), = seen
    assert (options.min_size, options.replicates, options.seed, options.level, options.error, options.calibration) \
        == (50, 99, 7, 0.1, "fdr", "replicates")
    assert set(spec.unknown_values) == {"Other", "Amer-Indian-Eskimo"}   # the audit's and the scan's own
    assert spec.group_by == ("sex",)   # the report's groups stay the audit's


def test_a_new_declaration_of_the_scan_brings_its_report_flag_and_its_use(tmp_path, capsys, monkeypatch):
    """A throwaway option of the scan (declared in this test only): the report gets ``--scan-shrink`` and hands
    its value to the scan's options class, with no edit to luskin_cli/report.py."""
    import luskin_core.analyses.scan as scan_module
    from luskin_core.counting.data import load_sample
    from luskin_core.spec import options as declared
    from luskin_core.spec.audit_spec import AuditSpec

    # the scan itself knows nothing of the test's option: the report's run hands the options to a stand-in
    found = scan_module.run(load_sample("adult"), AuditSpec("income", ">50K", group_by=("sex",)),
                            declared.ScanOptions(columns=("sex", "race"), replicates=99))
    handed: list = []
    monkeypatch.setattr(scan_module, "run", lambda data, spec, options=None, **kw: handed.append(options) or found)
    shrunk = make_dataclass("ShrunkScanOptions", [("shrink", int, 0)], bases=(declared.ScanOptions,), frozen=True)
    option = declared.Option("shrink", declared.whole("the shrink", 0, 9), "Shrink", "A test option.",
                             flag_help="a test option (default {default})", metavar="S")
    monkeypatch.setitem(declared.OPTIONS, "scan", (*declared.OPTIONS["scan"], option))
    monkeypatch.setitem(declared.OPTION_CLASSES, "scan", shrunk)
    assert "--scan-shrink" in _flags()
    assert main(["report", *ADULT, "--groups", "sex", "--html", str(tmp_path / "r.html"), "--scan", "sex,race",
                 "--scan-replicates", "99", "--scan-shrink", "4"]) == 0
    options, = handed
    assert isinstance(options, shrunk) and options.shrink == 4
    status = main(["report", *ADULT, "--groups", "sex", "--html", str(tmp_path / "r.html"), "--scan-shrink", "4"])
    assert status == 2 and "--scan-shrink sets an option of --scan" in capsys.readouterr().err


def test_no_hand_written_scan_flag_is_left_in_the_report():
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "luskin_cli" / "report.py").read_text(encoding="utf-8")
    assert "add_argument(\"--scan" not in text and "ScanOptions" not in text and "args.scan" not in text


@pytest.mark.parametrize("argv", [["--scan-depth", "-1"], ["--scan-fdr", "1.5"], ["--scan-level", "0.1",
                                                                                   "--scan-fdr", "0.1"]])
def test_a_bad_scan_value_is_refused_in_words(argv, tmp_path, capsys):
    status = main(["report", "--preset", "compas", "--html", str(tmp_path / "r.html"), "--scan", "sex", *argv])
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err and argv[0] in err
