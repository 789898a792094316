"""Shared fixtures: the bundled samples (loaded once) and the SQF copy beside the project."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from luskin_core.counting.data import load_sample, sqf_shared_path

ROOT = Path(__file__).resolve().parent.parent
os.chdir(ROOT)


@pytest.fixture(scope="session")
def adult():
    return load_sample("adult")


@pytest.fixture(scope="session")
def compas():
    return load_sample("compas")


@pytest.fixture(scope="session")
def sqf():
    if sqf_shared_path() is None:
        pytest.skip("the NYPD SQF 2014 file is not beside the project (../shared/data/sqf_2014.csv.gz)")
    return load_sample("sqf")
