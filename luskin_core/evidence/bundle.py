"""The evidence file: one ZIP archive of JSON parts, the report, a manifest of their hashes and a signature.

Parts (each named in the manifest with its SHA-256 and size): ``specification.json`` (the specification as given
and the analysis's choices), ``judgement.json`` (the resolved judgement), ``counts.json`` (the count table every
number was computed from), ``results.json`` (every result), ``fingerprint.json`` (the data's), ``versions.json``,
``made.json`` (when and by whom), ``about.json`` (what the operator said about the data), ``report.html`` and
``report.pdf``. ``manifest.json`` is canonical JSON; ``signature.json``, outside the manifest, is an Ed25519
signature of the manifest's bytes. Members are written in a fixed order with a fixed date, so the same parts make
the same bytes. A reader refuses, in words, what is not such a file: not a ZIP, cut short, too large once
unpacked, without a manifest, or written by a later format.
"""

from __future__ import annotations

import io
import zipfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from luskin_core.errors import LuskinError
from luskin_core.evidence.canonical import canonical, parse, sha256

FORMAT = "luskin-evidence"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
SIGNATURE = "signature.json"
# Largest evidence file read, unpacked (the report's HTML is about 5 MB with its charts): more is refused.
MAX_UNPACKED = 256 * 1024 * 1024
MAX_MEMBERS = 64
_DATE = (1980, 1, 1, 0, 0, 0)


@dataclass(frozen=True)
class Evidence:
    """An evidence file read: its manifest, every part's bytes (the manifest's and the signature's aside) and the
    signature record (None when unsigned)."""

    manifest: dict[str, Any]
    parts: Mapping[str, bytes]
    signature: Any = None
    manifest_bytes: bytes = b""
    signed: bool = False  # the file holds a signature.json (its record may still be damaged)

    @property
    def kind(self) -> str:
        return str(self.manifest.get("kind", ""))

    def json(self, name: str) -> Any:
        """A JSON part read back (a plain refusal names the part when it is missing or unreadable)."""
        if name not in self.parts:
            raise LuskinError(f"The evidence has no {name}.")
        return parse(self.parts[name], name)


def manifest_for(kind: str, parts: Mapping[str, bytes]) -> dict[str, Any]:
    return {"format": FORMAT, "format_version": FORMAT_VERSION, "kind": kind,
            "parts": {name: {"sha256": sha256(data), "bytes": len(data)} for name, data in sorted(parts.items())}}


def write(kind: str, parts: Mapping[str, bytes], signer: Any = None) -> bytes:
    """The evidence file's bytes: the parts, their manifest and (with ``signer``, a function of the manifest's bytes
    giving the signature record) its signature."""
    manifest = canonical(manifest_for(kind, parts))
    members = [(MANIFEST, manifest), *sorted(parts.items())]
    if signer is not None:
        members.append((SIGNATURE, canonical(signer(manifest))))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
    return out.getvalue()


def read(data: bytes) -> Evidence:
    """An evidence file's parts, or a plain refusal saying why the file is not one Luskin can check."""
    if not data:
        raise LuskinError("The file is empty: it is not an evidence file.")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
            if len(infos) > MAX_MEMBERS or sum(i.file_size for i in infos) > MAX_UNPACKED:
                raise LuskinError("The file holds far more than an evidence file does: it is not one Luskin wrote.")
            names = [i.filename for i in infos]
            if len(set(names)) != len(names):
                raise LuskinError("The file holds a part twice: it is not an evidence file as Luskin writes it.")
            members = {i.filename: archive.read(i) for i in infos}
    except LuskinError:
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, NotImplementedError, KeyError) as err:
        if data[:2] == b"PK":
            raise LuskinError(f"The evidence file is incomplete or damaged (cut short, or bytes changed inside its "
                              f"archive: {err}). Ask for the whole file again.") from None
        raise LuskinError("The file is not an evidence file (Luskin writes a ZIP archive; this is something else)."
                          ) from None
    if MANIFEST not in members:
        raise LuskinError("The file has no manifest: it is not an evidence file Luskin wrote.")
    manifest = parse(members[MANIFEST], MANIFEST)
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise LuskinError("The file's manifest is not a Luskin evidence manifest.")
    version = manifest.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise LuskinError("The manifest does not say which format it is written in.")
    if version > FORMAT_VERSION:
        raise LuskinError(f"The evidence was written by a later version of Luskin (evidence format {version}; this "
                          f"Luskin reads format {FORMAT_VERSION}): upgrade Luskin to verify it.")
    if not isinstance(manifest.get("parts"), dict):
        raise LuskinError("The manifest lists no parts.")
    signature = parse(members[SIGNATURE], SIGNATURE) if SIGNATURE in members else None
    parts = {name: body for name, body in members.items() if name not in (MANIFEST, SIGNATURE)}
    return Evidence(manifest, parts, signature, members[MANIFEST], SIGNATURE in members)


__all__ = ["FORMAT", "FORMAT_VERSION", "MANIFEST", "SIGNATURE", "Evidence", "manifest_for", "read", "write"]
