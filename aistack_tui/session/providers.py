"""Which model a session talks to: resolving `provider/model`, building the adapter, and
routing kinds of work (compaction, subagents, titles) to cheaper models."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aistack_tui.session.config import NoProviderError, RunConfig, key_env
from aistack_tui.settings.layers import ConfigError

if TYPE_CHECKING:
    from aistack_tui.llm.model_info import ModelInfo
    from aistack_tui.llm.provider import Provider
    from aistack_tui.llm.registry import ProviderConfig

def resolve_model_string(config: RunConfig) -> str:
    """The `provider/model` to use: --model, settings, else the first provider with a key."""
    from aistack_tui.llm.catalogue import DEFAULT_MODELS
    from aistack_tui.llm.registry import default_provider_from_env

    if config.model:
        return config.model if "/" in config.model else guess_provider(config.model)
    provider = default_provider_from_env(key_env(config))
    if provider is None:
        raise NoProviderError(
            "no LLM provider is configured: set ANTHROPIC_API_KEY, OPENAI_API_KEY or "
            "GEMINI_API_KEY (or GOOGLE_API_KEY), or choose a local model with "
            "--model ollama/MODEL"
        )
    return f"{provider}/{DEFAULT_MODELS.get(provider, '')}"


def guess_provider(model: str) -> str:
    """`claude-…` → `anthropic/claude-…`: a bare model name from a known family."""
    lowered = model.lower()
    if lowered.startswith("claude"):
        return f"anthropic/{model}"
    if lowered.startswith(("gpt", "o1", "o3", "o4")):
        return f"openai/{model}"
    if lowered.startswith("gemini"):
        return f"google/{model}"
    raise ConfigError(f"model {model!r} has no provider: write it as PROVIDER/MODEL")


def build_provider(config: RunConfig, model_string: str) -> tuple[Provider, ModelInfo]:
    """Create the provider adapter (importing only its SDK) and look up the model."""
    from aistack_tui.llm.model_info import lookup_model
    from aistack_tui.llm.models_endpoint import read_listing
    from aistack_tui.llm.registry import (
        UnknownProviderError,
        create_provider,
        parse_model_string,
        resolve_provider_config,
    )

    settings = config.loaded.settings
    try:
        provider_name, model = parse_model_string(model_string)
        custom = provider_settings(config)
        pconfig = resolve_provider_config(provider_name, custom, custom, key_env(config))
    except UnknownProviderError as e:
        raise ConfigError(str(e)) from e
    except ValueError as e:
        raise ConfigError(f"invalid model {model_string!r}: {e}") from e
    if pconfig.needs_key and not pconfig.api_key:
        names = " or ".join(pconfig.key_env_vars) or "an api key in settings"
        raise NoProviderError(f"no API key for {provider_name}: set {names}")
    info = lookup_model(pconfig.name, model, settings.model_overrides(),
                        listing=read_listing(config.home, pconfig.name))
    options: dict[str, Any] = {}
    if config.thinking_budget and pconfig.kind == "anthropic":
        options["thinking_budget"] = config.thinking_budget  # only Anthropic's adapter has one
    return create_provider(pconfig, model, **options), info


def provider_settings(config: RunConfig) -> dict[str, dict[str, Any]]:
    """The settings' `providers` as plain dicts, keys revealed, as the registry takes them."""
    settings = config.loaded.settings
    custom = {k: v.model_dump(exclude_none=True) for k, v in settings.providers.items()}
    for name, raw in custom.items():
        key = settings.providers[name].api_key
        if "api_key" in raw and key is not None:
            raw["api_key"] = key.get_secret_value()
    return custom


def provider_configs(config: RunConfig, current: str | None = None) -> list[ProviderConfig]:
    """Every provider this user can talk to: built-in ones whose key is set, every one
    declared in settings `providers`, and the provider of `current` (`provider/model`)."""
    from aistack_tui.llm.registry import (
        KNOWN_PROVIDERS,
        parse_model_string,
        resolve_provider_config,
    )

    custom, env = provider_settings(config), key_env(config)
    try:
        current_provider = parse_model_string(current)[0] if current else None
    except ValueError:
        current_provider = None
    configs: list[ProviderConfig] = []
    for name in [*KNOWN_PROVIDERS, *(n for n in custom if n not in KNOWN_PROVIDERS)]:
        try:
            found = resolve_provider_config(name, custom, custom, env)
        except ValueError:
            continue
        if (found.needs_key and found.api_key) or name in custom or name == current_provider:
            configs.append(found)
    return configs


def picker_models(config: RunConfig, current: str) -> list[str]:
    """Models to offer: the current one, then each configured provider's current models
    from the catalogue (the cached models endpoints, else its built-in list), its default
    first. Deprecated models are left out; `aistack models` still lists them, marked."""
    from aistack_tui.llm.catalogue import provider_catalogue

    models = [current]
    for provider in provider_configs(config, current):
        models += [e.model_string for e in provider_catalogue(provider.name, home=config.home)
                   .entries if e.deprecation is None]
    return list(dict.fromkeys(models))


def start_catalogue_refresh(config: RunConfig, current: str) -> None:
    """Renew the cached models-endpoint answers in the background when they are stale
    (never delays start-up; a failure keeps the last answer)."""
    from aistack_tui.llm.models_endpoint import start_background_refresh

    try:
        start_background_refresh(provider_configs(config, current), config.home)
    except Exception:  # the catalogue is a help; a broken provider entry must not stop us
        return


class ModelRouter:
    """Models for kinds of work (`compaction`, `subagent`, `title`) named in settings,
    built on first use and closed with the session; None means "use the main model".

    A route carries the model's own `ModelInfo`, so work done on a cheap model is priced
    at that model's rates, not the main model's."""

    def __init__(self, config: RunConfig, routes: dict[str, str | None]) -> None:
        self.config = config
        self.routes = {kind: model for kind, model in routes.items() if model}
        self._built: dict[str, tuple[Provider, ModelInfo]] = {}

    def route(self, kind: str) -> tuple[Provider, ModelInfo] | None:
        model = self.routes.get(kind)
        if model is None:
            return None
        return self.model(model)

    def model(self, model: str) -> tuple[Provider, ModelInfo]:
        """Any model by its string (a custom subagent's), built once and closed with the
        session; raises what `build_provider` raises when it cannot be used."""
        if model not in self._built:
            self._built[model] = build_provider(self.config, model)
        return self._built[model]

    async def aclose(self) -> None:
        for provider, _info in self._built.values():
            await provider.aclose()
