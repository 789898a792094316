#!/usr/bin/env bash
# Install Luskin with its test tools into .venv, make sure Chromium is there for the browser
# tests, and run the whole test suite (core, command line, app and browser tests).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/_venv.sh requirements-dev.txt
# Debian packages the tests drive for real: Chromium (browser tests, PDF charts), PostgreSQL (a
# throwaway server per test session), Java (Spark in local mode), pdftotext (the PDF report's text),
# nginx (the proxy the Docker image puts in front of the app), Node.js and npm (the sign-in tests' provider).
need=()
[ -x /usr/bin/chromium ] || need+=(chromium)
[ -x /usr/bin/java ] || need+=(openjdk-17-jre-headless)
command -v pdftotext >/dev/null || need+=(poppler-utils)
[ -x /usr/sbin/nginx ] || need+=(nginx)  # the Docker image's reverse proxy (deploy/nginx.conf), run by tests/test_deploy.py
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
command -v node >/dev/null || need+=(nodejs)   # a real OpenID Connect provider (npm oidc-provider) for the sign-in tests
command -v npm >/dev/null || need+=(npm)       # installs it once into ~/.cache/luskin-tests/oidc (tests/oidc_server.py)
if [ ${#need[@]} -gt 0 ]; then
  echo "Installing Debian packages for the tests: ${need[*]}..."
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
# Luskin's own modules compiled once, as an installed luskin has them: with PYTHONDONTWRITEBYTECODE set (some CI
# shells set it) every command, server and worker the tests start would compile them again.
env -u PYTHONDONTWRITEBYTECODE .venv/bin/python -m compileall -q -j 0 luskin_core luskin_cli luskin_app app_pages >/dev/null
export LUSKIN_REQUIRE_BROWSER=1
export LUSKIN_REQUIRE_ENGINES=1  # PostgreSQL and Spark tests fail, not skip, when their engine is missing
# Browser tests write screenshots and timings; keep the committed ones (docs/screenshots,
# benchmarks/results) unless asked: LUSKIN_SCREENSHOT_DIR=docs/screenshots bash scripts/test.sh tests/browser
export LUSKIN_SCREENSHOT_DIR="${LUSKIN_SCREENSHOT_DIR:-test-results/screenshots}"
export LUSKIN_TIMINGS_FILE="${LUSKIN_TIMINGS_FILE:-test-results/browser_timings.md}"
# The 30 slowest tests and the time of each file (tests/conftest.py); the committed copy is in benchmarks/results.
export LUSKIN_DURATIONS_FILE="${LUSKIN_DURATIONS_FILE:-test-results/test_durations.md}"
# Independent files run in parallel (pytest-xdist): each file is one unit of work, handed out longest first
# (tests/conftest.py); a worker starts PostgreSQL or Spark when its tests need them, and the browser tests of all
# workers share one served app (tests/browser/conftest.py), as analysts share a deployment. LUSKIN_TEST_WORKERS=0
# runs in one process, and so do -s (a worker's prints are not shown), --pdb and an explicit -n.
# Two workers more than the machine has cores (at most 6): a browser test spends much of its time waiting for a page
# to lay itself out, and at most two workers hold browser tests at a time (tests/run_schedule.py), so the others use
# that time. On 2 cores four workers took 516 s against three's 544, the machine idle 11 CPU-s against 50
# (benchmarks/results/test_speed_issue26.md).
cores="$(nproc 2>/dev/null || echo 2)"
workers="${LUSKIN_TEST_WORKERS:-$(( cores + 2 < 6 ? cores + 2 : 6 ))}"
parallel=(-n "$workers" --dist loadfile --no-loadscope-reorder)
[ "$workers" = "0" ] && parallel=()
for arg in "$@"; do
  case "$arg" in
    -s|--capture=no|--pdb|--trace|-n|-n[0-9]*|--numprocesses*|no:xdist|-p\ no:xdist) parallel=() ;;
  esac
done
exec .venv/bin/python -m pytest "${parallel[@]}" "$@"
