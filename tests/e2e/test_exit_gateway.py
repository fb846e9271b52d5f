"""`aistack gateway telegram` (against the fake Bot API) stops on SIGINT/SIGTERM mid-turn
within 2 s, also when Telegram is unreachable: the turn stops, what completed is stored,
the status says which signal, and stderr carries no traceback."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from fakes.fake_llm import FakeLLMServer, Turn
from fakes.fake_telegram import FakeTelegramServer
from tests.e2e.exits import EXIT_WITHIN, ended, start, stored_roles, wait_for
from tests.e2e.helpers import write_user_settings

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not Path("/proc").is_dir(),
                                                    reason="finds leftovers through /proc")]
OWNER = 4242


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signal_mid_turn_stops_the_gateway_within_two_seconds(
    signum: int, status: int, git_repo: Path, aistack_home: Path
) -> None:
    write_user_settings(aistack_home, {"memory": False, "knowledge": False,
                                       "model": "anthropic/claude-sonnet-4-6",
                                       "telegram": {"allowedUserIds": [OWNER]}})
    slow = Turn(text="word " * 200, chunk_size=5, delay=0.1)
    with FakeTelegramServer() as tg, FakeLLMServer([slow]) as llm:
        watched = start(["gateway", "telegram"], cwd=git_repo, env={
            **llm.env("anthropic"), "TELEGRAM_BOT_TOKEN": tg.token,
            "AISTACK_TELEGRAM_BASE_URL": tg.base_url})
        wait_for(lambda: tg.calls_to("getUpdates"), what="the bot polling")
        tg.send_text(OWNER, "a long one")
        wait_for(lambda: llm.model_requests, what="the model request")
        wait_for(lambda: stored_roles(aistack_home) == ["user"], what="the prompt stored")
        sent = watched.signal(signum)
        end = ended(watched, since=sent, within=EXIT_WITHIN)
    assert end.status == status, end.stderr
    assert stored_roles(aistack_home)[:1] == ["user"]


def test_sigterm_after_telegram_went_away_still_closes_the_sessions(
    git_repo: Path, aistack_home: Path
) -> None:
    write_user_settings(aistack_home, {"memory": False, "knowledge": False,
                                       "model": "anthropic/claude-sonnet-4-6",
                                       "telegram": {"allowedUserIds": [OWNER]}})
    slow = Turn(text="word " * 200, chunk_size=5, delay=0.1)
    with FakeLLMServer([slow]) as llm:
        tg = FakeTelegramServer().start()
        try:
            watched = start(["gateway", "telegram"], cwd=git_repo, env={
                **llm.env("anthropic"), "TELEGRAM_BOT_TOKEN": tg.token,
                "AISTACK_TELEGRAM_BASE_URL": tg.base_url})
            wait_for(lambda: tg.calls_to("getUpdates"), what="the bot polling")
            tg.send_text(OWNER, "a long one")
            wait_for(lambda: llm.model_requests, what="the model request")
        finally:
            tg.stop()  # the Bot API is unreachable from now on
        sent = watched.signal(signal.SIGTERM)
        end = ended(watched, since=sent)
    assert end.status == 143, end.stderr
    assert "did not finish" not in end.stderr, end.stderr
    assert "gateway.log" in end.stderr  # the failed polls: one line each, naming the log
    log = (aistack_home / "logs" / "gateway.log").read_text()
    assert "Traceback" in log and "NetworkError" in log
    assert tg.token.split(":", 1)[-1] not in log + end.stderr
    assert stored_roles(aistack_home)[:1] == ["user"]
