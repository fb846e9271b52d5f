"""Provider errors a person can act on: sentences with the next step, a live countdown
while backing off, one line per retry series, and no text left from a failed attempt."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

from aistack_tui.tui.widgets.entries import AssistantEntry, NoticeEntry
from aistack_tui.tui.widgets.status_bar import StatusBar
from fakes.fake_llm import Fault, Turn
from tests.tui.conftest import screen_text, wait_for
from tests.tui.test_app import answered, entries, type_and_send


def slow_retries(home: Path, base_delay: float) -> None:
    """Retries that wait `base_delay` (±20 %), long enough to be watched or not."""
    path = home / "settings.json"
    settings = json.loads(path.read_text()) if path.exists() else {}
    settings["retry"] = {"base_delay": base_delay, "max_delay": 30}
    path.write_text(json.dumps(settings))


def notices(app, level: str | None = None) -> list[NoticeEntry]:
    return [e for e in entries(app) if isinstance(e, NoticeEntry)
            and (level is None or e.level == level)]


def busy(app) -> str:
    return app.query_one(StatusBar).state.busy


async def test_overload_counts_down_on_one_line_and_says_what_to_do(
    make_app, aistack_home: Path
) -> None:
    slow_retries(aistack_home, 3.0)
    app = make_app(Turn(text="Finally here.", faults=[Fault("http", status=529),
                                                      Fault("http", status=529)]))
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "hello")
        await wait_for(pilot, lambda: "retrying in" in busy(app))
        first = int(re.search(r"retrying in (\d+) s", busy(app))[1])
        assert "overloaded" in busy(app).lower() and "Esc" in busy(app)
        await asyncio.sleep(1.1)
        later = re.search(r"retrying in (\d+) s", busy(app))
        assert later is not None and int(later[1]) < first  # a live countdown
        line = notices(app, "warning")
        assert len(line) == 1
        assert "Anthropic is overloaded (529)" in line[0].text
        assert "Esc to stop" in line[0].text and "/model to switch" in line[0].text
        await wait_for(pilot, lambda: answered(app, "Finally here."), timeout=20)
        retry_lines = [n for n in notices(app) if "overloaded" in n.text]
        assert len(retry_lines) == 1  # one updated line for the whole series, not one per try
        assert "2 retries" in retry_lines[0].text
        assert "retrying in" not in busy(app)


async def test_partial_text_of_a_failed_attempt_is_removed(make_app, aistack_home: Path) -> None:
    slow_retries(aistack_home, 0.05)
    app = make_app(Turn(text="The full and final answer.",
                        faults=[Fault("cut", after_chars=12)]))
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "hello")
        await wait_for(pilot, lambda: answered(app, "The full and final answer."))
        answers = [e.text for e in entries(app) if isinstance(e, AssistantEntry)]
        assert answers == ["The full and final answer."]
        assert "The full and final answer." in screen_text(app)
        lines = [n.text for n in notices(app) if "retr" in n.text]
        assert len(lines) == 1 and "connection to Anthropic failed" in lines[0]
        assert "answered after 1 retry" in lines[0]


async def test_a_rejected_key_says_where_to_fix_it(make_app) -> None:
    app = make_app(Turn(text="never", faults=[Fault("http", status=401)]))
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "hello")
        await wait_for(pilot, lambda: not app.busy and notices(app, "error"))
        text = notices(app, "error")[0].text
        assert "Anthropic rejected the API key (401)" in text
        assert "ANTHROPIC_API_KEY" in text and "/login" in text
        assert "AuthError" not in text  # a sentence, not a class name


async def test_retries_that_run_out_end_in_one_line_with_the_next_step(
    make_app, aistack_home: Path
) -> None:
    path = aistack_home / "settings.json"
    path.write_text(json.dumps({"retry": {"base_delay": 0.05, "max_retries": 2}}))
    app = make_app(Turn(text="never", faults=[Fault("http", status=503)] * 3))
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: app.session is not None)
        await type_and_send(pilot, "hello")
        await wait_for(pilot, lambda: not app.busy and notices(app, "error"))
        shown = [n.text for n in notices(app) if "503" in n.text]
        assert len(shown) == 1
        assert "Anthropic had a server error (503)" in shown[0]
        assert "after 2 retries" in shown[0] and "/model" in shown[0]
