"""The options each read-only command accepts, command by command.

The data `readonly_commands.classify` checks a command line against: for each program,
which short and long options are harmless flags, which take a value, which values name
files it reads, and which options (and every abbreviation of them) write or run programs.
Also `ReadOnly`, the verdict every classifier returns.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class ReadOnly:
    """A read-only verdict: the paths (and shell globs) the command reads."""

    paths: list[str] = field(default_factory=list[str])
    globs: list[str] = field(default_factory=list[str])
    recursive: bool = False
    """It reads whole directory trees below its paths."""
    git_content: bool = False
    """A git command that prints file contents from the work tree or history."""


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


def words(text: str) -> frozenset[str]:
    """A set of names written as one space-separated string."""
    return frozenset(text.split())


SPECS: dict[str, Spec] = {}
"""Every command the classifier knows by its options, by program name."""


def _add(names: str, spec: Spec) -> None:
    for name in names.split():
        SPECS[name] = spec


_STD = words("help version")
_add("cat", Spec("paths", flags="AbeEnstTuv", long_flags=_STD | words(
    "show-all number-nonblank show-ends number squeeze-blank show-tabs show-nonprinting")))
_add("tac", Spec("paths", flags="br", values="s", long_flags=_STD | words("before regex"),
                 long_values=words("separator")))
_add("nl", Spec("paths", flags="p", values="bdfhilnsvw", long_flags=_STD | words("no-renumber"),
                long_values=words(
                    "body-numbering section-delimiter footer-numbering header-numbering "
                    "line-increment join-blank-lines number-format number-separator "
                    "starting-line-number number-width")))
_add("rev", Spec("paths", long_flags=_STD))
_add("fold", Spec("paths", flags="bs", values="w", long_flags=_STD | words("bytes spaces"),
                  long_values=words("width"), digits_ok=True))
_add("expand", Spec("paths", flags="i", values="t", long_flags=_STD | words("initial"),
                    long_values=words("tabs"), digits_ok=True))
_add("unexpand", Spec("paths", flags="a", values="t", long_flags=_STD | words("all first-only"),
                      long_values=words("tabs")))
_add("paste", Spec("paths", flags="sz", values="d",
                   long_flags=_STD | words("serial zero-terminated"),
                   long_values=words("delimiters")))
_add("head", Spec("paths", flags="qvz", values="nc", long_flags=_STD | words(
    "quiet silent verbose zero-terminated"), long_values=words("bytes lines"), digits_ok=True))
_add("tail", Spec("paths", flags="qvz", values="nc", long_flags=_STD | words(
    "quiet silent verbose zero-terminated"), long_values=words("bytes lines"), digits_ok=True))
_add("wc", Spec("paths", flags="cmlLw", long_flags=_STD | words(
    "bytes chars lines max-line-length words"), long_values=words("total"),
    forbidden=words("files0-from")))  # reads the files a list names: contents unknown here
_add("stat", Spec("paths", flags="fLt", values="c", long_flags=_STD | words(
    "dereference file-system terse"), long_values=words("format printf cached")))
_add("file", Spec("paths", flags="bcEhikLNnprsvzZ0S", values="eFP", path_values="m",
                  long_flags=_STD | words(
                      "brief mime mime-type mime-encoding dereference no-dereference "
                      "keep-going uncompress no-pad print0 preserve-date raw special-files"),
                  long_values=words("exclude exclude-quiet separator parameter"),
                  long_paths=words("magic-file"), forbidden=words("files-from")))
_SUMS = Spec("paths", flags="btz", long_flags=_STD | words("binary text zero tag"))
_add("md5sum sha1sum sha224sum sha256sum sha384sum sha512sum", _SUMS)
_add("b2sum", Spec("paths", flags="btz", values="l",
                   long_flags=_STD | words("binary text zero tag"),
                   long_values=words("length")))
_add("cksum", Spec("paths", values="al", long_flags=_STD | words("raw tag untagged base64 zero"),
                   long_values=words("algorithm length")))
_add("ls", Spec(
    "paths", flags="aAbBcCdfFgGhiklmnNopqQrRsStuUvxXZ1", values="ITw",
    long_flags=_STD | words(
        "all almost-all author escape ignore-backups directory dired file-type full-time "
        "group-directories-first no-group human-readable si inode kibibytes literal "
        "numeric-uid-gid hide-control-chars show-control-chars quote-name reverse recursive "
        "size context zero"),
    long_values=words("block-size format hide indicator-style ignore quoting-style sort time "
                   "time-style tabsize width"),
    long_optional=words("color classify hyperlink"),
    recursive=words("R recursive"),
))
_add("du", Spec(
    "paths", flags="abchklmsSx0", values="dBt", path_values="X",
    long_flags=_STD | words("all apparent-size bytes total human-readable inodes count-links si "
                         "summarize separate-dirs one-file-system null"),
    long_values=words("max-depth block-size threshold exclude"), long_paths=words("exclude-from"),
    long_optional=words("time"), always_recursive=True,
))
_add("tree", Spec("paths", flags="adfipshugDFqNQvtcrCnJX", values="LIP",
                  long_flags=_STD | words("noreport dirsfirst du prune"),
                  long_values=words("charset filelimit timefmt sort"), always_recursive=True))
_add("diff", Spec(
    "paths", flags="qsuNabBwiEZtTypcen", values="UCWxID", path_values="X",
    long_flags=_STD | words(
        "brief report-identical-files new-file text ignore-case ignore-all-space "
        "ignore-space-change ignore-blank-lines ignore-tab-expansion ignore-trailing-space "
        "side-by-side suppress-common-lines strip-trailing-cr minimal no-dereference "
        "expand-tabs initial-tab show-c-function"),
    long_values=words("label exclude width ignore-matching-lines"),
    long_paths=words("exclude-from"),
    long_optional=words("unified context color"),
    forbidden=words("to-file from-file"),
    max_operands=2,
))
_add("cmp", Spec("paths", flags="blsv", values="in", long_flags=_STD | words(
    "print-bytes verbose quiet silent"), long_values=words("ignore-initial bytes"),
    max_operands=4))
_add("comm", Spec("paths", flags="123z", long_flags=_STD | words(
    "check-order nocheck-order total zero-terminated"), long_values=words("output-delimiter"),
    max_operands=2))
_add("od", Spec("paths", flags="bcdfilosxv", values="AjNSt", long_flags=_STD | words(
    "output-duplicates traditional"), long_values=words(
    "address-radix endian skip-bytes read-bytes format"), long_optional=words("strings width")))
_add("hexdump hd", Spec("paths", flags="bcCdoxv", values="nse", path_values="f",
                        long_flags=_STD | words("canonical no-squeezing"),
                        long_values=words("length skip format"), long_paths=words("format-file")))
_add("strings", Spec("paths", flags="adfw", values="ntes", long_flags=_STD | words(
    "all data print-file-name include-all-whitespace"), long_values=words(
    "bytes radix encoding output-separator"), digits_ok=True))
_add("readlink", Spec("paths", flags="efmnqsvz", long_flags=_STD | words(
    "canonicalize canonicalize-existing canonicalize-missing no-newline quiet silent "
    "verbose zero")))
_add("realpath", Spec("paths", flags="emLPqsz", long_flags=_STD | words(
    "canonicalize-existing canonicalize-missing logical physical quiet strip no-symlinks "
    "zero"), long_paths=words("relative-to relative-base")))
_add("dirname", Spec("none", flags="z", long_flags=_STD | words("zero")))
_add("basename", Spec("none", flags="az", values="s", long_flags=_STD | words("multiple zero"),
                      long_values=words("suffix")))
_add("cut", Spec("paths", flags="nsz", values="bcdf", long_flags=_STD | words(
    "complement only-delimited zero-terminated"), long_values=words(
    "bytes characters delimiter fields output-delimiter")))
_add("sort", Spec(
    "paths", flags="bdfghiMnrRsuVzcCm", values="ktS",
    long_flags=_STD | words(
        "ignore-leading-blanks dictionary-order ignore-case general-numeric-sort "
        "human-numeric-sort ignore-nonprinting month-sort numeric-sort random-sort reverse "
        "version-sort stable unique zero-terminated merge debug"),
    long_values=words("key field-separator buffer-size parallel sort"),
    long_optional=words("check"),
    forbidden=words("output temporary-directory compress-program files0-from random-source "
                 "batch-size"),
))
_add("uniq", Spec("paths", flags="cdDiuz", values="fsw", long_flags=_STD | words(
    "count repeated ignore-case unique zero-terminated"), long_values=words(
    "skip-fields skip-chars check-chars"), long_optional=words("all-repeated group"),
    max_operands=1, digits_ok=True))
_add("grep egrep fgrep", Spec(
    "pattern", flags="abcEFGHhiIlLnoPqrsTUvwxyzZ", values="ABCmed", path_values="f",
    long_flags=_STD | words(
        "extended-regexp fixed-strings basic-regexp perl-regexp ignore-case no-ignore-case "
        "word-regexp line-regexp null-data no-messages invert-match byte-offset line-number "
        "line-buffered with-filename no-filename only-matching quiet silent text recursive "
        "files-without-match files-with-matches count initial-tab null"),
    long_values=words("regexp max-count label binary-files directories include exclude "
                   "exclude-dir before-context after-context context"),
    long_paths=words("file exclude-from"),
    long_optional=words("color colour"),
    forbidden=words("dereference-recursive devices"),
    recursive=words("r recursive"),
    digits_ok=True,
))
_add("rg", Spec(
    "pattern", flags="isSwxvclnNHIoqpuUaFP0b", values="egtTmABCjMEr", path_values="f",
    long_flags=_STD | words(
        "ignore-case case-sensitive smart-case word-regexp line-regexp invert-match count "
        "count-matches files-with-matches files-without-match line-number no-line-number "
        "with-filename no-filename only-matching pretty quiet hidden no-hidden no-ignore "
        "no-ignore-vcs no-ignore-dot no-ignore-parent no-ignore-global text fixed-strings "
        "multiline multiline-dotall files type-list json vimgrep heading no-heading column "
        "no-column trim stats null unrestricted no-messages byte-offset passthru crlf "
        "no-config no-require-git ignore-file-case-insensitive"),
    long_values=words(
        "sort sortr glob iglob type type-not max-count context before-context after-context "
        "threads max-columns max-depth max-filesize encoding replace regexp color colors "
        "engine path-separator context-separator field-match-separator"),
    long_paths=words("file ignore-file"),
    forbidden=words("pre pre-glob search-zip follow hostname-bin type-add"),
    always_recursive=True,
))
_add("jq", Spec(
    "pattern", flags="nrjascCMSeR0", long_flags=_STD | words(
        "null-input raw-output join-output ascii-output slurp compact-output color-output "
        "monochrome-output sort-keys exit-status raw-input tab seq stream"),
    long_values=words("indent"), path_values="f", long_paths=words("from-file"),
    forbidden=words("args jsonargs rawfile slurpfile arg argjson"),
    pattern_options=words("f from-file"),
))
_add("echo", Spec("none", flags="neE"))
_add("printf", Spec("none"))
_add("pwd", Spec("none", flags="LP", long_flags=_STD))
_add("whoami nproc arch tty groups locale true false : logname", Spec("none", long_flags=_STD))
_add("id", Spec("none", flags="agGnruz", long_flags=_STD | words(
    "group groups name real user zero")))
_add("uname", Spec("none", flags="asnrvmpio", long_flags=_STD | words(
    "all kernel-name nodename kernel-release kernel-version machine processor "
    "hardware-platform operating-system")))
_add("uptime", Spec("none", flags="ps", long_flags=_STD | words("pretty since")))
_add("seq", Spec("none", flags="w", values="fs", long_flags=_STD | words("equal-width"),
                 long_values=words("format separator")))
_add("sleep", Spec("none", long_flags=_STD))
_add("which", Spec("none", flags="a"))
_add("type", Spec("none", flags="aftpP"))
_add("date", Spec("none", flags="uR", values="d", path_values="fr",
                  long_flags=_STD | words("utc universal debug"),
                  long_values=words("date"), long_paths=words("file reference"),
                  long_optional=words("iso-8601 rfc-3339"), forbidden=words("set")))
_add("hostname", Spec("none", flags="sfiIdA", long_flags=_STD | words(
    "short fqdn long ip-address all-ip-addresses domain all-fqdns"), max_operands=0))
_add("cd", Spec("paths", flags="LP", max_operands=1))
