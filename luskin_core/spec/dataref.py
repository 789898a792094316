"""A typed reference to a dataset: the one place the ``sample:`` / ``upload:`` / ``source:`` prefix is read.

Configurations, evidence bundles, the command line and the dashboard name a dataset by a short text:
``sample:adult`` (a shipped sample), ``upload:<file name>`` (a file an analyst uploaded to the dashboard),
``source:<configured name>`` (a data source an administrator configured), or anything else: a path or a
URL (``file``). :meth:`DataRef.parse` reads that text once and ``str()`` writes it back exactly as it was
read, so configurations and evidence bundles already saved keep their bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

Kind = Literal["sample", "upload", "source", "file"]
PREFIXED: tuple[Kind, ...] = tuple(k for k in get_args(Kind) if k != "file")


@dataclass(frozen=True)
class DataRef:
    """Which dataset: its kind and its name (a sample's name, a file's name, a source's name, or a location)."""

    kind: Kind
    name: str

    @classmethod
    def parse(cls, text: object) -> DataRef:
        """The reference a text names. The prefix is read without regard to case ("Sample:adult" is the adult
        sample); the name is kept as written, so ``str()`` gives the text back. A text with no known prefix (a path, ``s3://...``, ``postgresql://...``, ``C:\\data.csv``) is a
        file location, kept whole."""
        if isinstance(text, DataRef):
            return text
        raw = str(text)
        head, colon, rest = raw.partition(":")
        kind = head.lower()
        if colon and kind in PREFIXED:
            return cls(kind, rest)  # type: ignore[arg-type]  # kind is one of PREFIXED, checked above
        return cls("file", raw)

    @classmethod
    def sample(cls, name: str) -> DataRef:
        """A shipped sample, by name."""
        return cls("sample", name)

    @classmethod
    def upload(cls, name: str) -> DataRef:
        """A file uploaded to the dashboard, by its file name."""
        return cls("upload", name)

    @classmethod
    def source(cls, name: str) -> DataRef:
        """A configured data source, by its name."""
        return cls("source", name)

    @property
    def is_sample(self) -> bool:
        """Whether this names a shipped sample."""
        return self.kind == "sample"

    @property
    def is_upload(self) -> bool:
        """Whether this names an uploaded file."""
        return self.kind == "upload"

    def __str__(self) -> str:
        return self.name if self.kind == "file" else f"{self.kind}:{self.name}"
