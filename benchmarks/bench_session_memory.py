"""Server memory per browser session with a 1M-row upload, and what is given back when they close.

Starts ``streamlit run app.py`` on a free port, opens N Chromium sessions one after another, each
uploading the same kind of 1,000,000-row CSV (a different seed, so a different fingerprint),
confirming the guesses and opening the Audit page; then closes them all and reads the server's
resident memory (VmRSS of the server process) right away and after Streamlit's
``server.disconnectedSessionTTL`` (120 s by default, here set to ``--ttl``).

    python benchmarks/bench_session_memory.py --sessions 3 --ttl 20

Needs Chromium at /usr/bin/chromium and Playwright (the browser tests' tools).
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def make_csv(folder: Path, seed: int, rows: int) -> Path:
    rng = np.random.default_rng(seed)
    sex = rng.choice(["Female", "Male"], rows)
    frame = pd.DataFrame({"sex": sex, "race": rng.choice(["A", "B", "C", "D"], rows),
                          "department": rng.choice(list("ABCDEF"), rows), "age": rng.integers(18, 70, rows),
                          "hired": np.where(rng.random(rows) < np.where(sex == "Female", 0.3, 0.35), "yes", "no")})
    path = folder / f"hires_{seed}.csv"
    frame.to_csv(path, index=False)
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=3)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--ttl", type=int, default=120, help="server.disconnectedSessionTTL (s)")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    folder = Path(tempfile.mkdtemp(prefix="luskin-bench-"))
    files = [make_csv(folder, seed, args.rows) for seed in range(args.sessions)]
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                               "--server.port", str(port), "--server.address", "127.0.0.1",
                               "--server.fileWatcherType", "none", "--browser.gatherUsageStats", "false",
                               "--server.disconnectedSessionTTL", str(args.ttl)],
                              cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        for _ in range(240):
            try:
                if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read().strip() == b"ok":
                    break
            except OSError:
                time.sleep(0.25)
        print(f"server started: {rss_mb(server.pid):.0f} MB")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--headless", "--no-sandbox"])
            contexts = []
            for number, file in enumerate(files, 1):
                context = browser.new_context(viewport={"width": 1280, "height": 900})
                page = context.new_page()
                page.set_default_timeout(300_000)
                page.goto(url)
                page.get_by_text("Ready: comparing").first.wait_for()
                page.get_by_test_id("stFileUploaderDropzoneInput").set_input_files(str(file))
                page.get_by_text("Luskin's first guesses for this file").first.wait_for()
                page.get_by_role("button", name="Use these choices").first.click()
                page.get_by_text("Ready: comparing").first.wait_for()
                page.get_by_test_id("stSidebarNav").get_by_role("link", name="Audit", exact=True).click()
                page.wait_for_selector('[data-testid="stPlotlyChart"]')
                page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]')
                contexts.append(context)
                print(f"after session {number} ({args.rows:,} rows uploaded, audited): {rss_mb(server.pid):.0f} MB")
            for context in contexts:
                context.close()
            browser.close()
        time.sleep(3)
        print(f"all browsers closed, +3 s: {rss_mb(server.pid):.0f} MB")
        time.sleep(args.ttl + 30)
        print(f"all browsers closed, +{args.ttl + 33} s (past the {args.ttl}-s session TTL): "
              f"{rss_mb(server.pid):.0f} MB")
        with sync_playwright() as p:   # a new visitor: does the server clean up the old sessions then?
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--headless", "--no-sandbox"])
            page = browser.new_page()
            page.set_default_timeout(300_000)
            page.goto(url)
            page.get_by_text("Ready: comparing").first.wait_for()
            browser.close()
        time.sleep(5)
        print(f"then one new visitor on the Adult sample, closed: {rss_mb(server.pid):.0f} MB")
    finally:
        server.terminate()
        server.wait(timeout=20)
        for file in files:
            file.unlink()
        folder.rmdir()


if __name__ == "__main__":
    main()
