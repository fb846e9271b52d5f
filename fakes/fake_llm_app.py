"""The fake LLM's ASGI app: routes for the three APIs, the shared script queue, and a
response class that can pause, drop the TCP connection mid-body, or hang.

Dropping the connection relies on uvicorn's h11 protocol closing the transport when an
ASGI app returns before finishing its body: the client then sees an incomplete chunked
read, exactly as with a real proxy reset, never a clean end of stream."""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import threading
from collections import deque
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from fakes import fake_llm_search as search_wire
from fakes import fake_llm_wire as wire
from fakes.fake_llm_types import Fault, Provider, RecordedRequest, Served, Turn
from fakes.fake_models import catalogues_from_ids, recorded_catalogues

EXHAUSTED_MESSAGE = "fake LLM script exhausted"
_FILLER = "Partial answer that will never finish because the connection drops. "
_INCOMPLETE = "ASGI callable returned without completing response."


class _QuietCuts(logging.Filter):
    """Drops uvicorn's complaint about the bodies we leave unfinished on purpose."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != _INCOMPLETE


logging.getLogger("uvicorn.error").addFilter(_QuietCuts())

End = Literal["complete", "cut", "hang"]


@dataclass
class Plan:
    """What one response does on the wire: frames, then complete, drop or hang."""

    status: int
    headers: dict[str, str]
    frames: list[wire.Frame]
    end: End = "complete"
    cut_after_chars: int = -1  # with end="cut": drop before the first text frame past this
    delay: float = 0.0


class PlanResponse(Response):
    """Executes a Plan with raw ASGI sends, which Starlette's responses cannot do
    (they always finish the body)."""

    def __init__(self, plan: Plan, stopping: threading.Event) -> None:
        self.plan = plan
        self.stopping = stopping
        self.background = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        plan = self.plan
        headers = [(k.lower().encode(), v.encode()) for k, v in plan.headers.items()]
        await send({"type": "http.response.start", "status": plan.status, "headers": headers})
        sent_chars = 0
        for i, frame in enumerate(plan.frames):
            if plan.end == "cut" and frame.text_chars and sent_chars >= plan.cut_after_chars:
                return  # uvicorn closes the transport: the peer sees a truncated body
            if i and plan.delay:
                await asyncio.sleep(plan.delay)
            if self.stopping.is_set():
                return
            await send({"type": "http.response.body", "body": frame.data, "more_body": True})
            sent_chars += frame.text_chars
        if plan.end == "cut":
            return
        if plan.end == "hang":
            await self._hang(receive)
            return
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _hang(self, receive: Receive) -> None:
        """Wait until the client disconnects or the server stops; send nothing."""
        waiter = asyncio.ensure_future(receive())
        try:
            while not self.stopping.is_set():
                done, _ = await asyncio.wait({waiter}, timeout=0.05)
                if done:
                    if waiter.result().get("type") == "http.disconnect":
                        return
                    waiter = asyncio.ensure_future(receive())
        finally:
            waiter.cancel()


@dataclass
class _Slot:
    turn: Turn
    faults: deque[Fault] = field(default_factory=deque)


class Script:
    """The queue of turns shared by every format, and the record of every request."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.slots: deque[_Slot] = deque()
        self.requests: list[RecordedRequest] = []
        self.ids = itertools.count(1)
        self.stopping = threading.Event()
        self.requests_log: Any = None  # an open text file, set by the CLI

    def add(self, turns: tuple[Turn, ...] | list[Turn]) -> None:
        with self.lock:
            self.slots.extend(_Slot(t, deque(t.faults)) for t in turns)

    def reset(self) -> None:
        with self.lock:
            self.slots.clear()
            self.requests.clear()

    @property
    def remaining(self) -> int:
        with self.lock:
            return len(self.slots)

    def record(self, rec: RecordedRequest) -> None:
        with self.lock:
            self.requests.append(rec)

    def log(self, rec: RecordedRequest) -> None:
        """Append the finished record to the CLI's requests log, if any."""
        with self.lock:
            if self.requests_log is not None:
                self.requests_log.write(json.dumps(rec.to_json()) + "\n")
                self.requests_log.flush()

    def take(self) -> tuple[Served, Fault | Turn | None, Turn | None]:
        """Pop what the next model request gets: a fault (with the turn it precedes),
        the turn itself, or nothing when the script is used up."""
        with self.lock:
            if not self.slots:
                return "exhausted", None, None
            slot = self.slots[0]
            if slot.faults:
                return "fault", slot.faults.popleft(), slot.turn
            self.slots.popleft()
            return "turn", slot.turn, slot.turn

    def next_id(self) -> int:
        with self.lock:
            return next(self.ids)


def _estimate_tokens(obj: Any) -> int:
    return max(1, len(json.dumps(obj, ensure_ascii=False)) // 4) if obj else 1


def _prompt_of(fmt: Provider, body: dict[str, Any]) -> Any:
    if fmt == "google":
        return [body.get("contents"), body.get("systemInstruction"), body.get("tools")]
    return [body.get("system"), body.get("messages"), body.get("tools")]


_ID_PREFIX = {"anthropic": ("msg_fake", "toolu_fake"), "openai": ("chatcmpl-fake", "call_fake"),
              "google": ("resp-fake", "fc_fake")}


def build_reply(script: Script, fmt: Provider, model: str, body: dict[str, Any], turn: Turn,
                malformed: bool = False) -> wire.Reply:
    msg_prefix, call_prefix = _ID_PREFIX[fmt]
    calls = []
    for tc in turn.tool_calls:
        args_json = json.dumps(tc.input, ensure_ascii=False)
        calls.append(wire.Call(tc.id or f"{call_prefix}_{script.next_id():04d}", tc.name,
                               tc.input, args_json))
    if malformed:
        calls = [wire.Call(f"{call_prefix}_{script.next_id():04d}", "Write", {},
                           wire.MALFORMED_ARGS)]
    out_size = len(turn.text) + len(turn.thinking) + sum(len(c.args_json) for c in calls)
    input_tokens, output_tokens = turn.usage or (
        _estimate_tokens(_prompt_of(fmt, body)), max(1, out_size // 4))
    return wire.Reply(
        model=model, message_id=f"{msg_prefix}_{script.next_id():04d}", text=turn.text,
        thinking=turn.thinking, calls=calls, input_tokens=input_tokens,
        output_tokens=output_tokens, cache_read=turn.cache_read_tokens,
        chunk_size=turn.chunk_size, malformed=malformed, search=turn.search)


def _json_plan(status: int, body: Any, headers: dict[str, str] | None = None) -> Plan:
    data = json.dumps(body).encode()
    return Plan(status, {"content-type": "application/json", "content-length": str(len(data)),
                         **(headers or {})}, [wire.Frame(data)])


def error_plan(fmt: Provider, status: int, message: str | None = None,
               retry_after: float | None = None) -> Plan:
    body = {"anthropic": wire.anthropic_error, "openai": wire.openai_error,
            "google": wire.google_error}[fmt](status, message)
    headers: dict[str, str] = {}
    if retry_after is not None:
        headers["retry-after"] = f"{retry_after:g}"
    if fmt == "anthropic":
        headers["request-id"] = "req_fake"
    return _json_plan(status, body, headers)


_SSE_HEADERS = {"content-type": "text/event-stream", "cache-control": "no-cache"}


def _stream_frames(fmt: Provider, reply: wire.Reply, body: dict[str, Any]) -> list[wire.Frame]:
    if fmt == "anthropic":
        return wire.anthropic_stream(reply)
    if fmt == "openai":
        include = bool((body.get("stream_options") or {}).get("include_usage"))
        return wire.openai_stream(reply, include)
    return wire.google_stream(reply)


def _body_of(fmt: Provider, reply: wire.Reply, responses: bool = False) -> dict[str, Any]:
    usage = (reply.input_tokens, reply.output_tokens)
    if responses:
        return search_wire.openai_response(reply.model, reply.message_id, reply.text,
                                           reply.search, usage)
    if reply.search is not None and fmt == "google":
        return search_wire.google_search_response(reply.model, reply.message_id,
                                                  reply.search, usage)
    if reply.search is not None and fmt == "anthropic":
        body = wire.anthropic_body(reply)
        body["content"] = search_wire.anthropic_search_content(
            reply.search, f"srvtoolu_{reply.message_id}")
        body["usage"]["server_tool_use"] = search_wire.anthropic_server_usage()
        body["stop_reason"] = "pause_turn" if reply.search.pause_turn else "end_turn"
        return body
    return {"anthropic": wire.anthropic_body, "openai": wire.openai_body,
            "google": wire.google_body}[fmt](reply)


def turn_plan(fmt: Provider, reply: wire.Reply, body: dict[str, Any], stream: bool,
              delay: float, responses: bool = False) -> Plan:
    if stream:
        return Plan(200, dict(_SSE_HEADERS), _stream_frames(fmt, reply, body), delay=delay)
    plan = _json_plan(200, _body_of(fmt, reply, responses))
    plan.delay = delay
    return plan


def fault_plan(script: Script, fmt: Provider, model: str, body: dict[str, Any], stream: bool,
               fault: Fault, pending: Turn | None) -> Plan:
    if fault.kind == "http":
        return error_plan(fmt, fault.status, retry_after=fault.retry_after)
    base = pending if pending is not None and pending.respond is None else Turn()
    if fault.kind == "malformed_tool_json":
        reply = build_reply(script, fmt, model, body, Turn(chunk_size=base.chunk_size),
                            malformed=True)
        if fault.raw_args is not None:
            reply.calls[0].args_json = fault.raw_args
        return turn_plan(fmt, reply, body, stream, base.delay)
    if fault.kind == "hang":
        ctype = "text/event-stream" if stream else "application/json"
        return Plan(200, {"content-type": ctype}, [], end="hang")
    if fault.kind == "in_stream_overloaded":
        if not stream:
            return error_plan(fmt, 529 if fmt == "anthropic" else 503, "Overloaded")
        reply = build_reply(script, fmt, model, body, Turn())
        frames = {"anthropic": wire.anthropic_in_stream_overloaded,
                  "openai": wire.openai_in_stream_overloaded,
                  "google": wire.google_in_stream_overloaded}[fmt](reply)
        return Plan(200, dict(_SSE_HEADERS), frames)
    # "cut": stream the text of the turn it precedes (or filler) and drop mid-way.
    after = max(0, fault.after_chars)
    text = base.text or _FILLER
    while len(text) < after + 2 * base.chunk_size + 1:
        text += _FILLER
    size = min(base.chunk_size, after) if after else base.chunk_size
    reply = build_reply(script, fmt, model, body, Turn(text=text, chunk_size=size))
    plan = turn_plan(fmt, reply, body, stream, base.delay)
    if stream:
        plan.end, plan.cut_after_chars = "cut", after
    else:
        # Promise the whole body, deliver half of it, then drop the connection.
        data = plan.frames[0].data
        plan.frames = [wire.Frame(data[: len(data) // 2])]
        plan.end = "cut"
    return plan


class FakeLLMApp:
    """Routes requests to the script and renders answers; one instance per server."""

    def __init__(self, script: Script, models: list[str] | None = None) -> None:
        self.script = script
        self.catalogues: dict[str, list[dict[str, Any]]] = {}
        self.models_delay = 0.0
        self.models_status: int | None = None
        """Anthropic's models endpoint answers after `models_delay` s, with this error."""
        self.reset_catalogues(models)
        self.app = Starlette(routes=[
            Route("/v1/messages", self.anthropic_messages, methods=["POST"]),
            Route("/v1/messages/count_tokens", self.anthropic_count, methods=["POST"]),
            Route("/v1/chat/completions", self.openai_chat, methods=["POST"]),
            Route("/v1/responses", self.openai_responses, methods=["POST"]),
            Route("/v1/models", self.list_models, methods=["GET"]),
            Route("/{version}/models", self.google_models, methods=["GET"]),
            Route("/{version}/models/{target:path}", self.google, methods=["POST"]),
        ])

    def reset_catalogues(self, models: list[str] | None) -> None:
        """What the models endpoints list, by format: the recorded answers, or minimal
        entries for the given ids."""
        self.catalogues = recorded_catalogues() if models is None else catalogues_from_ids(models)
        self.models_delay, self.models_status = 0.0, None

    async def _record(self, fmt: Provider, request: Request) -> tuple[RecordedRequest, Plan | None]:
        raw = await request.body()
        body: Any = None
        problem: Plan | None = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw.decode("utf-8", "replace")
                problem = error_plan(fmt, 400, "request body is not valid JSON")
        rec = RecordedRequest(format=fmt, method=request.method, path=request.url.path,
                              query=dict(request.query_params),
                              headers={k.lower(): v for k, v in request.headers.items()},
                              body=body)
        if problem is None and not rec.api_key:
            problem = error_plan(fmt, 401, "no API key in the request")
            rec.served = "unauthorized"
        if problem is None and body is not None and not isinstance(body, dict):
            problem = error_plan(fmt, 400, "request body must be a JSON object")
        self.script.record(rec)
        return rec, problem

    async def _model_request(self, fmt: Provider, request: Request, model: str | None,
                             stream: bool, responses: bool = False) -> Response:
        rec, problem = await self._record(fmt, request)
        rec.stream = stream
        if problem is not None:
            return self._reply(rec, problem)
        body: dict[str, Any] = rec.body or {}
        model = model or str(body.get("model") or "fake-model")
        served, item, pending = self.script.take()
        rec.served = served
        if served == "exhausted":
            plan = error_plan(fmt, 500, EXHAUSTED_MESSAGE)
        elif isinstance(item, Fault):
            rec.fault = item
            plan = fault_plan(self.script, fmt, model, body, stream, item, pending)
        else:
            assert isinstance(item, Turn)
            turn = item
            try:
                if turn.respond is not None:
                    turn = replace(turn.respond(rec), faults=[], respond=None)
            except Exception as e:
                # A broken test callback must fail the test loudly, not as a bare 500.
                return self._reply(rec, error_plan(fmt, 500, f"fake LLM respond() failed: {e!r}"))
            rec.turn = turn
            reply = build_reply(self.script, fmt, model, body, turn)
            plan = turn_plan(fmt, reply, body, stream, turn.delay, responses)
        return self._reply(rec, plan)

    def _reply(self, rec: RecordedRequest, answer: Plan | Response) -> Response:
        self.script.log(rec)
        if isinstance(answer, Plan):
            return PlanResponse(answer, self.script.stopping)
        return answer

    async def anthropic_messages(self, request: Request) -> Response:
        stream = await self._stream_flag(request)
        return await self._model_request("anthropic", request, None, stream)

    async def openai_chat(self, request: Request) -> Response:
        stream = await self._stream_flag(request)
        return await self._model_request("openai", request, None, stream)

    async def openai_responses(self, request: Request) -> Response:
        """The Responses API (what OpenAI's web search needs); answered whole, since
        the search call does not stream."""
        return await self._model_request("openai", request, None, False, responses=True)

    async def _stream_flag(self, request: Request) -> bool:
        try:
            body = json.loads(await request.body() or b"{}")
        except ValueError:
            return False
        return isinstance(body, dict) and body.get("stream") is True

    async def anthropic_count(self, request: Request) -> Response:
        rec, problem = await self._record("anthropic", request)
        if problem is not None:
            return self._reply(rec, problem)
        tokens = _estimate_tokens(_prompt_of("anthropic", rec.body or {}))
        return self._reply(rec, JSONResponse({"input_tokens": tokens}))

    async def list_models(self, request: Request) -> Response:
        """`GET /v1/models`: Anthropic's and OpenAI's share the path; the SDK's headers
        tell them apart (Gemini's, with `api_version="v1"`, too)."""
        headers = request.headers
        if "anthropic-version" in headers:
            return await self.anthropic_models(request)
        if "x-goog-api-key" in headers:
            return await self.google_models(request)
        rec, problem = await self._record("openai", request)
        if problem is not None:
            return self._reply(rec, problem)
        data = self.catalogues["openai"]
        return self._reply(rec, JSONResponse({"object": "list", "data": data}))

    async def anthropic_models(self, request: Request) -> Response:
        """Pages as the API does: `limit` (default 20), `after_id` / `before_id` cursors,
        `has_more`, `first_id`, `last_id`."""
        rec, problem = await self._record("anthropic", request)
        if self.models_delay:
            await asyncio.sleep(self.models_delay)
        if problem is None and self.models_status is not None:
            problem = error_plan("anthropic", self.models_status)
        if problem is not None:
            return self._reply(rec, problem)
        models = self.catalogues["anthropic"]
        ids = [m["id"] for m in models]
        limit = max(1, min(1000, int(rec.query.get("limit", "20"))))
        start, end = 0, len(models)
        if "after_id" in rec.query and rec.query["after_id"] in ids:
            start = ids.index(rec.query["after_id"]) + 1
        if "before_id" in rec.query and rec.query["before_id"] in ids:
            end = ids.index(rec.query["before_id"])
            start = max(0, end - limit)
        page = models[start:min(end, start + limit)]
        body = {"data": page, "has_more": start + len(page) < end,
                "first_id": page[0]["id"] if page else None,
                "last_id": page[-1]["id"] if page else None}
        return self._reply(rec, JSONResponse(body))

    async def google_models(self, request: Request) -> Response:
        """Gemini `models.list`: `pageSize` (default 50), `pageToken`, `nextPageToken`."""
        rec, problem = await self._record("google", request)
        if problem is not None:
            return self._reply(rec, problem)
        models = self.catalogues["google"]
        size = max(1, min(1000, int(rec.query.get("pageSize", "50"))))
        start = int(rec.query.get("pageToken") or 0)
        body: dict[str, Any] = {"models": models[start:start + size]}
        if start + size < len(models):
            body["nextPageToken"] = str(start + size)
        return self._reply(rec, JSONResponse(body))

    async def google(self, request: Request) -> Response:
        version = request.path_params["version"]
        model, _, method = str(request.path_params["target"]).rpartition(":")
        if version not in ("v1", "v1beta", "v1alpha") or not model:
            return JSONResponse(wire.google_error(404, f"unknown path {request.url.path}"), 404)
        if method == "countTokens":
            rec, problem = await self._record("google", request)
            if problem is not None:
                return self._reply(rec, problem)
            tokens = _estimate_tokens(_prompt_of("google", rec.body or {}))
            return self._reply(rec, JSONResponse({"totalTokens": tokens}))
        if method not in ("generateContent", "streamGenerateContent"):
            return JSONResponse(wire.google_error(404, f"unsupported method {method}"), 404)
        return await self._model_request("google", request, model,
                                         method == "streamGenerateContent")
