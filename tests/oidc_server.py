"""A real OpenID Connect provider for the sign-in tests: the npm package ``oidc-provider`` (9.x, OpenID
Certified) run by Debian's Node.js on 127.0.0.1.

The package is installed once with npm into ``~/.cache/luskin-tests/oidc`` (``LUSKIN_OIDC_DIR`` overrides),
never into the repository; scripts/test.sh installs nodejs and npm. Without node or npm the tests that
need the provider are skipped, saying why, or fail when ``LUSKIN_REQUIRE_BROWSER`` is set (as in CI).
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "oidc" / "provider.mjs"
PACKAGE = "oidc-provider@9"
CLIENT_ID = "luskin-tests"
CLIENT_SECRET = "a-client-secret-for-tests-only"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _missing(why: str) -> None:
    if os.environ.get("LUSKIN_REQUIRE_BROWSER"):
        pytest.fail(why)
    pytest.skip(why)


def provider_dir() -> Path:
    """The folder holding node_modules/oidc-provider (installed with npm on first use)."""
    folder = Path(os.environ.get("LUSKIN_OIDC_DIR", "~/.cache/luskin-tests/oidc")).expanduser()
    if not (shutil.which("node") and shutil.which("npm")):
        _missing("node and npm are needed for the sign-in tests (apt-get install -y nodejs npm)")
    if not (folder / "node_modules" / "oidc-provider" / "package.json").exists():
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "package.json").write_text('{"name": "luskin-oidc-tests", "private": true}\n')
        done = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", PACKAGE],
                              cwd=folder, capture_output=True, text=True, timeout=600, check=False)
        if done.returncode != 0:
            _missing(f"npm install {PACKAGE} failed: {done.stderr[-800:]}")
    shutil.copyfile(SCRIPT, folder / "provider.mjs")   # bare imports resolve from the script's own folder
    return folder


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


@contextmanager
def provider(users: Mapping[str, Mapping[str, Any]], redirect_uri: str | Sequence[str], log: Path) -> Iterator[str]:
    """Serve a provider with ``users`` (login name -> claims) and one confidential client (one app, or several
    apps sharing the client: one redirect address each); yields its issuer."""
    folder = provider_dir()
    port = free_port()
    issuer = f"http://127.0.0.1:{port}"
    redirects = [redirect_uri] if isinstance(redirect_uri, str) else list(redirect_uri)
    bases = [r.rsplit("/", 1)[0] + "/" for r in redirects]
    settings = {"port": port, "users": dict(users),
                "client": {"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET, "redirect_uris": redirects,
                           "post_logout_redirect_uris": redirects + bases,
                           "grant_types": ["authorization_code"], "response_types": ["code"],
                           "token_endpoint_auth_method": "client_secret_basic"}}
    config = log.with_suffix(".json")
    config.write_text(json.dumps(settings))
    out = log.open("w")
    process = subprocess.Popen(["node", str(folder / "provider.mjs"), str(config)], cwd=folder, stdout=out,
                               stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while not _answers(f"{issuer}/.well-known/openid-configuration"):
            if process.poll() is not None or time.monotonic() > deadline:
                out.flush()
                pytest.fail(f"oidc-provider did not start:\n{log.read_text()[-2000:]}")
            time.sleep(0.2)
        yield issuer
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        out.close()


def change_users(log: Path, users: Mapping[str, Mapping[str, Any]]) -> None:
    """Change the provider's users while it runs (the provider started with ``log`` reads them at each look-up):
    a group removed, an administrator demoted."""
    config = log.with_suffix(".json")
    settings = json.loads(config.read_text())
    settings["users"] = dict(users)
    temp = config.with_suffix(".tmp")
    temp.write_text(json.dumps(settings))
    temp.replace(config)


def secrets_toml(app_url: str, issuer: str, *, secret: str = CLIENT_SECRET, roles: str | None = None) -> str:
    """The secrets file an operator writes for this provider (DESIGN.md's settings seen working)."""
    roles = roles if roles is not None else (
        '[luskin.roles]\nclaim = "groups"\nadmin_groups = ["luskin-admins"]\nanalyst_groups = ["luskin-analysts"]\n')
    return (f'[auth]\nredirect_uri = "{app_url}/oauth2callback"\ncookie_secret = "cookie-secret-for-tests-only-0123"\n'
            f'client_id = "{CLIENT_ID}"\nclient_secret = "{secret}"\n'
            f'server_metadata_url = "{issuer}/.well-known/openid-configuration"\n'
            'client_kwargs = { scope = "openid email profile groups", prompt = "login" }\n\n' + roles)
