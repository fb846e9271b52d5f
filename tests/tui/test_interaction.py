"""Pilot tests of the keys and commands: Esc, steering, completion, modes, resume, quit."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import OptionList

from aistack_tui.tui.screens.sessions import SessionPickerScreen
from aistack_tui.tui.widgets.entries import AssistantEntry, NoticeEntry, UserEntry
from aistack_tui.tui.widgets.prompt_input import PromptInput
from aistack_tui.tui.widgets.status_bar import StatusBar
from fakes.fake_llm import FakeLLMServer, ToolCall, Turn
from tests.tui.conftest import wait_for, wait_for_screen
from tests.tui.test_app import answered, entries, type_and_send

LONG = "word " * 400


async def ready(pilot) -> None:
    await wait_for(pilot, lambda: pilot.app.session is not None)


async def test_escape_interrupts_and_keeps_the_partial_answer(make_app) -> None:
    app = make_app(Turn(text=LONG, chunk_size=5, delay=0.02))
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "talk a lot")
        await wait_for(pilot, lambda: any(isinstance(e, AssistantEntry) and len(e.text) > 20
                                          for e in entries(app)))
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.busy, timeout=5)
        answer = next(e for e in entries(app) if isinstance(e, AssistantEntry))
        assert answer.interrupted and 0 < len(answer.text) < len(LONG)
        assert any(isinstance(e, NoticeEntry) and "Interrupted" in e.text for e in entries(app))
        kept = app.session.agent.messages[-1]
        assert kept.role == "assistant" and kept.stop_reason == "interrupted"


async def test_message_typed_while_working_steers_the_agent(make_app,
                                                            fake_llm: FakeLLMServer) -> None:
    app = make_app(
        Turn(text="Reading the readme now. " * 8, chunk_size=4, delay=0.03,
             tool_calls=[ToolCall("Read", {"file_path": "README.md"})]),
        Turn(text="Checked both."),
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "read the readme")
        await wait_for(pilot, lambda: app.busy and any(
            isinstance(e, AssistantEntry) for e in entries(app)))
        await type_and_send(pilot, "also say hi")
        queued = [e for e in entries(app) if isinstance(e, UserEntry) and e.text == "also say hi"]
        assert queued and queued[0].queued
        await wait_for(pilot, lambda: answered(app, "Checked both."))
        assert not queued[0].queued  # delivered
        sent = fake_llm.model_requests[-1].body["messages"][-1]
        assert "also say hi" in str(sent)


async def test_slash_command_completion(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await pilot.press("/", "m", "o")
        options = app.screen.query_one("#completions", OptionList)
        assert options.display
        assert [options.get_option_at_index(i).id for i in range(2)] == ["/mode", "/model"]
        await pilot.press("down", "tab")
        assert app.screen.query_one(PromptInput).text == "/model "
        assert not options.display


async def test_at_file_completion_respects_gitignore(make_app, git_repo: Path) -> None:
    (git_repo / "src").mkdir()
    (git_repo / "src" / "app.py").write_text("print('hi')\n")
    (git_repo / "app_secret.py").write_text("")
    (git_repo / ".gitignore").write_text("app_secret.py\n")
    app = make_app(Turn(text="Seen it."))
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await pilot.press("r", "e", "a", "d", "space", "@", "a", "p", "p")
        options = app.screen.query_one("#completions", OptionList)
        shown = [options.get_option_at_index(i).id for i in range(options.option_count)]
        assert "src/app.py" in shown and "app_secret.py" not in shown
        assert shown[0] == "src/app.py"
        await pilot.press("tab")
        prompt = app.screen.query_one(PromptInput)
        assert prompt.text == "read @src/app.py "
        await pilot.press("enter")
        await wait_for(pilot, lambda: answered(app, "Seen it."))
        first = app.session.agent.messages[0]
        assert any("print('hi')" in getattr(b, "text", "") for b in first.content)


async def test_shift_tab_cycles_permission_modes(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        seen = []
        for _ in range(4):
            await pilot.press("shift+tab")
            seen.append(app.session.engine.mode)
        # bypassPermissions is left out unless the command line asked for it (issue 22).
        assert seen == ["acceptEdits", "plan", "default", "acceptEdits"]
        assert app.screen.query_one(StatusBar).state.mode == "acceptEdits"


async def test_resume_picker_loads_an_earlier_session(make_app) -> None:
    first = make_app(Turn(text="Hello from the past."))
    async with first.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "remember me")
        await wait_for(pilot, lambda: answered(first, "Hello from the past."))
        old_id = first.session.info.id
    app = make_app(resume="")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for_screen(pilot, SessionPickerScreen)
        options = app.screen.query_one(OptionList)
        assert options.get_option_at_index(0).id == old_id
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.session.info.id == old_id and len(entries(app)) >= 2)
        texts = [getattr(e, "text", "") for e in entries(app)]
        assert "remember me" in texts and "Hello from the past." in texts


async def test_ctrl_c_twice_quits(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await pilot.press("ctrl+c")
        assert "Ctrl+C again" in app.screen.query_one(StatusBar).state.hint
        assert app.is_running
        await pilot.press("ctrl+c")
        await wait_for(pilot, lambda: app.return_code is not None, timeout=5)
    assert app.return_code == 0


async def test_unknown_command_is_a_message_not_a_crash(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "/nonsense")
        last = entries(app)[-1]
        assert isinstance(last, NoticeEntry) and "Unknown command /nonsense" in last.text


async def test_setup_screen_saves_the_key_and_opens_the_session(git_repo: Path, monkeypatch,
                                                                fake_llm: FakeLLMServer,
                                                                aistack_home: Path) -> None:
    from aistack_tui.session.config import make_run_config
    from aistack_tui.tui.app import AistackApp
    from aistack_tui.tui.screens.setup import SetupScreen

    monkeypatch.delenv("ANTHROPIC_API_KEY")
    app = AistackApp(make_run_config(cwd=git_repo), None, local_servers=())
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for_screen(pilot, SetupScreen)
        await pilot.press("enter")  # Anthropic, the first choice
        await pilot.press(*"fake-key", "enter")
        await ready(pilot)
        assert app.session is not None
        assert app.session.model.startswith("anthropic/")
    credentials = aistack_home / "credentials.json"
    assert credentials.stat().st_mode & 0o777 == 0o600
    assert "fake-key" in credentials.read_text()


async def test_info_commands_answer_in_the_conversation(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        for command, expected in [("/help", "/resume"), ("/cost", "Cost:"),
                                  ("/permissions", "Permission mode: default"), ("/context", "Context:")]:
            await type_and_send(pilot, command)
            last = entries(app)[-1]
            assert isinstance(last, NoticeEntry)
            assert expected in last.text
