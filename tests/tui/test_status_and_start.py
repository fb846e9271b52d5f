"""Pilot tests of the status line and the start and end of a session (issue 14 item 12):
a welcome header naming the project, its git branch and the model; the permission mode
coloured, bypassPermissions impossible to miss; state, mode, ctx % and cost visible at 80
columns; ctx % recomputed after a model switch; the session id and how to resume it
printed on exit."""

from __future__ import annotations

import subprocess
from pathlib import Path

from rich.color import Color
from rich.style import Style

from aistack_tui.tui.widgets.entries import AssistantEntry
from aistack_tui.tui.widgets.status_bar import StatusBar
from aistack_tui.tui.widgets.welcome import git_branch
from fakes.fake_llm import Turn
from tests.tui.conftest import MODEL, screen_text, wait_for
from tests.tui.test_app import answered, entries, type_and_send

LONG = "word " * 400


async def ready(pilot) -> None:
    await wait_for(pilot, lambda: pilot.app.session is not None)


def status_row(app) -> str:
    return screen_text(app).splitlines()[-1]


def style_of(status: StatusBar, text: str) -> Style:
    """The style the status line gives to the part that reads `text`."""
    line = status.line
    start = line.plain.index(text)
    styles = [span.style for span in line.spans if span.start <= start < span.end]
    assert styles, f"{text!r} has no style in {line.plain!r}"
    style = styles[-1]
    return Style.parse(style) if isinstance(style, str) else style


async def test_welcome_header_names_the_project_its_branch_and_the_model(
    make_app, git_repo: Path
) -> None:
    subprocess.run(["git", "checkout", "-q", "-b", "feature/login"], cwd=git_repo, check=True)
    app = make_app(Turn(text="Hello."))
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        await wait_for(pilot, lambda: f"model {MODEL}" in screen_text(app))
        shown = screen_text(app)
        assert f"{git_repo}  ⎇ feature/login" in shown
        # It heads the conversation and scrolls with it; /clear leaves it there.
        await type_and_send(pilot, "hi")
        await wait_for(pilot, lambda: answered(app, "Hello."))
        rows = screen_text(app).splitlines()
        header = next(i for i, row in enumerate(rows) if "feature/login" in row)
        prompt = next(i for i, row in enumerate(rows) if "hi" in row.split())
        assert header < prompt
        await type_and_send(pilot, "/clear")
        await pilot.pause()
        assert "feature/login" in screen_text(app)


async def test_the_mode_is_coloured_and_bypass_is_unmistakable(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        status = app.query_one(StatusBar)
        seen: dict[str, Style] = {"default": style_of(status, "default")}
        for mode, label in [("acceptEdits", "accept edits"), ("plan", "plan mode"),
                            ("bypassPermissions", "BYPASS PERMISSIONS")]:
            if mode == "bypassPermissions":  # not in the Shift+Tab cycle of this session
                app.set_permission_mode(mode)
                await pilot.pause()
            else:
                await pilot.press("shift+tab")
            assert app.session.mode == mode
            assert label in status_row(app)
            seen[mode] = style_of(status, label)
        colours = {m: (s.color, s.bgcolor) for m, s in seen.items()}
        assert len(set(colours.values())) == 4, colours  # each mode looks different
        bypass = seen["bypassPermissions"]  # white on the theme's error colour
        assert bypass.bgcolor == Color.parse(app.current_theme.error)
        assert bypass.bold


async def test_state_mode_context_and_cost_stay_visible_at_80_columns(make_app) -> None:
    app = make_app(Turn(text="Hello."), Turn(text=LONG, chunk_size=5, delay=0.02))
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await pilot.press("shift+tab")  # accept edits: a longer mode label
        await type_and_send(pilot, "hi")
        await wait_for(pilot, lambda: answered(app, "Hello."))
        await type_and_send(pilot, "talk a lot")
        await wait_for(pilot, lambda: app.busy and any(
            isinstance(e, AssistantEntry) and len(e.text) > 20 for e in entries(app)))
        status = app.query_one(StatusBar)
        row = status_row(app)
        assert f"● {status.state.busy}" in row, row
        assert "accept edits" in row, row
        assert "ctx " in row and f"${status.state.cost_usd:.4f}" in row, row
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.busy)


async def test_context_percent_follows_a_model_switch(make_app) -> None:
    app = make_app(Turn(text="Hello."))
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        status = app.query_one(StatusBar)
        assert status.state.context_window == app.session.context_window  # from the start
        await type_and_send(pilot, "hi")
        await wait_for(pilot, lambda: answered(app, "Hello."))
        before = status.state.context_window
        used = app.session.context_tokens
        assert used > 0
        # genai-prices gives Sonnet 4.6 a 1M window, Haiku 4.5 200k.
        await type_and_send(pilot, "/model anthropic/claude-haiku-4-5")
        await wait_for(pilot, lambda: app.session.model == "anthropic/claude-haiku-4-5")
        await pilot.pause()
        window = app.session.context_window
        assert window != before  # the test means something only if the windows differ
        assert (status.state.context_tokens, status.state.context_window) == (used, window)
        assert f"ctx {100 * used / window:.0f}%" in status_row(app)


async def test_exit_names_the_session_and_how_to_resume_it(make_app) -> None:
    app = make_app(Turn(text="Hello."))
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "hi")
        await wait_for(pilot, lambda: answered(app, "Hello."))
        session_id = app.session.session_id
        await type_and_send(pilot, "/quit")
        await wait_for(pilot, lambda: app.return_code is not None, timeout=5)
    assert session_id in app.exit_message
    assert f"aistack --resume {session_id}" in app.exit_message


async def test_exit_without_a_conversation_prints_no_resume_hint(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "/quit")
        await wait_for(pilot, lambda: app.return_code is not None, timeout=5)
    assert app.exit_message == ""


def test_git_branch_reads_head_detached_worktree_and_no_repository(git_repo: Path,
                                                                    tmp_path: Path) -> None:
    (git_repo / "src").mkdir()
    assert git_branch(git_repo / "src") == "main"  # from a folder inside the repository
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=git_repo, check=True,
                         capture_output=True, text=True).stdout.strip()
    subprocess.run(["git", "checkout", "-q", "--detach"], cwd=git_repo, check=True)
    assert git_branch(git_repo) == f"{sha[:8]} (detached)"
    subprocess.run(["git", "checkout", "-q", "main"], cwd=git_repo, check=True)
    worktree = tmp_path / "wt"
    subprocess.run(["git", "worktree", "add", "-q", "-b", "topic", str(worktree)],
                   cwd=git_repo, check=True)
    assert git_branch(worktree) == "topic"
    plain = tmp_path / "plain"
    plain.mkdir()
    assert git_branch(plain) is None
