"""``luskin app``: start the dashboard from a checkout or from an installed package.

Registered by :func:`luskin_cli.main.build_parser` through :func:`add_parsers`. It runs
``python -m streamlit run <app.py>`` as a child process: the checkout's own ``app.py`` in a
checkout, the copy shipped in the wheel (``luskin_app/dashboard/app.py``) when installed.
Streamlit reads ``.streamlit/config.toml`` from the working folder, not from beside the script,
so the settings of the shipped ``config.toml`` (upload limit, theme, no usage statistics, no
error details) are passed as command-line flags: the file stays the one source of truth.
Standard library only; Streamlit comes with the ``app`` extra (``pip install 'luskin[app]'``). What only
``luskin app`` needs (sockets, processes, the package's files) is imported when it runs, not when
every other command builds its parser.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

from luskin_cli.options import CommandOptions
from luskin_core.errors import LuskinError

DEFAULT_PORT = 8501
DEFAULT_ADDRESS = "127.0.0.1"


def add_parsers(subparsers: Any) -> None:
    """Register the ``app`` subcommand."""
    parser = subparsers.add_parser(
        "app", help="start the dashboard (a local web page; needs luskin[app])",
        description="Start Luskin's dashboard (Streamlit) and open it in the browser. By default it "
                    f"listens on {DEFAULT_ADDRESS} (this computer only): the dashboard has no login, so "
                    "serve it to other computers (--address 0.0.0.0) only on a network you trust or "
                    "behind a proxy that asks for one. Ctrl+C stops it.")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT,
                        help=f"the port to listen on (default {DEFAULT_PORT})")
    parser.add_argument("--address", default=DEFAULT_ADDRESS,
                        help=f"the address to listen on (default {DEFAULT_ADDRESS}: this computer only; "
                             "0.0.0.0: every network interface)")
    parser.add_argument("--headless", action="store_true",
                        help="do not open a browser (on a server, or when the browser is opened by hand)")
    parser.add_argument("--watch-files", action="store_true",
                        help="reload the dashboard when its source files change (for developing Luskin; off by "
                             "default, as watching a checkout costs the server far more than the pages do)")
    parser.set_defaults(run=run)


def config_flags(config_path: Path) -> list[str]:
    """Streamlit command-line flags carrying every setting of a ``config.toml``.

    Tables nest (``[theme.sidebar]`` gives ``--theme.sidebar.KEY``); booleans are written
    ``true``/``false`` and lists as JSON, the forms Streamlit's flags read.
    """
    import tomllib

    try:
        config = tomllib.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise LuskinError(f"The dashboard's settings file {config_path} cannot be read ({err}). "
                          "Reinstall Luskin.") from None
    flags: list[str] = []

    def walk(prefix: str, table: dict[str, Any]) -> None:
        for key, value in table.items():
            name = f"{prefix}.{key}" if prefix else key
            if isinstance(value, dict):
                walk(name, value)
            elif not prefix:
                raise LuskinError(f"The setting '{key}' in {config_path} is outside a [section]. Reinstall Luskin.")
            elif isinstance(value, bool):
                flags.append(f"--{name}={'true' if value else 'false'}")
            elif isinstance(value, list):
                flags.append(f"--{name}={json.dumps(value)}")
            else:
                flags.append(f"--{name}={value}")

    walk("", config)
    return flags


def _check_port(address: str, port: int) -> None:
    """Say plainly when the port cannot be used, before Streamlit fails with its own message."""
    import socket

    if not 1 <= port <= 65535:
        raise LuskinError(f"--port must be between 1 and 65535 (got {port}).")
    try:
        infos = socket.getaddrinfo(address, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror:
        raise LuskinError(f"'{address}' is not an address of this computer: use --address 127.0.0.1 "
                          "(this computer only) or 0.0.0.0 (every network interface).") from None
    for family, kind, proto, _, where in infos:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as Streamlit's server does
            try:
                probe.bind(where)
            except OSError as err:
                raise LuskinError(f"Cannot listen on {address} port {port} ({err.strerror}): another program "
                                  "may be using it; choose another with --port.") from None


def dashboard_script() -> Path | None:
    """The dashboard's entry point: the checkout's ``app.py``, else the copy the wheel ships (setup.py)."""
    from luskin_core._locations import checkout_root

    root = checkout_root()
    if root is not None and (root / "app.py").is_file():
        return root / "app.py"
    spec = importlib.util.find_spec("luskin_app")  # found, not imported: it imports Streamlit
    for folder in (spec.submodule_search_locations or []) if spec else []:
        script = Path(folder) / "dashboard" / "app.py"
        if script.is_file():
            return script
    return None


def command(args: CommandOptions) -> list[str]:
    """The Streamlit command line that serves the dashboard with Luskin's settings."""
    if importlib.util.find_spec("streamlit") is None:
        raise LuskinError("The dashboard needs Streamlit, which is not installed: pip install 'luskin[app]'.")
    script = dashboard_script()
    if script is None:
        raise LuskinError("The dashboard's files are missing from this installation of Luskin "
                          "(luskin_app/dashboard/app.py). Reinstall it: pip install 'luskin[app]'.")
    flags = config_flags(script.parent / ".streamlit" / "config.toml")
    flags += [f"--server.port={args.port}", f"--server.address={args.address}",
              f"--server.headless={'true' if args.headless else 'false'}"]
    # Streamlit watches the script's folder for changed files: in a checkout (its .venv inside) that cost the server
    # many times what the pages themselves cost (benchmarks/results/test_speed_issue26.md), and an analyst never
    # edits the app. A developer asks for it with --watch-files.
    if not args.watch_files:
        flags.append("--server.fileWatcherType=none")
    served = script.with_name("serve.py")   # app.py behind Luskin's guard (needed for sign-in; harmless without)
    return [sys.executable, "-m", "streamlit", "run", str(served if served.is_file() else script), *flags]


def run(args: CommandOptions) -> int:
    """Serve the dashboard until Ctrl+C or SIGTERM; returns Streamlit's exit status."""
    import signal
    import subprocess

    argv = command(args)
    _check_port(args.address, args.port)
    shown = "localhost" if args.address in ("127.0.0.1", "::1", "localhost") else args.address
    print(f"luskin: starting the dashboard ({argv[4]}) on http://{shown}:{args.port} - Ctrl+C stops it.",
          file=sys.stderr, flush=True)
    child = subprocess.Popen(argv)
    # A service manager stops `luskin app` with SIGTERM: pass it on so Streamlit is not left behind.
    try:
        previous: Any = signal.signal(signal.SIGTERM, lambda *_: child.terminate())
    except ValueError:  # not the main thread (main() called from a program's thread): nothing to pass on
        previous = None
    try:
        while True:
            try:
                return child.wait()
            except KeyboardInterrupt:  # the terminal sent SIGINT to Streamlit too; let it finish
                child.send_signal(signal.SIGINT)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        if child.poll() is None:
            child.terminate()
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                child.kill()
