"""One FakeLLMServer for the session, reset before each test (tests queue turns with
``fake_llm.add``); starting uvicorn and building SDK clients per test costs more than
the tests themselves."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fakes.fake_llm import FakeLLMServer


@pytest.fixture(scope="session")
def _fake_llm_session() -> Iterator[FakeLLMServer]:
    with FakeLLMServer() as server:
        yield server


@pytest.fixture
def fake_llm(_fake_llm_session: FakeLLMServer) -> Iterator[FakeLLMServer]:
    _fake_llm_session.reset()
    yield _fake_llm_session
    _fake_llm_session.reset()
