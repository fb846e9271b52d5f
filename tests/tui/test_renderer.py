"""The renderer maps a fixed event sequence to the right entries and widget states."""

from __future__ import annotations

from textual.app import App, ComposeResult

from aistack_tui.agent import events as ev
from aistack_tui.llm import types as lt
from aistack_tui.permissions.types import Decision
from aistack_tui.tools.base import ToolCallDisplay
from aistack_tui.tui.renderer import EventRenderer, history_entries
from aistack_tui.tui.widgets.conversation import Conversation
from aistack_tui.tui.widgets.entries import AssistantEntry, NoticeEntry, ToolEntry, UserEntry
from aistack_tui.tui.widgets.messages import AssistantMessage
from aistack_tui.tui.widgets.status_bar import StatusBar
from aistack_tui.tui.widgets.todo_panel import TodoPanel


class RendererHost(App[None]):
    """Just the widgets the renderer drives."""

    def __init__(self, window: int = 60) -> None:
        super().__init__()
        self.window = window

    def compose(self) -> ComposeResult:
        yield Conversation(self.window, id="conversation")
        yield TodoPanel(id="todos")
        yield StatusBar(id="status")

    def renderer(self) -> EventRenderer:
        return EventRenderer(
            self.query_one(Conversation), self.query_one(StatusBar), self.query_one(TodoPanel)
        )


def _ended(reason: str = "completed") -> ev.TurnEnded:
    return ev.TurnEnded(reason, 1, "", lt.Usage(), None, 5, 3)  # type: ignore[arg-type]


async def test_streamed_answer_is_frozen_when_its_message_arrives() -> None:
    app = RendererHost()
    async with app.run_test() as pilot:
        r = app.renderer()
        await r.handle(ev.MessageAdded(lt.Message.user("hello")))
        await r.handle(ev.TurnStarted(1, "anthropic", "m"))
        for word in ["Hi ", "**there**", "!"]:
            await r.handle(ev.TextDelta(word))
        await pilot.pause()
        widget = app.query_one(AssistantMessage)
        assert widget.query(".live")  # the live tail while streaming
        final = lt.Message(role="assistant", content=[lt.TextBlock(text="Hi **there**!")])
        await r.handle(ev.MessageAdded(final))
        await r.handle(_ended())
        await pilot.pause()
        entries = app.query_one(Conversation).transcript.entries
        assert isinstance(entries[0], UserEntry) and entries[0].text == "hello"
        assert isinstance(entries[1], AssistantEntry)
        assert entries[1].finished and entries[1].text == "Hi **there**!"
        assert not widget.query(".live")  # frozen into a static render
        assert widget.query(".frozen")
        assert app.query_one(StatusBar).state.busy == ""


async def test_tool_card_follows_the_call_through_its_states() -> None:
    app = RendererHost()
    async with app.run_test() as pilot:
        r = app.renderer()
        display = ToolCallDisplay(summary="Bash pytest -q")
        await r.handle(ev.ToolCallRequested("t1", "Bash", {"command": "pytest -q"}, display))
        await r.handle(ev.PermissionAsked("t1", "Bash", Decision("ask", "Bash asks")))
        card = app.query_one(Conversation).transcript.by_tool_id["t1"]
        assert card.state == "asking"
        await r.handle(ev.PermissionDecided("t1", "Bash", "allow", "user said yes"))
        await r.handle(ev.ToolStarted("t1", "Bash"))
        assert card.state == "running"
        result = lt.ToolResultBlock(tool_use_id="t1", content="2 passed")
        await r.handle(ev.ToolFinished("t1", "Bash", result, 2.1))
        await pilot.pause()
        assert card.state == "done" and card.duration_s == 2.1 and card.detail == "2 passed"
        from aistack_tui.tui.widgets.tool_card import ToolCard

        line = app.query_one(ToolCard).summary_line().plain
        assert line.startswith("✓ Bash  pytest -q  2.1s")


async def test_denied_call_and_error_are_shown() -> None:
    app = RendererHost()
    async with app.run_test():
        r = app.renderer()
        await r.handle(ev.ToolCallRequested("t1", "Edit", {"file_path": "a"},
                                            ToolCallDisplay(summary="Edit a")))
        await r.handle(ev.PermissionDecided("t1", "Edit", "deny", "plan mode denies edits"))
        await r.handle(ev.ToolFinished(
            "t1", "Edit", lt.ToolResultBlock(tool_use_id="t1", content="denied", is_error=True),
            0.0))
        card = app.query_one(Conversation).transcript.by_tool_id["t1"]
        assert card.state == "denied" and card.note == "plan mode denies edits"
        await r.handle(ev.ErrorOccurred("anthropic: invalid x-api-key (HTTP 401)", "AuthError",
                                        False, "anthropic", 401))
        last = app.query_one(Conversation).transcript.entries[-1]
        assert isinstance(last, NoticeEntry) and last.level == "error"
        assert last.text.startswith("Anthropic rejected the API key (401)")
        assert "ANTHROPIC_API_KEY" in last.text


async def test_stream_reset_discards_the_partial_answer() -> None:
    app = RendererHost()
    async with app.run_test():
        r = app.renderer()
        await r.handle(ev.TextDelta("partial that fails"))
        await r.handle(ev.StreamReset("connection dropped", 1, 0.5))
        await r.handle(ev.TextDelta("good"))
        answers = [e for e in app.query_one(Conversation).transcript.entries
                   if isinstance(e, AssistantEntry)]
        assert [a.text for a in answers] == ["good"]


async def test_todo_write_fills_the_todo_panel_and_usage_the_status() -> None:
    app = RendererHost()
    async with app.run_test():
        r = app.renderer()
        todos = [{"content": "write tests", "status": "in_progress", "activeForm": "Writing"},
                 {"content": "ship", "status": "pending", "activeForm": "Shipping"}]
        await r.handle(ev.ToolCallRequested("t", "TodoWrite", {"todos": todos},
                                            ToolCallDisplay(summary="TodoWrite")))
        panel = app.query_one(TodoPanel)
        assert panel.todos == [("in_progress", "Writing"), ("pending", "ship")]
        assert panel.display
        usage = lt.Usage(input_tokens=1000, output_tokens=200)
        await r.handle(ev.UsageUpdated(usage, usage, 0.01, 0.01, 1200, 200_000))
        state = app.query_one(StatusBar).state
        assert state.tokens == 1200 and state.cost_usd == 0.01


async def test_steering_message_is_shown_queued_until_delivered() -> None:
    app = RendererHost()
    async with app.run_test():
        r = app.renderer()
        await r.show_queued("use pathlib instead")
        queued = app.query_one(Conversation).transcript.entries[-1]
        assert isinstance(queued, UserEntry) and queued.queued
        delivered = lt.Message(role="user", content=[
            lt.ToolResultBlock(tool_use_id="x", content="ok"),
            lt.TextBlock(text="use pathlib instead"),
        ])
        await r.handle(ev.MessageAdded(delivered))
        assert not queued.queued
        users = [e for e in app.query_one(Conversation).transcript.entries
                 if isinstance(e, UserEntry)]
        assert len(users) == 1


def test_history_entries_rebuild_cards_from_tool_use_and_results() -> None:
    messages = [
        lt.Message.user("read it"),
        lt.Message(role="assistant", content=[
            lt.TextBlock(text="Reading."),
            lt.ToolUseBlock(id="a", name="Read", input={"file_path": "src/app.py"}),
        ]),
        lt.Message(role="user", content=[
            lt.ToolResultBlock(tool_use_id="a", content="boom", is_error=True)]),
    ]
    entries = history_entries(messages)
    assert [type(e).__name__ for e in entries] == ["UserEntry", "AssistantEntry", "ToolEntry"]
    card = entries[2]
    assert isinstance(card, ToolEntry)
    assert card.summary == "Read src/app.py" and card.state == "failed"
