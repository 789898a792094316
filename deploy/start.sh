#!/usr/bin/env bash
# The container's entry point: Streamlit on 127.0.0.1:8502 (unreachable from outside the container),
# nginx on port 8501 in front of it (deploy/nginx.conf sets the security headers and hides
# /_stcore/metrics). When either process ends, the other is stopped and the container exits with
# the status of the first.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cd "$here/.."
prefix="${LUSKIN_NGINX_PREFIX:-/tmp/luskin-nginx}"
mkdir -p "$prefix"
streamlit run app.py --server.address=127.0.0.1 --server.port=8502 --server.headless=true \
    --browser.gatherUsageStats=false &
nginx -p "$prefix/" -c "$here/nginx.conf" -e stderr -g 'daemon off;' &
status=0
wait -n || status=$?
kill -TERM $(jobs -p) 2>/dev/null || true
wait || true
exit "$status"
