"""A corpus of bad, hostile and awkward input files, built at test time (nothing large is committed).

Each :class:`Kind` says how to build the file's bytes, whether Luskin must read and audit it
("ok") or refuse it in one plain sentence ("error"), words the sentence must hold, the CLI
options that name its columns, and which commands it goes through. ``tests/test_corpus.py``
sends every kind through the command line (a subprocess) and the dashboard's upload (AppTest).

The base table (``base_frame``) has a gap between groups A and B; the re-encoded kinds (BOM,
CRLF, UTF-16, Latin-1, gzip, semicolons ...) hold the same rows, so their audit must equal the
base file's.
"""

from __future__ import annotations

import gzip
import io
import json
import zipfile
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

ROWS = 200
AUDIT_ARGS = ("--outcome", "y", "--positive", "yes", "--protected", "race == A")
MODEL_COMMANDS = ("retrain", "thresholds", "equalize")


def base_frame(n: int = ROWS, seed: int = 0) -> pd.DataFrame:
    """A small table with a gap between race A and B, quick to train on."""
    rng = np.random.default_rng(seed)
    race = rng.choice(["A", "B"], n, p=[0.55, 0.45])
    edu = rng.integers(5, 16, n)
    x = np.round(rng.normal(size=n), 4)
    p = 1 / (1 + np.exp(-(0.3 * (edu - 10) + x + (race == "A") * 0.8 - 0.8)))
    return pd.DataFrame({"race": race, "sex": rng.choice(["F", "M"], n), "edu": edu, "x": x,
                         "job": rng.choice(["clerk", "nurse", "driver"], n),
                         "y": np.where(rng.random(n) < p, "yes", "no")})


def base_text(frame: pd.DataFrame | None = None, sep: str = ",", newline: str = "\n") -> str:
    return (base_frame() if frame is None else frame).to_csv(index=False, sep=sep, lineterminator=newline)


def base_bytes() -> bytes:
    return base_text().encode()


def _with(**columns: object) -> bytes:
    frame = base_frame()
    for name, value in columns.items():
        frame[name] = value
    return base_text(frame).encode()


def _numbers_with(values: list[str]) -> bytes:
    """The base table with the number column x holding some strings a reader must not trust."""
    frame = base_frame().astype({"x": object})
    for i, value in enumerate(values):
        frame.loc[7 + 13 * i, "x"] = value
    return base_text(frame).encode()


def _renamed(names: list[str]) -> bytes:
    lines = base_text().splitlines(keepends=True)
    return (",".join(names) + "\n" + "".join(lines[1:])).encode()


def _quoted_newlines() -> bytes:
    frame = base_frame()
    frame["note"] = [f"line one\nline two of row {i}" if i % 3 == 0 else "plain" for i in range(len(frame))]
    return base_text(frame).encode()


def _formula_cells() -> bytes:
    frame = base_frame()
    formulas = ["=cmd|' /C calc'!A0", "+1+1", "-2+3", "@SUM(A1:A9)", "=HYPERLINK(\"http://x.example\")"]
    frame["note"] = [formulas[i % len(formulas)] for i in range(len(frame))]
    return base_text(frame).encode()


def _mixed_types() -> bytes:
    frame = base_frame().astype({"edu": object})
    frame.loc[[3, 50, 120], "edu"] = ["twelve", "n/k", "1O"]
    return base_text(frame).encode()


def _xlsx() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as book:
        book.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types/>')
        book.writestr("xl/workbook.xml", "<workbook/>")
        book.writestr("xl/worksheets/sheet1.xml", "<worksheet/>")
    return buffer.getvalue()


def _zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("data.csv", base_bytes())
    return buffer.getvalue()


def _damaged_gzip() -> bytes:
    packed = gzip.compress(base_bytes())
    return packed[: len(packed) // 2] + b"\x00garbage" * 8


def _binary() -> bytes:
    return np.random.default_rng(1).integers(0, 256, 4096, dtype=np.uint8).tobytes()


def _wide(columns: int) -> bytes:
    rng = np.random.default_rng(3)
    names = ["race", "y"] + [f"c{i}" for i in range(columns - 2)]
    rows = [",".join(names)]
    for _ in range(40):
        rows.append(",".join([str(rng.choice(["A", "B"])), str(rng.choice(["yes", "no"]))]
                             + [str(v) for v in rng.integers(0, 9, columns - 2)]))
    return ("\n".join(rows) + "\n").encode()


def _one_big_field(size: int = 50_000_000) -> bytes:
    frame = base_frame()
    frame["note"] = np.where(np.arange(len(frame)) % 2 == 0, "p", "q")
    lines = base_text(frame).splitlines(keepends=True)
    head, first, rest = lines[0], lines[1], lines[2:]
    first = first.rstrip("\n").rsplit(",", 1)[0] + "," + "Z" * size + "\n"
    return (head + first + "".join(rest)).encode()


def _ragged() -> bytes:
    lines = base_text().splitlines(keepends=True)
    lines[50] = lines[50].rstrip("\n") + ",extra,cells\n"
    return "".join(lines).encode()


def _many_outcome_values() -> bytes:
    frame = base_frame()
    frame["y"] = [f"code{i % 150}" for i in range(len(frame))]
    frame.loc[0:40, "y"] = "yes"
    return base_text(frame).encode()


def _nested_json(depth: int = 100_000) -> bytes:
    return b"[" * depth + b"]" * depth


@dataclass(frozen=True)
class Kind:
    """One corpus file: how to build it and what Luskin must do with it."""

    name: str
    build: Callable[[], bytes]
    expect: str                       # "ok": it loads and audits; "error": one plain sentence, exit 2
    words: str = ""                   # the sentence holds these words (case-insensitive); for "ok" unused
    args: tuple[str, ...] = AUDIT_ARGS
    commands: tuple[str, ...] = ("audit",)
    same_as_base: bool = False        # "ok" files holding the base rows: the audit equals the base file's
    path: str | None = None           # a fixed path for the CLI instead of a written file (/dev/zero)
    app_words: str | None = None      # the dashboard's words, when they differ from the command line's
    app: str = "upload"               # the dashboard: "upload" (read or refused as the CLI does), "choice"
    #                                   (it reads; choosing outcome y and protected race shows the error),
    #                                   "" (not uploaded: a path, or a choice the dashboard cannot make)
    suffix: str = ".csv"


ERROR, OK = "error", "ok"
DATA_KINDS: tuple[Kind, ...] = (
    # --- read correctly: the same audit as the plain file ---
    Kind("plain", base_bytes, OK, commands=("audit", *MODEL_COMMANDS), same_as_base=True),
    Kind("utf8_bom", lambda: b"\xef\xbb\xbf" + base_bytes(), OK, same_as_base=True),
    Kind("crlf", lambda: base_text(newline="\r\n").encode(), OK, same_as_base=True),
    Kind("utf16_bom", lambda: base_text().encode("utf-16"), OK, same_as_base=True),
    Kind("utf16le_no_bom", lambda: base_text().encode("utf-16-le"), OK, same_as_base=True),
    Kind("utf16be_crlf", lambda: base_text(newline="\r\n").encode("utf-16"), OK, same_as_base=True),
    Kind("latin1_semicolons", lambda: base_text(base_frame().replace({"job": {"nurse": "infirmière"}}),
                                                sep=";").encode("latin-1"), OK),
    Kind("tabs", lambda: base_text(sep="\t").encode(), OK, same_as_base=True),
    Kind("gzip", lambda: gzip.compress(base_bytes()), OK, same_as_base=True, suffix=".csv.gz"),
    Kind("quoted_newlines", _quoted_newlines, OK, same_as_base=True),
    Kind("formula_cells", _formula_cells, OK, same_as_base=True),
    Kind("html_column_names", lambda: _renamed(["race", "<script>alert(1)</script>", "<b>edu</b>", "x",
                                                "<img src=x onerror=alert(2)>", "y"]), OK, same_as_base=True),
    Kind("numeric_column_names", lambda: _renamed(["race", "1", "2", "3.5", "4", "y"]), OK, same_as_base=True),
    Kind("empty_column_names", lambda: _renamed(["race", "", "", "x", " ", "y"]), OK, same_as_base=True),
    Kind("very_long_column_name", lambda: _renamed(["race", "s" * 20_000, "edu", "x", "job", "y"]), OK,
         same_as_base=True),
    Kind("mixed_types", _mixed_types, OK, commands=("audit", *MODEL_COMMANDS), same_as_base=True),
    Kind("nan_inf_strings", lambda: _numbers_with(["nan", "inf", "-inf", "NaN", "Infinity", "-Infinity"]), OK,
         commands=("audit", *MODEL_COMMANDS), same_as_base=True),
    Kind("beyond_float64", lambda: _numbers_with(["1e400", "-1e400", "9" * 400]), OK,
         commands=("audit", *MODEL_COMMANDS), same_as_base=True),
    Kind("huge_integers", lambda: _with(edu=[str(10**30 + i) for i in range(ROWS)]), OK,
         commands=("audit", *MODEL_COMMANDS), same_as_base=True),
    Kind("utf32", lambda: base_text().encode("utf-32"), OK, same_as_base=True),
    Kind("old_mac_cr_only", lambda: base_text(newline="\r").encode(), OK, same_as_base=True),
    Kind("quote_after_space", lambda: base_text().replace(",yes", ', "yes"').replace(",no", ', "no"').encode(), OK,
         same_as_base=True),
    Kind("blanks_around_values", lambda: base_text().replace(",A,", ", A ,").replace(",yes", ",  yes\t").encode(),
         OK, same_as_base=True),
    Kind("leading_blank_lines", lambda: b"\n\n" + base_bytes(), OK, same_as_base=True),
    Kind("trailing_separators", lambda: base_text().replace("\n", ",\n").encode(), OK, same_as_base=True),
    Kind("missing_markers", lambda: base_bytes().replace(b"clerk", b"NA").replace(b"nurse", b"?")
         .replace(b"driver", b"#N/A"), OK, same_as_base=True),
    Kind("decimal_commas_semicolons", lambda: base_text(sep=";").replace(".", ",").encode(), OK, same_as_base=True),
    Kind("emoji_and_control_characters", lambda: base_text().replace("clerk", "\U0001F469\u200d\U0001F4BC")
         .replace("nurse", "nu\x07rse").encode(), OK, same_as_base=True),
    Kind("many_outcome_values", _many_outcome_values, OK),
    Kind("columns_5000", lambda: _wide(5_000), OK),
    Kind("field_50mb", _one_big_field, OK, same_as_base=True),
    # repeated names are told apart as pandas does (COMPAS's own file repeats decile_score): race, race.1
    Kind("duplicate_column_names", lambda: _renamed(["race", "sex", "edu", "x", "race", "y"]), OK,
         commands=("audit", *MODEL_COMMANDS), same_as_base=True),
    Kind("names_collide_after_stripping", lambda: _renamed([" race", "edu", " edu ", "x", "race ", "y "]), OK,
         commands=("audit", *MODEL_COMMANDS), same_as_base=True),
    # --- refused in one sentence ---
    Kind("empty", lambda: b"", ERROR, "empty", commands=("audit", *MODEL_COMMANDS)),
    Kind("blank_lines", lambda: b"\n\n   \r\n\t\n", ERROR, "empty"),
    Kind("header_only", lambda: b"race,sex,edu,x,job,y\n", ERROR, "no data rows"),
    Kind("one_column", lambda: b"y\nyes\nno\nyes\n", ERROR, "one column"),
    Kind("only_separators", lambda: b"race,y\n,\n,\n,\n", ERROR, "empty"),
    Kind("one_row", lambda: base_text(base_frame().head(1)).encode(), ERROR, "single value", app="choice"),
    Kind("names_differ_in_case", lambda: _renamed(["race", "Race", "edu", "x", "job", "y"]), ERROR,
         "two columns named"),
    Kind("ragged_rows", _ragged, ERROR, "line 51 has 8 fields"),
    Kind("unclosed_quote", lambda: base_bytes().replace(b"clerk", b'"clerk', 1), ERROR, "never closed"),
    Kind("header_past_64kb", lambda: b"race,y," + b"x," * 3_000_000, ERROR, "more than 32,766 columns"),
    Kind("outcome_all_missing", lambda: _with(y=""), ERROR, "no values at all", app="choice"),
    Kind("positive_value_absent", lambda: base_bytes(), ERROR, "never occurs", app="",
         args=("--outcome", "y", "--positive", "maybe", "--protected", "race == A")),
    Kind("protected_one_value", lambda: _with(race="A"), ERROR, "only one value", app="choice"),
    Kind("binary", _binary, ERROR, "not text", commands=("audit", *MODEL_COMMANDS)),
    Kind("nul_bytes_in_text", lambda: base_bytes().replace(b"A,", b"A\x00\x00\x00\x00,"), ERROR, "not text"),
    Kind("zip", _zip, ERROR, "zip"),
    Kind("xlsx", _xlsx, ERROR, "excel", suffix=".xlsx"),
    Kind("xls", lambda: b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504), ERROR, "excel", suffix=".xls"),
    Kind("pdf", lambda: b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n", ERROR, "pdf"),
    Kind("json", lambda: json.dumps([{"race": "A", "y": "yes"}]).encode(), ERROR, "json"),
    Kind("html_page", lambda: b"<!DOCTYPE html><html><body><table><tr><td>a</td></tr></table></body></html>",
         ERROR, "web page"),
    Kind("damaged_gzip", _damaged_gzip, ERROR, "damaged", commands=("audit", *MODEL_COMMANDS), suffix=".csv.gz"),
    Kind("truncated_gzip", lambda: gzip.compress(base_bytes())[:300], ERROR, "damaged", suffix=".csv.gz"),
    Kind("gzip_twice", lambda: gzip.compress(gzip.compress(base_bytes())), ERROR, "twice", suffix=".csv.gz"),
    Kind("too_many_columns", lambda: _wide(20_001), ERROR, "columns"),
    Kind("dev_zero", lambda: b"", ERROR, "not a regular file", app="", path="/dev/zero"),
    Kind("missing_file", lambda: b"", ERROR, "no file", app="", path="/nonexistent/luskin/data.csv"),
    Kind("a_folder", lambda: b"", ERROR, "folder", app="", path="{folder}"),
)


@dataclass(frozen=True)
class ConfigKind:
    """A saved configuration: its bytes, and words of the sentence that refuses it."""

    name: str
    build: Callable[[dict], bytes]    # from a good saved configuration (the app's) to the file's bytes
    words: str


def _edited(change: Callable[[dict], None]) -> Callable[[dict], bytes]:
    def build(good: dict) -> bytes:
        document = json.loads(json.dumps(good))
        change(document)
        return json.dumps(document).encode()
    return build


def _set(path: tuple[str, ...], value: object) -> Callable[[dict], None]:
    def change(document: dict) -> None:
        target = document
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return change


# Every entry of a saved configuration with a value of the wrong JSON type.
WRONG_TYPES: dict[tuple[str, ...], object] = {
    ("kind",): 5, ("version",): "one", ("luskin_version",): 1.5, ("saved_at",): [], ("data",): "sample:adult",
    ("spec",): [1, 2], ("features",): 5, ("options",): "all",
    ("data", "source"): 7, ("data", "kind"): ["sample"], ("data", "name"): {}, ("data", "fingerprint"): 3,
    ("data", "rows"): "many", ("data", "columns"): 2.5,
    ("spec", "outcome"): 1, ("spec", "positive"): [">50K"], ("spec", "protected"): 3, ("spec", "filters"): 4,
    ("spec", "population"): [1], ("spec", "tolerance"): "5%", ("spec", "group_label"): 1,
    ("spec", "other_label"): [], ("spec", "filter_label"): {}, ("spec", "not_filter_label"): True,
    ("spec", "group_by"): 3, ("spec", "reference"): {}, ("spec", "strata"): [1], ("spec", "bins"): "age",
    ("spec", "n_bins"): "four", ("spec", "min_group_size"): 2.5, ("spec", "min_group_share"): "x",
    ("spec", "metric"): 1, ("spec", "ratio_threshold"): "0.8", ("spec", "correction"): [],
    ("spec", "outcome_type"): 0, ("spec", "score_cutoff"): "high", ("spec", "prediction"): 1,
    ("options", "retrain"): 3, ("options", "retrain", "seed"): "x", ("options", "thresholds", "lam"): "big",
    ("options", "equalize", "alphas"): "all",
}

CONFIG_KINDS: tuple[ConfigKind, ...] = (
    ConfigKind("config_not_utf8", lambda good: json.dumps({**good, "spec": {**good["spec"], "group_label": "Catégorie"}},
                                                         ensure_ascii=False).encode("cp1252"), "not a text file in utf-8"),
    ConfigKind("config_utf16", lambda good: json.dumps(good).encode("utf-16"), "utf-8"),
    ConfigKind("config_nested_100000", lambda good: _nested_json(), "nests"),
    ConfigKind("config_nested_in_an_entry", lambda good: json.dumps({**good, "x": 1})[:-1].encode()
               + b', "deep": ' + b"{\"a\":" * 100_000 + b"1" + b"}" * 100_000 + b"}", "nests"),
    ConfigKind("config_features_5", _edited(_set(("features",), 5)), "'features' is the number 5"),
    ConfigKind("config_empty", lambda good: b"", "empty"),
    ConfigKind("config_not_json", lambda good: b"outcome = income\n", "not valid json"),
    ConfigKind("config_a_list", lambda good: b"[1, 2, 3]", "not a luskin configuration"),
    ConfigKind("config_nan", lambda good: json.dumps(good).replace('"tolerance": 0.05', '"tolerance": NaN').encode(),
               "nan"),
    ConfigKind("config_repeated_key", lambda good: json.dumps(good)[:-1].encode() + b', "features": null}',
               "twice"),
    ConfigKind("config_binary", lambda good: _binary(), "utf-8"),
    ConfigKind("config_unknown_column", _edited(_set(("spec", "outcome"), "no such column")), "no such column"),
    *(ConfigKind("config_wrong_type_" + "_".join(path), _edited(_set(path, value)), f"'{path[-1]}'")
      for path, value in WRONG_TYPES.items()),
)
