"""Loading data: a user's CSV, the bundled samples, and NYPD Stop-Question-Frisk files.

Every way in ends in a pandas DataFrame with stripped text, real missing values and numeric
columns as numbers, or in a :class:`LuskinError` that says in plain words what is wrong.
Each sample comes with the paper's preset (outcome, protected group, filter, model features).
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import os
import shutil
import tempfile
import urllib.request
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Iterable

import numpy as np
import pandas as pd

from .errors import LuskinError
from .spec import AuditSpec

SAMPLE_DIR = Path(__file__).resolve().parent.parent / "sample_data"
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
MAX_BYTES = 1_000_000_000  # beyond 1 GB a browser upload and an in-memory table are impractical
MISSING_MARKERS = ["", "?", "NA", "N/A", "NaN", "nan", "null", "NULL", "None", "#N/A"]
_DELIMITERS = ",;\t|"

ADULT_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
    "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week",
    "native-country", "income",
]

# The 112 columns of NYPD's SQF files (2014 spelling; the 2012 spec lists the same names).
SQF_COLUMNS = (
    "year pct ser_num datestop timestop recstat inout trhsloc perobs crimsusp perstop typeofid "
    "explnstp othpers arstmade arstoffn sumissue sumoffen compyear comppct offunif officrid frisked "
    "searched contrabn adtlrept pistol riflshot asltweap knifcuti machgun othrweap pf_hands pf_wall "
    "pf_grnd pf_drwep pf_ptwep pf_baton pf_hcuff pf_pepsp pf_other radio ac_rept ac_inves rf_vcrim "
    "rf_othsw ac_proxm rf_attir cs_objcs cs_descr cs_casng cs_lkout rf_vcact cs_cloth cs_drgtr "
    "ac_evasv ac_assoc cs_furtv rf_rfcmp ac_cgdir rf_verbl cs_vcrim cs_bulge cs_other ac_incid "
    "ac_time rf_knowl ac_stsnd ac_other sb_hdobj sb_outln sb_admis sb_other repcmd revcmd rf_furt "
    "rf_bulg offverb offshld forceuse sex race dob age ht_feet ht_inch weight haircolr eyecolor "
    "build othfeatr addrtyp rescode premtype premname addrnum stname stinter crossst aptnum city "
    "state zip addrpct sector beat post xcoord ycoord dettypCM lineCM detailCM"
).split()
SQF_URL = ("https://www.nyc.gov/assets/nypd/downloads/zip/analysis_and_planning/"
           "stop-question-frisk/sqf-{year}-csv.zip")
SQF_YEARS = range(2003, 2017)  # NYPD publishes these years as zipped CSV with the 112 columns


# --------------------------------------------------------------------------------------
# A user's CSV
# --------------------------------------------------------------------------------------
def _read_bytes(source: str | os.PathLike[str] | bytes | IO[bytes], max_bytes: int) -> bytes:
    if isinstance(source, (bytes, bytearray)):
        raw = bytes(source)
    elif hasattr(source, "read"):
        raw = source.read(max_bytes + 1)
    else:
        path = Path(source)
        if not path.exists():
            raise LuskinError(f"There is no file at '{path}'.")
        if path.is_dir():
            raise LuskinError(f"'{path}' is a folder, not a data file.")
        if path.stat().st_size > max_bytes:
            raise LuskinError(_too_big(path.stat().st_size, max_bytes))
        raw = path.read_bytes()
    if len(raw) > max_bytes:
        raise LuskinError(_too_big(len(raw), max_bytes))
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError):
            raise LuskinError("The file looks compressed (gzip) but is damaged and cannot be opened.") from None
        if len(raw) > max_bytes:
            raise LuskinError(_too_big(len(raw), max_bytes))
    return raw


def _too_big(size: int, limit: int) -> str:
    return (f"The file is {size / 1e6:,.0f} MB, more than the {limit / 1e6:,.0f} MB this tool reads. "
            "Keep only the columns and rows you need (or a random sample) and try again.")


def _decode(raw: bytes) -> str:
    if raw[:4] == b"PK\x03\x04":
        raise LuskinError("This is a zip or Excel file, not a CSV. Open it and save it as CSV (comma separated) first.")
    if b"\x00" in raw[:4096]:
        raise LuskinError("This file is not text (it looks like a binary file). Save your table as CSV first.")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _sniff_delimiter(text: str) -> str:
    sample = "\n".join(text.splitlines()[:50])
    try:
        return csv.Sniffer().sniff(sample, delimiters=_DELIMITERS).delimiter
    except csv.Error:
        header = sample.splitlines()[0] if sample else ""
        counts = {d: header.count(d) for d in _DELIMITERS}
        best = max(counts, key=counts.get)
        return best if counts[best] else ","


def tidy(frame: pd.DataFrame) -> pd.DataFrame:
    """Strip blanks around text, turn blank text into missing, and make numeric text numeric."""
    out = frame.copy()
    out.columns = [str(c).strip() for c in out.columns]
    for name in out.columns:
        series = out[name]
        if pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series):
            continue
        text = series.astype("string").str.strip()
        text = text.mask(text.isin(MISSING_MARKERS))
        out[name] = _numbers_or_text(text)
    return out


def _numbers_or_text(text: pd.Series) -> pd.Series:
    """Numbers when every present value is one; the text otherwise (checked on a sample first: fast)."""
    present = text.dropna()
    if present.empty:
        return text
    try:
        pd.to_numeric(present.head(200))
    except (ValueError, TypeError):
        return text
    numbers = pd.to_numeric(text, errors="coerce")
    return numbers if numbers.notna().sum() == len(present) else text


def load_csv(source: str | os.PathLike[str] | bytes | IO[bytes], *, max_bytes: int = MAX_BYTES) -> pd.DataFrame:
    """Read a CSV with a header row: comma, semicolon, tab or pipe; UTF-8 or Latin-1; gzip allowed."""
    text = _decode(_read_bytes(source, max_bytes))
    if not text.strip():
        raise LuskinError("The file is empty: there is nothing to read.")
    delimiter = _sniff_delimiter(text)
    try:
        frame = pd.read_csv(io.StringIO(text), sep=delimiter, skipinitialspace=True, dtype=str,
                            keep_default_na=False, na_values=[], engine="c")
    except pd.errors.EmptyDataError:
        raise LuskinError("The file is empty: there is nothing to read.") from None
    except pd.errors.ParserError as err:
        detail = str(err).split("\n")[0]
        raise LuskinError(
            "The file could not be read as a table: its rows do not all have the same number of "
            f"fields ({detail}). Check that it is a CSV with one header row."
        ) from None
    if frame.shape[1] < 2:
        raise LuskinError(
            "Only one column was found. A usable file needs a header row and at least two columns "
            "(an outcome and a protected attribute), separated by commas, semicolons or tabs."
        )
    if len(frame) == 0:
        raise LuskinError("The file has a header row but no data rows.")
    return tidy(frame)


# --------------------------------------------------------------------------------------
# Samples
# --------------------------------------------------------------------------------------
def _sample_path(name: str) -> Path:
    path = SAMPLE_DIR / name
    if not path.exists():
        raise LuskinError(f"The bundled sample file '{name}' is missing from {SAMPLE_DIR}. Reinstall Luskin.")
    return path


def load_adult() -> pd.DataFrame:
    """UCI Adult, train + test (48,842 rows); '?' is missing and the test labels' dot is stripped."""
    parts = []
    for name, skip in (("adult.data.gz", 0), ("adult.test.gz", 1)):
        part = pd.read_csv(_sample_path(name), header=None, names=ADULT_COLUMNS, skiprows=skip,
                           skipinitialspace=True, na_values=["?"], keep_default_na=False)
        parts.append(part.dropna(how="all"))
    frame = pd.concat(parts, ignore_index=True)
    frame["income"] = frame["income"].str.rstrip(".")
    return tidy(frame)


def load_compas() -> pd.DataFrame:
    """ProPublica's two-year COMPAS file (7,214 rows, 53 columns as published)."""
    return tidy(pd.read_csv(_sample_path("compas-scores-two-years.csv.gz"), dtype=str, keep_default_na=False))


def _canonical_sqf_names(columns: Iterable[str]) -> list[str]:
    canon = {c.lower(): c for c in SQF_COLUMNS}
    return [canon.get(str(c).strip().lower(), str(c).strip()) for c in columns]


def load_sqf(source: str | os.PathLike[str] | bytes | IO[bytes], *, max_bytes: int = MAX_BYTES) -> pd.DataFrame:
    """A raw NYPD Stop-Question-Frisk CSV of any year (column names matched without regard to case).

    Blank fields (a single space in NYPD's files) become missing; ages outside 10..99 are
    recorded errors and become missing too.
    """
    text = _decode(_read_bytes(source, max_bytes))
    try:
        frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError):
        raise LuskinError("This file could not be read as an NYPD Stop-Question-Frisk CSV.") from None
    frame.columns = _canonical_sqf_names(frame.columns)
    missing = [c for c in ("race", "frisked", "detailCM") if c not in frame.columns]
    if missing:
        raise LuskinError(
            "This does not look like an NYPD Stop-Question-Frisk file: it lacks the column(s) "
            f"{', '.join(missing)}."
        )
    frame = _sqf_flags(tidy(frame))
    if "age" in frame.columns:
        age = pd.to_numeric(frame["age"], errors="coerce")
        frame["age"] = age.where((age >= 10) & (age <= 99))
    return frame


def _sqf_flags(frame: pd.DataFrame) -> pd.DataFrame:
    """Yes/no fields as Y / N throughout.

    NYPD's 2014 file codes its yes/no fields two ways: most stops as Y / N, but 10,860 stops as
    1 / blank (blank meaning no). Left alone, '1' and 'Y' would be two different answers to a
    model and blank would look unrecorded. A field counts as yes/no when its values are among
    Y, N, 1, 0 and include Y or N; in such a field 1 is yes and 0 or blank is no.
    """
    for name in frame.columns:
        series = frame[name]
        if pd.api.types.is_numeric_dtype(series):
            continue
        values = set(series.dropna().unique())
        if values and values <= {"Y", "N", "1", "0"} and values & {"Y", "N"}:
            frame[name] = series.isin(["Y", "1"]).map({True: "Y", False: "N"}).astype("string")
    return frame


def download_sqf(year: int, dest_dir: str | os.PathLike[str], *, url_template: str = SQF_URL,
                 timeout: float = 60.0) -> Path:
    """Download NYPD's zipped CSV for ``year`` from NYPD's site and return the extracted CSV's path."""
    if int(year) not in SQF_YEARS:
        raise LuskinError(
            f"NYPD publishes Stop-Question-Frisk as CSV with this layout for {SQF_YEARS.start}-"
            f"{SQF_YEARS.stop - 1}; {year} is not one of those years."
        )
    url = url_template.format(year=int(year))
    dest = Path(dest_dir)
    dest.mkdir(parents=True, exist_ok=True)
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response, tempfile.TemporaryFile() as tmp:
            shutil.copyfileobj(response, tmp)
            tmp.seek(0)
            with zipfile.ZipFile(tmp) as archive:
                members = [m for m in archive.namelist() if m.lower().endswith(".csv")]
                if not members:
                    raise LuskinError(f"The file downloaded for {year} holds no CSV.")
                target = dest / f"sqf_{int(year)}.csv"
                with archive.open(members[0]) as src, open(target, "wb") as out:
                    shutil.copyfileobj(src, out)
    except zipfile.BadZipFile:
        raise LuskinError(f"The file downloaded for {year} is not a valid zip archive.") from None
    except OSError as err:  # URLError is an OSError
        raise LuskinError(f"Could not download the {year} file from NYPD ({url}): {err}.") from None
    return target


def sqf_shared_path() -> Path | None:
    """The 2014 SQF copy beside the project (../shared/data), if there is one."""
    path = Path(os.environ.get("LUSKIN_SQF_PATH", SHARED_DATA / "sqf_2014.csv.gz"))
    return path if path.exists() else None


def load_sample(name: str) -> pd.DataFrame:
    """A bundled sample by name: 'adult', 'compas', or 'sqf' (read from ../shared/data)."""
    key = str(name).strip().lower()
    if key == "adult":
        return load_adult()
    if key == "compas":
        return load_compas()
    if key == "sqf":
        path = sqf_shared_path()
        if path is None:
            raise LuskinError(
                "The Stop-Question-Frisk sample is not shipped with Luskin. Load an NYPD file you have "
                "(any year) or download one from NYPD's site; set LUSKIN_SQF_PATH to use a local copy."
            )
        return load_sqf(path)
    raise LuskinError(f"There is no sample called '{name}'. Samples: {', '.join(PRESETS)}.")


def load_data(ref: str | os.PathLike[str]) -> pd.DataFrame:
    """``sample:NAME`` for a sample; otherwise a CSV path (NYPD files are recognised)."""
    text = str(ref)
    if text.startswith("sample:"):
        return load_sample(text.split(":", 1)[1])
    frame = load_csv(ref)
    lowered = {str(c).lower() for c in frame.columns}
    if {"frisked", "detailcm", "crimsusp"} <= lowered:
        return load_sqf(ref)
    return frame


# --------------------------------------------------------------------------------------
# The paper's presets
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Preset:
    """A sample's paper setup: the audit specification and the columns the models use."""

    name: str
    title: str
    spec: AuditSpec
    features: tuple[str, ...]
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


SQF_FEATURES = (
    "pct", "inout", "trhsloc", "perobs", "typeofid", "othpers", "offunif",
    "cs_objcs", "cs_descr", "cs_casng", "cs_lkout", "cs_cloth", "cs_drgtr", "cs_furtv", "cs_vcrim",
    "cs_bulge", "cs_other", "ac_rept", "ac_inves", "ac_proxm", "ac_evasv", "ac_assoc",
    "ac_cgdir", "ac_incid", "ac_time", "ac_stsnd", "ac_other", "sex", "race", "age", "build",
    "detailCM", "city",
)

PRESETS: dict[str, Preset] = {
    "adult": Preset(
        name="adult",
        title="UCI Adult (census income, 48,842 people)",
        spec=AuditSpec(
            outcome="income", positive=">50K", protected="race == White",
            filters=("education-num > 10",), group_label="White", other_label="Non-White",
            filter_label="more than 10 years of education (E)",
            not_filter_label="10 years of education or fewer (UE)",
        ),
        features=("age", "workclass", "education-num", "marital-status", "occupation", "relationship",
                  "race", "sex", "capital-gain", "capital-loss", "hours-per-week"),
        note="Paper section 3.4: native-country, education and fnlwgt are dropped from the features.",
    ),
    "compas": Preset(
        name="compas",
        title="ProPublica COMPAS (Broward County, two-year recidivism)",
        spec=AuditSpec(
            outcome="two_year_recid", positive=1, protected="race == African-American",
            population=("race in [African-American, Caucasian]",),
            group_label="African-American", other_label="Caucasian",
        ),
        features=("sex", "age", "juv_fel_count", "juv_misd_count", "priors_count", "c_charge_degree",
                  "c_charge_desc"),
        note="Paper section 4.3: 6,150 African-American and Caucasian rows; no filter.",
    ),
    "sqf": Preset(
        name="sqf",
        title="NYPD Stop, Question and Frisk 2014 (45,787 stops)",
        spec=AuditSpec(
            outcome="frisked", positive="Y", protected="race == W",
            filters=("detailCM == 9",), group_label="White", other_label="Non-White",
            filter_label="suspected of assault (A)", not_filter_label="not suspected of assault (NA)",
        ),
        features=SQF_FEATURES,
        note=("Filter rule: NYPD's coded crime field detailCM == 9 (ASSAULT in NYPD's value labels), "
              "not the officer-typed free text crimsusp (1,284 spellings in 2014). Features: the "
              "circumstances of the stop (reasons for the stop cs_*, additional circumstances ac_*, "
              "suspect description, place). Left out: the reasons for frisk rf_* (recorded because "
              "of the frisk: every stop with one was frisked) and everything recorded after it "
              "(search, weapons found, force, arrest)."),
    ),
}


def get_preset(name: str) -> Preset:
    try:
        return PRESETS[str(name).strip().lower()]
    except KeyError:
        raise LuskinError(f"There is no preset called '{name}'. Presets: {', '.join(PRESETS)}.") from None


def column_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per column: type, missing count, distinct values and a few examples (the data preview)."""
    rows = []
    for name in frame.columns:
        series = frame[name]
        kind = "number" if pd.api.types.is_numeric_dtype(series) else "text"
        rows.append({"Column": name, "Type": kind, "Missing": int(series.isna().sum()),
                     "Distinct values": int(series.nunique(dropna=True)),
                     "Examples": ", ".join(str(v) for v in series.dropna().unique()[:4])})
    return pd.DataFrame(rows)


def frame_fingerprint(frame: pd.DataFrame) -> str:
    """A short stable hash of a frame's content, for cache keys."""
    digest = hashlib.sha1(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    digest.update("\x1f".join(map(str, frame.columns)).encode())
    return f"{len(frame)}x{frame.shape[1]}-{digest.hexdigest()[:16]}"
