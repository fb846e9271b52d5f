"""`/bashes` lists the session's background shells and stops them; the status line
counts the running ones."""

from __future__ import annotations

from fakes.fake_llm import ToolCall, Turn
from tests.tui.conftest import wait_for
from tests.tui.test_app import answered, type_and_send
from tests.tui.test_session_commands import command, ready


async def test_bashes_lists_and_stops_and_the_status_line_counts(make_app) -> None:
    start = {"command": "sleep 300", "run_in_background": True, "description": "dev server"}
    app = make_app(
        Turn(tool_calls=[ToolCall("Bash", start)]),
        Turn(text="Started."),
        permission_mode="bypassPermissions",
    )
    async with app.run_test(size=(120, 30)) as pilot:
        await ready(pilot)
        await command(pilot, "/bashes", "No background shells")
        await type_and_send(pilot, "start the server")
        await wait_for(pilot, lambda: answered(app, "Started."))
        await wait_for(pilot, lambda: "1 bg shell" in app.status.line.plain)

        listing = await command(pilot, "/bashes", "bash_1")
        assert "running" in listing and "dev server" in listing
        await command(pilot, "/bashes stop bash_1", "Stopped bash_1")
        await wait_for(pilot, lambda: "bg shell" not in app.status.line.plain)
        assert "killed" in await command(pilot, "/bashes", "bash_1")
