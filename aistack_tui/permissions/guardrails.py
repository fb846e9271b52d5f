"""Guardrails: commands dangerous enough to ask in every mode, and injected instructions.

Dangerous commands ask with a warning even in `acceptEdits` and `bypassPermissions` and
even when an allow rule matches (a deny rule still denies): the cost of one extra question
is small next to `rm -rf ~`. Prompt-injection detection only flags: tool results from the
web and MCP servers are shown to the user with a warning, never silently dropped, because
heuristics misfire and hiding content would be worse than a false alarm.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TypeAlias

from aistack_tui.permissions.bash_model import DYN, SHELLS, BashAnalysis, CommandPart
from aistack_tui.permissions.lazy_re import LazyPattern, lazy

_INTERPRETERS = SHELLS | {"perl", "ruby", "node", "php", "deno", "bun", "lua", "pwsh", "Rscript"}
# Reading a script into the current shell runs it just like an interpreter does.
_SOURCERS = frozenset({"source", "."})
_DOWNLOADERS = frozenset({"curl", "wget", "fetch", "aria2c", "http", "https", "xh", "xhs"})
_DEFAULT_BRANCHES = frozenset({"main", "master", "trunk", "develop", "HEAD"})
_DEVICE_RE = lazy(r"^/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk|rdisk|loop|md|dm-|mapper/)")
_FORK_BOMB_RE = lazy(r"(\S+)\s*\(\)\s*\{[^}]*\1\s*\|\s*\1\s*&")
_PYTHON_RE = lazy(r"^python[0-9.]*$")
_BRACKET_RE = lazy(r"\[!?\]?[^\]]*\]")
_GLOB_CHARS = "*?["
# `find` tests that bound what a delete reaches by name; anything else (`-type f`,
# `-mtime +7`) still matches most of a tree.
_FIND_NAME_TESTS = frozenset(
    {"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-lname", "-ilname"}
)
_FIND_OPERATORS = frozenset({"-o", "-or", "!", "-not", ","})
_DELETERS = frozenset({"rm", "unlink", "shred", "srm"})
_UNPACKERS = frozenset({"tar", "bsdtar", "unzip", "7z", "7za", "cpio", "gunzip", "unxz"})


def _name(argv: tuple[str, ...]) -> str:
    return argv[0].rsplit("/", 1)[-1] if argv else ""


def _runs_code(name: str) -> bool:
    return name in _INTERPRETERS or name in _SOURCERS or bool(_PYTHON_RE.match(name))


def _resolve(raw: str, part: CommandPart, home: Path) -> Path | None:
    paths = _resolve_all(raw, part.cwd, home)
    return paths[0] if paths else None


def _resolve_all(raw: str, cwds: tuple[Path, ...] | None, home: Path) -> list[Path]:
    """Where `raw` points from every directory the shell may be in (empty when unknown)."""
    if DYN in raw or not raw:
        return []
    if raw == "~" or raw.startswith("~/"):
        raw = str(home) + raw[1:]
    return [Path(os.path.realpath(os.path.join(str(cwd), raw))) for cwd in (cwds or (Path("/"),))]


def _precious_paths(project_root: Path, home: Path) -> set[Path]:
    """`/`, home, the project and every ancestor of them."""
    out = {Path("/")}
    for path in (home, project_root):
        out.add(path)
        out.update(path.parents)
    return out


def _is_precious(path: Path | None, raw: str, project_root: Path, home: Path) -> bool:
    """`/`, home, the project or any of their ancestors (what `rm -rf` must not touch)."""
    if path is None:
        return "$HOME" in raw or "${HOME}" in raw or raw.startswith(DYN) or raw in ("*", "/*")
    if str(path) == "/" or raw.rstrip("/") in ("", "/*"):
        return True
    return any(path == p or p.is_relative_to(path) for p in (home, project_root))


def _matches_everything(pattern: str) -> bool:
    """Whether every component of a glob pattern matches (nearly) any name: `*`, `.*`,
    `[!.]*`, `*/*`. A component with a literal in it (`*.pyc`) only matches some."""
    for component in pattern.split("/"):
        literal = _BRACKET_RE.sub("", component).translate({ord(c): None for c in "*?."})
        if literal:
            return False
    return True


def _glob_is_precious(raw: str, part: CommandPart, project_root: Path, home: Path) -> bool:
    """Whether a glob operand of a recursive delete could reach a precious directory.

    The glob expands in its static directory (the part before the first wildcard): it is
    precious when that directory is `/`, home, the project or an ancestor and the pattern
    matches everything in it (`rm -rf *`, `~/*`, `src/../*`), or when one of the names it
    can match is itself precious (`/ho*` matches `/home`).
    """
    cut = min(raw.find(c) for c in _GLOB_CHARS if c in raw)
    slash = raw.rfind("/", 0, cut)
    directory = raw[: slash + 1] or "."
    pattern = raw[slash + 1 :].strip("/")
    if DYN in directory:
        return _is_precious(None, raw, project_root, home)
    precious = _precious_paths(project_root, home)
    components = [c for c in pattern.split("/") if c]
    for base in _resolve_all(directory, part.cwd, home):
        if base in precious and (DYN in pattern or _matches_everything(pattern)):
            return True
        for path in precious:
            if (
                len(path.parts) == len(base.parts) + len(components)
                and path.parts[: len(base.parts)] == base.parts
                and all(
                    DYN in c or fnmatch.fnmatchcase(name, c)
                    for name, c in zip(path.parts[len(base.parts) :], components, strict=True)
                )
            ):
                return True
    return False


def _operand_is_precious(
    index: int, raw: str, part: CommandPart, project_root: Path, home: Path
) -> bool:
    # Wrappers such as `sudo` drop the glob marks, so a wildcard in the word counts too
    # (a quoted `'*'` then warns needlessly, which only costs a question).
    if index in part.globbed or any(c in raw for c in _GLOB_CHARS):
        return _glob_is_precious(raw, part, project_root, home)
    return _is_precious(_resolve(raw, part, home), raw, project_root, home)


def _long_option(arg: str, full: str) -> bool:
    """`arg` spells `full` or an abbreviation getopt_long accepts for it (`--rec`)."""
    return len(arg) >= 3 and full.startswith(arg.split("=", 1)[0])


def _rm_warning(
    part: CommandPart, project_root: Path, home: Path, placeholders: bool
) -> str | None:
    argv = part.argv
    options: list[str] = []
    operands: list[tuple[int, str]] = []
    for i, arg in enumerate(argv[1:], 1):
        if "--" not in options and arg.startswith("-") and arg != "-":
            options.append(arg)
        else:
            operands.append((i, arg))
    flags = "".join(a[1:] for a in options if not a.startswith("--"))
    long = [a for a in options if a.startswith("--")]
    recursive = "r" in flags or "R" in flags or any(_long_option(a, "--recursive") for a in long)
    if not recursive and not any(_long_option(a, "--no-preserve-root") for a in long):
        return None
    for i, raw in operands:
        if placeholders and raw == DYN:
            continue  # a `find -exec rm {}` name: judged with the find (see _find_warning)
        if _operand_is_precious(i, raw, part, project_root, home):
            shown = raw.replace(DYN, "$…")
            return f"rm -r of {shown!r} would delete the system, your home or the project"
    return None


def _find_starts(argv: tuple[str, ...]) -> tuple[list[str], int]:
    """The start directories of a `find` (`.` when none is given) and where its
    expression begins."""
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg in ("-H", "-L", "-P") or (arg.startswith("-O") and arg[2:].isdigit()):
            i += 1
        elif arg == "-D":
            i += 2
        else:
            break
    starts: list[str] = []
    while i < len(argv) and not argv[i].startswith(("-", "(", "!", ",")):
        starts.append(argv[i])
        i += 1
    return starts or ["."], i


def _find_is_bounded(expression: tuple[str, ...]) -> bool:
    """Whether a find expression only matches some names: an and-only expression with a
    name test whose pattern has a literal in it (`-name '*.pyc'`) or `-empty`."""
    if any(a in _FIND_OPERATORS for a in expression):
        return False
    for i, arg in enumerate(expression):
        if arg == "-empty":
            return True
        if arg in _FIND_NAME_TESTS and i + 1 < len(expression):
            value = expression[i + 1]
            if DYN not in value and not _matches_everything(value):
                return True
    return False


def _find_warning(
    part: CommandPart, analysis: BashAnalysis, project_root: Path, home: Path
) -> str | None:
    argv = part.argv
    # `-exec rm {} +` became its own part (same text, run through find); `-delete` stayed.
    exec_delete = any(
        "find" in other.wrappers and other.text == part.text and _name(other.argv) in _DELETERS
        for other in analysis.parts
    )
    if "-delete" not in argv and not exec_delete:
        return None
    starts, expression = _find_starts(argv)
    if _find_is_bounded(argv[expression:]):
        return None
    for raw in starts:
        if _is_precious(_resolve(raw, part, home), raw, project_root, home):
            shown = raw.replace(DYN, "$…")
            how = "-delete" if "-delete" in argv else "-exec rm"
            return f"find {shown} {how} removes everything below it"
    return None


def _part_warnings(
    part: CommandPart, analysis: BashAnalysis, project_root: Path, home: Path
) -> list[str]:
    name = _name(part.argv)
    check = _PART_CHECKS.get("mkfs" if name.startswith("mkfs") else name)
    warning = check(part, analysis, project_root, home) if check is not None else None
    return [warning] if warning else []


def _rm_part(
    part: CommandPart, analysis: BashAnalysis, project_root: Path, home: Path
) -> str | None:
    # A `find -exec rm {}` placeholder carries DYN; a `$X` next to it would too, so the
    # placeholder is only set aside when the command has no expansions at all.
    placeholders = "find" in part.wrappers and not any(c in part.text for c in "$`")
    return _rm_warning(part, project_root, home, placeholders)


def _disk_tool(
    part: CommandPart, analysis: BashAnalysis, project_root: Path, home: Path
) -> str | None:
    return f"{_name(part.argv)} can destroy a disk or its data"


def _dd(part: CommandPart, analysis: BashAnalysis, project_root: Path, home: Path) -> str | None:
    if any(a.startswith("of=/dev/") and _DEVICE_RE.match(a[3:]) for a in part.argv[1:]):
        return "dd writing to a block device destroys its data"
    return None


def _recursive_owner(
    part: CommandPart, analysis: BashAnalysis, project_root: Path, home: Path
) -> str | None:
    """`chmod -R`, `chown -R`, `chgrp -R` of a precious tree."""
    argv = part.argv
    recursive = any(
        a in ("-R", "--recursive") or (a.startswith("-") and "R" in a) for a in argv[1:]
    )
    if not recursive:
        return None
    for i, raw in enumerate(argv[2:], 2):
        if not raw.startswith("-") and _operand_is_precious(i, raw, part, project_root, home):
            return f"recursive {_name(argv)} of {raw!r}"
    return None


def _stops_machine(
    part: CommandPart, analysis: BashAnalysis, project_root: Path, home: Path
) -> str | None:
    name = _name(part.argv)
    if name == "systemctl" and not any(
        a in ("poweroff", "reboot", "halt") for a in part.argv[1:]
    ):
        return None
    return f"{name} stops the machine"


def _kill(part: CommandPart, analysis: BashAnalysis, project_root: Path, home: Path) -> str | None:
    return "kill -1 signals every process you own" if "-1" in part.argv[1:] else None


def _git_push(
    part: CommandPart, analysis: BashAnalysis, project_root: Path, home: Path
) -> str | None:
    argv = part.argv
    return _force_push(argv) if len(argv) > 1 and "push" in argv[1:3] else None


_PartCheck: TypeAlias = Callable[[CommandPart, BashAnalysis, Path, Path], str | None]
_PART_CHECKS: dict[str, _PartCheck] = {
    "rm": _rm_part,
    **dict.fromkeys(("mkfs", "fdisk", "sfdisk", "parted", "wipefs", "shred"), _disk_tool),
    "dd": _dd,
    **dict.fromkeys(("chmod", "chown", "chgrp"), _recursive_owner),
    **dict.fromkeys(("shutdown", "reboot", "halt", "poweroff", "systemctl"), _stops_machine),
    "kill": _kill,
    "git": _git_push,
    "find": _find_warning,
}
"""The dangerous-command check for each program (`mkfs.*` under `mkfs`)."""


def _force_push(argv: tuple[str, ...]) -> str | None:
    rest = argv[argv.index("push") + 1 :]
    force = any(
        a in ("-f", "--force", "--force-with-lease", "--mirror")
        or a.startswith("--force-with-lease=")
        or (a.startswith("-") and not a.startswith("--") and "f" in a)
        for a in rest
    )
    refs = [a for a in rest if not a.startswith("-")]
    plus = [r for r in refs[1:] if r.startswith("+")]
    if not force and not plus:
        return None
    targets = [r.lstrip("+").split(":")[-1].removeprefix("refs/heads/") for r in refs[1:]]
    if not targets or any(t in _DEFAULT_BRANCHES or DYN in t for t in targets):
        return "force push to the default branch rewrites shared history"
    if plus:
        return None
    return None


def _url_basename(word: str) -> str:
    """The file name `curl -O`/`wget` give a download of `word` (`index.html` for `/`)."""
    path = word.split("://", 1)[-1].split("#", 1)[0]
    name = path.split("?", 1)[0].rsplit("/", 1)[-1] if "/" in path else ""
    return name or ("index.html" if "://" in word else "")


def _download_outputs(part: CommandPart) -> tuple[list[str], list[str]]:
    """Names a download may have written (files, and directories for `git clone`).

    Deliberately generous: every operand, every option value glued to `-o`/`-O`
    (`-sSLo f`, `-qOx.sh`, `--output=f`), every URL's base name, and each of those under
    every operand (`wget -P /tmp URL`). A wrong guess costs a question only when a later
    command runs exactly that name.
    """
    argv = part.argv
    words: list[str] = []
    for arg in argv[1:]:
        if arg.startswith("--") and "=" in arg:
            words.append(arg.split("=", 1)[1])
        elif arg.startswith("-") and not arg.startswith("--"):
            for letter in "oOP":
                if letter in arg[1:-1]:
                    words.append(arg[arg.index(letter, 1) + 1 :])
        elif not arg.startswith("-"):
            words.append(arg)
    words = [w for w in words if w and w != "-" and DYN not in w]
    if _name(argv) == "git":
        names = [w for w in words if w != "clone"]
        return [], names + [_url_basename(w).removesuffix(".git") for w in names]
    bases = [b for b in (_url_basename(w) for w in words) if b]
    nested = [f"{w.rstrip('/')}/{b}" for w in words for b in bases if "://" not in w]
    return [*words, *bases, *nested], []


def _is_download(part: CommandPart) -> bool:
    name = _name(part.argv)
    return name in _DOWNLOADERS or (name == "git" and "clone" in part.argv[1:4])


# Interpreter options whose value is the next word, and those that take the code itself
# from an argument (then no script file is run).
_VALUE_OPTIONS = frozenset({"-o", "-O", "+o", "+O", "-W", "-X", "-I", "-M", "-r", "--require"})
_CODE_OPTIONS = frozenset({"-c", "-e", "-E", "-m", "--eval", "-p", "--print"})


def _script_operand(argv: tuple[str, ...]) -> str | None:
    """The script file an interpreter (or `source`) runs: its first operand."""
    skip = False
    for arg in argv[1:]:
        if skip:
            skip = False
        elif arg in _CODE_OPTIONS:
            return None
        elif arg in _VALUE_OPTIONS:
            skip = True
        elif not arg.startswith(("-", "+")) or arg == "-":
            return arg
    return None


def _download_then_run(analysis: BashAnalysis, home: Path) -> list[str]:
    """`curl -o f URL && bash f`, `wget URL && ./x.sh`, `git clone URL && ./t/install.sh`:
    a command runs (or reads into an interpreter) a file the download wrote."""
    downloads = [p for p in analysis.parts if _is_download(p)]
    if not downloads:
        return []
    files: set[Path] = set()
    dirs: set[Path] = set()
    for part in downloads:
        out_files, out_dirs = _download_outputs(part)
        for raw in out_files:
            files.update(_resolve_all(raw, part.cwd, home))
        for raw in out_dirs:
            dirs.update(_resolve_all(raw, part.cwd, home))
    # A redirection or `tee` beside a download may be where its bytes went.
    for f in analysis.files:
        if f.write:
            files.update(_resolve_all(f.path, f.cwd, home))
    for part in analysis.parts:
        if _name(part.argv) == "tee":
            for raw in part.argv[1:]:
                files.update(_resolve_all(raw, part.cwd, home))

    # An archive unpacked beside a download writes names nobody can tell in advance:
    # then any relative path counts as downloaded (`curl URL | tar xz && ./t/install.sh`).
    unpacked = any(_name(p.argv) in _UNPACKERS for p in analysis.parts)

    def downloaded(raw: str, cwds: tuple[Path, ...] | None) -> bool:
        if unpacked and DYN not in raw and not raw.startswith(("/", "~")):
            return True
        return any(
            path in files or any(path.is_relative_to(d) for d in dirs)
            for path in _resolve_all(raw, cwds, home)
        )

    runners = [p for p in analysis.parts if _runs_code(_name(p.argv))]
    for part in analysis.parts:
        argv = part.argv
        name = _name(argv)
        if "/" in argv[0] and downloaded(argv[0], part.cwd):
            return [f"runs {argv[0]}, which it downloaded: code from the network"]
        script = _script_operand(argv) if part in runners else None
        if script is not None and downloaded(script, part.cwd):
            return [f"runs {name} on a file it downloaded: code from the network"]
    if runners and any(not f.write and downloaded(f.path, f.cwd) for f in analysis.files):
        return ["feeds a downloaded file to an interpreter: code from the network"]
    return []


def dangerous_command_warnings(analysis: BashAnalysis, project_root: Path, home: Path) -> list[str]:
    """Warnings for a Bash command; any warning makes the engine ask in every mode."""
    warnings: list[str] = []
    for part in analysis.parts:
        warnings.extend(_part_warnings(part, analysis, project_root, home))
    for pipeline in analysis.pipelines:
        seen_download = False
        for name in pipeline:
            if name in _DOWNLOADERS:
                seen_download = True
            elif seen_download and _runs_code(name):
                warnings.append(f"pipes a download into {name}: runs code from the network")
                break
    if any(_is_download(p) for p in analysis.parts):
        for part in analysis.parts:
            name = _name(part.argv)
            if (_runs_code(name) or name == "eval") and any(DYN in a for a in part.argv[1:]):
                warnings.append(f"runs {name} on downloaded content: code from the network")
                break
    warnings.extend(_download_then_run(analysis, home))
    for f in analysis.files:
        if f.write and _DEVICE_RE.match(f.path):
            warnings.append(f"writes directly to the device {f.path}")
    for body in analysis.function_bodies:
        if _FORK_BOMB_RE.search(body):
            warnings.append("fork bomb: a function that spawns itself endlessly")
    if _FORK_BOMB_RE.search(analysis.command) and not any("fork" in w for w in warnings):
        warnings.append("fork bomb: a function that spawns itself endlessly")
    return list(dict.fromkeys(warnings))


# --- prompt injection -------------------------------------------------------------------

_INJECTION_PATTERNS: tuple[tuple[LazyPattern, str], ...] = tuple(
    (lazy(pattern, re.IGNORECASE), why)
    for pattern, why in (
        (
            r"\b(ignore|disregard|forget|override)\b[^.\n]{0,40}\b(previous|prior|above|earlier|"
            r"all|any|your)\b[^.\n]{0,30}\b(instructions?|prompts?|rules?|directions?|context)",
            "asks to ignore earlier instructions",
        ),
        (
            r"\byou are now\b|\bfrom now on,? you (are|will|must)\b|\bact as (an? )?(unrestricted|"
            r"jailbroken|DAN)\b",
            "tries to give the assistant a new role",
        ),
        (
            r"\b(new|updated|real|actual|hidden) (system )?(instructions?|prompt)\s*:",
            "claims to carry new instructions",
        ),
        (
            r"<\s*/?\s*(system|assistant|user|tool_result|function_results|instructions?)\s*>|"
            r"<\|im_(start|end)\|>|\[/?INST\]|<<SYS>>",
            "contains chat-format control markers",
        ),
        (
            r"\b(do not|don't|never) (tell|inform|mention|reveal|show)\b"
            r"[^.\n]{0,30}\b(the )?user\b",
            "asks to hide something from the user",
        ),
        (
            r"\b(reveal|print|output|send|leak|exfiltrate)\b[^.\n]{0,40}\b(system prompt|api[_ -]?"
            r"keys?|secrets?|credentials?|tokens?|passwords?|\.env|ssh keys?)\b",
            "asks for secrets or the system prompt",
        ),
        (r"\b(curl|wget)\b[^\n|]{0,200}\|\s*(ba|z|da)?sh\b", "contains a download-and-run command"),
        (
            r"\b(run|execute)\b[^.\n]{0,30}\b(this|the following|these) (command|commands|code|"
            r"script)\b",
            "tells the assistant to run commands",
        ),
        (
            r"\bIMPORTANT:?\s+(AI|assistant|agent|LLM|model|claude|chatgpt)\b",
            "addresses the AI directly",
        ),
    )
)
_INVISIBLE_RE = lazy("[\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff\U000e0000-\U000e007f]")


def flag_prompt_injection(text: str) -> list[str]:
    """Reasons `text` (a web page or MCP result) looks like it carries instructions for the
    model; empty when nothing was found. The caller shows them; it does not block."""
    if not text:
        return []
    found: list[str] = []
    sample = text[:200_000]
    for pattern, why in _INJECTION_PATTERNS:
        if pattern.search(sample):
            found.append(why)
    hidden = _INVISIBLE_RE.findall(sample)
    if len(hidden) >= 3:
        found.append(f"contains {len(hidden)} invisible formatting characters")
    return found


def guard_untrusted_result(text: str) -> tuple[str, list[str]]:
    """Mask secrets in a web/MCP result and list injection warnings for the user."""
    from aistack_tui.permissions.secrets import mask_secrets

    return mask_secrets(text), flag_prompt_injection(text)
