"""The main screen: conversation (+ todo panel), completion list, prompt, status bar.

It owns layout and the prompt's completion list; what a submitted prompt does is the
app's business (`AistackApp.handle_input`), so this screen holds no agent logic.

The keys that scroll the conversation are priority bindings here, because the prompt
keeps the focus all day and a text area would otherwise take PageUp/PageDown (and
Home/End) for itself: the pages always scroll, Home/End only while the prompt is empty.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, ClassVar, Protocol, cast

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Input, OptionList, TextArea
from textual.widgets.option_list import Option

from aistack_tui.session.mentions import Completion, command_at_start, mention_at_end
from aistack_tui.tui.screens.history_search import HistorySearchScreen
from aistack_tui.tui.widgets.conversation import Conversation
from aistack_tui.tui.widgets.prompt_input import PromptHistory, PromptInput
from aistack_tui.tui.widgets.status_bar import StatusBar
from aistack_tui.tui.widgets.todo_panel import TodoPanel

if TYPE_CHECKING:
    from collections.abc import Sequence

    from aistack_tui.llm.types import ImageBlock
    from aistack_tui.session.mentions import FileIndex
    from aistack_tui.tui.renderer import Level
    from aistack_tui.tui.slash import SlashRegistry

ESC_ESC_S = 0.8
"""Two Esc presses this close are one gesture: open the rewind list."""


class PromptOwner(Protocol):
    """What this screen asks of the app: where input goes, and what completes it.

    A protocol, so the screen does not import the app that builds it."""

    @property
    def commands(self) -> SlashRegistry: ...
    @property
    def file_index(self) -> FileIndex: ...

    async def handle_input(self, text: str, images: Sequence[ImageBlock] = ()) -> None: ...
    async def notice(self, text: str, level: Level = "info") -> None: ...
    def interrupt(self) -> None: ...
    def open_rewind_list(self) -> None: ...
    @property
    def busy(self) -> bool: ...
    @property
    def shell_running(self) -> bool: ...


class MainScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "interrupt", "Interrupt", show=False),
        Binding("pageup,shift+pageup", "page_up", show=False, priority=True),
        Binding("pagedown,shift+pagedown", "page_down", show=False, priority=True),
        Binding("home", "scroll_home", show=False, priority=True),
        Binding("end", "scroll_end", show=False, priority=True),
        Binding("ctrl+r", "search_history", "Search history", show=False),
    ]

    def __init__(self, history: PromptHistory, window: int) -> None:
        super().__init__()
        self.history = history
        self.window = window
        self._completion_kind = ""  # "command" | "path"
        self._completion_token = ""
        self._last_escape = 0.0

    @property
    def aistack(self) -> PromptOwner:
        return cast("PromptOwner", self.app)

    def compose(self) -> ComposeResult:
        with Horizontal(id="body"):
            yield Conversation(self.window, id="conversation")
            yield TodoPanel(id="todos")
        yield OptionList(id="completions")
        yield PromptInput(self.history, id="prompt")
        yield StatusBar(id="status")

    def on_mount(self) -> None:
        self.query_one("#completions", OptionList).display = False
        self.query_one(PromptInput).focus()

    # --- focus ----------------------------------------------------------------------------

    def on_key(self, event: events.Key) -> None:
        """A printable key while a card (or anything but a text field) has the focus goes
        to the prompt: after Tab or a click on a card, typing simply continues there."""
        focused = self.focused
        if not event.is_printable or event.character is None:
            return
        if isinstance(focused, TextArea | Input):
            return
        prompt = self.query_one(PromptInput)
        event.stop()
        event.prevent_default()
        prompt.focus()
        prompt.type_text(event.character)

    def on_paste(self, event: events.Paste) -> None:
        """A paste while a card has the focus goes to the prompt too, not nowhere."""
        if isinstance(self.focused, TextArea | Input):
            return
        event.stop()
        event.prevent_default()
        prompt = self.query_one(PromptInput)
        prompt.focus()
        prompt.paste(event.text)

    # --- submitting ---------------------------------------------------------------------

    async def on_prompt_input_submitted(self, event: PromptInput.Submitted) -> None:
        event.stop()
        self._hide_completions()
        self.query_one(Conversation).follow()  # whatever it shows, the user wants to see it
        await self.aistack.handle_input(event.text, event.images)

    async def on_prompt_input_problem(self, event: PromptInput.Problem) -> None:
        event.stop()
        await self.aistack.notice(event.text, "warning")

    def action_interrupt(self) -> None:
        """Esc: close the completion list; else stop the agent and any `!command`; on an
        idle, empty prompt, a second Esc within `ESC_ESC_S` opens the rewind list."""
        if self._completion_kind:
            self._hide_completions()
            return
        owner = self.aistack
        if not owner.busy and not owner.shell_running and not self.query_one(PromptInput).text:
            now = time.monotonic()
            if now - self._last_escape <= ESC_ESC_S:
                self._last_escape = 0.0
                owner.open_rewind_list()
                return
            self._last_escape = now
        owner.interrupt()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("scroll_home", "scroll_end"):
            # In the prompt (or any text field) Home/End move the cursor, unless it is
            # empty; a declined priority binding lets the key go on to the widget.
            focused = self.focused
            if isinstance(focused, TextArea):
                return not focused.text
            return not isinstance(focused, Input)
        return True

    def action_page_up(self) -> None:
        self.query_one(Conversation).scroll_page_up()

    def action_page_down(self) -> None:
        self.query_one(Conversation).scroll_page_down()

    def action_scroll_home(self) -> None:
        self.query_one(Conversation).scroll_home()

    def action_scroll_end(self) -> None:
        self.query_one(Conversation).follow()

    def action_search_history(self) -> None:
        prompt = self.query_one(PromptInput)
        query = "" if prompt.showing_history else prompt.text.strip()

        def chosen(text: str | None) -> None:
            if text is not None:
                prompt.recall(text)
            prompt.focus()

        self.app.push_screen(HistorySearchScreen(self.history.items, query), chosen)

    # --- completion ---------------------------------------------------------------------

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        prompt = self.query_one(PromptInput)
        if event.text_area is not prompt:
            return
        self.update_completions()

    def update_completions(self) -> None:
        prompt = self.query_one(PromptInput)
        if prompt.showing_history:  # the menu opens only when the user types
            self._hide_completions()
            return
        items: list[Completion] = []
        command = command_at_start(prompt.text)
        if command is not None:
            self._completion_kind, self._completion_token = "command", command
            items = [
                Completion(f"/{c.name}", c.help) for c in self.aistack.commands.matches(command)
            ]
        else:
            mention = mention_at_end(prompt.text_before_cursor())
            if mention is not None:
                self._completion_kind, self._completion_token = "path", mention
                items = [Completion(p) for p in self.aistack.file_index.matches(mention)]
        if not items:
            self._hide_completions()
            return
        options = self.query_one("#completions", OptionList)
        options.clear_options()
        width = max(len(item.value) for item in items)  # descriptions in one column
        for item in items:
            label = Text(item.value, style="bold")
            if item.help:
                label.append(" " * (width - len(item.value) + 2))
                label.append(item.help, style="dim")
            options.add_option(Option(label, id=item.value))
        options.highlighted = 0
        options.display = True
        prompt.completing = True

    def _hide_completions(self) -> None:
        self._completion_kind = ""
        self.query_one("#completions", OptionList).display = False
        self.query_one(PromptInput).completing = False

    def on_prompt_input_completion_key(self, event: PromptInput.CompletionKey) -> None:
        event.stop()
        options = self.query_one("#completions", OptionList)
        if not self._completion_kind:
            # The list closed after the key was sent: the prompt saw it open, but text typed
            # in the same burst (`/rewind 1` then Enter) had closed it. Enter still sends.
            if event.key == "enter":
                self.query_one(PromptInput).submit()
            return
        if event.key == "escape":
            self._hide_completions()
        elif event.key == "up":
            options.action_cursor_up()
        elif event.key == "down":
            options.action_cursor_down()
        else:  # tab or enter: accept
            index = options.highlighted
            if index is None:
                self._hide_completions()
                return
            value = options.get_option_at_index(index).id or ""
            self.accept_completion(value, submit=event.key == "enter")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option_list.id == "completions":
            event.stop()
            self.accept_completion(event.option.id or "", submit=False)

    def accept_completion(self, value: str, *, submit: bool) -> None:
        prompt = self.query_one(PromptInput)
        kind = self._completion_kind
        self._hide_completions()
        if kind == "command":
            if submit:
                prompt.load_text(value)
                prompt.submit()
                return
            prompt.load_text(value + " ")
            prompt.move_cursor(prompt.document.end)
        elif kind == "path":
            prompt.replace_token(len(self._completion_token), value)
            if value.endswith("/"):
                self.update_completions()  # keep descending into the directory
            else:
                prompt.insert(" ")
        prompt.focus()
