"""Notes meant for the model only (`<user-undo>`, a `!command`'s output) reach the model and
nothing else: not the transcript, the `/rewind` list, the input box, a resumed session,
the session's title, nor the conversation after `/clear`."""

from __future__ import annotations

from pathlib import Path

from aistack_tui.llm import types as lt
from aistack_tui.tui.renderer import history_entries
from aistack_tui.tui.widgets.entries import NoticeEntry, ShellEntry, UserEntry
from aistack_tui.tui.widgets.prompt_input import PromptInput
from fakes.fake_llm import FakeLLMServer, ToolCall, Turn
from tests.tui.conftest import screen_text, wait_for
from tests.tui.test_app import answered, entries, type_and_send

UNDO_TAG = "<user-undo>"


def write(path: str, content: str) -> Turn:
    """A turn that reads `path` and writes it (Write refuses a file it has not read)."""
    return Turn(tool_calls=[ToolCall("Read", {"file_path": path}),
                            ToolCall("Write", {"file_path": path, "content": content})])


def shown_texts(app) -> str:
    return "\n".join(getattr(e, "text", "") + getattr(e, "summary", "") for e in entries(app))


async def undo_then_prompt(pilot, git_repo: Path) -> None:
    app = pilot.app
    await wait_for(pilot, lambda: app.session is not None)
    await type_and_send(pilot, "change a")
    await wait_for(pilot, lambda: answered(app, "Changed."))
    assert (git_repo / "a.txt").read_text() == "two\n"
    await type_and_send(pilot, "/undo")
    await wait_for(pilot, lambda: (git_repo / "a.txt").read_text() == "one\n")
    await wait_for(pilot, lambda: not app.command_running)
    await type_and_send(pilot, "try again")
    await wait_for(pilot, lambda: answered(app, "Again."))


async def test_undo_note_reaches_the_model_but_not_the_screen(
    make_app, git_repo: Path, fake_llm: FakeLLMServer
) -> None:
    (git_repo / "a.txt").write_text("one\n")
    app = make_app(write("a.txt", "two\n"), Turn(text="Changed."),
                   write("a.txt", "three\n"), Turn(text="Again."),
                   permission_mode="acceptEdits")
    async with app.run_test(size=(100, 30)) as pilot:
        await undo_then_prompt(pilot, git_repo)
        sent = str(fake_llm.model_requests[2].body["messages"])
        assert UNDO_TAG in sent and "try again" in sent
        assert UNDO_TAG not in shown_texts(app) and "undid" not in shown_texts(app)
        assert UNDO_TAG not in screen_text(app)
        users = [e.text for e in entries(app) if isinstance(e, UserEntry)]
        assert users == ["change a", "try again"]

        await type_and_send(pilot, "/rewind")
        listing = entries(app)[-1]
        assert isinstance(listing, NoticeEntry) and "try again" in listing.text
        assert UNDO_TAG not in listing.text and "undid" not in listing.text

        await type_and_send(pilot, "/rewind 1")  # the undone turn is no longer listed
        prompt = app.query_one(PromptInput)
        await wait_for(pilot, lambda: prompt.text != "")
        assert prompt.text == "try again"

        title = await app.session.stored_title()
        assert title == "change a"


async def test_a_resumed_session_shows_no_model_notes(make_app, git_repo: Path) -> None:
    (git_repo / "a.txt").write_text("one\n")
    app = make_app(write("a.txt", "two\n"), Turn(text="Changed."),
                   write("a.txt", "three\n"), Turn(text="Again."),
                   permission_mode="acceptEdits")
    async with app.run_test(size=(100, 30)) as pilot:
        await undo_then_prompt(pilot, git_repo)
        messages = list(app.session.messages)
    shown = history_entries(messages)
    users = [e.text for e in shown if isinstance(e, UserEntry)]
    assert users == ["change a", "try again"]
    assert all(UNDO_TAG not in getattr(e, "text", "") for e in shown)


async def test_undo_note_does_not_survive_clear(make_app, git_repo: Path,
                                                fake_llm: FakeLLMServer) -> None:
    (git_repo / "a.txt").write_text("one\n")
    app = make_app(write("a.txt", "two\n"), Turn(text="Changed."), Turn(text="Fresh."),
                   permission_mode="acceptEdits")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "change a")
        await wait_for(pilot, lambda: answered(app, "Changed."))
        await type_and_send(pilot, "/undo")
        await wait_for(pilot, lambda: (git_repo / "a.txt").read_text() == "one\n")
        await wait_for(pilot, lambda: not app.command_running)
        await type_and_send(pilot, "/clear")
        await type_and_send(pilot, "new topic")
        await wait_for(pilot, lambda: answered(app, "Fresh."))
        assert UNDO_TAG not in str(fake_llm.model_requests[-1].body["messages"])


def test_history_shows_a_shell_command_as_its_card_and_hides_its_note() -> None:
    note = ('<user-shell-command>ls</user-shell-command>\n'
            '<user-shell-output exit_code="0">\na.txt\n</user-shell-output>')
    messages = [
        lt.Message(role="user", content=[lt.TextBlock(text="what is here?"),
                                         lt.TextBlock(text=note)]),
        lt.Message(role="assistant", content=[lt.TextBlock(text="One file.")]),
    ]
    shown = history_entries(messages)
    shell = [e for e in shown if isinstance(e, ShellEntry)]
    assert [(s.command, s.output.strip(), s.exit_code) for s in shell] == [("ls", "a.txt", 0)]
    assert [e.text for e in shown if isinstance(e, UserEntry)] == ["what is here?"]
    assert all("<user-" not in getattr(e, "text", "") for e in shown)
