"""The proxy audit's test file of loans, shared by the command line's and the run entry's tests: 1,200 loans by
surname and ZIP code (a formula-like and an unknown surname among them), Washington and Jackson approved less."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd


def loans_file(folder: Path, *, region: bool = False) -> tuple[Path, pd.DataFrame]:
    """The loans as a CSV file in ``folder`` and as a frame; ``region`` adds a two-valued stratum (drawn last, so
    every other column is the same with or without it)."""
    rng = np.random.default_rng(0)
    n = 1200
    sur = rng.choice(["Garcia", "Smith", "Washington", "Nguyen", "Jackson", "=HYPERLINK(1)", "Zzqxv"], n)
    zips = rng.choice(["10001", "60601", "94110", "30303", "00601", "99999"], n)
    approved = np.where(np.isin(sur, ["Washington", "Jackson"]), rng.random(n) < 0.3, rng.random(n) < 0.6)
    frame = pd.DataFrame({"surname": sur, "zip": zips, "approved": np.where(approved, "yes", "no")})
    if region:
        frame["region"] = rng.choice(["north", "south"], n)
    path = folder / "loans.csv"
    frame.to_csv(path, index=False)
    return path, frame
