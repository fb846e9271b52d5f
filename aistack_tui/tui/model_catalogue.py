"""The model list `/model` offers, kept ready so the picker opens on it at once.

Building it loads genai-prices' data and reads the models-endpoint cache (a few hundred
ms on a cold start), so it is built in the background once the session is up (`warm`).
An open picker then asks the models endpoints whose cached answer is missing or stale
and merges what they answer (`fill`); an endpoint that fails or stays silent for
`MODELS_ENDPOINT_TIMEOUT_S` is one line in the picker, and the offline list stays.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the app builds a catalogue before its first frame; the picker comes later
    from aistack_tui.session.live import LiveSession
    from aistack_tui.tui.screens.model_picker import ModelPickerScreen

MODELS_ENDPOINT_TIMEOUT_S = 8.0
"""How long the model picker waits for a models endpoint before saying it failed."""


class ModelCatalogue:
    """The offline model list, once built, and the picker's endpoint refresh."""

    def __init__(self) -> None:
        self.models: list[str] | None = None

    async def warm(self, session: LiveSession) -> None:
        self.models = await session.model_catalogue()

    async def fill(self, session: LiveSession, picker: ModelPickerScreen) -> None:
        """Give an open picker the list (if it opened without one), then the list with
        the endpoints' answer, or the one line saying which endpoint failed."""
        asked = asyncio.create_task(session.refresh_model_listings(MODELS_ENDPOINT_TIMEOUT_S))
        if self.models is None:
            await self.warm(session)
            picker.set_models(self.models or [])
        if not asked.done():
            picker.set_note("Asking the models endpoint for the newest list…")
        errors = await asked
        await self.warm(session)
        picker.set_models(self.models or [])
        picker.set_note(endpoint_note(errors))


def endpoint_note(errors: dict[str, str]) -> str:
    """The picker's one line when a models endpoint failed ("" when none did)."""
    if not errors:
        return ""
    failed = "; ".join(f"{name}: {why}" for name, why in errors.items())
    return f"Models endpoint failed ({failed[:120]}): showing the offline list."
