"""Guardrails: commands dangerous enough to ask in every mode, and injected instructions.

Dangerous commands ask with a warning even in `acceptEdits` and `bypassPermissions` and
even when an allow rule matches (a deny rule still denies): the cost of one extra question
is small next to `rm -rf ~`. Prompt-injection detection only flags: tool results from the
web and MCP servers are shown to the user with a warning, never silently dropped, because
heuristics misfire and hiding content would be worse than a false alarm.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from aistack_tui.permissions.bash_model import DYN, SHELLS, BashAnalysis, CommandPart
from aistack_tui.permissions.lazy_re import LazyPattern, lazy

_INTERPRETERS = SHELLS | {"python", "python3", "perl", "ruby", "node", "php"}
_DOWNLOADERS = frozenset({"curl", "wget", "fetch", "aria2c"})
_DEFAULT_BRANCHES = frozenset({"main", "master", "trunk", "develop", "HEAD"})
_DEVICE_RE = lazy(r"^/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk|rdisk|loop|md|dm-|mapper/)")
_FORK_BOMB_RE = lazy(r"(\S+)\s*\(\)\s*\{[^}]*\1\s*\|\s*\1\s*&")


def _name(argv: tuple[str, ...]) -> str:
    return argv[0].rsplit("/", 1)[-1] if argv else ""


def _resolve(raw: str, part: CommandPart, home: Path) -> Path | None:
    if DYN in raw:
        return None
    cwd = part.cwd[0] if part.cwd else Path("/")
    if raw == "~" or raw.startswith("~/"):
        raw = str(home) + raw[1:]
    return Path(os.path.realpath(os.path.join(str(cwd), raw)))


def _is_precious(path: Path | None, raw: str, project_root: Path, home: Path) -> bool:
    """`/`, home, the project or any of their ancestors (what `rm -rf` must not touch)."""
    if path is None:
        return "$HOME" in raw or "${HOME}" in raw or raw.startswith(DYN) or raw in ("*", "/*")
    if str(path) == "/" or raw.rstrip("/") in ("", "/*"):
        return True
    for precious in (home, project_root):
        if path == precious or precious.is_relative_to(path):
            return True
    return raw in ("*", ".*") and path == project_root


def _rm_warning(part: CommandPart, project_root: Path, home: Path) -> str | None:
    argv = part.argv
    flags = "".join(a[1:] for a in argv[1:] if a.startswith("-") and not a.startswith("--"))
    long = {a for a in argv[1:] if a.startswith("--")}
    recursive = "r" in flags or "R" in flags or "--recursive" in long
    if not recursive and "--no-preserve-root" not in long:
        return None
    for raw in argv[1:]:
        if raw.startswith("-") and raw != "-":
            continue
        target = _resolve(raw, part, home)
        if _is_precious(target, raw, project_root, home):
            shown = raw.replace(DYN, "$…")
            return f"rm -r of {shown!r} would delete the system, your home or the project"
    return None


def _part_warnings(part: CommandPart, project_root: Path, home: Path) -> list[str]:
    argv = part.argv
    name = _name(argv)
    out: list[str] = []
    if name == "rm":
        warning = _rm_warning(part, project_root, home)
        if warning:
            out.append(warning)
    elif name.startswith("mkfs") or name in ("fdisk", "sfdisk", "parted", "wipefs", "shred"):
        out.append(f"{name} can destroy a disk or its data")
    elif name == "dd" and any(
        a.startswith("of=/dev/") and _DEVICE_RE.match(a[3:]) for a in argv[1:]
    ):
        out.append("dd writing to a block device destroys its data")
    elif name in ("chmod", "chown", "chgrp"):
        recursive = any(
            a in ("-R", "--recursive") or (a.startswith("-") and "R" in a) for a in argv[1:]
        )
        if recursive:
            for raw in argv[2:]:
                if not raw.startswith("-") and _is_precious(
                    _resolve(raw, part, home), raw, project_root, home
                ):
                    out.append(f"recursive {name} of {raw!r}")
                    break
    elif name in ("shutdown", "reboot", "halt", "poweroff") or (
        name == "systemctl" and any(a in ("poweroff", "reboot", "halt") for a in argv[1:])
    ):
        out.append(f"{name} stops the machine")
    elif name == "kill" and "-1" in argv[1:]:
        out.append("kill -1 signals every process you own")
    elif name == "git" and len(argv) > 1 and "push" in argv[1:3]:
        warning = _force_push(argv)
        if warning:
            out.append(warning)
    elif name == "find" and "-delete" in argv:
        starts = [a for a in argv[1:] if not a.startswith(("-", "(", "!"))][:1]
        for raw in starts or ["."]:
            if _is_precious(_resolve(raw, part, home), raw, project_root, home) and raw != ".":
                out.append(f"find {raw} -delete removes everything below it")
    return out


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


def dangerous_command_warnings(analysis: BashAnalysis, project_root: Path, home: Path) -> list[str]:
    """Warnings for a Bash command; any warning makes the engine ask in every mode."""
    warnings: list[str] = []
    for part in analysis.parts:
        warnings.extend(_part_warnings(part, project_root, home))
    for pipeline in analysis.pipelines:
        seen_download = False
        for name in pipeline:
            if name in _DOWNLOADERS:
                seen_download = True
            elif seen_download and name in _INTERPRETERS:
                warnings.append(f"pipes a download into {name}: runs code from the network")
                break
    if any(_name(p.argv) in _DOWNLOADERS for p in analysis.parts):
        for part in analysis.parts:
            name = _name(part.argv)
            if name in (_INTERPRETERS | {"eval", "source", "."}) and any(
                DYN in a for a in part.argv[1:]
            ):
                warnings.append(f"runs {name} on downloaded content: code from the network")
                break
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
