"""Run the fake backend in-process on 127.0.0.1 (tests, demo scripts): uvicorn in a thread."""

from __future__ import annotations

import socket
import threading
import time
from types import TracebackType

import uvicorn
from starlette.applications import Starlette


class ServerThread:
    """`with ServerThread(app) as url:` serves `app` on a free port and stops it afterwards."""

    def __init__(self, app: Starlette, host: str = "127.0.0.1", port: int = 0) -> None:
        self.app = app
        self.host = host
        self.port = port
        config = uvicorn.Config(app, log_level="warning", lifespan="off", timeout_graceful_shutdown=1, access_log=False)
        self.server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None
        self._sock: socket.socket | None = None

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self, timeout: float = 10.0) -> str:
        """Binds first (so the port is known), then waits at most `timeout` s for uvicorn to be serving."""
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, self.port))
        self.port = sock.getsockname()[1]
        self._sock = sock
        self._thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]}, name="fake-backend", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"fake backend did not start on {self.url} within {timeout:g} s")
            time.sleep(0.02)
        return self.url

    def stop(self) -> None:
        self.server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._sock is not None:
            self._sock.close()

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()
