"""The `aistack` console script: argv → settings → front end or subcommand → exit code.

Only argparse is imported up front, so `--version` and `--help` stay fast; everything
else is imported when the chosen path needs it.
"""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Sequence

from aistack_tui import __version__
from aistack_tui.cli.headless import (
    add_headless_flags,
    headless_options,
    headless_problem,
    mcp_config_path,
    permission_mode,
    run_stream_input,
)
from aistack_tui.cli.parser import EXIT_USAGE, CliParser
from aistack_tui.shutdown.deadline import after_main, claim_process
from aistack_tui.shutdown.status import EXIT_BROKEN_PIPE, EXIT_FAILED, EXIT_INTERRUPTED
from aistack_tui.shutdown.streams import is_closed_stream, say, silence

SUBCOMMANDS = (
    "sessions", "doctor", "permissions", "index", "memory", "mcp", "undo", "rewind", "eval",
    "acp", "gateway", "models",
)
OUTPUT_FORMATS = ("text", "json", "stream-json")
MODES = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk")


def build_parser() -> argparse.ArgumentParser:
    p = CliParser(
        prog="aistack",
        description="An interactive terminal coding agent.",
        epilog=(
            "subcommands: aistack sessions [list|search Q], aistack doctor, "
            "aistack permissions check|explain|lint, aistack index [PATH], "
            "aistack memory list|search|add|forget, aistack mcp list, aistack undo, "
            "aistack rewind TURN, aistack eval, aistack models, aistack acp, "
            "aistack gateway telegram. "
            "Docs: docs/ in the repository."
        ),
    )
    p.add_argument("prompt", nargs="*", help="the prompt (TUI: first message)")
    p.add_argument("-p", "--print", action="store_true", dest="print_mode",
                   help="print mode: run non-interactively and print the result")
    p.add_argument("-m", "--model", help="PROVIDER/MODEL, e.g. anthropic/claude-sonnet-4-6")
    p.add_argument("--output-format", choices=OUTPUT_FORMATS, default="text",
                   help="print mode output: text, json or stream-json")
    p.add_argument("-c", "--continue", action="store_true", dest="continue_latest",
                   help="continue the most recent session of this project")
    p.add_argument("-r", "--resume", nargs="?", const="", default=None, metavar="ID",
                   help="resume a session by id (TUI: picker when no id)")
    p.add_argument("--fork-session", action="store_true",
                   help="with -c/-r: copy the history into a new session id")
    p.add_argument("--permission-mode", choices=MODES, help="permission mode for this run")
    p.add_argument("--allowed-tools", "--allowedTools", nargs="+", action="extend",
                   default=[], metavar="RULE", help="extra allow rules, e.g. 'Bash(npm test)'")
    p.add_argument("--disallowed-tools", "--disallowedTools", nargs="+", action="extend",
                   default=[], metavar="RULE", help="extra deny rules")
    p.add_argument("--max-turns", type=int, metavar="N", help="stop after N model turns")
    p.add_argument("--max-budget-usd", type=float, metavar="USD",
                   help="stop when this run has cost this much")
    p.add_argument("--system-prompt", metavar="TEXT", help="replace the built-in system prompt")
    p.add_argument("--append-system-prompt", metavar="TEXT", help="extend the system prompt")
    p.add_argument("--mcp-config", metavar="PATH", help="MCP servers file instead of .mcp.json")
    p.add_argument("--trust-project", action="store_true",
                   help="apply what this project's files ask for (MCP servers, hooks, allow "
                   "rules, permission mode, sandbox and provider settings, skill "
                   "allowed-tools) for this run without asking; see docs/permissions.md")
    p.add_argument("--no-memory", action="store_true", help="do not inject long-term memory")
    p.add_argument("--no-knowledge", action="store_true", help="do not inject code knowledge")
    add_headless_flags(p)
    p.add_argument("--classic", action="store_true",
                   help="line mode: a scrolling prompt instead of the full-screen TUI (also "
                   "chosen when TERM=dumb, in an Emacs shell buffer or with "
                   "AISTACK_CLASSIC=1); see docs/line-mode.md")
    p.add_argument("--permission-prompt", choices=("tty",), metavar="tty",
                   help="print mode: ask on the terminal (stdin and stderr) when a tool call "
                   "needs approval, instead of denying it; see docs/line-mode.md")
    p.add_argument("--verbose", action="store_true", help="more diagnostics on stderr")
    p.add_argument("--version", action="version", version=f"aistack {__version__}")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """The exit status of one command line; `argv` None means the console script, whose
    process is ours to end: children nobody stopped are ended and the exit deadline is
    armed once the front end returns (docs/print-mode.md, exit statuses)."""
    standalone = argv is None
    if standalone:
        claim_process()
        from aistack_tui.shutdown.crash import route_tracebacks
        from aistack_tui.storage.paths import aistack_home

        route_tracebacks(aistack_home() / "logs")
    status = _guarded(list(sys.argv[1:] if argv is None else argv))
    if standalone:
        after_main(status)
    return status


def _guarded(argv: list[str]) -> int:
    """Run the command line; what escapes it becomes a status and one line, never a
    traceback."""
    try:
        if argv and argv[0] in SUBCOMMANDS:
            from aistack_tui.cli.subcommands import run_subcommand

            return run_subcommand(argv)
        return _run_main(build_parser().parse_args(argv))
    except KeyboardInterrupt:
        say(sys.stderr, "aistack: interrupted")
        return EXIT_INTERRUPTED
    except SystemExit:
        raise  # argparse's --help, --version and usage errors: they said what they had to
    except BaseException as e:  # a CancelledError that escaped a loop included
        if is_closed_stream(e):  # the reader went away: nobody is left to tell
            silence(sys.stdout, sys.stderr)
            return EXIT_BROKEN_PIPE
        from aistack_tui.shutdown.crash import crash_report
        from aistack_tui.storage.paths import aistack_home

        say(sys.stderr, crash_report(e, aistack_home() / "logs"))
        return EXIT_FAILED


def _run_main(args: argparse.Namespace) -> int:
    # Start-up (the provider SDK's ~1,400 pydantic classes, our modules, the stores) builds
    # about 200k long-lived objects and almost no garbage, so the cyclic GC's repeated
    # passes over them are wasted work: about a tenth of start-up. It is paused here and
    # resumed (with start-up's objects frozen) once the session is open.
    gc.disable()
    try:
        return _start(args)
    finally:
        gc.enable()  # after a configuration error too: in-process callers keep their GC


def _start(args: argparse.Namespace) -> int:
    if args.max_turns is not None and args.max_turns < 1:
        return _usage("--max-turns must be at least 1")
    if (problem := headless_problem(args)) is not None:
        return _usage(problem)
    if args.permission_prompt == "tty" and not (sys.stdin.isatty() and sys.stderr.isatty()):
        return _usage("--permission-prompt tty needs a terminal on stdin and stderr")
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    print_mode = args.print_mode or not interactive or args.input_format == "stream-json"
    prompt = " ".join(args.prompt).strip()
    if not print_mode and not _wants_line_mode(args):
        from aistack_tui.cli.typeahead import typeahead_kept

        with typeahead_kept() as typed:  # before any import: keys are typed from the launch on
            return _start_run(args, print_mode, prompt, typed)
    return _start_run(args, print_mode, prompt)


def _start_run(args: argparse.Namespace, print_mode: bool, prompt: str,
               typed: bytes = b"") -> int:
    """`typed`: the keys typed before the terminal left cooked mode, for the TUI's prompt."""
    from aistack_tui.session.config import NoProviderError, make_run_config
    from aistack_tui.settings.layers import ConfigError

    try:
        config = make_run_config(
            model=args.model,
            permission_mode=permission_mode(args),
            settings_arg=args.settings,
            add_dirs=args.add_dir,
            max_turns=args.max_turns,
            system_prompt=args.system_prompt,
            append_system_prompt=args.append_system_prompt,
            allowed_tools=args.allowed_tools,
            disallowed_tools=args.disallowed_tools,
            resume=args.resume or None,
            continue_latest=args.continue_latest,
            fork_session=args.fork_session,
            no_memory=args.no_memory,
            no_knowledge=args.no_knowledge,
            mcp_config=mcp_config_path(args.mcp_config),
            max_budget_usd=args.max_budget_usd,
            verbose=args.verbose,
            trust_project=args.trust_project or None,
            **headless_options(args),
        )
        if not print_mode:
            if args.resume == "":
                config.resume = ""  # the TUI opens its session picker
            if _wants_line_mode(args):
                gc.enable()  # line mode manages its own start-up
                from aistack_tui.linemode.repl import run_line_mode
                from aistack_tui.shutdown.run import run_front_end

                return run_front_end(run_line_mode(config, prompt or None))
            from aistack_tui.tui.run import run_tui

            # The GC stays paused until the app's first frame: the app resumes it then.
            return run_tui(config, prompt or None, typed)
        if args.resume == "":
            return _usage("-r/--resume needs a session id in print mode")
        if args.input_format == "stream-json":
            return run_stream_input(config, args)
        if not sys.stdin.isatty():
            piped = sys.stdin.read()
            if piped.strip():
                prompt = f"{prompt}\n\n{piped}" if prompt else piped
        if not prompt.strip():
            return _usage("print mode needs a prompt: aistack -p \"PROMPT\" or pipe it on stdin")
        from aistack_tui.print_mode.runner import run_print
        from aistack_tui.shutdown.run import run_front_end

        approver = None
        if args.permission_prompt == "tty":
            from aistack_tui.linemode.approval_prompt import terminal_approver

            approver = terminal_approver()
        return run_front_end(
            run_print(config, prompt, args.output_format, partial=args.include_partial_messages,
                      approver=approver)
        )
    except NoProviderError as e:
        return _usage(str(e))
    except ConfigError as e:
        return _usage(str(e))


def _wants_line_mode(args: argparse.Namespace) -> bool:
    """`--classic`, or a terminal that cannot run the full-screen app (docs/line-mode.md)."""
    import os

    from aistack_tui.linemode.terminal import line_mode_reason, terminal_size

    return line_mode_reason(os.environ, classic=args.classic, size=terminal_size()) is not None


def _usage(message: str) -> int:
    sys.stderr.write(f"aistack: {message}\n")
    return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
