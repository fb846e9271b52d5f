"""Slash commands backed by the session's extensions: compaction, memory, context, MCP,
skills, undo/rewind and `/init`.

Each asks the session facade (`LiveSession`) and answers with a notice; an extension that
is off says so instead of failing. Commands
that wait on the model or on a dialog are `background` (run in a worker), because a
dialog's answer is delivered to the screen that asked, which must not be blocked.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any, Literal

from rich.text import Text

from aistack_tui.session.reports import restore_lines, turn_listing
from aistack_tui.settings.layers import ConfigError
from aistack_tui.tui.agents_md import skeleton
from aistack_tui.tui.screens.question import QuestionScreen, ask
from aistack_tui.tui.slash import CommandHost, SlashRegistry

if TYPE_CHECKING:
    from aistack_tui.checkpoints.manager import UndoResult

COMMANDS = SlashRegistry()
command = COMMANDS.command
PREVIEW_LINES = 8
MEMORY_LIST_LIMIT = 30
AGENTS_FILE = "AGENTS.md"
INIT_PROMPT = (
    "Look through this repository and write an AGENTS.md at its root for future coding "
    "agents: how to build, test and lint, the architecture in a few lines, and the "
    "conventions a contributor must follow. Keep it short; update it if it exists."
)


def preview(text: str, lines: int = PREVIEW_LINES, indent: str = "    ") -> str:
    """The first `lines` lines of `text`, indented, with a count of the rest."""
    rows = text.strip().splitlines()
    shown = [indent + row[:160] for row in rows[:lines]]
    if len(rows) > lines:
        shown.append(f"{indent}… {len(rows) - lines} more lines")
    return "\n".join(shown)


# --- /compact ------------------------------------------------------------------------------


@command("compact", "Summarise the conversation to free context", "[INSTRUCTIONS]",
         background=True)
async def _compact(app: CommandHost, args: str) -> None:
    session = app.require_session()
    await app.notice("Compacting the conversation…")
    app.status.set_busy("compacting")
    try:
        result = await session.compact(args)
    finally:
        app.status.set_busy("")
    if result is None:
        await app.notice("Nothing to compact yet: the conversation is too short.")
        return
    how = "old tool results shortened" if result.phase == 1 else "older messages summarised"
    lines = [f"Compacted ({how}): {result.before_tokens:,} → {result.after_tokens:,} tokens."]
    if result.summary:
        lines += ["Summary:", preview(result.summary, 12)]
    await app.notice("\n".join(lines))


# --- /memory -------------------------------------------------------------------------------


def _memory_line(record: Any) -> str:
    pin = " 📌" if record.pinned else ""
    day = dt.datetime.fromtimestamp(record.created_at).strftime("%Y-%m-%d")
    text = " ".join(record.content.split())
    return f"  {record.label:5} {record.kind:9} {day}{pin}  {text[:140]}"


MEMORY_USAGE = (
    "/memory · /memory add TEXT · /memory forget ID · /memory pin ID · /memory unpin ID · "
    "/memory search QUERY"
)


@command("memory", "Long-term memory: list, add, forget, pin, search",
         "[add TEXT|forget ID|pin ID|search QUERY]", while_busy=True)
async def _memory(app: CommandHost, args: str) -> None:
    session = app.require_session()
    memory = session.memory
    if memory is None:
        await app.notice("Memory is off in this session (settings `memory.enabled`, "
                         "or --no-memory).")
        return
    action, _, rest = args.partition(" ")
    rest = rest.strip()
    if action in ("", "list"):
        records = await memory.list(limit=MEMORY_LIST_LIMIT)
        if not records:
            await app.notice("No memories yet: `/memory add TEXT` stores one.")
            return
        lines = [f"Memories ({len(records)}):", *(_memory_line(r) for r in records)]
        await app.notice("\n".join([*lines, MEMORY_USAGE]))
    elif action == "add" and rest:
        record = await memory.remember(rest)
        verb = "Merged into" if record.times_seen > 1 else "Remembered as"
        await app.notice(f"{verb} {record.label}.")
    elif action == "forget" and rest:
        memory_id = await memory.forget(rest)
        await app.notice(f"Forgot m{memory_id}.")
    elif action in ("pin", "unpin") and rest:
        memory_id = await memory.pin(rest, action == "pin")
        await app.notice(f"{action.capitalize()}ned m{memory_id}.")
    elif action == "search" and rest:
        hits = await memory.search(rest)
        if not hits:
            await app.notice(f"Nothing in memory matches {rest!r}.")
            return
        lines = [f"{h.label:10} {' '.join(h.text.split())[:140]}" for h in hits]
        await app.notice("\n".join([f"Matches for {rest!r}:", *lines]))
    else:
        await app.notice(f"Usage: {MEMORY_USAGE}", "warning")


# --- /context ------------------------------------------------------------------------------


@command("context", "What fills the context window and what was injected", while_busy=True)
async def _context(app: CommandHost, args: str) -> None:
    from aistack_tui.llm.tokens import estimate_tokens

    report = await app.require_session().context_report()
    window, used = report.window, report.used_tokens
    pct = 100 * used / window if window else 0
    lines = [
        f"Context: {used:,} of {window:,} tokens ({pct:.0f}%) · {report.messages} messages",
        f"System prompt: ~{report.system_prompt_tokens:,} tokens · "
        f"tools: {report.tool_count} (~{report.tool_tokens:,} tokens)",
    ]
    last = report.injected
    if last is None:
        lines.append("Nothing was injected before the last turn.")
    else:
        total = estimate_tokens(last.memory) + estimate_tokens(last.knowledge)
        lines.append(f"Injected before the last turn: ~{total:,} of {last.budget:,} tokens")
        for title, text in (("Memory", last.memory), ("Code knowledge", last.knowledge)):
            if text:
                lines += [f"  {title}: ~{estimate_tokens(text):,} tokens", preview(text)]
            else:
                lines.append(f"  {title}: nothing")
    lines.append(f"Memory: {'on' if report.memory_on else 'off'}")
    status = report.code_index
    if status is not None:
        # The phase of a build in progress; the watcher's quiet polls have none (the
        # background task itself never ends while it watches).
        phase = status.get("phase")
        state = f" (indexing: {phase})" if phase else ""
        lines.append(f"Code index: {status.get('files', 0)} files, {status.get('symbols', 0)} "
                     f"symbols, {status.get('chunks', 0)} chunks{state}")
    else:
        lines.append("Code index: off")
    await app.notice("\n".join(lines))


# --- /mcp and /skills ----------------------------------------------------------------------

STATUS_ICONS = {"connected": "●", "connecting": "…", "failed": "✗", "disabled": "○"}


@command("mcp", "MCP servers, their status and tools", "[reconnect NAME]", while_busy=True,
         background=True)
async def _mcp(app: CommandHost, args: str) -> None:
    session = app.require_session()
    statuses = session.mcp_statuses()
    if not statuses:
        await app.notice("No MCP servers are configured (.mcp.json or settings `mcpServers`).")
        return
    action, _, name = args.partition(" ")
    name = name.strip()
    names = [s.name for s in statuses]
    if action == "reconnect":
        if name not in names:
            await app.notice(f"No MCP server {name!r}; configured: {', '.join(names)}.",
                             "warning")
            return
        await app.notice(f"Reconnecting {name}…")
        status = await session.mcp_reconnect(name)
        level = "error" if status.status == "failed" else "info"
        detail = f": {status.error}" if status.error else f", {status.tool_count} tools"
        await app.notice(f"MCP server {name} {status.status}{detail}", level)
        return
    if action:
        await app.notice("Usage: /mcp · /mcp reconnect NAME", "warning")
        return
    tools = session.mcp_tools()
    lines = ["MCP servers:"]
    for status in statuses:
        icon = STATUS_ICONS.get(status.status, "?")
        lines.append(f"  {icon} {status.name}  {status.label} · {status.transport} "
                     f"{status.target}".rstrip())
        if status.hidden_tools:
            lines.append(f"      {status.hidden_tools} task-only tool(s) not offered")
        if status.error:
            lines.append(f"      {status.error}")
        if status.status == "failed" and status.log_path is not None:
            lines.append(f"      log: {status.log_path}")
        if tools.get(status.name):
            lines.append(f"      tools: {', '.join(tools[status.name])}")
        prompts = [f"/{n}" for n, _, _ in session.mcp.prompt_commands()
                   if n.startswith(f"mcp__{status.name}__")]
        if prompts:
            lines.append(f"      prompts: {', '.join(prompts)}")
        resources = [r for r in session.mcp.resource_mentions()
                     if r.startswith(f"{status.name}:")]
        if resources:
            lines.append(f"      resources: {len(resources)} (@{status.name}:… attaches one)")
    lines.append("/mcp reconnect NAME restarts one.")
    await app.notice("\n".join(lines))


@command("skills", "Skills available to the model, and any problems", while_busy=True)
async def _skills(app: CommandHost, args: str) -> None:
    skills = app.require_session().skills
    if skills is None:
        await app.notice("No skills are loaded in this session.")
        return
    found = skills.list()
    lines = [f"Skills ({len(found)}):"] if found else ["No skills found."]
    for skill in found:
        active = "  (active)" if skill.active else ""
        lines.append(f"  {skill.name}{active} — {skill.description[:120]}  [{skill.source}]")
    if skills.problems:
        lines.append("Problems:")
        lines += [f"  ⚠ {p}" for p in skills.problems]
    await app.notice("\n".join(lines), "warning" if skills.problems else "info")


@command("status", "Version, model, key, mode, sandbox, MCP servers, settings and instruction "
         "files", while_busy=True)
async def _status(app: CommandHost, args: str) -> None:
    lines = app.require_session().status()
    width = max(len(line.label) for line in lines)
    await app.notice("\n".join(f"{line.label:<{width}}  {line.value}" for line in lines))


@command("doctor", "Check keys, providers, storage, ripgrep, the sandbox, settings and files",
         background=True)
async def _doctor(app: CommandHost, args: str) -> None:
    report = await app.require_session().doctor()
    failed = "[FAIL]" in report
    await app.notice(report.rstrip("\n"), "warning" if failed else "info")


@command("hooks", "The hooks configured, by event, and the file each comes from",
         while_busy=True)
async def _hooks(app: CommandHost, args: str) -> None:
    session = app.require_session()
    lines: list[str] = []
    for layer in session.config.loaded.layers:
        hooks = layer.data.get("hooks")
        if not isinstance(hooks, dict):
            continue
        for event, groups in hooks.items():  # pyright: ignore[reportUnknownVariableType]
            for group in groups if isinstance(groups, list) else []:  # pyright: ignore[reportUnknownVariableType]
                matcher = group.get("matcher", "") if isinstance(group, dict) else ""  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
                commands = [h.get("command", "?") for h in group.get("hooks", [])  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
                            if isinstance(h, dict)] if isinstance(group, dict) else []
                for cmd in commands:  # pyright: ignore[reportUnknownVariableType]
                    lines.append(f"  {event}[{matcher or '*'}]: {cmd}  ({layer.source})")
    ignored = [i for i in session.untrusted if i.kind == "hooks"]
    if not lines and not ignored:
        await app.notice("No hooks are configured (docs/hooks.md says how).")
        return
    text = ["Hooks:", *lines] if lines else []
    text += [f"  not run (project not trusted): hooks in {i.source}" for i in ignored]
    await app.notice("\n".join(text))


@command("add-dir", "Let the agent read and edit another directory for this session", "DIR")
async def _add_dir(app: CommandHost, args: str) -> None:
    if not args:
        await app.notice("Usage: /add-dir DIR", "warning")
        return
    try:
        path = app.require_session().add_directory(args)
    except ConfigError as e:
        await app.notice(str(e), "warning")
        return
    await app.notice(f"Added {path}: the agent may read and edit it like the project for the "
                     "rest of this session.")


@command("config", "Show the settings you can change here; `set KEY VALUE` saves one",
         "[set KEY VALUE]", while_busy=True)
async def _config(app: CommandHost, args: str) -> None:
    from aistack_tui.session.user_config import current, set_user_setting

    session = app.require_session()
    verb, _, rest = args.partition(" ")
    if verb == "set":
        key, _, value = rest.strip().partition(" ")
        try:
            written = set_user_setting(session.config.home, key, value.strip())
        except ConfigError as e:
            await app.notice(str(e), "warning")
            return
        await app.notice(f"Saved {key} = {written!r} in {session.config.home / 'settings.json'}"
                         "; new sessions start with it.")
        return
    if args:
        await app.notice("Usage: /config, or /config set KEY VALUE", "warning")
        return
    entries = current(session.config.loaded.settings)
    width = max(len(e.key) for e in entries)
    lines = [f"  {e.key:<{width}}  {e.value!r:<24} {e.help}" for e in entries]
    await app.notice("Settings (/config set KEY VALUE saves one in your settings file):\n"
                     + "\n".join(lines))


@command("exit", "Quit aistack", while_busy=True)
async def _exit(app: CommandHost, args: str) -> None:
    await app.action_quit()


@command("agents", "Custom subagents the Task tool offers, and any problems", while_busy=True)
async def _agents(app: CommandHost, args: str) -> None:
    found = app.require_session().subagents()
    if found is None or not (found.definitions or found.problems):
        await app.notice(
            "No custom subagents: add Markdown files to .claude/agents/ (or ~/.claude/agents/)"
            " with a name, a description and optionally tools and model."
        )
        return
    lines = [f"Subagents ({len(found.definitions)}):"] if found.definitions else []
    for agent in sorted(found.definitions, key=lambda a: a.name):
        tools = ", ".join(agent.tools) if agent.tools else "all tools"
        lines.append(f"  {agent.name} — {agent.description[:120]}  "
                     f"[{tools}; model {agent.model or 'inherit'}; {agent.path}]")
    if found.problems:
        lines.append("Problems:")
        lines += [f"  ⚠ {p}" for p in found.problems]
    await app.notice("\n".join(lines), "warning" if found.problems else "info")


# --- /undo and /rewind ---------------------------------------------------------------------


def _result_text(result: UndoResult) -> str:
    return "\n".join(restore_lines(result))


async def _confirm_force(app: CommandHost, result: UndoResult) -> bool:
    body = Text("These files were changed after the agent's edit (by you or another "
                "program). Restoring overwrites those changes:\n\n")
    body.append("\n".join(f"  {p}" for p in result.conflicts[:30]), style="bold")
    return await ask(app.textual_app, QuestionScreen(
        f"Overwrite {len(result.conflicts)} file(s) changed by hand?", body,
        yes="Yes, restore and overwrite them", no="No, leave everything as it is",
    ))


@command("undo", "Restore the files the agent changed in its last turn", background=True)
async def _undo(app: CommandHost, args: str) -> None:
    session = app.require_session()
    if not session.checkpoints_on:
        await app.notice("Checkpoints are off (settings `checkpoints`): nothing to undo.",
                         "warning")
        return
    result = await session.undo()
    if not result.ok and result.conflicts:
        if not await _confirm_force(app, result):
            await app.notice("Nothing was restored.")
            return
        result = await session.undo(force=True)
    await app.notice(_result_text(result), "info" if result.ok else "warning")


@command("rewind", "Restore files and the conversation to before a turn (lists turns)",
         "[TURN]", background=True)
async def _rewind(app: CommandHost, args: str) -> None:
    session = app.require_session()
    if not session.checkpoints_on:
        await app.notice("Checkpoints are off (settings `checkpoints`): nothing to rewind.",
                         "warning")
        return
    if not args:
        await app.notice("\n".join(turn_listing(session.checkpoint_turns())))
        return
    result = await session.rewind(args)
    if not result.ok and result.conflicts:
        if not await _confirm_force(app, result):
            await app.notice("Nothing was restored.")
            return
        result = await session.rewind(args, force=True)
    if not result.ok:
        await app.notice(_result_text(result), "warning")
        return
    from aistack_tui.tui.renderer import history_entries  # not before the first frame

    await app.conversation.load(history_entries(session.messages, session.replay_display))
    if result.prompt and not app.prompt.text:
        app.prompt.fill(result.prompt)  # the rewound prompt, ready to edit and resend
    await app.notice(_result_text(result))  # last: once it shows, the prompt is back too


# --- /init ---------------------------------------------------------------------------------


@command("init", "Write an AGENTS.md skeleton for this project (`model`: ask the model)",
         "[model]", background=True)
async def _init(app: CommandHost, args: str) -> None:
    root = app.require_session().project_root
    path = root / AGENTS_FILE
    if args.strip() == "model":
        await app.send_prompt(INIT_PROMPT)
        return
    if args.strip():
        await app.notice("Usage: /init · /init model", "warning")
        return
    if path.exists():
        await app.notice(f"{AGENTS_FILE} already exists; `/init model` asks the model to "
                         "update it.")
        return
    text = skeleton(root)
    body = Text(f"{path}\n\n", style="bold")
    body.append(text)
    if not await ask(app.textual_app, QuestionScreen(f"Write {AGENTS_FILE}?", body)):
        await app.notice(f"{AGENTS_FILE} was not written.")
        return
    path.write_text(text, encoding="utf-8")
    app.file_index.invalidate()
    await app.notice(f"Wrote {AGENTS_FILE}: fill in the blanks, or `/init model` to have the "
                     "model do it. Sessions started from now on read it.")


# --- /export --------------------------------------------------------------------------------


@command("export", "Write this session as Markdown (default) or JSONL; default "
         "$AISTACK_HOME/exports/, or `clipboard`", "[md|jsonl] [PATH|clipboard]",
         while_busy=True)
async def _export(app: CommandHost, args: str) -> None:
    from pathlib import Path

    session = app.require_session()
    words = args.split()
    fmt: Literal["md", "jsonl"] = "md"
    if words and words[0] in ("md", "jsonl"):
        fmt = "jsonl" if words.pop(0) == "jsonl" else "md"
    if words and words[0] == "clipboard":
        text, count = await session.export_text(fmt)
        app.copy_to_clipboard(text)
        await app.notice(f"Copied {count} messages to the clipboard.")
        return
    if words:
        path = Path(words[0]).expanduser()
        if not path.is_absolute():
            path = session.cwd / path
    else:  # outside the repository: an export must not become an untracked file in it
        path = session.config.home / "exports" / (
            f"aistack-session-{session.session_id[:8]}.{fmt}")
    try:
        count = await session.export(path, fmt)
    except OSError as e:
        await app.notice(f"Could not write {path}: {e}", "error")
        return
    await app.notice(f"Exported {count} messages to {path}")


# --- /login --------------------------------------------------------------------------------


@command("login", "Save an API key for a provider (the current model's by default)",
         "[PROVIDER]", background=True)
async def _login(app: CommandHost, args: str) -> None:
    from aistack_tui.llm.error_text import key_variables, provider_name
    from aistack_tui.tui.screens.login import LoginScreen

    session = app.require_session()
    provider = args.strip().lower() or session.model.split("/", 1)[0]
    variables = key_variables(provider)
    key = await app.textual_app.push_screen_wait(
        LoginScreen(provider_name(provider), variables)
    )
    app.prompt.focus()
    if not key:
        await app.notice("No key was saved.")
        return
    shadow = await session.log_in(provider, key)
    if shadow is not None:
        await app.notice(f"Saved the key for {provider_name(provider)}, but {shadow} is set in "
                         "the environment and is used instead: fix or unset it, then "
                         "restart aistack.", "warning")
        return
    await app.notice(f"Saved the key for {provider_name(provider)}; the next request uses it.")
