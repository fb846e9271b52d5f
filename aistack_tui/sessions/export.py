"""Export a session as Markdown (to read or share) or JSONL (one message per line)."""

from __future__ import annotations

import datetime as dt
import json

from aistack_tui.llm.types import (
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from aistack_tui.sessions.models import SessionInfo

MAX_RESULT_CHARS = 4000


def to_jsonl(messages: list[Message]) -> str:
    return "".join(m.model_dump_json() + "\n" for m in messages)


def to_markdown(info: SessionInfo, messages: list[Message]) -> str:
    when = dt.datetime.fromtimestamp(info.created_at).strftime("%Y-%m-%d %H:%M")
    out = [f"# {info.title or 'aistack session'}", "",
           f"Session `{info.id}` · {when} · {info.model} · {info.project_root}", ""]
    for message in messages:
        heading = "## User" if message.role == "user" else f"## Assistant ({message.model})"
        if message.role == "user" and message.tool_results() and not message.text():
            heading = "### Tool results"
        out += [heading, ""]
        for block in message.content:
            out += _block(block)
    return "\n".join(out).rstrip() + "\n"


def _block(block: object) -> list[str]:
    if isinstance(block, TextBlock):
        return [block.text, ""]
    if isinstance(block, ThinkingBlock):
        return [f"> *thinking:* {block.thinking}", ""] if block.thinking else []
    if isinstance(block, ToolUseBlock):
        return [f"**{block.name}**", "", "```json", json.dumps(block.input, indent=2), "```", ""]
    if isinstance(block, ToolResultBlock):
        text = block.text()
        if len(text) > MAX_RESULT_CHARS:
            text = text[:MAX_RESULT_CHARS] + f"\n… ({len(text) - MAX_RESULT_CHARS} more characters)"
        label = "error" if block.is_error else "result"
        fence = ["```", text, "```"]
        return [f"<details><summary>{label}</summary>", "", *fence, "", "</details>", ""]
    if isinstance(block, ImageBlock):
        return [f"*[image {block.media_type}]*", ""]
    return []
