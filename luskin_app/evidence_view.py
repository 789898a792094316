"""The dashboard's side of audit evidence: the Report page's "Download the evidence" and the Verify page's check.

The evidence of the session's audit is made by :func:`luskin_core.evidence.make.make_evidence` from the audit's
count table, with what the session knows of the data (its name, the engine that counted it, the uploaded bytes'
hash) and of the user (the signed-in one). The operator gives the signing key with ``LUSKIN_EVIDENCE_KEY`` (the
path of an Ed25519 private key, `luskin keygen`): read at each use, never copied; without it the evidence is
unsigned, and the page says so.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from luskin_core.errors import LuskinError
from luskin_core.spec.dataref import DataRef

KEY_SETTING = "LUSKIN_EVIDENCE_KEY"


def key_path() -> str | None:
    """The operator's signing key's path, or None when the evidence is not to be signed."""
    value = os.environ.get(KEY_SETTING, "").strip()
    return value or None


def data_facts(data: Any) -> Any:
    """What the evidence says of a session's dataset: its name, the engine that counted it, its bytes' hash."""
    from luskin_core.evidence.make import DataFacts

    engine = getattr(data.engine, "kind", None) or "memory"
    if data.raw_digest is not None:
        digest, size = data.raw_digest
        return DataFacts(data.source, engine, None, {"sha256": digest, "size": size, "files": 1})
    return DataFacts(data.source, engine, data.source if data.ref.is_sample else None, None)


def user_name(user: Any) -> str | None:
    """How the evidence names the signed-in user (none on a local app without sign-in)."""
    if not getattr(user, "id", ""):
        return None
    return user.email or user.name or user.id


def audit_evidence(result: Any, data: Any, user: Any, *, pdf: bool) -> Callable[[], bytes]:
    """A function making the evidence of ``result`` (the session's audit) when the download is clicked: everything
    it needs is read now, in the page's run."""
    from luskin_core.evidence.canonical import count_table_dict
    from luskin_core.evidence.make import make_evidence
    from luskin_core.evidence.signing import load_private

    if result.counts is None:
        raise LuskinError("This audit kept no count table, so it has no evidence.")
    specification = {"spec": result.spec.to_dict(), "source": result.source}
    counts = {"audit": count_table_dict(result.counts)}
    facts = data_facts(data)
    by = user_name(user)
    path = key_path()

    def make() -> bytes:
        key = load_private(path) if path else None
        return make_evidence("audit", specification, counts, data=facts, by=by, made_with="the Luskin dashboard",
                             signing_key=key, pdf=pdf).data

    return make


def ll144_evidence(source: Any, spec: Any, choices: Any, data: Any, user: Any) -> Callable[[], bytes]:
    """A function making the Local Law 144 evidence of the session's rows (counted on the click; the HTML report
    in it, not the PDF: the Report page and `luskin audit --evidence` make that)."""
    from luskin_core.analyses.regulator_ll144 import ll144_counted
    from luskin_core.evidence.kinds import ll144_counts_part
    from luskin_core.evidence.make import make_evidence
    from luskin_core.evidence.signing import load_private

    specification = {"spec": spec.to_dict(), "choices": _choices_part(choices)}
    facts, by, path = data_facts(data), user_name(user), key_path()

    def make() -> bytes:
        counts = ll144_counts_part(ll144_counted(source, spec, choices))
        key = load_private(path) if path else None
        return make_evidence("ll144", specification, counts, data=facts, by=by, made_with="the Luskin dashboard",
                             signing_key=key, pdf=False).data

    return make


def published_evidence(raw: bytes, name: str, choices: Any, user: Any) -> Callable[[], bytes]:
    """A function making the evidence of a published Local Law 144 table (its bytes are the data)."""
    from luskin_core.evidence.fingerprint import uploaded_bytes
    from luskin_core.evidence.kinds import published_counts_part
    from luskin_core.evidence.make import DataFacts, make_evidence
    from luskin_core.evidence.signing import load_private

    counts = published_counts_part(raw)
    facts = DataFacts(str(DataRef.upload(name)), "published table", None, uploaded_bytes(raw, name))
    by, path = user_name(user), key_path()

    def make() -> bytes:
        key = load_private(path) if path else None
        return make_evidence("ll144_published", {"choices": _choices_part(choices)}, counts, data=facts, by=by,
                             made_with="the Luskin dashboard", signing_key=key, pdf=False).data

    return make


def _choices_part(choices: Any) -> dict[str, Any]:
    return {"sex": choices.sex, "race": choices.race, "exclude_small": choices.exclude_small,
            "unknown": list(choices.unknown)}


def recount_of(data: Any) -> Any:
    """The session's dataset as data to count again (its frame, or the configured source's engine)."""
    from luskin_core.evidence.fingerprint import data_bytes
    from luskin_core.evidence.verify import Recount

    if data.engine is not None:
        return Recount(data.engine, data.title, getattr(data.engine, "kind", "engine"), None)
    if data.raw_digest is not None:
        digest, size = data.raw_digest
        held: Any = {"sha256": digest, "size": size, "files": 1}
    else:
        held = data_bytes(data.source) if data.ref.is_sample else None
    return Recount(data.frame, data.title, "memory", held)


__all__ = ["KEY_SETTING", "audit_evidence", "data_facts", "key_path", "ll144_evidence", "published_evidence", "recount_of",
           "user_name"]
