"""Loading a user's CSV, the bundled samples and NYPD files; every bad file gets a plain message."""

from __future__ import annotations

import gzip
import zipfile

import pandas as pd
import pytest

from luskin_core import LuskinError, load_csv, load_data, load_sample
from luskin_core.counting.data import PRESETS, download_sqf, frame_fingerprint, load_sqf, sqf_shared_path

ROWS = [("White", ">50K", 12), ("Black", "<=50K", 9), ("Other", ">50K", 14)]


def _csv(sep: str, encoding: str = "utf-8", name: str = "race") -> bytes:
    lines = [sep.join([name, "income", "education-num"])] + [sep.join(map(str, r)) for r in ROWS]
    return ("\n".join(lines) + "\n").encode(encoding)


@pytest.mark.parametrize("sep", [",", ";", "\t"])
def test_delimiters(sep):
    frame = load_csv(_csv(sep))
    assert list(frame.columns) == ["race", "income", "education-num"]
    assert frame["education-num"].tolist() == [12, 9, 14]
    assert pd.api.types.is_numeric_dtype(frame["education-num"])


def test_latin1_and_gzip_and_blanks(tmp_path):
    frame = load_csv(_csv(";", "latin-1", name="raça"))
    assert "raça" in frame.columns
    path = tmp_path / "data.csv.gz"
    path.write_bytes(gzip.compress(b"a , b\n x ,1\n?, 2\n"))
    frame = load_csv(path)
    assert frame["a"].tolist()[0] == "x" and frame["a"].isna().tolist() == [False, True]
    assert frame["b"].tolist() == [1, 2]


@pytest.mark.parametrize("content, words", [
    (b"", "empty"),
    (b"   \n\n", "empty"),
    (b"just one column\nvalue\nvalue\n", "Only one column"),
    (b"a,b\n", "no data rows"),
    (b"a,b\n1,2\n1,2,3,4,5\n", "same number of fields"),
    (b"\x00\x01\x02binary\x00", "not text"),
    (b"PK\x03\x04rest-of-a-zip", "zip or Excel"),
])
def test_bad_files_get_plain_messages(content, words):
    with pytest.raises(LuskinError, match=words):
        load_csv(content)


def test_huge_file_is_refused_before_reading(tmp_path):
    path = tmp_path / "big.csv"
    path.write_bytes(b"a,b\n" + b"1,2\n" * 1000)
    with pytest.raises(LuskinError, match="more than the"):
        load_csv(path, max_bytes=1000)
    with pytest.raises(LuskinError, match="no file"):
        load_csv(tmp_path / "absent.csv")


def test_adult_sample(adult):
    assert adult.shape == (48842, 15)
    assert adult["income"].value_counts().to_dict() == {"<=50K": 37155, ">50K": 11687}
    assert adult["workclass"].isna().sum() == 2799
    assert adult["race"].value_counts()["White"] == 41762


def test_compas_sample(compas):
    assert compas.shape == (7214, 53)
    assert compas["two_year_recid"].value_counts().to_dict() == {0: 3963, 1: 3251}


def test_sqf_sample(sqf):
    assert sqf.shape == (45787, 112)
    assert sqf["frisked"].value_counts().to_dict() == {"Y": 30345, "N": 15442}
    assert (sqf["detailCM"] == 9).sum() == 2221
    assert sqf["age"].dropna().between(10, 99).all()
    # 2014 codes yes/no fields as Y/N for most stops and 1/blank for 10,860: one coding here.
    assert set(sqf["rf_furt"].unique()) == {"Y", "N"} and (sqf["rf_furt"] == "Y").sum() == 12379 + 3980
    assert set(sqf["pistol"].unique()) == {"Y", "N"} and (sqf["pistol"] == "Y").sum() == 143 + 54
    features = PRESETS["sqf"].features
    assert set(features) <= set(sqf.columns) and "frisked" not in features
    # Reasons for frisk are recorded because of the frisk: they would leak the outcome.
    assert not [c for c in features if c.startswith(("rf_", "pf_", "sb_"))]


def test_sqf_any_year_with_lower_case_header(sqf, tmp_path):
    """Other years' NYPD files spell some names in lower case (e.g. detailcm)."""
    if sqf_shared_path() is None:
        pytest.skip("no SQF file")
    raw = gzip.decompress(sqf_shared_path().read_bytes()).decode("utf-8")
    header, rest = raw.split("\n", 1)
    lines = rest.split("\n")[:500]
    path = tmp_path / "sqf_2012.csv"
    path.write_text(header.lower() + "\n" + "\n".join(lines), encoding="utf-8")
    frame = load_sqf(path)
    assert "detailCM" in frame.columns and "dettypCM" in frame.columns
    assert len(frame) == 500
    assert load_data(path).columns.tolist() == frame.columns.tolist()
    with pytest.raises(LuskinError, match="does not look like"):
        load_sqf(b"a,b\n1,2\n")


def test_sqf_download_from_a_url(sqf, tmp_path):
    """The downloader fetches NYPD's zip for a year; here the 'site' is a local file URL."""
    raw = gzip.decompress(sqf_shared_path().read_bytes())
    archive = tmp_path / "sqf-2014-csv.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("2014.csv", raw[:200_000].rsplit(b"\n", 1)[0] + b"\n")
    path = download_sqf(2014, tmp_path / "out", url_template=f"file://{tmp_path}/sqf-{{year}}-csv.zip")
    frame = load_sqf(path)
    assert frame.shape[1] == 112 and len(frame) > 100
    with pytest.raises(LuskinError, match="Could not download"):
        download_sqf(2013, tmp_path / "out", url_template=f"file://{tmp_path}/sqf-{{year}}-csv.zip")
    with pytest.raises(LuskinError, match="not one of those years"):
        download_sqf(2030, tmp_path)


def test_unknown_sample_and_data_refs():
    with pytest.raises(LuskinError, match="no sample called"):
        load_sample("iris")
    assert load_data("sample:compas").shape == (7214, 53)


def test_presets_name_real_columns(adult, compas):
    for name, frame in (("adult", adult), ("compas", compas)):
        preset = PRESETS[name]
        assert set(preset.features) <= set(frame.columns)
        assert preset.spec.outcome not in preset.features


def test_fingerprint_tracks_content(adult):
    small = adult.head(100)
    assert frame_fingerprint(small) == frame_fingerprint(small.copy())
    changed = small.copy()
    changed.loc[0, "age"] = 99
    assert frame_fingerprint(changed) != frame_fingerprint(small)


@pytest.mark.parametrize("name, sha256", [
    ("adult.data.gz", "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d"),
    ("adult.test.gz", "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05"),
    ("compas-scores-two-years.csv.gz", "c451db85908b2f7fef1d83203bedf6b71ecda0d5af468d82ae62178f91d0cc7d"),
])
def test_samples_are_the_published_files(name, sha256):
    """The shipped samples decompress to the exact bytes UCI and ProPublica published."""
    import hashlib

    from luskin_core.counting.data import SAMPLE_DIR

    assert hashlib.sha256(gzip.decompress((SAMPLE_DIR / name).read_bytes())).hexdigest() == sha256


def _tricky_csv(rows: int = 3000, stray_quote: bool = False) -> bytes:
    """A UTF-8 CSV with what the readers must agree on: a byte-order mark, CRLF, quoted commas,
    line breaks and doubled quotes, blanks around values, missing markers, '+5', 'inf', a column
    of whole numbers that turns decimal and one that turns text past the first 2,000 rows (the
    sniffed ones), non-ASCII text and blank lines."""
    lines = ["id, name ,city,score,zip,signed,ratio,note"]
    for i in range(rows):
        name = ['"Smith, John"', '"say ""hi"""', " spaced ", "Zoë", "?", '"NA"', ""][i % 7]
        city = ['"São\nPaulo"', "Lyon", "null", "Oslo"][i % 4]
        score = "2.5" if i == 2500 else str(i % 97)
        zip_code = "unknown" if i == 2700 else f"{10000 + i}"
        signed = f"+{i % 5}" if i % 3 else str(-(i % 5))
        ratio = "inf" if i == 10 else f"{i / 7:.3f}"
        note = '5\'11"' if stray_quote and i == 2900 else ("" if i % 11 else "x")
        lines.append(",".join([str(i), name, city, score, zip_code, signed, ratio, note]))
        if i % 500 == 0:
            lines.append("")
    return b"\xef\xbb\xbf" + "\r\n".join(lines).encode("utf-8") + b"\r\n"


@pytest.mark.parametrize("stray_quote", [False, True])
def test_parallel_pieces_agree_with_the_serial_and_pandas_readers(tmp_path, monkeypatch, stray_quote):
    """The fast path (pieces parsed in parallel) gives the very frame of pyarrow's streaming reader
    and of pandas' parser, from bytes, a file and a gzip; a quote pyarrow may read otherwise than its
    count (5'11") sends the file to the streaming reader."""
    from luskin_core.counting import csvread as data  # the CSV engine's module: where the reader looks its helpers up

    raw = _tricky_csv(stray_quote=stray_quote)
    path = tmp_path / "tricky.csv"
    path.write_bytes(raw)
    packed = tmp_path / "tricky.csv.gz"
    packed.write_bytes(gzip.compress(raw))
    taken: list[str] = []
    pieces, stream = data._read_pieces, data._stream

    def spy_pieces(*args, **kwargs):
        found = pieces(*args, **kwargs)
        taken.append("pieces" if found is not None else "pieces refused")
        return found

    def spy_stream(*args, **kwargs):
        taken.append("stream")
        return stream(*args, **kwargs)

    monkeypatch.setattr(data, "_PIECE_BYTES", (512, 512))  # about 300 pieces, some quoted lines across cuts
    monkeypatch.setattr(data, "_read_pieces", spy_pieces)
    monkeypatch.setattr(data, "_stream", spy_stream)
    fast = [load_csv(raw), load_csv(path), load_csv(packed)]
    expected = ["stream"] * 3 if stray_quote else ["pieces"] * 3
    assert [t for t in taken if t != "pieces refused"] == expected, taken

    def serial(source, delimiter, kinds, settings, rows):
        settings["pieces"] = False
        raise data._Restart()

    monkeypatch.setattr(data, "_read_pieces", serial)
    streamed = load_csv(raw)
    monkeypatch.setattr(data, "_read_arrow", lambda source, layout: None)
    by_pandas = load_csv(raw)

    frame = fast[0]
    for other in (*fast[1:], streamed, by_pandas):
        pd.testing.assert_frame_equal(frame, other, check_exact=True)
    assert list(frame.columns) == ["id", "name", "city", "score", "zip", "signed", "ratio", "note"]
    assert len(frame) == 3000
    assert {c: str(t) for c, t in frame.dtypes.items()} == {
        "id": "Int64", "name": "string", "city": "string", "score": "Float64", "zip": "string",
        "signed": "Int64", "ratio": "Float64", "note": "string"}
    assert frame["name"].head(7).tolist() == ["Smith, John", 'say "hi"', "spaced", "Zoë", pd.NA, pd.NA, pd.NA]
    assert frame["city"].head(4).tolist() == ["São\nPaulo", "Lyon", pd.NA, "Oslo"]
    assert frame["score"][2500] == 2.5 and frame["zip"][2700] == "unknown" and frame["zip"][0] == "10000"
    assert frame["signed"].head(3).tolist() == [0, 1, 2] and pd.isna(frame["ratio"][10])
    assert frame["note"].eq('5\'11"').sum() == int(stray_quote)


def test_cuts_fall_outside_quotes():
    from luskin_core.counting.csvread import _cut, _plain_quotes

    data = b'a,b\n1,"x\ny"\n2,z\n'
    assert _cut(data, 0, len(data) - 1) == data.index(b"2")  # not inside "x\ny"
    assert _cut(data, 0, 7) == 4 and _cut(b'1,"x\ny', 0, 6) == -1
    assert _plain_quotes(data, ",", first=True)
    assert _plain_quotes(b'\xef\xbb\xbf"a",b\n"say ""hi""",2\n', ",", first=True)
    assert not _plain_quotes(b'a,5\'11"\n', ",", first=True)
    assert not _plain_quotes(b'a, "b"\n', ",", first=True)
    assert not _plain_quotes(b'"ab"c,d\n', ",", first=True)
