"""A CSV counted by DuckDB after the upload's checks (files.open_csv_checked) gives the upload's audit, and
``luskin audit`` says what is wrong with a bad file as the upload does.

The audit's JSON is the in-memory audit's (the file read by the upload's reader); a file the upload
refuses is refused in the same plain words; a file past the 1 GB limit is refused whether plain or
gzipped (issue 30), before anything reads it. (``luskin audit`` on a CSV under 200 MB goes through
files.open_csv_audited, which also makes the specification's checks that need the rows:
tests/test_cli_csv_duckdb.py.)
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from cli_inproc import run_in_process

from luskin_core import AuditSpec, LuskinError, audit
from luskin_core.counting.data import load_csv
from luskin_core.counting.files import FileSource, open_csv_checked, open_file

ARGS = ["--outcome", "y", "--positive", "yes", "--groups", "group", "--stratify", "code"]


_run = run_in_process   # luskin in this process: status, stdout, stderr


def _frame(n: int = 30_000) -> pd.DataFrame:
    rng = np.random.default_rng(8)
    y = rng.choice(np.array(["yes", "no", "?"], dtype=object), n, p=[.4, .55, .05])   # '?' is missing
    return pd.DataFrame({"group": rng.choice(np.array(["A", "B", "C"], dtype=object), n),
                         "code": rng.integers(1, 40, n), "y": y, "score": rng.normal(size=n).round(3)})


def test_a_csv_is_counted_by_duckdb_and_audited_as_the_upload_reads_it(tmp_path):
    path = tmp_path / "data.csv"
    _frame().to_csv(path, index=False)
    assert isinstance(open_csv_checked(str(path)), FileSource)
    status, out, err = _run(["audit", "--data", str(path), *ARGS, "--json"])
    assert status == 0, err
    spec = AuditSpec("y", "yes", group_by=("group",), strata=("code",))
    expected = audit(load_csv(path), spec).to_dict()
    got = json.loads(out)
    assert got["cells"] == json.loads(json.dumps(expected["cells"]))
    assert got["n_rows"] == expected["n_rows"] and got["n_excluded"] == expected["n_excluded"] > 0


def test_a_csv_the_duckdb_reader_would_read_otherwise_goes_to_the_upload_reader(tmp_path):
    path = tmp_path / "spaced.csv"
    path.write_text("group,code,y\n" + " A ,1, yes\nB,2,no\n" * 50)
    assert open_csv_checked(str(path)) is None   # blanks around values: the upload reader strips them
    latin = tmp_path / "latin.csv"
    latin.write_bytes(("group,code,y\n" + "Caf\xe9,1,yes\nB,2,no\n" * 50).encode("latin-1"))
    assert open_csv_checked(str(latin)) is None
    status, out, err = _run(["audit", "--data", str(path), "--outcome", "y", "--positive", "yes",
                             "--groups", "group", "--json"])
    assert status == 0, err
    assert json.loads(out)["n_rows"] == 100


@pytest.mark.parametrize(("content", "words"), [
    (b"", "The file is empty"),
    (b'{"group": "A", "y": "yes"}\n', "JSON"),
    (b"PK\x03\x04" + bytes(200), "not a CSV"),
    (b"only\nA\nB\n", "Only one column was found"),
])
def test_a_bad_csv_gets_the_uploads_plain_words(tmp_path, content, words):
    path = tmp_path / "bad.csv"
    path.write_bytes(content)
    with pytest.raises(LuskinError) as upload:
        load_csv(path)
    assert words in str(upload.value)
    status, _, err = _run(["audit", "--data", str(path), *ARGS])
    assert status != 0 and str(upload.value) in err and "Traceback" not in err


@pytest.mark.parametrize("name", ["big.csv", "big.txt"])
def test_a_plain_csv_past_the_limit_is_refused_plainly(tmp_path, name):
    path = tmp_path / name
    with open(path, "wb") as handle:   # a sparse file: 1.1 GB on paper, nothing on the disk
        handle.write(b"group,code,y\nA,1,yes\n")
        handle.truncate(1_100_000_000)
    status, _, err = _run(["audit", "--data", str(path), *ARGS])
    assert status != 0 and "Traceback" not in err
    assert "1,100 MB" in err and "1,000 MB this tool reads" in err
    with pytest.raises(LuskinError, match="1,000 MB this tool reads"):
        open_file(str(path))
