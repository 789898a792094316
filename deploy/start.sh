#!/usr/bin/env bash
# The container's entry point: Streamlit on 127.0.0.1:8502 (unreachable from outside the container),
# nginx on port 8501 in front of it (deploy/nginx.conf sets the security headers and hides
# /_stcore/metrics). When either process ends, the other is stopped and the container exits with
# the status of the first.
#
# Port 8501 is reachable from outside the container, so the app must ask who is there: the secrets file
# ($LUSKIN_SECRETS, default /app/.streamlit/secrets.toml, mounted by the operator, never built into the
# image) must configure sign-in ([auth], see the README's deployment guide). Without it the container
# refuses to start and says why, unless the operator states that anyone who reaches the port may use it
# (LUSKIN_ALLOW_ANONYMOUS=1). Kept uploads, their key and the record live in $LUSKIN_STATE_DIR (default
# /home/luskin/.local/state/luskin: mount a volume there to keep them across restarts).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
prefix="${LUSKIN_NGINX_PREFIX:-/tmp/luskin-nginx}"
secrets="${LUSKIN_SECRETS:-$here/../.streamlit/secrets.toml}"
if ! python - "$secrets" <<'PY'
import sys, tomllib
try:
    with open(sys.argv[1], "rb") as handle:
        auth = tomllib.load(handle).get("auth")
except (OSError, tomllib.TOMLDecodeError):
    auth = None
sys.exit(0 if isinstance(auth, dict) and auth else 1)
PY
then
  if [ "${LUSKIN_ALLOW_ANONYMOUS:-0}" != "1" ]; then
    echo "luskin: not starting: port 8501 is reachable from outside this container and sign-in is not" \
         "configured (no [auth] section in the secrets file $secrets). Anyone who reached the port could" \
         "open the dashboard and the uploads. Mount a secrets file with [auth] (see the README's deployment" \
         "guide), or set LUSKIN_ALLOW_ANONYMOUS=1 to serve it without sign-in on a network you trust." >&2
    exit 78
  fi
  echo "luskin: WARNING: serving without sign-in (LUSKIN_ALLOW_ANONYMOUS=1): anyone who reaches port 8501" \
       "can use the dashboard." >&2
fi
if [ -z "${LUSKIN_RECORD_KEY_FILE:-}" ]; then
  echo "luskin: WARNING: LUSKIN_RECORD_KEY_FILE is not set: the key that chains the record's lines is made inside" \
       "the container (~/.config/luskin/record.key) and is lost when the container is recreated; the lines written" \
       "before could then no longer be checked. Mount a key file (32 random bytes) and name it there." >&2
fi
secret_args=()
[ -f "$secrets" ] && secret_args=(--secrets.files "$secrets")
mkdir -p "$prefix"
# No file watcher: the image's files never change, and a watch of the app's folder costs the one server every analyst
# shares (benchmarks/results/test_speed_issue26.md).
# serve.py: app.py behind Luskin's guard (a sign-in counts only when this server made it and it still holds; a
# download opens only for the user it was made for; expired uploads are deleted at the start).
streamlit run serve.py --server.address=127.0.0.1 --server.port=8502 --server.headless=true \
    --server.fileWatcherType=none --browser.gatherUsageStats=false "${secret_args[@]}" &
nginx -p "$prefix/" -c "$here/nginx.conf" -e stderr -g 'daemon off;' &
status=0
wait -n || status=$?
kill -TERM $(jobs -p) 2>/dev/null || true
wait || true
exit "$status"
