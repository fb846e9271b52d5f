"""Claude Code's headless flags, so programs written for it (the Claude Agent SDK) start
aistack with the command lines they already build.

`--input-format stream-json` keeps one session open over stdin; `--permission-prompt-tool
stdio` puts permission prompts to the client; `--include-partial-messages`, `--settings`,
`--add-dir`, `--dangerously-skip-permissions`, `--setting-sources`, `--tools`,
`--session-id`, `--fallback-model`, `--max-thinking-tokens` and `--thinking` mean what
they mean in Claude Code. Kept apart from `cli.main` so the parser there stays one list
of everyday flags.
"""

from __future__ import annotations

import argparse
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aistack_tui.session.config import RunConfig

INPUT_FORMATS = ("text", "stream-json")
PROMPT_TOOL = "stdio"
SETTING_SOURCES = ("user", "project", "local")
THINKING = ("adaptive", "disabled")


def add_headless_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--input-format", choices=INPUT_FORMATS, default="text",
                   help="print mode input: text (the prompt), or stream-json: user messages "
                   "and control requests as JSON lines on stdin, one session until stdin "
                   "ends (needs --output-format stream-json)")
    p.add_argument("--include-partial-messages", action="store_true",
                   help="stream-json output: also stream_event lines as the answer streams")
    p.add_argument("--permission-prompt-tool", metavar="stdio",
                   help="stdio: put permission prompts to the client as can_use_tool control "
                   "requests (with --input-format stream-json) instead of denying them")
    p.add_argument("--settings", metavar="FILE_OR_JSON",
                   help="a Claude Code settings file or JSON text, applied above the "
                   "settings files")
    p.add_argument("--add-dir", nargs="+", action="extend", default=[], metavar="DIR",
                   help="more directories the tools may reach, this run only")
    p.add_argument("--dangerously-skip-permissions", action="store_true",
                   help="the same as --permission-mode bypassPermissions")
    p.add_argument("--replay-user-messages", action="store_true",
                   help="stream-json input: echo each prompt as a user line with its uuid "
                   "(what rewind_files takes)")
    p.add_argument("--setting-sources", metavar="SOURCES",
                   help="comma-separated user, project, local: read only the settings "
                   "files of these scopes (empty: none of them)")
    p.add_argument("--tools", metavar="TOOLS",
                   help="comma-separated built-in tools the model is offered (empty: none, "
                   "'default': all); MCP tools are offered either way")
    p.add_argument("--session-id", metavar="UUID",
                   help="the id of the new session (a UUID not yet used)")
    p.add_argument("--fallback-model", metavar="MODEL",
                   help="the model to switch to when the main one keeps failing")
    p.add_argument("--max-thinking-tokens", type=int, metavar="N",
                   help="extended thinking with a budget of N tokens (Anthropic models)")
    p.add_argument("--thinking", choices=THINKING,
                   help="adaptive: the model's own default; disabled: no extended thinking")


def headless_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with this combination of flags, in one line; None if nothing."""
    streamed_in = args.input_format == "stream-json"
    if streamed_in and args.output_format != "stream-json":
        return "--input-format stream-json needs --output-format stream-json"
    if args.replay_user_messages and not streamed_in:
        return "--replay-user-messages needs --input-format stream-json"
    if args.include_partial_messages and args.output_format != "stream-json":
        return "--include-partial-messages needs --output-format stream-json"
    if args.permission_prompt_tool is not None:
        if args.permission_prompt_tool != PROMPT_TOOL:
            return (f"--permission-prompt-tool {args.permission_prompt_tool}: only "
                    f"'{PROMPT_TOOL}' is supported (MCP prompt tools are not)")
        if not streamed_in:
            return "--permission-prompt-tool stdio needs --input-format stream-json"
    if streamed_in and args.prompt:
        return "with --input-format stream-json the prompts come on stdin, not as arguments"
    if (problem := _claude_flag_problem(args)) is not None:
        return problem
    if args.dangerously_skip_permissions and args.permission_mode not in (
        None, "bypassPermissions"
    ):
        return (
            "--dangerously-skip-permissions contradicts "
            f"--permission-mode {args.permission_mode}"
        )
    return None


def _claude_flag_problem(args: argparse.Namespace) -> str | None:
    if args.setting_sources is not None:
        unknown = [s for s in _list(args.setting_sources) if s not in SETTING_SOURCES]
        if unknown:
            return (f"--setting-sources: unknown source(s) {', '.join(unknown)} "
                    f"(expected {', '.join(SETTING_SOURCES)})")
    if args.session_id is not None:
        try:
            uuid.UUID(args.session_id)
        except ValueError:
            return f"--session-id {args.session_id!r} is not a UUID"
        if (args.resume is not None or args.continue_latest) and not args.fork_session:
            return "--session-id names a new session: with -c/-r it needs --fork-session"
    if args.max_thinking_tokens is not None and args.max_thinking_tokens < 0:
        return "--max-thinking-tokens must be 0 or more"
    return None


def _list(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def headless_options(args: argparse.Namespace) -> dict[str, Any]:
    """What Claude Code's run flags ask of the session, as `make_run_config` options."""
    options: dict[str, Any] = {"session_id": args.session_id,
                               "fallback_model": args.fallback_model}
    if args.setting_sources is not None:
        options["setting_sources"] = _list(args.setting_sources)
    if args.tools is not None and args.tools.strip() != "default":
        options["base_tools"] = _list(args.tools)
    if args.thinking != "disabled" and args.max_thinking_tokens:
        options["thinking_budget"] = args.max_thinking_tokens
    return options


def mcp_config_path(value: str | None) -> Path | None:
    """`--mcp-config` as a file: a path as given, or JSON text (what the Agent SDK passes
    for its `mcp_servers` dict) written to a private file that lives as long as the
    process. Raises ConfigError for JSON text that does not parse."""
    if not value:
        return None
    if not value.lstrip().startswith("{"):
        return Path(value)
    import atexit
    import json
    import shutil
    import tempfile

    from aistack_tui.settings.layers import ConfigError

    try:
        json.loads(value)
    except json.JSONDecodeError as e:
        raise ConfigError(f"--mcp-config: malformed JSON at column {e.colno}: {e.msg}") from e
    directory = Path(tempfile.mkdtemp(prefix="aistack-mcp-"))
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    path = directory / "mcp-config-from-command-line.json"
    path.write_text(value, encoding="utf-8")
    return path


def permission_mode(args: argparse.Namespace) -> str | None:
    return "bypassPermissions" if args.dangerously_skip_permissions else args.permission_mode


def run_stream_input(config: RunConfig, args: argparse.Namespace) -> int:
    """Serve one session over stdin until it ends; the process exit code."""
    from aistack_tui.print_mode.stream_session import StreamOptions, run_stream_session
    from aistack_tui.shutdown.run import run_front_end

    options = StreamOptions(
        include_partial=args.include_partial_messages,
        prompt_via_control=args.permission_prompt_tool == PROMPT_TOOL,
        replay_user=args.replay_user_messages,
    )
    return run_front_end(run_stream_session(config, options))
