"""The "don't ask again" rule offered for a Bash command: as narrow as the command.

A prefix rule (`Bash(npm test:*)`) allows every command that starts with its words, so
the words must name what actually runs. For most programs that is the program and its
subcommand (`git push`, `make build`); for an interpreter it is the module or script
(`python3 -m pytest`, `node scripts/build.js`; `python3:*` would allow any program);
for a runner (`uv run`, `npx`, `npm run`) it is what the runner starts. Where no prefix
is narrow enough (code given inline with `-c`/`-e`, `sudo`, `xargs`, a deleting command,
an argument only known at run time) nothing is offered, and the user answers once.
"""

from __future__ import annotations

import re
import shlex

from aistack_tui.permissions.bash_model import DYN
from aistack_tui.permissions.rules import RuleError, parse_rule

_SUBCOMMAND = re.compile(r"^[A-Za-z][A-Za-z0-9_.:-]*$")
_MODULE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")
_PYTHON = re.compile(r"^(python|pypy)[0-9.]*$")
_SCRIPT_RUNNERS = frozenset(
    {"node", "nodejs", "ruby", "perl", "php", "bash", "sh", "zsh", "dash", "ksh", "fish",
     "Rscript", "lua", "tsx", "ts-node"}
)
"""Programs whose first argument is the script they run (`-e`/`-c` code: no rule)."""
_PROGRAM_RUNNERS = frozenset({"npx", "bunx", "pnpx", "uvx"})
"""Programs whose first word after their options is the program they run."""
_SUBCOMMAND_RUNNERS = frozenset(
    {("uv", "run"), ("poetry", "run"), ("pipenv", "run"), ("pdm", "run"), ("hatch", "run"),
     ("rye", "run"), ("pipx", "run"), ("conda", "run"), ("bundle", "exec"), ("npm", "run"),
     ("npm", "exec"), ("pnpm", "run"), ("pnpm", "exec"), ("yarn", "run"), ("yarn", "exec"),
     ("bun", "run"), ("deno", "run"), ("go", "run"), ("cargo", "run")}
)
"""`X run Y`: the rule keeps Y (a different script or program is a different command)."""
_NO_PREFIX = frozenset(
    {"sudo", "doas", "su", "eval", "exec", "xargs", "env", "nohup", "nice", "ionice",
     "chroot", "parallel", "watch", "rm", "rmdir", "dd", "shred", "unlink", "srm", "wipefs",
     "truncate"}
)
"""Programs for which any prefix allows far more than what was asked: running another
program with other rights or arguments, or deleting."""


def suggest_bash_rule(argv: tuple[str, ...]) -> str | None:
    """`Bash(<words>:*)` for the command `argv` (one simple command), or None.

    The rule is parsed back, so a suggestion is never a rule the engine would reject.
    """
    words = _prefix(argv)
    if not words or any(DYN in w for w in words):
        return None
    text = f"Bash({' '.join(shlex.quote(w) for w in words)}:*)"
    try:
        parse_rule(text, "suggestion")
    except RuleError:
        return None
    return text


def _prefix(argv: tuple[str, ...]) -> tuple[str, ...] | None:
    if not argv:
        return None
    name = argv[0].rsplit("/", 1)[-1]
    rest = argv[1:]
    if name in _NO_PREFIX or name.startswith("mkfs") or deletes(argv):
        return None
    if _PYTHON.match(name):
        if len(rest) >= 2 and rest[0] == "-m" and _MODULE.match(rest[1]):
            return argv[:3]
        return argv[:2] if rest and not rest[0].startswith("-") else None
    if name in _SCRIPT_RUNNERS:
        return argv[:2] if rest and not rest[0].startswith("-") else None
    if name in _PROGRAM_RUNNERS:
        for i, word in enumerate(rest, 1):
            if not word.startswith("-"):
                return argv[: i + 1]
        return None
    if rest and (name, rest[0]) in _SUBCOMMAND_RUNNERS:
        if len(rest) >= 2 and not rest[1].startswith("-"):
            return argv[:3]
        return None
    if rest and DYN in rest[0]:
        return None  # what the program is asked to do is only known at run time
    if rest and _SUBCOMMAND.match(rest[0]):
        return argv[:2]
    return argv[:1]


def deletes(argv: tuple[str, ...]) -> bool:
    """`git rm`, `git clean -f…`, `find … -delete`: commands that amount to `rm`."""
    name, rest = argv[0].rsplit("/", 1)[-1], argv[1:]
    if name == "find":
        return any(w in ("-delete", "-fdelete") or w in ("-exec", "-execdir") for w in rest)
    if name == "git":
        i = 0
        while i < len(rest) and rest[i].startswith("-"):
            i += 2 if rest[i] in ("-C", "-c", "--git-dir", "--work-tree", "--namespace") else 1
        return i < len(rest) and rest[i] in ("rm", "clean")
    return False
