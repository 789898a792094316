"""The dashboard's evidence (issue 48): the Report page offers it, the Verify page checks an uploaded file.

The Report page's download is made by :func:`luskin_app.evidence_view.audit_evidence` from the session's audit
(the browser walk, tests/browser/test_browser.py, clicks it and verifies the file it gets); here the Verify page is
given good, changed and foreign files, a public key of another operator, the data on screen to count again, and
Local Law 144 evidence whose public summary it offers.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from luskin_app import evidence_view
from luskin_app.auth import User
from luskin_app.dataset import Dataset
from luskin_app.ui import unescape
from luskin_core import get_preset, load_sample
from luskin_core.analyses.audit import audit
from luskin_core.counting.data import frame_fingerprint
from luskin_core.evidence import bundle, signing
from luskin_core.evidence.canonical import canonical
from luskin_core.evidence.verify import verify

APP = str(Path(__file__).resolve().parent.parent / "app.py")


@pytest.fixture(scope="module")
def adult_evidence() -> bytes:
    """The evidence the Report page makes for the Adult sample's first view (the paper's setup), signed."""
    frame = load_sample("adult")
    result = audit(frame, get_preset("adult").spec)
    data = Dataset("sample:adult", "Adult", frame, frame_fingerprint(frame))
    alice = User("sub-1", "Alice", "alice@agency.example", (), admin=False, analyst=True)
    return evidence_view.audit_evidence(result, data, alice, pdf=False)()


def _verify_page(data: bytes, name: str = "adult.evidence", *, key: bytes | None = None,
                 again: bool = False) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300).run()
    at.switch_page("app_pages/verify.py").run()
    assert not at.exception, at.exception
    if again:
        at.checkbox(key="verify_recount").check().run()
    if key is not None:
        at.file_uploader(key="verify_key").set_value(("operator.pub", key, "application/x-pem-file")).run()
    at.file_uploader(key="verify_upload").set_value((name, data, "application/zip")).run()
    assert not at.exception, at.exception
    return at


def _said(at: AppTest) -> str:
    return "\n".join(unescape(e.value) for kind in ("success", "error", "markdown") for e in at.get(kind))


def test_report_page_offers_the_evidence_and_it_names_the_signed_in_user(adult_evidence):
    at = AppTest.from_file(APP, default_timeout=300).run()
    at.switch_page("app_pages/report.py").run()
    assert not at.exception, at.exception
    assert "report_evidence_download" in {d.key for d in at.get("download_button")}
    assert any("Not signed: the operator has set no signing key" in unescape(c.value) for c in at.caption)
    answer = verify(adult_evidence)
    assert answer.ok and answer.made["by"] == "alice@agency.example" and answer.made["with"] == "the Luskin dashboard"
    assert bundle.read(adult_evidence).json("fingerprint.json")["engine"] == "memory"


def test_the_evidence_is_signed_with_the_operators_key(monkeypatch, tmp_path):
    private, public, key_id = signing.new_key(tmp_path / "operator.key")
    monkeypatch.setenv(evidence_view.KEY_SETTING, str(private))
    frame = load_sample("adult").head(3_000)
    result = audit(frame, get_preset("adult").spec)
    made = evidence_view.audit_evidence(result, Dataset("upload:a.csv", "a.csv", frame, frame_fingerprint(frame),
                                                        raw_digest=("0" * 64, 10)), User("", "", "", (), True, True),
                                        pdf=False)()
    answer = verify(made, public_key=public.read_bytes())
    assert answer.ok and answer.key_id == key_id and answer.made["by"] is None  # no sign-in: nobody named


def test_verify_page_accepts_good_evidence_and_counts_the_data_on_screen_again(adult_evidence):
    at = _verify_page(adult_evidence, again=True)
    said = _said(at)
    assert "Verified: adult.evidence (audit, made" in said and "by alice@agency.example" in said
    assert "counted again (memory) gives the same counts." in said
    assert "its bytes hash to" in said
    assert not at.get("download_button")  # a plain audit has no public summary


def test_verify_page_refuses_a_changed_number_a_foreign_file_and_another_key(adult_evidence, tmp_path):
    evidence = bundle.read(adult_evidence)
    results = evidence.json("results.json")
    results["audit"]["comparisons"][2]["p_value"] = 0.5
    changed = bundle.write(evidence.kind, {**evidence.parts, "results.json": canonical(results)})
    said = _said(_verify_page(changed))
    assert "NOT verified: adult.evidence" in said and "audit.comparisons[2].p_value: 0.5 in the file" in said
    said = _said(_verify_page(adult_evidence[:5_000]))
    assert "The evidence file is incomplete or damaged" in said
    said = _said(_verify_page(b"<html>not it</html>", "page.html"))
    assert "The file is not an evidence file" in said
    stranger = signing.new_key(tmp_path / "stranger.key")[1]
    said = _said(_verify_page(adult_evidence, key=stranger.read_bytes()))
    assert "is not signed, but a key was given" in said
    at = _verify_page(adult_evidence, key=b"not a key")
    assert any("is not a public key" in unescape(e.value) for e in at.error)


def test_verify_page_offers_the_public_summary_of_ll144_evidence(tmp_path):
    from luskin_core.analyses.regulator_ll144 import ll144_counted
    from luskin_core.analyses.regulator_tables import RegulatorChoices
    from luskin_core.evidence.kinds import ll144_counts_part
    from luskin_core.evidence.make import DataFacts, make_evidence

    frame = load_sample("adult").head(4_000)
    spec = get_preset("adult").spec.with_changes(protected=None, group_by=("sex",), filters=(), filter_label=None,
                                                 not_filter_label=None, group_label=None, other_label=None)
    choices = RegulatorChoices(sex="sex", race="race")
    made = make_evidence("ll144", {"spec": spec.to_dict(), "choices": {"sex": "sex", "race": "race"}},
                         ll144_counts_part(ll144_counted(frame, spec, choices)), data=DataFacts("upload:a.csv", "memory"),
                         about={"distribution_date": "2024-05-01"}, pdf=False)
    at = _verify_page(made.data, "ll144.evidence")
    assert "Verified: ll144.evidence (NYC Local Law 144 bias audit" in _said(at)
    assert {d.key for d in at.get("download_button")} == {"verify_summary_html", "verify_summary_csv"}


def test_regulator_page_offers_ll144_evidence_of_rows_and_of_a_published_table():
    """The Regulator page's LL144 tab and its published-table reader each offer their evidence; the functions the
    buttons call make files that verify, and whose public summary holds the page's tables."""
    import pandas as pd

    from luskin_core.analyses.regulator_tables import RegulatorChoices

    at = AppTest.from_file(APP, default_timeout=300).run()
    at.switch_page("app_pages/regulator.py").run()
    assert not at.exception, at.exception
    assert "regulator_ll144_evidence" in {d.key for d in at.get("download_button")}
    assert "regulator_eeoc_evidence" not in {d.key for d in at.get("download_button")}
    frame = load_sample("adult").head(2_000)
    spec = get_preset("adult").spec
    data = Dataset("upload:a.csv", "a.csv", frame, frame_fingerprint(frame), raw_digest=("1" * 64, 5))
    made = evidence_view.ll144_evidence(frame, spec, RegulatorChoices(sex="sex", race="race"), data,
                                        User("", "", "", (), True, True))()
    answer = verify(made)
    assert answer.ok and answer.kind == "ll144"
    assert [r.n for r in answer.result.result.table("sex").rows] == list(frame.groupby("sex").size())
    published = pd.DataFrame({"table": ["sex", "sex", "sex"], "category": ["F", "M", "Unknown"],
                              "applicants": [100, 120, 30], "selected": [40, 60, ""]})
    raw = published.to_csv(index=False).encode()
    at.toggle(key="regulator_published").set_value(True).run()
    at.file_uploader(key="regulator_summary").set_value(("published.csv", raw, "text/csv")).run()
    assert not at.exception, at.exception
    assert "regulator_ll144_evidence" in {d.key for d in at.get("download_button")}
    made = evidence_view.published_evidence(raw, "published.csv", RegulatorChoices(), User("", "", "", (), True, True))()
    answer = verify(made)
    assert answer.ok and answer.kind == "ll144_published"
    assert bundle.read(made).json("fingerprint.json")["bytes"]["sha256"] == __import__("hashlib").sha256(raw).hexdigest()
