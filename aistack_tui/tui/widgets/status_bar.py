"""The bottom status line: model, permission mode, tokens and context %, cost, MCP.

It is a plain `Static` fed by reactive-free setters: the renderer calls `update_usage`
after each model response and the app calls `set_mode` / `set_model`, so the line is
rebuilt only when one of those changes (never per token).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.widgets import Static

MODE_LABELS = {
    "default": "default",
    "acceptEdits": "accept edits",
    "plan": "plan",
    "bypassPermissions": "bypass permissions",
}


def format_tokens(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 1000:
        return f"{n / 1000:.1f}k"
    return str(n)


@dataclass(slots=True)
class StatusState:
    model: str = ""
    mode: str = "default"
    busy: str = ""
    tokens: int = 0
    context_tokens: int = 0
    context_window: int = 0
    cost_usd: float | None = None
    mcp: str = ""
    hint: str = ""


class StatusBar(Static):
    """One line: `model · mode · 1.2k tok · ctx 3% · $0.0012 · MCP 2/2` plus any hint."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.state = StatusState()

    def on_mount(self) -> None:
        self.refresh_line()

    def refresh_line(self) -> None:
        s = self.state
        line = Text(no_wrap=True, overflow="ellipsis")
        if s.hint:  # first, so a narrow terminal never cuts it off
            line.append(s.hint, style="reverse")
            line.append("  ")
        if s.busy:
            line.append(f"● {s.busy}  ", style="bold")
        line.append(s.model or "no model", style="bold")
        line.append(" · ")
        line.append(f"⏵ {MODE_LABELS.get(s.mode, s.mode)}", style="italic")
        line.append(" (shift+tab)", style="dim")
        if s.tokens:
            line.append(f" · {format_tokens(s.tokens)} tok")
        if s.context_window:
            pct = 100 * s.context_tokens / s.context_window
            line.append(f" · ctx {pct:.0f}%")
        if s.cost_usd is not None:
            line.append(f" · ${s.cost_usd:.4f}")
        if s.mcp:
            line.append(f" · MCP {s.mcp}")
        self.update(line)

    def set_model(self, model: str) -> None:
        self.state.model = model
        self.refresh_line()

    def set_mode(self, mode: str) -> None:
        self.state.mode = mode
        self.refresh_line()

    def set_busy(self, busy: str) -> None:
        if busy != self.state.busy:
            self.state.busy = busy
            self.refresh_line()

    def set_hint(self, hint: str) -> None:
        self.state.hint = hint
        self.refresh_line()

    def set_mcp(self, mcp: str) -> None:
        self.state.mcp = mcp
        self.refresh_line()

    def update_usage(
        self, tokens: int, context_tokens: int, context_window: int, cost_usd: float | None
    ) -> None:
        s = self.state
        s.tokens, s.context_tokens, s.context_window = tokens, context_tokens, context_window
        s.cost_usd = cost_usd
        self.refresh_line()
