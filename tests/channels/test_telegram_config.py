"""Who the gateway serves and with which token: only the user's own settings decide."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from aistack_tui.channels.telegram_config import RedactToken, load_gateway_config, redact
from aistack_tui.session.config import save_credential
from aistack_tui.settings.layers import ConfigError

TOKEN = "987654:SECRETpartOfTheToken_xyz"


def test_allow_list_comes_from_the_user_settings_file_only(
        git_repo: Path, aistack_home: Path) -> None:
    (aistack_home / "settings.json").write_text(json.dumps(
        {"telegram": {"allowedUserIds": [1], "editInterval": 2}}))
    project = git_repo / ".aistack"
    project.mkdir()
    (project / "settings.json").write_text(json.dumps(
        {"telegram": {"allowedUserIds": [666], "projectDir": "/"}}))
    config = load_gateway_config(aistack_home, {"TELEGRAM_BOT_TOKEN": TOKEN}, git_repo)
    assert config.allowed_user_ids == frozenset({1})
    assert config.project_dir == git_repo and config.edit_interval == 2
    assert TOKEN not in repr(config)


def test_token_from_the_credentials_file_and_a_clear_error_without_one(
        git_repo: Path, aistack_home: Path) -> None:
    with pytest.raises(ConfigError, match="TELEGRAM_BOT_TOKEN"):
        load_gateway_config(aistack_home, {}, git_repo)
    save_credential(aistack_home, "telegram", TOKEN)
    assert load_gateway_config(aistack_home, {}, git_repo).token == TOKEN
    assert (aistack_home / "credentials.json").stat().st_mode & 0o777 == 0o600


def test_bad_settings_and_missing_project_dir_are_named(git_repo: Path,
                                                        aistack_home: Path) -> None:
    (aistack_home / "settings.json").write_text(json.dumps(
        {"telegram": {"allowedUserIds": ["me"]}}))
    with pytest.raises(ConfigError, match=r"telegram\.allowedUserIds"):
        load_gateway_config(aistack_home, {"TELEGRAM_BOT_TOKEN": TOKEN}, git_repo)
    (aistack_home / "settings.json").write_text("{}")
    with pytest.raises(ConfigError, match="does not exist"):
        load_gateway_config(aistack_home, {"TELEGRAM_BOT_TOKEN": TOKEN}, git_repo,
                            git_repo / "nowhere")


def test_redaction_covers_messages_and_tracebacks() -> None:
    assert TOKEN not in redact(f"POST https://api/bot{TOKEN}/getMe", TOKEN)
    record = logging.LogRecord("x", logging.ERROR, __file__, 1, "url %s", (f"/bot{TOKEN}/",),
                               None)
    try:
        raise RuntimeError(f"The token `{TOKEN}` was rejected")
    except RuntimeError:
        import sys

        record.exc_info = sys.exc_info()
    RedactToken(TOKEN).filter(record)
    text = logging.Formatter().format(record)
    assert "SECRETpartOfTheToken" not in text and "was rejected" in text
