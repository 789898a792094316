"""A new upload is written before the one it replaces is deleted (issue 47: killing the server while four users
uploaded at once lost one user's earlier upload, as ``session._keep`` deleted the old upload before
``keep.store`` wrote the new one).

The moment between the two is made real: the app runs in a child process whose files may not grow past 64 KB
(RLIMIT_FSIZE), so the second, larger upload cannot be written, as on a full disk or a server killed mid-write. The
earlier upload must still be on disk and open from its address.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, resource, signal, sys
from pathlib import Path
from streamlit.testing.v1 import AppTest
from luskin_app import keep

state = Path(sys.argv[1])
keep.configure(keep.place_from({"LUSKIN_STATE_DIR": str(state)}))
small = ("group,hired\n" + "a,yes\nb,no\n" * 200).encode()
large = ("group,hired,notes\n" + "".join(f"a,yes,{'x' * 200} {i}\nb,no,{'y' * 200} {i}\n" for i in range(400))).encode()
at = AppTest.from_file(sys.argv[2], default_timeout=120).run()
at.file_uploader(key="upload_csv").set_value(("first.csv", small, "text/csv")).run()
first = at.session_state["kept_key"]
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)          # a write past the limit fails (EFBIG) instead of killing us
resource.setrlimit(resource.RLIMIT_FSIZE, (64_000, resource.RLIM_INFINITY))
at.file_uploader(key="upload_csv").set_value(("second.csv", large, "text/csv")).run()
resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
kept = keep.load(first, "")
print(json.dumps({"exception": [str(e.value) for e in at.exception], "first_kept": kept is not None and kept.name,
                  "now": at.session_state["dataset"].source,
                  "key_now": at.session_state["kept_key"] if "kept_key" in at.session_state else None,
                  "first": first, "files": sorted(p.suffix for p in (state / "uploads").iterdir())}))
"""


def test_a_failed_write_of_a_new_upload_keeps_the_earlier_one(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path / "state"), str(ROOT / "app.py")],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path, check=False,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})   # this checkout's code, whatever is installed
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["exception"] == []
    assert seen["now"] == "upload:second.csv"           # the analyst works on the new file all the same
    assert seen["first_kept"] == "first.csv", seen       # and the earlier upload was not lost
    assert seen["key_now"] != seen["first"]              # the address no longer names it for the new data
    assert seen["files"].count(".data") == 1 and seen["files"].count(".meta") == 1
