"""BISG/BIFSG probabilities against surgeo 1.1.2 (an independent implementation reading its own CSV files)."""

from __future__ import annotations

import hashlib
import pathlib
import re

import numpy as np
import pandas as pd
import pytest
import surgeo  # a requirement (requirements.txt): missing, this file fails rather than skips

from luskin_core.analyses import proxy
from luskin_core.errors import LuskinError

SURGEO_ORDER = ["hispanic", "white", "black", "api", "native", "multiple"]
DATA = pathlib.Path(surgeo.__file__).parent / "data"


def _ours(result: proxy.ProxyResult) -> np.ndarray:
    return result.probabilities[list(proxy.PROB_COLUMNS)].to_numpy()


def _theirs(frame: pd.DataFrame) -> np.ndarray:
    return frame[SURGEO_ORDER].to_numpy(dtype=float)


def _summing_to_one(values: np.ndarray) -> np.ndarray:
    """surgeo's surname and geocode models return the table's row, which the Census rounded to four
    decimals (sums like 0.9999); a fallback's probabilities are that row scaled to sum to 1."""
    return values / values.sum(axis=1, keepdims=True)


@pytest.fixture(scope="module")
def varied() -> pd.DataFrame:
    """300 surnames and ZCTAs drawn from the tables, with messy spellings and names/places not in them."""
    rng = np.random.default_rng(7)
    names = pd.read_csv(DATA / "prob_race_given_surname_2010.csv", usecols=["name"], keep_default_na=False)["name"]
    zctas = pd.read_csv(DATA / "prob_zcta_given_race_2010.csv", usecols=["zcta5"], dtype=str)["zcta5"]
    firsts = pd.read_csv(DATA / "prob_first_name_given_race_harvard.csv", usecols=["name"],
                         keep_default_na=False)["name"]
    n = 300
    sur = names.sample(n, random_state=1).str.title().tolist()
    zip_ = zctas.sample(n, random_state=2).tolist()
    first = firsts.sample(n, random_state=3).str.lower().tolist()
    messy = [("o'brien", "02139", "Mary"), ("Smith Jr.", "60601", "JOHN"), ("  garcia ", "00601", "maria"),
             ("NAN", "10001", "Anh"), ("Washington III", "20001", " james "), ("Nguyen", 95112, "Xqzzy"),
             ("Zzqxyv", "94110", "Jose"), ("Lee", "99999", "Kim"), ("Qqqzzx", "00000", "Wanda"),
             ("Yang", "601", "Wei"), ("Kim", "98105-1234", "Ji")]
    for i, (s, z, f) in enumerate(messy):
        sur[i], zip_[i], first[i] = s, z, f
    # a few unknown places and names drawn at random positions
    for i in rng.choice(np.arange(20, n), 15, replace=False):
        zip_[i] = "99998"
    for i in rng.choice(np.arange(20, n), 15, replace=False):
        sur[i] = sur[i] + "qx"
    return pd.DataFrame({"surname": sur, "zip": zip_, "first": first})


def _surgeo_norm(names: pd.Series) -> pd.Series:
    return surgeo.models.base_model.BaseModel()._normalize_names(names)


def test_bisg_zcta_equals_surgeo(varied):
    ours = proxy.compute_probabilities(varied["surname"], varied["zip"].astype(str), level="zcta")
    theirs = surgeo.SurgeoModel().get_probabilities(varied["surname"], varied["zip"].astype(str))
    same_key = (_surgeo_norm(varied["surname"]) == varied["surname"].map(proxy.normalize_name)).to_numpy()
    found = ~np.isnan(_theirs(theirs)).any(axis=1) & same_key
    assert found.sum() > 250
    assert (ours.method.to_numpy()[found] == proxy.BISG).all()
    np.testing.assert_allclose(_ours(ours)[found], _theirs(theirs)[found], rtol=0, atol=1e-9)


def test_fallbacks_equal_surgeos_surname_and_geocode_models(varied):
    ours = proxy.compute_probabilities(varied["surname"], varied["zip"].astype(str), level="zcta")
    method = ours.method.to_numpy()
    place_only = method == proxy.PLACE_ONLY
    name_only = method == proxy.NAME_ONLY
    assert place_only.sum() >= 15 and name_only.sum() >= 15
    geo = surgeo.GeocodeModel().get_probabilities(varied["zip"].astype(str))
    np.testing.assert_allclose(_ours(ours)[place_only], _summing_to_one(_theirs(geo)[place_only]), rtol=0, atol=1e-9)
    sur = surgeo.SurnameModel().get_probabilities(varied["surname"])
    np.testing.assert_allclose(_ours(ours)[name_only], _summing_to_one(_theirs(sur)[name_only]), rtol=0, atol=1e-9)
    neither = method == proxy.NONE
    assert neither.sum() >= 1 and np.isnan(_ours(ours)[neither]).all()
    estimated = _ours(ours)[~neither]
    np.testing.assert_allclose(estimated.sum(axis=1), 1.0, atol=1e-12)
    assert ours.fallback_counts()[proxy.PLACE_ONLY] == place_only.sum()


def test_bifsg_equals_surgeo_and_falls_back_to_bisg(varied):
    ours = proxy.compute_probabilities(varied["surname"], varied["zip"].astype(str), level="zcta",
                                       first_name=varied["first"])
    theirs = surgeo.BIFSGModel().get_probabilities(varied["first"], varied["surname"], varied["zip"].astype(str))
    same_key = ((_surgeo_norm(varied["surname"]) == varied["surname"].map(proxy.normalize_name))
                & (_surgeo_norm(varied["first"]) == varied["first"].map(proxy.normalize_name))).to_numpy()
    found = ~np.isnan(_theirs(theirs)).any(axis=1) & same_key
    assert found.sum() > 200
    assert (ours.method.to_numpy()[found] == proxy.BIFSG).all()
    np.testing.assert_allclose(_ours(ours)[found], _theirs(theirs)[found], rtol=0, atol=1e-9)
    # a first name not in the list leaves BISG
    bisg = ours.method.to_numpy() == proxy.BISG
    assert bisg.sum() >= 1
    plain = surgeo.SurgeoModel().get_probabilities(varied["surname"], varied["zip"].astype(str))
    np.testing.assert_allclose(_ours(ours)[bisg], _theirs(plain)[bisg], rtol=0, atol=1e-9)


def test_bisg_tract_equals_surgeo_arithmetic_with_tract_given_race():
    """surgeo 1.1.2's tract BISG multiplies P(race | tract) (its prob_race_given_tract file), which counts the
    national race shares twice; Bayes' rule needs P(tract | race). The reference is surgeo's own merge and
    arithmetic with its P(tract | race) file."""
    tracts = pd.read_csv(DATA / "prob_tract_given_race_2010.csv", dtype={"state": str, "county": str, "tract": str})
    names = pd.read_csv(DATA / "prob_race_given_surname_2010.csv", usecols=["name"], keep_default_na=False)["name"]
    pick = tracts.sample(200, random_state=5).reset_index(drop=True)
    sur = names.sample(200, random_state=6).reset_index(drop=True)
    model = surgeo.SurgeoModel(geo_level="TRACT")
    model._PROB_GEO_GIVEN_RACE = tracts.set_index(["state", "county", "tract"])
    theirs = model.get_probabilities(sur, pick[["state", "county", "tract"]])
    fips = pick["state"] + pick["county"] + pick["tract"]
    ours = proxy.compute_probabilities(sur, fips.astype(int), level="tract")  # an integer column lost its zero
    same_key = (_surgeo_norm(sur) == sur.map(proxy.normalize_name)).to_numpy()
    found = ~np.isnan(_theirs(theirs)).any(axis=1) & same_key
    assert found.sum() > 150
    np.testing.assert_allclose(_ours(ours)[found], _theirs(theirs)[found], rtol=0, atol=1e-9)
    # the place-only fallback equals surgeo's tract geocode model
    unknown = pd.Series(["Zzqxyvq"] * 200)
    ours_geo = proxy.compute_probabilities(unknown, fips, level="tract")
    geo = surgeo.GeocodeModel(geo_level="TRACT").get_probabilities_tract(pick[["state", "county", "tract"]])
    np.testing.assert_allclose(_ours(ours_geo), _summing_to_one(_theirs(geo)), rtol=0, atol=1e-9)


@pytest.mark.parametrize(("raw", "key"), [
    ("Smith Jr.", "SMITH"), ("smith, sr", "SMITH"), ("Washington III", "WASHINGTON"), ("Ford II", "FORD"),
    ("Henry IV", "HENRY"), ("O'Brien", "OBRIEN"), ("De La Cruz", "DELACRUZ"), ("  lee  ", "LEE"),
    ("Nasr", "NASR"), ("Aviv", "AVIV"), ("II", "II"), (None, ""), ("NAN", "NAN"), ("Mc Donald 3", "MCDONALD")])
def test_name_normalisation(raw, key):
    """Suffixes go only as their own word: surgeo strips the letters from NASR (-> NA) and AVIV (-> AV)."""
    assert proxy.normalize_name(raw) == key


def test_compound_name_uses_its_first_part_found():
    result = proxy.compute_probabilities(pd.Series(["Garcia-Zzqxv", "Zzqxv Nguyen", "Garcia"]),
                                         pd.Series(["", "", ""]))
    p = _ours(result)
    np.testing.assert_allclose(p[0], p[2], rtol=0, atol=1e-12)
    assert p[1][proxy.RACES.index("api")] > 0.9
    assert (result.method == proxy.NAME_ONLY).all()


def test_zip_forms():
    geo = proxy.normalize_geo(pd.Series(["601", "98105-1234", " 02139 ", None, "abc"]), "zcta")
    assert geo.tolist() == ["00601", "98105", "02139", "", ""]
    assert proxy.normalize_geo(pd.Series([601.0, np.nan]), "zcta").tolist() == ["00601", ""]


def test_shipped_tables_match_their_readme_checksums():
    readme = (proxy.DATA_DIR / "README.md").read_text()
    for path in proxy.DATA_DIR.glob("*.parquet"):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert re.search(rf"{path.name}.*{digest}", readme), path.name
        assert path.stat().st_size < 8_000_000


def test_mistakes_are_sentences():
    with pytest.raises(LuskinError, match="zcta"):
        proxy.compute_probabilities(pd.Series(["a"]), pd.Series(["1"]), level="county")
    with pytest.raises(LuskinError, match="no surname column"):
        proxy.add_probabilities(pd.DataFrame({"a": [1]}), surname="name", geography="a")


def test_columns_are_guessed_only_from_what_the_values_support():
    """A surname column must hold names from the Census list, a place column ZIP codes or tracts found in the
    tables; a file without them gets None (the page says so), never its first column."""
    from luskin_core.analyses.proxy import guess_columns

    credit = pd.DataFrame({"decile1b": [1, 2, 3, 4, 5] * 20, "sex": ["M", "F", "M", "F", "X"] * 20,
                           "limit_bal": [20000, 50000, 120000, 30303, 10001] * 20, "default": [0, 1] * 50})
    assert guess_columns(credit) == {"surname": None, "first_name": None, "place": None, "level": None}
    people = pd.DataFrame({"id": range(100), "who": ["Garcia", "Smith", "Nguyen", "Jones", "Begay"] * 20,
                           "first": ["Ana", "Bo", "Cy", "Di", "Ed"] * 20,
                           "home": ["10001", "60601-1234", "94110", "30303", "601"] * 20, "y": [0, 1] * 50})
    assert guess_columns(people) == {"surname": "who", "first_name": "first", "place": "home", "level": "zcta"}
    tracts = pd.DataFrame({"tract_fips": [36061000100, 6075010100, 17031010100, 36061000201] * 5})
    assert guess_columns(tracts)["level"] == "tract"
