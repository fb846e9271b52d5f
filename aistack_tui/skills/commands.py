"""Custom slash commands: Markdown prompt files, as Claude Code users write them.

`<name>.md` in `.claude/commands/` or `.aistack/commands/` (of the project, or the user's
`~/.claude/commands/` and `$AISTACK_HOME/commands/`) becomes `/name`: typing `/name ARGS`
sends the file's body as the prompt, with `$ARGUMENTS` replaced by ARGS and `$1`, `$2`, ...
by its words (quoted words stay whole). A body with no placeholder gets the arguments
appended as `ARGUMENTS: ...`, as Claude Code does. Optional YAML front matter:
`description` (else the body's first line), `argument-hint` (shown after the name in the
menu), `allowed-tools` (rules pre-approved while that prompt runs) and `model` (kept for
the front end; a Claude Code model name may not name an aistack provider).

Files in subfolders keep their own name and say the folder in their description
(`frontend/component.md` is `/component`, "(project:frontend)"), as in Claude Code. Later
locations override earlier ones by name: user `.claude` → user aistack → project
`.claude` → project `.aistack`. A file that cannot be used is skipped and its problem,
naming the file, kept in `CommandSet.problems`.

A project command's `allowed-tools` widen what the agent may do, so they wait for the
user's trust like a project skill's (`trust_gate`); `withhold_allowed_tools` drops them.
Command files are read beneath their location's root (`skills/files.py`): one that links
out of the project (or the user's home) is refused with a problem, not loaded.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from aistack_tui.skills.files import RefusedFile, entries, location_root, read_text
from aistack_tui.skills.frontmatter import FrontMatterError, parse, split_front_matter

COMMAND_SUFFIX = ".md"
MAX_DESCRIPTION = 200
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_PLACEHOLDER = re.compile(r"\$(ARGUMENTS|\d+)")
_SKIP_DIRS = {"__pycache__", "node_modules", ".git"}


class CommandError(ValueError):
    """A command file that cannot be used; the message names the file."""


@dataclass(frozen=True, slots=True)
class CustomCommand:
    name: str
    description: str
    body: str
    path: Path
    source: str
    """Which location it came from (`project .claude`, `user`, ...)."""
    argument_hint: str = ""
    allowed_tools: tuple[str, ...] = ()
    model: str | None = None

    @property
    def is_project(self) -> bool:
        return self.source.startswith("project")

    def expand(self, arguments: str) -> str:
        """The prompt for `/name arguments`."""
        return expand(self.body, arguments)


def expand(body: str, arguments: str) -> str:
    """Replace `$ARGUMENTS` and `$1`... in one pass (so text inside the arguments is never
    expanded again); with no placeholder, append the arguments on their own line."""
    arguments = arguments.strip()
    words = _words(arguments)

    def substitute(m: re.Match[str]) -> str:
        token = m.group(1)
        if token == "ARGUMENTS":
            return arguments
        index = int(token) - 1
        return words[index] if 0 <= index < len(words) else ""

    if _PLACEHOLDER.search(body):
        return _PLACEHOLDER.sub(substitute, body)
    return f"{body}\n\nARGUMENTS: {arguments}" if arguments else body


def _words(arguments: str) -> list[str]:
    try:
        return shlex.split(arguments)
    except ValueError:  # an unclosed quote: fall back to plain words
        return arguments.split()


def command_locations(
    project_root: Path, home: Path, user_home: Path | None = None
) -> list[tuple[str, Path]]:
    """(label, folder) in override order: later folders win."""
    user = user_home if user_home is not None else Path.home()
    return [
        ("user .claude", user / ".claude" / "commands"),
        ("user", home / "commands"),
        ("project .claude", project_root / ".claude" / "commands"),
        ("project .aistack", project_root / ".aistack" / "commands"),
    ]


def _text_field(value: object, key: str, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise CommandError(f"{where}: '{key}' must be text")
    return " ".join(value.split())


def _allowed_tools(value: object, where: str, claude: bool, problems: list[str]) -> tuple[str, ...]:
    from aistack_tui.permissions.rules import RuleError, parse_rule, split_rule_list
    from aistack_tui.settings.claude import translate_rule

    if value in (None, ""):
        return ()
    if isinstance(value, str):
        raw = split_rule_list([value])
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):  # pyright: ignore[reportUnknownVariableType]
        raw = split_rule_list([str(v) for v in value])  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
    else:
        raise CommandError(f"{where}: 'allowed-tools' must be a list of rules or a "
                           "comma-separated string")
    rules: list[str] = []
    for text in raw:
        rule: str | None = text
        if claude:
            rule, note = translate_rule(text, "allow")
            if rule is None:
                problems.append(f"{where}: allowed-tools {note} (rule ignored)")
                continue
        try:
            rules.append(parse_rule(rule, f"{where} allowed-tools").text)
        except RuleError as e:
            problems.append(f"{e} (rule ignored; the command still loads)")
    return tuple(rules)


_RAW_FIELD = re.compile(r"^([A-Za-z][A-Za-z0-9_-]*):[ \t]*(.*?)[ \t]*$")
TEXT_KEYS = ("description", "argument-hint", "model")


def _raw_fields(lines: list[str]) -> dict[str, object]:
    """Top-level `key: value` lines as written (quotes around a whole value removed)."""
    fields: dict[str, object] = {}
    for line in lines:
        m = _RAW_FIELD.match(line)
        if m is None:
            continue
        value = m.group(2)
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        fields[m.group(1)] = value
    return fields


def _front_matter(text: str, path: Path) -> tuple[dict[str, object], str]:
    """The fields and body of a command file with front matter.

    Claude Code reads this front matter leniently: its own examples write
    `argument-hint: [pr-number] [priority]`, which is not YAML, and `argument-hint:
    [message]`, which YAML reads as a list. So `argument-hint` is always the text as
    written, and front matter YAML cannot read falls back to its `key: value` lines.
    """
    lines, body, _ = split_front_matter(text, path)
    raw = _raw_fields(lines)
    try:
        fields: dict[str, object] = dict(parse(text, path).fields)
    except FrontMatterError:
        return raw, body
    for key in TEXT_KEYS:
        if key in raw and (key == "argument-hint" or not isinstance(fields.get(key), str)):
            fields[key] = raw[key]
    return fields, body


def load_command(
    path: Path, source: str, *, folder: Path | None = None, problems: list[str] | None = None,
    root: Path | None = None,
) -> CustomCommand:
    """Read one command file beneath `root` (default: its own directory); raises
    CommandError naming the file and the problem."""
    problems = problems if problems is not None else []
    name = path.stem
    if not _NAME_RE.match(name):
        raise CommandError(
            f"{path}: {name!r} is not a command name: use letters, digits, '-', '_' or '.'"
        )
    try:
        text = read_text(path, root if root is not None else path.parent)
    except RefusedFile as e:
        raise CommandError(str(e)) from e
    except (OSError, UnicodeDecodeError) as e:
        raise CommandError(f"{path}: cannot read: {e}") from e
    fields: dict[str, object] = {}
    body = text.strip("\n")
    if text.lstrip("\ufeff").startswith("---"):
        try:
            fields, body = _front_matter(text.lstrip("\ufeff"), path)
        except FrontMatterError as e:
            raise CommandError(str(e)) from e
    if not body.strip():
        raise CommandError(f"{path}: the command has no prompt text")
    where = str(path)
    description = _text_field(fields.get("description"), "description", where)
    if not description:
        description = " ".join(next(ln for ln in body.splitlines() if ln.strip()).split())
        description = description.lstrip("# ")
    if len(description) > MAX_DESCRIPTION:
        description = description[: MAX_DESCRIPTION - 1] + "…"
    if folder is not None and path.parent != folder:
        scope = "project" if source.startswith("project") else "user"
        namespace = path.parent.relative_to(folder).as_posix().replace("/", ":")
        description = f"{description} ({scope}:{namespace})"
    model = _text_field(fields.get("model"), "model", where) or None
    return CustomCommand(
        name=name,
        description=description,
        body=body,
        path=path,
        source=source,
        argument_hint=_text_field(fields.get("argument-hint"), "argument-hint", where),
        allowed_tools=_allowed_tools(fields.get("allowed-tools"), where,
                                     ".claude" in source, problems),
        model=model,
    )


def _files(folder: Path, root: Path) -> list[Path]:
    """The command files under `folder` (read beneath `root`), top-level ones first, each
    level sorted. A linked file is listed (reading it checks where it leads); a linked
    folder is not entered."""
    listed = list(entries(folder, root))  # nothing when the location does not exist
    found = [folder / name for name, kind in listed
             if name.endswith(COMMAND_SUFFIX) and kind in ("file", "symlink")]
    for name, kind in listed:
        if kind == "dir" and name not in _SKIP_DIRS:
            found += _files(folder / name, root)
    return found


@dataclass
class CommandSet:
    """The custom commands of one session by name, and the problems found loading them."""

    commands: dict[str, CustomCommand] = field(default_factory=dict[str, CustomCommand])
    problems: list[str] = field(default_factory=list[str])

    @classmethod
    def discover(
        cls, project_root: Path, home: Path, user_home: Path | None = None
    ) -> CommandSet:
        return cls.from_locations(command_locations(project_root, home, user_home))

    @classmethod
    def from_locations(cls, locations: Iterable[tuple[str, Path]]) -> CommandSet:
        found = cls()
        for label, folder in locations:
            here: dict[str, CustomCommand] = {}
            root = location_root(label, folder)
            for path in _files(folder, root):
                try:
                    command = load_command(path, label, folder=folder, problems=found.problems,
                                           root=root)
                except CommandError as e:
                    found.problems.append(str(e))
                    continue
                if command.name in here:
                    found.problems.append(
                        f"{path}: /{command.name} is already defined by "
                        f"{here[command.name].path}; this one is skipped"
                    )
                    continue
                here[command.name] = command
            found.commands.update(here)
        return found

    def get(self, name: str) -> CustomCommand | None:
        return self.commands.get(name)

    def names(self) -> list[str]:
        return sorted(self.commands)

    def without(self, reserved: Iterable[str]) -> CommandSet:
        """Without the commands whose names are `reserved` (built-in commands win), each
        noted as a problem."""
        taken = set(reserved)
        kept = {n: c for n, c in self.commands.items() if n not in taken}
        problems = self.problems + [
            f"{c.path}: /{n} is a built-in command; this file is not used"
            for n, c in self.commands.items() if n in taken
        ]
        return CommandSet(kept, problems)

    def withhold_allowed_tools(self, names: Iterable[str]) -> None:
        """Drop the `allowed-tools` of the named project commands (project not trusted)."""
        for name in names:
            command = self.commands.get(name)
            if command is not None and command.is_project:
                self.commands[name] = dataclasses.replace(command, allowed_tools=())
