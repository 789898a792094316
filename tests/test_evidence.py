"""Audit evidence (issue 48): written by ``luskin audit --evidence``, checked by ``luskin verify``.

An audit on each engine (memory, a CSV and a Parquet file in DuckDB, a DuckDB database file, PostgreSQL, Spark:
real servers, tests/engine_servers.py) writes evidence that verifies, with the data counted again. Then every part
is tried: each part's bytes changed, every number of the counts and of the results changed (the manifest written
again, so only the recomputation can tell), the signature changed, another key, no signature, a truncated file, a
file from a later version, a byte of the data, a row of the data: each is refused, in a sentence that says what
changed, never a traceback.
"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_inproc import run_in_process
from engine_servers import load_postgres

from luskin_core.analyses.audit import audit
from luskin_core.evidence import bundle, signing
from luskin_core.evidence.canonical import canonical, count_table_dict
from luskin_core.evidence.make import DataFacts, make_evidence
from luskin_core.evidence.verify import Recount, verify
from luskin_core.spec.audit_spec import AuditSpec

SPEC = AuditSpec.from_dict({"outcome": "hired", "positive": "yes", "group_by": ["sex"], "min_group_size": 5})
AUDIT = ["--outcome", "hired", "--positive", "yes", "--groups", "sex", "--min-group-size", "5"]


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(48)
    n = 400
    data = pd.DataFrame({"sex": rng.choice(["Female", "Male", "Decline to self-identify"], n, p=[0.45, 0.45, 0.1]),
                         "race": rng.choice(["Asian", "Black", "White"], n), "note": rng.choice(["a", "b"], n)})
    data["hired"] = np.where(rng.random(n) < np.where(data.sex == "Female", 0.3, 0.45), "yes", "no")
    return data


@pytest.fixture(scope="module")
def key(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("keys")
    private, public, _ = signing.new_key(folder / "operator.key")
    return private, public


def _cli(*argv: str) -> tuple[int, str, str]:
    status, out, err = run_in_process(list(argv))
    assert "Traceback" not in out + err
    return status, out, err


def _audit_and_verify(tmp_path: Path, data: str, *extra: str, table: str | None = None) -> str:
    target = tmp_path / "audit.evidence"
    where = ["--data", data, *(["--table", table] if table else [])]
    status, _, err = _cli("audit", *where, *AUDIT, "--evidence", str(target), "--evidence-without-pdf", *extra)
    assert status == 0, err
    assert f"check it with: luskin verify {target}" in err
    status, out, err = _cli("verify", str(target), *where)
    assert status == 0, out + err
    assert out.startswith("Verified: audit.evidence") and "gives the same counts" in out
    return out


# ------------------------------------------------------------------------------------------
# Every engine
# ------------------------------------------------------------------------------------------
def test_a_csv_audited_in_memory_verifies_with_its_data_counted_again(frame, tmp_path):
    path = tmp_path / "rows.csv"
    frame.to_csv(path, index=False)
    out = _audit_and_verify(tmp_path, str(path))
    assert "counted again (memory)" in out and "its bytes hash to" in out


def test_a_parquet_file_and_a_duckdb_database_verify(frame, tmp_path):
    import duckdb

    parquet = tmp_path / "rows.parquet"
    frame.to_parquet(parquet)
    assert "counted again (parquet)" in _audit_and_verify(tmp_path, str(parquet))
    database = tmp_path / "hiring.duckdb"
    with duckdb.connect(str(database)) as con:
        con.register("rows_frame", frame)
        con.execute("CREATE TABLE people AS SELECT * FROM rows_frame")
    before = database.read_bytes()
    out = _audit_and_verify(tmp_path, str(database), table="people")
    assert "counted again (duckdb)" in out and "its bytes hash to" in out
    assert database.read_bytes() == before  # counting it twice changed no byte of the file


def test_postgres_verifies_by_its_counts(frame, postgres_url, tmp_path):
    load_postgres(postgres_url, "evidence_rows", frame)
    out = _audit_and_verify(tmp_path, postgres_url, table="evidence_rows")
    assert "counted again (postgres)" in out and "only its counts can be compared" in out
    fingerprint = bundle.read((tmp_path / "audit.evidence").read_bytes()).json("fingerprint.json")
    assert fingerprint["bytes"] is None and "engine-test-pw" not in json.dumps(fingerprint)  # no password kept


def test_spark_verifies_by_its_counts(frame, spark_session, tmp_path):
    path = tmp_path / "rows.parquet"
    frame.to_parquet(path)
    spark_session.read.parquet(str(path)).createOrReplaceTempView("evidence_rows")  # type: ignore[attr-defined]
    out = _audit_and_verify(tmp_path, "spark:", table="evidence_rows")
    assert "counted again (spark)" in out


def test_engines_agree_evidence_from_one_verifies_against_another(frame, tmp_path):
    """Counts are the sufficient statistic whatever counted them: evidence of the CSV in memory verifies against the
    same rows as Parquet in DuckDB (their bytes differ, and the answer says the counts are the same)."""
    csv, parquet = tmp_path / "rows.csv", tmp_path / "rows.parquet"
    frame.to_csv(csv, index=False)
    frame.to_parquet(parquet)
    target = tmp_path / "e"
    assert _cli("audit", "--data", str(csv), *AUDIT, "--evidence", str(target), "--evidence-without-pdf")[0] == 0
    status, out, _ = _cli("verify", str(target), "--data", str(parquet))
    assert status == 1
    assert "gives the same counts" in out and "bytes are not those audited" in out and "Its counts are the same" in out


# ------------------------------------------------------------------------------------------
# Every part tried
# ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def signed(frame, key) -> bytes:
    result = audit(frame, SPEC)
    made = make_evidence("audit", {"spec": result.spec.to_dict(), "source": result.source},
                         {"audit": count_table_dict(result.counts)}, data=DataFacts("upload:rows.csv", "memory"),
                         by="alice", pdf=False, signing_key=signing.load_private(key[0]))
    return made.data


def _rewrite(data: bytes, name: str, body: bytes, *, key: object = None) -> bytes:
    """The evidence with one part replaced and its manifest written again (signed again when ``key`` is given)."""
    evidence = bundle.read(data)
    parts = dict(evidence.parts)
    parts[name] = body
    signer = None if key is None else (lambda manifest: signing.sign(key, manifest))
    return bundle.write(evidence.kind, parts, signer)


def test_the_evidence_holds_every_part_and_verifies_by_its_key(signed, key):
    names = zipfile.ZipFile(__import__("io").BytesIO(signed)).namelist()
    assert names[0] == "manifest.json" and names[-1] == "signature.json"
    assert set(names) == {"manifest.json", "specification.json", "judgement.json", "counts.json", "results.json",
                          "fingerprint.json", "versions.json", "made.json", "about.json", "report.html",
                          "signature.json"}
    answer = verify(signed, public_key=key[1].read_bytes())
    assert answer.ok and answer.problems == () and answer.made["by"] == "alice"
    assert any("by the key given" in c for c in answer.checked)
    judgement = bundle.read(signed).json("judgement.json")
    # the resolved judgement (issue 45): the reference chosen on the counts, the group of unknown category set apart
    assert judgement["direction"] == "favourable" and judgement["rules"]["significant"] == "p < 0.05"
    assert judgement["reference"] == "Male" and judgement["reference_rule"] == "most favoured"
    assert judgement["unknown_groups"] == ["Decline to self-identify"]


def test_a_byte_changed_in_any_part_names_that_part(signed):
    evidence = bundle.read(signed)
    for name, body in evidence.parts.items():
        changed = bytearray(body)
        changed[len(changed) // 2] ^= 0x01
        parts = dict(evidence.parts)
        parts[name] = bytes(changed)
        # the manifest kept as it was: the part no longer has its hash
        out = bundle.write(evidence.kind, parts)
        tampered = _keep_manifest(out, evidence.manifest_bytes, evidence.signature)
        answer = verify(tampered)
        assert not answer.ok, name
        assert any(p.startswith(f"{name} was changed after the evidence was written") for p in answer.problems), name


def _keep_manifest(data: bytes, manifest: bytes, signature: object) -> bytes:
    """``data``'s parts with the original manifest (and signature) put back: a part changed without its hash."""
    import io

    evidence = bundle.read(data)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("manifest.json", manifest)
        for name, body in sorted(evidence.parts.items()):
            archive.writestr(name, body)
        if signature is not None:
            archive.writestr("signature.json", canonical(signature))
    return out.getvalue()


def _leaves(value: object, path: tuple = ()) -> list[tuple]:
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in _leaves(v, (*path, k))]
    if isinstance(value, list):
        return [leaf for i, v in enumerate(value) for leaf in _leaves(v, (*path, i))]
    return [(path, value)]


def _set(document: object, path: tuple, value: object) -> None:
    for step in path[:-1]:
        document = document[step]  # type: ignore[index]
    document[path[-1]] = value  # type: ignore[index]


def _changed(value: object) -> object:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value * (1 + 1e-6) + 1e-9
    if isinstance(value, str):
        return value + " (edited)"
    return 0 if value is None else None


def test_every_number_and_word_of_the_results_and_every_count_is_recomputed(signed, key):
    """Each value of results.json and counts.json changed in turn, the manifest rewritten so that its hashes hold:
    without the signature only the recomputation can tell, and it does, naming the value. Every value goes through
    the comparison verify makes (against the results recomputed once from the counts); one in eight, and every
    count, through the whole of verify (the report made small: it is the slow part to unpack, and is checked by
    its hash above)."""
    import random

    from luskin_core.evidence.kinds import kind
    from luskin_core.evidence.verify import differences

    light = _rewrite(signed, "report.html", b"<html></html>")
    evidence = bundle.read(light)
    entry = kind("audit")
    recomputed = json.loads(canonical(entry.document(entry.build(evidence.json("specification.json"),
                                                                  evidence.json("counts.json")))))
    results = evidence.json("results.json")
    assert differences(results, recomputed) == []
    leaves = _leaves(results)
    assert len(leaves) > 100 and any(isinstance(v, str) for _, v in leaves) and any(isinstance(v, float)
                                                                                 for _, v in leaves)
    rnd = random.Random(48)
    for path, value in leaves:
        edited = json.loads(json.dumps(results))
        _set(edited, path, _changed(value))
        where = ".".join(str(p) if isinstance(p, str) else f"[{p}]" for p in path).replace(".[", "[")
        found = differences(edited, recomputed)
        assert len(found) == 1 and found[0].startswith(where + ":"), (path, found)
        if rnd.random() < 0.125:
            answer = verify(_rewrite(light, "results.json", canonical(edited)))
            assert not answer.ok and any(where in p for p in answer.problems), (path, answer.problems)
    counts = evidence.json("counts.json")
    for path, value in [leaf for leaf in _leaves(counts) if leaf[1] is not None]:
        edited = json.loads(json.dumps(counts))
        _set(edited, path, _changed(value))
        answer = verify(_rewrite(light, "counts.json", canonical(edited)))
        assert not answer.ok, path
        assert any("fingerprint.json does not hold the hash of the counts" in p for p in answer.problems), path
        if path[1] in ("n", "positives"):  # a count the results show: named by the results it changes
            assert any(p.startswith("results.json does not follow from the counts") for p in answer.problems), path
    # signed again with another key: the manifest holds, the key does not
    other = signing.load_private(signing.new_key(key[0].parent / "intruder.key")[0])
    results["audit"]["headline"] = "Everything is fair."
    forged = _rewrite(light, "results.json", canonical(results), key=other)
    answer = verify(forged, public_key=key[1].read_bytes())
    assert not answer.ok
    assert any(p.startswith("Signed with another key") for p in answer.problems)
    assert any("audit.headline" in p for p in answer.problems)


def test_the_signature_changed_removed_or_of_another_key_is_refused(signed, key, tmp_path):
    evidence = bundle.read(signed)
    record = dict(evidence.signature)
    signature = bytearray(__import__("base64").b64decode(record["signature"]))
    signature[0] ^= 0x01
    record["signature"] = __import__("base64").b64encode(bytes(signature)).decode()
    answer = verify(_keep_manifest(signed, evidence.manifest_bytes, record), public_key=key[1].read_bytes())
    assert not answer.ok and any("The signature fails: the signature does not match the manifest" in p
                                 for p in answer.problems)
    unsigned = _keep_manifest(signed, evidence.manifest_bytes, None)
    assert verify(unsigned).ok  # holds together, said to be unsigned
    assert any(c.startswith("Not signed") for c in verify(unsigned).checked)
    answer = verify(unsigned, public_key=key[1].read_bytes())
    assert not answer.ok and any("is not signed, but a key was given" in p for p in answer.problems)
    stranger = signing.new_key(tmp_path / "stranger.key")[1]
    answer = verify(signed, public_key=stranger.read_bytes())
    assert not answer.ok and any(p.startswith("Signed with another key") for p in answer.problems)


def test_truncated_foreign_later_and_padded_files_get_a_plain_answer(signed, tmp_path):
    for data, words in ((signed[: len(signed) // 2], "incomplete or damaged"), (signed[:-30], "incomplete or damaged"),
                        (b"", "empty"), (b"table,category\nsex,F\n", "not an evidence file"),
                        (_later(signed), "later version of Luskin (evidence format 2")):
        answer = verify(data)
        assert not answer.ok and words in answer.problems[0], (words, answer.problems)
        path = tmp_path / "bad.evidence"
        path.write_bytes(data)
        status, out, err = _cli("verify", str(path))
        assert status == 1 and words in out and out.startswith("NOT verified"), out + err
    evidence = bundle.read(signed)
    extra = _keep_manifest(bundle.write(evidence.kind, {**evidence.parts, "notes.txt": b"trust me"}),
                           evidence.manifest_bytes, evidence.signature)
    assert any("notes.txt, which its manifest does not list" in p for p in verify(extra).problems)
    fewer = {k: v for k, v in evidence.parts.items() if k != "report.html"}
    gone = _keep_manifest(bundle.write(evidence.kind, fewer), evidence.manifest_bytes, evidence.signature)
    assert any(p == "report.html is missing from the file (the manifest lists it)." for p in verify(gone).problems)


def _later(data: bytes) -> bytes:
    evidence = bundle.read(data)
    manifest = dict(evidence.manifest, format_version=2)
    import io

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("manifest.json", canonical(manifest))
        for name, body in evidence.parts.items():
            archive.writestr(name, body)
    return out.getvalue()


def test_a_byte_of_the_data_and_a_row_of_the_data_are_told_apart(frame, tmp_path):
    path = tmp_path / "rows.csv"
    frame.to_csv(path, index=False)
    target = tmp_path / "e"
    assert _cli("audit", "--data", str(path), *AUDIT, "--evidence", str(target), "--evidence-without-pdf")[0] == 0
    changed = frame.copy()
    changed.loc[3, "note"] = "c"  # a column the audit does not read
    changed.to_csv(path, index=False)
    status, out, _ = _cli("verify", str(target), "--data", str(path))
    assert status == 1 and "bytes are not those audited" in out and "the change touches nothing the audit counts" in out
    changed.loc[3, "hired"] = "no" if frame.loc[3, "hired"] == "yes" else "yes"  # a row's outcome
    changed.to_csv(path, index=False)
    status, out, _ = _cli("verify", str(target), "--data", str(path))
    group = frame.loc[3, "sex"]
    assert status == 1 and f"audit: group '{group}', cell 'All rows': positives" in out


def test_verify_recounts_a_frame_or_source_given_in_the_library(frame):
    result = audit(frame, SPEC)
    made = make_evidence("audit", {"spec": result.spec.to_dict(), "source": result.source},
                         {"audit": count_table_dict(result.counts)}, data=DataFacts("upload:x", "memory"), pdf=False)
    assert verify(made.data, recount=Recount(frame, "the frame", "memory")).ok
    fewer = frame.iloc[1:]
    answer = verify(made.data, recount=Recount(fewer, "the frame", "memory"))
    assert not answer.ok and "does not give the evidence's counts" in answer.problems[0]


# ------------------------------------------------------------------------------------------
# Local Law 144: evidence, the public summary and its CSV read back
# ------------------------------------------------------------------------------------------
def test_ll144_evidence_gives_the_public_summary_and_its_csv_reads_back(frame, tmp_path, key):
    hostile = frame.assign(race=frame.race.replace({"Asian": "<script>alert(1)</script>"}))
    path = tmp_path / "rows.csv"
    hostile.to_csv(path, index=False)
    target, page, table = tmp_path / "ll144.evidence", tmp_path / "summary.html", tmp_path / "summary.csv"
    status, _printed, err = _cli("audit", "--data", str(path), "--outcome", "hired", "--positive", "yes",
                                "--template", "ll144", "--sex", "sex", "--race", "race", "--evidence", str(target),
                                "--evidence-without-pdf", "--sign-key", str(key[0]), "--distribution-date",
                                "2024-03-01", "--data-explanation", "Applicants of 2023 <b>all offices</b>")
    assert status == 0, err
    status, out, err = _cli("verify", str(target), "--key", str(key[1]), "--data", str(path), "--summary-html",
                            str(page), "--summary-csv", str(table))
    assert status == 0, out + err
    assert f"Wrote {page}" in out and f"Wrote {table}" in out
    html = page.read_text(encoding="utf-8")
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;b&gt;all offices&lt;/b&gt;" in html and "2024-03-01" in html
    assert "Individuals assessed</dt><dd>400</dd>" in html
    assert f"luskin verify {target.name} --key " in html
    # the CSV is the one --counts reads: the same tables as the evidence's
    status, back, err = _cli("audit", "--template", "ll144", "--counts", str(table), "--json")
    assert status == 0, err
    audited = bundle.read(target.read_bytes()).json("results.json")["ll144"]["tables"]
    assert json.loads(back)["ll144"]["tables"] == audited
    # a published table's evidence, verified against the table
    published = tmp_path / "published.evidence"
    assert _cli("audit", "--template", "ll144", "--counts", str(table), "--evidence", str(published),
                "--evidence-without-pdf")[0] == 0
    status, out, _ = _cli("verify", str(published), "--data", str(table))
    assert status == 0 and "counted again (published table)" in out


def test_summaries_and_evidence_are_refused_where_they_do_not_apply(frame, tmp_path):
    path = tmp_path / "rows.csv"
    frame.to_csv(path, index=False)
    target = tmp_path / "e"
    assert _cli("audit", "--data", str(path), *AUDIT, "--evidence", str(target), "--evidence-without-pdf")[0] == 0
    status, _, err = _cli("verify", str(target), "--summary-html", str(tmp_path / "s.html"))
    assert status == 2 and "made for Local Law 144 evidence" in err
    for extra, words in ((["--period", "race"], "--period writes none"),
                         (["--template", "eeoc", "--sex", "sex"], "--template eeoc writes none"),
                         (["--bounds"], "--bounds writes none")):
        status, _, err = _cli("audit", "--data", str(path), *AUDIT, "--evidence", str(target), *extra)
        assert status == 2 and words in err, err
    status, _, err = _cli("audit", "--data", str(path), *AUDIT, "--sign-key", "k")
    assert status == 2 and "--sign-key goes with --evidence FILE" in err
    status, _, err = _cli("audit", "--data", str(path), *AUDIT, "--evidence", str(tmp_path / "no" / "e"))
    assert status == 2 and "does not exist" in err
    status, _, err = _cli("verify", str(tmp_path / "missing.evidence"))
    assert status == 2 and "There is no file" in err
    status, _, err = _cli("audit", "--data", str(path), *AUDIT, "--evidence", str(target), "--sign-key", str(path))
    assert status == 2 and "is not a private key Luskin can sign with" in err


def test_keygen_writes_a_private_key_only_its_owner_reads_and_never_overwrites(tmp_path):
    status, out, _ = _cli("keygen", str(tmp_path / "k"))
    assert status == 0 and "Key id: " in out
    assert (tmp_path / "k").stat().st_mode & 0o777 == 0o600 and (tmp_path / "k.pub").is_file()
    before = (tmp_path / "k").read_bytes()
    status, _, err = _cli("keygen", str(tmp_path / "k"))
    assert status == 2 and "a key is never overwritten" in err and (tmp_path / "k").read_bytes() == before
    assert os.access(tmp_path / "k.pub", os.R_OK)


def test_hostile_parts_get_sentences_never_a_traceback(signed):
    """Each part replaced by something that is not what Luskin writes (nothing, a list, a number, null, bytes that
    are not UTF-8, counts that contradict themselves), with its manifest kept or written again: never an
    exception, and refused unless the part is one a rewritten manifest may cover unsigned (about, made, versions,
    the report, the signature and the manifest themselves: the README says so)."""
    import io

    light = bundle.read(_rewrite(signed, "report.html", b"<html></html>"))
    hostile = [b"", b"[]", b"5", b"null", b"\xff\xfe", b'{"audit": {"groups": 3}}', b'{"spec": {"outcome": 3}}',
               (b'{"audit": {"groups": ["a"], "cell_keys": [null], "cell_labels": ["x"], "n": [[1]], "positives": [[2]],'
               b' "excluded": {}, "n_excluded": 0}}')]
    coverable = {"about.json", "made.json", "versions.json", "report.html", "signature.json", "manifest.json"}
    for name in [*light.parts, "manifest.json", "signature.json"]:
        for value in hostile:
            members = {"manifest.json": light.manifest_bytes, **light.parts, "signature.json": canonical(light.signature)}
            members[name] = value
            kept = io.BytesIO()
            with zipfile.ZipFile(kept, "w") as archive:
                for member, body in members.items():
                    archive.writestr(member, body)
            rewritten = bundle.write(light.kind, {k: v for k, v in members.items()
                                                  if k not in ("manifest.json", "signature.json")})
            for data, may_hold in ((kept.getvalue(), False), (rewritten, name in coverable)):
                answer = verify(data)
                assert answer.ok is False or may_hold, (name, value, answer.problems)
                assert all(isinstance(p, str) and p for p in answer.problems)


def test_words_of_another_version_are_told_from_numbers_that_do_not_follow(signed):
    """Evidence written by another version of Luskin (a field it did not write, a sentence worded otherwise) is not
    verified, and the answer says every number it holds agrees; a changed number gets no such sentence."""
    light = _rewrite(signed, "report.html", b"<html></html>")
    results = bundle.read(light).json("results.json")
    del results["audit"]["comparisons"][2]["rule"]
    results["audit"]["comparisons"][2]["sentence"] = "Worded as an older Luskin words it."
    answer = verify(_rewrite(light, "results.json", canonical(results)))
    assert not answer.ok and "Every number the file holds agrees with the counts" in answer.problems[0]
    results["audit"]["n_rows"] += 1
    answer = verify(_rewrite(light, "results.json", canonical(results)))
    assert not answer.ok and "Every number the file holds agrees" not in answer.problems[0]
