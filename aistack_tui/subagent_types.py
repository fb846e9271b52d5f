"""The custom subagents a session offers through the Task tool.

Loads `.claude/agents`, `~/.claude/agents` and aistack's own agent folders
(skills/agents.py), leaves out a project's agents until the project is trusted (they set
prompts, tools and models), and turns each into the agent core's `SubagentType` with a
model chooser: `inherit` (or none) is the main agent's subagent route or model; `sonnet`,
`opus` and `haiku` name the newest Claude model of that family aistack knows when the main
model is Anthropic's (Claude Code's aliases; on another provider they mean the main
model); any other value is a model string, built on first use and closed with the
session.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from aistack_tui.agent.subagents import ModelChoice, SubagentType
from aistack_tui.skills.agents import MODEL_ALIASES, AgentDefinition, AgentSet, alias_model

if TYPE_CHECKING:
    from aistack_tui.llm.model_info import ModelInfo
    from aistack_tui.llm.provider import Provider
    from aistack_tui.session.config import RunConfig


@dataclass
class Subagents:
    """What the Task tool offers, and what could not be loaded (for doctor and /agents)."""

    types: list[SubagentType] = field(default_factory=list[SubagentType])
    definitions: list[AgentDefinition] = field(default_factory=list[AgentDefinition])
    problems: list[str] = field(default_factory=list[str])


def known_claude_models(home: Path) -> list[str]:
    """The current Claude models the catalogue knows (the cached models endpoint's, else
    the built-in ones), among which `sonnet`, `opus` and `haiku` find their newest."""
    from aistack_tui.llm.catalogue import provider_catalogue

    entries = provider_catalogue("anthropic", home=home).entries
    return [e.model for e in entries if e.deprecation is None]


def discover_agents(config: RunConfig, untrusted: set[str] | None) -> AgentSet:
    """The session's agent definitions, without the project's `untrusted` ones (None: all
    of the project's, as when nothing has been decided)."""
    user_home = Path(config.env.get("HOME", str(Path.home())))
    found = AgentSet.discover(config.project_root, config.home, user_home)
    if untrusted is not None and not untrusted:
        return found
    user_only = AgentSet.from_locations(_user_locations(config, user_home))
    return found.without_project(untrusted, user_only)


def _user_locations(config: RunConfig, user_home: Path) -> list[tuple[str, Path]]:
    from aistack_tui.skills.agents import agent_locations

    return [(label, folder) for label, folder in
            agent_locations(config.project_root, config.home, user_home)
            if not label.startswith("project")]


def load_subagents(
    config: RunConfig,
    untrusted: set[str],
    main_model: str,
    build: Callable[[str], tuple[Provider, ModelInfo]],
) -> Subagents:
    """The Task tool's custom types for this session, without the project's `untrusted`
    agents (the trust gate's `ignored_names("agent")`)."""
    agents = discover_agents(config, untrusted)
    out = Subagents(definitions=list(agents.agents.values()), problems=list(agents.problems))
    anthropic = main_model.startswith("anthropic/")
    for agent in agents.agents.values():
        chooser: ModelChoice | None = None
        model = agent.model
        if model in MODEL_ALIASES:
            resolved = alias_model(model, known_claude_models(config.home)) if anthropic else None
            if resolved is None:
                out.problems.append(
                    f"{agent.path}: model {model!r} names a Claude model family; the "
                    f"main model {main_model} is used"
                )
            model = resolved
        if model is not None:
            chooser = _chooser(build, model)
        out.types.append(SubagentType(
            name=agent.name,
            description=agent.description,
            prompt=agent.prompt,
            tools=agent.tools,
            model=chooser,
            model_name=model or "",
        ))
    return out


def _chooser(
    build: Callable[[str], tuple[Provider, ModelInfo]], model: str
) -> ModelChoice:
    return lambda: build(model)
