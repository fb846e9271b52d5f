"""Claude Code's headless flags, so programs written for it (the Claude Agent SDK) start
aistack with the command lines they already build.

`--input-format stream-json` keeps one session open over stdin; `--permission-prompt-tool
stdio` puts permission prompts to the client; `--include-partial-messages`, `--settings`,
`--add-dir` and `--dangerously-skip-permissions` mean what they mean in Claude Code.
Kept apart from `cli.main` so the parser there stays one list of everyday flags.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aistack_tui.session.config import RunConfig

INPUT_FORMATS = ("text", "stream-json")
PROMPT_TOOL = "stdio"


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


def headless_problem(args: argparse.Namespace) -> str | None:
    """What is wrong with this combination of flags, in one line; None if nothing."""
    streamed_in = args.input_format == "stream-json"
    if streamed_in and args.output_format != "stream-json":
        return "--input-format stream-json needs --output-format stream-json"
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
    if args.dangerously_skip_permissions and args.permission_mode not in (
        None, "bypassPermissions"
    ):
        return (
            "--dangerously-skip-permissions contradicts "
            f"--permission-mode {args.permission_mode}"
        )
    return None


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
    )
    return run_front_end(run_stream_session(config, options))
