"""A tagged PDF's structure tree, read with pypdf: the tests of the report's and the LL144 summary's PDF/UA tags."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pypdf


def structure(root: Any) -> Iterator[Any]:
    """Every element of the document's structure tree (``root`` is the catalog), depth first, in reading order."""

    def walk(node: Any) -> Iterator[Any]:
        node = node.get_object()
        if not isinstance(node, pypdf.generic.DictionaryObject):
            return
        if "/S" in node:
            yield node
        kids = node.get("/K")
        for kid in kids if isinstance(kids, pypdf.generic.ArrayObject) else [kids] if kids is not None else []:
            yield from walk(kid)

    yield from walk(root["/StructTreeRoot"])


def tags(root: Any) -> list[str]:
    """The structure types in reading order ('/H1', '/Table', '/Figure', ...)."""
    return [str(node["/S"]) for node in structure(root)]
