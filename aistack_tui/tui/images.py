"""Images the user pastes into the prompt: from the clipboard (Ctrl+V) or as a file path.

A terminal cannot paste an image: what arrives is text. Two ways around that, as in
Claude Code: Ctrl+V asks the platform's clipboard tool for an image (`wl-paste` on
Wayland, `xclip` on X11, `pngpaste` on macOS), and a pasted path to a PNG, JPEG, GIF or
WebP file (what dragging a file into most terminals pastes) becomes that image. Either
is an `ImageBlock` the prompt keeps behind a chip until it is sent.
"""

from __future__ import annotations

import asyncio
import base64
import os
import shlex
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from aistack_tui.llm.types import ImageBlock

MEDIA_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
               ".gif": "image/gif", ".webp": "image/webp"}
MAX_IMAGE_BYTES = 5_000_000
"""Providers refuse larger images (Anthropic's limit per image is 5 MB)."""
CLIPBOARD_TIMEOUT_S = 5.0


@dataclass(frozen=True, slots=True)
class PastedImage:
    name: str
    block: ImageBlock


class NoImage(Exception):
    """No image could be taken; the message says why, for the user."""


def _image(name: str, data: bytes, media_type: str) -> PastedImage:
    if len(data) > MAX_IMAGE_BYTES:
        raise NoImage(f"{name} is {len(data) // 1_000_000} MB: images are sent up to 5 MB")
    encoded = base64.b64encode(data).decode("ascii")
    return PastedImage(name, ImageBlock(media_type=media_type, data=encoded))


def image_path(text: str) -> Path | None:
    """The image file a paste names, if it is one path to an existing image: plain, quoted,
    shell-escaped (`my\\ shot.png`) or a `file://` URL, as terminals paste dropped files."""
    raw = text.strip()
    if not raw or "\n" in raw:
        return None
    if raw.startswith("file://"):
        raw = unquote(urlparse(raw).path)
    else:
        try:
            words = shlex.split(raw)
        except ValueError:
            return None
        if len(words) != 1:
            return None
        raw = words[0]
    path = Path(raw).expanduser()
    if path.suffix.lower() not in MEDIA_TYPES or not path.is_file():
        return None
    return path


def read_image(path: Path) -> PastedImage:
    try:
        data = path.read_bytes()
    except OSError as e:
        raise NoImage(f"Cannot read {path.name}: {e.strerror}") from e
    return _image(path.name, data, MEDIA_TYPES[path.suffix.lower()])


def clipboard_commands(env: Mapping[str, str]) -> list[list[str]]:
    """The clipboard tools to ask for a PNG, in order, among those installed."""
    commands: list[list[str]] = []
    if env.get("WAYLAND_DISPLAY") and shutil.which("wl-paste"):
        commands.append(["wl-paste", "--no-newline", "--type", "image/png"])
    if env.get("DISPLAY") and shutil.which("xclip"):
        commands.append(["xclip", "-selection", "clipboard", "-target", "image/png", "-out"])
    if shutil.which("pngpaste"):
        commands.append(["pngpaste", "-"])
    return commands


async def clipboard_image(env: Mapping[str, str] = os.environ) -> PastedImage:
    """The clipboard's image, through the first tool that gives one."""
    commands = clipboard_commands(env)
    if not commands:
        raise NoImage("No clipboard tool for images: install wl-clipboard (Wayland) or "
                      "xclip (X11), or paste the image file's path")
    for command in commands:
        process = await asyncio.create_subprocess_exec(
            *command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL
        )
        try:
            data, _ = await asyncio.wait_for(process.communicate(), CLIPBOARD_TIMEOUT_S)
        except TimeoutError:
            process.kill()
            await process.wait()
            continue
        if process.returncode == 0 and data.startswith(b"\x89PNG"):
            return _image("clipboard.png", data, "image/png")
    raise NoImage(f"The clipboard holds no image ({commands[0][0]} found none)")
