"""The published NYC Local Law 144 audits at their real size (issue 48): every table with unknowns, under 1 s each.

The tables are those rebuilt from the published audits by Gerchick et al., "Auditing the Audits" (FAccT 2025),
``audits/audits_full.csv`` of github.com/aclu-national/auditing-the-audits-facct-2025 (CC BY-NC 4.0, not copied
into this repository: give its path, or the folder of a git copy of that repository). A *table* is one of an
audit's three (sex, race/ethnicity, intersectional) with a positive unknown count and counts for every known
category; audits that list several selection definitions (top / top and middle tiers) under one id are left
out: 49 tables. Each becomes a ``--counts`` file (scoring audits by their scoring rate, the unknown category's
number selected blank as published, so any number of them may be selected), and is timed three ways in the same
run: the bounds alone, the published file read and computed in process, and ``luskin audit --template ll144
--counts FILE`` as a fresh process. The previous implementation (which built every category's rate after 0..U
added people, ``tests/ll144_bounds_previous.py``) is the peer where its arrays fit (categories x unknowns up to
4 million); then two tables of 10,000 categories (issue 47: 267 s before), the previous code on 1,000 of them.

Run:   .venv/bin/python benchmarks/bench_ll144_published.py [PATH to audits_full.csv, or a git folder]
"""

from __future__ import annotations

import hashlib
import io
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from ll144_bounds_previous import ratio_bounds as previous_bounds

from luskin_core.analyses.regulator_ll144 import ll144_from_summary
from luskin_core.stats.ll144_bounds import ratio_bounds

SHA256 = "69fd290fb0be9523254027e3508722e70501f8501a9a3d92f47f7ffd31bbf85e"  # audits_full.csv at cef7c27
DEFAULT = Path("/work/.mirror/aclu-national+auditing-the-audits-facct-2025/repo")
PEER_CELLS = 4_000_000
KIND = {"sex": "sex", "race/ethnicity": "race_ethnicity", "intersectional": "intersectional"}


def read(source: Path) -> bytes:
    if source.is_dir():
        return subprocess.run(["git", "-C", str(source), "show", "HEAD:audits/audits_full.csv"], check=True,
                              capture_output=True).stdout
    return source.read_bytes()


def tables(frame: pd.DataFrame) -> list[dict]:
    """The 49 tables: (audit, characteristic), unknowns > 0, every known category counted, one definition per id."""
    frame = frame.assign(unknown=(frame.race_ethnicity == "Missing/Unknown") | (frame.sex == "Missing/Unknown"))
    several = set(frame.groupby("audit_id").selection_or_scoring_rate.nunique().loc[lambda s: s > 1].index)
    out = []
    for (audit, group), part in frame.groupby(["audit_id", "protected_char_group"]):
        if audit in several:
            continue
        known, unknown = part[~part.unknown], part[part.unknown]
        count = int(unknown.number_of_applications.fillna(0).sum())
        if count <= 0 or known.number_of_applications.isna().any() or known.n_selected_or_n_above_median.isna().any():
            continue
        kind = KIND[group]
        names = (known.sex if kind == "sex" else known.race_ethnicity if kind == "race_ethnicity"
                 else known.sex + " × " + known.race_ethnicity)
        scoring = (part.type_of_tool == "scoring").all()
        rows = [(str(c), int(n), float(s)) for c, n, s in zip(names, known.number_of_applications,
                                                               known.n_selected_or_n_above_median)]
        out.append({"audit": audit, "kind": kind, "scoring": bool(scoring), "rows": rows, "unknown": count})
    return out


def counts_file(parts: list[dict]) -> str:
    """One audit's tables as the CSV ``--counts`` reads (a scoring audit by its rates, as published)."""
    scoring = parts[0]["scoring"]
    lines = ["table,category,applicants," + ("scoring_rate" if scoring else "selected")]
    for part in parts:
        for name, n, s in part["rows"]:
            value = repr(s / n) if scoring else str(round(s))
            lines.append(f"{part['kind']},\"{name}\",{n},{value}")
        lines.append(f"{part['kind']},Unknown,{part['unknown']},")
    return "\n".join(lines) + "\n"


def seconds(call: Callable[..., object], *args: object, repeat: int = 3) -> float:
    """The best of ``repeat`` wall times of call(*args)."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        call(*args)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    raw = read(source)
    digest = hashlib.sha256(raw).hexdigest()
    print(f"data: {source} (sha256 {digest[:16]}..., {'as expected' if digest == SHA256 else 'NOT the expected file'})")
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores (shared machine)")
    found = tables(pd.read_csv(io.BytesIO(raw)))
    print(f"{len(found)} published tables with unknowns\n")
    by_audit: dict[str, list[dict]] = {}
    for part in found:
        by_audit.setdefault(part["audit"], []).append(part)
    total = 0.0
    worst = 0.0
    print(f"{'audit':52s} {'table':15s} {'cats':>4s} {'unknown':>11s} {'bounds':>8s} {'previous':>9s}")
    for part in found:
        read_back = ll144_from_summary(pd.read_csv(io.StringIO(counts_file([part])), dtype=str, keep_default_na=False))
        table = read_back.table(part["kind"])
        counts = [(r.n, r.selected) for r in table.rows]
        kept = [True] * len(counts)
        took = seconds(ratio_bounds, counts, kept, table.unknown_count, None)
        total += took
        worst = max(worst, took)
        peer = "-"
        if len(counts) * (table.unknown_count + 1) <= PEER_CELLS:
            before = seconds(previous_bounds, counts, kept, table.unknown_count, None, repeat=1)
            assert previous_bounds(counts, kept, table.unknown_count, None) == ratio_bounds(counts, kept,
                                                                                         table.unknown_count, None)
            peer = f"{before:8.3f}s"
        print(f"{part['audit'][:52]:52s} {part['kind']:15s} {len(counts):4d} {table.unknown_count:11,d} "
              f"{took:7.3f}s {peer:>9s}")
    print(f"\nbounds of all {len(found)} tables: {total:.2f} s together, slowest {worst:.3f} s "
          f"({'OK' if total < 60 and worst < 1 else 'SLOW'}: each under 1 s, all under 60 s)")
    print("previous implementation: '-' where its arrays (categories x unknowns) pass 4 million; issue 48 measured "
          "past 60 s for Eightfold, 47 s for ADP")

    with tempfile.TemporaryDirectory() as folder:
        whole = []
        for audit, parts in by_audit.items():
            path = Path(folder) / f"{audit}.csv"
            path.write_text(counts_file(parts), encoding="utf-8")
            inner = seconds(lambda p: ll144_from_summary(pd.read_csv(p, dtype=str, keep_default_na=False)), path, repeat=1)
            start = time.perf_counter()
            done = subprocess.run([str(Path(sys.executable).parent / "luskin"), "audit", "--template", "ll144",
                                   "--counts", str(path), "--json"], capture_output=True, check=False)
            outer = time.perf_counter() - start
            if done.returncode:
                raise SystemExit(f"{audit}: {done.stderr.decode()[-400:]}")
            whole.append((audit, len(parts), inner, outer))
    print(f"\nwhole files ({len(whole)} audits, their tables with unknowns): read and computed in process / "
          "`luskin audit --template ll144 --counts FILE --json` as a fresh process")
    for audit, n, inner, outer in sorted(whole, key=lambda w: -w[3])[:8]:
        print(f"  {audit[:52]:52s} {n} tables  {inner:6.3f} s  {outer:6.3f} s")
    print(f"  ... all {len(whole)}: {sum(w[2] for w in whole):.2f} s in process, {sum(w[3] for w in whole):.2f} s as "
          f"processes; slowest process {max(w[3] for w in whole):.2f} s")

    rnd = random.Random(47)
    many = [(n, int(n * rnd.uniform(0.2, 0.6))) for n in (rnd.randint(50, 2000) for _ in range(10_000))]
    print("\n10,000 categories (issue 47: 267 s before), a seeded random table of 10.3 million individuals:")
    for unknown, chosen in ((5_000, None), (5_000, 2_000), (1_000_000, None), (1_000_000, 0)):
        took = seconds(ratio_bounds, many, [True] * len(many), unknown, chosen, repeat=1)
        print(f"  unknown {unknown:>9,}, selected {'any' if chosen is None else chosen:>5}: {took:6.2f} s")
    small = many[:1_000]
    now = seconds(ratio_bounds, small, [True] * len(small), 5_000, None, repeat=1)
    before = seconds(previous_bounds, small, [True] * len(small), 5_000, None, repeat=1)
    print(f"  peer, 1,000 of them, unknown 5,000: {now:.2f} s now, {before:.2f} s previous (it grows as the square)")


if __name__ == "__main__":
    main()
