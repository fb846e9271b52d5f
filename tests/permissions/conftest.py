"""A small world for permission tests: a project, a look-alike sibling, an outside
directory reachable through symlinks, and a home with shell start-up files."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from aistack_tui.permissions.engine import PermissionEngine
from aistack_tui.permissions.rules import RuleLayer
from aistack_tui.permissions.types import PermissionMode


@dataclass
class World:
    root: Path
    home: Path
    outside: Path
    evil: Path

    def fill(self, text: str) -> str:
        return (
            text.replace("{root}", str(self.root))
            .replace("{home}", str(self.home))
            .replace("{outside}", str(self.outside))
            .replace("{evil}", str(self.evil))
        )

    def engine(
        self,
        allow: list[str] = (),
        ask: list[str] = (),
        deny: list[str] = (),  # type: ignore[assignment]
        mode: PermissionMode = "default",
        **kw: object,
    ) -> PermissionEngine:
        layer = RuleLayer(
            "test-settings.json",
            allow=[self.fill(r) for r in allow],
            ask=[self.fill(r) for r in ask],
            deny=[self.fill(r) for r in deny],
        )
        return PermissionEngine(
            layers=[layer], mode=mode, project_root=self.root, home=self.home, **kw
        )  # type: ignore[arg-type]


def make_world(base: Path) -> World:
    root, home, outside, evil = base / "app", base / "home", base / "outside", base / "app-evil"
    for d in (
        root / "src" / "deep",
        root / "config",
        root / "docs",
        root / ".git" / "hooks",
        root / ".aws",
        home / ".ssh",
        outside,
        evil,
    ):
        d.mkdir(parents=True, exist_ok=True)
    for f in (
        root / "README.md",
        root / "src" / "a.py",
        root / ".env",
        root / ".env.local",
        root / "config" / "id_rsa",
        root / "server.pem",
        root / ".aws" / "credentials",
        root / "tls.key",
        root / ".netrc",
        outside / "secret.txt",
        evil / "x.txt",
        home / ".bashrc",
        home / ".ssh" / "id_rsa",
    ):
        f.write_text("data\n")
    os.symlink("../outside", root / "link-out")
    os.symlink("../outside/secret.txt", root / "evil-link.txt")
    return World(root.resolve(), home.resolve(), outside.resolve(), evil.resolve())


@pytest.fixture
def world(tmp_path: Path) -> World:
    return make_world(tmp_path / "w")
