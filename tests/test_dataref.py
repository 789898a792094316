"""Dataset references (issue 45): ``sample:`` / ``upload:`` / ``source:`` read in one place, written back unchanged.

Configurations and evidence bundles already saved name their data by that text; a reference read from it must give
the same text back, so that a configuration saved again, or evidence made again, keeps its bytes.
"""

from __future__ import annotations

import json

import pytest

from luskin_core.evidence.fingerprint import data_bytes
from luskin_core.present.report import DatasetRef, config_from_json, config_to_json
from luskin_core.spec.dataref import DataRef

TEXTS = ["sample:adult", "upload:hires.csv", "upload:hires 2024: final.csv", "source:warehouse",
         "source:", "data/hires.csv", "s3://bucket/hires.parquet", "postgresql://db/hr", "C:\\data\\hires.csv",
         "/tmp/upload:odd.csv", "samples:adult", ""]


@pytest.mark.parametrize("text", TEXTS)
def test_a_reference_gives_back_the_text_it_was_read_from(text: str) -> None:
    assert str(DataRef.parse(text)) == text


def test_the_prefix_decides_the_kind_and_the_rest_is_the_name() -> None:
    assert DataRef.parse("sample:adult") == DataRef("sample", "adult") == DataRef.sample("adult")
    assert DataRef.parse("Sample:adult").is_sample  # as the command line and the evidence read it today
    assert DataRef.parse("upload:a:b.csv") == DataRef.upload("a:b.csv")  # only the first colon splits
    assert DataRef.parse("source:warehouse") == DataRef.source("warehouse")
    assert DataRef.parse("C:\\data.csv") == DataRef("file", "C:\\data.csv")  # a drive letter is no prefix
    assert DataRef.parse("postgresql://db/hr").kind == "file"
    assert DataRef.parse(DataRef.sample("adult")) == DataRef.sample("adult")
    assert data_bytes("sample:nosuch") is None and data_bytes("Sample:COMPAS") == data_bytes("sample:compas")


def _saved(source: str) -> str:
    """A configuration document as Luskin 0.1 saved it (before the typed reference), byte for byte."""
    return json.dumps({"kind": "luskin-configuration", "version": 1, "luskin_version": "0.1.0",
                       "saved_at": "2026-11-30T10:00:00+00:00",
                       "data": {"source": source, "fingerprint": "abc123", "rows": 60, "columns": 2},
                       "spec": {"outcome": "hired", "positive": "yes", "group_by": ["sex"], "min_group_size": 5}},
                      indent=2)


@pytest.mark.parametrize(("source", "kind", "name"), [("sample:adult", "sample", "adult"),
                                                      ("upload:hires 2024: final.csv", "upload", "hires 2024: final.csv"),
                                                      ("source:warehouse", "source", "warehouse")])
def test_a_configuration_saved_before_loads_and_saves_again_with_the_same_data_entry(source: str, kind: str,
                                                                                   name: str) -> None:
    text = _saved(source)
    loaded = config_from_json(text)
    assert (loaded.dataset.kind, loaded.dataset.name) == (kind, name)
    again = json.loads(config_to_json(loaded.dataset, loaded.spec))
    saved_data = json.dumps(json.loads(text)["data"], indent=2)
    assert json.dumps(again["data"], indent=2) == saved_data
    assert DatasetRef.coerce(source).source == source
