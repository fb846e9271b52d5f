"""Script semantics of the fake LLM: one queue across formats, faults before turns,
dynamic turns, loud exhaustion, request validation, and the command-line server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import anthropic
import httpx2
import openai
import pytest

from fakes.fake_llm import (
    EXHAUSTED_MESSAGE,
    FakeLLMServer,
    Fault,
    RecordedRequest,
    ScriptError,
    ToolCall,
    Turn,
    load_script,
)

ROOT = Path(__file__).resolve().parents[2]
MESSAGES = [{"role": "user", "content": "hello"}]


def ask_anthropic(server: FakeLLMServer, content: str = "hello") -> str:
    c = anthropic.Anthropic(base_url=server.url, api_key="k", max_retries=0)
    msg = c.messages.create(model="m", max_tokens=10,
                            messages=[{"role": "user", "content": content}])
    return msg.content[0].text


def ask_openai(server: FakeLLMServer) -> str | None:
    c = openai.OpenAI(base_url=server.url + "/v1", api_key="k", max_retries=0)
    return c.chat.completions.create(model="m", messages=MESSAGES).choices[0].message.content


def test_one_queue_is_shared_across_formats(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(text="first"), Turn(text="second"))
    assert fake_llm.remaining == 2
    assert ask_openai(fake_llm) == "first"
    assert ask_anthropic(fake_llm) == "second"
    assert [r.format for r in fake_llm.requests] == ["openai", "anthropic"]
    assert fake_llm.remaining == 0


def test_exhausted_script_fails_loudly(fake_llm: FakeLLMServer) -> None:
    with pytest.raises(anthropic.InternalServerError, match=EXHAUSTED_MESSAGE):
        ask_anthropic(fake_llm)
    with pytest.raises(openai.InternalServerError, match=EXHAUSTED_MESSAGE):
        ask_openai(fake_llm)
    assert [r.served for r in fake_llm.requests] == ["exhausted", "exhausted"]


def test_faults_are_served_one_per_request_before_their_turn(fake_llm: FakeLLMServer) -> None:
    faults = [Fault("http", status=529), Fault("http", status=500)]
    fake_llm.add(Turn(text="finally", faults=faults), Turn(text="next"))
    with pytest.raises(anthropic.OverloadedError):
        ask_anthropic(fake_llm)
    assert fake_llm.remaining == 2
    with pytest.raises(anthropic.InternalServerError):
        ask_anthropic(fake_llm)
    assert ask_anthropic(fake_llm) == "finally"
    assert ask_anthropic(fake_llm) == "next"
    assert [r.served for r in fake_llm.requests] == ["fault", "fault", "turn", "turn"]
    assert [r.fault.status for r in fake_llm.requests if r.fault] == [529, 500]


def test_dynamic_turn_is_built_from_the_request(fake_llm: FakeLLMServer) -> None:
    def echo(req: RecordedRequest) -> Turn:
        return Turn(text="you said: " + req.body["messages"][-1]["content"])

    fake_llm.add(Turn(respond=echo))
    assert ask_anthropic(fake_llm, "ping") == "you said: ping"
    assert fake_llm.requests[0].turn is not None
    assert fake_llm.requests[0].turn.text == "you said: ping"


def test_failing_dynamic_turn_is_reported_in_the_error(fake_llm: FakeLLMServer) -> None:
    def broken(req: RecordedRequest) -> Turn:
        raise KeyError("no such field")

    fake_llm.add(Turn(respond=broken))
    with pytest.raises(anthropic.InternalServerError, match="respond\\(\\) failed: KeyError"):
        ask_anthropic(fake_llm)


def test_requests_without_a_key_are_rejected_without_using_a_turn(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(text="kept"))
    r = httpx2.post(fake_llm.url + "/v1/messages", json={"model": "m", "messages": MESSAGES})
    assert r.status_code == 401
    assert r.json()["error"]["type"] == "authentication_error"
    assert fake_llm.requests[0].served == "unauthorized"
    assert fake_llm.remaining == 1


def test_invalid_json_body_gets_a_provider_shaped_400(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(text="kept"))
    r = httpx2.post(fake_llm.url + "/v1/chat/completions", content=b"{not json",
                    headers={"authorization": "Bearer k"})
    assert r.status_code == 400
    assert r.json()["error"]["type"] == "invalid_request_error"
    assert fake_llm.remaining == 1


def test_env_points_each_sdk_here(fake_llm: FakeLLMServer, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_llm.add(Turn(text="a"), Turn(text="o"))
    for key, value in {**fake_llm.env("anthropic"), **fake_llm.env("openai")}.items():
        monkeypatch.setenv(key, value)
    a = anthropic.Anthropic(max_retries=0).messages.create(model="m", max_tokens=5,
                                                           messages=MESSAGES)
    o = openai.OpenAI(max_retries=0).chat.completions.create(model="m", messages=MESSAGES)
    assert (a.content[0].text, o.choices[0].message.content) == ("a", "o")
    assert {r.api_key for r in fake_llm.requests} == {"fake-key"}
    with pytest.raises(ValueError, match="unknown provider"):
        fake_llm.env("mistral")  # type: ignore[arg-type]


def test_delay_spaces_out_the_chunks(fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(text="abcdefgh", chunk_size=2, delay=0.05))
    c = anthropic.Anthropic(base_url=fake_llm.url, api_key="k", max_retries=0)
    start = time.monotonic()
    with c.messages.stream(model="m", max_tokens=5, messages=MESSAGES) as s:
        text = "".join(s.text_stream)
    assert text == "abcdefgh"
    assert time.monotonic() - start >= 0.05 * 8


def test_stop_releases_a_hanging_response() -> None:
    server = FakeLLMServer([Turn(faults=[Fault("hang")])]).start()
    errors: list[BaseException] = []

    def call() -> None:
        try:
            ask_anthropic(server)
        except Exception as e:
            errors.append(e)

    t = threading.Thread(target=call)
    t.start()
    while not server.requests:
        time.sleep(0.01)
    start = time.monotonic()
    server.stop()
    t.join(5)
    assert not t.is_alive()
    assert time.monotonic() - start < 3
    assert len(errors) == 1
    assert isinstance(errors[0], anthropic.APIConnectionError)


def test_script_json_round_trip() -> None:
    turns = load_script(json.dumps([
        {"text": "hi", "usage": [3, 4], "chunk_size": 2},
        {"tool_calls": [{"name": "Read", "input": {"path": "a"}, "id": "t1"}],
         "faults": [{"kind": "http", "status": 429, "retry_after": 1}]},
    ]))
    assert turns[0] == Turn(text="hi", usage=(3, 4), chunk_size=2)
    assert turns[1].tool_calls == [ToolCall("Read", {"path": "a"}, id="t1")]
    assert turns[1].faults == [Fault("http", status=429, retry_after=1)]


@pytest.mark.parametrize(("text", "message"), [
    ("{", "invalid JSON at line 1"),
    ('{"text": "x"}', "expected a JSON list"),
    ('[{"txt": "x"}]', r"script\[0\]: unknown field\(s\) txt"),
    ('[{"faults": [{"kind": "boom"}]}]', r"script\[0\]\.faults\[0\]: kind must be one of"),
    ('[{"usage": [1]}]', r"script\[0\]\.usage: expected"),
    ('[{"tool_calls": [{"input": {}}]}]', r"tool_calls\[0\]: needs a string name"),
])
def test_bad_scripts_get_clear_errors(text: str, message: str) -> None:
    with pytest.raises(ScriptError, match=message):
        load_script(text)


def _cli(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "fakes.fake_llm", *args], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_cli_serves_a_script_file(tmp_path: Path) -> None:
    script = tmp_path / "turns.json"
    script.write_text(json.dumps([{"text": "from the cli"}]))
    port_file, log = tmp_path / "port", tmp_path / "requests.jsonl"
    proc = _cli("--script", str(script), "--port-file", str(port_file), "--requests-log", str(log))
    try:
        deadline = time.monotonic() + 20
        while not port_file.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.05)
        url = f"http://127.0.0.1:{port_file.read_text()}"
        c = openai.OpenAI(base_url=url + "/v1", api_key="k", max_retries=0)
        assert c.chat.completions.create(model="m", messages=MESSAGES).choices[0].message.content \
            == "from the cli"
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=10)
    # uvicorn re-raises the SIGTERM it handled once shut down cleanly.
    assert proc.returncode in (0, -signal.SIGTERM)
    assert "fake LLM serving on http://127.0.0.1:" in out
    record = json.loads(log.read_text().splitlines()[0])
    assert (record["format"], record["served"]) == ("openai", "turn")
    assert record["body"]["messages"] == MESSAGES


def test_cli_rejects_a_bad_script_without_a_traceback(tmp_path: Path) -> None:
    script = tmp_path / "bad.json"
    script.write_text('[{"text": 1, "colour": "red"}]')
    proc = _cli("--script", str(script))
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 2
    assert "unknown field(s) colour" in err
    assert "Traceback" not in err
    proc = _cli("--script", str(tmp_path / "missing.json"))
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 2
    assert "cannot read" in err
