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
from pathlib import Path

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
    views = (*views, argv)
    name = argv[0].rsplit("/", 1)[-1] if argv and "/" in argv[0] else (argv[0] if argv else "")
    inner_start: int | None = None
    if name in ("cd", "pushd", "popd"):
        _record(views, text, globbed, env, ctx, wrappers, -1, True)
        _cd(argv, ctx)
        return None
    if name == "env":
        i = 1
        while i < len(argv):
            word = argv[i]
            if word in ("-u", "--unset"):
                i += 2
            elif word in ("-C", "--chdir") or word.startswith(("--chdir=", "-C")):
                ctx.cwd = None
                i += 2 if word in ("-C", "--chdir") else 1
            elif word.startswith(("-S", "--split-string")):
                ctx.problem("env -S splits a string into a command")
                return
            elif word.startswith("-") and word != "-":
                i += 1
            elif "=" in word and not word.startswith("="):
                env = (*env, word.split("=", 1)[0])
                i += 1
            else:
                break
        inner_start = i if i < len(argv) else None
    elif name == "timeout":
        i = _skip_options(argv, 1, _TIMEOUT_OPTS)
        inner_start = i + 1 if i + 1 < len(argv) else None
    elif name == "nice":
        i = 1
        if i < len(argv) and argv[i].startswith("-") and argv[i][1:].lstrip("-").isdigit():
            i += 1
        inner_start = _skip_options(argv, i, _NICE_OPTS)
    elif name in ("stdbuf", "ionice"):
        inner_start = _skip_options(argv, 1, _STDBUF_OPTS if name == "stdbuf" else _IONICE_OPTS)
    elif name in _EXEC_TRANSPARENT:
        if name in ("command", "builtin") and any(a in ("-v", "-V") for a in argv[1:2]):
            inner_start = None
        else:
            inner_start = _skip_options(argv, 1, frozenset({"-a"}))
    elif name in ("sudo", "doas"):
        i = _skip_options(argv, 1, _SUDO_OPTS)
        opts = argv[1:i]
        if any(o in ("-s", "-i", "--shell", "--login") for o in opts) and i < len(argv):
            script = " ".join(argv[i:])
            if DYN in script:
                ctx.problem("sudo -s with a dynamic command")
            else:
                ctx.nested(script, ctx, depth + 1)
            return _record(views, text, globbed, env, ctx, (*wrappers, name), 0, True)
        if i < len(argv):
            return add_part(
                argv[i:],
                text,
                frozenset(),
                env,
                ctx,
                depth,
                views,
                (*wrappers, name),
                allow_outer=True,
            )
    elif name == "xargs":
        i = 1
        replace: str | None = None
        while i < len(argv):
            word = argv[i]
            if word == "--":
                i += 1
                break
            if not word.startswith("-") or word == "-":
                break
            if word in ("-I", "--replace"):
                replace = argv[i + 1] if i + 1 < len(argv) else None
                i += 2
            elif word.startswith("-I") and len(word) > 2:
                replace = word[2:]
                i += 1
            elif word in ("-a", "--arg-file") or word.startswith(("--arg-file=", "-a")):
                # xargs reads its arguments from this file: a read like `<` would be.
                if word in ("-a", "--arg-file"):
                    value = argv[i + 1] if i + 1 < len(argv) else ""
                    i += 2
                else:
                    value = word.split("=", 1)[1] if "=" in word else word[2:]
                    i += 1
                ctx.analysis.files.append(FileAccess(value, False, ctx.cwd, text))
            elif word in _XARGS_OPTS:
                i += 2
            else:
                i += 1
        inner = argv[i:] or ("echo",)
        inner = tuple(DYN if replace in a else a for a in inner) if replace else (*inner, DYN)
        if DYN in inner[0]:
            ctx.problem("xargs runs a command chosen at run time")
            return
        return add_part(inner, text, frozenset(), env, ctx, depth, views, (*wrappers, name))
    elif name in SHELLS:
        script, is_c = _shell_script(argv)
        if is_c:
            if script is None:
                ctx.problem(f"{name} -c with a script that depends on variables")
            else:
                ctx.nested(script, ctx, depth + 1)
            return _record(views, text, globbed, env, ctx, (*wrappers, name), -1, False)
    elif name == "eval":
        script = " ".join(argv[1:])
        if DYN in script:
            ctx.problem("eval of a string that depends on variables")
        else:
            ctx.nested(script, ctx, depth + 1)
        return _record(views, text, globbed, env, ctx, (*wrappers, name), -1, False)
    elif name in ("watch",):
        i = _skip_options(argv, 1, frozenset({"-n", "--interval", "-d", "--differences"}))
        script = " ".join(argv[i:])
        if DYN in script or not script:
            ctx.problem("watch of a command that depends on variables")
        else:
            ctx.nested(script, ctx, depth + 1)
        return _record(views, text, globbed, env, ctx, (*wrappers, name), -1, False)
    elif name == "find":
        argv, globbed = _find(argv, globbed, text, env, ctx, depth, wrappers)
        views = (*views[:-1], argv)
    elif name in ("coproc", "trap", "alias", "enable", "shopt", "set", "hash", "fc"):
        ctx.problem(f"{name} changes how the shell runs later commands")
        return
    if inner_start is not None and inner_start < len(argv):
        inner = argv[inner_start:]
        if DYN in inner[0]:
            ctx.problem("a wrapper runs a command chosen at run time")
            return
        shifted = frozenset(i - inner_start for i in globbed if i >= inner_start)
        return add_part(
            inner, text, shifted, env, ctx, depth, views, (*wrappers, name), allow_outer=allow_outer
        )
    allow_view = 0 if allow_outer else -1
    return _record(views, text, globbed, env, ctx, wrappers, allow_view, True)


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
