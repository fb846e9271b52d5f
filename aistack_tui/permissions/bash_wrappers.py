"""Looking through wrapper commands to the program they run.

`sudo make`, `timeout 5 make`, `env X=1 make`, `xargs make`, `find -exec make {} ;` and
`nice -n 5 make` all run `make`; a rule written for `make` must be tried on it, and a deny
rule for `sudo` on the whole. `add_part` peels one wrapper at a time, keeping every view
from the outermost to the innermost, and records the result as a `CommandPart`. Scripts
handed to a shell (`bash -c`, `eval`, `sudo -s`, `watch`) go back to the parser through
`AnalysisContext.nested`, so this module never imports the parser. `cd` is followed here
too, because it is a command whose effect is on the context rather than on files.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeAlias

from aistack_tui.permissions.bash_model import (
    DYN,
    SHELLS,
    AnalysisContext,
    CommandPart,
    FileAccess,
)

# Programs a pipeline stage may start with that only run the next word; the walker's
# pipeline guardrail names look past them.
PIPE_WRAPPERS = frozenset(
    {
        "sudo",
        "doas",
        "env",
        "timeout",
        "nice",
        "nohup",
        "stdbuf",
        "command",
        "exec",
        "time",
        "ionice",
        "setsid",
    }
)


def _skip_options(
    argv: tuple[str, ...], i: int, with_value: frozenset[str], flags_ok: bool = True
) -> int:
    """Index of the first non-option word from `i`; `with_value` options eat the next word."""
    while i < len(argv):
        word = argv[i]
        if word == "--":
            return i + 1
        if not word.startswith("-") or word == "-":
            return i
        if word in with_value:
            i += 2
            continue
        if not flags_ok:
            return i
        i += 1
    return i


_TIMEOUT_OPTS = frozenset({"-s", "--signal", "-k", "--kill-after"})
_NICE_OPTS = frozenset({"-n", "--adjustment"})
_SUDO_OPTS = frozenset(
    {
        "-u",
        "-g",
        "-p",
        "-C",
        "-h",
        "-D",
        "-R",
        "-T",
        "-U",
        "-r",
        "-t",
        "--user",
        "--group",
        "--prompt",
        "--chdir",
        "--host",
    }
)
_XARGS_OPTS = frozenset(
    {
        "-a",
        "-d",
        "-E",
        "-I",
        "-L",
        "-n",
        "-P",
        "-s",
        "--arg-file",
        "--delimiter",
        "--max-args",
        "--max-procs",
        "--max-chars",
        "--max-lines",
        "--replace",
        "--eof",
        "--process-slot-var",
    }
)
_STDBUF_OPTS = frozenset({"-i", "-o", "-e"})
_IONICE_OPTS = frozenset({"-c", "-n", "-p", "-P", "-u", "--class", "--classdata"})
_EXEC_TRANSPARENT = frozenset({"nohup", "time", "command", "builtin", "exec", "setsid"})
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


def _shell_script(argv: tuple[str, ...]) -> tuple[str | None, bool]:
    """For `bash [opts] -c SCRIPT`, the script (None if dynamic) and True; else (None, False)."""
    i = 1
    while i < len(argv):
        word = argv[i]
        if word in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            i += 2
            continue
        if word.startswith("--"):
            i += 1
            continue
        if word.startswith(("-", "+")) and len(word) > 1:
            if "c" in word[1:]:
                script = argv[i + 1] if i + 1 < len(argv) else ""
                return (None if DYN in script else script), True
            i += 1
            continue
        break
    return None, False


@dataclass(slots=True)
class _Call:
    """One command being looked through: what `add_part` was given, as a wrapper's
    handler may change it (`env X=1` adds a variable, `find -exec` drops its command)."""

    argv: tuple[str, ...]
    text: str
    globbed: frozenset[int]
    env: tuple[str, ...]
    ctx: AnalysisContext
    depth: int
    views: tuple[tuple[str, ...], ...]
    wrappers: tuple[str, ...]

    def record(self, wrappers: tuple[str, ...], allow_view: int, needs_allow: bool) -> None:
        _record(
            self.views, self.text, self.globbed, self.env, self.ctx, wrappers, allow_view,
            needs_allow,
        )

    def nested(self, script: str, problem: str) -> None:
        """Analyse `script` as commands of its own, or name the problem when it is dynamic."""
        if DYN in script:
            self.ctx.problem(problem)
        else:
            self.ctx.nested(script, self.ctx, self.depth + 1)


class _Handled:
    """A handler's answer when it recorded the part (or refused it) itself."""


HANDLED = _Handled()
_Step: TypeAlias = "int | _Handled | None"
"""What a wrapper's handler says: the index its inner command starts at (looked through
like any wrapper), None (no inner command: record the part as it is) or HANDLED."""


def add_part(
    argv: tuple[str, ...],
    text: str,
    globbed: frozenset[int],
    env: tuple[str, ...],
    ctx: AnalysisContext,
    depth: int,
    views: tuple[tuple[str, ...], ...],
    wrappers: tuple[str, ...],
    allow_outer: bool = False,
) -> None:
    """Record `argv` as a part, first looking through any wrapper it starts with."""
    call = _Call(argv, text, globbed, env, ctx, depth, (*views, argv), wrappers)
    name = argv[0].rsplit("/", 1)[-1] if argv and "/" in argv[0] else (argv[0] if argv else "")
    handler = _HANDLERS.get(name)
    step = handler(call, name) if handler is not None else None
    if isinstance(step, _Handled):
        return
    if step is not None and step < len(call.argv):
        inner = call.argv[step:]
        if DYN in inner[0]:
            ctx.problem("a wrapper runs a command chosen at run time")
            return
        shifted = frozenset(i - step for i in call.globbed if i >= step)
        add_part(
            inner, text, shifted, call.env, ctx, depth, call.views, (*wrappers, name),
            allow_outer=allow_outer,
        )
        return
    call.record(wrappers, 0 if allow_outer else -1, True)


def _cd_part(call: _Call, name: str) -> _Step:
    call.record(call.wrappers, -1, True)
    _cd(call.argv, call.ctx)
    return HANDLED


def _env(call: _Call, name: str) -> _Step:
    argv, i = call.argv, 1
    while i < len(argv):
        word = argv[i]
        if word in ("-u", "--unset"):
            i += 2
        elif word in ("-C", "--chdir") or word.startswith(("--chdir=", "-C")):
            call.ctx.cwd = None
            i += 2 if word in ("-C", "--chdir") else 1
        elif word.startswith(("-S", "--split-string")):
            call.ctx.problem("env -S splits a string into a command")
            return HANDLED
        elif word.startswith("-") and word != "-":
            i += 1
        elif "=" in word and not word.startswith("="):
            call.env = (*call.env, word.split("=", 1)[0])
            i += 1
        else:
            break
    return i


def _timeout(call: _Call, name: str) -> _Step:
    return _skip_options(call.argv, 1, _TIMEOUT_OPTS) + 1  # the duration comes first


def _nice(call: _Call, name: str) -> _Step:
    argv, i = call.argv, 1
    if i < len(argv) and argv[i].startswith("-") and argv[i][1:].lstrip("-").isdigit():
        i += 1
    return _skip_options(argv, i, _NICE_OPTS)


def _with_options(options: frozenset[str]) -> Callable[[_Call, str], _Step]:
    """A wrapper whose own options (`options` taking a value) come before the command."""
    return lambda call, name: _skip_options(call.argv, 1, options)


def _transparent(call: _Call, name: str) -> _Step:
    if name in ("command", "builtin") and any(a in ("-v", "-V") for a in call.argv[1:2]):
        return None  # `command -v make` only looks `make` up
    return _skip_options(call.argv, 1, frozenset({"-a"}))


def _sudo(call: _Call, name: str) -> _Step:
    argv = call.argv
    i = _skip_options(argv, 1, _SUDO_OPTS)
    if i >= len(argv):
        return None
    if any(o in ("-s", "-i", "--shell", "--login") for o in argv[1:i]):
        call.nested(" ".join(argv[i:]), "sudo -s with a dynamic command")
        call.record((*call.wrappers, name), 0, True)
        return HANDLED
    # A rule for the inner command allows it, but a deny rule for `sudo` still sees it all.
    add_part(
        argv[i:], call.text, frozenset(), call.env, call.ctx, call.depth, call.views,
        (*call.wrappers, name), allow_outer=True,
    )
    return HANDLED


def _xargs(call: _Call, name: str) -> _Step:
    i, replace = _xargs_options(call)
    inner = call.argv[i:] or ("echo",)
    inner = tuple(DYN if replace in a else a for a in inner) if replace else (*inner, DYN)
    if DYN in inner[0]:
        call.ctx.problem("xargs runs a command chosen at run time")
        return HANDLED
    add_part(
        inner, call.text, frozenset(), call.env, call.ctx, call.depth, call.views,
        (*call.wrappers, name),
    )
    return HANDLED


def _xargs_options(call: _Call) -> tuple[int, str | None]:
    """Where xargs' command starts, and its `-I` replacement string; an `-a FILE` it reads
    its arguments from is recorded as a read, like `<` would be."""
    argv, i = call.argv, 1
    replace: str | None = None
    while i < len(argv):
        word = argv[i]
        if word == "--":
            return i + 1, replace
        if not word.startswith("-") or word == "-":
            break
        if word in ("-I", "--replace"):
            replace = argv[i + 1] if i + 1 < len(argv) else None
            i += 2
        elif word.startswith("-I") and len(word) > 2:
            replace = word[2:]
            i += 1
        elif word in ("-a", "--arg-file"):
            value = argv[i + 1] if i + 1 < len(argv) else ""
            call.ctx.analysis.files.append(FileAccess(value, False, call.ctx.cwd, call.text))
            i += 2
        elif word.startswith(("--arg-file=", "-a")):
            value = word.split("=", 1)[1] if "=" in word else word[2:]
            call.ctx.analysis.files.append(FileAccess(value, False, call.ctx.cwd, call.text))
            i += 1
        else:
            i += 2 if word in _XARGS_OPTS else 1
    return i, replace


def _shell(call: _Call, name: str) -> _Step:
    script, is_c = _shell_script(call.argv)
    if not is_c:
        return None
    if script is None:
        call.ctx.problem(f"{name} -c with a script that depends on variables")
    else:
        call.ctx.nested(script, call.ctx, call.depth + 1)
    call.record((*call.wrappers, name), -1, False)
    return HANDLED


def _eval(call: _Call, name: str) -> _Step:
    call.nested(" ".join(call.argv[1:]), "eval of a string that depends on variables")
    call.record((*call.wrappers, name), -1, False)
    return HANDLED


def _watch(call: _Call, name: str) -> _Step:
    i = _skip_options(call.argv, 1, frozenset({"-n", "--interval", "-d", "--differences"}))
    script = " ".join(call.argv[i:])
    if script:
        call.nested(script, "watch of a command that depends on variables")
    else:
        call.ctx.problem("watch of a command that depends on variables")
    call.record((*call.wrappers, name), -1, False)
    return HANDLED


def _find_part(call: _Call, name: str) -> _Step:
    call.argv, call.globbed = _find(
        call.argv, call.globbed, call.text, call.env, call.ctx, call.depth, call.wrappers
    )
    call.views = (*call.views[:-1], call.argv)
    return None


def _changes_shell(call: _Call, name: str) -> _Step:
    call.ctx.problem(f"{name} changes how the shell runs later commands")
    return HANDLED


_HANDLERS: dict[str, Callable[[_Call, str], _Step]] = {
    **dict.fromkeys(("cd", "pushd", "popd"), _cd_part),
    "env": _env,
    "timeout": _timeout,
    "nice": _nice,
    "stdbuf": _with_options(_STDBUF_OPTS),
    "ionice": _with_options(_IONICE_OPTS),
    **dict.fromkeys(_EXEC_TRANSPARENT, _transparent),
    "sudo": _sudo,
    "doas": _sudo,
    "xargs": _xargs,
    **dict.fromkeys(SHELLS, _shell),
    "eval": _eval,
    "watch": _watch,
    "find": _find_part,
    **dict.fromkeys(
        ("coproc", "trap", "alias", "enable", "shopt", "set", "hash", "fc"), _changes_shell
    ),
}
"""How each wrapper is looked through, by its program name (any other program is recorded
as it is)."""


def _record(
    views: tuple[tuple[str, ...], ...],
    text: str,
    globbed: frozenset[int],
    env: tuple[str, ...],
    ctx: AnalysisContext,
    wrappers: tuple[str, ...],
    allow_view: int,
    needs_allow: bool,
) -> None:
    ctx.analysis.parts.append(
        CommandPart(
            views=views,
            text=text,
            cwd=ctx.cwd,
            env=env,
            wrappers=wrappers,
            globbed=globbed,
            allow_view=allow_view,
            needs_allow=needs_allow,
        )
    )


def _find(
    argv: tuple[str, ...],
    globbed: frozenset[int],
    text: str,
    env: tuple[str, ...],
    ctx: AnalysisContext,
    depth: int,
    wrappers: tuple[str, ...],
) -> tuple[tuple[str, ...], frozenset[int]]:
    """Split `find ... -exec CMD {} ;` into the find itself and CMD as its own part."""
    kept: list[str] = []
    kept_globbed: set[int] = set()
    i = 0
    while i < len(argv):
        word = argv[i]
        if word in _FIND_EXEC:
            j = i + 1
            while j < len(argv) and argv[j] not in (";", "+"):
                j += 1
            inner = tuple(DYN if "{}" in a else a for a in argv[i + 1 : j])
            if not inner or DYN in inner[0]:
                ctx.problem(f"find {word} runs a command chosen at run time")
            else:
                add_part(inner, text, frozenset(), env, ctx, depth, (), (*wrappers, "find"))
            i = j + 1
            continue
        if i in globbed:
            kept_globbed.add(len(kept))
        kept.append(word)
        i += 1
    return tuple(kept), frozenset(kept_globbed)


def _cd(argv: tuple[str, ...], ctx: AnalysisContext) -> None:
    """Follow `cd DIR`: later relative paths are checked from the old and the new place."""
    args = [a for a in argv[1:] if not a.startswith("-")] if argv[0] == "cd" else None
    if args is None or len(args) > 1 or "-" in argv[1:] or ctx.cwd is None:
        ctx.cwd = None
        return
    target = args[0] if args else str(ctx.home)
    if DYN in target:
        ctx.cwd = None
        return
    new = [Path(os.path.realpath(os.path.join(str(base), target))) for base in ctx.cwd]
    ctx.cwd = tuple(dict.fromkeys([*ctx.cwd, *new]))
