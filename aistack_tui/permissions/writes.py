"""Files a command writes without a redirection: `tee -a ~/.bashrc`, `sed -i`, `cp x DEST`.

A redirection is checked as an Edit of its target; these commands write just as surely,
so their targets get the same check: an Edit deny rule denies them, and a protected path
(`.git/config`, shell start-up files, `.mcp.json`...) asks in every mode. The list is of
well-known writers; anything else is unknown to the engine and asks unless a rule allows
it (and then runs in the sandbox, which keeps protected paths read-only).
"""

from __future__ import annotations

from collections.abc import Callable


def _operands(argv: tuple[str, ...], with_value: frozenset[str] = frozenset()) -> list[str]:
    out: list[str] = []
    i = 1
    end = False
    while i < len(argv):
        word = argv[i]
        if not end and word == "--":
            end = True
        elif not end and word.startswith("-") and word != "-":
            if word in with_value:
                i += 1
        else:
            out.append(word)
        i += 1
    return out


_CP_VALUES = frozenset({"-t", "--target-directory", "-S", "--suffix"})


def implied_writes(argv: tuple[str, ...]) -> list[str]:
    """The paths `argv` writes (as written, relative to its cwd); [] when none is known."""
    if not argv:
        return []
    name = argv[0].rsplit("/", 1)[-1]
    writer = _WRITERS.get(name)
    written = writer(argv) if writer is not None else None
    if written is not None:
        return written
    out = _output_options(argv, long_name="output", short="o" if name in ("sort", "tree") else "")
    if out:
        return out
    if name == "git" and len(argv) > 1:
        return _git_writes(argv)
    return []


def _tee(argv: tuple[str, ...]) -> list[str] | None:
    return _operands(argv)


def _touches(argv: tuple[str, ...]) -> list[str] | None:
    """`touch`, `mkdir`, `rm`, `chmod MODE`...: every operand (after the mode or owner)."""
    ops = _operands(argv, frozenset({"-s", "--size", "-r", "--reference", "-m", "--mode"}))
    return ops[1:] if argv[0].rsplit("/", 1)[-1] in ("chmod", "chown", "chgrp") else ops


def _copies(argv: tuple[str, ...]) -> list[str] | None:
    """`cp`, `mv`, `install`, `ln`, `rsync`: the target directory, or the last operand."""
    for i, word in enumerate(argv):
        if word in ("-t", "--target-directory") and i + 1 < len(argv):
            return [argv[i + 1]]
        if word.startswith("--target-directory="):
            return [word.split("=", 1)[1]]
    ops = _operands(argv, _CP_VALUES)
    return ops[-1:] if len(ops) >= 2 else []


_SCRIPT_OPTIONS = frozenset({"-e", "-f", "--expression", "--file"})


def _in_place(argv: tuple[str, ...]) -> list[str] | None:
    """`sed -i`, `perl -i`: the files edited (None without `-i`: it writes nothing)."""
    if not any(
        w == "-i" or w.startswith(("-i", "--in-place"))
        or (w.startswith("-") and "i" in w[1:] and not w.startswith("--"))
        for w in argv[1:]
    ):
        return None
    ops = _operands(argv, _SCRIPT_OPTIONS)
    has_script_option = any(w in _SCRIPT_OPTIONS for w in argv)
    return ops if has_script_option else ops[1:]


def _dd(argv: tuple[str, ...]) -> list[str] | None:
    return [w[3:] for w in argv[1:] if w.startswith("of=")]


def _second_operand(argv: tuple[str, ...]) -> list[str] | None:
    ops = _operands(argv, frozenset({"-c", "-g", "-l", "-o", "-s", "-n", "-f", "-w"}))
    return ops[1:2]  # `xxd IN OUT`, `uniq IN OUT`


_WRITERS: dict[str, Callable[[tuple[str, ...]], list[str] | None]] = {
    "tee": _tee,
    **dict.fromkeys(
        ("touch", "truncate", "mkdir", "rm", "rmdir", "unlink", "shred", "chmod", "chown",
         "chgrp"),
        _touches,
    ),
    **dict.fromkeys(("cp", "mv", "install", "ln", "rsync"), _copies),
    **dict.fromkeys(("sed", "perl"), _in_place),
    "dd": _dd,
    **dict.fromkeys(("xxd", "uniq"), _second_operand),
}
"""What each well-known writer writes; None from one: look at its output options."""


def _output_options(argv: tuple[str, ...], *, long_name: str, short: str) -> list[str]:
    """Values of `--output=F` (any unambiguous prefix, as getopt and git accept) and of a
    short `-o F` / `-oF` where the command has one (`sort -o`, `git log --output`)."""
    out: list[str] = []
    for i, word in enumerate(argv[1:], start=1):
        if word.startswith("--") and len(word) > 4:
            name, eq, value = word[2:].partition("=")
            if long_name.startswith(name) and len(name) >= 2:
                value = value if eq else (argv[i + 1] if i + 1 < len(argv) else "")
                out.append(value)
        elif short and word.startswith("-") and not word.startswith("--") and short in word:
            value = word[word.index(short) + 1 :] or (argv[i + 1] if i + 1 < len(argv) else "")
            out.append(value)
    return [v for v in out if v]


def _git_writes(argv: tuple[str, ...]) -> list[str]:
    """`git config` (anything but reading) writes the repository's or the user's config."""
    sub_index = 1
    while sub_index < len(argv) and argv[sub_index].startswith("-"):
        sub_index += 2 if argv[sub_index] in ("-C", "-c") else 1
    if sub_index >= len(argv):
        return []
    sub, rest = argv[sub_index], argv[sub_index + 1 :]
    reads = {"--get", "--get-all", "--get-regexp", "--list", "-l", "get", "list"}
    if sub == "config" and not reads & set(rest):
        if "--global" in rest:
            return ["~/.gitconfig"]
        if "--system" in rest:
            return ["/etc/gitconfig"]
        for i, word in enumerate(rest):
            if word in ("-f", "--file") and i + 1 < len(rest):
                return [rest[i + 1]]
        return [".git/config"]
    if sub in ("remote", "submodule") and rest and rest[0] not in ("-v", "show", "get-url"):
        return [".git/config"]
    return []

