"""The data's fingerprint: SHA-256 of the bytes read (where Luskin read bytes), and where it cannot, the counts.

A file is hashed as it is; a folder (of Parquet files) as the sorted list of its files' relative paths, sizes and
hashes; a bundled sample as its files. A table on a database server or a Spark cluster is counted where it lives,
so Luskin reads no bytes of it: its fingerprint is its row count and the hash of the counts alone (a row changed in
a way that changes no count cannot be seen there, and the evidence says so).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from luskin_core.evidence.canonical import canonical, sha256
from luskin_core.spec.dataref import DataRef

_CHUNK = 1 << 20
SAMPLE_FILES = {"adult": ("adult.data.gz", "adult.test.gz"), "compas": ("compas-scores-two-years.csv.gz",)}


def _file(path: Path) -> tuple[str, int]:
    digest = hashlib.sha256()
    size = 0
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


def _listing(files: list[tuple[str, Path]]) -> dict[str, Any]:
    entries = []
    total = 0
    for name, path in files:
        digest, size = _file(path)
        entries.append([name, size, digest])
        total += size
    if len(entries) == 1:
        return {"sha256": entries[0][2], "size": total, "files": 1}
    return {"sha256": sha256(canonical(entries)), "size": total, "files": len(entries)}


def data_bytes(location: str | None) -> dict[str, Any] | None:
    """The hash of the bytes a location names on this machine (a file, a folder, ``sample:NAME``), or None when it
    names none (a database table, a cluster's table, nothing)."""
    if not location:
        return None
    text = str(location).strip()
    ref = DataRef.parse(text)
    if ref.is_sample:
        from luskin_core.counting.data import SAMPLE_DIR, sqf_shared_path

        name = ref.name.strip().lower()
        if name == "sqf":
            found = sqf_shared_path()
            return None if found is None else _listing([(Path(found).name, Path(found))])
        names = SAMPLE_FILES.get(name)
        if names is None:
            return None
        return _listing([(n, Path(str(SAMPLE_DIR / n))) for n in names])
    from luskin_core.counting.engines import local_path

    local = local_path(text)
    if local is None:
        return None
    path = Path(local).expanduser()
    if path.is_file():
        return _listing([(path.name, path)])
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith("."))
        return _listing([(p.relative_to(path).as_posix(), p) for p in files]) if files else None
    return None


def uploaded_bytes(data: bytes, name: str) -> dict[str, Any]:
    """The fingerprint of bytes held in memory (an upload on the dashboard)."""
    return {"sha256": sha256(data), "size": len(data), "files": 1, "name": name}


__all__ = ["data_bytes", "uploaded_bytes"]
