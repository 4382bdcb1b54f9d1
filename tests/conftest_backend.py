"""The fake synth backend on 127.0.0.1 for the backend tests: one uvicorn server per session, reset per test.

Registered for tests/unit by tests/unit/conftest.py; other folders can import them the same way.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from fake_backend import ServerThread, create_app
from loaders.sources.backend import BackendLoader

KEY = "sk-evaldash-test-KEY-9f8e7d6c5b4a"  # looks like a real key, so redaction and scrubbing are exercised


@dataclass
class Fake:
    """The running fake backend and its admin switches."""

    url: str

    def _admin(self, action: str, **body: Any) -> dict[str, Any]:
        response = httpx.post(f"{self.url}/_admin/{action}", json=body, timeout=5)
        response.raise_for_status()
        return response.json()

    def fault(self, mode: str, **kw: Any) -> None:
        self._admin("fault", mode=mode, **kw)

    def reset(self, seconds_per_seed: float = 3600.0) -> None:
        self._admin("reset", seconds_per_seed=seconds_per_seed)

    def advance(self, seeds: int = 1) -> None:
        self._admin("advance", seeds=seeds)

    def requests(self, path: str) -> int:
        """How many requests reached `path` (e.g. `/api/eval/jobs`) since the last reset."""
        return int(httpx.get(f"{self.url}/_admin/stats", timeout=5).json()["requests"].get(path, 0))


@pytest.fixture(scope="session")
def fake_server() -> Iterator[str]:
    """Live job advances only when told (`seconds_per_seed` huge), so tests are deterministic."""
    server = ServerThread(create_app(KEY, faults=True, seconds_per_seed=3600.0))
    server.start(timeout=10)
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture
def fake(fake_server: str) -> Iterator[Fake]:
    backend = Fake(fake_server)
    backend.reset()
    yield backend
    backend.reset()


@pytest.fixture
def make_loader(fake: Fake) -> Iterator[Callable[..., BackendLoader]]:
    """BackendLoader factory with a tiny backoff; closes every loader it made."""
    made: list[BackendLoader] = []

    def factory(source: str | None = None, **kw: Any) -> BackendLoader:
        kw.setdefault("api_key", KEY)
        kw.setdefault("backoff", 0.001)
        loader = BackendLoader(source or fake.url, **kw)
        made.append(loader)
        return loader

    yield factory
    for loader in made:
        loader.close()


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port
