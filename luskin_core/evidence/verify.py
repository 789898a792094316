"""Checking an evidence file: its manifest, its signature, every number recomputed from its counts, and its data.

:func:`verify` never raises for what is in the file: a truncated or foreign file, a part changed, a number that
does not follow from the counts, a signature that fails or is another key's, data that does not give the same
counts, each is one sentence of :attr:`Verification.problems`, and ``ok`` is True only when there are none.
Numbers are compared exactly, or within a relative 1e-9 where the libraries that recompute them differ from
those that wrote them (``versions.json`` says which did); every other change is caught byte for byte by the
manifest, and a consistent rewrite of the parts and the manifest by the signature.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from luskin_core.errors import LuskinError
from luskin_core.evidence import bundle, kinds, signing
from luskin_core.evidence.canonical import canonical, plain, sha256

REQUIRED = ("specification.json", "judgement.json", "counts.json", "results.json", "fingerprint.json",
            "versions.json", "made.json", "about.json", "report.html")
_SHOWN = 12
_RELATIVE = 1e-9


@dataclass(frozen=True)
class Verification:
    """What checking an evidence file found: ``ok`` when nothing is wrong; ``problems`` (what is wrong, in words),
    ``checked`` (what was checked and held); the evidence's kind, when and by whom it was made, what the operator
    said of the data, the signing key's id, and the result recomputed from the counts."""

    ok: bool
    problems: tuple[str, ...]
    checked: tuple[str, ...] = ()
    kind: str | None = None
    made: Mapping[str, Any] = field(default_factory=dict)
    about: Mapping[str, Any] = field(default_factory=dict)
    key_id: str | None = None
    result: Any = None
    sha256: str = ""

    def text(self, name: str = "the evidence") -> str:
        """The answer as the command line prints it."""
        title = kinds.KINDS[self.kind].title if self.kind in kinds.KINDS else ""
        when = f", made {self.made.get('at')}" if self.made.get("at") else ""
        who = f" by {self.made.get('by')}" if self.made.get("by") else ""
        said = f" ({title}{when}{who})" if title else ""
        head = f"Verified: {name}{said}." if self.ok else f"NOT verified: {name}{said} does not check out."
        lines = [head]
        if self.problems:
            lines += ["", "What is wrong:", *(f"- {p}" for p in self.problems)]
        if self.checked:
            lines += ["", "What was checked and holds:", *(f"- {c}" for c in self.checked)]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "problems": list(self.problems), "checked": list(self.checked), "kind": self.kind,
                "made": dict(self.made), "key_id": self.key_id, "sha256": self.sha256}


@dataclass(frozen=True)
class Recount:
    """Data to recount for the check: what the evidence's kind counts (a frame, a ``Source``, a published table's
    bytes), its name and engine for people, and the hash of its bytes where they were read (None: a server's)."""

    data: Any
    label: str
    engine: str
    data_bytes: Mapping[str, Any] | None = None


def verify(data: bytes, *, public_key: bytes | None = None, recount: Recount | None = None) -> Verification:
    """Check an evidence file's bytes; with ``public_key`` (PEM) it must be signed by that key; with ``recount`` the
    data is counted again with the evidence's specification and must give its counts and its bytes."""
    digest = sha256(data) if data else ""
    try:
        evidence = bundle.read(data)
    except LuskinError as err:
        return Verification(False, (str(err),), sha256=digest)
    problems: list[str] = []
    checked: list[str] = []
    _manifest(evidence, problems, checked)
    key_id = _signature(evidence, public_key, problems, checked)
    made = _safe_json(evidence, "made.json")
    about = _safe_json(evidence, "about.json")
    result = _recompute(evidence, problems, checked, recount)
    return Verification(not problems, tuple(problems), tuple(checked), evidence.kind, made, about, key_id, result,
                        digest)


def _safe_json(evidence: bundle.Evidence, name: str) -> dict[str, Any]:
    try:
        value = evidence.json(name)
    except LuskinError:
        return {}
    return value if isinstance(value, dict) else {}


def _manifest(evidence: bundle.Evidence, problems: list[str], checked: list[str]) -> None:
    listed = evidence.manifest["parts"]
    for name in REQUIRED:
        if name not in listed:
            problems.append(f"The manifest does not list {name}, which every evidence file has.")
    changed = 0
    for name, entry in sorted(listed.items()):
        body = evidence.parts.get(name)
        if body is None:
            problems.append(f"{name} is missing from the file (the manifest lists it).")
            continue
        expected = entry.get("sha256") if isinstance(entry, dict) else None
        if sha256(body) != expected:
            changed += 1
            problems.append(f"{name} was changed after the evidence was written: its SHA-256 is {sha256(body)[:16]}…, "
                            f"the manifest says {str(expected)[:16]}….")
    for name in sorted(set(evidence.parts) - set(listed)):
        problems.append(f"The file holds {name}, which its manifest does not list (added after it was written).")
    if not changed and set(evidence.parts) == set(listed):
        checked.append(f"Manifest: the {len(listed)} parts are those it lists, each with its SHA-256.")


def _signature(evidence: bundle.Evidence, public_key: bytes | None, problems: list[str],
               checked: list[str]) -> str | None:
    given = None
    if public_key is not None:
        try:
            given = signing.key_id(public_key)
        except LuskinError as err:
            problems.append(str(err))
            return None
    if evidence.signed and not isinstance(evidence.signature, dict):
        problems.append("The signature record is damaged: signature.json holds no signature.")
        return None
    if evidence.signature is None:
        if given is not None:
            problems.append(f"The evidence is not signed, but a key was given (key {given[:16]}): it cannot be shown "
                            "to come from that key's holder.")
        else:
            checked.append("Not signed: it holds together, but whoever changes a part can rewrite its manifest too. "
                           "Ask for evidence signed with the operator's published key.")
        return None
    why = signing.check(evidence.signature, evidence.manifest_bytes)
    found = str(evidence.signature.get("key_id", "")) if isinstance(evidence.signature, dict) else ""
    if why is not None:
        problems.append(f"The signature fails: {why}.")
        return None
    if given is not None and given != found:
        problems.append(f"Signed with another key: the signature's key is {found[:16]}, the key given is {given[:16]}.")
        return found
    if given is not None:
        checked.append(f"Signature: Ed25519, by the key given ({given[:16]}), over the manifest.")
    else:
        checked.append(f"Signature: Ed25519 by the key {found[:16]} it carries; give the operator's public key "
                       "to check it is theirs.")
    return found


def _recompute(evidence: bundle.Evidence, problems: list[str], checked: list[str],
               recount: Recount | None) -> Any:
    try:
        entry = kinds.kind(evidence.kind)
        specification = evidence.json("specification.json")
        counts = evidence.json("counts.json")
        if not isinstance(specification, dict) or not isinstance(counts, dict):
            raise LuskinError("The specification or the counts are not what Luskin writes.")
        result = entry.build(specification, counts)
        recomputed = plain(entry.document(result))
    except LuskinError as err:
        problems.append(f"The results cannot be recomputed from the counts: {err}")
        return None
    except Exception as err:  # noqa: BLE001 - whatever the file holds, the answer is a sentence
        problems.append(f"The results cannot be recomputed from the counts: the file's parts do not fit together "
                        f"({type(err).__name__}: {err}).")
        return None
    try:
        bundled = evidence.json("results.json")
    except LuskinError as err:
        problems.append(str(err))
    else:
        found = differences(bundled, recomputed)
        if found:
            numbers = numbers_disagree(bundled, recomputed)
            words = ("" if numbers else " Every number the file holds agrees with the counts: only words or fields "
                     "differ, as another version of Luskin writes them (check it with the version that wrote it).")
            problems.append(f"results.json does not follow from the counts ({len(found)} "
                            f"difference{'s' if len(found) != 1 else ''}): " + _listed(found) + _versions_note(evidence)
                            + words)
        else:
            checked.append(f"Results: all {count_values(recomputed):,} values recomputed from the counts and the "
                           "specification agree with results.json.")
    try:
        judged = evidence.json("judgement.json")
        found = differences(judged, plain(kinds.resolved_judgement(entry.spec(specification), result)))
        if found:
            problems.append("judgement.json is not the specification's judgement: " + _listed(found))
        else:
            checked.append("Judgement: the one the specification resolves to.")
    except LuskinError as err:
        problems.append(str(err))
    fingerprint = _safe_json(evidence, "fingerprint.json")
    if fingerprint.get("counts_sha256") != sha256(canonical(counts)):
        problems.append("fingerprint.json does not hold the hash of the counts: the counts or the fingerprint were "
                        "changed.")
    else:
        checked.append(f"Fingerprint: the counts hash to {fingerprint['counts_sha256'][:16]}, as it says.")
    if recount is not None:
        _recount(entry, specification, counts, fingerprint, recount, problems, checked)
    return result


def _recount(entry: kinds.EvidenceKind, specification: Mapping[str, Any], counts: Mapping[str, Any],
             fingerprint: Mapping[str, Any], recount: Recount, problems: list[str], checked: list[str]) -> None:
    try:
        again = plain(entry.recount(recount.data, specification))
    except LuskinError as err:
        problems.append(f"The data could not be counted with the evidence's specification: {err}")
        return
    same = canonical(again) == canonical(counts)
    if same:
        checked.append(f"Data: {recount.label} counted again ({recount.engine}) gives the same counts.")
    else:
        problems.append(f"The data ({recount.label}) does not give the evidence's counts: "
                        + _listed(count_differences(counts, again)))
    held = fingerprint.get("bytes")
    if recount.data_bytes is None or not isinstance(held, dict):
        if not isinstance(held, dict):
            checked.append("The audited data was counted where it lives (no bytes read by Luskin): only its counts "
                           "can be compared, and a change that alters no count cannot be seen.")
        return
    if recount.data_bytes.get("sha256") != held.get("sha256"):
        extra = (" Its counts are the same: the change touches nothing the audit counts." if same else "")
        problems.append(f"The data's bytes are not those audited: SHA-256 {str(recount.data_bytes.get('sha256'))[:16]} "
                        f"({recount.data_bytes.get('size', 0):,} bytes), the evidence says "
                        f"{str(held.get('sha256'))[:16]} ({held.get('size', 0):,} bytes).{extra}")
    else:
        checked.append(f"Data: its bytes hash to {str(held.get('sha256'))[:16]} ({held.get('size', 0):,} bytes), as "
                       "the fingerprint says.")


def _versions_note(evidence: bundle.Evidence) -> str:
    from luskin_core.present.report import software_versions

    then = _safe_json(evidence, "versions.json")
    now = software_versions()
    moved = [f"{k} {then[k]} then, {now[k]} now" for k in sorted(set(then) & set(now)) if then[k] != now[k]]
    return (" (the libraries differ from those that wrote it: " + "; ".join(moved) + ")") if moved else ""


def _listed(items: Sequence[str]) -> str:
    shown = "; ".join(items[:_SHOWN])
    return shown + (f"; and {len(items) - _SHOWN} more." if len(items) > _SHOWN else ".")


def _same_number(a: float, b: float) -> bool:
    if a == b:
        return True
    return math.isfinite(a) and math.isfinite(b) and abs(a - b) <= _RELATIVE * max(abs(a), abs(b), 1e-300)


def differences(held: Any, again: Any, path: str = "") -> list[str]:
    """Where two plain values differ, as '<path>: <held> in the file, <again> recomputed' (numbers within 1e-9)."""
    here = path or "the whole"
    if isinstance(held, dict) and isinstance(again, dict):
        out = []
        for key in sorted(set(held) | set(again)):
            where = f"{path}.{key}" if path else str(key)
            if key not in held:
                out.append(f"{where}: missing in the file")
            elif key not in again:
                out.append(f"{where}: in the file but not in what the counts give")
            else:
                out += differences(held[key], again[key], where)
        return out
    if isinstance(held, list) and isinstance(again, list):
        if len(held) != len(again):
            return [f"{here}: {len(held)} entries in the file, {len(again)} recomputed"]
        out = []
        for i, (a, b) in enumerate(zip(held, again)):
            out += differences(a, b, f"{path}[{i}]")
        return out
    numbers = (int, float)
    if (isinstance(held, numbers) and isinstance(again, numbers) and not isinstance(held, bool)
            and not isinstance(again, bool)):
        return [] if _same_number(float(held), float(again)) else [(f"{here}: {held!r} in the file, {again!r} "
                                                                    "recomputed")]
    if held == again and type(held) is type(again):
        return []
    return [f"{here}: {_short(held)} in the file, {_short(again)} recomputed"]


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "…"


def numbers_disagree(held: Any, again: Any) -> int:
    """How many numbers held in both differ (paths only one of them has, and words, are not counted; lists of
    different lengths count as one)."""
    if isinstance(held, dict) and isinstance(again, dict):
        return sum(numbers_disagree(held[k], again[k]) for k in held.keys() & again.keys())
    if isinstance(held, list) and isinstance(again, list):
        if len(held) != len(again):
            return 1
        return sum(numbers_disagree(a, b) for a, b in zip(held, again))
    numbers = (int, float)
    if isinstance(held, numbers) and isinstance(again, numbers) and not isinstance(held, bool) and not isinstance(
            again, bool):
        return 0 if _same_number(float(held), float(again)) else 1
    return 0


def count_values(value: Any) -> int:
    """How many leaf values a plain structure holds (what "every number" counts)."""
    if isinstance(value, dict):
        return sum(count_values(v) for v in value.values())
    if isinstance(value, list):
        return sum(count_values(v) for v in value)
    return 1


def count_differences(held: Mapping[str, Any], again: Mapping[str, Any]) -> list[str]:
    """Where the data's counts differ from the evidence's, in counts' words (group, cell, what)."""
    out = []
    for name in sorted(set(held) | set(again)):
        a, b = held.get(name), again.get(name)
        if isinstance(a, dict) and isinstance(b, dict) and "groups" in a and "groups" in b:
            if a["groups"] != b["groups"] or a["cell_labels"] != b["cell_labels"]:
                gone = [g for g in a["groups"] if g not in b["groups"]]
                new = [g for g in b["groups"] if g not in a["groups"]]
                out.append(f"{name}: the groups or cells differ" + (f" (only in the evidence: {gone})" if gone else "")
                           + (f" (only in the data: {new})" if new else ""))
                continue
            for what in ("n", "positives", "tp", "fp", "fn", "tn", "score_sum", "score_sumsq"):
                x, y = a.get(what), b.get(what)
                if x is None or y is None:
                    if x != y:
                        out.append(f"{name}: '{what}' counted in one and not the other")
                    continue
                for gi, group in enumerate(a["groups"]):
                    for ci, cell in enumerate(a["cell_labels"]):
                        if x[gi][ci] != y[gi][ci]:
                            out.append(f"{name}: group '{group}', cell '{cell}': {what} {x[gi][ci]:,} in the evidence, "
                                       f"{y[gi][ci]:,} in the data")
            for what in ("excluded", "n_excluded", "score_cutoff", "binned"):
                if a.get(what) != b.get(what):
                    out.append(f"{name}: {what.replace('_', ' ')} {a.get(what)!r} in the evidence, {b.get(what)!r} "
                               "in the data")
        elif isinstance(a, str) and isinstance(b, str):
            lines_a, lines_b = a.splitlines(), b.splitlines()
            first = next((i for i, (x, y) in enumerate(zip(lines_a, lines_b)) if x != y), min(len(lines_a), len(lines_b)))
            out.append(f"the published table differs from line {first + 1} on")
        elif a != b:
            out.append(f"{name}: {_short(a)} in the evidence, {_short(b)} in the data")
    return out


__all__ = ["REQUIRED", "Recount", "Verification", "count_differences", "differences", "verify"]
