"""Lines a stream-json client writes on stdin, parsed into typed values."""

from __future__ import annotations

import asyncio
import json
import os

import pytest

from aistack_tui.llm.types import ImageBlock, TextBlock
from aistack_tui.print_mode.stream_input import (
    ControlReply,
    ControlRequest,
    Ignored,
    InputError,
    StdinLines,
    UserTurn,
    parse_line,
)


def line(obj: object) -> str:
    return json.dumps(obj)


def test_user_message_with_string_content_is_a_turn() -> None:
    item = parse_line(line({"type": "user", "session_id": "", "parent_tool_use_id": None,
                            "message": {"role": "user", "content": "fix the test"}}))
    assert item == UserTurn("fix the test")


def test_user_message_with_text_and_image_blocks_keeps_both() -> None:
    item = parse_line(line({"type": "user", "message": {"role": "user", "content": [
        {"type": "text", "text": "what is this?"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg",
                                     "data": "AAAA"}},
    ]}}))
    assert isinstance(item, UserTurn)
    assert item.content == [TextBlock(text="what is this?"),
                            ImageBlock(media_type="image/jpeg", data="AAAA")]


def test_control_request_carries_its_id_subtype_and_body() -> None:
    item = parse_line(line({"type": "control_request", "request_id": "req_1",
                            "request": {"subtype": "set_permission_mode", "mode": "plan"}}))
    assert item == ControlRequest("req_1", "set_permission_mode",
                                  {"subtype": "set_permission_mode", "mode": "plan"})


def test_control_response_success_and_error() -> None:
    ok = parse_line(line({"type": "control_response", "response": {
        "subtype": "success", "request_id": "aistack_1", "response": {"behavior": "allow"}}}))
    assert ok == ControlReply("aistack_1", ok=True, body={"behavior": "allow"})
    bad = parse_line(line({"type": "control_response", "response": {
        "subtype": "error", "request_id": "aistack_2", "error": "callback raised"}}))
    assert bad == ControlReply("aistack_2", ok=False, error="callback raised")


def test_blank_lines_and_keep_alive_ask_nothing() -> None:
    assert parse_line("   \n") is None
    assert parse_line(b'{"type": "keep_alive"}\n') == Ignored("keep_alive")


@pytest.mark.parametrize(("text", "says"), [
    ("not json", "not a JSON object"),
    ("[1, 2]", "expected a JSON object"),
    ('{"type": "assistant", "message": {}}', "unsupported message type 'assistant'"),
    ('{"type": "user", "message": {"content": []}}', "must be a string or a list"),
    ('{"type": "user", "message": {"content": [{"type": "tool_result"}]}}',
     "unsupported content block 'tool_result'"),
    ('{"type": "user", "message": {"content": [{"type": "image", "source": {"type": "url"}}]}}',
     "only base64 image sources"),
    ('{"type": "control_request", "request": {"subtype": "interrupt"}}', "needs request_id"),
    ('{"type": "control_response", "response": {"subtype": "success"}}', "without request_id"),
])
def test_malformed_lines_say_what_is_wrong(text: str, says: str) -> None:
    with pytest.raises(InputError, match=says):
        parse_line(text)


async def test_stdin_lines_reads_a_pipe_until_it_closes() -> None:
    read_fd, write_fd = os.pipe()
    with os.fdopen(read_fd, "rb") as reader:
        lines = StdinLines(reader)
        os.write(write_fd, b'{"type": "keep_alive"}\n{"type": ')
        first = await asyncio.wait_for(lines.next(), 5)
        assert first == b'{"type": "keep_alive"}\n'
        os.write(write_fd, b'"user"}\n')
        os.close(write_fd)
        assert await asyncio.wait_for(lines.next(), 5) == b'{"type": "user"}\n'
        assert await asyncio.wait_for(lines.next(), 5) is None
