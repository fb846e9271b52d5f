"""FakeHttpSink: an HTTP endpoint on 127.0.0.1 that records every request's headers and
answers 404, to prove what a client did (or did not) send somewhere."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeHttpSink:
    def __init__(self) -> None:
        self.requests: list[dict[str, str]] = []
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def _record(self) -> None:
                sink.requests.append(dict(self.headers.items()))
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_POST = do_DELETE = _record

            def log_message(self, format: str, *args: Any) -> None:
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/mcp"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeHttpSink:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
