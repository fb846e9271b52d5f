"""Custom subagents: `.claude/agents/*.md`, `~/.claude/agents/*.md` and aistack's own.

A subagent file is Markdown with YAML front matter, in Claude Code's format:

    ---
    name: code-reviewer
    description: Reviews a diff for bugs. Use after every change.
    tools: Read, Grep, Glob        # optional: every tool of the main agent when absent
    model: sonnet                  # optional: sonnet, opus, haiku, inherit or a model id
    ---
    You are a meticulous reviewer... (the body is the subagent's system prompt)

The Task tool offers them by `subagent_type`; a subagent gets only its listed tools and its
model. Locations, later ones winning for the same name: `~/.claude/agents`,
`$AISTACK_HOME/agents`, the project's `.claude/agents`, `.aistack/agents`. A project's
agents choose tools and prompts, so they apply only once the project is trusted (the
trust gate lists them); files are read beneath their root as skills are (a link out of it
is refused), and every problem is kept to show in `aistack doctor` and `/agents`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from aistack_tui.skills.files import RefusedFile, entries, location_root, read_text
from aistack_tui.skills.frontmatter import FrontMatterError, parse

AGENT_SUFFIX = ".md"
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
MODEL_ALIASES = ("sonnet", "opus", "haiku")
INHERIT = "inherit"
GENERAL_PURPOSE = "general-purpose"
"""The built-in type: the main agent's tools and model, the subagent prompt."""


class AgentError(ValueError):
    """A subagent file that cannot be used; `str()` names the file and why."""


@dataclass(frozen=True, slots=True)
class AgentDefinition:
    name: str
    description: str
    prompt: str
    path: Path
    label: str
    tools: tuple[str, ...] | None = None
    """The tools it may use; None: every tool the main agent has (but Task)."""
    model: str | None = None
    """A model string or alias; None: the main agent's model."""

    @property
    def is_project(self) -> bool:
        return self.label.startswith("project")


def agent_locations(
    project_root: Path, home: Path, user_home: Path | None = None
) -> list[tuple[str, Path]]:
    """(label, folder) in override order: later folders win."""
    user = user_home if user_home is not None else Path.home()
    return [
        ("user .claude", user / ".claude" / "agents"),
        ("user", home / "agents"),
        ("project .claude", project_root / ".claude" / "agents"),
        ("project .aistack", project_root / ".aistack" / "agents"),
    ]


def _text(value: object, key: str, where: str) -> str:
    if isinstance(value, str):
        return value.strip()
    raise AgentError(f"{where}: `{key}` must be text")


def _tools(value: object, where: str) -> tuple[str, ...] | None:
    """`tools: Read, Grep` or a YAML list; absent or empty: every tool."""
    if value is None:
        return None
    if isinstance(value, str):
        names = [n.strip() for n in value.split(",")]
    elif isinstance(value, list):
        names = [_text(v, "tools", where) for v in value]  # pyright: ignore[reportUnknownVariableType]
    else:
        raise AgentError(f"{where}: `tools` must be a comma-separated list of tool names")
    kept = tuple(n for n in names if n)
    return kept or None


def load_agent(path: Path, label: str, root: Path) -> AgentDefinition:
    """One subagent file; raises AgentError (or RefusedFile) saying what is wrong."""
    try:
        text = read_text(path, root)
    except (OSError, UnicodeDecodeError) as e:
        raise AgentError(f"{path}: cannot be read: {e}") from e
    try:
        doc = parse(text, path)
    except FrontMatterError as e:
        raise AgentError(str(e)) from e
    fields = doc.fields
    where = str(path)
    name = _text(fields.get("name", path.stem), "name", doc.where(path, "name"))
    if not NAME_RE.match(name):
        raise AgentError(
            f"{doc.where(path, 'name')}: name {name!r} must be lower-case letters, digits "
            "and hyphens"
        )
    if name == GENERAL_PURPOSE:
        raise AgentError(f"{where}: {GENERAL_PURPOSE!r} is the built-in subagent's name")
    if "description" not in fields:
        raise AgentError(f"{where}: `description` is missing (the main agent picks by it)")
    description = _text(fields["description"], "description", doc.where(path, "description"))
    prompt = doc.body.strip()
    if not prompt:
        raise AgentError(f"{where}: the body (the subagent's system prompt) is empty")
    model_value = fields.get("model")
    model = None if model_value is None else _text(model_value, "model",
                                                   doc.where(path, "model"))
    if model in ("", INHERIT):
        model = None
    return AgentDefinition(
        name=name,
        description=description,
        prompt=prompt,
        path=path,
        label=label,
        tools=_tools(fields.get("tools"), doc.where(path, "tools")),
        model=model,
    )


@dataclass
class AgentSet:
    """The custom subagents of a session by name, and the problems found loading them."""

    agents: dict[str, AgentDefinition] = field(default_factory=dict[str, AgentDefinition])
    problems: list[str] = field(default_factory=list[str])

    @classmethod
    def discover(
        cls, project_root: Path, home: Path, user_home: Path | None = None
    ) -> AgentSet:
        return cls.from_locations(agent_locations(project_root, home, user_home))

    @classmethod
    def from_locations(cls, locations: Iterable[tuple[str, Path]]) -> AgentSet:
        found = cls()
        for label, folder in locations:
            root = location_root(label, folder)
            here: dict[str, AgentDefinition] = {}
            files = sorted(name for name, kind in entries(folder, root)
                           if name.endswith(AGENT_SUFFIX) and kind in ("file", "symlink"))
            for name in files:
                try:
                    agent = load_agent(folder / name, label, root)
                except (AgentError, RefusedFile) as e:
                    found.problems.append(str(e))
                    continue
                if agent.name in here:
                    found.problems.append(
                        f"{agent.path}: subagent {agent.name!r} is already defined by "
                        f"{here[agent.name].path}; this one is skipped"
                    )
                    continue
                here[agent.name] = agent
            found.agents.update(here)
        return found

    def get(self, name: str) -> AgentDefinition | None:
        return self.agents.get(name)

    def names(self) -> list[str]:
        return sorted(self.agents)

    def without_project(
        self, names: Iterable[str] | None = None, user_fallback: AgentSet | None = None
    ) -> AgentSet:
        """Without the project's agents named (all of them when `names` is None): the
        project is not trusted. Each is named as a problem; a user agent of the same name
        it had replaced comes back."""
        drop = {n for n, a in self.agents.items()
                if a.is_project and (names is None or n in set(names))}
        kept = {n: a for n, a in self.agents.items() if n not in drop}
        for name, agent in (user_fallback.agents if user_fallback else {}).items():
            if name in drop:
                kept.setdefault(name, agent)
        problems = self.problems + [
            f"{self.agents[n].path}: project subagent {n!r} not loaded: the project is not "
            "trusted"
            for n in sorted(drop)
        ]
        return AgentSet(kept, problems)


def alias_model(alias: str, known: Iterable[str]) -> str | None:
    """The newest Claude model of a family (`sonnet`, `opus`, `haiku`) among `known`."""
    family = re.compile(rf"^claude-{re.escape(alias)}-(\d+(?:-\d+)*)$")
    best: tuple[tuple[int, ...], str] | None = None
    for model in known:
        bare = model.split("/", 1)[-1]
        m = family.match(bare)
        if m is None:
            continue
        version = tuple(int(p) for p in m.group(1).split("-") if len(p) < 8)  # no dates
        if best is None or version > best[0]:
            best = (version, bare)
    return None if best is None else f"anthropic/{best[1]}"
