"""git as aistack runs it for itself: no hook, fsmonitor, pager or filter it did not choose.

Whatever the model can write is untrusted input to every later step that runs outside the
sandbox. git reads a lot of such input: the repository's `config` (where `core.fsmonitor`,
`core.hooksPath`, `core.pager` and filter drivers name programs), its `hooks/`, the user's
`~/.gitconfig` (writable when the project is the home directory), and, for a nested
repository, that repository's own config through a `.git` gitfile or `commondir`. aistack's
own git (the checkpoint repository, eval fixtures) must run none of it, so every such call
is built here:

- the system and global configuration are not read (`GIT_CONFIG_NOSYSTEM`,
  `GIT_CONFIG_GLOBAL=/dev/null`), nor system attributes;
- every inherited `GIT_*` variable is dropped (`GIT_DIR`, `GIT_EXTERNAL_DIFF`, ...);
- the keys that run a program are pinned off on the command line, which outranks every
  configuration file, including the repository's own and any file it `include`s. git
  exports command-line settings to the git processes it starts itself (the `git status`
  it runs inside a nested repository), so they hold there too.

The command line cannot switch off a filter driver it does not know the name of; callers
that stage files also keep filters out through attributes and never let git look inside
a nested repository (see `checkpoints.shadow`). For that reason aistack runs no git in
the user's own repository (the TUI's header reads `.git/HEAD` as a file): a `git status`
there would run the clean filter a sandboxed command wrote into `.git/config` (or into a
config reached through a gitfile or `commondir`) together with a `.gitattributes`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

PINNED_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.hooksPath", "/dev/null"),  # no hook: /dev/null/<hook> never exists
    ("core.fsmonitor", "false"),
    ("core.untrackedCache", "false"),
    ("core.attributesFile", "/dev/null"),
    ("core.pager", "cat"),
    ("commit.gpgSign", "false"),  # gpg.program would run
    ("tag.gpgSign", "false"),
    ("submodule.recurse", "false"),
    ("protocol.allow", "never"),  # aistack's own git never fetches: no transport helper
    ("gc.auto", "0"),  # no background `git gc` / maintenance child
    ("maintenance.auto", "false"),
)
"""Configuration that would otherwise let a repository run a program of its choosing."""

PINNED_ENV: dict[str, str] = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ASKPASS": "",  # empty: git asks no helper (core.askPass included)
    "GIT_PAGER": "cat",
    "GIT_NO_REPLACE_OBJECTS": "1",
}


@dataclass(frozen=True, slots=True)
class GitInvocation:
    """The argv and environment of one hardened git call."""

    argv: list[str]
    env: dict[str, str]


def hardened_env(
    base: Mapping[str, str] | None = None, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """`base` (the process environment by default) without any `GIT_*` variable, with the
    configuration-isolating variables set and `extra` (GIT_DIR, identity ...) on top."""
    source = os.environ if base is None else base
    env = {k: v for k, v in source.items() if not k.startswith("GIT_")}
    env.update(PINNED_ENV)
    if extra:
        env.update(extra)
    return env


def hardened_git(
    *args: str,
    env: Mapping[str, str] | None = None,
    config: tuple[tuple[str, str], ...] = (),
) -> GitInvocation:
    """`git <args>` with the pinned settings first and the caller's `config` after them.

    `env` holds the variables the caller chooses (GIT_DIR, GIT_WORK_TREE, an identity);
    they are laid over the hardened process environment. A caller's `config` may add
    settings but not undo a pinned one: the pinned ones are repeated last.
    """
    pinned = [*config, *PINNED_CONFIG] if config else list(PINNED_CONFIG)
    flags = [part for key, value in pinned for part in ("-c", f"{key}={value}")]
    return GitInvocation(["git", *flags, *args], hardened_env(extra=env))

