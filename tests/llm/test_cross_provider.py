"""A session whose history came from several providers replays to each of them: ids,
thinking and tool results are translated so every server accepts the history."""

from __future__ import annotations

import pytest

from aistack_tui.llm.types import (
    LLMRequest,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from fakes.fake_llm import FakeLLMServer, ToolCall, Turn
from tests.llm.conftest import PROVIDERS, ProviderFactory
from tests.llm.test_requests import camel
from tests.llm.test_streaming import READ


async def test_history_from_each_provider_replays_to_every_other(
    fake: FakeLLMServer, make_provider: ProviderFactory
) -> None:
    # Build a real mixed history: each provider answers one turn with a thinking block
    # and a tool call, and the tool result goes back to the next provider.
    history: list[Message] = [Message.user("Inspect the project.")]
    request_bodies: dict[str, dict] = {}
    for step, name in enumerate(PROVIDERS * 2):
        fake.add(Turn(thinking=f"step {step} reasoning", text=f"Step {step}.",
                      tool_calls=[ToolCall("Read", {"file_path": f"f{step}.py"})]))
        message = await make_provider(name).complete(
            LLMRequest(system="sys", messages=history, tools=[READ])
        )
        request_bodies[name] = fake.model_requests[-1].body
        assert message.provider == name
        (use,) = message.tool_uses()
        history.append(message)
        history.append(Message(role="user", content=[
            ToolResultBlock(tool_use_id=use.id, content=f"contents of f{step}.py")]))

    ids = [b.id for m in history for b in m.content if isinstance(b, ToolUseBlock)]
    assert ids[0].startswith("toolu_")
    assert ids[1].startswith("call_")

    # The last request of each provider carried the whole mixed history; check that
    # every call is paired with its result in that provider's own terms.
    anthropic = request_bodies["anthropic"]["messages"]
    calls = [b["id"] for m in anthropic for b in m["content"] if b["type"] == "tool_use"]
    results = [b["tool_use_id"] for m in anthropic for b in m["content"]
               if b["type"] == "tool_result"]
    assert calls == results == ids[: len(calls)]
    thinking = [b for m in anthropic for b in m["content"] if b["type"] == "thinking"]
    assert thinking, "Anthropic's own signed thinking is replayed"
    assert all(b["signature"] for b in thinking)
    assert len(thinking) == 1, "thinking from OpenAI and Gemini is not sent to Anthropic"

    openai = request_bodies["openai"]["messages"]
    call_ids = [c["id"] for m in openai for c in m.get("tool_calls", [])]
    tool_ids = [m["tool_call_id"] for m in openai if m["role"] == "tool"]
    assert call_ids == tool_ids
    assert all(len(i) <= 40 for i in call_ids)
    assert not any("reasoning" in str(m) for m in openai)

    google = camel(request_bodies["google"])["contents"]
    calls_g = [p["functionCall"] for c in google for p in c["parts"] if "functionCall" in p]
    responses = [p["functionResponse"] for c in google for p in c["parts"]
                 if "functionResponse" in p]
    assert [c["id"] for c in calls_g] == [r["id"] for r in responses]
    assert {r["name"] for r in responses} == {"Read"}
    # Only Gemini's own thought signature goes back, on the part that carried it.
    signed = [p for c in google for p in c["parts"] if "thoughtSignature" in p]
    assert len(signed) == 1


@pytest.mark.parametrize("name", PROVIDERS)
async def test_anthropic_style_history_with_thinking_replays(
    name: str, fake: FakeLLMServer, make_provider: ProviderFactory
) -> None:
    history = [
        Message.user("fix it"),
        Message(role="assistant", provider="anthropic", model="claude-opus-4-5", content=[
            ThinkingBlock(thinking="I should read the file.", signature="EqQBCkYIBxgC"),
            TextBlock(text="Let me look."),
            ToolUseBlock(id="toolu_01XFDUDYJgAACzvnptvVoYEL", name="Read",
                         input={"file_path": "main.py"}),
        ]),
        Message(role="user", content=[ToolResultBlock(
            tool_use_id="toolu_01XFDUDYJgAACzvnptvVoYEL", content="print('hi')")]),
    ]
    fake.add(Turn(text="It prints hi."))
    message = await make_provider(name).complete(LLMRequest(messages=history, tools=[READ]))
    assert message.text() == "It prints hi."
    body = str(fake.model_requests[-1].body)
    assert "toolu_01XFDUDYJgAACzvnptvVoYEL" in body
    assert ("EqQBCkYIBxgC" in body) == (name == "anthropic")
