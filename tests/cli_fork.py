"""Run the ``luskin`` command line in real processes without paying Python's start-up each time.

A test that runs the command on dozens of files spends most of its time importing pandas, scikit-learn and
DuckDB again in every process (an audit of 200 rows: about 2 s from a cold start, 0.02 s once imported). Here one
server process imports, once, every module that real runs of the command import (found by a warm-up child that
runs the given commands and reports ``sys.modules``), and then forks a child per run. Each child is a process of its
own, as ``luskin`` started from a shell is: its own stdout and stderr (files, read back), its exit status (a signal
as a negative number, like ``subprocess``), an uncaught exception printed as a traceback by the same rules as the
interpreter's, a timeout that kills it. What it does not check is the interpreter's start itself, so a test keeps
at least one run through the real ``luskin`` executable.

The server only imports: it never runs a query or a model, and starts no Python thread. The native threads that
imports start (OpenBLAS's pools for numpy and scipy, jemalloc's background thread for pyarrow) are the ones every
``multiprocessing`` fork on Linux meets; those libraries stop and restart them around ``fork`` themselves. DuckDB and
OpenMP start theirs only when they run, which the server never does. Should a Python thread exist,
:class:`ForkedCli` runs everything with ``subprocess`` instead; a child that hangs is killed at its timeout, and the
test reports it.

Protocol (JSON lines on the server's stdin and stdout): ``{"warm": [argv, ...]}`` once, answered with
``{"ready": bool, ...}``; then ``{"id", "argv", "out", "err"}`` per run, answered with ``{"id", "pid"}`` when it
starts and ``{"id", "status"}`` when it ends.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import sys

if __name__ != "__main__":   # the test side; the server (run as a script) needs none of this
    import signal
    import subprocess
    import tempfile
    import threading
    from pathlib import Path


def _threads() -> int:
    """Native threads of this process (reported; Python's own count misses the C libraries' pools)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:   # pragma: no cover - not Linux
        return -1


def _run_as_luskin(argv: list[str], out: str, err: str) -> None:
    """In a forked child: what the ``luskin`` console script does, then leave without returning."""
    code = 1
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 1)
        os.dup2(os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 2)
        sys.argv = ["luskin", *argv]
        try:
            from luskin_cli.main import main

            raise SystemExit(main())
        except SystemExit as done:   # as the interpreter reads it
            if done.code is None:
                code = 0
            elif isinstance(done.code, int):
                code = done.code
            else:
                print(done.code, file=sys.stderr)
                code = 1
        except BaseException:   # noqa: BLE001 - printed exactly as an uncaught exception would be
            import traceback

            traceback.print_exc()
            code = 1
        import atexit

        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):   # closed (e.g. after a broken pipe)
                pass
    finally:
        os._exit(code)


def _warm(argvs: list[list[str]]) -> dict[str, object]:
    """Import what real runs of these commands import (run in a child), then say whether forking is safe."""
    names_file = f"{os.environ.get('TMPDIR', '/tmp')}/luskin-cli-fork-{os.getpid()}.json"
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            from luskin_cli.main import main

            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, 1)
            os.dup2(null, 2)
            for argv in argvs:
                with contextlib.suppress(Exception, SystemExit):   # a warm-up only: the tests run it for real
                    main(argv)
            with open(names_file, "w") as file:
                json.dump(list(sys.modules), file)
            code = 0
        finally:
            os._exit(code)
    os.waitpid(pid, 0)
    names: list[str] = []
    try:
        with open(names_file) as file:
            names = json.load(file)
        os.unlink(names_file)
    except (OSError, ValueError):
        pass
    imported = 0
    for name in names:
        if name in sys.modules or name == "__main__":
            continue
        with contextlib.suppress(Exception, SystemExit):   # a module that cannot be imported alone: the child will
            __import__(name)
            imported += 1
    import threading

    return {"ready": threading.active_count() == 1, "modules": imported, "native_threads": _threads()}


def serve() -> None:
    """The server loop: one JSON request per line on stdin; children reaped as they end (no threads)."""
    sys.path.insert(0, os.getcwd())
    running: dict[int, str] = {}
    pending = b""

    def say(message: dict[str, object]) -> None:
        os.write(1, (json.dumps(message) + "\n").encode())

    while True:
        while running:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            say({"id": running.pop(pid), "status": -os.WTERMSIG(status) if os.WIFSIGNALED(status)
                 else os.WEXITSTATUS(status)})
        ready, _, _ = select.select([0], [], [], 0.02 if running else None)
        if not ready:
            continue
        chunk = os.read(0, 65536)
        if not chunk:
            break
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            request = json.loads(line)
            if "warm" in request:
                say(_warm(request["warm"]))
                continue
            pid = os.fork()
            if pid == 0:
                _run_as_luskin(request["argv"], request["out"], request["err"])
            running[pid] = request["id"]
            say({"id": request["id"], "pid": pid})
    for pid in running:
        os.waitpid(pid, 0)


class ForkedCli:
    """Runs ``luskin ARGV`` in a forked child of a warmed server; ``run`` answers like ``subprocess.run``."""

    def __init__(self, command: list[str], warm: list[list[str]], cwd: Path) -> None:
        self.command = command   # the real command, for the fallback: ``luskin`` or ``python -m luskin_cli``
        self._folder = Path(tempfile.mkdtemp(prefix="luskin-cli-fork-"))
        self._lock = threading.Lock()
        self._started: dict[str, threading.Event] = {}
        self._ended: dict[str, threading.Event] = {}
        self._answers: dict[str, dict[str, int]] = {}
        self._next = 0
        self.server = subprocess.Popen([sys.executable, __file__], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       cwd=cwd, text=True, bufsize=1)
        assert self.server.stdin is not None and self.server.stdout is not None
        self.server.stdin.write(json.dumps({"warm": warm}) + "\n")
        self.server.stdin.flush()
        answer = json.loads(self.server.stdout.readline() or "{}")
        self.ready = bool(answer.get("ready"))
        self.warm_answer = answer
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.server.stdout is not None
        for line in self.server.stdout:
            answer = json.loads(line)
            with self._lock:
                self._answers.setdefault(answer["id"], {}).update(answer)
                (self._ended if "status" in answer else self._started)[answer["id"]].set()

    def run(self, argv: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
        """``luskin argv`` in a forked child; ``subprocess.TimeoutExpired`` (the child killed) after ``timeout``."""
        if not self.ready:
            return subprocess.run([*self.command, *argv], capture_output=True, text=True, timeout=timeout,
                                  check=False, errors="replace")
        with self._lock:
            self._next += 1
            key = str(self._next)
            self._started[key], self._ended[key] = threading.Event(), threading.Event()
            out, err = self._folder / f"{key}.out", self._folder / f"{key}.err"
            assert self.server.stdin is not None
            self.server.stdin.write(json.dumps({"id": key, "argv": argv, "out": str(out), "err": str(err)}) + "\n")
            self.server.stdin.flush()
        if not self._started[key].wait(60):
            raise RuntimeError("the forking server did not start the command")
        if not self._ended[key].wait(timeout):
            os.kill(self._answers[key]["pid"], signal.SIGKILL)
            self._ended[key].wait(60)
            raise subprocess.TimeoutExpired(argv, timeout)
        status = self._answers[key]["status"]
        stdout = out.read_text(errors="replace")
        stderr = err.read_text(errors="replace")
        out.unlink()
        err.unlink()
        return subprocess.CompletedProcess(["luskin", *argv], status, stdout, stderr)

    def close(self) -> None:
        if self.server.stdin is not None:
            self.server.stdin.close()
        try:
            self.server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.server.kill()
            self.server.wait()
        for leftover in self._folder.iterdir():
            leftover.unlink()
        self._folder.rmdir()


if __name__ == "__main__":
    serve()
