#!/usr/bin/env bash
# Install Luskin into .venv and start the dashboard on the bundled Adult sample (http://localhost:8501).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/_venv.sh requirements.txt
# `luskin app` passes the settings of .streamlit/config.toml; options: --port, --address (default
# 127.0.0.1, this computer only; 0.0.0.0 to serve the network).
exec .venv/bin/luskin app --headless "$@"
