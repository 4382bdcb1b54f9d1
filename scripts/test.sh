#!/usr/bin/env bash
# Sets everything up, then runs the whole suite: lint, unit, AppTest and browser tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --browser
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
.venv/bin/ruff check .
exec .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
