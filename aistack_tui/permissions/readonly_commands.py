"""Which simple commands only read, and which paths they read.

An allowlist, not a blocklist, down to each option: a command is read-only only if it is
listed here and **every option it is given is one this table knows** for that command.
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
from dataclasses import dataclass, field

from aistack_tui.permissions.bash_model import DYN

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
    return all(n in SAFE_ENV or n.startswith(SAFE_ENV_PREFIXES) for n in names)


@dataclass(frozen=True, slots=True)
class Spec:
    """One command's options. Short options are letters; long ones are names without `--`.

    `operands`: "paths" (every operand is read), "none" (operands are not files) or
    "pattern" (the first operand is a pattern unless an option gave one).
    `forbidden`: long options that write or run programs; they and every prefix of them
    are refused even when the prefix would also abbreviate a known option.
    """

    operands: str
    flags: str = ""
    values: str = ""
    path_values: str = ""
    long_flags: frozenset[str] = frozenset()
    long_values: frozenset[str] = frozenset()
    long_paths: frozenset[str] = frozenset()
    long_optional: frozenset[str] = frozenset()
    forbidden: frozenset[str] = frozenset()
    max_operands: int | None = None
    recursive: frozenset[str] = frozenset()
    """Options (`-r`, `recursive`) that make it read whole directory trees."""
    always_recursive: bool = False
    pattern_options: frozenset[str] = frozenset({"e", "f", "regexp", "file"})
    digits_ok: bool = False
    """`head -5`: an option made of digits is a count."""

    @property
    def long_names(self) -> frozenset[str]:
        return self.long_flags | self.long_values | self.long_paths | self.long_optional


def _w(text: str) -> frozenset[str]:
    return frozenset(text.split())


_SPECS: dict[str, Spec] = {}


def _add(names: str, spec: Spec) -> None:
    for name in names.split():
        _SPECS[name] = spec


_STD = _w("help version")
_add("cat", Spec("paths", flags="AbeEnstTuv", long_flags=_STD | _w(
    "show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting")))
_add("tac", Spec("paths", flags="br", values="s", long_flags=_STD | _w("before regex"),
                 long_values=_w("separator")))
_add("nl", Spec("paths", flags="p", values="bdfhilnsvw", long_flags=_STD | _w("no-renumber"),
                long_values=_w(
                    "body-numbering section-delimiter footer-numbering header-numbering "
                    "line-increment join-blank-lines number-format number-separator "
                    "starting-line-number number-width")))
_add("rev", Spec("paths", long_flags=_STD))
_add("fold", Spec("paths", flags="bs", values="w", long_flags=_STD | _w("bytes spaces"),
                  long_values=_w("width"), digits_ok=True))
_add("expand", Spec("paths", flags="i", values="t", long_flags=_STD | _w("initial"),
                    long_values=_w("tabs"), digits_ok=True))
_add("unexpand", Spec("paths", flags="a", values="t", long_flags=_STD | _w("all first-only"),
                      long_values=_w("tabs")))
_add("paste", Spec("paths", flags="sz", values="d", long_flags=_STD | _w("serial zero-terminated"),
                   long_values=_w("delimiters")))
_add("head", Spec("paths", flags="qvz", values="nc", long_flags=_STD | _w(
    "quiet silent verbose zero-terminated"), long_values=_w("bytes lines"), digits_ok=True))
_add("tail", Spec("paths", flags="qvz", values="nc", long_flags=_STD | _w(
    "quiet silent verbose zero-terminated"), long_values=_w("bytes lines"), digits_ok=True))
_add("wc", Spec("paths", flags="cmlLw", long_flags=_STD | _w(
    "bytes chars lines max-line-length words"), long_values=_w("total"),
    forbidden=_w("files0-from")))  # reads the files a list names: contents unknown here
_add("stat", Spec("paths", flags="fLt", values="c", long_flags=_STD | _w(
    "dereference file-system terse"), long_values=_w("format printf cached")))
_add("file", Spec("paths", flags="bcEhikLNnprsvzZ0S", values="eFP", path_values="m",
                  long_flags=_STD | _w(
                      "brief mime mime-type mime-encoding dereference no-dereference "
                      "keep-going uncompress no-pad print0 preserve-date raw special-files"),
                  long_values=_w("exclude exclude-quiet separator parameter"),
                  long_paths=_w("magic-file"), forbidden=_w("files-from")))
_SUMS = Spec("paths", flags="btz", long_flags=_STD | _w("binary text zero tag"))
_add("md5sum sha1sum sha224sum sha256sum sha384sum sha512sum", _SUMS)
_add("b2sum", Spec("paths", flags="btz", values="l", long_flags=_STD | _w("binary text zero tag"),
                   long_values=_w("length")))
_add("cksum", Spec("paths", values="al", long_flags=_STD | _w("raw tag untagged base64 zero"),
                   long_values=_w("algorithm length")))
_add("ls", Spec(
    "paths", flags="aAbBcCdfFgGhiklmnNopqQrRsStuUvxXZ1", values="ITw",
    long_flags=_STD | _w(
        "all almost-all author escape ignore-backups directory dired file-type full-time "
        "group-directories-first no-group human-readable si inode kibibytes literal "
        "numeric-uid-gid hide-control-chars show-control-chars quote-name reverse recursive "
        "size context zero"),
    long_values=_w("block-size format hide indicator-style ignore quoting-style sort time "
                   "time-style tabsize width"),
    long_optional=_w("color classify hyperlink"),
    recursive=_w("R recursive"),
))
_add("du", Spec(
    "paths", flags="abchklmsSx0", values="dBt", path_values="X",
    long_flags=_STD | _w("all apparent-size bytes total human-readable inodes count-links si "
                         "summarize separate-dirs one-file-system null"),
    long_values=_w("max-depth block-size threshold exclude"), long_paths=_w("exclude-from"),
    long_optional=_w("time"), always_recursive=True,
))
_add("tree", Spec("paths", flags="adfipshugDFqNQvtcrCnJX", values="LIP",
                  long_flags=_STD | _w("noreport dirsfirst du prune"),
                  long_values=_w("charset filelimit timefmt sort"), always_recursive=True))
_add("diff", Spec(
    "paths", flags="qsuNabBwiEZtTypcen", values="UCWxID", path_values="X",
    long_flags=_STD | _w(
        "brief report-identical-files new-file text ignore-case ignore-all-space "
        "ignore-space-change ignore-blank-lines ignore-tab-expansion ignore-trailing-space "
        "side-by-side suppress-common-lines strip-trailing-cr minimal no-dereference "
        "expand-tabs initial-tab show-c-function"),
    long_values=_w("label exclude width ignore-matching-lines"),
    long_paths=_w("exclude-from"),
    long_optional=_w("unified context color"),
    forbidden=_w("to-file from-file"),
    max_operands=2,
))
_add("cmp", Spec("paths", flags="blsv", values="in", long_flags=_STD | _w(
    "print-bytes verbose quiet silent"), long_values=_w("ignore-initial bytes"),
    max_operands=4))
_add("comm", Spec("paths", flags="123z", long_flags=_STD | _w(
    "check-order nocheck-order total zero-terminated"), long_values=_w("output-delimiter"),
    max_operands=2))
_add("od", Spec("paths", flags="bcdfilosxv", values="AjNSt", long_flags=_STD | _w(
    "output-duplicates traditional"), long_values=_w(
    "address-radix endian skip-bytes read-bytes format"), long_optional=_w("strings width")))
_add("hexdump hd", Spec("paths", flags="bcCdoxv", values="nse", path_values="f",
                        long_flags=_STD | _w("canonical no-squeezing"),
                        long_values=_w("length skip format"), long_paths=_w("format-file")))
_add("strings", Spec("paths", flags="adfw", values="ntes", long_flags=_STD | _w(
    "all data print-file-name include-all-whitespace"), long_values=_w(
    "bytes radix encoding output-separator"), digits_ok=True))
_add("readlink", Spec("paths", flags="efmnqsvz", long_flags=_STD | _w(
    "canonicalize canonicalize-existing canonicalize-missing no-newline quiet silent "
    "verbose zero")))
_add("realpath", Spec("paths", flags="emLPqsz", long_flags=_STD | _w(
    "canonicalize-existing canonicalize-missing logical physical quiet strip no-symlinks "
    "zero"), long_paths=_w("relative-to relative-base")))
_add("dirname", Spec("none", flags="z", long_flags=_STD | _w("zero")))
_add("basename", Spec("none", flags="az", values="s", long_flags=_STD | _w("multiple zero"),
                      long_values=_w("suffix")))
_add("cut", Spec("paths", flags="nsz", values="bcdf", long_flags=_STD | _w(
    "complement only-delimited zero-terminated"), long_values=_w(
    "bytes characters delimiter fields output-delimiter")))
_add("sort", Spec(
    "paths", flags="bdfghiMnrRsuVzcCm", values="ktS",
    long_flags=_STD | _w(
        "ignore-leading-blanks dictionary-order ignore-case general-numeric-sort "
        "human-numeric-sort ignore-nonprinting month-sort numeric-sort random-sort reverse "
        "version-sort stable unique zero-terminated merge debug"),
    long_values=_w("key field-separator buffer-size parallel sort"),
    long_optional=_w("check"),
    forbidden=_w("output temporary-directory compress-program files0-from random-source "
                 "batch-size"),
))
_add("uniq", Spec("paths", flags="cdDiuz", values="fsw", long_flags=_STD | _w(
    "count repeated ignore-case unique zero-terminated"), long_values=_w(
    "skip-fields skip-chars check-chars"), long_optional=_w("all-repeated group"),
    max_operands=1, digits_ok=True))
_add("grep egrep fgrep", Spec(
    "pattern", flags="abcEFGHhiIlLnoPqrsTUvwxyzZ", values="ABCmed", path_values="f",
    long_flags=_STD | _w(
        "extended-regexp fixed-strings basic-regexp perl-regexp ignore-case no-ignore-case "
        "word-regexp line-regexp null-data no-messages invert-match byte-offset line-number "
        "line-buffered with-filename no-filename only-matching quiet silent text recursive "
        "files-without-match files-with-matches count initial-tab null"),
    long_values=_w("regexp max-count label binary-files directories include exclude "
                   "exclude-dir before-context after-context context"),
    long_paths=_w("file exclude-from"),
    long_optional=_w("color colour"),
    forbidden=_w("dereference-recursive devices"),
    recursive=_w("r recursive"),
    digits_ok=True,
))
_add("rg", Spec(
    "pattern", flags="isSwxvclnNHIoqpuUaFP0b", values="egtTmABCjMEr", path_values="f",
    long_flags=_STD | _w(
        "ignore-case case-sensitive smart-case word-regexp line-regexp invert-match count "
        "count-matches files-with-matches files-without-match line-number no-line-number "
        "with-filename no-filename only-matching pretty quiet hidden no-hidden no-ignore "
        "no-ignore-vcs no-ignore-dot no-ignore-parent no-ignore-global text fixed-strings "
        "multiline multiline-dotall files type-list json vimgrep heading no-heading column "
        "no-column trim stats null unrestricted no-messages byte-offset passthru crlf "
        "no-config no-require-git ignore-file-case-insensitive"),
    long_values=_w(
        "sort sortr glob iglob type type-not max-count context before-context after-context "
        "threads max-columns max-depth max-filesize encoding replace regexp color colors "
        "engine path-separator context-separator field-match-separator"),
    long_paths=_w("file ignore-file"),
    forbidden=_w("pre pre-glob search-zip follow hostname-bin type-add"),
    always_recursive=True,
))
_add("jq", Spec(
    "pattern", flags="nrjascCMSeR0", long_flags=_STD | _w(
        "null-input raw-output join-output ascii-output slurp compact-output color-output "
        "monochrome-output sort-keys exit-status raw-input tab seq stream"),
    long_values=_w("indent"), path_values="f", long_paths=_w("from-file"),
    forbidden=_w("args jsonargs rawfile slurpfile arg argjson"),
    pattern_options=_w("f from-file"),
))
_add("echo", Spec("none", flags="neE"))
_add("printf", Spec("none"))
_add("pwd", Spec("none", flags="LP", long_flags=_STD))
_add("whoami nproc arch tty groups locale true false : logname", Spec("none", long_flags=_STD))
_add("id", Spec("none", flags="agGnruz", long_flags=_STD | _w(
    "group groups name real user zero")))
_add("uname", Spec("none", flags="asnrvmpio", long_flags=_STD | _w(
    "all kernel-name nodename kernel-release kernel-version machine processor "
    "hardware-platform operating-system")))
_add("uptime", Spec("none", flags="ps", long_flags=_STD | _w("pretty since")))
_add("seq", Spec("none", flags="w", values="fs", long_flags=_STD | _w("equal-width"),
                 long_values=_w("format separator")))
_add("sleep", Spec("none", long_flags=_STD))
_add("which", Spec("none", flags="a"))
_add("type", Spec("none", flags="aftpP"))
_add("date", Spec("none", flags="uR", values="d", path_values="fr",
                  long_flags=_STD | _w("utc universal debug"),
                  long_values=_w("date"), long_paths=_w("file reference"),
                  long_optional=_w("iso-8601 rfc-3339"), forbidden=_w("set")))
_add("hostname", Spec("none", flags="sfiIdA", long_flags=_STD | _w(
    "short fqdn long ip-address all-ip-addresses domain all-fqdns"), max_operands=0))
_add("cd", Spec("paths", flags="LP", max_operands=1))

# xxd parses its own single-dash words (`-len 10`, `-ps`); only these, at most one input.
_XXD_FLAGS = _w("-a -b -C -E -e -i -p -ps -plain -postscript -u -d -autoskip -bits")
_XXD_VALUES = _w("-c -cols -g -groupsize -l -len -o -s -seek -n -name")

_VERSION_ONLY = _w(
    "python python3 node npm npx pip pip3 cargo go rustc java ruby gcc clang make uv git "
    "bash deno bun pnpm yarn tsc"
)

_DASH_V_IS_VERSION = _w("node npm npx deno bun pnpm yarn")

_GIT_READ = _w(
    "status diff log show blame rev-parse ls-files ls-tree cat-file describe shortlog grep "
    "merge-base whatchanged show-ref rev-list name-rev check-ignore for-each-ref "
    "count-objects annotate diff-tree diff-files diff-index"
)
# Subcommands that print file contents (working tree or history). A Read deny rule inside
# the project cannot be enforced on them (history is in .git/objects, not the denied path),
# so the engine asks for them when such a rule exists.
_GIT_CONTENT = _w(
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
_GIT_GLOBAL_OK = _w(
    "--no-pager -P --no-optional-locks --no-replace-objects --literal-pathspecs --paginate"
)
_GIT_SHORT_FORBIDDEN = "Of"  # grep -O CMD (open in pager), grep/config -f FILE


@dataclass(slots=True)
class ReadOnly:
    """A read-only verdict: the paths (and shell globs) the command reads."""

    paths: list[str] = field(default_factory=list[str])
    globs: list[str] = field(default_factory=list[str])
    recursive: bool = False
    """It reads whole directory trees below its paths."""
    git_content: bool = False
    """A git command that prints file contents from the work tree or history."""


def classify(
    argv: tuple[str, ...], env: tuple[str, ...] = (), globbed: frozenset[int] = frozenset()
) -> ReadOnly | None:
    """The paths `argv` reads if it is a read-only command, else None."""
    if not argv or not env_is_safe(env) or DYN in argv[0]:
        return None
    name = argv[0]
    if name in _VERSION_ONLY and len(argv) == 2 and argv[1] in ("--version", "-V", "version"):
        return ReadOnly()
    if name in _DASH_V_IS_VERSION and argv[1:] == ("-v",):
        return ReadOnly()
    if name == "git":
        return _git(argv, globbed)
    if name == "command" and len(argv) >= 2 and argv[1] in ("-v", "-V"):
        return ReadOnly()
    if name == "find":
        return _find(argv, globbed)
    if name == "xxd":
        return _xxd(argv, globbed)
    if name in ("test", "["):
        # `-v 'a[$(cmd)]'` evaluates an array subscript, which runs the substitution; the
        # builtin's `-eq` reads plain integers only (unlike `[[ ]]`), so `$x` is harmless.
        return None if any(w in ("-v", "-R") for w in argv[1:]) else ReadOnly()
    spec = _SPECS.get(name)
    if spec is None:
        return None
    parsed = parse_options(spec, argv)
    if parsed is None:
        return None
    result, operands, pattern_given = parsed
    if name == "jq" and not _jq_program_ok(argv, operands, pattern_given):
        return None
    if spec.operands == "pattern" and not pattern_given and operands:
        operands = operands[1:]
    if spec.max_operands is not None and len(operands) > spec.max_operands:
        return None
    if spec.operands == "none":
        return result
    if not operands and (spec.always_recursive or result.recursive or name == "ls"):
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
    result = ReadOnly(recursive=spec.always_recursive)
    operands: list[tuple[int, str]] = []
    pattern_given = False
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
        if word.startswith("--"):
            name, eq, value = word[2:].partition("=")
            full = resolve_long(spec, name)
            if full is None:
                return None
            if full in spec.recursive:
                result.recursive = True
            if full in spec.pattern_options:
                pattern_given = True
            if full in spec.long_flags:
                if eq:
                    return None
            elif full in spec.long_optional:
                pass
            else:
                if not eq:
                    if i + 1 >= len(argv):
                        return None
                    i += 1
                    value = argv[i]
                if full in spec.long_paths:
                    result.paths.append(value)
            i += 1
            continue
        cluster = word[1:]
        if spec.digits_ok and cluster.isdigit():
            i += 1
            continue
        j = 0
        while j < len(cluster):
            letter = cluster[j]
            if letter in spec.recursive:
                result.recursive = True
            if letter in spec.flags:
                j += 1
                continue
            if letter not in spec.values and letter not in spec.path_values:
                return None
            if letter in spec.pattern_options:
                pattern_given = True
            value = cluster[j + 1 :]
            if not value:
                if i + 1 >= len(argv):
                    return None
                i += 1
                value = argv[i]
            if letter in spec.path_values:
                result.paths.append(value)
            elif letter == "d" and spec.operands == "pattern" and value == "recurse":
                result.recursive = True  # grep -d recurse
            break
        i += 1
    return result, operands, pattern_given


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


_FIND_SAFE_ACTIONS = _w("-print -print0 -printf -ls -prune -quit -true -false")
_FIND_PATH_TESTS = _w("-newer -anewer -cnewer -samefile")
_FIND_VALUE_TESTS = _w(
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -type -xtype -size "
    "-mtime -mmin -atime -amin -ctime -cmin -user -group -uid -gid -perm -links -inum "
    "-maxdepth -mindepth -newermt -used -fstype -regextype -context -lname -ilname"
)
_FIND_FLAGS = _w(
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


def _git_option_ok(word: str) -> bool:
    if DYN in word:
        return False
    if word.startswith("--"):
        name = word[2:].split("=", 1)[0]
        return bool(name) and not any(f.startswith(name) for f in _GIT_FORBIDDEN)
    return not any(c in _GIT_SHORT_FORBIDDEN for c in word[1:2])


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
    options = rest[: rest.index("--")] if "--" in rest else rest
    if not all(_git_option_ok(w) for w in options if w.startswith("-") and w != "-"):
        return None
    if sub in _GIT_READ:
        result.git_content = sub in _GIT_CONTENT
    elif sub == "branch":
        listing = _w(
            "-a -r -v -vv --list -l --show-current --all --remotes --merged --no-merged "
            "--contains --no-color --color"
        )
        if not all(w in listing or w.startswith("--format") for w in rest):
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
        result.git_content = True
    elif sub == "config":
        reads = _w("--get --get-all --get-regexp --list -l")
        flags = _w("--local --show-origin --show-scope --null -z --name-only --bool --int --path")
        if not rest or not reads & set(rest):
            return None
        if any(w.startswith("-") and w not in reads | flags for w in rest):
            return None
        return result
    elif sub == "worktree":
        if rest[:1] != ("list",):
            return None
        return result
    else:
        return None  # aliases, fetch/pull/push/clone and anything that writes
    after_dashes = False
    for offset, word in enumerate(rest, start=i + 1):
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
    return result


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
            if word.startswith("-") and word != "-" and not _git_option_ok(word):
                return word
        return None
    if argv[0] == "find":
        for word in argv[1:]:
            if word in ("-delete", "-fprint", "-fprint0", "-fprintf", "-fls", "-L", "-follow"):
                return word
        return None
    spec = _SPECS.get(argv[0])
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
