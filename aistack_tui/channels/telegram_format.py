"""Telegram's side of the text: Markdown answers as Telegram HTML, long answers split at
the message limit, approval prompts with their diff as a code block and three buttons.

Telegram rejects a message over 4096 characters (counted after the markup is parsed) and
any HTML it cannot parse, so everything the model wrote is escaped and only the markup we
make ourselves reaches it: code fences become `<pre><code>`, inline code `<code>`,
`**bold**` `<b>`. Splitting is stable while an answer streams: once a message is full, its
text never changes again, so earlier messages need no more edits.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

MAX_MESSAGE_CHARS = 4096
CHUNK_CHARS = 4000
"""Source characters per message: the rendered text is never longer than its source
(markup we add is invisible), and the margin covers a reopened code fence."""
APPROVAL_DIFF_CHARS = 3000

_FENCE = re.compile(r"^(```+|~~~+)[ \t]*([\w+#.-]*)[^\n]*$", re.MULTILINE)
_INLINE = re.compile(r"`([^`\n]+)`|\*\*([^*\n]+)\*\*")


def escape(text: str) -> str:
    return html.escape(text, quote=False)


@dataclass(frozen=True, slots=True)
class Chunk:
    """One message's share of the answer; `fence` is the language of a code block the
    chunk starts inside (None when it starts in plain text)."""

    text: str
    fence: str | None = None


def split_chunks(text: str, limit: int = CHUNK_CHARS) -> list[Chunk]:
    """Split at paragraph, then line, then word breaks so each part fits one message."""
    chunks: list[Chunk] = []
    fence: str | None = None
    rest = text
    while len(rest) > limit:
        cut = _break_at(rest, limit)
        part, rest = rest[:cut], rest[cut:]
        chunks.append(Chunk(part, fence))
        fence = _fence_after(part, fence)
    chunks.append(Chunk(rest, fence))
    return chunks


def _break_at(text: str, limit: int) -> int:
    window = text[:limit]
    for sep in ("\n\n", "\n", " "):
        at = window.rfind(sep)
        if at > limit // 2:
            return at + len(sep)
    return limit


def _fence_after(text: str, fence: str | None) -> str | None:
    """Whether `text` (starting inside `fence`, or not) ends inside a code block."""
    for match in _FENCE.finditer(text):
        fence = None if fence is not None else (match.group(2) or "")
    return fence


def render(chunk: Chunk) -> str:
    """Telegram HTML for one chunk; an unclosed code block is closed at its end."""
    out: list[str] = []
    fence = chunk.fence
    code: list[str] = []
    pos = 0
    text = chunk.text
    for match in _FENCE.finditer(text):
        segment = text[pos:match.start()]
        if fence is None:
            out.append(_inline(segment))
            fence = match.group(2) or ""
            code = []
        else:
            code.append(segment)
            out.append(_pre("".join(code), fence))
            fence = None
        pos = match.end() + 1  # the fence line's newline
    tail = text[pos:] if pos <= len(text) else ""
    if fence is None:
        out.append(_inline(tail))
    elif "".join([*code, tail]).strip():
        out.append(_pre("".join([*code, tail]), fence))
    return "".join(out).strip() or "…"


def _pre(code: str, language: str) -> str:
    code = code.strip("\n")
    attr = f' class="language-{escape(language)}"' if language else ""
    return f"<pre><code{attr}>{escape(code) or ' '}</code></pre>\n"


def _inline(text: str) -> str:
    out: list[str] = []
    pos = 0
    for match in _INLINE.finditer(text):
        out.append(escape(text[pos:match.start()]))
        if match.group(1) is not None:
            out.append(f"<code>{escape(match.group(1))}</code>")
        else:
            out.append(f"<b>{escape(match.group(2))}</b>")
        pos = match.end()
    out.append(escape(text[pos:]))
    return "".join(out)


def render_all(text: str) -> list[str]:
    """The whole answer as the messages that show it."""
    return [render(chunk) for chunk in split_chunks(text)]


# ------------------------------------------------------------------------ approvals

APPROVAL_CHOICES: tuple[tuple[str, str], ...] = (
    ("once", "Yes"),
    ("session", "Yes, this session"),
    ("reject", "No"),
)


def approval_text(tool_name: str, summary: str, reason: str, diff: str,
                  warnings: tuple[str, ...] = ()) -> str:
    """The approval prompt: what the tool wants, why it asks, and the diff of an edit."""
    lines = [f"🔐 <b>{escape(tool_name)}</b> needs your approval",
             f"<code>{escape(summary)}</code>"]
    if reason:
        lines.append(escape(reason))
    lines += [f"⚠️ {escape(w)}" for w in warnings]
    body = "\n".join(lines)
    if diff:
        shown = diff
        if len(shown) > APPROVAL_DIFF_CHARS:
            more = shown[APPROVAL_DIFF_CHARS:].count("\n") + 1
            shown = shown[:APPROVAL_DIFF_CHARS].rsplit("\n", 1)[0] + f"\n… {more} more lines"
        body += f'\n<pre><code class="language-diff">{escape(shown)}</code></pre>'
    return body


def approval_result_text(prompt_html: str, choice: str) -> str:
    """The prompt once answered (its buttons are taken away)."""
    said = {"once": "✅ approved", "session": "✅ approved for this session",
            "reject": "❌ denied", "withdrawn": "⏹ not answered (stopped)"}.get(choice, choice)
    return f"{prompt_html}\n<i>{said}</i>"


def callback_data(token: str, choice: str) -> str:
    """Button data, within Telegram's 64 bytes: `ap:<token>:<choice>`."""
    return f"ap:{token}:{choice}"


def parse_callback(data: str) -> tuple[str, str] | None:
    parts = data.split(":")
    if len(parts) != 3 or parts[0] != "ap" or parts[2] not in dict(APPROVAL_CHOICES):
        return None
    return parts[1], parts[2]
