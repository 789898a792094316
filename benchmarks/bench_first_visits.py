"""Analysts opening the dashboard at once: the time to each one's first verdict, where the server's time goes, and
the server's memory per analyst (issue 47: eight analysts at once waited 30 s for their first verdict; warm 4.6 s).

    .venv/bin/python benchmarks/bench_first_visits.py --analysts 8 [--profile] [--size 1024x768]

Starts ``streamlit run serve.py`` (as deploy/start.sh serves it) in a process of its own, then opens N Chromium
contexts at the same moment (N analysts, each a session of their own) and times each from the request until the
main area's first words (until then it is blank), the home page's first heading and its first verdict ("At a
glance"; issue 46: "the very first visit at 1024x768 showed a blank main area at 5 s"); then N more (a warm server) and one alone. ``--profile``
samples the server's threads every 5 ms (the stacks of the script threads that run the analysts' pages) and
prints the functions where the cold batch spent its time: there is no profiler for Streamlit's script threads
(cProfile sees one thread) and none installed. Memory: the server's resident set before the first visit and after
each batch (``/proc``), per analyst.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


# -- the server, with an optional sampler of its threads ---------------------------------------------------------
def _serve(port: int, profile: str | None) -> None:
    """Run the dashboard here (this process), sampling its threads into ``profile`` (JSON) when asked."""
    if profile:
        counts: collections.Counter[str] = collections.Counter()
        own: collections.Counter[str] = collections.Counter()
        me = threading.get_ident()

        def sample() -> None:
            import traceback

            while True:
                time.sleep(0.005)
                for ident, frame in sys._current_frames().items():
                    if ident == me or ident == threading.get_ident():
                        continue
                    stack = traceback.extract_stack(frame)
                    if not any("app.py" in f.filename or "app_pages" in f.filename for f in stack):
                        continue   # only the threads running an analyst's page
                    top = stack[-1]
                    own[f"{Path(top.filename).name}:{top.name}"] += 1
                    for f in {(Path(f.filename).parent.name + "/" + Path(f.filename).name, f.name) for f in stack}:
                        counts[f"{f[0]}:{f[1]}"] += 1

        def dump() -> None:
            while True:
                time.sleep(1)
                Path(profile).write_text(json.dumps({"inclusive": counts.most_common(60),
                                                     "own": own.most_common(30)}))

        threading.Thread(target=sample, daemon=True).start()
        threading.Thread(target=dump, daemon=True).start()
    from streamlit.web import cli

    sys.argv = ["streamlit", "run", str(ROOT / "serve.py"), "--server.headless", "true", "--server.port", str(port),
                "--server.address", "127.0.0.1", "--server.fileWatcherType", "none",
                "--browser.gatherUsageStats", "false"]
    os.chdir(ROOT)
    cli.main()


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _cpu_seconds(pid: int) -> float:
    """The CPU time (user + system) the process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _descendants_cpu(root: int, skip: int) -> float:
    """CPU seconds used so far by the processes under ``root`` (this benchmark: Playwright and its Chromium), the
    server ``skip`` and its children left out."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parents[int(stat.parent.name)] = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue

    def under(pid: int) -> bool:
        while pid > 1:
            if pid == skip:
                return False
            if pid == root:
                return True
            pid = parents.get(pid, 1)
        return False

    total = 0.0
    for pid in parents:
        if pid != root and under(pid):
            try:
                total += _cpu_seconds(pid)
            except (OSError, ValueError, IndexError):
                continue
    return total


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return response.read().strip() == b"ok"
    except OSError:
        return False


# -- the analysts ------------------------------------------------------------------------------------------------
async def _batch(browser: object, url: str, n: int, size: dict[str, int]) -> list[tuple[float, float, float]]:
    """Each analyst's seconds from the request to the main area's first words (any text: until then it is blank),
    to its first heading, and to the first verdict."""
    async def one() -> tuple[float, float, float]:
        context = await browser.new_context(viewport=size)  # type: ignore[attr-defined]
        page = await context.new_page()
        start = time.monotonic()
        await page.goto(url + "/", wait_until="domcontentloaded", timeout=300_000)
        await page.wait_for_function("""() => { const m = document.querySelector('[data-testid="stMain"]');
                                              return !!m && m.innerText.trim().length > 0; }""", timeout=300_000)
        words = time.monotonic() - start
        await page.locator('[data-testid="stMain"] h1').first.wait_for(timeout=300_000)
        heading = time.monotonic() - start
        await page.get_by_text("At a glance").first.wait_for(timeout=300_000)
        took = time.monotonic() - start
        await context.close()
        return words, heading, took

    return list(await asyncio.gather(*(one() for _ in range(n))))


async def _visits(url: str, n: int, pid: int,
                  size: dict[str, int]) -> dict[str, tuple[list[tuple[float, float, float]], float, float]]:
    """Each batch's times to the first heading and verdict, and the server's and the browsers' CPU seconds per
    analyst in it."""
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        out: dict[str, tuple[list[tuple[float, float, float]], float, float]] = {}
        try:
            for name, batch in (("cold", n), ("warm", n), ("alone", 1)):
                cpu, client = _cpu_seconds(pid), _descendants_cpu(os.getpid(), pid)
                times = await _batch(browser, url, batch, size)
                out[name] = (times, (_cpu_seconds(pid) - cpu) / batch,
                             (_descendants_cpu(os.getpid(), pid) - client) / batch)
            return out
        finally:
            await browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--analysts", type=int, default=8)
    parser.add_argument("--settle", type=float, default=0.0, metavar="S",
                        help="seconds the server runs before the first analysts arrive (an operator's server is up first)")
    parser.add_argument("--size", default="1280x800", metavar="WxH", help="the analysts' window (e.g. 1024x768)")
    parser.add_argument("--profile", action="store_true", help="sample the server's page threads (where the time goes)")
    parser.add_argument("--serve", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--profile-file", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        _serve(args.serve, args.profile_file)
        return
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    folder = Path(tempfile.mkdtemp(prefix="luskin-bench-visits-"))
    profile = folder / "profile.json" if args.profile else None
    command = [sys.executable, __file__, "--serve", str(port)] + (["--profile-file", str(profile)] if profile else [])
    env = {**os.environ, "LUSKIN_STATE_DIR": str(folder / "state")}
    log = (folder / "server.log").open("w")
    print(f"server log: {folder / 'server.log'}")
    server = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        end = time.monotonic() + 120
        while not _healthy(url):
            if server.poll() is not None or time.monotonic() > end:
                raise SystemExit(f"the server did not start:\n{(folder / 'server.log').read_text()[-3000:]}")
            time.sleep(0.25)
        time.sleep(args.settle)
        started = _rss_mb(server.pid)
        width, height = (int(v) for v in args.size.lower().split("x"))
        got = asyncio.run(_visits(url, args.analysts, server.pid, {"width": width, "height": height}))
        after = _rss_mb(server.pid)
        load = os.getloadavg()[0]
        print(f"{args.analysts} analysts opening the dashboard at once, {args.settle:g} s after the server's start "
              f"at {width}x{height} (2 cores shared; load {load:.1f}):")
        for name, (triples, cpu, client) in got.items():
            words, headings, times = (sorted(t[i] for t in triples) for i in range(3))
            print(f"  {name:5s}: first words in the main area after median {words[len(words) // 2]:5.1f} s, slowest "
                  f"{words[-1]:5.1f} s; "
                  f"first heading after median {headings[len(headings) // 2]:5.1f} s, slowest "
                  f"{headings[-1]:5.1f} s; first verdict after median {times[len(times) // 2]:5.1f} s, slowest "
                  f"{times[-1]:5.1f} s; CPU an analyst: server {cpu:.2f} s, their browser (Chromium here) {client:.2f} s")
        print(f"  server memory: {started:.0f} MB at start, {after:.0f} MB after {2 * args.analysts + 1} sessions "
              f"({(after - started) / (2 * args.analysts + 1):.0f} MB a session)")
        if profile is not None:
            time.sleep(1.5)
            found = json.loads(profile.read_text())
            total = max((c for _, c in found["inclusive"]), default=1)
            print("  where the page threads spent their time (share of samples holding the function):")
            for name, count in found["inclusive"][:40]:
                print(f"    {count / total:6.1%}  {name}")
            print("  on top of the stack:")
            for name, count in found["own"][:15]:
                print(f"    {count / total:6.1%}  {name}")
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


if __name__ == "__main__":
    main()
