"""The token estimate is instant and errs high, counting tools and images sensibly."""

from __future__ import annotations

from aistack_tui.llm.tokens import IMAGE_TOKENS, estimate_request_tokens, estimate_tokens
from aistack_tui.llm.types import (
    ImageBlock,
    LLMRequest,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)


def test_estimate_tokens_is_about_four_characters_per_token() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("a" * 4000) == 1000
    prose = "The quick brown fox jumps over the lazy dog. " * 100
    assert 0.8 * len(prose) / 4 <= estimate_tokens(prose) <= 1.2 * len(prose) / 4


def test_wide_scripts_cost_more_per_character() -> None:
    assert estimate_tokens("你好世界" * 100) >= 400
    assert estimate_tokens("你好世界" * 100) > estimate_tokens("abcd" * 100)


def test_request_estimate_counts_system_tools_messages_and_images() -> None:
    base = LLMRequest(messages=[Message.user("hello")])
    with_system = base.model_copy(update={"system": "x" * 4000})
    tool = ToolSpec(name="Read", description="Read a file " * 50,
                    input_schema={"type": "object", "properties": {"p": {"type": "string"}}})
    with_tools = base.model_copy(update={"tools": [tool]})
    image = Message(role="user", content=[ImageBlock(media_type="image/png", data="AAAA")])
    with_image = LLMRequest(messages=[image])

    assert estimate_request_tokens(with_system) >= estimate_request_tokens(base) + 1000
    assert estimate_request_tokens(with_tools) >= estimate_request_tokens(base) + 150
    assert estimate_request_tokens(with_image) >= IMAGE_TOKENS


def test_tool_calls_and_results_are_counted() -> None:
    messages = [
        Message(role="assistant", content=[
            TextBlock(text="ok"),
            ToolUseBlock(id="t1", name="Write", input={"content": "y" * 4000}),
        ]),
        Message(role="user", content=[
            ToolResultBlock(tool_use_id="t1", content="z" * 4000),
            ToolResultBlock(tool_use_id="t2", content=[
                TextBlock(text="w" * 400), ImageBlock(media_type="image/png", data="AA")]),
        ]),
    ]
    total = estimate_request_tokens(LLMRequest(messages=messages))
    assert total >= 1000 + 1000 + 100 + IMAGE_TOKENS
