"""`aistack gateway telegram`: run the Telegram bot in front of the agent.

The token comes from TELEGRAM_BOT_TOKEN or the credentials file (`--save-token` reads it
from stdin and stores it with mode 0600); who may use the bot and where it works are
`telegram.allowedUserIds` and `telegram.projectDir` in `$AISTACK_HOME/settings.json`.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aistack_tui.channels.telegram_config import GatewayConfig
    from aistack_tui.session.config import RunConfig


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("gateway", help="serve the agent through a chat bot (telegram)")
    sub = p.add_subparsers(dest="gateway", required=True)
    tg = sub.add_parser(
        "telegram", help="a Telegram bot for the user ids in telegram.allowedUserIds",
        description="Serve the agent through a Telegram bot. See docs/channels.md.")
    tg.add_argument("--project", type=Path,
                    help="directory the chats' sessions work in (default: telegram.projectDir,"
                    " else the current directory)")
    tg.add_argument("--save-token", action="store_true",
                    help="read the bot token from stdin, save it to the credentials file "
                    "and exit")


def _logging(token: str, logs: Path) -> None:
    """Log to stderr through a filter that removes the token (the Bot API puts it in
    every URL; httpx logs URLs at INFO, so it is kept at WARNING as well). A failure's
    trace goes to `logs/gateway.log` (token removed too); stderr gets one line naming it."""
    from aistack_tui.channels.telegram_config import RedactToken

    fmt = "%(asctime)s %(levelname)s %(name)s: %(message)s"
    log_file = logs / "gateway.log"
    root = logging.getLogger()
    try:
        logs.mkdir(parents=True, exist_ok=True)
        to_file = logging.FileHandler(log_file, encoding="utf-8")
    except OSError:
        to_file = None
    if to_file is not None:
        to_file.setFormatter(logging.Formatter(fmt))
        to_file.addFilter(RedactToken(token))
        root.addHandler(to_file)
    to_stderr = logging.StreamHandler(sys.stderr)
    to_stderr.setFormatter(_OneLine(fmt, log_file if to_file is not None else None))
    to_stderr.addFilter(RedactToken(token))
    root.addHandler(to_stderr)
    root.setLevel(logging.INFO)
    for noisy in ("httpx", "httpcore", "telegram.ext.Updater"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


class _OneLine(logging.Formatter):
    """A record in one line: a failure's trace is left to the log file, its last line
    (the error itself, token already removed) is kept."""

    def __init__(self, fmt: str, log_file: Path | None) -> None:
        super().__init__(fmt)
        self.log_file = log_file

    def format(self, record: logging.LogRecord) -> str:
        trace = record.exc_text or (
            self.formatException(record.exc_info) if record.exc_info else "")
        plain = logging.makeLogRecord(record.__dict__)
        plain.exc_info, plain.exc_text, plain.stack_info = None, None, None
        line = super().format(plain)
        if trace.strip():
            where = f"; full trace in {self.log_file}" if self.log_file else ""
            line += f" ({trace.strip().splitlines()[-1]}{where})"
        return line


async def serve(gateway_config: GatewayConfig, config: RunConfig) -> int:
    from aistack_tui.channels.bus import MessageBus
    from aistack_tui.channels.opener import FacadeOpener
    from aistack_tui.channels.telegram_gateway import TelegramGateway
    from aistack_tui.shutdown.signals import StopSignals

    stop = asyncio.Event()
    bus = MessageBus(FacadeOpener(config.env))
    gateway = TelegramGateway(gateway_config, bus)
    # SIGINT/SIGTERM: stop polling, stop the running turns, close every session, exit
    # 130/143; a second signal exits at once.
    with StopSignals(lambda _signum: stop.set()) as signals:
        await gateway.run(stop)
    return signals.status or 0


def run(args: argparse.Namespace, config: RunConfig) -> int:
    from aistack_tui.channels.telegram_config import load_gateway_config, redact
    from aistack_tui.settings.layers import ConfigError

    if args.save_token:
        from aistack_tui.channels.telegram_config import CREDENTIALS_KEY
        from aistack_tui.session.config import save_credential

        token = (getpass.getpass("Telegram bot token: ") if sys.stdin.isatty()
                 else sys.stdin.readline()).strip()
        if not token:
            sys.stderr.write("aistack: no token given\n")
            return 2
        path = save_credential(config.home, CREDENTIALS_KEY, token)
        sys.stderr.write(f"aistack: saved the Telegram bot token to {path}\n")
        return 0
    try:
        gateway_config = load_gateway_config(config.home, config.env, config.cwd, args.project)
    except ConfigError as e:
        sys.stderr.write(f"aistack: {e}\n")
        return 2
    _logging(gateway_config.token, config.home / "logs")
    users = sorted(gateway_config.allowed_user_ids)
    if not users:
        sys.stderr.write("aistack: telegram.allowedUserIds is empty: the bot will refuse "
                         "everyone. Add your Telegram user id to "
                         f"{config.home / 'settings.json'}\n")
    sys.stderr.write(f"aistack: Telegram gateway for {len(users)} user(s), working in "
                     f"{gateway_config.project_dir}; Ctrl+C stops it\n")
    from aistack_tui.shutdown.run import run_front_end

    try:
        return run_front_end(serve(gateway_config, config))
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # the token must not reach the terminal even in a crash
        sys.stderr.write(f"aistack: gateway stopped: {redact(str(e), gateway_config.token)}\n")
        return 1
