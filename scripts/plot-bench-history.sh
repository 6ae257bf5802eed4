#!/usr/bin/env bash
# Draws Benchmarks/history.png from Benchmarks/results.md. matplotlib comes from PyPI into a
# git-ignored virtual environment (.venv-plot), made on first use.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv-plot/bin/python ]; then
    python3 -m venv .venv-plot
    .venv-plot/bin/pip install --quiet matplotlib
fi
.venv-plot/bin/python scripts/plot-bench-history.py
