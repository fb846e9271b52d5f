"""The engine judges what a call touches: a declared target decides, not the raw input."""

from __future__ import annotations

from aistack_tui.permissions.targets import PathRead, PathWrite, UnusableInput
from aistack_tui.permissions.types import PermissionRequest

from .conftest import World


def test_declared_write_target_is_what_is_judged(world: World) -> None:
    engine = world.engine(deny=["Edit(secrets/**)"], mode="acceptEdits")
    request = PermissionRequest(
        "Edit", {"file_path": "src/a.py"}, target=PathWrite("secrets/key.txt")
    )
    decision = engine.check(request)
    assert decision.behavior == "deny"
    assert decision.path == world.root / "secrets" / "key.txt"


def test_read_target_pins_the_file_only_when_the_tool_opens_it(world: World) -> None:
    engine = world.engine()
    opened = engine.check(PermissionRequest("Read", {}, target=PathRead("README.md", opens=True)))
    walked = engine.check(PermissionRequest("Grep", {}, target=PathRead("src")))
    assert (opened.behavior, opened.path) == ("allow", world.root / "README.md")
    assert (walked.behavior, walked.path) == ("allow", None)


def test_unusable_input_asks_with_its_reason(world: World) -> None:
    engine = world.engine(allow=["Edit"], mode="bypassPermissions")
    decision = engine.check(PermissionRequest("Edit", {}, target=UnusableInput("no path")))
    assert (decision.behavior, decision.reason) == ("ask", "no path")


def test_without_a_target_the_input_is_read_as_settings_describe_it(world: World) -> None:
    engine = world.engine(deny=["Read(./.env)"])
    decision = engine.check(PermissionRequest("Read", {"file_path": ".env"}, read_only=True))
    assert decision.behavior == "deny"
