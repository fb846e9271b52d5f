"""Which git commands only read, as a table of subcommands.

git's global options come first (only harmless ones; `-C DIR` is a path it reads), then
one subcommand whose options must not write, run programs or read other files (every
abbreviation of such an option included, as git takes unambiguous prefixes). Each
subcommand's entry says how it is used read-only: its operands read paths, it only lists
(branches, tags, remotes, config values), or it is refused for the arguments it got.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, TypeAlias

from aistack_tui.permissions.bash_model import DYN
from aistack_tui.permissions.readonly_specs import ReadOnly, words

GitUse: TypeAlias = Literal["refused", "lists", "reads", "shows"]
"""How a git command line is used: `reads` its operands are paths (and revisions),
`shows` the same and it prints file contents (work tree or history), `lists` it prints
names or settings only, `refused` it may write or is not known."""

_GIT_READ = words(
    "status diff log show blame rev-parse ls-files ls-tree cat-file describe shortlog grep "
    "merge-base whatchanged show-ref rev-list name-rev check-ignore for-each-ref "
    "count-objects annotate diff-tree diff-files diff-index"
)
# Subcommands that print file contents (working tree or history). A Read deny rule inside
# the project cannot be enforced on them (history is in .git/objects, not the denied path),
# so the engine asks for them when such a rule exists.
_GIT_CONTENT = words(
    "diff log show blame cat-file grep whatchanged annotate diff-tree diff-files diff-index"
)
# Long options of git's read commands that write, run programs or read other files; git
# takes unambiguous prefixes too, so every prefix of these is refused.
_GIT_FORBIDDEN = (
    "output", "output-directory", "ext-diff", "open-files-in-pager", "exec", "upload-pack",
    "receive-pack", "textconv", "filters", "batch", "batch-check", "batch-command",
    "batch-all-objects", "contents", "ignore-revs-file", "file", "blob", "no-index",
    "follow-symlinks", "config-env",
)
_GIT_GLOBAL_OK = words(
    "--no-pager -P --no-optional-locks --no-replace-objects --literal-pathspecs --paginate"
)
_GIT_SHORT_FORBIDDEN = "Of"  # grep -O CMD (open in pager), grep/config -f FILE
_BRANCH_LISTING = words(
    "-a -r -v -vv --list -l --show-current --all --remotes --merged --no-merged "
    "--contains --no-color --color"
)
_CONFIG_READS = words("--get --get-all --get-regexp --list -l")
_CONFIG_FLAGS = words(
    "--local --show-origin --show-scope --null -z --name-only --bool --int --path"
)


def git_option_ok(word: str) -> bool:
    """Whether an option of a git subcommand is neither dynamic nor (a prefix of) one that
    writes, runs a program or reads another file."""
    if DYN in word:
        return False
    if word.startswith("--"):
        name = word[2:].split("=", 1)[0]
        return bool(name) and not any(f.startswith(name) for f in _GIT_FORBIDDEN)
    return not any(c in _GIT_SHORT_FORBIDDEN for c in word[1:2])


def _branch(rest: tuple[str, ...]) -> GitUse:
    listing = all(w in _BRANCH_LISTING or w.startswith("--format") for w in rest)
    return "lists" if listing else "refused"


def _tag(rest: tuple[str, ...]) -> GitUse:
    return "refused" if rest and not ({"-l", "--list"} & set(rest)) else "lists"


def _remote(rest: tuple[str, ...]) -> GitUse:
    if rest in ((), ("-v",), ("--verbose",)) or rest[:1] == ("get-url",):
        return "lists"
    return "refused"


def _stash(rest: tuple[str, ...]) -> GitUse:
    return "shows" if rest[:1] in (("list",), ("show",)) else "refused"


def _config(rest: tuple[str, ...]) -> GitUse:
    if not _CONFIG_READS & set(rest):
        return "refused"
    known = _CONFIG_READS | _CONFIG_FLAGS
    return "refused" if any(w.startswith("-") and w not in known for w in rest) else "lists"


def _worktree(rest: tuple[str, ...]) -> GitUse:
    return "lists" if rest[:1] == ("list",) else "refused"


def _reads(rest: tuple[str, ...]) -> GitUse:
    return "reads"


def _shows(rest: tuple[str, ...]) -> GitUse:
    return "shows"


_SUBCOMMANDS: dict[str, Callable[[tuple[str, ...]], GitUse]] = {
    **dict.fromkeys(_GIT_READ - _GIT_CONTENT, _reads),
    **dict.fromkeys(_GIT_CONTENT, _shows),
    "branch": _branch,
    "tag": _tag,
    "remote": _remote,
    "stash": _stash,
    "config": _config,
    "worktree": _worktree,
}
"""How each read-only subcommand is used, given its arguments. Anything else (aliases,
fetch/pull/push/clone, whatever writes) is refused."""


def classify_git(argv: tuple[str, ...], globbed: frozenset[int]) -> ReadOnly | None:
    """The paths a read-only `git ...` reads, or None when it is not read-only."""
    start = _global_options(argv)
    if start is None:
        return None
    paths, i = start
    sub, rest = argv[i], argv[i + 1 :]
    options = rest[: rest.index("--")] if "--" in rest else rest
    if not all(git_option_ok(w) for w in options if w.startswith("-") and w != "-"):
        return None
    judge = _SUBCOMMANDS.get(sub)
    use: GitUse = judge(rest) if judge is not None else "refused"
    if use == "refused":
        return None
    result = ReadOnly(paths=paths, git_content=use == "shows")
    if use != "lists":
        _operands(result, rest, i + 1, globbed)
    return result


def _global_options(argv: tuple[str, ...]) -> tuple[list[str], int] | None:
    """The paths `-C` names and the index of the subcommand; None for any other global
    option (`-c`, `--config-env`, `--exec-path`, `--git-dir`, `--work-tree`...) or none."""
    paths: list[str] = []
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        word = argv[i]
        if word == "-C" and i + 1 < len(argv):
            paths.append(argv[i + 1])
            i += 2
            continue
        if word not in _GIT_GLOBAL_OK:
            return None
        i += 1
    return (paths, i) if i < len(argv) else None


def _operands(result: ReadOnly, rest: tuple[str, ...], first: int, globbed: frozenset[int]) -> None:
    """Add the paths a subcommand's operands name: plain paths, shell globs, and the path
    part of `REV:path` (relative to the repository root)."""
    after_dashes = False
    for offset, word in enumerate(rest, start=first):
        if word == "--" and not after_dashes:
            after_dashes = True
            continue
        if word.startswith("-") and not after_dashes:
            continue
        if ":" in word and not word.startswith(("/", "./", "../")):
            # `HEAD:private/x`, `:0:path`: the object's path, relative to the repo root.
            path = word.rsplit(":", 1)[1]
            if path:
                result.paths.append(path)
            continue
        (result.globs if offset in globbed else result.paths).append(word)
