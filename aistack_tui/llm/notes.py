"""Which text of a user message the person typed, and which is for the model only.

A user message carries more than the prompt: notes a front end adds for the model (an
undo, a `!command` and its output, all tagged `<user-...>`), `@`-attached files and
injected context. Those are separate text blocks starting with a known tag. Everything
that shows a prompt back to a person (a transcript, a resumed session, a checkpoint's
label, the prompt put back by a rewind, a session's title) uses `typed_text`, so the
model's notes never leak into it.
"""

from __future__ import annotations

from aistack_tui.llm.types import Message, TextBlock

MODEL_ONLY_TAGS = ("<user-", '<attached-file path="', "<context>")
"""How a block the model reads but the user did not type starts."""


def is_model_only(text: str) -> bool:
    """A text block written for the model (a tagged note, a file, context)."""
    return text.lstrip().startswith(MODEL_ONLY_TAGS)


def typed_text(message: Message) -> str:
    """The text the user typed in `message` (its untagged text blocks, in order)."""
    parts = [
        block.text
        for block in message.content
        if isinstance(block, TextBlock) and block.text.strip() and not is_model_only(block.text)
    ]
    return "\n\n".join(parts)
