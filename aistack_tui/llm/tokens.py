"""Fast token estimates for budgeting, compaction and providers without a counter.

Exact counts need the provider's tokenizer (tiktoken downloads its vocabularies over
the network, which fails offline) or a round trip; budgeting runs before every turn, so
it needs something instant that errs on the high side. English and code average about
four characters per token; CJK and other non-Latin scripts come closer to one token per
character, so those count extra.
"""

from __future__ import annotations

import json
import math
from typing import assert_type

from aistack_tui.llm.types import (
    ImageBlock,
    LLMRequest,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)

CHARS_PER_TOKEN = 4.0
IMAGE_TOKENS = 1600
"""Anthropic bills an image at about width*height/750 tokens and downsizes anything
beyond ~1.15 megapixels, so 1600 is the ceiling; estimating the ceiling keeps the
budget safe without decoding the image."""
MESSAGE_OVERHEAD = 4
"""Role markers and separators each message costs in every provider's template."""
TOOL_OVERHEAD = 10


def estimate_tokens(text: str) -> int:
    """Estimated tokens of `text`: ~4 ASCII characters per token, ~1 per wider character."""
    if not text:
        return 0
    ascii_chars = sum(1 for ch in text if ord(ch) < 128) if not text.isascii() else len(text)
    wide_chars = len(text) - ascii_chars
    return math.ceil(ascii_chars / CHARS_PER_TOKEN + wide_chars * 1.0)


def estimate_message_tokens(message: Message) -> int:
    total = MESSAGE_OVERHEAD
    for block in message.content:
        if isinstance(block, TextBlock):
            total += estimate_tokens(block.text)
        elif isinstance(block, ThinkingBlock):
            total += estimate_tokens(block.thinking)
        elif isinstance(block, ImageBlock):
            total += IMAGE_TOKENS
        elif isinstance(block, ToolUseBlock):
            total += TOOL_OVERHEAD + estimate_tokens(block.name)
            total += estimate_tokens(json.dumps(block.input, ensure_ascii=False))
        else:
            assert_type(block, ToolResultBlock)  # the type checker sees every kind handled
            total += TOOL_OVERHEAD
            if isinstance(block.content, str):
                total += estimate_tokens(block.content)
            else:
                for part in block.content:
                    if isinstance(part, ImageBlock):
                        total += IMAGE_TOKENS
                    else:
                        total += estimate_tokens(part.text)
    return total


def estimate_request_tokens(request: LLMRequest) -> int:
    """Estimated input tokens of a whole request: system prompt, tool definitions, messages."""
    total = estimate_tokens(request.system)
    for tool in request.tools:
        total += TOOL_OVERHEAD + estimate_tokens(tool.name) + estimate_tokens(tool.description)
        total += estimate_tokens(json.dumps(tool.input_schema, ensure_ascii=False))
    return total + sum(estimate_message_tokens(m) for m in request.messages)
