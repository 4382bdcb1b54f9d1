"""Browser tests: a real `streamlit run` server per module, driven in Debian's Chromium."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.conftest import ROOT

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config, items):
    for item in items:
        if HERE in Path(item.path).resolve().parents:
            item.add_marker(pytest.mark.e2e)
            if not (shutil.which(CHROMIUM) or Path(CHROMIUM).exists()):
                item.add_marker(pytest.mark.skip(reason=f"{CHROMIUM} not installed (scripts/setup.sh --browser installs it)"))


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {**browser_type_launch_args, "executable_path": CHROMIUM,
            "args": ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync"]}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, url: str, log: Path, proc: subprocess.Popen) -> None:
        self.url, self.log, self.proc = url, log, proc

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


def start_server(log_dir: Path, sources: list[str], env: dict[str, str] | None = None) -> Server:
    port = free_port()
    log = log_dir / f"streamlit-{port}.log"
    full_env = {**os.environ, "EVALDASH_SOURCES": ",".join(sources), **(env or {})}
    with open(log, "w") as fh:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "dashboard/app.py", "--server.headless=true",
             "--server.address=127.0.0.1", f"--server.port={port}", "--browser.gatherUsageStats=false",
             "--server.fileWatcherType=none"],
            cwd=ROOT, env=full_env, stdout=fh, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        if proc.poll() is not None:
            raise RuntimeError("streamlit exited:\n" + log.read_text())
        try:
            if httpx.get(f"{url}/_stcore/health", timeout=1).text == "ok":
                return Server(url, log, proc)
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("streamlit not healthy in 60 s:\n" + log.read_text())
        time.sleep(0.2)


def stop_server(server: Server) -> None:
    server.proc.terminate()
    try:
        server.proc.wait(10)
    except subprocess.TimeoutExpired:
        server.proc.kill()


@pytest.fixture(scope="session")
def app_server(tmp_path_factory) -> Iterator[Server]:
    """One server on the bundled examples plus the test fixtures, shared by the e2e tests."""
    fixtures = ROOT / "tests" / "fixtures"
    server = start_server(tmp_path_factory.mktemp("e2e"), [str(ROOT / "examples"), str(fixtures / "evals")])
    yield server
    stop_server(server)


@pytest.fixture(scope="session")
def app_url(app_server: Server) -> str:
    return app_server.url


def wait_for_app_run(page: Page) -> None:
    """After navigation or a click: connected, script finished, no skeletons left."""
    page.wait_for_timeout(150)
    page.locator("[data-testid='stApp'][data-test-connection-state='CONNECTED']").wait_for(state="attached", timeout=30000)
    page.locator("[data-testid='stApp'][data-test-script-state='notRunning']").wait_for(state="attached", timeout=30000)
    expect(page.get_by_test_id("stSkeleton")).to_have_count(0, timeout=30000)


@pytest.fixture
def goto(page: Page, app_url: str) -> Callable[[str], Page]:
    def go(path: str) -> Page:
        page.goto(app_url + path)
        wait_for_app_run(page)
        return page

    return go


from tests.conftest_backend import fake, fake_server  # noqa: E402, F401  (the fake backend on 127.0.0.1)
