"""Ctrl+G edits the prompt in $VISUAL/$EDITOR; Ctrl+V pastes the clipboard's image, and a
pasted image path becomes an image, both as a chip sent with the prompt (issue 22 item 12)."""

from __future__ import annotations

import base64
import json
import shutil
import struct
import zlib
from pathlib import Path

import pytest
from textual import events

from fakes.fake_llm import FakeLLMServer, Turn
from fakes.fake_programs import FakePrograms
from tests.tui.conftest import screen_text, wait_for
from tests.tui.test_app import answered


def tiny_png() -> bytes:
    """A valid 1x1 PNG."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))
    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels)
            + chunk(b"IEND", b""))


@pytest.fixture
def programs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakePrograms:
    fakes = FakePrograms(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{fakes.directory}:{Path('/usr/bin')}:{Path('/bin')}")
    for var in ("VISUAL", "EDITOR", "DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(var, raising=False)
    return fakes


def sent_images(server: FakeLLMServer) -> list[dict]:
    content = server.model_requests[-1].body["messages"][-1]["content"]
    return [block for block in content if block.get("type") == "image"]


async def test_ctrl_g_edits_the_prompt_in_the_editor_and_takes_the_text_back(
    make_app, programs: FakePrograms, monkeypatch: pytest.MonkeyPatch, fake_llm
) -> None:
    # `for f; do :; done` leaves f at the last argument: the file, after any options.
    editor = programs.add(
        "fake-editor",
        'for f; do :; done; printf "rewritten: %s\\nsecond line\\n" "$(cat "$f")" > "$f"')
    monkeypatch.setenv("VISUAL", f"{editor} --wait")
    monkeypatch.setenv("EDITOR", "/nonexistent")  # VISUAL wins
    app = make_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        app.prompt.load_text("draft")
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: app.prompt.text != "draft")
        assert app.prompt.text == "rewritten: draft\nsecond line"
        assert not app.busy and not fake_llm.model_requests  # back in the prompt, not sent


async def test_ctrl_g_without_an_editor_says_what_to_set(make_app, programs) -> None:
    app = make_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        app.prompt.load_text("draft")
        await pilot.press("ctrl+g")
        await wait_for(pilot, lambda: "Set $VISUAL or $EDITOR" in screen_text(app))
        assert app.prompt.text == "draft"


async def test_a_pasted_image_path_becomes_an_image_chip_sent_with_the_prompt(
    make_app, programs, git_repo: Path, fake_llm: FakeLLMServer
) -> None:
    image = git_repo / "my shot.png"
    image.write_bytes(tiny_png())
    app = make_app(Turn(text="A green pixel."))
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        app.prompt.load_text("what is this? ")
        app.prompt.move_cursor(app.prompt.document.end)
        app.prompt.post_message(events.Paste(f"'{image}'"))
        await wait_for(pilot, lambda: "[Image #1 my shot.png]" in app.prompt.text)
        await pilot.press("enter")
        await wait_for(pilot, lambda: answered(app, "A green pixel."))
    [block] = sent_images(fake_llm)
    assert block["source"]["media_type"] == "image/png"
    assert base64.b64decode(block["source"]["data"]) == tiny_png()
    assert "what is this? [Image #1 my shot.png]" in json.dumps(
        fake_llm.model_requests[-1].body["messages"][-1]["content"])


async def test_ctrl_v_pastes_the_clipboard_image_through_xclip(
    make_app, programs: FakePrograms, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    fake_llm: FakeLLMServer,
) -> None:
    (tmp_path / "clip.png").write_bytes(tiny_png())
    programs.add("xclip", f'[ "$4" = image/png ] && cat "{tmp_path / "clip.png"}"')
    monkeypatch.setenv("DISPLAY", ":0")
    app = make_app(Turn(text="Seen."))
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await pilot.press("ctrl+v")
        await wait_for(pilot, lambda: "[Image #1 clipboard.png]" in app.prompt.text)
        await pilot.press(*" describe", "enter")
        await wait_for(pilot, lambda: answered(app, "Seen."))
    assert len(sent_images(fake_llm)) == 1


async def test_ctrl_v_without_a_clipboard_tool_says_so(make_app, programs) -> None:
    if shutil.which("pngpaste"):
        pytest.skip("pngpaste is installed here")
    app = make_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await pilot.press("ctrl+v")
        await wait_for(pilot, lambda: "No clipboard tool for images" in screen_text(app))
        assert app.prompt.text == ""
