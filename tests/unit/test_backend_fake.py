"""`python -m fake_backend` starts a real server (the demo's backend source) and stops cleanly."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.conftest_backend import closed_port

ROOT = Path(__file__).resolve().parents[2]


def test_module_entry_point_serves_fixture_jobs() -> None:
    port = closed_port()
    proc = subprocess.Popen([sys.executable, "-m", "fake_backend", "--port", str(port), "--key", "k-entry-0000"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 15
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None, proc.stdout.read().decode() if proc.stdout else "exited"
            assert time.monotonic() < deadline, "fake backend did not start within 15 s"
            time.sleep(0.1)
        jobs = httpx.get(f"{url}/api/eval/jobs", headers={"Authorization": "Bearer k-entry-0000"}, timeout=5).json()["jobs"]
        assert len(jobs) == 6
        assert httpx.get(f"{url}/api/eval/jobs", headers={"Authorization": "Bearer nope"}, timeout=5).status_code == 401
        assert httpx.post(f"{url}/_admin/fault", json={"mode": "500"}, timeout=5).status_code == 404  # no --faults
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_examples_folder_holds_no_api_bodies() -> None:
    assert not (ROOT / "examples" / "synth" / "backend").exists()
    assert (ROOT / "fake_backend" / "fixtures" / "api" / "list_eval_jobs.json").is_file()
