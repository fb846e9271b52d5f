"""What the Bash analysis produces, and the state its walkers share.

This module sits below both halves of the analysis — the syntax-tree walker in `bash.py`
and the wrapper unwrapping in `bash_wrappers.py` — so neither imports the other's
internals. Everything here is data: limits, result types, the walk's context, the
list of environment variables that change what a command runs, and an analysis in words.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeAlias

# Marks a word whose value is only known at run time; no rule contains it, so such a
# word can never satisfy a literal rule.
DYN = "\x00"
MAX_COMMAND_CHARS = 10_000
MAX_DEPTH = 6
MAX_PARTS = 64
MAX_NODES = 20_000

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "busybox"})
# Variables that change what a command does or which program runs; a part that sets one
# cannot be allowed by a rule written for the plain command.
_DANGEROUS_ENV_EXACT = frozenset(
    {
        "PATH",
        "IFS",
        "ENV",
        "BASH_ENV",
        "PS4",
        "SHELLOPTS",
        "BASHOPTS",
        "PROMPT_COMMAND",
        "HOME",
        "EDITOR",
        "VISUAL",
        "NODE_OPTIONS",
        "JAVA_TOOL_OPTIONS",
        "PERL5OPT",
        "PERL5LIB",
        "RUBYOPT",
        "RUBYLIB",
        "LESSOPEN",
        "LESSCLOSE",
        "BROWSER",
        "SSH_ASKPASS",
        "SUDO_ASKPASS",
        "CDPATH",
        "GLOBIGNORE",
        "ZDOTDIR",
        "XDG_CONFIG_HOME",
        "TMPDIR",
    }
)
_DANGEROUS_ENV_PREFIXES = (
    "LD_",
    "DYLD_",
    "GIT_",
    "BASH_FUNC_",
    "PYTHON",
    "NPM_CONFIG_",
    "npm_config_",
    "CARGO_",
    "RUSTC",
)


CREDENTIAL_NAME = re.compile(
    r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE|_PAT$|DSN|DATABASE_URL",
    re.IGNORECASE,
)
"""Variable names that say they hold a credential (shared with the Bash tool, which
leaves them out of read-only commands' environment)."""


def dangerous_env(name: str) -> bool:
    return (
        name in _DANGEROUS_ENV_EXACT
        or name.startswith(_DANGEROUS_ENV_PREFIXES)
        or "PAGER" in name
        or "EDITOR" in name
    )


@dataclass(frozen=True, slots=True)
class CommandPart:
    """One simple command the line would run.

    `views` go from the command as written (with wrappers) to the innermost program;
    deny/ask rules are tried on every view, allow rules on `views[allow_view]`.
    `needs_allow` is False for a `bash -c`/`eval` shell whose script became its own parts.
    """

    views: tuple[tuple[str, ...], ...]
    text: str
    cwd: tuple[Path, ...] | None
    env: tuple[str, ...] = ()
    wrappers: tuple[str, ...] = ()
    globbed: frozenset[int] = frozenset()
    allow_view: int = -1
    needs_allow: bool = True

    @property
    def argv(self) -> tuple[str, ...]:
        return self.views[-1]


@dataclass(frozen=True, slots=True)
class FileAccess:
    """A file a redirection opens: `>`/`>>`/`&>` write it, `<` reads it."""

    path: str
    write: bool
    cwd: tuple[Path, ...] | None
    text: str


@dataclass(slots=True)
class BashAnalysis:
    command: str
    parts: list[CommandPart] = field(default_factory=list[CommandPart])
    files: list[FileAccess] = field(default_factory=list[FileAccess])
    problems: list[str] = field(default_factory=list[str])
    # Pipelines as lists of argv[0] names, for guardrails such as `curl ... | sh`.
    pipelines: list[list[str]] = field(default_factory=list[list[str]])
    function_bodies: list[str] = field(default_factory=list[str])
    # Variables whose names say they hold a credential (`$GITHUB_TOKEN`), wherever expanded.
    credential_vars: list[str] = field(default_factory=list[str])


class AnalysisContext:
    """State threaded through one `analyze()` call.

    `nested` analyses a script string (`bash -c`, `eval`, `sudo -s`, `watch`) at a given
    depth into this same context. The wrapper code needs it but must not import the
    parser module that provides it (that module imports the wrappers), so the parser
    injects itself here when it creates the context.
    """

    __slots__ = ("analysis", "cwd", "home", "nested", "nodes")

    def __init__(
        self, analysis: BashAnalysis, cwd: Path | None, home: Path, nested: NestedAnalyzer
    ) -> None:
        self.analysis = analysis
        # Every directory the shell may be in: a `cd` that fails leaves it where it was,
        # so after `cd x` both the old and the new directory are possible.
        self.cwd: tuple[Path, ...] | None = (cwd,) if cwd is not None else None
        self.home = home
        self.nodes = 0
        self.nested = nested

    def problem(self, why: str) -> None:
        if why not in self.analysis.problems:
            self.analysis.problems.append(why)


# (script, context, depth) -> None: analyse `script` as commands into `context`.
NestedAnalyzer: TypeAlias = Callable[[str, AnalysisContext, int], None]


def describe(analysis: BashAnalysis) -> list[str]:
    """One line per part for `permissions check`: what runs, through which wrappers."""
    lines: list[str] = []
    for part in analysis.parts:
        shown = " ".join(a.replace(DYN, "…") for a in part.argv)
        via = f"  (via {' > '.join(part.wrappers)})" if part.wrappers else ""
        note = "" if part.needs_allow else "  (script analysed separately)"
        lines.append(f"{shown}{via}{note}")
    for f in analysis.files:
        lines.append(f"{'write' if f.write else 'read'} {f.path}  (redirection)")
    return lines


def static_args(argv: tuple[str, ...]) -> list[Any]:
    """Arguments with DYN shown as `…`, for messages."""
    return [a.replace(DYN, "…") for a in argv]
