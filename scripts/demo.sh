#!/usr/bin/env bash
# Sets everything up, starts the local demo backend, and serves the dashboard on the bundled examples.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
PORT="${EVALDASH_PORT:-8501}"
BACKEND_PORT="${EVALDASH_BACKEND_PORT:-8765}"
export SYNTH_API_KEY="${SYNTH_API_KEY:-demo-key}"

backend_pid=""
if [ -d fake_backend ]; then
  .venv/bin/python -m fake_backend --port "$BACKEND_PORT" --key "$SYNTH_API_KEY" >/tmp/evaldash-demo-backend.log 2>&1 &
  backend_pid=$!
  trap '[ -n "$backend_pid" ] && kill "$backend_pid" 2>/dev/null || true' EXIT INT TERM
  export EVALDASH_SOURCES="examples,http://127.0.0.1:$BACKEND_PORT"
else
  export EVALDASH_SOURCES="examples"
fi
echo "evaldash: open http://localhost:$PORT"
.venv/bin/python -m streamlit run dashboard/app.py --server.port "$PORT" --server.headless true
