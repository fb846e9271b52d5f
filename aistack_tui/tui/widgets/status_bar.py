"""The bottom status line: state, permission mode, context %, cost, model, tokens, MCP,
and whether the code index is being built.

It is a plain `Static` fed by reactive-free setters: the renderer calls `update_usage`
after each model response and the app calls `set_mode` / `set_model`, so the line is
rebuilt only when one of those changes (never per token) or the terminal is resized.

A narrow terminal drops the least useful fields first (the Shift+Tab reminder, tokens,
MCP, then the model's provider and the model itself), so what a user glances at —
what the agent is doing, the mode, how full the context is, what it has cost — stays
visible at 80 columns even while a hint such as "press Ctrl+C again" is showing.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.theme import Theme
from textual.timer import Timer
from textual.widgets import Static

STARTING = "starting…"
"""The state while the session opens (the model is not known yet, so none is shown)."""
MODE_LABELS = {
    "default": "default",
    "acceptEdits": "accept edits",
    "plan": "plan",
    "bypassPermissions": "bypass permissions",
}

MODE_TEXTS = {
    "default": "⏵ default",
    "acceptEdits": "⏵⏵ accept edits",
    "plan": "⏸ plan mode",
    "bypassPermissions": "⚠ BYPASS PERMISSIONS",
}
"""How each mode reads on the line; bypassPermissions is meant to be impossible to miss
(with NO_COLOR too: the warning sign and the capitals stay)."""


def mode_styles(theme: Theme | None = None) -> dict[str, str]:
    """A colour per mode from the theme's own colours, so every Textual theme keeps the
    modes apart: accent for accept edits, primary for plan, white on the error colour
    for bypassPermissions."""
    accent = theme.accent if theme is not None and theme.accent else "magenta"
    primary = theme.primary if theme is not None else "cyan"
    error = theme.error if theme is not None and theme.error else "red"
    return {
        "default": "dim",
        "acceptEdits": f"bold {accent}",
        "plan": f"bold {primary}",
        "bypassPermissions": f"bold #ffffff on {error}",
    }

SEPARATOR = " · "
COUNTDOWN_TICK_S = 0.25


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
    index: str = ""
    """What the code index is doing ("parsing"...), "" when idle."""
    hint: str = ""
    shells: int = 0
    """Background shells running (`/bashes`)."""


@dataclass(slots=True)
class _Field:
    """One part of the line: its texts from the fullest to the shortest, and how much it
    matters (the field with the lowest `keep` is shortened or dropped first)."""

    texts: list[str]
    style: str
    keep: int
    sep: str = SEPARATOR
    """What goes between it and the field before it."""
    choice: int = 0


def _fields(s: StatusState, styles: dict[str, str]) -> list[_Field]:
    fields: list[_Field] = []
    if s.hint:
        fields.append(_Field([s.hint], "reverse", 90, "  "))
    if s.busy:
        fields.append(_Field([f"● {s.busy}"], "bold", 100, "  "))
    mode_text = MODE_TEXTS.get(s.mode, f"⏵ {s.mode}")
    fields.append(_Field([mode_text], styles.get(s.mode, "bold"), 80, "  "))
    fields.append(_Field(["(shift+tab)"], "dim", 10, " "))
    if s.model or s.busy != STARTING:  # while the session opens, "● starting…" says it
        model = s.model or "no model"
        shorter = [model, model.split("/", 1)[-1], model.rsplit("/", 1)[-1]]
        fields.append(_Field(list(dict.fromkeys(shorter)), "bold", 40))
    if s.tokens:
        fields.append(_Field([f"{format_tokens(s.tokens)} tok"], "", 20))
    if s.context_window:
        pct = 100 * s.context_tokens / s.context_window
        fields.append(_Field([f"ctx {pct:.0f}%"], "", 70))
    if s.cost_usd is not None:
        fields.append(_Field([f"${s.cost_usd:.4f}"], "", 70))
    if s.mcp:
        fields.append(_Field([f"MCP {s.mcp}"], "", 30))
    if s.shells:
        fields.append(_Field([f"{s.shells} bg shell{'s' * (s.shells != 1)}", f"bg {s.shells}"],
                             "", 50))
    if s.index:
        fields.append(_Field([f"indexing ({s.index})", "indexing"], "dim", 25))
    return fields


def _width(fields: list[_Field]) -> int:
    total = 0
    for i, f in enumerate(fields):
        if i:
            total += len(f.sep)
        total += cell_len(f.texts[f.choice])
    return total


def status_line(
    state: StatusState, width: int | None = None, styles: dict[str, str] | None = None
) -> Text:
    """The line for `state`, fitted into `width` cells by shortening or dropping the
    least important fields first (no fitting when `width` is None); `styles` are the
    modes' (`mode_styles`)."""
    fields = _fields(state, styles or mode_styles())
    while width is not None and _width(fields) > width:
        droppable = [f for f in fields if f.keep < 70]
        if not droppable:
            break
        weakest = min(droppable, key=lambda f: f.keep)
        if weakest.choice + 1 < len(weakest.texts):
            weakest.choice += 1
        else:
            fields.remove(weakest)
    line = Text(no_wrap=True, overflow="ellipsis")
    for i, f in enumerate(fields):
        if i:
            line.append(f.sep)
        line.append(f.texts[f.choice], style=f.style)
    return line


class StatusBar(Static):
    """One line: `● thinking  ⏵ default  model · 1.2k tok · ctx 3% · $0.0012 · MCP 2/2`."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.state = StatusState()
        self.line = Text()
        """What the line shows now."""
        self._countdown: tuple[str, float] | None = None
        """While backing off before a retry: what failed and when the next try starts."""
        self._countdown_timer: Timer | None = None

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.refresh_line())
        self.refresh_line()

    def on_resize(self, event: events.Resize) -> None:
        self.refresh_line()

    def refresh_line(self) -> None:
        mounted = self.is_mounted
        width = self.content_region.width if mounted else 0
        styles = mode_styles(self.app.current_theme if mounted else None)
        self.line = status_line(self.state, width or None, styles)
        self.update(self.line)

    def set_model(self, model: str) -> None:
        self.state.model = model
        self.refresh_line()

    def set_mode(self, mode: str) -> None:
        self.state.mode = mode
        self.refresh_line()

    def set_busy(self, busy: str) -> None:
        self._stop_countdown()
        if busy != self.state.busy:
            self.state.busy = busy
            self.refresh_line()

    def count_down(self, what: str, seconds: float) -> None:
        """Show `what` and the seconds left until the next attempt, ticking, until the
        next `set_busy` (the answer started, the run ended)."""
        self._stop_countdown()
        self._countdown = (what, time.monotonic() + seconds)
        self._tick()
        self._countdown_timer = self.set_interval(COUNTDOWN_TICK_S, self._tick)

    def _tick(self) -> None:
        if self._countdown is None:
            return
        what, deadline = self._countdown
        left = math.ceil(deadline - time.monotonic())
        busy = f"{what} — retrying in {left} s · Esc stops" if left > 0 else (
            f"{what} — retrying now")
        if busy != self.state.busy:
            self.state.busy = busy
            self.refresh_line()

    def _stop_countdown(self) -> None:
        self._countdown = None
        if self._countdown_timer is not None:
            self._countdown_timer.stop()
            self._countdown_timer = None

    def set_hint(self, hint: str) -> None:
        self.state.hint = hint
        self.refresh_line()

    def set_mcp(self, mcp: str) -> None:
        self.state.mcp = mcp
        self.refresh_line()

    def set_shells(self, running: int) -> None:
        self.state.shells = running
        self.refresh_line()

    def set_index(self, phase: str) -> None:
        """The code index's phase; a first build of a big project shows for a while."""
        if phase != self.state.index:
            self.state.index = phase
            self.refresh_line()

    def set_context(self, context_tokens: int, context_window: int) -> None:
        """The context's fill after something other than a response changed it (a model
        with another window, a resumed session)."""
        self.state.context_tokens, self.state.context_window = context_tokens, context_window
        self.refresh_line()

    def update_usage(
        self, tokens: int, context_tokens: int, context_window: int, cost_usd: float | None
    ) -> None:
        s = self.state
        s.tokens, s.context_tokens, s.context_window = tokens, context_tokens, context_window
        s.cost_usd = cost_usd
        self.refresh_line()
