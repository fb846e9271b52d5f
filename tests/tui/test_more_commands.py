"""The commands a Claude Code user types by habit: /doctor, /hooks, /add-dir, /config,
/exit, and /export that leaves no untracked file in the project."""

from __future__ import annotations

import json
from pathlib import Path

from tests.tui.test_session_commands import command, ready


async def test_doctor_runs_the_clis_checks_inside_the_tui(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        shown = await command(pilot, "/doctor", "sqlite fts5", timeout=30)
        assert "provider anthropic: key from ANTHROPIC_API_KEY" in shown
        assert "] sandbox: " in shown and "] ripgrep: " in shown


async def test_hooks_lists_each_hook_with_its_event_matcher_and_file(
    make_app, aistack_home: Path
) -> None:
    settings = aistack_home / "settings.json"
    data = json.loads(settings.read_text()) if settings.exists() else {}
    data["hooks"] = {"PreToolUse": [{"matcher": "Edit|Write", "hooks": [
        {"type": "command", "command": "check-edit.sh"}]}]}
    settings.write_text(json.dumps(data))
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        shown = await command(pilot, "/hooks", "Hooks:")
        assert f"PreToolUse[Edit|Write]: check-edit.sh  ({settings})" in shown


async def test_add_dir_widens_what_the_agent_may_edit(make_app, tmp_path: Path) -> None:
    other = tmp_path / "shared-lib"
    other.mkdir()
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        engine = app.session.engine
        target = str(other / "x.py")
        from aistack_tui.permissions.types import PermissionRequest

        before = engine.check(PermissionRequest("Write", {"file_path": target}))
        await command(pilot, f"/add-dir {other}", "Added")
        engine.mode = "acceptEdits"
        after = engine.check(PermissionRequest("Write", {"file_path": target}))
        assert before.behavior == "ask" and after.behavior == "allow"
        shown = await command(pilot, "/add-dir /", "root directory")
        assert "cannot be added" in shown


async def test_config_shows_and_saves_a_setting_validated(make_app, aistack_home: Path) -> None:
    app = make_app()
    async with app.run_test(size=(160, 40)) as pilot:
        await ready(pilot)
        shown = await command(pilot, "/config", "Settings")
        assert "permissions.defaultMode" in shown and "checkpoints" in shown
        await command(pilot, "/config set permissions.defaultMode acceptEdits", "Saved")
        saved = json.loads((aistack_home / "settings.json").read_text())
        assert saved["permissions"]["defaultMode"] == "acceptEdits"
        bad = await command(pilot, "/config set permissions.defaultMode sometimes", "=")
        assert "sometimes" in bad
        saved = json.loads((aistack_home / "settings.json").read_text())
        assert saved["permissions"]["defaultMode"] == "acceptEdits"  # nothing broken written
        refused = await command(pilot, "/config set apiKeys x", "cannot be set here")
        assert "apiKeys" in refused


async def test_export_defaults_outside_the_repository(
    make_app, git_repo: Path, aistack_home: Path
) -> None:
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await ready(pilot)
        shown = await command(pilot, "/export", "Exported")
        assert str(aistack_home / "exports") in shown
        assert not list(git_repo.glob("aistack-session-*"))
        await command(pilot, "/export clipboard", "clipboard")


async def test_exit_quits(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await ready(pilot)
        from tests.tui.test_session_commands import type_and_send

        assert app.return_code is None
        await type_and_send(pilot, "/exit")
        await pilot.pause(0.5)
        assert app.return_code == 0  # the app exited, as /quit does
