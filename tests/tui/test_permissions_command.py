"""Pilot tests of `/permissions` (issue 14 item 8): the live mode, every rule under the
layer it came from (user, project, local, Claude Code's files, the command line) and the
session's "don't ask again" grants, one of which `/permissions revoke` takes back."""

from __future__ import annotations

import json
import os
from pathlib import Path

from aistack_tui.tui.screens.confirm import ConfirmScreen
from fakes.fake_llm import ToolCall, Turn
from tests.tui.conftest import wait_for, wait_for_screen
from tests.tui.test_app import answered, type_and_send
from tests.tui.test_session_commands import command, ready

RUN = "make build"
"""A command that asks in every mode (not read-only, not an edit, not dangerous); there
is no Makefile, so it fails, which does not matter here."""


def write(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def section(listing: str, heading: str) -> list[str]:
    """The lines under the heading line that starts with `heading`, up to the next one."""
    lines = listing.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(heading))
    body: list[str] = []
    for line in lines[start + 1:]:
        if not line.startswith(" "):
            break
        body.append(line.strip())
    return body


async def test_permissions_lists_every_layer_and_the_session_grants(
    make_app, git_repo: Path, aistack_home: Path
) -> None:
    # Narrowing rules (deny, ask) apply without the trust dialog; the user's own files
    # and the command line need no trust either.
    write(aistack_home / "settings.json", {"permissions": {"allow": ["Bash(npm test:*)"]}})
    write(Path(os.environ["HOME"]) / ".claude" / "settings.json",
          {"permissions": {"allow": ["Bash(make lint:*)"]}})
    write(git_repo / ".aistack" / "settings.json", {"permissions": {"deny": ["Read(./secrets/**)"]}})
    write(git_repo / ".aistack" / "settings.local.json",
          {"permissions": {"ask": ["Bash(git push:*)"]}})
    write(git_repo / ".claude" / "settings.json", {"permissions": {"deny": ["WebFetch"]}})
    write(git_repo / ".claude" / "settings.local.json", {"permissions": {"ask": ["Write"]}})
    app = make_app(
        Turn(tool_calls=[ToolCall("Bash", {"command": RUN})]),
        Turn(text="Ran it."),
        permission_mode="acceptEdits",
        allowed_tools=["Bash(ls:*)"],
        disallowed_tools=["Bash(rm:*)"],
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "say one")
        dialog = await wait_for_screen(pilot, ConfirmScreen)
        grant = dialog.request.decision.suggested_rule
        assert grant
        await pilot.press("2")  # yes, and don't ask again this session
        await wait_for(pilot, lambda: answered(app, "Ran it."))

        listing = await command(pilot, "/permissions", "Permission mode")
        assert "Permission mode: acceptEdits" in listing
        assert section(listing, "user (Claude Code)") == ["allow  Bash(make lint:*)"]
        assert section(listing, "user —") == ["allow  Bash(npm test:*)"]
        assert section(listing, "project (Claude Code)") == ["deny   WebFetch"]
        assert section(listing, "project —") == ["deny   Read(./secrets/**)"]
        assert section(listing, "local (Claude Code)") == ["ask    Write"]
        assert section(listing, "local —") == ["ask    Bash(git push:*)"]
        assert section(listing, "command line — --allowed-tools") == ["allow  Bash(ls:*)"]
        assert section(listing, "command line — --disallowed-tools") == ["deny   Bash(rm:*)"]
        assert section(listing, "session grants") == [f"1  allow  {grant}"]
        # Each layer names its file, the project's relative to the project.
        assert "~/.claude/settings.json" in listing
        assert ".aistack/settings.local.json" in listing
        assert "/permissions revoke" in listing


async def test_revoking_a_grant_makes_the_next_call_ask_again(make_app, git_repo: Path) -> None:
    app = make_app(
        Turn(tool_calls=[ToolCall("Bash", {"command": RUN})]),
        Turn(text="First."),
        Turn(tool_calls=[ToolCall("Bash", {"command": RUN})]),
        Turn(text="Second."),
        Turn(tool_calls=[ToolCall("Bash", {"command": RUN})]),
        Turn(text="Third."),
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await type_and_send(pilot, "one")
        dialog = await wait_for_screen(pilot, ConfirmScreen)
        grant = dialog.request.decision.suggested_rule
        await pilot.press("2")
        await wait_for(pilot, lambda: answered(app, "First."))
        await type_and_send(pilot, "two")  # granted: no dialog
        await wait_for(pilot, lambda: answered(app, "Second."))

        await command(pilot, "/permissions revoke 5", "no session grant 5")
        shown = await command(pilot, "/permissions revoke 1", "Revoked")
        assert grant in shown
        assert app.session.session_grants() == []
        listing = await command(pilot, "/permissions", "Permission mode")
        assert section(listing, "session grants") == ["none"]

        await type_and_send(pilot, "three")
        await wait_for_screen(pilot, ConfirmScreen)  # asks again
        await pilot.press("1")
        await wait_for(pilot, lambda: answered(app, "Third."))


async def test_a_grant_can_be_revoked_by_its_rule(make_app) -> None:
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        app.session.engine.grant_session("Bash(pytest:*)")
        await command(pilot, "/permissions revoke Bash(pytest:*)", "Revoked Bash(pytest:*)")
        assert app.session.session_grants() == []
