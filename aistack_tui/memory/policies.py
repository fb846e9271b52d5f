"""The three policies of the seed's memory design, as plain rules (no LLM call).

- `RetrievalPolicy`: when to retrieve (a new user prompt with content words) and what
  (the prompt's text; how many memories and past-session messages; how similar a vector
  neighbour must be to count).
- `WritePolicy`: what to keep from a finished turn: user corrections and preferences
  ("always use pnpm", "we deploy with fly.io, never heroku"), decisions the assistant
  announced, errors and the actions that fixed them, and one episodic event per turn.
- `BudgetPolicy`: a token budget per layer, spent in priority order (pinned + profile,
  task state, summary, then relevant memories and past sessions); what a layer leaves
  unused flows to the next.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from aistack_tui.llm.tokens import estimate_tokens
from aistack_tui.llm.types import Message, TextBlock, ToolResultBlock, ToolUseBlock
from aistack_tui.memory.models import Kind
from aistack_tui.memory.retrieval import query_terms

# --- retrieval --------------------------------------------------------------------------


def latest_user_prompt(messages: list[Message]) -> Message | None:
    """The last user message that carries text (tool-result messages are not prompts)."""
    for message in reversed(messages):
        if message.role == "user" and any(
            isinstance(b, TextBlock) and b.text.strip() for b in message.content
        ):
            return message
    return None


@dataclass(frozen=True, slots=True)
class RetrievalPolicy:
    max_memories: int = 6
    max_session_hits: int = 3
    min_similarity: float = 0.3
    """Cosine a vector-only neighbour needs to be injected. 0.3 suits the hashing
    embedder (unrelated texts score ~0.0-0.15); provider embedders are set higher."""
    search_similarity: float = 0.1
    """The lower bar for ranked search results (MemorySearch, the CLI): there the
    user or model sees scores and picks, so recall matters more than precision."""
    min_terms: int = 1

    def query_for(self, messages: list[Message]) -> tuple[str, Message] | None:
        """The text to retrieve for, or None when there is nothing worth looking up
        ("ok", "thanks", "continue" have no content words)."""
        prompt = latest_user_prompt(messages)
        if prompt is None:
            return None
        text = prompt.text().strip()
        if len(query_terms(text)) < self.min_terms:
            return None
        return text, prompt


# --- writing ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Extracted:
    content: str
    kind: Kind
    importance: float
    source: str
    message_id: str | None = None


_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+|;\s+")
_LEAD_IN = re.compile(
    r"^(?:(?:please|pls|fyi|btw|also|and|ok|okay|so|note|important)[,:]?\s+)+"
    r"|^(?:remember|keep in mind|note|for future reference)(?:\s+that)?[,:]?\s+",
    re.IGNORECASE,
)
_PERSONAL = re.compile(
    r"\b(?:i\s+(?:prefer|like|use|always|never|want you to|work)|i'm|i am|my\s+(?:name|email"
    r"|username|editor|shell|os|timezone|preference|preferred)|call me)\b",
    re.IGNORECASE,
)
_CORRECTION = re.compile(
    r"^(?:always|never)\b"
    r"|\b(?:always|never)\s+(?:use|run|call|deploy|commit|push|write|add|put|prefer|do|ask"
    r"|format|test|touch|edit|modify|change|install|import|mock|rely|merge|rebase)\b"
    r"|\b(?:from now on|going forward|in (?:the )?future|remember(?: that)?|keep in mind"
    r"|for future reference)\b"
    r"|\b(?:don't|do not|never)\s+ever\b|\bstop\s+using\b|\bavoid\s+using\b"
    r"|\bwe\s+(?:use|deploy|host|run|build|ship|prefer|always|never|don't|do not|test"
    r"|release|publish|target|support|store|keep|require|follow)\b"
    r"|\bour\s+\w+(?:\s+\w+)?\s+(?:is|are|uses|runs|lives|live|goes|go)\b"
    r"|\buse\s+\S+\s+(?:instead of|rather than|not)\b"
    r"|\bprefer\s+\S+\s+(?:over|to)\b",
    re.IGNORECASE,
)
_STRONG = re.compile(r"\b(?:always|never|from now on|remember|don't ever)\b", re.IGNORECASE)
_DECISION = re.compile(
    r"\b(?:decided to|decision:|we(?:'ll| will) go with|going with|settled on|opted for"
    r"|chose to|switched (?:to|from))\b",
    re.IGNORECASE,
)
SENTENCE_MAX = 300
SENTENCE_MIN = 8


def _sentences(text: str) -> list[str]:
    out: list[str] = []
    for raw in _SENTENCE.split(text):
        sentence = " ".join(raw.split()).strip(" -*>")
        if SENTENCE_MIN <= len(sentence) <= SENTENCE_MAX and not sentence.endswith("?"):
            out.append(sentence)
    return out


def _shorten(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _call_key(use: ToolUseBlock) -> str:
    """What identifies "the same action" when it is retried: the command or the path."""
    args = use.input
    for key in ("command", "file_path", "path", "pattern", "url", "query"):
        value = args.get(key)
        if isinstance(value, str) and value:
            return value[:160]
    return ""


def _describe_call(use: ToolUseBlock) -> str:
    key = _call_key(use)
    if use.name == "Bash":
        return f"Bash `{_shorten(key, 100)}`"
    return f"{use.name} {_shorten(key, 100)}".strip()


def _error_line(result: ToolResultBlock) -> str:
    lines = [line.strip() for line in result.text().splitlines() if line.strip()]
    for line in reversed(lines):
        if re.search(r"error|fail|exception|not found|denied|traceback", line, re.IGNORECASE):
            return _shorten(line, 200)
    return _shorten(lines[-1], 200) if lines else "(no output)"


@dataclass(frozen=True, slots=True)
class WritePolicy:
    """Rule-based extraction from the messages of the turn that just finished."""

    max_decisions: int = 2
    record_events: bool = True

    def turn_messages(self, messages: list[Message]) -> list[Message]:
        """The finished turn: from the last user prompt (with text) to the end."""
        prompt = latest_user_prompt(messages)
        if prompt is None:
            return []
        for index in range(len(messages) - 1, -1, -1):
            if messages[index] is prompt:
                return messages[index:]
        return []

    def extract(self, messages: list[Message]) -> list[Extracted]:
        turn = self.turn_messages(messages)
        if not turn:
            return []
        found: list[Extracted] = []
        prompt = turn[0]
        found.extend(self._corrections(prompt))
        found.extend(self._decisions(turn))
        fixes, errors, calls = self._errors_and_fixes(turn)
        found.extend(fixes)
        if self.record_events:
            found.append(self._event(prompt, turn, calls, errors))
        return found

    def _corrections(self, prompt: Message) -> list[Extracted]:
        out: list[Extracted] = []
        for sentence in _sentences(prompt.text()):
            if not _CORRECTION.search(sentence) and not _PERSONAL.search(sentence):
                continue
            content = _LEAD_IN.sub("", sentence).strip()
            if len(content) < SENTENCE_MIN:
                continue
            content = content[0].upper() + content[1:]
            personal = bool(_PERSONAL.search(content)) and not re.search(
                r"\b(?:we|our|us)\b", content, re.IGNORECASE
            )
            out.append(
                Extracted(
                    content=content,
                    kind="profile" if personal else "semantic",
                    importance=0.9 if _STRONG.search(content) else 0.7,
                    source="policy:correction" if not personal else "policy:preference",
                    message_id=prompt.id,
                )
            )
        return out

    def _decisions(self, turn: list[Message]) -> list[Extracted]:
        out: list[Extracted] = []
        for message in turn:
            if message.role != "assistant":
                continue
            for sentence in _sentences(message.text()):
                if _DECISION.search(sentence) and len(out) < self.max_decisions:
                    out.append(
                        Extracted(
                            content=f"Decision: {sentence}",
                            kind="semantic",
                            importance=0.5,
                            source="policy:decision",
                            message_id=message.id,
                        )
                    )
        return out

    def _errors_and_fixes(
        self, turn: list[Message]
    ) -> tuple[list[Extracted], list[str], list[str]]:
        """Fixes (an error, the actions after it, then the same call succeeding), the
        errors left unfixed, and a description of every call in order."""
        uses: dict[str, ToolUseBlock] = {}
        pending: dict[tuple[str, str], tuple[str, int, str | None]] = {}
        calls: list[str] = []
        fixes: list[Extracted] = []
        for message in turn:
            for block in message.content:
                if isinstance(block, ToolUseBlock):
                    uses[block.id] = block
                    calls.append(_describe_call(block))
                elif isinstance(block, ToolResultBlock) and block.tool_use_id in uses:
                    use = uses[block.tool_use_id]
                    key = (use.name, _call_key(use))
                    if block.is_error:
                        pending.setdefault(key, (_error_line(block), len(calls), message.id))
                    elif key in pending:
                        error, at, msg_id = pending.pop(key)
                        between = [c for c in calls[at : len(calls) - 1] if c != calls[at - 1]]
                        how = "; ".join(dict.fromkeys(between)) or "retrying"
                        fixes.append(
                            Extracted(
                                content=(
                                    f"Error fixed: {calls[at - 1]} failed with "
                                    f'"{error}"; fixed by {_shorten(how, 240)}.'
                                ),
                                kind="semantic",
                                importance=0.6,
                                source=f"tool:{use.name}",
                                message_id=msg_id,
                            )
                        )
        errors = [f"{name} `{_shorten(key, 80)}`: {err}" for (name, key), (err, _, _) in
                  pending.items()]
        return fixes, errors, calls

    def _event(
        self, prompt: Message, turn: list[Message], calls: list[str], errors: list[str]
    ) -> Extracted:
        answer = ""
        for message in reversed(turn):
            if message.role == "assistant" and message.text().strip():
                answer = message.text().strip().splitlines()[0]
                break
        counts: dict[str, int] = {}
        for call in calls:
            counts[call] = counts.get(call, 0) + 1
        did = ", ".join(f"{c} ×{n}" if n > 1 else c for c, n in list(counts.items())[:8])
        parts = [f"User asked: {_shorten(prompt.text(), 160)}"]
        if did:
            parts.append(f"actions: {_shorten(did, 300)}")
        if errors:
            parts.append(f"unresolved errors: {_shorten('; '.join(errors), 240)}")
        if answer:
            parts.append(f"answer: {_shorten(answer, 200)}")
        return Extracted(
            content=" | ".join(parts),
            kind="episodic",
            importance=0.35 if errors else 0.2,
            source="policy:event",
            message_id=prompt.id,
        )


# --- budget -------------------------------------------------------------------------------


@dataclass(slots=True)
class Section:
    key: str
    title: str
    items: list[str]


@dataclass(frozen=True, slots=True)
class BudgetPolicy:
    """Shares of the memory budget per layer, spent in this order."""

    shares: dict[str, float] = field(
        default_factory=lambda: {
            "profile": 0.25,
            "task": 0.15,
            "summary": 0.2,
            "relevant": 0.25,
            "sessions": 0.15,
        }
    )

    def render(self, sections: list[Section], token_budget: int) -> str:
        """The sections that fit, each under its share plus what earlier ones left."""
        if token_budget <= 0:
            return ""
        order = {key: i for i, key in enumerate(self.shares)}
        spent = 0
        carry = 0.0
        blocks: list[str] = []
        for section in sorted(sections, key=lambda s: order.get(s.key, len(order))):
            allowance = self.shares.get(section.key, 0.0) * token_budget + carry
            header = f"## {section.title}"
            used = estimate_tokens(header) + 1
            lines: list[str] = []
            for item in section.items:
                cost = estimate_tokens(item) + 1
                if used + cost > allowance or spent + used + cost > token_budget:
                    room = int(min(allowance - used, token_budget - spent - used)) - 2
                    if not lines and room >= 16:
                        lines.append(_shorten(item, room * 4))
                        used += room
                    break
                lines.append(item)
                used += cost
            if lines:
                blocks.append("\n".join([header, *lines]))
                spent += used
                carry = max(0.0, allowance - used)
            else:
                carry = allowance
        return "\n\n".join(blocks)
