"""Which simple commands only read, and which paths they read.

An allowlist, not a blocklist, down to each option: a command is read-only only if it is
listed (`readonly_specs.py`, git in `readonly_git.py`) and **every option it is given is
one the table knows** for that command.
Options are parsed the way the command parses them (GNU getopt_long: short clusters like
`-An`, values attached or in the next word, and long options abbreviated to any
unambiguous prefix, so `--ou` is `--output`). An unknown option, an ambiguous
abbreviation, or any prefix of an option that writes or runs a program makes the command
not read-only, and the engine asks. Option values that name files (`--files0-from=F`,
`date -f F`, `file -m F`) are returned as paths, whatever they look like.

Nothing that reaches the network is listed, nor anything that dumps the environment
(`env`, `printenv`, `jq env`). The engine then requires every returned path to resolve
inside the project (or another readable directory) and not to be a secrets file.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from aistack_tui.permissions.bash_model import DYN
from aistack_tui.permissions.readonly_git import classify_git, git_option_ok
from aistack_tui.permissions.readonly_specs import SPECS, ReadOnly, Spec, words

# Variables a command may be given (`LC_ALL=C sort`) and still count as the same command.
# Everything else asks: `MAKEFLAGS`, `RIPGREP_CONFIG_PATH`, `GIT_*`... change what runs.
SAFE_ENV_PREFIXES = ("LC_",)
SAFE_ENV = frozenset(
    {
        "LANG", "LANGUAGE", "TZ", "NO_COLOR", "FORCE_COLOR", "TERM", "COLUMNS", "LINES",
        "CLICOLOR", "CI", "NODE_ENV", "RUST_BACKTRACE", "RUST_LOG", "PYTHONUNBUFFERED",
        "PYTHONDONTWRITEBYTECODE", "PYTHONHASHSEED", "DEBUG", "VERBOSE",
    }
)


def env_is_safe(names: tuple[str, ...]) -> bool:
    """Whether variables set on a command line (`LC_ALL=C sort`) leave it the same command."""
    return all(n in SAFE_ENV or n.startswith(SAFE_ENV_PREFIXES) for n in names)


# xxd parses its own single-dash words (`-len 10`, `-ps`); only these, at most one input.
_XXD_FLAGS = words("-a -b -C -E -e -i -p -ps -plain -postscript -u -d -autoskip -bits")
_XXD_VALUES = words("-c -cols -g -groupsize -l -len -o -s -seek -n -name")

_VERSION_ONLY = words(
    "python python3 node npm npx pip pip3 cargo go rustc java ruby gcc clang make uv git "
    "bash deno bun pnpm yarn tsc"
)

_DASH_V_IS_VERSION = words("node npm npx deno bun pnpm yarn")


def classify(
    argv: tuple[str, ...], env: tuple[str, ...] = (), globbed: frozenset[int] = frozenset()
) -> ReadOnly | None:
    """The paths `argv` reads if it is a read-only command, else None."""
    if not argv or not env_is_safe(env) or DYN in argv[0]:
        return None
    name = argv[0]
    if _asks_version(argv):
        return ReadOnly()
    own_parser = _OWN_PARSERS.get(name)
    if own_parser is not None:
        return own_parser(argv, globbed)
    spec = SPECS.get(name)
    if spec is None:
        return None
    return _by_spec(spec, argv, globbed)


def _asks_version(argv: tuple[str, ...]) -> bool:
    name = argv[0]
    if name in _VERSION_ONLY and len(argv) == 2 and argv[1] in ("--version", "-V", "version"):
        return True
    return name in _DASH_V_IS_VERSION and argv[1:] == ("-v",)


def _by_spec(spec: Spec, argv: tuple[str, ...], globbed: frozenset[int]) -> ReadOnly | None:
    parsed = parse_options(spec, argv)
    if parsed is None:
        return None
    result, operands, pattern_given = parsed
    if argv[0] == "jq" and not _jq_program_ok(argv, operands, pattern_given):
        return None
    if spec.operands == "pattern" and not pattern_given and operands:
        operands = operands[1:]
    if spec.max_operands is not None and len(operands) > spec.max_operands:
        return None
    if spec.operands == "none":
        return result
    if not operands and (spec.always_recursive or result.recursive or argv[0] == "ls"):
        result.paths.append(".")
    for index, word in operands:
        if word == "-":
            continue
        (result.globs if index in globbed else result.paths).append(word)
    return result


def parse_options(
    spec: Spec, argv: tuple[str, ...]
) -> tuple[ReadOnly, list[tuple[int, str]], bool] | None:
    """(paths from option values, operands with their indexes, a pattern option was given),
    or None when an option is unknown, ambiguous, forbidden or lacks its value."""
    options = _Options(spec, argv, ReadOnly(recursive=spec.always_recursive))
    operands: list[tuple[int, str]] = []
    i = 1
    end_of_options = False
    while i < len(argv):
        word = argv[i]
        if end_of_options or word == "-" or not word.startswith("-"):
            operands.append((i, word))
            i += 1
            continue
        if word == "--":
            end_of_options = True
            i += 1
            continue
        if DYN in word:
            return None  # an option chosen at run time could be anything
        after = options.long(i) if word.startswith("--") else options.short(i)
        if after is None:
            return None
        i = after
    return options.result, operands, options.pattern_given


@dataclass(slots=True)
class _Options:
    """The options of one command line as `parse_options` reads them, one word at a time:
    each method takes the index of an option word and returns the index after it (after
    its value too), or None when the command is not read-only with it."""

    spec: Spec
    argv: tuple[str, ...]
    result: ReadOnly
    pattern_given: bool = False

    def long(self, i: int) -> int | None:
        spec, argv = self.spec, self.argv
        name, eq, value = argv[i][2:].partition("=")
        full = resolve_long(spec, name)
        if full is None:
            return None
        if full in spec.recursive:
            self.result.recursive = True
        if full in spec.pattern_options:
            self.pattern_given = True
        if full in spec.long_flags:
            return None if eq else i + 1
        if full in spec.long_optional:
            return i + 1
        if not eq:
            if i + 1 >= len(argv):
                return None
            i += 1
            value = argv[i]
        if full in spec.long_paths:
            self.result.paths.append(value)
        return i + 1

    def short(self, i: int) -> int | None:
        """A cluster of short options (`-An`, `-n5`, `-n 5`): flags up to the first option
        that takes a value, which is the rest of the word or the next word."""
        spec, argv = self.spec, self.argv
        cluster = argv[i][1:]
        if spec.digits_ok and cluster.isdigit():
            return i + 1
        for j, letter in enumerate(cluster):
            if letter in spec.recursive:
                self.result.recursive = True
            if letter in spec.flags:
                continue
            if letter not in spec.values and letter not in spec.path_values:
                return None
            if letter in spec.pattern_options:
                self.pattern_given = True
            value = cluster[j + 1 :]
            if not value:
                if i + 1 >= len(argv):
                    return None
                i += 1
                value = argv[i]
            if letter in spec.path_values:
                self.result.paths.append(value)
            elif letter == "d" and spec.operands == "pattern" and value == "recurse":
                self.result.recursive = True  # grep -d recurse
            break
        return i + 1


def resolve_long(spec: Spec, name: str) -> str | None:
    """The long option `--name` means, as getopt_long resolves abbreviations; None when it
    is unknown, ambiguous, or could be (a prefix of) a forbidden one."""
    known = spec.long_names
    if name in known:
        return name  # an exact name wins over abbreviations, as in getopt_long
    if not name or any(f.startswith(name) for f in spec.forbidden):
        return None
    candidates = [k for k in known if k.startswith(name)]
    return candidates[0] if len(candidates) == 1 else None


_JQ_ENV = re.compile(r"\$ENV\b|\benv\b|\$__loc__|\binput_filename\b|\$__prog")


def _jq_program_ok(
    argv: tuple[str, ...], operands: list[tuple[int, str]], from_file: bool
) -> bool:
    """A jq program that reads the environment (`env`, `$ENV`) dumps secrets: not read-only."""
    if from_file:
        return True  # the program file is a path the engine checks; its text is not known
    if not operands:
        return False
    program = operands[0][1]
    return DYN not in program and not _JQ_ENV.search(program)


def _xxd(argv: tuple[str, ...], globbed: frozenset[int]) -> ReadOnly | None:
    result = ReadOnly()
    operands: list[tuple[int, str]] = []
    i = 1
    while i < len(argv):
        word = argv[i]
        if word in _XXD_FLAGS:
            i += 1
        elif word in _XXD_VALUES:
            i += 2
        elif word.startswith("-") and word != "-":
            return None  # -r (revert) writes binary; unknown words are refused
        else:
            operands.append((i, word))
            i += 1
    if len(operands) > 1:
        return None  # `xxd IN OUT` writes OUT
    for index, word in operands:
        (result.globs if index in globbed else result.paths).append(word)
    return result


_FIND_SAFE_ACTIONS = words("-print -print0 -printf -ls -prune -quit -true -false")
_FIND_PATH_TESTS = words("-newer -anewer -cnewer -samefile")
_FIND_VALUE_TESTS = words(
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -type -xtype -size "
    "-mtime -mmin -atime -amin -ctime -cmin -user -group -uid -gid -perm -links -inum "
    "-maxdepth -mindepth -newermt -used -fstype -regextype -context -lname -ilname"
)
_FIND_FLAGS = words(
    "-empty -executable -readable -writable -nouser -nogroup -depth -mount -xdev -daystart "
    "-noleaf -ignore_readdir_race -noignore_readdir_race -not -a -and -o -or -d , ! ( )"
)


def _find(argv: tuple[str, ...], globbed: frozenset[int]) -> ReadOnly | None:
    """find with tests and printing actions only (no -exec/-delete/-fprint, no -L)."""
    result = ReadOnly(recursive=True)
    i = 1
    while i < len(argv) and argv[i] in ("-P", "-H"):
        i += 1
    starts: list[tuple[int, str]] = []
    while i < len(argv) and not argv[i].startswith(("-", "(", "!")):
        starts.append((i, argv[i]))
        i += 1
    while i < len(argv):
        word = argv[i]
        if word in _FIND_FLAGS or word in _FIND_SAFE_ACTIONS:
            i += 2 if word == "-printf" else 1
        elif word in _FIND_VALUE_TESTS:
            i += 2
        elif word in _FIND_PATH_TESTS or (word.startswith("-newer") and len(word) == 8):
            if i + 1 >= len(argv):
                return None
            result.paths.append(argv[i + 1])
            i += 2
        else:
            return None  # -exec, -delete, -fprint, -L/-follow, anything unknown
    if not starts:
        result.paths.append(".")
    for index, word in starts:
        (result.globs if index in globbed else result.paths).append(word)
    return result


def _command(argv: tuple[str, ...], globbed: frozenset[int]) -> ReadOnly | None:
    """`command -v make` only looks a name up."""
    return ReadOnly() if len(argv) >= 2 and argv[1] in ("-v", "-V") else None


def _test(argv: tuple[str, ...], globbed: frozenset[int]) -> ReadOnly | None:
    # `-v 'a[$(cmd)]'` evaluates an array subscript, which runs the substitution; the
    # builtin's `-eq` reads plain integers only (unlike `[[ ]]`), so `$x` is harmless.
    return None if any(w in ("-v", "-R") for w in argv[1:]) else ReadOnly()


_OWN_PARSERS: dict[str, Callable[[tuple[str, ...], frozenset[int]], ReadOnly | None]] = {
    "git": classify_git,
    "command": _command,
    "find": _find,
    "xxd": _xxd,
    "test": _test,
    "[": _test,
}
"""Commands that parse their words their own way rather than with getopt (a `Spec`)."""


def risky_option(argv: tuple[str, ...]) -> str | None:
    """An option that makes a usually harmless command write files or run programs
    (`git log --output=F`, `git grep -O CMD`, `rg --pre CMD`, `sort -o F`, `find -delete`),
    abbreviations included.

    A prefix rule such as `Bash(git log:*)` was written for the harmless use; the engine
    asks instead of letting the rule cover these.
    """
    if not argv:
        return None
    if argv[0] == "git":
        for word in argv[1:]:
            if word.startswith("-") and word != "-" and not git_option_ok(word):
                return word
        return None
    if argv[0] == "find":
        for word in argv[1:]:
            if word in ("-delete", "-fprint", "-fprint0", "-fprintf", "-fls", "-L", "-follow"):
                return word
        return None
    spec = SPECS.get(argv[0])
    if spec is None:
        return None
    for word in argv[1:]:
        if word == "--":
            break
        if word.startswith("--"):
            name = word[2:].split("=", 1)[0]
            if name and any(f.startswith(name) for f in spec.forbidden):
                return word
        elif word.startswith("-") and word != "-" and _short_forbidden(argv[0], word):
            return word
    return None


# Short options that write or run programs, per command (for `risky_option` only: the
# read-only classifier refuses every option it does not know anyway).
_SHORT_RISKY = {"sort": "oT", "tree": "oR", "xxd": "r", "rg": "z", "grep": "R", "date": "s"}


def _short_forbidden(name: str, word: str) -> bool:
    return any(c in _SHORT_RISKY.get(name, "") for c in word[1:])
