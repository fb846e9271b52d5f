"""An ASGI app served by uvicorn on 127.0.0.1 in a daemon thread with its own event loop,
so a fake server answers sync tests, async tests and subprocesses alike."""

from __future__ import annotations

import socket
import threading
from typing import Any

import uvicorn


def uvicorn_config(app: Any, port: int) -> uvicorn.Config:
    # h11 explicitly: the fake LLM's "cut" fault depends on its close-on-unfinished-body
    # behaviour.
    return uvicorn.Config(app, host="127.0.0.1", port=port, http="h11", ws="none",
                          lifespan="off", access_log=False, log_level="warning",
                          timeout_graceful_shutdown=2)


class ThreadedServer:
    """One app, started and stopped; `port` is 0 until started."""

    def __init__(self, app: Any, name: str) -> None:
        self.app = app
        self.name = name
        self.port = 0
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._sock: socket.socket | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None

    def start(self, port: int = 0) -> int:
        """Bind (a free port unless given), serve, and return the port once the server
        accepts connections."""
        self._sock = sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        self.port = sock.getsockname()[1]
        self._server = server = uvicorn.Server(uvicorn_config(self.app, self.port))
        self._thread = threading.Thread(target=lambda: server.run(sockets=[sock]),
                                        name=f"{self.name}-{self.port}", daemon=True)
        self._thread.start()
        while not server.started:
            if not self._thread.is_alive():
                raise RuntimeError(f"{self.name} server failed to start")
            self._thread.join(0.01)
        return self.port

    def stop(self) -> None:
        """Shut uvicorn down and wait for its thread (hanging responses must be released
        by the caller first)."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(10)
        if self._sock is not None:
            self._sock.close()
        self._thread = self._server = self._sock = None
