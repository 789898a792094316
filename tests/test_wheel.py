"""What a user installs works: the wheel, installed into a fresh venv, run from another folder.

The wheel is built from this checkout (``python -m build --wheel --no-isolation``) and installed
with ``--no-deps`` into a new venv whose only link to the test venv is a ``.pth`` line adding the
test venv's site-packages *after* its own (the dependencies, already installed there). A ``.pth``
folder's own ``.pth`` files are not processed, so the checkout's editable install is invisible:
``luskin_core`` can only come from the wheel. Every command runs from an empty temporary folder.

The dependencies are not downloaded again for the fresh venv (hundreds of MB from the registry on
every CI run, and a test that fails when the network does): instead the wheel's own metadata is read,
each core requirement is checked against what is installed, Streamlit must be in the ``app`` extra
only, and the core's commands run with Streamlit made impossible to import.
"""

from __future__ import annotations

import hashlib
import os
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    done = _run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(ROOT)], ROOT)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    wheels = list(out.glob("luskin-*.whl"))
    assert len(wheels) == 1
    return wheels[0]


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("venv") / "v"
    done = _run([sys.executable, "-m", "venv", "--without-pip", str(where)], ROOT)
    assert done.returncode == 0, done.stderr
    python = where / "bin" / "python"
    site = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                     where).stdout.strip())
    (site / "zz_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    done = _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index",
                 str(wheel)], where)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return where


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LUSKIN_SQF_PATH")}
    return env


def test_the_wheel_carries_the_samples_and_the_dashboard_byte_for_byte(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        pairs = [(f"luskin_core/sample_data/{p.name}", p) for p in (ROOT / "sample_data").iterdir() if p.is_file()]
        pairs += [(f"luskin_app/dashboard/app_pages/{p.name}", p) for p in (ROOT / "app_pages").glob("*.py")]
        pairs += [("luskin_app/dashboard/app.py", ROOT / "app.py"), ("luskin_app/dashboard/serve.py", ROOT / "serve.py"),
                  ("luskin_app/dashboard/.streamlit/config.toml", ROOT / ".streamlit" / "config.toml")]
        for inside, original in pairs:
            assert inside in names, inside
            assert hashlib.sha256(archive.read(inside)).digest() == hashlib.sha256(original.read_bytes()).digest()
        assert "luskin_core/templates/report.html.j2" in names
        assert not any(n.startswith(("tests/", "benchmarks/", "shared/")) for n in names)


def test_the_installed_package_is_the_wheel_not_the_checkout(venv: Path, tmp_path: Path) -> None:
    done = _run([str(venv / "bin" / "python"), "-c", ("import luskin_core, luskin_core._locations as l; "
                 "print(luskin_core.__file__); print(l.checkout_root()); print(l.shared_data_dir())")],
                tmp_path, _env())
    assert done.returncode == 0, done.stderr
    where, root, shared = done.stdout.split("\n")[:3]
    assert str(venv) in where and root == "None" and shared == "None"


@pytest.mark.parametrize("preset, words", [("adult", "White vs Non-White"), ("compas", "African-American")])
def test_the_cli_audits_every_bundled_preset_from_another_folder(venv: Path, tmp_path: Path, preset: str,
                                                                 words: str) -> None:
    done = _run([str(venv / "bin" / "luskin"), "audit", "--preset", preset], tmp_path, _env())
    assert done.returncode == 0, done.stderr
    assert words in done.stdout and "beyond tolerance" in done.stdout
    assert list(tmp_path.iterdir()) == []          # nothing written to the working folder


def test_sqf_is_found_only_through_luskin_sqf_path(venv: Path, tmp_path: Path) -> None:
    luskin = str(venv / "bin" / "luskin")
    done = _run([luskin, "audit", "--preset", "sqf"], tmp_path, _env())
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "LUSKIN_SQF_PATH" in done.stderr
    sqf = ROOT.parent / "shared" / "data" / "sqf_2014.csv.gz"
    if not sqf.is_file():
        pytest.skip("the SQF file is not beside this checkout")
    env = _env() | {"LUSKIN_SQF_PATH": str(sqf)}
    done = _run([luskin, "audit", "--preset", "sqf"], tmp_path, env, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "beyond tolerance" in done.stdout or "within tolerance" in done.stdout


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_luskin_app_starts_from_the_installed_package(venv: Path, tmp_path: Path) -> None:
    port = _free_port()
    process = subprocess.Popen([str(venv / "bin" / "luskin"), "app", "--headless", "--port", str(port)],
                               cwd=tmp_path, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 90
        body = ""
        while time.monotonic() < deadline and process.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as answer:
                    body = answer.read().decode()
                    break
            except OSError:
                time.sleep(0.5)
        assert body == "ok", f"no health answer; exit {process.poll()}"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as answer:
            assert answer.status == 200
    finally:
        process.terminate()
        try:
            output = process.communicate(timeout=20)[0]
        except subprocess.TimeoutExpired:
            process.kill()
            output = process.communicate()[0]
    assert "Traceback" not in output, output[-3000:]


def test_the_core_dependencies_are_declared_met_and_enough_without_streamlit(wheel: Path, venv: Path,
                                                                              tmp_path: Path) -> None:
    """The wheel's own metadata: Streamlit only in the 'app' extra, every core requirement met by what is
    installed; then the core's commands (audit in groups and strata, a report with every tool) run in the
    installed package with Streamlit made impossible to import."""
    from importlib import metadata

    from packaging.requirements import Requirement

    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        lines = archive.read(name).decode().splitlines()
    requirements = [Requirement(line.split(":", 1)[1].strip()) for line in lines if line.startswith("Requires-Dist:")]
    core = [r for r in requirements if r.marker is None]
    assert {r.name for r in core} >= {"pandas", "numpy", "scikit-learn", "ibis-framework", "jinja2"}
    assert "streamlit" not in {r.name for r in core}
    assert any(r.name == "streamlit" and r.marker is not None and r.marker.evaluate({"extra": "app"})
               for r in requirements)
    for r in core:
        installed = metadata.version(r.name)
        assert r.specifier.contains(installed, prereleases=True), f"{r} is declared; {installed} is installed"
    block = "import sys; sys.modules['streamlit'] = None; from luskin_cli.main import main; raise SystemExit(main({}))"
    argv = ["audit", "--preset", "adult", "--groups", "race", "--stratify", "sex"]
    done = _run([str(venv / "bin" / "python"), "-c", block.format(argv)], tmp_path, _env())
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Asian-Pac-Islander" in done.stdout and "Breslow-Day" in done.stdout
    argv = ["report", "--preset", "compas", "--retrain", "--thresholds", "--equalize", "--alphas", "0.5,1",
            "--html", str(tmp_path / "r.html")]
    done = _run([str(venv / "bin" / "python"), "-c", block.format(argv)], tmp_path, _env(), timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "r.html").stat().st_size > 100_000
