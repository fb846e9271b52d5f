"""A session's title, written once by the router's `title` model after the first answer.

Without a `title` route, or when that model fails, the first line of the first prompt
stays the title (the store's default). The title call's tokens and cost count in the
session's usage under the model that made them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from aistack_tui.llm.errors import ProviderError
from aistack_tui.llm.model_info import cost_usd
from aistack_tui.llm.types import LLMRequest, Message

if TYPE_CHECKING:
    from aistack_tui.agent.usage import UsageTotals
    from aistack_tui.session.providers import ModelRouter
    from aistack_tui.sessions.store import SessionStore

TITLE_PROMPT = (
    "Write a title of 3 to 6 words for a coding session that starts with the "
    "user's message below. Reply with the title only, no quotes."
)


class Titler:
    """Names the current session once; a resumed session keeps its title."""

    def __init__(
        self,
        router: ModelRouter | None,
        store: SessionStore,
        session_id: Callable[[], str],
        *,
        titled: bool,
    ) -> None:
        self.router = router
        self.store = store
        self.session_id = session_id
        """The session to title, asked when the title is written (`/clear` changes it)."""
        self.titled = titled

    async def name_once(self, messages: Sequence[Message], totals: UsageTotals) -> None:
        """Ask the `title` model for a short title of the conversation's first prompt."""
        route = self.router.route("title") if self.router else None
        if route is None or self.titled:
            return
        provider, info = route
        self.titled = True
        first = next((m.text() for m in messages if m.role == "user"), "")
        request = LLMRequest(
            system=TITLE_PROMPT, messages=[Message.user(first[:2000])], max_tokens=30
        )
        try:
            reply = await provider.complete(request)
        except ProviderError:
            return  # the first line of the prompt stays the title
        text = reply.text().strip()
        title = text.strip('"').splitlines()[0][:80] if text else ""
        if title:
            await self.store.set_title(self.session_id(), title)
            if reply.usage is not None:
                totals.add(
                    f"{provider.name}/{provider.model}", reply.usage, cost_usd(info, reply.usage)
                )
