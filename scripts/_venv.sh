# Shared by run.sh and test.sh: make .venv (Python 3.11+) and install what $1 lists.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-}
if [ -z "$PY" ]; then
  for candidate in python3.11 python3.12 python3.13 python3; do
    if command -v "$candidate" >/dev/null 2>&1; then PY=$candidate; break; fi
  done
fi
"$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' || {
  echo "Luskin needs Python 3.11 or newer (found: $("$PY" --version 2>&1))." >&2; exit 1; }
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
# Install only when the requirements changed since the last install (a stamp holds their hash).
stamp=.venv/.luskin-installed
want=$(cat "$1" requirements.txt pyproject.toml setup.py | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  .venv/bin/python -m pip install --quiet --upgrade pip
  .venv/bin/python -m pip install --quiet -r "$1" -e .
  echo "$want" > "$stamp"
fi
