"""Pilot tests of the slash commands backed by session extensions: /compact, /memory,
/context, /skills, /undo, /rewind and /init, against the fake LLM server."""

from __future__ import annotations

from pathlib import Path

from textual import events

from aistack_tui.agent.compaction import SUMMARY_KIND
from aistack_tui.llm import types as lt
from aistack_tui.tui.screens.confirm import ConfirmScreen
from aistack_tui.tui.screens.question import QuestionScreen
from aistack_tui.tui.widgets.entries import NoticeEntry, UserEntry
from fakes.fake_llm import FakeLLMServer, ToolCall, Turn
from tests.tui.conftest import wait_for, wait_for_screen
from tests.tui.test_app import answered, entries, type_and_send


async def ready(pilot) -> None:
    await wait_for(pilot, lambda: pilot.app.session is not None)


def notices(app) -> list[str]:
    return [e.text for e in entries(app) if isinstance(e, NoticeEntry)]


async def command(pilot, text: str, expected: str, timeout: float = 10.0) -> str:
    """Run a command and wait for a notice containing `expected`; returns that notice."""
    app = pilot.app
    seen = len(notices(app))
    await type_and_send(pilot, text)
    await wait_for(pilot, lambda: any(expected in n for n in notices(app)[seen:]), timeout)
    return next(n for n in notices(app)[seen:] if expected in n)


async def test_compact_with_instructions_summarises_and_shows_the_result(
    make_app, fake_llm: FakeLLMServer
) -> None:
    app = make_app(Turn(text="SUMMARY: we fixed the parser."))
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        agent = app.session.agent
        for i in range(6):
            agent.messages += [lt.Message.user(f"question {i}"),
                               lt.Message(role="assistant", content=[lt.TextBlock(text=f"a{i}")])]
        shown = await command(pilot, "/compact keep the parser details", "Compacted")
        assert "older messages summarised" in shown
        assert "SUMMARY: we fixed the parser." in shown
        assert agent.messages[0].kind == SUMMARY_KIND
        assert "keep the parser details" in str(fake_llm.model_requests[-1].body)


async def test_compact_with_nothing_to_do_says_so(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await command(pilot, "/compact", "Nothing to compact")


async def test_memory_add_list_forget(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await command(pilot, "/memory", "No memories yet")
        await command(pilot, "/memory add the user prefers tabs over spaces", "Remembered as m1")
        listing = await command(pilot, "/memory", "Memories (1)")
        assert "m1" in listing and "prefers tabs" in listing
        await command(pilot, "/memory forget m1", "Forgot m1")
        await command(pilot, "/memory", "No memories yet")
        await command(pilot, "/memory forget banana", "invalid memory id")


async def test_context_shows_injected_memory_and_sizes(make_app) -> None:
    app = make_app(Turn(text="Noted."))
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await command(pilot, "/memory add the deploy target is staging-eu", "Remembered")
        await command(pilot, "/memory pin m1", "Pinned m1")
        await type_and_send(pilot, "where do we deploy?")
        await wait_for(pilot, lambda: answered(app, "Noted."))
        shown = await command(pilot, "/context", "Context:")
        assert "System prompt: ~" in shown and "tools:" in shown
        assert "Injected before the last turn" in shown
        assert "Memory: ~" in shown and "staging-eu" in shown
        assert "Code knowledge:" in shown
        # The watcher keeps its task alive: that is not a build in progress.
        assert "Code index: " in shown and "refreshing" not in shown
        assert "indexing" not in shown.split("Code index: ")[1], shown


async def test_skills_lists_the_catalogue_and_problems(make_app, git_repo: Path) -> None:
    broken = git_repo / ".aistack" / "skills" / "broken"
    broken.mkdir(parents=True)
    (broken / "SKILL.md").write_text("no front matter here\n")
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        shown = await command(pilot, "/skills", "Skills (")
        names = app.session.extensions.skills.names()
        assert names and all(name in shown for name in names)
        assert "Problems:" in shown and "broken" in shown


async def test_status_shows_model_key_mode_sandbox_and_files(
    make_app, git_repo: Path, aistack_home: Path
) -> None:
    (git_repo / "CLAUDE.md").write_text("Use tabs.\n")
    (aistack_home / "SOUL.md").write_text("Be kind.\n")
    app = make_app()
    async with app.run_test(size=(160, 40)) as pilot:
        await ready(pilot)
        shown = await command(pilot, "/status", "version")
        rows = dict(line.split(None, 1) for line in shown.splitlines()
                    if line.split(None, 1)[0] in ("model", "key", "mode", "sandbox"))
        assert rows["model"].strip() == app.session.model
        assert rows["key"].startswith("environment variable ANTHROPIC_API_KEY")
        assert rows["mode"].strip() == "default"
        assert rows["sandbox"].startswith(("bwrap", "sandbox unavailable"))
        assert f"{git_repo / 'CLAUDE.md'} (9 bytes)" in shown  # the stripped text
        assert f"{aistack_home / 'SOUL.md'} (8 bytes)" in shown


async def test_agents_lists_custom_subagents_and_problems(
    make_app, git_repo: Path, tmp_path: Path
) -> None:
    agents = tmp_path / "user-home" / ".claude" / "agents"  # HOME of every test
    agents.mkdir(parents=True)
    (agents / "helper.md").write_text(
        "---\nname: helper\ndescription: Finds things.\ntools: Read, Grep\n---\nYou help.\n")
    (agents / "broken.md").write_text("---\nname: broken\n---\nno description\n")
    app = make_app()
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        shown = await command(pilot, "/agents", "Subagents (")
        assert "helper — Finds things." in shown and "Read, Grep" in shown
        assert "Problems:" in shown and "`description` is missing" in shown


def write_turn(path: str, content: str, text: str) -> list[Turn]:
    return [Turn(tool_calls=[ToolCall("Write", {"file_path": path, "content": content})]),
            Turn(text=text)]


async def test_undo_skips_a_later_turn_that_changed_no_file_and_says_which_it_undid(
    make_app, git_repo: Path, fake_llm: FakeLLMServer
) -> None:
    # Issue 22 item 10: a follow-up whose command wrote nothing is recorded as a turn
    # too; /undo said "0 file(s) restored" and still told the model it was undone.
    (git_repo / "a.py").write_text("old\n")
    app = make_app(Turn(tool_calls=[ToolCall("Read", {"file_path": "a.py"})]),
                   *write_turn("a.py", "new\n", "Written."),
                   Turn(tool_calls=[ToolCall("Bash", {"command": "python3 -c pass"})]),
                   Turn(text="It checks out."), Turn(text="Noted."),
                   permission_mode="acceptEdits")
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "change a.py")
        await wait_for(pilot, lambda: answered(app, "Written."))
        await type_and_send(pilot, "does it still run?")
        await wait_for_screen(pilot, ConfirmScreen)
        await pilot.press("y")
        await wait_for(pilot, lambda: answered(app, "It checks out."))
        assert len(app.session.checkpoint_turns()) == 2
        shown = await command(pilot, "/undo", "Undid")
        assert shown.startswith("Undid turn 1 (change a.py): 1 file(s) restored")
        assert (git_repo / "a.py").read_text() == "old\n"
        await type_and_send(pilot, "ok")
        await wait_for(pilot, lambda: answered(app, "Noted."))
        assert "change a.py" in str(fake_llm.model_requests[-1].body).split("<user-undo>")[1]
        assert await command(pilot, "/undo", "othing to undo")


async def test_undo_restores_and_asks_before_overwriting_a_hand_edit(
    make_app, git_repo: Path, fake_llm: FakeLLMServer
) -> None:
    (git_repo / "a.py").write_text("old\n")
    app = make_app(Turn(tool_calls=[ToolCall("Read", {"file_path": "a.py"})]),
                   *write_turn("a.py", "new\n", "Written."), Turn(text="Understood."),
                   permission_mode="acceptEdits")
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "change a.py")
        await wait_for(pilot, lambda: answered(app, "Written."))
        assert (git_repo / "a.py").read_text() == "new\n"
        (git_repo / "a.py").write_text("hand edit\n")
        await type_and_send(pilot, "/undo")
        await wait_for_screen(pilot, QuestionScreen)
        await pilot.press("n")
        await wait_for(pilot, lambda: "Nothing was restored." in notices(app))
        assert (git_repo / "a.py").read_text() == "hand edit\n"
        await type_and_send(pilot, "/undo")
        await wait_for_screen(pilot, QuestionScreen)
        await pilot.press("y")
        await wait_for(pilot, lambda: any(n.startswith("Undid turn 1 (change a.py)")
                                          for n in notices(app)))
        assert (git_repo / "a.py").read_text() == "old\n"
        await type_and_send(pilot, "what happened?")
        await wait_for(pilot, lambda: answered(app, "Understood."))
        assert "<user-undo>" in str(fake_llm.model_requests[-1].body)


TWO_WRITES = [*write_turn("one.txt", "1\n", "First."), *write_turn("two.txt", "2\n", "Second.")]


async def send_two_writes(pilot) -> None:
    """Two prompts whose turns each write a file (checkpointed turns 1 and 2)."""
    app = pilot.app
    await ready(pilot)
    await type_and_send(pilot, "write one")
    await wait_for(pilot, lambda: answered(app, "First."))
    await type_and_send(pilot, "write two")
    await wait_for(pilot, lambda: answered(app, "Second."))


async def test_rewind_lists_turns_then_restores_files_and_conversation(
    make_app, git_repo: Path
) -> None:
    app = make_app(*TWO_WRITES, permission_mode="acceptEdits")
    async with app.run_test(size=(100, 30)) as pilot:
        await send_two_writes(pilot)
        listing = await command(pilot, "/rewind", "Turns that changed files")
        assert "1." in listing and "write one" in listing and "write two" in listing
        await type_and_send(pilot, "/rewind 2")
        await wait_for(pilot, lambda: any("restored" in n or "removed" in n
                                          for n in notices(app)))
        assert (git_repo / "one.txt").exists() and not (git_repo / "two.txt").exists()
        texts = [e.text for e in entries(app) if isinstance(e, UserEntry)]
        assert texts == ["write one"]
        assert app.prompt.text == "write two"
        # The cursor ends the text: what is typed next goes after it, not before.
        assert app.prompt.cursor_location == app.prompt.document.end
        assert [m.text() for m in app.session.agent.messages if m.role == "user"][-1] != "write two"
        await command(pilot, "/rewind 9", "No turn '9'")


async def test_enter_typed_in_one_burst_after_a_command_and_its_argument_sends_it(
    make_app, git_repo: Path
) -> None:
    """`/rewind 1` then Enter, as fast as a terminal delivers a burst: the suggestion list
    that `/rewind` opened is still marked open when Enter arrives (the prompt's own change
    notices queue behind the keys), and the Enter must send, not vanish."""
    app = make_app(*TWO_WRITES, permission_mode="acceptEdits")
    async with app.run_test(size=(100, 30)) as pilot:
        await send_two_writes(pilot)
        app.prompt.load_text("")
        await pilot.press(*"/rewind")
        await wait_for(pilot, lambda: app.prompt.completing)
        for key, character in (("space", " "), ("1", "1"), ("enter", "\r")):
            app.prompt.post_message(events.Key(key, character))
        await wait_for(pilot, lambda: any("restored" in n or "removed" in n
                                          for n in notices(app)))
        assert not (git_repo / "one.txt").exists()
        assert app.prompt.text == "write one"


async def test_rewind_after_a_compaction_still_offers_the_rewound_prompt(
    make_app, git_repo: Path
) -> None:
    """The summary replaced the live history, so the prompt is only in the store."""
    app = make_app(*TWO_WRITES, Turn(text="SUMMARY: wrote one.txt and two.txt."),
                   permission_mode="acceptEdits")
    async with app.run_test(size=(100, 30)) as pilot:
        await send_two_writes(pilot)
        session = app.session
        turn_two = session.checkpoints.list_turns(session.info.id)[1].turn_id
        compacted = await session.agent.compact_now(force_summary=True)
        assert compacted is not None
        # The kept tail is re-stored under new ids: the rewound prompt is not live any more.
        assert turn_two not in [m.id for m in session.agent.messages]
        await type_and_send(pilot, "/rewind 2")
        await wait_for(pilot, lambda: any("restored" in n or "removed" in n
                                          for n in notices(app)))
        assert not (git_repo / "two.txt").exists()
        assert app.prompt.text == "write two"
        assert all(m.kind != SUMMARY_KIND for m in app.session.agent.messages)


async def test_rewind_and_undo_without_checkpoints_explain(make_app, aistack_home: Path) -> None:
    (aistack_home / "settings.json").write_text('{"checkpoints": false}')
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await command(pilot, "/undo", "Checkpoints are off")
        await command(pilot, "/rewind", "Checkpoints are off")


async def test_init_asks_then_writes_an_agents_md_skeleton(make_app, git_repo: Path) -> None:
    (git_repo / "pyproject.toml").write_text("[project]\nname='x'\n[tool.ruff]\n")
    (git_repo / "src").mkdir()
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "/init")
        await wait_for_screen(pilot, QuestionScreen)
        await pilot.press("n")
        await wait_for(pilot, lambda: "AGENTS.md was not written." in notices(app))
        assert not (git_repo / "AGENTS.md").exists()
        await type_and_send(pilot, "/init")
        await wait_for_screen(pilot, QuestionScreen)
        await pilot.press("y")
        await wait_for(pilot, lambda: (git_repo / "AGENTS.md").exists())
        text = (git_repo / "AGENTS.md").read_text()
        assert "## Commands" in text and "`pytest`" in text and "`ruff check .`" in text
        assert "`src/`" in text
        await command(pilot, "/init", "already exists")


async def test_export_writes_markdown_and_jsonl(make_app, git_repo: Path, aistack_home: Path,
                                                fake_llm: FakeLLMServer) -> None:
    fake_llm.add(Turn(text="The answer is 42."))
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "what is the answer?")
        await wait_for(pilot, lambda: not app.session.agent.running
                       and len(app.session.agent.messages) == 2)
        await command(pilot, "/export", "Exported 2 messages")
        await command(pilot, "/export jsonl out/session.jsonl", "Exported 2 messages")
    assert not list(git_repo.glob("aistack-session-*"))  # no untracked file in the project
    md = next((aistack_home / "exports").glob("aistack-session-*.md")).read_text()
    assert "## User" in md and "what is the answer?" in md and "The answer is 42." in md
    rows = (git_repo / "out" / "session.jsonl").read_text().splitlines()
    assert [lt.Message.model_validate_json(r).role for r in rows] == ["user", "assistant"]
