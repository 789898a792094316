#!/usr/bin/env bash
# Install Luskin into .venv and start the dashboard on the bundled Adult sample (http://localhost:8501).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/_venv.sh requirements.txt
exec .venv/bin/python -m streamlit run app.py --server.headless true --browser.gatherUsageStats false "$@"
