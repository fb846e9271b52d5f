"""FakeLLMServer: a scripted, protocol-faithful stand-in for the Anthropic Messages,
OpenAI Chat Completions and Gemini generateContent APIs on 127.0.0.1.

The official SDKs talk to it unmodified through their base URLs, so adapter and runtime
tests exercise the SDKs' real parsing, stream accumulation and error classes. One queue
of turns is shared by all three formats; each model request takes the next turn (or the
next of its faults first). Usage::

    with FakeLLMServer([Turn(text="hi"), Turn(tool_calls=[ToolCall("Read", {"path": "a"})])]) as s:
        env = s.env("anthropic")   # ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY
        ...
        assert s.requests[0].body["messages"][0]["content"] == "hello"

CLI (for tmux end-to-end tests and benchmarks)::

    python -m fakes.fake_llm --script turns.json [--port N] [--port-file F]
                                   [--requests-log F.jsonl]
"""

from __future__ import annotations

import argparse
import contextlib
import socket
import sys
import threading
from pathlib import Path
from types import TracebackType
from typing import Any

import uvicorn

from fakes.fake_llm_app import EXHAUSTED_MESSAGE, FakeLLMApp, Script
from fakes.fake_llm_types import (
    Fault,
    Provider,
    RecordedRequest,
    ScriptError,
    ToolCall,
    Turn,
    load_script,
    turn_from_json,
)
from fakes.threaded_server import ThreadedServer, uvicorn_config

__all__ = [
    "EXHAUSTED_MESSAGE",
    "FakeLLMServer",
    "Fault",
    "RecordedRequest",
    "ScriptError",
    "ToolCall",
    "Turn",
    "load_script",
    "turn_from_json",
]

FAKE_API_KEY = "fake-key"


class FakeLLMServer:
    """A fake LLM server running uvicorn in a background thread with its own event loop,
    so it serves sync tests, async tests and subprocesses alike."""

    def __init__(self, turns: list[Turn] | None = None, models: list[str] | None = None) -> None:
        """`models`: ids the models endpoints list instead of the recorded answers
        (`fakes/fake_models.py`)."""
        self._script = Script()
        self._script.add(turns or [])
        self._models = models
        self._app = FakeLLMApp(self._script, models)
        self._served = ThreadedServer(self._app.app, "fake-llm")
        self.port = 0

    # -------------------------------------------------------------- script

    def add(self, *turns: Turn) -> None:
        """Queue more turns after those already scripted."""
        self._script.add(turns)

    def set_models(self, provider: Provider, entries: list[dict[str, Any]]) -> None:
        """Replace what one format's models endpoint lists (entries in its wire shape)."""
        self._app.catalogues[provider] = entries

    def set_models_answer(self, *, delay: float = 0.0, status: int | None = None) -> None:
        """Make Anthropic's models endpoint slow (`delay` seconds) or fail (`status`)."""
        self._app.models_delay, self._app.models_status = delay, status

    def reset(self) -> None:
        """Forget queued turns and recorded requests, so one running server can serve
        many tests (starting and stopping uvicorn costs ~0.15 s each); the models
        endpoints list what they listed at the start again."""
        self._script.reset()
        self._app.reset_catalogues(self._models)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received, in order (model requests and count-tokens alike)."""
        with self._script.lock:
            return list(self._script.requests)

    @property
    def model_requests(self) -> list[RecordedRequest]:
        """Only the requests that consumed the script (turn, fault or exhausted)."""
        return [r for r in self.requests if r.is_model_request]

    @property
    def remaining(self) -> int:
        """Turns not yet served (a turn with unused faults still counts)."""
        return self._script.remaining

    # -------------------------------------------------------------- lifecycle

    @property
    def url(self) -> str:
        if not self.port:
            raise RuntimeError("FakeLLMServer is not started")
        return f"http://127.0.0.1:{self.port}"

    def start(self, port: int = 0) -> FakeLLMServer:
        """Bind 127.0.0.1 (a free port unless given) and serve in a daemon thread; returns
        once the server accepts connections."""
        if self._served.running:
            raise RuntimeError("FakeLLMServer already started")
        self.port = self._served.start(port)
        return self

    def stop(self) -> None:
        """Release hanging responses, shut uvicorn down and wait for its thread."""
        self._script.stopping.set()
        self._served.stop()

    def __enter__(self) -> FakeLLMServer:
        return self if self._served.running else self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def env(self, provider: Provider) -> dict[str, str]:
        """Environment variables pointing that provider's SDK (and aistack) here."""
        if provider == "anthropic":
            return {"ANTHROPIC_BASE_URL": self.url, "ANTHROPIC_API_KEY": FAKE_API_KEY}
        if provider == "openai":
            return {"OPENAI_BASE_URL": self.url + "/v1", "OPENAI_API_KEY": FAKE_API_KEY}
        if provider == "google":
            return {"GOOGLE_GEMINI_BASE_URL": self.url, "GEMINI_API_KEY": FAKE_API_KEY}
        raise ValueError(f"unknown provider {provider!r}; expected anthropic, openai or google")


# ------------------------------------------------------------------ CLI


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fakes.fake_llm",
                                     description="Serve a scripted fake LLM on 127.0.0.1.")
    parser.add_argument("--script", required=True, type=Path,
                        help="JSON list of turns (fields as in Turn; faults as objects)")
    parser.add_argument("--port", type=int, default=0, help="port to bind (default: a free one)")
    parser.add_argument("--port-file", type=Path, help="write the bound port here once serving")
    parser.add_argument("--requests-log", type=Path, help="append each request as a JSON line")
    args = parser.parse_args(argv)
    try:
        turns = load_script(args.script.read_text(encoding="utf-8"), str(args.script))
    except OSError as e:
        print(f"fake_llm: cannot read {args.script}: {e.strerror}", file=sys.stderr)
        return 2
    except ScriptError as e:
        print(f"fake_llm: {e}", file=sys.stderr)
        return 2

    script = Script()
    script.add(turns)
    app = FakeLLMApp(script)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", args.port))
    except OSError as e:
        print(f"fake_llm: cannot bind 127.0.0.1:{args.port}: {e.strerror}", file=sys.stderr)
        return 2
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn_config(app.app, port))
    with contextlib.ExitStack() as stack:
        if args.requests_log:
            script.requests_log = stack.enter_context(args.requests_log.open("a", encoding="utf-8"))
        watcher = threading.Thread(target=_announce, args=(server, port, args.port_file),
                                   daemon=True)
        watcher.start()
        server.run(sockets=[sock])  # uvicorn handles SIGINT/SIGTERM in the main thread
        script.stopping.set()
    return 0


def _announce(server: uvicorn.Server, port: int, port_file: Path | None) -> None:
    """Once serving, publish the port (atomically, so a reader never sees half a file)."""
    while not server.started and not server.should_exit:
        threading.Event().wait(0.01)
    if port_file is not None:
        tmp = port_file.with_name(port_file.name + ".tmp")
        tmp.write_text(str(port), encoding="utf-8")
        tmp.replace(port_file)
    print(f"fake LLM serving on http://127.0.0.1:{port}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
