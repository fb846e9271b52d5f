"""Which simple commands only read, and which paths they read.

An allowlist, not a blocklist: a command is read-only only if it is listed here, none of
its options is one that writes, runs a program or opens a pager, and it sets no variable
beyond a few harmless locale ones. Nothing that reaches the network is listed (curl,
ping, dig, ssh, `git fetch`...): "read-only" commands have leaked data over DNS before.
The classifier returns the path arguments; the engine then requires every one of them to
resolve inside the project (or another readable directory) and not to be a secrets file.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aistack_tui.permissions.bash_model import DYN

SAFE_ENV_PREFIXES = ("LC_",)
SAFE_ENV = frozenset(
    {"LANG", "LANGUAGE", "TZ", "NO_COLOR", "TERM", "COLUMNS", "LINES", "CLICOLOR", "CI"}
)

# name -> (how arguments are read, options that take a non-path value, forbidden options)
# kinds: "paths" every operand is a path; "none" operands are not paths;
# "pattern" the first operand is a pattern unless -e/-f gave one, the rest are paths.
_SPEC: dict[str, tuple[str, frozenset[str], frozenset[str]]] = {}


def _add(names: str, kind: str, values: str = "", forbidden: str = "") -> None:
    for name in names.split():
        _SPEC[name] = (kind, frozenset(values.split()), frozenset(forbidden.split()))


_add("cat tac nl rev fold expand unexpand paste", "paths", "-w -s -d -t")
_add("head tail", "paths", "-n -c --lines --bytes")
_add(
    "wc stat file md5sum sha1sum sha224sum sha256sum sha384sum sha512sum b2sum cksum",
    "paths",
    "-c --format -m",
)
_add("ls", "paths", "-I -w --ignore --hide --width --format --sort --time-style --color")
_add("du", "paths", "-d --max-depth -B --block-size --exclude -t --threshold")
_add("tree", "paths", "-L -I -P --charset", "-o -R --fromfile")
_add("diff cmp comm", "paths", "-U -C -W --label", "--to-file --from-file")
_add("od hexdump xxd strings", "paths", "-n -t -A -j -N -s -c -l -g", "-r -revert")
_add("readlink realpath dirname basename", "paths", "-s --suffix --relative-to")
_add("cut", "paths", "-d -f -c -b --delimiter --fields --characters --bytes")
_add(
    "sort",
    "paths",
    "-k -t -S --key --field-separator --buffer-size",
    "-o --output -T --temporary-directory --compress-program --files0-from",
)
_add("uniq", "paths", "-f -s -w")
_add(
    "grep egrep fgrep",
    "pattern",
    "-e -m -A -B -C -d -D --regexp --max-count --context",
    "--devices",
)
_add(
    "rg",
    "pattern",
    "-e -g -t -T -m -A -B -C -j -M -E --glob --type --type-not --iglob "
    "--max-count --context --threads --max-columns --encoding --sort --sortr --max-depth "
    "-r --replace --type-add",
    "--pre --pre-glob --hostname-bin --search-zip -z",
)
_add("ag", "pattern", "-G -A -B -C -m --ignore", "")
_add("jq", "pattern", "--arg --argjson --indent", "--rawfile --slurpfile -f --from-file")
_add(
    "echo printf true false pwd whoami id uname nproc arch uptime groups locale tty seq "
    "sleep printenv which type test [ :",
    "none",
    "",
    "-v",
)
_add("date", "none", "-d --date -u", "-s --set -f --file")
_add("hostname", "none", "", "")
_add("cd", "paths", "", "")
_add("find", "find", "", "-delete -fprint -fprint0 -fprintf -fls -files0-from")

_DEFAULT_TO_CWD = frozenset({"ls", "du", "tree", "find", "rg", "ag"})
_VERSION_ONLY = frozenset(
    {
        "python",
        "python3",
        "node",
        "npm",
        "npx",
        "pip",
        "pip3",
        "cargo",
        "go",
        "rustc",
        "java",
        "ruby",
        "gcc",
        "clang",
        "make",
        "uv",
        "git",
        "bash",
        "deno",
        "bun",
        "pnpm",
        "yarn",
        "tsc",
    }
)

_GIT_READ = frozenset(
    {
        "status",
        "diff",
        "log",
        "show",
        "blame",
        "rev-parse",
        "ls-files",
        "ls-tree",
        "cat-file",
        "describe",
        "shortlog",
        "grep",
        "merge-base",
        "whatchanged",
        "show-ref",
        "rev-list",
        "name-rev",
        "check-ignore",
        "for-each-ref",
        "count-objects",
        "annotate",
        "diff-tree",
        "diff-files",
        "diff-index",
    }
)
_GIT_FORBIDDEN = (
    "--output",
    "--ext-diff",
    "-O",
    "--open-files-in-pager",
    "--exec",
    "--upload-pack",
    "--receive-pack",
)
_GIT_GLOBAL_OK = frozenset(
    {
        "--no-pager",
        "-P",
        "--no-optional-locks",
        "--no-replace-objects",
        "--literal-pathspecs",
        "--paginate",
    }
)


@dataclass(slots=True)
class ReadOnly:
    """A read-only verdict: the paths (and shell globs) the command reads."""

    paths: list[str] = field(default_factory=list)
    globs: list[str] = field(default_factory=list)


def env_is_safe(names: tuple[str, ...]) -> bool:
    return all(n in SAFE_ENV or n.startswith(SAFE_ENV_PREFIXES) for n in names)


def _option_path(word: str) -> str | None:
    """A path hidden in an option (`--file=/etc/x`, `-f/etc/x`), for the inside check."""
    if "=" in word:
        value = word.split("=", 1)[1]
    else:
        cut = [word.find(c) for c in "/~." if word.find(c) > 1]
        if not cut:
            return None
        value = word[min(cut) :]
    if value.startswith(("/", "~", ".")) or "/" in value:
        return value
    return None


def _forbidden(word: str, forbidden: frozenset[str]) -> bool:
    if word in forbidden:
        return True
    head = word.split("=", 1)[0]
    if head in forbidden:
        return True
    # A short option cluster such as `-ro` or `-T/tmp`.
    return (
        word.startswith("-")
        and not word.startswith("--")
        and any(f"-{c}" in forbidden for c in word[1:])
    )


def classify(
    argv: tuple[str, ...], env: tuple[str, ...] = (), globbed: frozenset[int] = frozenset()
) -> ReadOnly | None:
    """The paths `argv` reads if it is a read-only command, else None."""
    if not argv or not env_is_safe(env) or any(DYN in a for a in argv[:1]):
        return None
    name = argv[0]
    if name in _VERSION_ONLY and len(argv) == 2 and argv[1] in ("--version", "-V", "version"):
        return ReadOnly()
    if name == "git":
        return _git(argv, globbed)
    if name in ("command",) and len(argv) >= 2 and argv[1] in ("-v", "-V"):
        return ReadOnly()
    if name in ("env",) and len(argv) == 1:
        return ReadOnly()
    spec = _SPEC.get(name)
    if spec is None:
        return None
    kind, values, forbidden = spec
    if name == "hostname" and any(not a.startswith("-") for a in argv[1:]):
        return None
    if name == "uniq" and sum(1 for a in argv[1:] if not a.startswith("-")) > 1:
        return None
    if name == "find":
        return _find(argv, globbed, forbidden)
    result = ReadOnly()
    operands: list[tuple[int, str]] = []
    pattern_given = False
    i = 1
    end_of_options = False
    while i < len(argv):
        word = argv[i]
        if not end_of_options and word == "--":
            end_of_options = True
        elif not end_of_options and word.startswith("-") and word != "-":
            if _forbidden(word, forbidden):
                return None
            if kind == "pattern" and word in ("-e", "--regexp"):
                pattern_given = True
                i += 2
                continue
            if kind == "pattern" and word in ("-f", "--file"):
                pattern_given = True
                if i + 1 < len(argv):
                    operands.append((i + 1, argv[i + 1]))
                i += 2
                continue
            if kind == "pattern" and word.startswith(("-e", "--regexp=")):
                pattern_given = True
            if word in values:
                i += 2
                continue
            hidden = _option_path(word)
            if hidden is not None:
                result.paths.append(hidden)
        else:
            operands.append((i, word))
        i += 1
    if kind == "pattern" and not pattern_given and operands:
        operands = operands[1:]
    if kind == "none":
        return result
    if not operands and name in _DEFAULT_TO_CWD:
        result.paths.append(".")
    for index, word in operands:
        if word == "-":
            continue
        if index in globbed:
            result.globs.append(word)
        else:
            result.paths.append(word)
    return result


def _find(
    argv: tuple[str, ...], globbed: frozenset[int], forbidden: frozenset[str]
) -> ReadOnly | None:
    result = ReadOnly()
    i = 1
    while i < len(argv) and argv[i] in ("-H", "-L", "-P"):
        i += 1
    starts: list[tuple[int, str]] = []
    while i < len(argv) and not argv[i].startswith(("-", "(", "!")):
        starts.append((i, argv[i]))
        i += 1
    for word in argv[i:]:
        if word in forbidden:
            return None
    if not starts:
        result.paths.append(".")
    for index, word in starts:
        (result.globs if index in globbed else result.paths).append(word)
    return result


def _git(argv: tuple[str, ...], globbed: frozenset[int]) -> ReadOnly | None:
    result = ReadOnly()
    i = 1
    while i < len(argv) and argv[i].startswith("-"):
        word = argv[i]
        if word == "-C" and i + 1 < len(argv):
            result.paths.append(argv[i + 1])
            i += 2
            continue
        if word not in _GIT_GLOBAL_OK:
            return None  # -c, --config-env, --exec-path, --git-dir, --work-tree...
        i += 1
    if i >= len(argv):
        return None
    sub, rest = argv[i], argv[i + 1 :]
    if any(w.split("=", 1)[0] in _GIT_FORBIDDEN or w.startswith("-O") for w in rest):
        return None
    if sub in _GIT_READ:
        pass
    elif sub == "branch":
        listing = {
            "-a",
            "-r",
            "-v",
            "-vv",
            "--list",
            "-l",
            "--show-current",
            "--all",
            "--remotes",
            "--merged",
            "--no-merged",
            "--contains",
            "--no-color",
            "--color",
        }
        if not all(w in listing or w.startswith("--format") for w in rest) and "--list" not in rest:
            return None
        return result
    elif sub == "tag":
        if rest and not ({"-l", "--list"} & set(rest)):
            return None
        return result
    elif sub == "remote":
        if rest not in ((), ("-v",), ("--verbose",)) and (not rest or rest[0] != "get-url"):
            return None
        return result
    elif sub == "stash":
        if not rest or rest[0] not in ("list", "show"):
            return None
    elif sub == "config":
        if not rest or not {"--get", "--get-all", "--list", "-l", "--get-regexp"} & set(rest):
            return None
        return result
    elif sub == "worktree":
        if rest[:1] != ("list",):
            return None
        return result
    else:
        return None  # aliases, fetch/pull/push/clone and anything that writes
    for offset, word in enumerate(rest, start=i + 1):
        if word.startswith("-"):
            hidden = _option_path(word)
            if hidden is not None:
                result.paths.append(hidden)
            continue
        (result.globs if offset in globbed else result.paths).append(word)
    return result


def risky_option(argv: tuple[str, ...]) -> str | None:
    """An option that makes a usually harmless command write files or run programs
    (`git log --output=F`, `git grep -O CMD`, `rg --pre CMD`, `sort -o F`, `find -delete`).

    A prefix rule such as `Bash(git log:*)` was written for the harmless use; the engine
    asks instead of letting the rule cover these.
    """
    if not argv:
        return None
    if argv[0] == "git":
        for word in argv[1:]:
            head = word.split("=", 1)[0]
            if head in _GIT_FORBIDDEN or word.startswith("-O"):
                return word
        return None
    spec = _SPEC.get(argv[0])
    if spec is None:
        return None
    for word in argv[1:]:
        if word.startswith("-") and word != "-" and _forbidden(word, spec[2]):
            return word
    return None
