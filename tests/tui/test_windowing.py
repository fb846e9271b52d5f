"""The conversation mounts a window of a long history, trims as it grows, pages back."""

from __future__ import annotations

from textual.app import App, ComposeResult

from aistack_tui.tui.widgets.conversation import PAGE, Conversation
from aistack_tui.tui.widgets.entries import AssistantEntry, UserEntry


class Host(App[None]):
    def compose(self) -> ComposeResult:
        yield Conversation(window=20, id="conversation")


def history(n: int) -> list:
    return [UserEntry(f"q{i}") if i % 2 == 0 else AssistantEntry(f"a{i}", finished=True)
            for i in range(n)]


async def test_two_thousand_entries_mount_only_the_window() -> None:
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        conversation = app.query_one(Conversation)
        await conversation.load(history(2000))
        await pilot.pause()
        assert conversation.mounted_count == 20
        assert conversation.hidden_count == 1980
        assert len(conversation.transcript.entries) == 2000
        assert "1980 earlier entries" in str(conversation.query_one(".earlier-marker").render())


async def test_growing_conversation_is_trimmed_while_following() -> None:
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        conversation = app.query_one(Conversation)
        for entry in history(20 + PAGE + 5):
            await conversation.add(entry)
        await pilot.pause()
        assert conversation.mounted_count <= 20 + PAGE
        assert conversation.hidden_count > 0


async def test_scrolling_back_mounts_an_earlier_page() -> None:
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        conversation = app.query_one(Conversation)
        await conversation.load(history(200))
        await pilot.pause()
        conversation.show_earlier()
        await pilot.pause(0.2)
        assert conversation.mounted_count == 20 + PAGE
        assert conversation.hidden_count == 200 - 20 - PAGE
