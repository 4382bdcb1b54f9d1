#!/usr/bin/env bash
# Idempotent setup for a fresh machine (Python 3.11, pip, root with apt) and quick on a re-run:
#   - a project venv in .venv with evaldash installed editable (+ dev tools)
#   - Debian's Chromium for the browser tests (only with --browser)
set -euo pipefail
cd "$(dirname "$0")/.."

want_browser=0
[ "${1:-}" = "--browser" ] && want_browser=1

if [ "$want_browser" = 1 ] && ! command -v chromium >/dev/null 2>&1; then
  echo "setup: installing Debian's chromium (browser tests)…"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi

PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv…"
  "$PY" -m venv .venv
fi

stamp=".venv/.evaldash-setup-$(sha256sum pyproject.toml | cut -c1-16)"
if [ ! -f "$stamp" ]; then
  echo "setup: installing evaldash and its dependencies into .venv…"
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e ".[dev]"
  rm -f .venv/.evaldash-setup-*
  touch "$stamp"
fi
