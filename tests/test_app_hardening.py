"""What the dashboard shows analysts: grids safe to export, sources without connection details."""

from __future__ import annotations

import numpy as np
import pandas as pd
from test_app import goto, open_app, upload

HOSTILE = ["=1+1", "=HYPERLINK(\"http://attacker.example\",\"x\")", "+1+1", "-2-2", "@SUM(A1)", "plain"]


def _hostile_csv(n: int = 600) -> bytes:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"=cmd": np.resize(HOSTILE, n), "race": rng.choice(["=A", "B"], n),
                          "x": rng.normal(size=n), "score": np.resize([-3.5, 1.0, -0.25], n),
                          "y": rng.choice(["yes", "no"], n)})
    return frame.to_csv(index=False).encode()


def test_grid_frame_neutralises_formula_text_and_keeps_numbers() -> None:
    from luskin_app.ui import grid_frame

    frame = pd.DataFrame({"=cmd": pd.array(HOSTILE, dtype="string"), "n": [-1.5, 2, 3, -4, 5, 6]},
                         index=pd.Index(["=a", "b", "-c", "d", "e", "f"]))
    shown = grid_frame(frame)
    assert list(shown.columns) == ["'=cmd", "n"]
    assert list(shown["'=cmd"]) == ["'" + v if v[0] in "=+-@" else v for v in HOSTILE]
    assert shown["n"].tolist() == frame["n"].tolist()
    assert list(shown.index) == ["'=a", "b", "'-c", "d", "e", "f"]
    assert frame.columns[0] == "=cmd"           # the caller's frame is unchanged


def test_the_data_grid_shows_and_exports_formula_cells_neutralised() -> None:
    at = upload(open_app(), _hostile_csv(), "hostile.csv")
    preview = at.dataframe[0].value       # the preview, then the column summary
    assert "'=cmd" in preview.columns and "=cmd" not in preview.columns
    cells = set(preview["'=cmd"])
    assert "'=1+1" in cells and "'=HYPERLINK(\"http://attacker.example\",\"x\")" in cells and "plain" in cells
    assert not any(str(v).startswith(("=", "+", "-", "@")) for column in preview.columns
                   if not pd.api.types.is_numeric_dtype(preview[column]) for v in preview[column].dropna())
    assert sorted(set(preview["score"])) == [-3.5, -0.25, 1.0]      # numbers stay numbers
    summary = at.dataframe[1].value
    assert not any(str(v).startswith("=") for v in summary.to_numpy().ravel())


def test_the_thresholds_grid_neutralises_a_group_named_like_a_formula() -> None:
    at = upload(open_app(), _hostile_csv(), "hostile.csv")
    at.selectbox(key="outcome").set_value("y").run()
    at.multiselect(key="positive").set_value(["yes"]).run()
    at.selectbox(key="protected_column").set_value("race").run()
    at.multiselect(key="protected_values").set_value(["=A"]).run()
    goto(at, "thresholds")
    assert not at.exception
    table = at.dataframe[0].value
    assert "'=A" in set(table["Group"]) and "=A" not in set(table["Group"])


def test_the_audit_grids_neutralise_a_group_named_like_a_formula() -> None:
    """Every grid of the Audit page (the comparisons and all the numbers) shows a formula-like group as text."""
    at = upload(open_app(), _hostile_csv(), "hostile.csv")
    at.selectbox(key="outcome").set_value("y").run()
    at.multiselect(key="positive").set_value(["yes"]).run()
    at.selectbox(key="protected_column").set_value("race").run()
    at.multiselect(key="protected_values").set_value(["=A"]).run()
    goto(at, "audit")
    assert not at.exception
    assert at.dataframe, "the Audit page shows its tables"
    for grid in at.dataframe:
        frame = grid.value
        for column in frame.columns:
            assert not str(column).startswith(("=", "+", "@"))
            if not pd.api.types.is_numeric_dtype(frame[column]):
                assert not any(str(v).startswith(("=", "+", "@")) for v in frame[column].dropna()), column
