"""What the Telegram gateway runs with: the bot token, who may use it, where it works.

The allow list is read from the user's own settings file only. Settings layers merge
lists, so reading it from the merged settings would let a cloned project's
`.aistack/settings.json` add a stranger to the bot that runs tools on this machine.

The token comes from `TELEGRAM_BOT_TOKEN` (or `AISTACK_TELEGRAM_BOT_TOKEN`) or from the
credentials file (`aistack gateway telegram --save-token`), and is never logged:
`redact()` is applied to everything the gateway writes, because the Bot API puts the
token in every URL and python-telegram-bot names it in some errors.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from aistack_tui.settings.layers import ConfigError, read_json_layer, user_settings_path
from aistack_tui.settings.models import TelegramSettings

TOKEN_ENV_VARS = ("TELEGRAM_BOT_TOKEN", "AISTACK_TELEGRAM_BOT_TOKEN")
CREDENTIALS_KEY = "telegram"
DEFAULT_BASE_URL = "https://api.telegram.org/bot"


@dataclass(frozen=True)
class GatewayConfig:
    token: str
    allowed_user_ids: frozenset[int]
    project_dir: Path
    edit_interval: float
    base_url: str

    def __repr__(self) -> str:  # never show the token, even in a traceback's locals
        return (f"GatewayConfig(allowed_user_ids={sorted(self.allowed_user_ids)}, "
                f"project_dir={self.project_dir}, edit_interval={self.edit_interval})")


def user_telegram_settings(home: Path) -> TelegramSettings:
    """The `telegram` section of `$AISTACK_HOME/settings.json` (and of no other layer)."""
    path = user_settings_path(home)
    data = read_json_layer(path) or {}
    try:
        return TelegramSettings.model_validate(data.get("telegram") or {})
    except ValidationError as e:
        err = e.errors()[0]
        key = ".".join(str(p) for p in err["loc"])
        raise ConfigError(f"{path}: invalid setting telegram.{key}: {err['msg']}") from e


def find_token(home: Path, env: Mapping[str, str]) -> str | None:
    for var in TOKEN_ENV_VARS:
        if env.get(var):
            return env[var].strip()
    from aistack_tui.session.config import read_credentials

    return read_credentials(home).get(CREDENTIALS_KEY) or None


def load_gateway_config(home: Path, env: Mapping[str, str], cwd: Path,
                        project_dir: Path | None = None) -> GatewayConfig:
    settings = user_telegram_settings(home)
    token = find_token(home, env)
    if not token:
        raise ConfigError(
            "no Telegram bot token: set TELEGRAM_BOT_TOKEN or run "
            "`aistack gateway telegram --save-token` (the token from @BotFather)")
    if project_dir is None and settings.project_dir:
        project_dir = Path(settings.project_dir).expanduser()
    directory = (project_dir or cwd).expanduser()
    if not directory.is_absolute():
        directory = cwd / directory
    if not directory.is_dir():
        raise ConfigError(f"telegram project directory {directory} does not exist")
    return GatewayConfig(
        token=token,
        allowed_user_ids=frozenset(settings.allowed_user_ids),
        project_dir=directory.resolve(),
        edit_interval=settings.edit_interval,
        base_url=env.get("AISTACK_TELEGRAM_BASE_URL") or settings.base_url or DEFAULT_BASE_URL,
    )


def redact(text: str, token: str) -> str:
    """`text` with the token (and its secret half on its own) replaced."""
    if not token:
        return text
    text = text.replace(token, "<telegram-token>")
    secret = token.split(":", 1)[-1]
    return text.replace(secret, "<telegram-token>") if len(secret) >= 8 else text


class RedactToken(logging.Filter):
    """A logging filter that removes the token from every record it passes."""

    def __init__(self, token: str) -> None:
        super().__init__()
        self.token = token

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if self.token and (self.token in message or self.token.split(":", 1)[-1] in message):
            record.msg, record.args = redact(message, self.token), None
        if record.exc_info and record.exc_info[1] is not None:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info),
                                     self.token)
            record.exc_info = None
        return True
