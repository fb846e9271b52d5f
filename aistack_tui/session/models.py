"""The session's model: which one answers, switching it, keys, and the catalogue.

Part of the session facade (`session/live.py`); front ends reach it through `LiveSession`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from aistack_tui.llm.registry import KNOWN_PROVIDERS
from aistack_tui.session.config import save_credential
from aistack_tui.session.providers import build_provider, picker_models, provider_configs
from aistack_tui.storage.disposable_thread import run_disposable

if TYPE_CHECKING:
    from aistack_tui.agent.runtime import Agent
    from aistack_tui.session.config import RunConfig


class ModelControl:
    """The main model of one session, by its `provider/model` string."""

    def __init__(self, *, agent: Agent, config: RunConfig, model_string: str) -> None:
        self.agent = agent
        self.config = config
        self._model_string = model_string

    @property
    def model(self) -> str:
        """`provider/model` of the main model."""
        return self._model_string

    @property
    def context_window(self) -> int:
        return self.agent.model_info.context_window

    @property
    def context_tokens(self) -> int:
        """Tokens the last request used, to show `ctx %`."""
        return self.agent.last_context_tokens

    async def switch_model(self, model_string: str) -> None:
        """Use another model from the next request on; raises ConfigError if it can't."""

        provider, info = build_provider(self.config, model_string)
        old = self.agent.provider
        self.agent.switch_model(provider, info)
        self._model_string = model_string
        await old.aclose()

    async def log_in(self, provider: str, api_key: str) -> str | None:
        """Save `api_key` for `provider` (in `$AISTACK_HOME`, mode 0600) and, when it is
        the current model's provider, use it from the next request on.

        Returns the environment variable that still overrides the saved key, if one is
        set (a key in the environment wins over a saved one), else None."""

        save_credential(self.config.home, provider, api_key)
        known = KNOWN_PROVIDERS.get(provider)
        names = known.key_env_vars if known is not None else ()
        shadow = next((n for n in names if self.config.env.get(n)), None)
        if shadow is None and self.model.split("/", 1)[0] == provider:
            await self.switch_model(self.model)
        return shadow

    def available_models(self) -> list[str]:
        """Models to offer in a picker: the current one first, then the catalogue's."""

        try:
            return picker_models(self.config, self.model)
        except Exception:  # a broken catalogue must not take the picker down
            return [self.model]

    async def model_catalogue(self) -> list[str]:
        """`available_models` off the event loop, on a thread of its own: the first call
        loads genai-prices' data, and the default executor may be busy indexing."""

        return await run_disposable(self.available_models, "model-catalogue")

    async def refresh_model_listings(self, timeout: float) -> dict[str, str]:
        """Ask the models endpoints whose cached answer is missing or stale (the one at
        start-up failed, or is old) again now; returns what went wrong, by provider.
        `available_models` then includes what they answered."""
        from aistack_tui.llm.models_endpoint import refresh

        try:
            configs = provider_configs(self.config, self.model)
        except Exception as e:  # a broken provider entry: say so, keep the picker
            return {"settings": str(e)}
        return await refresh(configs, self.config.home, timeout=timeout)
