"""Loading data: a user's CSV, the bundled samples, and NYPD Stop-Question-Frisk files.

Every way in ends in a pandas DataFrame with stripped text, real missing values and numeric
columns as numbers, or in a :class:`LuskinError` that says in plain words what is wrong.
Each sample comes with the paper's preset (outcome, protected group, filter, model features).
The CSV reading engine itself lives in :mod:`luskin_core.counting.csvread`; its public names stay importable here.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import urllib.request
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib.resources import as_file
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import IO, Any

import pandas as pd

from luskin_core._locations import sample_dir, shared_data_dir
from luskin_core.counting.csvread import (  # noqa: F401  (the CSV engine's public names stay importable here)
    MAX_BYTES,
    MAX_COLUMNS,
    MISSING_MARKERS,
    clean_names,
    load_csv,
    tidy,
)
from luskin_core.errors import LuskinError
from luskin_core.spec.audit_spec import AuditSpec
from luskin_core.spec.conditions import parse_condition as _c
from luskin_core.spec.dataref import DataRef

# The samples: the checkout's sample_data/, or the installed package's copy (see _locations).
SAMPLE_DIR: Traversable = sample_dir()
# The checkout's ../shared/data (None when installed): where the SQF sample is looked for.
SHARED_DATA: Path | None = shared_data_dir()

ADULT_COLUMNS = [
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
    "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week",
    "native-country", "income",
]

# The 112 columns of NYPD's SQF files (2014 spelling; the 2012 spec lists the same names).
SQF_COLUMNS = ["year", "pct", "ser_num", "datestop", "timestop", "recstat", "inout", "trhsloc", "perobs", "crimsusp", "perstop", "typeofid", "explnstp", "othpers", "arstmade", "arstoffn", "sumissue", "sumoffen", "compyear", "comppct", "offunif", "officrid", "frisked", "searched", "contrabn", "adtlrept", "pistol", "riflshot", "asltweap", "knifcuti", "machgun", "othrweap", "pf_hands", "pf_wall", "pf_grnd", "pf_drwep", "pf_ptwep", "pf_baton", "pf_hcuff", "pf_pepsp", "pf_other", "radio", "ac_rept", "ac_inves", "rf_vcrim", "rf_othsw", "ac_proxm", "rf_attir", "cs_objcs", "cs_descr", "cs_casng", "cs_lkout", "rf_vcact", "cs_cloth", "cs_drgtr", "ac_evasv", "ac_assoc", "cs_furtv", "rf_rfcmp", "ac_cgdir", "rf_verbl", "cs_vcrim", "cs_bulge", "cs_other", "ac_incid", "ac_time", "rf_knowl", "ac_stsnd", "ac_other", "sb_hdobj", "sb_outln", "sb_admis", "sb_other", "repcmd", "revcmd", "rf_furt", "rf_bulg", "offverb", "offshld", "forceuse", "sex", "race", "dob", "age", "ht_feet", "ht_inch", "weight", "haircolr", "eyecolor", "build", "othfeatr", "addrtyp", "rescode", "premtype", "premname", "addrnum", "stname", "stinter", "crossst", "aptnum", "city", "state", "zip", "addrpct", "sector", "beat", "post", "xcoord", "ycoord", "dettypCM", "lineCM", "detailCM"]
SQF_URL = ("https://www.nyc.gov/assets/nypd/downloads/zip/analysis_and_planning/"
           "stop-question-frisk/sqf-{year}-csv.zip")
SQF_YEARS = range(2003, 2017)  # NYPD publishes these years as zipped CSV with the 112 columns


# --------------------------------------------------------------------------------------
# Samples
# --------------------------------------------------------------------------------------
def _sample_path(name: str) -> Traversable:
    path = SAMPLE_DIR / name
    if not path.is_file():
        raise LuskinError(f"The bundled sample file '{name}' is missing from {SAMPLE_DIR}. Reinstall Luskin.")
    return path


def load_adult() -> pd.DataFrame:
    """UCI Adult, train + test (48,842 rows); '?' is missing and the test labels' dot is stripped."""
    parts = []
    for name, skip in (("adult.data.gz", 0), ("adult.test.gz", 1)):
        with as_file(_sample_path(name)) as path:
            part = pd.read_csv(path, header=None, names=ADULT_COLUMNS, skiprows=skip,
                               skipinitialspace=True, na_values=["?"], keep_default_na=False)
        parts.append(part.dropna(how="all"))
    frame = pd.concat(parts, ignore_index=True)
    frame["income"] = frame["income"].str.rstrip(".")
    return tidy(frame)


def load_compas() -> pd.DataFrame:
    """ProPublica's two-year COMPAS file (7,214 rows, 53 columns as published)."""
    with as_file(_sample_path("compas-scores-two-years.csv.gz")) as path:
        return tidy(pd.read_csv(path, dtype=str, keep_default_na=False))


def _canonical_sqf_names(columns: Iterable[str]) -> list[str]:
    canon = {c.lower(): c for c in SQF_COLUMNS}
    return [canon.get(str(c).strip().lower(), str(c).strip()) for c in columns]


def load_sqf(source: str | os.PathLike[str] | bytes | IO[bytes], *, max_bytes: int = MAX_BYTES) -> pd.DataFrame:
    """A raw NYPD Stop-Question-Frisk CSV of any year (column names matched without regard to case).

    Blank fields (a single space in NYPD's files) become missing; ages outside 10..99 are
    recorded errors and become missing too.
    """
    return _sqf_frame(load_csv(source, max_bytes=max_bytes))


def _sqf_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A frame read by :func:`load_csv` with NYPD's names, yes/no coding and plausible ages."""
    frame = frame.set_axis(clean_names(_canonical_sqf_names(frame.columns)), axis=1)
    missing = [c for c in ("race", "frisked", "detailCM") if c not in frame.columns]
    if missing:
        raise LuskinError(
            "This does not look like an NYPD Stop-Question-Frisk file: it lacks the "
            f"{'column' if len(missing) == 1 else 'columns'} {', '.join(missing)}."
        )
    frame = _sqf_flags(frame)
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
    """The NYPD SQF file used as the 'sqf' sample, if there is one.

    Looked for only in ``$LUSKIN_SQF_PATH`` or, when running from a checkout, the checkout's
    ``../shared/data/sqf_2014.csv.gz``; an installed package has no shared folder.
    """
    configured = os.environ.get("LUSKIN_SQF_PATH", "").strip()
    if configured:
        path = Path(configured).expanduser()
    elif SHARED_DATA is not None:
        path = SHARED_DATA / "sqf_2014.csv.gz"
    else:
        return None
    return path if path.is_file() else None


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
            configured = os.environ.get("LUSKIN_SQF_PATH", "").strip()
            if configured:
                raise LuskinError(f"LUSKIN_SQF_PATH names '{configured}', which is not a file: point it at an NYPD "
                                  "Stop-Question-Frisk CSV (plain or gzip).")
            raise LuskinError(
                "The Stop-Question-Frisk sample is not shipped with Luskin. Load an NYPD file you have "
                "(any year) or download one from NYPD's site; set LUSKIN_SQF_PATH to use a local copy."
            )
        return load_sqf(path)
    raise LuskinError(f"There is no sample called '{name}'. Samples: {', '.join(PRESETS)}.")


def load_data(ref: str | os.PathLike[str]) -> pd.DataFrame:
    """``sample:NAME`` for a sample; otherwise a CSV path (NYPD files are recognised)."""
    parsed = DataRef.parse(ref)
    if parsed.is_sample:
        return load_sample(parsed.name)
    frame = load_csv(ref)
    lowered = {str(c).lower() for c in frame.columns}
    if {"frisked", "detailcm", "crimsusp"} <= lowered:
        return _sqf_frame(frame)
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
            outcome="income", positive=">50K", protected=_c("race == White"),
            filters=(_c("education-num > 10"),), group_label="White", other_label="Non-White",
            filter_label="more than 10 years of education",
            not_filter_label="10 years of education or fewer",
        ),
        features=("age", "workclass", "education-num", "marital-status", "occupation", "relationship",
                  "race", "sex", "capital-gain", "capital-loss", "hours-per-week"),
        note="Paper section 3.4: native-country, education and fnlwgt are dropped from the features.",
    ),
    "compas": Preset(
        name="compas",
        title="ProPublica COMPAS (Broward County, two-year recidivism)",
        spec=AuditSpec(
            outcome="two_year_recid", positive=1, protected=_c("race == African-American"),
            population=(_c("race in [African-American, Caucasian]"),),
            group_label="African-American", other_label="Caucasian", outcome_is="adverse",
        ),
        features=("sex", "age", "juv_fel_count", "juv_misd_count", "priors_count", "c_charge_degree",
                  "c_charge_desc"),
        note="Paper section 4.3: 6,150 African-American and Caucasian rows; no filter.",
    ),
    "sqf": Preset(
        name="sqf",
        title="NYPD Stop, Question and Frisk 2014 (45,787 stops)",
        spec=AuditSpec(
            outcome="frisked", positive="Y", protected=_c("race == W"),
            filters=(_c("detailCM == 9"),), group_label="White", other_label="Non-White",
            filter_label="suspected of assault (A)", not_filter_label="not suspected of assault (NA)",
            outcome_is="adverse",
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


def _example(value: Any, limit: int = 80) -> str:
    """One example value as the summary shows it: at most ``limit`` characters (a cell may hold megabytes)."""
    text = str(value)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


def column_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Per column: type, missing count, distinct values and a few examples (the data preview)."""
    rows = []
    for name in frame.columns:
        series = frame[name]
        kind = "number" if pd.api.types.is_numeric_dtype(series) else "text"
        rows.append({"Column": name, "Type": kind, "Missing": int(series.isna().sum()),
                     "Distinct values": int(series.nunique(dropna=True)),
                     "Examples": ", ".join(_example(v) for v in series.dropna().unique()[:4])})
    return pd.DataFrame(rows)


def frame_fingerprint(frame: pd.DataFrame) -> str:
    """A short stable hash of a frame's content, for cache keys."""
    digest = hashlib.sha1(pd.util.hash_pandas_object(frame, index=False).to_numpy().tobytes())
    digest.update("\x1f".join(map(str, frame.columns)).encode())
    return f"{len(frame)}x{frame.shape[1]}-{digest.hexdigest()[:16]}"
