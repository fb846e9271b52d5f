"""Skill discovery, the catalogue for the system prompt, and loading a skill's body.

A skill is a folder with a SKILL.md: YAML front matter (`name`, `description`, optional
`allowed-tools`) and a body of instructions. Loading is two-phase so skills cost almost
nothing until used: only name and description go into the system prompt; the body is
read when the model calls the `Skill` tool.

Folders are searched in this order, later ones overriding earlier ones by name, so a
project can replace a bundled or personal skill (docs/skills.md):
bundled `skills/` → `$AISTACK_HOME/skills/` → `~/.agents/skills/` →
`<project>/.aistack/skills/` → `<project>/.agents/skills/` → `<project>/.claude/skills/`
(the last two are where other agents keep them, so existing skills just work).

A broken SKILL.md never stops a session: it is skipped and its problem, naming the file
and line, is kept in `SkillRegistry.problems` for the front ends to show. Every file is
read beneath its location's root (`skills/files.py`): a SKILL.md or skill folder linking
out of the project (or out of the user's home for a user skill) is refused, not loaded.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from aistack_tui.skills.files import RefusedFile, entries, location_root, read_text
from aistack_tui.skills.frontmatter import FrontMatterError, parse, split_front_matter

SKILL_FILE = "SKILL.md"
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_LISTED_FILES = 200
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_SKIP_DIRS = {"__pycache__", "node_modules", ".git"}


class SkillError(ValueError):
    """A SKILL.md that cannot be used; the message names the file."""


@dataclass(frozen=True, slots=True)
class Skill:
    name: str
    description: str
    path: Path
    """The SKILL.md file."""
    source: str
    """Which location it came from (`bundled`, `project .claude`, ...)."""
    allowed_tools: tuple[str, ...] = ()
    root: Path | None = None
    """What its files are read beneath (its location's root); None: its own folder."""

    @property
    def directory(self) -> Path:
        return self.path.parent

    @property
    def read_root(self) -> Path:
        return self.root if self.root is not None else self.directory


def bundled_skills_dir() -> Path | None:
    """The skills shipped with aistack.

    Installed wheels carry them as package data (`aistack_tui/bundled_skills`); an
    editable checkout has them at the repository root. None when neither exists.
    """
    package = Path(__file__).resolve().parent.parent
    for candidate in (package / "bundled_skills", package.parent / "skills"):
        if candidate.is_dir():
            return candidate
    return None


def skill_locations(
    project_root: Path, home: Path, user_home: Path | None = None
) -> list[tuple[str, Path]]:
    """(label, folder) in override order: later folders win."""
    user = user_home if user_home is not None else Path.home()
    locations: list[tuple[str, Path]] = []
    bundled = bundled_skills_dir()
    if bundled is not None:
        locations.append(("bundled", bundled))
    locations += [
        ("user", home / "skills"),
        ("user .agents", user / ".agents" / "skills"),
        ("project .aistack", project_root / ".aistack" / "skills"),
        ("project .agents", project_root / ".agents" / "skills"),
        ("project .claude", project_root / ".claude" / "skills"),
    ]
    return locations


def _allowed_tools(
    value: object, where: str, path: Path, problems: list[str]
) -> tuple[str, ...]:
    from aistack_tui.permissions.rules import RuleError, parse_rule, split_rule_list

    if value in (None, ""):
        return ()
    if isinstance(value, str):
        raw = split_rule_list([value])
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):  # pyright: ignore[reportUnknownVariableType]
        raw = split_rule_list([str(v) for v in value])  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
    else:
        raise SkillError(
            f"{where}: 'allowed-tools' must be a list of rules or a comma-separated string"
        )
    rules: list[str] = []
    for text in raw:
        try:
            rules.append(parse_rule(text, f"{path} allowed-tools").text)
        except RuleError as e:
            # One rule we cannot honour (say, another agent's tool) must not hide the
            # whole skill: it is dropped and reported.
            problems.append(f"{e} (rule ignored; the skill still loads)")
    return tuple(rules)


def load_skill(
    path: Path, source: str, problems: list[str] | None = None, root: Path | None = None
) -> Skill:
    """Read and validate one SKILL.md, beneath `root` (default: its own folder); raises
    SkillError naming the file and problem."""
    problems = problems if problems is not None else []
    try:
        text = read_text(path, root if root is not None else path.parent)
    except RefusedFile as e:
        raise SkillError(str(e)) from e
    except (OSError, UnicodeDecodeError) as e:
        raise SkillError(f"{path}: cannot read: {e}") from e
    try:
        doc = parse(text, path)
    except FrontMatterError as e:
        raise SkillError(str(e)) from e
    fields = doc.fields
    name = fields.get("name", path.parent.name)
    if not isinstance(name, str) or not name.strip():
        raise SkillError(f"{doc.where(path, 'name')}: 'name' must be a non-empty string")
    name = name.strip()
    if len(name) > MAX_NAME or not _NAME_RE.match(name):
        raise SkillError(
            f"{path}: invalid name {name!r}: use letters, digits, '-', '_' or '.' "
            f"(at most {MAX_NAME} characters), e.g. 'review-diff'"
        )
    description = fields.get("description")
    if description is None:
        raise SkillError(
            f"{path}: missing 'description' in the front matter; the model picks skills "
            "by their description, so say what the skill does and when to use it"
        )
    if not isinstance(description, str) or not description.strip():
        raise SkillError(
            f"{doc.where(path, 'description')}: 'description' must be a non-empty string"
        )
    description = " ".join(description.split())
    if len(description) > MAX_DESCRIPTION:
        # Real skills exceed it (Anthropic's own claude-api skill: 1,068 characters), so
        # the skill loads with its description cut at a word, and the author is told.
        problems.append(
            f"{path}: 'description' is {len(description)} characters; the catalogue shows "
            f"its first {MAX_DESCRIPTION} (details belong in the body)"
        )
        description = shorten(description, MAX_DESCRIPTION)
    allowed = _allowed_tools(
        fields.get("allowed-tools"), doc.where(path, "allowed-tools"), path, problems
    )
    return Skill(name=name, description=description, path=path, source=source,
                 allowed_tools=allowed, root=root)


def shorten(text: str, limit: int) -> str:
    """`text` cut at the last word boundary within `limit` characters, with an ellipsis."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip(" ,;:.") + "…"


def discover(
    locations: Iterable[tuple[str, Path]],
) -> tuple[dict[str, Skill], list[str]]:
    """Every valid skill by name (later locations override) and the problems found."""
    skills: dict[str, Skill] = {}
    problems: list[str] = []
    for label, folder in locations:
        root = location_root(label, folder)
        # A location that does not exist is simply empty.
        for name, kind in entries(folder, root):
            if kind not in ("dir", "symlink"):
                continue
            path = folder / name / SKILL_FILE
            try:
                skill = load_skill(path, label, problems, root)
            except SkillError as e:
                if isinstance(e.__cause__, (FileNotFoundError, NotADirectoryError)):
                    continue  # a folder without a SKILL.md, or a link to a file
                problems.append(str(e))
                continue
            skills[skill.name] = skill
    return skills, problems


def _inside(path: Path, root: Path) -> bool:
    """Whether `path`, links followed, stays beneath `root` (listed only, never read)."""
    try:
        return path.resolve().is_relative_to(root.resolve())
    except OSError:
        return False


def catalogue_text(skills: Iterable[Skill]) -> str:
    """The system prompt's skills section: name and description only (phase one)."""
    items = sorted(skills, key=lambda s: s.name)
    if not items:
        return ""
    lines = [
        "<skills>",
        "Skills are folders of tested instructions for particular tasks. When the user's "
        "request matches a skill's description, call the Skill tool with its name before "
        "starting, then follow the instructions it returns.",
    ]
    lines += [f"- {s.name}: {s.description}" for s in items]
    lines.append("</skills>")
    return "\n".join(lines)


@dataclass
class SkillRegistry:
    """The skills of one session, which of them are active, and their allowed tools.

    A skill becomes active when the `Skill` tool loads it and stays active until
    `deactivate` / `clear_active` (the runtime may clear at the end of a user turn).
    While active, its `allowed-tools` rules are pre-approved (a project skill's only once
the user trusts the project, see `withhold_allowed_tools`): the runtime feeds
    `active_allowed_rules()` to the permission engine as session grants, or listens
    with `add_listener` to grant them the moment a skill is loaded.
    """

    skills: dict[str, Skill] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    active: list[str] = field(default_factory=list)
    _listeners: list[Callable[[Skill], None]] = field(default_factory=list)

    @classmethod
    def discover(
        cls, project_root: Path, home: Path, user_home: Path | None = None
    ) -> SkillRegistry:
        skills, problems = discover(skill_locations(project_root, home, user_home))
        return cls(skills=skills, problems=problems)

    def get(self, name: str) -> Skill | None:
        return self.skills.get(name)

    def names(self) -> list[str]:
        return sorted(self.skills)

    def catalogue(self) -> str:
        return catalogue_text(self.skills.values())

    def _require(self, name: str) -> Skill:
        skill = self.skills.get(name)
        if skill is None:
            known = ", ".join(self.names()) or "none"
            raise SkillError(f"no skill named {name!r}; available skills: {known}")
        return skill

    def load_body(self, name: str) -> str:
        """The skill's instructions, front matter stripped (read fresh from disk)."""
        skill = self._require(name)
        try:
            text = read_text(skill.path, skill.read_root)
            _, body, _ = split_front_matter(text, skill.path)
        except (OSError, UnicodeDecodeError, FrontMatterError, RefusedFile) as e:
            raise SkillError(f"{skill.path}: cannot load skill {name!r}: {e}") from e
        return body.strip()

    def files(self, name: str) -> list[Path]:
        """The skill's other files (helpers, templates, scripts), absolute and sorted."""
        skill = self._require(name)
        found: list[Path] = []
        for path in sorted(skill.directory.rglob("*")):
            rel = path.relative_to(skill.directory)
            if any(part.startswith(".") or part in _SKIP_DIRS for part in rel.parts):
                continue
            if path.is_file() and path != skill.path and _inside(path, skill.read_root):
                found.append(path.resolve())
                if len(found) >= MAX_LISTED_FILES:
                    break
        return found

    def withhold_allowed_tools(self, names: Iterable[str]) -> None:
        """Load these project skills without pre-approving their `allowed-tools`: a
        committed skill grants nothing until the user trusts the project."""
        for name in names:
            skill = self.skills.get(name)
            if skill is not None and skill.source.startswith("project"):
                self.skills[name] = dataclasses.replace(skill, allowed_tools=())

    def add_listener(self, listener: Callable[[Skill], None]) -> None:
        """Called with each skill as it becomes active."""
        self._listeners.append(listener)

    def activate(self, name: str) -> Skill:
        skill = self._require(name)
        if name not in self.active:
            self.active.append(name)
        for listener in list(self._listeners):
            listener(skill)
        return skill

    def deactivate(self, name: str) -> None:
        if name in self.active:
            self.active.remove(name)

    def clear_active(self) -> None:
        self.active.clear()

    def active_allowed_rules(self) -> list[str]:
        """The `allowed-tools` rules of every active skill, without duplicates."""
        rules: list[str] = []
        for name in self.active:
            skill = self.skills.get(name)
            for rule in skill.allowed_tools if skill else ():
                if rule not in rules:
                    rules.append(rule)
        return rules
