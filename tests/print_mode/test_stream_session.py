"""One session driven over stdin (stream-json input) in-process, against the fake LLM
server through the real SDK: turns stay in one conversation, control requests are
answered while a turn runs, and bad input ends the session with exit 2."""

from __future__ import annotations

import asyncio
import io
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aistack_tui.print_mode.stream_session import StreamOptions, run_stream_session
from aistack_tui.session.config import make_run_config
from fakes.fake_llm import FakeLLMServer, Turn

MODEL = "anthropic/claude-sonnet-4-6"


class Output(io.StringIO):
    """stdout as the client reads it: one JSON object a line."""

    def __init__(self) -> None:
        super().__init__()
        self.objects: list[dict[str, Any]] = []

    def write(self, s: str) -> int:
        self.objects += [json.loads(line) for line in s.splitlines() if line.strip()]
        return super().write(s)


class Wire:
    """The client's ends: a pipe to write stdin lines into, and the captured stdout."""

    def __init__(self) -> None:
        read_fd, self._write_fd = os.pipe()
        self.stdin = os.fdopen(read_fd, "rb")
        self.out = Output()
        self.err = io.StringIO()

    def send(self, obj: dict[str, Any] | str) -> None:
        text = obj if isinstance(obj, str) else json.dumps(obj)
        os.write(self._write_fd, (text + "\n").encode())

    def user(self, text: str) -> None:
        self.send({"type": "user", "session_id": "", "parent_tool_use_id": None,
                   "message": {"role": "user", "content": text}})

    def control(self, request_id: str, subtype: str, **body: Any) -> None:
        self.send({"type": "control_request", "request_id": request_id,
                   "request": {"subtype": subtype, **body}})

    def close(self) -> None:
        os.close(self._write_fd)

    async def wait_for(self, pred: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        for _ in range(1000):
            found = [o for o in self.out.objects if pred(o)]
            if found:
                return found[-1]
            await asyncio.sleep(0.01)
        raise AssertionError(f"not seen; stdout: {self.out.objects}, stderr: {self.err.getvalue()}")

    async def response(self, request_id: str) -> dict[str, Any]:
        line = await self.wait_for(lambda o: o["type"] == "control_response"
                                   and o["response"]["request_id"] == request_id)
        return line["response"]

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [o for o in self.out.objects if o["type"] == kind]


def serve(server: FakeLLMServer, wire: Wire, options: StreamOptions | None = None
          ) -> asyncio.Task[int]:
    env = {**os.environ, **server.env("anthropic")}
    home = Path(env["AISTACK_HOME"])
    (home / "settings.json").write_text(json.dumps({"retry": {"base_delay": 0.01}}))
    config = make_run_config(env=env, model=MODEL, no_memory=True, no_knowledge=True)
    return asyncio.create_task(run_stream_session(
        config, options or StreamOptions(), stdin=wire.stdin, out=wire.out, err=wire.err))


async def test_two_turns_share_one_conversation_and_each_gets_init_and_result(
    git_repo: Path,
) -> None:
    wire = Wire()
    with FakeLLMServer([Turn(text="first answer"), Turn(text="second answer")]) as server:
        task = serve(server, wire)
        wire.user("remember the word kiwi")
        first = await wire.wait_for(lambda o: o["type"] == "result")
        wire.user("which word?")
        wire.close()
        assert await asyncio.wait_for(task, 30) == 0
        second_request = server.model_requests[1].body
    assert first["result"] == "first answer" and first["subtype"] == "success"
    results = wire.of_type("result")
    assert [r["result"] for r in results] == ["first answer", "second answer"]
    inits = [o for o in wire.out.objects if o.get("subtype") == "init"]
    assert len(inits) == 2 and inits[0]["session_id"] == inits[1]["session_id"]
    assert inits[0]["claude_code_version"]
    # The second request carries the first turn: the session stayed open between them.
    sent = json.dumps(second_request["messages"])
    assert "remember the word kiwi" in sent and "first answer" in sent
    kinds = [o["type"] for o in wire.out.objects]
    assert kinds == ["system", "assistant", "result", "system", "assistant", "result"]


async def test_control_requests_change_mode_and_model_and_report_mcp(git_repo: Path) -> None:
    wire = Wire()
    with FakeLLMServer([Turn(text="on haiku")]) as server:
        task = serve(server, wire)
        wire.control("r1", "initialize", hooks=None)
        assert (await wire.response("r1"))["subtype"] == "success"
        wire.control("r2", "set_permission_mode", mode="plan")
        assert (await wire.response("r2"))["response"] == {"mode": "plan"}
        wire.control("r3", "set_permission_mode", mode="auto")
        refused = await wire.response("r3")
        assert refused["subtype"] == "error" and "auto" in refused["error"]
        wire.control("r4", "set_model", model="claude-haiku-4-5")
        assert (await wire.response("r4"))["response"] == {
            "model": "anthropic/claude-haiku-4-5"}
        wire.control("r4b", "set_model", model="openai/gpt-4.1")
        no_key = await wire.response("r4b")
        assert no_key["subtype"] == "error" and "OPENAI_API_KEY" in no_key["error"]
        wire.control("r5", "mcp_status")
        assert (await wire.response("r5"))["response"] == {"mcpServers": []}
        wire.control("r6", "no_such_request")
        unknown = await wire.response("r6")
        assert unknown["subtype"] == "error" and "no_such_request" in unknown["error"]
        wire.user("hello")
        wire.close()
        assert await asyncio.wait_for(task, 30) == 0
        body = server.model_requests[0].body
    assert body["model"] == "claude-haiku-4-5"
    init = next(o for o in wire.out.objects if o.get("subtype") == "init")
    assert init["permission_mode"] == "plan"
    assert init["model"] == "anthropic/claude-haiku-4-5"


async def test_initialize_with_hooks_of_an_unknown_event_is_refused(git_repo: Path) -> None:
    wire = Wire()
    with FakeLLMServer([]) as server:
        task = serve(server, wire)
        wire.control("r1", "initialize", hooks={"PermissionRequest": [
            {"matcher": "Bash", "hookCallbackIds": ["hook_0"]}]})
        answer = await wire.response("r1")
        wire.close()
        assert await asyncio.wait_for(task, 30) == 0
    assert answer["subtype"] == "error"
    assert "PermissionRequest" in answer["error"]


async def test_partial_messages_stream_before_the_assistant_line(git_repo: Path) -> None:
    wire = Wire()
    with FakeLLMServer([Turn(text="streamed in pieces", chunk_size=4)]) as server:
        task = serve(server, wire, StreamOptions(include_partial=True))
        wire.user("go")
        wire.close()
        assert await asyncio.wait_for(task, 30) == 0
    kinds = [o["type"] for o in wire.out.objects]
    assert kinds[0] == "system" and kinds[-2:] == ["assistant", "result"]
    events = [o["event"] for o in wire.of_type("stream_event")]
    text = "".join(e["delta"]["text"] for e in events if e["type"] == "content_block_delta")
    assert text == "streamed in pieces"
    assert events[0]["type"] == "message_start" and events[-1]["type"] == "message_stop"


async def test_a_malformed_line_ends_the_session_with_exit_2(git_repo: Path) -> None:
    wire = Wire()
    with FakeLLMServer([Turn(text="never asked")]) as server:
        task = serve(server, wire)
        wire.send("this is not json")
        wire.user("hello")
        code = await asyncio.wait_for(task, 30)
        wire.close()
        assert server.model_requests == []
    assert code == 2
    assert "stdin: not a JSON object" in wire.err.getvalue()
    assert wire.of_type("result") == []
